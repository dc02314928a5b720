//! The POST walk on the semaphore register, chip soft reset and power cycle.

mod common;

use common::{db, fresh, pcicfg, rdy};
use oce_emulator::{BootOutcome, Emulator, Event, Timing};
use oce_mailbox::regs::{MailboxDoorbell, Semaphore, SoftReset};
use oce_pci::{ConfigSpace, PciFunction, RegisterIo};

fn semaphore(emu: &Emulator) -> u32 {
    emu.config().read32(Semaphore::OFFSET).unwrap()
}

#[test]
fn a_running_adapter_reads_firmware_ready_at_once() {
    let (_d, emu) = fresh();
    assert_eq!(semaphore(&emu), 0xC000);
    let again = Emulator::open(&emu.state_dir()).unwrap();
    assert_eq!(semaphore(&again), 0xC000, "a second process sees POST done, not a reboot");
}

#[test]
fn power_cycle_walks_every_stage() {
    let (_d, emu) = fresh();
    emu.power_cycle().unwrap();
    let seen: Vec<u32> = (0..5).map(|_| semaphore(&emu)).collect();
    assert_eq!(seen, [0x0000, 0x0001, 0x0002, 0xC000, 0xC000]);
    assert!(emu.events().contains(&Event::PowerCycle));
    assert!(emu.events().contains(&Event::Boot { outcome: BootOutcome::Primary }));
}

#[test]
fn each_stage_can_last_several_reads() {
    let (_d, emu) = fresh();
    emu.set_timing(Timing { post_reads_per_stage: 2, ..Timing::default() });
    emu.power_cycle().unwrap();
    let seen: Vec<u32> = (0..7).map(|_| semaphore(&emu)).collect();
    assert_eq!(seen, [0, 0, 1, 1, 2, 2, 0xC000]);
}

#[test]
fn soft_reset_through_bar0_restarts_post() {
    let (_d, emu) = fresh();
    let bar0 = pcicfg(&emu);
    assert_eq!(semaphore(&emu), 0xC000);
    let current = SoftReset(bar0.read32(SoftReset::OFFSET));
    bar0.write32(SoftReset::OFFSET, current.with_reset().0);
    assert_eq!(bar0.read32(SoftReset::OFFSET) & SoftReset::SR, 0, "SR is self-clearing");
    // The write above was the reset; the register read above did not touch the semaphore.
    assert_eq!(bar0.read32(Semaphore::OFFSET as u32), 0x0000, "BAR0 reads the same semaphore");
    assert_eq!(semaphore(&emu), 0x0001);
    assert_eq!(semaphore(&emu), 0x0002);
    assert_eq!(semaphore(&emu), 0xC000);
    assert!(emu.events().contains(&Event::ChipReset));
}

#[test]
fn soft_reset_ignores_other_bits() {
    let (_d, emu) = fresh();
    emu.config().write32(SoftReset::OFFSET as u16, 0x7F).unwrap();
    assert_eq!(semaphore(&emu), 0xC000, "no reset without bit 7");
    emu.config().write32(SoftReset::OFFSET as u16, SoftReset::SR).unwrap();
    assert_eq!(semaphore(&emu), 0x0000, "config-space write of bit 7 resets too");
}

#[test]
fn soft_reset_keeps_config_space_but_power_cycle_does_not() {
    let (_d, emu) = fresh();
    emu.config().write32(0x04, 0x6).unwrap();
    emu.config().write32(SoftReset::OFFSET as u16, SoftReset::SR).unwrap();
    assert_eq!(emu.config().read32(0x04).unwrap() & 0xFFFF, 0x6);
    emu.power_cycle().unwrap();
    assert_eq!(emu.config().read32(0x04).unwrap() & 0xFFFF, 0);
}

#[test]
fn mailbox_is_not_ready_and_refuses_writes_during_post() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    emu.power_cycle().unwrap();
    assert_eq!(rdy(&db), 0, "RDY reads 0 until POST completes");
    db.write32(MailboxDoorbell::OFFSET, 0x2);
    assert!(emu.events().contains(&Event::WriteBeforePost { value: 0x2 }));
    while semaphore(&emu) != 0xC000 {}
    assert_eq!(rdy(&db), 1);
}

#[test]
fn post_state_survives_across_processes_without_a_reboot() {
    let (_d, emu) = fresh();
    emu.power_cycle().unwrap();
    // The process exits in the middle of the walk; the adapter keeps booting on its own.
    let again = Emulator::open(&emu.state_dir()).unwrap();
    assert_eq!(semaphore(&again), 0xC000);
    assert!(!again.events().iter().any(|e| matches!(e, Event::Boot { .. })), "opening does not boot");
}
