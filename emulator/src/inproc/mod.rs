//! The in-process front end: [`Emulator`], the `oce_pci::PciFunction` the host stack runs
//! against in the same process, with its IOVA table standing in for host memory.

mod dma;
pub(crate) mod iova;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use oce_mailbox::Clock;
use oce_pci::{ConfigSpace, PciError, PciFunction, RegisterIo};

pub use dma::EmuDma;

use crate::assumptions;
use crate::device::config;
use crate::device::timing::Timing;
use crate::error::{self, EmulatorError};
use crate::events::Event;
use crate::faults::{FaultSpec, Faults};
use crate::firmware::flash::FlashDurability;
use crate::function::FunctionType;
use crate::info::EmulatorInfo;

use crate::assumptions::FACTORY_FIRMWARE_VERSION;
use crate::device::model::Model;
use crate::firmware::flash::Flash;
use crate::firmware::state::{FLASH_FILE, STATE_FILE, StateFile};
use crate::inproc::iova::AllocRefused;

/// Locks the model; a panic in another thread while it held the lock does not make the model
/// unusable (its state is plain data, and every method leaves it consistent).
pub(crate) fn lock(model: &Mutex<Model>) -> MutexGuard<'_, Model> {
    model.lock().unwrap_or_else(|e| e.into_inner())
}

/// How [`Emulator::create_with`] makes a new adapter.
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

/// An emulated OCe14000 function. A cheap, cloneable handle: clones share one adapter.
#[derive(Clone)]
pub struct Emulator {
    config: EmuConfig,
}

/// The emulated function's configuration space ([`PciFunction::config`]).
#[derive(Clone)]
pub struct EmuConfig {
    model: Arc<Mutex<Model>>,
}

/// A mapped BAR of the emulated function ([`PciFunction::map_bar`]).
#[derive(Clone)]
pub struct EmuBar {
    model: Arc<Mutex<Model>>,
    bar: u8,
}

impl Emulator {
    /// Opens the adapter whose state is in `dir`. The adapter is running: POST is over (as it
    /// would be for a second process talking to a real adapter), nothing is re-read beyond the
    /// small JSON file, and the flash file is only mapped.
    pub fn open(dir: &Path) -> Result<Self, EmulatorError> {
        if !dir.is_dir() {
            return Err(EmulatorError::NoStateDirectory { dir: dir.to_path_buf() });
        }
        let state = StateFile::load(&dir.join(STATE_FILE))?;
        let flash = Flash::open(&dir.join(FLASH_FILE), state.runtime.flash_directory_offset)?;
        Ok(Self::from_model(Model::running(dir.to_path_buf(), state, flash)))
    }

    /// Creates a factory-fresh adapter in `dir` (made if missing): factory firmware on flash, NIC
    /// profile, POST done. Fails without touching anything if a state file is already there.
    pub fn create(dir: &Path) -> Result<Self, EmulatorError> {
        Self::create_with(dir, CreateOptions::default())
    }

    /// [`Emulator::create`] with the serial number and MACs derived from `seed` (reproducible
    /// identities for tests).
    pub fn create_seeded(dir: &Path, seed: u64) -> Result<Self, EmulatorError> {
        Self::create_with(dir, CreateOptions { seed, function: FunctionType::Pf })
    }

    /// [`Emulator::create`] with explicit options: the identity seed, and whether the state
    /// directory models the PF or a VF (persisted in `state.json`).
    pub fn create_with(dir: &Path, options: CreateOptions) -> Result<Self, EmulatorError> {
        std::fs::create_dir_all(dir).map_err(error::io_err(dir))?;
        for name in [STATE_FILE, FLASH_FILE] {
            let path = dir.join(name);
            if path.exists() {
                return Err(EmulatorError::AlreadyExists { path });
            }
        }
        let payload = oce_firmware::build::ImageBuilder::new(FACTORY_FIRMWARE_VERSION).build_flash()?;
        let flash = Flash::create(&dir.join(FLASH_FILE), &payload)?;
        let state = StateFile::factory(options.seed, options.function, &flash.boot_check());
        // state.json is written last: its presence marks a complete state directory.
        state.save(&dir.join(STATE_FILE))?;
        Ok(Self::from_model(Model::running(dir.to_path_buf(), state, flash)))
    }

    /// Opens the adapter in `dir`, creating a factory-fresh one if `dir` holds no state yet. A
    /// directory with only part of the state is an error, not a reason to start over.
    pub fn open_or_create(dir: &Path) -> Result<Self, EmulatorError> {
        let fresh = !dir.join(STATE_FILE).exists() && !dir.join(FLASH_FILE).exists();
        if fresh { Self::create(dir) } else { Self::open(dir) }
    }

    fn from_model(model: Model) -> Self {
        Self { config: EmuConfig { model: Arc::new(Mutex::new(model)) } }
    }

    fn model(&self) -> MutexGuard<'_, Model> {
        lock(&self.config.model)
    }

    /// The state directory.
    pub fn state_dir(&self) -> PathBuf {
        self.model().dir.clone()
    }

    /// PF or VF.
    pub fn function(&self) -> FunctionType {
        self.model().function()
    }

    /// Replaces the clock the firmware's real-time delays (`slow`, `slow-flash` faults) are
    /// measured on: give it the host's `ManualClock` and a test drives them without sleeping.
    pub fn set_clock(&self, clock: Arc<dyn Clock>) {
        self.model().clock = clock;
    }

    /// Cold boot: the running state is rebuilt (the next-boot profile becomes active, the
    /// firmware on flash runs, beacons go off) and POST starts again from 0x0000.
    pub fn power_cycle(&self) -> Result<(), EmulatorError> {
        self.model().power_cycle()
    }

    /// Everything the adapter has logged so far (oldest first).
    pub fn events(&self) -> Vec<Event> {
        self.model().events.snapshot()
    }

    /// How many old events the bounded log has dropped.
    pub fn dropped_events(&self) -> u64 {
        self.model().events.dropped()
    }

    /// Returns and clears the event log.
    pub fn take_events(&self) -> Vec<Event> {
        self.model().events.take()
    }

    /// The busy periods, in register reads.
    pub fn timing(&self) -> Timing {
        self.model().timing()
    }

    /// Changes the busy periods (for tests; not persisted).
    pub fn set_timing(&self, timing: Timing) {
        self.model().set_timing(timing);
    }

    /// How far a committed flash section goes before the FLASH op answers (not persisted; by
    /// default [`FlashDurability::PageCache`]).
    pub fn set_flash_durability(&self, durability: FlashDurability) {
        self.model().flash.durability = durability;
    }

    /// The faults now set.
    pub fn faults(&self) -> Faults {
        self.model().state.faults.clone()
    }

    /// Replaces the fault set and saves it in the state file.
    pub fn set_faults(&self, faults: Faults) -> Result<(), EmulatorError> {
        self.update_faults(|f| {
            *f = faults;
            Ok(true)
        })
        .map(|_| ())
    }

    /// Sets one fault (replacing one of its kind) and saves it.
    pub fn set_fault(&self, spec: FaultSpec) -> Result<(), EmulatorError> {
        self.update_faults(|f| {
            f.set(spec);
            Ok(true)
        })
        .map(|_| ())
    }

    /// Clears faults by name ([`Faults::clear`]) and saves; returns whether any was set.
    pub fn clear_fault(&self, name: &str) -> Result<bool, EmulatorError> {
        self.update_faults(|f| f.clear(name))
    }

    /// Clears every fault and saves.
    pub fn clear_faults(&self) -> Result<(), EmulatorError> {
        self.set_faults(Faults::default())
    }

    /// Changes the faults with `change` and saves them when it reports a change; on a failed
    /// save the old faults stay.
    fn update_faults(
        &self,
        change: impl FnOnce(&mut Faults) -> Result<bool, EmulatorError>,
    ) -> Result<bool, EmulatorError> {
        let mut model = self.model();
        let before = model.state.faults.clone();
        let changed = change(&mut model.state.faults)?;
        if let Err(e) = model.save() {
            model.state.faults = before;
            return Err(e);
        }
        Ok(changed)
    }

    /// A snapshot of the adapter for display (`ocetool emulator show`).
    pub fn info(&self) -> EmulatorInfo {
        EmulatorInfo::of(&self.model())
    }
}

impl fmt::Debug for Emulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Emulator").field("state_dir", &self.state_dir()).finish()
    }
}

impl fmt::Debug for EmuConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EmuConfig")
    }
}

impl fmt::Debug for EmuBar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmuBar").field("bar", &self.bar).finish()
    }
}

impl ConfigSpace for EmuConfig {
    fn read32(&self, off: u16) -> Result<u32, PciError> {
        if !config::valid_offset(off) {
            return Err(PciError::ConfigOffset { off });
        }
        Ok(lock(&self.model).config_read(off))
    }

    fn write32(&self, off: u16, value: u32) -> Result<(), PciError> {
        if !config::valid_offset(off) {
            return Err(PciError::ConfigOffset { off });
        }
        lock(&self.model).config_write(off, value);
        Ok(())
    }
}

impl RegisterIo for EmuBar {
    fn read32(&self, off: u32) -> u32 {
        lock(&self.model).bar_read(self.bar, off)
    }

    fn write32(&self, off: u32, value: u32) {
        lock(&self.model).bar_write(self.bar, off, value);
    }
}

impl PciFunction for Emulator {
    type Config = EmuConfig;
    type Bar = EmuBar;
    type Dma = EmuDma;

    fn config(&self) -> &EmuConfig {
        &self.config
    }

    fn map_bar(&self, bar: u8, min_len: u64) -> Result<EmuBar, PciError> {
        let len = self.function().bar_len(bar).ok_or(PciError::NoSuchBar { bar })?;
        if min_len > len {
            return Err(PciError::BarTooSmall { bar, len, needed: min_len });
        }
        Ok(EmuBar { model: Arc::clone(&self.config.model), bar })
    }

    fn alloc_dma(&self, len: usize) -> Result<EmuDma, PciError> {
        let iova = self.model().iova.map(len).map_err(|refused| PciError::DmaAlloc {
            len,
            reason: match refused {
                AllocRefused::Empty => "a zero-length buffer".to_owned(),
                AllocRefused::TooLarge => {
                    format!("more than the emulator's {} byte limit", assumptions::MAX_DMA_ALLOC)
                }
                AllocRefused::Exhausted => "the emulated IOVA space is used up".to_owned(),
            },
        })?;
        Ok(EmuDma::new(Arc::clone(&self.config.model), iova, len))
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
