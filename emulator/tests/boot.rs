//! What POST boots: the active firmware section, the backup when the active one fails its CRC,
//! or nothing (POST error) when both do (design.md §6).

mod common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use oce_emulator::{BootOutcome, Emulator, Event};
use oce_mailbox::commands::GetFwVersion;
use oce_mailbox::regs::Semaphore;
use oce_mailbox::{BootstrapMailbox, MailboxError, ManualClock};
use oce_pci::{ConfigSpace, PciFunction};

/// The factory flash map (oce-firmware's small layout): directory at 0, entries from 0xC0 in the
/// order firmware (0xA0), backup (0xB0), …; firmware section at 0x40000, backup at 0xC0000.
const FIRMWARE_SECTION: u64 = 0x4_0000;
const BACKUP_SECTION: u64 = 0xC_0000;
const BACKUP_ENTRY_VER_DATA: u64 = 0xC0 + 64 + 0x20;

fn poke(dir: &Path, offset: u64, bytes: &[u8]) {
    let f = OpenOptions::new().read(true).write(true).open(dir.join("flash.bin")).unwrap();
    f.write_all_at(bytes, offset).unwrap();
}

fn peek(dir: &Path, offset: u64) -> u8 {
    let f = OpenOptions::new().read(true).open(dir.join("flash.bin")).unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, offset).unwrap();
    b[0]
}

fn walk(emu: &Emulator, reads: usize) -> Vec<u32> {
    (0..reads).map(|_| emu.config().read32(Semaphore::OFFSET).unwrap()).collect()
}

#[test]
fn a_corrupt_firmware_section_boots_the_backup() {
    let (_d, emu) = common::fresh();
    let dir = emu.state_dir();
    drop(emu);
    poke(&dir, BACKUP_ENTRY_VER_DATA, b"10.0.0.1\0\0\0\0");
    let byte = peek(&dir, FIRMWARE_SECTION + 100);
    poke(&dir, FIRMWARE_SECTION + 100, &[!byte]);

    let emu = Emulator::open(&dir).unwrap();
    assert_eq!(emu.info().firmware.boot, BootOutcome::Primary, "opening does not re-run POST");
    emu.power_cycle().unwrap();
    assert_eq!(walk(&emu, 5), [0x0000, 0x0001, 0x0002, 0x4000_C000, 0x4000_C000], "bit 30: backup running");
    assert!(emu.events().contains(&Event::Boot { outcome: BootOutcome::Backup }));

    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new())).unwrap();
    mbox.initialize().unwrap();
    let v = mbox.execute(&GetFwVersion).unwrap();
    assert_eq!(v.running, "10.0.0.1", "the backup section's ver_data runs");
    assert_eq!(v.on_flash, "11.1.172.23", "on flash = the 0xA0 entry");

    // Repaired flash boots the primary again at the next POST.
    poke(&dir, FIRMWARE_SECTION + 100, &[byte]);
    emu.power_cycle().unwrap();
    assert_eq!(walk(&emu, 4)[3], 0xC000);
    assert_eq!(emu.info().firmware.running.as_deref(), Some("11.1.172.23"));
}

#[test]
fn both_sections_corrupt_is_a_post_error_that_persists() {
    let (_d, emu) = common::fresh();
    let dir = emu.state_dir();
    for section in [FIRMWARE_SECTION, BACKUP_SECTION] {
        let byte = peek(&dir, section + 4);
        poke(&dir, section + 4, &[!byte]);
    }
    emu.power_cycle().unwrap();
    assert_eq!(walk(&emu, 4), [0x0000, 0x0001, 0x8000_0002, 0x8000_0002], "stops with the error bit");
    assert_eq!(emu.info().firmware.running, None);
    let err = BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new())).unwrap().wait_post().unwrap_err();
    assert!(matches!(err, MailboxError::PostError { raw: 0x8000_0002, .. }), "{err}");
    drop(emu);
    let again = Emulator::open(&dir).unwrap();
    assert_eq!(walk(&again, 1), [0x8000_0002], "a failed adapter stays failed across processes");
}

#[test]
fn no_directory_on_flash_is_a_post_error() {
    let (_d, emu) = common::fresh();
    let dir = emu.state_dir();
    poke(&dir, 0, &[0xFF; 32]);
    emu.power_cycle().unwrap();
    assert_eq!(walk(&emu, 3)[2], 0x8000_0002);
    assert_eq!(emu.info().firmware.stored, None);
}
