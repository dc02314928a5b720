//! `ocetool restore-drivers [--device D]`: undo every driver hand-off a killed ocetool left
//! recorded in the runtime folder (`/run/ocetool/handoff-<slot>.json`), each under its adapter's
//! lock, so the functions go back to their drivers with `driver_override` cleared. Every command
//! that opens an adapter does this for that adapter first; this command is for the boot hook
//! after its `ocetool apply` was killed (be2net must bind the functions when it loads next) and
//! for an administrator.

use oce_pci::PciAddress;
use oce_pci::handoff::Record;
use serde::Serialize;

use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, lock_device, select_device};
use crate::error::{CliError, CliResult, ErrorCode, pci_error};
use crate::handoff::{RepairJson, repair_quietly};
use crate::output::{Report, printable};

/// The `restore-drivers` document.
#[derive(Debug, Serialize)]
pub struct RestoreJson {
    /// Some function was given back.
    changed: bool,
    /// Each hand-off undone.
    restored: Vec<RepairJson>,
    /// Each record that could not be undone (kept for the next run), one message each.
    failed: Vec<String>,
}

/// The adapters with a hand-off record: the function each record names, one per adapter.
fn recorded(global: &GlobalArgs) -> CliResult<Vec<PciAddress>> {
    let roots = global.roots();
    let entries = match std::fs::read_dir(&roots.run) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(CliError::new(ErrorCode::IoError, format!("cannot read {}: {e}", roots.run.display())));
        }
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(slot) = name.strip_prefix("handoff-").and_then(|n| n.strip_suffix(".json")) else { continue };
        let record = Record::load(&roots, &entry.path(), slot)
            .map_err(|e| pci_error("cannot read a driver hand-off record", &e))?;
        found.extend(record.map(|r| r.address));
    }
    found.sort();
    Ok(found)
}

/// Runs `restore-drivers`: on `--device`'s adapter, else on every adapter with a record.
pub fn run(global: &GlobalArgs) -> CliResult<RestoreJson> {
    let targets = match &global.device {
        Some(_) => match select_device(global)? {
            DeviceSpec::Pci(addr) => vec![addr],
            DeviceSpec::Emulator(_) => Vec::new(),
        },
        None => recorded(global)?,
    };
    let roots = global.roots();
    let mut out = RestoreJson { changed: false, restored: Vec::new(), failed: Vec::new() };
    for addr in targets {
        let spec = DeviceSpec::Pci(addr);
        let done = lock_device(global, &spec).and_then(|_lock| repair_quietly(&roots, addr));
        match done {
            Ok(Some(r)) => out.restored.push(r),
            Ok(None) => {}
            Err(e) => out.failed.push(e.message),
        }
    }
    out.changed = !out.restored.is_empty();
    Ok(out)
}

impl Report for RestoreJson {
    fn text(&self) -> String {
        let mut text = String::new();
        for r in &self.restored {
            text.push_str(&format!("{}\n", printable(&r.describe())));
        }
        for f in &self.failed {
            text.push_str(&format!("failed: {}\n", printable(f)));
        }
        if self.restored.is_empty() && self.failed.is_empty() {
            text.push_str("No driver hand-off left to undo.\n");
        }
        text
    }

    fn exit_code(&self) -> u8 {
        u8::from(!self.failed.is_empty())
    }
}
