//! Builder tests: the bytes of built images, read back at the spec's offsets.

use super::*;
use crate::crc::check_section;
use crate::dir::{DirectoryLayout, OpType};

const V: &str = "11.1.172.23";

fn section<'a>(file: &'a [u8], base: usize, e: &SectionEntry) -> &'a [u8] {
    &file[base + e.offset as usize..base + e.end() as usize]
}

#[test]
fn small_preset_file_layout() {
    let b = ImageBuilder::new(V);
    let file = b.build().unwrap();
    assert_eq!(b.payload_base(), 176);
    assert_eq!(file.len(), 176 + 0x16_0000);
    // g3 header: sign, file_len @0x38, num_imgs @0x44, build @0x48, asic_type_rev @0x60.
    assert!(file.starts_with(b"ocetool synthetic UFI\0"));
    assert_eq!(u32::from_le_bytes(file[0x38..0x3C].try_into().unwrap()) as usize, file.len());
    assert_eq!(hex::encode(&file[0x44..0x48]), "01000000");
    assert_eq!(&file[0x48..0x48 + 14], b"4 11.1.172.23\0");
    assert_eq!(file[0x60], 0x10);
    // The image header at 128: imageid 1, version.
    assert_eq!(hex::encode(&file[128..132]), "01000000");
    assert_eq!(&file[128 + 16..128 + 16 + V.len()], V.as_bytes());
    // The directory is at P, with the split cookie.
    let found = FlashDirectory::find(&file, 176).unwrap();
    assert_eq!(found.offset, 176);
    let dir = found.directory;
    assert_eq!(dir.cookie, CookieForm::Split);
    assert_eq!(dir.header.num_images, 6);
    let order: Vec<u32> = dir.entries_in_use().map(|(_, e)| e.image_type.raw()).collect();
    assert_eq!(order, [0xA0, 0xB0, 0xE2, 0x20, 0x10, 0xD2], "directory entry last");
    let optypes: Vec<u16> = dir.entries_in_use().map(|(_, e)| e.optype).collect();
    assert_eq!(optypes, [0, 9, 1, 3, 13, 23]);
    assert_eq!(dir.firmware_version().as_deref(), Some(V));
    for (_, e) in dir.entries_in_use() {
        assert_eq!(e.version(), V);
        assert!(check_section(section(&file, 176, e)).unwrap().is_ok(), "CRC of {}", e.image_type);
    }
    let fw = dir.entry(ImageType::FirmwareIscsi).unwrap();
    assert_eq!((fw.offset, fw.pad_size, fw.image_size), (0x4_0000, 0x8_0000, 0x7_FFFC));
    assert!(section(&file, 176, fw).starts_with(b"ocetool synthetic section 0xa0 version 11.1.172.23\n"));
    // Gaps are erased flash.
    assert!(file[176 + 0x1000..176 + 0x1_0000].iter().all(|&b| b == 0xFF));
    // The payload alone is what the emulator writes to flash.
    assert_eq!(b.build_flash().unwrap(), &file[176..]);
}

#[test]
fn full_preset_fills_16_mib() {
    let layout = Layout::full();
    layout.validate().unwrap();
    assert_eq!(layout.payload_len(), 16 << 20);
    let mut ends: Vec<_> = layout.sections.iter().map(|s| (s.offset, s.end())).collect();
    ends.sort();
    assert!(ends.windows(2).all(|w| u64::from(w[1].0) == w[0].1), "sections are contiguous");
}

#[test]
fn pxe_section_holds_an_option_rom() {
    let file = ImageBuilder::new(V).build().unwrap();
    let dir = FlashDirectory::find(&file, 176).unwrap().directory;
    let pxe = dir.entry(ImageType::OptionRomPxe).unwrap();
    let data = section(&file, 176, pxe);
    assert_eq!(&data[..2], &[0x55, 0xAA]);
    assert_eq!(&data[0x1C..0x20], b"PCIR");
    assert_eq!(pxe.image_size as usize, rom::option_rom_len());
    // Code revision 11.1 → 0x0b01 at PCIR + 0x12.
    assert_eq!(hex::encode(&data[0x1C + 0x12..0x1C + 0x14]), "010b");
}

#[test]
fn deterministic_and_versions_differ_in_every_section() {
    let a = ImageBuilder::new(V).build().unwrap();
    assert_eq!(a, ImageBuilder::new(V).build().unwrap());
    let b = ImageBuilder::new("11.1.172.24").build().unwrap();
    let dir = FlashDirectory::find(&a, 176).unwrap().directory;
    for (_, e) in dir.entries_in_use() {
        let (sa, sb) = (section(&a, 176, e), section(&b, 176, e));
        assert_ne!(sa[sa.len() - 4..], sb[sb.len() - 4..], "trailer of {}", e.image_type);
    }
}

#[test]
fn defect_knobs_change_what_they_say() {
    let file = ImageBuilder::new(V).chip_char(b'3').asic_type_rev(0x0F).build().unwrap();
    assert_eq!((file[0x48], file[0x60]), (b'3', 0x0F));

    let file = ImageBuilder::new(V).cookie(None).build().unwrap();
    assert!(matches!(FlashDirectory::find(&file, 176), Err(ImageError::NoCookie { base: 176, .. })));
    assert!(file[176..208].iter().all(|&b| b == 0));

    let file = ImageBuilder::new(V).cookie(Some(CookieForm::Contiguous)).build().unwrap();
    assert_eq!(FlashDirectory::find(&file, 176).unwrap().directory.cookie, CookieForm::Contiguous);

    let file = ImageBuilder::new(V).corrupt_crc(ImageType::BootCode).build().unwrap();
    let dir = FlashDirectory::find(&file, 176).unwrap().directory;
    for (_, e) in dir.entries_in_use() {
        let ok = check_section(section(&file, 176, e)).unwrap().is_ok();
        assert_eq!(ok, e.image_type != ImageType::BootCode);
    }

    let file = ImageBuilder::new(V).num_images_field(33).build().unwrap();
    assert_eq!(hex::encode(&file[176 + 0x2C..176 + 0x30]), "21000000");

    let file = ImageBuilder::new(V).num_imgs_field(0x0FFF_FFFF).build().unwrap();
    assert_eq!(hex::encode(&file[0x44..0x48]), "ffffff0f");

    let file = ImageBuilder::new(V).truncate(1000).build().unwrap();
    assert_eq!(file.len(), 1000);

    let b = ImageBuilder::new(V).patch_entry(ImageType::Ncsi, EntryPatch::PastEof);
    let file = b.build().unwrap();
    let ncsi = FlashDirectory::find(&file, 176).unwrap().directory.entry(ImageType::Ncsi).unwrap().clone();
    assert_eq!(176 + ncsi.end(), file.len() as u64 + 4096);

    let file = ImageBuilder::new(V).old_image_optypes(true).build().unwrap();
    let dir = FlashDirectory::find(&file, 176).unwrap().directory;
    assert!(dir.entries_in_use().all(|(_, e)| e.is_old_image()));
    assert_eq!(dir.entry(ImageType::UfiDir).unwrap().effective_optype(), Some(OpType::UfiDir));

    let b = ImageBuilder::new(V).image_ids(vec![0, 2, 1]);
    let file = b.build().unwrap();
    assert_eq!(b.payload_base(), 128 + 3 * 48);
    assert_eq!(FlashDirectory::find_with_layout(&file, 272, DirectoryLayout::G3).unwrap().offset, 272);
}

#[test]
fn invalid_versions_and_layouts_are_refused() {
    for v in ["", "1.2.3.4.5.6.7.8.9.10.11", "11.1 172", "é"] {
        assert!(matches!(ImageBuilder::new(v).build(), Err(ImageError::InvalidVersion { .. })), "{v:?}");
    }
    assert!(ImageBuilder::new("123456789012345678901").build().is_ok(), "21 characters fit");
    let mut layout = Layout::small();
    layout.sections[0].offset = 0x4_0001; // firmware now overlaps the backup
    let err = ImageBuilder::new(V).layout(layout).build().unwrap_err();
    assert!(matches!(err, ImageError::InvalidLayout { reason: "the section overlaps an earlier one", .. }));
    let mut layout = Layout::small();
    layout.sections.retain(|s| s.image_type != ImageType::UfiDir);
    assert!(matches!(ImageBuilder::new(V).layout(layout).build(), Err(ImageError::InvalidLayout { .. })));
    let mut layout = Layout::small();
    layout.sections[0].offset = FLASH_SIZE - 4;
    assert!(matches!(
        ImageBuilder::new(V).layout(layout).build(),
        Err(ImageError::InvalidLayout { reason: "the section ends past the 16 MiB flash", .. })
    ));
    let mut layout = Layout::small();
    layout.sections[3].pad_size = 100; // PXE: the ROM does not fit
    assert!(matches!(ImageBuilder::new(V).layout(layout).build(), Err(ImageError::InvalidLayout { .. })));
}
