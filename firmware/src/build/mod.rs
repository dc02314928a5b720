//! [`ImageBuilder`]: valid synthetic Skyhawk `.ufi` images, and deliberately broken ones.
//!
//! No real image is public (ufi-firmware.md §6), so tests, benchmarks and the emulator's factory
//! flash use these. A built file is:
//!
//! - a g3 file header (ufi-firmware.md §1.2): `sign` = "ocetool synthetic UFI", `file_len` = the
//!   file's length, `build` = chip character `'4'` (Skyhawk), a space, then the version — FreeBSD
//!   prints `build` from byte 2, so byte 1 is a separator whose real value is unknown (§8); ocetool
//!   writes a space — and `asic_type_rev` (default 0x10, "B0");
//! - `num_imgs` image headers (§1.4), by default one with `imageid` 1;
//! - from P = 128 + 48·num_imgs, the payload: a flash-address-space image, entry `offset` being
//!   both the offset from P and the flash address (§1.1), gaps filled with 0xFF (erased flash).
//!   The directory sits at flash offset 0, inside its own 0xD2 section, so the scan from P finds
//!   it at once. Every section is filled from the version and type ([`fill`]) and ends with its
//!   CRC trailer ([`crate::crc`]); option-ROM sections hold a real PCI expansion ROM ([`rom`]).

mod fill;
mod layout;
mod pe;
pub(crate) mod rom;

use oce_mailbox::wire::{Wire, Writer};

use crate::crc::{self, TRAILER_LEN};
use crate::dir::{CookieForm, FlashDirectory, ImageType, SectionEntry};
use crate::error::ImageError;
use crate::header::{BUILD_LEN, FileHeaderG3, ImageHeader, c_string};

pub use layout::{FLASH_SIZE, Layout, SectionSpec};
pub use rom::{DEVICE_SKYHAWK, VENDOR_EMULEX};

/// `build[0]` of a Skyhawk image.
#[doc(alias = "BLD_STR_UFI_TYPE_SH")]
pub const BUILD_CHAR_SKYHAWK: u8 = b'4';
/// The separator ocetool writes at `build[1]` (a documented choice; the real byte is unknown).
pub const BUILD_SEPARATOR: u8 = b' ';
/// The longest version string `build` can hold: 24 bytes less the chip character, the separator
/// and a terminating NUL.
pub const MAX_VERSION_LEN: usize = BUILD_LEN - 3;
/// Default `asic_type_rev`: 0x10, the first "B0" / Skyhawk-R revision (ufi-firmware.md §1.5).
pub const DEFAULT_ASIC_TYPE_REV: u8 = 0x10;
/// The file header's `sign` in built images.
pub const SIGN: &str = "ocetool synthetic UFI";

/// A change to one directory entry after layout, for building broken images.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryPatch {
    /// Set `offset`.
    Offset(u32),
    /// Set `pad_size`.
    PadSize(u32),
    /// Set `optype`.
    Optype(u16),
    /// Set `pad_size` so the section ends 4 KiB past the end of the (untruncated) file.
    PastEof,
}

/// Builds synthetic `.ufi` files and flash images. See the module docs for the format.
#[derive(Debug, Clone)]
pub struct ImageBuilder {
    version: String,
    layout: Layout,
    chip_char: u8,
    asic_type_rev: u8,
    image_ids: Vec<u32>,
    num_imgs: Option<u32>,
    cookie: Option<CookieForm>,
    old_image_optypes: bool,
    num_images: Option<u32>,
    bad_crc: Vec<ImageType>,
    patches: Vec<(ImageType, EntryPatch)>,
    truncate: Option<usize>,
}

impl ImageBuilder {
    /// A valid image of `version` with the [`Layout::small`] preset.
    pub fn new(version: &str) -> Self {
        Self {
            version: version.to_owned(),
            layout: Layout::small(),
            chip_char: BUILD_CHAR_SKYHAWK,
            asic_type_rev: DEFAULT_ASIC_TYPE_REV,
            image_ids: vec![ImageHeader::FLASHABLE_ID],
            num_imgs: None,
            cookie: Some(CookieForm::Split),
            old_image_optypes: false,
            num_images: None,
            bad_crc: Vec::new(),
            patches: Vec::new(),
            truncate: None,
        }
    }

    /// Uses `layout` instead of the small preset.
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// Sets `build[0]` (default `'4'`; `'3'` makes a BE3 image for wrong-chip tests).
    pub fn chip_char(mut self, c: u8) -> Self {
        self.chip_char = c;
        self
    }

    /// Sets `asic_type_rev` (default 0x10).
    pub fn asic_type_rev(mut self, rev: u8) -> Self {
        self.asic_type_rev = rev;
        self
    }

    /// Writes one image header per id (default `[1]`); `num_imgs` follows unless overridden.
    pub fn image_ids(mut self, ids: Vec<u32>) -> Self {
        self.image_ids = ids;
        self
    }

    /// Writes `n` into `num_imgs` without writing that many headers (a huge value makes the
    /// header table run past the end of the file).
    pub fn num_imgs_field(mut self, n: u32) -> Self {
        self.num_imgs = Some(n);
        self
    }

    /// The cookie form, or `None` for no cookie at all (32 zero bytes instead).
    pub fn cookie(mut self, cookie: Option<CookieForm>) -> Self {
        self.cookie = cookie;
        self
    }

    /// Writes 0xFFFF ("old image") into every entry's `optype` instead of the explicit op-type.
    pub fn old_image_optypes(mut self, on: bool) -> Self {
        self.old_image_optypes = on;
        self
    }

    /// Writes `n` into the directory's `num_images` (e.g. 33, more than the 32 slots).
    pub fn num_images_field(mut self, n: u32) -> Self {
        self.num_images = Some(n);
        self
    }

    /// Breaks the CRC trailer of the section of `image_type` (all bits of its first byte flipped).
    pub fn corrupt_crc(mut self, image_type: ImageType) -> Self {
        self.bad_crc.push(image_type);
        self
    }

    /// Changes the directory entry of `image_type` after layout (the section's bytes stay where
    /// the layout put them).
    pub fn patch_entry(mut self, image_type: ImageType, patch: EntryPatch) -> Self {
        self.patches.push((image_type, patch));
        self
    }

    /// Cuts the finished file to its first `len` bytes.
    pub fn truncate(mut self, len: usize) -> Self {
        self.truncate = Some(len);
        self
    }

    /// The version this builder writes.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The payload base P of the file [`ImageBuilder::build`] writes.
    pub fn payload_base(&self) -> usize {
        FileHeaderG3::LEN + ImageHeader::LEN * self.image_ids.len()
    }

    /// The whole `.ufi` file.
    pub fn build(&self) -> Result<Vec<u8>, ImageError> {
        self.check_version()?;
        self.layout.validate()?;
        let base = self.payload_base();
        let payload_len = self.layout.payload_len();
        let mut out = vec![0u8; base + payload_len];
        let file_len = out.len() as u32;
        let mut w = Writer::new(&mut out);
        let mut build = [0u8; BUILD_LEN];
        build[0] = self.chip_char;
        build[1] = BUILD_SEPARATOR;
        build[2..2 + self.version.len()].copy_from_slice(self.version.as_bytes());
        FileHeaderG3 {
            sign: c_string(SIGN),
            ufi_version: [0; 4],
            file_len,
            cksum: 0,
            antidote: 0,
            num_imgs: self.num_imgs.unwrap_or(self.image_ids.len() as u32),
            build,
            asic_type_rev: self.asic_type_rev,
        }
        .encode(&mut w)?;
        for &imageid in &self.image_ids {
            ImageHeader {
                imageid,
                imageoffset: base as u32,
                imagelength: payload_len as u32,
                image_checksum: 0,
                image_version: c_string(&self.version),
            }
            .encode(&mut w)?;
        }
        self.write_payload(&mut out[base..])?;
        if let Some(len) = self.truncate {
            out.truncate(len);
        }
        Ok(out)
    }

    /// Just the payload: the flash-address-space image the emulator writes at flash offset 0
    /// (its length is the end of the last section, at most [`FLASH_SIZE`]).
    pub fn build_flash(&self) -> Result<Vec<u8>, ImageError> {
        self.check_version()?;
        self.layout.validate()?;
        let mut out = vec![0u8; self.layout.payload_len()];
        self.write_payload(&mut out)?;
        Ok(out)
    }

    /// The directory this builder writes (entries in layout order, patches applied).
    pub fn directory(&self) -> FlashDirectory {
        // The end of the file, as an offset from P.
        let file_end = self.layout.payload_len() as u32;
        let entries = self
            .layout
            .sections
            .iter()
            .map(|s| {
                let mut e = SectionEntry::new(s.image_type, s.offset, s.pad_size, &self.version);
                e.image_size = content_len(s);
                if self.old_image_optypes {
                    e.optype = SectionEntry::OLD_IMAGE_OPTYPE;
                }
                for &(ty, patch) in &self.patches {
                    if ty == s.image_type {
                        match patch {
                            EntryPatch::Offset(v) => e.offset = v,
                            EntryPatch::PadSize(v) => e.pad_size = v,
                            EntryPatch::Optype(v) => e.optype = v,
                            EntryPatch::PastEof => e.pad_size = file_end.saturating_sub(e.offset).saturating_add(4096),
                        }
                    }
                }
                e
            })
            .collect();
        let mut dir = FlashDirectory::new(entries, &format!("{SIGN} {}", self.version));
        if let Some(n) = self.num_images {
            dir.header.num_images = n;
        }
        if let Some(form) = self.cookie {
            dir.cookie = form;
        }
        dir
    }

    fn check_version(&self) -> Result<(), ImageError> {
        let v = &self.version;
        if v.is_empty() || v.len() > MAX_VERSION_LEN || !v.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ImageError::InvalidVersion { version: v.clone(), max_len: MAX_VERSION_LEN });
        }
        Ok(())
    }

    /// Writes every section into `out` (the payload, `layout.payload_len()` bytes).
    fn write_payload(&self, out: &mut [u8]) -> Result<(), ImageError> {
        out.fill(0xFF);
        for s in &self.layout.sections {
            let region = &mut out[s.offset as usize..s.end() as usize];
            let body_len = region.len() - TRAILER_LEN;
            let body = &mut region[..body_len];
            let prefix = match s.image_type {
                ImageType::UfiDir => {
                    self.directory().encode_into(body)?;
                    if self.cookie.is_none() {
                        body[..crate::dir::COOKIE_LEN].fill(0);
                    }
                    FlashDirectory::LEN
                }
                t if t.is_option_rom() => {
                    let image = rom::option_rom(&self.version, code_revision(&self.version))?;
                    body[..image.len()].copy_from_slice(&image);
                    image.len()
                }
                _ => 0,
            };
            if prefix == 0 {
                fill::fill_tagged(body, &self.version, s.image_type);
            } else {
                fill::fill(&mut body[prefix..], &self.version, s.image_type);
            }
            crc::stamp_trailer(region)?;
            if self.bad_crc.contains(&s.image_type) {
                region[body_len] ^= 0xFF;
            }
        }
        Ok(())
    }
}

/// `image_size` of a built section: the meaningful bytes before the filler (directory, ROM), or
/// the whole body.
fn content_len(s: &SectionSpec) -> u32 {
    match s.image_type {
        ImageType::UfiDir => FlashDirectory::LEN as u32,
        t if t.is_option_rom() => rom::option_rom_len() as u32,
        _ => s.pad_size - TRAILER_LEN as u32,
    }
}

/// The PCIR code revision for `version`: its first two dotted numbers as major.minor bytes
/// (0 when they do not parse).
fn code_revision(version: &str) -> u16 {
    let mut parts = version.split('.').map(|p| p.parse::<u8>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    u16::from_be_bytes([major, minor])
}

#[cfg(test)]
mod tests;
