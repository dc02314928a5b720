//! The flash faults: a chunk that fails, power lost in the middle of an update, slow chunks.
//! Each leaves flash holding exactly what was committed before it.

mod common;

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use common::flashing::{FIRMWARE, Mode, chunk, flash_bytes, host, send_section};
use common::fresh;
use oce_emulator::{BootOutcome, Emulator, Event, FaultSpec};
use oce_firmware::ImageBuilder;
use oce_mailbox::commands::{FlashOpType, FlashromOp, GetFwVersion};
use oce_mailbox::status::{AdditionalStatus, BaseStatus};
use oce_mailbox::{BootstrapMailbox, Clock, MailboxError, MailboxStep, ManualClock};
use oce_pci::{ConfigSpace, PciFunction};

const DIRECTORY: (u32, u32) = (0, 0x1000);

fn set(emu: &Emulator, spec: &str) {
    emu.set_fault(FaultSpec::parse(spec).unwrap()).unwrap();
}

fn new_image() -> Vec<u8> {
    ImageBuilder::new("12.0.0.1").build_flash().unwrap()
}

fn save(offset: u32, data: &[u8]) -> oce_mailbox::commands::WriteFlashrom<'_> {
    chunk(FlashromOp::Save, FlashOpType::OffsetSpecified, offset, Cow::Borrowed(data))
}

#[test]
fn flash_fail_at_fails_the_nth_chunk_and_every_later_one() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let before = flash_bytes(&emu, FIRMWARE.0, FIRMWARE.1);
    set(&emu, "flash-fail-at=3");
    let image = new_image();
    let chunk0 = &image[FIRMWARE.0 as usize..][..32 * 1024];
    mbox.execute(&save(FIRMWARE.0, chunk0)).unwrap();
    mbox.execute(&save(FIRMWARE.0 + 0x8000, &image[FIRMWARE.0 as usize + 0x8000..][..32 * 1024])).unwrap();
    let err = mbox.execute(&save(FIRMWARE.0 + 0x1_0000, chunk0)).unwrap_err();
    let status = err.status().unwrap();
    assert_eq!((status.base, status.additional), (BaseStatus::Failed, AdditionalStatus::Unknown(23)));
    assert!(emu.events().contains(&Event::FaultTriggered { fault: FaultSpec::FlashFailAt { chunk: 1 } }));
    assert_eq!(emu.faults().describe(), [FaultSpec::FlashFailAt { chunk: 1 }], "it stays armed");
    assert!(mbox.execute(&save(FIRMWARE.0, chunk0)).is_err(), "later chunks fail too");
    assert_eq!(flash_bytes(&emu, FIRMWARE.0, FIRMWARE.1), before);
    emu.clear_fault("flash-fail-at").unwrap();
    send_section(&mut mbox, &image, FIRMWARE, FlashOpType::IscsiActive, Mode::Offset).unwrap();
    assert_eq!(flash_bytes(&emu, FIRMWARE.0, FIRMWARE.1), image[FIRMWARE.0 as usize..][..FIRMWARE.1 as usize]);
}

#[test]
fn a_failed_chunk_drops_the_staged_section() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    set(&emu, "flash-fail-at=2");
    mbox.execute(&save(0x20_0000, &[0u8; 64])).unwrap();
    assert!(mbox.execute(&save(0x20_0040, &[0u8; 64])).is_err());
    emu.clear_fault("flash-fail-at").unwrap();
    // A chunk that would continue the dropped section starts a section of its own: committed
    // alone at its own address (its trailer matches only its own bytes).
    let mut alone = [0x5Au8; 64];
    oce_firmware::crc::stamp_trailer(&mut alone).unwrap();
    let last = chunk(FlashromOp::Flash, FlashOpType::OffsetSpecified, 0x20_0040, Cow::Borrowed(&alone));
    mbox.execute(&last).unwrap();
    assert!(emu.events().contains(&Event::FlashCommitted { offset: 0x20_0040, len: 64 }));
}

#[test]
fn the_chunk_countdown_survives_across_processes() {
    let (_d, emu) = fresh();
    set(&emu, "flash-fail-at=3");
    let mut mbox = host(&emu);
    mbox.execute(&save(0x20_0000, &[0u8; 64])).unwrap();
    drop(mbox);
    let again = Emulator::open(&emu.state_dir()).unwrap();
    assert_eq!(again.faults().describe(), [FaultSpec::FlashFailAt { chunk: 2 }]);
}

#[test]
fn power_loss_at_a_chunk_keeps_only_what_was_committed() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let image = new_image();
    // 16 chunks of firmware, then the directory's single chunk: power fails on the 17th.
    set(&emu, "power-loss-at=17");
    send_section(&mut mbox, &image, FIRMWARE, FlashOpType::IscsiActive, Mode::Offset).unwrap();
    let old_dir = flash_bytes(&emu, DIRECTORY.0, DIRECTORY.1);
    let err = send_section(&mut mbox, &image, DIRECTORY, FlashOpType::UfiDir, Mode::Offset).unwrap_err();
    assert!(matches!(err, MailboxError::DeviceGone { step: MailboxStep::Executing }), "{err}");
    assert_eq!(emu.config().read32(0).unwrap(), u32::MAX, "the adapter is off the bus");
    assert_eq!(emu.faults().describe(), [FaultSpec::PowerLost], "the countdown became the power loss");
    assert_eq!(flash_bytes(&emu, DIRECTORY.0, DIRECTORY.1), old_dir, "the lost chunk never reached flash");
    assert_eq!(flash_bytes(&emu, FIRMWARE.0, FIRMWARE.1), image[FIRMWARE.0 as usize..][..FIRMWARE.1 as usize]);

    let again = Emulator::open(&emu.state_dir()).unwrap();
    assert_eq!(again.config().read32(0).unwrap(), u32::MAX, "still off in a new process");
    again.power_cycle().unwrap();
    assert!(again.faults().is_clear(), "power is back");
    let mut mbox = host(&again);
    let v = mbox.execute(&GetFwVersion).unwrap();
    assert_eq!((v.running.as_str(), v.on_flash.as_str()), ("11.1.172.23", "11.1.172.23"));
    assert_eq!(again.info().firmware.boot, BootOutcome::Primary, "bootable: the committed section is whole");
    // The rerun completes the update.
    send_section(&mut mbox, &image, DIRECTORY, FlashOpType::UfiDir, Mode::Offset).unwrap();
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().on_flash, "12.0.0.1");
}

#[test]
fn power_loss_in_mid_section_loses_the_staging() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let before = flash_bytes(&emu, FIRMWARE.0, FIRMWARE.1);
    set(&emu, "power-loss-at=5");
    let err = send_section(&mut mbox, &new_image(), FIRMWARE, FlashOpType::IscsiActive, Mode::Offset).unwrap_err();
    assert!(matches!(err, MailboxError::DeviceGone { .. }), "{err}");
    emu.power_cycle().unwrap();
    assert_eq!(flash_bytes(&emu, FIRMWARE.0, FIRMWARE.1), before);
    let mut mbox = host(&emu);
    let last = chunk(FlashromOp::Flash, FlashOpType::OffsetSpecified, FIRMWARE.0 + 5 * 0x8000, Cow::Borrowed(&[]));
    let status = mbox.execute(&last).unwrap_err().status().unwrap();
    assert_eq!(status.base, BaseStatus::IllegalField, "nothing staged survives the power loss");
}

#[test]
fn slow_flash_delays_every_chunk_on_the_emulators_clock() {
    let (_d, emu) = fresh();
    let clock = Arc::new(ManualClock::new());
    emu.set_clock(clock.clone());
    let mut mbox = BootstrapMailbox::open(emu.clone(), clock.clone()).unwrap();
    mbox.initialize().unwrap();
    set(&emu, "slow-flash=5");
    let start = clock.now();
    mbox.execute(&GetFwVersion).unwrap();
    assert_eq!(clock.now(), start, "other commands are not slowed");
    let chunks = send_section(&mut mbox, &new_image(), FIRMWARE, FlashOpType::IscsiActive, Mode::Offset).unwrap();
    assert!(clock.now() - start >= Duration::from_millis(5) * chunks as u32, "{:?}", clock.now() - start);
}
