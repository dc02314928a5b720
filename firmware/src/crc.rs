//! The section CRC model ocetool and its emulator use (design.md §6).
//!
//! The real algorithm is not public (ufi-firmware.md §8). What is known: each padded section
//! carries its expected CRC in its **last 4 bytes**, which the drivers compare byte for byte with
//! what READ_FLASHROM REPORT returns (ufi-firmware.md §3.4). The model: those 4 bytes are the
//! CRC-32/ISO-HDLC (zlib's `crc32`) of the section's first `pad_size − 4` bytes, little-endian.

use crate::error::ImageError;

/// Length of the CRC trailer at the end of every section.
pub const TRAILER_LEN: usize = 4;

/// CRC-32/ISO-HDLC of `data` (zlib's `crc32`, polynomial 0x04C11DB7 reflected).
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// The result of checking one section against the CRC model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrcCheck {
    /// The trailer as stored (the last 4 bytes, read little-endian).
    pub stored: u32,
    /// The CRC of the bytes before the trailer.
    pub computed: u32,
}

impl CrcCheck {
    /// True when the trailer matches the model.
    pub fn is_ok(&self) -> bool {
        self.stored == self.computed
    }
}

/// Splits a section into its body and its 4-byte trailer; `None` if it is shorter than 4 bytes.
pub fn split_trailer(section: &[u8]) -> Option<(&[u8], [u8; TRAILER_LEN])> {
    let body_len = section.len().checked_sub(TRAILER_LEN)?;
    let (body, trailer) = section.split_at(body_len);
    let mut raw = [0u8; TRAILER_LEN];
    raw.copy_from_slice(trailer);
    Some((body, raw))
}

/// The trailer stored at the end of `section`, as raw bytes (what REPORT returns and what the
/// drivers compare); `None` if the section is shorter than 4 bytes.
pub fn stored_trailer(section: &[u8]) -> Option<[u8; TRAILER_LEN]> {
    split_trailer(section).map(|(_, t)| t)
}

/// Checks `section` (a whole `pad_size` region) against the model, in one pass over its bytes;
/// `None` if it is shorter than 4 bytes.
pub fn check_section(section: &[u8]) -> Option<CrcCheck> {
    let (body, trailer) = split_trailer(section)?;
    Some(CrcCheck { stored: u32::from_le_bytes(trailer), computed: crc32(body) })
}

/// The trailer the model expects for `section`'s body (its first `len − 4` bytes).
pub fn expected_trailer(section: &[u8]) -> Result<[u8; TRAILER_LEN], ImageError> {
    let (body, _) = split_trailer(section).ok_or(ImageError::CrcRegionTooShort { len: section.len() })?;
    Ok(crc32(body).to_le_bytes())
}

/// Writes the model's trailer into the last 4 bytes of `section`; returns the CRC.
pub fn stamp_trailer(section: &mut [u8]) -> Result<u32, ImageError> {
    let trailer = expected_trailer(section)?;
    let len = section.len();
    section[len - TRAILER_LEN..].copy_from_slice(&trailer);
    Ok(u32::from_le_bytes(trailer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_iso_hdlc() {
        // The CRC-32/ISO-HDLC check value ("123456789" → 0xCBF43926) and zlib's crc32("") = 0.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn stamp_then_check_little_endian() {
        let mut section = *b"123456789\0\0\0\0";
        assert_eq!(stamp_trailer(&mut section).unwrap(), 0xCBF4_3926);
        assert_eq!(&section[9..], &[0x26, 0x39, 0xF4, 0xCB]);
        let check = check_section(&section).unwrap();
        assert!(check.is_ok());
        assert_eq!(stored_trailer(&section), Some([0x26, 0x39, 0xF4, 0xCB]));
        section[0] ^= 1;
        let bad = check_section(&section).unwrap();
        assert!(!bad.is_ok());
        assert_eq!(bad.stored, 0xCBF4_3926);
    }

    #[test]
    fn short_regions() {
        assert_eq!(check_section(&[1, 2, 3]), None);
        let mut four = [9u8; 4];
        assert_eq!(stamp_trailer(&mut four).unwrap(), 0);
        assert_eq!(four, [0; 4]);
        assert!(matches!(stamp_trailer(&mut [0u8; 3]), Err(ImageError::CrcRegionTooShort { len: 3 })));
    }
}
