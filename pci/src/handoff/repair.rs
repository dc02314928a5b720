//! Undoing a driver hand-off whose process died before it gave the functions back: what its
//! [`record`](super::record) says, put back as it was.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::record::{self, Record};
use super::{RestorePlan, SysfsWrite};
use crate::sysfs::Roots;
use crate::{PciAddress, PciError};

/// What [`repair`] did with one function.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Repaired {
    /// The function.
    pub address: PciAddress,
    /// The driver it is on now (`None`: unbound — it was, or its driver is not loaded and will
    /// take it when it loads, `driver_override` being clear).
    pub driver: Option<String>,
}

/// A hand-off [`repair`] undid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// The record it read (and removed).
    pub record: PathBuf,
    /// The process that made the hand-off.
    pub pid: u32,
    /// The function the hand-off was for.
    pub address: PciAddress,
    /// Every function it names that is still in sysfs, where it is now.
    pub functions: Vec<Repaired>,
}

/// Undoes the hand-off recorded for `address`'s adapter, when its process stopped before giving
/// the functions back: each function gets its `driver_override` back (cleared, usually), leaves
/// vfio-pci, and is reprobed so its original driver takes it; then the record is removed.
/// `Ok(None)` when there is no record.
///
/// A function whose original driver is not loaded (be2net, before the modprobe that runs the
/// boot hook has loaded it) is left unbound with its override cleared: the driver takes it when
/// it loads. A function no longer in sysfs is skipped. When a function cannot be given back, the
/// record stays, for the next run to try again ([`PciError::RepairFailed`]).
///
/// Call it only while holding the adapter's lock (the one every ocetool takes for the card): a
/// record exists only while a hand-off runs, so with the lock held it can only be left by a
/// process that died. Without the lock, it could undo a live hand-off under its owner.
pub fn repair(
    roots: &Roots,
    address: PciAddress,
    timeout: Duration,
    writer: Arc<dyn SysfsWrite>,
) -> Result<Option<Repair>, PciError> {
    let path = record::path_for(roots, address)?;
    let slot = crate::discover::adapter_slot(roots, address)?;
    let Some(rec) = Record::load(roots, &path, &slot)? else { return Ok(None) };
    let mut failures = Vec::new();
    let mut functions = Vec::new();
    for f in rec.functions.iter().rev() {
        if !roots.device_dir(f.address).exists() {
            continue;
        }
        let driver = f.driver.clone().filter(|d| roots.driver_dir(d).is_dir());
        let plan = RestorePlan {
            address: f.address,
            roots: roots.clone(),
            writer: Arc::clone(&writer),
            driver: driver.clone(),
            driver_override: f.driver_override.clone(),
            timeout,
            record: None,
        };
        match plan.run() {
            Ok(()) => functions.push(Repaired { address: f.address, driver }),
            Err(e) => failures.push(e),
        }
    }
    if !failures.is_empty() {
        return Err(PciError::RepairFailed { path, pid: rec.pid, address: rec.address, failures });
    }
    record::remove(&path)?;
    functions.reverse();
    Ok(Some(Repair { record: path, pid: rec.pid, address: rec.address, functions }))
}
