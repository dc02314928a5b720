//! The RC transport joined to the device: two RoCE adapters on the in-process cable, each driven
//! by the ocrdma-like host exactly as libocrdma drives one for `ibv_rc_pingpong` (a user CQ, a
//! memory region, an RC QP to RTS), moving data with SEND/RECV, RDMA WRITE and READ as RoCE v1
//! frames; the error paths of spec/datapath.md §2.3 and §3.2 (one error CQE, then silence).
//! Fast registration and invalidation on the same pair are in `roce_frwr.rs`.

mod common;

use oce_testhost as be2net_host;

use be2net_host::ocrdma_verbs::{DB_RQ, DB_SQ};
use common::roce::{
    ACCESS_ALL, BUF_LEN, End, PSN_A, PSN_B, Recorder, V_STATE, VA, end, gid, pair, pattern, pump, sge_bytes, to_state,
};
use oce_emulator::datapath::cable;
use oce_emulator::{QueueKind, QueueMiss};
use oce_mailbox::doorbells::{RoceRqDoorbell, RoceSqDoorbell};
use oce_mailbox::entries::{Cqe, TYPE_LKEY, cqe_status, wqe_flag, wqe_opcode};

const SIG: u16 = wqe_flag::SIG;

#[test]
fn rc_pingpong_send_recv_both_ways() {
    let (_d, mut a, mut b) = pair();
    // B posts a receive; A sends 4 KiB from its buffer.
    b.post_recv(0x1_0000, 4096);
    let data = pattern(4096, 7);
    a.fill(0, &data);
    let sge = a.sge(0, 4096);
    let idx = a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 4096, &sge);
    let frames = pump(&mut a, &mut b);
    assert_eq!(frames, 5, "4 SEND packets at MTU 1024 and one ACK");
    assert_eq!(b.read(0x1_0000, 4096), data, "the payload landed in B's receive buffer");
    let rx = b.cqes();
    assert_eq!(rx.len(), 1);
    assert_eq!((rx[0].0[1], rx[0].qpn(), rx[0].status()), (4096, b.qp.id, cqe_status::SUCCESS));
    assert_ne!(rx[0].0[3] & Cqe::QTYPE_RQ, 0);
    let tx = a.cqes();
    assert_eq!(tx.len(), 1);
    assert!(tx[0].is_sq());
    assert_eq!((tx[0].wqe_index(), tx[0].qpn(), tx[0].status()), (idx as u16, a.qp.id, cqe_status::SUCCESS));

    // Pong: B answers with an inline SEND carrying immediate data.
    a.post_recv(0x2_0000, 256);
    let inline = b"pong from B, inline in the WQE".to_vec();
    let mut body = inline.clone();
    body.resize(inline.len().div_ceil(16) * 16, 0);
    b.post_send(wqe_opcode::SEND, SIG | wqe_flag::IMM, 0, 0xC0FFEE, inline.len() as u32, &body);
    pump(&mut a, &mut b);
    assert_eq!(a.read(0x2_0000, inline.len()), inline);
    let rx = a.cqes();
    assert_eq!(rx.len(), 1);
    assert_eq!((rx[0].0[0], rx[0].0[1]), (0xC0FFEE, inline.len() as u32));
    assert_ne!(rx[0].0[3] & Cqe::IMM, 0, "with immediate");
    assert_eq!(b.cqes().len(), 1);
}

#[test]
fn a_64_kib_send_goes_as_64_packets_and_lands_whole() {
    let (_d, mut a, mut b) = pair();
    b.post_recv(0, 65536);
    let data = pattern(65536, 3);
    a.fill(0x1_0000, &data);
    let sge = a.sge(0x1_0000, 65536);
    a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 65536, &sge);
    let frames = pump(&mut a, &mut b);
    assert!(frames >= 65, "64 packets and at least one ACK: {frames}");
    assert_eq!(b.read(0, 65536), data);
    assert_eq!(b.cqes()[0].0[1], 65536);
    assert_eq!(a.cqes()[0].status(), cqe_status::SUCCESS);
}

#[test]
fn rdma_write_and_read_move_the_bytes_the_test_wrote() {
    let (_d, mut a, mut b) = pair();
    // WRITE 8 KiB from A's buffer @0 into B's @0x3000.
    let data = pattern(8192, 11);
    a.fill(0, &data);
    let mut body = sge_bytes(VA + 0x3000, b.key, 8192);
    body.extend(a.sge(0, 8192));
    a.post_send(wqe_opcode::WRITE, SIG, TYPE_LKEY, 0, 8192, &body);
    pump(&mut a, &mut b);
    assert_eq!(b.read(0x3000, 8192), data);
    assert!(b.cqes().is_empty(), "a WRITE without immediate consumes no receive");
    assert_eq!(a.cqes()[0].status(), cqe_status::SUCCESS);

    // READ 5000 bytes from B's @0x8000 into A's @0x2_0000.
    let data = pattern(5000, 99);
    b.fill(0x8000, &data);
    let mut body = sge_bytes(VA + 0x8000, b.key, 5000);
    body.extend(a.sge(0x2_0000, 5000));
    a.post_send(wqe_opcode::READ, SIG, TYPE_LKEY, 0, 5000, &body);
    pump(&mut a, &mut b);
    assert_eq!(a.read(0x2_0000, 5000), data);
    let tx = a.cqes();
    assert_eq!((tx.len(), tx[0].status(), tx[0].0[1]), (1, cqe_status::SUCCESS, 5000));
}

#[test]
fn a_wrong_rkey_completes_rem_access_err_then_the_qp_is_silent() {
    let (_d, mut a, mut b) = pair();
    let before = b.read(0x3000, 64);
    a.fill(0, &[0x5A; 64]);
    // Another generation of B's key: same index, wrong key.
    let mut body = sge_bytes(VA + 0x3000, b.key ^ 0x80, 64);
    body.extend(a.sge(0, 64));
    a.post_send(wqe_opcode::WRITE, SIG, TYPE_LKEY, 0, 64, &body);
    pump(&mut a, &mut b);
    assert_eq!(b.read(0x3000, 64), before, "B's memory untouched");
    let tx = a.cqes();
    assert_eq!(tx.len(), 1);
    assert_eq!(tx[0].status(), cqe_status::REM_ACCESS_ERR);
    // Silence after: another WQE makes no frame and no CQE on either side.
    b.post_recv(0, 64);
    let sge = a.sge(0, 64);
    a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    assert_eq!(pump(&mut a, &mut b), 0);
    assert!(a.cqes().is_empty() && b.cqes().is_empty());
}

#[test]
fn bad_wqes_and_sges_complete_with_errors_never_touching_the_peer() {
    let (_d, mut a, mut b) = pair();
    b.post_recv(0, 4096);
    let before = b.read(0, 4096);
    // An SGE whose lkey names no region: LOC_PROT_ERR, nothing on the wire.
    let sge = sge_bytes(VA, 0xDEAD_0001, 64);
    let idx = a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    assert_eq!(pump(&mut a, &mut b), 0, "nothing sent");
    let tx = a.cqes();
    assert_eq!((tx.len(), tx[0].wqe_index(), tx[0].status()), (1, idx as u16, cqe_status::LOC_PROT_ERR));
    assert_eq!(b.read(0, 4096), before);
    assert!(b.cqes().is_empty());

    // A fresh pair: a garbage WQE (an opcode ocrdma never posts, a size past the entry).
    let (_d, mut a, mut b) = pair();
    let mut garbage = vec![0xFFu8; 256];
    garbage[..4].copy_from_slice(&0x0FFF_FF1Fu32.to_le_bytes());
    a.host.mem.poke(a.qp.sq.0, &garbage);
    a.host.pd_doorbell(a.pd, DB_SQ, RoceSqDoorbell::new(a.qp.sq_dbid, 1).0);
    assert_eq!(pump(&mut a, &mut b), 0);
    let tx = a.cqes();
    assert_eq!((tx.len(), tx[0].status()), (1, cqe_status::LOC_QP_OP_ERR));
    // An SGE whose range runs past B's region, as READ target from the peer: REM_ACCESS_ERR.
    let (_d, mut a, mut b) = pair();
    let mut body = sge_bytes(VA + BUF_LEN as u64 - 16, b.key, 64);
    body.extend(a.sge(0, 64));
    a.post_send(wqe_opcode::READ, SIG, TYPE_LKEY, 0, 64, &body);
    pump(&mut a, &mut b);
    assert_eq!(a.cqes()[0].status(), cqe_status::REM_ACCESS_ERR);
    // Doorbells on a PD page with no QP: a queue miss, nothing else.
    let other = a.pd + 1;
    a.host.pd_doorbell(other, DB_SQ, RoceSqDoorbell::new(a.qp.sq_dbid, 1).0);
    a.host.pd_doorbell(other, DB_RQ, RoceRqDoorbell::new(a.qp.rq_dbid, 1).0);
    assert!(a.host.dev.queue_misses().contains(&QueueMiss { kind: QueueKind::Qp, id: a.qp.sq_dbid }));
    assert_eq!(pump(&mut a, &mut b), 0);
    assert!(a.cqes().is_empty());
}

#[test]
fn delete_qp_under_traffic_posts_nothing_for_the_deleted_qp() {
    let (_d, mut a, mut b) = pair();
    for i in 0..4 {
        b.post_recv(i * 4096, 4096);
    }
    for i in 0..4 {
        let sge = a.sge(i * 4096, 4096);
        a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 4096, &sge);
    }
    // Half the frames reach B, then B deletes its QP with the rest in flight.
    b.port.deliver(&mut b.host.dev);
    let _ = b.cqes();
    let id = b.qp.id;
    b.host.ocrdma_destroy_qp(&mut b.roce, id).unwrap();
    pump(&mut a, &mut b);
    assert!(b.cqes().is_empty(), "no CQE for a destroyed QP");
    // A got at most its completed sends, never an entry naming QP 0 or another QP.
    for cqe in a.cqes() {
        assert_eq!(cqe.qpn(), a.qp.id);
    }
}

#[test]
fn with_pfc_frames_are_priority_tagged_and_still_reach_the_qp() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = cable(64);
    let mut a = end(&dir.path().join("a"), 0x0A00_0000_0000, pa);
    let mut b = end(&dir.path().join("b"), 0x0B00_0000_0000, pb);
    let (qa, qb, ma, mb) = (a.qp.id, b.qp.id, a.mac, b.mac);
    a.connect_with(qb, mb, (PSN_A, PSN_B), Some(3), (0, 7));
    b.connect_with(qa, ma, (PSN_B, PSN_A), Some(3), (0, 7));
    // A's frames are caught, checked and handed to B by hand; B's answers take the cable.
    let caught = Recorder::default();
    a.host.dev.attach_wire(Box::new(caught.clone()));
    b.post_recv(0, 100);
    let data = pattern(100, 5);
    a.fill(0, &data);
    let sge = a.sge(0, 100);
    a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 100, &sge);
    let frames = std::mem::take(&mut *caught.0.lock().unwrap());
    assert_eq!(frames.len(), 1);
    let f = &frames[0];
    assert_eq!((&f[..6], &f[6..12]), (&mb[..], &ma[..]), "to B's MAC from A's port MAC");
    assert_eq!(&f[12..14], &[0x81, 0x00], "802.1Q");
    assert_eq!(u16::from_be_bytes([f[14], f[15]]), 3 << 13, "PCP = SL 3, VLAN 0");
    assert_eq!(&f[16..18], &[0x89, 0x15], "RoCE v1");
    assert_eq!(&f[18 + 8..18 + 24], &gid(ma), "GRH source GID");
    assert_eq!(b.host.dev.receive(f), oce_emulator::datapath::Receipt::Delivered);
    assert_eq!(b.read(0, 100), data);
    assert_eq!(b.cqes().len(), 1);
    a.port.deliver(&mut a.host.dev);
    assert_eq!(a.cqes()[0].status(), cqe_status::SUCCESS, "B's tagged ACK reached A");
}

#[test]
fn a_key_of_another_pd_is_loc_prot_err_and_a_reset_drops_every_qp() {
    let (_d, mut a, mut b) = pair();
    // A region on another PD of A's: its key is refused for A's QP.
    let other_pd = a.pd + 1;
    let page = a.host.mem.alloc(4096);
    let (key, _) = a.host.ocrdma_reg_mr(&mut a.roce, other_pd, &[page], VA, 4096, ACCESS_ALL).unwrap();
    b.post_recv(0, 64);
    let sge = sge_bytes(VA, key, 64);
    a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    assert_eq!(pump(&mut a, &mut b), 0);
    assert_eq!(a.cqes()[0].status(), cqe_status::LOC_PROT_ERR);
    assert!(b.cqes().is_empty());
    // B's function resets: its QPs are gone, a frame for them is dropped.
    let (_d, mut a, mut b) = pair();
    b.host.dev.reset();
    b.post_recv(0, 64);
    let sge = a.sge(0, 64);
    a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    pump(&mut a, &mut b);
    assert!(b.host.dev.firmware().events().iter().all(|e| !matches!(e, oce_emulator::Event::DmaFault { .. })));
    assert!(a.cqes().is_empty(), "no ACK from a reset adapter");
}

#[test]
fn when_the_peer_qp_vanishes_poll_retransmits_then_completes_retry_exc_err_once() {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = cable(64);
    let mut a = end(&dir.path().join("a"), 0x0A00_0000_0000, pa);
    let mut b = end(&dir.path().join("b"), 0x0B00_0000_0000, pb);
    let (qa, qb, ma, mb) = (a.qp.id, b.qp.id, a.mac, b.mac);
    // ACK timeout code 14: 4.096 µs × 2^14 ≈ 67 ms (IBTA); 2 retries.
    a.connect_with(qb, mb, (PSN_A, PSN_B), None, (14, 2));
    b.connect(qa, ma, (PSN_B, PSN_A));
    let clock = std::sync::Arc::new(oce_mailbox::ManualClock::new());
    a.host.dev.set_clock(clock.clone());
    b.host.ocrdma_destroy_qp(&mut b.roce, qb).unwrap();
    let sge = a.sge(0, 64);
    a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    assert_eq!(pump(&mut a, &mut b), 1, "the SEND, dropped at B");
    assert!(a.host.dev.poll().is_some(), "a retransmit timer is due");
    let mut sent = Vec::new();
    for _ in 0..6 {
        clock.advance(std::time::Duration::from_millis(70));
        a.host.dev.poll();
        sent.push(pump(&mut a, &mut b));
    }
    assert_eq!(sent, [1, 1, 0, 0, 0, 0], "two retransmissions, then nothing");
    let tx = a.cqes();
    assert_eq!(tx.len(), 1);
    assert_eq!(tx[0].status(), cqe_status::RETRY_EXC_ERR);
    assert!(a.host.dev.poll().is_none(), "no timer left");
}

impl End {
    /// MODIFY_QP to ERR (ocrdma state 6, `ocrdma_qp_state`), as rdma_disconnect and
    /// ib_drain_qp do.
    fn modify_to_err(&mut self) {
        let id = self.qp.id;
        self.host.ocrdma_modify_qp(&mut self.roce, &to_state(id, 6), V_STATE).unwrap();
    }
}

#[test]
fn modify_to_err_flushes_every_held_receive_with_wr_flush_err() {
    let (_d, mut a, mut b) = pair();
    for i in 0..3 {
        b.post_recv(i * 4096, 4096);
    }
    let sge = a.sge(0, 64);
    a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    pump(&mut a, &mut b);
    let done = b.cqes();
    assert_eq!((done.len(), done[0].status()), (1, cqe_status::SUCCESS), "one receive used");
    // One more receive, then the driver moves B's QP to ERR: the three it holds complete
    // WR_FLUSH_ERR, on its RQ, naming it.
    b.post_recv(3 * 4096, 4096);
    b.modify_to_err();
    let flushed = b.cqes();
    assert_eq!(flushed.len(), 3);
    for cqe in &flushed {
        assert!(!cqe.is_sq());
        assert_eq!((cqe.qpn(), cqe.status()), (b.qp.id, cqe_status::WR_FLUSH_ERR));
    }
    // ERR again flushes nothing more, and A's next SEND finds a silent QP.
    b.modify_to_err();
    a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    pump(&mut a, &mut b);
    assert!(b.cqes().is_empty());
}
