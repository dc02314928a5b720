//! The flash walk against a misbehaving or interrupted emulated adapter: a wrong CRC trailer
//! (0x4D) changes nothing, signature refusals, a failing flash part, a stop between sections and
//! a power loss in mid-section both leave the adapter bootable, and a rerun completes the flash.

use std::cell::Cell;

use oce_emulator::{Emulator, FaultSpec};
use oce_firmware::dir::ImageType;
use oce_firmware::flash::{FlashObserver, NoProgress, Outcome, Policy, SectionOutcome};
use oce_firmware::{FlashError, ImageBuilder, UfiImage};
use oce_mailbox::commands::GetFwVersion;
use oce_mailbox::{AdditionalStatus, BaseStatus};
use oce_tests::{flash_bin, flash_file, fresh_emulator, host, write_flashrom_count};

const NEW: &str = "11.2.1.0";
const FACTORY: &str = "11.1.172.23";

fn versions(emu: &Emulator) -> (String, String) {
    let v = host(emu).execute(&GetFwVersion).unwrap();
    (v.running, v.on_flash)
}

#[test]
fn a_wrong_crc_trailer_is_refused_by_the_adapter_and_nothing_changes() {
    let (_dir, emu) = fresh_emulator();
    let before = flash_bin(&emu);
    let mut mbox = host(&emu);
    let file = ImageBuilder::new(NEW).corrupt_crc(ImageType::FirmwareIscsi).build().unwrap();
    let err = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap_err();
    let FlashError::CrcMismatch { section } = &err else { panic!("{err:?}") };
    assert_eq!(section.image_type, ImageType::FirmwareIscsi);
    assert!(err.to_string().contains("CRC wrong after transfer; nothing of it was written"), "{err}");
    let last = emu.events().into_iter().rev().find_map(|e| match e {
        oce_emulator::Event::Command { opcode: 7, status, .. } => Some(status),
        _ => None,
    });
    assert_eq!(last.map(|s| s.additional), Some(AdditionalStatus::FlashImageCrcMismatch), "the device answered 0x4D");
    assert!(flash_bin(&emu) == before, "flash.bin unchanged");
    assert_eq!(versions(&emu), (FACTORY.to_owned(), FACTORY.to_owned()));
}

#[test]
fn a_bad_section_later_in_the_walk_stops_there_and_the_adapter_still_boots() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let file = ImageBuilder::new(NEW).corrupt_crc(ImageType::FirmwareBackupIscsi).build().unwrap();
    let before = flash_bin(&emu);
    let err = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap_err();
    assert!(
        matches!(&err, FlashError::CrcMismatch { section } if section.image_type == ImageType::FirmwareBackupIscsi)
    );
    let image = UfiImage::parse(&file).unwrap();
    let backup = image.section(ImageType::FirmwareBackupIscsi).unwrap();
    let at = backup.entry.offset as usize;
    let range = at..at + backup.data.len();
    assert!(flash_bin(&emu)[range.clone()] == before[range], "the refused section is untouched");
    mbox.soft_reset().unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().running, FACTORY, "the directory is still the old one");
}

#[test]
fn signature_refusals_are_clear_errors() {
    for (additional, missing) in [(0x57u8, true), (0x56, false)] {
        let (_dir, emu) = fresh_emulator();
        emu.set_fault(FaultSpec::parse(&format!("status=1:7:1:{additional:#x}")).unwrap()).unwrap();
        let mut mbox = host(&emu);
        let err = flash_file(&mut mbox, &ImageBuilder::new(NEW).build().unwrap(), Policy::default(), &mut NoProgress)
            .unwrap_err();
        let expected = if missing { "missing" } else { "invalid" };
        assert!(err.to_string().contains(&format!("digital signature: {expected}")), "{err}");
        match err {
            FlashError::SignatureMissing { section } | FlashError::SignatureInvalid { section } => {
                assert_eq!(section.image_type, ImageType::FirmwareIscsi);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(versions(&emu).1, FACTORY);
    }
}

#[test]
fn a_failing_flash_part_is_a_write_error_with_the_statuses() {
    let (_dir, emu) = fresh_emulator();
    emu.set_fault(FaultSpec::parse("flash-fail-at=20").unwrap()).unwrap();
    let before = flash_bin(&emu);
    let mut mbox = host(&emu);
    let file = ImageBuilder::new(NEW).build().unwrap();
    let err = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap_err();
    // Chunk 20 is the backup section's 4th (the firmware section has 16).
    let FlashError::WriteRejected { section, status } = &err else { panic!("{err:?}") };
    assert_eq!(section.image_type, ImageType::FirmwareBackupIscsi);
    assert_eq!((status.base, status.additional.raw()), (BaseStatus::Failed, 23));
    assert!(err.to_string().contains("0xb0 (backup firmware)"), "{err}");

    // The section before it is complete, the refused one was not committed at all.
    let directory = ImageBuilder::new(NEW).directory();
    let region = |t: ImageType| {
        let e = directory.entry(t).unwrap();
        e.offset as usize..(e.offset + e.pad_size) as usize
    };
    let after = flash_bin(&emu);
    let image = UfiImage::parse(&file).unwrap();
    let new_firmware = image.sections().find(|s| s.entry.image_type == ImageType::FirmwareIscsi).unwrap().data;
    let firmware = region(ImageType::FirmwareIscsi);
    assert!(after[firmware.start..firmware.start + new_firmware.len()] == *new_firmware, "firmware: wholly new");
    let backup = region(ImageType::FirmwareBackupIscsi);
    assert!(after[backup.clone()] == before[backup], "the backup section is wholly old");

    // Once the fault is gone, the same update finishes what is missing.
    emu.clear_fault("flash-fail-at").unwrap();
    let report = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap();
    assert_eq!(report.sections[0].action, Outcome::SkippedSame, "the firmware section is not written again");
    assert_eq!(report.sections[1].action, Outcome::Flashed);
    assert_eq!(report.stored, NEW);
}

/// Stops once `after` sections have been written.
struct StopAfter {
    after: usize,
    written: Cell<usize>,
}

impl FlashObserver for StopAfter {
    fn section_done(&mut self, outcome: &SectionOutcome) {
        if outcome.action == Outcome::Flashed {
            self.written.set(self.written.get() + 1);
        }
    }
    fn should_stop(&self) -> bool {
        self.written.get() >= self.after
    }
}

#[test]
fn a_stopped_flash_leaves_the_adapter_bootable_and_a_rerun_completes_it() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let file = ImageBuilder::new(NEW).build().unwrap();
    let mut stop = StopAfter { after: 2, written: Cell::new(0) };
    let err = flash_file(&mut mbox, &file, Policy::default(), &mut stop).unwrap_err();
    let FlashError::Stopped { flashed, remaining, abandoned: None } = &err else { panic!("{err:?}") };
    let types: Vec<ImageType> = flashed.iter().map(|s| s.image_type).collect();
    assert_eq!(types, [ImageType::FirmwareIscsi, ImageType::FirmwareBackupIscsi]);
    assert_eq!(*remaining, 4);

    // Bootable: a chip reset boots (the new firmware section under the old directory).
    mbox.soft_reset().unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().running, FACTORY);

    let writes = write_flashrom_count(&emu);
    let report = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap();
    let actions: Vec<Outcome> = report.sections.iter().map(|s| s.action).collect();
    assert_eq!(actions[..2], [Outcome::SkippedSame, Outcome::SkippedSame], "the rerun skips what is there");
    assert!(actions[2..].iter().all(|a| *a == Outcome::Flashed));
    assert!(write_flashrom_count(&emu) > writes);
    assert_eq!(report.stored, NEW);
    mbox.soft_reset().unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().running, NEW);
}

#[test]
fn a_power_loss_in_mid_section_leaves_the_adapter_bootable_and_a_rerun_completes_it() {
    let (dir, emu) = fresh_emulator();
    // The adapter dies at the 8th chunk of the firmware section (of 16): staged data is lost.
    emu.set_fault(FaultSpec::parse("power-loss-at=8").unwrap()).unwrap();
    let before = flash_bin(&emu);
    let mut mbox = host(&emu);
    let file = ImageBuilder::new(NEW).build().unwrap();
    let err = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap_err();
    assert!(
        matches!(&err, FlashError::WriteFailed { section, source: oce_mailbox::MailboxError::DeviceGone { .. } }
            if section.image_type == ImageType::FirmwareIscsi),
        "{err:?}"
    );
    drop(mbox);
    assert!(flash_bin(&emu) == before, "nothing was committed");

    // Power comes back (a new process opens the adapter): it boots the old firmware.
    emu.power_cycle().unwrap();
    drop(emu);
    let emu = Emulator::open(&dir.path().join("emu")).unwrap();
    assert_eq!(versions(&emu), (FACTORY.to_owned(), FACTORY.to_owned()));
    let mut mbox = host(&emu);
    let report = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap();
    assert!(report.sections.iter().all(|s| s.action == Outcome::Flashed));
    mbox.soft_reset().unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().running, NEW);
}
