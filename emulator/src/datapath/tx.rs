//! The TX engine (spec/datapath.md §1.1): per TX ring, the WRBs posted and the next request.
//!
//! A request is a header WRB followed by `num_wrb − 1` fragment WRBs (be2net's zero-length
//! padding WRB among them). When all its WRBs are posted and the wire is ready, the engine
//! gathers the fragments in order, checks that they add up to the header's length, applies the
//! offloads the header asks for ([`frame::offload`]: VLAN insertion, checksums, TSO), puts the
//! frames on the wire and, if the header has `complete`, writes one TX completion naming the
//! request's last WRB (be2net frees every WRB from its ring tail up to that index). A request
//! that cannot be sent is completed all the same, with the status that says why:
//! HDR_PARSE_ERR for headers the offloads cannot work on or a length that does not add up,
//! NDMA_ERR for a fragment the device cannot read ([`crate::assumptions`], "datapath").
//!
//! While the wire is not ready (the peer's queue is above its watermark) the next request's
//! WRBs stay posted: the ring is marked stalled and [`TxEngine::resume`] sends on later.

use oce_mailbox::doorbells::TxDoorbell;
use oce_mailbox::entries::{TX_COMPLETION_LEN, TX_WRB_LEN, TxCompletion, TxFragmentWrb, TxHeaderWrb, TxStatus};
use oce_mailbox::wire::{Reader, Wire as _, Writer};

use super::frame::ETH_HEADER_LEN;
use super::frame::offload::{self, Offloads};
use super::{Counters, Env, EventEngine, PerQueue, Wire};
use crate::events::QueueKind;

/// The port a TX engine sends through.
pub(crate) struct TxPort<'a> {
    /// The cable, if one is plugged in; without one, frames leave into nothing.
    pub(crate) wire: Option<&'a mut (dyn Wire + 'static)>,
    pub(crate) counters: &'a mut Counters,
    /// The logical link is up: frames sent while it is down are dropped.
    pub(crate) link_up: bool,
}

/// One TX ring's indices.
#[derive(Debug, Clone, Default)]
struct TxRing {
    consumer: u32,
    /// WRBs posted and not yet sent.
    posted: u32,
    /// The next request waits for the wire.
    stalled: bool,
}

/// What became of the request at a ring's consumer index.
enum Step {
    /// Sent (or refused) and consumed.
    Done,
    /// Not all its WRBs are posted, or nothing is.
    Wait,
    /// The wire is not ready.
    Stalled,
}

/// The TX rings' indices.
#[derive(Debug, Default)]
pub(crate) struct TxEngine {
    rings: PerQueue<TxRing>,
}

impl TxEngine {
    /// The TX doorbell: `count` more WRBs are posted on TX ring `id`; send every request whose
    /// WRBs are all posted, while the wire is ready.
    pub(crate) fn doorbell(
        &mut self,
        db: TxDoorbell,
        env: &mut Env<'_>,
        events: &mut EventEngine,
        port: &mut TxPort<'_>,
    ) {
        let id = db.id();
        let Some(ctx) = env.resources.queues.txq(id) else {
            env.miss(QueueKind::Tx, id);
            return;
        };
        let ring = self.rings.get_mut(id, ctx.serial, TxRing::default);
        ring.posted = ring.posted.saturating_add(db.count().into()).min(ctx.ring.entries);
        self.run(id, env, events, port);
    }

    /// Sends on every ring the wire held back, while it is ready.
    pub(crate) fn resume(&mut self, env: &mut Env<'_>, events: &mut EventEngine, port: &mut TxPort<'_>) {
        let stalled: Vec<u16> = (self.rings.iter())
            .filter(|(id, serial, r)| r.stalled && env.resources.queues.txq(*id).is_some_and(|c| c.serial == *serial))
            .map(|(id, _, _)| id)
            .collect();
        for id in stalled {
            if port.wire.as_ref().is_some_and(|w| !w.ready()) {
                return;
            }
            self.run(id, env, events, port);
        }
    }

    /// True when some ring waits for the wire.
    pub(crate) fn stalled(&self) -> bool {
        self.rings.iter().any(|(_, _, r)| r.stalled)
    }

    fn run(&mut self, id: u16, env: &mut Env<'_>, events: &mut EventEngine, port: &mut TxPort<'_>) {
        while let Step::Done = self.send_request(id, env, events, port) {}
    }

    /// Sends the request at the consumer index of TX ring `id`.
    fn send_request(&mut self, id: u16, env: &mut Env<'_>, events: &mut EventEngine, port: &mut TxPort<'_>) -> Step {
        let Some(ctx) = env.resources.queues.txq(id) else { return Step::Wait };
        let ring = self.rings.get_mut(id, ctx.serial, TxRing::default);
        ring.stalled = false;
        if ring.posted == 0 {
            return Step::Wait;
        }
        let mut raw = [0u8; TX_WRB_LEN];
        if !env.read(ctx.ring.entry(ring.consumer), &mut raw) {
            // The ring cannot be read: what was posted is dropped.
            ring.posted = 0;
            return Step::Wait;
        }
        let Ok(header) = TxHeaderWrb::decode(&mut Reader::new(&raw)) else { return Step::Wait };
        let wrbs = u32::from(header.num_wrb().max(1));
        if wrbs > ring.posted {
            return Step::Wait;
        }
        if port.link_up && port.wire.as_ref().is_some_and(|w| !w.ready()) {
            ring.stalled = true;
            return Step::Stalled;
        }
        let first = ring.consumer;
        let last = ctx.ring.advance(first, wrbs - 1);
        ring.consumer = ctx.ring.advance(first, wrbs);
        ring.posted -= wrbs;
        let fragments: Vec<u64> = (1..wrbs).map(|k| ctx.ring.entry(ctx.ring.advance(first, k))).collect();
        let status = transmit(header, &fragments, env, id, port);
        let counters = port.counters.tx(id);
        counters.requests += 1;
        match status {
            TxStatus::HeaderParseError => counters.header_parse_errors += 1,
            TxStatus::DmaError => counters.dma_errors += 1,
            _ => {}
        }
        if header.complete() {
            let completion = TxCompletion { wrb_index: last as u16, status: status.raw(), ring_id: id, valid: true };
            let mut bytes = [0u8; TX_COMPLETION_LEN];
            if completion.encode(&mut Writer::new(&mut bytes)).is_ok() {
                events.post_completion(ctx.cq, &bytes, env);
            }
        }
        Step::Done
    }
}

/// The largest frame a request can describe: the header's 16-bit `len`.
const MAX_REQUEST_LEN: usize = u16::MAX as usize;

/// Gathers the request's fragments (the WRBs at `fragments`), applies its offloads and sends
/// the frames; the completion status.
fn transmit(header: TxHeaderWrb, fragments: &[u64], env: &mut Env<'_>, id: u16, port: &mut TxPort<'_>) -> TxStatus {
    let mut frame = Vec::with_capacity(usize::from(header.frame_len()));
    for &at in fragments {
        let mut raw = [0u8; TX_WRB_LEN];
        if !env.read(at, &mut raw) {
            return TxStatus::DmaError;
        }
        let Ok(frag) = TxFragmentWrb::decode(&mut Reader::new(&raw)) else { return TxStatus::HeaderParseError };
        if frag.is_empty() {
            continue;
        }
        let start = frame.len();
        if start + usize::from(frag.len) > MAX_REQUEST_LEN {
            return TxStatus::HeaderParseError;
        }
        frame.resize(start + usize::from(frag.len), 0);
        if !env.read(frag.address, &mut frame[start..]) {
            return TxStatus::DmaError;
        }
    }
    if frame.len() != usize::from(header.frame_len()) || frame.len() < ETH_HEADER_LEN {
        return TxStatus::HeaderParseError;
    }
    if header.mgmt() {
        // An OS-to-BMC copy is for the management controller, never for the wire.
        port.counters.tx(id).bmc_copies += 1;
        return TxStatus::Sent;
    }
    let offloads = Offloads {
        vlan: header.vlan().then(|| header.vlan_tag()),
        ip_checksum: header.ipcs(),
        tcp_checksum: header.tcpcs(),
        udp_checksum: header.udpcs(),
        lso_mss: header.lso().then(|| header.lso_mss()),
    };
    let Ok(frames) = offload::apply(frame, offloads) else { return TxStatus::HeaderParseError };
    let counters = port.counters.tx(id);
    if !port.link_up {
        counters.link_down_drops += frames.len() as u64;
        return TxStatus::Sent;
    }
    for f in &frames {
        counters.frames += 1;
        counters.bytes += f.len() as u64;
        if let Some(wire) = port.wire.as_mut() {
            wire.send(f);
        }
    }
    TxStatus::Sent
}
