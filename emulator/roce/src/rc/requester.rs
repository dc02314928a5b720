//! The requester: turns posted send work requests into packets at the path MTU, and runs the
//! RNR and retransmit timers (`spec/datapath.md` §3.2).

use std::time::Duration;

use super::{
    Completion, Data, Env, Headers, Qp, QpState, Remote, SendOp, SendWr, SqEntry, Status, psn_add, psn_diff, sgl,
};
use crate::Error;
use crate::packet::{Opcode, Position, Reth};

/// The largest message IBTA allows (vol 1 §9.4.1: 2^31 bytes).
const MAX_MESSAGE: u64 = 1 << 31;

impl Qp {
    /// Queues a send work request; [`Qp::poll`] transmits it.
    pub fn post_send(&mut self, wr: SendWr) -> Result<(), Error> {
        if self.state == QpState::Error {
            return Err(Error::QpError { qpn: self.cfg.qpn });
        }
        if self.sq.len() >= self.cfg.max_send_wr {
            return Err(Error::QueueFull { queue: "send", limit: self.cfg.max_send_wr });
        }
        let is_read = matches!(wr.op, SendOp::Read(_));
        if is_read && self.cfg.max_rd_atomic == 0 {
            return Err(Error::NoReadCredits { qpn: self.cfg.qpn });
        }
        let len = match &wr.data {
            Data::Inline(_) if is_read => return Err(Error::InlineRead),
            Data::Inline(bytes) if bytes.len() > self.cfg.max_inline => {
                return Err(Error::InlineTooLong { len: bytes.len(), limit: self.cfg.max_inline });
            }
            Data::Inline(bytes) => bytes.len() as u64,
            Data::Sges(sges) => sgl::total(sges),
        };
        if len > MAX_MESSAGE {
            return Err(Error::MessageTooLong(len));
        }
        let len = len as u32;
        let npkts = self.packets_for(len);
        self.sq.push_back(SqEntry { wr, len, npkts, first_psn: 0, read_done: 0 });
        Ok(())
    }

    /// Transmits queued work and runs the timers at time `now`.
    pub fn poll<E: Env>(&mut self, env: &mut E, now: Duration) {
        if self.state == QpState::Error {
            return;
        }
        if let Some(t) = self.rnr_until {
            if now < t {
                return;
            }
            self.rnr_until = None;
        }
        if self.ack_deadline.is_some_and(|d| now >= d) {
            if self.retry_left == 0 {
                self.fail_head(env, Status::RetryExcErr);
                return;
            }
            self.retry_left -= 1;
            self.ack_deadline = None;
            let una = self.sq.front().map(|e| psn_add(e.first_psn, e.read_done));
            if let Some(p) = una {
                self.rewind(p);
            }
        }
        while self.state == QpState::Ready && self.next < self.sq.len() {
            if self.next_pkt == 0 && !self.may_start(self.next) {
                break;
            }
            self.send_next(env);
            if self.ack_deadline.is_none() {
                self.ack_deadline = self.cfg.ack_timeout.map(|t| now + t);
            }
        }
    }

    /// Whether the entry at `idx` may start: ORD bounds outstanding READs, and a fenced entry
    /// waits for every earlier READ.
    fn may_start(&self, idx: usize) -> bool {
        let reads = self.sq.iter().take(idx).filter(|e| e.is_read()).count();
        let e = &self.sq[idx];
        if e.is_read() && reads >= usize::from(self.cfg.max_rd_atomic) {
            return false;
        }
        !(e.wr.fence && reads > 0)
    }

    /// Sends one packet of the entry at `self.next` (a READ request covers the whole rest).
    fn send_next<E: Env>(&mut self, env: &mut E) {
        let idx = self.next;
        let k = self.next_pkt;
        if k == 0 {
            self.sq[idx].first_psn = self.psn;
        }
        let e = &self.sq[idx];
        let mtu = self.cfg.mtu as u32;
        let psn = psn_add(e.first_psn, k);
        if let SendOp::Read(Remote { addr, rkey }) = e.wr.op {
            // A READ request asks for the rest of the message from packet k on.
            let done = k * mtu;
            let reth = Reth { va: addr.wrapping_add(u64::from(done)), rkey, dma_len: e.len - done.min(e.len) };
            let h = Headers { reth: Some(reth), ack_req: true, ..Headers::default() };
            self.psn = psn_add(e.first_psn, e.npkts);
            self.next += 1;
            self.next_pkt = 0;
            self.emit(env, Opcode::RcReadRequest, psn, h, &[]);
            return;
        }
        let offset = k * mtu;
        let n = (e.len - offset).min(mtu) as usize;
        let pos = match (k == 0, k + 1 == e.npkts) {
            (true, true) => Position::Only,
            (true, false) => Position::First,
            (false, true) => Position::Last,
            (false, false) => Position::Middle,
        };
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(n, 0);
        let gathered = match &e.wr.data {
            Data::Inline(bytes) => {
                buf.copy_from_slice(&bytes[offset as usize..offset as usize + n]);
                Ok(())
            }
            Data::Sges(sges) => sgl::gather(env, self.cfg.pd, sges, u64::from(offset), &mut buf),
        };
        if gathered.is_err() {
            self.buf = buf;
            self.fail_entry(env, idx, Status::LocProtErr);
            return;
        }
        let (opcode, h) = request_headers(&e.wr, pos, e.len);
        self.psn = psn_add(psn, 1);
        self.next_pkt += 1;
        if self.next_pkt == e.npkts {
            self.next += 1;
            self.next_pkt = 0;
        }
        self.emit(env, opcode, psn, h, &buf);
        self.buf = buf;
    }

    /// Goes back to PSN `p`: the next packet sent is the one `p` names, and the ones after it.
    pub(super) fn rewind(&mut self, p: u32) {
        let sent = self.next + usize::from(self.next_pkt > 0);
        if let Some(i) = self.sq.iter().take(sent).position(|e| e.contains(p)) {
            self.next = i;
            self.next_pkt = psn_diff(p, self.sq[i].first_psn) as u32;
            self.psn = p;
        }
    }

    /// Completes the oldest entry with an error status and moves the QP to error.
    pub(super) fn fail_head<E: Env>(&mut self, env: &mut E, status: Status) {
        self.fail_entry(env, 0, status);
    }

    /// Completes entry `idx` with an error status and moves the QP to error: the last thing
    /// this QP reports.
    pub(super) fn fail_entry<E: Env>(&mut self, env: &mut E, idx: usize, status: Status) {
        if let Some(e) = self.sq.get(idx) {
            env.complete(self.cfg.qpn, Completion::Send { wr_id: e.wr.wr_id, kind: e.kind(), byte_len: 0, status });
        }
        self.state = QpState::Error;
    }
}

/// The opcode and headers of a SEND or WRITE packet at `pos` in its message.
fn request_headers(wr: &SendWr, pos: Position, len: u32) -> (Opcode, Headers) {
    use Opcode::*;
    let last = pos.ends();
    let mut h = Headers { ack_req: last, solicited: last && wr.solicited, ..Headers::default() };
    let opcode = match (wr.op, pos) {
        (SendOp::Send | SendOp::SendImm(_) | SendOp::SendInv(_), Position::First) => RcSendFirst,
        (SendOp::Send | SendOp::SendImm(_) | SendOp::SendInv(_), Position::Middle) => RcSendMiddle,
        (SendOp::Send, Position::Last) => RcSendLast,
        (SendOp::Send, _) => RcSendOnly,
        (SendOp::SendImm(imm), p) => {
            h.imm = Some(imm);
            if p == Position::Last { RcSendLastImm } else { RcSendOnlyImm }
        }
        (SendOp::SendInv(rkey), p) => {
            h.ieth = Some(rkey);
            if p == Position::Last { RcSendLastInv } else { RcSendOnlyInv }
        }
        (SendOp::Write(_) | SendOp::WriteImm(..), Position::Middle) => RcWriteMiddle,
        (SendOp::Write(r) | SendOp::WriteImm(r, _), Position::First) => {
            h.reth = Some(Reth { va: r.addr, rkey: r.rkey, dma_len: len });
            RcWriteFirst
        }
        (SendOp::Write(_), Position::Last) => RcWriteLast,
        (SendOp::Write(r), _) => {
            h.reth = Some(Reth { va: r.addr, rkey: r.rkey, dma_len: len });
            RcWriteOnly
        }
        (SendOp::WriteImm(_, imm), Position::Last) => {
            h.imm = Some(imm);
            RcWriteLastImm
        }
        (SendOp::WriteImm(r, imm), _) => {
            h.imm = Some(imm);
            h.reth = Some(Reth { va: r.addr, rkey: r.rkey, dma_len: len });
            RcWriteOnlyImm
        }
        // A READ never reaches here: `send_next` builds its request itself.
        (SendOp::Read(_), _) => RcReadRequest,
    };
    (opcode, h)
}
