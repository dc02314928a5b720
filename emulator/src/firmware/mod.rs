//! The emulated firmware, register-free: the persistent state, the flash, WRITE_FLASHROM staging,
//! the profiles and the command handlers, behind one entry point every transport calls
//! ([`Firmware::execute`]).
//!
//! The firmware never touches a register or host memory: a transport (the bootstrap mailbox
//! engine, and the MCC ring engine, which serves be2net's MCC and ocrdma's MQ alike) copies a
//! command into a buffer, calls
//! [`Firmware::execute`], and copies the response out. What the firmware needs to know of the
//! registers comes in a [`Context`].

mod card;
pub(crate) mod dispatch;
mod execute;
pub mod fat;
pub(crate) mod flash;
pub(crate) mod handlers;
pub mod profiles;
pub(crate) mod queues;
pub(crate) mod rdma;
pub(crate) mod resources;
pub mod state;

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use oce_firmware::dir::FlashDirectory;

pub(crate) use card::Card;
use card::{CardGuard, CardLock};
pub use execute::{Context, Executed, Owed};

use crate::assumptions::FACTORY_FIRMWARE_VERSION;
use crate::datapath::Counters;
use crate::datapath::roce::stats::RoceCounters;
use crate::error::{self, EmulatorError};
use crate::events::{BootOutcome, Event, EventLog};
use crate::faults::{FaultSpec, Faults};
use crate::function::FunctionType;
use flash::{Flash, FlashDurability};
use resources::Resources;
use state::{FLASH_FILE, MacAddress, STATE_FILE, StateFile};

/// How [`Firmware::create_with`] makes a new adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateOptions {
    /// The serial number and MACs derive from it (equal seeds give equal identities).
    pub seed: u64,
    /// PF or VF.
    pub function: FunctionType,
}

impl Default for CreateOptions {
    /// A PF with a random seed (a different identity every time).
    fn default() -> Self {
        Self { seed: random_seed(), function: FunctionType::Pf }
    }
}

/// True when something — a file, or a symbolic link even to nothing — is at `path`.
fn present(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
}

/// The firmware as one PCI function of an emulated adapter sees it, with the adapter's state
/// directory: the adapter-wide part ([`Card`]: the state file, the flash, WRITE_FLASHROM staging,
/// POST) is shared by every function of the card, the rest is the function's own
/// ([`crate::assumptions::card`] says which is which and why).
#[derive(Debug)]
pub struct Firmware {
    dir: PathBuf,
    /// What every function of the adapter shares. Locked for one step at a time, never across a
    /// call that locks it again; a device's own lock is always taken first.
    card: Arc<CardLock>,
    /// The PCI function number (0 for the first NIC function; the function sits on the port of
    /// the same number).
    number: u8,
    /// The card's POST count when this function last caught up with it ([`Firmware::missed_boot`]).
    boots_seen: u64,
    /// What a driver created in the function (firmware RAM: lost at any reset).
    pub(crate) resources: Resources,
    /// What the datapath counted (firmware RAM: lost at POST), for GET_STATISTICS.
    pub(crate) counters: Counters,
    /// What the RoCE path counted (firmware RAM: lost at POST), for GET_RDMA_STATS.
    pub(crate) roce_counters: RoceCounters,
    /// The function's log: what the firmware did and what the device saw (transports log here
    /// too).
    events: EventLog,
    /// The diagnostic (FAT) log as MANAGE_FAT QUERY last rendered it (firmware RAM).
    fat: Option<Vec<u8>>,
    /// What the port sees of the other end of its cable (never saved: it is the cable's state).
    pub(crate) peer: Peer,
    /// Where responses are encoded, all zeros between commands, kept so that a command does not
    /// allocate and zero a buffer of its own (`dispatch::encode_body`).
    pub(crate) response_buf: Vec<u8>,
}

/// The other end of the port's cable, as the port sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    /// Something is plugged in at the other end. True for a port on no cable at all, whose
    /// link is up as it always was in the emulator; a carrier that finds the peer gone makes it
    /// false ([`crate::device::Device::set_peer_present`]).
    pub present: bool,
    /// The source MAC of the last frame the port received while the link was up, or `None`
    /// ([`crate::assumptions::datapath`], "the peer's MAC").
    pub mac: Option<MacAddress>,
}

impl Peer {
    /// Takes the source MAC of a frame that arrived as the peer's: a frame too short to have
    /// one, or with a group address there (no station sends from one, IEEE 802.3 §3.2.3), says
    /// nothing about the peer.
    pub(crate) fn note_source(&mut self, frame: &[u8]) {
        // Destination (6 bytes), then source (6 bytes): IEEE 802.3 §3.1.1.
        let Some(src) = frame.get(6..12) else { return };
        if src[0] & 1 == 0 {
            let mut mac = [0u8; 6];
            mac.copy_from_slice(src);
            self.mac = Some(MacAddress(mac));
        }
    }
}

impl Default for Peer {
    fn default() -> Self {
        Self { present: true, mac: None }
    }
}

impl Firmware {
    /// Opens the adapter whose state is in `dir`. The adapter is running: POST is over (as it
    /// would be for a second process talking to a real adapter), nothing is re-read beyond the
    /// small JSON file, and the flash file is only mapped.
    pub fn open(dir: &Path) -> Result<Self, EmulatorError> {
        if !dir.is_dir() {
            return Err(EmulatorError::NoStateDirectory { dir: dir.to_path_buf() });
        }
        state::check_dir(dir)?;
        let state = StateFile::load(&dir.join(STATE_FILE))?;
        let flash = Flash::open(&dir.join(FLASH_FILE), state.runtime.flash_directory_offset)?;
        Ok(Self::running(dir.to_path_buf(), state, flash))
    }

    /// Creates a factory-fresh adapter in `dir` (made if missing, private: mode 0700) with
    /// `options`: factory firmware on flash, NIC profile, POST done. Fails without touching
    /// anything if a state file is already there, or if `dir` is not safely this user's
    /// ([`EmulatorError::Untrusted`]).
    pub fn create_with(dir: &Path, options: CreateOptions) -> Result<Self, EmulatorError> {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(error::io_err(dir))?;
        state::check_dir(dir)?;
        for name in [STATE_FILE, FLASH_FILE] {
            let path = dir.join(name);
            if present(&path) {
                return Err(EmulatorError::AlreadyExists { path });
            }
        }
        let payload = oce_firmware::build::ImageBuilder::new(FACTORY_FIRMWARE_VERSION).build_flash()?;
        let flash = Flash::create(&dir.join(FLASH_FILE), &payload)?;
        let state = StateFile::factory(options.seed, options.function, &flash.boot_check());
        // state.json is written last: its presence marks a complete state directory.
        state.save(&dir.join(STATE_FILE))?;
        Ok(Self::running(dir.to_path_buf(), state, flash))
    }

    /// Opens the adapter in `dir`, creating a factory-fresh PF if `dir` holds no state yet. A
    /// directory with only part of the state is an error, not a reason to start over.
    pub fn open_or_create(dir: &Path) -> Result<Self, EmulatorError> {
        let fresh = !present(&dir.join(STATE_FILE)) && !present(&dir.join(FLASH_FILE));
        if fresh { Self::create_with(dir, CreateOptions::default()) } else { Self::open(dir) }
    }

    fn running(dir: PathBuf, state: StateFile, flash: Flash) -> Self {
        Self::function_of(dir, Arc::new(CardLock::new(Card::new(state, flash))), 0)
    }

    /// Function `number` of the card behind `card`, its own parts fresh.
    fn function_of(dir: PathBuf, card: Arc<CardLock>, number: u8) -> Self {
        let boots_seen = card.lock().boots;
        Self {
            dir,
            card,
            number,
            boots_seen,
            resources: Resources::default(),
            counters: Counters::default(),
            roce_counters: RoceCounters::default(),
            events: EventLog::default(),
            fat: None,
            peer: Peer::default(),
            response_buf: Vec::new(),
        }
    }

    /// Another NIC function of the same adapter: PCI function `number`, on the port of the same
    /// number, sharing this one's [`Card`] (state file, flash, staging, POST) and starting with
    /// nothing of its own (no queues, counters or events). An adapter has one NIC function per
    /// port ([`crate::assumptions::card`]); a number past its ports, or a VF (which is a single
    /// function), is refused.
    pub fn other_function(&self, number: u8) -> Result<Self, EmulatorError> {
        let mut card = self.card();
        // A VF is a function of its own; a PF card has one NIC function per port.
        let functions = if card.state.identity.function.is_vf() { 1 } else { card.state.identity.macs.len() };
        if usize::from(number) >= functions {
            return Err(EmulatorError::NoSuchFunction { number, functions });
        }
        card.functions = card.functions.max(number + 1);
        drop(card);
        Ok(Self::function_of(self.dir.clone(), Arc::clone(&self.card), number))
    }

    /// The adapter-wide part, locked. Hold it for one step: nothing called while it is held may
    /// lock it again.
    pub(crate) fn card(&self) -> CardGuard<'_> {
        self.card.lock()
    }

    /// The NIC limits of the running profile.
    pub(crate) fn active_nic(&self) -> profiles::NicResources {
        self.card().state.runtime.active.nic
    }

    /// The PCI function number (0 for an adapter opened on its own).
    pub fn function_number(&self) -> u8 {
        self.number
    }

    /// The physical port this function sits on: the one of its own number
    /// ([`crate::assumptions::card`]).
    pub fn port(&self) -> u8 {
        self.number
    }

    /// How many functions of the card have been opened (1 until [`Firmware::other_function`]
    /// opens another): more than one makes the card a multi-function device.
    pub fn card_functions(&self) -> u8 {
        self.card().functions
    }

    /// The card ran POST since this function last looked ([`Firmware::follow_boot`] catches
    /// up): a chip reset or power cycle through another function. `Some(cold)`, true if one of the
    /// missed POSTs was a power cycle.
    pub(crate) fn missed_boot(&self) -> Option<bool> {
        let card = self.card();
        (card.boots != self.boots_seen).then_some(card.cold_boot_at > self.boots_seen)
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.dir
    }

    /// PF or VF.
    pub fn function(&self) -> FunctionType {
        self.card().state.identity.function
    }

    /// How the POST boot went last (which section runs, or that it failed).
    pub fn boot_outcome(&self) -> BootOutcome {
        self.card().state.runtime.boot
    }

    // --- the event log -----------------------------------------------------------------------

    /// Records `event`.
    pub(crate) fn log(&mut self, event: Event) {
        self.events.push(event);
    }

    /// Everything the adapter has logged so far (oldest first).
    pub fn events(&self) -> Vec<Event> {
        self.events.snapshot()
    }

    /// Returns and clears the event log.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.events.take()
    }

    /// How many old events the bounded log has dropped.
    pub fn dropped_events(&self) -> u64 {
        self.events.dropped()
    }

    // --- faults and persistence ---------------------------------------------------------------

    /// The faults now set (the card's: every function sees the same).
    pub fn faults(&self) -> Faults {
        self.card().state.faults.clone()
    }

    /// Replaces the fault set and saves it in the state file.
    pub fn set_faults(&mut self, faults: Faults) -> Result<(), EmulatorError> {
        self.update_faults(|f| {
            *f = faults;
            Ok(true)
        })
        .map(|_| ())
    }

    /// Sets one fault (replacing one of its kind) and saves it.
    pub fn set_fault(&mut self, spec: FaultSpec) -> Result<(), EmulatorError> {
        self.update_faults(|f| {
            f.set(spec);
            Ok(true)
        })
        .map(|_| ())
    }

    /// Clears faults by name ([`Faults::clear`]) and saves; returns whether any was set.
    pub fn clear_fault(&mut self, name: &str) -> Result<bool, EmulatorError> {
        self.update_faults(|f| f.clear(name))
    }

    /// Changes the faults with `change` and saves them when it reports a change; on a failed
    /// save the old faults stay.
    fn update_faults(
        &mut self,
        change: impl FnOnce(&mut Faults) -> Result<bool, EmulatorError>,
    ) -> Result<bool, EmulatorError> {
        let mut card = self.card();
        let before = card.state.faults.clone();
        let changed = change(&mut card.state.faults)?;
        if let Err(e) = card.save(&self.dir) {
            card.state.faults = before;
            return Err(e);
        }
        Ok(changed)
    }

    /// How far a committed flash section goes before the FLASH op answers (not persisted; by
    /// default [`FlashDurability::PageCache`]).
    pub fn set_flash_durability(&mut self, durability: FlashDurability) {
        self.card().flash.durability = durability;
    }

    /// Writes the state file.
    pub(crate) fn save(&self) -> Result<(), EmulatorError> {
        self.card().save(&self.dir)
    }

    /// Saves from a path that cannot return an error (a register write): a failure is logged.
    pub(crate) fn save_or_log(&mut self) {
        if let Err(e) = self.save() {
            self.log(Event::StateSaveFailed { message: e.to_string() });
        }
    }

    /// True when the adapter does not answer at all (faults `gone`, `power-lost`).
    pub(crate) fn gone(&self) -> bool {
        self.card().state.faults.unreachable()
    }

    /// A function-level reset: what the driver created in the function is gone (the rest of the
    /// firmware keeps running).
    pub(crate) fn reset_function(&mut self) {
        self.resources.reset();
    }

    /// True while the physical link is up: the cable is in (no `link-down` fault) and its other
    /// end is there.
    pub(crate) fn physical_link_up(&self) -> bool {
        !self.card().state.faults.link_down && self.peer.present
    }

    /// The other end of the port's cable.
    pub fn peer(&self) -> Peer {
        self.peer
    }

    /// True while the function's logical link is up: the physical link is, and the driver has
    /// not disabled the logical one (SET_LOGICAL_LINK_CONFIG).
    pub(crate) fn logical_link_up(&self) -> bool {
        self.physical_link_up() && self.resources.logical_link_enabled
    }

    /// The adapter loses power now: it stops answering until the next power cycle, and what the
    /// firmware held in RAM (a staged flash section) is lost.
    pub(crate) fn lose_power(&mut self) {
        {
            let mut card = self.card();
            card.state.faults.power_lost = true;
            card.staging.clear();
        }
        self.save_or_log();
    }

    // --- POST and versions ----------------------------------------------------------------------

    /// The firmware's half of POST, run by the function whose register started it: the card
    /// checks the flash and rebuilds the running state (the next profile becomes active, the
    /// booted section's version runs); what the firmware held in RAM is lost, and so is a hang or
    /// UE of the firmware that ran before. `cold` for a power cycle. Returns the outcome for the
    /// semaphore walk. Every other function of the card catches up with
    /// [`Firmware::follow_boot`]. The caller saves.
    pub(crate) fn boot(&mut self, cold: bool) -> BootOutcome {
        let outcome = self.card().boot(cold);
        self.follow_boot();
        outcome
    }

    /// This function's half of a POST the card ran: what the function held in firmware RAM (its
    /// queues, counters, the rendered FAT log) is lost. Returns the outcome for the semaphore
    /// walk.
    pub(crate) fn follow_boot(&mut self) -> BootOutcome {
        let (boots, outcome) = {
            let card = self.card();
            (card.boots, card.state.runtime.boot)
        };
        self.boots_seen = boots;
        self.fat = None;
        self.resources.reset();
        self.counters = Counters::default();
        self.roce_counters = RoceCounters::default();
        self.log(Event::Boot { outcome });
        outcome
    }

    /// What runs: the version the last POST booted ("" if POST failed).
    pub(crate) fn running_version(&self) -> String {
        self.card().state.runtime.running_version.clone().unwrap_or_default()
    }

    /// The flash directory now on flash.
    pub(crate) fn flash_directory(&self) -> Option<FlashDirectory> {
        self.card().flash.directory().map(|found| found.directory)
    }

    /// What is on flash now: `ver_data` of the 0xA0 entry.
    pub(crate) fn stored_version(&self) -> Option<String> {
        self.flash_directory()?.firmware_version()
    }
}

/// A seed for a new adapter's identity: random per call (std's hasher keys are random).
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}
