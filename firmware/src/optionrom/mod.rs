//! Option-ROM sections (types 0x20–0x22): the chain of PCI expansion ROM images they hold, and the
//! PE header of EFI images (read with goblin). Every read is bounds-checked; what is wrong is
//! reported as a [`RomProblem`], never a panic.

pub mod format;

use std::fmt;

use oce_mailbox::wire::{Reader, Wire, WireError};
use serde::Serialize;

pub use format::{CodeType, EfiRomHeader, Pcir};
use format::{EFI_SIGNATURE, IMAGE_UNIT, PCIR_POINTER_OFFSET, ROM_SIGNATURE};

/// At most this many images are decoded from one section.
pub const MAX_IMAGES: usize = 32;

/// Something wrong inside an option-ROM section; offsets are from the section's start.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RomProblem {
    /// No 0x55AA signature where an image should start.
    NoSignature {
        /// Offset of the image.
        offset: usize,
    },
    /// A structure runs past the end of the section.
    Truncated(WireError),
    /// The PCIR pointer does not lead to a "PCIR" signature.
    NoPcir {
        /// Offset of the image.
        offset: usize,
        /// Where the pointer leads.
        pcir_offset: usize,
    },
    /// The PCIR image length is 0, so the chain cannot continue.
    ZeroLength {
        /// Offset of the image.
        offset: usize,
    },
    /// The image runs past the end of the section.
    ImagePastEnd {
        /// Offset of the image.
        offset: usize,
        /// Its length in bytes.
        len: usize,
        /// Bytes left in the section.
        available: usize,
    },
    /// The chain ended without an image marked "last".
    NoLastImage,
    /// More images than [`MAX_IMAGES`].
    TooManyImages,
    /// An EFI image without the 0x0EF1 signature.
    BadEfiSignature {
        /// Offset of the image.
        offset: usize,
        /// The value found.
        found: u32,
    },
    /// The EFI image is compressed; its PE header is not read.
    Compressed {
        /// Offset of the image.
        offset: usize,
    },
    /// goblin could not parse the PE header of an EFI image.
    BadPe {
        /// Offset of the PE file in the section.
        offset: usize,
        /// goblin's message.
        reason: String,
    },
    /// The EFI header and the PE header name different machines.
    MachineMismatch {
        /// Offset of the image.
        offset: usize,
        /// From the EFI ROM header.
        efi: u16,
        /// From the PE COFF header.
        pe: u16,
    },
}

impl fmt::Display for RomProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSignature { offset } => write!(f, "option ROM: no 0x55AA signature at byte {offset}"),
            Self::Truncated(e) => write!(f, "option ROM: {e}"),
            Self::NoPcir { offset, pcir_offset } => {
                write!(f, "option ROM image at byte {offset}: no PCIR structure at byte {pcir_offset}")
            }
            Self::ZeroLength { offset } => write!(f, "option ROM image at byte {offset} has length 0"),
            Self::ImagePastEnd { offset, len, available } => {
                write!(f, "option ROM image at byte {offset} is {len} bytes, only {available} left in the section")
            }
            Self::NoLastImage => write!(f, "option ROM: the chain ends without an image marked last"),
            Self::TooManyImages => write!(f, "option ROM: more than {MAX_IMAGES} images"),
            Self::BadEfiSignature { offset, found } => {
                write!(f, "EFI image at byte {offset}: signature {found:#x}, expected 0xef1")
            }
            Self::Compressed { offset } => write!(f, "EFI image at byte {offset} is compressed; PE header not read"),
            Self::BadPe { offset, reason } => write!(f, "PE file at byte {offset}: {reason}"),
            Self::MachineMismatch { offset, efi, pe } => {
                write!(f, "EFI image at byte {offset}: ROM header says machine {efi:#06x}, PE header {pe:#06x}")
            }
        }
    }
}

/// What the PE header of an EFI image says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeInfo {
    /// COFF machine (0x8664 x64, 0xAA64 AArch64, 0x14C i386, 0xEBC EFI byte code).
    pub machine: u16,
    /// goblin's name for the machine.
    pub machine_name: &'static str,
    /// PE32+ (64-bit optional header).
    pub pe32_plus: bool,
    /// Optional-header subsystem (10 EFI application, 11 boot service driver, 12 runtime driver).
    pub subsystem: Option<u16>,
    /// Entry point RVA.
    pub entry_point: Option<u32>,
    /// Number of sections.
    pub sections: u16,
}

/// One decoded image of the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RomImage {
    /// Offset of the image in the section.
    pub offset: usize,
    /// Its PCI data structure.
    pub pcir: Pcir,
    /// For EFI images: the EFI ROM header.
    pub efi: Option<EfiRomHeader>,
    /// For uncompressed EFI images whose PE header parsed: what it says.
    pub pe: Option<PeInfo>,
}

/// The decoded chain and what was wrong with it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionRom {
    /// The images, in chain order.
    pub images: Vec<RomImage>,
    /// Problems found.
    pub problems: Vec<RomProblem>,
}

/// Walks the chain of expansion ROM images at the start of `data` (an option-ROM section).
pub fn decode(data: &[u8]) -> OptionRom {
    let mut rom = OptionRom::default();
    let mut offset = 0;
    loop {
        if rom.images.len() == MAX_IMAGES {
            rom.problems.push(RomProblem::TooManyImages);
            break;
        }
        let image = match decode_image(data, offset, &mut rom.problems) {
            Ok(image) => image,
            Err(problem) => {
                rom.problems.push(problem);
                break;
            }
        };
        let (last, len) = (image.pcir.is_last(), image.pcir.image_len());
        rom.images.push(image);
        let available = data.len().saturating_sub(offset);
        if len == 0 {
            rom.problems.push(RomProblem::ZeroLength { offset });
            break;
        }
        if len > available {
            rom.problems.push(RomProblem::ImagePastEnd { offset, len, available });
            break;
        }
        if last {
            break;
        }
        offset += len;
        if offset >= data.len() {
            rom.problems.push(RomProblem::NoLastImage);
            break;
        }
    }
    rom
}

/// Decodes the image at `offset`; problems that do not stop the chain go to `problems`.
fn decode_image(data: &[u8], offset: usize, problems: &mut Vec<RomProblem>) -> Result<RomImage, RomProblem> {
    let mut r = Reader::at(data, offset);
    if r.bytes("rom.signature", 2).map_err(RomProblem::Truncated)? != ROM_SIGNATURE {
        return Err(RomProblem::NoSignature { offset });
    }
    let pointer =
        Reader::at(data, offset + PCIR_POINTER_OFFSET).u16("rom.pcir_pointer").map_err(RomProblem::Truncated)?;
    let pcir_offset = offset + usize::from(pointer);
    if !Pcir::has_signature(data, pcir_offset) {
        return Err(RomProblem::NoPcir { offset, pcir_offset });
    }
    let pcir = Pcir::decode(&mut Reader::at(data, pcir_offset)).map_err(RomProblem::Truncated)?;
    let mut image = RomImage { offset, pcir, efi: None, pe: None };
    if image.pcir.code_type == CodeType::Efi {
        match EfiRomHeader::decode(&mut Reader::at(data, offset)) {
            Ok(efi) => {
                image.pe = efi_pe(data, offset, &image.pcir, &efi, problems);
                image.efi = Some(efi);
            }
            Err(e) => problems.push(RomProblem::Truncated(e)),
        }
    }
    Ok(image)
}

/// Reads the PE header of an EFI image.
fn efi_pe(
    data: &[u8],
    offset: usize,
    pcir: &Pcir,
    efi: &EfiRomHeader,
    problems: &mut Vec<RomProblem>,
) -> Option<PeInfo> {
    if efi.efi_signature != EFI_SIGNATURE {
        problems.push(RomProblem::BadEfiSignature { offset, found: efi.efi_signature });
        return None;
    }
    if efi.compression != 0 {
        problems.push(RomProblem::Compressed { offset });
        return None;
    }
    // The PE file runs from image_offset to the end of the image (PCIR length, else the
    // EFI initialization size), clipped to the section.
    let units = if pcir.image_length != 0 { pcir.image_length } else { efi.init_size };
    let image_end = data.len().min(offset + usize::from(units) * IMAGE_UNIT);
    let pe_offset = offset + usize::from(efi.image_offset);
    let Some(pe_bytes) = data.get(pe_offset..image_end) else {
        let e = WireError { field: "efi.pe_image", offset: pe_offset, needed: 1, available: 0 };
        problems.push(RomProblem::Truncated(e));
        return None;
    };
    match parse_pe(pe_bytes) {
        Ok(pe) => {
            if pe.machine != efi.machine {
                problems.push(RomProblem::MachineMismatch { offset, efi: efi.machine, pe: pe.machine });
            }
            Some(pe)
        }
        Err(reason) => {
            problems.push(RomProblem::BadPe { offset: pe_offset, reason });
            None
        }
    }
}

/// Parses the headers of a PE file with goblin.
pub fn parse_pe(bytes: &[u8]) -> Result<PeInfo, String> {
    let header = goblin::pe::header::Header::parse(bytes).map_err(|e| e.to_string())?;
    let coff = header.coff_header;
    let opt = header.optional_header;
    Ok(PeInfo {
        machine: coff.machine,
        machine_name: goblin::pe::header::machine_to_str(coff.machine),
        pe32_plus: opt.is_some_and(|o| o.standard_fields.magic == goblin::pe::optional_header::MAGIC_64),
        subsystem: opt.map(|o| o.windows_fields.subsystem),
        entry_point: opt.map(|o| o.standard_fields.address_of_entry_point),
        sections: coff.number_of_sections,
    })
}

#[cfg(test)]
mod tests;
