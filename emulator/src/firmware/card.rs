//! The adapter-wide part of the firmware: what every PCI function of one card shares — the
//! state file (identity, NVRAM with the profiles, the running state, the faults), the flash,
//! WRITE_FLASHROM staging and POST ([`crate::assumptions::card`]).

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::events::BootOutcome;
use crate::firmware::flash::{Flash, Staging};
use crate::firmware::state::{Runtime, STATE_FILE, StateFile};

/// What the functions of one adapter share, behind one lock
/// ([`crate::firmware::Firmware::card`]).
#[derive(Debug)]
pub(crate) struct Card {
    pub(crate) state: StateFile,
    pub(crate) flash: Flash,
    /// The section WRITE_FLASHROM is staging (firmware RAM: lost at reset and power loss).
    pub(crate) staging: Staging,
    /// POSTs run since the card was opened; a function that saw fewer has a POST to follow.
    pub(crate) boots: u64,
    /// The value of `boots` after the last power cycle (0: none since the card was opened).
    pub(crate) cold_boot_at: u64,
    /// How many functions have been opened on the card (the header type's multi-function bit).
    pub(crate) functions: u8,
}

impl Card {
    pub(crate) fn new(state: StateFile, flash: Flash) -> Self {
        Self { state, flash, staging: Staging::default(), boots: 0, cold_boot_at: 0, functions: 1 }
    }

    /// The card's POST: checks the flash, rebuilds the running state (the next profile becomes
    /// active), clears what firmware RAM held (staging) and ends a firmware hang or UE. `cold`
    /// for a power cycle. The caller saves.
    pub(crate) fn boot(&mut self, cold: bool) -> BootOutcome {
        self.state.faults.firmware_restarted();
        let check = self.flash.boot_check();
        self.state.runtime = Runtime::after_post(&self.state.nvram, self.state.identity.macs.len(), &check);
        self.staging.clear();
        self.boots += 1;
        if cold {
            self.cold_boot_at = self.boots;
        }
        check.outcome
    }

    /// Writes the state file into `dir`.
    pub(crate) fn save(&self, dir: &Path) -> Result<(), crate::error::EmulatorError> {
        self.state.save(&dir.join(STATE_FILE))
    }
}

/// The lock around a [`Card`]. Taking it again on the thread that holds it is a bug of the
/// emulator (two steps of one command overlapping, e.g. two `card()` temporaries in one
/// expression), which a plain mutex turns into a silent hang: this one panics, naming it.
#[derive(Debug)]
pub(crate) struct CardLock {
    card: Mutex<Card>,
    /// The [`thread_token`] of the thread holding the lock, 0 when free.
    holder: AtomicUsize,
}

/// The card, locked ([`CardLock::lock`]).
#[derive(Debug)]
pub(crate) struct CardGuard<'a> {
    guard: MutexGuard<'a, Card>,
    holder: &'a AtomicUsize,
}

impl CardLock {
    pub(crate) fn new(card: Card) -> Self {
        Self { card: Mutex::new(card), holder: AtomicUsize::new(0) }
    }

    /// Locks the card; a lock a panicking thread left is taken as it is (the state it guards
    /// is consistent between steps). Panics if this thread already holds it.
    pub(crate) fn lock(&self) -> CardGuard<'_> {
        let me = thread_token();
        assert_ne!(self.holder.load(Ordering::Acquire), me, "the card's lock taken twice by one thread");
        let guard = self.card.lock().unwrap_or_else(PoisonError::into_inner);
        self.holder.store(me, Ordering::Release);
        CardGuard { guard, holder: &self.holder }
    }
}

impl Drop for CardGuard<'_> {
    fn drop(&mut self) {
        self.holder.store(0, Ordering::Release);
    }
}

impl Deref for CardGuard<'_> {
    type Target = Card;
    fn deref(&self) -> &Card {
        &self.guard
    }
}

impl DerefMut for CardGuard<'_> {
    fn deref_mut(&mut self) -> &mut Card {
        &mut self.guard
    }
}

/// A number unique to the calling thread while it lives (never 0): the address of a
/// thread-local.
fn thread_token() -> usize {
    thread_local! {
        static TOKEN: Cell<u8> = const { Cell::new(0) };
    }
    TOKEN.with(|t| std::ptr::from_ref(t) as usize)
}
