//! The JSON contract of design.md §7, in one place: the objects scripts key on (`firmware`,
//! `profile`, `ports[]`, ...) and how they are built from the library's data. Field names here
//! are a stable interface: add freely, never rename.

use oce_mailbox::adapter::{AdapterInfo, ProfileState};
use oce_mailbox::commands::format_mac;
use oce_pci::driver_view::DriverView;
use oce_pci::host::RdmaDevice;
use oce_pci::ids::{self, id_string};
use serde::Serialize;

use crate::vpd::VpdJson;

/// PCI identity, IDs as `"0x10df"` strings.
#[derive(Debug, Serialize)]
pub struct PciIds {
    pub vendor_id: String,
    pub device_id: String,
    pub subsystem_vendor_id: String,
    pub subsystem_id: String,
}

impl PciIds {
    /// The IDs as strings: vendor, device, subsystem vendor, subsystem.
    pub fn of(vendor: u16, device: u16, subsystem_vendor: u16, subsystem: u16) -> Self {
        Self {
            vendor_id: id_string(vendor),
            device_id: id_string(device),
            subsystem_vendor_id: id_string(subsystem_vendor),
            subsystem_id: id_string(subsystem),
        }
    }

    /// `10df:0720 subsystem 10df:e702`, for text output.
    pub fn text(&self) -> String {
        let bare = |id: &str| id.trim_start_matches("0x").to_owned();
        format!(
            "{}:{} subsystem {}:{}",
            bare(&self.vendor_id),
            bare(&self.device_id),
            bare(&self.subsystem_vendor_id),
            bare(&self.subsystem_id)
        )
    }
}

/// A port's link for text output: `link up, 10000 Mb/s`, `link down`, ...
pub fn link_text(link_up: Option<bool>, speed_mbps: Option<u32>) -> String {
    match (link_up, speed_mbps) {
        (Some(true), Some(s)) => format!("link up, {s} Mb/s"),
        (Some(true), None) => "link up".into(),
        (Some(false), _) => "link down".into(),
        (None, _) => "link unknown".into(),
    }
}

/// `firmware`: running and stored versions.
#[derive(Debug, Clone, Serialize)]
pub struct FirmwareJson {
    pub running: String,
    pub stored: String,
    /// POST booted the backup firmware section.
    pub backup_running: bool,
}

/// `components`: the other firmware components' versions, each `null` when the firmware does
/// not report it (`oce_mailbox::adapter::Components`).
#[derive(Debug, Clone, Serialize)]
pub struct ComponentsJson {
    pub boot_code: Option<String>,
    pub undi: Option<String>,
    pub ncsi: Option<String>,
}

impl ComponentsJson {
    pub fn of(c: &oce_mailbox::adapter::Components) -> Self {
        Self { boot_code: c.boot_code.clone(), undi: c.undi.clone(), ncsi: c.ncsi.clone() }
    }
}

/// `firmware` after a change: running and stored versions.
#[derive(Debug, Clone, Serialize)]
pub struct FirmwareVersions {
    pub running: String,
    pub stored: String,
}

impl FirmwareVersions {
    pub fn of(v: &oce_mailbox::commands::FwVersion) -> Self {
        Self { running: v.running.clone(), stored: v.on_flash.clone() }
    }
}

/// What runs after a change: the firmware versions and the function mode (whose RDMA bit is
/// `roce_enabled`), read back from the adapter.
#[derive(Debug, Clone)]
pub struct RunningState {
    pub firmware: FirmwareVersions,
    pub function_mode: oce_mailbox::commands::FunctionMode,
}

impl RunningState {
    pub fn read<F: oce_pci::PciFunction>(mbox: &mut oce_mailbox::BootstrapMailbox<F>) -> crate::error::CliResult<Self> {
        use crate::error::mailbox_error;
        use oce_mailbox::commands::{GetFwVersion, QueryFirmwareConfig};
        let versions =
            mbox.execute(&GetFwVersion).map_err(|e| mailbox_error("cannot read the firmware versions", &e))?;
        let config =
            mbox.execute(&QueryFirmwareConfig).map_err(|e| mailbox_error("cannot read the function mode", &e))?;
        Ok(Self { firmware: FirmwareVersions::of(&versions), function_mode: config.function_mode })
    }

    /// Firmware on flash that does not run yet.
    pub fn firmware_pending(&self) -> bool {
        self.firmware.running != self.firmware.stored
    }
}

/// A profile reference `{id, name, roce}`.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileRef {
    pub id: u16,
    pub name: Option<String>,
    pub roce: Option<bool>,
}

impl ProfileRef {
    pub fn of(state: &ProfileState, id: u16) -> Self {
        let p = state.by_id(id);
        Self { id, name: p.map(|p| p.name.clone()), roce: p.map(|p| p.roce) }
    }

    /// `NAME (id N)` for text output.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => format!("{} (id {})", crate::output::printable(n), self.id),
            None => format!("id {} (not in the profile list)", self.id),
        }
    }
}

/// `profile`: the running and the next-boot profile side by side.
#[derive(Debug, Clone, Serialize)]
pub struct ProfilePair {
    pub active: ProfileRef,
    pub next: ProfileRef,
}

impl ProfilePair {
    pub fn of(state: &ProfileState) -> Self {
        Self { active: ProfileRef::of(state, state.active), next: ProfileRef::of(state, state.next) }
    }
}

/// One entry of `ports[]`.
#[derive(Debug, Serialize)]
pub struct PortJson {
    pub index: u8,
    /// The network interface on the port, when the kernel's driver is asked (`source: kernel`).
    pub netdev: Option<String>,
    pub name: Option<String>,
    /// True for the port the queried PCI function drives; the others' link and MAC are only
    /// visible from their own functions.
    pub this_function: bool,
    pub mac: Option<String>,
    pub link_up: Option<bool>,
    pub speed_mbps: Option<u32>,
    /// The MAC of the station at the other end of the port's cable: only an emulated adapter on
    /// a cable reports it (`source: server`); no firmware command does.
    pub peer_mac: Option<String>,
}

/// Where a `query` answer comes from: the adapter's firmware (the mailbox), or the kernel's
/// driver while it holds the function.
pub const SOURCE_ADAPTER: &str = "adapter";

/// The `query` document.
#[derive(Debug, Serialize)]
pub struct QueryJson {
    pub device: String,
    /// [`SOURCE_ADAPTER`]: every field read from the firmware.
    pub source: &'static str,
    pub pci: PciIds,
    pub chip: Option<&'static str>,
    pub model: String,
    pub description: String,
    pub manufacturer: String,
    pub serial: String,
    pub asic_revision: u8,
    pub firmware: FirmwareJson,
    /// Boot code, UNDI and NC-SI versions as the firmware reports them.
    pub components: ComponentsJson,
    /// The PCI VPD; `null` when the function has none.
    pub vpd: Option<VpdJson>,
    pub function_mode: u32,
    pub function_mode_flags: Vec<&'static str>,
    pub roce_enabled: bool,
    /// `None` on a virtual function, which may not read profiles.
    pub profile: Option<ProfilePair>,
    pub reset_required: bool,
    pub ports: Vec<PortJson>,
    /// The kernel driver's view (`source: kernel` only; `null` here).
    pub driver: Option<DriverJson>,
    /// What the answer leaves out and how to get it (`source: kernel` only; `null` here).
    pub note: Option<String>,
}

impl FirmwareJson {
    pub fn of(info: &AdapterInfo) -> Self {
        Self {
            running: info.firmware.running.clone(),
            stored: info.firmware.stored.clone(),
            backup_running: info.firmware.backup_running,
        }
    }
}

impl QueryJson {
    pub fn of(device: String, info: &AdapterInfo) -> Self {
        let id = &info.identity;
        Self {
            device,
            source: SOURCE_ADAPTER,
            pci: PciIds::of(id.vendor_id, id.device_id, id.subsystem_vendor_id, id.subsystem_id),
            chip: id.chip.map(|c| c.name()),
            model: id.model.clone(),
            description: id.description.clone(),
            manufacturer: id.manufacturer.clone(),
            serial: id.serial.clone(),
            asic_revision: id.asic_revision,
            firmware: FirmwareJson::of(info),
            components: ComponentsJson::of(&info.components),
            vpd: None,
            function_mode: info.config.function_mode.0,
            function_mode_flags: info.config.function_mode.names(),
            roce_enabled: info.roce_enabled(),
            profile: info.profiles.as_ref().map(ProfilePair::of),
            reset_required: info.reset_required(),
            ports: info
                .ports
                .iter()
                .map(|p| PortJson {
                    index: p.index,
                    netdev: None,
                    name: p.name.map(String::from),
                    this_function: p.this_function,
                    mac: p.mac.as_ref().map(format_mac),
                    link_up: p.link_up,
                    speed_mbps: p.speed_mbps,
                    peer_mac: None,
                })
                .collect(),
            driver: None,
            note: None,
        }
    }
}

/// Where a `query` answer comes from while a kernel driver holds the function.
pub const SOURCE_KERNEL: &str = "kernel";

/// `driver` in a kernel-sourced `query`: the driver and what it made of the function.
#[derive(Debug, Serialize)]
pub struct DriverJson {
    pub name: String,
    pub netdevs: Vec<String>,
    /// RDMA devices on the function (ocrdma registers one when RoCE runs).
    pub rdma_devices: Vec<RdmaDevice>,
}

/// `firmware` as the driver reports it (`ETHTOOL_GDRVINFO`); `null` where it did not answer.
#[derive(Debug, Serialize)]
pub struct KernelFirmwareJson {
    pub running: Option<String>,
    pub stored: Option<String>,
    /// Whether POST booted the backup firmware: only the adapter's semaphore says.
    pub backup_running: Option<bool>,
}

/// One entry of `ports[]` from the kernel: a network interface of the function. Which physical
/// port it is (`index`) and the port's name are the firmware's to say.
#[derive(Debug, Serialize)]
pub struct KernelPortJson {
    pub index: Option<u8>,
    pub netdev: Option<String>,
    pub name: Option<String>,
    pub this_function: bool,
    pub mac: Option<String>,
    pub link_up: Option<bool>,
    pub speed_mbps: Option<u32>,
    /// The MAC of the station at the other end of the port's cable: only an emulated adapter on
    /// a cable reports it (`source: server`); no firmware command does.
    pub peer_mac: Option<String>,
}

/// The `query` document while a kernel driver holds the function, or `ocetool emulator serve`
/// an emulated adapter: the keys of [`QueryJson`], `null` where only the adapter's firmware
/// knows, with `note` saying how to get those.
#[derive(Debug, Serialize)]
pub struct KernelQueryJson {
    pub device: String,
    /// [`SOURCE_KERNEL`], or `server` (`commands::served`).
    pub source: &'static str,
    pub pci: PciIds,
    pub chip: Option<&'static str>,
    pub model: Option<String>,
    pub description: Option<String>,
    pub manufacturer: Option<String>,
    pub serial: Option<String>,
    pub asic_revision: Option<u8>,
    pub firmware: KernelFirmwareJson,
    /// Only the adapter's firmware reports them: `null`.
    pub components: Option<ComponentsJson>,
    /// The PCI VPD as the kernel serves it (sysfs `vpd`); `null` when it serves none.
    pub vpd: Option<VpdJson>,
    pub function_mode: Option<u32>,
    pub function_mode_flags: Option<Vec<&'static str>>,
    /// `true` when an RDMA device sits on the function; `false` when ocrdma is loaded and made
    /// none for it (it attaches to every be2net function that runs RoCE); else unknown.
    pub roce_enabled: Option<bool>,
    pub profile: Option<ProfilePair>,
    /// `true` when the driver reports other firmware on flash than running; else unknown (a
    /// pending profile is only visible to the firmware).
    pub reset_required: Option<bool>,
    pub ports: Vec<KernelPortJson>,
    pub driver: Option<DriverJson>,
    pub note: Option<String>,
}

impl KernelQueryJson {
    /// The document for `view`; `ocrdma_loaded` tells an absent RDMA device apart from RoCE
    /// off.
    pub fn of(device: String, view: &DriverView, ocrdma_loaded: bool) -> Self {
        let [vendor, device_id, subsystem_vendor, subsystem] = view.ids;
        let fw = view.firmware.as_ref();
        let roce_enabled = match (view.rdma.is_empty(), ocrdma_loaded) {
            (false, _) => Some(true),
            (true, true) => Some(false),
            (true, false) => None,
        };
        let netdevs: Vec<String> = view.netdevs.iter().map(|n| n.name.clone()).collect();
        let going = if netdevs.is_empty() { String::new() } else { format!(", taking {} down", netdevs.join(", ")) };
        let mut note = format!(
            "{} holds {}: this is what the kernel knows; the profiles, function mode, model and serial are the \
             adapter's firmware's to say: `ocetool --unbind query` reads them through the mailbox (the driver is \
             given the function back afterwards{going})",
            view.driver, view.address
        );
        if let Some(why) = &view.firmware_note {
            note.push_str(&format!("; no firmware version from the driver: {why}"));
        }
        Self {
            device,
            source: SOURCE_KERNEL,
            pci: PciIds::of(vendor, device_id, subsystem_vendor, subsystem),
            chip: ids::identify(vendor, device_id).map(|k| k.chip.name()),
            model: None,
            description: None,
            manufacturer: None,
            serial: None,
            asic_revision: None,
            firmware: KernelFirmwareJson {
                running: fw.map(|f| f.running.clone()),
                stored: fw.map(|f| f.stored.clone()),
                backup_running: None,
            },
            components: None,
            vpd: None,
            function_mode: None,
            function_mode_flags: None,
            roce_enabled,
            profile: None,
            reset_required: fw.filter(|f| f.running != f.stored).map(|_| true),
            ports: view
                .netdevs
                .iter()
                .map(|n| KernelPortJson {
                    index: None,
                    netdev: Some(n.name.clone()),
                    name: None,
                    this_function: true,
                    mac: n.mac.clone(),
                    link_up: Some(n.link_up),
                    speed_mbps: n.speed_mbps,
                    peer_mac: None,
                })
                .collect(),
            driver: Some(DriverJson { name: view.driver.clone(), netdevs, rdma_devices: view.rdma.clone() }),
            note: Some(note),
        }
    }
}
