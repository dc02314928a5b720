//! The completer: ACKs, NAKs and READ responses retire send work requests in order
//! (`spec/datapath.md` §3.2).

use std::time::Duration;

use super::{Completion, Env, Qp, Status, psn_add, psn_diff, psn_prev, sgl};
use crate::packet::{NakCode, Opcode, Packet, Syndrome, rnr_timer};

/// `rnr_retry` 7 means retry forever (IBTA vol 1 §9.7.5.2.8).
const RNR_RETRY_FOREVER: u8 = 7;

impl Qp {
    /// Handles an ACK, NAK or READ response.
    pub(super) fn on_response<E: Env>(&mut self, env: &mut E, pkt: &Packet<'_>, now: Duration) {
        let p = pkt.bth.psn;
        if pkt.bth.opcode != Opcode::RcAck {
            self.on_read_response(env, pkt, now);
            return;
        }
        let Some(aeth) = pkt.aeth else { return };
        match aeth.syndrome {
            Syndrome::Ack { .. } => self.ack_through(env, p, now),
            Syndrome::RnrNak { timer } => {
                // A NAK acknowledges every packet before the one it names.
                self.ack_through(env, psn_prev(p), now);
                if !self.head_contains(p) {
                    return;
                }
                if self.cfg.rnr_retry != RNR_RETRY_FOREVER {
                    if self.rnr_left == 0 {
                        self.fail_head(env, Status::RnrRetryExcErr);
                        return;
                    }
                    self.rnr_left -= 1;
                }
                self.rewind(p);
                self.rnr_until = Some(now + rnr_timer(timer));
                // The retransmit timer rests while the requester waits; sending restarts it.
                self.ack_deadline = None;
            }
            Syndrome::Nak(code) => {
                self.ack_through(env, psn_prev(p), now);
                if !self.head_contains(p) {
                    return;
                }
                let status = match code {
                    NakCode::PsnSequenceError => {
                        if self.retry_left > 0 {
                            self.retry_left -= 1;
                            self.rewind(p);
                            return;
                        }
                        Status::RetryExcErr
                    }
                    NakCode::RemoteAccessError => Status::RemAccessErr,
                    NakCode::InvalidRequest | NakCode::InvalidRdRequest => Status::RemInvReqErr,
                    NakCode::RemoteOperationalError | NakCode::Unknown(_) => Status::RemOpErr,
                };
                self.fail_head(env, status);
            }
            Syndrome::Reserved(_) => {}
        }
    }

    /// Whether `p` falls in the oldest outstanding, already sent entry.
    fn head_contains(&self, p: u32) -> bool {
        (self.next > 0 || self.next_pkt > 0) && self.sq.front().is_some_and(|e| e.contains(p))
    }

    /// Completes, in order, every sent SEND and WRITE whose last packet is at or before `p`;
    /// stops at a READ, which completes on its last response.
    fn ack_through<E: Env>(&mut self, env: &mut E, p: u32, now: Duration) {
        let mut progress = false;
        while self.next > 0 {
            let Some(e) = self.sq.front() else { break };
            if e.is_read() || psn_diff(e.last_psn(), p) > 0 {
                break;
            }
            self.retire(env, Status::Success);
            progress = true;
        }
        if progress {
            self.made_progress(now);
        }
    }

    /// Pops the oldest entry and reports it if signaled (or not a success).
    fn retire<E: Env>(&mut self, env: &mut E, status: Status) {
        if let Some(e) = self.sq.pop_front() {
            if e.wr.signaled || status != Status::Success {
                env.complete(
                    self.cfg.qpn,
                    Completion::Send { wr_id: e.wr.wr_id, kind: e.kind(), byte_len: e.len, status },
                );
            }
            self.next -= 1;
        }
    }

    /// Something was acknowledged: the retry counters start over, and the retransmit timer
    /// runs again from now while packets are outstanding.
    fn made_progress(&mut self, now: Duration) {
        self.retry_left = self.cfg.retry_cnt;
        self.rnr_left = self.cfg.rnr_retry;
        let outstanding = self.next > 0 || self.next_pkt > 0;
        self.ack_deadline = if outstanding { self.cfg.ack_timeout.map(|t| now + t) } else { None };
    }

    /// A READ response: implicitly acknowledges the earlier SENDs and WRITEs, then lands its
    /// payload in the READ's local buffers. Responses out of order are dropped.
    fn on_read_response<E: Env>(&mut self, env: &mut E, pkt: &Packet<'_>, now: Duration) {
        let r = pkt.bth.psn;
        self.ack_through(env, psn_prev(r), now);
        if self.next == 0 {
            return;
        }
        let mtu = self.cfg.mtu as u32;
        let Some(e) = self.sq.front() else { return };
        if !e.is_read() || r != psn_add(e.first_psn, e.read_done) {
            return;
        }
        let pos = pkt.bth.opcode.position();
        let last = e.read_done + 1 == e.npkts;
        let offset = e.read_done * mtu;
        let expected = (e.len - offset).min(mtu) as usize;
        // A READ asked for again from packet k (after a timeout) gets FIRST..LAST anew, so a
        // FIRST may come mid-message; a MIDDLE or LAST may not open one.
        if (e.read_done == 0 && !pos.starts()) || pos.ends() != last || pkt.payload.len() != expected {
            return;
        }
        let super::Data::Sges(sges) = &e.wr.data else { return };
        if sgl::scatter(env, self.cfg.pd, sges, u64::from(offset), pkt.payload).is_err() {
            self.fail_head(env, Status::LocProtErr);
            return;
        }
        if let Some(e) = self.sq.front_mut() {
            e.read_done += 1;
        }
        if last {
            self.retire(env, Status::Success);
        }
        self.made_progress(now);
    }
}
