//! Unit tests of the flash plan and the walk's decisions (against a scripted adapter). End-to-end
//! tests against the emulator are in `tests/tests/flash_*.rs`.

mod fake;
mod plan;
mod walk;

use std::cell::Cell;

use oce_mailbox::CompletionStatus;

use super::observer::FlashObserver;
use super::plan::{AdapterState, FlashPlan};
use super::report::{SectionOutcome, SectionRef};

/// The adapter a plan test starts from: a Skyhawk B0 with `stored` on flash.
fn on_flash(stored: &str) -> AdapterState {
    AdapterState { chip: oce_pci::Chip::Skyhawk, asic_rev: 0x10, running: stored.into(), stored: stored.into() }
}

/// Records every callback as a line, and stops after `stop_after` sections were written.
#[derive(Default)]
struct Recorder {
    events: Vec<String>,
    stop_after: Option<usize>,
    written: Cell<usize>,
}

impl FlashObserver for Recorder {
    fn plan_ready(&mut self, plan: &FlashPlan) {
        self.events.push(format!("plan {}", plan.sections.len()));
    }
    fn section_started(&mut self, section: SectionRef, bytes: u32) {
        self.events.push(format!("start {:#x} {bytes}", section.image_type.raw()));
    }
    fn bytes_sent(&mut self, section: SectionRef, sent: u32, total: u32) {
        self.events.push(format!("sent {:#x} {sent}/{total}", section.image_type.raw()));
    }
    fn section_done(&mut self, outcome: &SectionOutcome) {
        if outcome.action == super::Outcome::Flashed {
            self.written.set(self.written.get() + 1);
        }
        self.events.push(format!("done {:#x} {:?}", outcome.section.image_type.raw(), outcome.action));
    }
    fn fallback_to_op_types(&mut self, section: SectionRef, status: CompletionStatus) {
        self.events.push(format!("fallback {:#x} {}", section.image_type.raw(), status.base.raw()));
    }
    fn should_stop(&self) -> bool {
        self.stop_after.is_some_and(|n| self.written.get() >= n)
    }
}
