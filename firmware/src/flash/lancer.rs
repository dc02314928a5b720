//! The Lancer object download (`lancer_fw_download`, ufi-firmware.md §4.3): the raw file written
//! to the "/prg" object in 32 KiB WRITE_OBJECT chunks, each advancing by what the firmware took,
//! then the zero-length EOF commit, whose `change_status` says how to activate the new firmware.

use std::ops::Range;

use oce_mailbox::commands::{ChangeStatus, OBJECT_CHUNK};
use serde::Serialize;

use super::observer::FlashObserver;
use super::target::ObjectTarget;
use crate::error::FirmwareError;

/// Consecutive replies taking zero bytes after which the download gives up. be2net has no such
/// guard and would loop forever (ufi-firmware.md §4.3 step 2); the number is ocetool's choice.
pub const MAX_ZERO_PROGRESS_REPLIES: u32 = 8;

/// The object length a file gives, after the checks be2net makes before it writes anything: not
/// empty, a multiple of 4 bytes ("FW image size should be multiple of 4", §4.3 step 1), and
/// addressable by the 32-bit `write_offset`.
pub fn object_len(bytes: &[u8]) -> Result<u32, FirmwareError> {
    let len = bytes.len();
    if len == 0 {
        return Err(FirmwareError::Empty);
    }
    if !len.is_multiple_of(4) {
        return Err(FirmwareError::ObjectNotAligned { len });
    }
    u32::try_from(len).map_err(|_| FirmwareError::ObjectTooLarge { len })
}

/// Where the download stands: the next offset, and how many replies in a row took nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectProgress {
    /// Bytes the firmware has taken (the next chunk's `write_offset`).
    pub offset: u32,
    /// The object's length.
    pub total: u32,
    zero_replies: u32,
}

impl ObjectProgress {
    /// A download of `total` bytes, from offset 0.
    pub fn new(total: u32) -> Self {
        Self { offset: 0, total, zero_replies: 0 }
    }

    /// The file range of the next chunk (at most 32 KiB), `None` once everything is taken.
    pub fn next_chunk(&self) -> Option<Range<usize>> {
        let start = self.offset as usize;
        let end = (self.offset as usize + OBJECT_CHUNK).min(self.total as usize);
        (start < end).then_some(start..end)
    }

    /// Takes the reply to a chunk of `sent` bytes whose `actual_write_len` was `accepted`.
    ///
    /// A zero reply resends the same chunk, up to [`MAX_ZERO_PROGRESS_REPLIES`] in a row; a reply
    /// claiming more than was sent is an error, never a jump past data that was not written.
    pub fn advance(&mut self, sent: u32, accepted: u32) -> Result<(), FirmwareError> {
        if accepted > sent {
            return Err(FirmwareError::ObjectOverrun { offset: self.offset, sent, accepted });
        }
        if accepted == 0 {
            self.zero_replies += 1;
            if self.zero_replies >= MAX_ZERO_PROGRESS_REPLIES {
                return Err(FirmwareError::ObjectNoProgress { offset: self.offset, replies: self.zero_replies });
            }
            return Ok(());
        }
        self.zero_replies = 0;
        self.offset += accepted;
        Ok(())
    }
}

/// What activating the downloaded firmware needs, from the commit's `change_status`
/// (ufi-firmware.md §4.3 step 5, be2net's reading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Activation {
    /// 0x00 (`LANCER_NO_RESET_NEEDED`): the new firmware is active.
    NoResetNeeded,
    /// 0x02 (`LANCER_FW_RESET_NEEDED`): a firmware reset activates it. be2net does that through
    /// PHYSDEV_CONTROL (§4.4); ocetool does not drive Lancer's SLIPORT registers, so it reports
    /// the need (a server reboot also does it).
    FirmwareResetNeeded,
    /// 0x01, 0x04, 0x05 and any other value: be2net asks for a server reboot.
    RebootNeeded,
}

impl Activation {
    /// be2net's decision for `status`; unknown values count as "reboot", as be2net treats them.
    pub fn from_change_status(status: ChangeStatus) -> Self {
        match status {
            ChangeStatus::NoResetNeeded => Self::NoResetNeeded,
            ChangeStatus::FwReset => Self::FirmwareResetNeeded,
            ChangeStatus::PhysDevReset
            | ChangeStatus::PortMigration
            | ChangeStatus::PciReset
            | ChangeStatus::Unknown(_) => Self::RebootNeeded,
        }
    }
}

/// The result of a completed object download.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectReport {
    /// Bytes written (the file's length).
    pub bytes: u64,
    /// WRITE_OBJECT commands sent for data (the commit not counted).
    pub writes: u32,
    /// The commit's raw `change_status`, kept whatever its value.
    pub change_status: u8,
    /// Its name, when known.
    pub change_status_name: Option<&'static str>,
    /// What activation needs.
    pub activation: Activation,
    /// Anything but [`Activation::NoResetNeeded`].
    pub reset_required: bool,
}

/// Writes `bytes` to the object and commits it.
pub(crate) fn run<T: ObjectTarget + ?Sized, O: FlashObserver + ?Sized>(
    dev: &mut T,
    bytes: &[u8],
    obs: &mut O,
) -> Result<ObjectReport, FirmwareError> {
    let total = object_len(bytes)?;
    if obs.should_stop() {
        return Err(FirmwareError::Stopped { flashed: Vec::new(), remaining: 1 });
    }
    let mut progress = ObjectProgress::new(total);
    let mut writes = 0u32;
    while let Some(range) = progress.next_chunk() {
        let sent = range.len() as u32;
        let offset = progress.offset;
        let reply = dev
            .write_object(offset, &bytes[range])
            .map_err(|source| FirmwareError::ObjectWriteFailed { offset, source })?;
        writes += 1;
        progress.advance(sent, reply.actual_write_len)?;
        obs.object_progress(u64::from(progress.offset), u64::from(total));
    }
    let reply = dev.commit_object(total).map_err(|source| FirmwareError::ObjectCommitFailed { total, source })?;
    let activation = Activation::from_change_status(reply.change_status);
    Ok(ObjectReport {
        bytes: u64::from(total),
        writes,
        change_status: reply.change_status.raw(),
        change_status_name: reply.change_status.name(),
        activation,
        reset_required: activation != Activation::NoResetNeeded,
    })
}
