//! The RoCE v1 frame decoder and one RC QP on arbitrary bytes off the wire. The input is cut
//! into frames (a 16-bit length before each). Each frame is decoded as it is (almost always a
//! bad ICRC or header), then again with its ICRC and GRH payload length made right, so the
//! fuzzer reaches the header and opcode checks and the transport. Whatever decodes must survive
//! encode → decode unchanged, and is handed to a QP that has a SEND, a WRITE and a READ
//! outstanding and two receives posted: the QP must never panic, and every frame it transmits
//! must decode. A UD SEND (its DETH decoded like every header) also goes through the UD checks
//! and, when QP1 accepts it, is delivered into a receive buffer: GRH then payload, never past
//! the buffer.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use oce_roce::packet::{Bth, EthHeader, Grh, Packet, icrc};
use oce_roce::rc::{
    Completion, Data, Env, MemError, MemRef, Qp, QpConfig, QpEvent, RecvWr, Remote, SendOp, SendWr, Sge, Status,
};
use oce_roce::ud;

const QPN: u32 = 0x12;
const KEY: u32 = 0x100;
const MEM: usize = 16 * 1024;

/// One MR with every right over `MEM` bytes at address 0; frames transmitted must decode.
struct Host {
    mem: Vec<u8>,
}

impl Host {
    fn at(&self, m: MemRef) -> Result<usize, MemError> {
        if m.key != KEY {
            return Err(MemError::Key);
        }
        let end = m.va.checked_add(m.len as u64).ok_or(MemError::Range)?;
        if end > MEM as u64 {
            return Err(MemError::Range);
        }
        Ok(m.va as usize)
    }
}

impl Env for Host {
    fn read(&mut self, m: MemRef, buf: &mut [u8]) -> Result<(), MemError> {
        let at = self.at(m)?;
        buf.copy_from_slice(&self.mem[at..at + buf.len()]);
        Ok(())
    }
    fn write(&mut self, m: MemRef, data: &[u8]) -> Result<(), MemError> {
        let at = self.at(m)?;
        self.mem[at..at + data.len()].copy_from_slice(data);
        Ok(())
    }
    /// A fuzzed SEND with invalidate may name any key: only the one region is known.
    fn invalidate(&mut self, rkey: u32, _pd: u32) -> Result<(), MemError> {
        if rkey == KEY { Ok(()) } else { Err(MemError::Key) }
    }
    fn transmit(&mut self, frame: &[u8]) {
        Packet::decode(frame).expect("the QP transmits only frames that decode");
    }
    fn complete(&mut self, qpn: u32, _c: Completion) {
        assert_eq!(qpn, QPN);
    }
    fn event(&mut self, _qpn: u32, _e: QpEvent) {}
}

fn qp() -> Qp {
    let cfg = QpConfig {
        qpn: QPN,
        dest_qpn: 0x34,
        pd: 1,
        eth: EthHeader { dst: [2, 0, 0, 0, 0, 2], src: [2, 0, 0, 0, 0, 1], vlan: None },
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
        mtu: 256,
        sq_psn: 0,
        rq_psn: 0,
        retry_cnt: 2,
        rnr_retry: 2,
        min_rnr_timer: 1,
        ack_timeout: Some(Duration::from_millis(1)),
        max_rd_atomic: 2,
        max_send_wr: 8,
        max_recv_wr: 8,
        max_inline: 64,
        remote_write: true,
        remote_read: true,
    };
    Qp::new(cfg).expect("MTU 256 is valid")
}

/// The frame with the GRH payload length and the ICRC made to fit its bytes.
fn repaired(frame: &[u8]) -> Option<Vec<u8>> {
    let eth = if frame.get(12..14)? == [0x81, 0x00] { 18 } else { 14 };
    if frame.len() < eth + Grh::LEN + Bth::LEN {
        return None;
    }
    let mut v = frame.to_vec();
    let paylen = u16::try_from(v.len() - eth - Grh::LEN + 4).ok()?;
    v[eth + 4..eth + 6].copy_from_slice(&paylen.to_be_bytes());
    let crc = icrc::compute(&v[eth..]);
    v.extend_from_slice(&crc.to_le_bytes());
    Some(v)
}

fuzz_target!(|data: &[u8]| {
    let mut host = Host { mem: vec![0; MEM] };
    let mut qp = qp();
    let sge = |addr| Data::Sges(vec![Sge { addr, len: 600, lkey: KEY }]);
    let send = |wr_id, op, data| SendWr { wr_id, op, data, signaled: true, solicited: false, fence: false };
    let _ = qp.post_send(send(1, SendOp::Send, sge(0)));
    let _ = qp.post_send(send(2, SendOp::Write(Remote { addr: 0, rkey: 9 }), sge(0)));
    let _ = qp.post_send(send(3, SendOp::Read(Remote { addr: 0, rkey: 9 }), sge(4096)));
    for id in [1, 2] {
        let _ = qp.post_recv(RecvWr { wr_id: id, sges: vec![Sge { addr: 8192, len: 1000, lkey: KEY }] });
    }
    let mut now = Duration::ZERO;
    qp.poll(&mut host, now);

    let mut rest = data;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
        let frame = &rest[2..(2 + len).min(rest.len())];
        rest = &rest[2 + frame.len()..];
        let _ = Packet::decode(frame);
        let Some(fixed) = repaired(frame) else { continue };
        let Ok(mut pkt) = Packet::decode(&fixed) else { continue };
        let again = pkt.to_vec().expect("a decoded packet encodes");
        let back = Packet::decode(&again).expect("an encoded packet decodes");
        assert_eq!(back.bth.opcode, pkt.bth.opcode);
        assert_eq!(
            (back.deth, back.reth, back.aeth, back.imm, back.ieth),
            (pkt.deth, pkt.reth, pkt.aeth, pkt.imm, pkt.ieth)
        );
        assert_eq!(back.payload, pkt.payload);
        if let Ok(deth) = ud::check(ud::GSI_QPN, 0, &pkt) {
            assert_eq!(deth.qkey, ud::GSI_QKEY);
            let recv = RecvWr { wr_id: 0, sges: vec![Sge { addr: 12288, len: 1024, lkey: KEY }] };
            let got = ud::deliver(&mut host, 1, &recv, &pkt);
            let len = ud::GRH_SPACE + pkt.payload.len();
            match got.status {
                Status::Success => assert_eq!(got.byte_len as usize, len),
                _ => assert!(len > 1024, "only a datagram too long for the buffer fails: {got:?}"),
            }
        }
        pkt.bth.dest_qpn = QPN;
        qp.receive(&mut host, &pkt, now);
        now += Duration::from_micros(300);
        qp.poll(&mut host, now);
    }
});
