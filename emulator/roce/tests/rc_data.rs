//! SEND/RECV, WRITE and READ between two in-process QPs: the packets on the wire, the bytes
//! that land, and the completions on both sides.

mod common;

use common::*;
use oce_roce::packet::{Opcode, Syndrome};
use oce_roce::rc::{Completion, Data, RecvWr, Remote, SendKind, SendOp, SendWr, Sge, Status};

fn wr(wr_id: u64, op: SendOp, data: Data) -> SendWr {
    SendWr { wr_id, op, data, signaled: true, solicited: false, fence: false }
}

#[test]
fn a_send_of_2500_bytes_goes_as_three_packets_and_lands_across_two_receive_buffers() {
    let mut p = Pair::new();
    let src = pattern(2500, 0x11);
    let ka = p.a.host.reg(BASE, 0x4000);
    p.a.host.fill(BASE + 0x100, &src);
    let kb = p.b.host.reg(BASE, 0x4000);
    p.b.qp
        .post_recv(RecvWr {
            wr_id: 77,
            sges: vec![
                Sge { addr: BASE + 0x1000, len: 1000, lkey: kb },
                Sge { addr: BASE + 0x3000, len: 2000, lkey: kb },
            ],
        })
        .unwrap();
    let sges =
        vec![Sge { addr: BASE + 0x100, len: 1500, lkey: ka }, Sge { addr: BASE + 0x100 + 1500, len: 1000, lkey: ka }];
    let mut w = wr(5, SendOp::SendImm(0xCAFE_F00D), Data::Sges(sges));
    w.solicited = true;
    p.a.qp.post_send(w).unwrap();
    p.run();

    assert_eq!(p.opcodes('a'), [Opcode::RcSendFirst, Opcode::RcSendMiddle, Opcode::RcSendLastImm]);
    let from_a: Vec<_> =
        p.log.iter().filter(|s| s.from == 'a').map(|s| (s.psn, s.len, s.solicited, s.ack_req)).collect();
    assert_eq!(from_a, [(0xFF_FFFE, 1024, false, false), (0xFF_FFFF, 1024, false, false), (0, 452, true, true)]);
    let acks: Vec<_> = p.log.iter().filter(|s| s.from == 'b').map(|s| (s.opcode, s.psn, s.syndrome)).collect();
    assert_eq!(acks, [(Opcode::RcAck, 0, Some(Syndrome::Ack { credits: 0x1F }))]);

    assert_eq!(p.b.host.bytes(BASE + 0x1000, 1000), &src[..1000]);
    assert_eq!(p.b.host.bytes(BASE + 0x3000, 1500), &src[1000..]);
    assert_eq!(
        p.b.host.completions,
        [Completion::Recv {
            wr_id: 77,
            byte_len: 2500,
            imm: Some(0xCAFE_F00D),
            invalidate: None,
            write_imm: false,
            status: Status::Success
        }]
    );
    assert_eq!(
        p.a.host.completions,
        [Completion::Send { wr_id: 5, kind: SendKind::Send, byte_len: 2500, status: Status::Success }]
    );
    assert_eq!((p.a.qp.send_queued(), p.b.qp.recv_queued()), (0, 0));
    assert_eq!(p.b.qp.expected_psn(), 1);
}

#[test]
fn an_unsignaled_inline_send_and_a_send_with_invalidate_complete_as_asked() {
    let mut p = Pair::new();
    let kb = p.b.host.reg(BASE, 0x1000);
    for id in [1, 2] {
        p.b.qp.post_recv(RecvWr { wr_id: id, sges: vec![Sge { addr: BASE + 0x100 * id, len: 64, lkey: kb }] }).unwrap();
    }
    let mut inline = wr(9, SendOp::Send, Data::Inline(b"inline bytes!".to_vec()));
    inline.signaled = false;
    p.a.qp.post_send(inline).unwrap();
    let doomed = p.b.host.reg(BASE + 0x2000, 0x1000);
    p.a.qp.post_send(wr(10, SendOp::SendInv(doomed), Data::Inline(vec![0xEE; 3]))).unwrap();
    p.run();

    assert_eq!(p.opcodes('a'), [Opcode::RcSendOnly, Opcode::RcSendOnlyInv]);
    assert_eq!(p.b.host.bytes(BASE + 0x100, 13), b"inline bytes!");
    assert_eq!(p.b.host.bytes(BASE + 0x200, 4), [0xEE, 0xEE, 0xEE, 0]);
    assert_eq!(
        p.b.host.completions[1],
        Completion::Recv {
            wr_id: 2,
            byte_len: 3,
            imm: None,
            invalidate: Some(doomed),
            write_imm: false,
            status: Status::Success
        }
    );
    assert!(p.b.host.mrs.iter().all(|r| r.key != doomed), "the named rkey is gone at B");
    assert!(p.b.host.mrs.iter().any(|r| r.key == kb), "and only that one");
    // Only the signaled one completes on the sender.
    assert_eq!(
        p.a.host.completions,
        [Completion::Send { wr_id: 10, kind: SendKind::Send, byte_len: 3, status: Status::Success }]
    );
}

#[test]
fn a_write_lands_at_the_rkey_and_a_write_with_immediate_also_consumes_a_receive() {
    let mut p = Pair::new();
    let src = pattern(3000, 0x5A);
    let ka = p.a.host.reg(BASE, 0x4000);
    p.a.host.fill(BASE, &src);
    let kb = p.b.host.reg(BASE + 0x8000, 0x8000);
    p.b.qp.post_recv(RecvWr { wr_id: 40, sges: vec![] }).unwrap();
    let data = Data::Sges(vec![Sge { addr: BASE, len: 3000, lkey: ka }]);
    p.a.qp.post_send(wr(1, SendOp::Write(Remote { addr: BASE + 0x8000, rkey: kb }), data.clone())).unwrap();
    p.a.qp.post_send(wr(2, SendOp::WriteImm(Remote { addr: BASE + 0xC000, rkey: kb }, 0x1234), data)).unwrap();
    p.run();

    use Opcode::*;
    assert_eq!(p.opcodes('a'), [RcWriteFirst, RcWriteMiddle, RcWriteLast, RcWriteFirst, RcWriteMiddle, RcWriteLastImm]);
    assert_eq!(p.b.host.bytes(BASE + 0x8000, 3000), &src[..]);
    assert_eq!(p.b.host.bytes(BASE + 0xC000, 3000), &src[..]);
    assert_eq!(
        p.b.host.completions,
        [Completion::Recv {
            wr_id: 40,
            byte_len: 3000,
            imm: Some(0x1234),
            invalidate: None,
            write_imm: true,
            status: Status::Success
        }]
    );
    let done: Vec<_> =
        p.a.host
            .completions
            .iter()
            .map(|c| match c {
                Completion::Send { wr_id, kind, status, .. } => (*wr_id, *kind, *status),
                _ => panic!(),
            })
            .collect();
    assert_eq!(done, [(1, SendKind::Write, Status::Success), (2, SendKind::Write, Status::Success)]);
}

#[test]
fn a_read_of_5000_bytes_comes_back_as_five_responses_into_the_local_buffers() {
    let mut p = Pair::new();
    let remote = pattern(5000, 0x3C);
    let ka = p.a.host.reg(BASE, 0x8000);
    let kb = p.b.host.reg(BASE + 0x4000, 0x4000);
    p.b.host.fill(BASE + 0x4000, &remote);
    let sges = vec![Sge { addr: BASE + 0x10, len: 4000, lkey: ka }, Sge { addr: BASE + 0x6000, len: 1000, lkey: ka }];
    p.a.qp.post_send(wr(3, SendOp::Read(Remote { addr: BASE + 0x4000, rkey: kb }), Data::Sges(sges))).unwrap();
    p.run();

    use Opcode::*;
    assert_eq!(p.opcodes('a'), [RcReadRequest]);
    let resp: Vec<_> = p.log.iter().filter(|s| s.from == 'b').map(|s| (s.opcode, s.psn, s.len)).collect();
    assert_eq!(
        resp,
        [
            (RcReadResponseFirst, 0xFF_FFFE, 1024),
            (RcReadResponseMiddle, 0xFF_FFFF, 1024),
            (RcReadResponseMiddle, 0, 1024),
            (RcReadResponseMiddle, 1, 1024),
            (RcReadResponseLast, 2, 904),
        ]
    );
    assert_eq!(p.a.host.bytes(BASE + 0x10, 4000), &remote[..4000]);
    assert_eq!(p.a.host.bytes(BASE + 0x6000, 1000), &remote[4000..]);
    assert_eq!(
        p.a.host.completions,
        [Completion::Send { wr_id: 3, kind: SendKind::Read, byte_len: 5000, status: Status::Success }]
    );
    // The READ took five PSNs on both sides.
    assert_eq!((p.a.qp.next_psn(), p.b.qp.expected_psn()), (3, 3));
}

#[test]
fn mixed_work_completes_in_order_and_a_read_implicitly_acknowledges_earlier_sends() {
    let mut p = Pair::new();
    let ka = p.a.host.reg(BASE, 0x10000);
    let kb = p.b.host.reg(BASE, 0x10000);
    p.b.host.fill(BASE + 0x8000, &pattern(2048, 1));
    p.a.host.fill(BASE, &pattern(1500, 2));
    p.b.qp.post_recv(RecvWr { wr_id: 1, sges: vec![Sge { addr: BASE + 0x100, len: 2048, lkey: kb }] }).unwrap();
    p.b.qp.post_recv(RecvWr { wr_id: 2, sges: vec![Sge { addr: BASE + 0x1000, len: 2048, lkey: kb }] }).unwrap();
    let src = |len| Data::Sges(vec![Sge { addr: BASE, len, lkey: ka }]);
    p.a.qp.post_send(wr(1, SendOp::Send, src(1500))).unwrap();
    p.a.qp
        .post_send(wr(
            2,
            SendOp::Read(Remote { addr: BASE + 0x8000, rkey: kb }),
            Data::Sges(vec![Sge { addr: BASE + 0x4000, len: 2048, lkey: ka }]),
        ))
        .unwrap();
    p.a.qp.post_send(wr(3, SendOp::Write(Remote { addr: BASE + 0x9000, rkey: kb }), src(100))).unwrap();
    p.a.qp.post_send(wr(4, SendOp::Send, src(10))).unwrap();
    p.run();

    let ids: Vec<_> =
        p.a.host
            .completions
            .iter()
            .map(|c| match c {
                Completion::Send { wr_id, status: Status::Success, .. } => *wr_id,
                other => panic!("{other:?}"),
            })
            .collect();
    assert_eq!(ids, [1, 2, 3, 4]);
    assert_eq!(p.a.host.bytes(BASE + 0x4000, 2048), &pattern(2048, 1)[..]);
    assert_eq!(p.b.host.bytes(BASE + 0x9000, 100), &pattern(1500, 2)[..100]);
    assert_eq!(p.b.host.completions.len(), 2);
}

#[test]
fn zero_length_sends_and_writes_take_one_packet_and_touch_no_memory() {
    let mut p = Pair::new();
    p.b.qp.post_recv(RecvWr { wr_id: 1, sges: vec![] }).unwrap();
    p.a.qp.post_send(wr(1, SendOp::Send, Data::Sges(vec![]))).unwrap();
    // No MR at all on B: a zero-length WRITE names no memory, so its rkey is not checked.
    p.a.qp.post_send(wr(2, SendOp::Write(Remote { addr: 0xDEAD_0000, rkey: 0x999 }), Data::Inline(vec![]))).unwrap();
    p.run();
    assert_eq!(p.opcodes('a'), [Opcode::RcSendOnly, Opcode::RcWriteOnly]);
    assert_eq!(
        p.b.host.completions,
        [Completion::Recv {
            wr_id: 1,
            byte_len: 0,
            imm: None,
            invalidate: None,
            write_imm: false,
            status: Status::Success
        }]
    );
    let ok: Vec<_> =
        p.a.host
            .completions
            .iter()
            .map(|c| matches!(c, Completion::Send { byte_len: 0, status: Status::Success, .. }))
            .collect();
    assert_eq!(ok, [true, true]);
}
