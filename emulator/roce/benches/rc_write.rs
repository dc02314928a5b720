//! 64 KiB RDMA WRITEs between two in-process QPs: the requester segments, each frame is encoded
//! with its ICRC, decoded (ICRC checked) and handed to the responder, which writes the payload
//! and ACKs; the completer retires the WRITE. Throughput is reported in packets (request packets
//! plus the ACK) per second, at path MTU 1024 (65 packets a WRITE) and 4096 (17 packets).
//! Memory accesses go through a one-MR table with the key, PD, range and access checks.
//! `rc_read_64KiB` moves the same 64 KiB by an RDMA READ (the request, then the responses).

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use oce_roce::packet::{Bth, EthHeader, Grh, Packet};
use oce_roce::rc::{Completion, Data, Env, MemError, MemRef, Qp, QpConfig, QpEvent, Remote, SendOp, SendWr, Sge};

const LEN: usize = 64 * 1024;
const KEY: u32 = 0x15A;
const PD: u32 = 1;

struct Host {
    mem: Vec<u8>,
    out: Vec<Vec<u8>>,
    done: usize,
}

impl Host {
    fn check(&self, m: MemRef) -> Result<usize, MemError> {
        if m.key != KEY {
            return Err(MemError::Key);
        }
        if m.pd != PD {
            return Err(MemError::Pd);
        }
        if m.va as usize + m.len > self.mem.len() {
            return Err(MemError::Range);
        }
        Ok(m.va as usize)
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
    /// The bench's one region is not invalidatable (it sends no SEND with invalidate).
    fn invalidate(&mut self, _rkey: u32, _pd: u32) -> Result<(), MemError> {
        Err(MemError::Key)
    }
    fn transmit(&mut self, frame: &[u8]) {
        self.out.push(frame.to_vec());
    }
    fn complete(&mut self, _qpn: u32, _c: Completion) {
        self.done += 1;
    }
    fn event(&mut self, _qpn: u32, _e: QpEvent) {}
}

fn config(qpn: u32, dest: u32, mtu: usize) -> QpConfig {
    QpConfig {
        qpn,
        dest_qpn: dest,
        pd: PD,
        eth: EthHeader { dst: [2, 0, 0, 0, 0, dest as u8], src: [2, 0, 0, 0, 0, qpn as u8], vlan: None },
        grh: Grh {
            traffic_class: 0,
            flow_label: 0,
            payload_len: 0,
            next_header: Grh::NEXT_HEADER_IBA,
            hop_limit: 64,
            sgid: [0; 16],
            dgid: [0; 16],
        },
        pkey: Bth::DEFAULT_PKEY,
        mtu,
        sq_psn: 0,
        rq_psn: 0,
        retry_cnt: 7,
        rnr_retry: 7,
        min_rnr_timer: 1,
        ack_timeout: None,
        max_rd_atomic: 4,
        max_send_wr: 64,
        max_recv_wr: 64,
        max_inline: 224,
        remote_write: true,
        remote_read: true,
    }
}

/// Carries every frame in `from.out` to `to`'s QP.
fn deliver(from: &mut Host, to_qp: &mut Qp, to: &mut Host) {
    for f in std::mem::take(&mut from.out) {
        let p = Packet::decode(&f).expect("frames decode");
        to_qp.receive(to, &p, Duration::ZERO);
    }
}

/// 64 KiB moved from A's memory to B's by `op` (a WRITE A posts, or a READ B posts), at each
/// MTU, as a benchmark group `name`; the poster's peer answers and the poster retires it.
fn move_64k(c: &mut Criterion, name: &str, op: fn(Remote) -> SendOp, read: bool) {
    let mut g = c.benchmark_group(name);
    for mtu in [1024usize, 4096] {
        let mut qa = Qp::new(config(2, 3, mtu)).unwrap();
        let mut qb = Qp::new(config(3, 2, mtu)).unwrap();
        let mut ha = Host { mem: vec![0x5A; LEN], out: Vec::new(), done: 0 };
        let mut hb = Host { mem: vec![0; LEN], out: Vec::new(), done: 0 };
        // The poster and its peer: A writes into B, or B reads from A.
        let (poster, peer) =
            if read { ((&mut qb, &mut hb), (&mut qa, &mut ha)) } else { ((&mut qa, &mut ha), (&mut qb, &mut hb)) };
        let ((qp, host), (peer_qp, peer_host)) = (poster, peer);
        let packets = LEN.div_ceil(mtu) as u64 + 1;
        g.throughput(Throughput::Elements(packets));
        g.bench_function(format!("mtu_{mtu}_packets"), |b| {
            b.iter(|| {
                let wr = SendWr {
                    wr_id: 1,
                    op: op(Remote { addr: 0, rkey: KEY }),
                    data: Data::Sges(vec![Sge { addr: 0, len: LEN as u32, lkey: KEY }]),
                    signaled: true,
                    solicited: false,
                    fence: false,
                };
                qp.post_send(wr).unwrap();
                qp.poll(host, Duration::ZERO);
                deliver(host, peer_qp, peer_host);
                deliver(peer_host, qp, host);
                assert_eq!(qp.send_queued(), 0);
            });
        });
        assert!(host.done > 0);
        assert_eq!(hb.mem, vec![0x5A; LEN]);
    }
    g.finish();
}

fn write_64k(c: &mut Criterion) {
    move_64k(c, "rc_write_64KiB", SendOp::Write, false);
}

/// The same 64 KiB by an RDMA READ of the peer's memory: the responder reads and streams the
/// responses, the completer lands each in the local buffer and retires the READ with the last
/// (no ACK), so a READ is one packet fewer than a WRITE: the request and its responses.
fn read_64k(c: &mut Criterion) {
    move_64k(c, "rc_read_64KiB", SendOp::Read, true);
}

criterion_group!(benches, write_64k, read_64k);
criterion_main!(benches);
