//! The flash model through the real host driver: READ_FLASHROM REPORT and WRITE_FLASHROM
//! SAVE / FLASH in offset and op-type modes, the CRC check at commit, the versions derived from
//! the directory on flash, and boot from the backup section (design.md §6; ufi-firmware.md §2.8,
//! §3).

mod common;

use std::borrow::Cow;

use common::flashing::{FIRMWARE, Mode, chunk, flash_bytes, host, send_section};
use common::fresh;
use oce_emulator::{BootOutcome, Emulator, Event, FaultSpec};
use oce_firmware::ImageBuilder;
use oce_mailbox::commands::{FlashCrc, FlashOpType, FlashromOp, GetFwVersion, ReadFlashrom};
use oce_mailbox::status::{AdditionalStatus, BaseStatus};
use oce_mailbox::{MailboxError, RawCommand};
use oce_pci::{ConfigSpace, PciFunction};

/// The factory flash map (oce-firmware's small layout).
const DIRECTORY: (u32, u32) = (0, 0x1000);
const BACKUP: (u32, u32) = (0xC_0000, 0x8_0000);

fn status(result: Result<impl std::fmt::Debug, MailboxError>) -> (BaseStatus, AdditionalStatus) {
    match result {
        Err(MailboxError::CommandFailed { status, .. }) => (status.base, status.additional),
        other => panic!("expected a failure status, got {other:?}"),
    }
}

const ILLEGAL_FIELD: (BaseStatus, AdditionalStatus) = (BaseStatus::IllegalField, AdditionalStatus::None);

#[test]
fn report_returns_the_stored_trailer_in_both_modes() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let (offset, size) = FIRMWARE;
    let trailer = flash_bytes(&emu, offset + size - 4, 4);
    let by_offset = mbox.execute(&ReadFlashrom::crc(FlashOpType::OffsetSpecified, offset + size - 4)).unwrap();
    assert_eq!(by_offset, FlashCrc(trailer.clone().try_into().unwrap()));
    let by_type = mbox.execute(&ReadFlashrom::crc(FlashOpType::IscsiActive, size - 4)).unwrap();
    assert_eq!(by_type, by_offset);
    let section = flash_bytes(&emu, offset, size);
    assert_eq!(oce_firmware::crc::expected_trailer(&section).unwrap().to_vec(), trailer, "the CRC model holds");
    // The directory itself is a region too (op type 23).
    let dir = mbox.execute(&ReadFlashrom::crc(FlashOpType::UfiDir, DIRECTORY.1 - 4)).unwrap();
    assert_eq!(dir.0.to_vec(), flash_bytes(&emu, DIRECTORY.1 - 4, 4));
}

#[test]
fn report_refuses_what_it_cannot_locate() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let (_, size) = FIRMWARE;
    assert_eq!(
        status(mbox.execute(&ReadFlashrom::crc(FlashOpType::IscsiActive, size - 3))),
        ILLEGAL_FIELD,
        "past the region"
    );
    assert_eq!(status(mbox.execute(&ReadFlashrom::crc(FlashOpType::FcoeFwActive, 0))), ILLEGAL_FIELD, "no such region");
    assert_eq!(status(mbox.execute(&ReadFlashrom::crc(FlashOpType::OffsetSpecified, 16 << 20))), ILLEGAL_FIELD);
    let not_report = ReadFlashrom { op_code: FlashromOp::Save, ..ReadFlashrom::crc(FlashOpType::OffsetSpecified, 0) };
    assert_eq!(status(mbox.execute(&not_report)), ILLEGAL_FIELD);
    let wrong_size = ReadFlashrom { data_buf_size: 8, ..ReadFlashrom::crc(FlashOpType::OffsetSpecified, 0) };
    assert_eq!(status(mbox.execute(&wrong_size)), ILLEGAL_FIELD);
}

/// Flashes the firmware section, then the directory, of a 12.0.0.1 image in `mode`, checking
/// what GET_FW_VERSION says at each step.
fn update(mode: Mode) {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let image = ImageBuilder::new("12.0.0.1").build_flash().unwrap();
    let old_dir = flash_bytes(&emu, DIRECTORY.0, DIRECTORY.1);

    let chunks = send_section(&mut mbox, &image, FIRMWARE, FlashOpType::IscsiActive, mode).unwrap();
    assert_eq!(chunks, 16, "512 KiB in 32 KiB chunks");
    assert_eq!(flash_bytes(&emu, FIRMWARE.0, FIRMWARE.1), image[FIRMWARE.0 as usize..][..FIRMWARE.1 as usize]);
    assert!(emu.events().contains(&Event::FlashCommitted { offset: 0x4_0000, len: 0x8_0000 }));
    assert_eq!(flash_bytes(&emu, DIRECTORY.0, DIRECTORY.1), old_dir, "only the committed section changed");
    let v = mbox.execute(&GetFwVersion).unwrap();
    assert_eq!(
        (v.running.as_str(), v.on_flash.as_str()),
        ("11.1.172.23", "11.1.172.23"),
        "the directory still says 11.1"
    );

    send_section(&mut mbox, &image, DIRECTORY, FlashOpType::UfiDir, mode).unwrap();
    let v = mbox.execute(&GetFwVersion).unwrap();
    assert_eq!(
        (v.running.as_str(), v.on_flash.as_str()),
        ("11.1.172.23", "12.0.0.1"),
        "stored changes, running does not"
    );
    assert_eq!(emu.info().firmware.stored.as_deref(), Some("12.0.0.1"));

    // A new process sees the same; a power cycle runs the new firmware.
    let again = Emulator::open(&emu.state_dir()).unwrap();
    assert_eq!(again.info().firmware.running.as_deref(), Some("11.1.172.23"));
    again.power_cycle().unwrap();
    let mut mbox = host(&again);
    let v = mbox.execute(&GetFwVersion).unwrap();
    assert_eq!((v.running.as_str(), v.on_flash.as_str()), ("12.0.0.1", "12.0.0.1"));
    assert_eq!(again.info().firmware.boot, BootOutcome::Primary);
}

#[test]
fn an_update_in_offset_mode_changes_stored_then_running() {
    update(Mode::Offset);
}

#[test]
fn an_update_in_op_type_mode_changes_stored_then_running() {
    update(Mode::OpType);
}

#[test]
fn a_chip_reset_also_runs_what_is_on_flash() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let image = ImageBuilder::new("12.0.0.1").build_flash().unwrap();
    send_section(&mut mbox, &image, FIRMWARE, FlashOpType::IscsiActive, Mode::Offset).unwrap();
    send_section(&mut mbox, &image, DIRECTORY, FlashOpType::UfiDir, Mode::Offset).unwrap();
    mbox.soft_reset().unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().running, "12.0.0.1");
}

#[test]
fn a_crc_mismatch_is_refused_and_flash_is_untouched() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let mut image = ImageBuilder::new("12.0.0.1").build_flash().unwrap();
    image[FIRMWARE.0 as usize + 1000] ^= 0x55;
    let before = std::fs::read(emu.state_dir().join("flash.bin")).unwrap();
    let err = send_section(&mut mbox, &image, FIRMWARE, FlashOpType::IscsiActive, Mode::Offset).unwrap_err();
    assert_eq!(status(Err::<(), _>(err)), (BaseStatus::Failed, AdditionalStatus::FlashImageCrcMismatch));
    assert_eq!(std::fs::read(emu.state_dir().join("flash.bin")).unwrap(), before, "flash.bin byte for byte");
    assert!(!emu.events().iter().any(|e| matches!(e, Event::FlashCommitted { .. })));
    // The staging was dropped: the FLASH op alone has nothing to commit.
    let last = chunk(FlashromOp::Flash, FlashOpType::OffsetSpecified, 0x4_0000, Cow::Borrowed(&[]));
    assert_eq!(status(mbox.execute(&last)), ILLEGAL_FIELD);
}

#[test]
fn chunks_must_be_contiguous_and_inside_the_flash() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let data = vec![0u8; 4096];
    let save = |offset| chunk(FlashromOp::Save, FlashOpType::OffsetSpecified, offset, Cow::Borrowed(&data[..]));
    mbox.execute(&save(0x20_0000)).unwrap();
    assert_eq!(status(mbox.execute(&save(0x20_2000))), ILLEGAL_FIELD, "a gap");
    mbox.execute(&save(0x20_0000)).unwrap();
    assert_eq!(status(mbox.execute(&save(0x20_0000))), ILLEGAL_FIELD, "a repeat");
    assert_eq!(status(mbox.execute(&save((16 << 20) - 2048))), ILLEGAL_FIELD, "past the end");
    mbox.execute(&save(0x20_0000)).unwrap();
    let pxe = chunk(FlashromOp::Save, FlashOpType::PxeBios, 0, Cow::Borrowed(&data[..]));
    assert_eq!(status(mbox.execute(&pxe)), ILLEGAL_FIELD, "another section while one is staged");
    let empty_flash = chunk(FlashromOp::Flash, FlashOpType::OffsetSpecified, 0, Cow::Borrowed(&[]));
    assert_eq!(status(mbox.execute(&empty_flash)), ILLEGAL_FIELD, "FLASH with nothing staged");
    let phy = chunk(FlashromOp::PhySave, FlashOpType::OffsetSpecified, 0x20_0000, Cow::Borrowed(&data[..]));
    assert_eq!(status(mbox.execute(&phy)), ILLEGAL_FIELD, "no PHY op codes on Skyhawk");
    // Op-type mode: the section may not outgrow its region (PXE ROM: 64 KiB).
    for _ in 0..16 {
        mbox.execute(&chunk(FlashromOp::Save, FlashOpType::PxeBios, 0, Cow::Borrowed(&data[..]))).unwrap();
    }
    assert_eq!(status(mbox.execute(&pxe)), ILLEGAL_FIELD, "the 17th 4 KiB chunk overflows 64 KiB");
}

#[test]
fn an_oversized_chunk_is_refused() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    // data_buf_size 32769 @24, op SAVE, op type 7, in a 32804-byte buffer.
    let mut payload = vec![0u8; 16];
    payload[0] = 2;
    payload[4] = 7;
    payload[8..12].copy_from_slice(&32769u32.to_le_bytes());
    let cmd = RawCommand {
        subsystem: 1,
        opcode: 7,
        version: 0,
        domain: 0,
        embedded: false,
        len: 32804,
        payload,
        timeout: std::time::Duration::from_secs(40),
    };
    let resp = mbox.execute_raw(&cmd).unwrap();
    assert_eq!(resp.status.base, BaseStatus::IllegalField);
}

#[test]
fn no_offset_mode_refuses_op_type_7_and_op_types_still_work() {
    let (_d, emu) = fresh();
    emu.set_fault(FaultSpec::NoOffsetMode).unwrap();
    let mut mbox = host(&emu);
    let (offset, size) = FIRMWARE;
    assert_eq!(
        status(mbox.execute(&ReadFlashrom::crc(FlashOpType::OffsetSpecified, offset + size - 4))),
        ILLEGAL_FIELD
    );
    let image = ImageBuilder::new("12.0.0.1").build_flash().unwrap();
    let err = send_section(&mut mbox, &image, FIRMWARE, FlashOpType::IscsiActive, Mode::Offset).unwrap_err();
    assert_eq!(status(Err::<(), _>(err)), ILLEGAL_FIELD);
    mbox.execute(&ReadFlashrom::crc(FlashOpType::IscsiActive, size - 4)).unwrap();
    send_section(&mut mbox, &image, FIRMWARE, FlashOpType::IscsiActive, Mode::OpType).unwrap();
    assert_eq!(flash_bytes(&emu, offset, size), image[offset as usize..][..size as usize]);
}

#[test]
fn a_firmware_section_that_no_longer_matches_its_entry_boots_the_backup() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    // A valid 64 KiB section written over the start of the 512 KiB firmware region: the CRC over
    // the region the directory describes no longer holds.
    let mut short = vec![0xA5u8; 0x1_0000];
    oce_firmware::crc::stamp_trailer(&mut short).unwrap();
    send_section(&mut mbox, &short, (0, 0x1_0000), FlashOpType::OffsetSpecified, Mode::OffsetAt(FIRMWARE.0)).unwrap();
    emu.power_cycle().unwrap();
    let walk: Vec<u32> = (0..4).map(|_| emu.config().read32(0x94).unwrap()).collect();
    assert_eq!(walk[3], 0x4000_C000, "bit 30: the backup runs");
    assert_eq!(emu.info().firmware.boot, BootOutcome::Backup);
    // Flashing the firmware again repairs it; the next POST runs the primary.
    let mut mbox = host(&emu);
    let image = ImageBuilder::new("11.1.172.23").build_flash().unwrap();
    send_section(&mut mbox, &image, FIRMWARE, FlashOpType::IscsiActive, Mode::Offset).unwrap();
    send_section(&mut mbox, &image, BACKUP, FlashOpType::IscsiBackup, Mode::OpType).unwrap();
    emu.power_cycle().unwrap();
    assert_eq!(emu.info().firmware.boot, BootOutcome::Primary);
}

#[test]
fn erasing_the_directory_and_writing_one_elsewhere_moves_the_versions() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    // A 13.0.0.0 directory section written to erased flash past the last section (NC-SI ends at
    // 0x160000), then the one at 0 erased.
    let image = ImageBuilder::new("13.0.0.0").build_flash().unwrap();
    let dir_section = image[..DIRECTORY.1 as usize].to_vec();
    let at = 0x16_0000;
    send_section(&mut mbox, &dir_section, (0, DIRECTORY.1), FlashOpType::OffsetSpecified, Mode::OffsetAt(at)).unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().on_flash, "11.1.172.23", "the first cookie still wins");
    let mut erased = vec![0xFFu8; DIRECTORY.1 as usize];
    oce_firmware::crc::stamp_trailer(&mut erased).unwrap();
    send_section(&mut mbox, &erased, DIRECTORY, FlashOpType::OffsetSpecified, Mode::Offset).unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().on_flash, "13.0.0.0", "the directory further on is found");
    emu.power_cycle().unwrap();
    assert_eq!(emu.info().firmware.running.as_deref(), Some("13.0.0.0"));
}

#[test]
fn a_directory_committed_to_a_flash_without_one_is_found() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let mut erased = vec![0xFFu8; DIRECTORY.1 as usize];
    oce_firmware::crc::stamp_trailer(&mut erased).unwrap();
    send_section(&mut mbox, &erased, DIRECTORY, FlashOpType::OffsetSpecified, Mode::Offset).unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().on_flash, "", "no directory on flash");
    assert_eq!(status(mbox.execute(&ReadFlashrom::crc(FlashOpType::IscsiActive, 0))), ILLEGAL_FIELD, "no regions");
    let image = ImageBuilder::new("13.0.0.0").build_flash().unwrap();
    send_section(&mut mbox, &image, DIRECTORY, FlashOpType::OffsetSpecified, Mode::OffsetAt(0x2000)).unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().on_flash, "13.0.0.0");
    // A directory written before the one found comes first.
    let image = ImageBuilder::new("14.0.0.0").build_flash().unwrap();
    send_section(&mut mbox, &image, DIRECTORY, FlashOpType::OffsetSpecified, Mode::Offset).unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().on_flash, "14.0.0.0");
}

#[test]
fn page_cache_durability_commits_the_same_bytes() {
    let (_d, emu) = fresh();
    emu.set_flash_durability(oce_emulator::FlashDurability::PageCache);
    let mut mbox = host(&emu);
    let image = ImageBuilder::new("12.0.0.1").build_flash().unwrap();
    send_section(&mut mbox, &image, FIRMWARE, FlashOpType::IscsiActive, Mode::Offset).unwrap();
    assert_eq!(flash_bytes(&emu, FIRMWARE.0, FIRMWARE.1), image[FIRMWARE.0 as usize..][..FIRMWARE.1 as usize]);
}
