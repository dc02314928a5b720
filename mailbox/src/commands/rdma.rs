//! The RDMA subsystem's (10) resource commands ocrdma sends on its own MCC queue while it
//! probes, opens a user context and unloads: protection domains one at a time (ALLOC_PD 2,
//! DEALLOC_PD 3) or as a pre-allocated range (ALLOC_PD_RANGE 28, DEALLOC_PD_RANGE 29), and the
//! address handle table (CREATE_AH_TBL 4, DELETE_AH_TBL 5) (ocrdma_hw.c `ocrdma_mbx_alloc_pd*`,
//! `ocrdma_mbx_create_ah_tbl`; layouts in ocrdma_sli.h; spec/be2net-driver.md §5.2 steps 6 and 9,
//! §5.4).
//!
//! All are embedded, version 0. `LEN` is ocrdma's structure less its 20-byte MQE header: the
//! command buffer starts at the request header.

use crate::command::{Command, Empty};
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// Bit 16 of a PD request's `enable_dpp_rsvd` and of a response's `dpp_page_pdid`: a PD with a
/// direct packet push page (`OCRDMA_ALLOC_PD_ENABLE_DPP`, `OCRDMA_ALLOC_PD_RSP_DPP`).
#[doc(alias = "OCRDMA_ALLOC_PD_ENABLE_DPP")]
pub const PD_DPP: u32 = 1 << 16;
/// Where the DPP page index starts in `dpp_page_pdid` (`OCRDMA_ALLOC_PD_RSP_DPP_PAGE_SHIFT`).
const DPP_PAGE_SHIFT: u32 = 20;

/// `dpp_page_pdid` @16 of the ALLOC_PD and ALLOC_PD_RANGE responses: the (first) PD id in bits
/// 15:0, DPP in bit 16, the (first) DPP page in bits 31:20.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PdGrant {
    /// The PD id, or the first of a range.
    pub pd_id: u16,
    /// The DPP page (or the first of a range) when the PDs have one.
    pub dpp_page: Option<u16>,
}

impl PdGrant {
    fn raw(self) -> u32 {
        let dpp = self.dpp_page.map_or(0, |page| PD_DPP | (u32::from(page & 0xFFF) << DPP_PAGE_SHIFT));
        u32::from(self.pd_id) | dpp
    }

    fn from_raw(raw: u32) -> Self {
        let dpp_page = (raw & PD_DPP != 0).then_some((raw >> DPP_PAGE_SHIFT) as u16);
        Self { pd_id: raw as u16, dpp_page }
    }
}

/// ALLOC_PD: one protection domain, with a DPP page if asked and available; 20 bytes.
#[doc(alias = "OCRDMA_CMD_ALLOC_PD")]
#[doc(alias = "ocrdma_alloc_pd")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AllocPd {
    /// `enable_dpp_rsvd` @16 bit 16.
    pub dpp: bool,
}

impl Wire for AllocPd {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("enable_dpp_rsvd", if self.dpp { PD_DPP } else { 0 })
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { dpp: r.u32("enable_dpp_rsvd")? & PD_DPP != 0 })
    }
}

impl Wire for PdGrant {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("dpp_page_pdid", self.raw())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self::from_raw(r.u32("dpp_page_pdid")?))
    }
}

impl Command for AllocPd {
    const NAME: &'static str = "RDMA_ALLOC_PD";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 2;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = PdGrant;
}

/// DEALLOC_PD: gives back one PD; `id` u32 @16; 20 bytes.
#[doc(alias = "OCRDMA_CMD_DEALLOC_PD")]
#[doc(alias = "ocrdma_dealloc_pd")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeallocPd {
    /// The PD.
    pub pd_id: u32,
}

impl Wire for DeallocPd {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("id", self.pd_id)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { pd_id: r.u32("id")? })
    }
}

impl Command for DeallocPd {
    const NAME: &'static str = "RDMA_DEALLOC_PD";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 3;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = Empty;
}

/// ALLOC_PD_RANGE: `pd_count` PDs with consecutive ids, reserved for the driver to hand out
/// itself; 24 bytes.
#[doc(alias = "OCRDMA_CMD_ALLOC_PD_RANGE")]
#[doc(alias = "ocrdma_alloc_pd_range")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AllocPdRange {
    /// `enable_dpp_rsvd` @16 bit 16: PDs with DPP pages.
    pub dpp: bool,
    /// `pd_count` @20.
    pub pd_count: u32,
}

impl Wire for AllocPdRange {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("enable_dpp_rsvd", if self.dpp { PD_DPP } else { 0 })?;
        w.u32("pd_count", self.pd_count)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let dpp = r.u32("enable_dpp_rsvd")? & PD_DPP != 0;
        Ok(Self { dpp, pd_count: r.u32("pd_count")? })
    }
}

/// The ALLOC_PD_RANGE response: the first PD (and DPP page) @16 and how many @20.
#[doc(alias = "ocrdma_alloc_pd_range_rsp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PdRange {
    /// The first PD id and DPP page.
    pub first: PdGrant,
    /// `pd_count` @20: how many PDs the range holds.
    pub pd_count: u32,
}

impl Wire for PdRange {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        self.first.encode(w)?;
        w.u32("pd_count", self.pd_count)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let first = PdGrant::decode(r)?;
        Ok(Self { first, pd_count: r.u32("pd_count")? })
    }
}

impl Command for AllocPdRange {
    const NAME: &'static str = "RDMA_ALLOC_PD_RANGE";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 28;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 24;
    type Response = PdRange;
}

/// DEALLOC_PD_RANGE: gives a range back; `start_pd_id` @16, `pd_count` @20; 24 bytes.
#[doc(alias = "OCRDMA_CMD_DEALLOC_PD_RANGE")]
#[doc(alias = "ocrdma_dealloc_pd_range")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeallocPdRange {
    /// The first PD of the range.
    pub start_pd_id: u32,
    /// How many.
    pub pd_count: u32,
}

impl Wire for DeallocPdRange {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("start_pd_id", self.start_pd_id)?;
        w.u32("pd_count", self.pd_count)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start_pd_id = r.u32("start_pd_id")?;
        Ok(Self { start_pd_id, pd_count: r.u32("pd_count")? })
    }
}

impl Command for DeallocPdRange {
    const NAME: &'static str = "RDMA_DEALLOC_PD_RANGE";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 29;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 24;
    type Response = Empty;
}

/// Entries of CREATE_AH_TBL's page list (`OCRDMA_AH_TBL_PAGES`).
#[doc(alias = "OCRDMA_AH_TBL_PAGES")]
pub const AH_TABLE_PAGES: usize = 8;

/// CREATE_AH_TBL: the table of address vectors the adapter reads when a UD send names an
/// address handle, in host memory behind a page list; 84 bytes.
///
/// `ah_conf` @16 packs the page count (bits 22:19), the page size (bits 18:16, 4 KiB << n)
/// and the entry size in bytes (bits 31:23); `tbl_addr[8]` @20 are (lo, hi) address pairs, of
/// which ocrdma fills the first with the page of its page list.
#[doc(alias = "OCRDMA_CMD_CREATE_AH_TBL")]
#[doc(alias = "ocrdma_create_ah_tbl")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CreateAhTable {
    /// Pages of the table (`OCRDMA_CREATE_AH_NUM_PAGES_MASK`).
    pub pages: u8,
    /// Page size code: 4 KiB << `page_size_code` (`OCRDMA_CREATE_AH_PAGE_SIZE_MASK`).
    pub page_size_code: u8,
    /// Bytes per address vector (`OCRDMA_CREATE_AH_ENTRY_SIZE_MASK`).
    pub entry_len: u16,
    /// `tbl_addr[8]` @20.
    pub page_list: [u64; AH_TABLE_PAGES],
}

impl CreateAhTable {
    fn conf(&self) -> u32 {
        (u32::from(self.entry_len & 0x1FF) << 23)
            | (u32::from(self.pages & 0xF) << 19)
            | (u32::from(self.page_size_code & 0x7) << 16)
    }
}

impl Wire for CreateAhTable {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("ah_conf", self.conf())?;
        for &addr in &self.page_list {
            w.u32("tbl_addr.lo", addr as u32)?;
            w.u32("tbl_addr.hi", (addr >> 32) as u32)?;
        }
        Ok(())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let conf = r.u32("ah_conf")?;
        let mut page_list = [0u64; AH_TABLE_PAGES];
        for addr in &mut page_list {
            let lo = r.u32("tbl_addr.lo")?;
            *addr = u64::from(lo) | (u64::from(r.u32("tbl_addr.hi")?) << 32);
        }
        Ok(Self {
            pages: ((conf >> 19) & 0xF) as u8,
            page_size_code: ((conf >> 16) & 0x7) as u8,
            entry_len: ((conf >> 23) & 0x1FF) as u16,
            page_list,
        })
    }
}

/// The CREATE_AH_TBL response: `ahid` @16 (ocrdma keeps its low 16 bits).
#[doc(alias = "ocrdma_create_ah_tbl_rsp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AhTableCreated {
    /// The table's id, for DELETE_AH_TBL.
    pub ahid: u16,
}

impl Wire for AhTableCreated {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("ahid", self.ahid.into())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { ahid: r.u32("ahid")? as u16 })
    }
}

impl Command for CreateAhTable {
    const NAME: &'static str = "RDMA_CREATE_AH_TBL";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 4;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 84;
    type Response = AhTableCreated;
}

/// DELETE_AH_TBL: `ahid` u32 @16; 20 bytes.
#[doc(alias = "OCRDMA_CMD_DELETE_AH_TBL")]
#[doc(alias = "ocrdma_delete_ah_tbl")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeleteAhTable {
    /// The table.
    pub ahid: u32,
}

impl Wire for DeleteAhTable {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("ahid", self.ahid)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { ahid: r.u32("ahid")? })
    }
}

impl Command for DeleteAhTable {
    const NAME: &'static str = "RDMA_DELETE_AH_TBL";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 5;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = Empty;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn pd_requests_golden_bytes() {
        let buf = encode_request(&AllocPd { dpp: true }).unwrap();
        // opcode 2, subsystem 10, request_length 4; @16 enable_dpp_rsvd bit 16.
        assert_eq!(hex::encode(&buf), "020a000000000000040000000000000000000100");
        let buf = encode_request(&DeallocPd { pd_id: 7 }).unwrap();
        assert_eq!(hex::encode(&buf), "030a000000000000040000000000000007000000");
        let buf = encode_request(&AllocPdRange { dpp: false, pd_count: 0x400 }).unwrap();
        // opcode 28 (0x1c), request_length 8; @20 pd_count.
        assert_eq!(hex::encode(&buf), "1c0a00000000000008000000000000000000000000040000");
        let buf = encode_request(&DeallocPdRange { start_pd_id: 1, pd_count: 0x400 }).unwrap();
        assert_eq!(hex::encode(&buf), "1d0a00000000000008000000000000000100000000040000");
        let (_, back) =
            decode_request::<AllocPdRange>(&encode_request(&AllocPdRange { dpp: true, pd_count: 3 }).unwrap()).unwrap();
        assert_eq!(back, AllocPdRange { dpp: true, pd_count: 3 });
    }

    #[test]
    fn pd_responses_unpack_id_dpp_and_page() {
        let buf = hex::decode("1c0a0000000000000800000008000000050031000a000000").unwrap();
        let (_, range) = decode_response::<AllocPdRange>(&buf).unwrap();
        // @16 0x00310005: PD 5, DPP bit 16, DPP page 3 (bits 31:20); @20 count 10.
        assert_eq!(range, PdRange { first: PdGrant { pd_id: 5, dpp_page: Some(3) }, pd_count: 10 });
        let mut out = vec![0u8; buf.len()];
        range.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &buf[16..]);
        let buf = hex::decode("020a000000000000040000000400000009000000").unwrap();
        let (_, pd) = decode_response::<AllocPd>(&buf).unwrap();
        assert_eq!(pd, PdGrant { pd_id: 9, dpp_page: None });
    }

    #[test]
    fn ah_table_golden_bytes_as_ocrdma_builds_them() {
        // ocrdma: 8 pages, page size code 0 (4 KiB), entry size sizeof(struct ocrdma_av) = 92.
        let mut page_list = [0u64; AH_TABLE_PAGES];
        page_list[0] = 0x0000_0001_2345_6000;
        let cmd = CreateAhTable { pages: 8, page_size_code: 0, entry_len: 92, page_list };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 84);
        // opcode 4, request_length 68 (0x44); @16 ah_conf = 92 << 23 | 8 << 19 = 0x2e40_0000;
        // @20 lo, @24 hi of the first page; the other seven pairs zero.
        assert_eq!(hex::encode(&buf[..28]), "040a00000000000044000000000000000000402e0060452301000000");
        assert!(buf[28..].iter().all(|&b| b == 0));
        let (_, back) = decode_request::<CreateAhTable>(&buf).unwrap();
        assert_eq!(back, cmd);
        let (_, created) =
            decode_response::<CreateAhTable>(&hex::decode("040a000000000000040000000400000001000300").unwrap())
                .unwrap();
        assert_eq!(created.ahid, 1, "ocrdma keeps the low 16 bits");
        let buf = encode_request(&DeleteAhTable { ahid: 1 }).unwrap();
        assert_eq!(hex::encode(&buf), "050a000000000000040000000000000001000000");
    }
}
