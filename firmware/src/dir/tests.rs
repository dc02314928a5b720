//! Golden bytes and scan tests for the flash directory, written from ufi-firmware.md §2.

use super::*;

/// The split cookie, as ufi-firmware.md §2.1 prints it.
const SPLIT_HEX: &str = concat!("2a2a2a20534520464c41530000000000", "48204449524543544f5259202a2a2a20");
/// The contiguous cookie, as ufi-firmware.md §2.1 prints it.
const CONTIGUOUS_HEX: &str = "2a2a2a20534520464c415348204449524543544f5259202a2a2a200000000000";

fn firmware_entry() -> SectionEntry {
    let mut e = SectionEntry::new(ImageType::FirmwareIscsi, 0x0010_0000, 0x0050_0000, "11.1.172.23");
    e.cksum = 0x1122_3344;
    e.entry_point = 0x5566_7788;
    e
}

#[test]
fn cookies_match_the_spec_bytes() {
    assert_eq!(hex::encode(COOKIE_SPLIT), SPLIT_HEX);
    assert_eq!(hex::encode(COOKIE_CONTIGUOUS), CONTIGUOUS_HEX);
    assert_eq!(CookieForm::detect(&COOKIE_SPLIT), Some(CookieForm::Split));
    assert_eq!(CookieForm::detect(&COOKIE_CONTIGUOUS), Some(CookieForm::Contiguous));
    assert_eq!(CookieForm::detect(&COOKIE_SPLIT[..31]), None);
}

#[test]
fn entry_golden_bytes() {
    let mut buf = [0xAAu8; 64];
    firmware_entry().encode(&mut Writer::new(&mut buf)).unwrap();
    let expected = [
        "a0000000",               // 0x00 type 0xA0
        "00001000",               // 0x04 offset 0x100000
        "00005000",               // 0x08 pad_size 0x500000
        "fcff4f00",               // 0x0C image_size 0x4ffffc
        "44332211",               // 0x10 cksum
        "88776655",               // 0x14 entry_point
        "0000",                   // 0x18 optype 0 (OPTYPE_ISCSI_ACTIVE)
        "0000",                   // 0x1A rsvd0
        "00000000",               // 0x1C rsvd1
        "31312e312e3137322e3233", // 0x20 ver_data "11.1.172.23"
    ]
    .concat();
    assert_eq!(hex::encode(&buf[..43]), expected);
    assert!(buf[43..].iter().all(|&b| b == 0));
    let back = SectionEntry::decode(&mut Reader::new(&buf)).unwrap();
    assert_eq!(back, firmware_entry());
    assert_eq!(back.version(), "11.1.172.23");
}

#[test]
fn entry_optype_old_image_and_effective() {
    let mut e = SectionEntry::new(ImageType::BootCode, 0, 8, "1");
    assert_eq!(e.optype, 1);
    assert!(!e.is_old_image());
    e.optype = SectionEntry::OLD_IMAGE_OPTYPE;
    assert!(e.is_old_image());
    assert_eq!(e.effective_optype(), Some(OpType::Redboot));
    let fcoe = SectionEntry::new(ImageType::FirmwareFcoe, 0, 8, "1");
    assert_eq!(fcoe.optype, 0xFFFF);
    assert_eq!(fcoe.effective_optype(), None);
    // An explicit optype wins over the map, even an unknown one.
    e.optype = 0x42;
    assert_eq!(e.effective_optype(), Some(OpType::Unknown(0x42)));
}

#[test]
fn directory_golden_bytes() {
    let mut dir = FlashDirectory::new(vec![firmware_entry()], "ocetool");
    dir.header.format_rev = 0x0102_0304;
    dir.header.cksum = 0xA1A2_A3A4;
    dir.header.antidote = 0xB1B2_B3B4;
    let bytes = dir.encode().unwrap();
    assert_eq!(bytes.len(), 2240);
    assert_eq!(bytes.len(), 0x8C0);
    assert_eq!(hex::encode(&bytes[..0x20]), SPLIT_HEX);
    // fsec_hdr @0x20: format_rev, cksum, antidote, num_images, id_string "ocetool".
    assert_eq!(hex::encode(&bytes[0x20..0x30]), "04030201a4a3a2a1b4b3b2b101000000");
    assert_eq!(&bytes[0x30..0x38], b"ocetool\0");
    assert!(bytes[0x38..0xC0].iter().all(|&b| b == 0), "id_string tail and rsvd are zero");
    // fsec_entry[0] @0xC0, the rest zero.
    assert_eq!(hex::encode(&bytes[0xC0..0xCC]), "a00000000000100000005000");
    assert_eq!(&bytes[0xE0..0xEB], b"11.1.172.23");
    assert!(bytes[0x100..].iter().all(|&b| b == 0));

    let parsed = FlashDirectory::parse_at(&bytes, 0, DirectoryLayout::G3).unwrap();
    assert_eq!(parsed.entries.len(), MAX_ENTRIES);
    assert_eq!(parsed.entries[0], firmware_entry());
    assert_eq!(parsed.header, dir.header);
    assert_eq!(parsed.header.id(), "ocetool");
    assert_eq!(parsed.firmware_version().as_deref(), Some("11.1.172.23"));
    assert_eq!(parsed.entries_in_use().count(), 1);
}

#[test]
fn g2_directory_layout() {
    let mut dir = FlashDirectory::new(vec![SectionEntry::empty(), firmware_entry()], "be2");
    dir.layout = DirectoryLayout::G2;
    dir.header.num_images = 77; // build_num in g2
    let bytes = dir.encode().unwrap();
    assert_eq!(bytes.len(), 2256);
    assert_eq!(hex::encode(&bytes[0x2C..0x30]), "4d000000");
    // 176-byte header: entries start at 0xD0; slot 1 at 0x110.
    assert_eq!(hex::encode(&bytes[0x110..0x114]), "a0000000");
    let parsed = FlashDirectory::parse_at(&bytes, 0, DirectoryLayout::G2).unwrap();
    let used: Vec<_> = parsed.entries_in_use().map(|(i, e)| (i, e.image_type)).collect();
    assert_eq!(used, [(1, ImageType::FirmwareIscsi)]);
}

#[test]
fn too_many_entries_cannot_be_encoded() {
    let dir = FlashDirectory::new(vec![SectionEntry::empty(); 33], "x");
    assert!(matches!(dir.encode(), Err(ImageError::TooManyEntries { num_images: 33, .. })));
}

#[test]
fn num_images_above_32_is_capped_when_walking() {
    let mut dir = FlashDirectory::new(vec![firmware_entry()], "x");
    dir.header.num_images = 1000;
    let parsed = FlashDirectory::parse_at(&dir.encode().unwrap(), 0, DirectoryLayout::G3).unwrap();
    assert_eq!(parsed.entries_in_use().count(), MAX_ENTRIES);
}

#[test]
fn find_scans_in_32_byte_steps_from_base() {
    let dir = FlashDirectory::new(vec![firmware_entry()], "x").encode().unwrap();
    let mut buf = vec![0u8; 100 + 64 + 2240];
    buf[164..].copy_from_slice(&dir);
    let found = FlashDirectory::find(&buf, 100).unwrap();
    assert_eq!(found.offset, 164);
    assert_eq!(found.directory.cookie, CookieForm::Split);
    // A base that puts the cookie off the 32-byte grid does not find it.
    assert!(matches!(FlashDirectory::find(&buf, 116), Err(ImageError::NoCookie { base: 116, .. })));
    assert!(matches!(FlashDirectory::find(&buf, 10_000), Err(ImageError::NoCookie { base: 10_000, .. })));
    // Truncated: the cookie is there, the directory does not fit.
    let err = FlashDirectory::find(&buf[..164 + 2239], 100).unwrap_err();
    assert!(matches!(err, ImageError::DirectoryTruncated { offset: 164, needed: 2240, available: 2239 }));
    assert!(matches!(FlashDirectory::find(&buf[..180], 100), Err(ImageError::NoCookie { .. })));
}

#[test]
fn find_recognises_the_contiguous_cookie() {
    let mut dir = FlashDirectory::new(vec![firmware_entry()], "x");
    dir.cookie = CookieForm::Contiguous;
    let bytes = dir.encode().unwrap();
    assert_eq!(hex::encode(&bytes[..32]), CONTIGUOUS_HEX);
    let found = FlashDirectory::find(&bytes, 0).unwrap();
    assert_eq!(found.directory.cookie, CookieForm::Contiguous);
    assert!(!found.directory.cookie.is_standard());
}
