//! `ocetool list [--all]`: every OneConnect function in sysfs, grouped by adapter, with its driver,
//! IOMMU group, and whether ocetool can drive it and why not (design.md §7, `list` fields).

use std::fmt::Write as _;

use oce_pci::PciError;
use oce_pci::discover::{Inventory, Scope, discover};
use oce_pci::ids::pair_string;
use serde::Serialize;

use crate::args::GlobalArgs;
use crate::error::{CliError, CliResult, ErrorCode};
use crate::output::Report;

/// The `list` document: `adapters[]` (each with `functions[]`, which say the backend each
/// function would use and why), `other_functions[]` (with `--all`), `vfio_pci_loaded`,
/// `lockdown`, `lockdown_note`.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ListReport(Inventory);

/// Runs `list` against the sysfs tree at `--sysfs-root`; `all` adds the non-OneConnect functions.
pub fn run(global: &GlobalArgs, all: bool) -> CliResult<ListReport> {
    let roots = global.roots();
    let scope = if all { Scope::All } else { Scope::OneConnect };
    discover(&roots, scope).map(ListReport).map_err(|e: PciError| {
        CliError::from_error(ErrorCode::HostFailed, "cannot read the PCI devices from sysfs", &e)
            .hint("is sysfs mounted there? (--sysfs-root)")
    })
}

fn or_none(value: Option<&str>) -> &str {
    value.unwrap_or("none")
}

fn group(value: Option<u32>) -> String {
    value.map_or_else(|| "none".to_owned(), |g| g.to_string())
}

impl Report for ListReport {
    fn text(&self) -> String {
        let inv = &self.0;
        let mut out = String::new();
        if inv.adapters.is_empty() {
            out.push_str("no OneConnect adapters found\n");
        }
        for adapter in &inv.adapters {
            let _ = writeln!(out, "{}  {} ({})", adapter.slot, adapter.chip, adapter.chip.product_line());
            for f in &adapter.functions {
                let usable = match &f.reason {
                    None => "usable".to_owned(),
                    Some(reason) => format!("not usable: {reason}"),
                };
                let backend = f.backend.map_or("-", |b| b.name());
                let _ = writeln!(
                    out,
                    "  {}  {}  {:<6}  driver {:<9} group {:<5} backend {:<6} {usable}",
                    f.address,
                    pair_string(f.vendor_id, f.device_id),
                    f.kind,
                    or_none(f.driver.as_deref()),
                    group(f.iommu_group),
                    backend,
                );
                if let Some(why) = &f.backend_reason {
                    let _ = writeln!(out, "      {backend}: {why}");
                }
            }
        }
        if !inv.other_functions.is_empty() {
            out.push_str("other PCI functions:\n");
            for f in &inv.other_functions {
                let _ = writeln!(
                    out,
                    "  {}  {}  class {:06x}  driver {:<9} group {}",
                    f.address,
                    pair_string(f.vendor_id, f.device_id),
                    f.class,
                    or_none(f.driver.as_deref()),
                    group(f.iommu_group),
                );
            }
        }
        if !inv.vfio_pci_loaded {
            out.push_str("note: vfio-pci is not loaded: run `modprobe vfio-pci`\n");
        }
        if let Some(note) = inv.lockdown_note {
            let _ = writeln!(out, "note: {note}");
        }
        out
    }
}
