//! What a hand-off will move, decided before anything is written: the functions that leave their
//! drivers, what goes down with each (network interfaces, RDMA devices), and the refusals that
//! must come before the first sysfs write (ecosystem.md §3.4 steps 2–4).
//!
//! A multi-function adapter without ACS puts all its functions — both NIC ports, the FCoE and iSCSI
//! functions — in one IOMMU group, and VFIO opens a group only when no host driver holds any of
//! its members. So the VFIO hand-off moves every NIC function of the adapter that shares the
//! group, and refuses a group member that belongs to another device: ocetool never takes a driver
//! away from something that is not this adapter. Nor from the adapter's own storage functions
//! (FCoE on lpfc, iSCSI on be2iscsi): a NIC port's interfaces come back when be2net gets the port
//! back, but the SCSI hosts and disks behind a storage function vanish under whatever uses them
//! (a mounted filesystem, a root on SAN, multipath) and come back as new disks, not as the mounts
//! they were. A storage function its driver holds is refused by name
//! ([`PciError::StorageFunctionBound`]); an unbound one does not keep the group from VFIO and is
//! left as it is.

use serde::Serialize;

use crate::sysfs::{self, Dependents, Roots, VFIO_PCI};
use crate::{PciAddress, PciError};

/// Where a hand-off puts the functions it moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Bound to vfio-pci, with every function of the adapter in the IOMMU group (VFIO backend).
    VfioPci,
    /// Bound to no driver, and held there (sysfs backend): `driver_override` names
    /// [`HOLD_OVERRIDE`], which no driver matches, so neither a `drivers_probe` nor a driver
    /// loaded meanwhile (`modprobe be2net`) can claim the function while ocetool drives it.
    Detached,
}

impl Target {
    /// The `driver_override` value that puts a function there.
    pub(super) fn override_value(self) -> &'static str {
        match self {
            Self::VfioPci => VFIO_PCI,
            Self::Detached => HOLD_OVERRIDE,
        }
    }

    /// The driver a moved function has once there.
    pub(super) fn driver(self) -> Option<&'static str> {
        match self {
            Self::VfioPci => Some(VFIO_PCI),
            Self::Detached => None,
        }
    }
}

/// The `driver_override` that keeps a function unbound: the PCI core binds a device whose override
/// is set only to the driver of that name (`pci_match_device`, drivers/pci/pci-driver.c), and no
/// driver is called this.
pub const HOLD_OVERRIDE: &str = "ocetool-hold";

/// One function a hand-off moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Move {
    /// The function.
    pub address: PciAddress,
    /// The driver that holds it now; `None` when it is unbound.
    pub driver: Option<String>,
    /// What goes down with it while it is away from its driver.
    #[serde(flatten)]
    pub dependents: Dependents,
}

/// Everything a hand-off will do, checked and ready to run (or to show in a confirmation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// The function ocetool will drive.
    pub address: PciAddress,
    /// Where the functions go.
    pub target: Target,
    /// Its IOMMU group, if it has one.
    pub iommu_group: Option<u32>,
    /// The functions to move, `address` first; empty when everything is already in place.
    pub moves: Vec<Move>,
}

impl Plan {
    /// Checks what a hand-off of `address` to `target` needs and whether it may proceed.
    ///
    /// Refusals, before anything changes: a function that does not exist; a hand-off of a
    /// stopped process still recorded for its adapter ([`PciError::HandOffLeftOver`]: the
    /// drivers found now are not the original ones; [`super::repair`] undoes it); for vfio-pci, the
    /// driver not loaded, no IOMMU group, or a group member held by a host driver that is not a
    /// function of this adapter ([`PciError::GroupNotViable`]) or a storage function of it
    /// ([`PciError::StorageFunctionBound`], even with `allow_unbind`); and, without `allow_unbind`, any
    /// function to move that a driver holds ([`PciError::DriverBound`],
    /// [`PciError::AdapterFunctionBound`]).
    pub fn new(address: PciAddress, roots: &Roots, target: Target, allow_unbind: bool) -> Result<Self, PciError> {
        let dev = roots.device_dir(address);
        if !dev.exists() {
            return Err(PciError::NoSuchFunction { address, path: dev });
        }
        super::refuse_left_over(roots, &super::record::path_for(roots, address)?, address)?;
        let iommu_group = sysfs::iommu_group(roots, address)?;
        let driver = sysfs::bound_driver(roots, address)?;
        let mut moves = Vec::new();
        match target {
            Target::VfioPci => {
                if !sysfs::vfio_pci_loaded(roots) {
                    return Err(PciError::VfioPciNotLoaded { path: roots.driver_dir(VFIO_PCI) });
                }
                let group = iommu_group.ok_or(PciError::NoIommuGroup { address })?;
                if driver.as_deref() != Some(VFIO_PCI) {
                    moves.push(address);
                }
                let adapter = sysfs::adapter_of(roots, address)?;
                for blocker in sysfs::group_blockers(roots, group, address)? {
                    let member = blocker.member.parse::<PciAddress>().ok();
                    match member {
                        Some(m) if sysfs::adapter_of(roots, m)? == adapter => {
                            if let Some(kind) = crate::discover::storage_kind(roots, m)? {
                                return Err(PciError::StorageFunctionBound {
                                    address,
                                    member: m,
                                    kind,
                                    group: Some(group),
                                    driver: blocker.driver,
                                });
                            }
                            moves.push(m);
                        }
                        _ => {
                            return Err(PciError::GroupNotViable {
                                address,
                                group,
                                member: blocker.member,
                                driver: blocker.driver,
                            });
                        }
                    }
                }
            }
            // Only the function itself: without an IOMMU group nothing else is in the way.
            Target::Detached => moves.push(address),
        }
        let moves = moves
            .into_iter()
            .map(|m| {
                let driver = sysfs::bound_driver(roots, m)?;
                let dependents = if driver.is_some() { sysfs::dependents(roots, m)? } else { Dependents::default() };
                Ok(Move { address: m, driver, dependents })
            })
            .collect::<Result<Vec<_>, PciError>>()?;
        if !allow_unbind && let Some(held) = moves.iter().find(|m| m.driver.is_some()) {
            let driver = held.driver.clone().unwrap_or_default();
            return Err(if held.address == address {
                PciError::DriverBound { address, driver }
            } else {
                PciError::AdapterFunctionBound { address, member: held.address, group: iommu_group, driver }
            });
        }
        Ok(Self { address, target, iommu_group, moves })
    }

    /// The functions a driver gives up, with what goes down with each.
    pub fn unbinds(&self) -> impl Iterator<Item = &Move> {
        self.moves.iter().filter(|m| m.driver.is_some())
    }

    /// The driver that holds `address` now (before the hand-off).
    pub fn original_driver(&self, roots: &Roots) -> Result<Option<String>, PciError> {
        match self.moves.iter().find(|m| m.address == self.address) {
            Some(m) => Ok(m.driver.clone()),
            None => sysfs::bound_driver(roots, self.address),
        }
    }
}
