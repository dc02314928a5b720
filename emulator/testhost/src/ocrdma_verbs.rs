//! ocrdma's verbs against the device, byte for byte as ocrdma_hw.c and ocrdma_verbs.c build them
//! (raw dwords, not the codec's types, so the codec is checked too): CQ_CREATE v3
//! (`ocrdma_mbx_create_cq`), memory registration with its continuations (`ocrdma_reg_mr`,
//! `ocrdma_build_pbl_tbl`), CREATE_QP with ocrdma's ring sizing (`ocrdma_build_q_conf`),
//! MODIFY_QP (`ocrdma_mbx_modify_qp`), QUERY_QP, DELETE_QP, DEALLOC_LKEY, and the doorbells on a
//! PD's page (`ocrdma_ring_sq_db`, `ocrdma_ring_rq_db`, `ocrdma_ring_cq_db`).

use super::ocrdma::{Roce, get32, ocrdma_request, put_pages, put32};
use super::{DB_BAR, Host, HostError, HostRing};
use oce_mailbox::header::Subsystem;

/// ocrdma's CQs: `max_cqe` entries of 16 bytes in `OCRDMA_CREATE_CQ_MAX_PAGES` (4) pages.
const CQ_PAGES: usize = 4;
/// `OCRDMA_MAX_NSMR_PBL`: PBL addresses per REGISTER_NSMR(_CONT).
const NSMR_PBL: usize = 22;
/// `OCRDMA_Q_PAGE_BASE_SIZE`: 4 KiB × `OCRDMA_MAX_Q_PAGES` (8).
const Q_PAGE_BASE: u64 = 4096 * 8;
/// Doorbell offsets within a PD page (ocrdma_sli.h `OCRDMA_DB_*_OFFSET`).
pub const DB_SQ: u64 = 0x1C0;
/// RQ doorbell.
pub const DB_RQ: u64 = 0x100;
/// CQ doorbell.
pub const DB_CQ: u64 = 0x120;

/// A QP as ocrdma keeps it after CREATE_QP.
#[derive(Debug, Clone)]
pub struct HostQp {
    /// `qp->id`.
    pub id: u16,
    /// `sq.dbid`, `rq.dbid`.
    pub sq_dbid: u16,
    pub rq_dbid: u16,
    /// `sq.max_cnt`, `rq.max_cnt` from the response's log2 sizes.
    pub sq_entries: u32,
    pub rq_entries: u32,
    /// The rings: base address and per-page length.
    pub sq: (u64, u64),
    pub rq: (u64, u64),
    /// The PD.
    pub pd: u16,
    /// The raw response dwords @16..44.
    pub response: [u32; 7],
}

/// What `ocrdma_build_q_conf` makes of `entries` entries of `entry_size` bytes: the entries
/// (a power of two), the page count and the page size.
pub fn q_conf(entries: u32, entry_size: u64) -> (u32, u64, u64) {
    let n = entries.next_power_of_two();
    let mem = u64::from(n) * entry_size;
    let i = (0..6).find(|&i| mem <= Q_PAGE_BASE << i).expect("fits ocrdma's largest ring");
    let page = (Q_PAGE_BASE << i) / 8;
    let mem = mem.div_ceil(page) * page;
    ((mem / entry_size) as u32, mem / page, page)
}

impl Host {
    /// The PD page's doorbell at `off`.
    pub fn pd_doorbell(&mut self, pd: u16, off: u64, value: u32) {
        self.write32(DB_BAR, u64::from(pd) * 4096 + off, value);
    }

    /// `ocrdma_mbx_create_cq` on Skyhawk: `max_cqe` entries, DEF_FLAGS, the EQ, `pd_id` (0 for
    /// kernel CQs). Returns the CQ id and its ring.
    pub fn ocrdma_create_cq(&mut self, roce: &mut Roce, pd_id: u16) -> Result<(u16, HostRing), HostError> {
        let entries = u32::from(roce.config.max_cqes);
        let ring = self.alloc_ring(entries, 16);
        let page = ring.pages.len().max(1) as u64;
        let page_size = u64::from(entries) * 16 / page;
        let mut req = ocrdma_request(12, Subsystem::Common, 3, 68, 88 - 16);
        put32(&mut req, 16, ((page_size / 4096) as u32) << 16 | CQ_PAGES as u32);
        let count = match entries {
            256 => 0,
            512 => 1,
            1024 => 2,
            _ => 3,
        };
        put32(&mut req, 20, 0xA000_4000 | (count << 27)); // VALID | EVENTABLE | NODELAY, count
        put32(&mut req, 24, u32::from(roce.eqs[0].id));
        put32(&mut req, 28, entries | (u32::from(pd_id) << 16)); // cqe_count, pd_id
        put_pages(&mut req, 36, &ring.pages);
        let rsp = self.mq_embedded(roce, &req)?;
        Ok(((get32(&rsp, 16) & 0xFFFF) as u16, ring))
    }

    /// `ocrdma_reg_user_mr` → `ocrdma_reg_mr`: PBEs (hi dword first) into 4 KiB PBL pages, then
    /// REGISTER_NSMR with the first 22 PBL addresses and REGISTER_NSMR_CONTs for the rest.
    /// `access` is the NSMR flag bits (27 remote write, 28 remote read, 29 local write).
    /// Returns the key and the PBL pages.
    pub fn ocrdma_reg_mr(
        &mut self,
        roce: &mut Roce,
        pd: u16,
        pages: &[u64],
        va: u64,
        len: u64,
        access: u32,
    ) -> Result<(u32, Vec<u64>), HostError> {
        let per_pbl = 4096 / 8;
        let pbls: Vec<u64> = (0..pages.len().div_ceil(per_pbl)).map(|_| self.mem.alloc(4096)).collect();
        for (i, &page) in pages.iter().enumerate() {
            let mut pbe = [0u8; 8];
            pbe[..4].copy_from_slice(&((page >> 32) as u32).to_le_bytes());
            pbe[4..].copy_from_slice(&(page as u32).to_le_bytes());
            self.mem.poke(pbls[i / per_pbl] + (i % per_pbl) as u64 * 8, &pbe);
        }
        let first = pbls.len().min(NSMR_PBL);
        let mut req = ocrdma_request(13, Subsystem::Rdma, 0, 228, 228 - 16);
        put32(&mut req, 20, u32::from(pd) | ((pbls.len() as u32) << 16));
        let last = u32::from(first == pbls.len()) << 31;
        put32(&mut req, 24, access | last | (1 << 16) | 1); // PBL page 4 KiB, data page 4 KiB
        put32(&mut req, 28, len as u32);
        put32(&mut req, 32, (len >> 32) as u32);
        put32(&mut req, 44, va as u32);
        put32(&mut req, 48, (va >> 32) as u32);
        put_pages(&mut req, 52, &pbls[..first]);
        let key = get32(&self.mq_embedded(roce, &req)?, 16);
        let mut offset = first;
        while offset < pbls.len() {
            let n = (pbls.len() - offset).min(NSMR_PBL);
            let mut req = ocrdma_request(15, Subsystem::Rdma, 0, 204, 204 - 16);
            put32(&mut req, 16, key);
            put32(&mut req, 20, ((n as u32) << 16) | offset as u32);
            put32(&mut req, 24, u32::from(offset + n == pbls.len()) << 31);
            put_pages(&mut req, 28, &pbls[offset..offset + n]);
            self.mq_embedded(roce, &req)?;
            offset += n;
        }
        Ok((key, pbls))
    }

    /// `ocrdma_mbx_dealloc_lkey`.
    pub fn ocrdma_dealloc_lkey(&mut self, roce: &mut Roce, key: u32) -> Result<(), HostError> {
        let mut req = ocrdma_request(12, Subsystem::Rdma, 0, 24, 24 - 16);
        put32(&mut req, 16, key);
        self.mq_embedded(roce, &req).map(drop)
    }

    /// `ocrdma_mbx_create_qp` for a QP of `qp_type` (1 GSI, 2 RC) on PD `pd`, both CQs `cq`,
    /// with `send_wr` and `recv_wr` work requests, one SGE each, `flags` (bits 8:0).
    pub fn ocrdma_create_qp(
        &mut self,
        roce: &mut Roce,
        qp_type: u32,
        pd: u16,
        cq: u16,
        (send_wr, recv_wr): (u32, u32),
        flags: u32,
    ) -> Result<HostQp, HostError> {
        let max_wqe = u32::from(roce.config.max_wqes);
        let (sq_n, sq_pages, sq_page) = q_conf((send_wr + 1).min(max_wqe), 256);
        let (rq_n, rq_pages, rq_page) = q_conf(recv_wr + 1, 128);
        let sq = self.mem.alloc((sq_pages * sq_page) as usize);
        let rq = self.mem.alloc((rq_pages * rq_page) as usize);
        let ird = self.mem.alloc(4 * 4096);
        let code = |page: u64| (page / 4096).trailing_zeros();
        let mut req = ocrdma_request(6, Subsystem::Rdma, 0, 216, 216 - 16);
        put32(&mut req, 16, u32::from(pd) | code(sq_page) << 16 | code(rq_page) << 19 | qp_type << 29);
        put32(&mut req, 20, (sq_n.ilog2() << 16) | rq_n.ilog2());
        put32(&mut req, 24, (1 << 16) | 1); // one send SGE, one write SGE
        put32(&mut req, 28, (1 << 16) | flags); // one receive SGE
        let (ord, ird_n) = (u32::from(roce.config.max_ord_per_qp), u32::from(roce.config.max_ird_per_qp));
        put32(&mut req, 32, (ord << 16) | ird_n);
        put32(&mut req, 36, ((sq_pages as u32) << 16) | rq_pages as u32);
        put32(&mut req, 40, (256 << 16) | 128);
        put32(&mut req, 44, (u32::from(cq) << 16) | u32::from(cq));
        put_pages(&mut req, 48, &(0..sq_pages).map(|i| sq + i * sq_page).collect::<Vec<_>>());
        put_pages(&mut req, 112, &(0..rq_pages).map(|i| rq + i * rq_page).collect::<Vec<_>>());
        put_pages(&mut req, 184, &(0..4).map(|i| ird + i * 4096).collect::<Vec<_>>());
        let rsp = self.mq_embedded(roce, &req)?;
        let response: [u32; 7] = std::array::from_fn(|i| get32(&rsp, 16 + 4 * i));
        Ok(HostQp {
            id: response[0] as u16,
            sq_dbid: (response[5] >> 16) as u16,
            rq_dbid: response[5] as u16,
            sq_entries: 1 << (response[1] >> 16),
            rq_entries: 1 << (response[1] & 0xFFFF),
            sq: (sq, sq_page),
            rq: (rq, rq_page),
            pd,
            response,
        })
    }

    /// A MODIFY_QP as `ocrdma_mbx_modify_qp` fills it: `params` is the 88-byte block (its
    /// dword 0 the QP id), `valid` the flags dword.
    pub fn ocrdma_modify_qp(&mut self, roce: &mut Roce, params: &[u8; 88], valid: u32) -> Result<Vec<u8>, HostError> {
        let mut req = ocrdma_request(8, Subsystem::Rdma, 0, 116, 116 - 16);
        req[16..104].copy_from_slice(params);
        put32(&mut req, 104, valid);
        self.mq_embedded(roce, &req)
    }

    /// `ocrdma_mbx_query_qp`: the 88-byte parameter block the device answers.
    pub fn ocrdma_query_qp(&mut self, roce: &mut Roce, qp: u16) -> Result<Vec<u8>, HostError> {
        let mut req = ocrdma_request(7, Subsystem::Rdma, 0, 104, 104 - 16);
        put32(&mut req, 16, qp.into());
        Ok(self.mq_embedded(roce, &req)?[16..104].to_vec())
    }

    /// `ocrdma_mbx_destroy_qp`.
    pub fn ocrdma_destroy_qp(&mut self, roce: &mut Roce, qp: u16) -> Result<(), HostError> {
        let mut req = ocrdma_request(9, Subsystem::Rdma, 0, 20, 20 - 16);
        put32(&mut req, 16, qp.into());
        self.mq_embedded(roce, &req).map(drop)
    }
}
