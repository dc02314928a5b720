//! What the kernel knows about a function its driver holds, read without taking the function
//! away: PCI identity from sysfs, firmware versions from the driver (`ETHTOOL_GDRVINFO`), each
//! network interface's MAC, state and speed from sysfs, and the RDMA devices on the function
//! (`/sys/class/infiniband/*/device`). `ocetool query` answers from this while be2net runs, the
//! way `ethtool -i` does, instead of taking the network down.

use std::path::Path;

use serde::Serialize;

use crate::ethtool::{Ethtool, split_fw_version};
use crate::host::{self, RdmaDevice};
use crate::sysfs::{self, Roots};
use crate::{PciAddress, PciError};

/// The kernel's view of one function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriverView {
    /// The function.
    pub address: PciAddress,
    /// The driver that holds it.
    pub driver: String,
    /// PCI IDs from sysfs: vendor, device, subsystem vendor, subsystem.
    pub ids: [u16; 4],
    /// Firmware versions as the driver reports them, from the first interface that answered.
    pub firmware: Option<DriverFirmware>,
    /// Why there are no firmware versions, when there are none.
    pub firmware_note: Option<String>,
    /// The function's network interfaces.
    pub netdevs: Vec<NetdevState>,
    /// The RDMA devices on the function (ocrdma's, when RoCE runs).
    pub rdma: Vec<RdmaDevice>,
}

/// Firmware versions from `ETHTOOL_GDRVINFO` (devlink's vocabulary: running / stored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriverFirmware {
    /// What runs.
    pub running: String,
    /// What is on flash (equal to `running` when the driver prints one version).
    pub stored: String,
    /// The driver's name as it reports it.
    pub driver: String,
}

/// One network interface as sysfs shows it (`<device>/net/<name>/`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetdevState {
    /// Its name.
    pub name: String,
    /// `address`: the MAC.
    pub mac: Option<String>,
    /// `operstate`.
    pub operstate: String,
    /// Link: `carrier` when readable (the interface is up), else `operstate` is `up`.
    pub link_up: bool,
    /// `speed` in Mb/s, when the link is up and the driver knows it.
    pub speed_mbps: Option<u32>,
}

/// An attribute's text, trimmed; `None` when absent or unreadable (`carrier` and `speed` fail
/// with EINVAL while an interface is down).
fn attr(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_owned())
}

fn netdev_state(dir: &Path, name: &str) -> NetdevState {
    let operstate = attr(&dir.join("operstate")).unwrap_or_else(|| "unknown".to_owned());
    let carrier = attr(&dir.join("carrier")).map(|c| c == "1");
    let link_up = carrier.unwrap_or(operstate == "up");
    // `speed` is -1 (or unreadable) when the link is down or the speed unknown.
    let speed_mbps = attr(&dir.join("speed")).and_then(|s| s.parse::<u32>().ok()).filter(|&s| link_up && s > 0);
    NetdevState { name: name.to_owned(), mac: attr(&dir.join("address")), operstate, link_up, speed_mbps }
}

/// Reads the kernel's view of `address`, which `driver` holds.
pub fn read(roots: &Roots, address: PciAddress, ethtool: &dyn Ethtool) -> Result<DriverView, PciError> {
    let dir = roots.device_dir(address);
    if !dir.exists() {
        return Err(PciError::NoSuchFunction { address, path: dir });
    }
    let driver = sysfs::bound_driver(roots, address)?.unwrap_or_default();
    let id = |name: &str| sysfs::read_id(&dir.join(name));
    let ids = [id("vendor")?, id("device")?, id("subsystem_vendor")?, id("subsystem_device")?];
    let netdevs: Vec<NetdevState> = sysfs::dependents(roots, address)?
        .netdevs
        .iter()
        .map(|n| netdev_state(&dir.join("net").join(&n.name), &n.name))
        .collect();
    let mut firmware = None;
    let mut failures = Vec::new();
    for netdev in &netdevs {
        match ethtool.driver_info(&netdev.name) {
            Ok(info) if !info.fw_version.is_empty() => {
                let (running, stored) = split_fw_version(&info.fw_version);
                firmware = Some(DriverFirmware { running, stored, driver: info.driver });
                break;
            }
            Ok(_) => failures.push(format!("{} reports no firmware version", netdev.name)),
            Err(e) => failures.push(format!("ETHTOOL_GDRVINFO on {}: {e}", netdev.name)),
        }
    }
    let firmware_note = match (&firmware, netdevs.is_empty()) {
        (Some(_), _) => None,
        (None, true) => Some(format!("{driver} has no network interface on {address} to ask")),
        (None, false) => Some(failures.join("; ")),
    };
    let rdma = host::rdma_devices(roots)?.into_iter().filter(|d| d.function == Some(address)).collect();
    Ok(DriverView { address, driver, ids, firmware, firmware_note, netdevs, rdma })
}

#[cfg(test)]
#[path = "driver_view_tests.rs"]
mod tests;
