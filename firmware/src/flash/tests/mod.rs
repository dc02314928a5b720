//! Unit tests of the flash plan and the walk's decisions (against a scripted adapter). End-to-end
//! tests against the emulator are in `tests/tests/flash_*.rs`.

mod fake;
mod order;
mod plan;
mod walk;

use std::cell::Cell;

use oce_mailbox::CompletionStatus;

use super::observer::FlashObserver;
use super::onflash::{BootState, OnFlash, describe};
use super::plan::{AdapterState, FlashPlan, identity};
use super::report::{FlashMode, SectionOutcome, SectionRef};
use super::target::FlashTarget;
use crate::ufi::UfiImage;
use crate::walk::walk;

/// The adapter a plan test starts from: a Skyhawk B0 with `stored` on flash, its directory laid
/// out as `image`'s with good boot sections, and no REPORT asked (every section differs).
fn on_flash(image: &UfiImage<'_>, stored: &str) -> AdapterState {
    let mut dir = describe(image.directory().clone(), Some(0));
    for b in &mut dir.boot {
        b.state = BootState::Good;
    }
    AdapterState {
        chip: oce_pci::Chip::Skyhawk,
        asic_rev: 0x10,
        running: stored.into(),
        stored: stored.into(),
        flash: OnFlash { mode: FlashMode::Offset, directory: Some(dir), unreadable: None },
        mode: FlashMode::Offset,
        reports: walk(image).map(|_| None).collect(),
        read_for: walk(image).map(identity).collect(),
    }
}

/// The adapter state read from `dev` for `image`, as `read_adapter` reads it.
fn read_from<T: FlashTarget>(dev: &mut T, image: &UfiImage<'_>) -> AdapterState {
    let (flash, mode, reports) = super::survey(dev, image).unwrap();
    AdapterState { flash, mode, reports, ..on_flash(image, "1.0.0.0") }
}

/// Records every callback as a line, and stops after `stop_after` sections were written.
#[derive(Default)]
struct Recorder {
    events: Vec<String>,
    stop_after: Option<usize>,
    /// With `stop_after`: stop only once this many chunks of the next section were sent too.
    stop_after_chunks: Option<usize>,
    written: Cell<usize>,
    chunks: Cell<usize>,
}

impl FlashObserver for Recorder {
    fn plan_ready(&mut self, plan: &FlashPlan) {
        self.events.push(format!("plan {}", plan.sections.len()));
    }
    fn section_started(&mut self, section: SectionRef, bytes: u32) {
        self.events.push(format!("start {:#x} {bytes}", section.image_type.raw()));
    }
    fn bytes_sent(&mut self, section: SectionRef, sent: u32, total: u32) {
        if self.stop_after.is_some_and(|n| self.written.get() >= n) {
            self.chunks.set(self.chunks.get() + 1);
        }
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
            && self.stop_after_chunks.is_none_or(|c| self.chunks.get() >= c)
    }
}
