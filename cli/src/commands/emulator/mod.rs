//! `ocetool emulator init|show|power-cycle|fault|serve`: the emulated adapter from the CLI. Its
//! state directory is opened in [`state`], faults change in [`fault`] (directly, or through a
//! running server), and [`serve`] serves it to a VM, its port on a cable.

pub mod fault;
pub mod serve;
pub mod state;

use oce_emulator::{CreateOptions, Emulator, EmulatorInfo, FunctionType};
use oce_pci::ids::pair_string;
use serde::Serialize;

use self::fault::FaultReport;
use self::serve::ServeReport;
use crate::args::{EmulatorAction, GlobalArgs};
use crate::device::{DeviceSpec, lock_device, select_device};
use crate::error::{CliError, CliResult, ErrorCode, emulator_error};
use crate::output::{Report, printable};

/// What `ocetool emulator ...` prints.
#[derive(Debug, Serialize)]
pub struct EmulatorReport {
    action: &'static str,
    changed: bool,
    #[serde(flatten)]
    info: EmulatorInfo,
}

/// The result of `ocetool emulator ...`.
#[derive(Debug)]
pub enum EmulatorOutput {
    /// init / show / power-cycle.
    Adapter(EmulatorReport),
    /// fault set / clear / list.
    Faults(FaultReport),
    /// serve.
    Served(ServeReport),
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
        if let Some(report) = fault::fault_via_server(&spec, action)? {
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
            fault::apply(&emu, action).map(EmulatorOutput::Faults)
        }
        EmulatorAction::Serve { socket, wire, wire_peer, wire_pcap } => {
            let wires = serve::pair_wires(socket, wire, wire_peer, wire_pcap)?;
            serve::run(global, dir, socket, &wires).map(EmulatorOutput::Served)
        }
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
