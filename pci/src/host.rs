//! The host around the adapter, beyond the PCI functions themselves: the kernel command line,
//! loaded modules, ocetool's locked-memory limit, RDMA devices and NFS over RDMA. Read through the
//! same [`Roots`] as sysfs, with `/proc` as [`Roots::proc`], so tests run on fake trees.

use std::io;
use std::path::Path;

use crate::sysfs::{self, Roots};
use crate::{PciAddress, PciError};

fn read(path: &Path) -> Result<String, PciError> {
    std::fs::read_to_string(path).map_err(|source| PciError::Io { path: path.to_path_buf(), source })
}

/// Reads a file that may legitimately be absent (a module not loaded, a service not running).
fn read_optional(path: &Path) -> Result<Option<String>, PciError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PciError::Io { path: path.to_path_buf(), source }),
    }
}

/// The kernel command line (`/proc/cmdline`).
pub fn kernel_cmdline(roots: &Roots) -> Result<String, PciError> {
    Ok(read(&roots.proc.join("cmdline"))?.trim().to_owned())
}

/// The IOMMU groups the kernel created (`/sys/kernel/iommu_groups/*`), in number order.
pub fn iommu_groups(roots: &Roots) -> Result<Vec<u32>, PciError> {
    let names = sysfs::names_in(&roots.sysfs.join("kernel/iommu_groups"))?;
    let mut groups: Vec<u32> = names.iter().filter_map(|n| n.parse().ok()).collect();
    groups.sort_unstable();
    Ok(groups)
}

/// True when kernel module `name` is loaded or built in: its `/sys/module/<name>` folder (which
/// built-in modules with parameters have too), a PCI driver of that name, or a `/proc/modules`
/// line. Dashes and underscores are the same in module names, as modprobe treats them.
pub fn module_loaded(roots: &Roots, name: &str) -> bool {
    let module = name.replace('-', "_");
    if roots.sysfs.join("module").join(&module).is_dir() || roots.driver_dir(name).is_dir() {
        return true;
    }
    let Ok(Some(list)) = read_optional(&roots.proc.join("modules")) else { return false };
    list.lines().filter_map(|l| l.split_whitespace().next()).any(|m| m.replace('-', "_") == module)
}

/// ocetool's soft RLIMIT_MEMLOCK (`/proc/self/limits`, "Max locked memory"): `None` for
/// unlimited.
pub fn memlock_limit(roots: &Roots) -> Result<Option<u64>, PciError> {
    let path = roots.proc.join("self/limits");
    let text = read(&path)?;
    let line = text
        .lines()
        .find(|l| l.starts_with("Max locked memory"))
        .ok_or_else(|| invalid(&path, "no \"Max locked memory\" line"))?;
    let soft = line["Max locked memory".len()..].split_whitespace().next().unwrap_or_default();
    if soft == "unlimited" {
        return Ok(None);
    }
    soft.parse().map(Some).map_err(|_| invalid(&path, &format!("soft limit {soft:?} is not a number")))
}

/// Linux capability number of CAP_IPC_LOCK (include/uapi/linux/capability.h): it lifts the
/// locked-memory limit for mlock and for VFIO's page pinning.
const CAP_IPC_LOCK: u32 = 14;
/// Linux capability number of CAP_SYS_ADMIN (include/uapi/linux/capability.h): without it the
/// kernel zeroes the frame numbers in /proc/self/pagemap, and config space past the first 64
/// bytes cannot be written through sysfs.
pub const CAP_SYS_ADMIN: u32 = 21;

/// True when ocetool's effective capabilities (`/proc/self/status`, `CapEff`) include CAP_IPC_LOCK.
pub fn has_ipc_lock(roots: &Roots) -> Result<bool, PciError> {
    has_capability(roots, CAP_IPC_LOCK)
}

/// A field of ocetool's `/proc/self/status` (`CapEff`, `Uid`, ...), after its colon, trimmed.
fn status_field(roots: &Roots, name: &str) -> Result<String, PciError> {
    let path = roots.proc.join("self/status");
    let text = read(&path)?;
    let prefix = format!("{name}:");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.trim().to_owned())
        .ok_or_else(|| invalid(&path, &format!("no {name} line")))
}

/// True when ocetool's effective capabilities (`/proc/self/status`, `CapEff`) include `cap`.
pub fn has_capability(roots: &Roots, cap: u32) -> Result<bool, PciError> {
    let hex = status_field(roots, "CapEff")?;
    let caps = u64::from_str_radix(&hex, 16)
        .map_err(|_| invalid(&roots.proc.join("self/status"), &format!("CapEff {hex:?} is not hex")))?;
    Ok(caps & (1 << cap) != 0)
}

/// True when ocetool runs as root: effective user ID 0 (`/proc/self/status`, `Uid`: real,
/// effective, saved, file system) and CAP_SYS_ADMIN effective.
pub fn is_root(roots: &Roots) -> Result<bool, PciError> {
    let uids = status_field(roots, "Uid")?;
    let effective = uids.split_whitespace().nth(1).unwrap_or_default();
    Ok(effective == "0" && has_capability(roots, CAP_SYS_ADMIN)?)
}

/// The kernel's huge page pool (`/proc/meminfo` and `/proc/sys/vm`), default page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HugePages {
    /// `Hugepagesize`, in bytes.
    pub size: u64,
    /// `nr_hugepages`: the persistent pool.
    pub total: u64,
    /// Pages a new mapping can get now: free and not reserved, plus what overcommit still allows
    /// (`HugePages_Free` − `HugePages_Rsvd` + `nr_overcommit_hugepages` − `HugePages_Surp`).
    pub available: u64,
}

/// The huge page pool, or `None` when the kernel has none (no `HugePages_` lines in meminfo:
/// built without hugetlbfs).
pub fn huge_pages(roots: &Roots) -> Result<Option<HugePages>, PciError> {
    let path = roots.proc.join("meminfo");
    let text = read(&path)?;
    let field = |name: &str| -> Option<u64> {
        text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.split_whitespace().next()?.parse().ok())
    };
    let (Some(total), Some(free), Some(size_kib)) =
        (field("HugePages_Total"), field("HugePages_Free"), field("Hugepagesize"))
    else {
        return Ok(None);
    };
    let reserved = field("HugePages_Rsvd").unwrap_or(0);
    let surplus = field("HugePages_Surp").unwrap_or(0);
    let overcommit = read_optional(&roots.proc.join("sys/vm/nr_overcommit_hugepages"))?
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let available = free.saturating_sub(reserved) + overcommit.saturating_sub(surplus);
    Ok(Some(HugePages { size: size_kib * 1024, total, available }))
}

fn invalid(path: &Path, what: &str) -> PciError {
    PciError::Io { path: path.to_path_buf(), source: io::Error::new(io::ErrorKind::InvalidData, what.to_owned()) }
}

/// One port of an RDMA device.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RdmaPort {
    /// Port number (from 1).
    pub number: u32,
    /// The state word (`ACTIVE`, `DOWN`, `INIT`, ...), without the numeric prefix of `state`.
    pub state: String,
    /// `link_layer`: `Ethernet` for RoCE, `InfiniBand` otherwise.
    pub link_layer: String,
}

/// The node description ocrdma gives every device it registers (`OCRDMA_NODE_DESC`, ocrdma.h),
/// read back through ib_core's `node_desc` attribute.
pub const OCRDMA_NODE_DESC: &str = "Emulex OneConnect RoCE HCA";

/// The name ocrdma registers its devices under, before the number: `ib_register_device(..,
/// "ocrdma%d", ..)` in `ocrdma_register_device` (ocrdma_main.c).
const OCRDMA_NAME: &str = "ocrdma";

/// An RDMA device (`/sys/class/infiniband/<name>`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RdmaDevice {
    /// Its name (`ocrdma0`).
    pub name: String,
    /// The PCI function it sits on, from its `device` link.
    pub function: Option<PciAddress>,
    /// Its ports.
    pub ports: Vec<RdmaPort>,
    /// `node_desc`: the driver's description of the device, empty when unreadable.
    #[serde(skip)]
    pub node_desc: String,
}

impl RdmaDevice {
    /// True when ocrdma registered the device. sysfs names no RDMA device's driver (the `device`
    /// link leads to the PCI function, be2net's), so this goes by what ocrdma leaves: the kernel
    /// name it asks for (`ocrdma0`), or, for a device udev renamed (rdma-core's `rdma_rename`,
    /// e.g. `rocep3s0f0`), its node description.
    pub fn is_ocrdma(&self) -> bool {
        let kernel_name =
            self.name.strip_prefix(OCRDMA_NAME).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        kernel_name || self.node_desc == OCRDMA_NODE_DESC
    }
}

/// The file's content, trimmed; empty when unreadable (an attribute some drivers lack).
fn attr(path: &Path) -> String {
    std::fs::read_to_string(path).map(|s| s.trim().to_owned()).unwrap_or_default()
}

/// Every RDMA device, in name order.
pub fn rdma_devices(roots: &Roots) -> Result<Vec<RdmaDevice>, PciError> {
    let class = roots.sysfs.join("class/infiniband");
    let mut devices = Vec::new();
    for name in sysfs::names_in(&class)? {
        let dir = class.join(&name);
        let function = std::fs::read_link(dir.join("device"))
            .ok()
            .and_then(|t| t.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse().ok()));
        let mut ports = Vec::new();
        for port in sysfs::names_in(&dir.join("ports"))? {
            let Ok(number) = port.parse() else { continue };
            let pdir = dir.join("ports").join(&port);
            // `state` reads like "4: ACTIVE".
            let state = attr(&pdir.join("state"));
            let state = state.split_once(':').map_or(state.as_str(), |(_, s)| s.trim()).to_owned();
            ports.push(RdmaPort { number, state, link_layer: attr(&pdir.join("link_layer")) });
        }
        ports.sort_by_key(|p| p.number);
        let node_desc = attr(&dir.join("node_desc"));
        devices.push(RdmaDevice { name, function, ports, node_desc });
    }
    Ok(devices)
}

/// The transports the NFS server listens on (`/proc/fs/nfsd/portlist`, lines like `rdma 20049`),
/// or `None` when nfsd is not running (the file does not exist).
pub fn nfsd_listeners(roots: &Roots) -> Result<Option<Vec<(String, u16)>>, PciError> {
    let Some(text) = read_optional(&roots.proc.join("fs/nfsd/portlist"))? else { return Ok(None) };
    Ok(Some(
        text.lines()
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                Some((words.next()?.to_owned(), words.next()?.parse().ok()?))
            })
            .collect(),
    ))
}

/// An NFS mount (`/proc/mounts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NfsMount {
    /// `server:/export`.
    pub source: String,
    /// Where it is mounted.
    pub target: String,
    /// The `proto=` option (`tcp`, `rdma`, ...), if given.
    pub proto: Option<String>,
}

/// Every NFS mount (type `nfs` or `nfs4`).
pub fn nfs_mounts(roots: &Roots) -> Result<Vec<NfsMount>, PciError> {
    let Some(text) = read_optional(&roots.proc.join("mounts"))? else { return Ok(Vec::new()) };
    Ok(text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (source, target, kind, options) = (f.first()?, f.get(1)?, f.get(2)?, f.get(3)?);
            matches!(*kind, "nfs" | "nfs4").then(|| NfsMount {
                source: (*source).to_owned(),
                target: (*target).to_owned(),
                proto: options.split(',').find_map(|o| o.strip_prefix("proto=")).map(str::to_owned),
            })
        })
        .collect())
}

/// The driver bound to each function, for messages: `0000:03:00.0 be2net`, `0000:03:00.1 (none)`.
pub fn describe_bindings(roots: &Roots, functions: &[PciAddress]) -> Vec<String> {
    functions
        .iter()
        .map(|&f| match sysfs::bound_driver(roots, f) {
            Ok(Some(d)) => format!("{f} {d}"),
            Ok(None) => format!("{f} (no driver)"),
            Err(e) => format!("{f} (unreadable: {e})"),
        })
        .collect()
}
