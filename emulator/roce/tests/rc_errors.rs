//! The RC transport's error paths: refused rkeys, RNR and its retries, a vanished peer,
//! out-of-sequence PSNs, a receive too small, and the bounds on queued work.

mod common;

use std::time::Duration;

use common::*;
use oce_roce::Error;
use oce_roce::packet::{NakCode, Opcode, Packet, Syndrome};
use oce_roce::rc::{Completion, Data, Qp, QpEvent, QpState, RecvWr, Remote, SendKind, SendOp, SendWr, Sge, Status};

fn wr(wr_id: u64, op: SendOp, data: Data) -> SendWr {
    SendWr { wr_id, op, data, signaled: true, solicited: false, fence: false }
}

fn send(wr_id: u64, len: usize) -> SendWr {
    wr(wr_id, SendOp::Send, Data::Inline(pattern(len, wr_id as u8)))
}

fn statuses(c: &[Completion]) -> Vec<(u64, Status)> {
    c.iter()
        .map(|c| match c {
            Completion::Send { wr_id, status, .. } | Completion::Recv { wr_id, status, .. } => (*wr_id, *status),
        })
        .collect()
}

#[test]
fn a_write_to_a_wrong_rkey_gives_rem_access_err_and_both_qps_go_silent() {
    let mut p = Pair::new();
    let ka = p.a.host.reg(BASE, 0x1000);
    let kb = p.b.host.reg(BASE, 0x1000);
    let data = Data::Sges(vec![Sge { addr: BASE, len: 100, lkey: ka }]);
    p.a.qp.post_send(wr(1, SendOp::Write(Remote { addr: BASE, rkey: kb + 1 }), data.clone())).unwrap();
    p.a.qp.post_send(send(2, 8)).unwrap();
    p.run();

    let from_b: Vec<_> = p.log.iter().filter(|s| s.from == 'b').map(|s| s.syndrome).collect();
    assert_eq!(from_b, [Some(Syndrome::Nak(NakCode::RemoteAccessError))]);
    assert_eq!(
        p.a.host.completions,
        [Completion::Send { wr_id: 1, kind: SendKind::Write, byte_len: 0, status: Status::RemAccessErr }]
    );
    assert_eq!((p.a.qp.state(), p.b.qp.state()), (QpState::Error, QpState::Error));
    assert_eq!(p.b.host.events, [QpEvent::AccessError]);
    assert_eq!(p.b.host.bytes(BASE, 100), [0; 100]);

    // Silence: the queued SEND never goes out, nothing more completes, posting is refused.
    let before = p.log.len();
    p.advance(Duration::from_secs(1));
    assert_eq!(p.log.len(), before);
    assert_eq!(p.a.host.completions.len(), 1);
    assert_eq!(p.a.qp.post_send(send(3, 1)), Err(Error::QpError { qpn: QPN_A }));
    assert_eq!(p.a.qp.deadline(), None);
}

#[test]
fn a_read_beyond_the_region_gives_rem_access_err_without_any_response_data() {
    let mut p = Pair::new();
    let ka = p.a.host.reg(BASE, 0x4000);
    let kb = p.b.host.reg(BASE, 0x1000);
    let sges = vec![Sge { addr: BASE, len: 4000, lkey: ka }];
    // The first MTU is inside the region, the last is not: no response may go out.
    p.a.qp.post_send(wr(4, SendOp::Read(Remote { addr: BASE + 0x400, rkey: kb }), Data::Sges(sges))).unwrap();
    p.run();
    let from_b: Vec<_> = p.log.iter().filter(|s| s.from == 'b').map(|s| (s.opcode, s.syndrome)).collect();
    assert_eq!(from_b, [(Opcode::RcAck, Some(Syndrome::Nak(NakCode::RemoteAccessError)))]);
    assert_eq!(statuses(&p.a.host.completions), [(4, Status::RemAccessErr)]);
}

#[test]
fn a_qp_without_remote_write_refuses_a_write_to_a_valid_rkey() {
    let mut p = Pair::with(|_, b| b.remote_write = false);
    let kb = p.b.host.reg(BASE, 0x1000);
    p.a.qp.post_send(wr(1, SendOp::Write(Remote { addr: BASE, rkey: kb }), Data::Inline(vec![1; 8]))).unwrap();
    p.run();
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::RemAccessErr)]);
    assert_eq!(p.b.host.bytes(BASE, 8), [0; 8]);
}

#[test]
fn a_send_without_a_receive_is_rnr_nakked_then_retried_after_the_timer_until_it_lands() {
    let mut p = Pair::with(|a, b| {
        a.max_inline = 4096;
        b.min_rnr_timer = 14; // 1.28 ms (IBTA Table 45)
    });
    let kb = p.b.host.reg(BASE, 0x1000);
    p.a.qp.post_send(send(1, 2000)).unwrap();
    p.run();
    let rnr = Some(Syndrome::RnrNak { timer: 14 });
    let seen: Vec<_> = p.log.iter().map(|s| (s.from, s.opcode, s.psn, s.syndrome)).collect();
    // The FIRST is refused; the LAST that follows on the wire is dropped without a second NAK.
    assert_eq!(
        seen,
        [
            ('a', Opcode::RcSendFirst, 0xFF_FFFE, None),
            ('a', Opcode::RcSendLast, 0xFF_FFFF, None),
            ('b', Opcode::RcAck, 0xFF_FFFE, rnr)
        ]
    );
    assert_eq!(p.a.qp.deadline(), Some(Duration::from_micros(1280)));

    // Before the timer: nothing. A retry finds no receive yet: RNR again.
    p.advance(Duration::from_micros(1000));
    assert_eq!(p.log.len(), 3);
    p.advance(Duration::from_micros(280));
    assert_eq!(p.log.len(), 6);
    assert_eq!(p.log[5].syndrome, rnr);

    p.b.qp.post_recv(RecvWr { wr_id: 9, sges: vec![Sge { addr: BASE, len: 4096, lkey: kb }] }).unwrap();
    p.advance(Duration::from_micros(1280));
    assert_eq!(
        p.log[6..].iter().map(|s| (s.opcode, s.psn)).collect::<Vec<_>>(),
        [(Opcode::RcSendFirst, 0xFF_FFFE), (Opcode::RcSendLast, 0xFF_FFFF), (Opcode::RcAck, 0xFF_FFFF)]
    );
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::Success)]);
    assert_eq!(statuses(&p.b.host.completions), [(9, Status::Success)]);
    assert_eq!(p.b.host.bytes(BASE, 2000), &pattern(2000, 1)[..]);
}

#[test]
fn an_rnr_wait_longer_than_the_ack_timeout_uses_no_retransmission() {
    // retry_cnt 0: one ACK timeout (4 ms) would end the QP; the RNR timer (655.36 ms) is longer.
    let mut p = Pair::with(|a, b| {
        a.retry_cnt = 0;
        b.min_rnr_timer = 0;
    });
    let kb = p.b.host.reg(BASE, 0x100);
    p.a.qp.post_send(send(1, 10)).unwrap();
    p.run();
    assert_eq!(p.a.qp.deadline(), Some(Duration::from_micros(655_360)));
    p.b.qp.post_recv(RecvWr { wr_id: 2, sges: vec![Sge { addr: BASE, len: 16, lkey: kb }] }).unwrap();
    p.advance(Duration::from_micros(655_360));
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::Success)]);
    assert_eq!(statuses(&p.b.host.completions), [(2, Status::Success)]);
}

#[test]
fn rnr_retries_run_out_after_rnr_retry_naks() {
    let mut p = Pair::with(|a, _| a.rnr_retry = 2);
    p.a.qp.post_send(send(1, 10)).unwrap();
    for _ in 0..5 {
        p.advance(Duration::from_millis(1));
    }
    let naks = p.log.iter().filter(|s| matches!(s.syndrome, Some(Syndrome::RnrNak { .. }))).count();
    assert_eq!(naks, 3, "the first try and two retries");
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::RnrRetryExcErr)]);
    assert_eq!(p.a.qp.state(), QpState::Error);
}

#[test]
fn a_write_with_immediate_waits_for_a_receive_and_keeps_its_data() {
    let mut p = Pair::new();
    let kb = p.b.host.reg(BASE, 0x1000);
    p.a.qp
        .post_send(wr(1, SendOp::WriteImm(Remote { addr: BASE, rkey: kb }, 7), Data::Inline(vec![0xAB; 200])))
        .unwrap();
    p.run();
    assert_eq!(p.log.last().unwrap().syndrome, Some(Syndrome::RnrNak { timer: 1 }));
    p.b.qp.post_recv(RecvWr { wr_id: 3, sges: vec![] }).unwrap();
    p.advance(Duration::from_millis(1));
    assert_eq!(p.b.host.bytes(BASE, 200), [0xAB; 200]);
    assert_eq!(statuses(&p.b.host.completions), [(3, Status::Success)]);
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::Success)]);
}

#[test]
fn when_the_peer_vanishes_the_requester_retransmits_retry_cnt_times_then_reports_retry_exc_err() {
    let mut p = Pair::with(|a, _| {
        a.retry_cnt = 3;
        a.max_inline = 4096;
    });
    p.drop_a = true;
    p.a.qp.post_send(send(1, 1500)).unwrap();
    p.run();
    for _ in 0..10 {
        let Some(t) = p.a.qp.deadline() else { break };
        p.now = t;
        p.run();
    }
    // Two packets at first, then two per retransmission.
    assert_eq!(p.sent_by_a(), 2 + 3 * 2);
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::RetryExcErr)]);
    assert_eq!(p.a.qp.state(), QpState::Error);
    assert_eq!(p.now, Duration::from_millis(16), "four timeouts of 4 ms");
}

#[test]
fn a_packet_lost_mid_message_is_nakked_once_and_the_requester_goes_back_to_it() {
    let mut p = Pair::with(|a, _| a.max_inline = 4096);
    let kb = p.b.host.reg(BASE, 0x2000);
    p.b.qp.post_recv(RecvWr { wr_id: 1, sges: vec![Sge { addr: BASE, len: 0x2000, lkey: kb }] }).unwrap();
    p.drop_a_nth = Some(1); // the MIDDLE at PSN 0xFFFFFF
    p.a.qp.post_send(send(1, 4000)).unwrap();
    p.run();
    let seen: Vec<_> = p.log.iter().map(|s| (s.from, s.opcode, s.psn, s.syndrome)).collect();
    use Opcode::*;
    let seq = Some(Syndrome::Nak(NakCode::PsnSequenceError));
    assert_eq!(
        seen,
        [
            ('a', RcSendFirst, 0xFF_FFFE, None),
            ('a', RcSendMiddle, 0, None),
            ('a', RcSendLast, 1, None),
            ('b', RcAck, 0xFF_FFFF, seq),
            ('a', RcSendMiddle, 0xFF_FFFF, None),
            ('a', RcSendMiddle, 0, None),
            ('a', RcSendLast, 1, None),
            ('b', RcAck, 1, Some(Syndrome::Ack { credits: 0x1F })),
        ]
    );
    assert_eq!(p.b.host.bytes(BASE, 4000), &pattern(4000, 1)[..]);
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::Success)]);
}

#[test]
fn a_packet_ahead_of_the_expected_psn_is_nakked_with_the_expected_psn() {
    let mut p = Pair::new();
    // Build A's next packet, then hand B a copy with a PSN 5 ahead.
    p.a.qp.post_send(send(1, 4)).unwrap();
    p.a.qp.poll(&mut p.a.host, p.now);
    let frame = p.a.host.out.pop().unwrap();
    let mut pkt = Packet::decode(&frame).unwrap();
    pkt.bth.psn = PSN_A + 5 - (1 << 24);
    p.b.qp.receive(&mut p.b.host, &pkt, p.now);
    let nak = Packet::decode(&p.b.host.out[0]).unwrap();
    assert_eq!((nak.bth.opcode, nak.bth.psn), (Opcode::RcAck, PSN_A));
    assert_eq!(nak.aeth.unwrap().syndrome, Syndrome::Nak(NakCode::PsnSequenceError));
    assert_eq!(nak.bth.dest_qpn, QPN_A);
    // A second one is dropped silently; the expected one is taken.
    p.b.qp.receive(&mut p.b.host, &pkt, p.now);
    assert_eq!(p.b.host.out.len(), 1);
    assert_eq!(p.b.qp.expected_psn(), PSN_A);
}

#[test]
fn a_send_longer_than_the_receive_is_loc_len_err_there_and_rem_inv_req_err_here() {
    let mut p = Pair::new();
    let kb = p.b.host.reg(BASE, 0x1000);
    p.b.qp.post_recv(RecvWr { wr_id: 8, sges: vec![Sge { addr: BASE, len: 100, lkey: kb }] }).unwrap();
    p.a.qp.post_send(send(1, 101)).unwrap();
    p.run();
    assert_eq!(statuses(&p.b.host.completions), [(8, Status::LocLenErr)]);
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::RemInvReqErr)]);
    assert_eq!(p.b.host.events, [QpEvent::RequestError]);
}

#[test]
fn a_send_with_invalidate_naming_an_unknown_rkey_fails_the_receive_and_is_nakked() {
    let mut p = Pair::new();
    let kb = p.b.host.reg(BASE, 0x1000);
    p.b.qp.post_recv(RecvWr { wr_id: 4, sges: vec![Sge { addr: BASE, len: 64, lkey: kb }] }).unwrap();
    // A key B never registered (B's keys end in 0x5A).
    p.a.qp.post_send(wr(2, SendOp::SendInv(0x0000_7701), Data::Inline(vec![1; 8]))).unwrap();
    p.run();
    assert_eq!(statuses(&p.b.host.completions), [(4, Status::RemInvReqErr)]);
    assert_eq!(statuses(&p.a.host.completions), [(2, Status::RemInvReqErr)]);
    assert_eq!(p.b.host.events, [QpEvent::RequestError]);
    assert!(p.b.host.mrs.iter().any(|r| r.key == kb), "B's own region is untouched");
}

#[test]
fn a_local_key_that_does_not_cover_the_sge_gives_loc_prot_err() {
    let mut p = Pair::new();
    let ka = p.a.host.reg(BASE, 0x100);
    p.a.qp.post_send(wr(1, SendOp::Send, Data::Sges(vec![Sge { addr: BASE, len: 0x101, lkey: ka }]))).unwrap();
    p.run();
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::LocProtErr)]);
    assert!(p.log.is_empty());
}

#[test]
fn queued_work_is_bounded_and_inline_data_too() {
    let mut p = Pair::with(|a, b| {
        a.max_send_wr = 2;
        b.max_recv_wr = 1;
    });
    p.a.qp.post_send(send(1, 1)).unwrap();
    p.a.qp.post_send(send(2, 1)).unwrap();
    assert_eq!(p.a.qp.post_send(send(3, 1)), Err(Error::QueueFull { queue: "send", limit: 2 }));
    p.b.qp.post_recv(RecvWr { wr_id: 1, sges: vec![] }).unwrap();
    assert_eq!(
        p.b.qp.post_recv(RecvWr { wr_id: 2, sges: vec![] }),
        Err(Error::QueueFull { queue: "receive", limit: 1 })
    );
    assert_eq!(p.b.qp.post_send(send(4, 225)), Err(Error::InlineTooLong { len: 225, limit: 224 }));
    let read = wr(5, SendOp::Read(Remote { addr: 0, rkey: 1 }), Data::Inline(vec![0; 4]));
    assert_eq!(p.b.qp.post_send(read), Err(Error::InlineRead));
    let mut p = Pair::with(|a, _| a.max_rd_atomic = 0);
    let read = wr(6, SendOp::Read(Remote { addr: 0, rkey: 1 }), Data::Sges(vec![]));
    assert_eq!(p.a.qp.post_send(read), Err(Error::NoReadCredits { qpn: QPN_A }));
    assert_eq!(Qp::new(config(0, QPN_B, 0, 0)).err(), Some(Error::Qpn(0)));
    assert_eq!(Qp::new(config(QPN_A, 1 << 24, 0, 0)).err(), Some(Error::Qpn(1 << 24)));
    let mut c = config(QPN_A, QPN_B, 0, 0);
    c.mtu = 1500;
    assert_eq!(Qp::new(c).err(), Some(Error::Mtu(1500)));
}

#[test]
fn ord_bounds_outstanding_reads_and_a_fenced_send_waits_for_them() {
    let mut p = Pair::with(|a, _| a.max_rd_atomic = 1);
    let ka = p.a.host.reg(BASE, 0x4000);
    let kb = p.b.host.reg(BASE, 0x4000);
    p.b.qp.post_recv(RecvWr { wr_id: 1, sges: vec![] }).unwrap();
    let read = |id, at| {
        wr(id, SendOp::Read(Remote { addr: BASE, rkey: kb }), Data::Sges(vec![Sge { addr: at, len: 2048, lkey: ka }]))
    };
    p.a.qp.post_send(read(1, BASE)).unwrap();
    p.a.qp.post_send(read(2, BASE + 0x1000)).unwrap();
    let mut fenced = send(3, 0);
    fenced.fence = true;
    p.a.qp.post_send(fenced).unwrap();
    // One poll: ORD 1 lets only the first READ out.
    p.a.qp.poll(&mut p.a.host, p.now);
    assert_eq!(p.a.host.out.len(), 1);
    p.run();
    use Opcode::*;
    let seen: Vec<_> = p.log.iter().map(|s| (s.from, s.opcode)).collect();
    assert_eq!(
        seen,
        [
            ('a', RcReadRequest),
            ('b', RcReadResponseFirst),
            ('b', RcReadResponseLast),
            ('a', RcReadRequest),
            ('b', RcReadResponseFirst),
            ('b', RcReadResponseLast),
            ('a', RcSendOnly),
            ('b', RcAck),
        ]
    );
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::Success), (2, Status::Success), (3, Status::Success)]);
}

#[test]
fn a_read_response_lost_mid_stream_is_asked_for_again_from_there_after_the_ack_timeout() {
    let mut p = Pair::new();
    let remote = pattern(4000, 0x77);
    let ka = p.a.host.reg(BASE, 0x2000);
    let kb = p.b.host.reg(BASE + 0x8000, 0x2000);
    p.b.host.fill(BASE + 0x8000, &remote);
    p.drop_b_nth = Some(1); // the first MIDDLE, PSN 0xFFFFFF
    let sges = vec![Sge { addr: BASE, len: 4000, lkey: ka }];
    p.a.qp.post_send(wr(1, SendOp::Read(Remote { addr: BASE + 0x8000, rkey: kb }), Data::Sges(sges))).unwrap();
    p.run();
    assert!(p.a.host.completions.is_empty());
    let timeout = p.a.qp.deadline().unwrap();
    assert_eq!(timeout, Duration::from_millis(4));
    p.now = timeout;
    p.run();
    use Opcode::*;
    let seen: Vec<_> = p.log.iter().map(|s| (s.from, s.opcode, s.psn, s.len)).collect();
    assert_eq!(
        seen,
        [
            ('a', RcReadRequest, 0xFF_FFFE, 0),
            ('b', RcReadResponseFirst, 0xFF_FFFE, 1024),
            ('b', RcReadResponseMiddle, 0, 1024),
            ('b', RcReadResponseLast, 1, 928),
            // Asked again from the lost packet: the rest, 2976 bytes, as a new FIRST..LAST.
            ('a', RcReadRequest, 0xFF_FFFF, 0),
            ('b', RcReadResponseFirst, 0xFF_FFFF, 1024),
            ('b', RcReadResponseMiddle, 0, 1024),
            ('b', RcReadResponseLast, 1, 928),
        ]
    );
    assert_eq!(p.a.host.bytes(BASE, 4000), &remote[..]);
    assert_eq!(statuses(&p.a.host.completions), [(1, Status::Success)]);
    assert_eq!((p.a.qp.next_psn(), p.b.qp.expected_psn()), (2, 2));
}
