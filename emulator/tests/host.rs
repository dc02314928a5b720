//! The real host driver against the emulator, and two deliberately buggy hosts that must fail.

mod common;

use std::sync::Arc;

use common::{db, fresh, mailbox, poll_rdy, read, violations};
use oce_emulator::{Event, SignatureKind};
use oce_mailbox::commands::GetFwVersion;
use oce_mailbox::regs::MailboxDoorbell;
use oce_mailbox::{BootstrapMailbox, ManualClock};
use oce_pci::{DmaBuffer, RegisterIo};

#[test]
fn bootstrap_mailbox_initialises_and_reads_the_firmware_version() {
    let (_d, emu) = fresh();
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new())).unwrap();
    assert_eq!(mbox.mailbox_address() % 16, 0);
    assert_ne!(mbox.mailbox_address() >> 34, 0, "the emulator's IOVAs exercise the HI half");
    mbox.initialize().unwrap();
    let v = mbox.execute(&GetFwVersion).unwrap();
    assert_eq!((v.running.as_str(), v.on_flash.as_str()), ("11.1.172.23", "11.1.172.23"));
    assert!(violations(&emu).is_empty(), "a correct host triggers no violation: {:?}", violations(&emu));
    let events = emu.events();
    assert!(events.contains(&Event::Signature { kind: SignatureKind::FwInit }));
    assert!(events.iter().any(|e| matches!(e, Event::Command { opcode: 61, .. })), "FUNCTION_RESET was sent");
}

#[test]
fn bootstrap_mailbox_survives_a_chip_reset() {
    let (_d, emu) = fresh();
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new())).unwrap();
    mbox.initialize().unwrap();
    let sem = mbox.soft_reset().unwrap();
    assert!(sem.is_ready());
    assert!(emu.events().contains(&Event::ChipReset));
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().running, "11.1.172.23");
}

/// GET_FW_VERSION as an embedded WRB.
fn wrb() -> Vec<u8> {
    let mut wrb = vec![0u8; 256];
    wrb[0] = 1;
    wrb[4] = 80;
    wrb[20..36].copy_from_slice(&hex::decode("23010000000000004000000000000000").unwrap());
    wrb
}

#[test]
fn a_host_that_encodes_the_doorbell_address_wrongly_fails() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &wrb()).unwrap();
    // The bug: the low half written as A[31:2] << 2 ... i.e. the raw low 32 bits, and the high
    // half as A[63:32] — the "obvious" split that ignores the >> 4 / >> 34 encoding of §3.2.
    poll_rdy(&db, 10);
    db.write32(MailboxDoorbell::OFFSET, ((addr >> 32) as u32) << 2 | MailboxDoorbell::HI);
    poll_rdy(&db, 10);
    db.write32(MailboxDoorbell::OFFSET, addr as u32 & !0x3);
    poll_rdy(&db, 10);
    assert_eq!(read(&mbox, off + 256, 16), [0u8; 16], "no completion: the device never saw the mailbox");
    assert!(
        matches!(violations(&emu).as_slice(), [Event::DmaFault { iova, len: 272 }] if *iova != addr),
        "{:?}",
        violations(&emu)
    );
}

#[test]
fn a_host_that_skips_the_final_rdy_poll_reads_no_valid_completion() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &wrb()).unwrap();
    poll_rdy(&db, 10);
    db.write32(MailboxDoorbell::OFFSET, MailboxDoorbell::hi_for(addr).0);
    poll_rdy(&db, 10);
    db.write32(MailboxDoorbell::OFFSET, MailboxDoorbell::lo_for(addr).0);
    // The bug: check the completion right away instead of polling RDY first.
    let flags = u32::from_le_bytes(read(&mbox, off + 268, 4).try_into().unwrap());
    assert_eq!(flags & (1 << 31), 0, "VALID is not set: the command has not run yet");
    // The next command rung without waiting is ignored as a write while busy.
    db.write32(MailboxDoorbell::OFFSET, MailboxDoorbell::hi_for(addr).0);
    assert_eq!(violations(&emu), [Event::WriteWhileBusy { value: MailboxDoorbell::hi_for(addr).0 }]);
}

#[test]
fn a_host_that_skips_the_rdy_poll_between_hi_and_lo_starts_nothing() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &wrb()).unwrap();
    poll_rdy(&db, 10);
    db.write32(MailboxDoorbell::OFFSET, MailboxDoorbell::hi_for(addr).0);
    db.write32(MailboxDoorbell::OFFSET, MailboxDoorbell::lo_for(addr).0);
    for _ in 0..10 {
        db.read32(MailboxDoorbell::OFFSET);
    }
    assert_eq!(read(&mbox, off + 256, 16), [0u8; 16]);
    assert_eq!(violations(&emu), [Event::WriteWhileBusy { value: MailboxDoorbell::lo_for(addr).0 }]);
}
