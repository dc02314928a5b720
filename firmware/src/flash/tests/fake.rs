//! A scripted adapter for the walk's unit tests: a flash array, SAVE staging and FLASH commit in
//! offset or op-type mode, REPORT of a region's last 4 bytes, a command log, and hooks that make
//! any command fail with a chosen status.

use std::collections::HashMap;

use oce_mailbox::commands::{FlashOpType, FlashromOp, FwVersion};
use oce_mailbox::{AdditionalStatus, BaseStatus, CompletionStatus, MailboxError, Subsystem};

use crate::flash::target::FlashTarget;
use crate::ufi::UfiImage;

/// One command the fake received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cmd {
    Crc { op_type: u32, offset: u32 },
    Write { op: FlashromOp, op_type: u32, offset: u32, len: usize },
    Versions,
}

impl Cmd {
    pub(super) fn is_write(&self) -> bool {
        matches!(self, Cmd::Write { .. })
    }
}

/// A failure status for a command, or `None` to run it.
pub(super) type Hook = Box<dyn FnMut(&Cmd) -> Option<CompletionStatus>>;

pub(super) fn status(base: BaseStatus, additional: AdditionalStatus) -> CompletionStatus {
    CompletionStatus::new(base, additional)
}

pub(super) fn failed(command: &'static str, opcode: u8, status: CompletionStatus) -> MailboxError {
    MailboxError::CommandFailed { command, subsystem: Subsystem::Common, opcode, status }
}

pub(super) struct Fake {
    pub(super) flash: Vec<u8>,
    /// op-type → (offset, size), for op-type mode.
    pub(super) regions: HashMap<u32, (u32, u32)>,
    /// Refuse op type 7 (queries: ILLEGAL_REQUEST, writes: ILLEGAL_FIELD).
    pub(super) no_offset_mode: bool,
    pub(super) hook: Option<Hook>,
    pub(super) log: Vec<Cmd>,
    staged: Vec<(u32, Vec<u8>)>,
    pub(super) versions: FwVersion,
}

impl Fake {
    /// A flash of `len` bytes holding an older image (1.0.0.0, small layout) and otherwise
    /// erased, that knows the regions of `image`'s directory.
    pub(super) fn erased(len: usize, image: &UfiImage<'_>) -> Self {
        let mut flash = vec![0xFF; len];
        let old = crate::ImageBuilder::new("1.0.0.0").build_flash().expect("old image");
        flash[..old.len()].copy_from_slice(&old);
        let regions = image
            .sections()
            .filter_map(|s| s.entry.effective_optype().map(|o| (o.raw(), (s.entry.offset, s.entry.pad_size))))
            .collect();
        Self {
            flash,
            regions,
            no_offset_mode: false,
            hook: None,
            log: Vec::new(),
            staged: Vec::new(),
            versions: FwVersion { running: "1.0.0.0".into(), on_flash: "1.0.0.0".into() },
        }
    }

    pub(super) fn with_hook(mut self, hook: impl FnMut(&Cmd) -> Option<CompletionStatus> + 'static) -> Self {
        self.hook = Some(Box::new(hook));
        self
    }

    pub(super) fn writes(&self) -> usize {
        self.log.iter().filter(|c| c.is_write()).count()
    }

    fn hook(&mut self, cmd: &Cmd) -> Option<CompletionStatus> {
        self.log.push(cmd.clone());
        self.hook.as_mut().and_then(|h| h(cmd))
    }

    /// Where a command addresses: (region start, region size) in op-type mode, or the absolute
    /// offset in offset mode.
    fn region(&self, op_type: u32) -> Option<(u32, u32)> {
        self.regions.get(&op_type).copied()
    }
}

impl FlashTarget for Fake {
    fn read_crc(&mut self, op_type: FlashOpType, offset: u32) -> Result<[u8; 4], MailboxError> {
        let cmd = Cmd::Crc { op_type: op_type.raw(), offset };
        if let Some(s) = self.hook(&cmd) {
            return Err(failed("READ_FLASHROM", 6, s));
        }
        let at = match op_type {
            FlashOpType::OffsetSpecified if self.no_offset_mode => {
                return Err(failed("READ_FLASHROM", 6, status(BaseStatus::IllegalRequest, AdditionalStatus::None)));
            }
            FlashOpType::OffsetSpecified => offset as usize,
            other => match self.region(other.raw()) {
                Some((start, _)) => start as usize + offset as usize,
                None => {
                    return Err(failed("READ_FLASHROM", 6, status(BaseStatus::IllegalField, AdditionalStatus::None)));
                }
            },
        };
        let mut crc = [0u8; 4];
        crc.copy_from_slice(&self.flash[at..at + 4]);
        Ok(crc)
    }

    fn write_chunk(
        &mut self,
        op: FlashromOp,
        op_type: FlashOpType,
        offset: u32,
        data: &[u8],
    ) -> Result<(), MailboxError> {
        let cmd = Cmd::Write { op, op_type: op_type.raw(), offset, len: data.len() };
        if let Some(s) = self.hook(&cmd) {
            self.staged.clear();
            return Err(failed("WRITE_FLASHROM", 7, s));
        }
        let at = match op_type {
            FlashOpType::OffsetSpecified if self.no_offset_mode => {
                return Err(failed("WRITE_FLASHROM", 7, status(BaseStatus::IllegalField, AdditionalStatus::None)));
            }
            FlashOpType::OffsetSpecified => offset,
            other => {
                let Some((start, _)) = self.region(other.raw()) else {
                    return Err(failed("WRITE_FLASHROM", 7, status(BaseStatus::IllegalField, AdditionalStatus::None)));
                };
                start + self.staged.iter().map(|(_, d)| d.len() as u32).sum::<u32>()
            }
        };
        self.staged.push((at, data.to_vec()));
        if matches!(op, FlashromOp::Flash | FlashromOp::PhyFlash) {
            for (at, d) in std::mem::take(&mut self.staged) {
                self.flash[at as usize..at as usize + d.len()].copy_from_slice(&d);
            }
        }
        Ok(())
    }

    fn versions(&mut self) -> Result<FwVersion, MailboxError> {
        self.log.push(Cmd::Versions);
        Ok(self.versions.clone())
    }
}
