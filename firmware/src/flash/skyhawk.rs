//! The Skyhawk walk (`be_flash_skyhawk`, ufi-firmware.md §2.8 and §3): offset mode first, a CRC
//! query per section, 32 KiB chunks (SAVE … FLASH), the fallback to op-type mode, and every
//! firmware refusal turned into a typed error or a recorded skip.

use oce_mailbox::commands::{FlashOpType, FlashromOp, WriteFlashrom};
use oce_mailbox::{AdditionalStatus, BaseStatus, CompletionStatus, MailboxError};

use super::error::FlashError;
use super::observer::FlashObserver;
use super::plan::{Action, FlashPlan, REASON_DIFFERS, REASON_FORCE, REASON_NO_OPTYPE, REASON_OLD_IMAGE, REASON_SAME};
use super::report::{FlashMode, FlashReport, Outcome, SectionOutcome, SectionRef};
use super::target::FlashTarget;
use crate::dir::OpType;
use crate::ufi::UfiImage;
use crate::walk::{WalkStep, walk};

/// Bytes per WRITE_FLASHROM (be2net `32 * 1024`, ufi-firmware.md §3.3).
pub const CHUNK: usize = WriteFlashrom::CHUNK;

const REASON_OLD_REFUSED: &str =
    "the firmware refused this old-format section (optype 0xffff); be2net ignores that and goes on";
const REASON_PHY_REFUSED: &str =
    "the firmware refused the PHY image (ILLEGAL_REQUEST on op-type 99); be2net stops such a section silently";

/// The base status of `err` when it is ILLEGAL_REQUEST or ILLEGAL_FIELD: "this firmware does
/// not take the request as addressed", which the walk answers with the fallback or the "flash
/// incomplete" case (ufi-firmware.md §2.8 steps 5 and 7).
fn refusal(err: &MailboxError) -> Option<CompletionStatus> {
    err.status().filter(|s| matches!(s.base, BaseStatus::IllegalRequest | BaseStatus::IllegalField))
}

/// The op-type sent: 7 in offset mode, the entry's own otherwise (§2.8 step 3).
fn op_type_for(optype: OpType, offset_mode: bool) -> FlashOpType {
    if offset_mode { FlashOpType::OffsetSpecified } else { FlashOpType::from_raw(optype.raw()) }
}

/// READ_FLASHROM REPORT for `step`, compared with its trailer byte for byte (ufi-firmware.md
/// §3.4): `true` when the adapter already holds the section.
fn crc_matches<T: FlashTarget + ?Sized>(
    dev: &mut T,
    step: &WalkStep<'_>,
    optype: OpType,
    offset_mode: bool,
) -> Result<bool, MailboxError> {
    let crc = dev.read_crc(op_type_for(optype, offset_mode), step.crc_query_offset(offset_mode))?;
    Ok(crc == step.trailer())
}

fn section_ref(step: &WalkStep<'_>) -> SectionRef {
    SectionRef { index: step.section.index, image_type: step.section.entry.image_type }
}

fn outcome(step: &WalkStep<'_>, action: Outcome, reason: &str) -> SectionOutcome {
    SectionOutcome { section: section_ref(step), action, bytes: step.size(), reason: reason.to_owned() }
}

/// What one entry came to.
enum Step {
    /// Resolved.
    Done(SectionOutcome),
    /// The firmware refused offset mode: switch and walk again.
    FallBack(SectionRef, CompletionStatus),
}

/// How a section's chunk loop ended without an error.
enum WriteEnd {
    /// FLASH succeeded.
    Committed,
    /// Op-type 99 answered ILLEGAL_REQUEST (ufi-firmware.md §3.3).
    PhyRefused,
}

struct Walk<'r, T: ?Sized, O: ?Sized> {
    dev: &'r mut T,
    obs: &'r mut O,
    force: bool,
    offset_mode: bool,
    flashed: Vec<SectionRef>,
}

/// Runs the walk for `plan` (made from `image`) and reads the versions afterwards.
pub(crate) fn run<T: FlashTarget + ?Sized, O: FlashObserver + ?Sized>(
    dev: &mut T,
    image: &UfiImage<'_>,
    plan: &FlashPlan,
    obs: &mut O,
) -> Result<FlashReport, FlashError> {
    if !plan.matches(image) {
        return Err(FlashError::PlanMismatch);
    }
    obs.plan_ready(plan);
    let steps: Vec<WalkStep<'_>> = walk(image).collect();
    let mut outcomes: Vec<Option<SectionOutcome>> = vec![None; steps.len()];
    let mut w = Walk { dev, obs, force: plan.policy.force, offset_mode: true, flashed: Vec::new() };
    let mut fell_back = false;
    // be2net restarts at entry 0 after the fallback (§2.8 steps 5, 7). Every entry before the one
    // that failed is already resolved in this run — written, found equal, or unsupported — and is
    // not sent again; the fallback happens at most once because op-type mode never falls back.
    'pass: loop {
        for (pos, step) in steps.iter().enumerate() {
            if outcomes[pos].is_some() {
                continue;
            }
            if w.obs.should_stop() {
                let remaining = outcomes.iter().filter(|o| o.is_none()).count();
                return Err(FlashError::Stopped { flashed: w.flashed, remaining });
            }
            match w.entry(step)? {
                Step::Done(o) => {
                    w.obs.section_done(&o);
                    outcomes[pos] = Some(o);
                }
                Step::FallBack(section, status) => {
                    w.offset_mode = false;
                    fell_back = true;
                    w.obs.fallback_to_op_types(section, status);
                    continue 'pass;
                }
            }
        }
        break;
    }
    let sections: Vec<SectionOutcome> = outcomes.into_iter().flatten().collect();
    let versions =
        w.dev.versions().map_err(|source| FlashError::Device { during: "GET_FW_VERSION after the flash", source })?;
    let bytes_written = sections.iter().filter(|s| s.action == Outcome::Flashed).map(|s| u64::from(s.bytes)).sum();
    Ok(FlashReport {
        changed: !w.flashed.is_empty(),
        mode: if w.offset_mode { FlashMode::Offset } else { FlashMode::OpType },
        fell_back,
        sections,
        bytes_written,
        reset_required: versions.running != versions.on_flash,
        running: versions.running,
        stored: versions.on_flash,
    })
}

impl<T: FlashTarget + ?Sized, O: FlashObserver + ?Sized> Walk<'_, T, O> {
    /// §2.8 steps 1–7 for one entry.
    fn entry(&mut self, step: &WalkStep<'_>) -> Result<Step, FlashError> {
        let section = section_ref(step);
        let Some(optype) = step.optype else {
            return Ok(Step::Done(outcome(step, Outcome::SkippedUnsupported, REASON_NO_OPTYPE)));
        };
        let mut reason = REASON_OLD_IMAGE;
        if !step.old_image {
            match crc_matches(self.dev, step, optype, self.offset_mode) {
                Ok(true) if !self.force => return Ok(Step::Done(outcome(step, Outcome::SkippedSame, REASON_SAME))),
                Ok(true) => reason = REASON_FORCE,
                Ok(false) => reason = REASON_DIFFERS,
                Err(e) => match refusal(&e) {
                    Some(status) if self.offset_mode => return Ok(Step::FallBack(section, status)),
                    Some(status) => {
                        return Err(FlashError::FlashIncomplete { section, status, flashed: self.flashed.clone() });
                    }
                    None => return Err(FlashError::CrcQueryFailed { section, source: e }),
                },
            }
        }
        let op_type = op_type_for(optype, self.offset_mode);
        self.obs.section_started(section, step.size());
        match self.write(step, op_type) {
            Ok(WriteEnd::Committed) => {
                self.flashed.push(section);
                Ok(Step::Done(outcome(step, Outcome::Flashed, reason)))
            }
            Ok(WriteEnd::PhyRefused) => Ok(Step::Done(outcome(step, Outcome::SkippedUnsupported, REASON_PHY_REFUSED))),
            Err(e) => self.write_failure(step, optype, e),
        }
    }

    /// The chunk loop (`be_flash`, ufi-firmware.md §3.3): SAVE for every chunk but the last,
    /// FLASH for the last; in offset mode each chunk carries its absolute flash offset. In
    /// op-type mode the offset field is 0 (be2net leaves stale bytes there; firmware ignores it).
    fn write(&mut self, step: &WalkStep<'_>, op_type: FlashOpType) -> Result<WriteEnd, MailboxError> {
        let section = section_ref(step);
        let data = step.section.data;
        let total = data.len();
        let phy = op_type == FlashOpType::PhyFw;
        let mut sent = 0usize;
        for chunk in data.chunks(CHUNK) {
            let last = sent + chunk.len() == total;
            let op = match (phy, last) {
                (false, false) => FlashromOp::Save,
                (false, true) => FlashromOp::Flash,
                (true, false) => FlashromOp::PhySave,
                (true, true) => FlashromOp::PhyFlash,
            };
            // plan() refused sections ending past 2^32, so this offset fits.
            let offset = if self.offset_mode { step.flash_offset().wrapping_add(sent as u32) } else { 0 };
            match self.dev.write_chunk(op, op_type, offset, chunk) {
                Ok(()) => {}
                Err(e) if phy && e.status().is_some_and(|s| s.base == BaseStatus::IllegalRequest) => {
                    return Ok(WriteEnd::PhyRefused);
                }
                Err(e) => return Err(e),
            }
            sent += chunk.len();
            self.obs.bytes_sent(section, sent as u32, total as u32);
        }
        Ok(WriteEnd::Committed)
    }

    /// §2.8 step 7: what a failed write means.
    fn write_failure(&self, step: &WalkStep<'_>, optype: OpType, err: MailboxError) -> Result<Step, FlashError> {
        let section = section_ref(step);
        let Some(status) = err.status() else {
            return Err(FlashError::WriteFailed { section, source: err });
        };
        if status.base == BaseStatus::IllegalField && self.offset_mode {
            return Ok(Step::FallBack(section, status));
        }
        let ufi_dir_failed = optype == OpType::UfiDir && status.base == BaseStatus::Failed;
        if step.old_image && (status.base == BaseStatus::IllegalField || ufi_dir_failed) {
            return Ok(Step::Done(outcome(step, Outcome::SkippedUnsupported, REASON_OLD_REFUSED)));
        }
        Err(match status.additional {
            AdditionalStatus::MissingSignature => FlashError::SignatureMissing { section },
            AdditionalStatus::InvalidSignature => FlashError::SignatureInvalid { section },
            AdditionalStatus::FlashImageCrcMismatch => FlashError::CrcMismatch { section },
            _ => FlashError::WriteRejected { section, status },
        })
    }
}

/// Dry run: resolves every [`Action::FlashIfChanged`] entry of `plan` into `Flash` or `SkipSame`
/// with the REPORT query alone (read-only), falling back to op-type mode as the walk would.
/// Returns the mode the queries ended in.
pub(crate) fn check_crcs<T: FlashTarget + ?Sized>(
    dev: &mut T,
    image: &UfiImage<'_>,
    plan: &mut FlashPlan,
) -> Result<FlashMode, FlashError> {
    if !plan.matches(image) {
        return Err(FlashError::PlanMismatch);
    }
    let mut offset_mode = true;
    for (planned, step) in plan.sections.iter_mut().zip(walk(image)) {
        let (Action::FlashIfChanged, Some(optype)) = (planned.action, step.optype) else { continue };
        let mut answer = crc_matches(dev, &step, optype, offset_mode);
        if offset_mode && answer.as_ref().err().and_then(refusal).is_some() {
            offset_mode = false;
            answer = crc_matches(dev, &step, optype, offset_mode);
        }
        let same = answer.map_err(|source| FlashError::CrcQueryFailed { section: section_ref(&step), source })?;
        (planned.action, planned.reason) =
            if same { (Action::SkipSame, REASON_SAME) } else { (Action::Flash, REASON_DIFFERS) };
    }
    Ok(if offset_mode { FlashMode::Offset } else { FlashMode::OpType })
}
