//! One reliable-connected QP — requester, responder and completer — on a lossless, in-order
//! wire (`spec/datapath.md` §3.2), as a state machine without threads or clocks.
//!
//! The caller owns the QP and an [`Env`]. It posts work with [`Qp::post_send`] and
//! [`Qp::post_recv`], hands every packet addressed to the QP to [`Qp::receive`] (after
//! [`crate::packet::Packet::decode`] and a lookup by BTH destination QP), and calls [`Qp::poll`]
//! after posting and whenever the time reaches [`Qp::deadline`]: that sends queued work and runs
//! the RNR and retransmit timers. Time is a [`Duration`] since any origin the caller keeps.
//!
//! After an error completion, a NAK that moves the QP to error, or [`Qp::set_error`], the QP
//! emits nothing more: no packet, no completion (`spec/datapath.md` §2.3: the driver flushes).

mod completer;
mod requester;
mod responder;
pub(crate) mod sgl;
mod types;

use std::collections::VecDeque;
use std::time::Duration;

pub use types::{
    Access, Completion, Data, Env, MemError, MemRef, QpConfig, QpEvent, QpState, RecvWr, Remote, Requester, SendKind,
    SendOp, SendWr, Sge, Status,
};

use crate::Error;
use crate::packet::{Aeth, Bth, MASK_24, Opcode, Packet, Reth};

/// `a + n` in the 24-bit PSN space.
pub(crate) fn psn_add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & MASK_24
}

/// The PSN before `a`.
pub(crate) fn psn_prev(a: u32) -> u32 {
    a.wrapping_sub(1) & MASK_24
}

/// `a - b` in the 24-bit PSN space, as a signed distance (IBTA vol 1 §9.7.1: half the space
/// ahead, half behind).
pub(crate) fn psn_diff(a: u32, b: u32) -> i32 {
    (a.wrapping_sub(b) << 8) as i32 >> 8
}

/// A posted send work request and its place in the PSN space.
#[derive(Debug)]
struct SqEntry {
    wr: SendWr,
    /// Message length in bytes.
    len: u32,
    /// Packets of the message (READ: response packets; the request takes as many PSNs).
    npkts: u32,
    /// PSN of its first packet, set when it is first sent.
    first_psn: u32,
    /// READ response packets received so far.
    read_done: u32,
}

impl SqEntry {
    fn is_read(&self) -> bool {
        matches!(self.wr.op, SendOp::Read(_))
    }
    fn last_psn(&self) -> u32 {
        psn_add(self.first_psn, self.npkts - 1)
    }
    fn contains(&self, psn: u32) -> bool {
        let d = psn_diff(psn, self.first_psn);
        d >= 0 && (d as u32) < self.npkts
    }
    fn kind(&self) -> SendKind {
        match self.wr.op {
            SendOp::Send | SendOp::SendImm(_) | SendOp::SendInv(_) => SendKind::Send,
            SendOp::Write(_) | SendOp::WriteImm(..) => SendKind::Write,
            SendOp::Read(_) => SendKind::Read,
        }
    }
}

/// The message the responder is in the middle of.
#[derive(Debug)]
enum Incoming {
    Send { rqe: RecvWr, offset: u32 },
    Write { reth: Reth, offset: u32 },
}

/// The extended headers and flags of one outgoing packet.
#[derive(Debug, Default)]
struct Headers {
    reth: Option<Reth>,
    aeth: Option<Aeth>,
    imm: Option<u32>,
    ieth: Option<u32>,
    solicited: bool,
    ack_req: bool,
}

/// One RC queue pair. See the module documentation for how the caller drives it.
#[derive(Debug)]
pub struct Qp {
    cfg: QpConfig,
    state: QpState,
    // Requester and completer.
    sq: VecDeque<SqEntry>,
    /// Index in `sq` of the next entry to (re)transmit, and the packet within it.
    next: usize,
    next_pkt: u32,
    /// The PSN the next new packet takes.
    psn: u32,
    retry_left: u8,
    rnr_left: u8,
    /// Sending waits until then after an RNR NAK.
    rnr_until: Option<Duration>,
    /// When the oldest unacknowledged packet times out.
    ack_deadline: Option<Duration>,
    // Responder.
    rq: VecDeque<RecvWr>,
    epsn: u32,
    msn: u32,
    incoming: Option<Incoming>,
    /// A NAK was sent for `epsn`: further out-of-sequence packets are dropped silently.
    nak_sent: bool,
    // Scratch buffers, kept to avoid an allocation per packet.
    tx: Vec<u8>,
    buf: Vec<u8>,
}

impl Qp {
    /// A QP in the ready state (RTS) with `cfg`; refuses an MTU IBTA does not define and QP
    /// numbers that are 0 or wider than 24 bits.
    pub fn new(cfg: QpConfig) -> Result<Self, Error> {
        if ![256, 512, 1024, 2048, 4096].contains(&cfg.mtu) {
            return Err(Error::Mtu(cfg.mtu));
        }
        for qpn in [cfg.qpn, cfg.dest_qpn] {
            if qpn == 0 || qpn > MASK_24 {
                return Err(Error::Qpn(qpn));
            }
        }
        Ok(Qp {
            state: QpState::Ready,
            sq: VecDeque::new(),
            next: 0,
            next_pkt: 0,
            psn: cfg.sq_psn & MASK_24,
            retry_left: cfg.retry_cnt,
            rnr_left: cfg.rnr_retry,
            rnr_until: None,
            ack_deadline: None,
            rq: VecDeque::new(),
            epsn: cfg.rq_psn & MASK_24,
            msn: 0,
            incoming: None,
            nak_sent: false,
            tx: Vec::new(),
            buf: Vec::new(),
            cfg,
        })
    }

    pub fn qpn(&self) -> u32 {
        self.cfg.qpn
    }

    pub fn state(&self) -> QpState {
        self.state
    }

    /// Moves the QP to error (MODIFY_QP to ERR): it emits nothing more.
    pub fn set_error(&mut self) {
        self.state = QpState::Error;
    }

    /// RTR→RTS: the requester's attributes, which a driver gives only at RTS (IBTA vol 1
    /// §11.2.5: `sq_psn`, `timeout`, `retry_cnt`, `rnr_retry`, `max_rd_atomic`) while the
    /// responder may already have taken packets at RTR. Refused (`Error::QpError`) once the QP
    /// has send work queued or is in error: the requester must not change under a message.
    pub fn set_requester(&mut self, r: Requester) -> Result<(), Error> {
        if self.state == QpState::Error || !self.sq.is_empty() {
            return Err(Error::QpError { qpn: self.cfg.qpn });
        }
        self.cfg.sq_psn = r.sq_psn & MASK_24;
        self.cfg.retry_cnt = r.retry_cnt;
        self.cfg.rnr_retry = r.rnr_retry;
        self.cfg.ack_timeout = r.ack_timeout;
        self.cfg.max_rd_atomic = r.max_rd_atomic;
        self.psn = self.cfg.sq_psn;
        self.retry_left = r.retry_cnt;
        self.rnr_left = r.rnr_retry;
        Ok(())
    }

    /// The PSN the next new request packet takes.
    pub fn next_psn(&self) -> u32 {
        self.psn
    }

    /// The PSN the responder expects next.
    pub fn expected_psn(&self) -> u32 {
        self.epsn
    }

    /// Send work requests posted and not yet completed.
    pub fn send_queued(&self) -> usize {
        self.sq.len()
    }

    /// Receive work requests posted and not yet consumed.
    pub fn recv_queued(&self) -> usize {
        self.rq.len()
    }

    /// The next time [`Qp::poll`] has timer work to do, if any.
    pub fn deadline(&self) -> Option<Duration> {
        if self.state == QpState::Error {
            return None;
        }
        match (self.rnr_until, self.ack_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Queues a receive work request.
    pub fn post_recv(&mut self, wr: RecvWr) -> Result<(), Error> {
        if self.state == QpState::Error {
            return Err(Error::QpError { qpn: self.cfg.qpn });
        }
        if self.rq.len() >= self.cfg.max_recv_wr {
            return Err(Error::QueueFull { queue: "receive", limit: self.cfg.max_recv_wr });
        }
        self.rq.push_back(wr);
        Ok(())
    }

    /// Handles one packet addressed to this QP: a request for the responder (which answers at
    /// once: ACK, NAK or READ responses), an ACK, NAK or READ response for the completer.
    /// Packets for another QP and UD packets are ignored. Work the packet unblocks on the send
    /// side (after an ACK, a completed READ, a NAK's go-back) goes out at the next [`Qp::poll`]:
    /// call it after each batch of received packets.
    pub fn receive<E: Env>(&mut self, env: &mut E, pkt: &Packet<'_>, now: Duration) {
        if self.state == QpState::Error || pkt.bth.dest_qpn != self.cfg.qpn || pkt.bth.opcode.is_ud() {
            return;
        }
        use crate::packet::Operation;
        match pkt.bth.opcode.operation() {
            Operation::Ack | Operation::ReadResponse => self.on_response(env, pkt, now),
            Operation::Send | Operation::Write | Operation::ReadRequest => self.on_request(env, pkt),
        }
    }

    /// Encodes and transmits one packet of this QP. Our own packets always follow the opcode
    /// table; if one ever did not, the QP stops rather than send a malformed frame.
    fn emit<E: Env>(&mut self, env: &mut E, opcode: Opcode, psn: u32, h: Headers, payload: &[u8]) {
        let pkt = Packet {
            eth: self.cfg.eth,
            grh: self.cfg.grh,
            bth: Bth {
                opcode,
                solicited: h.solicited,
                mig_req: false,
                pad: 0,
                tver: 0,
                pkey: self.cfg.pkey,
                fecn: false,
                becn: false,
                dest_qpn: self.cfg.dest_qpn,
                ack_req: h.ack_req,
                psn,
            },
            deth: None,
            reth: h.reth,
            aeth: h.aeth,
            imm: h.imm.map(crate::packet::ImmDt),
            ieth: h.ieth.map(|rkey| crate::packet::Ieth { rkey }),
            payload,
        };
        self.tx.clear();
        if pkt.encode(&mut self.tx).is_err() {
            self.state = QpState::Error;
            return;
        }
        env.transmit(&self.tx);
    }

    /// Packets a message of `len` bytes takes at the path MTU (at least one).
    fn packets_for(&self, len: u32) -> u32 {
        len.div_ceil(self.cfg.mtu as u32).max(1)
    }
}
