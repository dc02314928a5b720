//! Driver hand-off: moving a PCI function to vfio-pci for one command and always giving it back
//! (design.md §5, ecosystem.md §3.4).
//!
//! [`HandOff::acquire`] checks everything that can be checked before touching the binding
//! (vfio-pci loaded, an IOMMU group, a viable group, the driver and `--unbind`), then moves the
//! function with `driver_override` + `drivers_probe`, the deterministic sequence that cannot grab
//! other devices. The returned guard restores the original binding when it drops — on success,
//! on error and during a panic's unwinding — or explicitly through [`HandOff::restore`], which
//! reports a failure instead of printing it. Signals: see [`crate::signals`].
//!
//! Every sysfs write goes through a [`SysfsWrite`] so tests can put a model of the kernel behind
//! it and assert each write.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

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
        std::fs::OpenOptions::new().write(true).open(path)?.write_all(value.as_bytes())
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
            (Some(libc::EPERM), Lockdown::None) => PciError::SysfsPermission { path },
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
}

impl RestorePlan {
    /// Clears (or restores) `driver_override`, unbinds vfio-pci, reprobes if a driver held the
    /// function, and checks that the original driver has it again.
    fn run(&self) -> Result<(), PciError> {
        let dev = self.roots.device_dir(self.address);
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
/// of vfio-pci waits for the device to be closed. Returns the failures.
pub fn restore_all() -> Vec<PciError> {
    let slots: Vec<Slot> = ACTIVE.lock().unwrap_or_else(PoisonError::into_inner).drain(..).collect();
    slots.iter().filter_map(take).filter_map(|plan| plan.run().err()).collect()
}

/// A PCI function held by vfio-pci for as long as this guard lives.
///
/// Open the function with [`VfioFunction::open`](crate::vfio::VfioFunction::open), which borrows
/// the guard, so the compiler ensures the device is closed before the binding is restored.
#[derive(Debug)]
pub struct HandOff {
    address: PciAddress,
    roots: Roots,
    group: u32,
    original: Option<String>,
    slot: Option<Slot>,
}

impl HandOff {
    /// Makes sure `address` is bound to vfio-pci, moving it there if needed and allowed.
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
        let dev = roots.device_dir(address);
        if !dev.exists() {
            return Err(PciError::NoSuchFunction { address, path: dev });
        }
        if !sysfs::vfio_pci_loaded(roots) {
            return Err(PciError::VfioPciNotLoaded { path: roots.driver_dir(VFIO_PCI) });
        }
        let group = sysfs::iommu_group(roots, address)?.ok_or(PciError::NoIommuGroup { address })?;
        let driver = sysfs::bound_driver(roots, address)?;
        if let Some(d) = driver.as_deref().filter(|d| *d != VFIO_PCI && !options.allow_unbind) {
            return Err(PciError::DriverBound { address, driver: d.to_owned() });
        }
        if let Some(b) = sysfs::group_blockers(roots, group, address)?.into_iter().next() {
            return Err(PciError::GroupNotViable { address, group, member: b.member, driver: b.driver });
        }
        let mut guard = Self { address, roots: roots.clone(), group, original: driver.clone(), slot: None };
        if driver.as_deref() != Some(VFIO_PCI) {
            let ov_path = dev.join("driver_override");
            let ov = std::fs::read_to_string(&ov_path).map_err(|source| PciError::Io { path: ov_path, source })?;
            let ov = ov.trim();
            let plan = RestorePlan {
                address,
                roots: roots.clone(),
                writer: Arc::clone(&writer),
                driver: driver.clone(),
                driver_override: (!ov.is_empty() && ov != "(null)").then(|| ov.to_owned()),
                timeout: options.timeout,
            };
            // Registered before the first write: from here on, any failure restores.
            let slot: Slot = Arc::new(Mutex::new(Some(plan)));
            ACTIVE.lock().unwrap_or_else(PoisonError::into_inner).push(Arc::clone(&slot));
            guard.slot = Some(slot);
            guard.bind(&*writer, driver.as_deref(), options.timeout)?;
        }
        guard.check_node()?;
        Ok(guard)
    }

    /// The driver_override + unbind + drivers_probe sequence, then the wait for vfio-pci and
    /// `/dev/vfio/<group>` (ecosystem.md §3.4 step 5).
    fn bind(&self, writer: &dyn SysfsWrite, driver: Option<&str>, timeout: Duration) -> Result<(), PciError> {
        let roots = &self.roots;
        let addr = self.address.to_string();
        write(writer, roots, &roots.device_dir(self.address).join("driver_override"), VFIO_PCI)?;
        if let Some(d) = driver {
            write(writer, roots, &roots.driver_dir(d).join("unbind"), &addr)?;
        }
        write(writer, roots, &roots.drivers_probe(), &addr)?;
        let node = roots.vfio_group_node(self.group);
        let mut now = None;
        let bound = wait_for(timeout, || {
            now = sysfs::bound_driver(roots, self.address)?;
            Ok(now.as_deref() == Some(VFIO_PCI) && node.exists())
        })?;
        if bound {
            Ok(())
        } else {
            let node_present = node.exists();
            Err(PciError::BindTimeout { address: self.address, waited: timeout, driver: now, node, node_present })
        }
    }

    /// Opens and closes `/dev/vfio/<group>` to turn a permission problem into a clear error
    /// before pci-driver meets it.
    fn check_node(&self) -> Result<(), PciError> {
        let path = self.vfio_group_node();
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

    /// Its IOMMU group.
    pub fn group(&self) -> u32 {
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

    /// `<dev>/vfio/<group>`.
    pub fn vfio_group_node(&self) -> PathBuf {
        self.roots.vfio_group_node(self.group)
    }

    /// The driver that held the function before, if any.
    pub fn original_driver(&self) -> Option<&str> {
        self.original.as_deref()
    }

    /// True when ocetool changed the binding (and will restore it).
    pub fn changed_binding(&self) -> bool {
        self.slot.is_some()
    }

    /// Restores the original binding now and reports how it went.
    pub fn restore(mut self) -> Result<(), PciError> {
        self.restore_inner()
    }

    fn restore_inner(&mut self) -> Result<(), PciError> {
        let Some(slot) = self.slot.take() else { return Ok(()) };
        ACTIVE.lock().unwrap_or_else(PoisonError::into_inner).retain(|s| !Arc::ptr_eq(s, &slot));
        take(&slot).map_or(Ok(()), |plan| plan.run())
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
#[path = "handoff_tests.rs"]
mod tests;
