//! The RDMA subsystem's (10) queue-pair lifecycle commands: CREATE_QP (6) and DELETE_QP (9)
//! (ocrdma_sli.h `ocrdma_create_qp_req`, `ocrdma_create_qp_rsp`, `ocrdma_destroy_qp`; filled by
//! ocrdma_hw.c `ocrdma_mbx_create_qp` and its `ocrdma_set_create_qp_*_cmd` helpers, read back by
//! `ocrdma_get_create_qp_rsp`; spec/datapath.md §2.1). MODIFY_QP and QUERY_QP, which share the
//! QP parameter block, are in [`super::rdma_qp_params`].
//!
//! All are embedded, version 0; `LEN` is ocrdma's structure less its 20-byte MQE header.

use super::queue_context::{decode_pages, encode_pages};
use crate::command::{Command, Empty};
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// Ring page slots of each of the SQ and RQ in CREATE_QP (`MAX_OCRDMA_QP_PAGES`).
#[doc(alias = "MAX_OCRDMA_QP_PAGES")]
pub const QP_PAGE_SLOTS: usize = 8;
/// IRD page slots in CREATE_QP (`MAX_OCRDMA_IRD_PAGES`).
#[doc(alias = "MAX_OCRDMA_IRD_PAGES")]
pub const IRD_PAGE_SLOTS: usize = 4;

/// A QP's transport type, bits 31:29 of CREATE_QP's `type_pgsz_pdn` (`OCRDMA_QPT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpType {
    /// The general services QP (QP1) the MAD layer sends over (`OCRDMA_QPT_GSI`, 1).
    Gsi,
    /// Reliable connected (`OCRDMA_QPT_RC`, 2).
    Rc,
    /// Unreliable datagram (`OCRDMA_QPT_UD`, 4).
    Ud,
    /// Any other code, kept as sent.
    Unknown(u8),
}

impl QpType {
    /// The 3-bit code.
    pub fn raw(self) -> u8 {
        match self {
            Self::Gsi => 1,
            Self::Rc => 2,
            Self::Ud => 4,
            Self::Unknown(raw) => raw,
        }
    }
    /// The type of code `raw`.
    pub fn from_raw(raw: u8) -> Self {
        match raw {
            1 => Self::Gsi,
            2 => Self::Rc,
            4 => Self::Ud,
            other => Self::Unknown(other),
        }
    }
}

/// The flag bits 8:0 of CREATE_QP's `max_sge_recv_flags` (`OCRDMA_CREATE_QP_REQ_*_MASK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CreateQpFlags(pub u16);

impl CreateQpFlags {
    /// Bit 0: fast memory registration WQEs allowed (`FMR_EN`).
    pub const FMR_EN: u16 = 1 << 0;
    /// Bit 1: lkey 0 names bus addresses directly (`ZERO_LKEYEN`; kernel QPs).
    pub const ZERO_LKEY: u16 = 1 << 1;
    /// Bit 2: memory-window binds allowed (`BIND_MEMWIN`).
    pub const BIND_MEMWIN: u16 = 1 << 2;
    /// Bit 3: inbound RDMA WRITE allowed (`INB_WREN`).
    pub const INBOUND_WRITE: u16 = 1 << 3;
    /// Bit 4: inbound RDMA READ allowed (`INB_RDEN`).
    pub const INBOUND_READ: u16 = 1 << 4;
    /// Bit 5: receives come from an SRQ (`USE_SRQ`).
    pub const USE_SRQ: u16 = 1 << 5;
    /// Bit 7: direct packet push (`ENABLE_DPP`).
    pub const DPP: u16 = 1 << 7;

    /// True when every bit of `mask` is set.
    pub fn has(self, mask: u16) -> bool {
        self.0 & mask == mask
    }
}

/// CREATE_QP: a queue pair's rings, sizes, CQs and access; 216 bytes.
///
/// @16 `type_pgsz_pdn` (PD 15:0, SQ page-size code 18:16, RQ page-size code 21:19, type
/// 31:29; a page is 4 KiB << code); @20 `max_wqe_rqe` (log2 RQ entries 15:0, log2 SQ entries
/// 31:16); @24 `max_sge_send_write` (write 15:0, send 31:16); @28 `max_sge_recv_flags` (flags
/// 8:0, recv SGEs 31:16); @32 `max_ord_ird` (IRD 15:0, ORD 31:16); @36 `num_wq_rq_pages` (RQ
/// 15:0, SQ 31:16); @40 `wqe_rqe_size` (RQE bytes 15:0, WQE bytes 31:16); @44 `wq_rq_cqid` (RQ
/// CQ 15:0, SQ CQ 31:16); @48 `wq_addr[8]`, @112 `rq_addr[8]` as (lo, hi); @176
/// `dpp_credits_cqid`; @180 `rpir_lkey`; @184 `ird_addr[4]`.
#[doc(alias = "OCRDMA_CMD_CREATE_QP")]
#[doc(alias = "ocrdma_create_qp_req")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateQp {
    /// Transport type.
    pub qp_type: QpType,
    /// The QP's PD.
    pub pd_id: u16,
    /// SQ ring page size: 4 KiB << `sq_page_size_code`.
    pub sq_page_size_code: u8,
    /// RQ ring page size: 4 KiB << `rq_page_size_code`.
    pub rq_page_size_code: u8,
    /// log2 of the SQ's entries.
    pub log2_max_wqe: u16,
    /// log2 of the RQ's entries.
    pub log2_max_rqe: u16,
    /// SGEs per send WQE.
    pub max_sge_send: u16,
    /// SGEs per RDMA WRITE WQE.
    pub max_sge_write: u16,
    /// SGEs per RQE.
    pub max_sge_recv: u16,
    /// Flag bits.
    pub flags: CreateQpFlags,
    /// Outstanding RDMA READs this QP may issue.
    pub max_ord: u16,
    /// Outstanding RDMA READs this QP may answer.
    pub max_ird: u16,
    /// Bytes per SQ entry (ocrdma: 256).
    pub wqe_size: u16,
    /// Bytes per RQ entry (ocrdma: 128).
    pub rqe_size: u16,
    /// Where send completions go.
    pub sq_cq_id: u16,
    /// Where receive completions go.
    pub rq_cq_id: u16,
    /// SQ ring pages.
    pub sq_pages: Vec<u64>,
    /// RQ ring pages.
    pub rq_pages: Vec<u64>,
    /// `dpp_credits_cqid` @176 (DPP only).
    pub dpp_credits_cqid: u32,
    /// `rpir_lkey` @180.
    pub rpir_lkey: u32,
    /// IRD pages, zero when unused.
    pub ird_pages: [u64; IRD_PAGE_SLOTS],
}

impl CreateQp {
    /// Bytes per SQ ring page.
    pub fn sq_page_len(&self) -> u64 {
        4096 << self.sq_page_size_code
    }
    /// Bytes per RQ ring page.
    pub fn rq_page_len(&self) -> u64 {
        4096 << self.rq_page_size_code
    }
}

/// `(hi << 16) | lo`.
fn halves(hi: u16, lo: u16) -> u32 {
    (u32::from(hi) << 16) | u32::from(lo)
}

/// `(hi, lo)` of `v`.
fn split(v: u32) -> (u16, u16) {
    ((v >> 16) as u16, v as u16)
}

impl Wire for CreateQp {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let type_pgsz_pdn = u32::from(self.pd_id)
            | (u32::from(self.sq_page_size_code & 7) << 16)
            | (u32::from(self.rq_page_size_code & 7) << 19)
            | (u32::from(self.qp_type.raw() & 7) << 29);
        w.u32("type_pgsz_pdn", type_pgsz_pdn)?;
        w.u32("max_wqe_rqe", halves(self.log2_max_wqe, self.log2_max_rqe))?;
        w.u32("max_sge_send_write", halves(self.max_sge_send, self.max_sge_write))?;
        w.u32("max_sge_recv_flags", halves(self.max_sge_recv, self.flags.0 & 0x1FF))?;
        w.u32("max_ord_ird", halves(self.max_ord, self.max_ird))?;
        w.u32("num_wq_rq_pages", halves(self.sq_pages.len() as u16, self.rq_pages.len() as u16))?;
        w.u32("wqe_rqe_size", halves(self.wqe_size, self.rqe_size))?;
        w.u32("wq_rq_cqid", halves(self.sq_cq_id, self.rq_cq_id))?;
        encode_pages(w, &self.sq_pages, QP_PAGE_SLOTS)?;
        encode_pages(w, &self.rq_pages, QP_PAGE_SLOTS)?;
        w.u32("dpp_credits_cqid", self.dpp_credits_cqid)?;
        w.u32("rpir_lkey", self.rpir_lkey)?;
        encode_pages(w, &self.ird_pages, IRD_PAGE_SLOTS)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let type_pgsz_pdn = r.u32("type_pgsz_pdn")?;
        let (log2_max_wqe, log2_max_rqe) = split(r.u32("max_wqe_rqe")?);
        let (max_sge_send, max_sge_write) = split(r.u32("max_sge_send_write")?);
        let (max_sge_recv, flags) = split(r.u32("max_sge_recv_flags")?);
        let (max_ord, max_ird) = split(r.u32("max_ord_ird")?);
        let (sq_count, rq_count) = split(r.u32("num_wq_rq_pages")?);
        let (wqe_size, rqe_size) = split(r.u32("wqe_rqe_size")?);
        let (sq_cq_id, rq_cq_id) = split(r.u32("wq_rq_cqid")?);
        let start = r.position();
        let sq_pages = decode_pages(r, sq_count.into(), QP_PAGE_SLOTS)?;
        r.seek("rq_addr", start + QP_PAGE_SLOTS * 8)?;
        let rq_pages = decode_pages(r, rq_count.into(), QP_PAGE_SLOTS)?;
        r.seek("dpp_credits_cqid", start + 2 * QP_PAGE_SLOTS * 8)?;
        let dpp_credits_cqid = r.u32("dpp_credits_cqid")?;
        let rpir_lkey = r.u32("rpir_lkey")?;
        let ird = decode_pages(r, IRD_PAGE_SLOTS, IRD_PAGE_SLOTS)?;
        let mut ird_pages = [0u64; IRD_PAGE_SLOTS];
        ird_pages.copy_from_slice(&ird);
        Ok(Self {
            qp_type: QpType::from_raw((type_pgsz_pdn >> 29) as u8),
            pd_id: type_pgsz_pdn as u16,
            sq_page_size_code: ((type_pgsz_pdn >> 16) & 7) as u8,
            rq_page_size_code: ((type_pgsz_pdn >> 19) & 7) as u8,
            log2_max_wqe,
            log2_max_rqe,
            max_sge_send,
            max_sge_write,
            max_sge_recv,
            flags: CreateQpFlags(flags & 0x1FF),
            max_ord,
            max_ird,
            wqe_size,
            rqe_size,
            sq_cq_id,
            rq_cq_id,
            sq_pages,
            rq_pages,
            dpp_credits_cqid,
            rpir_lkey,
            ird_pages,
        })
    }
}

/// The CREATE_QP response (`ocrdma_create_qp_rsp`): @16 `qp_id` (15:0); @20 `max_wqe_rqe` (log2
/// RQ entries 15:0, log2 SQ entries 31:16: ocrdma sizes its rings as `1 << n`); @24
/// `max_sge_send_write`; @28 `max_sge_recv` (31:16); @32 `max_ord_ird`; @36 `sq_rq_id` (the
/// doorbell ids: RQ 15:0, SQ 31:16); @40 `dpp_response`.
#[doc(alias = "ocrdma_create_qp_rsp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpCreated {
    /// The QP number.
    pub qp_id: u16,
    /// log2 of the SQ entries granted.
    pub log2_max_wqe: u16,
    /// log2 of the RQ entries granted.
    pub log2_max_rqe: u16,
    /// Send SGEs granted.
    pub max_sge_send: u16,
    /// Write SGEs granted.
    pub max_sge_write: u16,
    /// Receive SGEs granted.
    pub max_sge_recv: u16,
    /// ORD granted.
    pub max_ord: u16,
    /// IRD granted.
    pub max_ird: u16,
    /// The SQ's doorbell id (SQ doorbell bits 15:0).
    pub sq_dbid: u16,
    /// The RQ's doorbell id.
    pub rq_dbid: u16,
    /// `dpp_response` @40: bit 0 DPP enabled (never, in a model without DPP).
    pub dpp_response: u32,
}

impl Wire for QpCreated {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("qp_id", self.qp_id.into())?;
        w.u32("max_wqe_rqe", halves(self.log2_max_wqe, self.log2_max_rqe))?;
        w.u32("max_sge_send_write", halves(self.max_sge_send, self.max_sge_write))?;
        w.u32("max_sge_recv", halves(self.max_sge_recv, 0))?;
        w.u32("max_ord_ird", halves(self.max_ord, self.max_ird))?;
        w.u32("sq_rq_id", halves(self.sq_dbid, self.rq_dbid))?;
        w.u32("dpp_response", self.dpp_response)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let qp_id = r.u32("qp_id")? as u16;
        let (log2_max_wqe, log2_max_rqe) = split(r.u32("max_wqe_rqe")?);
        let (max_sge_send, max_sge_write) = split(r.u32("max_sge_send_write")?);
        let (max_sge_recv, _) = split(r.u32("max_sge_recv")?);
        let (max_ord, max_ird) = split(r.u32("max_ord_ird")?);
        let (sq_dbid, rq_dbid) = split(r.u32("sq_rq_id")?);
        let dpp_response = r.u32("dpp_response")?;
        Ok(Self {
            qp_id,
            log2_max_wqe,
            log2_max_rqe,
            max_sge_send,
            max_sge_write,
            max_sge_recv,
            max_ord,
            max_ird,
            sq_dbid,
            rq_dbid,
            dpp_response,
        })
    }
}

impl Command for CreateQp {
    const NAME: &'static str = "RDMA_CREATE_QP";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 6;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 216;
    type Response = QpCreated;
}

/// DELETE_QP: `qp_id` u32 @16; 20 bytes.
#[doc(alias = "OCRDMA_CMD_DELETE_QP")]
#[doc(alias = "ocrdma_destroy_qp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeleteQp {
    /// The QP.
    pub qp_id: u32,
}

impl Wire for DeleteQp {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("qp_id", self.qp_id)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { qp_id: r.u32("qp_id")? })
    }
}

impl Command for DeleteQp {
    const NAME: &'static str = "RDMA_DELETE_QP";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 9;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = Empty;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    /// An RC QP as libocrdma's kernel half asks for one (ocrdma_mbx_create_qp): 128-entry SQ of
    /// 256-byte WQEs in one 32 KiB page, 256-entry RQ of 128-byte RQEs in one 32 KiB page, PD 2,
    /// inbound read and write, CQs 5 and 6, one IRD page.
    fn rc_qp() -> CreateQp {
        CreateQp {
            qp_type: QpType::Rc,
            pd_id: 2,
            sq_page_size_code: 3,
            rq_page_size_code: 3,
            log2_max_wqe: 7,
            log2_max_rqe: 8,
            max_sge_send: 2,
            max_sge_write: 2,
            max_sge_recv: 1,
            flags: CreateQpFlags(CreateQpFlags::INBOUND_READ | CreateQpFlags::INBOUND_WRITE),
            max_ord: 16,
            max_ird: 16,
            wqe_size: 256,
            rqe_size: 128,
            sq_cq_id: 5,
            rq_cq_id: 6,
            sq_pages: vec![0x1_0000_0000],
            rq_pages: vec![0x1_0000_8000],
            dpp_credits_cqid: 0,
            rpir_lkey: 0,
            ird_pages: [0x2000, 0, 0, 0],
        }
    }

    #[test]
    fn create_qp_golden_bytes() {
        let buf = encode_request(&rc_qp()).unwrap();
        assert_eq!(buf.len(), 216);
        // opcode 6, subsystem 10, request_length 200 (0xc8).
        assert_eq!(hex::encode(&buf[..16]), "060a000000000000c800000000000000");
        // @16 type 2 << 29 | rq code 3 << 19 | sq code 3 << 16 | PD 2 = 0x401b_0002;
        // @20 7 << 16 | 8; @24 2 << 16 | 2; @28 1 << 16 | 0x18; @32 16 << 16 | 16;
        // @36 1 << 16 | 1; @40 256 << 16 | 128; @44 5 << 16 | 6.
        assert_eq!(
            hex::encode(&buf[16..48]),
            concat!("02001b40", "08000700", "02000200", "18000100", "10001000", "01000100", "80000001", "06000500")
        );
        // @48 wq_addr[0] (lo 0, hi 1); @112 rq_addr[0] (lo 0x8000, hi 1); @184 ird_addr[0].
        assert_eq!(hex::encode(&buf[48..56]), "0000000001000000");
        assert!(buf[56..112].iter().all(|&b| b == 0));
        assert_eq!(hex::encode(&buf[112..120]), "0080000001000000");
        assert!(buf[120..184].iter().all(|&b| b == 0));
        assert_eq!(hex::encode(&buf[184..192]), "0020000000000000");
        let (_, back) = decode_request::<CreateQp>(&buf).unwrap();
        assert_eq!(back, rc_qp());
    }

    #[test]
    fn create_qp_response_golden_bytes() {
        let rsp = QpCreated {
            qp_id: 2,
            log2_max_wqe: 7,
            log2_max_rqe: 8,
            max_sge_send: 2,
            max_sge_write: 2,
            max_sge_recv: 1,
            max_ord: 1,
            max_ird: 1,
            sq_dbid: 2,
            rq_dbid: 2,
            dpp_response: 0,
        };
        let mut buf = [0u8; 44];
        rsp.encode(&mut Writer::at(&mut buf, 16)).unwrap();
        assert_eq!(
            hex::encode(&buf[16..]),
            concat!("02000000", "08000700", "02000200", "00000100", "01000100", "02000200", "00000000")
        );
        let mut full = hex::decode("060a0000000000001c0000001c000000").unwrap();
        full.extend_from_slice(&buf[16..]);
        assert_eq!(decode_response::<CreateQp>(&full).unwrap().1, rsp);
    }

    #[test]
    fn delete_qp_golden_bytes_and_unknown_types_kept() {
        let buf = encode_request(&DeleteQp { qp_id: 2 }).unwrap();
        assert_eq!(hex::encode(buf), concat!("090a0000000000000400000000000000", "02000000"));
        let mut qp = rc_qp();
        qp.qp_type = QpType::Unknown(3);
        let (_, back) = decode_request::<CreateQp>(&encode_request(&qp).unwrap()).unwrap();
        assert_eq!(back.qp_type, QpType::Unknown(3));
    }

    #[test]
    fn garbage_page_counts_and_short_buffers_are_errors() {
        let mut buf = encode_request(&rc_qp()).unwrap();
        buf[38] = 9; // num_wq_rq_pages: 9 SQ pages, more than the 8 slots
        assert_eq!(decode_request::<CreateQp>(&buf).unwrap_err().field, "pages");
        let buf = encode_request(&rc_qp()).unwrap();
        assert!(decode_request::<CreateQp>(&buf[..200]).is_err());
        assert!(decode_request::<DeleteQp>(&buf[..19]).is_err());
    }
}
