//! [`FlashObserver`]: how a flash reports progress and is asked to stop. Every method has a
//! do-nothing default (the espflash progress-callback idea), so a caller implements only what it
//! shows; the library itself never prints.

use oce_mailbox::CompletionStatus;

use super::plan::FlashPlan;
use super::report::{SectionOutcome, SectionRef};

/// Receives progress from [`super::flash_ufi`].
///
/// **Stopping.** [`FlashObserver::should_stop`] is asked before each directory entry, never
/// between the chunks of one section. A section is the unit the firmware commits: its chunks are
/// staged with SAVE and programmed by the final FLASH, which also checks the section's CRC
/// (ufi-firmware.md §3.3, §3.4). Abandoning a section part-way would leave staged data in the
/// firmware whose handling nobody public documents (§8: behaviour on interrupted sequences), and
/// gains little: the largest section is a few MiB. So the section in flight is finished, the walk
/// stops with [`crate::FlashError::Stopped`], and every section on flash is either wholly old
/// or wholly new. Running the update again resumes: the CRC query skips what is already there.
pub trait FlashObserver {
    /// The flash is about to start with this plan.
    fn plan_ready(&mut self, _plan: &FlashPlan) {}

    /// A section is about to be written (its CRC differs, or it is written without a check).
    fn section_started(&mut self, _section: SectionRef, _bytes: u32) {}

    /// A chunk of the section was accepted: `sent` of `total` bytes so far.
    fn bytes_sent(&mut self, _section: SectionRef, _sent: u32, _total: u32) {}

    /// An entry is resolved (written or skipped).
    fn section_done(&mut self, _outcome: &SectionOutcome) {}

    /// The firmware refused offset mode at `section` (with `status`); the walk continues in
    /// op-type mode (ufi-firmware.md §2.8 steps 5 and 7).
    fn fallback_to_op_types(&mut self, _section: SectionRef, _status: CompletionStatus) {}

    /// Asked between sections: `true` stops the flash after the section in flight.
    fn should_stop(&self) -> bool {
        false
    }
}

/// An observer that shows nothing and never stops.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl FlashObserver for NoProgress {}

impl<O: FlashObserver + ?Sized> FlashObserver for &mut O {
    fn plan_ready(&mut self, plan: &FlashPlan) {
        (**self).plan_ready(plan);
    }
    fn section_started(&mut self, section: SectionRef, bytes: u32) {
        (**self).section_started(section, bytes);
    }
    fn bytes_sent(&mut self, section: SectionRef, sent: u32, total: u32) {
        (**self).bytes_sent(section, sent, total);
    }
    fn section_done(&mut self, outcome: &SectionOutcome) {
        (**self).section_done(outcome);
    }
    fn fallback_to_op_types(&mut self, section: SectionRef, status: CompletionStatus) {
        (**self).fallback_to_op_types(section, status);
    }
    fn should_stop(&self) -> bool {
        (**self).should_stop()
    }
}
