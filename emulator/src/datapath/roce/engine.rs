//! The device's built-in RoCE engine: one [`oce_roce::rc::Qp`] per RC QP from MODIFY_QP→RTR
//! on, fed from the SQ and RQ rings at their doorbells, from RoCE v1 frames the port receives
//! (by BTH destination QP) and from the timers ([`RoceEngine::poll`]); dropped when the QP is
//! deleted, goes back to RESET/INIT, or the function resets; silent from ERR on
//! (spec/datapath.md §2.3, §3.2).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use oce_mailbox::commands::{QpState, QpType};
use oce_mailbox::entries::{Cqe, cqe_status};
use oce_roce::packet::{EthHeader, Grh, Packet, Vlan};
use oce_roce::rc::{self, QpConfig, Requester};

use super::glue::Glue;
use super::ud::UdEngine;
use super::{QpView, RoceQueues, WorkQueue};
use super::{local, wqe};

/// ocrdma's P_Key: the default partition, the only one it reports (spec/datapath.md §3.1).
const PKEY: u16 = 0xFFFF;
/// `max_inline` ocrdma reports (spec/datapath.md §2.3).
const MAX_INLINE: usize = 224;
/// The GRH's next header for IBA transport (IBTA vol 1 §8.3; spec/datapath.md §2.3 "AV").
const NEXT_HEADER_IBA: u8 = 0x1B;

/// The local ACK timeout of IBTA vol 1 §11.2.4.2: 4.096 µs × 2^code, 0 = none.
fn ack_timeout(code: u8) -> Option<Duration> {
    (code != 0).then(|| Duration::from_nanos(4096u64 << code.min(31)))
}

/// The engine's state of one QP.
#[derive(Debug)]
struct EngineQp {
    rc: rc::Qp,
    /// The firmware state last synchronised.
    seen: QpState,
    sq_consumer: u32,
    rq_consumer: u32,
}

/// What the engine needs of the port: its MAC (every frame's source), the time, and where the
/// frames it sends go.
pub(crate) struct Port<'a> {
    pub(crate) smac: [u8; 6],
    pub(crate) now: Instant,
    pub(crate) frames: &'a mut Vec<Vec<u8>>,
}

/// The RC QPs the engine runs, by QP id, and its UD engine for the GSI and UD QPs.
#[derive(Debug, Default)]
pub(crate) struct RoceEngine {
    qps: BTreeMap<u16, EngineQp>,
    ud: UdEngine,
    /// The time origin the transport's durations count from.
    origin: Option<Instant>,
}

/// MODIFY_QP has moved an RC QP to ERR: every receive it still holds (taken by the transport,
/// or posted and not yet taken) completes with `WR_FLUSH_ERR`, in ring order, and the CQ's event
/// fires when armed. **GUESS** (assumptions/rdma.rs, "Flush"): ocrdma takes such completions
/// from the adapter (`ocrdma_poll_err_rcqe`) besides making its own when polled, and a consumer
/// asleep in `ibv_get_cq_event` (rping's completion thread) wakes only for one from the adapter.
fn flush_receives(e: &mut EngineQp, view: &QpView, queues: &mut dyn RoceQueues) {
    let pending = (view.rq_producer + view.rq_entries - e.rq_consumer) % view.rq_entries.max(1);
    let held = e.rc.recv_queued() as u32 + pending;
    for _ in 0..held {
        let cqe = Cqe::rq(0, 0, view.id, 0, cqe_status::WR_FLUSH_ERR, 0);
        if !queues.post_flush_cqe(view.id, WorkQueue::Rq, &cqe) {
            break;
        }
    }
    e.rq_consumer = view.rq_producer;
}

/// The transport's configuration of an RC QP from its MODIFY_QP attributes.
fn config(view: &QpView, smac: [u8; 6]) -> QpConfig {
    let p = &view.params;
    QpConfig {
        qpn: u32::from(view.id),
        dest_qpn: p.dest_qpn & 0xFF_FFFF,
        pd: u32::from(view.pd_id),
        // With PFC on, ocrdma enables VLAN 0 and puts the SL into the PCP (spec/datapath.md §4.4).
        eth: EthHeader { dst: p.dmac, src: smac, vlan: view.vlan.map(|vid| Vlan { pcp: p.sl & 7, dei: false, vid }) },
        grh: Grh {
            traffic_class: p.traffic_class,
            flow_label: p.flow_label & 0xF_FFFF,
            payload_len: 0,
            next_header: NEXT_HEADER_IBA,
            hop_limit: p.hop_limit,
            sgid: p.sgid,
            dgid: p.dgid,
        },
        pkey: PKEY,
        mtu: usize::from(p.path_mtu),
        sq_psn: p.sq_psn,
        rq_psn: p.rq_psn,
        retry_cnt: p.retry_count,
        rnr_retry: p.rnr_retry,
        min_rnr_timer: p.rnr_nak_timer,
        ack_timeout: ack_timeout(p.ack_timeout),
        max_rd_atomic: p.max_ord.min(u16::from(u8::MAX)) as u8,
        max_send_wr: view.sq_entries as usize,
        max_recv_wr: view.rq_entries as usize,
        max_inline: MAX_INLINE,
        remote_write: view.inbound_write,
        remote_read: view.inbound_read,
    }
}

fn requester(view: &QpView) -> Requester {
    let p = &view.params;
    Requester {
        sq_psn: p.sq_psn,
        retry_cnt: p.retry_count,
        rnr_retry: p.rnr_retry,
        ack_timeout: ack_timeout(p.ack_timeout),
        max_rd_atomic: p.max_ord.min(u16::from(u8::MAX)) as u8,
    }
}

impl RoceEngine {
    /// True while the engine runs no QP: nothing to sync, no timer, no frame to take.
    pub(crate) fn is_idle(&self) -> bool {
        self.qps.is_empty() && self.ud.is_idle()
    }

    fn since(&mut self, now: Instant) -> Duration {
        now.saturating_duration_since(*self.origin.get_or_insert(now))
    }

    /// Brings the engine in line with the QP table after a command: QPs gone or back in
    /// RESET/INIT are dropped, RC QPs at RTR or later are built (and take the RQEs posted
    /// since INIT), RTS gives the requester its attributes, ERR silences.
    pub(crate) fn sync(&mut self, ids: &[u16], queues: &mut dyn RoceQueues, port: &mut Port<'_>) {
        self.ud.sync(ids, queues);
        self.qps.retain(|id, _| {
            queues
                .qp(*id)
                .is_some_and(|v| v.qp_type == QpType::Rc && !matches!(v.state, QpState::Reset | QpState::Init))
        });
        for &id in ids {
            let Some(view) = queues.qp(id).filter(|v| v.qp_type == QpType::Rc) else { continue };
            match view.state {
                QpState::Reset | QpState::Init => {}
                QpState::Err | QpState::Sqe => {
                    if let Some(e) = self.qps.get_mut(&id) {
                        if view.state == QpState::Err && !matches!(e.seen, QpState::Err) {
                            flush_receives(e, &view, queues);
                        }
                        e.rc.set_error();
                        e.seen = view.state;
                    }
                }
                state => {
                    if let std::collections::btree_map::Entry::Vacant(slot) = self.qps.entry(id) {
                        // A QP the transport refuses (dest QPN 0, an MTU IBTA lacks) stays
                        // unmodelled: its SQ doorbells are logged as such.
                        let Ok(rc) = rc::Qp::new(config(&view, port.smac)) else { continue };
                        slot.insert(EngineQp { rc, seen: QpState::Rtr, sq_consumer: 0, rq_consumer: 0 });
                        self.rq_posted(id, queues, port);
                    }
                    let Some(e) = self.qps.get_mut(&id) else { continue };
                    if e.seen == QpState::Rtr && state != QpState::Rtr {
                        // A requester that cannot take the attributes has work queued: it keeps
                        // the ones it started with.
                        let _ = e.rc.set_requester(requester(&view));
                    }
                    e.seen = state;
                }
            }
        }
    }

    /// QP `id`'s SQ has WQEs up to its producer index: each becomes a send work request, or
    /// (unparsable, not modelled, refused) an error CQE after which the QP is silent. A local
    /// operation (FR_MR, LKEY_INV) waits, with everything after it, until every earlier WQE
    /// has completed ([`local`]); [`RoceEngine::receive`] resumes the SQ then. False when the
    /// engine does not run the QP.
    pub(crate) fn sq_posted(&mut self, id: u16, queues: &mut dyn RoceQueues, port: &mut Port<'_>) -> bool {
        if self.ud.runs(id) {
            return self.ud.sq_posted(id, queues, port);
        }
        let now = self.since(port.now);
        let Some(view) = queues.qp(id) else { return false };
        let Some(e) = self.qps.get_mut(&id) else { return false };
        if e.rc.state() == rc::QpState::Error {
            // After its error CQE (or MODIFY→ERR) a QP posts nothing: the driver flushes.
            e.sq_consumer = view.sq_producer;
            return true;
        }
        while e.sq_consumer != view.sq_producer && view.sq_entries > 0 {
            let index = e.sq_consumer;
            let bytes = queues.read_wqe(id, index);
            if let Some(local) = bytes.as_deref().and_then(local::parse) {
                if e.rc.send_queued() > 0 {
                    break;
                }
                e.sq_consumer = (index + 1) % view.sq_entries;
                if !local::run(local, index, &view, queues) {
                    e.rc.set_error();
                    break;
                }
                continue;
            }
            e.sq_consumer = (index + 1) % view.sq_entries;
            let wr = bytes.ok_or(wqe::BadEntry::Size).and_then(|b| wqe::send_wr(&b, index));
            if wr.ok().and_then(|wr| e.rc.post_send(wr).ok()).is_none() {
                queues.post_cqe(id, WorkQueue::Sq, &Cqe::sq(index as u16, 0, id, cqe_status::LOC_QP_OP_ERR), true);
                e.rc.set_error();
                break;
            }
        }
        let mut glue = Glue { queues, qp: id, lkey0: view.lkey0, solicited: false, frames: port.frames };
        e.rc.poll(&mut glue, now);
        true
    }

    /// QP `id`'s RQ has RQEs up to its producer index: each becomes a receive work request, or
    /// an error CQE after which the QP is silent.
    pub(crate) fn rq_posted(&mut self, id: u16, queues: &mut dyn RoceQueues, _port: &mut Port<'_>) -> bool {
        if self.ud.runs(id) {
            return self.ud.rq_posted(id, queues);
        }
        let Some(view) = queues.qp(id) else { return false };
        let Some(e) = self.qps.get_mut(&id) else { return false };
        if e.rc.state() == rc::QpState::Error {
            // After its error CQE (or MODIFY→ERR) a QP posts nothing: the driver flushes.
            e.rq_consumer = view.rq_producer;
            return true;
        }
        while e.rq_consumer != view.rq_producer && view.rq_entries > 0 {
            let index = e.rq_consumer;
            e.rq_consumer = (index + 1) % view.rq_entries;
            let wr = queues.read_rqe(id, index).ok_or(wqe::BadEntry::Size).and_then(|b| wqe::recv_wr(&b));
            if wr.ok().and_then(|wr| e.rc.post_recv(wr).ok()).is_none() {
                queues.post_cqe(id, WorkQueue::Rq, &Cqe::rq(0, 0, id, 0, cqe_status::LOC_QP_OP_ERR, 0), true);
                e.rc.set_error();
                break;
            }
        }
        true
    }

    /// A RoCE v1 frame from the port: to the QP its BTH names. False when it names no QP the
    /// engine runs or does not decode (ICRC included).
    pub(crate) fn receive(&mut self, frame: &[u8], queues: &mut dyn RoceQueues, port: &mut Port<'_>) -> bool {
        let now = self.since(port.now);
        let Ok(pkt) = Packet::decode(frame) else { return false };
        if pkt.bth.opcode.is_ud() {
            return self.ud.receive(&pkt, queues).is_ok();
        }
        let Ok(id) = u16::try_from(pkt.bth.dest_qpn) else { return false };
        let Some(view) = queues.qp(id) else { return false };
        let Some(e) = self.qps.get_mut(&id) else { return false };
        let mut glue = Glue { queues, qp: id, lkey0: view.lkey0, solicited: pkt.bth.solicited, frames: port.frames };
        e.rc.receive(&mut glue, &pkt, now);
        glue.solicited = false;
        e.rc.poll(&mut glue, now);
        // A local operation waiting for the WQEs this packet completed goes now.
        if e.sq_consumer != view.sq_producer && e.rc.send_queued() == 0 {
            self.sq_posted(id, queues, port);
        }
        true
    }

    /// Runs the timers (RNR wait, ACK timeout) that are due; returns when the next one is.
    pub(crate) fn poll(&mut self, queues: &mut dyn RoceQueues, port: &mut Port<'_>) -> Option<Instant> {
        let now = self.since(port.now);
        let origin = self.origin?;
        let mut next: Option<Duration> = None;
        for (&id, e) in &mut self.qps {
            if e.rc.deadline().is_some_and(|d| d <= now) {
                let lkey0 = queues.qp(id).is_some_and(|v| v.lkey0);
                let mut glue = Glue { queues, qp: id, lkey0, solicited: false, frames: port.frames };
                e.rc.poll(&mut glue, now);
            }
            next = match (next, e.rc.deadline()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        next.map(|d| origin + d)
    }
}
