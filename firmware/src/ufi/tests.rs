//! Parser tests: a builder round trip, then every rejection with its exact variant and offsets.

use super::*;
use crate::build::{EntryPatch, ImageBuilder};
use crate::dir::OpType;
use crate::header::{FileHeaderG2, c_string};
use oce_mailbox::wire::{Wire, WireError, Writer};

const V: &str = "11.1.172.23";
/// P of a default built file: 128 + 48.
const P: usize = 176;
/// File offset of entry 0 of a default built file: P + cookie + section header.
const E0: usize = P + 0xC0;

fn build(b: ImageBuilder) -> Vec<u8> {
    b.build().unwrap()
}

#[test]
fn round_trip_builder_to_parser() {
    let file = build(ImageBuilder::new(V));
    let image = UfiImage::parse(&file).unwrap();
    assert_eq!(image.payload_base(), P);
    assert_eq!(image.directory_offset(), P);
    assert_eq!(image.header().generation(), "g3");
    assert_eq!(image.version(), V);
    assert_eq!(image.firmware_version().as_deref(), Some(V));
    assert_eq!(image.problems(), []);
    assert_eq!(image.target(), ImageTarget { chip_char: b'4', asic_type_rev: 0x10 });
    let headers: Vec<_> = image.image_headers().collect();
    assert_eq!(headers.len(), 1);
    assert_eq!((headers[0].imageid, headers[0].version()), (1, V.to_owned()));
    let expected = ImageBuilder::new(V).directory();
    let sections: Vec<_> = image.sections().collect();
    assert_eq!(sections.len(), 6);
    for (s, e) in sections.iter().zip(&expected.entries) {
        assert_eq!(s.entry, e);
        assert_eq!(s.file_offset, P + e.offset as usize);
        assert_eq!(s.data.len(), e.pad_size as usize);
        assert!(s.check_crc().is_ok());
    }
    let pxe = image.section(ImageType::OptionRomPxe).unwrap();
    assert_eq!(&pxe.data[..2], &[0x55, 0xAA]);
    assert_eq!(pxe.trailer(), crate::crc::expected_trailer(pxe.data).unwrap());
}

#[test]
fn walk_lists_sections_with_optypes_in_entry_order() {
    let file = build(ImageBuilder::new(V).patch_entry(ImageType::Ncsi, EntryPatch::Optype(0xFFFF)));
    let image = UfiImage::parse(&file).unwrap();
    let steps: Vec<_> = crate::walk::walk(&image).collect();
    let summary: Vec<_> = steps.iter().map(|s| (s.section.entry.image_type.raw(), s.optype, s.old_image)).collect();
    assert_eq!(
        summary,
        [
            (0xA0, Some(OpType::IscsiActive), false),
            (0xB0, Some(OpType::IscsiBackup), false),
            (0xE2, Some(OpType::Redboot), false),
            (0x20, Some(OpType::PxeBios), false),
            (0x10, Some(OpType::NcsiFw), true),
            (0xD2, Some(OpType::UfiDir), false),
        ]
    );
    assert!(!steps[4].queries_crc() && steps[0].queries_crc());
    // §3.4: REPORT offset = pad_size − 4, plus the flash offset in offset mode.
    assert_eq!(steps[0].crc_query_offset(false), 0x8_0000 - 4);
    assert_eq!(steps[0].crc_query_offset(true), 0x4_0000 + 0x8_0000 - 4);
    assert_eq!(steps[0].trailer(), steps[0].section.data[0x8_0000 - 4..]);
}

#[test]
fn empty_and_truncated_headers() {
    assert!(matches!(UfiImage::parse(&[]), Err(ImageError::Empty)));
    let file = build(ImageBuilder::new(V));
    let err = UfiImage::parse(&file[..100]).unwrap_err();
    assert!(matches!(err, ImageError::Truncated(WireError { field: "rsvd", offset: 0x61, needed: 31, available: 3 })));
}

#[test]
fn huge_num_imgs() {
    for n in [0x0FFF_FFFF, u32::MAX] {
        let file = build(ImageBuilder::new(V).num_imgs_field(n));
        let err = UfiImage::parse(&file).unwrap_err();
        let end = 128 + 48 * u64::from(n);
        assert!(
            matches!(err, ImageError::ImageHeadersPastEnd { num_imgs, end: e, len } if num_imgs == n && e == end && len == file.len()),
            "{err:?}"
        );
    }
}

#[test]
fn no_flashable_image_header() {
    let file = build(ImageBuilder::new(V).image_ids(vec![0, 2]));
    assert!(matches!(UfiImage::parse(&file), Err(ImageError::NoFlashableImage { num_imgs: 2 })));
    let file = build(ImageBuilder::new(V).image_ids(vec![1, 1]));
    let image = UfiImage::parse(&file).unwrap();
    assert_eq!(image.payload_base(), 224);
    assert_eq!(image.problems(), [Problem::SeveralFlashableHeaders { count: 2 }]);
}

#[test]
fn no_cookie_and_truncated_directory() {
    let file = build(ImageBuilder::new(V).cookie(None));
    let err = UfiImage::parse(&file).unwrap_err();
    assert!(matches!(err, ImageError::NoCookie { base: P, len } if len == file.len()));
    let file = build(ImageBuilder::new(V).truncate(P + 2000));
    let err = UfiImage::parse(&file).unwrap_err();
    assert!(matches!(err, ImageError::DirectoryTruncated { offset: P, needed: 2240, available: 2000 }));
    // Only the header table: the scan starts at EOF.
    let file = build(ImageBuilder::new(V).truncate(P));
    assert!(matches!(UfiImage::parse(&file), Err(ImageError::NoCookie { base: P, len: P })));
}

#[test]
fn too_many_and_no_entries() {
    let file = build(ImageBuilder::new(V).num_images_field(33));
    let err = UfiImage::parse(&file).unwrap_err();
    assert!(matches!(err, ImageError::TooManyEntries { offset, num_images: 33, max: 32 } if offset == P + 0x2C));
    let file = build(ImageBuilder::new(V).num_images_field(0));
    assert!(matches!(UfiImage::parse(&file), Err(ImageError::EmptyDirectory { offset: P })));
}

#[test]
fn sections_too_small_or_past_the_end() {
    let file = build(ImageBuilder::new(V).patch_entry(ImageType::FirmwareBackupIscsi, EntryPatch::PadSize(3)));
    let err = UfiImage::parse(&file).unwrap_err();
    assert!(
        matches!(err, ImageError::SectionTooSmall { index: 1, entry_offset, pad_size: 3 } if entry_offset == E0 + 64)
    );

    let file = build(ImageBuilder::new(V).patch_entry(ImageType::Ncsi, EntryPatch::PastEof));
    let err = UfiImage::parse(&file).unwrap_err();
    let (start, end) = ((P + 0x15_0000) as u64, (P + 0x16_0000 + 4096) as u64);
    assert!(
        matches!(err, ImageError::SectionPastEnd { index: 4, entry_offset, start: s, end: e, len }
            if entry_offset == E0 + 4 * 64 && s == start && e == end && len == file.len()),
        "{err:?}"
    );
    // offset + pad_size overflowing u32 is still caught (u64 arithmetic).
    let file = build(
        ImageBuilder::new(V)
            .patch_entry(ImageType::FirmwareIscsi, EntryPatch::Offset(u32::MAX))
            .patch_entry(ImageType::FirmwareIscsi, EntryPatch::PadSize(u32::MAX)),
    );
    let err = UfiImage::parse(&file).unwrap_err();
    assert!(
        matches!(err, ImageError::SectionPastEnd { index: 0, end, .. } if end == P as u64 + 2 * u64::from(u32::MAX))
    );

    // A truncated file: the first entry (firmware, 0x40000..0xC0000) no longer fits.
    let file = build(ImageBuilder::new(V).truncate(P + 0x5_0000));
    let err = UfiImage::parse(&file).unwrap_err();
    assert!(matches!(err, ImageError::SectionPastEnd { index: 0, entry_offset: E0, .. }), "{err:?}");
}

#[test]
fn soft_problems() {
    let file = build(ImageBuilder::new(V).cookie(Some(CookieForm::Contiguous)));
    assert_eq!(UfiImage::parse(&file).unwrap().problems(), [Problem::ContiguousCookie { offset: P }]);

    let file = build(ImageBuilder::new(V).old_image_optypes(true));
    assert_eq!(UfiImage::parse(&file).unwrap().problems(), [Problem::OldImageEntries { count: 6 }]);

    let file = build(ImageBuilder::new(V).patch_entry(ImageType::FirmwareBackupIscsi, EntryPatch::Offset(0x4_1000)));
    let image = UfiImage::parse(&file).unwrap();
    assert_eq!(image.problems(), [Problem::Overlap { first: 0, second: 1 }]);
    assert_eq!(image.problems()[0].severity(), crate::problem::Severity::Warning);

    let mut file = build(ImageBuilder::new(V));
    file.extend_from_slice(&[0; 10]);
    let problems = UfiImage::parse(&file).unwrap().problems().to_vec();
    assert_eq!(problems, [Problem::FileLenMismatch { stated: (file.len() - 10) as u32, actual: file.len() }]);

    let mut dir = ImageBuilder::new(V).directory();
    dir.entries[0].set_version("11.1.172.99");
    let mut file = build(ImageBuilder::new(V));
    dir.encode_into(&mut file[P..]).unwrap();
    assert_eq!(
        UfiImage::parse(&file).unwrap().problems(),
        [Problem::VersionMismatch { build: V.to_owned(), firmware: "11.1.172.99".to_owned() }]
    );

    // Wrong chip parses (the compatibility check decides), but the target says '3'.
    let file = build(ImageBuilder::new(V).chip_char(b'3'));
    assert_eq!(UfiImage::parse(&file).unwrap().target().chip_char, b'3');
}

#[test]
fn unknown_and_duplicate_types() {
    let mut dir = ImageBuilder::new(V).directory();
    dir.entries[1].image_type = ImageType::Unknown(0x77);
    dir.entries[2].image_type = ImageType::FirmwareIscsi;
    let mut file = build(ImageBuilder::new(V));
    dir.encode_into(&mut file[P..]).unwrap();
    let problems = UfiImage::parse(&file).unwrap().problems().to_vec();
    assert_eq!(
        problems,
        [
            Problem::UnknownType { index: 1, raw: 0x77 },
            Problem::DuplicateType { first: 0, second: 2, image_type: ImageType::FirmwareIscsi },
        ],
        "the explicit optype keeps the unknown type flashable"
    );
}

#[test]
fn g2_file() {
    // A BE2 file: 96-byte header, P = 96, g2 directory (entries at 0xD0), one section.
    let mut file = vec![0u8; 96 + 0x1000 + 0x100];
    FileHeaderG2 {
        sign: c_string("x"),
        cksum: 0,
        antidote: 0,
        cont_id: [0; 4],
        file_len: file.len() as u32,
        chunk_num: 0,
        total_chunks: 1,
        num_imgs: 0,
        build: c_string("2 2.102.348.0"),
    }
    .encode(&mut Writer::new(&mut file))
    .unwrap();
    let mut dir = crate::dir::FlashDirectory::new(
        vec![SectionEntry::empty(), SectionEntry::new(ImageType::FirmwareIscsi, 0x1000, 0x100, "2.102.348.0")],
        "be2",
    );
    dir.layout = DirectoryLayout::G2;
    dir.encode_into(&mut file[96..]).unwrap();
    crate::crc::stamp_trailer(&mut file[96 + 0x1000..]).unwrap();
    let image = UfiImage::parse(&file).unwrap();
    assert_eq!(image.header().generation(), "g2");
    assert_eq!(image.payload_base(), 96);
    assert_eq!(image.image_headers().count(), 0);
    let sections: Vec<_> = image.sections().map(|s| (s.index, s.file_offset)).collect();
    assert_eq!(sections, [(1, 96 + 0x1000)]);
    assert_eq!(image.target(), ImageTarget { chip_char: b'2', asic_type_rev: file[0x60] });
}

#[test]
fn parses_through_a_memory_map() {
    let file = build(ImageBuilder::new(V));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("oc14-11.1.172.23.ufi");
    std::fs::write(&path, &file).unwrap();
    let map = map_file(&path).unwrap();
    let image = UfiImage::parse(map.as_slice()).unwrap();
    assert_eq!(image.firmware_version().as_deref(), Some(V));
    assert!(matches!(map_file(&dir.path().join("missing")), Err(ImageError::Io(_))));
}
