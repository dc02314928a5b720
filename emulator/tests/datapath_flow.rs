//! Flow control on the cable between two emulated adapters (spec/datapath.md §1.4): a receiver
//! without buffers pauses its sender, whose TX WRBs stay posted until the receiver posts
//! buffers — nothing is lost; with pause generation off, the frame is dropped and counted. And
//! two threads, one per adapter, each locking only its own, move traffic both ways.

use std::sync::{Arc, Mutex};

use oce_emulator::datapath::Receipt;
use oce_mailbox::entries::TxStatus;
use oce_testhost::frames::{ETHERTYPE_IPV4, PROTO_UDP, Parsed, ethernet, ipv4};
use oce_testhost::{Pair, PairConfig, Side, TxRequest};

const A_IP: [u8; 4] = [10, 0, 0, 1];
const B_IP: [u8; 4] = [10, 0, 0, 2];

/// Frame `n` from `src` to `dst`: a UDP-protocol IPv4 packet whose identification is `n`.
fn numbered(src: [u8; 6], dst: [u8; 6], n: u16) -> TxRequest {
    let frame = ethernet(dst, src, ETHERTYPE_IPV4, &ipv4(A_IP, B_IP, PROTO_UDP, n, &[n as u8; 200]));
    TxRequest { head_len: frame.len(), frame, ..TxRequest::default() }
}

fn ids(side: &Side) -> Vec<u16> {
    side.nic.received.iter().map(|r| Parsed::of(&r.frame).unwrap().ip_id).collect()
}

#[test]
fn a_receiver_without_buffers_holds_the_sender_back_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = PairConfig { b_rx_buffers: 8, high_watermark: 16, ..PairConfig::default() };
    let mut p = Pair::up(dir.path(), config);
    p.b.nic.refill = false;
    let (a, b) = (p.a.mac(), p.b.mac());
    for batch in 0..20u16 {
        let requests: Vec<TxRequest> = (0..10).map(|i| numbered(a, b, batch * 10 + i)).collect();
        p.a.host.xmit(&mut p.a.nic, 0, &requests);
        p.pump();
    }
    // B took what it had room for; the cable holds its watermark's worth; A's WRBs wait.
    assert_eq!(p.b.nic.received.len(), 8);
    assert!(p.b.port.pending() >= 16 && p.b.port.pending() < 30, "{} frames on the cable", p.b.port.pending());
    let sent = p.a.host.dev.counters().tx_frames();
    assert!(sent < 200, "A stopped consuming WRBs after {sent} frames");
    assert!(p.a.nic.txqs[0].completed.len() < 20, "the later requests are not completed");
    assert!(!p.a.nic.txqs[0].pending.is_empty());
    let b_counters = p.b.host.dev.counters();
    assert!(b_counters.port.pauses_sent >= 1);
    assert_eq!(b_counters.rx_rings.values().map(|r| r.drops_no_fragments).sum::<u64>(), 0, "nothing dropped");
    // B posts buffers: everything arrives, in order.
    p.b.nic.refill = true;
    p.b.host.post_rx(&mut p.b.nic, 1000);
    p.pump();
    assert_eq!(ids(&p.b), (0..200).collect::<Vec<u16>>(), "all 200, in the order sent");
    assert_eq!(p.a.nic.txqs[0].statuses, vec![TxStatus::Sent; 20]);
    assert!(p.a.nic.txqs[0].pending.is_empty());
    assert_eq!(p.a.host.dev.counters().tx_frames(), 200);
    let port = p.b.nic.port;
    let stats = p.b.host.statistics().unwrap();
    let ring = p.b.nic.rxqs[0].id;
    assert_eq!(stats.rx_drops_no_fragments(ring), 0);
    assert!(stats.port(port, oce_mailbox::commands::PortCounter::TxPauseFrames) >= 1);
}

#[test]
fn without_pause_a_frame_finding_no_buffer_is_dropped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Pair::up(dir.path(), PairConfig { b_rx_buffers: 4, ..PairConfig::default() });
    p.b.nic.refill = false;
    // `ethtool -A eth0 rx off tx off`
    p.b.host.set_flow_control(false, false).unwrap();
    let (a, b) = (p.a.mac(), p.b.mac());
    let requests: Vec<TxRequest> = (0..10).map(|i| numbered(a, b, i)).collect();
    p.a.host.xmit(&mut p.a.nic, 0, &requests);
    p.pump();
    assert_eq!(ids(&p.b), [0, 1, 2, 3], "the first four found buffers");
    assert_eq!(p.b.port.pending(), 0, "the rest left the cable");
    let ring = p.b.nic.rxqs[0].id;
    assert_eq!(p.b.host.statistics().unwrap().rx_drops_no_fragments(ring), 6, "ethtool -S rx_drops_no_frags");
    assert_eq!(p.b.host.dev.counters().rx_rings[&ring].drops_no_fragments, 6);
    assert_eq!(p.a.nic.txqs[0].statuses, [TxStatus::Sent], "the sender saw nothing wrong");
    // A frame offered straight to the port says what happened to it.
    assert_eq!(
        p.b.host.dev.receive(&numbered(a, b, 99).frame),
        Receipt::Dropped(oce_emulator::datapath::DropReason::NoBuffer)
    );
}

/// One side's loop in its own thread: deliver what arrived, serve interrupts, poll, send its
/// share; each step locks only this side.
fn run_side(side: &Mutex<Side>, peer: [u8; 6], to_send: u16, expect: usize) {
    let mut sent = 0;
    for _ in 0..200_000 {
        let done = {
            let mut guard = side.lock().unwrap();
            let s = &mut *guard;
            s.port.deliver(&mut s.host.dev);
            s.host.interrupt(&mut s.nic);
            s.host.dev.poll();
            if sent < to_send {
                let me = s.nic.mac;
                let batch: Vec<TxRequest> = (sent..(sent + 8).min(to_send)).map(|n| numbered(me, peer, n)).collect();
                sent += batch.len() as u16;
                s.host.xmit(&mut s.nic, 0, &batch);
            }
            sent == to_send && s.nic.received.len() == expect && s.nic.txqs[0].pending.is_empty()
        };
        if done {
            return;
        }
        std::thread::yield_now();
    }
    panic!("the side never finished");
}

#[test]
fn two_threads_each_locking_one_adapter_carry_traffic_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let config = PairConfig { b_rx_buffers: 32, high_watermark: 8, ..PairConfig::default() };
    let p = Pair::up(dir.path(), config);
    let (a_mac, b_mac) = (p.a.mac(), p.b.mac());
    let (a, b) = (Arc::new(Mutex::new(p.a)), Arc::new(Mutex::new(p.b)));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let ta = std::thread::spawn(move || run_side(&a2, b_mac, 500, 300));
    let tb = std::thread::spawn(move || run_side(&b2, a_mac, 300, 500));
    ta.join().unwrap();
    tb.join().unwrap();
    let (a, b) = (a.lock().unwrap(), b.lock().unwrap());
    assert_eq!(ids(&b), (0..500).collect::<Vec<u16>>(), "A → B: all, in order");
    assert_eq!(ids(&a), (0..300).collect::<Vec<u16>>(), "B → A: all, in order");
    assert_eq!(b.host.dev.counters().rx_rings.values().map(|r| r.drops_no_fragments).sum::<u64>(), 0);
}
