//! The Skyhawk walk (`be_flash_skyhawk`, ufi-firmware.md §2.8 and §3), split in two: the
//! read-only survey (the adapter's REPORT of each section's region, in offset mode unless the
//! firmware refuses it) that the plan is made from, and the writes the plan orders, 32 KiB chunks
//! (SAVE … FLASH), with every firmware refusal turned into a typed error or a recorded skip.

use oce_mailbox::commands::{FlashOpType, FlashromOp, WriteFlashrom};
use oce_mailbox::{AdditionalStatus, BaseStatus, CompletionStatus, MailboxError};

use super::error::FlashError;
use super::observer::FlashObserver;
use super::onflash::{OnFlash, is_refusal};
use super::plan::{Action, FlashPlan, REASON_NO_OPTYPE, REASON_OLD_IMAGE, Reports};
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
    err.status().filter(|_| is_refusal(err))
}

/// The op-type sent: 7 in offset mode, the entry's own otherwise (§2.8 step 3).
fn op_type_for(optype: OpType, offset_mode: bool) -> FlashOpType {
    if offset_mode { FlashOpType::OffsetSpecified } else { FlashOpType::from_raw(optype.raw()) }
}

fn section_ref(step: &WalkStep<'_>) -> SectionRef {
    SectionRef { index: step.section.index, image_type: step.section.entry.image_type }
}

fn outcome(step: &WalkStep<'_>, action: Outcome, reason: &str) -> SectionOutcome {
    SectionOutcome { section: section_ref(step), action, bytes: step.size(), reason: reason.to_owned() }
}

/// The CRC diff (§2.8 step 5, every entry the walk asks about): the adapter's REPORT of each
/// section's region, and the mode the answers came in. A refusal in offset mode switches to
/// op-type mode and asks again from the first entry, as be2net restarts its walk; a refusal in
/// op-type mode is be2net's "flash incomplete".
pub(crate) fn survey<T: FlashTarget + ?Sized>(
    dev: &mut T,
    image: &UfiImage<'_>,
    flash: &OnFlash,
) -> Result<(FlashMode, Reports), FlashError> {
    let mut offset_mode = flash.mode == FlashMode::Offset;
    'pass: loop {
        let mut reports = Vec::new();
        for step in walk(image) {
            let (Some(optype), true) = (step.optype, step.queries_crc()) else {
                reports.push(None);
                continue;
            };
            match dev.read_crc(op_type_for(optype, offset_mode), step.crc_query_offset(offset_mode)) {
                Ok(crc) => reports.push(Some(crc)),
                Err(e) => match refusal(&e) {
                    Some(_) if offset_mode => {
                        offset_mode = false;
                        continue 'pass;
                    }
                    Some(status) => {
                        return Err(FlashError::FlashIncomplete {
                            section: section_ref(&step),
                            status,
                            flashed: Vec::new(),
                        });
                    }
                    None => return Err(FlashError::CrcQueryFailed { section: section_ref(&step), source: e }),
                },
            }
        }
        let mode = if offset_mode { FlashMode::Offset } else { FlashMode::OpType };
        return Ok((mode, reports));
    }
}

/// How a section's chunk loop ended without an error.
enum WriteEnd {
    /// FLASH succeeded.
    Committed,
    /// Op-type 99 answered ILLEGAL_REQUEST (ufi-firmware.md §3.3).
    PhyRefused,
    /// A stop was asked for between chunks: the section was staged in part, never committed.
    Abandoned,
}

/// Why a section's chunk loop failed, and whether at its first chunk.
struct WriteError {
    err: MailboxError,
    first_chunk: bool,
}

struct Walk<'r, T: ?Sized, O: ?Sized> {
    dev: &'r mut T,
    obs: &'r mut O,
    offset_mode: bool,
    /// Every section to write sits where the directory on flash puts its op type, so op-type
    /// mode writes the same places (the condition for falling back mid-walk).
    same_layout: bool,
    flashed: Vec<SectionRef>,
}

/// Carries out `plan` (made from `image`): the sections it writes, in its order, then reads the
/// versions.
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
    let mut outcomes: Vec<Option<SectionOutcome>> = plan
        .sections
        .iter()
        .zip(&steps)
        .map(|(p, step)| match p.action {
            Action::Flash => None,
            Action::SkipSame => Some(outcome(step, Outcome::SkippedSame, p.reason)),
            Action::SkipUnsupported => Some(outcome(step, Outcome::SkippedUnsupported, p.reason)),
        })
        .collect();
    for o in outcomes.iter().flatten() {
        obs.section_done(o);
    }
    let mut w = Walk {
        dev,
        obs,
        offset_mode: plan.mode == FlashMode::Offset,
        same_layout: same_layout(plan),
        flashed: Vec::new(),
    };
    let mut fell_back = false;
    for &pos in &plan.order {
        let remaining = outcomes.iter().filter(|o| o.is_none()).count();
        if w.obs.should_stop() {
            return Err(FlashError::Stopped { flashed: w.flashed, remaining, abandoned: None });
        }
        let step = &steps[pos];
        let reason = plan.sections[pos].reason;
        let done = loop {
            match w.entry(step, reason)? {
                Step::Done(o) => break o,
                Step::Abandoned => {
                    let abandoned = Some(section_ref(step));
                    return Err(FlashError::Stopped { flashed: w.flashed, remaining, abandoned });
                }
                Step::FallBack(section, status) => {
                    w.offset_mode = false;
                    fell_back = true;
                    w.obs.fallback_to_op_types(section, status);
                }
            }
        };
        w.obs.section_done(&done);
        outcomes[pos] = Some(done);
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

/// True when every section the plan writes has, in the directory on flash, its op type's
/// region at exactly its place.
fn same_layout(plan: &FlashPlan) -> bool {
    let Some(dir) = &plan.adapter.flash.directory else { return false };
    plan.candidates().all(|s| {
        dir.directory.entries_in_use().map(|(_, e)| e).any(|e| {
            s.optype.is_some()
                && e.effective_optype().map(|o| o.raw()) == s.optype
                && (e.offset, e.pad_size) == (s.offset, s.bytes)
        })
    })
}

/// What one entry came to.
enum Step {
    /// Resolved.
    Done(SectionOutcome),
    /// Stopped between its chunks.
    Abandoned,
    /// The firmware refused offset mode: write it again in op-type mode.
    FallBack(SectionRef, CompletionStatus),
}

impl<T: FlashTarget + ?Sized, O: FlashObserver + ?Sized> Walk<'_, T, O> {
    /// Writes one planned entry (§2.8 step 7), restarting it once when its first chunk is
    /// refused: a section abandoned by an earlier stopped run may still be staged in the
    /// firmware, a first chunk that does not continue it is refused, and the refusal drops it.
    fn entry(&mut self, step: &WalkStep<'_>, reason: &str) -> Result<Step, FlashError> {
        let section = section_ref(step);
        let Some(optype) = step.optype else {
            return Ok(Step::Done(outcome(step, Outcome::SkippedUnsupported, REASON_NO_OPTYPE)));
        };
        let reason = if step.old_image { REASON_OLD_IMAGE } else { reason };
        self.obs.section_started(section, step.size());
        let mut result = self.write(step, op_type_for(optype, self.offset_mode));
        if let Err(WriteError { err, first_chunk: true }) = &result
            && refusal(err).is_some()
        {
            result = self.write(step, op_type_for(optype, self.offset_mode));
        }
        match result {
            Ok(WriteEnd::Committed) => {
                self.flashed.push(section);
                Ok(Step::Done(outcome(step, Outcome::Flashed, reason)))
            }
            Ok(WriteEnd::PhyRefused) => Ok(Step::Done(outcome(step, Outcome::SkippedUnsupported, REASON_PHY_REFUSED))),
            Ok(WriteEnd::Abandoned) => Ok(Step::Abandoned),
            Err(e) => self.write_failure(step, optype, e.err),
        }
    }

    /// The chunk loop (`be_flash`, ufi-firmware.md §3.3): SAVE for every chunk but the last,
    /// FLASH for the last; in offset mode each chunk carries its absolute flash offset. In
    /// op-type mode the offset field is 0 (be2net leaves stale bytes there; firmware ignores it).
    /// A stop asked for before a chunk abandons the section: nothing of it is committed.
    fn write(&mut self, step: &WalkStep<'_>, op_type: FlashOpType) -> Result<WriteEnd, WriteError> {
        let section = section_ref(step);
        let data = step.section.data;
        let total = data.len();
        let phy = op_type == FlashOpType::PhyFw;
        let mut sent = 0usize;
        for chunk in data.chunks(CHUNK) {
            if sent > 0 && self.obs.should_stop() {
                return Ok(WriteEnd::Abandoned);
            }
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
                Err(err) => return Err(WriteError { err, first_chunk: sent == 0 }),
            }
            sent += chunk.len();
            self.obs.bytes_sent(section, sent as u32, total as u32);
        }
        Ok(WriteEnd::Committed)
    }

    /// §2.8 step 7: what a failed write means. Falling back to op-type mode is taken only when
    /// op-type mode writes the same places (the layout on flash is the image's).
    fn write_failure(&self, step: &WalkStep<'_>, optype: OpType, err: MailboxError) -> Result<Step, FlashError> {
        let section = section_ref(step);
        let Some(status) = err.status() else {
            return Err(FlashError::WriteFailed { section, source: err });
        };
        if status.base == BaseStatus::IllegalField && self.offset_mode && self.same_layout {
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
