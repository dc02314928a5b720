//! The in-process front end: [`Emulator`], the `oce_pci::PciFunction` the host stack runs against
//! in the same process — a [`Device`] in the polled shape, whose DMA space is an IOVA table of the
//! host's own buffers ([`EmuDma`]) and whose interrupt lines go nowhere (the host polls the
//! mailbox, as ocetool does on real hardware).

mod dma;
mod iova;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use oce_mailbox::Clock;
use oce_pci::{ConfigSpace, PciError, PciFunction, RegisterIo};

pub use dma::EmuDma;

use crate::assumptions;
use crate::device::timing::Timing;
use crate::device::{Device, NoInterrupt, Shape, config};
use crate::error::EmulatorError;
use crate::events::{Event, QueueMiss};
use crate::faults::{FaultSpec, Faults};
use crate::firmware::flash::FlashDurability;
use crate::firmware::{CreateOptions, Firmware};
use crate::function::FunctionType;
use crate::info::EmulatorInfo;
use iova::{AllocRefused, IovaSpace};

/// The device as the in-process front end builds it.
type InprocDevice = Device<IovaSpace, NoInterrupt>;

/// Locks the device; a panic in another thread while it held the lock does not make the device
/// unusable (its state is plain data, and every method leaves it consistent).
fn lock(device: &Mutex<InprocDevice>) -> MutexGuard<'_, InprocDevice> {
    device.lock().unwrap_or_else(|e| e.into_inner())
}

/// An emulated OCe14000 function. A cheap, cloneable handle: clones share one adapter.
#[derive(Clone)]
pub struct Emulator {
    config: EmuConfig,
    /// The host memory the device reaches (also inside the device, as its DMA space).
    memory: IovaSpace,
}

/// The emulated function's configuration space ([`PciFunction::config`]).
#[derive(Clone)]
pub struct EmuConfig {
    device: Arc<Mutex<InprocDevice>>,
}

/// A mapped BAR of the emulated function ([`PciFunction::map_bar`]).
#[derive(Clone)]
pub struct EmuBar {
    device: Arc<Mutex<InprocDevice>>,
    bar: u8,
}

impl Emulator {
    /// Opens the adapter whose state is in `dir`. The adapter is running: POST is over (as it
    /// would be for a second process talking to a real adapter), nothing is re-read beyond the
    /// small JSON file, and the flash file is only mapped.
    pub fn open(dir: &Path) -> Result<Self, EmulatorError> {
        Firmware::open(dir).map(Self::from_firmware)
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
        Firmware::create_with(dir, options).map(Self::from_firmware)
    }

    /// Opens the adapter in `dir`, creating a factory-fresh one if `dir` holds no state yet. A
    /// directory with only part of the state is an error, not a reason to start over.
    pub fn open_or_create(dir: &Path) -> Result<Self, EmulatorError> {
        Firmware::open_or_create(dir).map(Self::from_firmware)
    }

    fn from_firmware(firmware: Firmware) -> Self {
        let memory = IovaSpace::default();
        let device = Device::new(firmware, memory.clone(), NoInterrupt, Shape::Polled);
        Self { config: EmuConfig { device: Arc::new(Mutex::new(device)) }, memory }
    }

    fn device(&self) -> MutexGuard<'_, InprocDevice> {
        lock(&self.config.device)
    }

    /// The state directory.
    pub fn state_dir(&self) -> PathBuf {
        self.device().firmware().state_dir().to_path_buf()
    }

    /// PF or VF.
    pub fn function(&self) -> FunctionType {
        self.device().function()
    }

    /// Replaces the clock the firmware's real-time delays (`slow`, `slow-flash` faults) are
    /// measured on: give it the host's `ManualClock` and a test drives them without sleeping.
    pub fn set_clock(&self, clock: Arc<dyn Clock>) {
        self.device().set_clock(clock);
    }

    /// Cold boot: the running state is rebuilt (the next-boot profile becomes active, the
    /// firmware on flash runs, beacons go off) and POST starts again from 0x0000.
    pub fn power_cycle(&self) -> Result<(), EmulatorError> {
        self.device().power_cycle()
    }

    /// Everything the adapter has logged so far (oldest first).
    pub fn events(&self) -> Vec<Event> {
        self.device().firmware().events()
    }

    /// How many old events the bounded log has dropped.
    pub fn dropped_events(&self) -> u64 {
        self.device().firmware().dropped_events()
    }

    /// Returns and clears the event log.
    pub fn take_events(&self) -> Vec<Event> {
        self.device().firmware_mut().take_events()
    }

    /// The queues the host named that the function does not have (oldest first); see
    /// [`Device::queue_misses`].
    pub fn queue_misses(&self) -> Vec<QueueMiss> {
        self.device().queue_misses()
    }

    /// The busy periods, in register reads.
    pub fn timing(&self) -> Timing {
        self.device().timing()
    }

    /// Changes the busy periods (for tests; not persisted).
    pub fn set_timing(&self, timing: Timing) {
        self.device().set_timing(timing);
    }

    /// How far a committed flash section goes before the FLASH op answers (not persisted; by
    /// default [`FlashDurability::PageCache`]).
    pub fn set_flash_durability(&self, durability: FlashDurability) {
        self.device().firmware_mut().set_flash_durability(durability);
    }

    /// The faults now set.
    pub fn faults(&self) -> Faults {
        self.device().firmware().faults().clone()
    }

    /// Replaces the fault set and saves it in the state file.
    pub fn set_faults(&self, faults: Faults) -> Result<(), EmulatorError> {
        self.device().set_faults(faults)
    }

    /// Sets one fault (replacing one of its kind) and saves it.
    pub fn set_fault(&self, spec: FaultSpec) -> Result<(), EmulatorError> {
        self.device().set_fault(spec)
    }

    /// Clears faults by name ([`Faults::clear`]) and saves; returns whether any was set.
    pub fn clear_fault(&self, name: &str) -> Result<bool, EmulatorError> {
        self.device().clear_fault(name)
    }

    /// Clears every fault and saves.
    pub fn clear_faults(&self) -> Result<(), EmulatorError> {
        self.set_faults(Faults::default())
    }

    /// A snapshot of the adapter for display (`ocetool emulator show`).
    pub fn info(&self) -> EmulatorInfo {
        self.device().info()
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
        let mut bytes = [0u8; 4];
        lock(&self.device).read_config(off, &mut bytes);
        Ok(u32::from_le_bytes(bytes))
    }

    fn write32(&self, off: u16, value: u32) -> Result<(), PciError> {
        if !config::valid_offset(off) {
            return Err(PciError::ConfigOffset { off });
        }
        lock(&self.device).write_config(off, &value.to_le_bytes());
        Ok(())
    }
}

impl RegisterIo for EmuBar {
    fn read32(&self, off: u32) -> u32 {
        let mut bytes = [0u8; 4];
        lock(&self.device).read_bar(self.bar, off.into(), &mut bytes);
        u32::from_le_bytes(bytes)
    }

    fn write32(&self, off: u32, value: u32) {
        lock(&self.device).write_bar(self.bar, off.into(), &value.to_le_bytes());
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
        let len = self.device().bar_len(bar).ok_or(PciError::NoSuchBar { bar })?;
        if min_len > len {
            return Err(PciError::BarTooSmall { bar, len, needed: min_len });
        }
        Ok(EmuBar { device: Arc::clone(&self.config.device), bar })
    }

    fn alloc_dma(&self, len: usize) -> Result<EmuDma, PciError> {
        let iova = self.memory.table().map(len).map_err(|refused| PciError::DmaAlloc {
            len,
            reason: match refused {
                AllocRefused::Empty => "a zero-length buffer".to_owned(),
                AllocRefused::TooLarge => {
                    format!("more than the emulator's {} byte limit", assumptions::MAX_DMA_ALLOC)
                }
                AllocRefused::Exhausted => "the emulated IOVA space is used up".to_owned(),
            },
        })?;
        Ok(EmuDma::new(self.memory.clone(), iova, len))
    }
}
