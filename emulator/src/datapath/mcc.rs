//! The MCC engine's indices (spec/be2net-driver.md §3.4, spec/protocol.md §3.8): per MCC, the
//! WRBs posted and not yet run, the next one to run, and the completion a `slow` or
//! `slow-flash` fault holds back, behind which the ring stops so completions stay in order.
//!
//! Running a WRB is the device's (`device::queues::mcc`): it owns the firmware that executes
//! the command. This engine only says which ring slot runs next.

use std::time::Instant;

use oce_mailbox::doorbells::MccDoorbell;
use oce_mailbox::wrb::COMPLETION_LEN;

use super::PerQueue;
use crate::firmware::queues::QueueContexts;

/// A completion the MCC engine holds back until `due`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeldCompletion {
    pub(crate) bytes: [u8; COMPLETION_LEN],
    pub(crate) due: Instant,
    /// When the command ran.
    pub(crate) since: Instant,
    /// The command's (subsystem, opcode).
    pub(crate) command: Option<(u8, u8)>,
}

/// One MCC's indices.
#[derive(Debug, Clone, Default)]
struct MccState {
    /// The next WRB to run.
    consumer: u32,
    /// WRBs posted and not yet run.
    posted: u32,
    held: Option<HeldCompletion>,
}

/// Where the next WRB of an MCC is, and where its completion goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NextWrb {
    /// Bus address of the WRB's ring slot.
    pub(crate) slot: u64,
    /// The MCC's completion queue.
    pub(crate) cq: u16,
}

/// The MCCs' indices.
#[derive(Debug, Default)]
pub(crate) struct MccEngine {
    mccs: PerQueue<MccState>,
}

impl MccEngine {
    fn state(&mut self, q: &QueueContexts, id: u16) -> Option<&mut MccState> {
        let serial = q.mcc(id)?.serial;
        Some(self.mccs.get_mut(id, serial, MccState::default))
    }

    /// The MCC doorbell: `count` more WRBs are posted on MCC `id`; false when it does not exist.
    pub(crate) fn doorbell(&mut self, db: MccDoorbell, q: &QueueContexts) -> bool {
        let id = db.id();
        let Some(entries) = q.mcc(id).map(|m| m.ring.entries) else { return false };
        let Some(mcc) = self.state(q, id) else { return false };
        mcc.posted = mcc.posted.saturating_add(db.count().into()).min(entries);
        true
    }

    /// Takes the next posted WRB of MCC `id`: none when none is posted, a completion is held,
    /// or the MCC is gone.
    pub(crate) fn next(&mut self, q: &QueueContexts, id: u16) -> Option<NextWrb> {
        let ctx = q.mcc(id)?;
        let mcc = self.state(q, id)?;
        if mcc.held.is_some() || mcc.posted == 0 {
            return None;
        }
        let slot = ctx.ring.entry(mcc.consumer);
        mcc.consumer = ctx.ring.advance(mcc.consumer, 1);
        mcc.posted -= 1;
        Some(NextWrb { slot, cq: ctx.cq })
    }

    /// Holds `held` back on MCC `id`; false (nothing held) when the MCC is gone.
    pub(crate) fn hold(&mut self, q: &QueueContexts, id: u16, held: HeldCompletion) -> bool {
        self.state(q, id).map(|m| m.held = Some(held)).is_some()
    }

    /// Takes every held completion due by `now`, with its MCC and CQ.
    pub(crate) fn take_due(&mut self, q: &QueueContexts, now: Instant) -> Vec<(u16, u16, HeldCompletion)> {
        let due: Vec<u16> = (q.mccs())
            .filter(|(id, ctx)| {
                self.mccs.get(*id, ctx.serial).and_then(|m| m.held.as_ref()).is_some_and(|h| h.due <= now)
            })
            .map(|(id, _)| id)
            .collect();
        let mut out = Vec::new();
        for id in due {
            let Some(cq) = q.mcc(id).map(|m| m.cq) else { continue };
            if let Some(held) = self.state(q, id).and_then(|m| m.held.take()) {
                out.push((id, cq, held));
            }
        }
        out
    }

    /// When the next held completion is due, if any.
    pub(crate) fn next_due(&self, q: &QueueContexts) -> Option<Instant> {
        q.mccs().filter_map(|(id, ctx)| self.mccs.get(id, ctx.serial)?.held.as_ref().map(|h| h.due)).min()
    }
}
