//! The TX engine: per TX ring, the WRBs posted and the next request to send. A request is a
//! header WRB (`num_wrb`, at least 1, counts the header, the fragments and be2net's padding WRB)
//! followed by its fragment WRBs. A request with the header's `complete` bit gets one TX
//! completion naming its last WRB, status 0: be2net frees every WRB from its ring tail up to that
//! index. The frame is dropped.

use oce_mailbox::doorbells::TxDoorbell;
use oce_mailbox::entries::{TX_COMPLETION_LEN, TX_WRB_LEN, TxCompletion, TxHeaderWrb};
use oce_mailbox::wire::{Reader, Wire, Writer};

use super::{Env, EventEngine, PerQueue};
use crate::events::QueueKind;

/// One TX ring's indices.
#[derive(Debug, Clone, Default)]
struct TxRing {
    consumer: u32,
    /// WRBs posted and not yet sent.
    posted: u32,
}

/// The TX rings' indices.
#[derive(Debug, Default)]
pub(crate) struct TxEngine {
    rings: PerQueue<TxRing>,
}

impl TxEngine {
    /// The TX doorbell: `count` more WRBs are posted on TX ring `id`; send (drop) every request
    /// whose WRBs are all posted.
    pub(crate) fn doorbell(&mut self, db: TxDoorbell, env: &mut Env<'_>, events: &mut EventEngine) {
        let id = db.id();
        let Some(ctx) = env.resources.queues.txq(id) else {
            env.miss(QueueKind::Tx, id);
            return;
        };
        let ring = self.rings.get_mut(id, ctx.serial, TxRing::default);
        ring.posted = ring.posted.saturating_add(db.count().into()).min(ctx.ring.entries);
        while self.send_request(id, env, events) {}
    }

    /// Sends the request at the consumer index of TX ring `id`, if all its WRBs are posted;
    /// returns whether one was sent.
    fn send_request(&mut self, id: u16, env: &mut Env<'_>, events: &mut EventEngine) -> bool {
        let Some(ctx) = env.resources.queues.txq(id) else { return false };
        let ring = self.rings.get_mut(id, ctx.serial, TxRing::default);
        if ring.posted == 0 {
            return false;
        }
        let at = ctx.ring.entry(ring.consumer);
        let mut raw = [0u8; TX_WRB_LEN];
        if !env.read(at, &mut raw) {
            // The ring cannot be read: what was posted is dropped.
            ring.posted = 0;
            return false;
        }
        let Ok(header) = TxHeaderWrb::decode(&mut Reader::new(&raw)) else { return false };
        let wrbs = u32::from(header.num_wrb().max(1));
        if wrbs > ring.posted {
            return false;
        }
        let last = ctx.ring.advance(ring.consumer, wrbs - 1);
        ring.consumer = ctx.ring.advance(ring.consumer, wrbs);
        ring.posted -= wrbs;
        if header.complete() {
            let completion = TxCompletion { wrb_index: last as u16, status: 0, ring_id: id, valid: true };
            let mut bytes = [0u8; TX_COMPLETION_LEN];
            if completion.encode(&mut Writer::new(&mut bytes)).is_ok() {
                events.post_completion(ctx.cq, &bytes, env);
            }
        }
        true
    }
}
