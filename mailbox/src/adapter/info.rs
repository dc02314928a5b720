//! Everything `ocetool query` reports, read from the adapter in one pass: identity from config
//! space and GET_CNTL_ATTRIBUTES, firmware versions, function mode, profiles and ports.

use oce_pci::{Chip, ConfigSpace, PciFunction, ids};

use super::profiles::{ProfileState, read_profiles};
use crate::commands::{
    FirmwareConfig, GetCntlAttributes, GetFwVersion, GetMacList, GetPortName, LinkStatusQuery, QueryFirmwareConfig,
};
use crate::regs::{AsicId, Semaphore};
use crate::{BaseStatus, BootstrapMailbox, MailboxError};

/// Config-space offset of the vendor and device IDs (PCI header).
const CFG_ID: u16 = 0x00;
/// Config-space offset of the subsystem vendor and subsystem IDs (PCI type-0 header).
const CFG_SUBSYSTEM: u16 = 0x2C;

/// Who the adapter is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// PCI vendor ID (config 0x00).
    pub vendor_id: u16,
    /// PCI device ID (config 0x02).
    pub device_id: u16,
    /// Subsystem vendor ID (config 0x2C).
    pub subsystem_vendor_id: u16,
    /// Subsystem ID (config 0x2E).
    pub subsystem_id: u16,
    /// The chip, from the device ID as be2net decides it (spec/protocol.md §1.2).
    pub chip: Option<Chip>,
    /// The ASIC revision (QUERY_FIRMWARE_CONFIG `asic_revision`, low byte; the UFI check uses it).
    pub asic_revision: u8,
    /// ASIC_ID (config 0x9C) generation and revision.
    pub asic_id: AsicId,
    /// `controller_model_number`.
    pub model: String,
    /// `controller_description`.
    pub description: String,
    /// `controller_serial_number`, as a string.
    pub serial: String,
    /// `manufacturer_name`.
    pub manufacturer: String,
}

/// Firmware versions (devlink vocabulary: running / stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Firmware {
    /// What runs now (GET_FW_VERSION @16).
    pub running: String,
    /// What is on flash and runs after the next reset (GET_FW_VERSION @48).
    pub stored: String,
    /// POST booted the backup firmware (semaphore bit 30).
    pub backup_running: bool,
}

/// Versions of the firmware components besides the main firmware, as the running firmware
/// reports them in GET_CNTL_ATTRIBUTES (spec/protocol.md §5.2); `None` where it leaves the string
/// empty (not reported), never a made-up value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Components {
    /// The boot code (redboot, flash section 0xE2): `redboot_version_string` (attribute @320).
    pub boot_code: Option<String>,
    /// The boot BIOS, on a NIC the PXE/UNDI option ROM (flash section 0x20):
    /// `bios_version_string` (attribute @288).
    pub undi: Option<String>,
    /// The NC-SI firmware (flash section 0x10): `ncsi_version_string` (attribute @80).
    pub ncsi: Option<String>,
}

impl Components {
    fn of(attrs: &crate::commands::CntlAttributes) -> Self {
        let reported = |s: &str| {
            let s = s.trim();
            (!s.is_empty()).then(|| s.to_owned())
        };
        Self {
            boot_code: reported(&attrs.redboot_version),
            undi: reported(&attrs.bios_version),
            ncsi: reported(&attrs.ncsi_version),
        }
    }
}

/// One physical port. Each NIC function of an OCe14000 drives one port and answers link and MAC
/// queries for that port only, so the other ports' fields are unknown from this function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortStatus {
    /// Port index (0-based).
    pub index: u8,
    /// The port's name character (GET_PORT_NAME).
    pub name: Option<char>,
    /// True for the port this function drives.
    pub this_function: bool,
    /// The port's permanent MAC (GET_MAC_LIST), known for this function's port.
    pub mac: Option<[u8; 6]>,
    /// Link state (LINK_STATUS_QUERY), known for this function's port.
    pub link_up: Option<bool>,
    /// Link speed in Mb/s, known for this function's port when the link is up.
    pub speed_mbps: Option<u32>,
}

/// The adapter as `query` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterInfo {
    /// Identity.
    pub identity: Identity,
    /// Firmware versions.
    pub firmware: Firmware,
    /// Versions of the other firmware components.
    pub components: Components,
    /// QUERY_FIRMWARE_CONFIG (function mode, capabilities, port).
    pub config: FirmwareConfig,
    /// Profiles; `None` on a function the firmware does not let read them (a VF: the profile
    /// commands are PF-only, spec/protocol.md §5.9).
    pub profiles: Option<ProfileState>,
    /// Physical ports.
    pub ports: Vec<PortStatus>,
    /// The POST semaphore as read.
    pub semaphore: Semaphore,
}

impl AdapterInfo {
    /// RoCE is on when `function_mode` has RDMA (0x4): be2net's `be_roce_supported` test
    /// (spec/protocol.md §6.2) on a Skyhawk.
    pub fn roce_enabled(&self) -> bool {
        self.identity.chip == Some(Chip::Skyhawk) && self.config.function_mode.is_rdma()
    }

    /// True when a reset would change what runs: another profile staged, or other firmware on
    /// flash than the running one.
    pub fn reset_required(&self) -> bool {
        self.profiles.as_ref().is_some_and(ProfileState::change_pending)
            || self.firmware.running != self.firmware.stored
    }
}

/// Reads the whole report.
pub fn read_info<F: PciFunction>(mbox: &mut BootstrapMailbox<F>) -> Result<AdapterInfo, MailboxError> {
    let cfg = mbox.function().config();
    let ids_word = cfg.read32(CFG_ID)?;
    let subsystem = cfg.read32(CFG_SUBSYSTEM)?;
    let asic_id = AsicId(cfg.read32(AsicId::OFFSET)?);
    if ids_word == u32::MAX {
        return Err(MailboxError::ConfigGone);
    }
    let (vendor_id, device_id) = (ids_word as u16, (ids_word >> 16) as u16);
    let semaphore = mbox.read_semaphore()?;

    let versions = mbox.execute(&GetFwVersion)?;
    let attrs = mbox.execute(&GetCntlAttributes)?;
    let config = mbox.execute(&QueryFirmwareConfig)?;
    let names = mbox.execute(&GetPortName)?;
    let link = mbox.execute(&LinkStatusQuery)?;
    let macs = mbox.execute(&GetMacList::permanent())?;
    let profiles = match read_profiles(mbox) {
        Ok(p) => Some(p),
        Err(MailboxError::CommandFailed { status, .. }) if status.base == BaseStatus::UnauthorizedRequest => None,
        Err(e) => return Err(e),
    };

    let own_port = link.port_number();
    let port_count = attrs.hba_port_count.clamp(1, 4);
    let ports = (0..port_count)
        .map(|index| {
            let own = index == own_port;
            PortStatus {
                index,
                name: names.port(usize::from(index)),
                this_function: own,
                mac: if own { macs.permanent_mac() } else { None },
                link_up: own.then(|| link.is_link_up()),
                speed_mbps: if own && link.is_link_up() { link.speed_mbps() } else { None },
            }
        })
        .collect();

    Ok(AdapterInfo {
        identity: Identity {
            vendor_id,
            device_id,
            subsystem_vendor_id: subsystem as u16,
            subsystem_id: (subsystem >> 16) as u16,
            chip: ids::identify(vendor_id, device_id).map(|k| k.chip),
            asic_revision: config.asic_rev(),
            asic_id,
            model: attrs.model_number.clone(),
            description: attrs.description.clone(),
            serial: attrs.serial_string(),
            manufacturer: attrs.manufacturer.clone(),
        },
        firmware: Firmware {
            running: versions.running,
            stored: versions.on_flash,
            backup_running: semaphore.backup_firmware_running(),
        },
        components: Components::of(&attrs),
        config,
        profiles,
        ports,
        semaphore,
    })
}

#[cfg(test)]
mod component_tests {
    use super::Components;
    use crate::commands::CntlAttributes;

    #[test]
    fn a_component_the_firmware_leaves_empty_is_absent_not_invented() {
        let attrs = CntlAttributes {
            redboot_version: "11.1.172.0".into(),
            bios_version: " 11.1.172.5 ".into(),
            ncsi_version: String::new(),
            ..CntlAttributes::default()
        };
        let c = Components::of(&attrs);
        assert_eq!(c.boot_code.as_deref(), Some("11.1.172.0"));
        assert_eq!(c.undi.as_deref(), Some("11.1.172.5"));
        assert_eq!(c.ncsi, None);
        assert_eq!(Components::of(&CntlAttributes::default()), Components::default());
    }
}
