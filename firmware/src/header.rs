//! The UFI file headers (`flash_file_hdr_g3`, `flash_file_hdr_g2`) and the 48-byte image headers
//! that follow them (ufi-firmware.md §1.2–§1.4).

use oce_mailbox::wire::{Reader, Wire, WireError, Writer, decode_c_string};

use crate::error::ImageError;

/// Offset of `num_imgs`, the same in both header generations (ufi-firmware.md §1.3).
pub const NUM_IMGS_OFFSET: usize = 0x44;
/// Offset of `build`, the same in both header generations.
pub const BUILD_OFFSET: usize = 0x48;
/// Length of `build`.
pub const BUILD_LEN: usize = 24;
/// `build[0]` of a BE2 image, whose file uses the g2 header.
#[doc(alias = "BLD_STR_UFI_TYPE_BE2")]
pub const BUILD_CHAR_BE2: u8 = b'2';

/// `flash_file_hdr_g3` (BE3, Skyhawk): 128 bytes (ufi-firmware.md §1.2).
#[doc(alias = "flash_file_hdr_g3")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeaderG3 {
    /// `sign` @0x00 (not checked by the drivers).
    pub sign: [u8; 52],
    /// `ufi_version` @0x34 (not checked).
    pub ufi_version: [u8; 4],
    /// `file_len` @0x38 (not checked).
    pub file_len: u32,
    /// `cksum` @0x3C (not checked).
    pub cksum: u32,
    /// `antidote` @0x40 (not checked).
    pub antidote: u32,
    /// `num_imgs` @0x44: image headers following this header.
    pub num_imgs: u32,
    /// `build` @0x48: chip character, a separator, then the version string.
    pub build: [u8; BUILD_LEN],
    /// `asic_type_rev` @0x60: the ASIC revision the image targets.
    pub asic_type_rev: u8,
}

impl FileHeaderG3 {
    /// Encoded size.
    pub const LEN: usize = 128;
}

impl Wire for FileHeaderG3 {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.bytes("sign", &self.sign)?;
        w.bytes("ufi_version", &self.ufi_version)?;
        w.u32("file_len", self.file_len)?;
        w.u32("cksum", self.cksum)?;
        w.u32("antidote", self.antidote)?;
        w.u32("num_imgs", self.num_imgs)?;
        w.bytes("build", &self.build)?;
        w.u8("asic_type_rev", self.asic_type_rev)?;
        w.zeros("rsvd", 31)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let sign = r.array("sign")?;
        let ufi_version = r.array("ufi_version")?;
        let file_len = r.u32("file_len")?;
        let cksum = r.u32("cksum")?;
        let antidote = r.u32("antidote")?;
        let num_imgs = r.u32("num_imgs")?;
        let build = r.array("build")?;
        let asic_type_rev = r.u8("asic_type_rev")?;
        r.skip("rsvd", 31)?;
        Ok(Self { sign, ufi_version, file_len, cksum, antidote, num_imgs, build, asic_type_rev })
    }
}

/// `flash_file_hdr_g2` (BE2): 96 bytes (ufi-firmware.md §1.3).
#[doc(alias = "flash_file_hdr_g2")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeaderG2 {
    /// `sign` @0x00.
    pub sign: [u8; 32],
    /// `cksum` @0x20.
    pub cksum: u32,
    /// `antidote` @0x24.
    pub antidote: u32,
    /// `cont_id` @0x28: vendor, device, subvendor, subdevice.
    pub cont_id: [u32; 4],
    /// `file_len` @0x38.
    pub file_len: u32,
    /// `chunk_num` @0x3C.
    pub chunk_num: u32,
    /// `total_chunks` @0x40.
    pub total_chunks: u32,
    /// `num_imgs` @0x44 (ignored by the drivers for BE2).
    pub num_imgs: u32,
    /// `build` @0x48.
    pub build: [u8; BUILD_LEN],
}

impl FileHeaderG2 {
    /// Encoded size.
    pub const LEN: usize = 96;
}

impl Wire for FileHeaderG2 {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.bytes("sign", &self.sign)?;
        w.u32("cksum", self.cksum)?;
        w.u32("antidote", self.antidote)?;
        for (field, v) in
            ["cont_id.vendor", "cont_id.device", "cont_id.subvendor", "cont_id.subdevice"].into_iter().zip(self.cont_id)
        {
            w.u32(field, v)?;
        }
        w.u32("file_len", self.file_len)?;
        w.u32("chunk_num", self.chunk_num)?;
        w.u32("total_chunks", self.total_chunks)?;
        w.u32("num_imgs", self.num_imgs)?;
        w.bytes("build", &self.build)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let sign = r.array("sign")?;
        let cksum = r.u32("cksum")?;
        let antidote = r.u32("antidote")?;
        let cont_id = [
            r.u32("cont_id.vendor")?,
            r.u32("cont_id.device")?,
            r.u32("cont_id.subvendor")?,
            r.u32("cont_id.subdevice")?,
        ];
        let file_len = r.u32("file_len")?;
        let chunk_num = r.u32("chunk_num")?;
        let total_chunks = r.u32("total_chunks")?;
        let num_imgs = r.u32("num_imgs")?;
        let build = r.array("build")?;
        Ok(Self { sign, cksum, antidote, cont_id, file_len, chunk_num, total_chunks, num_imgs, build })
    }
}

/// A UFI file header of either generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileHeader {
    /// BE3 / Skyhawk (128 bytes).
    G3(FileHeaderG3),
    /// BE2 (96 bytes).
    G2(FileHeaderG2),
}

impl FileHeader {
    /// Parses the header at the start of `bytes`. The generation follows `build[0]`: `'2'` (BE2)
    /// means the 96-byte g2 header, anything else the 128-byte g3 header. `num_imgs` and `build`
    /// sit at the same offsets in both, so `build[0]` can be read first.
    pub fn parse(bytes: &[u8]) -> Result<Self, ImageError> {
        if bytes.is_empty() {
            return Err(ImageError::Empty);
        }
        let chip_char = Reader::at(bytes, BUILD_OFFSET).u8("build")?;
        let mut r = Reader::new(bytes);
        Ok(if chip_char == BUILD_CHAR_BE2 {
            Self::G2(FileHeaderG2::decode(&mut r)?)
        } else {
            Self::G3(FileHeaderG3::decode(&mut r)?)
        })
    }

    /// The header's size (also where the image headers start in a g3 file).
    pub fn len(&self) -> usize {
        match self {
            Self::G3(_) => FileHeaderG3::LEN,
            Self::G2(_) => FileHeaderG2::LEN,
        }
    }

    /// Never true: a header has a fixed, non-zero size.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// `"g3"` or `"g2"`.
    pub fn generation(&self) -> &'static str {
        match self {
            Self::G3(_) => "g3",
            Self::G2(_) => "g2",
        }
    }

    /// `num_imgs`.
    pub fn num_imgs(&self) -> u32 {
        match self {
            Self::G3(h) => h.num_imgs,
            Self::G2(h) => h.num_imgs,
        }
    }

    /// The raw `build` field.
    pub fn build(&self) -> &[u8; BUILD_LEN] {
        match self {
            Self::G3(h) => &h.build,
            Self::G2(h) => &h.build,
        }
    }

    /// `build` as a string (up to its first NUL).
    pub fn build_string(&self) -> String {
        decode_c_string(self.build())
    }

    /// `build[0]`, the chip generation character.
    pub fn chip_char(&self) -> u8 {
        self.build()[0]
    }

    /// The version string: `build` from byte 2, as FreeBSD prints it (ufi-firmware.md §1.2).
    pub fn version(&self) -> String {
        decode_c_string(&self.build()[2..])
    }

    /// `file_len` as the header states it.
    pub fn file_len(&self) -> u32 {
        match self {
            Self::G3(h) => h.file_len,
            Self::G2(h) => h.file_len,
        }
    }

    /// `asic_type_rev` (g3 only; the g2 header has no such field).
    pub fn asic_type_rev(&self) -> Option<u8> {
        match self {
            Self::G3(h) => Some(h.asic_type_rev),
            Self::G2(_) => None,
        }
    }

    /// Where the image header table ends and the payload begins, P (ufi-firmware.md §1.1):
    /// g3 `128 + 48·num_imgs` (as u64, so no overflow), g2 96.
    pub fn payload_base(&self) -> u64 {
        match self {
            Self::G3(h) => FileHeaderG3::LEN as u64 + ImageHeader::LEN as u64 * u64::from(h.num_imgs),
            Self::G2(_) => FileHeaderG2::LEN as u64,
        }
    }
}

/// One 48-byte `image_hdr` (ufi-firmware.md §1.4).
#[doc(alias = "image_hdr")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageHeader {
    /// `imageid` @0x00: only 1 makes the drivers flash.
    pub imageid: u32,
    /// `imageoffset` @0x04 (unused by the drivers).
    pub imageoffset: u32,
    /// `imagelength` @0x08 (unused).
    pub imagelength: u32,
    /// `image_checksum` @0x0C (unused).
    pub image_checksum: u32,
    /// `image_version` @0x10 (unused).
    pub image_version: [u8; 32],
}

impl ImageHeader {
    /// Encoded size.
    pub const LEN: usize = 48;
    /// The `imageid` that triggers flashing on BE3/Skyhawk.
    pub const FLASHABLE_ID: u32 = 1;

    /// `image_version` as a string.
    pub fn version(&self) -> String {
        decode_c_string(&self.image_version)
    }
}

impl Wire for ImageHeader {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("imageid", self.imageid)?;
        w.u32("imageoffset", self.imageoffset)?;
        w.u32("imagelength", self.imagelength)?;
        w.u32("image_checksum", self.image_checksum)?;
        w.bytes("image_version", &self.image_version)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let imageid = r.u32("imageid")?;
        let imageoffset = r.u32("imageoffset")?;
        let imagelength = r.u32("imagelength")?;
        let image_checksum = r.u32("image_checksum")?;
        let image_version = r.array("image_version")?;
        Ok(Self { imageid, imageoffset, imagelength, image_checksum, image_version })
    }
}

/// The image headers of the file `bytes` whose header is `header`, decoded one by one: g3 files
/// have `num_imgs` of them after the 128-byte header (the iterator stops at the end of `bytes`);
/// g2 files have none that the drivers read (ufi-firmware.md §1.1).
pub fn image_headers<'b>(bytes: &'b [u8], header: &FileHeader) -> impl Iterator<Item = ImageHeader> + 'b {
    let count = match header {
        FileHeader::G3(h) => h.num_imgs as usize,
        FileHeader::G2(_) => 0,
    };
    let start = header.len();
    (0..count).map_while(move |i| ImageHeader::decode(&mut Reader::at(bytes, start + i * ImageHeader::LEN)).ok())
}

/// Copies `s` into a NUL-padded fixed field, cut so at least one NUL remains.
pub(crate) fn c_string<const N: usize>(s: &str) -> [u8; N] {
    let mut out = [0u8; N];
    let n = s.len().min(N.saturating_sub(1));
    out[..n].copy_from_slice(&s.as_bytes()[..n]);
    out
}

#[cfg(test)]
mod tests;
