//! The path chooser and the Lancer object download through the real driver. The emulator is a
//! Skyhawk, which does not implement WRITE_OBJECT (ILLEGAL_REQUEST, as unimplemented opcodes
//! answer, design.md §6), so this proves the command (with its separately allocated DMA data
//! buffer) reaches the firmware and a refusal is reported; the download's chunking, offset advance and `change_status`
//! decisions are unit-tested in `oce_firmware::flash` against a scripted adapter, and a
//! device-level test waits for an emulated Lancer.

use oce_emulator::Event;
use oce_firmware::FirmwareError;
use oce_firmware::flash::{self, FlashPath, NoProgress};
use oce_mailbox::BaseStatus;
use oce_tests::{fresh_emulator, host};

#[test]
fn the_emulated_skyhawk_takes_the_ufi_walk() {
    let (_dir, emu) = fresh_emulator();
    let mbox = host(&emu);
    let chip = flash::read_chip(&mbox).unwrap();
    assert_eq!(chip, oce_pci::Chip::Skyhawk);
    assert_eq!(flash::flash_path(chip).unwrap(), FlashPath::UfiWalk);
}

#[test]
fn write_object_reaches_the_firmware_and_a_refusal_is_reported() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    emu.take_events();
    let err = flash::download_object(&mut mbox, &[0xA5; 64], &mut NoProgress).unwrap_err();
    let FirmwareError::ObjectWriteFailed { offset: 0, source } = &err else { panic!("{err:?}") };
    assert_eq!(source.status().unwrap().base, BaseStatus::IllegalRequest);
    let events = emu.take_events();
    assert!(events.iter().any(|e| matches!(e, Event::Command { opcode: 172, subsystem: 1, .. })), "{events:?}");
    assert!(!events.iter().any(|e| matches!(e, Event::DmaFault { .. })), "{events:?}");
}

#[test]
fn a_misaligned_object_is_refused_before_any_command() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    emu.take_events();
    let err = flash::download_object(&mut mbox, &[0; 6], &mut NoProgress).unwrap_err();
    assert!(matches!(err, FirmwareError::ObjectNotAligned { len: 6 }), "{err:?}");
    assert!(matches!(flash::download_object(&mut mbox, &[], &mut NoProgress), Err(FirmwareError::Empty)));
    assert!(!emu.take_events().iter().any(|e| matches!(e, Event::Command { .. })));
}
