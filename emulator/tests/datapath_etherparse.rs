//! The TX offloads judged by a third party: frames built by the `etherparse` crate, sent with
//! be2net's offload bits (spec/datapath.md §1.1), and what the device put on the wire parsed and
//! checksummed by `etherparse` again — neither the emulator's frame code nor the test host's own
//! builder decides what a correct frame is here.

use etherparse::{
    IpNumber, Ipv4Header, Ipv6Header, LinkExtHeader, NetHeaders, PacketBuilder, PacketHeaders, TransportHeader, VlanId,
};
use oce_mailbox::entries::TxStatus;
use oce_testhost::{Pair, PairConfig, TxRequest};

const A_IP: [u8; 4] = [10, 0, 0, 1];
const B_IP: [u8; 4] = [10, 0, 0, 2];
const A_IP6: [u8; 16] = [0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B_IP6: [u8; 16] = [0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];
const SEQ: u32 = 0x7000_0000;

fn pair() -> (tempfile::TempDir, Pair) {
    let dir = tempfile::tempdir().unwrap();
    let pair = Pair::up(dir.path(), PairConfig::default());
    (dir, pair)
}

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 13 + i / 509) % 256) as u8).collect()
}

/// Overwrites the 16-bit field at `at` with a value no correct checksum of these frames has, so
/// a device that sends the stack's field unchanged is caught.
fn spoil(frame: &mut [u8], at: usize) {
    frame[at..at + 2].copy_from_slice(&[0xDE, 0xAD]);
}

/// One frame taken off the wire, parsed by etherparse, its checksums recomputed by etherparse.
struct OnWire {
    vlan: Option<u16>,
    ip_id: Option<u16>,
    seq: Option<u32>,
    psh: bool,
    fin: bool,
    payload: Vec<u8>,
}

fn parse(frame: &[u8]) -> OnWire {
    let h = PacketHeaders::from_ethernet_slice(frame).expect("etherparse reads the frame");
    let vlan = h.link_exts.iter().find_map(|e| match e {
        LinkExtHeader::Vlan(v) => Some(v.vlan_id.value()),
        LinkExtHeader::Macsec(_) => None,
    });
    let payload = h.payload.slice().to_vec();
    let (mut ip_id, mut seq, mut psh, mut fin) = (None, None, false, false);
    match (&h.net, &h.transport) {
        (Some(NetHeaders::Ipv4(ip, _)), Some(TransportHeader::Tcp(tcp))) => {
            assert_eq!(ip.header_checksum, ip.calc_header_checksum(), "IPv4 header checksum");
            assert_eq!(tcp.checksum, tcp.calc_checksum_ipv4(ip, &payload).unwrap(), "TCP checksum over IPv4");
            assert_eq!(usize::from(ip.total_len), Ipv4Header::MIN_LEN + tcp.header_len() + payload.len());
            ip_id = Some(ip.identification);
            (seq, psh, fin) = (Some(tcp.sequence_number), tcp.psh, tcp.fin);
        }
        (Some(NetHeaders::Ipv6(ip, _)), Some(TransportHeader::Tcp(tcp))) => {
            assert_eq!(tcp.checksum, tcp.calc_checksum_ipv6(ip, &payload).unwrap(), "TCP checksum over IPv6");
            assert_eq!(usize::from(ip.payload_length), tcp.header_len() + payload.len());
            (seq, psh, fin) = (Some(tcp.sequence_number), tcp.psh, tcp.fin);
        }
        (Some(NetHeaders::Ipv4(ip, _)), Some(TransportHeader::Udp(udp))) => {
            assert_eq!(ip.header_checksum, ip.calc_header_checksum(), "IPv4 header checksum");
            assert_eq!(udp.checksum, udp.calc_checksum_ipv4(ip, &payload).unwrap(), "UDP checksum over IPv4");
        }
        (Some(NetHeaders::Ipv6(ip, _)), Some(TransportHeader::Udp(udp))) => {
            assert_eq!(udp.checksum, udp.calc_checksum_ipv6(ip, &payload).unwrap(), "UDP checksum over IPv6");
        }
        other => panic!("not a TCP or UDP frame: {other:?}"),
    }
    OnWire { vlan, ip_id, seq, psh, fin, payload }
}

/// Sends one request from A and returns the frames that went on the wire toward B, without B
/// taking them (the tap's view, with the inserted tag still in place).
fn send_and_tap(p: &mut Pair, request: TxRequest) -> Vec<Vec<u8>> {
    p.a.host.xmit(&mut p.a.nic, 0, &[request]);
    let wire = p.b.port.take();
    p.a.host.interrupt(&mut p.a.nic);
    assert_eq!(p.a.nic.txqs[0].statuses, [TxStatus::Sent]);
    wire
}

/// Checks a TSO send's segments and returns the payload they reassemble to.
fn reassemble(wire: &[Vec<u8>], mss: usize, ip_id: Option<u16>, vlan: Option<u16>) -> Vec<u8> {
    let mut joined = Vec::new();
    for (i, frame) in wire.iter().enumerate() {
        let seg = parse(frame);
        let last = i + 1 == wire.len();
        assert_eq!(seg.vlan, vlan, "segment {i}: its tag");
        assert_eq!(seg.seq, Some(SEQ.wrapping_add(joined.len() as u32)), "segment {i}: sequence number");
        assert_eq!((seg.psh, seg.fin), (last, last), "segment {i}: PSH and FIN only on the last");
        if let Some(id) = ip_id {
            assert_eq!(seg.ip_id, Some(id.wrapping_add(i as u16)), "segment {i}: IP identification");
        }
        assert!(
            seg.payload.len() == mss || (last && seg.payload.len() <= mss),
            "segment {i}: {} bytes",
            seg.payload.len()
        );
        joined.extend_from_slice(&seg.payload);
    }
    joined
}

#[test]
fn tso_over_ipv4_gives_segments_etherparse_accepts() {
    let (_d, mut p) = pair();
    let data = payload(30_000);
    let builder = PacketBuilder::ethernet2(p.a.mac(), p.b.mac())
        .ipv4(A_IP, B_IP, 64)
        .tcp(40000, 5001, SEQ, 64240)
        .ack(1)
        .psh()
        .fin();
    let mut frame = Vec::new();
    builder.write(&mut frame, &data).unwrap();
    // IPv4 identification as the stack set it; the header and TCP checksums left wrong.
    frame[18..20].copy_from_slice(&0x1234u16.to_be_bytes());
    spoil(&mut frame, 24);
    spoil(&mut frame, 14 + 20 + 16);
    let head_len = frame.len() - data.len();
    let wire = send_and_tap(&mut p, TxRequest { frame, head_len, lso: Some((1448, false)), ..TxRequest::default() });
    assert_eq!(wire.len(), data.len().div_ceil(1448));
    assert_eq!(reassemble(&wire, 1448, Some(0x1234), None), data);
}

#[test]
fn tso_over_ipv6_with_an_inserted_tag_gives_segments_etherparse_accepts() {
    let (_d, mut p) = pair();
    let data = payload(20_000);
    let builder = PacketBuilder::ethernet2(p.a.mac(), p.b.mac())
        .ipv6(A_IP6, B_IP6, 64)
        .tcp(40000, 5001, SEQ, 64240)
        .ack(1)
        .psh()
        .fin();
    let mut frame = Vec::new();
    builder.write(&mut frame, &data).unwrap();
    spoil(&mut frame, 14 + Ipv6Header::LEN + 16);
    let head_len = frame.len() - data.len();
    let request = TxRequest { frame, head_len, vlan: Some(42), lso: Some((1000, true)), ..TxRequest::default() };
    let wire = send_and_tap(&mut p, request);
    assert_eq!(wire.len(), 20);
    assert_eq!(reassemble(&wire, 1000, None, Some(42)), data);
}

#[test]
fn checksum_offload_fills_sums_etherparse_accepts() {
    let (_d, mut p) = pair();
    let cases: [(bool, IpNumber); 4] =
        [(false, IpNumber::TCP), (false, IpNumber::UDP), (true, IpNumber::TCP), (true, IpNumber::UDP)];
    for (ipv6, proto) in cases {
        // An odd length, so the last byte's padding in the sum is exercised.
        let data = payload(1001);
        let eth = || PacketBuilder::ethernet2(p.a.mac(), p.b.mac()).single_vlan(VlanId::try_new(7).unwrap());
        let mut frame = Vec::new();
        let l3 = match ipv6 {
            false => 14 + 4 + Ipv4Header::MIN_LEN,
            true => 14 + 4 + Ipv6Header::LEN,
        };
        let (ip4, ip6) = (eth().ipv4(A_IP, B_IP, 64), eth().ipv6(A_IP6, B_IP6, 64));
        let l4_sum_at = match (ipv6, proto) {
            (false, IpNumber::TCP) => ip4.tcp(1, 2, SEQ, 100).write(&mut frame, &data).map(|()| l3 + 16),
            (false, _) => ip4.udp(1, 2).write(&mut frame, &data).map(|()| l3 + 6),
            (true, IpNumber::TCP) => ip6.tcp(1, 2, SEQ, 100).write(&mut frame, &data).map(|()| l3 + 16),
            (true, _) => ip6.udp(1, 2).write(&mut frame, &data).map(|()| l3 + 6),
        }
        .unwrap();
        spoil(&mut frame, l4_sum_at);
        let tcp = proto == IpNumber::TCP;
        let request = TxRequest {
            head_len: l3 + 8,
            frame: frame.clone(),
            tcp_checksum: tcp,
            udp_checksum: !tcp,
            ..TxRequest::default()
        };
        p.a.nic.txqs[0].statuses.clear();
        let wire = send_and_tap(&mut p, request);
        assert_eq!(wire.len(), 1, "{ipv6} {proto:?}");
        let got = parse(&wire[0]);
        assert_eq!((got.vlan, got.payload), (Some(7), data), "{ipv6} {proto:?}");
        // Only the transport checksum changed: the device is not to touch anything else.
        let mut expected = frame;
        expected[l4_sum_at..l4_sum_at + 2].copy_from_slice(&wire[0][l4_sum_at..l4_sum_at + 2]);
        assert_eq!(wire[0], expected, "{ipv6} {proto:?}");
    }
}
