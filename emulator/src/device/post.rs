//! The POST walk: what the semaphore register (config 0x94) reads while the emulated firmware
//! boots (spec/protocol.md §2.4, design.md §6).
//!
//! After power-on or a chip reset the stage advances through [`POST_STAGES`], one stage per
//! `reads_per_stage` reads, so a test sees every stage. The boot's outcome is decided when POST
//! starts (the firmware checks the flash then, [`crate::firmware::Firmware`]); the walk only animates it: a good boot
//! ends at 0xC000 (with bit 30 if the backup firmware runs), a failed one stops at
//! [`POST_FAILED_STAGE_INDEX`] with the error bit 31. A POST fault ([`PostFault`]) overrides the
//! outcome while it is set: the walk stops at the faulty stage, with bit 31 for an error.

use oce_mailbox::regs::Semaphore;

use crate::assumptions::{POST_FAILED_STAGE_INDEX, POST_READS_PER_STAGE, POST_STAGES};
use crate::events::BootOutcome;
use crate::faults::PostFault;

/// Most values a walk shows.
const MAX_STEPS: usize = POST_STAGES.len();

/// The semaphore values one walk shows, in order; the walk stays at the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sequence {
    values: [u32; MAX_STEPS],
    len: usize,
}

impl Sequence {
    /// The walk of a boot with `outcome`, or of a POST fault, which overrides the outcome: the
    /// stages before the faulty one, then the faulty one (with bit 31 for an error).
    fn of(outcome: BootOutcome, fault: Option<PostFault>) -> Self {
        let mut values = [0u32; MAX_STEPS];
        for (v, &stage) in values.iter_mut().zip(POST_STAGES.iter()) {
            *v = u32::from(stage);
        }
        let last = MAX_STEPS - 1;
        let (len, tail) = match fault {
            None => match outcome {
                BootOutcome::Primary => (MAX_STEPS, values[last]),
                BootOutcome::Backup => (MAX_STEPS, values[last] | Semaphore::BACKUP_FW_RUNNING),
                BootOutcome::Failed => {
                    (POST_FAILED_STAGE_INDEX + 1, values[POST_FAILED_STAGE_INDEX] | Semaphore::ERROR)
                }
            },
            Some(PostFault::Stuck { stage } | PostFault::Error { stage }) => {
                // Stages before the faulty one; all but the ready stage if it is not in the walk.
                let at = POST_STAGES.iter().position(|&s| s == stage).unwrap_or(last).min(last);
                let error = if matches!(fault, Some(PostFault::Error { .. })) { Semaphore::ERROR } else { 0 };
                (at + 1, u32::from(stage) | error)
            }
        };
        values[len - 1] = tail;
        Self { values, len }
    }

    fn last(&self) -> usize {
        self.len - 1
    }
}

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
        Self { index: MAX_STEPS - 1, ..Self::start(outcome, POST_READS_PER_STAGE) }
    }

    /// The semaphore value now, without advancing. A POST fault set on a running adapter shows at
    /// once (the walk is past the faulty stage, so it sits there); cleared, the walk goes on.
    pub(crate) fn value(&self, fault: Option<PostFault>) -> u32 {
        let seq = Sequence::of(self.outcome, fault);
        seq.values[self.index.min(seq.last())]
    }

    /// A read of the semaphore: returns the value and moves the walk on.
    pub(crate) fn read(&mut self, fault: Option<PostFault>) -> u32 {
        let seq = Sequence::of(self.outcome, fault);
        self.index = self.index.min(seq.last());
        let value = seq.values[self.index];
        if self.index < seq.last() {
            self.reads_at_stage += 1;
            if self.reads_at_stage >= self.reads_per_stage {
                self.reads_at_stage = 0;
                self.index += 1;
            }
        }
        value
    }

    /// True when POST is over and the firmware runs (mailbox commands are accepted).
    pub(crate) fn is_ready(&self, fault: Option<PostFault>) -> bool {
        let seq = Sequence::of(self.outcome, fault);
        self.index >= seq.last() && Semaphore(seq.values[seq.last()]).is_ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_boot_walks_every_stage() {
        let mut walk = PostWalk::start(BootOutcome::Primary, 1);
        let seen: Vec<u32> = (0..6).map(|_| walk.read(None)).collect();
        assert_eq!(seen, [0x0000, 0x0001, 0x0002, 0xC000, 0xC000, 0xC000]);
        assert!(walk.is_ready(None));
    }

    #[test]
    fn two_reads_per_stage() {
        let mut walk = PostWalk::start(BootOutcome::Backup, 2);
        let seen: Vec<u32> = (0..8).map(|_| walk.read(None)).collect();
        assert_eq!(seen, [0, 0, 1, 1, 2, 2, 0x4000_C000, 0x4000_C000]);
    }

    #[test]
    fn failed_boot_stops_with_the_error_bit() {
        let mut walk = PostWalk::start(BootOutcome::Failed, 1);
        let seen: Vec<u32> = (0..5).map(|_| walk.read(None)).collect();
        assert_eq!(seen, [0x0000, 0x0001, 0x8000_0002, 0x8000_0002, 0x8000_0002]);
        assert!(!walk.is_ready(None));
    }

    #[test]
    fn a_stuck_post_stops_at_its_stage() {
        let stuck = Some(PostFault::Stuck { stage: 1 });
        let mut walk = PostWalk::start(BootOutcome::Primary, 1);
        let seen: Vec<u32> = (0..4).map(|_| walk.read(stuck)).collect();
        assert_eq!(seen, [0x0000, 0x0001, 0x0001, 0x0001]);
        assert!(!walk.is_ready(stuck));
        // Cleared, the walk goes on from where it stopped.
        let seen: Vec<u32> = (0..3).map(|_| walk.read(None)).collect();
        assert_eq!(seen, [0x0001, 0x0002, 0xC000]);
        assert!(walk.is_ready(None));
    }

    #[test]
    fn a_stage_outside_the_walk_follows_the_early_stages() {
        let stuck = Some(PostFault::Stuck { stage: 0x0005 });
        let mut walk = PostWalk::start(BootOutcome::Primary, 1);
        let seen: Vec<u32> = (0..5).map(|_| walk.read(stuck)).collect();
        assert_eq!(seen, [0, 1, 2, 5, 5]);
    }

    #[test]
    fn a_post_error_fault_overrides_a_good_boot() {
        let error = Some(PostFault::Error { stage: 0x0002 });
        let mut walk = PostWalk::start(BootOutcome::Primary, 1);
        let seen: Vec<u32> = (0..4).map(|_| walk.read(error)).collect();
        assert_eq!(seen, [0x0000, 0x0001, 0x8000_0002, 0x8000_0002]);
        assert!(!walk.is_ready(error));
        let error_at_ready = Some(PostFault::Error { stage: 0xC000 });
        assert_eq!(PostWalk::finished(BootOutcome::Primary).value(error_at_ready), 0x8000_C000);
    }

    #[test]
    fn a_fault_set_on_a_running_adapter_shows_at_once() {
        let walk = PostWalk::finished(BootOutcome::Primary);
        assert_eq!(walk.value(Some(PostFault::Stuck { stage: 0 })), 0);
        assert!(!walk.is_ready(Some(PostFault::Stuck { stage: 0 })));
        assert_eq!(walk.value(None), 0xC000);
    }

    #[test]
    fn a_running_adapter_is_ready_at_once() {
        let mut walk = PostWalk::finished(BootOutcome::Primary);
        assert!(walk.is_ready(None));
        assert_eq!(walk.read(None), 0xC000);
    }
}
