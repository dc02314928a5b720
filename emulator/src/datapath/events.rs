//! The EQ/CQ engine: the CQ and EQ doorbells (popped, re-arm, clear), completions written at a
//! CQ's producer index, the event entry `(cq_id << 16) | 1` an armed CQ posts to its EQ, and the
//! EQs that fire (spec/be2net-driver.md §3.3–§3.5; the rules in [`crate::assumptions`],
//! "queues").
//!
//! Which interrupt a fired EQ raises (its MSI-X vector, or INTx) is the device's to decide: the
//! engine leaves the EQ in [`Effects::fired`](super::Effects), and the device calls
//! [`EventEngine::assert_intx`] when it takes the INTx path.

use oce_mailbox::doorbells::{CqDoorbell, EqDoorbell};
use oce_mailbox::entries::{EQ_ENTRY_LEN, EqEntry};
use oce_mailbox::wire::{Wire, Writer};
use oce_mailbox::wrb::COMPLETION_LEN;

use super::{Env, PerQueue};
use crate::events::QueueKind;
use crate::firmware::queues::QueueContexts;

/// An EQ's indices.
#[derive(Debug, Clone, Default)]
struct EqState {
    /// Where the next entry goes.
    producer: u32,
    /// Entries posted that the host has not reported popped.
    outstanding: u32,
    /// The next entry fires the interrupt.
    armed: bool,
    /// The EQ's INTx source is active (cleared by a doorbell with CLR).
    asserted: bool,
}

/// A CQ's indices.
#[derive(Debug, Clone, Default)]
struct CqState {
    producer: u32,
    /// Entries written that the host has not reported popped (at most the ring's size).
    outstanding: u32,
    /// The next entry posts an event to the CQ's EQ.
    armed: bool,
    /// Armed for solicited (or error) entries only: CQ doorbell bit 31 (ocrdma
    /// `OCRDMA_DB_CQ_SOLICIT_SHIFT`, spec/datapath.md §2.3 "Arming").
    solicited_only: bool,
}

/// The EQs' and CQs' indices.
#[derive(Debug, Default)]
pub(crate) struct EventEngine {
    eqs: PerQueue<EqState>,
    cqs: PerQueue<CqState>,
}

impl EventEngine {
    /// The indices of EQ `id`, if it exists.
    fn eq(&mut self, q: &QueueContexts, id: u16) -> Option<&mut EqState> {
        let ctx = q.event_queue(id)?;
        Some(self.eqs.get_mut(id, ctx.serial, || EqState { armed: ctx.armed, ..EqState::default() }))
    }

    /// The indices of CQ `id`, if it exists.
    fn cq(&mut self, q: &QueueContexts, id: u16) -> Option<&mut CqState> {
        let ctx = q.cq(id)?;
        Some(self.cqs.get_mut(id, ctx.serial, || CqState { armed: ctx.armed, ..CqState::default() }))
    }

    /// An EQ doorbell: the host popped entries, maybe clears the interrupt, and re-arms or
    /// disarms; a re-arm with entries still outstanding fires at once.
    pub(crate) fn eq_doorbell(&mut self, db: EqDoorbell, env: &mut Env<'_>) {
        let id = db.id();
        let Some(eq) = self.eq(&env.resources.queues, id) else {
            env.miss(QueueKind::Eq, id);
            return;
        };
        eq.outstanding = eq.outstanding.saturating_sub(db.popped().into());
        if db.clear() {
            eq.asserted = false;
        }
        let fire = db.rearm() && eq.outstanding > 0;
        eq.armed = db.rearm() && !fire;
        if fire {
            env.out.fired.push(id);
        }
    }

    /// A CQ doorbell: the host popped entries, and re-arms or disarms the CQ; a re-arm of an
    /// eventable CQ with entries still outstanding posts its event at once instead of arming (as
    /// an EQ fires at once): a completion written while the host's handler had the CQ disarmed,
    /// after it last looked, is not left unannounced.
    pub(crate) fn cq_doorbell(&mut self, db: CqDoorbell, env: &mut Env<'_>) {
        let id = db.id();
        let q = &env.resources.queues;
        let eq = q.cq(id).and_then(|c| c.eq);
        let Some(cq) = self.cq(q, id) else {
            env.miss(QueueKind::Cq, id);
            return;
        };
        cq.outstanding = cq.outstanding.saturating_sub(db.popped().into());
        let event = eq.filter(|_| db.rearm() && cq.outstanding > 0);
        cq.armed = db.rearm() && event.is_none();
        cq.solicited_only = db.rearm() && db.solicited();
        if let Some(eq) = event {
            self.post_event(eq, id, env);
        }
    }

    /// Writes `entry` at the producer index of CQ `cq_id`; an armed, eventable CQ is disarmed and
    /// tells its EQ. A CQ that does not exist (destroyed under a queue still using it) takes
    /// nothing.
    pub(crate) fn post_completion(&mut self, cq_id: u16, entry: &[u8; COMPLETION_LEN], env: &mut Env<'_>) {
        self.post_marked(cq_id, entry, false, env);
    }

    /// [`EventEngine::post_completion`] for an entry that is `solicited` (a solicited receive,
    /// or an error): it also ends a solicited-only arming; other entries do not.
    pub(crate) fn post_marked(&mut self, cq_id: u16, entry: &[u8; COMPLETION_LEN], solicited: bool, env: &mut Env<'_>) {
        let q = &env.resources.queues;
        let Some(ctx) = q.cq(cq_id) else {
            env.miss(QueueKind::Cq, cq_id);
            return;
        };
        let (ring, eq) = (&ctx.ring, ctx.eq);
        let Some(cq) = self.cq(q, cq_id) else { return };
        let at = ring.entry(cq.producer);
        cq.producer = ring.advance(cq.producer, 1);
        cq.outstanding = cq.outstanding.saturating_add(1).min(ring.entries);
        let event = eq.filter(|_| cq.armed && (solicited || !cq.solicited_only));
        if event.is_some() {
            cq.armed = false;
        }
        env.write(at, entry);
        if let Some(eq) = event {
            self.post_event(eq, cq_id, env);
        }
    }

    /// Posts `(cq_id << 16) | 1` to EQ `eq_id`; an armed EQ is disarmed and fires.
    fn post_event(&mut self, eq_id: u16, cq_id: u16, env: &mut Env<'_>) {
        let q = &env.resources.queues;
        let Some(ring) = q.event_queue(eq_id).map(|e| &e.ring) else { return };
        let Some(eq) = self.eq(q, eq_id) else { return };
        let at = ring.entry(eq.producer);
        eq.producer = ring.advance(eq.producer, 1);
        eq.outstanding = eq.outstanding.saturating_add(1);
        let fire = std::mem::replace(&mut eq.armed, false);
        let mut entry = [0u8; EQ_ENTRY_LEN];
        if EqEntry::for_cq(cq_id).encode(&mut Writer::new(&mut entry)).is_ok() {
            env.write(at, &entry);
        }
        if fire {
            env.out.fired.push(eq_id);
        }
    }

    /// EQ `eq_id` fired on INTx: its source is active until a doorbell with CLR.
    pub(crate) fn assert_intx(&mut self, q: &QueueContexts, eq_id: u16) {
        if let Some(eq) = self.eq(q, eq_id) {
            eq.asserted = true;
        }
    }

    /// True when some live EQ drives its INTx source.
    pub(crate) fn intx_asserted(&self, q: &QueueContexts) -> bool {
        self.eqs.iter().any(|(id, serial, eq)| eq.asserted && q.event_queue(id).is_some_and(|c| c.serial == serial))
    }
}
