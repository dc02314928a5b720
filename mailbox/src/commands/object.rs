//! WRITE_OBJECT (COMMON 172) and READ_OBJECT (COMMON 171): Lancer-style object transfer, e.g.
//! the "/prg" firmware download (spec/protocol.md §5.15, spec/ufi-firmware.md §4).
//!
//! **The data buffer.** be2net puts each chunk in the same DMA allocation as the command, right
//! after the 144-byte request (address = command DMA + 144). ocetool's driver sends embedded
//! commands inside the WRB, which has no room for data, so the caller allocates a separate DMA
//! buffer (`PciFunction::alloc_dma`), copies the chunk into it (WRITE) or reads the result out of
//! it (READ), and fills `buffer_address` with its IOVA and `buffer_len` with its length. The
//! emulator reads and writes that buffer through its IOVA table.
//!
//! Whether Skyhawk firmware implements these commands is not public (spec §10); be2net uses them
//! only on Lancer.

use std::time::Duration;

use super::support::code_enum;
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// Width of the `object_name` field.
const NAME_LEN: usize = 104;
/// Largest `write_length` (bits 23:0 of the dword @16).
const MAX_WRITE_LEN: u32 = 0x00FF_FFFF;
/// EOF flag: bit 31 of WRITE_OBJECT's dword @16 and of READ_OBJECT's `eof` dword.
#[doc(alias = "LANCER_READ_FILE_EOF_MASK")]
pub const OBJECT_EOF: u32 = 1 << 31;
/// The firmware download object (be2net `LANCER_FW_DOWNLOAD_LOCATION`).
#[doc(alias = "LANCER_FW_DOWNLOAD_LOCATION")]
pub const FW_DOWNLOAD_LOCATION: &str = "/prg";
/// Chunk size be2net uses for both directions (`LANCER_FW_DOWNLOAD_CHUNK`, 32 KiB).
#[doc(alias = "LANCER_FW_DOWNLOAD_CHUNK")]
pub const OBJECT_CHUNK: usize = 32 * 1024;

/// The buffer descriptor shared by both requests: count @128, length @132, address @136/@140.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ObjectBuffer {
    /// `descriptor_count` u32 @128 (1).
    pub descriptor_count: u32,
    /// `buf_len` u32 @132.
    pub len: u32,
    /// `addr_low` @136, `addr_high` @140: the IOVA of the data buffer.
    pub address: u64,
}

impl ObjectBuffer {
    /// One buffer of `len` bytes at `address`.
    pub fn new(address: u64, len: u32) -> Self {
        Self { descriptor_count: 1, len, address }
    }
}

fn encode_name_and_buffer(w: &mut Writer<'_>, name: &str, buf: &ObjectBuffer) -> Result<(), WireError> {
    if name.len() >= NAME_LEN {
        return Err(WireError { field: "object_name", offset: 24, needed: name.len() + 1, available: NAME_LEN });
    }
    w.string("object_name", name, NAME_LEN)?;
    w.u32("descriptor_count", buf.descriptor_count)?;
    w.u32("buf_len", buf.len)?;
    w.u32("addr_low", buf.address as u32)?;
    w.u32("addr_high", (buf.address >> 32) as u32)
}

fn decode_name_and_buffer(r: &mut Reader<'_>) -> Result<(String, ObjectBuffer), WireError> {
    let name = r.string("object_name", NAME_LEN)?;
    let descriptor_count = r.u32("descriptor_count")?;
    let len = r.u32("buf_len")?;
    let low = r.u32("addr_low")?;
    let high = r.u32("addr_high")?;
    Ok((name, ObjectBuffer { descriptor_count, len, address: u64::from(high) << 32 | u64::from(low) }))
}

/// WRITE_OBJECT: embedded 144-byte request plus a data buffer (spec §5.15, ufi-firmware.md
/// §4.1). The object name must be shorter than 104 bytes, and `write_length` below 2^24.
#[doc(alias = "lancer_cmd_req_write_object")]
#[doc(alias = "OPCODE_COMMON_WRITE_OBJECT")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteObject {
    /// `write_length`, bits 23:0 of the dword @16: bytes in this chunk.
    pub write_length: u32,
    /// `eof`, bit 31 of the dword @16: the commit write.
    pub eof: bool,
    /// `write_offset` u32 @20: running offset in the object.
    pub write_offset: u32,
    /// `object_name` @24, e.g. [`FW_DOWNLOAD_LOCATION`].
    pub object_name: String,
    /// The data buffer (see the module docs).
    pub buffer: ObjectBuffer,
}

impl WriteObject {
    /// One chunk of `len` bytes at `offset`, the data in the DMA buffer at `iova`.
    pub fn chunk(name: &str, offset: u32, len: u32, iova: u64) -> Self {
        Self {
            write_length: len,
            eof: false,
            write_offset: offset,
            object_name: name.into(),
            buffer: ObjectBuffer::new(iova, len),
        }
    }

    /// The commit: a zero-length write with EOF at the object's total length (ufi §4.3 step 3).
    pub fn commit(name: &str, total_len: u32) -> Self {
        Self {
            write_length: 0,
            eof: true,
            write_offset: total_len,
            object_name: name.into(),
            buffer: ObjectBuffer::new(0, 0),
        }
    }
}

impl Wire for WriteObject {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.write_length > MAX_WRITE_LEN {
            return Err(WireError {
                field: "write_length",
                offset: 16,
                needed: self.write_length as usize,
                available: MAX_WRITE_LEN as usize,
            });
        }
        w.u32("write_length", self.write_length | if self.eof { OBJECT_EOF } else { 0 })?;
        w.u32("write_offset", self.write_offset)?;
        encode_name_and_buffer(w, &self.object_name, &self.buffer)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let word = r.u32("write_length")?;
        let write_offset = r.u32("write_offset")?;
        let (object_name, buffer) = decode_name_and_buffer(r)?;
        Ok(Self { write_length: word & MAX_WRITE_LEN, eof: word & OBJECT_EOF != 0, write_offset, object_name, buffer })
    }
}

impl Command for WriteObject {
    const NAME: &'static str = "WRITE_OBJECT";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 172;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 144;
    /// be2net waits 60 s for each chunk (ufi-firmware.md §3.5).
    const TIMEOUT: Duration = Duration::from_secs(60);
    type Response = WriteObjectResponse;
}

code_enum! {
    /// `change_status` of the final WRITE_OBJECT: what activating the new firmware needs
    /// (spec §5.15; 0x01, 0x04, 0x05 are lpfc's names).
    ChangeStatus(u8) {
        /// Nothing more to do.
        #[doc(alias = "LANCER_NO_RESET_NEEDED")]
        NoResetNeeded = 0x00, "no reset needed";
        /// A physical device reset (server reboot).
        #[doc(alias = "LPFC_CHANGE_STATUS_PHYS_DEV_RESET")]
        PhysDevReset = 0x01, "reboot needed";
        /// A firmware reset (be2net does it through PHYSDEV_CONTROL).
        #[doc(alias = "LANCER_FW_RESET_NEEDED")]
        FwReset = 0x02, "firmware reset needed";
        /// Port migration (reboot).
        #[doc(alias = "LPFC_CHANGE_STATUS_PORT_MIGRATION")]
        PortMigration = 0x04, "port migration needed";
        /// PCI reset (reboot).
        #[doc(alias = "LPFC_CHANGE_STATUS_PCI_RESET")]
        PciReset = 0x05, "PCI reset needed";
    }
}

/// The WRITE_OBJECT response (overlays the request; 8 body bytes).
#[doc(alias = "lancer_cmd_resp_write_object")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteObjectResponse {
    /// `actual_write_len` u32 @16: bytes the firmware took (the next chunk starts there).
    pub actual_write_len: u32,
    /// `change_status` u8 @20.
    pub change_status: ChangeStatus,
    /// Bit 8 of the dword @20 (lpfc's "change status field valid"); be2net ignores it.
    pub change_status_valid: bool,
}

impl Wire for WriteObjectResponse {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("actual_write_len", self.actual_write_len)?;
        let csf = if self.change_status_valid { 1 << 8 } else { 0 };
        w.u32("change_status", u32::from(self.change_status.raw()) | csf)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let actual_write_len = r.u32("actual_write_len")?;
        let word = r.u32("change_status")?;
        Ok(Self {
            actual_write_len,
            change_status: ChangeStatus::from_raw(word as u8),
            change_status_valid: word & (1 << 8) != 0,
        })
    }
}

/// READ_OBJECT: embedded 144-byte request plus a data buffer the firmware fills (spec §5.15).
#[doc(alias = "lancer_cmd_req_read_object")]
#[doc(alias = "OPCODE_COMMON_READ_OBJECT")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReadObject {
    /// `desired_read_len` u32 @16.
    pub desired_read_len: u32,
    /// `read_offset` u32 @20.
    pub read_offset: u32,
    /// `object_name` @24, e.g. "/dbg/dump.bin".
    pub object_name: String,
    /// The data buffer (see the module docs).
    pub buffer: ObjectBuffer,
}

impl Wire for ReadObject {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("desired_read_len", self.desired_read_len)?;
        w.u32("read_offset", self.read_offset)?;
        encode_name_and_buffer(w, &self.object_name, &self.buffer)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let desired_read_len = r.u32("desired_read_len")?;
        let read_offset = r.u32("read_offset")?;
        let (object_name, buffer) = decode_name_and_buffer(r)?;
        Ok(Self { desired_read_len, read_offset, object_name, buffer })
    }
}

impl Command for ReadObject {
    const NAME: &'static str = "READ_OBJECT";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 171;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 144;
    /// No public source gives a read timeout; ocetool allows what a write chunk gets (60 s).
    const TIMEOUT: Duration = Duration::from_secs(60);
    type Response = ReadObjectResponse;
}

/// The READ_OBJECT response: `actual_read_len` u32 @16, `eof` u32 @20.
#[doc(alias = "lancer_cmd_resp_read_object")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadObjectResponse {
    /// Bytes placed in the data buffer.
    pub actual_read_len: u32,
    /// The raw `eof` dword; [`OBJECT_EOF`] marks the end of the object.
    pub eof: u32,
}

impl ReadObjectResponse {
    /// True at the end of the object.
    pub fn is_eof(&self) -> bool {
        self.eof & OBJECT_EOF != 0
    }
}

impl Wire for ReadObjectResponse {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("actual_read_len", self.actual_read_len)?;
        w.u32("eof", self.eof)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let actual_read_len = r.u32("actual_read_len")?;
        Ok(Self { actual_read_len, eof: r.u32("eof")? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn write_object_golden_bytes() {
        let cmd = WriteObject::chunk(FW_DOWNLOAD_LOCATION, 0x8000, 0x8000, 0x0000_0001_2345_6000);
        let buf = encode_request(&cmd).unwrap();
        let expected = [
            concat!("ac010000", "00000000", "80000000", "00000000"), // opcode 172, request_length 128
            "00800000",                                              // @16 write_length 0x8000, eof clear
            "00800000",                                              // @20 write_offset 0x8000
            "2f707267",                                              // @24 object_name "/prg"
            &"00".repeat(100),                                       // NUL padding to 104 bytes
            concat!("01000000", "00800000"),                         // @128 descriptor_count 1, @132 buf_len
            concat!("00604523", "01000000"),                         // @136 addr_low, @140 addr_high
        ]
        .concat();
        assert_eq!(hex::encode(&buf), expected);
        assert_eq!(decode_request::<WriteObject>(&buf).unwrap().1, cmd);

        let commit = encode_request(&WriteObject::commit(FW_DOWNLOAD_LOCATION, 0x1_0000)).unwrap();
        // @16: write_length 0 with EOF (bit 31); @20: write_offset = total length.
        assert_eq!(hex::encode(&commit[16..24]), "0000008000000100");
        assert!(decode_request::<WriteObject>(&commit).unwrap().1.eof);
    }

    #[test]
    fn write_object_limits_are_typed_errors() {
        let long = WriteObject::chunk(&"n".repeat(104), 0, 4, 0);
        let err = encode_request(&long).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("object_name", 24, 105, 104));
        let huge = WriteObject::chunk("/prg", 0, 0x0100_0000, 0);
        let err = encode_request(&huge).unwrap_err();
        assert_eq!((err.field, err.offset), ("write_length", 16));
    }

    #[test]
    fn write_object_response_offsets() {
        let rsp = hex::decode(concat!(
            "ac010000", "00000000", "08000000", "08000000", // response_length 8
            "00800000", // @16 actual_write_len 0x8000
            "02010000", // @20 change_status 2, csf (bit 8) set
        ))
        .unwrap();
        let (_, r) = decode_response::<WriteObject>(&rsp).unwrap();
        assert_eq!((r.actual_write_len, r.change_status, r.change_status_valid), (0x8000, ChangeStatus::FwReset, true));
        let mut out = vec![0u8; 24];
        r.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(out[16..], rsp[16..]);
        assert_eq!(ChangeStatus::from_raw(3), ChangeStatus::Unknown(3));
        let mut short = rsp;
        short[8] = 6;
        let err = decode_response::<WriteObject>(&short).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("change_status", 20, 4, 2));
    }

    #[test]
    fn read_object_golden_bytes() {
        let cmd = ReadObject {
            desired_read_len: 0x8000,
            read_offset: 0x10,
            object_name: "/dbg/dump.bin".into(),
            buffer: ObjectBuffer::new(0xdead_b000, 0x8000),
        };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(
            hex::encode(&buf[..24]),
            concat!("ab010000", "00000000", "80000000", "00000000", "00800000", "10000000")
        );
        assert_eq!(&buf[24..37], b"/dbg/dump.bin");
        assert_eq!(hex::encode(&buf[128..]), concat!("01000000", "00800000", "00b0adde", "00000000"));
        assert_eq!(decode_request::<ReadObject>(&buf).unwrap().1, cmd);

        let rsp = hex::decode(concat!("ab010000", "00000000", "08000000", "08000000", "00100000", "00000080")).unwrap();
        let (_, r) = decode_response::<ReadObject>(&rsp).unwrap();
        assert_eq!(r.actual_read_len, 0x1000);
        assert!(r.is_eof());
        let mut out = vec![0u8; 24];
        r.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(out[16..], rsp[16..]);
    }
}
