//! `ocetool emulator fault set|clear|list`: on the adapter's state directory, or through the
//! control socket of the server that holds the adapter.

use oce_emulator::{Emulator, FaultSpec};
use oce_emulator_serve::control::{self, ControlError, ControlRequest};
use serde::Serialize;

use super::state::control_path;
use crate::args::FaultAction;
use crate::device::DeviceSpec;
use crate::error::{CliError, CliResult, ErrorCode, control_error, emulator_error};
use crate::output::Report;

/// What `ocetool emulator fault ...` prints.
#[derive(Debug, Serialize)]
pub struct FaultReport {
    pub(crate) action: &'static str,
    pub(crate) changed: bool,
    /// The faults set afterwards, as specs.
    pub(crate) faults: Vec<String>,
}

/// Applies `action` to the adapter `emu` opened itself (no server holds it).
pub fn apply(emu: &Emulator, action: &FaultAction) -> CliResult<FaultReport> {
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
    Ok(FaultReport { action: name, changed, faults })
}

/// Sends a fault change to the server that holds the adapter `spec` names, if one is running
/// (its control socket answers); `None` when none is, so the caller opens the adapter itself.
pub fn fault_via_server(spec: &DeviceSpec, action: &FaultAction) -> CliResult<Option<FaultReport>> {
    let DeviceSpec::Emulator(dir) = spec else { return Ok(None) };
    let path = control_path(dir);
    if !path.exists() {
        return Ok(None);
    }
    let (request, name) = match action {
        FaultAction::Set { specs } => {
            parse_fault_specs(specs)?;
            (ControlRequest::FaultSet(specs.clone()), "fault set")
        }
        FaultAction::Clear { all: true, .. } => (ControlRequest::FaultClearAll, "fault clear"),
        FaultAction::Clear { names, .. } => (ControlRequest::FaultClear(names.clone()), "fault clear"),
        FaultAction::List => (ControlRequest::FaultList, "fault list"),
    };
    match control::request(&path, &request) {
        Ok(reply) => Ok(Some(FaultReport { action: name, changed: reply.changed, faults: reply.faults })),
        // Nobody listens: a socket left by a server that was killed.
        Err(ControlError::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => Ok(None),
        // The server applies a request only if it can answer in time (the control socket's
        // deadline contract): busy or silent, it changed nothing, and a retry is safe.
        Err(e @ (ControlError::Busy(_) | ControlError::TimedOut(_))) => Err(CliError::from_error(
            ErrorCode::DeviceBusy,
            "device busy: the running server did not take the change",
            &e,
        )
        .hint("try again")),
        Err(e) => Err(control_error(&e)),
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
