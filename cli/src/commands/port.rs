//! `ocetool port` (link, PHY, speeds, the transceiver module, the locate LED of the port this
//! function drives) and `ocetool locate --on|--off` (the port's beacon).

use oce_mailbox::adapter::{LocateOutcome, PortReport, read_port, set_locate};
use oce_mailbox::commands::ModuleIdentity;
use oce_pci::PciFunction;
use serde::Serialize;

use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, select_device};
use crate::error::{CliResult, mailbox_error};
use crate::handoff::Handed;
use crate::output::{Report, printable};
use crate::session::{Job, Session, run_job, stop_point};

/// Runs `port`: from the server when `ocetool emulator serve` holds the emulated adapter, else
/// through the mailbox.
pub fn run(global: &GlobalArgs) -> CliResult<Handed<PortJson>> {
    if let spec @ DeviceSpec::Emulator(_) = select_device(global)?
        && let Some(doc) = super::served::port_served(&spec)?
    {
        return Ok(Handed::without(doc));
    }
    run_job(global, Port)
}

/// The `port` job.
#[derive(Debug)]
pub struct Port;

/// `ocetool port --json`.
#[derive(Debug, Serialize)]
pub struct PortJson {
    pub device: String,
    /// The physical port this function drives.
    pub port: u8,
    /// Physical ports on the adapter.
    pub port_count: u8,
    pub link: LinkJson,
    /// The PHY, or `{"error": ...}` when the firmware would not say.
    pub phy: Readable<PhyJson>,
    /// The module in the cage: `null` for an empty cage, or `{"error": ...}`.
    pub module: Readable<Option<ModuleJson>>,
    /// The locate LED blinks.
    pub locate: bool,
}

/// `link`.
#[derive(Debug, Serialize)]
pub struct LinkJson {
    pub up: bool,
    pub speed_mbps: Option<u32>,
    /// `mac_fault` as the firmware reports it (0: none).
    pub mac_fault: u8,
    /// The MAC of the station at the other end of the cable: only an emulated adapter on a
    /// cable reports it, while served (`commands::served`); no firmware command does.
    pub peer_mac: Option<String>,
}

/// `phy`.
#[derive(Debug, Serialize)]
pub struct PhyJson {
    /// The interface type by name (`unknown (0x..)` when no source names it).
    pub interface: String,
    pub phy_type: u16,
    /// Speeds the PHY supports (auto-negotiated and fixed), as `1G`, `10G`, ...
    pub speeds_supported: Vec<&'static str>,
    /// Speeds it advertises (the auto-negotiated ones).
    pub speeds_advertised: Vec<&'static str>,
}

/// `module`: the SFF identity of the transceiver.
#[derive(Debug, Serialize)]
pub struct ModuleJson {
    /// `SFP/SFP+`, `QSFP+`, ...
    pub identifier: String,
    pub vendor: String,
    /// Vendor OUI as `"00:00:c9"`.
    pub vendor_oui: String,
    pub part_number: String,
    pub revision: String,
    pub serial_number: String,
}

/// A part of the report that may not have been readable.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Readable<T> {
    Value(T),
    Unreadable { error: String },
}

impl ModuleJson {
    fn of(m: &ModuleIdentity) -> Self {
        let o = m.vendor_oui;
        Self {
            identifier: m.identifier.to_string(),
            vendor: m.vendor.clone(),
            vendor_oui: format!("{:02x}:{:02x}:{:02x}", o[0], o[1], o[2]),
            part_number: m.part_number.clone(),
            revision: m.revision.clone(),
            serial_number: m.serial_number.clone(),
        }
    }
}

impl PortJson {
    fn of(device: String, r: &PortReport) -> Self {
        let phy = match &r.phy {
            Ok(p) => Readable::Value(PhyJson {
                interface: p.interface_type.to_string(),
                phy_type: p.phy_type,
                speeds_supported: r.speeds_supported().map(|s| s.names()).unwrap_or_default(),
                speeds_advertised: r.speeds_advertised().map(|s| s.names()).unwrap_or_default(),
            }),
            Err(error) => Readable::Unreadable { error: error.clone() },
        };
        let module = match &r.module {
            Ok(m) => Readable::Value(m.as_ref().map(ModuleJson::of)),
            Err(error) => Readable::Unreadable { error: error.clone() },
        };
        Self {
            device,
            port: r.port,
            port_count: r.port_count,
            link: LinkJson {
                up: r.link.is_link_up(),
                speed_mbps: r.link.speed_mbps(),
                mac_fault: r.link.mac_fault,
                peer_mac: None,
            },
            phy,
            module,
            locate: r.beacon_on,
        }
    }
}

impl Job for Port {
    type Output = PortJson;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<PortJson> {
        let report = read_port(&mut session.mbox).map_err(|e| mailbox_error("cannot read the port", &e))?;
        Ok(PortJson::of(session.device.describe(), &report))
    }
}

impl Report for PortJson {
    fn text(&self) -> String {
        let mut out = String::new();
        let mut line = |k: &str, v: String| out.push_str(&format!("{k:<15}{v}\n"));
        line("Device", self.device.clone());
        line("Port", format!("{} of {}", self.port, self.port_count));
        let speed = self.link.speed_mbps.map(|s| format!(", {s} Mb/s")).unwrap_or_default();
        line("Link", if self.link.up { format!("up{speed}") } else { "down".into() });
        if let Some(peer) = &self.link.peer_mac {
            line("Peer", format!("{peer} (the source of the last frame received)"));
        }
        match &self.phy {
            Readable::Value(p) => {
                line("PHY", format!("{} (type {:#x})", p.interface, p.phy_type));
                line("Supported", p.speeds_supported.join(" "));
                line("Advertised", p.speeds_advertised.join(" "));
            }
            Readable::Unreadable { error } => line("PHY", format!("unreadable: {error}")),
        }
        match &self.module {
            Readable::Value(Some(m)) => {
                line(
                    "Module",
                    format!(
                        "{} {} {} rev {}",
                        m.identifier,
                        printable(&m.vendor),
                        printable(&m.part_number),
                        printable(&m.revision)
                    ),
                );
                line("Module serial", printable(&m.serial_number).into_owned());
            }
            Readable::Value(None) => line("Module", "none (empty cage)".into()),
            Readable::Unreadable { error } => line("Module", format!("unreadable: {error}")),
        }
        line("Locate LED", if self.locate { "on (blinking)".into() } else { "off".into() });
        out
    }
}

/// The `locate` job.
#[derive(Debug)]
pub struct Locate {
    /// On (true) or off.
    pub on: bool,
}

/// `ocetool locate --json`.
#[derive(Debug, Serialize)]
pub struct LocateJson {
    pub device: String,
    pub port: u8,
    /// The LED state read back after the command.
    pub locate: bool,
    /// False when the LED already was in the state asked for.
    pub changed: bool,
}

impl Job for Locate {
    type Output = LocateJson;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<LocateJson> {
        stop_point("switch the locate LED")?;
        let LocateOutcome { port, beacon_on, changed } =
            set_locate(&mut session.mbox, self.on).map_err(|e| mailbox_error("cannot switch the locate LED", &e))?;
        Ok(LocateJson { device: session.device.describe(), port, locate: beacon_on, changed })
    }
}

impl Report for LocateJson {
    fn text(&self) -> String {
        let state = if self.locate { "on (blinking)" } else { "off" };
        let already = if self.changed { "" } else { " (already)" };
        format!("Locate LED of port {} on {}: {state}{already}\n", self.port, self.device)
    }
}
