//! The driver hand-off as the user sees it: which backend reaches the adapter and why, the
//! confirmation that names every function leaving its driver and everything that goes down with
//! it (network interfaces, RDMA devices), and the same facts in the command's JSON document
//! (`handoff`), so a script knows what was taken and given back. Also the repair of a hand-off a
//! killed ocetool left behind ([`repair_leftover`]), which every command that opens an adapter
//! runs first.

use std::path::PathBuf;
use std::sync::Arc;

use oce_pci::backend::Choice;
use oce_pci::discover::{Scope, discover};
use oce_pci::handoff::{Move, Plan, Repair, Repaired, Target, repair};
use oce_pci::{Backend, HandOffOptions, KernelSysfs, PciAddress, Roots};
use serde::Serialize;

use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, HeldFunction, drivers_on_the_card};
use crate::error::{CliError, CliResult, ErrorCode, pci_error};
use crate::output::{Report, confirm};

/// `handoff` in a command's JSON: the backend, why, and the functions ocetool moved for the
/// command (each with the driver it had and what went down with it) and gave back.
#[derive(Debug, Clone, Serialize)]
pub struct HandOffJson {
    /// `vfio` or `sysfs`.
    pub backend: Backend,
    /// Why that backend.
    pub reason: String,
    /// The functions moved for the command, the driven one first; `driver` is what they are back
    /// on now (`null`: unbound, as they were found).
    pub moved: Vec<Move>,
    /// A hand-off a killed ocetool had left on the adapter, undone before this one; absent when
    /// there was none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repaired: Option<RepairJson>,
}

impl HandOffJson {
    /// The record of a hand-off by `choice`'s backend that moved `moved`, after `repaired`.
    pub fn new(choice: &Choice, moved: &[Move], repaired: Option<RepairJson>) -> Self {
        Self { backend: choice.backend, reason: choice.reason.clone(), moved: moved.to_vec(), repaired }
    }
}

/// A hand-off of a killed ocetool that a run undid (`handoff.repaired`, `restore-drivers`).
#[derive(Debug, Clone, Serialize)]
pub struct RepairJson {
    /// The record it was read from (now removed).
    pub record: PathBuf,
    /// The process that had made the hand-off.
    pub pid: u32,
    /// The function that hand-off was for.
    pub address: PciAddress,
    /// Each function it had moved, and the driver it is on now (`null`: unbound, as it was, or
    /// until its driver loads).
    pub functions: Vec<Repaired>,
}

impl RepairJson {
    fn of(r: &Repair) -> Self {
        Self { record: r.record.clone(), pid: r.pid, address: r.address, functions: r.functions.clone() }
    }

    /// One line for the user: what was given back to what.
    pub fn describe(&self) -> String {
        let back: Vec<String> = self
            .functions
            .iter()
            .map(|f| match &f.driver {
                Some(d) => format!("{} is back on {d}", f.address),
                None => format!("{} is unbound with its driver_override cleared", f.address),
            })
            .collect();
        format!(
            "gave back what the driver hand-off of {} by ocetool (pid {}) left when it was stopped: {}",
            self.address,
            self.pid,
            if back.is_empty() { "its functions are gone".to_owned() } else { back.join(", ") }
        )
    }
}

/// Undoes the driver hand-off a killed ocetool left on `addr`'s adapter, if one is recorded
/// (`oce_pci::handoff::repair`), and says so on stderr. The caller holds the adapter's lock, so
/// the record's process is gone. A repair that fails stops the command (exit 1) and keeps the
/// record: going on would take vfio-pci for the functions' original driver.
pub fn repair_leftover(roots: &Roots, addr: PciAddress) -> CliResult<Option<RepairJson>> {
    let repaired = repair_quietly(roots, addr)?;
    if let Some(r) = &repaired {
        crate::output::warn(&r.describe());
    }
    Ok(repaired)
}

/// [`repair_leftover`] without the line on stderr, for `restore-drivers`, whose report it is.
pub fn repair_quietly(roots: &Roots, addr: PciAddress) -> CliResult<Option<RepairJson>> {
    let repaired = repair(roots, addr, HandOffOptions::default().timeout, Arc::new(KernelSysfs))
        .map_err(|e| pci_error(&format!("cannot give back what a stopped ocetool left on {addr}'s adapter"), &e))?;
    Ok(repaired.as_ref().map(RepairJson::of))
}

/// A command's result, with the hand-off it needed on a real adapter.
#[derive(Debug, Serialize)]
pub struct Handed<T> {
    /// The command's own document.
    #[serde(flatten)]
    pub output: T,
    /// The hand-off; absent on the emulator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handoff: Option<HandOffJson>,
}

impl<T> Handed<T> {
    /// A result that needed no hand-off.
    pub fn without(output: T) -> Self {
        Self { output, handoff: None }
    }
}

impl<T: Report> Report for Handed<T> {
    fn exit_code(&self) -> u8 {
        self.output.exit_code()
    }

    fn text(&self) -> String {
        let mut text = self.output.text();
        if let Some(h) = &self.handoff {
            let taken: Vec<String> =
                h.moved.iter().filter_map(|m| m.driver.as_deref().map(|d| format!("{} ({d})", m.address))).collect();
            if !taken.is_empty() {
                text.push_str(&format!(
                    "Driver hand-off ({} backend): {} given back to their drivers\n",
                    h.backend,
                    taken.join(", ")
                ));
            }
        }
        text
    }
}

/// Asks before `--unbind` takes functions from their kernel drivers, naming each one and what
/// goes down with it (asked on a terminal, refused without `--yes` in a script: exit 4).
pub fn confirm_unbind(global: &GlobalArgs, plan: &Plan) -> CliResult<()> {
    let parts: Vec<String> = plan
        .unbinds()
        .map(|m| {
            let going = m.dependents.describe();
            let driver = m.driver.as_deref().unwrap_or_default();
            if going.is_empty() {
                format!("{driver} from {}", m.address)
            } else {
                format!("{driver} from {}, taking down {}", m.address, going.join(", "))
            }
        })
        .collect();
    let action = match (parts.as_slice(), plan.iommu_group) {
        ([], _) => return Ok(()),
        ([one], _) => format!("unbind {one}, for the length of this command"),
        (many, Some(group)) => format!(
            "unbind the adapter's functions in IOMMU group {group} for the length of this command ({})",
            many.join("; ")
        ),
        (many, None) => format!("unbind {} for the length of this command", many.join("; ")),
    };
    confirm(global.yes, &action)
}

/// Refuses (exit 4) a chip reset of `plan`'s adapter while another function of the card stays on
/// a host driver through it, before anything is written. The reset restarts every function of
/// the card, and be2net survives one only in its own recovery, where each PF waits, tears down
/// and sets up again around it (spec/protocol.md §7.4); through a reset it did not start, it
/// keeps using queues the reset tore down. A function the hand-off moves is away from its driver
/// and does not count; but the sysfs backend moves only the function it drives, and with ACS
/// each function has an IOMMU group of its own, so there the card's other port stays on be2net.
pub fn refuse_reset_under_drivers(roots: &Roots, plan: &Plan) -> CliResult<()> {
    let inventory =
        discover(roots, Scope::OneConnect).map_err(|e| pci_error("cannot read the PCI devices from sysfs", &e))?;
    let held = drivers_on_the_card(roots, Some(&inventory), &DeviceSpec::Pci(plan.address))?;
    let left: Vec<&HeldFunction> = held.iter().filter(|h| !plan.moves.iter().any(|m| m.address == h.address)).collect();
    let Some(first) = left.first() else { return Ok(()) };
    let names: Vec<String> = left.iter().map(ToString::to_string).collect();
    let (stays, them) = if left.len() == 1 { ("stays", "it") } else { ("stay", "them") };
    let moved = match (plan.target, plan.iommu_group) {
        (Target::VfioPci, Some(group)) => format!("the hand-off moves only the functions in IOMMU group {group}"),
        _ => format!("the sysfs backend hands off only {}", plan.address),
    };
    // A storage function's disks go with its driver: the unbind that makes the reset safe is
    // only safe itself once nothing uses them.
    let storage: Vec<String> = left.iter().filter(|h| h.kind.is_storage()).map(|h| h.address.to_string()).collect();
    let disks = match storage.as_slice() {
        [] => String::new(),
        [one] => format!(" ({one} carries storage: stop what uses its disks before unbinding it)"),
        many => format!(" ({} carry storage: stop what uses their disks before unbinding them)", many.join(", ")),
    };
    Err(CliError::new(
        ErrorCode::CardInUse,
        format!(
            "refusing to reset the chip of {addr}: the reset restarts every function of the card, and {names} \
             {stays} on a host driver through it ({moved}); unbind {them} first{disks} (echo {a} > \
             /sys/bus/pci/drivers/{d}/unbind; echo {a} > /sys/bus/pci/drivers_probe gives it back after the reset), \
             or reboot instead",
            addr = plan.address,
            names = names.join(", "),
            a = first.address,
            d = first.driver,
        ),
    ))
}
