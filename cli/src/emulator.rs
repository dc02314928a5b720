//! The emulated adapter from the CLI: opening its state directory (with errors that leave the
//! user's files alone), and `ocetool emulator init|show|power-cycle|fault|serve` (serving is in
//! [`crate::serve`]).

use std::path::Path;

use oce_emulator::{CreateOptions, Emulator, EmulatorInfo, FaultSpec, FunctionType};
use oce_pci::ids::pair_string;
use serde::Serialize;

use crate::args::{EmulatorAction, FaultAction, GlobalArgs};
use crate::device::{DeviceSpec, lock_device, select_device};
use crate::error::{CliError, CliResult, ErrorCode, emulator_error};
use crate::output::{Report, printable};

/// Opens the emulator in `dir`, creating a factory-fresh one when `dir` does not exist or is
/// empty. A non-empty directory that holds no emulator state is refused: ocetool never writes
/// its files into a directory it did not make.
pub fn open_emulator(dir: &Path) -> CliResult<Emulator> {
    check_state_dir(dir)?;
    Emulator::open_or_create(dir).map_err(|e| emulator_error(&e))
}

/// Refuses a `dir` that is not a directory, or a non-empty one that holds no emulator state
/// (ocetool never writes its files into a directory it did not make).
pub fn check_state_dir(dir: &Path) -> CliResult<()> {
    let has_state =
        dir.join(oce_emulator::state::STATE_FILE).exists() || dir.join(oce_emulator::state::FLASH_FILE).exists();
    if !has_state && dir.is_dir() && !is_empty_dir(dir)? {
        return Err(CliError::new(
            ErrorCode::BadEmulatorState,
            format!(
                "{} is not an emulator state directory (no {}); use a new or empty directory for emu:DIR",
                dir.display(),
                oce_emulator::state::STATE_FILE
            ),
        ));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::new(
            ErrorCode::BadEmulatorState,
            format!("{} is not a directory; emu:DIR needs a directory", dir.display()),
        ));
    }
    Ok(())
}

fn is_empty_dir(dir: &Path) -> CliResult<bool> {
    let mut entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::new(ErrorCode::BadEmulatorState, format!("cannot read {}: {e}", dir.display())))?;
    Ok(entries.next().is_none())
}

/// Prints what the emulated adapter saw and did during this command (its event log: every
/// command with its status, resets, boots, faults that fired, host protocol violations), one
/// `ocetool: emulator event: ...` line each on stderr. `-vvv` asks for it: a script rehearsed on
/// the emulator shows exactly what it sent, and the CLI tests check that a fault really fired.
pub fn print_events(emu: &Emulator) {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    for event in emu.events() {
        let _ = writeln!(stderr, "ocetool: emulator event: {event:?}");
    }
    if emu.dropped_events() > 0 {
        let _ = writeln!(stderr, "ocetool: emulator event: ({} older events dropped)", emu.dropped_events());
    }
}

/// What `ocetool emulator ...` prints.
#[derive(Debug, Serialize)]
pub struct EmulatorReport {
    action: &'static str,
    changed: bool,
    #[serde(flatten)]
    info: EmulatorInfo,
}

/// What `ocetool emulator fault ...` prints.
#[derive(Debug, Serialize)]
pub struct FaultReport {
    pub(crate) action: &'static str,
    pub(crate) changed: bool,
    /// The faults set afterwards, as specs.
    pub(crate) faults: Vec<String>,
}

/// The result of `ocetool emulator ...`.
#[derive(Debug)]
pub enum EmulatorOutput {
    /// init / show / power-cycle.
    Adapter(EmulatorReport),
    /// fault set / clear / list.
    Faults(FaultReport),
    /// serve.
    Served(crate::serve::ServeReport),
}

/// Runs `ocetool emulator <action>`.
pub fn run(global: &GlobalArgs, action: &EmulatorAction) -> CliResult<EmulatorOutput> {
    let spec = select_device(global)?;
    let DeviceSpec::Emulator(dir) = &spec else {
        return Err(CliError::new(
            ErrorCode::BadArgument,
            format!(
                "`ocetool emulator` works on an emulated adapter, not on {}; use --device emu or emu:DIR",
                spec.describe()
            ),
        ));
    };
    if let EmulatorAction::Fault { action } = action {
        // A server holds the adapter (and its lock): the change goes through the server.
        if let Some(report) = crate::serve::fault_via_server(&spec, action)? {
            return Ok(EmulatorOutput::Faults(report));
        }
    }
    let _lock = lock_device(global, &spec)?;
    let adapter = |action, changed, emu: &Emulator| {
        Ok(EmulatorOutput::Adapter(EmulatorReport { action, changed, info: emu.info() }))
    };
    match action {
        EmulatorAction::Init { vf } => {
            let function = if *vf { FunctionType::Vf } else { FunctionType::Pf };
            let options = CreateOptions { function, ..CreateOptions::default() };
            let emu = Emulator::create_with(dir, options).map_err(|e| emulator_error(&e))?;
            adapter("init", true, &emu)
        }
        EmulatorAction::Show => adapter("show", false, &Emulator::open(dir).map_err(|e| emulator_error(&e))?),
        EmulatorAction::PowerCycle => {
            let emu = Emulator::open(dir).map_err(|e| emulator_error(&e))?;
            emu.power_cycle().map_err(|e| emulator_error(&e))?;
            adapter("power-cycle", true, &emu)
        }
        EmulatorAction::Fault { action } => {
            let emu = Emulator::open(dir).map_err(|e| emulator_error(&e))?;
            let before = emu.faults().describe();
            let name = match action {
                FaultAction::Set { specs } => {
                    for f in parse_fault_specs(specs)? {
                        emu.set_fault(f).map_err(|e| emulator_error(&e))?;
                    }
                    "fault set"
                }
                FaultAction::Clear { all: true, .. } => {
                    emu.clear_faults().map_err(|e| emulator_error(&e))?;
                    "fault clear"
                }
                FaultAction::Clear { names, .. } => {
                    for n in names {
                        emu.clear_fault(n).map_err(|e| CliError::from_error(ErrorCode::BadArgument, "", &e))?;
                    }
                    "fault clear"
                }
                FaultAction::List => "fault list",
            };
            let faults: Vec<String> = emu.faults().describe().iter().map(ToString::to_string).collect();
            let changed = before.iter().map(ToString::to_string).collect::<Vec<_>>() != faults;
            Ok(EmulatorOutput::Faults(FaultReport { action: name, changed, faults }))
        }
        EmulatorAction::Serve { socket, wire, wire_peer, wire_pcap } => {
            let wire = match (wire, wire_peer) {
                (Some(local), Some(peer)) => {
                    Some(crate::serve::WireArgs { local: local.clone(), peer: peer.clone(), pcap: wire_pcap.clone() })
                }
                _ => None,
            };
            crate::serve::run(global, dir, socket, wire.as_ref()).map(EmulatorOutput::Served)
        }
    }
}

/// Parses fault specs, all before any is set, so a bad one sets none of them (exit 2).
pub fn parse_fault_specs(specs: &[String]) -> CliResult<Vec<FaultSpec>> {
    specs
        .iter()
        .map(|s| FaultSpec::parse(s).map_err(|e| CliError::from_error(ErrorCode::BadArgument, "", &e)))
        .collect()
}

impl Report for FaultReport {
    fn text(&self) -> String {
        if self.faults.is_empty() {
            return "No faults set.\n".into();
        }
        let mut out = String::from("Faults set:\n");
        for f in &self.faults {
            out.push_str(&format!("  {f}\n"));
        }
        out
    }
}

impl Serialize for EmulatorOutput {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Adapter(r) => r.serialize(s),
            Self::Faults(r) => r.serialize(s),
            Self::Served(r) => r.serialize(s),
        }
    }
}

impl Report for EmulatorOutput {
    fn text(&self) -> String {
        match self {
            Self::Adapter(r) => r.text(),
            Self::Faults(r) => r.text(),
            Self::Served(r) => r.text(),
        }
    }

    fn exit_code(&self) -> u8 {
        match self {
            Self::Served(r) => r.exit_code(),
            _ => 0,
        }
    }
}

impl Report for EmulatorReport {
    fn text(&self) -> String {
        let i = &self.info;
        let mut out = String::new();
        match self.action {
            "init" => out.push_str(&format!("Created a factory-fresh emulated adapter in {}\n", i.state_dir.display())),
            "power-cycle" => out.push_str("Power-cycled the emulated adapter (POST ran; the next-boot profile and the firmware on flash are active)\n"),
            _ => {}
        }
        let fw = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
        out.push_str(&format!("State directory  {}\n", i.state_dir.display()));
        out.push_str(&format!(
            "Adapter          {} {}, serial {}\n",
            printable(&i.model),
            pair_string(i.vendor_id, i.device_id),
            printable(&i.serial)
        ));
        out.push_str(&format!(
            "Firmware         running {}, stored {} ({:?})\n",
            fw(&i.firmware.running),
            fw(&i.firmware.stored),
            i.firmware.boot
        ));
        out.push_str(&format!("Function mode    {:#x}\n", i.function_mode));
        out.push_str(&format!("POST semaphore   {:#010x}\n", i.semaphore));
        if !i.faults.is_empty() {
            let faults: Vec<String> = i.faults.iter().map(ToString::to_string).collect();
            out.push_str(&format!("Faults           {}\n", faults.join(", ")));
        }
        out.push_str("Ports\n");
        for p in &i.ports {
            out.push_str(&format!(
                "  {}  name {}  mac {}  {} {} Mb/s\n",
                p.index,
                p.name,
                p.mac,
                if p.link_up { "up" } else { "down" },
                p.speed_mbps
            ));
        }
        out.push_str("Profiles\n");
        for p in &i.profiles {
            let mark = match (p.active, p.next) {
                (true, true) => "active, next",
                (true, false) => "active",
                (false, true) => "next",
                _ => "",
            };
            out.push_str(&format!("  {:>3}  {:<24} {}\n", p.id, printable(&p.name), mark));
        }
        out
    }
}
