//! Golden bytes written out from the IBTA layouts (vol 1 §8.3, §9.2, §9.3); the ICRC values
//! were computed by a separate Python implementation of Annex A16 (`zlib.crc32` over the
//! masked bytes, as `tests/roce-tshark.sh` does) and are checked against Wireshark by that script.

use super::*;

fn gid(last: u8) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[0] = 0xFE;
    g[1] = 0x80;
    g[15] = last;
    g
}

const MAC_A: [u8; 6] = [2, 0, 0, 0, 0, 1];
const MAC_B: [u8; 6] = [2, 0, 0, 0, 0, 2];

fn send_only_hello() -> Packet<'static> {
    Packet {
        eth: EthHeader { dst: MAC_B, src: MAC_A, vlan: None },
        grh: Grh {
            traffic_class: 0,
            flow_label: 0,
            payload_len: 0,
            next_header: Grh::NEXT_HEADER_IBA,
            hop_limit: 0x40,
            sgid: gid(1),
            dgid: gid(2),
        },
        bth: Bth {
            opcode: Opcode::RcSendOnly,
            solicited: true,
            mig_req: false,
            pad: 0,
            tver: 0,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            dest_qpn: 0x12,
            ack_req: true,
            psn: 0x100,
        },
        deth: None,
        reth: None,
        aeth: None,
        imm: None,
        ieth: None,
        payload: b"hello",
    }
}

const SEND_ONLY_HELLO: &str = concat!(
    "020000000002",
    "020000000001",
    "8915", // Ethernet
    "60000000",
    "0018",
    "1b",
    "40",                               // GRH: ver 6, paylen 24, nxthdr, hop
    "fe800000000000000000000000000001", // SGID
    "fe800000000000000000000000000002", // DGID
    "04",
    "b0",
    "ffff",
    "00000012",
    "80000100", // BTH: SEND ONLY, SE, pad 3, QPN, A, PSN
    "68656c6c6f",
    "000000",   // "hello" + pad
    "3d735cb2", // ICRC
);

#[test]
fn send_only_encodes_to_golden_bytes_and_back() {
    let bytes = send_only_hello().to_vec().unwrap();
    assert_eq!(hex::encode(&bytes), SEND_ONLY_HELLO);
    let back = Packet::decode(&bytes).unwrap();
    assert_eq!(back.payload, b"hello");
    assert_eq!(back.bth.pad, 3);
    assert_eq!(back.grh.payload_len, 24);
    assert_eq!(back.bth.psn, 0x100);
    assert_eq!(back.bth.dest_qpn, 0x12);
}

const ACK_VARIANT_FIELDS: &str = concat!(
    "020000000001",
    "020000000002",
    "8100",
    "a005",
    "8915", // Ethernet + 802.1Q PCP 5, VID 5
    "612abcde",
    "0014",
    "1b",
    "ff", // GRH: TC 0x12, flow 0xabcde
    "fe800000000000000000000000000002",
    "fe800000000000000000000000000001",
    "11",
    "00",
    "ffff",
    "c0000034",
    "00000100", // BTH: ACK, FECN+BECN, QPN 0x34
    "1f000007", // AETH: ACK, credits 0x1f, MSN 7
    "c51a8635", // ICRC
);

#[test]
fn ack_with_vlan_and_variant_fields_decodes_from_golden_bytes() {
    let bytes = hex::decode(ACK_VARIANT_FIELDS).unwrap();
    let p = Packet::decode(&bytes).unwrap();
    assert_eq!(p.eth.vlan, Some(Vlan { pcp: 5, dei: false, vid: 5 }));
    assert_eq!((p.grh.traffic_class, p.grh.flow_label, p.grh.hop_limit), (0x12, 0xABCDE, 0xFF));
    assert_eq!(p.bth.opcode, Opcode::RcAck);
    assert!(p.bth.fecn && p.bth.becn && !p.bth.ack_req);
    assert_eq!(p.aeth, Some(Aeth { syndrome: Syndrome::ACK_NO_CREDITS, msn: 7 }));
    assert_eq!(p.to_vec().unwrap(), bytes);
}

#[test]
fn the_icrc_ignores_the_variant_fields_and_covers_the_rest() {
    let mut p = send_only_hello();
    let base = p.to_vec().unwrap();
    let icrc_of = |v: &[u8]| v[v.len() - 4..].to_vec();
    p.grh.traffic_class = 0xAA;
    p.grh.flow_label = 0x12345;
    p.grh.hop_limit = 1;
    p.bth.fecn = true;
    assert_eq!(icrc_of(&p.to_vec().unwrap()), icrc_of(&base));
    p.bth.psn = 0x101;
    assert_ne!(icrc_of(&p.to_vec().unwrap()), icrc_of(&base));
}

#[test]
fn extended_headers_encode_to_golden_bytes() {
    let mut v = Vec::new();
    Reth { va: 0x0102_0304_0506_0708, rkey: 0x1122_3344, dma_len: 0x0001_0000 }.encode(&mut v);
    assert_eq!(hex::encode(&v), "01020304050607081122334400010000");
    v.clear();
    Deth { qkey: 0x8001_0000, src_qpn: 0x00AB_CDEF }.encode(&mut v);
    assert_eq!(hex::encode(&v), "8001000000abcdef");
    v.clear();
    Aeth { syndrome: Syndrome::RnrNak { timer: 14 }, msn: 0x0A0B0C }.encode(&mut v);
    assert_eq!(hex::encode(&v), "2e0a0b0c");
    v.clear();
    Aeth { syndrome: Syndrome::Nak(NakCode::RemoteAccessError), msn: 1 }.encode(&mut v);
    assert_eq!(hex::encode(&v), "62000001");
    v.clear();
    ImmDt(0xDEAD_BEEF).encode(&mut v);
    Ieth { rkey: 0x0000_0A01 }.encode(&mut v);
    assert_eq!(hex::encode(&v), "deadbeef00000a01");
}

#[test]
fn syndromes_decode_by_kind() {
    assert_eq!(Syndrome::from_value(0x1F), Syndrome::Ack { credits: 31 });
    assert_eq!(Syndrome::from_value(0x21), Syndrome::RnrNak { timer: 1 });
    assert_eq!(Syndrome::from_value(0x60), Syndrome::Nak(NakCode::PsnSequenceError));
    assert_eq!(Syndrome::from_value(0x61), Syndrome::Nak(NakCode::InvalidRequest));
    assert_eq!(Syndrome::from_value(0x63), Syndrome::Nak(NakCode::RemoteOperationalError));
    assert_eq!(Syndrome::from_value(0x7F), Syndrome::Nak(NakCode::Unknown(0x1F)));
    assert_eq!(Syndrome::from_value(0x45), Syndrome::Reserved(0x45));
    assert_eq!(Syndrome::from_value(0x85), Syndrome::Reserved(0x85));
    assert_eq!(rnr_timer(0).as_micros(), 655_360);
    assert_eq!(rnr_timer(14).as_micros(), 1_280);
}

#[test]
fn write_first_and_ud_imm_round_trip_with_their_headers_in_order() {
    let mut p = send_only_hello();
    p.bth.opcode = Opcode::RcWriteOnlyImm;
    p.reth = Some(Reth { va: 0x1000, rkey: 0x201, dma_len: 5 });
    p.imm = Some(ImmDt(0x0102_0304));
    let bytes = p.to_vec().unwrap();
    // RETH right after the BTH, then ImmDt, then the payload.
    let ext = &bytes[14 + 40 + 12..];
    assert_eq!(hex::encode(&ext[..25]), "000000000000100000000201000000050102030468656c6c6f");
    assert_eq!(
        Packet::decode(&bytes).unwrap(),
        Packet { bth: Bth { pad: 3, ..p.bth }, grh: Grh { payload_len: 44, ..p.grh }, ..p.clone() }
    );

    let mut u = send_only_hello();
    u.bth.opcode = Opcode::UdSendOnlyImm;
    u.deth = Some(Deth { qkey: 0x8001_0000, src_qpn: 1 });
    u.imm = Some(ImmDt(9));
    let bytes = u.to_vec().unwrap();
    assert_eq!(hex::encode(&bytes[66..78]), "800100000000000100000009");
    assert_eq!(Packet::decode(&bytes).unwrap().deth, u.deth);
}

#[test]
fn bad_input_gets_a_precise_error() {
    let good = hex::decode(SEND_ONLY_HELLO).unwrap();
    for cut in [0, 13, 20, 60, good.len() - 1] {
        assert!(Packet::decode(&good[..cut]).is_err(), "cut at {cut}");
    }
    assert!(matches!(Packet::decode(&good[..40]), Err(Error::Short { header: "GRH", .. })));
    let mut bad = good.clone();
    bad[12] = 0x08;
    bad[13] = 0x00;
    assert_eq!(Packet::decode(&bad), Err(Error::EtherType(0x0800)));
    let mut bad = good.clone();
    bad[14 + 40] = 0x13; // atomic: not carried
    assert_eq!(Packet::decode(&bad), Err(Error::Opcode(0x13)));
    let mut bad = good.clone();
    bad[14 + 40 + 12] ^= 1; // payload bit flip
    assert!(matches!(Packet::decode(&bad), Err(Error::Icrc { .. })));
    let mut bad = good.clone();
    bad[14 + 5] = 0x40; // GRH payload length 64 > what follows
    assert!(matches!(Packet::decode(&bad), Err(Error::PayloadLength { grh: 64, .. })));
    let mut bad = good;
    bad[14 + 6] = 0x11;
    assert_eq!(Packet::decode(&bad), Err(Error::NextHeader(0x11)));
}

#[test]
fn encode_refuses_headers_that_do_not_match_the_opcode() {
    let mut p = send_only_hello();
    p.bth.opcode = Opcode::RcWriteFirst;
    assert_eq!(p.to_vec(), Err(Error::HeaderMismatch { opcode: 6, header: "RETH" }));
    let mut p = send_only_hello();
    p.bth.opcode = Opcode::RcAck;
    p.aeth = Some(Aeth { syndrome: Syndrome::ACK_NO_CREDITS, msn: 0 });
    assert_eq!(p.to_vec(), Err(Error::HeaderMismatch { opcode: 0x11, header: "payload" }));
}
