//! Reading the kernel's view of PCI functions from sysfs: IDs, bound driver, IOMMU group and its
//! members, whether vfio-pci is loaded, and the lockdown mode (ecosystem.md §3.3).
//!
//! Every path is relative to a [`Roots`] value, so unit tests point it at a fake tree in a
//! temporary folder and the code under test cannot tell the difference.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{PciAddress, PciError};

/// The name of the kernel's VFIO PCI driver.
pub const VFIO_PCI: &str = "vfio-pci";

/// Drivers that keep an IOMMU group viable besides vfio-pci: the kernel's allow list (pci-stub)
/// in `vfio_main.c` (`vfio_driver_allowed`).
const VIABLE_DRIVERS: &[&str] = &[VFIO_PCI, "pci-stub"];

/// Where sysfs, /dev and /proc are, and where ocetool keeps its runtime state. The real system
/// uses `/sys`, `/dev`, `/proc` and `/run/ocetool`; tests use a fake tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// The sysfs mount point (normally `/sys`).
    pub sysfs: PathBuf,
    /// The devtmpfs mount point (normally `/dev`).
    pub dev: PathBuf,
    /// The procfs mount point (normally `/proc`; read by [`crate::host`]).
    pub proc: PathBuf,
    /// ocetool's runtime folder (normally [`RUN_DIR`]): the hand-off records
    /// ([`crate::handoff::record`]), beside the boot hook's last report. A tmpfs, so it starts
    /// empty at every boot, as `driver_override` does.
    pub run: PathBuf,
}

/// ocetool's runtime folder on a real system (created by the package's tmpfiles.d entry, root's
/// and not writable by anyone else).
pub const RUN_DIR: &str = "/run/ocetool";

impl Default for Roots {
    fn default() -> Self {
        Self::new("/sys", "/dev")
    }
}

impl Roots {
    /// Roots at `sysfs` and `dev`, with procfs at `/proc` and the runtime folder at [`RUN_DIR`].
    pub fn new(sysfs: impl Into<PathBuf>, dev: impl Into<PathBuf>) -> Self {
        Self { sysfs: sysfs.into(), dev: dev.into(), proc: PathBuf::from("/proc"), run: PathBuf::from(RUN_DIR) }
    }

    /// The same roots with the runtime folder at `run`.
    pub fn with_run(mut self, run: impl Into<PathBuf>) -> Self {
        self.run = run.into();
        self
    }

    /// The same roots with procfs at `proc`.
    pub fn with_proc(mut self, proc: impl Into<PathBuf>) -> Self {
        self.proc = proc.into();
        self
    }

    /// `<sysfs>/bus/pci/devices`.
    pub fn devices_dir(&self) -> PathBuf {
        self.sysfs.join("bus/pci/devices")
    }

    /// `<sysfs>/bus/pci/devices/<address>`.
    pub fn device_dir(&self, address: PciAddress) -> PathBuf {
        self.devices_dir().join(address.to_string())
    }

    /// `<sysfs>/bus/pci/drivers/<name>`.
    pub fn driver_dir(&self, name: &str) -> PathBuf {
        self.sysfs.join("bus/pci/drivers").join(name)
    }

    /// `<sysfs>/bus/pci/drivers_probe`.
    pub fn drivers_probe(&self) -> PathBuf {
        self.sysfs.join("bus/pci/drivers_probe")
    }

    /// `<sysfs>/kernel/iommu_groups/<group>/devices`.
    pub fn group_devices_dir(&self, group: u32) -> PathBuf {
        self.sysfs.join("kernel/iommu_groups").join(group.to_string()).join("devices")
    }

    /// `<dev>/vfio/<group>`, the node vfio-pci creates for a group it holds.
    pub fn vfio_group_node(&self, group: u32) -> PathBuf {
        self.dev.join("vfio").join(group.to_string())
    }

    /// `<sysfs>/kernel/security/lockdown`.
    pub fn lockdown_file(&self) -> PathBuf {
        self.sysfs.join("kernel/security/lockdown")
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> PciError + '_ {
    move |source| PciError::Io { path: path.to_path_buf(), source }
}

/// The last component of a symlink's target, or `None` if the link does not exist.
fn link_name(link: &Path) -> Result<Option<String>, PciError> {
    match std::fs::read_link(link) {
        Ok(target) => Ok(target.file_name().map(|n| n.to_string_lossy().into_owned())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(link)(e)),
    }
}

/// Reads a sysfs attribute holding a hex number such as `0x10df`.
pub fn read_hex(path: &Path) -> Result<u32, PciError> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let trimmed = text.trim();
    let digits = trimmed.strip_prefix("0x").unwrap_or(trimmed);
    u32::from_str_radix(digits, 16).map_err(|_| PciError::Io {
        path: path.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidData, format!("not a hex number: {trimmed:?}")),
    })
}

/// Reads a sysfs attribute holding a 16-bit PCI ID (`vendor`, `device`, `subsystem_vendor`, ...).
pub fn read_id(path: &Path) -> Result<u16, PciError> {
    let value = read_hex(path)?;
    u16::try_from(value).map_err(|_| PciError::Io {
        path: path.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidData, format!("{value:#x} is not a 16-bit ID")),
    })
}

/// The driver bound to the device at sysfs folder `dir`, if any.
pub fn driver_of(dir: &Path) -> Result<Option<String>, PciError> {
    link_name(&dir.join("driver"))
}

/// The driver bound to PCI function `address`, if any.
pub fn bound_driver(roots: &Roots, address: PciAddress) -> Result<Option<String>, PciError> {
    driver_of(&roots.device_dir(address))
}

/// The IOMMU group of PCI function `address`, or `None` when it has none (no IOMMU enabled).
pub fn iommu_group(roots: &Roots, address: PciAddress) -> Result<Option<u32>, PciError> {
    let link = roots.device_dir(address).join("iommu_group");
    match link_name(&link)? {
        None => Ok(None),
        Some(name) => name.parse().map(Some).map_err(|_| PciError::Io {
            path: link,
            source: io::Error::new(io::ErrorKind::InvalidData, format!("IOMMU group {name:?} is not a number")),
        }),
    }
}

/// The PF of a virtual function (its `physfn` link), or `None` for a physical function.
pub fn physical_function(roots: &Roots, address: PciAddress) -> Result<Option<PciAddress>, PciError> {
    Ok(link_name(&roots.device_dir(address).join("physfn"))?.and_then(|name| name.parse().ok()))
}

/// The PCI device (domain, bus, device) of the adapter `address` belongs to: its own, or for a
/// virtual function its physical function's. Every function of one card shares it (spec/protocol.md
/// §1.1: the ports and protocols of an OCe14000 are functions of one PCI device).
pub fn adapter_of(roots: &Roots, address: PciAddress) -> Result<(u16, u8, u8), PciError> {
    let owner = physical_function(roots, address)?.unwrap_or(address);
    Ok((owner.domain, owner.bus, owner.device))
}

/// The names of the members of IOMMU group `group` (PCI addresses for PCI devices), sorted.
pub fn group_members(roots: &Roots, group: u32) -> Result<Vec<String>, PciError> {
    let dir = roots.group_devices_dir(group);
    if !dir.is_dir() {
        return Err(io_err(&dir)(io::Error::from(io::ErrorKind::NotFound)));
    }
    names_in(&dir)
}

/// True when the vfio-pci driver is registered (its folder exists under `bus/pci/drivers`).
pub fn vfio_pci_loaded(roots: &Roots) -> bool {
    roots.driver_dir(VFIO_PCI).is_dir()
}

/// What goes away with a function's driver when it is unbound: its network interfaces and RDMA
/// devices (ecosystem.md §3.4 step 3), for the `--unbind` confirmation and the JSON report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Dependents {
    /// Network interfaces (`<device>/net/*`).
    pub netdevs: Vec<Netdev>,
    /// RDMA devices (`<device>/infiniband/*`), e.g. ocrdma's.
    pub rdma: Vec<String>,
}

impl Dependents {
    /// `eth0 (up), ocrdma0`: every dependent, for a message.
    pub fn describe(&self) -> Vec<String> {
        let mut all: Vec<String> = self.netdevs.iter().map(|n| format!("{} ({})", n.name, n.operstate)).collect();
        all.extend(self.rdma.iter().cloned());
        all
    }
}

/// A network interface of a function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Netdev {
    /// Its name (`enp3s0f0`).
    pub name: String,
    /// Its `operstate` (`up`, `down`, ...).
    pub operstate: String,
}

/// The entries of a folder, sorted; none when it does not exist.
pub(crate) fn names_in(dir: &Path) -> Result<Vec<String>, PciError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(dir)(e)),
    };
    let mut names = entries
        .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io_err(dir))?;
    names.sort();
    Ok(names)
}

/// The network interfaces and RDMA devices that function `address` provides now.
pub fn dependents(roots: &Roots, address: PciAddress) -> Result<Dependents, PciError> {
    let dir = roots.device_dir(address);
    let mut netdevs = Vec::new();
    for name in names_in(&dir.join("net"))? {
        let state = std::fs::read_to_string(dir.join("net").join(&name).join("operstate")).unwrap_or_default();
        netdevs.push(Netdev { name, operstate: state.trim().to_owned() });
    }
    Ok(Dependents { netdevs, rdma: names_in(&dir.join("infiniband"))? })
}

/// The SCSI hosts that function `address` provides now (`<device>/host<N>`, as lpfc and be2iscsi
/// register one per function they bind), sorted: the disks behind them go away when the function
/// leaves its driver.
pub fn scsi_hosts(roots: &Roots, address: PciAddress) -> Result<Vec<String>, PciError> {
    let is_host =
        |n: &str| n.strip_prefix("host").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    Ok(names_in(&roots.device_dir(address))?.into_iter().filter(|n| is_host(n)).collect())
}

/// A member of an IOMMU group that keeps the group from being viable for VFIO.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupBlocker {
    /// The member's sysfs name (a PCI address for PCI devices).
    pub member: String,
    /// The host driver that holds it.
    pub driver: String,
}

/// True for a PCI bridge, judged by its class code (0x0604 PCI-to-PCI, 0x0607 CardBus, 0x0609
/// semi-transparent): the kernel lets bridges stay on their drivers in a VFIO group because their
/// header type is not "normal" (`vfio_dev_driver_allowed` in `vfio_main.c`).
fn is_bridge(dir: &Path) -> bool {
    match read_hex(&dir.join("class")) {
        Ok(class) => matches!(class >> 8, 0x0604 | 0x0607 | 0x0609),
        Err(_) => false,
    }
}

/// The members of IOMMU group `group`, other than `except`, that a host driver holds: the devices
/// that keep the group from being viable. Bridges, unbound devices and devices on vfio-pci or
/// pci-stub are fine (ecosystem.md §3.4 step 4).
pub fn group_blockers(roots: &Roots, group: u32, except: PciAddress) -> Result<Vec<GroupBlocker>, PciError> {
    let dir = roots.group_devices_dir(group);
    let names = group_members(roots, group)?;
    let me = except.to_string();
    let mut blockers = Vec::new();
    for name in names.into_iter().filter(|n| *n != me) {
        let member_dir = dir.join(&name);
        let Some(driver) = driver_of(&member_dir)? else { continue };
        if VIABLE_DRIVERS.contains(&driver.as_str()) || is_bridge(&member_dir) {
            continue;
        }
        blockers.push(GroupBlocker { member: name, driver });
    }
    Ok(blockers)
}

/// The kernel lockdown mode (`/sys/kernel/security/lockdown`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lockdown {
    /// No lockdown: the file says `[none]`.
    None,
    /// `integrity`: user space may not modify the running kernel.
    Integrity,
    /// `confidentiality`: additionally, user space may not read kernel memory.
    Confidentiality,
    /// The kernel does not say: no `/sys/kernel/security/lockdown` (securityfs not mounted, or
    /// a kernel without the lockdown LSM), or a file that names no mode ocetool knows.
    Unknown,
}

impl Lockdown {
    /// What lockdown means for ocetool, for `list` output and `-v`; `None` when not locked down
    /// (or when the kernel does not say: nothing ocetool does depends on knowing).
    pub fn note(self) -> Option<&'static str> {
        match self {
            Self::None | Self::Unknown => None,
            Self::Integrity | Self::Confidentiality => Some(
                "kernel lockdown is on: ocetool still works, because VFIO is allowed under lockdown; what lockdown \
                 blocks is raw PCI access (mmap of /sys/bus/pci/devices/*/resourceN, config-space writes through \
                 sysfs or /proc/bus/pci, /dev/mem, I/O ports), so tools built on those (setpci writes, direct-access \
                 flash tools) fail",
            ),
        }
    }
}

impl fmt::Display for Lockdown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::None => "none",
            Self::Integrity => "integrity",
            Self::Confidentiality => "confidentiality",
            Self::Unknown => "unknown",
        })
    }
}

/// Reads the lockdown mode: the bracketed word in `none [integrity] confidentiality`. A missing
/// or unreadable file (no lockdown LSM, or securityfs not mounted), or one without a bracketed
/// mode ocetool knows, reads as [`Lockdown::Unknown`]: the kernel may be locked down all the
/// same.
pub fn lockdown(roots: &Roots) -> Lockdown {
    let Ok(text) = std::fs::read_to_string(roots.lockdown_file()) else { return Lockdown::Unknown };
    let active = text.split_whitespace().find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')));
    match active {
        Some("none") => Lockdown::None,
        Some("integrity") => Lockdown::Integrity,
        Some("confidentiality") => Lockdown::Confidentiality,
        _ => Lockdown::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_sysfs::FakeTree;

    #[test]
    fn reads_lockdown_modes() {
        let tree = FakeTree::new();
        assert_eq!(lockdown(tree.roots()), Lockdown::Unknown, "no lockdown file: the kernel does not say");
        assert_eq!(Lockdown::Unknown.to_string(), "unknown");
        assert_eq!(serde_json::to_value(Lockdown::Unknown).unwrap(), "unknown");
        assert_eq!(Lockdown::Unknown.note(), None);
        tree.set_lockdown("none integrity\n");
        assert_eq!(lockdown(tree.roots()), Lockdown::Unknown, "no mode in brackets");
        tree.set_lockdown("none [integrity] confidentiality\n");
        assert_eq!(lockdown(tree.roots()), Lockdown::Integrity);
        assert!(Lockdown::Integrity.note().unwrap().contains("VFIO is allowed under lockdown"));
        tree.set_lockdown("none integrity [confidentiality]\n");
        assert_eq!(lockdown(tree.roots()), Lockdown::Confidentiality);
        tree.set_lockdown("[none] integrity confidentiality\n");
        assert_eq!(lockdown(tree.roots()), Lockdown::None);
        assert_eq!(Lockdown::None.note(), None);
    }

    #[test]
    fn reads_hex_attributes() {
        let tree = FakeTree::new();
        let path = tree.roots().sysfs.join("x");
        std::fs::write(&path, "0x10df\n").unwrap();
        assert_eq!(read_hex(&path).unwrap(), 0x10df);
        std::fs::write(&path, "bogus\n").unwrap();
        assert!(matches!(read_hex(&path), Err(PciError::Io { .. })));
    }

    #[test]
    fn lists_what_goes_down_with_the_driver() {
        let tree = FakeTree::new();
        let me: PciAddress = "0000:03:00.0".parse().unwrap();
        tree.device(me, 0x10df, 0x0720).driver("be2net");
        assert_eq!(dependents(tree.roots(), me).unwrap(), Dependents::default());
        let dir = tree.roots().device_dir(me);
        std::fs::create_dir_all(dir.join("net/enp3s0f0")).unwrap();
        std::fs::write(dir.join("net/enp3s0f0/operstate"), "up\n").unwrap();
        std::fs::create_dir_all(dir.join("infiniband/ocrdma0")).unwrap();
        assert_eq!(
            dependents(tree.roots(), me).unwrap(),
            Dependents {
                netdevs: vec![Netdev { name: "enp3s0f0".into(), operstate: "up".into() }],
                rdma: vec!["ocrdma0".into()]
            }
        );
    }

    #[test]
    fn bridges_and_stubs_do_not_block_a_group() {
        let tree = FakeTree::new();
        let me: PciAddress = "0000:03:00.0".parse().unwrap();
        tree.device(me, 0x10df, 0x0720).group(5).driver("be2net");
        tree.device("0000:00:1c.0".parse().unwrap(), 0x8086, 0xa110).class(0x060400).group(5).driver("pcieport");
        tree.device("0000:03:00.2".parse().unwrap(), 0x10df, 0x0724).group(5).driver("pci-stub");
        tree.device("0000:03:00.3".parse().unwrap(), 0x10df, 0x0722).group(5);
        assert_eq!(group_blockers(tree.roots(), 5, me).unwrap(), vec![]);
        tree.device("0000:03:00.1".parse().unwrap(), 0x10df, 0x0720).group(5).driver("be2net");
        assert_eq!(
            group_blockers(tree.roots(), 5, me).unwrap(),
            vec![GroupBlocker { member: "0000:03:00.1".into(), driver: "be2net".into() }]
        );
    }
}
