//! The emulated firmware, register-free: the persistent state, the flash, WRITE_FLASHROM staging,
//! the profiles and the command handlers, behind one entry point every transport calls
//! ([`Firmware::execute`]).
//!
//! The firmware never touches a register or host memory: a transport (the bootstrap mailbox
//! engine, and the MCC ring engine, which serves be2net's MCC and ocrdma's MQ alike) copies a
//! command into a buffer, calls
//! [`Firmware::execute`], and copies the response out. What the firmware needs to know of the
//! registers comes in a [`Context`].

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

use oce_firmware::dir::FlashDirectory;

pub use execute::{Context, Executed, Owed};

use crate::assumptions::FACTORY_FIRMWARE_VERSION;
use crate::datapath::Counters;
use crate::datapath::roce::stats::RoceCounters;
use crate::error::{self, EmulatorError};
use crate::events::{BootOutcome, Event, EventLog};
use crate::faults::{FaultSpec, Faults};
use crate::function::FunctionType;
use flash::{Flash, FlashDurability, Staging};
use resources::Resources;
use state::{FLASH_FILE, MacAddress, Runtime, STATE_FILE, StateFile};

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

/// The firmware of one emulated adapter, with its state directory.
#[derive(Debug)]
pub struct Firmware {
    dir: PathBuf,
    pub(crate) state: StateFile,
    pub(crate) flash: Flash,
    /// The section WRITE_FLASHROM is staging (firmware RAM: lost at reset and power loss).
    pub(crate) staging: Staging,
    /// What a driver created in the function (firmware RAM: lost at any reset).
    pub(crate) resources: Resources,
    /// What the datapath counted (firmware RAM: lost at POST), for GET_STATISTICS.
    pub(crate) counters: Counters,
    /// What the RoCE path counted (firmware RAM: lost at POST), for GET_RDMA_STATS.
    pub(crate) roce_counters: RoceCounters,
    /// The adapter's log: what the firmware did and what the device saw (transports log here too).
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
        Self {
            dir,
            state,
            flash,
            staging: Staging::default(),
            resources: Resources::default(),
            counters: Counters::default(),
            roce_counters: RoceCounters::default(),
            events: EventLog::default(),
            fat: None,
            peer: Peer::default(),
            response_buf: Vec::new(),
        }
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.dir
    }

    /// PF or VF.
    pub fn function(&self) -> FunctionType {
        self.state.identity.function
    }

    /// How the POST boot went last (which section runs, or that it failed).
    pub fn boot_outcome(&self) -> BootOutcome {
        self.state.runtime.boot
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

    /// The faults now set.
    pub fn faults(&self) -> &Faults {
        &self.state.faults
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
        let before = self.state.faults.clone();
        let changed = change(&mut self.state.faults)?;
        if let Err(e) = self.save() {
            self.state.faults = before;
            return Err(e);
        }
        Ok(changed)
    }

    /// How far a committed flash section goes before the FLASH op answers (not persisted; by
    /// default [`FlashDurability::PageCache`]).
    pub fn set_flash_durability(&mut self, durability: FlashDurability) {
        self.flash.durability = durability;
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

    /// A function-level reset: what the driver created in the function is gone (the rest of the
    /// firmware keeps running).
    pub(crate) fn reset_function(&mut self) {
        self.resources.reset();
    }

    /// True while the physical link is up: the cable is in (no `link-down` fault) and its other
    /// end is there.
    pub(crate) fn physical_link_up(&self) -> bool {
        !self.state.faults.link_down && self.peer.present
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
        self.state.faults.power_lost = true;
        self.staging.clear();
        self.save_or_log();
    }

    // --- POST and versions ----------------------------------------------------------------------

    /// The firmware's half of POST: checks the flash and rebuilds the running state (the next
    /// profile becomes active, the booted section's version runs); what the firmware held in RAM
    /// is lost, and so is a hang or UE of the firmware that ran before. Returns the outcome for
    /// the semaphore walk. The caller saves.
    pub(crate) fn boot(&mut self) -> BootOutcome {
        self.state.faults.firmware_restarted();
        let check = self.flash.boot_check();
        self.state.runtime = Runtime::after_post(&self.state.nvram, self.state.identity.macs.len(), &check);
        self.staging.clear();
        self.fat = None;
        self.resources.reset();
        self.counters = Counters::default();
        self.roce_counters = RoceCounters::default();
        self.log(Event::Boot { outcome: check.outcome });
        check.outcome
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
}

/// A seed for a new adapter's identity: random per call (std's hasher keys are random).
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}
