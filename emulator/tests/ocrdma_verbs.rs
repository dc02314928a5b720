//! ocrdma's verbs against the device through the ocrdma-like host: what `ib_mad` does at
//! `modprobe ocrdma` (a kernel CQ_CREATE v3, the GSI QP, MODIFY_QP to RTS), what libocrdma does
//! for `ibv_rc_pingpong` up to RTS (a user CQ, a memory region long enough for
//! REGISTER_NSMR_CONT, an RC QP, INIT→RTR→RTS with an AV, QUERY_QP, DELETE_QP, DEALLOC_LKEY), the
//! RoCE doorbells on the PD pages, the seam a RoCE transport plugs into, and the statuses bad
//! requests get (spec/datapath.md §2; the rules in `oce_emulator::assumptions`, "RoCE engine").

use std::sync::{Arc, Mutex};

mod common;

use oce_testhost as be2net_host;

use be2net_host::ocrdma::Roce;
use be2net_host::ocrdma_verbs::{DB_CQ, DB_RQ, DB_SQ, HostQp};
use be2net_host::{Host, HostError};
use common::roce::{
    V_ACK_TO, V_AV, V_DEST_QPN, V_IRD, V_ORD, V_PKEY, V_PMTU, V_QKEY, V_RETRY, V_RNR_RETRY, V_RNR_TIMER, V_RQ_PSN,
    V_SQ_PSN, V_STATE, gid, put, read_cqe, switch_to_roce, to_state,
};
use oce_emulator::datapath::roce::{RoceQueues, RoceTransport, WorkQueue};
use oce_emulator::{Event, QueueKind, QueueMiss};
use oce_mailbox::doorbells::{CqDoorbell, RoceRqDoorbell, RoceSqDoorbell};
use oce_mailbox::entries::{Cqe, cqe_status};
use oce_mailbox::status::{AdditionalStatus, BaseStatus};

/// A RoCE adapter probed by be2net and ocrdma.
fn probed() -> (tempfile::TempDir, Host, Roce) {
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::new(&dir.path().join("emu"));
    switch_to_roce(&mut host);
    host.probe(1).unwrap();
    let roce = host.ocrdma_add(1).unwrap();
    (dir, host, roce)
}

fn status(r: Result<impl std::fmt::Debug, HostError>) -> (BaseStatus, AdditionalStatus) {
    match r {
        Err(HostError::Status(s)) => (s.base, s.additional),
        other => panic!("expected a failure status: {other:?}"),
    }
}

const ILLEGAL_FIELD: (BaseStatus, AdditionalStatus) = (BaseStatus::IllegalField, AdditionalStatus::None);

#[test]
fn ib_mad_opens_port_1_cq_v3_gsi_qp_to_rts() {
    let (_d, mut host, mut roce) = probed();
    let pd = roce.pd_range.unwrap().first.pd_id; // the kernel PD: first of the pool
    let (cq, cq_ring) = host.ocrdma_create_cq(&mut roce, 0).unwrap();
    assert_ne!(cq, roce.mq_cq.id);
    // GSI QP: mad_sendq_size 128, mad_recvq_size 512, LKEY0 (kernel QP).
    let qp = host.ocrdma_create_qp(&mut roce, 1, pd, cq, (128, 512), 1 << 1).unwrap();
    // 129 WQEs → 256 × 256 B = 64 KiB in 8 KiB pages; 513 RQEs → 1024 × 128 B in 16 KiB pages.
    // Response: QP 1 (GSI), log2 8 / 10, SGEs echoed, ORD/IRD 8/8, doorbell ids 1/1, no DPP.
    assert_eq!(qp.response, [1, (8 << 16) | 10, 0x0001_0001, 0x0001_0000, 0x0008_0008, 0x0001_0001, 0]);
    assert_eq!((qp.sq_entries, qp.rq_entries), (256, 1024));
    // ib_mad's RST→INIT (P_Key index 0, Q_Key 0x80010000), INIT→RTR, RTR→RTS (SQ PSN 0).
    let mut init = to_state(1, 1);
    put(&mut init, 84, 0x8001_0000);
    host.ocrdma_modify_qp(&mut roce, &init, V_STATE | V_PKEY | V_QKEY).unwrap();
    host.ocrdma_modify_qp(&mut roce, &to_state(1, 2), V_STATE).unwrap();
    let rsp = host.ocrdma_modify_qp(&mut roce, &to_state(1, 3), V_STATE | V_SQ_PSN).unwrap();
    assert_eq!(&rsp[16..24], &[10, 0, 8, 0, 8, 0, 8, 0], "max_wqe_rqe, max_ord_ird");
    let mut expected = [0u8; 88];
    put(&mut expected, 0, 1);
    put(&mut expected, 4, (8 << 16) | 10);
    put(&mut expected, 8, 0x0001_0001);
    put(&mut expected, 12, (1 << 16) | (3 << 5) | (1 << 1)); // 1 recv SGE, RTS, LKEY0
    put(&mut expected, 16, 0x0008_0008);
    put(&mut expected, 20, (u32::from(cq) << 16) | u32::from(cq));
    put(&mut expected, 84, 0x8001_0000);
    assert_eq!(host.ocrdma_query_qp(&mut roce, 1).unwrap(), expected);
    // ib_mad posts receives: an RQE, then the RQ doorbell on the PD's page; then a send. The
    // UD engine runs QP1 from RTR on: the all-zero send entry (size 0, no UD header) is no WQE
    // it can carry out, so one error CQE for QP 1's entry 0 (tests/roce_ud.rs sends real MADs).
    host.pd_doorbell(pd, DB_RQ, RoceRqDoorbell::new(qp.rq_dbid, 1).0);
    host.pd_doorbell(pd, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    let events = host.dev.firmware().events();
    assert!(!events.iter().any(|e| matches!(e, Event::RoceNotModelled { .. })), "{events:?}");
    let cqe = read_cqe(&host, cq_ring.pages[0]);
    assert!(cqe.is_valid() && cqe.is_sq());
    assert_eq!((cqe.qpn(), cqe.wqe_index(), cqe.status()), (1, 0, cqe_status::LOC_QP_OP_ERR));
    assert!(host.dev.queue_misses().is_empty(), "{:?}", host.dev.queue_misses());
    // A second GSI QP: the function has its one.
    let again = host.ocrdma_create_qp(&mut roce, 1, pd, cq, (128, 512), 1 << 1);
    assert_eq!(status(again), (BaseStatus::Failed, AdditionalStatus::InsufficientResources));
}

/// What a plugged-in transport saw of each doorbell.
#[derive(Debug, Default)]
struct Seen {
    sq: Vec<(u16, u32, Vec<u8>)>,
    rq: Vec<(u16, u32)>,
    mr_pages: Option<(usize, u64)>,
    posted: Vec<bool>,
}

/// A transport that records what it is told and, on an SQ doorbell, reads the WQE, looks up
/// a memory region and completes the WQE (a stand-in for the RC engine, to test the seam).
#[derive(Debug)]
struct Recorder {
    seen: Arc<Mutex<Seen>>,
    key: u32,
}

impl RoceTransport for Recorder {
    fn sq_posted(&mut self, qp: u16, queues: &mut dyn RoceQueues) {
        let view = queues.qp(qp).unwrap();
        let index = (view.sq_producer + view.sq_entries - 1) % view.sq_entries;
        let wqe = queues.read_wqe(qp, index).unwrap();
        let mut seen = self.seen.lock().unwrap();
        seen.mr_pages = queues.memory_region(self.key).map(|mr| (mr.pages.len(), mr.pages[mr.pages.len() - 1]));
        seen.sq.push((qp, view.sq_producer, wqe));
        let posted = queues.post_cqe(qp, WorkQueue::Sq, &Cqe::sq(index as u16, 0, qp, 0), false);
        seen.posted.push(posted);
    }
    fn rq_posted(&mut self, qp: u16, queues: &mut dyn RoceQueues) {
        let view = queues.qp(qp).unwrap();
        self.seen.lock().unwrap().rq.push((qp, view.rq_producer));
    }
}

#[test]
fn rc_pingpong_up_to_rts_then_teardown() {
    let (_d, mut host, mut roce) = probed();
    let pd = roce.pd_range.unwrap().first.pd_id + 1; // the user context's PD
    let (cq, cq_ring) = host.ocrdma_create_cq(&mut roce, pd).unwrap();
    // A 44 MiB region: 11 265 pages need 23 PBL pages, one more than REGISTER_NSMR carries.
    let pages: Vec<u64> = (0..11_265u64).map(|i| 0x2_0000_0000 + i * 4096).collect();
    let access = (1 << 27) | (1 << 28) | (1 << 29);
    let (key, pbls) = host.ocrdma_reg_mr(&mut roce, pd, &pages, 0x7f00_0000_0000, 11_265 * 4096, access).unwrap();
    assert_eq!(pbls.len(), 23);
    assert_eq!(key, 0x101, "index 1, generation 1");
    // ibv_rc_pingpong: rx_depth 500, one send outstanding; libocrdma asks for inbound R/W.
    let qp: HostQp = host.ocrdma_create_qp(&mut roce, 2, pd, cq, (1, 500), (1 << 3) | (1 << 4)).unwrap();
    // 2 WQEs round to one 4 KiB page of 16; 501 RQEs to 512 in eight 8 KiB pages.
    assert_eq!(qp.response, [2, (4 << 16) | 9, 0x0001_0001, 0x0001_0000, 0x0008_0008, 0x0002_0002, 0]);
    host.ocrdma_modify_qp(&mut roce, &to_state(2, 1), V_STATE | V_PKEY).unwrap();
    // INIT→RTR with the AV: dest QPN 0x203, RQ PSN 0x1234, MTU 1024, RNR timer 12, IRD 1,
    // hop limit 1, link-local GIDs, the peer's MAC.
    let (ours, peer) = ([2, 0, 0xc9, 0, 0, 1], [2, 0, 0xc9, 0, 0, 2]);
    let mut rtr = to_state(2, 2);
    put(&mut rtr, 16, (1 << 16) | 1);
    put(&mut rtr, 24, (1 << 24) | 0x1234);
    put(&mut rtr, 32, 0x203);
    put(&mut rtr, 36, 1024 << 18);
    put(&mut rtr, 40, 12 << 27);
    rtr[44..60].copy_from_slice(&gid(ours));
    rtr[60..76].copy_from_slice(&gid(peer));
    rtr[76..82].copy_from_slice(&peer);
    let valid = V_STATE | V_AV | V_DEST_QPN | V_PMTU | V_RNR_TIMER | V_RQ_PSN | V_IRD;
    host.ocrdma_modify_qp(&mut roce, &rtr, valid).unwrap();
    // RTR→RTS: timeout 14, retry 7, RNR retry 7, SQ PSN 0x5678, ORD 1.
    let mut rts = to_state(2, 3);
    put(&mut rts, 16, (1 << 16) | 1);
    put(&mut rts, 28, 0x5678);
    put(&mut rts, 32, (14 << 27) | (7 << 24));
    put(&mut rts, 40, 7 << 24);
    host.ocrdma_modify_qp(&mut roce, &rts, V_STATE | V_ACK_TO | V_RETRY | V_RNR_RETRY | V_SQ_PSN | V_ORD).unwrap();
    let mut expected = [0u8; 88];
    put(&mut expected, 0, 2);
    put(&mut expected, 4, (4 << 16) | 9);
    put(&mut expected, 8, 0x0001_0001);
    put(&mut expected, 12, (1 << 16) | (3 << 5) | (1 << 3) | (1 << 4));
    put(&mut expected, 16, 0x0001_0001);
    put(&mut expected, 20, (u32::from(cq) << 16) | u32::from(cq));
    put(&mut expected, 24, (1 << 24) | 0x1234);
    put(&mut expected, 28, 0x5678);
    put(&mut expected, 32, (14 << 27) | (7 << 24) | 0x203);
    put(&mut expected, 36, 1024 << 18);
    put(&mut expected, 40, (12 << 27) | (7 << 24));
    expected[44..60].copy_from_slice(&gid(ours));
    expected[60..76].copy_from_slice(&gid(peer));
    expected[76..82].copy_from_slice(&peer);
    assert_eq!(host.ocrdma_query_qp(&mut roce, 2).unwrap(), expected);

    // The seam: a transport hears of the doorbells and sees the WQE, the region and the CQ.
    let seen = Arc::new(Mutex::new(Seen::default()));
    host.dev.set_roce_transport(Box::new(Recorder { seen: seen.clone(), key }));
    // (The CQ stays unarmed: the ocrdma-like host's MQ wait takes every event on this EQ for
    // the MQ's.)
    host.pd_doorbell(pd, DB_RQ, RoceRqDoorbell::new(qp.rq_dbid, 3).0);
    host.mem.poke(qp.sq.0, &[0x20, 0, 0x19, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0]);
    host.pd_doorbell(pd, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.rq, [(2, 3)]);
        assert_eq!(seen.sq.len(), 1);
        assert_eq!((seen.sq[0].0, seen.sq[0].1), (2, 1));
        assert_eq!(&seen.sq[0].2[..4], &[0x20, 0, 0x19, 0], "the WQE's bytes, 256 of them");
        assert_eq!(seen.sq[0].2.len(), 256);
        assert_eq!(seen.mr_pages, Some((11_265, 0x2_0000_0000 + 11_264 * 4096)), "every PBE read, hi dword first");
        assert_eq!(seen.posted, [true]);
    }
    // The CQE the transport posted, valid, on the user CQ.
    assert_eq!(&host.mem.peek(cq_ring.pages[0], 16)[8..16], &[2, 0, 0, 0, 0, 0, 0, 0x80]);

    // Teardown: DELETE_QP, then the QP is gone; DEALLOC_LKEY, then the key is.
    host.ocrdma_destroy_qp(&mut roce, 2).unwrap();
    assert_eq!(status(host.ocrdma_query_qp(&mut roce, 2)), ILLEGAL_FIELD);
    host.pd_doorbell(pd, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    assert_eq!(seen.lock().unwrap().sq.len(), 1, "a deleted QP's doorbell reaches nobody");
    assert!(host.dev.queue_misses().contains(&QueueMiss { kind: QueueKind::Qp, id: 2 }));
    host.ocrdma_dealloc_lkey(&mut roce, key).unwrap();
    assert_eq!(status(host.ocrdma_dealloc_lkey(&mut roce, key)), ILLEGAL_FIELD);
}

#[test]
fn bad_requests_get_the_documented_statuses() {
    let (_d, mut host, mut roce) = probed();
    let pd = roce.pd_range.unwrap().first.pd_id;
    let (cq, _) = host.ocrdma_create_cq(&mut roce, 0).unwrap();
    // A PD outside the pool, for a user CQ and for a QP; a CQ that does not exist.
    assert_eq!(status(host.ocrdma_create_cq(&mut roce, 16)), ILLEGAL_FIELD);
    assert_eq!(status(host.ocrdma_create_qp(&mut roce, 2, 16, cq, (1, 1), 0)), ILLEGAL_FIELD);
    assert_eq!(status(host.ocrdma_create_qp(&mut roce, 2, pd, 999, (1, 1), 0)), ILLEGAL_FIELD);
    assert_eq!(status(host.ocrdma_create_qp(&mut roce, 3, pd, cq, (1, 1), 0)), ILLEGAL_FIELD, "type 3");
    // ocrdma clamps the SQ to max_wqes (1024): the deepest SQ it can ask for is accepted.
    let qp = host.ocrdma_create_qp(&mut roce, 2, pd, cq, (1023, 1), 0).unwrap();
    assert_eq!(qp.id, 2);
    // Illegal transitions and an MTU that is no IB MTU.
    assert_eq!(status(host.ocrdma_modify_qp(&mut roce, &to_state(2, 3), V_STATE)), ILLEGAL_FIELD, "RST→RTS");
    host.ocrdma_modify_qp(&mut roce, &to_state(2, 1), V_STATE).unwrap();
    assert_eq!(status(host.ocrdma_modify_qp(&mut roce, &to_state(2, 3), V_STATE)), ILLEGAL_FIELD, "INIT→RTS");
    let mut mtu = to_state(2, 2);
    put(&mut mtu, 36, 1500 << 18);
    assert_eq!(status(host.ocrdma_modify_qp(&mut roce, &mtu, V_STATE | V_PMTU)), ILLEGAL_FIELD);
    let mut ord = to_state(2, 1);
    put(&mut ord, 16, 9 << 16);
    assert_eq!(status(host.ocrdma_modify_qp(&mut roce, &ord, V_ORD)), ILLEGAL_FIELD, "ORD above 8");
    // Ids out of range or unknown.
    for id in [0u16, 3, 1025, 0xFFFF] {
        assert_eq!(status(host.ocrdma_query_qp(&mut roce, id)), ILLEGAL_FIELD, "{id}");
        assert_eq!(status(host.ocrdma_destroy_qp(&mut roce, id)), ILLEGAL_FIELD, "{id}");
        assert_eq!(status(host.ocrdma_modify_qp(&mut roce, &to_state(id, 1), V_STATE)), ILLEGAL_FIELD);
    }
    assert_eq!(status(host.ocrdma_dealloc_lkey(&mut roce, 0x4242)), ILLEGAL_FIELD);
    // A failed MODIFY_QP changed nothing: still INIT.
    assert_eq!(host.ocrdma_query_qp(&mut roce, 2).unwrap()[12] >> 5, 1);
    assert!(host.dev.queue_misses().is_empty());
}

#[test]
fn doorbells_on_pages_without_a_qp_change_nothing() {
    let (_d, mut host, mut roce) = probed();
    let pd = roce.pd_range.unwrap().first.pd_id;
    let (cq, cq_ring) = host.ocrdma_create_cq(&mut roce, 0).unwrap();
    let qp = host.ocrdma_create_qp(&mut roce, 2, pd, cq, (1, 1), 0).unwrap();
    let before = host.dev.firmware().events().len();
    // Every PD page but the QP's, every doorbell offset, a spread of values.
    for page in (1..16).filter(|&p| p != pd) {
        for off in [DB_SQ, DB_RQ, DB_CQ, 0, 0x140, 0xFFC] {
            for value in [0, 1, u32::from(qp.sq_dbid) | (1 << 16), u32::MAX] {
                host.pd_doorbell(page, off, value);
            }
        }
    }
    // Page 0's 0x1C0 is nobody's.
    host.write32(be2net_host::DB_BAR, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    assert_eq!(host.dev.firmware().events().len(), before, "no event, no transport work");
    assert!(host.mem.peek(cq_ring.pages[0], 64).iter().all(|&b| b == 0));
    let misses = host.dev.queue_misses();
    assert!(misses.contains(&QueueMiss { kind: QueueKind::Qp, id: qp.sq_dbid }), "wrong page");
    assert!(misses.iter().all(|m| matches!(m.kind, QueueKind::Qp | QueueKind::Cq | QueueKind::Eq)), "{misses:?}");
    // The QP's own page still works.
    host.pd_doorbell(pd, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    assert!(host.dev.firmware().events().contains(&Event::RoceNotModelled { qp: qp.id, producer: 1 }));
}

/// A transport that completes each SQ doorbell's WQE, marking the CQE solicited or not as told.
#[derive(Debug)]
struct Completer {
    solicited: Arc<Mutex<bool>>,
}

impl RoceTransport for Completer {
    fn sq_posted(&mut self, qp: u16, queues: &mut dyn RoceQueues) {
        let view = queues.qp(qp).unwrap();
        let index = (view.sq_producer + view.sq_entries - 1) % view.sq_entries;
        let solicited = *self.solicited.lock().unwrap();
        assert!(queues.post_cqe(qp, WorkQueue::Sq, &Cqe::sq(index as u16, 0, qp, 0), solicited));
    }
    fn rq_posted(&mut self, _: u16, _: &mut dyn RoceQueues) {}
}

#[test]
fn a_cq_armed_solicited_only_fires_for_a_solicited_entry_only() {
    let (_d, mut host, mut roce) = probed();
    let pd = roce.pd_range.unwrap().first.pd_id + 1;
    let (cq, _) = host.ocrdma_create_cq(&mut roce, pd).unwrap();
    let qp = host.ocrdma_create_qp(&mut roce, 2, pd, cq, (15, 1), 0).unwrap();
    let solicited = Arc::new(Mutex::new(false));
    host.dev.set_roce_transport(Box::new(Completer { solicited: solicited.clone() }));
    let eq = roce.eqs[0].clone();
    let eqe = |host: &Host, i: u32| host.mem.peek32(eq.ring.entry(eq.tail + i));
    // ocrdma_arm_cq with IB_CQ_SOLICITED: re-arm | solicited (bit 31), on the PD page.
    host.pd_doorbell(pd, DB_CQ, CqDoorbell::new(cq, true, 0).0 | CqDoorbell::SOLICITED);
    host.irq.take();
    host.pd_doorbell(pd, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    assert_eq!(eqe(&host, 0), 0, "an unsolicited entry posts no event");
    *solicited.lock().unwrap() = true;
    host.pd_doorbell(pd, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    assert_eq!(eqe(&host, 0), (u32::from(cq) << 16) | 1, "the solicited one does");
    assert!(!host.irq.take().is_empty(), "and the EQ fired");
    // Disarmed now: another solicited entry waits for the next arming.
    host.pd_doorbell(pd, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    assert_eq!(eqe(&host, 1), 0);
    // A plain re-arm (not solicited-only) with entries outstanding posts at once.
    host.pd_doorbell(pd, DB_CQ, CqDoorbell::new(cq, true, 0).0);
    assert_eq!(eqe(&host, 1), (u32::from(cq) << 16) | 1);
}

/// A transport that reads AV `index` on each SQ doorbell, as a UD send naming that AH would.
#[derive(Debug)]
struct AvReader {
    index: u32,
    seen: Arc<Mutex<Vec<Option<oce_mailbox::entries::Av>>>>,
}

impl RoceTransport for AvReader {
    fn sq_posted(&mut self, _: u16, queues: &mut dyn RoceQueues) {
        let av = queues.read_av(self.index);
        self.seen.lock().unwrap().push(av);
    }
    fn rq_posted(&mut self, _: u16, _: &mut dyn RoceQueues) {}
}

#[test]
fn an_av_ocrdma_wrote_into_the_ah_table_is_read_through_its_page_list() {
    let (_d, mut host, mut roce) = probed();
    let pd = roce.pd_range.unwrap().first.pd_id;
    let (cq, _) = host.ocrdma_create_cq(&mut roce, 0).unwrap();
    let qp = host.ocrdma_create_qp(&mut roce, 1, pd, cq, (1, 1), 1 << 1).unwrap();
    // set_av_attr for AH 70 (the second page: 70 × 64 = 4480), tagged with VLAN 0 / PCP 3:
    // DMAC, SMAC, 0x8100, TCI 0x6000, 0x8915, the GRH (version 6; PD 1, next header 0x1B, hop
    // limit 1; GIDs), valid = VALID | VLAN_VALID.
    let mut entry = [0u8; 64];
    entry[..6].copy_from_slice(&[2, 0, 0xc9, 0, 0, 2]);
    entry[6..12].copy_from_slice(&[2, 0, 0xc9, 0, 0, 1]);
    entry[12..18].copy_from_slice(&[0x81, 0x00, 0x60, 0x00, 0x89, 0x15]);
    entry[18..26].copy_from_slice(&[0x60, 0, 0, 0, 0x00, 0x01, 0x1b, 0x01]);
    entry[26..42].copy_from_slice(&gid([2, 0, 0xc9, 0, 0, 1]));
    entry[42..58].copy_from_slice(&gid([2, 0, 0xc9, 0, 0, 2]));
    entry[60] = 0x82;
    host.mem.poke(roce.av_table + 70 * 64, &entry);
    let seen = Arc::new(Mutex::new(Vec::new()));
    host.dev.set_roce_transport(Box::new(AvReader { index: 70, seen: seen.clone() }));
    host.pd_doorbell(pd, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    host.dev.set_roce_transport(Box::new(AvReader { index: 512, seen: seen.clone() }));
    host.pd_doorbell(pd, DB_SQ, RoceSqDoorbell::new(qp.sq_dbid, 1).0);
    let seen = seen.lock().unwrap();
    let av = seen[0].expect("AV 70 reads");
    assert_eq!((av.dmac, av.smac, av.vlan_tag), ([2, 0, 0xc9, 0, 0, 2], [2, 0, 0xc9, 0, 0, 1], Some(0x6000)));
    assert_eq!((av.grh.tclass_flow, av.pd_id(), av.grh.pdid_hoplimit & 0xFF), (0x6000_0000, 1, 1));
    assert_eq!(av.grh.dgid, gid([2, 0, 0xc9, 0, 0, 2]));
    assert_eq!(seen[1], None, "512 AVs of 64 bytes in 8 pages: index 512 is past the table");
}
