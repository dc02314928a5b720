//! The RX engine: per RX ring, the receive buffers the host has posted. No frame arrives yet.

use oce_mailbox::doorbells::RqDoorbell;

use super::{Env, PerQueue};
use crate::events::QueueKind;

/// One RX ring's indices.
#[derive(Debug, Clone, Default)]
struct RxRing {
    /// Receive buffers the host has posted.
    posted: u32,
}

/// The RX rings' indices.
#[derive(Debug, Default)]
pub(crate) struct RxEngine {
    rings: PerQueue<RxRing>,
}

impl RxEngine {
    /// The RQ doorbell: the host posted `count` receive buffers on RX ring `id`.
    pub(crate) fn doorbell(&mut self, db: RqDoorbell, env: &mut Env<'_>) {
        let id = db.id();
        let Some(ctx) = env.resources.queues.rxq(id) else {
            env.miss(QueueKind::Rx, id);
            return;
        };
        let ring = self.rings.get_mut(id, ctx.serial, RxRing::default);
        ring.posted = ring.posted.saturating_add(db.count().into());
    }
}
