//! The RDMA subsystem's (10) memory-region commands: REGISTER_NSMR (13) with its continuation
//! REGISTER_NSMR_CONT (15) for page lists longer than one command holds, and DEALLOC_LKEY (12)
//! (ocrdma_sli.h `ocrdma_reg_nsmr`, `ocrdma_reg_nsmr_cont`, `ocrdma_dealloc_lkey`; filled by
//! ocrdma_hw.c `ocrdma_mbx_reg_mr`, `ocrdma_mbx_reg_mr_cont`, `ocrdma_reg_mr`,
//! `ocrdma_mbx_dealloc_lkey`; spec/datapath.md §2.1). Also the 8-byte page-buffer entry the
//! adapter reads from each PBL page ([`Pbe`], `struct ocrdma_pbe`).
//!
//! All are embedded, version 0; `LEN` is ocrdma's structure less its 20-byte MQE header.

use super::queue_context::{decode_pages, encode_pages};
use crate::command::{Command, Empty};
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// PBL addresses one REGISTER_NSMR or REGISTER_NSMR_CONT carries (`MAX_OCRDMA_NSMR_PBL`).
#[doc(alias = "MAX_OCRDMA_NSMR_PBL")]
pub const NSMR_PBL_SLOTS: usize = 22;
/// The unit of `pbe_size` and `pbl_size` in REGISTER_NSMR (`OCRDMA_MIN_HPAGE_SIZE`, ocrdma.h).
#[doc(alias = "OCRDMA_MIN_HPAGE_SIZE")]
pub const HPAGE_UNIT: u64 = 4096;
/// Bit 31 of `flags_hpage_pbe_sz` and of REGISTER_NSMR_CONT's `last`: no continuation follows
/// (`OCRDMA_REG_NSMR_LAST_MASK`, `OCRDMA_REG_NSMR_CONT_LAST_MASK`).
const LAST: u32 = 1 << 31;

/// Access rights of a memory region: bits 24–30 of REGISTER_NSMR's `flags_hpage_pbe_sz`
/// (`OCRDMA_REG_NSMR_*_SHIFT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MrAccess {
    /// Bit 24: memory windows may be bound (`BIND_MEMWIN`).
    pub mw_bind: bool,
    /// Bit 25: zero-based virtual addresses (`ZB`).
    pub zero_based: bool,
    /// Bit 26: a peer may invalidate the key (`REMOTE_INV`).
    pub remote_inv: bool,
    /// Bit 27: a peer may write (`REMOTE_WR`).
    pub remote_write: bool,
    /// Bit 28: a peer may read (`REMOTE_RD`).
    pub remote_read: bool,
    /// Bit 29: the adapter may write locally (receives, READ targets) (`LOCAL_WR`).
    pub local_write: bool,
    /// Bit 30: a peer may do atomics (`REMOTE_ATOMIC`).
    pub remote_atomic: bool,
}

impl MrAccess {
    fn raw(self) -> u32 {
        [
            self.mw_bind,
            self.zero_based,
            self.remote_inv,
            self.remote_write,
            self.remote_read,
            self.local_write,
            self.remote_atomic,
        ]
        .iter()
        .enumerate()
        .fold(0, |acc, (i, &on)| acc | (u32::from(on) << (24 + i)))
    }

    fn from_raw(raw: u32) -> Self {
        let bit = |n: u32| raw & (1 << n) != 0;
        Self {
            mw_bind: bit(24),
            zero_based: bit(25),
            remote_inv: bit(26),
            remote_write: bit(27),
            remote_read: bit(28),
            local_write: bit(29),
            remote_atomic: bit(30),
        }
    }
}

/// REGISTER_NSMR: a non-shared memory region over pages listed in host-memory PBL pages; 228
/// bytes.
///
/// `fr_mr` u32 @16 (1: a fast-register MR whose pages come later in an FR_MR WQE);
/// `num_pbl_pdid` @20 (PD 15:0, PBL pages 31:16); `flags_hpage_pbe_sz` @24 (page size in 4 KiB
/// units 15:0, PBL page size in 4 KiB units 23:16, access 30:24, last 31); total length @28/@32,
/// first-byte offset @36/@40, virtual address @44/@48 (lo, hi each); `pbl[22]` @52 as (lo, hi)
/// pairs. ocrdma sends the first `min(num_pbl, 22)` PBL addresses here and the rest in
/// [`RegisterNsmrCont`]s (`ocrdma_reg_mr`).
#[doc(alias = "OCRDMA_CMD_REGISTER_NSMR")]
#[doc(alias = "ocrdma_reg_nsmr")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RegisterNsmr {
    /// `fr_mr` @16.
    pub fast_register: bool,
    /// The PD the region belongs to.
    pub pd_id: u16,
    /// PBL pages in all (`num_pbls`), this command's and the continuations'.
    pub num_pbl: u16,
    /// Bytes per page of the region (`pbe_size`): a multiple of 4 KiB.
    pub pbe_size: u64,
    /// Bytes per PBL page (`pbl_size`).
    pub pbl_size: u64,
    /// Access rights.
    pub access: MrAccess,
    /// No REGISTER_NSMR_CONT follows.
    pub last: bool,
    /// The region's length in bytes.
    pub total_len: u64,
    /// Offset of the region's first byte in its first page.
    pub first_byte_offset: u64,
    /// The region's virtual address.
    pub va: u64,
    /// The PBL pages' bus addresses carried here (at most [`NSMR_PBL_SLOTS`]).
    pub pbl: Vec<u64>,
}

impl Wire for RegisterNsmr {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("fr_mr", self.fast_register.into())?;
        w.u32("num_pbl_pdid", u32::from(self.pd_id) | (u32::from(self.num_pbl) << 16))?;
        let sizes =
            ((self.pbe_size / HPAGE_UNIT) as u32 & 0xFFFF) | (((self.pbl_size / HPAGE_UNIT) as u32 & 0xFF) << 16);
        w.u32("flags_hpage_pbe_sz", sizes | self.access.raw() | if self.last { LAST } else { 0 })?;
        for (name, value) in [("totlen", self.total_len), ("fbo", self.first_byte_offset)] {
            w.u32(name, value as u32)?;
            w.u32(name, (value >> 32) as u32)?;
        }
        w.u32("va_loaddr", self.va as u32)?;
        w.u32("va_hiaddr", (self.va >> 32) as u32)?;
        encode_pages(w, &self.pbl, NSMR_PBL_SLOTS)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let fast_register = r.u32("fr_mr")? & 1 != 0;
        let num_pbl_pdid = r.u32("num_pbl_pdid")?;
        let flags = r.u32("flags_hpage_pbe_sz")?;
        let mut pair =
            |name| -> Result<u64, WireError> { Ok(u64::from(r.u32(name)?) | (u64::from(r.u32(name)?) << 32)) };
        let total_len = pair("totlen")?;
        let first_byte_offset = pair("fbo")?;
        let va = pair("va")?;
        let num_pbl = (num_pbl_pdid >> 16) as u16;
        let pbl = decode_pages(r, usize::from(num_pbl).min(NSMR_PBL_SLOTS), NSMR_PBL_SLOTS)?;
        Ok(Self {
            fast_register,
            pd_id: num_pbl_pdid as u16,
            num_pbl,
            pbe_size: u64::from(flags & 0xFFFF) * HPAGE_UNIT,
            pbl_size: u64::from((flags >> 16) & 0xFF) * HPAGE_UNIT,
            access: MrAccess::from_raw(flags),
            last: flags & LAST != 0,
            total_len,
            first_byte_offset,
            va,
            pbl,
        })
    }
}

/// The REGISTER_NSMR response: the key @16 (ocrdma uses it as both lkey and rkey) and
/// `num_pbl` @20 bits 31:16.
#[doc(alias = "ocrdma_reg_nsmr_rsp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NsmrRegistered {
    /// The region's key: index in bits 31:8, a variant byte in 7:0 (the device's choice).
    pub lrkey: u32,
    /// PBL pages registered so far.
    pub num_pbl: u16,
}

impl Wire for NsmrRegistered {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("lrkey", self.lrkey)?;
        w.u32("num_pbl", u32::from(self.num_pbl) << 16)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let lrkey = r.u32("lrkey")?;
        Ok(Self { lrkey, num_pbl: (r.u32("num_pbl")? >> 16) as u16 })
    }
}

impl Command for RegisterNsmr {
    const NAME: &'static str = "RDMA_REGISTER_NSMR";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 13;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 228;
    type Response = NsmrRegistered;
}

/// REGISTER_NSMR_CONT: more PBL addresses for a key REGISTER_NSMR answered; 204 bytes.
///
/// `lrkey` @16; `num_pbl_offset` @20 (index of this command's first PBL page 15:0, how many it
/// carries 31:16); `last` @24 bit 31; `pbl[22]` @28 as (lo, hi) pairs.
#[doc(alias = "OCRDMA_CMD_REGISTER_NSMR_CONT")]
#[doc(alias = "ocrdma_reg_nsmr_cont")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RegisterNsmrCont {
    /// The key being completed.
    pub lrkey: u32,
    /// Index, within the region's PBL list, of `pbl[0]`.
    pub pbl_offset: u16,
    /// No further continuation follows.
    pub last: bool,
    /// The PBL pages' bus addresses carried here.
    pub pbl: Vec<u64>,
}

impl Wire for RegisterNsmrCont {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("lrkey", self.lrkey)?;
        w.u32("num_pbl_offset", u32::from(self.pbl_offset) | ((self.pbl.len() as u32 & 0xFFFF) << 16))?;
        w.u32("last", if self.last { LAST } else { 0 })?;
        encode_pages(w, &self.pbl, NSMR_PBL_SLOTS)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let lrkey = r.u32("lrkey")?;
        let num_pbl_offset = r.u32("num_pbl_offset")?;
        let last = r.u32("last")? & LAST != 0;
        let pbl = decode_pages(r, (num_pbl_offset >> 16) as usize, NSMR_PBL_SLOTS)?;
        Ok(Self { lrkey, pbl_offset: num_pbl_offset as u16, last, pbl })
    }
}

impl Command for RegisterNsmrCont {
    const NAME: &'static str = "RDMA_REGISTER_NSMR_CONT";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 15;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 204;
    type Response = NsmrRegistered;
}

/// DEALLOC_LKEY: invalidates and frees a key; `lkey` @16, `rsvd_frmr` @20 (1 for a
/// fast-register MR); 24 bytes.
#[doc(alias = "OCRDMA_CMD_DEALLOC_LKEY")]
#[doc(alias = "ocrdma_dealloc_lkey")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeallocLkey {
    /// The key.
    pub lkey: u32,
    /// The key is a fast-register MR's.
    pub fast_register: bool,
}

impl Wire for DeallocLkey {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("lkey", self.lkey)?;
        w.u32("rsvd_frmr", self.fast_register.into())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let lkey = r.u32("lkey")?;
        Ok(Self { lkey, fast_register: r.u32("rsvd_frmr")? & 1 != 0 })
    }
}

impl Command for DeallocLkey {
    const NAME: &'static str = "RDMA_DEALLOC_LKEY";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 12;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 24;
    type Response = Empty;
}

/// Bytes of one page-buffer entry in a PBL page.
pub const PBE_LEN: usize = 8;

/// A page-buffer entry as ocrdma writes it into a PBL page: `pa_hi` first, then `pa_lo`
/// (`struct ocrdma_pbe`, ocrdma_sli.h; spec/datapath.md §2.1), unlike the (lo, hi) pairs of the
/// command's own page lists.
#[doc(alias = "ocrdma_pbe")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pbe(pub u64);

impl Wire for Pbe {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("pa_hi", (self.0 >> 32) as u32)?;
        w.u32("pa_lo", self.0 as u32)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let hi = r.u32("pa_hi")?;
        Ok(Self((u64::from(hi) << 32) | u64::from(r.u32("pa_lo")?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn register_nsmr_golden_bytes_as_ocrdma_fills_it() {
        // A 100-page user MR of 4 KiB pages behind one 4 KiB PBL page, PD 3, local write and
        // remote read/write; its one PBL address fits, so ocrdma_reg_mr sets last.
        let cmd = RegisterNsmr {
            fast_register: false,
            pd_id: 3,
            num_pbl: 1,
            pbe_size: 4096,
            pbl_size: 4096,
            access: MrAccess { remote_write: true, remote_read: true, local_write: true, ..MrAccess::default() },
            last: true,
            total_len: 0x6_4000,
            first_byte_offset: 0x10,
            va: 0x0000_7f12_3456_7010,
            pbl: vec![0x0000_0002_abcd_e000],
        };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 228);
        // Header: opcode 13 (0x0d), subsystem 10, request_length 212 (0xd4).
        // @16 fr_mr 0; @20 num_pbl_pdid = 1 << 16 | 3; @24 flags = last(31) | local_wr(29) |
        // remote_rd(28) | remote_wr(27) | hpage 1 << 16 | pbe 1 = 0xb801_0001;
        // @28 totlen lo 0x64000, @32 hi 0; @36 fbo 0x10, @40 0; @44 va lo 0x34567010, @48 hi
        // 0x7f12; @52 pbl[0] lo 0xabcde000, @56 hi 2; the other 21 pairs zero.
        let expected = "0d0a000000000000d4000000000000000000000003000100010001b8\
                        0040060000000000100000000000000010705634127f0000\
                        00e0cdab02000000";
        assert_eq!(hex::encode(&buf[..60]), expected);
        assert!(buf[60..].iter().all(|&b| b == 0));
        let (_, back) = decode_request::<RegisterNsmr>(&buf).unwrap();
        assert_eq!(back, cmd);
    }

    #[test]
    fn register_nsmr_reads_only_the_pbl_entries_it_carries() {
        let mut cmd = RegisterNsmr { num_pbl: 30, pbl: (1..=22).map(|i| i << 12).collect(), ..Default::default() };
        let buf = encode_request(&cmd).unwrap();
        let (_, back) = decode_request::<RegisterNsmr>(&buf).unwrap();
        assert_eq!(back.pbl.len(), 22, "30 PBL pages: 22 here, 8 in a continuation");
        assert_eq!(back, cmd);
        cmd.pbl.push(0x1000);
        assert!(encode_request(&cmd).is_err(), "23 addresses do not fit");
    }

    #[test]
    fn register_nsmr_cont_golden_bytes() {
        let cmd = RegisterNsmrCont { lrkey: 0x0000_0405, pbl_offset: 22, last: true, pbl: vec![0x1_2345_6000; 8] };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 204);
        // opcode 15, request_length 188 (0xbc); @16 lrkey; @20 8 << 16 | 22; @24 last bit 31;
        // @28 eight (lo, hi) pairs.
        assert_eq!(hex::encode(&buf[..36]), "0f0a000000000000bc000000000000000504000016000800000000800060452301000000");
        let (_, back) = decode_request::<RegisterNsmrCont>(&buf).unwrap();
        assert_eq!(back, cmd);
    }

    #[test]
    fn nsmr_responses_and_dealloc_lkey_golden_bytes() {
        // Response: response_length 8 @8 and @12; @16 lrkey; @20 num_pbl 1 in bits 31:16.
        let buf = hex::decode(concat!("0d0a000000000000080000000800000005040000", "00000100")).unwrap();
        let (_, rsp) = decode_response::<RegisterNsmr>(&buf).unwrap();
        assert_eq!(rsp, NsmrRegistered { lrkey: 0x405, num_pbl: 1 });
        let buf = encode_request(&DeallocLkey { lkey: 0x405, fast_register: true }).unwrap();
        // opcode 12, request_length 8; @16 lkey; @20 rsvd_frmr 1.
        assert_eq!(hex::encode(&buf), concat!("0c0a000000000000080000000000000005040000", "01000000"));
    }

    #[test]
    fn pbe_is_hi_dword_first() {
        let mut buf = [0u8; 8];
        Pbe(0x0000_0001_2345_6000).encode(&mut Writer::new(&mut buf)).unwrap();
        assert_eq!(hex::encode(buf), "0100000000604523");
        assert_eq!(Pbe::decode(&mut Reader::new(&buf)).unwrap(), Pbe(0x0000_0001_2345_6000));
    }

    #[test]
    fn short_input_is_an_error_naming_the_field() {
        let buf = encode_request(&RegisterNsmr { num_pbl: 5, pbl: vec![0x1000; 5], ..Default::default() }).unwrap();
        let err = decode_request::<RegisterNsmr>(&buf[..60]).unwrap_err();
        assert_eq!(err.field, "pages", "five PBL addresses promised, one present");
        assert!(decode_request::<DeallocLkey>(&buf[..18]).is_err());
        assert!(decode_request::<RegisterNsmrCont>(&buf[..22]).is_err());
    }
}
