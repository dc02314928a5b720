//! The walk's decisions (ufi-firmware.md §2.8, §3.3), against the scripted adapter.

use oce_mailbox::commands::{FlashOpType, FlashromOp};
use oce_mailbox::{AdditionalStatus, BaseStatus, MailboxError, MailboxStep};

use super::fake::{Cmd, Fake, status};
use super::{Recorder, on_flash, read_from};
use crate::dir::{ImageType, OpType};
use crate::flash::observer::FlashObserver;
use crate::flash::plan::AdapterState;
use crate::flash::report::FlashReport;
use crate::flash::skyhawk::{self as walk, CHUNK};
use crate::flash::survey;
use crate::flash::target::FlashTarget;
use crate::flash::{Action, FlashMode, FlashPlan, NoProgress, Outcome, Policy, plan};
use crate::ufi::UfiImage;
use crate::{FlashError, ImageBuilder};

const FLASH: usize = 2 << 20;

/// The plan `fw update` makes: the adapter read from `dev`, then planned.
fn plan_for<T: FlashTarget>(dev: &mut T, image: &UfiImage<'_>, policy: Policy) -> Result<FlashPlan, FlashError> {
    plan(image, &read_from(dev, image), policy)
}

/// The whole flow on `dev`: read, plan, run.
fn flash<T: FlashTarget, O: FlashObserver>(
    dev: &mut T,
    image: &UfiImage<'_>,
    policy: Policy,
    obs: &mut O,
) -> Result<FlashReport, FlashError> {
    let (flash, mode, reports) = survey(dev, image)?;
    let adapter = AdapterState { flash, mode, reports, ..on_flash(image, "1.0.0.0") };
    walk::run(dev, image, &plan(image, &adapter, policy)?, obs)
}

fn section_index(image: &UfiImage<'_>, ty: ImageType) -> usize {
    image.section(ty).unwrap().index
}

#[test]
fn a_fresh_flash_writes_every_section_in_32k_chunks_save_then_flash() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image);
    let mut rec = Recorder::default();
    let report = flash(&mut dev, &image, Policy::default(), &mut rec).unwrap();
    assert!(report.changed && !report.fell_back);
    assert_eq!(report.mode, FlashMode::Offset);
    assert!(report.sections.iter().all(|s| s.action == Outcome::Flashed));
    let payload = &file[image.payload_base()..];
    assert_eq!(&dev.flash[..payload.len()], payload, "the flash now holds the image's payload");
    assert_eq!(report.bytes_written, image.sections().map(|s| s.data.len() as u64).sum::<u64>());

    // The firmware section (512 KiB at 0x40000): a REPORT at its last 4 bytes while the plan
    // is made, then 16 chunks.
    let report_at = dev.log.iter().position(|c| *c == Cmd::Crc { op_type: 7, offset: 0x4_0000 + 0x8_0000 - 4 });
    let first_write = dev.log.iter().position(Cmd::is_write);
    assert!(report_at.unwrap() < first_write.unwrap(), "every REPORT comes before the first write");
    let fw: Vec<&Cmd> = dev.log[first_write.unwrap()..].iter().take(16).collect();
    assert_eq!(fw.len(), 16);
    for (i, cmd) in fw.iter().enumerate() {
        let op = if i == 15 { FlashromOp::Flash } else { FlashromOp::Save };
        assert_eq!(**cmd, Cmd::Write { op, op_type: 7, offset: 0x4_0000 + (i * CHUNK) as u32, len: CHUNK });
    }
    // A 4 KiB section is one FLASH chunk.
    let dir = image.section(ImageType::UfiDir).unwrap();
    assert!(dev.log.contains(&Cmd::Write { op: FlashromOp::Flash, op_type: 7, offset: 0, len: dir.data.len() }));
    assert_eq!(dev.log.last(), Some(&Cmd::Versions));
    // Observer: plan, then per section start → sent… → done.
    assert_eq!(rec.events[0], "plan 6");
    assert_eq!(rec.events[1], "start 0xa0 524288");
    assert_eq!(rec.events[2], "sent 0xa0 32768/524288");
    assert_eq!(rec.events[17], "sent 0xa0 524288/524288");
    assert_eq!(rec.events[18], "done 0xa0 Flashed");
}

#[test]
fn a_second_flash_only_asks_for_crcs() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image);
    flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    dev.log.clear();
    let report = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    assert!(!report.changed);
    assert_eq!(report.bytes_written, 0);
    assert!(report.sections.iter().all(|s| s.action == Outcome::SkippedSame));
    assert_eq!(dev.writes(), 0);
    let sections = dev.log.iter().filter(|c| matches!(c, Cmd::Crc { op_type: 7, offset } if *offset > 0x1000)).count();
    assert_eq!(sections, 7, "the boot sections' trailers, then six sections' REPORTs: {:?}", dev.log);
    assert_eq!(dev.log.last(), Some(&Cmd::Versions));

    // force rewrites them all, still asking first.
    dev.log.clear();
    let report = flash(&mut dev, &image, Policy { allow_downgrade: false, force: true }, &mut NoProgress).unwrap();
    assert!(report.changed && report.sections.iter().all(|s| s.action == Outcome::Flashed));
    let asked = dev.log.iter().filter(|c| matches!(c, Cmd::Crc { op_type: 7, offset } if *offset > 0x1000)).count();
    assert_eq!(asked, 7);
}

#[test]
fn only_a_changed_section_is_written() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image);
    flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    let pxe = image.section(ImageType::OptionRomPxe).unwrap();
    let end = pxe.entry.offset as usize + pxe.data.len();
    dev.flash[end - 1] ^= 0xFF; // the stored trailer no longer matches
    dev.log.clear();
    let report = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    let flashed: Vec<ImageType> = report.flashed().map(|s| s.section.image_type).collect();
    assert_eq!(flashed, [ImageType::OptionRomPxe]);
    assert_eq!(report.bytes_written, pxe.data.len() as u64);
}

#[test]
fn no_offset_mode_falls_back_once_and_uses_each_sections_op_type() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image);
    dev.no_offset_mode = true;
    let mut rec = Recorder::default();
    let report = flash(&mut dev, &image, Policy::default(), &mut rec).unwrap();
    // The first REPORT (op type 7) was refused: the plan was made in op-type mode from the start.
    assert!(!report.fell_back && report.changed);
    assert_eq!(report.mode, FlashMode::OpType);
    assert_eq!(rec.events.iter().filter(|e| e.starts_with("fallback")).count(), 0);
    let payload = &file[image.payload_base()..];
    assert_eq!(&dev.flash[..payload.len()], payload);
    // Queries at pad_size − 4 with the firmware op-type 0, writes with offset 0.
    assert!(dev.log.contains(&Cmd::Crc { op_type: 0, offset: 0x8_0000 - 4 }));
    let first_write = dev.log.iter().find(|c| c.is_write());
    assert_eq!(first_write, Some(&Cmd::Write { op: FlashromOp::Save, op_type: 0, offset: 0, len: CHUNK }));
    assert!(!dev.log[1..].iter().any(|c| matches!(c, Cmd::Crc { op_type: 7, .. } | Cmd::Write { op_type: 7, .. })));
}

#[test]
fn an_offset_write_refused_with_illegal_field_falls_back_and_keeps_earlier_sections() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let boot = image.section(ImageType::BootCode).unwrap().entry.offset;
    // Offset mode works until the boot-code section's first write.
    let mut dev = Fake::erased(FLASH, &image).with_hook(move |c| match c {
        Cmd::Write { op_type: 7, offset, .. } if *offset == boot => {
            Some(status(BaseStatus::IllegalField, AdditionalStatus::None))
        }
        _ => None,
    });
    let report = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    assert!(report.fell_back);
    assert!(report.sections.iter().all(|s| s.action == Outcome::Flashed));
    let writes_of =
        |op_type: u32| dev.log.iter().filter(|c| matches!(c, Cmd::Write { op_type: t, .. } if *t == op_type)).count();
    assert_eq!(writes_of(0), 0, "the firmware section written in offset mode is not sent again");
    assert_eq!(writes_of(1), 4, "boot code (128 KiB) in op-type mode");
    let payload = &file[image.payload_base()..];
    assert_eq!(&dev.flash[..payload.len()], payload);
}

#[test]
fn a_refused_query_in_op_type_mode_is_the_flash_incomplete_case() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image).with_hook(|c| {
        matches!(c, Cmd::Crc { op_type: 1, .. }).then(|| status(BaseStatus::IllegalField, AdditionalStatus::None))
    });
    dev.no_offset_mode = true;
    let err = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap_err();
    let FlashError::FlashIncomplete { section, status, flashed } = &err else { panic!("{err:?}") };
    assert_eq!(section.image_type, ImageType::BootCode);
    assert_eq!(status.base, BaseStatus::IllegalField);
    assert!(flashed.is_empty(), "the CRC diff comes before any write");
    assert_eq!(dev.writes(), 0);
    let msg = err.to_string();
    assert!(msg.starts_with("flash incomplete") && msg.contains("reset the adapter and run the update again"), "{msg}");
    assert!(msg.contains("sections written: none"), "{msg}");
}

#[test]
fn other_query_errors_are_typed_and_nothing_is_written() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image)
        .with_hook(|_| Some(status(BaseStatus::UnauthorizedRequest, AdditionalStatus::InsufficientPrivileges)));
    let err = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap_err();
    // The first REPORT is the read of the flash directory.
    let FlashError::Device { during, source } = &err else { panic!("{err:?}") };
    assert_eq!(*during, "reading the flash directory");
    assert_eq!(source.status().unwrap().base, BaseStatus::UnauthorizedRequest);

    // Refused at a section's REPORT only: the CRC diff names the section.
    let fw_trailer = 0x4_0000 + 0x8_0000 - 4;
    let asked = std::cell::Cell::new(0);
    let mut dev = Fake::erased(FLASH, &image).with_hook(move |c| {
        let n = asked.get() + usize::from(*c == Cmd::Crc { op_type: 7, offset: fw_trailer });
        asked.set(n);
        (n == 2).then(|| status(BaseStatus::UnauthorizedRequest, AdditionalStatus::InsufficientPrivileges))
    });
    let err = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap_err();
    let FlashError::CrcQueryFailed { section, source } = &err else { panic!("{err:?}") };
    assert_eq!(section.index, section_index(&image, ImageType::FirmwareIscsi));
    assert_eq!(source.status().unwrap().base, BaseStatus::UnauthorizedRequest);
    assert_eq!(dev.writes(), 0);
}

/// Runs a fresh flash whose writes to the backup section (op type 7, its offsets) fail with
/// `additional`, and returns the error and the fake.
fn write_failing(additional: AdditionalStatus, base: BaseStatus) -> (FlashError, Fake, Vec<u8>) {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let backup = image.section(ImageType::FirmwareBackupIscsi).unwrap();
    let (start, end) = (backup.entry.offset, backup.entry.offset + backup.entry.pad_size);
    let mut dev = Fake::erased(FLASH, &image).with_hook(move |c| match c {
        Cmd::Write { op: FlashromOp::Flash, offset, .. } if (start..end).contains(offset) => {
            Some(status(base, additional))
        }
        _ => None,
    });
    let err = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap_err();
    (err, dev, file)
}

#[test]
fn signature_statuses_become_clear_errors() {
    let (err, ..) = write_failing(AdditionalStatus::MissingSignature, BaseStatus::Failed);
    assert!(
        matches!(&err, FlashError::SignatureMissing { section } if section.image_type == ImageType::FirmwareBackupIscsi)
    );
    assert!(err.to_string().starts_with("the adapter rejected the image's digital signature: missing"), "{err}");
    let (err, ..) = write_failing(AdditionalStatus::InvalidSignature, BaseStatus::Failed);
    assert!(matches!(&err, FlashError::SignatureInvalid { .. }), "{err:?}");
    assert!(err.to_string().contains("digital signature: invalid"), "{err}");
}

#[test]
fn a_crc_mismatch_names_the_section_and_leaves_it_untouched() {
    let (err, dev, file) = write_failing(AdditionalStatus::FlashImageCrcMismatch, BaseStatus::Failed);
    let FlashError::CrcMismatch { section } = &err else { panic!("{err:?}") };
    assert_eq!(section.image_type, ImageType::FirmwareBackupIscsi);
    assert!(err.to_string().contains("CRC wrong after transfer; nothing of it was written"), "{err}");
    let image = UfiImage::parse(&file).unwrap();
    let backup = image.section(ImageType::FirmwareBackupIscsi).unwrap();
    let at = backup.entry.offset as usize;
    let before = Fake::erased(FLASH, &image).flash;
    assert!(
        dev.flash[at..at + backup.data.len()] == before[at..at + backup.data.len()],
        "the fake dropped the staged data"
    );
    assert!(matches!(dev.log.last(), Some(Cmd::Write { op: FlashromOp::Flash, .. })), "nothing sent after the refusal");
}

#[test]
fn other_write_failures_carry_section_and_statuses() {
    let (err, ..) = write_failing(AdditionalStatus::InsufficientResources, BaseStatus::Failed);
    let FlashError::WriteRejected { section, status: st } = &err else { panic!("{err:?}") };
    assert_eq!(
        (section.image_type, st.additional),
        (ImageType::FirmwareBackupIscsi, AdditionalStatus::InsufficientResources)
    );
    let msg = err.to_string();
    assert!(msg.contains("0xb0 (backup firmware)") && msg.contains("MCC_STATUS_FAILED"), "{msg}");
    // ILLEGAL_FIELD to a write in op-type mode is not a fallback any more: it fails.
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image).with_hook(|c| {
        matches!(c, Cmd::Write { op_type: 9, .. }).then(|| status(BaseStatus::IllegalField, AdditionalStatus::None))
    });
    dev.no_offset_mode = true;
    let err = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap_err();
    assert!(
        matches!(err, FlashError::WriteRejected { status, .. } if status.base == BaseStatus::IllegalField),
        "{err:?}"
    );
}

#[test]
fn a_transport_failure_is_a_write_error_with_its_cause() {
    struct Gone(Fake);
    impl crate::flash::target::FlashTarget for Gone {
        fn read_crc(&mut self, t: FlashOpType, o: u32) -> Result<[u8; 4], MailboxError> {
            self.0.read_crc(t, o)
        }
        fn write_chunk(&mut self, _: FlashromOp, _: FlashOpType, _: u32, _: &[u8]) -> Result<(), MailboxError> {
            Err(MailboxError::DeviceGone { step: MailboxStep::Executing })
        }
        fn versions(&mut self) -> Result<oce_mailbox::commands::FwVersion, MailboxError> {
            self.0.versions()
        }
    }
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Gone(Fake::erased(FLASH, &image));
    let err = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap_err();
    assert!(matches!(err, FlashError::WriteFailed { source: MailboxError::DeviceGone { .. }, .. }), "{err:?}");
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn old_format_entries_skip_the_query_and_ignored_refusals_are_recorded() {
    let file = ImageBuilder::new("2.0.0.0").old_image_optypes(true).build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    // Op-type mode; the firmware refuses the PXE ROM (ILLEGAL_FIELD) and the directory (FAILED).
    let mut dev = Fake::erased(FLASH, &image).with_hook(|c| match c {
        Cmd::Write { op_type: 3, .. } => Some(status(BaseStatus::IllegalField, AdditionalStatus::None)),
        Cmd::Write { op_type: 23, .. } => Some(status(BaseStatus::Failed, AdditionalStatus::None)),
        _ => None,
    });
    dev.no_offset_mode = true;
    let report = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    let section_query = |c: &Cmd| matches!(c, Cmd::Crc { op_type, .. } if *op_type != 7 && *op_type != 23);
    assert!(!dev.log.iter().any(section_query), "old images are never queried (only the directory is read)");
    assert_eq!(report.mode, FlashMode::OpType);
    let action = |ty| report.sections.iter().find(|s| s.section.image_type == ty).unwrap().action;
    assert_eq!(action(ImageType::OptionRomPxe), Outcome::SkippedUnsupported);
    assert_eq!(action(ImageType::UfiDir), Outcome::SkippedUnsupported);
    assert_eq!(action(ImageType::FirmwareIscsi), Outcome::Flashed);
    // FAILED on a non-directory old entry is an error.
    let mut dev = Fake::erased(FLASH, &image).with_hook(|c| {
        matches!(c, Cmd::Write { op_type: 13, .. }).then(|| status(BaseStatus::Failed, AdditionalStatus::None))
    });
    dev.no_offset_mode = true;
    let err = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap_err();
    assert!(matches!(err, FlashError::WriteRejected { section, .. } if section.image_type == ImageType::Ncsi));
}

#[test]
fn a_be3_style_phy_op_type_uses_the_phy_op_codes_and_a_refusal_is_a_skip() {
    let file = ImageBuilder::new("2.0.0.0")
        .patch_entry(ImageType::Ncsi, crate::build::EntryPatch::Optype(OpType::PhyFw.raw() as u16))
        .build()
        .unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image).with_hook(|c| match c {
        Cmd::Write { op: FlashromOp::PhySave, .. } => Some(status(BaseStatus::IllegalRequest, AdditionalStatus::None)),
        _ => None,
    });
    // The adapter's directory gives the PHY op type its region too (op-type mode writes there).
    let old = ImageBuilder::new("1.0.0.0")
        .patch_entry(ImageType::Ncsi, crate::build::EntryPatch::Optype(OpType::PhyFw.raw() as u16))
        .build_flash()
        .unwrap();
    dev.flash[..old.len()].copy_from_slice(&old);
    dev.no_offset_mode = true;
    let report = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    let ncsi = report.sections.iter().find(|s| s.section.image_type == ImageType::Ncsi).unwrap();
    assert_eq!(ncsi.action, Outcome::SkippedUnsupported);
    assert!(dev.log.contains(&Cmd::Write { op: FlashromOp::PhySave, op_type: 99, offset: 0, len: CHUNK }));
    assert!(report.flashed().count() == 5);
}

#[test]
fn a_stop_between_chunks_abandons_the_staged_section_and_a_rerun_resumes() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image);
    let before = dev.flash.clone();
    let p = plan_for(&mut dev, &image, Policy::default()).unwrap();
    // Two sections written, then 3 chunks of the third: the stop comes before its 4th chunk.
    let mut rec = Recorder { stop_after: Some(2), stop_after_chunks: Some(3), ..Recorder::default() };
    let err = walk::run(&mut dev, &image, &p, &mut rec).unwrap_err();
    let FlashError::Stopped { flashed, remaining, abandoned } = &err else { panic!("{err:?}") };
    assert_eq!(
        flashed.iter().map(|s| s.image_type).collect::<Vec<_>>(),
        [ImageType::FirmwareIscsi, ImageType::FirmwareBackupIscsi]
    );
    assert_eq!(abandoned.map(|s| s.image_type), Some(ImageType::BootCode));
    assert_eq!(*remaining, 4);
    assert!(err.to_string().contains("running the update again finishes it"), "{err}");
    assert!(err.to_string().contains("before committing 0xe2 (boot code)"), "{err}");
    let boot = image.section(ImageType::BootCode).unwrap();
    let at = boot.entry.offset as usize..boot.entry.offset as usize + boot.data.len();
    assert_eq!(dev.flash[at.clone()], before[at], "the abandoned section is wholly old");
    assert!(!dev.log.iter().any(
        |c| matches!(c, Cmd::Write { op: FlashromOp::Flash, offset, .. } if *offset >= 0x1_0000 && *offset < 0x3_0000)
    ));

    dev.log.clear();
    let report = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    let action = |ty| report.sections.iter().find(|s| s.section.image_type == ty).unwrap().action;
    assert_eq!(action(ImageType::FirmwareIscsi), Outcome::SkippedSame);
    assert_eq!(report.flashed().count(), 4);
    let payload = &file[image.payload_base()..];
    assert_eq!(&dev.flash[..payload.len()], payload);
}

#[test]
fn the_plan_resolves_the_crc_diff_read_only_in_op_type_mode_too() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut dev = Fake::erased(FLASH, &image);
    flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    let pxe = image.section(ImageType::OptionRomPxe).unwrap();
    dev.flash[pxe.entry.offset as usize + pxe.data.len() - 1] ^= 1;
    dev.no_offset_mode = true;
    dev.log.clear();
    let p = plan_for(&mut dev, &image, Policy::default()).unwrap();
    assert_eq!(p.mode, FlashMode::OpType);
    assert_eq!(dev.writes(), 0);
    for s in &p.sections {
        let expected = if s.section.image_type == ImageType::OptionRomPxe { Action::Flash } else { Action::SkipSame };
        assert_eq!(s.action, expected, "{:?}", s.section);
    }
}

#[test]
fn a_first_chunk_refused_once_restarts_its_section() {
    // The firmware still holds chunks an earlier, stopped run staged: the first chunk of the next
    // section does not continue them and is refused (ILLEGAL_FIELD, staging dropped); the walk
    // sends the section again from its first chunk, once.
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let refused = std::cell::Cell::new(false);
    let mut dev = Fake::erased(FLASH, &image).with_hook(move |c| match c {
        Cmd::Write { offset: 0x4_0000, .. } if !refused.replace(true) => {
            Some(status(BaseStatus::IllegalField, AdditionalStatus::None))
        }
        _ => None,
    });
    let report = flash(&mut dev, &image, Policy::default(), &mut NoProgress).unwrap();
    assert!(!report.fell_back, "a refusal the retry clears is no fallback");
    assert_eq!(report.mode, FlashMode::Offset);
    let firsts = dev.log.iter().filter(|c| matches!(c, Cmd::Write { offset: 0x4_0000, .. })).count();
    assert_eq!(firsts, 2, "the firmware section's first chunk, sent twice");
    let payload = &file[image.payload_base()..];
    assert_eq!(&dev.flash[..payload.len()], payload);
}
