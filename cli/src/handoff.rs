//! The driver hand-off as the user sees it: which backend reaches the adapter and why, the
//! confirmation that names every function leaving its driver and everything that goes down with
//! it (network interfaces, RDMA devices), and the same facts in the command's JSON document
//! (`handoff`), so a script knows what was taken and given back.

use oce_pci::backend::Choice;
use oce_pci::discover::{Scope, discover};
use oce_pci::handoff::{Move, Plan, Target};
use oce_pci::{Backend, Roots};
use serde::Serialize;

use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, HeldFunction, drivers_on_the_card};
use crate::error::{CliError, CliResult, ErrorKind, pci_error};
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
}

impl HandOffJson {
    /// The record of a hand-off by `choice`'s backend that moved `moved`.
    pub fn new(choice: &Choice, moved: &[Move]) -> Self {
        Self { backend: choice.backend, reason: choice.reason.clone(), moved: moved.to_vec() }
    }
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
    Err(CliError::new(
        ErrorKind::Refused,
        format!(
            "refusing to reset the chip of {addr}: the reset restarts every function of the card, and {names} \
             {stays} on a host driver through it ({moved}); unbind {them} first (echo {a} > \
             /sys/bus/pci/drivers/{d}/unbind; echo {a} > /sys/bus/pci/drivers_probe gives it back after the reset), \
             or reboot instead",
            addr = plan.address,
            names = names.join(", "),
            a = first.address,
            d = first.driver,
        ),
    ))
}
