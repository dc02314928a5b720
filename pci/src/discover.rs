//! Finding every OneConnect function in sysfs, grouped by physical adapter, with what ocetool can
//! do with each and why not (`ocetool list`; spec/protocol.md §1.1, ecosystem.md §3.4 steps 1–4).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Serialize, Serializer};

use crate::backend::{self, Backend, Request, SysfsBlocker};
use crate::ids::{Chip, FunctionKind, identify};
use crate::sysfs::{self, Lockdown, Roots, VFIO_PCI};
use crate::{PciAddress, PciError};

/// Which PCI functions [`discover`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// OneConnect functions only.
    OneConnect,
    /// OneConnect functions, and every other PCI function in [`Inventory::other_functions`]
    /// (`ocetool list --all`: what else shares the IOMMU groups, what the test guest has).
    All,
}

/// Everything `ocetool list` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Inventory {
    /// The adapters found, in address order.
    pub adapters: Vec<Adapter>,
    /// With [`Scope::All`], the PCI functions that are not OneConnect functions; else empty.
    pub other_functions: Vec<OtherFunction>,
    /// Whether the vfio-pci driver is loaded.
    pub vfio_pci_loaded: bool,
    /// The kernel lockdown mode.
    pub lockdown: Lockdown,
    /// What the lockdown mode means for ocetool, when one is in force.
    pub lockdown_note: Option<&'static str>,
}

/// One physical adapter: the functions that share a domain, bus and device number, plus the
/// virtual functions whose `physfn` is one of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Adapter {
    /// `DDDD:BB:DD`, the address without the function number.
    pub slot: String,
    /// The chip of its functions.
    pub chip: Chip,
    /// Its functions, physical functions first, each in address order.
    pub functions: Vec<FunctionInfo>,
}

/// One OneConnect PCI function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionInfo {
    /// The function's address.
    pub address: PciAddress,
    /// PCI vendor ID (JSON: `"0x10df"`).
    #[serde(serialize_with = "crate::ids::serialize_id")]
    pub vendor_id: u16,
    /// PCI device ID (JSON: `"0x0720"`).
    #[serde(serialize_with = "crate::ids::serialize_id")]
    pub device_id: u16,
    /// The chip.
    pub chip: Chip,
    /// What the function does.
    pub kind: FunctionKind,
    /// True for an SR-IOV virtual function.
    pub virtual_function: bool,
    /// The PF of a virtual function.
    pub physical_function: Option<PciAddress>,
    /// The bound driver, if any.
    pub driver: Option<String>,
    /// The IOMMU group, if the IOMMU is on.
    pub iommu_group: Option<u32>,
    /// The backend ocetool would use for it (`vfio` with an IOMMU group, `sysfs` without);
    /// `None` for a function ocetool does not drive at all.
    pub backend: Option<Backend>,
    /// Why that backend.
    pub backend_reason: Option<String>,
    /// True when `ocetool --device <address>` can drive the function as things stand.
    pub usable: bool,
    /// Why it cannot: every blocker's message, joined with "; ".
    pub reason: Option<String>,
    /// The blockers, typed.
    #[serde(skip)]
    pub blockers: Vec<Blocker>,
}

/// A PCI function that is not a OneConnect function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherFunction {
    /// The function's address.
    pub address: PciAddress,
    /// PCI vendor ID (JSON: `"0x8086"`).
    #[serde(serialize_with = "crate::ids::serialize_id")]
    pub vendor_id: u16,
    /// PCI device ID.
    #[serde(serialize_with = "crate::ids::serialize_id")]
    pub device_id: u16,
    /// The class code, 24 bits (JSON: `"0x020000"`).
    #[serde(serialize_with = "hex24")]
    pub class: u32,
    /// The bound driver, if any.
    pub driver: Option<String>,
    /// The IOMMU group, if the IOMMU is on.
    pub iommu_group: Option<u32>,
}

fn hex24<S: Serializer>(value: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{value:#08x}"))
}

/// One reason ocetool cannot drive a function right now.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Blocker {
    /// A chip other than Skyhawk.
    UnsupportedChip(Chip),
    /// A NIC virtual function.
    VirtualFunction,
    /// An FCoE function.
    Fcoe,
    /// An iSCSI function.
    Iscsi,
    /// The function has no IOMMU group, and the host does not let the sysfs backend run.
    SysfsBackend(SysfsBlocker),
    /// The vfio-pci driver is not loaded.
    VfioPciNotLoaded,
    /// Another function of the same adapter shares the IOMMU group and a host driver holds it;
    /// `--unbind` hands it over too.
    AdapterFunctionBound {
        /// The other function.
        member: PciAddress,
        /// Its driver.
        driver: String,
    },
    /// A storage function of the same adapter (FCoE, iSCSI) shares the IOMMU group and a host
    /// driver holds it: ocetool never unbinds it, `--unbind` or not.
    StorageFunctionBound {
        /// The storage function.
        member: PciAddress,
        /// FCoE or iSCSI.
        kind: FunctionKind,
        /// Its driver.
        driver: String,
    },
    /// A member of the IOMMU group that is not a function of this adapter is held by a host
    /// driver.
    GroupShared {
        /// The group.
        group: u32,
        /// The member in the way.
        member: String,
        /// Its driver.
        driver: String,
    },
    /// A host driver holds the function; `--unbind` hands it over.
    BoundTo {
        /// The driver.
        driver: String,
    },
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedChip(chip) => {
                write!(f, "{} ({}): ocetool drives Skyhawk (OCe14000) only", chip.name(), chip.product_line())
            }
            Self::VirtualFunction => f.write_str("VF: profile and firmware operations need the PF"),
            Self::Fcoe => f.write_str("FCoE function: ocetool drives the NIC physical function"),
            Self::Iscsi => f.write_str("iSCSI function: ocetool drives the NIC physical function"),
            Self::SysfsBackend(blocker) => write!(f, "no IOMMU group, and {blocker}"),
            Self::VfioPciNotLoaded => f.write_str("vfio-pci not loaded: run modprobe vfio-pci"),
            Self::AdapterFunctionBound { member, driver } => {
                write!(f, "{member} of the same adapter and IOMMU group is bound to {driver}: pass --unbind")
            }
            Self::StorageFunctionBound { member, kind, driver } => write!(
                f,
                "{member}, the adapter's {} function in the same IOMMU group, is bound to {driver}, which ocetool \
                 never unbinds: stop what uses its disks and unbind it yourself",
                kind.label()
            ),
            Self::GroupShared { group, member, driver } => {
                write!(f, "IOMMU group {group} shared with {member} (bound to {driver})")
            }
            Self::BoundTo { driver } => write!(f, "bound to {driver}: pass --unbind"),
        }
    }
}

/// The blocker inherent in the function itself (chip, kind), if any: nothing about the system
/// changes it.
fn inherent_blocker(chip: Chip, kind: FunctionKind, virtual_function: bool) -> Option<Blocker> {
    if chip != Chip::Skyhawk {
        return Some(Blocker::UnsupportedChip(chip));
    }
    match kind {
        FunctionKind::Fcoe => Some(Blocker::Fcoe),
        FunctionKind::Iscsi => Some(Blocker::Iscsi),
        FunctionKind::NicVf => Some(Blocker::VirtualFunction),
        FunctionKind::NicPf if virtual_function => Some(Blocker::VirtualFunction),
        FunctionKind::NicPf => None,
    }
}

/// The blockers that come from the system, for the backend `backend`: for VFIO the IOMMU group,
/// vfio-pci and the bound driver; for sysfs the host's prerequisites and the bound driver.
fn system_blockers(
    roots: &Roots,
    address: PciAddress,
    backend: Backend,
    group: Option<u32>,
    driver: Option<&str>,
) -> Result<Vec<Blocker>, PciError> {
    let mut blockers = Vec::new();
    match (backend, group) {
        (Backend::Vfio, Some(group)) => {
            let adapter = sysfs::adapter_of(roots, address)?;
            for b in sysfs::group_blockers(roots, group, address)? {
                match b.member.parse::<PciAddress>() {
                    Ok(member) if sysfs::adapter_of(roots, member)? == adapter => {
                        blockers.push(match storage_kind(roots, member)? {
                            Some(kind) => Blocker::StorageFunctionBound { member, kind, driver: b.driver },
                            None => Blocker::AdapterFunctionBound { member, driver: b.driver },
                        });
                    }
                    _ => blockers.push(Blocker::GroupShared { group, member: b.member, driver: b.driver }),
                }
            }
            if !sysfs::vfio_pci_loaded(roots) {
                blockers.push(Blocker::VfioPciNotLoaded);
            }
        }
        (Backend::Vfio, None) => {}
        (Backend::Sysfs, _) => blockers.extend(backend::sysfs_blockers(roots).into_iter().map(Blocker::SysfsBackend)),
    }
    if let Some(driver) = driver.filter(|d| *d != VFIO_PCI) {
        blockers.push(Blocker::BoundTo { driver: driver.to_owned() });
    }
    Ok(blockers)
}

/// A function's vendor and device IDs from sysfs.
fn read_ids(roots: &Roots, address: PciAddress) -> Result<(u16, u16), PciError> {
    let dir = roots.device_dir(address);
    Ok((sysfs::read_id(&dir.join("vendor"))?, sysfs::read_id(&dir.join("device"))?))
}

/// The kind of `address` when it is a OneConnect storage function (FCoE, iSCSI), by its PCI IDs;
/// `None` for any other function.
pub(crate) fn storage_kind(roots: &Roots, address: PciAddress) -> Result<Option<FunctionKind>, PciError> {
    let (vendor, device) = read_ids(roots, address)?;
    Ok(identify(vendor, device).map(|k| k.kind).filter(|k| k.is_storage()))
}

/// The slot that names the adapter `address` belongs to (`0000:03:00`, as [`Adapter::slot`]): its
/// physical function's domain, bus and device, which every function of one card shares (a
/// virtual function counts with its physical function).
pub fn adapter_slot(roots: &Roots, address: PciAddress) -> Result<String, PciError> {
    let (domain, bus, device) = sysfs::adapter_of(roots, address)?;
    Ok(slot_name(domain, bus, device))
}

fn slot_name(domain: u16, bus: u8, device: u8) -> String {
    format!("{domain:04x}:{bus:02x}:{device:02x}")
}

/// Describes one function, or `None` when it is not a OneConnect function.
///
/// A function that is not in sysfs at all is [`PciError::NoSuchFunction`].
pub fn describe(roots: &Roots, address: PciAddress) -> Result<Option<FunctionInfo>, PciError> {
    let dir = roots.device_dir(address);
    if !dir.exists() {
        return Err(PciError::NoSuchFunction { address, path: dir });
    }
    let (vendor_id, device_id) = read_ids(roots, address)?;
    let Some(known) = identify(vendor_id, device_id) else { return Ok(None) };
    let physical_function = sysfs::physical_function(roots, address)?;
    let virtual_function = known.virtual_function || physical_function.is_some();
    let kind = if virtual_function && known.kind == FunctionKind::NicPf { FunctionKind::NicVf } else { known.kind };
    let driver = sysfs::bound_driver(roots, address)?;
    let iommu_group = sysfs::iommu_group(roots, address)?;
    let (blockers, choice) = match inherent_blocker(known.chip, kind, virtual_function) {
        Some(b) => (vec![b], None),
        None => {
            let choice = backend::choose(roots, address, Request::Auto)?;
            (system_blockers(roots, address, choice.backend, iommu_group, driver.as_deref())?, Some(choice))
        }
    };
    let reason =
        (!blockers.is_empty()).then(|| blockers.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "));
    Ok(Some(FunctionInfo {
        address,
        vendor_id,
        device_id,
        chip: known.chip,
        kind,
        virtual_function,
        physical_function,
        driver,
        iommu_group,
        backend: choice.as_ref().map(|c| c.backend),
        backend_reason: choice.map(|c| c.reason),
        usable: blockers.is_empty(),
        reason,
        blockers,
    }))
}

/// Describes a function that is not a OneConnect function.
fn describe_other(roots: &Roots, address: PciAddress) -> Result<OtherFunction, PciError> {
    let (vendor_id, device_id) = read_ids(roots, address)?;
    Ok(OtherFunction {
        address,
        vendor_id,
        device_id,
        class: sysfs::read_hex(&roots.device_dir(address).join("class"))?,
        driver: sysfs::bound_driver(roots, address)?,
        iommu_group: sysfs::iommu_group(roots, address)?,
    })
}

/// Finds every OneConnect function under `roots.sysfs`, grouped by adapter (and, with
/// [`Scope::All`], every other PCI function too).
///
/// Entries of `bus/pci/devices` whose names are not PCI addresses are skipped; a function whose
/// attributes cannot be read is an error (a broken sysfs is worth knowing about).
pub fn discover(roots: &Roots, scope: Scope) -> Result<Inventory, PciError> {
    let dir = roots.devices_dir();
    let entries = std::fs::read_dir(&dir).map_err(|source| PciError::Io { path: dir.clone(), source })?;
    let mut addresses = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| PciError::Io { path: dir.clone(), source })?;
        if let Some(address) = entry.file_name().to_str().and_then(|n| n.parse::<PciAddress>().ok()) {
            addresses.push(address);
        }
    }
    addresses.sort();
    let mut by_slot: BTreeMap<(u16, u8, u8), Vec<FunctionInfo>> = BTreeMap::new();
    let mut other_functions = Vec::new();
    for address in addresses {
        match describe(roots, address)? {
            Some(info) => {
                let owner = info.physical_function.unwrap_or(address);
                by_slot.entry((owner.domain, owner.bus, owner.device)).or_default().push(info);
            }
            None if scope == Scope::All => other_functions.push(describe_other(roots, address)?),
            None => {}
        }
    }
    let adapters = by_slot
        .into_iter()
        .map(|((domain, bus, device), mut functions)| {
            functions.sort_by_key(|f| (f.virtual_function, f.address));
            Adapter { slot: slot_name(domain, bus, device), chip: functions[0].chip, functions }
        })
        .collect();
    let lockdown = sysfs::lockdown(roots);
    Ok(Inventory {
        adapters,
        other_functions,
        vfio_pci_loaded: sysfs::vfio_pci_loaded(roots),
        lockdown,
        lockdown_note: lockdown.note(),
    })
}

#[cfg(test)]
#[path = "discover_tests.rs"]
mod tests;
