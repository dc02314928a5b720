//! Which backend drives a function, and why: VFIO when the function has an IOMMU group, the sysfs
//! backend ([`crate::sysfs_backend`]) when it has none (the IOMMU is off), or the one `--backend`
//! forces. One home for the choice, so `list`, `doctor` and the commands say the same thing.
//!
//! VFIO is preferred wherever it can work: the IOMMU confines the adapter's DMA to the buffers
//! ocetool mapped, and a mistake in a bus address faults instead of writing over someone else's
//! memory. Without an IOMMU nothing confines the adapter, so the sysfs backend is for root only,
//! and refused where the kernel forbids raw PCI access (lockdown) or hides physical addresses.

use std::fmt;

use serde::Serialize;

use crate::host::{self, HugePages};
use crate::sysfs::{self, Lockdown, Roots};
use crate::{PciAddress, PciError};

/// A way of reaching a PCI function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// vfio-pci: BARs, config space and IOMMU-mapped DMA through the VFIO device.
    Vfio,
    /// sysfs: BARs through `resourceN`, config space through `config`, DMA to physical addresses.
    Sysfs,
}

impl Backend {
    /// `vfio` or `sysfs`, as the `--backend` flag spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Vfio => "vfio",
            Self::Sysfs => "sysfs",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the user asked for (`--backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Request {
    /// Choose by the function's IOMMU group.
    #[default]
    Auto,
    /// Force one backend.
    Force(Backend),
}

/// A backend and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// The backend.
    pub backend: Backend,
    /// Why, in a phrase for `list` and `doctor`.
    pub reason: String,
}

/// Chooses the backend for `address`.
///
/// Forcing VFIO on a function without an IOMMU group is [`PciError::NoIommuGroup`]; forcing sysfs
/// on a function whose IOMMU translates DMA is [`PciError::SysfsBackendTranslated`] (the adapter
/// would be handed physical addresses the IOMMU does not map). A group whose type is `identity`
/// (`iommu=pt`) passes DMA through untranslated, so the sysfs backend works there when forced.
pub fn choose(roots: &Roots, address: PciAddress, request: Request) -> Result<Choice, PciError> {
    let group = sysfs::iommu_group(roots, address)?;
    let choice = |backend, reason: String| Ok(Choice { backend, reason });
    match (request, group) {
        (Request::Auto, Some(g)) => {
            choice(Backend::Vfio, format!("IOMMU group {g}: VFIO, the adapter's DMA confined to ocetool's buffers"))
        }
        (Request::Auto, None) => choice(
            Backend::Sysfs,
            "no IOMMU group (the IOMMU is off): registers through sysfs, DMA to physical addresses, without IOMMU \
             protection"
                .to_owned(),
        ),
        (Request::Force(Backend::Vfio), Some(g)) => choice(Backend::Vfio, format!("--backend vfio (IOMMU group {g})")),
        (Request::Force(Backend::Vfio), None) => Err(PciError::NoIommuGroup { address }),
        (Request::Force(Backend::Sysfs), None) => choice(Backend::Sysfs, "--backend sysfs (no IOMMU group)".to_owned()),
        (Request::Force(Backend::Sysfs), Some(g)) => {
            let path = roots.sysfs.join("kernel/iommu_groups").join(g.to_string()).join("type");
            let kind = std::fs::read_to_string(&path).map(|t| t.trim().to_owned()).unwrap_or_default();
            if kind == "identity" {
                choice(Backend::Sysfs, format!("--backend sysfs (IOMMU group {g} passes DMA through untranslated)"))
            } else {
                Err(PciError::SysfsBackendTranslated { address, group: g, kind })
            }
        }
    }
}

/// Why the sysfs backend cannot run on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SysfsBlocker {
    /// Not root: `resourceN` is mode 0600, config writes and pagemap frame numbers need
    /// CAP_SYS_ADMIN.
    NotRoot,
    /// Kernel lockdown forbids raw PCI access (`resourceN` mmap, config writes).
    LockedDown(Lockdown),
    /// The kernel hides physical addresses from this process (pagemap frame numbers read as 0).
    AddressesHidden,
    /// The kernel has no huge pages (built without hugetlbfs).
    NoHugePageSupport,
    /// No huge page is free for the adapter's DMA memory.
    NoFreeHugePage {
        /// The huge page size in bytes.
        size: u64,
        /// `nr_hugepages` now.
        total: u64,
    },
}

impl fmt::Display for SysfsBlocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotRoot => f.write_str(
                "the sysfs backend needs root (it maps the adapter's registers and hands it physical addresses): run \
                 ocetool as root",
            ),
            Self::LockedDown(mode) => write!(
                f,
                "kernel lockdown ({mode}) forbids the raw PCI access the sysfs backend needs (resourceN mmap, config \
                 writes): enable the IOMMU (intel_iommu=on or amd_iommu=on) so ocetool can use VFIO, which lockdown \
                 allows"
            ),
            Self::AddressesHidden => f.write_str(
                "the kernel hides physical addresses from ocetool (/proc/self/pagemap frame numbers read as 0 without \
                 CAP_SYS_ADMIN): run it as root, outside a container that drops CAP_SYS_ADMIN",
            ),
            Self::NoHugePageSupport => f.write_str(
                "the kernel has no huge pages (no HugePages_ lines in /proc/meminfo), and the sysfs backend needs one \
                 for the adapter's DMA memory: use a kernel with CONFIG_HUGETLBFS, or enable the IOMMU for VFIO",
            ),
            Self::NoFreeHugePage { size, total } => write!(
                f,
                "no free {} KiB huge page for the adapter's DMA memory: reserve one with `echo {} > \
                 /proc/sys/vm/nr_hugepages` (vm.nr_hugepages in /etc/sysctl.d/ keeps it)",
                size / 1024,
                total + 1
            ),
        }
    }
}

/// What keeps the sysfs backend from running on this host now, read from `roots` (a fake tree in
/// tests): root, lockdown, huge pages. Whether pagemap shows frame numbers is only known when
/// memory is mapped; [`SysfsBlocker::AddressesHidden`] comes from
/// [`crate::sysfs_backend::SysfsFunction::open`].
pub fn sysfs_blockers(roots: &Roots) -> Vec<SysfsBlocker> {
    let mut blockers = Vec::new();
    if !host::is_root(roots).unwrap_or(false) {
        blockers.push(SysfsBlocker::NotRoot);
    }
    match sysfs::lockdown(roots) {
        // Unknown: the mapping itself will tell.
        Lockdown::None | Lockdown::Unknown => {}
        mode => blockers.push(SysfsBlocker::LockedDown(mode)),
    }
    match host::huge_pages(roots) {
        Ok(Some(HugePages { available, .. })) if available > 0 => {}
        Ok(Some(HugePages { size, total, .. })) => blockers.push(SysfsBlocker::NoFreeHugePage { size, total }),
        Ok(None) => blockers.push(SysfsBlocker::NoHugePageSupport),
        // An unreadable /proc/meminfo is not proof of anything: the mapping itself will tell.
        Err(_) => {}
    }
    blockers
}

#[cfg(test)]
#[path = "backend_tests.rs"]
mod tests;
