//! GET_RDMA_STATS after real RoCE traffic: two adapters on the in-process cable, each driven by
//! the ocrdma-like host (a user CQ, a region, an RC QP to RTS, as `common::roce` builds them); the test
//! carries every frame itself, tallies what it saw on the wire by BTH opcode (IBTA vol 1 §9.2,
//! Table 38), and compares with the counters each adapter reports, and with what ocrdma would
//! show as PMA counters (`ocrdma_sysfs_xmit_pkts` and friends in ocrdma_stats.c).

mod common;

use common::roce::{End, VA, pair_with_buffer, read_cqe, sge_bytes};
use oce_mailbox::commands::{GetRdmaStats, RdmaStats};
use oce_mailbox::entries::{TYPE_LKEY, cqe_status, wqe_flag, wqe_opcode};
use oce_roce::packet::Packet;

/// The RoCE v1 frame: a 14-byte Ethernet header (no tag here), the 40-byte GRH, then the BTH
/// whose first byte is the opcode (IBTA vol 1 §9.2).
const ETH_LEN: usize = 14;
const OPCODE_AT: usize = 14 + 40;
/// An ACK's AETH syndrome follows the 12-byte BTH; 0x62 is NAK "remote access error" (IBTA
/// vol 1 §9.7.5.1, Tables 42 and 43).
const SYNDROME_AT: usize = 14 + 40 + 12;
const NAK_REMOTE_ACCESS: u8 = 0x62;

impl End {
    /// The status of each valid CQE since the last call (the ring is not handed back: the
    /// tests post far fewer than it holds).
    fn statuses(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let cqe = read_cqe(&self.host, self.cq_ring.entry(self.cq_tail));
            if !cqe.is_valid() {
                return out;
            }
            self.cq_tail += 1;
            out.push(cqe.status());
        }
    }

    fn stats(&mut self, reset: bool) -> RdmaStats {
        self.host.mq_cmd(&mut self.roce, &GetRdmaStats { reset }).unwrap()
    }
}

/// Two connected adapters, each with a 64 KiB buffer.
fn pair() -> (tempfile::TempDir, End, End) {
    pair_with_buffer(64 * 1024)
}

/// What the test saw one side send, by kind, as `ocrdma_tx_stats` splits it: packets and
/// bytes (GRH through ICRC: the frame less its Ethernet header).
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    send: (u64, u64),
    write: (u64, u64),
    read_request: (u64, u64),
    read_response: (u64, u64),
    ack: u64,
    ack_bytes: u64,
    naks_remote_access: u64,
    frames: u64,
    bytes: u64,
}

impl Tally {
    fn add(&mut self, frame: &[u8]) {
        let bytes = (frame.len() - ETH_LEN) as u64;
        self.frames += 1;
        self.bytes += bytes;
        let slot = match frame[OPCODE_AT] {
            // RC SEND FIRST..ONLY_IMM, SEND_LAST/ONLY with invalidate.
            0x00..=0x05 | 0x16 | 0x17 => &mut self.send,
            0x06..=0x0B => &mut self.write,
            0x0C => &mut self.read_request,
            0x0D..=0x10 => &mut self.read_response,
            0x11 => {
                self.ack += 1;
                self.ack_bytes += bytes;
                self.naks_remote_access += u64::from(frame[SYNDROME_AT] == NAK_REMOTE_ACCESS);
                return;
            }
            other => panic!("an opcode the test does not expect: {other:#x}"),
        };
        slot.0 += 1;
        slot.1 += bytes;
    }
}

/// Carries frames both ways until none moves, tallying what each side sent.
fn pump(a: &mut End, b: &mut End, sent_by_a: &mut Tally, sent_by_b: &mut Tally) {
    for _ in 0..100_000 {
        let (to_b, to_a) = (b.port.take(), a.port.take());
        if to_b.is_empty() && to_a.is_empty() {
            a.host.dev.poll();
            b.host.dev.poll();
            if a.port.pending() == 0 && b.port.pending() == 0 {
                return;
            }
            continue;
        }
        for frame in to_b {
            sent_by_a.add(&frame);
            b.host.dev.receive(&frame);
        }
        for frame in to_a {
            sent_by_b.add(&frame);
            a.host.dev.receive(&frame);
        }
    }
    panic!("the pair never settled");
}

/// The TX counters against the tally of what the side sent.
fn assert_tx(stats: &RdmaStats, sent: &Tally) {
    let t = stats.tx;
    assert_eq!((t.send_packets, t.send_bytes), sent.send, "SEND");
    assert_eq!((t.write_packets, t.write_bytes), sent.write, "WRITE");
    assert_eq!((t.read_packets, t.read_request_bytes), sent.read_request, "READ requests");
    assert_eq!((t.read_response_packets, t.read_response_bytes), sent.read_response, "READ responses");
    assert_eq!(t.ack_packets, sent.ack, "ACKs");
    // ocrdma_sysfs_xmit_pkts: send + write + read + read_rsp + ack packets: every frame sent.
    let xmit_packets = t.send_packets + t.write_packets + t.read_packets + t.read_response_packets + t.ack_packets;
    assert_eq!(xmit_packets, sent.frames, "port_xmit_packets");
}

/// The RX counters against the tally of what the other side sent (all of it arrived).
fn assert_rx(stats: &RdmaStats, peer_sent: &Tally) {
    let r = stats.rx;
    assert_eq!((r.roce_frames, r.roce_frame_bytes), (peer_sent.frames, peer_sent.bytes));
    // ocrdma_sysfs_rcv_pkts: roce_frames + ICRC drops + payload-length drops.
    let rcv_packets = r.roce_frames + u64::from(r.roce_frame_icrc_drops) + u64::from(r.roce_frame_payload_len_drops);
    assert_eq!(rcv_packets, peer_sent.frames, "port_rcv_packets");
}

#[test]
fn ping_pong_write_and_read_are_counted_as_the_wire_saw_them_and_a_reset_zeroes_them() {
    let (_d, mut a, mut b) = pair();
    assert_eq!(a.stats(false), RdmaStats::zeroed(), "nothing sent yet");
    let (mut by_a, mut by_b) = (Tally::default(), Tally::default());

    // Ping: 4 KiB from A (4 packets at MTU 1024); pong: 30 bytes inline from B (1 packet).
    b.post_recv(0x8000, 4096);
    let sge = a.sge(0, 4096);
    a.post_send(wqe_opcode::SEND, wqe_flag::SIG, TYPE_LKEY, 0, 4096, &sge);
    pump(&mut a, &mut b, &mut by_a, &mut by_b);
    a.post_recv(0x9000, 256);
    b.post_send(wqe_opcode::SEND, wqe_flag::SIG, 0, 0, 30, &[0x42; 32]);
    pump(&mut a, &mut b, &mut by_a, &mut by_b);
    // WRITE 8 KiB from A into B (8 packets), READ 5000 bytes of B's into A (one request, 5
    // responses at MTU 1024).
    let mut body = sge_bytes(VA + 0x3000, b.key, 8192);
    body.extend(a.sge(0, 8192));
    a.post_send(wqe_opcode::WRITE, wqe_flag::SIG, TYPE_LKEY, 0, 8192, &body);
    let mut body = sge_bytes(VA + 0x8000, b.key, 5000);
    body.extend(a.sge(0xA000, 5000));
    a.post_send(wqe_opcode::READ, wqe_flag::SIG, TYPE_LKEY, 0, 5000, &body);
    pump(&mut a, &mut b, &mut by_a, &mut by_b);
    assert_eq!(a.statuses(), [cqe_status::SUCCESS; 4], "SEND, RECV, WRITE, READ on A");
    assert_eq!(b.statuses(), [cqe_status::SUCCESS; 2], "RECV, SEND on B");

    assert_eq!((by_a.send.0, by_a.write.0, by_a.read_request.0, by_b.send.0, by_b.read_response.0), (4, 8, 1, 1, 5));
    let sa = a.stats(false);
    let sb = b.stats(false);
    assert_tx(&sa, &by_a);
    assert_tx(&sb, &by_b);
    assert_rx(&sa, &by_b);
    assert_rx(&sb, &by_a);
    // What ocrdma puts in PMA PortXmitData (`ocrdma_sysfs_xmit_data`: the four byte counts,
    // which leave the ACKs out, / 4) and PortRcvData (`roce_frame_bytes` / 4).
    let a_data = sa.tx.send_bytes + sa.tx.write_bytes + sa.tx.read_request_bytes + sa.tx.read_response_bytes;
    assert_eq!(a_data / 4, (by_a.bytes - by_a.ack_bytes) / 4);
    assert_eq!(sb.rx.roce_frame_bytes / 4, by_a.bytes / 4);
    // The WQEs: A's 4 KiB SEND and 8 KiB WRITE are longer than the MTU, and one READ.
    assert_eq!((sa.wqe.large_send_rc_wqes, sa.wqe.large_write_rc_wqes, sa.wqe.read_wqes), (1, 1, 1));
    assert_eq!((sb.wqe.large_send_rc_wqes, sb.wqe.read_wqes), (0, 0), "B's 30-byte SEND is small");
    assert_eq!((sa.tx_qp_errors, sa.rx_qp_errors), Default::default());
    assert_eq!((sb.rx.rc_drop_count_lookup_errors, sb.rx.roce_frame_icrc_drops), (0, 0));

    // Reading with reset_stats answers the counters, then they start again from zero.
    assert_eq!(a.stats(true), sa);
    assert_eq!(a.stats(false), RdmaStats::zeroed());
    assert_eq!(b.stats(false), sb, "B's counters are B's own");
}

#[test]
fn a_nak_counts_on_the_responder_that_sent_it_and_frames_for_no_qp_are_drops() {
    let (_d, mut a, mut b) = pair();
    let (mut by_a, mut by_b) = (Tally::default(), Tally::default());
    // A WRITE with a key of another generation: B answers NAK remote access error.
    let mut body = sge_bytes(VA + 0x3000, b.key ^ 0x80, 64);
    body.extend(a.sge(0, 64));
    a.post_send(wqe_opcode::WRITE, wqe_flag::SIG, TYPE_LKEY, 0, 64, &body);
    // Keep one of A's WRITE frames to replay below.
    let write = b.port.take().pop().unwrap();
    by_a.add(&write);
    b.host.dev.receive(&write);
    pump(&mut a, &mut b, &mut by_a, &mut by_b);
    assert_eq!(a.statuses(), [cqe_status::REM_ACCESS_ERR]);
    assert_eq!((by_b.ack, by_b.naks_remote_access), (1, 1));

    let sb = b.stats(false);
    assert_eq!(sb.rx_qp_errors.nak_remote_access_errors, 1, "B's receive side found the bad key");
    assert_tx(&sb, &by_b);
    let sa = a.stats(false);
    assert_eq!(sa.rx_qp_errors.nak_remote_access_errors, 0, "A received the NAK, it did not send it");
    assert_eq!(sa.tx_qp_errors, Default::default(), "a remote error is no local error of A's");

    // The WRITE again, addressed to a QP B does not have: a frame received, dropped by lookup.
    let mut stray = Packet::decode(&write).unwrap();
    stray.bth.dest_qpn = 0x3FF;
    b.host.dev.receive(&stray.to_vec().unwrap());
    // The WRITE again with its ICRC broken: a drop that is no `roce_frames`, still a packet
    // received for ocrdma's PMA count.
    let mut broken = write.clone();
    *broken.last_mut().unwrap() ^= 0xFF;
    b.host.dev.receive(&broken);
    let after = b.stats(false).rx;
    assert_eq!(after.rc_drop_count_lookup_errors, 1);
    assert_eq!(after.roce_frame_icrc_drops, 1);
    assert_eq!(after.roce_frames, sb.rx.roce_frames + 1);
    assert_eq!(after.roce_frame_bytes, sb.rx.roce_frame_bytes + (write.len() - ETH_LEN) as u64);
    let rcv_packets =
        after.roce_frames + u64::from(after.roce_frame_icrc_drops) + u64::from(after.roce_frame_payload_len_drops);
    assert_eq!(rcv_packets, by_a.frames + 2);
}
