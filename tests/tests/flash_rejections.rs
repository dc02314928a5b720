//! Every image the flash flow must refuse, refused with its typed error before a
//! single WRITE_FLASHROM, with the emulated flash byte for byte unchanged.

use oce_emulator::Emulator;
use oce_firmware::build::EntryPatch;
use oce_firmware::compat::Incompatibility;
use oce_firmware::dir::ImageType;
use oce_firmware::flash::{NoProgress, Policy};
use oce_firmware::{FlashError, ImageBuilder, ImageError};
use oce_tests::{flash_bin, flash_file, fresh_emulator, host, write_flashrom_count};

const NEW: &str = "11.2.1.0";

/// Runs the whole flow on `file` with every policy flag set (none of them may relax these
/// refusals), checks that nothing was written, and returns the error.
fn refused(file: &[u8]) -> FlashError {
    let (_dir, emu) = fresh_emulator();
    let flash_before = flash_bin(&emu);
    let mut mbox = host(&emu);
    let everything = Policy { allow_downgrade: true, force: true };
    let err = flash_file(&mut mbox, file, everything, &mut NoProgress).expect_err("the image must be refused");
    assert_no_change(&emu, &flash_before);
    assert!(!err.to_string().is_empty());
    err
}

fn assert_no_change(emu: &Emulator, flash_before: &[u8]) {
    assert_eq!(write_flashrom_count(emu), 0, "no WRITE_FLASHROM");
    assert!(flash_bin(emu) == flash_before, "flash.bin unchanged");
}

#[test]
fn wrong_chip() {
    let err = refused(&ImageBuilder::new(NEW).chip_char(b'3').build().unwrap());
    assert!(
        matches!(
            err,
            FlashError::Image(ImageError::Incompatible(Incompatibility::WrongChip {
                chip_char: b'3',
                adapter: oce_firmware::Chip::Skyhawk
            }))
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("the image is for be3"), "{err}");
}

#[test]
fn asic_revision_too_low() {
    // The emulated chip is revision 0x10; an A0 image (0x0f) does not suit it (Linux rule).
    let err = refused(&ImageBuilder::new(NEW).asic_type_rev(0x0F).build().unwrap());
    assert!(
        matches!(
            err,
            FlashError::Image(ImageError::Incompatible(Incompatibility::AsicRevisionTooLow {
                image_rev: 0x0F,
                adapter_rev: 0x10
            }))
        ),
        "{err:?}"
    );
}

#[test]
fn no_cookie() {
    let err = refused(&ImageBuilder::new(NEW).cookie(None).build().unwrap());
    assert!(matches!(err, FlashError::Image(ImageError::NoCookie { .. })), "{err:?}");
}

#[test]
fn truncated_file() {
    let err = refused(&ImageBuilder::new(NEW).truncate(100).build().unwrap());
    assert!(matches!(err, FlashError::Image(ImageError::Truncated(_))), "{err:?}");
    let full = ImageBuilder::new(NEW).build().unwrap().len();
    let err = refused(&ImageBuilder::new(NEW).truncate(full - 1000).build().unwrap());
    assert!(matches!(err, FlashError::Image(ImageError::SectionPastEnd { .. })), "{err:?}");
}

#[test]
fn section_past_the_end_of_the_file() {
    let err =
        refused(&ImageBuilder::new(NEW).patch_entry(ImageType::FirmwareIscsi, EntryPatch::PastEof).build().unwrap());
    let FlashError::Image(ImageError::SectionPastEnd { index, end, len, .. }) = err else { panic!("{err:?}") };
    assert_eq!(index, 0);
    assert!(end > len as u64);
}

#[test]
fn huge_num_imgs() {
    let err = refused(&ImageBuilder::new(NEW).num_imgs_field(0x1000_0000).build().unwrap());
    assert!(matches!(err, FlashError::Image(ImageError::ImageHeadersPastEnd { num_imgs: 0x1000_0000, .. })), "{err:?}");
}

#[test]
fn empty_file() {
    let err = refused(&[]);
    assert!(matches!(err, FlashError::Image(ImageError::Empty)), "{err:?}");
}

#[test]
fn more_than_32_directory_entries() {
    let err = refused(&ImageBuilder::new(NEW).num_images_field(33).build().unwrap());
    assert!(matches!(err, FlashError::Image(ImageError::TooManyEntries { num_images: 33, max: 32, .. })), "{err:?}");
}

#[test]
fn a_vf_cannot_read_the_flash_crcs() {
    let dir = tempfile::tempdir().unwrap();
    let options = oce_emulator::CreateOptions { seed: 7, function: oce_emulator::FunctionType::Vf };
    let emu = Emulator::create_with(&dir.path().join("emu"), options).unwrap();
    let flash_before = flash_bin(&emu);
    let mut mbox = host(&emu);
    let err = flash_file(&mut mbox, &ImageBuilder::new(NEW).build().unwrap(), Policy::default(), &mut NoProgress)
        .unwrap_err();
    // The first READ_FLASHROM is the read of the flash directory.
    let FlashError::Device { during, source } = &err else { panic!("{err:?}") };
    assert_eq!(*during, "reading the flash directory");
    assert_eq!(source.status().unwrap().base, oce_mailbox::BaseStatus::UnauthorizedRequest);
    assert_no_change(&emu, &flash_before);
}
