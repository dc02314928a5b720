//! The driver's completion-tag check (docs/reliability.md, `no-valid`): every WRB carries tags
//! that the firmware copies into its completion (spec/protocol.md §3.2), and a completion whose
//! tags are not those of the command just posted — one left over from an earlier command — is
//! refused, never taken as the answer.
//!
//! The emulated firmware always copies the tags faithfully, so the stale completion is staged
//! between it and the host: a function that wraps the emulator and, when switched on, shows the
//! host the mailbox's completion with the tags of another command, exactly as a completion
//! written for that command would read.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use oce_emulator::{Emulator, Event};
use oce_mailbox::commands::GetFwVersion;
use oce_mailbox::wrb::{COMPLETION_LEN, MAILBOX_ALIGN, MAILBOX_COMPLETION_OFFSET};
use oce_mailbox::{BootstrapMailbox, MailboxError, ManualClock};
use oce_pci::{DmaBuffer, PciError, PciFunction};
use oce_tests::fresh_emulator;

/// How the completion the host reads is changed.
#[derive(Debug, Clone, Copy)]
enum Stale {
    /// Tag 0 one less: the completion of the command before this one.
    PreviousCommand,
    /// Tag 1 changed: a completion of a WRB some other driver posted.
    ForeignWrb,
}

/// The emulator, with the completions the host reads optionally made stale.
#[derive(Debug, Clone)]
struct StaleCompletions {
    emu: Emulator,
    stale: Arc<std::sync::Mutex<Option<Stale>>>,
    /// Set once a completion was changed: the scenario really happened.
    served: Arc<AtomicBool>,
}

#[derive(Debug)]
struct StaleDma {
    inner: <Emulator as PciFunction>::Dma,
    stale: Arc<std::sync::Mutex<Option<Stale>>>,
    served: Arc<AtomicBool>,
}

impl PciFunction for StaleCompletions {
    type Config = <Emulator as PciFunction>::Config;
    type Bar = <Emulator as PciFunction>::Bar;
    type Dma = StaleDma;

    fn config(&self) -> &Self::Config {
        self.emu.config()
    }

    fn map_bar(&self, bar: u8, min_len: u64) -> Result<Self::Bar, PciError> {
        self.emu.map_bar(bar, min_len)
    }

    fn alloc_dma(&self, len: usize) -> Result<StaleDma, PciError> {
        Ok(StaleDma { inner: self.emu.alloc_dma(len)?, stale: self.stale.clone(), served: self.served.clone() })
    }
}

impl DmaBuffer for StaleDma {
    fn iova(&self) -> u64 {
        self.inner.iova()
    }

    fn len(&self) -> usize {
        self.inner.len()
    }

    fn write_at(&self, off: usize, src: &[u8]) -> Result<(), PciError> {
        self.inner.write_at(off, src)
    }

    fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError> {
        self.inner.read_at(off, dst)?;
        // The mailbox starts at the first 16-byte-aligned bus address of its buffer (spec §3.1);
        // its completion follows the WRB.
        let mailbox = (self.iova().next_multiple_of(MAILBOX_ALIGN) - self.iova()) as usize;
        let stale = *self.stale.lock().unwrap();
        if let Some(stale) = stale
            && off == mailbox + MAILBOX_COMPLETION_OFFSET
            && dst.len() == COMPLETION_LEN
        {
            // Completion layout (spec §3.3): status @0, tag0 @4, tag1 @8, flags @12.
            let (at, tag) = match stale {
                Stale::PreviousCommand => (4, u32::from_le_bytes(dst[4..8].try_into().unwrap()).wrapping_sub(1)),
                Stale::ForeignWrb => (8, u32::from_le_bytes(dst[8..12].try_into().unwrap()) ^ 0xFFFF_0000),
            };
            dst[at..at + 4].copy_from_slice(&tag.to_le_bytes());
            self.served.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
}

fn open(emu: &Emulator) -> (StaleCompletions, BootstrapMailbox<StaleCompletions>) {
    let func = StaleCompletions { emu: emu.clone(), stale: Default::default(), served: Default::default() };
    let mut mbox = BootstrapMailbox::open(func.clone(), Arc::new(ManualClock::new())).unwrap();
    mbox.initialize().unwrap();
    (func, mbox)
}

fn refused(stale: Stale) {
    let (_dir, emu) = fresh_emulator();
    let (func, mut mbox) = open(&emu);
    mbox.execute(&GetFwVersion).expect("a faithful completion is accepted");
    emu.take_events();

    *func.stale.lock().unwrap() = Some(stale);
    let err = mbox.execute(&GetFwVersion).unwrap_err();
    assert!(func.served.load(Ordering::SeqCst), "the stale completion was never shown to the host");
    let MailboxError::TagMismatch { command, expected, found } = err else { panic!("{err:?}") };
    assert_eq!(command, "GET_FW_VERSION");
    assert_ne!(expected, found);
    // The firmware did execute the command: only its completion was not the one expected.
    let ran = emu.events().iter().filter(|e| matches!(e, Event::Command { subsystem: 1, opcode: 35, .. })).count();
    assert_eq!(ran, 1);

    // With faithful completions again, the next command is accepted under its own new tags.
    *func.stale.lock().unwrap() = None;
    mbox.execute(&GetFwVersion).expect("the next command completes");
}

#[test]
fn a_completion_with_the_previous_commands_tag_is_refused() {
    refused(Stale::PreviousCommand);
}

#[test]
fn a_completion_of_a_foreign_wrb_is_refused() {
    refused(Stale::ForeignWrb);
}
