//! The adapter half of `ocetool doctor` and the whole report: `pending` (a reset or reboot would
//! change what runs), `roce` (the profile is RoCE and the host has ocrdma's RDMA device, port
//! ACTIVE on Ethernet) and `pfc` (the adapter's DCBX/PFC state for the RoCE priority), merged with the host
//! checks of [`oce_pci::doctor`] in [`ORDER`].
//!
//! The adapter checks need an adapter ocetool can reach (the emulator counts); without one they
//! are `skip`, with the reason, and `roce` judges what the host alone shows and says that the
//! profile went unchecked.

use oce_pci::PciFunction;
pub use oce_pci::doctor::{Check, HostReport, ORDER, Status, Target};
use oce_pci::host::RdmaDevice;

use crate::adapter::{DcbState, Firmware, ProfileState, read_dcb, read_info};
use crate::commands::{
    GetCntlAttributes, GetDcbxConfig, GetFuncConfig, GetMacList, GetProfileConfig, ReadTransceiverData, RetrieveFat,
    WriteFlashrom,
};
use crate::wrb::{MAILBOX_ALIGN, MAILBOX_LEN};
use crate::{BootstrapMailbox, Command, MailboxError};

/// The page size DMA buffers are rounded to: the x86 IOMMU page (VT-d, AMD-Vi).
const IOMMU_PAGE: usize = 4096;

/// The largest command buffer the driver allocates for the commands ocetool sends.
const LARGEST_COMMAND: usize = {
    let lens = [
        GetFuncConfig::LEN,
        GetProfileConfig::LEN,
        <WriteFlashrom<'static> as Command>::LEN,
        RetrieveFat::LEN,
        GetDcbxConfig::LEN,
        ReadTransceiverData::LEN,
        GetCntlAttributes::LEN,
        GetMacList::LEN,
    ];
    let mut max = 0;
    let mut i = 0;
    while i < lens.len() {
        if lens[i] > max {
            max = lens[i];
        }
        i += 1;
    }
    max
};

/// Bytes of locked memory ocetool needs to drive an adapter through VFIO: the mailbox and the
/// largest command buffer alive at once, each rounded to pages, counted twice because the kernel
/// charges both the `mlock` and VFIO's page pinning to RLIMIT_MEMLOCK.
pub fn locked_memory_needed() -> u64 {
    let pages = |len: usize| len.div_ceil(IOMMU_PAGE) * IOMMU_PAGE;
    2 * (pages(MAILBOX_LEN + MAILBOX_ALIGN as usize) + pages(LARGEST_COMMAND)) as u64
}

/// What the adapter checks look at.
#[derive(Debug, Clone)]
pub struct DeviceFacts {
    /// Running and stored firmware.
    pub firmware: Firmware,
    /// Profiles, when the function may read them.
    pub profiles: Option<ProfileState>,
    /// `function_mode` of QUERY_FIRMWARE_CONFIG.
    pub function_mode: u32,
    /// RDMA is in the function mode (what be2net and ocrdma go by).
    pub roce_enabled: bool,
    /// The DCB state, or why it could not be read.
    pub dcb: Result<DcbState, String>,
}

/// Reads the facts from the adapter.
pub fn read_device_facts<F: PciFunction>(mbox: &mut BootstrapMailbox<F>) -> Result<DeviceFacts, MailboxError> {
    let info = read_info(mbox)?;
    let roce_enabled = info.roce_enabled();
    let dcb = read_dcb(mbox).map_err(|e| oce_pci::error_line(&e));
    Ok(DeviceFacts {
        firmware: info.firmware,
        profiles: info.profiles,
        function_mode: info.config.function_mode.0,
        roce_enabled,
        dcb,
    })
}

/// The whole report, in [`ORDER`]: the host checks, and the adapter checks from `device` (or
/// `skip` with the reason why the adapter could not be reached).
pub fn report(host: &HostReport, target: Target, device: &Result<DeviceFacts, String>) -> Vec<Check> {
    let mut checks = host.checks.clone();
    checks.push(pending(device));
    checks.push(roce(device, &host.rdma, target));
    checks.push(pfc(device));
    checks.sort_by_key(|c| ORDER.iter().position(|id| *id == c.id).unwrap_or(ORDER.len()));
    checks
}

/// True when any check failed (`doctor` then exits 1).
pub fn has_failures(checks: &[Check]) -> bool {
    checks.iter().any(|c| c.status == Status::Fail)
}

fn profile_name(p: &ProfileState, id: u16) -> String {
    p.by_id(id).map_or_else(|| format!("profile {id}"), |p| format!("{} ({})", p.name, p.id))
}

/// `pending`: stored firmware or the next profile differ from what runs.
fn pending(device: &Result<DeviceFacts, String>) -> Check {
    const ID: &str = "pending";
    let d = match device {
        Ok(d) => d,
        Err(reason) => return Check::skip(ID, format!("adapter not reachable: {reason}")),
    };
    let mut staged = Vec::new();
    let mut same = Vec::new();
    if d.firmware.running == d.firmware.stored {
        same.push(format!("firmware {} running and stored", d.firmware.running));
    } else {
        staged.push(format!("firmware {} runs, {} is on flash", d.firmware.running, d.firmware.stored));
    }
    if let Some(p) = &d.profiles {
        if p.change_pending() {
            staged.push(format!("profile {} runs, {} is staged", profile_name(p, p.active), profile_name(p, p.next)));
        } else {
            same.push(format!("profile {} active and next", profile_name(p, p.active)));
        }
    }
    if staged.is_empty() {
        Check::pass(ID, same.join("; "))
    } else {
        Check::warn(
            ID,
            staged.join("; "),
            "activate it with `ocetool reset` (a chip reset: every function of the adapter restarts) or a reboot",
        )
    }
}

/// The `roce` check's id.
const ID_ROCE: &str = "roce";

/// `roce`: the profile runs RoCE and the host shows ocrdma's device, port ACTIVE on Ethernet.
fn roce(device: &Result<DeviceFacts, String>, rdma: &Result<Vec<RdmaDevice>, String>, target: Target) -> Check {
    const ID: &str = ID_ROCE;
    let emulator = target == Target::Emulator;
    if !emulator {
        match rdma {
            Ok(devices) if !devices.is_empty() => return rdma_devices(devices, device),
            Ok(_) => {}
            Err(e) => {
                return Check::warn(
                    ID,
                    format!("cannot read /sys/class/infiniband: {e}"),
                    "check that sysfs is mounted",
                );
            }
        }
    }
    let d = match device {
        Ok(d) => d,
        Err(reason) => {
            return Check::skip(
                ID,
                format!("no RDMA device for the adapter in sysfs, and the profile was not read: {reason}"),
            );
        }
    };
    let what = running_mode(d);
    if d.roce_enabled && emulator {
        return Check::pass(ID, format!("{what}: RDMA in the function mode (the emulator has no kernel RDMA device)"));
    }
    if d.roce_enabled {
        return Check::fail(
            ID,
            format!("{what}: RDMA is in the function mode, but the host has no RDMA device for the adapter"),
            "bind the adapter to be2net and modprobe ocrdma; ocrdma also needs MSI-X with at least 2 vectors \
             (see dmesg | grep -i ocrdma)",
        );
    }
    let staged = d.profiles.as_ref().filter(|p| p.change_pending()).and_then(ProfileState::next_profile);
    match staged.filter(|p| p.roce) {
        Some(next) => Check::warn(
            ID,
            format!("{what}: no RoCE yet; the RoCE profile {} is staged", next.name),
            "activate it with `ocetool reset` or a reboot",
        ),
        None => Check::warn(
            ID,
            format!("{what}: the adapter runs without RoCE"),
            "switch to a RoCE profile: `ocetool set-profile roce`, then `ocetool reset`",
        ),
    }
}

/// The running profile (when read) and the function mode, for a detail.
fn running_mode(d: &DeviceFacts) -> String {
    match &d.profiles {
        Some(p) => format!("profile {}, function_mode {:#x}", profile_name(p, p.active), d.function_mode),
        None => format!("function_mode {:#x}", d.function_mode),
    }
}

/// True when the adapter runs RoCE: its active profile says so when the profiles were read (and
/// list it), else the RDMA bit of the function mode.
fn runs_roce(d: &DeviceFacts) -> bool {
    d.profiles.as_ref().and_then(ProfileState::active_profile).map_or(d.roce_enabled, |p| p.roce)
}

/// `roce` judged on the host's RDMA devices for the adapter: each is ocrdma's, on Ethernet, with
/// a port ACTIVE; and, when the adapter could be read, its profile runs RoCE. The worst verdict
/// wins; the detail names every device.
fn rdma_devices(devices: &[RdmaDevice], device: &Result<DeviceFacts, String>) -> Check {
    let mut verdicts: Vec<Check> = devices.iter().map(rdma_device).collect();
    let profile = match device {
        Ok(d) if runs_roce(d) => Check::pass(ID_ROCE, format!("{}: RoCE", running_mode(d))),
        Ok(d) => {
            let names: Vec<&str> = devices.iter().map(|dev| dev.name.as_str()).collect();
            Check::fail(
                ID_ROCE,
                format!("{}: the adapter runs without RoCE, yet the host has {}", running_mode(d), names.join(", ")),
                "the drivers still run the adapter's former mode (a chip reset under be2net?): reload them \
                 (modprobe -r ocrdma be2net; modprobe be2net; modprobe ocrdma), after `ocetool set-profile roce` \
                 and `ocetool reset` if RoCE is what the adapter should run",
            )
        }
        Err(reason) => {
            Check::pass(ID_ROCE, format!("profile not checked (known only when the adapter is reachable): {reason}"))
        }
    };
    verdicts.push(profile);
    let status = verdicts.iter().map(|c| c.status).max().unwrap_or(Status::Pass);
    let detail = verdicts.iter().map(|c| c.detail.as_str()).collect::<Vec<_>>().join("; ");
    let mut hints: Vec<&str> = Vec::new();
    for hint in verdicts.iter().filter(|c| c.status == status).filter_map(|c| c.hint.as_deref()) {
        if !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    let hint = (!hints.is_empty()).then(|| hints.join("; "));
    Check { id: ID_ROCE, status, detail, hint }
}

/// `roce` judged on one RDMA device on the adapter's function.
fn rdma_device(dev: &RdmaDevice) -> Check {
    let ports: Vec<String> =
        dev.ports.iter().map(|p| format!("port {} {} ({})", p.number, p.state, p.link_layer)).collect();
    let on = dev.function.map(|f| format!(" on {f}")).unwrap_or_default();
    let detail = format!("{}{on}: {}", dev.name, ports.join(", "));
    if !dev.is_ocrdma() {
        let desc = if dev.node_desc.is_empty() { "none".to_owned() } else { format!("\"{}\"", dev.node_desc) };
        return Check::fail(
            ID_ROCE,
            format!("{detail}: not ocrdma's (node description {desc})"),
            format!(
                "the OCe14000's RoCE runs through ocrdma: remove the driver that registered {} and modprobe ocrdma",
                dev.name
            ),
        );
    }
    if dev.ports.iter().any(|p| !p.link_layer.is_empty() && p.link_layer != "Ethernet") {
        return Check::fail(
            ID_ROCE,
            detail,
            "RoCE runs over Ethernet: this RDMA device is not the adapter's RoCE function",
        );
    }
    if !dev.ports.iter().any(|p| p.state == "ACTIVE") {
        return Check::warn(
            ID_ROCE,
            detail,
            "bring the adapter's network interface up (ip link set IFACE up) and check the cable and the switch port",
        );
    }
    Check::pass(ID_ROCE, detail)
}

/// `pfc`: lossless RoCE needs DCBX on and PFC enabled, in sync with the switch, on the RoCE
/// priority.
fn pfc(device: &Result<DeviceFacts, String>) -> Check {
    const ID: &str = "pfc";
    let d = match device {
        Ok(d) => d,
        Err(reason) => return Check::skip(ID, format!("adapter not reachable: {reason}")),
    };
    let dcb = match &d.dcb {
        Ok(dcb) => dcb,
        Err(e) => {
            return Check::warn(
                ID,
                format!("the adapter did not report its DCBX configuration: {e}"),
                "check PFC on the switch port for the RoCE priority; a firmware update may add DCBX reporting",
            );
        }
    };
    let prio = dcb.roce_priority;
    let source = dcb.roce_priority_source.name();
    let oper = match &dcb.operational {
        Ok(cfg) => cfg,
        Err(e) => {
            let detail = format!("operational DCBX configuration unreadable ({e}); RoCE priority {prio} ({source})");
            return fail_or_warn(d.roce_enabled, detail, "check PFC on the switch port for the RoCE priority");
        }
    };
    let state = oper.pfc_state.names().join(", ");
    let prios: Vec<String> = oper.pfc_enabled_priorities().iter().map(u8::to_string).collect();
    let detail = format!(
        "DCBX {}; PFC {} on priorities [{}]; RoCE priority {prio} ({source})",
        if oper.dcbx_enabled() { "on" } else { "off" },
        if state.is_empty() { "off".to_owned() } else { state },
        prios.join(", ")
    );
    if dcb.pfc_ready_for_roce() {
        return Check::pass(ID, detail);
    }
    let hint = if !oper.dcbx_enabled() {
        "enable DCBX (LLDP) on the switch port, or the adapter's DCBX in its pre-boot setup".to_owned()
    } else if !oper.pfc_state.contains(crate::commands::DcbxFeatureState::ENABLED) {
        format!("enable PFC for priority {prio} on the switch port (802.1Qbb) and let DCBX negotiate it")
    } else if !oper.pfc_state.contains(crate::commands::DcbxFeatureState::SYNC) {
        format!(
            "PFC is not in sync with the switch: enable PFC for priority {prio} on the switch port; a willing adapter \
             takes the switch's settings"
        )
    } else {
        format!(
            "PFC is off for the RoCE priority {prio}: add it to the switch port's PFC priorities, or map RoCE \
             (ethertype 0x8915) to a PFC priority in the switch's application table"
        )
    };
    fail_or_warn(d.roce_enabled, detail, &hint)
}

/// A PFC problem breaks an adapter that runs RoCE; without RoCE it is only worth knowing.
fn fail_or_warn(roce: bool, detail: String, hint: &str) -> Check {
    if roce { Check::fail("pfc", detail, hint) } else { Check::warn("pfc", format!("{detail} (RoCE is off)"), hint) }
}

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;
