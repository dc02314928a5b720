//! The byte layouts inside an option-ROM section: the PCI expansion ROM header, the PCI data
//! structure ("PCIR") and the EFI expansion ROM header.
//!
//! Sources (public specifications; the drivers do not look inside these sections):
//! PCI Firmware Specification 3.0 §5.1 ("PCI Expansion ROMs": ROM header, PCI data structure)
//! and the UEFI Specification, "PCI Option ROMs" (EFI PCI expansion ROM header).

use oce_mailbox::wire::{Reader, Wire, WireError, Writer};

/// The two bytes every expansion ROM image starts with (PCI Firmware 3.0 §5.1).
pub const ROM_SIGNATURE: [u8; 2] = [0x55, 0xAA];
/// Offset in the ROM header of the 16-bit pointer to the PCI data structure.
pub const PCIR_POINTER_OFFSET: usize = 0x18;
/// Signature of the PCI data structure.
pub const PCIR_SIGNATURE: [u8; 4] = *b"PCIR";
/// Unit of the image length fields: 512 bytes.
pub const IMAGE_UNIT: usize = 512;
/// Bit 7 of the PCIR "indicator" byte: this is the last image of the ROM.
pub const LAST_IMAGE: u8 = 0x80;
/// The EFI signature at offset 4 of an EFI image header (UEFI "PCI Option ROMs").
pub const EFI_SIGNATURE: u32 = 0x0EF1;
/// Length of the EFI expansion ROM header fields (through the PCIR pointer).
pub const EFI_HEADER_LEN: usize = 0x1A;

/// The code type of one ROM image (PCIR offset 0x14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeType {
    /// 0: Intel x86, PC-AT compatible (legacy BIOS).
    X86,
    /// 1: Open Firmware (IEEE 1275).
    OpenFirmware,
    /// 2: Hewlett-Packard PA-RISC.
    PaRisc,
    /// 3: EFI image.
    Efi,
    /// Anything else, kept as read.
    Unknown(u8),
}

impl CodeType {
    /// The type for a raw code.
    pub fn from_raw(raw: u8) -> Self {
        match raw {
            0 => Self::X86,
            1 => Self::OpenFirmware,
            2 => Self::PaRisc,
            3 => Self::Efi,
            other => Self::Unknown(other),
        }
    }

    /// The raw code.
    pub fn raw(self) -> u8 {
        match self {
            Self::X86 => 0,
            Self::OpenFirmware => 1,
            Self::PaRisc => 2,
            Self::Efi => 3,
            Self::Unknown(raw) => raw,
        }
    }

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Self::X86 => "x86 (legacy BIOS)",
            Self::OpenFirmware => "Open Firmware",
            Self::PaRisc => "PA-RISC",
            Self::Efi => "EFI",
            Self::Unknown(_) => "unknown",
        }
    }
}

/// The PCI data structure of one ROM image (PCI Firmware 3.0 §5.1, revision 3: 0x1C bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcir {
    /// Vendor ID @0x04.
    pub vendor_id: u16,
    /// Device ID @0x06.
    pub device_id: u16,
    /// Device list pointer @0x08 (revision 3; reserved before).
    pub device_list: u16,
    /// Structure length @0x0A.
    pub length: u16,
    /// Structure revision @0x0C (3 for PCI Firmware 3.0).
    pub revision: u8,
    /// Class code @0x0D: programming interface, sub-class, base class.
    pub class_code: [u8; 3],
    /// Image length @0x10, in 512-byte units.
    pub image_length: u16,
    /// Revision level of the code/data @0x12.
    pub code_revision: u16,
    /// Code type @0x14.
    pub code_type: CodeType,
    /// Indicator @0x15: bit 7 marks the last image.
    pub indicator: u8,
    /// Maximum run-time image length @0x16, in 512-byte units (revision 3).
    pub max_runtime_length: u16,
    /// Configuration utility code header pointer @0x18 (revision 3).
    pub config_utility: u16,
    /// DMTF CLP entry point pointer @0x1A (revision 3).
    pub dmtf_clp: u16,
}

impl Pcir {
    /// Encoded size of a revision-3 structure.
    pub const LEN: usize = 0x1C;

    /// True when the indicator marks this image as the last.
    pub fn is_last(&self) -> bool {
        self.indicator & LAST_IMAGE != 0
    }

    /// The image length in bytes.
    pub fn image_len(&self) -> usize {
        usize::from(self.image_length) * IMAGE_UNIT
    }

    /// True when `bytes` at `offset` start with "PCIR".
    pub fn has_signature(bytes: &[u8], offset: usize) -> bool {
        bytes.get(offset..).is_some_and(|b| b.starts_with(&PCIR_SIGNATURE))
    }
}

impl Wire for Pcir {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.bytes("pcir.signature", &PCIR_SIGNATURE)?;
        w.u16("pcir.vendor_id", self.vendor_id)?;
        w.u16("pcir.device_id", self.device_id)?;
        w.u16("pcir.device_list", self.device_list)?;
        w.u16("pcir.length", self.length)?;
        w.u8("pcir.revision", self.revision)?;
        w.bytes("pcir.class_code", &self.class_code)?;
        w.u16("pcir.image_length", self.image_length)?;
        w.u16("pcir.code_revision", self.code_revision)?;
        w.u8("pcir.code_type", self.code_type.raw())?;
        w.u8("pcir.indicator", self.indicator)?;
        w.u16("pcir.max_runtime_length", self.max_runtime_length)?;
        w.u16("pcir.config_utility", self.config_utility)?;
        w.u16("pcir.dmtf_clp", self.dmtf_clp)
    }

    /// Decodes the structure; the caller checks the signature (see [`Pcir::has_signature`]).
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.skip("pcir.signature", 4)?;
        Ok(Self {
            vendor_id: r.u16("pcir.vendor_id")?,
            device_id: r.u16("pcir.device_id")?,
            device_list: r.u16("pcir.device_list")?,
            length: r.u16("pcir.length")?,
            revision: r.u8("pcir.revision")?,
            class_code: r.array("pcir.class_code")?,
            image_length: r.u16("pcir.image_length")?,
            code_revision: r.u16("pcir.code_revision")?,
            code_type: CodeType::from_raw(r.u8("pcir.code_type")?),
            indicator: r.u8("pcir.indicator")?,
            max_runtime_length: r.u16("pcir.max_runtime_length")?,
            config_utility: r.u16("pcir.config_utility")?,
            dmtf_clp: r.u16("pcir.dmtf_clp")?,
        })
    }
}

/// The EFI PCI expansion ROM header (UEFI "PCI Option ROMs").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EfiRomHeader {
    /// Initialization size @0x02, in 512-byte units.
    pub init_size: u16,
    /// EFI signature @0x04 (0x0EF1).
    pub efi_signature: u32,
    /// EFI subsystem @0x08 (10 application, 11 boot service driver, 12 runtime driver).
    pub subsystem: u16,
    /// EFI machine type @0x0A (PE machine code, e.g. 0x8664 x64).
    pub machine: u16,
    /// Compression type @0x0C (0 uncompressed, 1 EFI compressed).
    pub compression: u16,
    /// Offset of the EFI (PE) image from the start of the ROM image @0x16.
    pub image_offset: u16,
    /// Offset of the PCI data structure @0x18.
    pub pcir_offset: u16,
}

impl Wire for EfiRomHeader {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.bytes("efi.signature", &ROM_SIGNATURE)?;
        w.u16("efi.init_size", self.init_size)?;
        w.u32("efi.efi_signature", self.efi_signature)?;
        w.u16("efi.subsystem", self.subsystem)?;
        w.u16("efi.machine", self.machine)?;
        w.u16("efi.compression", self.compression)?;
        w.zeros("efi.reserved", 8)?;
        w.u16("efi.image_offset", self.image_offset)?;
        w.u16("efi.pcir_offset", self.pcir_offset)
    }

    /// Decodes the header; the caller checks the 0x55AA signature.
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.skip("efi.signature", 2)?;
        let init_size = r.u16("efi.init_size")?;
        let efi_signature = r.u32("efi.efi_signature")?;
        let subsystem = r.u16("efi.subsystem")?;
        let machine = r.u16("efi.machine")?;
        let compression = r.u16("efi.compression")?;
        r.skip("efi.reserved", 8)?;
        let image_offset = r.u16("efi.image_offset")?;
        let pcir_offset = r.u16("efi.pcir_offset")?;
        Ok(Self { init_size, efi_signature, subsystem, machine, compression, image_offset, pcir_offset })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcir_golden_bytes() {
        let pcir = Pcir {
            vendor_id: 0x10DF,
            device_id: 0x0720,
            device_list: 0,
            length: 0x1C,
            revision: 3,
            class_code: [0x00, 0x00, 0x02],
            image_length: 3,
            code_revision: 0x0102,
            code_type: CodeType::Efi,
            indicator: LAST_IMAGE,
            max_runtime_length: 3,
            config_utility: 0,
            dmtf_clp: 0,
        };
        let mut buf = [0u8; Pcir::LEN];
        pcir.encode(&mut Writer::new(&mut buf)).unwrap();
        // "PCIR", vendor 10df, device 0720, device list 0, length 0x1c, revision 3, class 020000,
        // image length 3, code revision 0x0102, code type 3, indicator 0x80, max run-time 3, 0, 0.
        assert_eq!(hex::encode(buf), concat!("50434952df10200700001c0003000002", "0300020103800300", "00000000"));
        assert_eq!(Pcir::decode(&mut Reader::new(&buf)).unwrap(), pcir);
        assert!(pcir.is_last());
        assert_eq!(pcir.image_len(), 1536);
    }

    #[test]
    fn efi_header_golden_bytes() {
        let h = EfiRomHeader {
            init_size: 3,
            efi_signature: EFI_SIGNATURE,
            subsystem: 11,
            machine: 0x8664,
            compression: 0,
            image_offset: 0x40,
            pcir_offset: 0x1C,
        };
        let mut buf = [0xFFu8; EFI_HEADER_LEN];
        h.encode(&mut Writer::new(&mut buf)).unwrap();
        assert_eq!(hex::encode(buf), concat!("55aa0300f10e00000b0064860000", "0000000000000000", "40001c00"));
        assert_eq!(EfiRomHeader::decode(&mut Reader::new(&buf)).unwrap(), h);
    }
}
