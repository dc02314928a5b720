//! The flash directory's section header and its 64-byte section entries, with their encodings.

use oce_mailbox::wire::{Reader, Wire, WireError, Writer, decode_c_string};

use super::types::{ImageType, OpType};
use crate::header::c_string;

/// One 64-byte `flash_section_entry`: where a section lies and how to flash it
/// (ufi-firmware.md §2.3).
#[doc(alias = "flash_section_entry")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionEntry {
    /// `type` @0x00: what the section holds.
    pub image_type: ImageType,
    /// `offset` @0x04: offset from the payload base P in the file, and the flash address.
    pub offset: u32,
    /// `pad_size` @0x08: bytes to flash; the last 4 hold the CRC trailer.
    pub pad_size: u32,
    /// `image_size` @0x0C (not used by the drivers).
    pub image_size: u32,
    /// `cksum` @0x10 (not used by the drivers).
    pub cksum: u32,
    /// `entry_point` @0x14 (not used by the drivers).
    pub entry_point: u32,
    /// `optype` @0x18: the flash op-type, or [`SectionEntry::OLD_IMAGE_OPTYPE`].
    pub optype: u16,
    /// `ver_data` @0x20: NUL-padded version string.
    pub ver_data: [u8; 32],
}

impl SectionEntry {
    /// Encoded size.
    pub const LEN: usize = 64;
    /// `optype` value meaning "old image": the op-type comes from the type map and the walk does
    /// no CRC check (ufi-firmware.md §2.3, §2.8).
    pub const OLD_IMAGE_OPTYPE: u16 = 0xFFFF;

    /// An entry of `image_type` at `offset` with `pad_size` bytes, its op-type taken explicitly
    /// from the Skyhawk map (0xFFFF when the map has none), and `version` as `ver_data`.
    pub fn new(image_type: ImageType, offset: u32, pad_size: u32, version: &str) -> Self {
        let optype = image_type.skyhawk_optype().map_or(Self::OLD_IMAGE_OPTYPE, |o| o.raw() as u16);
        let mut entry = Self {
            image_type,
            offset,
            pad_size,
            image_size: pad_size.saturating_sub(4),
            cksum: 0,
            entry_point: 0,
            optype,
            ver_data: [0; 32],
        };
        entry.set_version(version);
        entry
    }

    /// True when `optype` is 0xFFFF ("old image").
    pub fn is_old_image(&self) -> bool {
        self.optype == Self::OLD_IMAGE_OPTYPE
    }

    /// The op-type the Skyhawk walk uses: the explicit `optype`, or for an old image the type map
    /// (ufi-firmware.md §2.8 step 1); `None` means the walk skips the entry.
    pub fn effective_optype(&self) -> Option<OpType> {
        if self.is_old_image() { self.image_type.skyhawk_optype() } else { Some(OpType::from_raw(self.optype.into())) }
    }

    /// `ver_data` as a string (up to the first NUL, non-printable bytes replaced by `?`).
    pub fn version(&self) -> String {
        decode_c_string(&self.ver_data)
    }

    /// Stores `version` in `ver_data`, NUL-padded, cut to 31 bytes.
    pub fn set_version(&mut self, version: &str) {
        self.ver_data = c_string(version);
    }

    /// The section's end as an offset from P (`offset + pad_size`, without overflow).
    pub fn end(&self) -> u64 {
        u64::from(self.offset) + u64::from(self.pad_size)
    }

    /// An all-zero (unused) slot.
    pub fn empty() -> Self {
        Self {
            image_type: ImageType::Unknown(0),
            offset: 0,
            pad_size: 0,
            image_size: 0,
            cksum: 0,
            entry_point: 0,
            optype: 0,
            ver_data: [0; 32],
        }
    }
}

impl Wire for SectionEntry {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("type", self.image_type.raw())?;
        w.u32("offset", self.offset)?;
        w.u32("pad_size", self.pad_size)?;
        w.u32("image_size", self.image_size)?;
        w.u32("cksum", self.cksum)?;
        w.u32("entry_point", self.entry_point)?;
        w.u16("optype", self.optype)?;
        w.zeros("rsvd0", 2)?;
        w.zeros("rsvd1", 4)?;
        w.bytes("ver_data", &self.ver_data)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let image_type = ImageType::from_raw(r.u32("type")?);
        let offset = r.u32("offset")?;
        let pad_size = r.u32("pad_size")?;
        let image_size = r.u32("image_size")?;
        let cksum = r.u32("cksum")?;
        let entry_point = r.u32("entry_point")?;
        let optype = r.u16("optype")?;
        r.skip("rsvd0", 2)?;
        r.skip("rsvd1", 4)?;
        let ver_data = r.array("ver_data")?;
        Ok(Self { image_type, offset, pad_size, image_size, cksum, entry_point, optype, ver_data })
    }
}

/// The two layouts of the flash directory (ufi-firmware.md §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DirectoryLayout {
    /// `flash_section_info` (BE3, Skyhawk): 2240 bytes, 160-byte header, entries at 0xC0.
    #[doc(alias = "flash_section_info")]
    G3,
    /// `flash_section_info_g2` (BE2): 2256 bytes, 176-byte header, entries at 0xD0.
    #[doc(alias = "flash_section_info_g2")]
    G2,
}

impl DirectoryLayout {
    /// Size of the section header.
    pub fn header_len(self) -> usize {
        match self {
            Self::G3 => 160,
            Self::G2 => 176,
        }
    }

    /// Size of the whole directory: cookie, header and 32 entries.
    pub fn size(self) -> usize {
        super::COOKIE_LEN + self.header_len() + super::MAX_ENTRIES * SectionEntry::LEN
    }

    /// Offset of the first entry from the cookie.
    pub fn entries_offset(self) -> usize {
        super::COOKIE_LEN + self.header_len()
    }
}

/// The section header after the cookie (`flash_section_hdr`, `flash_section_hdr_g2`;
/// ufi-firmware.md §2.3).
#[doc(alias = "flash_section_hdr")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionHeader {
    /// `format_rev` @0x00.
    pub format_rev: u32,
    /// `cksum` @0x04 (not checked by the drivers).
    pub cksum: u32,
    /// `antidote` @0x08 (not checked by the drivers).
    pub antidote: u32,
    /// The word @0x0C: `num_images` in the g3 layout, the number of entries the Skyhawk walk
    /// visits. In the g2 layout this word is `build_num` (the BE2 walk looks at all 32 slots).
    pub num_images: u32,
    /// `id_string` @0x10.
    pub id_string: [u8; 128],
}

impl SectionHeader {
    /// A header for `num_images` entries with `id` as its id string.
    pub fn new(num_images: u32, id: &str) -> Self {
        Self { format_rev: 0, cksum: 0, antidote: 0, num_images, id_string: c_string(id) }
    }

    /// `id_string` as a string.
    pub fn id(&self) -> String {
        decode_c_string(&self.id_string)
    }

    /// Encodes the header in `layout` at the writer's position.
    pub fn encode(&self, w: &mut Writer<'_>, layout: DirectoryLayout) -> Result<(), WireError> {
        w.u32("format_rev", self.format_rev)?;
        w.u32("cksum", self.cksum)?;
        w.u32("antidote", self.antidote)?;
        w.u32(if layout == DirectoryLayout::G3 { "num_images" } else { "build_num" }, self.num_images)?;
        w.bytes("id_string", &self.id_string)?;
        w.zeros("rsvd", layout.header_len() - 0x90)
    }

    /// Decodes a header in `layout` from the reader's position.
    pub fn decode(r: &mut Reader<'_>, layout: DirectoryLayout) -> Result<Self, WireError> {
        let format_rev = r.u32("format_rev")?;
        let cksum = r.u32("cksum")?;
        let antidote = r.u32("antidote")?;
        let num_images = r.u32(if layout == DirectoryLayout::G3 { "num_images" } else { "build_num" })?;
        let id_string = r.array("id_string")?;
        r.skip("rsvd", layout.header_len() - 0x90)?;
        Ok(Self { format_rev, cksum, antidote, num_images, id_string })
    }
}
