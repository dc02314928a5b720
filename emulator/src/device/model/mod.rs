//! The adapter model: every register access and every state change goes through [`Model`]'s
//! `&mut self` methods (the vm-superio shape); [`crate::Emulator`] shares one `Model` behind a
//! mutex. The mailbox doorbell register, with its faults and delayed completions, is in
//! [`mailbox_register`].

mod mailbox_register;

use std::path::PathBuf;
use std::sync::Arc;

use oce_firmware::dir::FlashDirectory;
use oce_mailbox::regs::{MailboxDoorbell, Semaphore, SoftReset, UeStatus};
use oce_mailbox::{Clock, SystemClock};

use crate::device::config::ConfigRegisters;
use crate::device::doorbell::MailboxDoorbellState;
use crate::device::post::PostWalk;
use crate::device::timing::Timing;
use crate::error::EmulatorError;
use crate::events::{Event, EventLog};
use crate::firmware::flash::{Flash, Staging};
use crate::firmware::state::{Runtime, STATE_FILE, StateFile};
use crate::function::{BarRegister, FunctionType};
use crate::inproc::iova::IovaTable;

pub(crate) use mailbox_register::PendingCompletion;

/// Doorbells other than the mailbox that the emulator accepts and ignores: TX (0x60), RQ (0x100),
/// EQ/CQ (0x120), MCCQ (0x140) (spec/protocol.md §2.2). No queues are modelled (ocetool needs
/// the bootstrap mailbox only), so ringing them has no effect.
const IGNORED_DOORBELLS: [u32; 4] = [0x060, 0x100, 0x120, 0x140];

/// The emulated adapter.
#[derive(Debug)]
pub(crate) struct Model {
    pub(crate) dir: PathBuf,
    pub(crate) state: StateFile,
    pub(crate) flash: Flash,
    /// The section WRITE_FLASHROM is staging (firmware RAM: lost at reset and power loss).
    pub(crate) staging: Staging,
    pub(crate) iova: IovaTable,
    pub(crate) events: EventLog,
    /// Real time, for the delays faults ask for (`slow=…`, `slow-flash=…`).
    pub(crate) clock: Arc<dyn Clock>,
    config: ConfigRegisters,
    post: PostWalk,
    doorbell: MailboxDoorbellState,
    /// A completion the firmware holds back until its time has come.
    pending: Option<PendingCompletion>,
    timing: Timing,
}

impl Model {
    /// A model of an adapter that is already running (POST over) with `state`.
    pub(crate) fn running(dir: PathBuf, state: StateFile, flash: Flash) -> Self {
        let timing = Timing::default();
        Self {
            dir,
            post: PostWalk::finished(state.runtime.boot),
            config: ConfigRegisters::power_on(state.identity.function),
            state,
            flash,
            staging: Staging::default(),
            iova: IovaTable::default(),
            events: EventLog::default(),
            clock: Arc::new(SystemClock),
            doorbell: MailboxDoorbellState::new(timing),
            pending: None,
            timing,
        }
    }

    pub(crate) fn log(&mut self, event: Event) {
        self.events.push(event);
    }

    pub(crate) fn timing(&self) -> Timing {
        self.timing
    }

    pub(crate) fn set_timing(&mut self, timing: Timing) {
        self.timing = timing;
    }

    /// PF or VF.
    pub(crate) fn function(&self) -> FunctionType {
        self.state.identity.function
    }

    /// Writes the state file.
    pub(crate) fn save(&self) -> Result<(), EmulatorError> {
        self.state.save(&self.dir.join(STATE_FILE))
    }

    /// Saves from a path that cannot return an error (a register write): a failure is logged.
    pub(crate) fn save_or_log(&mut self) {
        if let Err(e) = self.save() {
            self.log(Event::StateSaveFailed { message: e.to_string() });
        }
    }

    /// True when the adapter does not answer at all (faults `gone`, `power-lost`).
    pub(crate) fn gone(&self) -> bool {
        self.state.faults.unreachable()
    }

    /// The adapter loses power now: it stops answering until the next power cycle, and what
    /// the firmware held in RAM (a staged flash section, a pending completion) is lost.
    pub(crate) fn lose_power(&mut self) {
        self.state.faults.power_lost = true;
        self.staging.clear();
        self.pending = None;
        self.save_or_log();
    }

    // --- configuration space (and the pcicfg BAR, its memory-mapped view) -------------------

    /// A config-space read at a checked, aligned offset.
    pub(crate) fn config_read(&mut self, off: u16) -> u32 {
        if self.gone() {
            return u32::MAX;
        }
        match off {
            Semaphore::OFFSET => self.post.read(self.state.faults.post),
            o if u32::from(o) == UeStatus::LOW_OFFSET => self.state.faults.ue_status[0],
            o if u32::from(o) == UeStatus::HIGH_OFFSET => self.state.faults.ue_status[1],
            o => self.config.read(o),
        }
    }

    /// A config-space write at a checked, aligned offset.
    pub(crate) fn config_write(&mut self, off: u16, value: u32) {
        if self.gone() {
            return;
        }
        if u32::from(off) == SoftReset::OFFSET {
            // SR is self-clearing: the register reads 0 again once the reset has started.
            if value & SoftReset::SR != 0 {
                self.chip_reset();
            }
            return;
        }
        self.config.write(off, value);
    }

    // --- BARs --------------------------------------------------------------------------------

    /// A 32-bit read of `bar` at `off`. Outside the BAR, or unaligned: all ones (no device
    /// claims the address).
    pub(crate) fn bar_read(&mut self, bar: u8, off: u32) -> u32 {
        if self.gone() {
            return u32::MAX;
        }
        match self.function().decode(bar, off) {
            None => u32::MAX,
            Some(BarRegister::Pcicfg(o)) => self.config_read(o),
            Some(BarRegister::Doorbell(MailboxDoorbell::OFFSET)) => self.doorbell_read(),
            // Write-only doorbells read as zero.
            Some(BarRegister::Doorbell(_)) => 0,
        }
    }

    /// A 32-bit write to `bar` at `off`. Outside the BAR, or unaligned: dropped.
    pub(crate) fn bar_write(&mut self, bar: u8, off: u32, value: u32) {
        if self.gone() {
            return;
        }
        match self.function().decode(bar, off) {
            Some(BarRegister::Pcicfg(o)) => self.config_write(o, value),
            Some(BarRegister::Doorbell(MailboxDoorbell::OFFSET)) => self.doorbell_write(value),
            Some(BarRegister::Doorbell(o)) if IGNORED_DOORBELLS.contains(&o) => {}
            // Outside the BAR, or a register the model does not have: the write is dropped.
            _ => {}
        }
    }

    // --- resets and POST ---------------------------------------------------------------------

    /// Chip soft reset (pcicfg 0x5C bit 7): POST runs again; config space is kept.
    pub(crate) fn chip_reset(&mut self) {
        self.log(Event::ChipReset);
        self.boot();
        self.save_or_log();
    }

    /// Cold boot: power back, config space back to power-on values, then POST.
    pub(crate) fn power_cycle(&mut self) -> Result<(), EmulatorError> {
        self.log(Event::PowerCycle);
        self.state.faults.power_lost = false;
        self.config = ConfigRegisters::power_on(self.function());
        self.boot();
        self.save()
    }

    /// POST: check the flash, rebuild the running state (the next profile becomes active, the
    /// booted section's version runs) and restart the semaphore walk. What the firmware held in
    /// RAM is lost, and so is a hang or UE of the firmware that ran before. The caller saves.
    fn boot(&mut self) {
        self.state.faults.firmware_restarted();
        let check = self.flash.boot_check();
        self.state.runtime = Runtime::after_post(&self.state.nvram, self.state.identity.macs.len(), &check);
        self.post = PostWalk::start(check.outcome, self.timing.post_reads_per_stage);
        self.doorbell.reset();
        self.pending = None;
        self.staging.clear();
        self.log(Event::Boot { outcome: check.outcome });
    }

    /// What runs: the version the last POST booted ("" if POST failed).
    pub(crate) fn running_version(&self) -> String {
        self.state.runtime.running_version.clone().unwrap_or_default()
    }

    /// The flash directory now on flash.
    pub(crate) fn flash_directory(&self) -> Option<FlashDirectory> {
        self.flash.directory().map(|found| found.directory)
    }

    /// What is on flash now: `ver_data` of the 0xA0 entry.
    pub(crate) fn stored_version(&self) -> Option<String> {
        self.flash_directory()?.firmware_version()
    }

    /// The semaphore value now, without moving the POST walk.
    pub(crate) fn semaphore(&self) -> u32 {
        self.post.value(self.state.faults.post)
    }

    /// True when POST is over and the firmware accepts mailbox commands.
    fn post_ready(&self) -> bool {
        self.post.is_ready(self.state.faults.post)
    }
}
