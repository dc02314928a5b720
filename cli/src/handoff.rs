//! The driver hand-off as the user sees it: which backend reaches the adapter and why, the
//! confirmation that names every function leaving its driver and everything that goes down with
//! it (network interfaces, RDMA devices), and the same facts in the command's JSON document
//! (`handoff`), so a script knows what was taken and given back.

use oce_pci::Backend;
use oce_pci::backend::Choice;
use oce_pci::handoff::{Move, Plan};
use serde::Serialize;

use crate::args::GlobalArgs;
use crate::error::CliResult;
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
