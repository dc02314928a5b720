//! The `fw inspect` report: everything a file says about itself, every section's CRC against the
//! model, option-ROM contents and the problems found (design.md §7), serialisable as JSON.

use std::path::Path;

use serde::Serialize;

use crate::compat::{self, Chip};
use crate::crc;
use crate::dir::{DirectoryLayout, FlashDirectory, SectionEntry};
use crate::error::ImageError;
use crate::header::FileHeader;
use crate::optionrom::{self, CodeType};
use crate::problem::{Problem, Severity};
use crate::ufi::{UfiImage, map_file};

/// At most this many image headers are listed (the count is always given).
pub const MAX_LISTED_IMAGE_HEADERS: usize = 64;

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct InspectReport {
    /// File length in bytes.
    pub file_len: usize,
    /// The image parsed without a hard error and has no error-severity problem.
    pub flashable: bool,
    /// `"g3"` or `"g2"`, when the header could be read.
    pub header_format: Option<&'static str>,
    /// The chip `build[0]` names (`"skyhawk"`, `"be3"`, `"be2"`), if any.
    pub chip: Option<Chip>,
    /// The whole `build` field.
    pub build: Option<String>,
    /// The version string (`build` from byte 2).
    pub version: Option<String>,
    /// `asic_type_rev` (g3 only).
    pub asic_type_rev: Option<u8>,
    /// `file_len` as the header states it.
    pub header_file_len: Option<u32>,
    /// `num_imgs`.
    pub num_imgs: Option<u32>,
    /// The payload base P.
    pub payload_base: Option<u64>,
    /// The first [`MAX_LISTED_IMAGE_HEADERS`] image headers.
    pub image_headers: Vec<ImageHeaderReport>,
    /// The flash directory, when found.
    pub directory: Option<DirectoryReport>,
    /// `ver_data` of the 0xA0 entry: the version the adapter reports once this image is flashed.
    pub firmware_version: Option<String>,
    /// The sections in directory order.
    pub sections: Vec<SectionReport>,
    /// Everything found wrong, hard errors included.
    pub problems: Vec<ProblemReport>,
}

/// One image header.
#[derive(Debug, Clone, Serialize)]
pub struct ImageHeaderReport {
    /// Index in the table.
    pub index: usize,
    /// `imageid` (1 = flashed).
    pub imageid: u32,
    /// `image_version`.
    pub version: String,
}

/// The flash directory.
#[derive(Debug, Clone, Serialize)]
pub struct DirectoryReport {
    /// File offset of the cookie.
    pub offset: usize,
    /// `"split"` (canonical) or `"contiguous"` (2025 Linux form).
    pub cookie: &'static str,
    /// True for the split cookie.
    pub cookie_standard: bool,
    /// `format_rev`.
    pub format_rev: u32,
    /// `num_images` (g3).
    pub num_images: u32,
    /// `id_string`.
    pub id_string: String,
}

/// One section.
#[derive(Debug, Clone, Serialize)]
pub struct SectionReport {
    /// Entry index.
    pub index: usize,
    /// The type code.
    #[serde(rename = "type")]
    pub image_type: u32,
    /// The type's name.
    pub name: &'static str,
    /// The op-type the Skyhawk walk uses (`null`: the walk skips the section).
    pub optype: Option<u32>,
    /// The entry's raw `optype` field.
    pub optype_raw: u16,
    /// `optype` is 0xFFFF ("old image").
    pub old_image: bool,
    /// Flash offset (= offset from P).
    pub offset: u32,
    /// Offset in the file.
    pub file_offset: u64,
    /// `pad_size`: bytes flashed, trailer included.
    pub size: u32,
    /// `image_size`.
    pub image_size: u32,
    /// `ver_data`.
    pub version: String,
    /// The trailer as stored, `0x…` (little-endian value).
    pub crc_stored: Option<String>,
    /// The CRC of the section body.
    pub crc_computed: Option<String>,
    /// Trailer matches the CRC model (`null` when the section is not inside the file).
    pub crc_ok: Option<bool>,
    /// Decoded option ROM (types 0x20–0x22).
    pub option_rom: Option<OptionRomReport>,
}

/// An option-ROM section's chain.
#[derive(Debug, Clone, Serialize)]
pub struct OptionRomReport {
    /// The images in chain order.
    pub images: Vec<RomImageReport>,
}

/// One expansion ROM image.
#[derive(Debug, Clone, Serialize)]
pub struct RomImageReport {
    /// Offset in the section.
    pub offset: usize,
    /// PCI vendor ID (in JSON `"0x10df"`).
    #[serde(serialize_with = "oce_pci::ids::serialize_id")]
    pub vendor_id: u16,
    /// PCI device ID (in JSON `"0x0720"`).
    #[serde(serialize_with = "oce_pci::ids::serialize_id")]
    pub device_id: u16,
    /// Code type number (0 x86, 3 EFI).
    pub code_type: u8,
    /// Code type name.
    pub code_type_name: &'static str,
    /// Revision level of the code.
    pub code_revision: u16,
    /// PCIR structure revision.
    pub pcir_revision: u8,
    /// Image length in bytes.
    pub length: usize,
    /// Marked as the last image.
    pub last: bool,
    /// EFI images: subsystem from the EFI ROM header.
    pub efi_subsystem: Option<u16>,
    /// EFI images: machine from the EFI ROM header.
    pub efi_machine: Option<u16>,
    /// EFI images: compression type.
    pub efi_compression: Option<u16>,
    /// EFI images: the PE header as goblin reads it.
    pub pe: Option<optionrom::PeInfo>,
}

/// One problem.
#[derive(Debug, Clone, Serialize)]
pub struct ProblemReport {
    /// Stable snake_case kind.
    pub kind: &'static str,
    /// `info`, `warning` or `error`.
    pub severity: Severity,
    /// The section it concerns.
    pub section: Option<usize>,
    /// One line of text.
    pub message: String,
}

impl From<&Problem> for ProblemReport {
    fn from(p: &Problem) -> Self {
        Self { kind: p.kind(), severity: p.severity(), section: p.section(), message: p.to_string() }
    }
}

/// Inspects a file through a read-only memory map.
pub fn inspect_file(path: &Path) -> Result<InspectReport, ImageError> {
    let map = map_file(path)?;
    Ok(inspect(map.as_slice()))
}

/// Inspects `bytes`. Never fails: what cannot be read is `null` and the reason is a problem.
pub fn inspect(bytes: &[u8]) -> InspectReport {
    match UfiImage::parse(bytes) {
        Ok(image) => inspect_image(&image),
        Err(err) => inspect_broken(bytes, &err),
    }
}

/// Inspects a parsed image: one CRC pass over each section, straight from the borrowed bytes.
pub fn inspect_image(image: &UfiImage<'_>) -> InspectReport {
    let header = image.header();
    let mut report = header_report(image.bytes(), header);
    report.directory = Some(directory_report(image.directory_offset(), image.directory()));
    report.firmware_version = image.firmware_version();
    let mut problems: Vec<Problem> = image.problems().to_vec();
    for s in image.sections() {
        report.sections.push(section_report(
            s.index,
            s.entry,
            image.payload_base() as u64,
            Some(s.data),
            &mut problems,
        ));
    }
    if compat::chip_from_build_char(header.chip_char()) != Some(Chip::Skyhawk) {
        problems.insert(0, Problem::NotSkyhawk { chip_char: header.chip_char() });
    }
    report.flashable = problems.iter().all(|p| p.severity() < Severity::Error);
    report.problems = problems.iter().map(ProblemReport::from).collect();
    report
}

/// What can be said about a file the parser rejects.
fn inspect_broken(bytes: &[u8], err: &ImageError) -> InspectReport {
    let mut report = InspectReport::empty(bytes.len());
    let mut problems = vec![Problem::Unflashable { message: oce_pci::error_line(err) }];
    if let Ok(header) = FileHeader::parse(bytes) {
        report = header_report(bytes, &header);
        let base = usize::try_from(header.payload_base()).unwrap_or(usize::MAX);
        let layout = if let FileHeader::G2(_) = header { DirectoryLayout::G2 } else { DirectoryLayout::G3 };
        if let Ok(found) = FlashDirectory::find_with_layout(bytes, base, layout) {
            report.directory = Some(directory_report(found.offset, &found.directory));
            report.firmware_version = found.directory.firmware_version();
            for (index, entry) in found.directory.entries_in_use() {
                let start = base as u64 + u64::from(entry.offset);
                let data = usize::try_from(start)
                    .ok()
                    .and_then(|s| bytes.get(s..s.checked_add(entry.pad_size as usize)?))
                    .filter(|d| d.len() >= crc::TRAILER_LEN);
                report.sections.push(section_report(index, entry, base as u64, data, &mut problems));
            }
        }
    }
    report.problems = problems.iter().map(ProblemReport::from).collect();
    report
}

impl InspectReport {
    fn empty(file_len: usize) -> Self {
        Self {
            file_len,
            flashable: false,
            header_format: None,
            chip: None,
            build: None,
            version: None,
            asic_type_rev: None,
            header_file_len: None,
            num_imgs: None,
            payload_base: None,
            image_headers: Vec::new(),
            directory: None,
            firmware_version: None,
            sections: Vec::new(),
            problems: Vec::new(),
        }
    }
}

fn header_report(bytes: &[u8], header: &FileHeader) -> InspectReport {
    let mut report = InspectReport::empty(bytes.len());
    report.header_format = Some(header.generation());
    report.chip = compat::chip_from_build_char(header.chip_char());
    report.build = Some(header.build_string());
    report.version = Some(header.version());
    report.asic_type_rev = header.asic_type_rev();
    report.header_file_len = Some(header.file_len());
    report.num_imgs = Some(header.num_imgs());
    report.payload_base = Some(header.payload_base());
    report.image_headers = crate::header::image_headers(bytes, header)
        .take(MAX_LISTED_IMAGE_HEADERS)
        .enumerate()
        .map(|(index, h)| ImageHeaderReport { index, imageid: h.imageid, version: h.version() })
        .collect();
    report
}

fn directory_report(offset: usize, dir: &FlashDirectory) -> DirectoryReport {
    DirectoryReport {
        offset,
        cookie: dir.cookie.name(),
        cookie_standard: dir.cookie.is_standard(),
        format_rev: dir.header.format_rev,
        num_images: dir.header.num_images,
        id_string: dir.header.id(),
    }
}

/// One section's report; `data` is its `pad_size` bytes when they lie inside the file.
fn section_report(
    index: usize,
    entry: &SectionEntry,
    base: u64,
    data: Option<&[u8]>,
    problems: &mut Vec<Problem>,
) -> SectionReport {
    let check = data.and_then(crc::check_section);
    if let Some(c) = check.filter(|c| !c.is_ok()) {
        problems.push(Problem::CrcMismatch { index, stored: c.stored, computed: c.computed });
    }
    let option_rom = data.filter(|_| entry.image_type.is_option_rom()).map(|d| {
        let body = &d[..d.len() - crc::TRAILER_LEN];
        let rom = optionrom::decode(body);
        problems.extend(rom.problems.iter().cloned().map(|problem| Problem::OptionRom { index, problem }));
        OptionRomReport { images: rom.images.iter().map(rom_image_report).collect() }
    });
    SectionReport {
        index,
        image_type: entry.image_type.raw(),
        name: entry.image_type.name(),
        optype: entry.effective_optype().map(|o| o.raw()),
        optype_raw: entry.optype,
        old_image: entry.is_old_image(),
        offset: entry.offset,
        file_offset: base + u64::from(entry.offset),
        size: entry.pad_size,
        image_size: entry.image_size,
        version: entry.version(),
        crc_stored: check.map(|c| format!("{:#010x}", c.stored)),
        crc_computed: check.map(|c| format!("{:#010x}", c.computed)),
        crc_ok: check.map(|c| c.is_ok()),
        option_rom,
    }
}

fn rom_image_report(image: &optionrom::RomImage) -> RomImageReport {
    let pcir = &image.pcir;
    RomImageReport {
        offset: image.offset,
        vendor_id: pcir.vendor_id,
        device_id: pcir.device_id,
        code_type: pcir.code_type.raw(),
        code_type_name: pcir.code_type.name(),
        code_revision: pcir.code_revision,
        pcir_revision: pcir.revision,
        length: pcir.image_len(),
        last: pcir.is_last(),
        efi_subsystem: image.efi.as_ref().map(|e| e.subsystem),
        efi_machine: image.efi.as_ref().map(|e| e.machine),
        efi_compression: image.efi.as_ref().filter(|_| pcir.code_type == CodeType::Efi).map(|e| e.compression),
        pe: image.pe.clone(),
    }
}

#[cfg(test)]
mod tests;
