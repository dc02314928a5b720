//! UD datagrams: golden bytes from IBTA vol 1 Table 38 (BTH opcode 0x64/0x65, DETH Q_Key then
//! source QP), the Q_Key rules, and delivery (GRH then payload, byte count with the 40 GRH
//! bytes) through a small memory with one key.

use super::*;
use crate::packet::Vlan;
use crate::rc::{Completion, MemError, MemRef, QpEvent};

const KEY: u32 = 0x105;
const PD: u32 = 3;

/// 4 KiB of memory at address 0 under one lkey of PD 3 with local write.
struct Memory(Vec<u8>);

impl Memory {
    fn at(&self, m: MemRef) -> Result<usize, MemError> {
        if m.key != KEY {
            return Err(MemError::Key);
        }
        if m.pd != PD {
            return Err(MemError::Pd);
        }
        let end = m.va.checked_add(m.len as u64).ok_or(MemError::Range)?;
        if end > self.0.len() as u64 {
            return Err(MemError::Range);
        }
        Ok(m.va as usize)
    }
}

impl Env for Memory {
    fn read(&mut self, m: MemRef, buf: &mut [u8]) -> Result<(), MemError> {
        let at = self.at(m)?;
        buf.copy_from_slice(&self.0[at..at + buf.len()]);
        Ok(())
    }
    fn write(&mut self, m: MemRef, data: &[u8]) -> Result<(), MemError> {
        let at = self.at(m)?;
        self.0[at..at + data.len()].copy_from_slice(data);
        Ok(())
    }
    fn invalidate(&mut self, _: u32, _: u32) -> Result<(), MemError> {
        unreachable!("UD has no SEND with invalidate")
    }
    fn transmit(&mut self, _: &[u8]) {
        unreachable!("UD delivery sends nothing")
    }
    fn complete(&mut self, _: u32, _: Completion) {
        unreachable!("the caller completes")
    }
    fn event(&mut self, _: u32, _: QpEvent) {}
}

fn gid(last: u8) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[..2].copy_from_slice(&[0xfe, 0x80]);
    g[15] = last;
    g
}

fn datagram(payload: &[u8]) -> Datagram<'_> {
    Datagram {
        eth: EthHeader { dst: [2, 0, 0, 0, 0, 2], src: [2, 0, 0, 0, 0, 1], vlan: None },
        grh: Grh {
            traffic_class: 0,
            flow_label: 0,
            payload_len: 0,
            next_header: Grh::NEXT_HEADER_IBA,
            hop_limit: 1,
            sgid: gid(1),
            dgid: gid(2),
        },
        pkey: Bth::DEFAULT_PKEY,
        src_qpn: GSI_QPN,
        dest_qpn: GSI_QPN,
        qkey: GSI_QKEY,
        psn: 0x12_3456,
        solicited: false,
        imm: None,
        payload,
    }
}

#[test]
fn a_gsi_datagram_golden_bytes() {
    let frame = datagram(b"MAD!").encode().unwrap();
    // Ethernet 14, GRH 40, then BTH: opcode 0x64 (UD SEND_ONLY), SE/M/pad/tver 0, P_Key 0xffff,
    // dest QP 1, PSN 0x123456 without AckReq; DETH: Q_Key 0x80010000, source QP 1; payload; ICRC.
    assert_eq!(hex::encode(&frame[12..14]), "8915");
    assert_eq!(&frame[14 + 4..14 + 6], &(12u16 + 8 + 4 + 4).to_be_bytes(), "GRH payload length");
    assert_eq!(hex::encode(&frame[54..66]), "6400ffff0000000100123456");
    assert_eq!(hex::encode(&frame[66..74]), "8001000000000001");
    assert_eq!(&frame[74..78], b"MAD!");
    assert_eq!(frame.len(), 78 + 4);
    let back = Packet::decode(&frame).unwrap();
    assert_eq!(back.deth, Some(Deth { qkey: GSI_QKEY, src_qpn: 1 }));
    assert_eq!((back.bth.opcode, back.payload), (Opcode::UdSendOnly, &b"MAD!"[..]));
}

#[test]
fn immediate_solicited_and_tagged_datagrams_round_trip() {
    let mut d = datagram(b"abcde");
    d.imm = Some(0x1122_3344);
    d.solicited = true;
    d.eth.vlan = Some(Vlan { pcp: 3, dei: false, vid: 0 });
    d.dest_qpn = 0x0100_0007; // wider than 24 bits: only the low 24 go out
    let frame = d.encode().unwrap();
    let p = Packet::decode(&frame).unwrap();
    assert_eq!(p.bth.opcode.value(), 0x65, "UD SEND_ONLY with immediate");
    assert!(p.bth.solicited && !p.bth.ack_req);
    assert_eq!((p.bth.dest_qpn, p.bth.pad, p.imm), (7, 3, Some(ImmDt(0x1122_3344))));
    assert_eq!(hex::encode(&frame[18 + 40 + 12 + 8..18 + 40 + 12 + 12]), "11223344", "ImmDt after the DETH");
    assert_eq!(p.payload, b"abcde");
}

#[test]
fn q_keys_follow_the_controlled_bit_and_qp1_takes_only_its_own() {
    assert_eq!(send_qkey(0x1111_1111, 0x2222), 0x1111_1111);
    assert_eq!(send_qkey(0x8000_0000, 0x2222), 0x2222, "high bit: the QP's Q_Key");
    assert_eq!(send_qkey(GSI_QKEY, GSI_QKEY), GSI_QKEY);
    let frame = datagram(b"x").encode().unwrap();
    let p = Packet::decode(&frame).unwrap();
    assert_eq!(check(GSI_QPN, 0, &p).map(|d| d.src_qpn), Ok(1), "QP1 takes 0x80010000 whatever its context says");
    let mut wrong = datagram(b"x");
    wrong.qkey = 0x8001_0001;
    let frame = wrong.encode().unwrap();
    let p = Packet::decode(&frame).unwrap();
    assert_eq!(check(GSI_QPN, 0x8001_0001, &p), Err(Refusal::QKey { expected: GSI_QKEY, found: 0x8001_0001 }));
    assert_eq!(check(5, 0x8001_0001, &p).map(|d| d.qkey), Ok(0x8001_0001), "a UD QP compares with its own");
    assert_eq!(check(5, 7, &p), Err(Refusal::QKey { expected: 7, found: 0x8001_0001 }));
    let mut rc = p.clone();
    rc.bth.opcode = Opcode::RcSendOnly;
    rc.deth = None;
    assert_eq!(check(5, 0x8001_0001, &rc), Err(Refusal::Opcode(0x04)));
}

#[test]
fn delivery_writes_the_grh_as_received_then_the_payload() {
    let payload: Vec<u8> = (0..100u8).collect();
    let frame = datagram(&payload).encode().unwrap();
    let p = Packet::decode(&frame).unwrap();
    let mut mem = Memory(vec![0xEE; 4096]);
    // Two SGEs: 50 bytes at 0x100, the rest at 0x800.
    let recv = RecvWr {
        wr_id: 9,
        sges: vec![Sge { addr: 0x100, len: 50, lkey: KEY }, Sge { addr: 0x800, len: 1000, lkey: KEY }],
    };
    let got = deliver(&mut mem, PD, &recv, &p);
    assert_eq!(got, Received { byte_len: 140, src_qpn: 1, imm: None, status: Status::Success });
    assert_eq!(&mem.0[0x100..0x100 + 40], &frame[14..54], "the wire's GRH, payload length included");
    assert_eq!(&mem.0[0x128..0x132], &payload[..10]);
    assert_eq!(&mem.0[0x800..0x800 + 90], &payload[10..]);
    assert_eq!(mem.0[0x800 + 90], 0xEE, "nothing past the datagram");
}

#[test]
fn short_buffers_and_bad_keys_fail_the_receive() {
    let frame = datagram(&[7u8; 64]).encode().unwrap();
    let p = Packet::decode(&frame).unwrap();
    let mut mem = Memory(vec![0; 4096]);
    // 64 bytes of buffer: the payload fits, the GRH space does not.
    let short = RecvWr { wr_id: 1, sges: vec![Sge { addr: 0, len: 64, lkey: KEY }] };
    assert_eq!(deliver(&mut mem, PD, &short, &p).status, Status::LocLenErr);
    assert!(mem.0.iter().all(|&b| b == 0), "nothing written");
    let bad = RecvWr { wr_id: 1, sges: vec![Sge { addr: 0, len: 200, lkey: KEY + 1 }] };
    assert_eq!(
        deliver(&mut mem, PD, &bad, &p),
        Received { byte_len: 0, src_qpn: 1, imm: None, status: Status::LocProtErr }
    );
    assert_eq!(deliver(&mut mem, PD + 1, &short, &p).status, Status::LocLenErr);
    // Gathering a send: the bytes of every SGE in order; a foreign key is a protection error.
    mem.0[..4].copy_from_slice(b"abcd");
    mem.0[0x200..0x202].copy_from_slice(b"ef");
    let sges = [Sge { addr: 0, len: 4, lkey: KEY }, Sge { addr: 0x200, len: 2, lkey: KEY }];
    assert_eq!(gather_payload(&mut mem, PD, &sges).unwrap(), b"abcdef");
    assert_eq!(gather_payload(&mut mem, PD + 1, &sges), Err(Status::LocProtErr));
}
