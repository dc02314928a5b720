//! `ocetool query --all`: one inventory of every adapter ocetool can see — each OneConnect
//! adapter in sysfs (by its first physical function) and the emulators (the default one once
//! created, and the one `--device emu:DIR` names) — each entry holding the `query` document or
//! the error that adapter gave, so one adapter that fails does not hide the others.

use std::fmt::Write as _;
use std::path::PathBuf;

use oce_pci::discover::{Scope, discover};
use oce_pci::{FunctionKind, signals};
use serde::Serialize;

use super::query_kernel::{self, QueryDoc};
use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, default_emulator_dir};
use crate::error::{CliError, CliResult, ErrorCode, ErrorKind, pci_error};
use crate::handoff::Handed;
use crate::output::{Report, printable};

/// The `query --all` document: `adapters[]` (each `device`, `slot`, and `query` or `error`),
/// `failed` (how many gave an error), `sysfs_error` (why sysfs could not be searched, if so).
#[derive(Debug, Serialize)]
pub struct InventoryJson {
    pub adapters: Vec<EntryJson>,
    pub failed: usize,
    pub sysfs_error: Option<ErrorJson>,
}

/// One adapter of the inventory.
#[derive(Debug, Serialize)]
pub struct EntryJson {
    /// What `--device` takes to reach it: a PCI address, or `emu:DIR`.
    pub device: String,
    /// `DDDD:BB:DD` of a real adapter; `null` for an emulator.
    pub slot: Option<String>,
    /// The `query` document (without its `schema`), or `null` when the adapter gave an error.
    pub query: Option<Handed<QueryDoc>>,
    /// The error the query ended with (`error.code` as in the README's "Error codes"), or `null`.
    pub error: Option<ErrorJson>,
}

/// An error, as in an error document.
#[derive(Debug, Serialize)]
pub struct ErrorJson {
    pub kind: &'static str,
    pub code: &'static str,
    pub message: String,
}

impl ErrorJson {
    fn of(err: &CliError) -> Self {
        Self { kind: err.kind().name(), code: err.code.name(), message: err.message.clone() }
    }
}

/// Queries every adapter in turn, each as `ocetool --device DEVICE query` would (its lock, its
/// driver hand-off with `--unbind`, the kernel's answer while be2net holds it). A stop request
/// ends the whole inventory, as it ends any command.
pub fn run(global: &GlobalArgs) -> CliResult<InventoryJson> {
    let (targets, sysfs_error) = targets(global)?;
    let mut adapters = Vec::with_capacity(targets.len());
    for (device, slot) in targets {
        signals::check().map_err(|e| pci_error("", &e))?;
        let mut one = global.clone();
        one.device = Some(device.clone());
        let (query, error) = match query_kernel::run(&one) {
            Ok(doc) => (Some(doc), None),
            Err(e) if matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::Terminated) => return Err(e),
            Err(e) => (None, Some(ErrorJson::of(&e))),
        };
        adapters.push(EntryJson { device, slot, query, error });
    }
    let failed = adapters.iter().filter(|a| a.error.is_some()).count() + usize::from(sysfs_error.is_some());
    Ok(InventoryJson { adapters, failed, sysfs_error })
}

/// A device to query (as `--device` takes it) and its slot (`None` for an emulator).
type Target = (String, Option<String>);

/// The devices to query, and why sysfs could not be searched (if so).
fn targets(global: &GlobalArgs) -> CliResult<(Vec<Target>, Option<ErrorJson>)> {
    let mut targets = Vec::new();
    let sysfs_error = match discover(&global.roots(), Scope::OneConnect) {
        Ok(inventory) => {
            for adapter in &inventory.adapters {
                let physical = |f: &&oce_pci::discover::FunctionInfo| !f.virtual_function;
                let first = adapter
                    .functions
                    .iter()
                    .filter(physical)
                    .find(|f| f.kind == FunctionKind::NicPf)
                    .or_else(|| adapter.functions.iter().find(physical));
                if let Some(f) = first {
                    targets.push((f.address.to_string(), Some(adapter.slot.clone())));
                }
            }
            None
        }
        Err(e) => Some(ErrorJson::of(
            &CliError::from_error(ErrorCode::HostFailed, "cannot read the PCI devices from sysfs", &e)
                .hint("is sysfs mounted there? (--sysfs-root)"),
        )),
    };
    let mut emulators: Vec<PathBuf> = Vec::new();
    if let Ok(dir) = default_emulator_dir()
        && dir.join(oce_emulator::state::STATE_FILE).exists()
    {
        emulators.push(dir);
    }
    if let Some(named) = &global.device
        && let DeviceSpec::Emulator(dir) = DeviceSpec::parse(named)?
        && !emulators.contains(&dir)
    {
        emulators.push(dir);
    }
    targets.extend(emulators.into_iter().map(|dir| (format!("emu:{}", dir.display()), None)));
    Ok((targets, sysfs_error))
}

impl Report for InventoryJson {
    /// 1 when an adapter (or the sysfs search) gave an error; the document lists every adapter
    /// either way.
    fn exit_code(&self) -> u8 {
        if self.failed > 0 { ErrorKind::Failed.exit_code() } else { 0 }
    }

    fn text(&self) -> String {
        let mut out = String::new();
        if let Some(e) = &self.sysfs_error {
            let _ = writeln!(out, "sysfs: error ({}): {}", e.code, printable(&e.message));
        }
        if self.adapters.is_empty() {
            out.push_str("no adapters found (none in sysfs, and no emulator created)\n");
        }
        for (i, a) in self.adapters.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            let _ = writeln!(out, "== {} ==", printable(&a.device));
            match (&a.query, &a.error) {
                (Some(q), _) => out.push_str(&q.text()),
                (None, Some(e)) => {
                    let _ = writeln!(out, "error ({}): {}", e.code, printable(&e.message));
                }
                (None, None) => {}
            }
        }
        out
    }
}
