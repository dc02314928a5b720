//! Every non-flash fault at register level: what the semaphore, the UE registers, the mailbox
//! doorbell, the response header and the completion show while it is set, and that it is kept
//! across processes until cleared.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{db, fresh, mailbox, pcicfg, poll_rdy, post_mailbox, rdy, read, violations};
use oce_emulator::{Emulator, Event, FaultSpec};
use oce_mailbox::ManualClock;
use oce_mailbox::regs::{MailboxDoorbell, Semaphore, UeStatus};
use oce_pci::{ConfigSpace, DmaBuffer, PciFunction, RegisterIo};

const DB: u32 = MailboxDoorbell::OFFSET;

fn set(emu: &Emulator, spec: &str) {
    emu.set_fault(FaultSpec::parse(spec).unwrap()).unwrap();
}

fn semaphore(emu: &Emulator) -> u32 {
    emu.config().read32(Semaphore::OFFSET).unwrap()
}

/// An embedded WRB with tags 0x11223344 / 0x55667788 around `header` (16 bytes, hex) and a
/// zeroed body of `body_len` bytes.
fn wrb(header: &str, body_len: usize) -> Vec<u8> {
    let mut wrb = vec![0u8; 256];
    wrb[0] = 1;
    wrb[4..8].copy_from_slice(&((16 + body_len) as u32).to_le_bytes());
    wrb[8..16].copy_from_slice(&hex::decode("4433221188776655").unwrap());
    wrb[20..36].copy_from_slice(&hex::decode(header).unwrap());
    wrb
}

/// GET_FW_VERSION (35), request_length 64.
const GET_FW_VERSION: &str = "23010000000000004000000000000000";

#[test]
fn post_stuck_shows_at_once_and_stops_every_walk() {
    let (_d, emu) = fresh();
    set(&emu, "post-stuck=0x0002");
    assert_eq!(semaphore(&emu), 0x0002, "a running adapter shows the stuck stage at once");
    assert_eq!(rdy(&db(&emu)), 0, "the mailbox is not ready during POST");
    emu.power_cycle().unwrap();
    let walk: Vec<u32> = (0..6).map(|_| semaphore(&emu)).collect();
    assert_eq!(walk, [0x0000, 0x0001, 0x0002, 0x0002, 0x0002, 0x0002]);
    let again = Emulator::open(&emu.state_dir()).unwrap();
    assert_eq!(semaphore(&again), 0x0002, "kept across processes");
    assert!(again.clear_fault("post-stuck").unwrap());
    assert_eq!((semaphore(&again), semaphore(&again)), (0x0002, 0xC000), "cleared, POST finishes");
}

#[test]
fn post_error_sets_bit_31_at_its_stage() {
    let (_d, emu) = fresh();
    set(&emu, "post-error");
    assert_eq!(semaphore(&emu), 0x8000_0002);
    set(&emu, "post-error=0x0001");
    emu.power_cycle().unwrap();
    let walk: Vec<u32> = (0..3).map(|_| semaphore(&emu)).collect();
    assert_eq!(walk, [0x0000, 0x8000_0001, 0x8000_0001]);
    assert_eq!(pcicfg(&emu).read32(u32::from(Semaphore::OFFSET)), 0x8000_0001, "the BAR view agrees");
}

#[test]
fn ue_bits_show_in_both_views() {
    let (_d, emu) = fresh();
    set(&emu, "ue=0x1,0x80000000");
    let bar0 = pcicfg(&emu);
    assert_eq!((bar0.read32(UeStatus::LOW_OFFSET), bar0.read32(UeStatus::HIGH_OFFSET)), (1, 0x8000_0000));
    assert_eq!(emu.config().read32(UeStatus::LOW_OFFSET as u16).unwrap(), 1);
    emu.clear_fault("ue").unwrap();
    assert_eq!(bar0.read32(UeStatus::LOW_OFFSET), 0);
}

#[test]
fn rdy_never_reads_zero_and_ignores_writes() {
    let (_d, emu) = fresh();
    set(&emu, "rdy-never");
    let db = db(&emu);
    let (_mbox, addr, _) = mailbox(&emu);
    assert!((0..100).all(|_| rdy(&db) == 0));
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    assert_eq!(violations(&emu), [Event::WriteWhileBusy { value: MailboxDoorbell::hi_for(addr).0 }]);
    emu.clear_fault("rdy-never").unwrap();
    assert_eq!(rdy(&db), 1);
}

#[test]
fn rdy_hang_hangs_at_the_next_write_and_stays_hung() {
    let (_d, emu) = fresh();
    set(&emu, "rdy-hang");
    let db = db(&emu);
    let (_mbox, addr, _) = mailbox(&emu);
    assert_eq!(rdy(&db), 1, "ready until the next write");
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    assert!((0..100).all(|_| rdy(&db) == 0));
    assert_eq!(emu.faults().describe(), [FaultSpec::RdyNever], "the hang is now a plain rdy-never");
    assert!(emu.events().contains(&Event::FaultTriggered { fault: FaultSpec::RdyHang }));
    let again = Emulator::open(&emu.state_dir()).unwrap();
    assert_eq!(rdy(&common::db(&again)), 0, "a new process finds the mailbox hung");
}

#[test]
fn rdy_after_n_reads_is_persisted() {
    let (_d, emu) = fresh();
    set(&emu, "rdy-after=5");
    let emu = Emulator::open(&emu.state_dir()).unwrap();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &wrb(GET_FW_VERSION, 64)).unwrap();
    assert_eq!(poll_rdy(&db, 100), 0);
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    assert_eq!(poll_rdy(&db, 100), 5, "five reads of RDY = 0 after HI");
    db.write32(DB, MailboxDoorbell::lo_for(addr).0);
    assert_eq!(poll_rdy(&db, 100), 5, "and after LO");
    assert_eq!(read(&mbox, off + 268, 4), [0, 0, 0, 0x90]);
}

#[test]
fn gone_reads_all_ones_through_the_spec() {
    let (_d, emu) = fresh();
    set(&emu, "gone");
    assert_eq!(semaphore(&emu), u32::MAX);
    assert_eq!(rdy(&db(&emu)), u32::MAX);
    assert_eq!(emu.info().faults, [FaultSpec::Gone]);
}

#[test]
fn power_lost_lasts_until_a_power_cycle_but_gone_does_not_end_there() {
    let (_d, emu) = fresh();
    set(&emu, "power-lost");
    assert_eq!((semaphore(&emu), rdy(&db(&emu))), (u32::MAX, u32::MAX));
    emu.power_cycle().unwrap();
    assert!(emu.faults().is_clear(), "power is back");
    assert_ne!(semaphore(&emu), u32::MAX);
    set(&emu, "gone");
    emu.power_cycle().unwrap();
    assert_eq!(semaphore(&emu), u32::MAX, "a device gone from the bus stays gone until cleared");
}

#[test]
fn a_forced_status_is_in_the_completion_and_the_header_and_nothing_runs() {
    let (_d, emu) = fresh();
    set(&emu, "status=1:35:3:0x4d");
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &wrb(GET_FW_VERSION, 64)).unwrap();
    post_mailbox(&db, addr);
    // Header: opcode/subsystem echoed, base 3, additional 0x4D, response_length 0, actual 0.
    assert_eq!(hex::encode(read(&mbox, off + 20, 16)), "23010000034d00000000000000000000");
    assert_eq!(read(&mbox, off + 36, 12), [0u8; 12], "no body: the command did not run");
    // Completion: status 0x004D0003, tags, VALID | COMPLETED.
    assert_eq!(hex::encode(read(&mbox, off + 256, 16)), "03004d00443322118877665500000090");
}

#[test]
fn a_forced_status_changes_no_state() {
    let (_d, emu) = fresh();
    set(&emu, "status=1:168:1");
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    // SET_ACTIVE_PROFILE to 0x1B (RoCE-2).
    let mut w = wrb("a8010000000000000400000000000000", 4);
    w[36] = 0x1B;
    mbox.write_at(off, &w).unwrap();
    post_mailbox(&db, addr);
    assert_eq!(read(&mbox, off + 256, 4), [1, 0, 0, 0]);
    assert!(emu.info().profiles.iter().all(|p| p.next == p.active), "the next-boot profile did not move");
    emu.clear_fault("status=1:168").unwrap();
    post_mailbox(&db, addr);
    assert_eq!(read(&mbox, off + 256, 4), [0, 0, 0, 0]);
    assert_eq!(emu.info().profiles.iter().find(|p| p.next).unwrap().id, 0x1B);
}

#[test]
fn a_wrong_response_length_leaves_the_body_alone() {
    let (_d, emu) = fresh();
    set(&emu, "response-length=1:35:500");
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &wrb(GET_FW_VERSION, 64)).unwrap();
    post_mailbox(&db, addr);
    // response_length 500 (0x1F4), actual 64.
    assert_eq!(hex::encode(read(&mbox, off + 20, 16)), "2301000000000000f401000040000000");
    assert_eq!(&read(&mbox, off + 36, 11), b"11.1.172.23");
    assert_eq!(read(&mbox, off + 256, 4), [0; 4], "success");
}

#[test]
fn a_truncated_response_is_cut_with_a_matching_length() {
    let (_d, emu) = fresh();
    set(&emu, "truncate=1:35:8");
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    let mut w = wrb(GET_FW_VERSION, 64);
    w[36..100].fill(0xEE);
    mbox.write_at(off, &w).unwrap();
    post_mailbox(&db, addr);
    // response_length 8, actual 64.
    assert_eq!(hex::encode(read(&mbox, off + 20, 16)), "23010000000000000800000040000000");
    assert_eq!(&read(&mbox, off + 36, 8), b"11.1.172");
    assert_eq!(read(&mbox, off + 44, 4), [0xEE; 4], "nothing written past the cut");
}

#[test]
fn no_valid_drops_only_the_valid_flag() {
    let (_d, emu) = fresh();
    set(&emu, "no-valid=1:35");
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &wrb(GET_FW_VERSION, 64)).unwrap();
    post_mailbox(&db, addr);
    assert_eq!(hex::encode(read(&mbox, off + 256, 16)), "00000000443322118877665500000010");
    assert_eq!(&read(&mbox, off + 36, 11), b"11.1.172.23", "the response is written");
}

#[test]
fn a_slow_command_holds_rdy_and_the_completion_for_its_time() {
    let (_d, emu) = fresh();
    let clock = Arc::new(ManualClock::new());
    emu.set_clock(clock.clone());
    set(&emu, "slow=1:35:500");
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &wrb(GET_FW_VERSION, 64)).unwrap();
    poll_rdy(&db, 10);
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    poll_rdy(&db, 10);
    db.write32(DB, MailboxDoorbell::lo_for(addr).0);
    assert!((0..50).all(|_| rdy(&db) == 0), "busy: the read-counted period, then the slow one");
    assert_eq!(&read(&mbox, off + 36, 11), b"11.1.172.23", "the command has run");
    assert_eq!(read(&mbox, off + 256, 16), [0; 16], "its completion is held back");
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    assert!(violations(&emu).contains(&Event::WriteWhileBusy { value: MailboxDoorbell::hi_for(addr).0 }));
    clock.advance(Duration::from_millis(499));
    assert_eq!(rdy(&db), 0);
    let delayed = |e: &Event| matches!(e, Event::CompletionDelayed { .. });
    assert!(!emu.events().iter().any(delayed), "nothing is logged while the completion is held");
    clock.advance(Duration::from_millis(1));
    assert_eq!(rdy(&db), 1);
    assert_eq!(hex::encode(read(&mbox, off + 256, 16)), "00000000443322118877665500000090");
    let held = Duration::from_millis(500);
    assert!(
        emu.events().contains(&Event::CompletionDelayed { subsystem: 1, opcode: 35, held }),
        "the log says how long the completion was held: {:?}",
        emu.events()
    );
}

#[test]
fn faults_on_one_command_leave_the_others_alone() {
    let (_d, emu) = fresh();
    for spec in ["status=1:168:3", "no-valid=1:167", "truncate=1:166:4", "slow=1:164:1000"] {
        set(&emu, spec);
    }
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &wrb(GET_FW_VERSION, 64)).unwrap();
    post_mailbox(&db, addr);
    assert_eq!(hex::encode(read(&mbox, off + 256, 16)), "00000000443322118877665500000090");
    assert_eq!(emu.faults().commands.len(), 4);
}
