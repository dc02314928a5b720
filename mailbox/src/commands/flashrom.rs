//! READ_FLASHROM (COMMON 6) and WRITE_FLASHROM (COMMON 7): the section CRC query and the 32 KiB
//! chunk writes of a UFI flash (spec/protocol.md §5.14, spec/ufi-firmware.md §2.5, §3).

use std::borrow::Cow;
use std::time::Duration;

use super::support::{code_enum, fill_to, jump};
use crate::command::{Command, Empty};
use crate::header::{HEADER_LEN, Subsystem};
use crate::wire::{Reader, Wire, WireError, Writer};

code_enum! {
    /// `op_code` of the flash-ROM parameter block (ufi-firmware.md §3.2).
    FlashromOp(u32) {
        /// Last chunk of a section: program it (commit).
        #[doc(alias = "FLASHROM_OPER_FLASH")]
        Flash = 1, "flash";
        /// Intermediate chunk: stage it.
        #[doc(alias = "FLASHROM_OPER_SAVE")]
        Save = 2, "save";
        /// Read a region's 4-byte CRC (READ_FLASHROM).
        #[doc(alias = "FLASHROM_OPER_REPORT")]
        Report = 4, "report";
        /// Last chunk of a BE3 PHY image (op type 99).
        #[doc(alias = "FLASHROM_OPER_PHY_FLASH")]
        PhyFlash = 9, "phy_flash";
        /// Intermediate chunk of a BE3 PHY image.
        #[doc(alias = "FLASHROM_OPER_PHY_SAVE")]
        PhySave = 10, "phy_save";
    }
}

code_enum! {
    /// `op_type`: which flash component a command addresses (ufi-firmware.md §2.5).
    FlashOpType(u32) {
        /// iSCSI / NIC active firmware (image type 0xA0).
        #[doc(alias = "OPTYPE_ISCSI_ACTIVE")]
        IscsiActive = 0, "firmware";
        /// Boot code (0xE2).
        #[doc(alias = "OPTYPE_REDBOOT")]
        Redboot = 1, "redboot";
        /// iSCSI BIOS (0x22).
        #[doc(alias = "OPTYPE_BIOS")]
        Bios = 2, "bios";
        /// PXE option ROM (0x20).
        #[doc(alias = "OPTYPE_PXE_BIOS")]
        PxeBios = 3, "pxe_bios";
        /// Offset mode: `offset` is the absolute flash offset (Skyhawk).
        #[doc(alias = "OPTYPE_OFFSET_SPECIFIED")]
        OffsetSpecified = 7, "offset_specified";
        /// FCoE BIOS (0x21).
        #[doc(alias = "OPTYPE_FCOE_BIOS")]
        FcoeBios = 8, "fcoe_bios";
        /// Backup firmware (0xB0).
        #[doc(alias = "OPTYPE_ISCSI_BACKUP")]
        IscsiBackup = 9, "firmware_backup";
        /// FCoE firmware (0xA2, BEx).
        #[doc(alias = "OPTYPE_FCOE_FW_ACTIVE")]
        FcoeFwActive = 10, "fcoe_firmware";
        /// FCoE backup firmware (0xB2, BEx).
        #[doc(alias = "OPTYPE_FCOE_FW_BACKUP")]
        FcoeFwBackup = 11, "fcoe_firmware_backup";
        /// NC-SI firmware (0x10).
        #[doc(alias = "OPTYPE_NCSI_FW")]
        NcsiFw = 13, "ncsi";
        /// Boot-code directory (0xD0).
        #[doc(alias = "OPTYPE_REDBOOT_DIR")]
        RedbootDir = 18, "redboot_dir";
        /// Boot-code configuration (0xD1).
        #[doc(alias = "OPTYPE_REDBOOT_CONFIG")]
        RedbootConfig = 19, "redboot_config";
        /// Skyhawk PHY firmware (0xC0).
        #[doc(alias = "OPTYPE_SH_PHY_FW")]
        ShPhyFw = 21, "sh_phy_firmware";
        /// flashISM jump vector (0x30).
        #[doc(alias = "OPTYPE_FLASHISM_JUMPVECTOR")]
        FlashIsmJumpVector = 22, "flashism_jump_vector";
        /// UFI directory (0xD2).
        #[doc(alias = "OPTYPE_UFI_DIR")]
        UfiDir = 23, "ufi_dir";
        /// BE3 PHY firmware (0xC0 on BE3), written with the PHY op codes.
        #[doc(alias = "OPTYPE_PHY_FW")]
        PhyFw = 99, "phy_firmware";
    }
}

/// READ_FLASHROM: asks for the 4 CRC bytes at the end of a flash region; embedded, 40 bytes
/// (ufi-firmware.md §3.4). Params @16: `op_code`, `op_type`, `data_buf_size`, `offset`.
#[doc(alias = "be_cmd_read_flash_crc")]
#[doc(alias = "OPCODE_COMMON_READ_FLASHROM")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadFlashrom {
    /// `op_code` u32 @16 ([`FlashromOp::Report`]).
    pub op_code: FlashromOp,
    /// `op_type` u32 @20: the component, or [`FlashOpType::OffsetSpecified`].
    pub op_type: FlashOpType,
    /// `data_buf_size` u32 @24 (4).
    pub data_buf_size: u32,
    /// `offset` u32 @28: region size − 4 (op-type mode) or image offset + size − 4 (offset mode).
    pub offset: u32,
}

impl ReadFlashrom {
    /// The CRC query be2net sends: REPORT, 4 bytes at `offset`.
    pub fn crc(op_type: FlashOpType, offset: u32) -> Self {
        Self { op_code: FlashromOp::Report, op_type, data_buf_size: 4, offset }
    }
}

impl Wire for ReadFlashrom {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        encode_params(w, self.op_code, self.op_type, self.data_buf_size, self.offset)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let (op_code, op_type, data_buf_size, offset) = decode_params(r)?;
        Ok(Self { op_code, op_type, data_buf_size, offset })
    }
}

impl Command for ReadFlashrom {
    const NAME: &'static str = "READ_FLASHROM";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 6;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 40;
    /// be2net polls the synchronous MCC path for about 12 s (ufi-firmware.md §3.5).
    const TIMEOUT: Duration = Duration::from_secs(12);
    type Response = FlashCrc;
}

/// The READ_FLASHROM response: the 4 CRC bytes @32, compared byte for byte with the last 4
/// bytes of the section in the image (ufi-firmware.md §3.4). The decoder needs a
/// `response_length` of at least 20; the encoder writes only @32..40 and leaves the echoed
/// parameters @16..32 as they are in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlashCrc(pub [u8; 4]);

impl FlashCrc {
    /// Offset of the CRC bytes in the command buffer.
    pub const OFFSET: usize = 32;
}

impl Wire for FlashCrc {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.seek("crc", Self::OFFSET)?;
        w.bytes("crc", &self.0)?;
        w.zeros("rsvd", 4)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        jump(r, Self::OFFSET);
        Ok(Self(r.array("crc")?))
    }
}

/// WRITE_FLASHROM: one chunk of up to 32 KiB; non-embedded, 32804-byte buffer (params, data
/// area @32, 4 reserved bytes @0x8020), 40 s timeout (ufi-firmware.md §3.2, §3.5).
///
/// Flashing 16 MiB means 512 of these, so the chunk is a [`Cow`]: the host borrows it straight
/// from the image (no copy until the command buffer is built), the emulator's decoder owns it.
/// `data_buf_size` on the wire is the chunk's length.
#[doc(alias = "be_cmd_write_flashrom")]
#[doc(alias = "OPCODE_COMMON_WRITE_FLASHROM")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteFlashrom<'a> {
    /// `op_code` u32 @16: SAVE for all chunks but the last, FLASH for the last.
    pub op_code: FlashromOp,
    /// `op_type` u32 @20.
    pub op_type: FlashOpType,
    /// `offset` u32 @28: in offset mode, the absolute flash offset of this chunk; ignored by the
    /// firmware otherwise.
    pub offset: u32,
    /// The chunk, at most [`WriteFlashrom::CHUNK`] bytes, written @32.
    pub data: Cow<'a, [u8]>,
}

impl WriteFlashrom<'_> {
    /// Size of the data area and of every full chunk (be2net `32 * 1024`).
    pub const CHUNK: usize = 32 * 1024;
    /// Offset of the data area.
    pub const DATA_OFFSET: usize = 32;
}

impl Wire for WriteFlashrom<'_> {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.data.len() > Self::CHUNK {
            return Err(WireError {
                field: "data_buf",
                offset: Self::DATA_OFFSET,
                needed: self.data.len(),
                available: Self::CHUNK,
            });
        }
        let start = w.position();
        encode_params(w, self.op_code, self.op_type, self.data.len() as u32, self.offset)?;
        w.bytes("data_buf", &self.data)?;
        fill_to(w, "data_buf", start + 16 + Self::CHUNK)?;
        w.zeros("rsvd", 4)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let (op_code, op_type, size, offset) = decode_params(r)?;
        let size = size as usize;
        if size > Self::CHUNK {
            return Err(WireError { field: "data_buf_size", offset: 24, needed: size, available: Self::CHUNK });
        }
        let data = Cow::Owned(r.bytes("data_buf", size)?.to_vec());
        Ok(Self { op_code, op_type, offset, data })
    }
}

impl<'a> Command for WriteFlashrom<'a> {
    const NAME: &'static str = "WRITE_FLASHROM";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 7;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = HEADER_LEN + 16 + Self::CHUNK + 4;
    const TIMEOUT: Duration = Duration::from_secs(40);
    type Response = Empty;
}

fn encode_params(w: &mut Writer<'_>, op: FlashromOp, ty: FlashOpType, size: u32, offset: u32) -> Result<(), WireError> {
    w.u32("op_code", op.raw())?;
    w.u32("op_type", ty.raw())?;
    w.u32("data_buf_size", size)?;
    w.u32("offset", offset)
}

fn decode_params(r: &mut Reader<'_>) -> Result<(FlashromOp, FlashOpType, u32, u32), WireError> {
    let op = FlashromOp::from_raw(r.u32("op_code")?);
    let ty = FlashOpType::from_raw(r.u32("op_type")?);
    Ok((op, ty, r.u32("data_buf_size")?, r.u32("offset")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn read_flashrom_golden_bytes() {
        let cmd = ReadFlashrom::crc(FlashOpType::OffsetSpecified, 0x0020_fffc);
        let buf = encode_request(&cmd).unwrap();
        let expected = concat!(
            "06010000", "00000000", "18000000", "00000000", // opcode 6, request_length 24, version 0
            "04000000", // @16 op_code 4 (REPORT)
            "07000000", // @20 op_type 7 (offset specified)
            "04000000", // @24 data_buf_size 4
            "fcff2000", // @28 offset
            "00000000", // @32 crc (filled by the firmware)
            "00000000", // @36 rsvd
        );
        assert_eq!(hex::encode(&buf), expected);
        assert_eq!(decode_request::<ReadFlashrom>(&buf).unwrap().1, cmd);
    }

    #[test]
    fn read_flashrom_response_offsets() {
        let rsp = hex::decode(concat!(
            "06010000", "00000000", "18000000", "18000000", // response_length 24
            "04000000", "07000000", "04000000", "fcff2000", // echoed params
            "de", "ad", "be", "ef", "00000000", // @32 crc bytes, @36 rsvd
        ))
        .unwrap();
        let (_, crc) = decode_response::<ReadFlashrom>(&rsp).unwrap();
        assert_eq!(crc, FlashCrc([0xde, 0xad, 0xbe, 0xef]));
        // The encoder leaves the echoed parameters alone and writes @32..40.
        let mut out = rsp.clone();
        out[32..].fill(0xAA);
        crc.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(out, rsp);
        // A response_length that stops before the CRC names it.
        let mut short = rsp.clone();
        short[8] = 18;
        let err = decode_response::<ReadFlashrom>(&short).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("crc", 32, 4, 2));
    }

    #[test]
    fn write_flashrom_golden_layout() {
        assert_eq!(<WriteFlashrom<'_> as Command>::LEN, 32804);
        let chunk: Vec<u8> = (0..100u8).collect();
        let cmd = WriteFlashrom {
            op_code: FlashromOp::Save,
            op_type: FlashOpType::OffsetSpecified,
            offset: 0x0040_8000,
            data: Cow::Borrowed(&chunk),
        };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 32804);
        let expected = concat!(
            "07010000", "00000000", "14800000", "00000000", // opcode 7, request_length 32788 (0x8014)
            "02000000", // @16 op_code 2 (SAVE)
            "07000000", // @20 op_type 7
            "64000000", // @24 data_buf_size 100
            "00804000", // @28 offset 0x408000
        );
        assert_eq!(hex::encode(&buf[..32]), expected);
        assert_eq!(&buf[32..132], &chunk[..]);
        assert!(buf[132..].iter().all(|&b| b == 0)); // rest of the data area and rsvd @0x8020
        let (_, back) = decode_request::<WriteFlashrom<'static>>(&buf).unwrap();
        assert_eq!(back, cmd);
        assert!(matches!(back.data, Cow::Owned(_)));
    }

    #[test]
    fn write_flashrom_full_chunk_and_limits() {
        let chunk = vec![0x5Au8; WriteFlashrom::CHUNK];
        let cmd = WriteFlashrom {
            op_code: FlashromOp::Flash,
            op_type: FlashOpType::PxeBios,
            offset: 0,
            data: Cow::Borrowed(&chunk),
        };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(hex::encode(&buf[16..32]), "01000000030000000080000000000000");
        assert_eq!(&buf[0x8020..], &[0, 0, 0, 0]);
        let too_big = WriteFlashrom { data: Cow::Owned(vec![0; WriteFlashrom::CHUNK + 1]), ..cmd.clone() };
        let err = encode_request(&too_big).unwrap_err();
        assert_eq!((err.field, err.needed, err.available), ("data_buf", 32769, 32768));
        // A hostile data_buf_size is refused before anything is allocated.
        let mut buf = buf;
        buf[24..28].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = decode_request::<WriteFlashrom<'static>>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset), ("data_buf_size", 24));
    }

    #[test]
    fn op_codes_keep_unknown_values() {
        assert_eq!(FlashOpType::from_raw(21), FlashOpType::ShPhyFw);
        assert_eq!(FlashOpType::from_raw(5), FlashOpType::Unknown(5));
        assert_eq!(FlashromOp::from_raw(3), FlashromOp::Unknown(3));
        assert_eq!(FlashromOp::PhySave.raw(), 10);
    }
}
