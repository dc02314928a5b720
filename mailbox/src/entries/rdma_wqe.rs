//! The entries ocrdma and libocrdma post on an RDMA QP's send and receive rings: the 16-byte
//! WQE header shared by SQ WQEs and RQEs, the SGE (also the remote address of RDMA WRITE and
//! READ), the UD header of GSI/UD sends and the fast-register extension (ocrdma_sli.h
//! `ocrdma_hdr_wqe`, `ocrdma_sge`, `ocrdma_ewqe_ud_hdr`, `ocrdma_ewqe_fr`; filled by
//! ocrdma_verbs.c `ocrdma_post_send`, `ocrdma_build_*`, `ocrdma_post_recv`; spec/datapath.md
//! §2.3).
//!
//! Layout of a SQ WQE: header @0; for RC SEND, SGEs (or inline data) @16; for WRITE/READ the
//! remote [`Sge`] @16 and the local SGEs @32; for UD/GSI SEND the [`UdHeader`] @16 and SGEs @32;
//! for FR_MR the [`FastRegister`] extension @16. An RQE is a header and SGEs @16.

use crate::wire::{Reader, Wire, WireError, Writer};

/// Bytes of the WQE header, of an SGE and of the UD header.
pub const WQE_HEADER_LEN: usize = 16;
/// Bytes of one SGE.
pub const SGE_LEN: usize = 16;
/// The unit of the header's size field (`OCRDMA_WQE_STRIDE`).
#[doc(alias = "OCRDMA_WQE_STRIDE")]
pub const WQE_STRIDE: usize = 8;

/// SQ opcodes, bits 4:0 of `cw` (`enum OCRDMA_WQE_OPCODE`).
pub mod opcode {
    /// SEND, with or without immediate or invalidate (`OCRDMA_SEND`).
    pub const SEND: u8 = 0x00;
    /// RDMA WRITE, with or without immediate (`OCRDMA_WRITE`).
    pub const WRITE: u8 = 0x06;
    /// RDMA READ (`OCRDMA_READ`).
    pub const READ: u8 = 0x0C;
    /// Fast-register an MR (`OCRDMA_FR_MR`).
    pub const FR_MR: u8 = 0x11;
    /// Local invalidate (`OCRDMA_LKEY_INV`).
    pub const LKEY_INV: u8 = 0x15;
}

/// Flags, bits 15:5 of `cw` (`OCRDMA_FLAG_*`).
pub mod flag {
    /// Signaled: post a CQE.
    pub const SIG: u16 = 0x1;
    /// SEND with invalidate.
    pub const INV: u16 = 0x2;
    /// Local fence.
    pub const FENCE_L: u16 = 0x4;
    /// Remote fence.
    pub const FENCE_R: u16 = 0x8;
    /// Solicited event.
    pub const SOLICIT: u16 = 0x10;
    /// With immediate data.
    pub const IMM: u16 = 0x20;
    /// The AH of a UD send carries a VLAN tag (`OCRDMA_FLAG_AH_VLAN_PR`).
    pub const AH_VLAN: u16 = 0x40;
}

/// Access flags an FR_MR WQE carries in header dword 1 (`OCRDMA_LKEY_FLAG_*`, ocrdma_sli.h;
/// set by ocrdma_verbs.c `ocrdma_build_reg` from the work request's `IB_ACCESS_*`).
pub mod fr_access {
    /// The adapter may write through the key (`OCRDMA_LKEY_FLAG_LOCAL_WR`).
    #[doc(alias = "OCRDMA_LKEY_FLAG_LOCAL_WR")]
    pub const LOCAL_WR: u32 = 0x1;
    /// A peer may read (`OCRDMA_LKEY_FLAG_REMOTE_RD`).
    #[doc(alias = "OCRDMA_LKEY_FLAG_REMOTE_RD")]
    pub const REMOTE_RD: u32 = 0x2;
    /// A peer may write (`OCRDMA_LKEY_FLAG_REMOTE_WR`).
    #[doc(alias = "OCRDMA_LKEY_FLAG_REMOTE_WR")]
    pub const REMOTE_WR: u32 = 0x4;
}

/// Data type, bits 17:16 of `cw`: `INLINE` (0) data follows the header; `LKEY` (1) SGEs do
/// (`OCRDMA_TYPE_INLINE`, `OCRDMA_TYPE_LKEY`).
pub const TYPE_LKEY: u8 = 1;

/// The WQE header: `cw` (opcode 4:0, flags 15:5, type 17:16, size 25:18 in 8-byte units),
/// dword 1 (the RQE's tag, or an FR_MR's access flags: LOCAL_WR 1, REMOTE_RD 2, REMOTE_WR 4),
/// dword 2 (immediate data, or the key to invalidate or register), dword 3 `total_len`.
#[doc(alias = "ocrdma_hdr_wqe")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WqeHeader {
    /// The control word.
    pub cw: u32,
    /// `rsvd_tag` / `rsvd_lkey_flags`.
    pub dword1: u32,
    /// `immdt` / `lkey`.
    pub dword2: u32,
    /// Bytes the WQE moves.
    pub total_len: u32,
}

impl WqeHeader {
    /// A header with these fields; `size_bytes` is rounded down to 8-byte units.
    pub fn new(opcode: u8, flags: u16, wqe_type: u8, size_bytes: usize) -> Self {
        let cw = u32::from(opcode & 0x1F)
            | (u32::from(flags & 0x7FF) << 5)
            | (u32::from(wqe_type & 3) << 16)
            | ((((size_bytes / WQE_STRIDE) as u32) & 0xFF) << 18);
        Self { cw, ..Self::default() }
    }
    /// Bits 4:0.
    pub fn opcode(self) -> u8 {
        (self.cw & 0x1F) as u8
    }
    /// Bits 15:5.
    pub fn flags(self) -> u16 {
        ((self.cw >> 5) & 0x7FF) as u16
    }
    /// True when every flag of `mask` is set.
    pub fn has(self, mask: u16) -> bool {
        self.flags() & mask == mask
    }
    /// Bits 17:16.
    pub fn wqe_type(self) -> u8 {
        ((self.cw >> 16) & 3) as u8
    }
    /// The whole WQE's length, header included, from bits 25:18.
    pub fn size_bytes(self) -> usize {
        ((self.cw >> 18) & 0xFF) as usize * WQE_STRIDE
    }
}

impl Wire for WqeHeader {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("cw", self.cw)?;
        w.u32("rsvd_tag", self.dword1)?;
        w.u32("immdt", self.dword2)?;
        w.u32("total_len", self.total_len)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let cw = r.u32("cw")?;
        let dword1 = r.u32("rsvd_tag")?;
        let dword2 = r.u32("immdt")?;
        Ok(Self { cw, dword1, dword2, total_len: r.u32("total_len")? })
    }
}

/// A scatter/gather entry: `addr_hi` @0, `addr_lo` @4 (high half first), `lrkey` @8, `len`
/// @12. The remote part of an RDMA WRITE or READ has the same shape (raddr, rkey, length).
#[doc(alias = "ocrdma_sge")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sge {
    /// Address (virtual for an MR key, bus for lkey 0).
    pub addr: u64,
    /// The lkey or rkey.
    pub lrkey: u32,
    /// Bytes.
    pub len: u32,
}

impl Wire for Sge {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("addr_hi", (self.addr >> 32) as u32)?;
        w.u32("addr_lo", self.addr as u32)?;
        w.u32("lrkey", self.lrkey)?;
        w.u32("len", self.len)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let hi = r.u32("addr_hi")?;
        let lo = r.u32("addr_lo")?;
        let addr = (u64::from(hi) << 32) | u64::from(lo);
        Ok(Self { addr, lrkey: r.u32("lrkey")?, len: r.u32("len")? })
    }
}

/// The UD header of a GSI or UD send @16: `rsvd_dest_qpn`, `qkey`, `rsvd_ahid` (the index of
/// the AV in the AH table), `hdr_type` (ocrdma_verbs.c `ocrdma_build_ud_hdr`).
#[doc(alias = "ocrdma_ewqe_ud_hdr")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UdHeader {
    /// Destination QP (23:0).
    pub dest_qpn: u32,
    /// Q_Key.
    pub qkey: u32,
    /// AV index in the AH table.
    pub ahid: u32,
    /// Network header type of the AH (0: RoCE v1 GRH).
    pub hdr_type: u32,
}

impl Wire for UdHeader {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("rsvd_dest_qpn", self.dest_qpn)?;
        w.u32("qkey", self.qkey)?;
        w.u32("rsvd_ahid", self.ahid)?;
        w.u32("hdr_type", self.hdr_type)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let dest_qpn = r.u32("rsvd_dest_qpn")?;
        let qkey = r.u32("qkey")?;
        let ahid = r.u32("rsvd_ahid")?;
        Ok(Self { dest_qpn, qkey, ahid, hdr_type: r.u32("hdr_type")? })
    }
}

/// The FR_MR extension @16 (32 bytes): `va_hi`, `va_lo`, `fbo_hi`, `fbo_lo`, `size_sge` (page
/// size code: 4 KiB << code), `num_sges` (pages), two reserved dwords. The pages themselves are
/// in the PBL REGISTER_NSMR gave for the key.
#[doc(alias = "ocrdma_ewqe_fr")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FastRegister {
    /// The region's I/O virtual address.
    pub va: u64,
    /// First-byte offset.
    pub fbo: u64,
    /// Page size code.
    pub page_size_code: u32,
    /// Pages.
    pub num_pages: u32,
}

impl FastRegister {
    /// Bytes of the extension (`sizeof(struct ocrdma_ewqe_fr)`): six dwords and two reserved.
    pub const LEN: usize = 32;
    /// The largest page size code ocrdma writes: 4 KiB << 16 = 256 MiB
    /// (ocrdma_verbs.c `get_encoded_page_size`).
    pub const MAX_PAGE_SIZE_CODE: u32 = 16;

    /// Bytes per page.
    pub fn page_len(&self) -> u64 {
        4096u64 << self.page_size_code.min(32)
    }
}

impl Wire for FastRegister {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("va_hi", (self.va >> 32) as u32)?;
        w.u32("va_lo", self.va as u32)?;
        w.u32("fbo_hi", (self.fbo >> 32) as u32)?;
        w.u32("fbo_lo", self.fbo as u32)?;
        w.u32("size_sge", self.page_size_code)?;
        w.u32("num_sges", self.num_pages)?;
        w.zeros("rsvd", 8)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let mut pair =
            |name| -> Result<u64, WireError> { Ok((u64::from(r.u32(name)?) << 32) | u64::from(r.u32(name)?)) };
        let va = pair("va")?;
        let fbo = pair("fbo")?;
        let page_size_code = r.u32("size_sge")?;
        let num_pages = r.u32("num_sges")?;
        r.skip("rsvd", 8)?;
        Ok(Self { va, fbo, page_size_code, num_pages })
    }
}

/// A receive queue entry: the header (SIG, type LKEY, size = (SGEs + 1) × 16 bytes) and its
/// SGEs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rqe {
    /// The header.
    pub header: WqeHeader,
    /// The buffers.
    pub sges: Vec<Sge>,
}

impl Rqe {
    /// An RQE as ocrdma builds it (`ocrdma_build_rqe`): signaled, LKEY type, sized for `sges`.
    pub fn new(tag: u32, sges: Vec<Sge>) -> Self {
        let mut header = WqeHeader::new(0, flag::SIG, TYPE_LKEY, (sges.len() + 1) * SGE_LEN);
        header.dword1 = tag;
        Self { header, sges }
    }
}

impl Wire for Rqe {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        self.header.encode(w)?;
        self.sges.iter().try_for_each(|sge| sge.encode(w))
    }
    /// Reads as many SGEs as the header's size promises (the header counts itself).
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let header = WqeHeader::decode(r)?;
        let count = header.size_bytes().saturating_sub(WQE_HEADER_LEN) / SGE_LEN;
        let sges = (0..count).map(|_| Sge::decode(r)).collect::<Result<_, _>>()?;
        Ok(Self { header, sges })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode<T: Wire>(value: &T, len: usize) -> String {
        let mut buf = vec![0u8; len];
        value.encode(&mut Writer::new(&mut buf)).unwrap();
        hex::encode(buf)
    }

    #[test]
    fn a_signaled_rdma_write_wqe_golden_bytes() {
        // ocrdma_post_send for IB_WR_RDMA_WRITE, signaled, one local SGE: header, remote SGE,
        // local SGE = 48 bytes (size 6 in 8-byte units), type LKEY.
        let mut hdr = WqeHeader::new(opcode::WRITE, flag::SIG, TYPE_LKEY, 48);
        hdr.total_len = 4096;
        // cw = 6 << 18 | 1 << 16 | SIG (1) << 5 | 0x06 = 0x0019_0026.
        assert_eq!(hdr.cw, 0x0019_0026);
        assert_eq!(encode(&hdr, 16), concat!("26001900", "00000000", "00000000", "00100000"));
        assert_eq!((hdr.opcode(), hdr.flags(), hdr.wqe_type(), hdr.size_bytes()), (6, 1, 1, 48));
        let remote = Sge { addr: 0x0000_7f00_1234_5000, lrkey: 0x0000_0207, len: 4096 };
        // addr_hi first: 0x00007f00, then addr_lo 0x12345000.
        assert_eq!(encode(&remote, 16), concat!("007f0000", "00503412", "07020000", "00100000"));
        assert_eq!(Sge::decode(&mut Reader::new(&hex::decode(encode(&remote, 16)).unwrap())).unwrap(), remote);
    }

    #[test]
    fn ud_header_and_fast_register_golden_bytes() {
        let ud = UdHeader { dest_qpn: 1, qkey: 0x8001_0000, ahid: 3, hdr_type: 0 };
        assert_eq!(encode(&ud, 16), concat!("01000000", "00000180", "03000000", "00000000"));
        let fr = FastRegister { va: 0x1_0000_2000, fbo: 0, page_size_code: 0, num_pages: 256 };
        assert_eq!(
            encode(&fr, 32),
            concat!("01000000", "00200000", "00000000", "00000000", "00000000", "00010000", "0000000000000000")
        );
        let bytes = hex::decode(encode(&fr, 32)).unwrap();
        assert_eq!(FastRegister::decode(&mut Reader::new(&bytes)).unwrap(), fr);
        assert_eq!(UdHeader::decode(&mut Reader::new(&hex::decode(encode(&ud, 16)).unwrap())).unwrap(), ud);
    }

    #[test]
    fn an_rqe_reads_the_sges_its_size_promises() {
        let rqe = Rqe::new(7, vec![Sge { addr: 0x1000, lrkey: 0x105, len: 2048 }]);
        // cw: size 32 bytes = 4 units << 18 | LKEY << 16 | SIG << 5 = 0x0011_0020.
        let bytes = encode(&rqe, 32);
        assert_eq!(&bytes[..16], "2000110007000000", "cw, then the tag");
        assert_eq!(&bytes[32..], concat!("00000000", "00100000", "05010000", "00080000"));
        let raw = hex::decode(&bytes).unwrap();
        assert_eq!(Rqe::decode(&mut Reader::new(&raw)).unwrap(), rqe);
        assert!(Rqe::decode(&mut Reader::new(&raw[..24])).is_err(), "the SGE the header promises is missing");
    }
}
