//! Deterministic section filler: the same version and type always give the same bytes, and two
//! versions give different bytes (so CRC-skip tests see real differences).

use crate::crc::crc32;
use crate::dir::ImageType;

/// A SplitMix64 stream (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
/// 2014; the constants are that generator's).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The seed for a section of `image_type` in an image of `version`.
fn seed(version: &str, image_type: ImageType) -> u64 {
    (u64::from(crc32(version.as_bytes())) << 32) | u64::from(image_type.raw())
}

/// Fills `out` with the pseudo-random stream for (`version`, `image_type`).
pub fn fill(out: &mut [u8], version: &str, image_type: ImageType) {
    let mut rng = SplitMix64(seed(version, image_type));
    let mut chunks = out.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&rng.next().to_le_bytes());
    }
    let tail = chunks.into_remainder();
    let last = rng.next().to_le_bytes();
    tail.copy_from_slice(&last[..tail.len()]);
}

/// Fills a whole section body: a readable tag line, then the stream.
pub fn fill_tagged(out: &mut [u8], version: &str, image_type: ImageType) {
    let tag = format!("ocetool synthetic section {:#04x} version {version}\n", image_type.raw());
    let n = tag.len().min(out.len());
    out[..n].copy_from_slice(&tag.as_bytes()[..n]);
    fill(&mut out[n..], version, image_type);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_version_dependent() {
        let mut a = [0u8; 37];
        let mut b = [0u8; 37];
        fill(&mut a, "1.0.0.0", ImageType::FirmwareIscsi);
        fill(&mut b, "1.0.0.0", ImageType::FirmwareIscsi);
        assert_eq!(a, b);
        fill(&mut b, "1.0.0.1", ImageType::FirmwareIscsi);
        assert_ne!(a, b);
        fill(&mut b, "1.0.0.0", ImageType::FirmwareBackupIscsi);
        assert_ne!(a, b);
        let mut c = [0u8; 80];
        fill_tagged(&mut c, "1.0.0.0", ImageType::FirmwareIscsi);
        assert!(c.starts_with(b"ocetool synthetic section 0xa0 version 1.0.0.0\n"));
    }
}
