//! Two in-process "adapters", each with one RC QP, joined by a vector wire; an MR table and a
//! flat memory per adapter implement [`Env`] with the key checks of `spec/datapath.md` §3.2.
#![allow(dead_code)]

use std::time::Duration;

use oce_roce::packet::{Bth, EthHeader, Grh, Opcode, Packet, Syndrome};
use oce_roce::rc::{Access, Completion, Env, MemError, MemRef, Qp, QpConfig, QpEvent};

/// Where each adapter's memory starts in its address space.
pub const BASE: u64 = 0x10_0000;
pub const MEM: usize = 256 * 1024;
pub const PD: u32 = 7;
pub const QPN_A: u32 = 0x12;
pub const QPN_B: u32 = 0x34;

#[derive(Debug, Clone, Copy)]
pub struct Mr {
    pub key: u32,
    pub pd: u32,
    pub va: u64,
    pub len: u64,
    pub local_write: bool,
    pub remote_read: bool,
    pub remote_write: bool,
}

/// One adapter's world: memory, MRs, what it put on the wire, its completions and events.
#[derive(Debug)]
pub struct Host {
    pub mem: Vec<u8>,
    pub mrs: Vec<Mr>,
    pub out: Vec<Vec<u8>>,
    pub completions: Vec<Completion>,
    pub events: Vec<QpEvent>,
}

impl Host {
    fn new() -> Self {
        Host { mem: vec![0; MEM], mrs: Vec::new(), out: Vec::new(), completions: Vec::new(), events: Vec::new() }
    }

    /// Registers [va, va + len) with all access rights; returns its key.
    pub fn reg(&mut self, va: u64, len: u64) -> u32 {
        let key = ((self.mrs.len() as u32 + 1) << 8) | 0x5A;
        self.mrs.push(Mr { key, pd: PD, va, len, local_write: true, remote_read: true, remote_write: true });
        key
    }

    pub fn fill(&mut self, va: u64, bytes: &[u8]) {
        let at = (va - BASE) as usize;
        self.mem[at..at + bytes.len()].copy_from_slice(bytes);
    }

    pub fn bytes(&self, va: u64, len: usize) -> &[u8] {
        let at = (va - BASE) as usize;
        &self.mem[at..at + len]
    }

    fn check(&self, m: MemRef) -> Result<usize, MemError> {
        let mr = self.mrs.iter().find(|r| r.key == m.key).ok_or(MemError::Key)?;
        if mr.pd != m.pd {
            return Err(MemError::Pd);
        }
        if m.va < mr.va || m.va + m.len as u64 > mr.va + mr.len {
            return Err(MemError::Range);
        }
        let ok = match m.access {
            Access::LocalRead => true,
            Access::LocalWrite => mr.local_write,
            Access::RemoteRead => mr.remote_read,
            Access::RemoteWrite => mr.remote_write,
        };
        if !ok {
            return Err(MemError::Access);
        }
        Ok((m.va - BASE) as usize)
    }
}

impl Env for Host {
    fn read(&mut self, m: MemRef, buf: &mut [u8]) -> Result<(), MemError> {
        let at = self.check(m)?;
        buf.copy_from_slice(&self.mem[at..at + buf.len()]);
        Ok(())
    }
    fn write(&mut self, m: MemRef, data: &[u8]) -> Result<(), MemError> {
        let at = self.check(m)?;
        self.mem[at..at + data.len()].copy_from_slice(data);
        Ok(())
    }
    /// Removes the region: the test MRs are all invalidatable.
    fn invalidate(&mut self, rkey: u32, pd: u32) -> Result<(), MemError> {
        let at = self.mrs.iter().position(|r| r.key == rkey).ok_or(MemError::Key)?;
        if self.mrs[at].pd != pd {
            return Err(MemError::Pd);
        }
        self.mrs.remove(at);
        Ok(())
    }
    fn transmit(&mut self, frame: &[u8]) {
        self.out.push(frame.to_vec());
    }
    fn complete(&mut self, qpn: u32, c: Completion) {
        assert_ne!(qpn, 0);
        self.completions.push(c);
    }
    fn event(&mut self, _qpn: u32, e: QpEvent) {
        self.events.push(e);
    }
}

#[derive(Debug)]
pub struct Node {
    pub qp: Qp,
    pub host: Host,
}

/// What crossed the wire, in order: sender ('a' or 'b'), opcode, PSN, AETH syndrome, SE, A.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub from: char,
    pub opcode: Opcode,
    pub psn: u32,
    pub syndrome: Option<Syndrome>,
    pub solicited: bool,
    pub ack_req: bool,
    pub len: usize,
}

#[derive(Debug)]
pub struct Pair {
    pub a: Node,
    pub b: Node,
    pub now: Duration,
    pub log: Vec<Seen>,
    /// Frames from `a` vanish (the peer is gone).
    pub drop_a: bool,
    /// Drop the n-th frame `a` sends (0-based), once.
    pub drop_a_nth: Option<usize>,
    /// Drop the n-th frame `b` sends (0-based), once.
    pub drop_b_nth: Option<usize>,
    sent_a: usize,
    sent_b: usize,
}

pub fn config(qpn: u32, dest: u32, sq_psn: u32, rq_psn: u32) -> QpConfig {
    let mac = |n: u32| [2, 0, 0, 0, 0, n as u8];
    let mut gid = [0u8; 16];
    gid[0] = 0xFE;
    gid[1] = 0x80;
    let mut sgid = gid;
    sgid[15] = qpn as u8;
    let mut dgid = gid;
    dgid[15] = dest as u8;
    QpConfig {
        qpn,
        dest_qpn: dest,
        pd: PD,
        eth: EthHeader { dst: mac(dest), src: mac(qpn), vlan: None },
        grh: Grh {
            traffic_class: 0,
            flow_label: 0,
            payload_len: 0,
            next_header: Grh::NEXT_HEADER_IBA,
            hop_limit: 64,
            sgid,
            dgid,
        },
        pkey: Bth::DEFAULT_PKEY,
        mtu: 1024,
        sq_psn,
        rq_psn,
        retry_cnt: 7,
        rnr_retry: 7,
        min_rnr_timer: 1,
        ack_timeout: Some(Duration::from_millis(4)),
        max_rd_atomic: 4,
        max_send_wr: 16,
        max_recv_wr: 16,
        max_inline: 224,
        remote_write: true,
        remote_read: true,
    }
}

/// A's send PSNs start just below the 24-bit wrap, so every multi-packet test crosses it.
pub const PSN_A: u32 = 0xFF_FFFE;
pub const PSN_B: u32 = 0x100;

impl Pair {
    pub fn new() -> Self {
        Self::with(|_, _| {})
    }

    /// A pair whose configurations `tweak` may change first (A's, then B's).
    pub fn with(tweak: impl FnOnce(&mut QpConfig, &mut QpConfig)) -> Self {
        let mut ca = config(QPN_A, QPN_B, PSN_A, PSN_B);
        let mut cb = config(QPN_B, QPN_A, PSN_B, PSN_A);
        tweak(&mut ca, &mut cb);
        Pair {
            a: Node { qp: Qp::new(ca).unwrap(), host: Host::new() },
            b: Node { qp: Qp::new(cb).unwrap(), host: Host::new() },
            now: Duration::ZERO,
            log: Vec::new(),
            drop_a: false,
            drop_a_nth: None,
            drop_b_nth: None,
            sent_a: 0,
            sent_b: 0,
        }
    }

    /// Polls both QPs and carries frames both ways until the wire is quiet.
    pub fn run(&mut self) {
        for _ in 0..10_000 {
            self.a.qp.poll(&mut self.a.host, self.now);
            self.b.qp.poll(&mut self.b.host, self.now);
            let from_a = std::mem::take(&mut self.a.host.out);
            let from_b = std::mem::take(&mut self.b.host.out);
            if from_a.is_empty() && from_b.is_empty() {
                return;
            }
            for f in from_a {
                let n = self.sent_a;
                self.sent_a += 1;
                if self.drop_a || self.drop_a_nth == Some(n) {
                    if self.drop_a_nth == Some(n) {
                        self.drop_a_nth = None;
                    }
                    continue;
                }
                deliver(&mut self.log, 'a', &f, &mut self.b, self.now);
            }
            for f in from_b {
                let n = self.sent_b;
                self.sent_b += 1;
                if self.drop_b_nth == Some(n) {
                    self.drop_b_nth = None;
                    continue;
                }
                deliver(&mut self.log, 'b', &f, &mut self.a, self.now);
            }
        }
        panic!("the wire never went quiet");
    }

    /// Moves time on by `d` and runs.
    pub fn advance(&mut self, d: Duration) {
        self.now += d;
        self.run();
    }

    /// The opcodes `from` sent, in order.
    pub fn opcodes(&self, from: char) -> Vec<Opcode> {
        self.log.iter().filter(|s| s.from == from).map(|s| s.opcode).collect()
    }
}

/// Decodes a frame (ICRC checked), logs it and hands it to `to`'s QP.
pub fn deliver(log: &mut Vec<Seen>, from: char, frame: &[u8], to: &mut Node, now: Duration) {
    let p = Packet::decode(frame).expect("every frame on the wire decodes, ICRC included");
    log.push(Seen {
        from,
        opcode: p.bth.opcode,
        psn: p.bth.psn,
        syndrome: p.aeth.map(|a| a.syndrome),
        solicited: p.bth.solicited,
        ack_req: p.bth.ack_req,
        len: p.payload.len(),
    });
    to.qp.receive(&mut to.host, &p, now);
}

/// `len` bytes of a pattern that differs at every offset within 251 bytes.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8 ^ seed).collect()
}

impl Pair {
    /// Frames `a` has put on the wire, delivered or dropped.
    pub fn sent_by_a(&self) -> usize {
        self.sent_a
    }
}
