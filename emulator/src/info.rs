//! [`EmulatorInfo`]: a read-only snapshot of the emulated adapter for `ocetool emulator show`.

use std::path::PathBuf;

use serde::Serialize;

use crate::assumptions::{LINK_SPEED_10MBPS, PORT_NAMES, PROFILES};
use crate::device::config::VENDOR_ID;
use crate::events::BootOutcome;
use crate::faults::FaultSpec;
use crate::firmware::Firmware;
use crate::firmware::handlers::port;
use crate::firmware::profiles::FunctionConfig;
use crate::firmware::state::MacAddress;
use crate::function::FunctionType;

/// One physical port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortInfo {
    /// Port index (0-based).
    pub index: u8,
    /// Port name as GET_PORT_NAME reports it.
    pub name: String,
    /// Permanent MAC.
    pub mac: MacAddress,
    /// Physical link up: no `link-down` fault, and the peer there when the port is on a cable.
    pub link_up: bool,
    /// Link speed in Mb/s.
    pub speed_mbps: u32,
}

/// The port the function drives as LINK_STATUS_QUERY and GET_BEACON_STATE report it, and what
/// it sees of the other end of its cable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LinkState {
    /// The physical port the function drives (LINK_STATUS_QUERY's `physical_port`).
    pub port: u8,
    /// The logical link: the physical one (a peer there, no `link-down` fault) and the driver's
    /// logical link enabled.
    pub up: bool,
    /// Speed in Mb/s while up.
    pub speed_mbps: Option<u32>,
    /// LINK_STATUS_QUERY's `mac_fault` (0: none).
    pub mac_fault: u8,
    /// Something is at the other end of the cable (true on no cable at all).
    pub peer_present: bool,
    /// The source MAC of the last frame received while up ([`crate::firmware::Peer::mac`]).
    pub peer_mac: Option<MacAddress>,
    /// The port's locate LED blinks (GET_BEACON_STATE).
    pub locate: bool,
}

impl LinkState {
    pub(crate) fn of(firmware: &Firmware) -> Self {
        let status = port::link_status(firmware);
        let up = status.is_link_up();
        let peer = firmware.peer();
        Self {
            port: status.port_number(),
            up,
            speed_mbps: if up { status.speed_mbps() } else { None },
            mac_fault: status.mac_fault,
            peer_present: peer.present,
            peer_mac: peer.mac,
            locate: port::beacon_on(firmware, status.port_number()),
        }
    }
}

/// Firmware versions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FirmwareInfo {
    /// What runs (what was on flash at the last POST); `None` when POST failed.
    pub running: Option<String>,
    /// What is on flash now (`ver_data` of the 0xA0 entry); `None` if no directory is found.
    pub stored: Option<String>,
    /// Which section booted.
    pub boot: BootOutcome,
}

/// One profile of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileInfo {
    /// Profile ID (the emulator's own numbering).
    pub id: u8,
    /// Description.
    pub name: String,
    /// True for a NIC+RoCE profile.
    pub roce: bool,
    /// True for the running profile.
    pub active: bool,
    /// True for the profile the next POST activates.
    pub next: bool,
}

/// A snapshot of the emulated adapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmulatorInfo {
    /// The state directory.
    pub state_dir: PathBuf,
    /// PCI vendor ID (JSON: `"0x10df"`, as everywhere in ocetool).
    #[serde(serialize_with = "oce_pci::ids::serialize_id")]
    pub vendor_id: u16,
    /// PCI device ID (JSON: `"0x0720"`).
    #[serde(serialize_with = "oce_pci::ids::serialize_id")]
    pub device_id: u16,
    /// PF or VF.
    pub function: FunctionType,
    /// Model name.
    pub model: String,
    /// Serial number.
    pub serial: String,
    /// Physical ports.
    pub ports: Vec<PortInfo>,
    /// Firmware versions.
    pub firmware: FirmwareInfo,
    /// The profile list, with active and next marked.
    pub profiles: Vec<ProfileInfo>,
    /// QUERY_FIRMWARE_CONFIG `function_mode` of the running profile.
    pub function_mode: u32,
    /// The POST semaphore (config 0x94) as it reads now.
    pub semaphore: u32,
    /// Faults set, as specs (`ocetool emulator fault list`).
    pub faults: Vec<FaultSpec>,
}

impl EmulatorInfo {
    pub(crate) fn of(firmware: &Firmware, semaphore: u32) -> Self {
        // A copy: the methods below lock the card themselves.
        let state = firmware.card().state.clone();
        let ports = state
            .identity
            .macs
            .iter()
            .enumerate()
            .map(|(i, mac)| PortInfo {
                index: i as u8,
                name: char::from(PORT_NAMES[i % PORT_NAMES.len()]).to_string(),
                mac: *mac,
                link_up: firmware.physical_link_up(),
                speed_mbps: u32::from(LINK_SPEED_10MBPS) * 10,
            })
            .collect();
        let profiles = PROFILES
            .iter()
            .map(|p| ProfileInfo {
                id: p.id,
                name: p.name.to_owned(),
                roce: state.nvram.saved.get(&p.id).is_some_and(FunctionConfig::is_roce),
                active: p.id == state.runtime.active_profile,
                next: p.id == state.nvram.next_profile,
            })
            .collect();
        Self {
            state_dir: firmware.state_dir().to_path_buf(),
            vendor_id: VENDOR_ID,
            device_id: firmware.function().device_id(),
            function: firmware.function(),
            model: state.identity.model.clone(),
            serial: state.identity.serial.clone(),
            ports,
            firmware: FirmwareInfo {
                running: state.runtime.running_version.clone(),
                stored: firmware.stored_version(),
                boot: state.runtime.boot,
            },
            profiles,
            function_mode: state.runtime.active.function_mode().0,
            semaphore,
            faults: state.faults.describe(),
        }
    }
}
