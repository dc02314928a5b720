//! The responder: accepts requests in PSN order, lands SENDs in receive work requests and
//! WRITEs in the memory their rkey names, answers READs, and ACKs or NAKs
//! (`spec/datapath.md` §3.2).

use super::Access;
use super::{
    Completion, Env, Headers, Incoming, MemRef, Qp, QpEvent, QpState, Status, psn_add, psn_diff, psn_prev, sgl,
};
use crate::packet::{Aeth, NakCode, Opcode, Operation, Packet, Reth, Syndrome};

/// How the responder refuses a request: the NAK and, when the QP goes to error, the event.
enum Refusal {
    /// Receive-not-ready: no receive work request; the requester retries later.
    Rnr,
    /// A NAK that moves this QP to error.
    Fatal(NakCode, QpEvent),
}

impl Qp {
    /// Handles a SEND, WRITE or READ request packet.
    pub(super) fn on_request<E: Env>(&mut self, env: &mut E, pkt: &Packet<'_>) {
        let psn = pkt.bth.psn;
        let d = psn_diff(psn, self.epsn);
        if d > 0 {
            // Ahead of the expected PSN: on a lossless wire a bug upstream. NAK once, then
            // drop until the expected PSN arrives (IBTA vol 1 §9.7.5.1.2).
            if !self.nak_sent {
                self.nak_sent = true;
                self.send_aeth(env, Syndrome::Nak(NakCode::PsnSequenceError), self.epsn);
            }
            return;
        }
        if d < 0 {
            self.on_duplicate(env, pkt);
            return;
        }
        let outcome = match pkt.bth.opcode.operation() {
            Operation::Send => self.on_send(env, pkt),
            Operation::Write => self.on_write(env, pkt),
            _ => self.on_read_request(env, pkt),
        };
        match outcome {
            Ok(()) => {
                self.nak_sent = false;
                if pkt.bth.ack_req && pkt.bth.opcode != Opcode::RcReadRequest {
                    self.send_aeth(env, Syndrome::ACK_NO_CREDITS, psn);
                }
            }
            Err(Refusal::Rnr) => {
                self.nak_sent = true;
                self.send_aeth(env, Syndrome::RnrNak { timer: self.cfg.min_rnr_timer }, psn);
            }
            Err(Refusal::Fatal(code, event)) => {
                self.send_aeth(env, Syndrome::Nak(code), psn);
                env.event(self.cfg.qpn, event);
                self.state = QpState::Error;
            }
        }
    }

    /// A request already accepted: a READ is answered again (memory is read anew), anything
    /// else is acknowledged with the current MSN if it asks for it.
    fn on_duplicate<E: Env>(&mut self, env: &mut E, pkt: &Packet<'_>) {
        if pkt.bth.opcode == Opcode::RcReadRequest {
            if let Some(reth) = pkt.reth {
                let _ = self.stream_read(env, reth, pkt.bth.psn);
            }
        } else if pkt.bth.ack_req {
            self.send_aeth(env, Syndrome::ACK_NO_CREDITS, psn_prev(self.epsn));
        }
    }

    /// Sends an ACK or NAK for `psn` with the current MSN.
    fn send_aeth<E: Env>(&mut self, env: &mut E, syndrome: Syndrome, psn: u32) {
        let h = Headers { aeth: Some(Aeth { syndrome, msn: self.msn }), ..Headers::default() };
        self.emit(env, Opcode::RcAck, psn, h, &[]);
    }

    /// Checks a packet's payload length against the MTU: FIRST and MIDDLE carry exactly one
    /// MTU, LAST and ONLY at most one (IBTA vol 1 §9.7.4.1.4).
    fn payload_fits(&self, pkt: &Packet<'_>) -> bool {
        let n = pkt.payload.len();
        if pkt.bth.opcode.position().ends() { n <= self.cfg.mtu } else { n == self.cfg.mtu }
    }

    fn on_send<E: Env>(&mut self, env: &mut E, pkt: &Packet<'_>) -> Result<(), Refusal> {
        let invalid = Refusal::Fatal(NakCode::InvalidRequest, QpEvent::RequestError);
        let pos = pkt.bth.opcode.position();
        if pos.starts() {
            if self.incoming.is_some() {
                return Err(invalid);
            }
            let Some(rqe) = self.rq.pop_front() else { return Err(Refusal::Rnr) };
            self.incoming = Some(Incoming::Send { rqe, offset: 0 });
        }
        let Some(Incoming::Send { rqe, offset }) = self.incoming.take() else { return Err(invalid) };
        let (pd, qpn) = (self.cfg.pd, self.cfg.qpn);
        let fail = |env: &mut E, status, code| {
            let c = Completion::Recv {
                wr_id: rqe.wr_id,
                byte_len: 0,
                imm: None,
                invalidate: None,
                write_imm: false,
                status,
            };
            env.complete(qpn, c);
            Refusal::Fatal(code, QpEvent::RequestError)
        };
        if !self.payload_fits(pkt) {
            return Err(fail(env, Status::LocLenErr, NakCode::InvalidRequest));
        }
        let end = u64::from(offset) + pkt.payload.len() as u64;
        if end > sgl::total(&rqe.sges) {
            return Err(fail(env, Status::LocLenErr, NakCode::InvalidRequest));
        }
        if sgl::scatter(env, pd, &rqe.sges, u64::from(offset), pkt.payload).is_err() {
            return Err(fail(env, Status::LocProtErr, NakCode::RemoteOperationalError));
        }
        // SEND with invalidate: the rkey goes before the receive completes. A key the QP may not
        // invalidate fails the receive with REM_INV_REQ_ERR, as rdma_rxe does (rxe_resp.c,
        // RESPST_ERR_INVALIDATE_RKEY), and NAKs the request as invalid (spec/datapath.md §3.2).
        if let Some(ieth) = pkt.ieth.filter(|_| pos.ends())
            && env.invalidate(ieth.rkey, pd).is_err()
        {
            return Err(fail(env, Status::RemInvReqErr, NakCode::InvalidRequest));
        }
        self.epsn = psn_add(self.epsn, 1);
        if pos.ends() {
            self.msn = psn_add(self.msn, 1);
            let c = Completion::Recv {
                wr_id: rqe.wr_id,
                byte_len: end as u32,
                imm: pkt.imm.map(|i| i.0),
                invalidate: pkt.ieth.map(|i| i.rkey),
                write_imm: false,
                status: Status::Success,
            };
            env.complete(qpn, c);
        } else {
            self.incoming = Some(Incoming::Send { rqe, offset: end as u32 });
        }
        Ok(())
    }

    fn on_write<E: Env>(&mut self, env: &mut E, pkt: &Packet<'_>) -> Result<(), Refusal> {
        let invalid = || Refusal::Fatal(NakCode::InvalidRequest, QpEvent::RequestError);
        let access = Refusal::Fatal(NakCode::RemoteAccessError, QpEvent::AccessError);
        let pos = pkt.bth.opcode.position();
        let with_imm = pkt.bth.opcode.has_imm();
        if pos.starts() {
            if self.incoming.is_some() {
                return Err(invalid());
            }
            let Some(reth) = pkt.reth else { return Err(invalid()) };
            if !self.cfg.remote_write {
                return Err(access);
            }
            self.incoming = Some(Incoming::Write { reth, offset: 0 });
        }
        let Some(Incoming::Write { reth, offset }) = &self.incoming else { return Err(invalid()) };
        let (reth, offset) = (*reth, *offset);
        // WRITE with immediate consumes a receive at its last packet: check before touching memory.
        if with_imm && self.rq.is_empty() {
            if pos.starts() {
                self.incoming = None;
            }
            return Err(Refusal::Rnr);
        }
        let end = u64::from(offset) + pkt.payload.len() as u64;
        if !self.payload_fits(pkt) || end > u64::from(reth.dma_len) || (pos.ends() && end != u64::from(reth.dma_len)) {
            self.incoming = None;
            return Err(invalid());
        }
        if !pkt.payload.is_empty() {
            let mem = MemRef {
                key: reth.rkey,
                pd: self.cfg.pd,
                va: reth.va.wrapping_add(u64::from(offset)),
                len: pkt.payload.len(),
                access: Access::RemoteWrite,
            };
            if env.write(mem, pkt.payload).is_err() {
                self.incoming = None;
                return Err(access);
            }
        }
        self.epsn = psn_add(self.epsn, 1);
        if pos.ends() {
            self.incoming = None;
            self.msn = psn_add(self.msn, 1);
            if with_imm && let Some(rqe) = self.rq.pop_front() {
                let c = Completion::Recv {
                    wr_id: rqe.wr_id,
                    byte_len: reth.dma_len,
                    imm: pkt.imm.map(|i| i.0),
                    invalidate: None,
                    write_imm: true,
                    status: Status::Success,
                };
                env.complete(self.cfg.qpn, c);
            }
        } else {
            self.incoming = Some(Incoming::Write { reth, offset: end as u32 });
        }
        Ok(())
    }

    fn on_read_request<E: Env>(&mut self, env: &mut E, pkt: &Packet<'_>) -> Result<(), Refusal> {
        let access = Refusal::Fatal(NakCode::RemoteAccessError, QpEvent::AccessError);
        let Some(reth) = pkt.reth else {
            return Err(Refusal::Fatal(NakCode::InvalidRequest, QpEvent::RequestError));
        };
        if self.incoming.is_some() || reth.dma_len > 1 << 31 {
            return Err(Refusal::Fatal(NakCode::InvalidRequest, QpEvent::RequestError));
        }
        if !self.cfg.remote_read {
            return Err(access);
        }
        self.msn = psn_add(self.msn, 1);
        let n = self.packets_for(reth.dma_len);
        match self.stream_read(env, reth, pkt.bth.psn) {
            Ok(()) => {
                self.epsn = psn_add(self.epsn, n);
                Ok(())
            }
            Err(()) => {
                self.msn = psn_prev(self.msn);
                Err(access)
            }
        }
    }

    /// Sends the READ responses for `reth` from PSN `psn` on. The first and the last MTU are
    /// read before anything is sent, so a refused rkey or range answers with a NAK alone.
    fn stream_read<E: Env>(&mut self, env: &mut E, reth: Reth, psn: u32) -> Result<(), ()> {
        let mtu = self.cfg.mtu as u32;
        let n = self.packets_for(reth.dma_len);
        let mut buf = std::mem::take(&mut self.buf);
        let pd = self.cfg.pd;
        let read = |env: &mut E, k: u32, buf: &mut Vec<u8>| {
            let off = k * mtu;
            let len = (reth.dma_len - off).min(mtu) as usize;
            buf.resize(len, 0);
            if len == 0 {
                return Ok(());
            }
            let mem = MemRef {
                key: reth.rkey,
                pd,
                va: reth.va.wrapping_add(u64::from(off)),
                len,
                access: Access::RemoteRead,
            };
            env.read(mem, buf)
        };
        if n > 1 && read(env, n - 1, &mut buf).is_err() {
            self.buf = buf;
            return Err(());
        }
        for k in 0..n {
            if read(env, k, &mut buf).is_err() {
                self.buf = buf;
                return Err(());
            }
            let opcode = match (k == 0, k + 1 == n) {
                (true, true) => Opcode::RcReadResponseOnly,
                (true, false) => Opcode::RcReadResponseFirst,
                (false, true) => Opcode::RcReadResponseLast,
                (false, false) => Opcode::RcReadResponseMiddle,
            };
            let aeth = opcode.has_aeth().then_some(Aeth { syndrome: Syndrome::ACK_NO_CREDITS, msn: self.msn });
            self.emit(env, opcode, psn_add(psn, k), Headers { aeth, ..Headers::default() }, &buf);
        }
        self.buf = buf;
        Ok(())
    }
}
