//! The SQ's local operations — FR_MR (fast-register a region) and LKEY_INV (invalidate a key)
//! — as ocrdma writes them (ocrdma_verbs.c `ocrdma_build_reg`, `ocrdma_post_send` with
//! `IB_WR_REG_MR` / `IB_WR_LOCAL_INV`; spec/datapath.md §2.3), and how the engine carries them
//! out: in SQ order, after every earlier WQE has completed, with an SQ CQE when signaled and
//! LOC_QP_OP_ERR (then silence) when refused (the rules in [`crate::assumptions`], "RoCE
//! engine").

use oce_mailbox::commands::MrAccess;
use oce_mailbox::entries::{
    Cqe, FastRegister, WQE_HEADER_LEN, WqeHeader, cqe_status, fr_access, wqe_flag as flag, wqe_opcode as opcode,
};
use oce_mailbox::wire::{Reader, Wire};

use super::wqe::BadEntry;
use super::{QpView, RoceQueues, WorkQueue};

/// A fast registration as an FR_MR WQE asks it: the key (index of an FR region, and the key
/// byte it takes), access, and the geometry of the pages the region's PBL now lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastRegistration {
    /// The key the region takes (header dword 2, `wr->key`): bits 31:8 name the region.
    pub key: u32,
    /// LOCAL_WR, REMOTE_RD and REMOTE_WR from header dword 1; nothing else is granted.
    pub access: MrAccess,
    /// The region's I/O virtual address.
    pub va: u64,
    /// Its length in bytes (header `total_len`).
    pub len: u64,
    /// Offset of the first byte in the first page (see [`crate::assumptions`]: the WQE's
    /// `fbo` modulo the page size).
    pub first_byte_offset: u64,
    /// Bytes per page: 4 KiB << the WQE's page size code.
    pub page_len: u64,
    /// PBEs to read from the region's PBL pages (`num_sges`).
    pub pages: u32,
}

/// Why a fast registration or an invalidation is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegionRefusal {
    /// No region has the key (FR_MR: the key's index).
    NoRegion,
    /// The region was registered with its pages (REGISTER_NSMR without FR): not fast-register.
    NotFastRegister,
    /// FR_MR on a region still valid: it must be invalidated first.
    StillValid,
    /// The region belongs to another PD than the QP.
    Pd,
    /// More pages than the region's PBL holds, or a length the pages do not cover.
    Geometry,
    /// REMOTE_WR without LOCAL_WR.
    Access,
    /// A PBL page the device could not read.
    PageList,
}

/// What an SQ entry with a local opcode asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LocalOp {
    FastRegister(FastRegistration),
    Invalidate(u32),
}

/// A local operation and whether its success posts a CQE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalWr {
    pub(crate) op: LocalOp,
    pub(crate) signaled: bool,
}

/// The access rights of FR_MR header dword 1.
fn access(flags: u32) -> MrAccess {
    MrAccess {
        local_write: flags & fr_access::LOCAL_WR != 0,
        remote_read: flags & fr_access::REMOTE_RD != 0,
        remote_write: flags & fr_access::REMOTE_WR != 0,
        ..MrAccess::default()
    }
}

/// SQ entry `bytes` as a local operation; `None` when its opcode is not FR_MR or LKEY_INV.
pub(crate) fn parse(bytes: &[u8]) -> Option<Result<LocalWr, BadEntry>> {
    let hdr = WqeHeader::decode(&mut Reader::new(bytes)).ok()?;
    let size = hdr.size_bytes();
    let signaled = hdr.has(flag::SIG);
    let fits = |need: usize| size >= need && size <= bytes.len();
    match hdr.opcode() {
        // ocrdma_post_send: header + one SGE's room (32 bytes), the key in dword 2.
        opcode::LKEY_INV if fits(WQE_HEADER_LEN) => Some(Ok(LocalWr { op: LocalOp::Invalidate(hdr.dword2), signaled })),
        // ocrdma_build_reg: header + `ocrdma_ewqe_fr` (48 bytes).
        opcode::FR_MR if fits(WQE_HEADER_LEN + FastRegister::LEN) => {
            let fr = FastRegister::decode(&mut Reader::new(&bytes[WQE_HEADER_LEN..])).ok()?;
            if fr.page_size_code > FastRegister::MAX_PAGE_SIZE_CODE {
                return Some(Err(BadEntry::Size));
            }
            let page_len = fr.page_len();
            let reg = FastRegistration {
                key: hdr.dword2,
                access: access(hdr.dword1),
                va: fr.va,
                len: u64::from(hdr.total_len),
                first_byte_offset: fr.fbo % page_len,
                page_len,
                pages: fr.num_pages,
            };
            Some(Ok(LocalWr { op: LocalOp::FastRegister(reg), signaled }))
        }
        opcode::LKEY_INV | opcode::FR_MR => Some(Err(BadEntry::Size)),
        _ => None,
    }
}

/// Carries out local operation `wr`, SQ entry `index` of `qp`: a CQE when signaled; when
/// refused (or unparsable) an LOC_QP_OP_ERR CQE, as rdma_rxe completes a failed local
/// operation (rxe_req.c `rxe_do_local_ops`), and false: the QP goes silent.
pub(crate) fn run(wr: Result<LocalWr, BadEntry>, index: u32, qp: &QpView, queues: &mut dyn RoceQueues) -> bool {
    let outcome = wr.map_err(|_| ()).and_then(|wr| {
        let done = match wr.op {
            LocalOp::FastRegister(reg) => queues.fast_register(qp.pd_id, &reg),
            LocalOp::Invalidate(key) => queues.invalidate(qp.pd_id, key),
        };
        done.map(|()| wr.signaled).map_err(drop)
    });
    match outcome {
        Ok(signaled) => {
            if signaled {
                queues.post_cqe(qp.id, WorkQueue::Sq, &Cqe::sq(index as u16, 0, qp.id, cqe_status::SUCCESS), false);
            }
            true
        }
        Err(()) => {
            let cqe = Cqe::sq(index as u16, 0, qp.id, cqe_status::LOC_QP_OP_ERR);
            queues.post_cqe(qp.id, WorkQueue::Sq, &cqe, true);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oce_mailbox::wire::Writer;

    /// An FR_MR WQE as ocrdma_build_reg writes it, signaled.
    fn fr_wqe(code: u32, fbo: u64) -> Vec<u8> {
        let mut wqe = vec![0u8; 256];
        let mut hdr = WqeHeader::new(opcode::FR_MR, flag::SIG, 0, 48);
        hdr.dword1 = fr_access::LOCAL_WR | fr_access::REMOTE_WR;
        hdr.dword2 = 0x0000_0307;
        hdr.total_len = 10_000;
        hdr.encode(&mut Writer::new(&mut wqe[..16])).unwrap();
        let fr = FastRegister { va: 0xABCD_0000_1234_5100, fbo, page_size_code: code, num_pages: 3 };
        fr.encode(&mut Writer::new(&mut wqe[16..48])).unwrap();
        wqe
    }

    #[test]
    fn an_fr_mr_wqe_gives_key_access_geometry_and_the_in_page_offset() {
        // cw = size 6 (48 / 8) << 18 | SIG << 5 | 0x11.
        assert_eq!(&fr_wqe(0, 0)[..4], &0x0018_0031u32.to_le_bytes());
        // xprtrdma puts the XID into the iova's upper half (frwr_ops.c `frwr_map`), so
        // ocrdma's fbo = iova - pages[0] carries it too: 0xABCD_0000 << 32 | 0x100.
        let wr = parse(&fr_wqe(0, 0xABCD_0000_0000_0100)).unwrap().unwrap();
        let LocalOp::FastRegister(reg) = wr.op else { panic!("an FR_MR") };
        assert!(wr.signaled);
        assert_eq!(
            (reg.key, reg.va, reg.len, reg.page_len, reg.pages),
            (0x307, 0xABCD_0000_1234_5100, 10_000, 4096, 3)
        );
        assert_eq!(reg.first_byte_offset, 0x100);
        assert!(reg.access.local_write && reg.access.remote_write && !reg.access.remote_read);
        let wr = parse(&fr_wqe(4, 0)).unwrap().unwrap();
        assert!(matches!(wr.op, LocalOp::FastRegister(r) if r.page_len == 64 * 1024));
        assert_eq!(parse(&fr_wqe(17, 0)), Some(Err(BadEntry::Size)), "past get_encoded_page_size's range");
    }

    #[test]
    fn lkey_inv_names_its_key_and_other_opcodes_are_not_local() {
        let mut wqe = vec![0u8; 256];
        // ocrdma_post_send IB_WR_LOCAL_INV: size (16 + 16) / 8 = 4, unsignaled here.
        let mut hdr = WqeHeader::new(opcode::LKEY_INV, 0, 0, 32);
        hdr.dword2 = 0x0000_0442;
        hdr.encode(&mut Writer::new(&mut wqe[..16])).unwrap();
        assert_eq!(&wqe[..4], &0x0010_0015u32.to_le_bytes());
        assert_eq!(parse(&wqe), Some(Ok(LocalWr { op: LocalOp::Invalidate(0x442), signaled: false })));
        WqeHeader::new(opcode::SEND, 0, 1, 32).encode(&mut Writer::new(&mut wqe[..16])).unwrap();
        assert_eq!(parse(&wqe), None);
        // An FR_MR whose size leaves no room for its extension.
        WqeHeader::new(opcode::FR_MR, 0, 0, 32).encode(&mut Writer::new(&mut wqe[..16])).unwrap();
        assert_eq!(parse(&wqe), Some(Err(BadEntry::Size)));
    }
}
