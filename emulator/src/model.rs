//! The adapter model: every register access and every state change goes through [`Model`]'s
//! `&mut self` methods (the vm-superio shape); [`crate::Emulator`] shares one `Model` behind a
//! mutex.

use std::path::PathBuf;

use oce_firmware::dir::FlashDirectory;
use oce_mailbox::regs::{MailboxDoorbell, Semaphore, SoftReset, UeStatus};
use oce_mailbox::wrb::MAILBOX_LEN;

use crate::assumptions::{BAR0_LEN, BAR4_LEN};
use crate::config::{ConfigRegisters, valid_offset};
use crate::doorbell::{DoorbellRead, DoorbellWrite, MailboxDoorbellState};
use crate::error::EmulatorError;
use crate::events::{Event, EventLog};
use crate::flash::Flash;
use crate::iova::IovaTable;
use crate::mailbox;
use crate::post::PostWalk;
use crate::state::{Runtime, STATE_FILE, StateFile};
use crate::timing::Timing;

/// Doorbells other than the mailbox that the emulator accepts and ignores: TX (0x60), RQ (0x100),
/// EQ/CQ (0x120), MCCQ (0x140) (spec/protocol.md §2.2). No queues are modelled (issue 2 needs
/// the bootstrap mailbox only), so ringing them has no effect.
const IGNORED_DOORBELLS: [u32; 4] = [0x060, 0x100, 0x120, 0x140];

/// The emulated adapter.
#[derive(Debug)]
pub(crate) struct Model {
    pub(crate) dir: PathBuf,
    pub(crate) state: StateFile,
    pub(crate) flash: Flash,
    pub(crate) iova: IovaTable,
    pub(crate) events: EventLog,
    config: ConfigRegisters,
    post: PostWalk,
    doorbell: MailboxDoorbellState,
    timing: Timing,
}

impl Model {
    /// A model of an adapter that is already running (POST over) with `state`.
    pub(crate) fn running(dir: PathBuf, state: StateFile, flash: Flash) -> Self {
        let timing = Timing::default();
        Self {
            dir,
            post: PostWalk::finished(state.runtime.boot),
            state,
            flash,
            iova: IovaTable::default(),
            events: EventLog::default(),
            config: ConfigRegisters::power_on(),
            doorbell: MailboxDoorbellState::new(timing),
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
        self.doorbell.timing = timing;
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

    fn gone(&self) -> bool {
        self.state.faults.gone
    }

    // --- configuration space (and BAR0, its memory-mapped view) ------------------------------

    /// A config-space read at a checked, aligned offset.
    pub(crate) fn config_read(&mut self, off: u16) -> u32 {
        if self.gone() {
            return u32::MAX;
        }
        match off {
            Semaphore::OFFSET => self.post.read(),
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

    /// Length of memory BAR `bar`, if the function has it.
    pub(crate) fn bar_len(bar: u8) -> Option<u64> {
        match bar {
            0 => Some(BAR0_LEN),
            4 => Some(BAR4_LEN),
            _ => None,
        }
    }

    /// A 32-bit read of `bar` at `off`. Outside the BAR, or unaligned: all ones (no device
    /// claims the address).
    pub(crate) fn bar_read(&mut self, bar: u8, off: u32) -> u32 {
        if self.gone() || !Self::bar_offset_ok(bar, off) {
            return u32::MAX;
        }
        match (bar, off) {
            (0, o) => self.config_read(o as u16),
            (_, MailboxDoorbell::OFFSET) => self.doorbell_read(),
            // Write-only doorbells read as zero.
            _ => 0,
        }
    }

    /// A 32-bit write to `bar` at `off`. Outside the BAR, or unaligned: dropped.
    pub(crate) fn bar_write(&mut self, bar: u8, off: u32, value: u32) {
        if self.gone() || !Self::bar_offset_ok(bar, off) {
            return;
        }
        match (bar, off) {
            (0, o) => self.config_write(o as u16, value),
            (_, MailboxDoorbell::OFFSET) => self.doorbell_write(value),
            (_, o) if IGNORED_DOORBELLS.contains(&o) => {}
            // Any other offset is a register the model does not have: the write is dropped.
            _ => {}
        }
    }

    fn bar_offset_ok(bar: u8, off: u32) -> bool {
        let Some(len) = Self::bar_len(bar) else { return false };
        off.is_multiple_of(4) && u64::from(off) + 4 <= len && (bar != 0 || valid_offset(off as u16))
    }

    // --- the mailbox doorbell ----------------------------------------------------------------

    fn doorbell_read(&mut self) -> u32 {
        if !self.post.is_ready() {
            return 0;
        }
        match self.doorbell.read() {
            DoorbellRead::Rdy(ready) => u32::from(ready) * MailboxDoorbell::RDY,
            DoorbellRead::Execute { address } => {
                mailbox::execute(self, address);
                MailboxDoorbell::RDY
            }
        }
    }

    fn doorbell_write(&mut self, value: u32) {
        if !self.post.is_ready() {
            self.log(Event::WriteBeforePost { value });
            return;
        }
        match self.doorbell.write(value) {
            Err(event) => self.log(event),
            Ok(DoorbellWrite::High) => {}
            Ok(DoorbellWrite::Low { address }) => {
                if !self.iova.contains(address, MAILBOX_LEN)
                    && let Some(start) = self.iova.buffer_starting_just_above(address)
                {
                    self.log(Event::UnalignedMailbox { address: start });
                    return;
                }
                // An address that maps nowhere faults when the firmware fetches the WRB.
                self.doorbell.start(address);
            }
        }
    }

    // --- resets and POST ---------------------------------------------------------------------

    /// Chip soft reset (pcicfg 0x5C bit 7): POST runs again; config space is kept.
    pub(crate) fn chip_reset(&mut self) {
        self.log(Event::ChipReset);
        self.boot();
        self.save_or_log();
    }

    /// Cold boot: config space back to power-on values, then POST.
    pub(crate) fn power_cycle(&mut self) -> Result<(), EmulatorError> {
        self.log(Event::PowerCycle);
        self.config = ConfigRegisters::power_on();
        self.boot();
        self.save()
    }

    /// POST: check the flash, rebuild the running state (the next profile becomes active, the
    /// booted section's version runs) and restart the semaphore walk. The caller saves.
    fn boot(&mut self) {
        let check = self.flash.boot_check(self.state.runtime.flash_directory_offset);
        self.state.runtime = Runtime::after_post(&self.state.nvram, self.state.identity.macs.len(), &check);
        self.post = PostWalk::start(check.outcome, self.timing.post_reads_per_stage);
        self.doorbell.reset();
        self.log(Event::Boot { outcome: check.outcome });
    }

    /// What runs: the version the last POST booted ("" if POST failed).
    pub(crate) fn running_version(&self) -> String {
        self.state.runtime.running_version.clone().unwrap_or_default()
    }

    /// The flash directory now on flash.
    pub(crate) fn flash_directory(&self) -> Option<FlashDirectory> {
        self.flash.directory(self.state.runtime.flash_directory_offset).map(|found| found.directory)
    }

    /// What is on flash now: `ver_data` of the 0xA0 entry.
    pub(crate) fn stored_version(&self) -> Option<String> {
        self.flash_directory()?.firmware_version()
    }

    /// The semaphore value now, without moving the POST walk.
    pub(crate) fn semaphore(&self) -> u32 {
        self.post.value()
    }
}
