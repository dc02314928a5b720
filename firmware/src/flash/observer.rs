//! [`FlashObserver`]: how a flash reports progress and is asked to stop. Every method has a
//! do-nothing default (the espflash progress-callback idea), so a caller implements only what it
//! shows; the library itself never prints.

use oce_mailbox::CompletionStatus;

use super::plan::FlashPlan;
use super::report::{SectionOutcome, SectionRef};

/// Receives progress from [`super::flash_ufi`].
///
/// **Stopping.** [`FlashObserver::should_stop`] is asked before each section the plan writes and
/// before each 32 KiB chunk after a section's first. A section is the unit the firmware commits:
/// its chunks are staged with SAVE (in the adapter's RAM) and programmed by the final FLASH, which
/// also checks the section's CRC (ufi-firmware.md §3.3, §3.4). A stop asked for while a section
/// is being staged abandons it before its FLASH: nothing of it reaches the flash, which stays
/// wholly old there, and the walk ends with [`crate::FlashError::Stopped`] naming it as
/// `abandoned`. A commit already sent is waited for (the mailbox waits for every command it
/// sent). Running the update again finishes it: the plan's CRC diff skips what is already there,
/// and a first chunk refused because the firmware still holds the abandoned chunks (a chunk that
/// does not continue them) restarts its section once.
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

    /// Asked before each section and each chunk after a section's first: `true` stops the flash
    /// there (abandoning the section being staged, if any).
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
