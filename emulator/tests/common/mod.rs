//! Helpers shared by the emulator's register-level tests: a fresh adapter in a temporary
//! directory, and a tiny hand-written host that drives the doorbell with raw register writes;
//! the flash tests' flasher in [`flashing`], the RoCE tests' adapters in [`roce`].
#![allow(dead_code)]

pub mod flashing;
pub mod roce;

use std::sync::Arc;

use oce_emulator::{Emulator, Event};
use oce_mailbox::regs::MailboxDoorbell;
use oce_mailbox::regs::bars::{self, BarLayout};
use oce_mailbox::status::BaseStatus;
use oce_mailbox::{BootstrapMailbox, MailboxError, ManualClock};
use oce_pci::{DmaBuffer, PciFunction, RegisterIo};

/// A factory-fresh emulator in its own temporary directory (kept alive by the returned guard).
pub fn fresh() -> (tempfile::TempDir, Emulator) {
    let dir = tempfile::tempdir().unwrap();
    let emu = Emulator::create_seeded(&dir.path().join("emu"), 0x5EED).unwrap();
    (dir, emu)
}

/// The real host driver on `emu`, initialised (POST, fw_init, FUNCTION_RESET), on a manual clock.
pub fn host(emu: &Emulator) -> BootstrapMailbox<Emulator> {
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new())).unwrap();
    mbox.initialize().unwrap();
    mbox
}

/// The base status of a command the firmware refused; panics on anything else.
pub fn failure(result: Result<impl std::fmt::Debug, MailboxError>) -> BaseStatus {
    match result {
        Err(MailboxError::CommandFailed { status, .. }) => status.base,
        other => panic!("expected a failure status, got {other:?}"),
    }
}

/// The doorbell BAR of a PF.
pub fn db(emu: &Emulator) -> <Emulator as PciFunction>::Bar {
    emu.map_bar(BarLayout::PF.doorbell, bars::DOORBELL_MIN_LEN).unwrap()
}

/// The pcicfg BAR of a PF (the shadow starts at offset 0).
pub fn pcicfg(emu: &Emulator) -> <Emulator as PciFunction>::Bar {
    emu.map_bar(BarLayout::PF.pcicfg, BarLayout::PF.pcicfg_min_len()).unwrap()
}

/// Reads the mailbox doorbell.
pub fn rdy(db: &impl RegisterIo) -> u32 {
    db.read32(MailboxDoorbell::OFFSET)
}

/// Polls RDY until it reads 1, at most `max` reads; returns how many reads returned 0.
pub fn poll_rdy(db: &impl RegisterIo, max: u32) -> u32 {
    for zeros in 0..max {
        if rdy(db) & MailboxDoorbell::RDY != 0 {
            return zeros;
        }
    }
    panic!("RDY never set within {max} reads");
}

/// A 288-byte DMA buffer and the 16-byte-aligned mailbox address inside it (as be2net does).
pub fn mailbox(emu: &Emulator) -> (<Emulator as PciFunction>::Dma, u64, usize) {
    let dma = emu.alloc_dma(288).unwrap();
    let addr = dma.iova().next_multiple_of(16);
    let off = (addr - dma.iova()) as usize;
    (dma, addr, off)
}

/// The correct handshake: poll, HI, poll, LO, poll (spec/protocol.md §3.2).
pub fn post_mailbox(db: &impl RegisterIo, addr: u64) {
    poll_rdy(db, 100);
    db.write32(MailboxDoorbell::OFFSET, MailboxDoorbell::hi_for(addr).0);
    poll_rdy(db, 100);
    db.write32(MailboxDoorbell::OFFSET, MailboxDoorbell::lo_for(addr).0);
    poll_rdy(db, 100);
}

/// Events other than the routine ones a healthy command produces.
pub fn violations(emu: &Emulator) -> Vec<Event> {
    emu.events()
        .into_iter()
        .filter(|e| !matches!(e, Event::Command { .. } | Event::Signature { .. } | Event::Boot { .. }))
        .collect()
}

/// Reads `len` bytes at `off` of a DMA buffer.
pub fn read(dma: &impl DmaBuffer, off: usize, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    dma.read_at(off, &mut out).unwrap();
    out
}
