//! The POST walk: what the semaphore register (config 0x94) reads while the emulated firmware
//! boots (spec/protocol.md §2.4, design.md §6).
//!
//! After power-on or a chip reset the stage advances through [`POST_STAGES`], one stage per
//! `reads_per_stage` reads, so a test sees every stage. The boot's outcome is decided when POST
//! starts ([`crate::model::Model`] checks the flash then); the walk only animates it: a good boot
//! ends at 0xC000 (with bit 30 if the backup firmware runs), a failed one stops at
//! [`POST_FAILED_STAGE_INDEX`] with the error bit 31.

use oce_mailbox::regs::Semaphore;

use crate::assumptions::{POST_FAILED_STAGE_INDEX, POST_READS_PER_STAGE, POST_STAGES};
use crate::events::BootOutcome;

/// The semaphore's progress through POST.
#[derive(Debug, Clone)]
pub(crate) struct PostWalk {
    outcome: BootOutcome,
    index: usize,
    reads_at_stage: u32,
    reads_per_stage: u32,
}

impl PostWalk {
    /// A walk starting at power-on.
    pub(crate) fn start(outcome: BootOutcome, reads_per_stage: u32) -> Self {
        Self { outcome, index: 0, reads_at_stage: 0, reads_per_stage: reads_per_stage.max(1) }
    }

    /// POST already over (an adapter that was running before this process opened it).
    pub(crate) fn finished(outcome: BootOutcome) -> Self {
        let mut walk = Self::start(outcome, POST_READS_PER_STAGE);
        walk.index = walk.last_index();
        walk
    }

    fn last_index(&self) -> usize {
        match self.outcome {
            BootOutcome::Failed => POST_FAILED_STAGE_INDEX,
            BootOutcome::Primary | BootOutcome::Backup => POST_STAGES.len() - 1,
        }
    }

    /// The semaphore value now, without advancing.
    pub(crate) fn value(&self) -> u32 {
        let stage = u32::from(POST_STAGES[self.index]);
        if self.index < self.last_index() {
            return stage;
        }
        match self.outcome {
            BootOutcome::Primary => stage,
            BootOutcome::Backup => stage | Semaphore::BACKUP_FW_RUNNING,
            BootOutcome::Failed => stage | Semaphore::ERROR,
        }
    }

    /// A read of the semaphore: returns the value and moves the walk on.
    pub(crate) fn read(&mut self) -> u32 {
        let value = self.value();
        if self.index < self.last_index() {
            self.reads_at_stage += 1;
            if self.reads_at_stage >= self.reads_per_stage {
                self.reads_at_stage = 0;
                self.index += 1;
            }
        }
        value
    }

    /// True when POST is over and the firmware runs (mailbox commands are accepted).
    pub(crate) fn is_ready(&self) -> bool {
        self.index == self.last_index() && self.outcome != BootOutcome::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_boot_walks_every_stage() {
        let mut walk = PostWalk::start(BootOutcome::Primary, 1);
        let seen: Vec<u32> = (0..6).map(|_| walk.read()).collect();
        assert_eq!(seen, [0x0000, 0x0001, 0x0002, 0xC000, 0xC000, 0xC000]);
        assert!(walk.is_ready());
    }

    #[test]
    fn two_reads_per_stage() {
        let mut walk = PostWalk::start(BootOutcome::Backup, 2);
        let seen: Vec<u32> = (0..8).map(|_| walk.read()).collect();
        assert_eq!(seen, [0, 0, 1, 1, 2, 2, 0x4000_C000, 0x4000_C000]);
    }

    #[test]
    fn failed_boot_stops_with_the_error_bit() {
        let mut walk = PostWalk::start(BootOutcome::Failed, 1);
        let seen: Vec<u32> = (0..5).map(|_| walk.read()).collect();
        assert_eq!(seen, [0x0000, 0x0001, 0x8000_0002, 0x8000_0002, 0x8000_0002]);
        assert!(!walk.is_ready());
    }

    #[test]
    fn a_running_adapter_is_ready_at_once() {
        let mut walk = PostWalk::finished(BootOutcome::Primary);
        assert!(walk.is_ready());
        assert_eq!(walk.read(), 0xC000);
    }
}
