//! CQ_CREATE version 3 (COMMON 12), the form ocrdma creates every RDMA CQ with, kernel and user
//! (ocrdma_sli.h `ocrdma_create_cq_cmd`, filled by ocrdma_hw.c `ocrdma_mbx_create_cq`;
//! spec/datapath.md §2.1). Unlike v2 ([`super::CqCreate`]) it carries no context words: the
//! page geometry, flags, EQ, entry count and the user PD are plain fields. The response is the
//! same `cq_id` @16 ([`QueueCreated`]).

use super::queue_context::{decode_pages, encode_pages};
use super::queues::QueueCreated;
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// Page slots of CQ_CREATE v3 (`OCRDMA_CREATE_CQ_MAX_PAGES`).
#[doc(alias = "OCRDMA_CREATE_CQ_MAX_PAGES")]
pub const CQ_V3_PAGE_SLOTS: usize = 4;

/// CQ_CREATE v3: embedded, 68 bytes.
///
/// @16 `pgsz_pgcnt` (pages 15:0, page size in 4 KiB units 23:16, type 31:24: 1 = DPP CQ);
/// @20 `ev_cnt_flags` (coalescing watermark 13:12, nodelay 14, auto-valid 15, entry-count code
/// 28:27: 256 << code, 3 = more than 1024; valid 29; eventable 31); @24 `eqn`; @28 `cqe_count`
/// u16 (entries, Skyhawk; earlier chips send entries − 1); @30 `pd_id` u16 (the user context's
/// PD, whose doorbell page the CQ's doorbell rings on; 0 for kernel CQs); @32 reserved; @36
/// `pa[4]` as (lo, hi).
#[doc(alias = "ocrdma_create_cq_cmd")]
#[doc(alias = "OCRDMA_CREATE_CQ_VER3")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CqCreateV3 {
    /// Page size in 4 KiB units.
    pub page_size: u8,
    /// `pgsz_pgcnt` bits 31:24 (`OCRDMA_CREATE_CQ_DPP` = 1).
    pub cq_type: u8,
    /// Coalescing watermark code.
    pub coalesce_wm: u8,
    /// Bit 14: post an event per completion, without delay.
    pub nodelay: bool,
    /// Bit 15: the device toggles the valid bit per pass (pre-Skyhawk phase change).
    pub auto_valid: bool,
    /// Bits 28:27: entries = 256 << code; 3 = more than 1024.
    pub count_code: u8,
    /// Bit 29.
    pub valid: bool,
    /// Bit 31: completions raise events on `eq_id`.
    pub eventable: bool,
    /// The EQ.
    pub eq_id: u32,
    /// Entries.
    pub cqe_count: u16,
    /// The user PD (0 for kernel CQs).
    pub pd_id: u16,
    /// Bus address of each page.
    pub pages: Vec<u64>,
}

impl CqCreateV3 {
    /// Bytes per page.
    pub fn page_len(&self) -> u64 {
        u64::from(self.page_size) * 4096
    }
}

impl Wire for CqCreateV3 {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let pgsz_pgcnt =
            (self.pages.len() as u32 & 0xFFFF) | (u32::from(self.page_size) << 16) | (u32::from(self.cq_type) << 24);
        w.u32("pgsz_pgcnt", pgsz_pgcnt)?;
        let flags = (u32::from(self.coalesce_wm & 3) << 12)
            | (u32::from(self.nodelay) << 14)
            | (u32::from(self.auto_valid) << 15)
            | (u32::from(self.count_code & 3) << 27)
            | (u32::from(self.valid) << 29)
            | (u32::from(self.eventable) << 31);
        w.u32("ev_cnt_flags", flags)?;
        w.u32("eqn", self.eq_id)?;
        w.u16("cqe_count", self.cqe_count)?;
        w.u16("pd_id", self.pd_id)?;
        w.zeros("rsvd6", 4)?;
        encode_pages(w, &self.pages, CQ_V3_PAGE_SLOTS)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let pgsz_pgcnt = r.u32("pgsz_pgcnt")?;
        let flags = r.u32("ev_cnt_flags")?;
        let eq_id = r.u32("eqn")?;
        let cqe_count = r.u16("cqe_count")?;
        let pd_id = r.u16("pd_id")?;
        r.skip("rsvd6", 4)?;
        let pages = decode_pages(r, (pgsz_pgcnt & 0xFFFF) as usize, CQ_V3_PAGE_SLOTS)?;
        Ok(Self {
            page_size: (pgsz_pgcnt >> 16) as u8,
            cq_type: (pgsz_pgcnt >> 24) as u8,
            coalesce_wm: ((flags >> 12) & 3) as u8,
            nodelay: flags & (1 << 14) != 0,
            auto_valid: flags & (1 << 15) != 0,
            count_code: ((flags >> 27) & 3) as u8,
            valid: flags & (1 << 29) != 0,
            eventable: flags & (1 << 31) != 0,
            eq_id,
            cqe_count,
            pd_id,
            pages,
        })
    }
}

impl Command for CqCreateV3 {
    const NAME: &'static str = "CQ_CREATE";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 12;
    const VERSION: u8 = 3;
    const EMBEDDED: bool = true;
    const LEN: usize = 68;
    type Response = QueueCreated;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    /// ocrdma_mbx_create_cq on Skyhawk for a user CQ: `max_cqe` 1024 entries of 16 bytes in
    /// four 4 KiB pages, DEF_FLAGS (valid, eventable, nodelay), count code 2 (1024), EQ 3, PD 4.
    fn user_cq() -> CqCreateV3 {
        CqCreateV3 {
            page_size: 1,
            nodelay: true,
            count_code: 2,
            valid: true,
            eventable: true,
            eq_id: 3,
            cqe_count: 1024,
            pd_id: 4,
            pages: vec![0x1_0000_0000, 0x1_0000_1000, 0x1_0000_2000, 0x1_0000_3000],
            ..CqCreateV3::default()
        }
    }

    #[test]
    fn cq_create_v3_golden_bytes() {
        let buf = encode_request(&user_cq()).unwrap();
        let expected = concat!(
            "0c010000000000003400000003000000", // opcode 12, COMMON, request_length 52, version 3
            "04000100",                         // @16 4 pages | 1 << 16
            "004000b0", // @20 eventable 31 | valid 29 | count 2 << 27 | nodelay 14 = 0xb000_4000
            "03000000", // @24 eqn
            "0004",     // @28 cqe_count 1024
            "0400",     // @30 pd_id 4
            "00000000", // @32 reserved
            "0000000001000000",
            "0010000001000000",
            "0020000001000000",
            "0030000001000000",
        );
        assert_eq!(hex::encode(&buf), expected);
        let (hdr, back) = decode_request::<CqCreateV3>(&buf).unwrap();
        assert_eq!((hdr.version, back), (3, user_cq()));
        let rsp = hex::decode(concat!("0c010000000000000400000004000000", "07000000")).unwrap();
        assert_eq!(decode_response::<CqCreateV3>(&rsp).unwrap().1, QueueCreated { id: 7 });
    }

    #[test]
    fn too_many_pages_or_a_short_buffer_is_an_error() {
        let mut buf = encode_request(&user_cq()).unwrap();
        buf[16] = 5;
        assert_eq!(decode_request::<CqCreateV3>(&buf).unwrap_err().field, "pages");
        let buf = encode_request(&user_cq()).unwrap();
        assert!(decode_request::<CqCreateV3>(&buf[..60]).is_err());
    }
}
