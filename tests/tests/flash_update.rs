//! End to end: the library's flash walk against the emulated adapter's flash
//! model — a new version flashes, the CRC skip makes a second run write nothing, the fallback to
//! op-type mode, and the versions before and after a reset.

use oce_emulator::FaultSpec;
use oce_firmware::dir::ImageType;
use oce_firmware::flash::{self, FlashMode, NoProgress, Outcome, Policy, VersionChange};
use oce_firmware::{ImageBuilder, UfiImage};
use oce_mailbox::commands::GetFwVersion;
use oce_tests::{flash_bin, flash_file, fresh_emulator, host, write_flashrom_count};

/// Newer than the emulator's factory firmware (11.1.172.23).
const NEW: &str = "11.2.1.0";

#[test]
fn a_new_version_flashes_and_runs_after_a_reset() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let before = mbox.execute(&GetFwVersion).unwrap();
    assert_ne!(before.on_flash, NEW);

    let file = ImageBuilder::new(NEW).build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let adapter = flash::read_adapter(&mut mbox, &image).unwrap();
    assert_eq!((adapter.chip, adapter.asic_rev), (oce_pci::Chip::Skyhawk, 0x10));
    let plan = flash::plan(&image, &adapter, Policy::default()).unwrap();
    assert_eq!(plan.version_change, VersionChange::Upgrade);
    let report = flash::flash_ufi(&mut mbox, &image, &plan, &mut NoProgress).unwrap();

    assert!(report.changed && !report.fell_back);
    assert_eq!(report.mode, FlashMode::Offset);
    let listed: Vec<(u32, Outcome)> = report.sections.iter().map(|s| (s.section.image_type.raw(), s.action)).collect();
    assert_eq!(
        listed,
        [0xA0, 0xB0, 0xE2, 0x20, 0x10, 0xD2].map(|t| (t, Outcome::Flashed)),
        "every section listed in walk order"
    );
    assert_eq!((report.running.as_str(), report.stored.as_str()), (before.running.as_str(), NEW));
    assert!(report.reset_required);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["sections"][0]["type"], 0xA0);
    assert_eq!(json["sections"][0]["action"], "flashed");
    assert_eq!(json["sections"][0]["bytes"], 0x80000);

    // What GET_FW_VERSION says now, and after a chip reset.
    let now = mbox.execute(&GetFwVersion).unwrap();
    assert_eq!((now.running, now.on_flash), (before.running, NEW.to_owned()));
    mbox.soft_reset().unwrap();
    let after = mbox.execute(&GetFwVersion).unwrap();
    assert_eq!((after.running.as_str(), after.on_flash.as_str()), (NEW, NEW));

    // flash.bin holds the image's payload byte for byte.
    let payload = &file[image.payload_base()..];
    assert_eq!(&flash_bin(&emu)[..payload.len()], payload);
}

#[test]
fn a_second_flash_of_the_same_image_sends_no_write_flashrom() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let file = ImageBuilder::new(NEW).build().unwrap();
    flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap();
    let writes = write_flashrom_count(&emu);
    assert!(writes > 0);

    let image = UfiImage::parse(&file).unwrap();
    let plan = flash::plan(&image, &flash::read_adapter(&mut mbox, &image).unwrap(), Policy::default()).unwrap();
    assert_eq!(plan.version_change, VersionChange::Same);
    let report = flash::flash_ufi(&mut mbox, &image, &plan, &mut NoProgress).unwrap();
    assert!(!report.changed);
    assert!(report.sections.iter().all(|s| s.action == Outcome::SkippedSame), "{:?}", report.sections);
    assert_eq!(write_flashrom_count(&emu), writes, "no WRITE_FLASHROM the second time");

    // force rewrites everything.
    let before = write_flashrom_count(&emu);
    let forced = Policy { allow_downgrade: false, force: true };
    let report = flash_file(&mut mbox, &file, forced, &mut NoProgress).unwrap();
    assert!(report.changed && report.sections.iter().all(|s| s.action == Outcome::Flashed));
    assert_eq!(write_flashrom_count(&emu) - before, writes);
}

#[test]
fn a_dry_run_shows_what_would_be_written_without_writing() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let file = ImageBuilder::new(NEW).build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let plan = flash::plan(&image, &flash::read_adapter(&mut mbox, &image).unwrap(), Policy::default()).unwrap();
    assert_eq!(plan.mode, FlashMode::Offset);
    assert!(plan.sections.iter().all(|s| s.action == flash::Action::Flash), "{:?}", plan.sections);
    assert_eq!(plan.safety, flash::Safety::Safe);
    assert_eq!(write_flashrom_count(&emu), 0);
}

#[test]
fn without_offset_mode_the_walk_falls_back_to_op_types() {
    let (_dir, emu) = fresh_emulator();
    emu.set_fault(FaultSpec::parse("no-offset-mode").unwrap()).unwrap();
    let mut mbox = host(&emu);
    let file = ImageBuilder::new(NEW).build().unwrap();
    #[derive(Default)]
    struct Fallbacks(Vec<u32>);
    impl flash::FlashObserver for Fallbacks {
        fn fallback_to_op_types(&mut self, section: flash::SectionRef, status: oce_mailbox::CompletionStatus) {
            assert_eq!(status.base, oce_mailbox::BaseStatus::IllegalField);
            self.0.push(section.image_type.raw());
        }
    }
    let mut seen = Fallbacks::default();
    let report = flash_file(&mut mbox, &file, Policy::default(), &mut seen).unwrap();
    assert!(seen.0.is_empty(), "the plan was made in op-type mode: no fallback in the walk");
    assert!(report.changed);
    assert_eq!(report.mode, FlashMode::OpType);
    assert!(report.sections.iter().all(|s| s.action == Outcome::Flashed));
    assert_eq!(report.stored, NEW);
    mbox.soft_reset().unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().running, NEW);

    // In op-type mode too, the second run only asks for CRCs.
    let writes = write_flashrom_count(&emu);
    let report = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap();
    assert!(!report.changed);
    assert_eq!(report.mode, FlashMode::OpType);
    assert_eq!(write_flashrom_count(&emu), writes);
}

#[test]
fn only_the_section_that_differs_is_written() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let old = ImageBuilder::new(NEW).build().unwrap();
    flash_file(&mut mbox, &old, Policy::default(), &mut NoProgress).unwrap();
    // A rebuilt image of the same version with one section's bytes changed: only the PXE ROM
    // differs, so only it is written (the version is the same, no flag needed).
    let mut new = old.clone();
    let image = UfiImage::parse(&old).unwrap();
    let pxe = image.section(ImageType::OptionRomPxe).unwrap();
    let (start, len) = (pxe.file_offset, pxe.data.len());
    new[start + len - 100] ^= 0x5A;
    oce_firmware::crc::stamp_trailer(&mut new[start..start + len]).unwrap();
    let report = flash_file(&mut mbox, &new, Policy::default(), &mut NoProgress).unwrap();
    let flashed: Vec<u32> = report.flashed().map(|s| s.section.image_type.raw()).collect();
    assert_eq!(flashed, [0x20]);
    assert_eq!(report.bytes_written, len as u64);
}

#[test]
fn a_downgrade_needs_allow_downgrade() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let file = ImageBuilder::new("10.0.0.1").build().unwrap();
    let err = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap_err();
    assert!(matches!(err, oce_firmware::FlashError::Image(oce_firmware::ImageError::Downgrade { .. })), "{err:?}");
    assert_eq!(write_flashrom_count(&emu), 0);
    let report = flash_file(&mut mbox, &file, Policy { allow_downgrade: true, force: false }, &mut NoProgress).unwrap();
    assert_eq!(report.stored, "10.0.0.1");
}
