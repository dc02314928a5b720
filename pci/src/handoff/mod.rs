//! Driver hand-off: moving an adapter's PCI functions where a backend needs them for one command,
//! and always giving them back (design.md §5, ecosystem.md §3.4).
//!
//! [`Plan::new`] checks everything that can be checked before touching a binding (vfio-pci
//! loaded, an IOMMU group, a group with nothing of another device in the way, the drivers and
//! `--unbind`) and lists what will move and what goes down with it, for the confirmation.
//! [`HandOff::execute`] then moves each function with `driver_override` (+ `drivers_probe` for
//! vfio-pci), the deterministic sequence that cannot grab other devices. The returned guard
//! restores every original binding when it drops — on success, on error and during a panic's
//! unwinding — or explicitly through [`HandOff::restore`], which reports a failure instead of
//! printing it. Signals: see [`crate::signals`].
//!
//! A process that dies without running either (SIGKILL, a crash) cannot give anything back, so a
//! hand-off first writes a [`record`] of what it changes, before its first sysfs write, and
//! removes it once every function is back. [`repair`] undoes a hand-off whose record outlived its
//! process; [`Plan::new`] refuses to plan over one, so a run never takes the vfio-pci binding such
//! a hand-off left for a function's original driver.
//!
//! Every sysfs write goes through a [`SysfsWrite`] so tests can put a model of the kernel behind
//! it and assert each write.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

mod plan;
pub mod record;
mod repair;

pub use plan::{HOLD_OVERRIDE, Move, Plan, Target};
pub use record::{Record, RecordedFunction};
pub use repair::{Repair, Repaired, repair};

use crate::signals;
use crate::sysfs::{self, Lockdown, Roots, VFIO_PCI};
use crate::{PciAddress, PciError};

/// Writes sysfs attributes. The kernel acts on each write; tests substitute a model.
pub trait SysfsWrite: fmt::Debug + Send + Sync {
    /// Writes `value` to the attribute at `path` in one `write(2)`.
    fn write_attr(&self, path: &Path, value: &str) -> io::Result<()>;
}

/// The real kernel's sysfs.
#[derive(Debug, Default, Clone, Copy)]
pub struct KernelSysfs;

impl SysfsWrite for KernelSysfs {
    fn write_attr(&self, path: &Path, value: &str) -> io::Result<()> {
        // Opened as the shell's `echo VALUE > ATTR` opens it: sysfs ignores the truncation, and a
        // plain file (a test's fake tree) holds exactly the value written.
        std::fs::OpenOptions::new().write(true).truncate(true).open(path)?.write_all(value.as_bytes())
    }
}

/// How a hand-off may proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandOffOptions {
    /// Whether a host driver may be unbound (`--unbind`).
    pub allow_unbind: bool,
    /// How long to wait for the kernel to finish a bind or a restore.
    pub timeout: Duration,
}

impl Default for HandOffOptions {
    fn default() -> Self {
        Self { allow_unbind: false, timeout: Duration::from_secs(10) }
    }
}

/// Pause between two looks at sysfs while waiting for a (re)bind.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// Polls `done` until it is true or `timeout` has passed; always looks at least once.
fn wait_for(timeout: Duration, mut done: impl FnMut() -> Result<bool, PciError>) -> Result<bool, PciError> {
    let deadline = Instant::now() + timeout;
    loop {
        if done()? {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Writes one attribute, turning the OS error into what it means here.
fn write(writer: &dyn SysfsWrite, roots: &Roots, path: &Path, value: &str) -> Result<(), PciError> {
    writer.write_attr(path, value).map_err(|source| {
        let path = path.to_path_buf();
        match (source.raw_os_error(), sysfs::lockdown(roots)) {
            (Some(libc::EACCES), _) => PciError::SysfsPermission { path },
            (Some(libc::EPERM), mode @ (Lockdown::Integrity | Lockdown::Confidentiality)) => {
                PciError::LockedDown { path, mode }
            }
            (Some(libc::EPERM), Lockdown::None | Lockdown::Unknown) => PciError::SysfsPermission { path },
            _ => PciError::SysfsWrite { path, value: value.to_owned(), source },
        }
    })
}

/// What it takes to put a function back the way ocetool found it.
#[derive(Debug)]
struct RestorePlan {
    address: PciAddress,
    roots: Roots,
    writer: Arc<dyn SysfsWrite>,
    /// The driver bound before, `None` if the function was unbound.
    driver: Option<String>,
    /// The `driver_override` before, `None` if unset.
    driver_override: Option<String>,
    timeout: Duration,
    /// The hand-off record that names this function, removed once every function it names is
    /// back.
    record: Option<PathBuf>,
}

impl RestorePlan {
    /// Clears (or restores) `driver_override`, unbinds vfio-pci, reprobes if a driver held the
    /// function, and checks that the original driver has it again. A function already as it
    /// was is left alone.
    fn run(&self) -> Result<(), PciError> {
        let dev = self.roots.device_dir(self.address);
        // Already as it was (the move failed at its first write, or a repair runs again): nothing
        // to write, and nothing a refused write could then leave recorded forever.
        if read_override(&self.roots, self.address)? == self.driver_override
            && sysfs::bound_driver(&self.roots, self.address)? == self.driver
        {
            return Ok(());
        }
        let w = &*self.writer;
        let ov = self.driver_override.as_deref().map_or_else(|| "\n".to_owned(), |o| format!("{o}\n"));
        write(w, &self.roots, &dev.join("driver_override"), &ov)?;
        let addr = self.address.to_string();
        if sysfs::bound_driver(&self.roots, self.address)?.as_deref() == Some(VFIO_PCI) {
            write(w, &self.roots, &self.roots.driver_dir(VFIO_PCI).join("unbind"), &addr)?;
        }
        if self.driver.is_some() {
            write(w, &self.roots, &self.roots.drivers_probe(), &addr)?;
        }
        let mut actual = None;
        let back = wait_for(self.timeout, || {
            actual = sysfs::bound_driver(&self.roots, self.address)?;
            Ok(actual == self.driver)
        })?;
        if back {
            Ok(())
        } else {
            Err(PciError::RestoreFailed {
                address: self.address,
                expected: self.driver.clone(),
                actual,
                override_path: dev.join("driver_override"),
            })
        }
    }
}

/// A restore plan shared between a guard and the process-wide registry; `None` once run.
type Slot = Arc<Mutex<Option<RestorePlan>>>;

/// Every hand-off whose restore has not run yet.
static ACTIVE: Mutex<Vec<Slot>> = Mutex::new(Vec::new());

fn take(slot: &Slot) -> Option<RestorePlan> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

/// Restores every live hand-off now, for a caller about to leave through `std::process::exit`
/// (which runs no destructors). Every `VfioFunction` must be dropped first: the kernel's unbind
/// of vfio-pci waits for the device to be closed. Returns the failures. The record of each
/// hand-off whose functions all came back is removed; the others stay for the next run.
pub fn restore_all() -> Vec<PciError> {
    let slots: Vec<Slot> = ACTIVE.lock().unwrap_or_else(PoisonError::into_inner).drain(..).collect();
    run_plans(slots.iter().filter_map(take).collect())
}

/// Runs `plans` (every one, whatever fails) and removes each record none of whose functions
/// failed. Returns the failures.
fn run_plans(plans: Vec<RestorePlan>) -> Vec<PciError> {
    let mut failures = Vec::new();
    let mut records: Vec<(PathBuf, bool)> = Vec::new();
    for plan in plans {
        let result = plan.run();
        if let Some(path) = plan.record {
            let ok = result.is_ok();
            match records.iter_mut().find(|(p, _)| *p == path) {
                Some(entry) => entry.1 &= ok,
                None => records.push((path, ok)),
            }
        }
        if let Err(e) = result {
            failures.push(e);
        }
    }
    for (path, all_back) in records {
        if all_back && let Err(e) = record::remove(&path) {
            failures.push(e);
        }
    }
    failures
}

/// The `driver_override` of `address` now, `None` when unset.
fn read_override(roots: &Roots, address: PciAddress) -> Result<Option<String>, PciError> {
    let path = roots.device_dir(address).join("driver_override");
    let ov = std::fs::read_to_string(&path).map_err(|source| PciError::Io { path, source })?;
    let ov = ov.trim();
    Ok((!ov.is_empty() && ov != "(null)").then(|| ov.to_owned()))
}

/// Refuses to hand off while the record at `path` says a hand-off of a stopped process is not
/// undone: its functions' current drivers are not their original ones.
pub(crate) fn refuse_left_over(roots: &Roots, path: &Path, address: PciAddress) -> Result<(), PciError> {
    let slot = crate::discover::adapter_slot(roots, address)?;
    match Record::load(roots, path, &slot)? {
        Some(left) => Err(PciError::HandOffLeftOver { path: path.to_path_buf(), pid: left.pid, address: left.address }),
        None => Ok(()),
    }
}

/// The functions of one adapter held where a backend needs them (on vfio-pci, or detached) for
/// as long as this guard lives.
///
/// Open the function with [`VfioFunction::open`](crate::vfio::VfioFunction::open) or
/// [`SysfsFunction::open`](crate::sysfs_backend::SysfsFunction::open), which borrow the guard, so
/// the compiler ensures the device is closed before the bindings are restored.
#[derive(Debug)]
pub struct HandOff {
    address: PciAddress,
    roots: Roots,
    target: Target,
    group: Option<u32>,
    original: Option<String>,
    moved: Vec<Move>,
    /// One restore plan per moved function, in the order they moved.
    slots: Vec<Slot>,
    /// The hand-off's record, while it exists.
    record: Option<PathBuf>,
}

impl HandOff {
    /// Makes sure `address` is bound to vfio-pci, with every function of its adapter that shares
    /// its IOMMU group on vfio-pci too, moving them there if needed and allowed ([`Plan::new`]).
    ///
    /// - already on vfio-pci: nothing changes, nothing is restored;
    /// - unbound: bound to vfio-pci, left unbound again afterwards;
    /// - on another driver: [`PciError::DriverBound`] unless `options.allow_unbind`; with it,
    ///   moved to vfio-pci and given back to that driver afterwards.
    pub fn acquire(
        address: PciAddress,
        roots: &Roots,
        options: &HandOffOptions,
        writer: Arc<dyn SysfsWrite>,
    ) -> Result<Self, PciError> {
        let plan = Plan::new(address, roots, Target::VfioPci, options.allow_unbind)?;
        Self::execute(plan, roots, options.timeout, writer)
    }

    /// Runs `plan`: records what it will change ([`record`]), then moves each function in turn,
    /// registering its restore before the first write, so a failure (or a stop request) part-way
    /// gives back every function already moved, and the one that was moving. A function whose
    /// driver changed since the plan was made (while the user was asked) stops the hand-off with
    /// [`PciError::BindingChanged`]. The record is written before anything moves; when it cannot
    /// be written, nothing moves.
    pub fn execute(
        plan: Plan,
        roots: &Roots,
        timeout: Duration,
        writer: Arc<dyn SysfsWrite>,
    ) -> Result<Self, PciError> {
        let original = plan.original_driver(roots)?;
        let overrides =
            plan.moves.iter().map(|m| read_override(roots, m.address)).collect::<Result<Vec<_>, PciError>>()?;
        let record = match plan.moves.first() {
            None => None,
            Some(_) => {
                let path = record::path_for(roots, plan.address)?;
                refuse_left_over(roots, &path, plan.address)?;
                let functions = plan
                    .moves
                    .iter()
                    .zip(&overrides)
                    .map(|(m, ov)| RecordedFunction {
                        address: m.address,
                        driver: m.driver.clone(),
                        driver_override: ov.clone(),
                    })
                    .collect();
                Record { pid: std::process::id(), address: plan.address, target: plan.target, functions }
                    .write(&path)?;
                Some(path)
            }
        };
        let mut guard = Self {
            address: plan.address,
            roots: roots.clone(),
            target: plan.target,
            group: plan.iommu_group,
            original,
            moved: Vec::new(),
            slots: Vec::new(),
            record,
        };
        for (m, ov) in plan.moves.into_iter().zip(overrides) {
            signals::check()?;
            let now = sysfs::bound_driver(roots, m.address)?;
            if now != m.driver {
                return Err(PciError::BindingChanged { address: m.address, expected: m.driver, actual: now });
            }
            let restore = RestorePlan {
                address: m.address,
                roots: roots.clone(),
                writer: Arc::clone(&writer),
                driver: m.driver.clone(),
                driver_override: ov,
                timeout,
                record: guard.record.clone(),
            };
            // Registered before the first write: from here on, any failure restores.
            let slot: Slot = Arc::new(Mutex::new(Some(restore)));
            ACTIVE.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::clone(&slot));
            guard.slots.push(slot);
            guard.moved.push(m.clone());
            guard.move_one(&*writer, &m, timeout)?;
        }
        if guard.target == Target::VfioPci {
            guard.check_node()?;
        }
        Ok(guard)
    }

    /// The driver_override + unbind (+ drivers_probe) sequence for one function, then the wait
    /// until it is where the target wants it (ecosystem.md §3.4 step 5): on vfio-pci with
    /// `/dev/vfio/<group>` present, or unbound.
    fn move_one(&self, writer: &dyn SysfsWrite, m: &Move, timeout: Duration) -> Result<(), PciError> {
        let roots = &self.roots;
        let addr = m.address.to_string();
        write(writer, roots, &roots.device_dir(m.address).join("driver_override"), self.target.override_value())?;
        if let Some(d) = &m.driver {
            write(writer, roots, &roots.driver_dir(d).join("unbind"), &addr)?;
        }
        // vfio-pci creates /dev/vfio/<group> when it takes a function; a detached one has none.
        let node = self.group.filter(|_| self.target == Target::VfioPci).map(|g| roots.vfio_group_node(g));
        if self.target == Target::VfioPci {
            write(writer, roots, &roots.drivers_probe(), &addr)?;
        }
        let mut now = None;
        let arrived = wait_for(timeout, || {
            now = sysfs::bound_driver(roots, m.address)?;
            Ok(now.as_deref() == self.target.driver() && node.as_ref().is_none_or(|n| n.exists()))
        })?;
        match (arrived, self.target, node) {
            (true, _, _) => Ok(()),
            (false, Target::VfioPci, Some(node)) => {
                let node_present = node.exists();
                Err(PciError::BindTimeout { address: m.address, waited: timeout, driver: now, node, node_present })
            }
            (false, _, _) => Err(PciError::UnbindTimeout { address: m.address, waited: timeout, driver: now }),
        }
    }

    /// Opens and closes `/dev/vfio/<group>` to turn a permission problem into a clear error
    /// before pci-driver meets it.
    fn check_node(&self) -> Result<(), PciError> {
        let path = self.vfio_group_node().ok_or(PciError::NoIommuGroup { address: self.address })?;
        match std::fs::OpenOptions::new().read(true).write(true).open(&path) {
            Ok(_) => Ok(()),
            Err(e) => Err(match e.raw_os_error() {
                Some(libc::EACCES | libc::EPERM) => PciError::VfioPermission { path },
                Some(libc::EBUSY) => PciError::VfioGroupBusy { path },
                _ => PciError::Io { path, source: e },
            }),
        }
    }

    /// The function.
    pub fn address(&self) -> PciAddress {
        self.address
    }

    /// Where the functions were put.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Its IOMMU group, if it has one (always, for [`Target::VfioPci`]).
    pub fn group(&self) -> Option<u32> {
        self.group
    }

    /// The roots the hand-off works in.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// Its sysfs folder.
    pub fn sysfs_path(&self) -> PathBuf {
        self.roots.device_dir(self.address)
    }

    /// `<dev>/vfio/<group>`, if the function has a group.
    pub fn vfio_group_node(&self) -> Option<PathBuf> {
        self.group.map(|g| self.roots.vfio_group_node(g))
    }

    /// The driver that held the function before, if any.
    pub fn original_driver(&self) -> Option<&str> {
        self.original.as_deref()
    }

    /// The functions ocetool moved (and will give back), the driven function first.
    pub fn moved(&self) -> &[Move] {
        &self.moved
    }

    /// True when ocetool changed a binding (and will restore it).
    pub fn changed_binding(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Restores the original bindings now, the last moved first, and reports how it went. Every
    /// function is given back even when another's restore fails.
    pub fn restore(mut self) -> Result<(), PciError> {
        self.restore_inner()
    }

    fn restore_inner(&mut self) -> Result<(), PciError> {
        let slots: Vec<Slot> = self.slots.drain(..).rev().collect();
        ACTIVE.lock().unwrap_or_else(PoisonError::into_inner).retain(|s| !slots.iter().any(|m| Arc::ptr_eq(s, m)));
        let plans: Vec<RestorePlan> = slots.iter().filter_map(take).collect();
        // Plans taken by `restore_all` meanwhile were run there, which also decided the record.
        let all_here = plans.len() == slots.len();
        let mut failures = run_plans(plans);
        if let Some(path) = self.record.take()
            && all_here
            && failures.is_empty()
            && let Err(e) = record::remove(&path)
        {
            failures.push(e);
        }
        match failures.len() {
            0 => Ok(()),
            1 => Err(failures.remove(0)),
            _ => Err(PciError::RestoreFailures { failures }),
        }
    }
}

impl Drop for HandOff {
    fn drop(&mut self) {
        if let Err(err) = self.restore_inner() {
            // A destructor cannot return the error; saying nothing would leave the user with a
            // NIC silently missing. `HandOff::restore` is the path that reports it properly.
            eprintln!("ocetool: warning: {err}");
        }
    }
}

#[cfg(test)]
mod adapter_tests;
#[cfg(test)]
mod override_tests;
#[cfg(test)]
mod record_tests;
#[cfg(test)]
mod storage_tests;
#[cfg(test)]
pub(crate) mod tests;
