//! The host half of `ocetool doctor`: is the chain from the kernel to the adapter in place? Each
//! check reads the host through [`Roots`] (sysfs, /dev, /proc) and says `pass`, `warn`, `fail` or
//! `skip`, with what it saw and, for every `warn` and `fail`, what to do.
//!
//! The checks about reaching real hardware through VFIO (`iommu`, `vfio_pci`, `memlock`) fail
//! only when a OneConnect adapter is in scope; with none (the emulator alone) a missing piece is a
//! `warn`. A function without an IOMMU group is driven through the sysfs backend
//! ([`crate::backend`]): `iommu` and `iommu_group` then warn (no IOMMU protection) when the host
//! lets that backend run, and fail with what it lacks when it does not. The adapter half (`pending`, `roce`, `pfc`) lives in `oce_mailbox::doctor`, which also
//! puts the report together in the order of [`ORDER`].

use serde::Serialize;

use crate::PciAddress;
use crate::backend;
use crate::discover::{Adapter, Scope, discover};
use crate::handoff::HOLD_OVERRIDE;
use crate::host::{self, RdmaDevice};
use crate::ids::{Chip, FunctionKind};
use crate::sysfs::{self, Lockdown, Roots, VFIO_PCI};

/// Every check id, in report order.
pub const ORDER: [&str; 11] = [
    "iommu",
    "vfio_pci",
    "iommu_group",
    "lockdown",
    "memlock",
    "drivers",
    "pending",
    "boot",
    "roce",
    "pfc",
    "nfs_rdma",
];

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Nothing to do.
    Pass,
    /// Not checked, and why is in the detail.
    Skip,
    /// Works, but something is off or will be; the hint says what.
    Warn,
    /// Broken; the hint says how to fix it.
    Fail,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Stable id (one of [`ORDER`]).
    pub id: &'static str,
    /// The verdict.
    pub status: Status,
    /// What was seen.
    pub detail: String,
    /// What to do; always present for `warn` and `fail`.
    pub hint: Option<String>,
}

impl Check {
    /// A passing check.
    pub fn pass(id: &'static str, detail: impl Into<String>) -> Self {
        Self { id, status: Status::Pass, detail: detail.into(), hint: None }
    }
    /// A check that was not run, with the reason.
    pub fn skip(id: &'static str, reason: impl Into<String>) -> Self {
        Self { id, status: Status::Skip, detail: reason.into(), hint: None }
    }
    /// A warning with what to do.
    pub fn warn(id: &'static str, detail: impl Into<String>, hint: impl Into<String>) -> Self {
        Self { id, status: Status::Warn, detail: detail.into(), hint: Some(hint.into()) }
    }
    /// A failure with what to do.
    pub fn fail(id: &'static str, detail: impl Into<String>, hint: impl Into<String>) -> Self {
        Self { id, status: Status::Fail, detail: detail.into(), hint: Some(hint.into()) }
    }
    /// A failure when `strict`, else a warning that says why it is only one.
    fn fail_if(strict: bool, id: &'static str, detail: String, hint: &str) -> Self {
        if strict {
            Self::fail(id, detail, hint)
        } else {
            Self::warn(id, format!("{detail} (needed only for real adapters; none found)"), hint)
        }
    }
}

/// Which adapter `doctor` is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The adapter holding this PCI function (`--device BDF`).
    Function(PciAddress),
    /// The emulator (`--device emu`): the host is still checked, for any real adapter in it.
    Emulator,
    /// Every OCe14000 adapter found.
    Any,
}

/// The host checks and what they found that the adapter half needs.
#[derive(Debug, Clone)]
pub struct HostReport {
    /// The checks, in [`ORDER`] (host ids only).
    pub checks: Vec<Check>,
    /// The adapters in scope.
    pub adapters: Vec<Adapter>,
    /// The RDMA devices on the adapters' functions, or why they could not be read.
    pub rdma: Result<Vec<RdmaDevice>, String>,
}

/// The NIC physical functions of `adapters`.
fn nic_pfs(adapters: &[Adapter]) -> Vec<PciAddress> {
    adapters
        .iter()
        .flat_map(|a| &a.functions)
        .filter(|f| f.kind == FunctionKind::NicPf && !f.virtual_function)
        .map(|f| f.address)
        .collect()
}

/// Runs the host checks. `memlock_needed` is how many bytes of locked memory ocetool needs to
/// drive an adapter (the mailbox layer knows its buffers).
pub fn host_checks(roots: &Roots, target: Target, memlock_needed: u64) -> HostReport {
    let (adapters, scope_error) = match discover(roots, Scope::OneConnect) {
        Ok(inv) => {
            let adapters = inv.adapters.into_iter().filter(|a| a.chip == Chip::Skyhawk);
            let adapters: Vec<Adapter> = match target {
                Target::Function(addr) => adapters.filter(|a| a.functions.iter().any(|f| f.address == addr)).collect(),
                Target::Emulator | Target::Any => adapters.collect(),
            };
            let missing = match target {
                Target::Function(addr) if adapters.is_empty() => {
                    Some(format!("{addr} is not an OCe14000 function in {}", roots.sysfs.display()))
                }
                _ => None,
            };
            (adapters, missing)
        }
        Err(e) => (Vec::new(), Some(format!("cannot search sysfs for adapters: {e}"))),
    };
    let strict = !adapters.is_empty() || matches!(target, Target::Function(_));
    let functions = nic_pfs(&adapters);
    // VFIO is needed when a function has an IOMMU group (or none is known, e.g. the target is
    // missing); functions without one use the sysfs backend.
    let vfio_needed = strict && (functions.is_empty() || functions.iter().any(|&f| has_group(roots, f)));
    let sysfs_needed = functions.iter().any(|&f| !has_group(roots, f));
    let rdma = host::rdma_devices(roots)
        .map(|all| all.into_iter().filter(|d| d.function.is_some_and(|f| functions.contains(&f))).collect())
        .map_err(|e| e.to_string());
    let checks = vec![
        iommu(roots, strict, sysfs_needed),
        vfio_pci(roots, vfio_needed, strict),
        iommu_group(roots, &adapters, scope_error.as_deref()),
        lockdown(roots),
        memlock(roots, memlock_needed, strict),
        drivers(roots, &adapters, scope_error.as_deref()),
        nfs_rdma(roots),
    ];
    HostReport { checks, adapters, rdma }
}

/// True when `f` has an IOMMU group (an unreadable link counts as none).
fn has_group(roots: &Roots, f: PciAddress) -> bool {
    sysfs::iommu_group(roots, f).ok().flatten().is_some()
}

/// The sysfs backend's blockers on this host, joined for a hint; `None` when it can run.
fn sysfs_backend_gaps(roots: &Roots) -> Option<String> {
    let blockers = backend::sysfs_blockers(roots);
    (!blockers.is_empty()).then(|| blockers.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))
}

/// `iommu`: the kernel created IOMMU groups; what the command line asks for. Without groups,
/// the adapter is driven through the sysfs backend when the host allows it: a warning (no IOMMU
/// protection), not a failure.
fn iommu(roots: &Roots, strict: bool, sysfs_needed: bool) -> Check {
    const ID: &str = "iommu";
    let cmdline = host::kernel_cmdline(roots).unwrap_or_default();
    let flags: Vec<&str> = cmdline
        .split_whitespace()
        .filter(|w| ["intel_iommu=", "amd_iommu=", "iommu="].iter().any(|p| w.starts_with(p)))
        .collect();
    let asked = if flags.is_empty() { "no IOMMU options".to_owned() } else { flags.join(" ") };
    match host::iommu_groups(roots) {
        Ok(groups) if !groups.is_empty() => {
            Check::pass(ID, format!("{} IOMMU groups; kernel command line: {asked}", groups.len()))
        }
        Ok(_) => {
            let hint = if let Some(off) = flags.iter().find(|f| f.ends_with("=off")) {
                format!("remove {off} from the kernel command line and reboot")
            } else if flags.iter().any(|f| f.ends_with("=on")) {
                "the kernel command line asks for the IOMMU but none came up: enable VT-d (Intel) or AMD-Vi/IOMMU \
                 (AMD) in the firmware setup"
                    .to_owned()
            } else {
                "enable VT-d / AMD-Vi in the firmware setup and add intel_iommu=on (Intel) or amd_iommu=on (AMD) to \
                 the kernel command line, then reboot"
                    .to_owned()
            };
            let detail = format!("no IOMMU groups in /sys/kernel/iommu_groups; kernel command line: {asked}");
            if !(strict && sysfs_needed) {
                return Check::fail_if(strict, ID, detail, &hint);
            }
            match sysfs_backend_gaps(roots) {
                None => Check::warn(
                    ID,
                    format!(
                        "{detail}; ocetool drives the adapter through its sysfs backend, without IOMMU protection \
                         (the adapter can reach all memory)"
                    ),
                    format!("for VFIO, which confines the adapter's DMA: {hint}"),
                ),
                Some(gaps) => Check::fail(ID, detail, format!("{hint}; or, for the sysfs backend: {gaps}")),
            }
        }
        Err(e) => Check::warn(ID, format!("cannot read the IOMMU groups: {e}"), "check that sysfs is mounted"),
    }
}

/// `vfio_pci`: the driver ocetool hands functions to, and the VFIO container node. Strict when a
/// function in scope would use VFIO; with adapters that all use the sysfs backend, a gap only
/// warns.
fn vfio_pci(roots: &Roots, vfio_needed: bool, adapters: bool) -> Check {
    const ID: &str = "vfio_pci";
    let node = roots.dev.join("vfio/vfio");
    let gap = |detail: String, hint: &str| match (vfio_needed, adapters) {
        (false, true) => Check::warn(
            ID,
            format!("{detail} (needed only for the VFIO backend; the adapter's functions have no IOMMU group)"),
            hint,
        ),
        _ => Check::fail_if(vfio_needed, ID, detail, hint),
    };
    if !sysfs::vfio_pci_loaded(roots) {
        return gap(
            "vfio-pci is not loaded".to_owned(),
            "modprobe vfio-pci (list it in /etc/modules-load.d/ to load it at boot)",
        );
    }
    if !node.exists() {
        let detail = format!("vfio-pci is loaded but {} is missing", node.display());
        return gap(detail, "modprobe vfio, and check that devtmpfs is mounted on /dev");
    }
    Check::pass(ID, format!("vfio-pci loaded, {} present", node.display()))
}

/// `iommu_group`: each NIC physical function's group, its members and their drivers, and the
/// backend ocetool would use. Other functions of the same adapter in the group are fine (the
/// hand-off moves them with `--unbind`); a member of another device held by a host driver fails.
/// No group means the sysfs backend: a warning when the host allows it.
fn iommu_group(roots: &Roots, adapters: &[Adapter], scope_error: Option<&str>) -> Check {
    const ID: &str = "iommu_group";
    if let Some(e) = scope_error {
        return Check::fail(ID, e, "check the --device address against `ocetool list`");
    }
    let functions = nic_pfs(adapters);
    if functions.is_empty() {
        return Check::skip(ID, "no OCe14000 adapter in sysfs");
    }
    let (mut lines, mut no_group, mut blocked) = (Vec::new(), false, Vec::new());
    for f in functions {
        match sysfs::iommu_group(roots, f) {
            Ok(None) => {
                no_group = true;
                lines.push(format!("{f}: no IOMMU group: sysfs backend"));
            }
            Ok(Some(group)) => {
                // Members that are not PCI functions (rare) are left out of the listing only.
                let mut members: Vec<PciAddress> = sysfs::group_members(roots, group)
                    .map(|names| names.iter().filter_map(|n| n.parse().ok()).collect())
                    .unwrap_or_default();
                members.sort();
                let listed = host::describe_bindings(roots, &members).join(", ");
                let adapter = sysfs::adapter_of(roots, f).ok();
                let foreign: Result<Vec<_>, _> = sysfs::group_blockers(roots, group, f).map(|b| {
                    b.into_iter()
                        .filter(|b| {
                            b.member.parse().ok().and_then(|m| sysfs::adapter_of(roots, m).ok()) != adapter
                                || adapter.is_none()
                        })
                        .collect()
                });
                match foreign {
                    Ok(b) if b.is_empty() => lines.push(format!("{f}: group {group} viable ({listed}): vfio backend")),
                    Ok(b) => {
                        let held: Vec<String> = b.iter().map(|b| format!("{} by {}", b.member, b.driver)).collect();
                        lines.push(format!("{f}: group {group} not viable: {} held ({listed})", held.join(", ")));
                        blocked.extend(b);
                    }
                    Err(e) => lines.push(format!("{f}: group {group} unreadable: {e}")),
                }
            }
            Err(e) => lines.push(format!("{f}: {e}")),
        }
    }
    let detail = lines.join("; ");
    if let Some(b) = blocked.first() {
        let hint = format!(
            "VFIO needs every other member of the group on vfio-pci or unbound, and {m} is not this adapter's: \
             unbind it (echo {m} > /sys/bus/pci/drivers/{d}/unbind), or move the adapter to a slot with its own group",
            m = b.member,
            d = b.driver
        );
        Check::fail(ID, detail, hint)
    } else if no_group {
        match sysfs_backend_gaps(roots) {
            None => Check::warn(
                ID,
                detail,
                "without an IOMMU group the adapter's DMA is not confined: enable the IOMMU (see the iommu check) \
                 for VFIO",
            ),
            Some(gaps) => Check::fail(ID, detail, format!("enable the IOMMU (see the iommu check), or: {gaps}")),
        }
    } else {
        Check::pass(ID, detail)
    }
}

/// `lockdown`: VFIO works under kernel lockdown, but sysfs rebinding can be refused by stricter
/// setups.
fn lockdown(roots: &Roots) -> Check {
    const ID: &str = "lockdown";
    match sysfs::lockdown(roots) {
        Lockdown::None => Check::pass(ID, "kernel lockdown is off"),
        Lockdown::Unknown => Check::skip(
            ID,
            "the kernel does not say whether it is locked down (no /sys/kernel/security/lockdown: securityfs \
             not mounted, or no lockdown LSM); VFIO works either way",
        ),
        mode => Check::warn(
            ID,
            format!(
                "kernel lockdown is in {mode} mode: VFIO still works; raw PCI tools (setpci writes, /dev/mem) do not"
            ),
            "if ocetool reports that the kernel refused a sysfs write, bind the adapter to vfio-pci at boot \
             (vfio-pci.ids=10df:0720 on the kernel command line)",
        ),
    }
}

/// `memlock`: ocetool's locked-memory limit against what its DMA buffers need.
fn memlock(roots: &Roots, needed: u64, strict: bool) -> Check {
    const ID: &str = "memlock";
    let kib = |b: u64| b.div_ceil(1024);
    if host::has_ipc_lock(roots).unwrap_or(false) {
        return Check::pass(ID, "CAP_IPC_LOCK is effective: no locked-memory limit applies");
    }
    match host::memlock_limit(roots) {
        Ok(None) => Check::pass(ID, "RLIMIT_MEMLOCK is unlimited"),
        Ok(Some(limit)) if limit >= needed => {
            Check::pass(ID, format!("RLIMIT_MEMLOCK {} KiB; ocetool needs {} KiB", kib(limit), kib(needed)))
        }
        Ok(Some(limit)) => Check::fail_if(
            strict,
            ID,
            format!("RLIMIT_MEMLOCK {} KiB, but ocetool needs {} KiB for its DMA buffers", kib(limit), kib(needed)),
            &format!(
                "raise it to at least {} KiB: `ulimit -l {}` in the shell, LimitMEMLOCK= in a systemd unit, or a \
                 memlock line in /etc/security/limits.conf (root with CAP_IPC_LOCK has no limit)",
                kib(needed),
                kib(needed)
            ),
        ),
        Err(e) => Check::warn(ID, format!("cannot read the locked-memory limit: {e}"), "check that /proc is mounted"),
    }
}

/// `drivers`: be2net and ocrdma loaded, and what each function of the adapters is bound to.
fn drivers(roots: &Roots, adapters: &[Adapter], scope_error: Option<&str>) -> Check {
    const ID: &str = "drivers";
    if let Some(e) = scope_error {
        return Check::skip(ID, e);
    }
    if adapters.is_empty() {
        return Check::skip(ID, "no OCe14000 adapter in sysfs");
    }
    let be2net = host::module_loaded(roots, "be2net");
    let ocrdma = host::module_loaded(roots, "ocrdma");
    let loaded = |l: bool| if l { "loaded" } else { "not loaded" };
    let all: Vec<PciAddress> = adapters.iter().flat_map(|a| a.functions.iter().map(|f| f.address)).collect();
    let detail = format!(
        "be2net {}, ocrdma {}; {}",
        loaded(be2net),
        loaded(ocrdma),
        host::describe_bindings(roots, &all).join(", ")
    );
    let mut hints = Vec::new();
    if !be2net {
        hints.push("modprobe be2net once ocetool is done (the NIC has no driver)".to_owned());
    }
    for f in nic_pfs(adapters) {
        match sysfs::bound_driver(roots, f).ok().flatten().as_deref() {
            Some(VFIO_PCI) => hints.push(format!(
                "{f} is still on vfio-pci: echo > /sys/bus/pci/devices/{f}/driver_override; \
                 echo {f} > /sys/bus/pci/drivers/vfio-pci/unbind; echo {f} > /sys/bus/pci/drivers_probe"
            )),
            None if held_for_ocetool(roots, f) => hints.push(format!(
                "{f} is still held for ocetool's sysfs backend (driver_override {HOLD_OVERRIDE}: a run that was \
                 killed): echo > /sys/bus/pci/devices/{f}/driver_override; echo {f} > /sys/bus/pci/drivers_probe"
            )),
            None if be2net => hints.push(format!("{f} has no driver: echo {f} > /sys/bus/pci/drivers_probe")),
            _ => {}
        }
    }
    if !ocrdma {
        hints.push("modprobe ocrdma for RoCE (it attaches when be2net sees RDMA in the function mode)".to_owned());
    }
    if hints.is_empty() { Check::pass(ID, detail) } else { Check::warn(ID, detail, hints.join("; ")) }
}

/// True when `f`'s `driver_override` is the one the sysfs backend's hand-off holds it with.
fn held_for_ocetool(roots: &Roots, f: PciAddress) -> bool {
    std::fs::read_to_string(roots.device_dir(f).join("driver_override")).is_ok_and(|o| o.trim() == HOLD_OVERRIDE)
}

/// `nfs_rdma`: the RPC-over-RDMA transport loaded, nfsd listening on RDMA, mounts over RDMA.
fn nfs_rdma(roots: &Roots) -> Check {
    const ID: &str = "nfs_rdma";
    let module = ["rpcrdma", "svcrdma", "xprtrdma"].into_iter().find(|m| host::module_loaded(roots, m));
    let listeners = match host::nfsd_listeners(roots) {
        Ok(l) => l,
        Err(e) => return Check::warn(ID, format!("cannot read nfsd's port list: {e}"), "check that /proc is mounted"),
    };
    let mounts = match host::nfs_mounts(roots) {
        Ok(m) => m,
        Err(e) => return Check::warn(ID, format!("cannot read the mount table: {e}"), "check that /proc is mounted"),
    };
    let rdma_listener = listeners.as_ref().and_then(|l| l.iter().find(|(t, _)| t == "rdma"));
    let rdma_mounts: Vec<&host::NfsMount> = mounts.iter().filter(|m| m.proto.as_deref() == Some("rdma")).collect();
    let module_text = module.map_or_else(|| "rpcrdma not loaded".to_owned(), |m| format!("{m} loaded"));
    if listeners.is_none() && mounts.is_empty() {
        return Check::skip(ID, format!("no NFS server running and no NFS mounts ({module_text})"));
    }
    let mut seen = vec![module_text];
    if let Some((_, port)) = rdma_listener {
        seen.push(format!("nfsd listens on rdma {port}"));
    }
    if !rdma_mounts.is_empty() {
        let on: Vec<&str> = rdma_mounts.iter().map(|m| m.target.as_str()).collect();
        seen.push(format!("mounted over RDMA: {}", on.join(", ")));
    }
    let mut hints = Vec::new();
    if let Some(l) = listeners.as_ref().filter(|_| rdma_listener.is_none()) {
        let on: Vec<String> = l.iter().map(|(t, p)| format!("{t} {p}")).collect();
        seen.push(format!(
            "nfsd listens on {} but not on RDMA",
            if on.is_empty() { "nothing".into() } else { on.join(", ") }
        ));
        hints.push(
            "modprobe svcrdma; echo 'rdma 20049' > /proc/fs/nfsd/portlist (rdma=y under [nfsd] in /etc/nfs.conf keeps it)",
        );
    }
    let tcp_only = mounts.len() - rdma_mounts.len();
    if tcp_only > 0 && rdma_mounts.is_empty() && rdma_listener.is_none() {
        seen.push(format!("{tcp_only} NFS mount(s), none over RDMA"));
        hints.push("modprobe rpcrdma, then mount with -o proto=rdma,port=20049");
    }
    let detail = seen.join("; ");
    if hints.is_empty() { Check::pass(ID, detail) } else { Check::warn(ID, detail, hints.join("; ")) }
}

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;
