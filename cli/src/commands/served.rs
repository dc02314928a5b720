//! `ocetool query` and `ocetool port` on an emulated adapter that `ocetool emulator serve` holds:
//! the server owns the adapter's lock, and the VM's driver owns the function's mailbox, so
//! ocetool asks the server instead, on its control socket (`{"op":"status"}`,
//! `oce_emulator_serve::control`). The `query` answer has the keys of every `query` document,
//! `"source": "server"`, `null` where only the firmware's mailbox answers (description,
//! manufacturer, ASIC revision, component versions, VPD); the `port` answer has the keys of
//! every `port` document, the PHY and the module `{"error": ...}` for the same reason. Both give
//! the link as the firmware has it now: up or down, speed, and the MAC of the station at the
//! other end of the cable (`peer_mac`, which only the emulator knows). `query` reports each port
//! the server serves a function of (several `--socket`) with its MAC and link.

use oce_emulator_serve::control::{self, ControlError, ServerStatus};
use oce_mailbox::commands::FunctionMode;
use oce_pci::ids;
use serde::Deserialize;

use super::emulator::state::control_path;
use super::port::{LinkJson, PortJson, Readable};
use crate::device::DeviceSpec;
use crate::error::{CliError, CliResult, ErrorCode, control_error};
use crate::output::printable;
use crate::report::{KernelFirmwareJson, KernelPortJson, KernelQueryJson, PciIds, ProfilePair, ProfileRef, link_text};

/// Where a `query` answer comes from while `ocetool emulator serve` holds the emulated adapter.
pub const SOURCE_SERVER: &str = "server";

/// The server's `status` body, as far as `query` reads it.
#[derive(Debug, Deserialize)]
struct Status {
    adapter: Adapter,
    pci: Pci,
    link: Link,
    /// Every served function's link, each naming its port (function 0's first).
    links: Vec<Link>,
}

#[derive(Debug, Deserialize)]
struct Adapter {
    model: String,
    serial: String,
    firmware: Firmware,
    profiles: Vec<Profile>,
    function_mode: u32,
    ports: Vec<Port>,
}

#[derive(Debug, Deserialize)]
struct Firmware {
    running: Option<String>,
    stored: Option<String>,
    boot: String,
}

#[derive(Debug, Deserialize)]
struct Profile {
    id: u8,
    name: String,
    roce: bool,
    active: bool,
    next: bool,
}

#[derive(Debug, Deserialize)]
struct Port {
    index: u8,
    name: String,
    mac: String,
}

#[derive(Debug, Deserialize)]
struct Pci {
    vendor_id: String,
    device_id: String,
    subsystem_vendor_id: String,
    subsystem_id: String,
}

#[derive(Debug, Deserialize)]
struct Link {
    port: u8,
    up: bool,
    speed_mbps: Option<u32>,
    mac_fault: u8,
    peer_mac: Option<String>,
    locate: bool,
}

/// The served adapter's `query` document, or `None` when no server holds the adapter `spec`
/// names (no control socket, or one a killed server left), so the caller opens it itself.
pub fn query_served(spec: &DeviceSpec) -> CliResult<Option<KernelQueryJson>> {
    let Some((control, status)) = status(spec)? else { return Ok(None) };
    document(spec.describe(), &control, status).map(Some)
}

/// The served adapter's `port` document, or `None` when no server holds it.
pub fn port_served(spec: &DeviceSpec) -> CliResult<Option<PortJson>> {
    let Some((_, status)) = status(spec)? else { return Ok(None) };
    let device = spec.describe();
    let s = parse(&device, status)?;
    let why = "not reported while `ocetool emulator serve` holds the adapter: the mailbox that reads it is the \
               VM's driver's; ask from inside the VM, or once the server has stopped";
    Ok(Some(PortJson {
        device,
        port: s.link.port,
        port_count: u8::try_from(s.adapter.ports.len()).unwrap_or(u8::MAX),
        link: LinkJson {
            up: s.link.up,
            speed_mbps: s.link.speed_mbps,
            mac_fault: s.link.mac_fault,
            peer_mac: s.link.peer_mac,
        },
        phy: Readable::Unreadable { error: why.to_owned() },
        module: Readable::Unreadable { error: why.to_owned() },
        locate: s.link.locate,
    }))
}

/// The server's status for the adapter `spec` names, with its control socket's path; `None`
/// when no server holds it.
fn status(spec: &DeviceSpec) -> CliResult<Option<(std::path::PathBuf, ServerStatus)>> {
    let DeviceSpec::Emulator(dir) = spec else { return Ok(None) };
    let path = control_path(dir);
    if !path.exists() {
        return Ok(None);
    }
    let status = match control::status(&path) {
        Ok(status) => status,
        Err(ControlError::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => return Ok(None),
        Err(e @ (ControlError::Busy(_) | ControlError::TimedOut(_))) => {
            return Err(CliError::from_error(
                ErrorCode::DeviceBusy,
                "device busy: the running server did not answer",
                &e,
            )
            .hint("try again"));
        }
        Err(e) => return Err(control_error(&e)),
    };
    Ok(Some((path, status)))
}

fn bad_status(device: &str, e: &str) -> CliError {
    CliError::new(ErrorCode::ServeFailed, format!("the server's status for {device} does not parse: {e}"))
}

fn parse(device: &str, status: ServerStatus) -> CliResult<Status> {
    serde_json::from_value(status.0).map_err(|e| bad_status(device, &e.to_string()))
}

fn document(device: String, control: &std::path::Path, status: ServerStatus) -> CliResult<KernelQueryJson> {
    let bad = |e: String| bad_status(&device, &e);
    let s = parse(&device, status)?;
    let id = |v: &str| u16::from_str_radix(v.trim_start_matches("0x"), 16).map_err(|e| bad(format!("{v:?}: {e}")));
    let (vendor, device_id) = (id(&s.pci.vendor_id)?, id(&s.pci.device_id)?);
    let a = &s.adapter;
    let mode = FunctionMode(a.function_mode);
    let profile = |pick: fn(&Profile) -> bool| {
        a.profiles.iter().find(|p| pick(p)).map(|p| ProfileRef {
            id: u16::from(p.id),
            name: Some(p.name.clone()),
            roce: Some(p.roce),
        })
    };
    let profile = profile(|p| p.active).zip(profile(|p| p.next)).map(|(active, next)| ProfilePair { active, next });
    let pending = profile.as_ref().is_some_and(|p| p.active.id != p.next.id);
    // A port the server serves a function of (`emulator serve` with several --socket) is
    // reported whole; another is only named, as through the mailbox of a real port 0.
    let ports = a
        .ports
        .iter()
        .map(|p| {
            let served = s.links.iter().find(|l| l.port == p.index);
            KernelPortJson {
                index: Some(p.index),
                netdev: None,
                name: Some(p.name.clone()),
                this_function: p.index == s.link.port,
                mac: served.map(|_| p.mac.clone()),
                link_up: served.map(|l| l.up),
                speed_mbps: served.and_then(|l| l.speed_mbps),
                peer_mac: served.and_then(|l| l.peer_mac.clone()),
            }
        })
        .collect();
    Ok(KernelQueryJson {
        source: SOURCE_SERVER,
        pci: PciIds::of(vendor, device_id, id(&s.pci.subsystem_vendor_id)?, id(&s.pci.subsystem_id)?),
        chip: ids::identify(vendor, device_id).map(|k| k.chip.name()),
        model: Some(a.model.clone()),
        description: None,
        manufacturer: None,
        serial: Some(a.serial.clone()),
        asic_revision: None,
        firmware: KernelFirmwareJson {
            running: a.firmware.running.clone(),
            stored: a.firmware.stored.clone(),
            backup_running: Some(a.firmware.boot == "backup"),
        },
        components: None,
        vpd: None,
        function_mode: Some(a.function_mode),
        function_mode_flags: Some(mode.names()),
        roce_enabled: Some(mode.is_rdma()),
        profile,
        reset_required: Some(pending || a.firmware.running != a.firmware.stored),
        ports,
        driver: None,
        note: Some(format!(
            "`ocetool emulator serve` holds {device}: this is what its server reports (control socket {}); the \
             description, manufacturer, ASIC revision, component versions and VPD are read through the mailbox, \
             which the VM's driver owns: query from inside the VM, or once the server has stopped",
            control.display()
        )),
        device,
    })
}

/// The text of a served adapter's `query`.
pub fn served_text(doc: &KernelQueryJson) -> String {
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<15}{v}\n"));
    line("Adapter", printable(doc.model.as_deref().unwrap_or("?")).into_owned());
    line("Device", format!("{} (held by `ocetool emulator serve`: what the server reports)", doc.device));
    line("PCI ID", doc.pci.text());
    line("Serial", printable(doc.serial.as_deref().unwrap_or("?")).into_owned());
    let fw = &doc.firmware;
    line(
        "Firmware",
        match (&fw.running, &fw.stored) {
            (Some(r), Some(s)) if r != s => format!("{}  (stored {} runs after a reset)", printable(r), printable(s)),
            (Some(r), _) => printable(r).into_owned(),
            (None, _) => "none (POST failed)".to_owned(),
        },
    );
    if let (Some(mode), Some(flags)) = (doc.function_mode, &doc.function_mode_flags) {
        line("Function mode", format!("{mode:#x} ({})", flags.join(", ")));
    }
    line("RoCE", if doc.roce_enabled == Some(true) { "enabled".into() } else { "disabled".into() });
    if let Some(p) = &doc.profile {
        line(
            "Profile",
            if p.active.id == p.next.id {
                p.active.label()
            } else {
                format!("{}  ->  {} after the next reset", p.active.label(), p.next.label())
            },
        );
    }
    out.push_str("Ports\n");
    for port in &doc.ports {
        let name = printable(port.name.as_deref().unwrap_or("?")).into_owned();
        let index = port.index.map_or_else(|| "?".to_owned(), |i| i.to_string());
        if port.this_function {
            let peer = port.peer_mac.as_ref().map_or(String::new(), |m| format!("  peer {m}"));
            out.push_str(&format!(
                "  {index}  name {name}  {}  {}{peer}\n",
                port.mac.as_deref().unwrap_or("-"),
                link_text(port.link_up, port.speed_mbps)
            ));
        } else {
            out.push_str(&format!("  {index}  name {name}  (driven by another PCI function of the adapter)\n"));
        }
    }
    if let Some(note) = &doc.note {
        out.push_str(&format!("Note: {}\n", printable(note)));
    }
    out
}
