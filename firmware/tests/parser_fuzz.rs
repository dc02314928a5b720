//! Untrusted images never panic the parser or the inspect report: random bytes, and valid images
//! with byte flips, truncations and field overwrites aimed at the header, the image-header table,
//! the flash directory and the option ROM, go through `UfiImage::parse`, `inspect`, the walk and
//! the compatibility rules. What parses must keep its promises (sections inside the file).

use std::sync::OnceLock;

use oce_firmware::build::{Layout, SectionSpec};
use oce_firmware::compat::{self, Adapter, Chip};
use oce_firmware::{ImageBuilder, ImageType, UfiImage, inspect, walk};
use proptest::prelude::*;

/// P of the base image (one image header).
const P: usize = 176;
/// Where the directory's entries start in the base image.
const ENTRIES: usize = P + 0xC0;

/// A tiny layout (about 20 KiB) so every case is fast and mutations hit structures often.
fn tiny_layout() -> Layout {
    let s = |ty, offset, size| SectionSpec::new(ty, offset, size);
    Layout {
        sections: vec![
            s(ImageType::FirmwareIscsi, 0x1000, 0x800),
            s(ImageType::FirmwareBackupIscsi, 0x1800, 0x800),
            s(ImageType::BootCode, 0x2000, 0x400),
            s(ImageType::OptionRomPxe, 0x2400, 0xC00),
            s(ImageType::Ncsi, 0x3000, 0x400),
            s(ImageType::UfiDir, 0, 0x1000),
        ],
    }
}

fn base() -> &'static [u8] {
    static BASE: OnceLock<Vec<u8>> = OnceLock::new();
    BASE.get_or_init(|| ImageBuilder::new("11.1.172.23").layout(tiny_layout()).build().expect("valid layout"))
}

/// Offset of the PXE option ROM in the base image.
const ROM: usize = P + 0x2400;

/// Offsets of the u32 fields worth overwriting: header, image header, directory header, and
/// every field of every entry.
fn field_offsets() -> Vec<usize> {
    let mut v = vec![0x38, 0x44, 0x48, 0x60, 128, P + 0x2C, P];
    for i in 0..8 {
        let e = ENTRIES + i * 64;
        v.extend([e, e + 4, e + 8, e + 0x18, e + 0x20]);
    }
    v.extend([ROM + 0x18, ROM + 0x1C + 0x10, ROM + 0x400 + 0x16, ROM + 0x400 + 0x40 + 0x3C]);
    v
}

fn interesting_u32() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(3),
        Just(4),
        Just(32),
        Just(33),
        Just(0xFFFF),
        Just(0x7FFF_FFFF),
        Just(0xFFFF_FFFF),
        Just(0x1000),
        Just(0x4000),
        any::<u32>(),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    /// XOR a byte anywhere in the file.
    Flip(usize, u8),
    /// XOR a byte in the header, the directory or the option ROM.
    FlipHot(usize, u8),
    /// Overwrite one of the interesting u32 fields.
    Field(usize, u32),
    /// Cut the file.
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let len = base().len();
    let fields = field_offsets();
    let hot = prop_oneof![0..P + 0x40, ENTRIES..ENTRIES + 8 * 64, ROM..ROM + 0xA00];
    prop_oneof![
        (0..len, 1..=255u8).prop_map(|(at, x)| Mutation::Flip(at, x)),
        (hot, 1..=255u8).prop_map(|(at, x)| Mutation::FlipHot(at, x)),
        (prop::sample::select(fields), interesting_u32()).prop_map(|(at, v)| Mutation::Field(at, v)),
        (0..=len).prop_map(Mutation::Truncate),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    match *m {
        Mutation::Flip(at, x) | Mutation::FlipHot(at, x) => {
            if let Some(b) = bytes.get_mut(at) {
                *b ^= x;
            }
        }
        Mutation::Field(at, v) => {
            if let Some(slot) = bytes.get_mut(at..at + 4) {
                slot.copy_from_slice(&v.to_le_bytes());
            }
        }
        Mutation::Truncate(len) => bytes.truncate(len),
    }
}

/// Everything a caller might do with untrusted bytes; asserts the parser's promises.
fn exercise(bytes: &[u8]) {
    let report = inspect::inspect(bytes);
    assert_eq!(report.file_len, bytes.len());
    match UfiImage::parse(bytes) {
        Ok(image) => {
            let mut count = 0;
            for s in image.sections() {
                assert_eq!(s.data.len(), s.entry.pad_size as usize);
                assert!(s.file_offset + s.data.len() <= bytes.len());
                count += 1;
            }
            assert_eq!(report.sections.len(), count);
            assert_eq!(walk::walk(&image).count(), count);
            for step in walk::walk(&image) {
                let _ = (step.crc_query_offset(true), step.crc_query_offset(false), step.trailer());
            }
            let _ = image.image_headers().take(100).count();
            let adapter = Adapter::new(Chip::Skyhawk, 0x10);
            let _ = compat::assess(image.target(), adapter);
        }
        Err(err) => {
            assert!(!report.flashable);
            let _ = err.to_string();
        }
    }
    let _ = serde_json::to_string(&report).expect("the report serialises");
}

#[test]
fn the_base_image_is_valid() {
    let report = inspect::inspect(base());
    assert!(report.flashable, "{:?}", report.problems);
    assert_eq!(report.sections.len(), 6);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        exercise(&bytes);
    }

    #[test]
    fn random_bytes_behind_a_valid_header_never_panic(tail in prop::collection::vec(any::<u8>(), 0..4096), n in 0u32..4) {
        let mut bytes = base()[..P].to_vec();
        bytes[0x44..0x48].copy_from_slice(&n.to_le_bytes());
        bytes.extend_from_slice(&tail);
        exercise(&bytes);
    }

    #[test]
    fn mutated_images_never_panic(mutations in prop::collection::vec(mutation(), 1..6)) {
        let mut bytes = base().to_vec();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        exercise(&bytes);
    }
}
