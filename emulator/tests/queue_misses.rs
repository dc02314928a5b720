//! Queue doorbells that name no queue: dropped by the doorbell logic without reaching the
//! firmware (its event log stays empty), and recorded as queue misses for tests to assert on.

mod common;

use common::{db, fresh, rdy};
use oce_emulator::{QueueKind, QueueMiss};
use oce_pci::RegisterIo;

#[test]
fn queue_doorbells_naming_no_queue_are_counted_as_misses() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    // TX 0x060, RQ 0x100, EQ/CQ 0x120, MCC 0x140 (`oce_mailbox::doorbells`); all ones names the
    // highest id of each, which a fresh function does not have.
    for off in [0x60u32, 0x100, 0x120, 0x140] {
        db.write32(off, 0xFFFF_FFFF);
    }
    assert_eq!(rdy(&db), 1, "the mailbox is untouched");
    let kinds: Vec<QueueKind> = emu.queue_misses().into_iter().map(|m| m.kind).collect();
    assert_eq!(kinds, [QueueKind::Tx, QueueKind::Rx, QueueKind::Eq, QueueKind::Mcc]);
    assert!(emu.events().is_empty(), "the firmware saw nothing");
}

#[test]
fn a_miss_names_the_queue_id() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    db.write32(0x140, 5);
    assert_eq!(emu.queue_misses(), [QueueMiss { kind: QueueKind::Mcc, id: 5 }]);
    assert_eq!(emu.queue_misses()[0].to_string(), "Mcc queue 5 does not exist: ignored");
}
