//! The error type of the hardware seam.

use std::path::PathBuf;
use std::time::Duration;

use crate::PciAddress;
use crate::backend::SysfsBlocker;
use crate::signals::Signal;
use crate::sysfs::Lockdown;

/// What can go wrong between ocetool and a PCI function.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PciError {
    /// A PCI address that does not parse.
    #[error("invalid PCI address {input:?}: {reason} (expected DDDD:BB:DD.F or BB:DD.F)")]
    BadAddress {
        /// What the user gave.
        input: String,
        /// Which part is wrong.
        reason: &'static str,
    },
    /// A config-space access outside the 4 KiB extended space or not dword-aligned.
    #[error("config space access at {off:#x} is outside the space or not 4-byte aligned")]
    ConfigOffset {
        /// The offset asked for.
        off: u16,
    },
    /// The function has no memory BAR with this index.
    #[error("BAR{bar} is not a memory BAR of this function")]
    NoSuchBar {
        /// BAR index.
        bar: u8,
    },
    /// The BAR exists but is shorter than the registers ocetool needs.
    #[error("BAR{bar} is {len:#x} bytes, shorter than the {needed:#x} bytes needed")]
    BarTooSmall {
        /// BAR index.
        bar: u8,
        /// Its length.
        len: u64,
        /// The length the caller needs.
        needed: u64,
    },
    /// An access outside a DMA buffer.
    #[error("DMA access of {len} bytes at offset {off} is outside the {size}-byte buffer")]
    DmaOutOfBounds {
        /// Start offset.
        off: usize,
        /// Access length.
        len: usize,
        /// Buffer size.
        size: usize,
    },
    /// Guest memory that a vfio-user client shared by file descriptor cannot be mapped.
    #[error("cannot map {len:#x} bytes at offset {offset:#x} of the client's memory file: {reason}")]
    GuestMap {
        /// Offset in the client's file.
        offset: u64,
        /// Length asked for.
        len: u64,
        /// Why.
        reason: String,
    },
    /// Guest memory reached through the client's file ended before the bytes asked for: the
    /// client shrank the file after sharing it (`oce_pci::guest_memory::GuestRegion`).
    #[error(
        "{len} bytes at offset {at:#x} of the client's memory file are past its end ({size:#x} bytes): the client shrank the file it shared"
    )]
    GuestShrunk {
        /// Offset in the client's file.
        at: u64,
        /// Access length.
        len: usize,
        /// The file's size now.
        size: u64,
    },
    /// Reading or writing the client's memory file failed.
    #[error("{len} bytes at offset {at:#x} of the client's memory file: {source}")]
    GuestIo {
        /// Offset in the client's file.
        at: u64,
        /// Access length.
        len: usize,
        /// The error.
        source: std::io::Error,
    },
    /// A device write to guest memory the client shared read-only.
    #[error("guest memory at this address is shared read-only")]
    GuestReadOnly,
    /// No DMA memory could be allocated or mapped for the device.
    #[error("cannot allocate {len} bytes of DMA memory: {reason}")]
    DmaAlloc {
        /// Requested length.
        len: usize,
        /// Why.
        reason: String,
    },
    /// An I/O error on a sysfs or /dev path.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A path that must name a regular file names something else (a directory, a named pipe, a
    /// device node, a socket), which ocetool refuses before reading a byte of it.
    #[error("{} is {kind}, not a regular file", path.display())]
    NotAFile {
        /// The path given.
        path: PathBuf,
        /// What it is instead, e.g. "a directory" or "a named pipe (FIFO)".
        kind: &'static str,
    },
    /// A file or directory that someone other than the users ocetool trusts could change, so
    /// ocetool does not act on it (`trust`: like sshd's StrictModes).
    #[error("{}: {problem} (owner uid {owner}, mode {mode:04o})", path.display())]
    Untrusted {
        /// The file or directory.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// Its permission bits (with set-ID and sticky bits).
        mode: u32,
        /// What is wrong: who else could write it.
        problem: String,
    },
    /// A symbolic link where ocetool keeps a file of its own (a state, lock or log file) or a
    /// directory for them: never followed.
    #[error("{} is a symbolic link; ocetool does not follow one there", path.display())]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// The PCI function is not in sysfs.
    #[error("no PCI function {address} in {}", path.display())]
    NoSuchFunction {
        /// The address asked for.
        address: PciAddress,
        /// The sysfs folder that does not exist.
        path: PathBuf,
    },
    /// The vfio-pci driver is not loaded.
    #[error("the vfio-pci driver is not loaded ({} is missing): run `modprobe vfio-pci`", path.display())]
    VfioPciNotLoaded {
        /// The driver folder that does not exist.
        path: PathBuf,
    },
    /// The function has no IOMMU group, so VFIO cannot take it.
    #[error(
        "{address} has no IOMMU group, so VFIO cannot reach it: enable the IOMMU with intel_iommu=on or amd_iommu=on \
         on the kernel command line (and VT-d / AMD-Vi in the firmware setup), then reboot; or let ocetool use its \
         sysfs backend (drop --backend vfio)"
    )]
    NoIommuGroup {
        /// The function.
        address: PciAddress,
    },
    /// The sysfs backend was forced on a function whose IOMMU translates DMA.
    #[error(
        "--backend sysfs cannot drive {address}: its IOMMU group {group} translates DMA (type {}), so the physical \
         addresses the sysfs backend hands the adapter would fault; use VFIO (drop --backend sysfs)",
        if kind.is_empty() { "unknown" } else { kind.as_str() }
    )]
    SysfsBackendTranslated {
        /// The function.
        address: PciAddress,
        /// Its IOMMU group.
        group: u32,
        /// The group's `type` (`DMA`, `DMA-FQ`, ...), empty when unreadable.
        kind: String,
    },
    /// The host does not let the sysfs backend run (the blocker's text names the backend).
    #[error("{blocker}")]
    SysfsBackend {
        /// The function.
        address: PciAddress,
        /// What is in the way.
        blocker: SysfsBlocker,
    },
    /// A memory BAR could not be mapped through sysfs.
    #[error("cannot map BAR{bar} of {address} ({})", path.display())]
    BarMap {
        /// The function.
        address: PciAddress,
        /// BAR index.
        bar: u8,
        /// The `resourceN` file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Another driver holds the function and unbinding it was not allowed.
    #[error(
        "{address} is bound to {driver}: pass --unbind to hand it to vfio-pci for this command ({driver} gets it back afterwards)"
    )]
    DriverBound {
        /// The function.
        address: PciAddress,
        /// The driver that holds it.
        driver: String,
    },
    /// A member of the function's IOMMU group that is not a function of the same adapter is held
    /// by a host driver: VFIO cannot open the group, and ocetool never takes another device's
    /// driver away.
    #[error(
        "IOMMU group {group} of {address} is not viable: {member} is bound to {driver}, and it is not a function of \
         this adapter, so ocetool leaves it alone; move it to vfio-pci yourself, or put the adapter in a slot with \
         an IOMMU group of its own"
    )]
    GroupNotViable {
        /// The function ocetool wants.
        address: PciAddress,
        /// The IOMMU group number.
        group: u32,
        /// The member in the way (a sysfs device name, usually a PCI address).
        member: String,
        /// The driver that holds it.
        driver: String,
    },
    /// Another function of the same adapter shares the IOMMU group and is held by a host driver,
    /// and unbinding was not allowed.
    #[error(
        "{member}, another function of the adapter of {address}{}, is bound to {driver}: pass --unbind to hand the \
         adapter's functions to vfio-pci for this command (each gets its driver back afterwards)",
        group.map(|g| format!(" in its IOMMU group {g}")).unwrap_or_default()
    )]
    AdapterFunctionBound {
        /// The function ocetool wants.
        address: PciAddress,
        /// The other function of the adapter.
        member: PciAddress,
        /// The IOMMU group they share.
        group: Option<u32>,
        /// The driver that holds it.
        driver: String,
    },
    /// A storage function of the same adapter (FCoE on lpfc, iSCSI on be2iscsi) shares the IOMMU
    /// group and a host driver holds it. ocetool never takes it, `--unbind` or not: the SCSI hosts
    /// and disks behind it would vanish under whatever uses them (a mounted filesystem, a root on
    /// SAN, multipath), and a rebind brings new disks, not the mounts back.
    #[error(
        "{member}, the {} function of the adapter of {address}{}, is bound to {driver}, and ocetool never takes a \
         storage function from its driver (the disks behind it would vanish under whatever uses them), so VFIO \
         cannot open the group; stop what uses its disks, unbind it yourself (echo {member} > \
         /sys/bus/pci/drivers/{driver}/unbind) and run ocetool again, which leaves it unbound (echo {member} > \
         /sys/bus/pci/drivers_probe gives it back to {driver})",
        kind.label(),
        group.map(|g| format!(" in its IOMMU group {g}")).unwrap_or_default()
    )]
    StorageFunctionBound {
        /// The function ocetool wants.
        address: PciAddress,
        /// The storage function.
        member: PciAddress,
        /// FCoE or iSCSI.
        kind: crate::ids::FunctionKind,
        /// The IOMMU group they share.
        group: Option<u32>,
        /// The driver that holds it.
        driver: String,
    },
    /// A function's driver changed between the hand-off's plan and its execution.
    #[error(
        "{address} changed drivers while ocetool was getting ready (it was on {}, now {}): nothing was moved \
         that is not given back; run the command again",
        expected.as_deref().unwrap_or("no driver"),
        actual.as_deref().unwrap_or("no driver")
    )]
    BindingChanged {
        /// The function.
        address: PciAddress,
        /// The driver the plan saw.
        expected: Option<String>,
        /// The driver it has now.
        actual: Option<String>,
    },
    /// The function did not come free of its driver in time.
    #[error(
        "{address} did not come free of its driver within {waited:?}: it is still bound to {}",
        driver.as_deref().unwrap_or("none")
    )]
    UnbindTimeout {
        /// The function.
        address: PciAddress,
        /// How long ocetool waited.
        waited: Duration,
        /// The driver bound at the end of the wait.
        driver: Option<String>,
    },
    /// The VFIO group node cannot be opened for lack of permission.
    #[error("no permission to open {}: run ocetool as root, or give your user that device node", path.display())]
    VfioPermission {
        /// The node, e.g. /dev/vfio/7.
        path: PathBuf,
    },
    /// The VFIO group is already open elsewhere.
    #[error("{} is already open in another process (a VM, or another ocetool?)", path.display())]
    VfioGroupBusy {
        /// The node, e.g. /dev/vfio/7.
        path: PathBuf,
    },
    /// A sysfs attribute could not be written for lack of permission.
    #[error("permission denied writing {}: moving a function between drivers needs root", path.display())]
    SysfsPermission {
        /// The attribute.
        path: PathBuf,
    },
    /// The kernel refused a write because it is locked down.
    #[error(
        "the kernel refused to write {} while lockdown is in {mode} mode: lockdown allows VFIO but blocks raw PCI \
         access (resourceN mmap, config writes through sysfs, /dev/mem), so something stricter is in force here; bind \
         the function to vfio-pci at boot (vfio-pci.ids=VENDOR:DEVICE) and retry",
        path.display()
    )]
    LockedDown {
        /// The attribute.
        path: PathBuf,
        /// The lockdown mode in force.
        mode: Lockdown,
    },
    /// A sysfs attribute write failed.
    #[error("writing {value:?} to {} failed", path.display())]
    SysfsWrite {
        /// The attribute.
        path: PathBuf,
        /// What was written.
        value: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The function did not reach vfio-pci in time after the bind.
    #[error(
        "{address} did not move to vfio-pci within {waited:?}: its driver is {}, and {} {}",
        driver.as_deref().unwrap_or("none"),
        node.display(),
        if *node_present { "exists" } else { "did not appear" }
    )]
    BindTimeout {
        /// The function.
        address: PciAddress,
        /// How long ocetool waited.
        waited: Duration,
        /// The driver bound at the end of the wait.
        driver: Option<String>,
        /// The VFIO group node waited for.
        node: PathBuf,
        /// Whether the node existed at the end of the wait.
        node_present: bool,
    },
    /// The original driver binding could not be restored.
    #[error(
        "could not give {address} back to {}: it is bound to {} (restore it with: echo > {override_path}; echo \
         {address} > /sys/bus/pci/drivers_probe)",
        expected.as_deref().unwrap_or("no driver"),
        actual.as_deref().unwrap_or("no driver"),
        override_path = override_path.display()
    )]
    RestoreFailed {
        /// The function.
        address: PciAddress,
        /// The driver it had before ocetool took it.
        expected: Option<String>,
        /// The driver it has now.
        actual: Option<String>,
        /// Its driver_override attribute.
        override_path: PathBuf,
    },
    /// More than one function could not be given back.
    #[error("{}", failures.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    RestoreFailures {
        /// Each function's failure.
        failures: Vec<PciError>,
    },
    /// A hand-off record (or its folder) that another user could have written: it is not acted
    /// on.
    #[error("not trusting the hand-off record {path}: {why}; remove it (as root) if no ocetool is running")]
    RecordUntrusted {
        /// The record or its folder.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A hand-off record that does not parse or names something it must not.
    #[error("the hand-off record {path} is not valid: {detail}; remove it (as root) if no ocetool is running")]
    RecordInvalid {
        /// The record.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A hand-off of a stopped process is still recorded: the functions it names may be on
    /// vfio-pci (or held unbound) with `driver_override` set, so their current driver is not
    /// their original one. Undo it first ([`crate::handoff::repair`]).
    #[error(
        "a driver hand-off of {address} by ocetool (pid {pid}), which stopped before giving the functions back, is \
         still recorded in {path}; run `ocetool restore-drivers` to give them back first"
    )]
    HandOffLeftOver {
        /// The record.
        path: PathBuf,
        /// The process that made the hand-off.
        pid: u32,
        /// The function it was for.
        address: PciAddress,
    },
    /// Undoing a recorded hand-off of a stopped process failed; the record is kept so the next
    /// run tries again.
    #[error(
        "could not undo the driver hand-off of {address} that ocetool (pid {pid}) left behind (record kept in {path}): \
         {}",
        failures.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    RepairFailed {
        /// The record.
        path: PathBuf,
        /// The process that made the hand-off.
        pid: u32,
        /// The function it was for.
        address: PciAddress,
        /// Each function's failure.
        failures: Vec<PciError>,
    },
    /// A backend was asked to open a function that a hand-off did not put where it needs it.
    #[error("{address} was not handed over for the {backend} backend")]
    NotHandedOver {
        /// The function.
        address: PciAddress,
        /// The backend that was asked.
        backend: &'static str,
    },
    /// Opening the function through VFIO failed.
    #[error("cannot open {address} through VFIO")]
    VfioOpen {
        /// The function.
        address: PciAddress,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A config-space access through the VFIO config region failed.
    #[error("config space {} at {off:#x} of {address} failed", if *write { "write" } else { "read" })]
    ConfigIo {
        /// The function.
        address: PciAddress,
        /// The offset.
        off: u16,
        /// True for a write.
        write: bool,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// DMA memory could not be locked in RAM.
    #[error(
        "cannot lock {len} bytes of DMA memory in RAM: RLIMIT_MEMLOCK is {limit}; raise it (ulimit -l, or \
         LimitMEMLOCK= in a systemd unit) or run as root"
    )]
    Memlock {
        /// Bytes asked for.
        len: usize,
        /// The soft limit, as text ("65536 bytes", "unlimited").
        limit: String,
    },
    /// The IOMMU refused to map DMA memory for the device.
    #[error("cannot map {len} bytes of DMA memory at IOVA {iova:#x} for {address}")]
    DmaMap {
        /// The function.
        address: PciAddress,
        /// The I/O virtual address.
        iova: u64,
        /// Length in bytes.
        len: usize,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A signal handler could not be installed.
    #[error("cannot install the {signal} handler")]
    SignalHandler {
        /// The signal.
        signal: Signal,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The user asked ocetool to stop (Ctrl-C or SIGTERM).
    #[error("stopped by {signal}")]
    Interrupted {
        /// The signal received.
        signal: Signal,
    },
    /// The Vital Product Data does not follow the PCI format (PCI Local Bus 3.0 §6.4, I.3).
    #[error("malformed VPD at byte {offset}: {problem}")]
    BadVpd {
        /// Where in the VPD.
        offset: usize,
        /// What is wrong there.
        problem: String,
    },
    /// The function did not complete a VPD read (its F flag never set).
    #[error("the VPD read at address {address:#x} did not complete in time")]
    VpdTimeout {
        /// The VPD address asked for.
        address: u16,
    },
}

impl PciError {
    /// True when ocetool refused for safety rather than failed: another driver holds the function
    /// (or another function of its adapter) and `--unbind` was not given, or the IOMMU group holds
    /// a device ocetool must not take (design.md §7: exit code 4).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            Self::DriverBound { .. }
                | Self::AdapterFunctionBound { .. }
                | Self::StorageFunctionBound { .. }
                | Self::GroupNotViable { .. }
        )
    }

    /// True when the PCI function does not exist (design.md §7: exit code 3).
    pub fn is_no_device(&self) -> bool {
        matches!(self, Self::NoSuchFunction { .. })
    }
}

/// The texts of `err`'s `source()` chain, outermost first (`err`'s own text not included).
pub fn error_causes(err: &(dyn std::error::Error + 'static)) -> Vec<String> {
    std::iter::successors(err.source(), |e| e.source()).map(ToString::to_string).collect()
}

/// `err` and its causes on one line, joined with ": ", the form every report and error message
/// of the tool takes. A cause whose text an outer one already contains is not repeated (an
/// error that prints its source would otherwise say it twice).
pub fn error_line(err: &(dyn std::error::Error + 'static)) -> String {
    join_causes(err.to_string(), &error_causes(err))
}

/// `message` followed by each of `causes` it does not already contain, joined with ": ".
pub fn join_causes(mut message: String, causes: &[String]) -> String {
    for cause in causes {
        if !message.contains(cause.as_str()) {
            message.push_str(": ");
            message.push_str(cause);
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] Middle);

    #[derive(Debug, thiserror::Error)]
    #[error("middle: {0}")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn the_chain_is_one_line_without_repeats() {
        let err = Outer(Middle(std::io::Error::other("disk on fire")));
        assert_eq!(error_causes(&err), ["middle: disk on fire", "disk on fire"]);
        assert_eq!(error_line(&err), "outer: middle: disk on fire");
    }
}
