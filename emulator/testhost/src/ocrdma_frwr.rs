//! ocrdma's fast registration, byte for byte as ocrdma_verbs.c does it (raw dwords, not the
//! codec's types): `ocrdma_alloc_mr` (PBL pages, then REGISTER_NSMR with `fr_mr` 1 and no page
//! size, length, VA or access), and `ocrdma_build_reg` (the page list into those PBL pages, hi
//! dword first, then the FR_MR WQE: header and `ocrdma_ewqe_fr`) and the LKEY_INV WQE of
//! `ocrdma_post_send`.

use super::ocrdma::{Roce, get32, ocrdma_request, put_pages, put32};
use super::{Host, HostError};
use oce_mailbox::header::Subsystem;

/// `OCRDMA_FR_MR`, `OCRDMA_LKEY_INV` (ocrdma_sli.h `enum OCRDMA_WQE_OPCODE`).
const FR_MR: u32 = 0x11;
const LKEY_INV: u32 = 0x15;
/// `cw` shifts (ocrdma_sli.h): flags 5, size 18 (8-byte units).
const FLAGS_SHIFT: u32 = 5;
const SIZE_SHIFT: u32 = 18;
/// `OCRDMA_FLAG_SIG`.
const FLAG_SIG: u32 = 1;
/// `OCRDMA_LKEY_FLAG_LOCAL_WR`, `_REMOTE_RD`, `_REMOTE_WR`.
pub const FR_LOCAL_WR: u32 = 1;
pub const FR_REMOTE_RD: u32 = 2;
pub const FR_REMOTE_WR: u32 = 4;

/// A fast-register MR as ocrdma keeps it: the key REGISTER_NSMR gave (`hwmr.lkey`) and its
/// PBL pages (`hwmr.pbl_table`).
#[derive(Debug, Clone)]
pub struct FrMr {
    pub key: u32,
    pub pbls: Vec<u64>,
}

impl Host {
    /// `ocrdma_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max_num_sg)`: 4 KiB PBL pages for `max_pages`
    /// PBEs (`ocrdma_get_pbl_info`), then one REGISTER_NSMR (up to 22 PBL pages).
    pub fn ocrdma_alloc_mr(&mut self, roce: &mut Roce, pd: u16, max_pages: u32) -> Result<FrMr, HostError> {
        let pbls: Vec<u64> = (0..max_pages.div_ceil(512)).map(|_| self.mem.alloc(4096)).collect();
        let mut req = ocrdma_request(13, Subsystem::Rdma, 0, 228, 228 - 16);
        put32(&mut req, 16, 1); // fr_mr
        put32(&mut req, 20, u32::from(pd) | ((pbls.len() as u32) << 16));
        // last, PBL page size 4 KiB (1 << 16), page size 0: hwmr.pbe_size is never set.
        put32(&mut req, 24, (1 << 31) | (1 << 16));
        put_pages(&mut req, 52, &pbls);
        let key = get32(&self.mq_embedded(roce, &req)?, 16);
        Ok(FrMr { key, pbls })
    }

    /// `ocrdma_build_reg`: writes `pages` into the MR's PBL pages and returns the 48-byte FR_MR
    /// WQE for `key` (the MR's key with the byte `ib_update_fast_reg_key` set), signaled when
    /// asked, `access` the `FR_*` flags, 4 KiB pages, `fbo = iova - pages[0]`.
    pub fn ocrdma_build_reg(
        &mut self,
        mr: &FrMr,
        key: u32,
        (iova, len): (u64, u32),
        pages: &[u64],
        access: u32,
        signaled: bool,
    ) -> Vec<u8> {
        for (i, &page) in pages.iter().enumerate() {
            let mut pbe = [0u8; 8];
            pbe[..4].copy_from_slice(&((page >> 32) as u32).to_le_bytes());
            pbe[4..].copy_from_slice(&((page & !0xFFF) as u32).to_le_bytes());
            self.mem.poke(mr.pbls[i / 512] + (i % 512) as u64 * 8, &pbe);
        }
        let fbo = iova.wrapping_sub(pages[0]);
        let sig = if signaled { FLAG_SIG << FLAGS_SHIFT } else { 0 };
        let mut wqe = vec![0u8; 48];
        put32(&mut wqe, 0, FR_MR | sig | ((48 / 8) << SIZE_SHIFT));
        put32(&mut wqe, 4, access);
        put32(&mut wqe, 8, key);
        put32(&mut wqe, 12, len);
        put32(&mut wqe, 16, (iova >> 32) as u32);
        put32(&mut wqe, 20, iova as u32);
        put32(&mut wqe, 24, (fbo >> 32) as u32);
        put32(&mut wqe, 28, fbo as u32);
        put32(&mut wqe, 32, 0); // size_sge: get_encoded_page_size(4096)
        put32(&mut wqe, 36, pages.len() as u32);
        wqe
    }
}

/// The LKEY_INV WQE of `ocrdma_post_send` for `key`: header plus an SGE's room, 32 bytes.
pub fn ocrdma_local_inv(key: u32, signaled: bool) -> Vec<u8> {
    let sig = if signaled { FLAG_SIG << FLAGS_SHIFT } else { 0 };
    let mut wqe = vec![0u8; 32];
    put32(&mut wqe, 0, LKEY_INV | sig | ((32 / 8) << SIZE_SHIFT));
    put32(&mut wqe, 8, key);
    wqe
}
