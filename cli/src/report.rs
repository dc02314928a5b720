//! The JSON contract of design.md §7, in one place: the objects scripts key on (`firmware`,
//! `profile`, `ports[]`, ...) and how they are built from the library's data. Field names here
//! are a stable interface: add freely, never rename.

use oce_mailbox::adapter::{AdapterInfo, ProfileState};
use oce_mailbox::commands::format_mac;
use oce_pci::ids::id_string;
use serde::Serialize;

/// PCI identity, IDs as `"0x10df"` strings.
#[derive(Debug, Serialize)]
pub struct PciIds {
    pub vendor_id: String,
    pub device_id: String,
    pub subsystem_vendor_id: String,
    pub subsystem_id: String,
}

/// `firmware`: running and stored versions.
#[derive(Debug, Clone, Serialize)]
pub struct FirmwareJson {
    pub running: String,
    pub stored: String,
    /// POST booted the backup firmware section.
    pub backup_running: bool,
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
    pub name: Option<String>,
    /// True for the port the queried PCI function drives; the others' link and MAC are only
    /// visible from their own functions.
    pub this_function: bool,
    pub mac: Option<String>,
    pub link_up: Option<bool>,
    pub speed_mbps: Option<u32>,
}

/// The `query` document.
#[derive(Debug, Serialize)]
pub struct QueryJson {
    pub device: String,
    pub pci: PciIds,
    pub chip: Option<&'static str>,
    pub model: String,
    pub description: String,
    pub manufacturer: String,
    pub serial: String,
    pub asic_revision: u8,
    pub firmware: FirmwareJson,
    pub function_mode: u32,
    pub function_mode_flags: Vec<&'static str>,
    pub roce_enabled: bool,
    /// `None` on a virtual function, which may not read profiles.
    pub profile: Option<ProfilePair>,
    pub reset_required: bool,
    pub ports: Vec<PortJson>,
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
            pci: PciIds {
                vendor_id: id_string(id.vendor_id),
                device_id: id_string(id.device_id),
                subsystem_vendor_id: id_string(id.subsystem_vendor_id),
                subsystem_id: id_string(id.subsystem_id),
            },
            chip: id.chip.map(|c| c.name()),
            model: id.model.clone(),
            description: id.description.clone(),
            manufacturer: id.manufacturer.clone(),
            serial: id.serial.clone(),
            asic_revision: id.asic_revision,
            firmware: FirmwareJson::of(info),
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
                    name: p.name.map(String::from),
                    this_function: p.this_function,
                    mac: p.mac.as_ref().map(format_mac),
                    link_up: p.link_up,
                    speed_mbps: p.speed_mbps,
                })
                .collect(),
        }
    }
}
