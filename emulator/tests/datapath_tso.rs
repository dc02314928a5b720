//! TCP segmentation offload between two emulated adapters (spec/datapath.md §1.1): be2net hands
//! the device one request of up to 64 KiB with `lso` and `lso_mss`; what arrives on the other
//! side is MSS-sized segments that a receiver verifies with its own checksum and reassembles.

use oce_mailbox::entries::TxStatus;
use oce_testhost::frames::{
    Addrs, Csum, ETHERTYPE_IPV4, ETHERTYPE_IPV6, PROTO_TCP, PROTO_UDP, Parsed, TCP_ACK, TCP_PSH, ethernet, ip, tcp, udp,
};
use oce_testhost::{Pair, PairConfig, TxRequest};

const A_IP: [u8; 4] = [10, 0, 0, 1];
const B_IP: [u8; 4] = [10, 0, 0, 2];

fn pair() -> (tempfile::TempDir, Pair) {
    let dir = tempfile::tempdir().unwrap();
    let pair = Pair::up(dir.path(), PairConfig::default());
    (dir, pair)
}

/// The payload of a send: a pattern no two segments share at the same offset.
fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 7 + i / 251) % 256) as u8).collect()
}

/// A TSO request of `data` from A to B over `addrs`, with the stack's seeded checksum.
fn tso_request(p: &Pair, addrs: Addrs, data: &[u8], mss: u16, ip_id: u16, vlan: Option<u16>) -> TxRequest {
    let seg = tcp(addrs, 33000, 5001, 0x1000_0000, 99, TCP_ACK | TCP_PSH, data, Csum::Partial);
    let (ethertype, ipv6) = match addrs {
        Addrs::V4(..) => (ETHERTYPE_IPV4, false),
        Addrs::V6(..) => (ETHERTYPE_IPV6, true),
    };
    let frame = ethernet(p.b.mac(), p.a.mac(), ethertype, &ip(addrs, PROTO_TCP, ip_id, &seg));
    let head_len = frame.len() - data.len();
    TxRequest { frame, head_len, vlan, lso: Some((mss, ipv6)), ..TxRequest::default() }
}

/// Checks the segments B received of one TSO send and returns the reassembled payload.
fn check_segments(p: &Pair, mss: u16, ip_id: Option<u16>, vlan: Option<u16>) -> Vec<u8> {
    let mut joined = Vec::new();
    let count = p.b.nic.received.len();
    for (i, got) in p.b.nic.received.iter().enumerate() {
        let seg = Parsed::of(&got.frame).expect("an IP frame");
        assert!(seg.ip_checksum_ok(), "segment {i}: IPv4 header checksum");
        assert!(seg.l4_checksum_ok(), "segment {i}: TCP checksum");
        assert_eq!(seg.tcp_seq(), 0x1000_0000 + (i * usize::from(mss)) as u32, "segment {i}: sequence number");
        assert_eq!(seg.tcp_flags() & TCP_PSH != 0, i + 1 == count, "segment {i}: PSH only on the last");
        assert!(seg.tcp_flags() & TCP_ACK != 0);
        if let Some(id) = ip_id {
            assert_eq!(seg.ip_id, id.wrapping_add(i as u16), "segment {i}: IP identification");
        }
        let len = seg.payload().len();
        assert!(len <= usize::from(mss) && (len == usize::from(mss) || i + 1 == count), "segment {i}: {len} bytes");
        let c = got.completion;
        assert!(c.tcp && c.l4_checksum_ok, "segment {i}: the receiver verified it too");
        assert_eq!((c.vtp, c.vtp.then_some(c.vlan_tag)), (vlan.is_some(), vlan));
        joined.extend_from_slice(seg.payload());
    }
    joined
}

#[test]
fn a_64k_tso_send_arrives_as_mss_segments() {
    let (_d, mut p) = pair();
    // The largest request a header describes: 65 535 bytes, 65 481 of them payload.
    let data = payload(65_535 - 14 - 20 - 20);
    let request = tso_request(&p, Addrs::V4(A_IP, B_IP), &data, 1448, 0x4321, None);
    assert_eq!(request.frame.len(), 65_535);
    p.a.host.xmit(&mut p.a.nic, 0, &[request]);
    p.pump();
    assert_eq!(p.b.nic.received.len(), data.len().div_ceil(1448));
    assert!(p.b.nic.received.iter().all(|r| r.frame.len() <= 1514), "no segment is larger than the MTU");
    assert_eq!(check_segments(&p, 1448, Some(0x4321), None), data, "the payload reassembles to what was sent");
    assert_eq!(p.a.nic.txqs[0].statuses, [TxStatus::Sent]);
    let tx = p.a.host.dev.counters().tx_rings.values().next().copied().unwrap();
    assert_eq!((tx.requests, tx.frames), (1, 46));
}

#[test]
fn tso6_segments_carry_their_payload_length() {
    let (_d, mut p) = pair();
    let a6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    let b6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
    let data = payload(40_000);
    let request = tso_request(&p, Addrs::V6(a6, b6), &data, 1428, 0, None);
    p.a.host.xmit(&mut p.a.nic, 0, &[request]);
    p.pump();
    assert_eq!(p.b.nic.received.len(), data.len().div_ceil(1428));
    for got in &p.b.nic.received {
        let seg = Parsed::of(&got.frame).unwrap();
        assert_eq!(seg.l4.len(), 20 + seg.payload().len(), "payload length per segment");
        assert!(got.completion.ipv6);
    }
    assert_eq!(check_segments(&p, 1428, None, None), data);
}

#[test]
fn tso_with_vlan_insertion_tags_every_segment() {
    let (_d, mut p) = pair();
    p.b.host.add_vlan(&mut p.b.nic, 42).unwrap();
    let data = payload(10_000);
    let request = tso_request(&p, Addrs::V4(A_IP, B_IP), &data, 1000, 7, Some(42));
    p.a.host.xmit(&mut p.a.nic, 0, &[request]);
    p.pump();
    assert_eq!(p.b.nic.received.len(), 10);
    assert_eq!(check_segments(&p, 1000, Some(7), Some(42)), data);
}

#[test]
fn segmentation_of_a_udp_frame_is_a_header_parse_error() {
    let (_d, mut p) = pair();
    let addrs = Addrs::V4(A_IP, B_IP);
    let dgram = udp(addrs, 1, 2, &payload(3000), Csum::Partial);
    let frame = ethernet(p.b.mac(), p.a.mac(), ETHERTYPE_IPV4, &ip(addrs, PROTO_UDP, 1, &dgram));
    let bad = TxRequest { head_len: 42, lso: Some((1448, false)), frame, ..TxRequest::default() };
    p.a.host.xmit(&mut p.a.nic, 0, &[bad]);
    p.pump();
    assert_eq!(p.a.nic.txqs[0].statuses, [TxStatus::HeaderParseError], "completed with the reason");
    assert!(p.b.nic.received.is_empty(), "nothing went on the wire");
    let tx = p.a.host.dev.counters().tx_rings.values().next().copied().unwrap();
    assert_eq!((tx.header_parse_errors, tx.frames), (1, 0));
}
