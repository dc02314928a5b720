//! Two emulated adapters on one in-process cable, each driven by the be2net-like host: frames
//! built here cross from one host's TX ring to the other's RX ring (spec/datapath.md §1).
//! Every checksum is checked with the test host's own implementation, not the emulator's.

use oce_mailbox::commands::PortCounter;
use oce_mailbox::entries::{RxCompletion, TxStatus};
use oce_testhost::frames::{
    Addrs, Csum, ETHERTYPE_IPV4, ETHERTYPE_IPV6, PROTO_ICMP, PROTO_ICMPV6, PROTO_TCP, PROTO_UDP, Parsed, TCP_ACK,
    TCP_PSH, ethernet, icmp_echo, icmpv6_echo, ip, ipv4, ipv6, tcp, udp,
};
use oce_testhost::rings::RX_FRAG_SIZE;
use oce_testhost::{Pair, PairConfig, TxRequest};

const A_IP: [u8; 4] = [10, 0, 0, 1];
const B_IP: [u8; 4] = [10, 0, 0, 2];
const A_IP6: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const B_IP6: [u8; 16] = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn pair() -> (tempfile::TempDir, Pair) {
    let dir = tempfile::tempdir().unwrap();
    let pair = Pair::up(dir.path(), PairConfig::default());
    (dir, pair)
}

/// A plain request: the whole frame in its linear head, no offload.
fn plain(frame: Vec<u8>) -> TxRequest {
    TxRequest { head_len: frame.len(), frame, ..TxRequest::default() }
}

/// An ICMP echo request of `data` from `src` to `dst`.
fn ping(src: ([u8; 6], [u8; 4]), dst: ([u8; 6], [u8; 4]), seq: u16, data: &[u8]) -> Vec<u8> {
    ethernet(dst.0, src.0, ETHERTYPE_IPV4, &ipv4(src.1, dst.1, PROTO_ICMP, seq, &icmp_echo(7, seq, data)))
}

#[test]
fn pings_cross_both_ways_byte_for_byte() {
    let (_d, mut p) = pair();
    let (a, b) = ((p.a.mac(), A_IP), (p.b.mac(), B_IP));
    let request = ping(a, b, 1, &[0x5A; 56]);
    p.a.host.xmit(&mut p.a.nic, 0, &[plain(request.clone())]);
    p.pump();
    assert_eq!(p.b.nic.received.len(), 1, "B got the request");
    let got = &p.b.nic.received[0];
    assert_eq!(got.frame, request, "the frame arrives as sent");
    let c = got.completion;
    assert_eq!((usize::from(c.pkt_size), c.num_frags, c.port), (request.len(), 1, p.b.nic.port));
    assert!(c.ip_checksum_ok && !c.tcp && !c.udp && !c.l4_checksum_ok && !c.vtp && !c.ipv6);
    assert_eq!(c.cast, RxCompletion::CAST_UNICAST);
    let parsed = Parsed::of(&got.frame).unwrap();
    assert!(parsed.ip_checksum_ok() && parsed.l4_checksum_ok());
    assert_eq!(p.a.nic.txqs[0].statuses, [TxStatus::Sent]);
    // The reply, B → A.
    let reply = ping(b, a, 1, &[0x5A; 56]);
    p.b.host.xmit(&mut p.b.nic, 0, &[plain(reply.clone())]);
    p.pump();
    assert_eq!(p.a.nic.received.len(), 1);
    assert_eq!(p.a.nic.received[0].frame, reply);
    // What each side sent is what the other received, in the device's counters.
    let (ca, cb) = (p.a.host.dev.counters(), p.b.host.dev.counters());
    assert_eq!((ca.tx_frames(), ca.rx_frames()), (1, 1));
    assert_eq!((cb.tx_frames(), cb.rx_frames()), (1, 1));
}

#[test]
fn a_short_frame_is_padded_to_sixty_bytes() {
    let (_d, mut p) = pair();
    // An ARP-sized frame (42 bytes).
    let mut arp = ethernet([0xFF; 6], p.a.mac(), 0x0806, &[1; 28]);
    p.a.host.xmit(&mut p.a.nic, 0, &[plain(arp.clone())]);
    p.pump();
    arp.resize(60, 0);
    assert_eq!(p.b.nic.received[0].frame, arp, "zero padding, no FCS");
    assert_eq!(p.b.nic.received[0].completion.cast, RxCompletion::CAST_BROADCAST);
}

#[test]
fn a_jumbo_frame_fills_fragments_in_order() {
    let (_d, mut p) = pair();
    let data: Vec<u8> = (0..8000u32).map(|i| (i % 251) as u8).collect();
    let frame = ping((p.a.mac(), A_IP), (p.b.mac(), B_IP), 9, &data);
    let head = 54;
    p.a.host.xmit(&mut p.a.nic, 0, &[TxRequest { frame: frame.clone(), head_len: head, ..TxRequest::default() }]);
    p.pump();
    let got = &p.b.nic.received[0];
    assert_eq!(got.frame, frame);
    assert_eq!(usize::from(got.completion.num_frags), frame.len().div_ceil(RX_FRAG_SIZE));
    assert!(Parsed::of(&got.frame).unwrap().l4_checksum_ok());
}

#[test]
fn checksum_offload_fills_tcp_and_udp_sums() {
    let (_d, mut p) = pair();
    let addrs = Addrs::V4(A_IP, B_IP);
    let seg = tcp(addrs, 40000, 5201, 1, 1, TCP_ACK | TCP_PSH, b"offloaded", Csum::Partial);
    let dgram = udp(addrs, 5353, 5353, b"datagram", Csum::Partial);
    let frames = [(ipv4(A_IP, B_IP, PROTO_TCP, 1, &seg), true), (ipv4(A_IP, B_IP, PROTO_UDP, 2, &dgram), false)];
    let requests: Vec<TxRequest> = frames
        .iter()
        .map(|(pkt, is_tcp)| TxRequest {
            frame: ethernet(p.b.mac(), p.a.mac(), ETHERTYPE_IPV4, pkt),
            head_len: 34,
            tcp_checksum: *is_tcp,
            udp_checksum: !*is_tcp,
            ..TxRequest::default()
        })
        .collect();
    for r in &requests {
        let sent = Parsed::of(&r.frame).unwrap();
        assert!(!sent.l4_checksum_ok(), "the stack leaves only the pseudo-header sum");
    }
    p.a.host.xmit(&mut p.a.nic, 0, &requests);
    p.pump();
    assert_eq!(p.b.nic.received.len(), 2);
    for (got, (_, is_tcp)) in p.b.nic.received.iter().zip(frames) {
        let parsed = Parsed::of(&got.frame).unwrap();
        assert!(parsed.ip_checksum_ok() && parsed.l4_checksum_ok(), "the device filled the sum");
        let c = got.completion;
        assert_eq!((c.tcp, c.udp), (is_tcp, !is_tcp));
        assert!(c.ip_checksum_ok && c.l4_checksum_ok, "and the receiver verified it");
    }
    assert_eq!(p.a.nic.txqs[0].completed.len(), 1, "one batch, one completion");
}

#[test]
fn a_corrupt_checksum_is_reported_not_verified() {
    let (_d, mut p) = pair();
    let addrs = Addrs::V4(A_IP, B_IP);
    let mut seg = tcp(addrs, 1, 2, 3, 4, TCP_ACK, b"data", Csum::Full);
    seg[16] ^= 0xFF;
    let frame = ethernet(p.b.mac(), p.a.mac(), ETHERTYPE_IPV4, &ipv4(A_IP, B_IP, PROTO_TCP, 1, &seg));
    p.a.host.xmit(&mut p.a.nic, 0, &[plain(frame)]);
    p.pump();
    let c = p.b.nic.received[0].completion;
    assert!(c.tcp && c.ip_checksum_ok && !c.l4_checksum_ok, "be2net then checks in software and drops it");
    let stats = p.b.host.statistics().unwrap();
    assert_eq!(stats.port(p.b.nic.port, PortCounter::RxTcpChecksumErrors), 1);
}

#[test]
fn ipv6_pings_and_tcp_checksums() {
    let (_d, mut p) = pair();
    let addrs = Addrs::V6(A_IP6, B_IP6);
    let echo = ethernet(
        p.b.mac(),
        p.a.mac(),
        ETHERTYPE_IPV6,
        &ipv6(A_IP6, B_IP6, PROTO_ICMPV6, &icmpv6_echo(addrs, 3, 1, b"six")),
    );
    let seg = tcp(addrs, 1000, 2000, 77, 0, TCP_ACK, &[0xC3; 300], Csum::Partial);
    let data = ethernet(p.b.mac(), p.a.mac(), ETHERTYPE_IPV6, &ip(addrs, PROTO_TCP, 0, &seg));
    p.a.host.xmit(
        &mut p.a.nic,
        0,
        &[plain(echo.clone()), TxRequest { frame: data, head_len: 74, tcp_checksum: true, ..TxRequest::default() }],
    );
    p.pump();
    assert_eq!(p.b.nic.received.len(), 2);
    assert_eq!(p.b.nic.received[0].frame, echo);
    let c0 = p.b.nic.received[0].completion;
    assert!(c0.ipv6 && !c0.tcp && !c0.udp);
    let parsed = Parsed::of(&p.b.nic.received[1].frame).unwrap();
    assert!(parsed.l4_checksum_ok());
    let c1 = p.b.nic.received[1].completion;
    assert!(c1.ipv6 && c1.tcp && c1.l4_checksum_ok && !c1.ip_checksum_ok, "IPv6 has no header checksum");
}

#[test]
fn a_vlan_tag_is_inserted_on_the_wire_and_stripped_for_a_member() {
    let (_d, mut p) = pair();
    let tci = (3 << 13) | 100; // priority 3, VID 100
    let frame = ping((p.a.mac(), A_IP), (p.b.mac(), B_IP), 1, &[0x7A; 64]);
    let request = TxRequest { vlan: Some(tci), ..plain(frame.clone()) };
    // B is not a member of VLAN 100 yet: the tag is on the wire and the frame is filtered.
    p.a.host.xmit(&mut p.a.nic, 0, std::slice::from_ref(&request));
    let on_wire = p.b.port.take();
    assert_eq!(on_wire.len(), 1);
    assert_eq!(&on_wire[0][12..16], &[0x81, 0x00, (tci >> 8) as u8, tci as u8], "802.1Q after the MACs");
    assert_eq!(Parsed::of(&on_wire[0]).unwrap().vlan, Some(tci));
    p.b.port.inject(&on_wire[0]);
    p.pump();
    assert!(p.b.nic.received.is_empty(), "not a member: filtered");
    assert_eq!(p.b.host.dev.counters().port.rx_address_filtered, 1);
    // Joined: the tag is stripped and reported.
    p.b.host.add_vlan(&mut p.b.nic, 100).unwrap();
    p.a.host.xmit(&mut p.a.nic, 0, &[request]);
    p.pump();
    let got = &p.b.nic.received[0];
    assert_eq!(got.frame, frame, "untagged as the host sees it");
    assert!(got.completion.vtp);
    assert_eq!(got.completion.vlan_tag, tci);
}

#[test]
fn the_rx_filter_drops_a_foreign_mac_until_promiscuous() {
    let (_d, mut p) = pair();
    let foreign = [0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE];
    let frame = ping((p.a.mac(), A_IP), (foreign, B_IP), 1, &[0xF0; 32]);
    p.a.host.xmit(&mut p.a.nic, 0, &[plain(frame.clone())]);
    p.pump();
    assert!(p.b.nic.received.is_empty());
    let port = p.b.nic.port;
    assert_eq!(p.b.host.statistics().unwrap().port(port, PortCounter::RxAddressFiltered), 1);
    // A multicast group B did not join is filtered too; one it joined (in open) is not.
    let unjoined = ping((p.a.mac(), A_IP), ([0x01, 0x00, 0x5E, 0, 0, 9], B_IP), 2, &[9; 32]);
    let joined = ping((p.a.mac(), A_IP), ([0x01, 0x00, 0x5E, 0, 0, 1], B_IP), 3, &[1; 32]);
    p.a.host.xmit(&mut p.a.nic, 0, &[plain(unjoined.clone()), plain(joined.clone())]);
    p.pump();
    assert_eq!(p.b.nic.received.len(), 1);
    assert_eq!(p.b.nic.received[0].frame, joined);
    assert_eq!(p.b.nic.received[0].completion.cast, RxCompletion::CAST_MULTICAST);
    // Promiscuous: everything.
    p.b.host.set_promiscuous(&p.b.nic, true).unwrap();
    p.a.host.xmit(&mut p.a.nic, 0, &[plain(frame.clone()), plain(unjoined.clone())]);
    p.pump();
    assert_eq!(p.b.nic.received.len(), 3);
    assert_eq!(p.b.nic.received[1].frame, frame);
    assert_eq!(p.b.nic.received[2].frame, unjoined);
    // And back.
    p.b.host.set_promiscuous(&p.b.nic, false).unwrap();
    p.a.host.xmit(&mut p.a.nic, 0, &[plain(frame)]);
    p.pump();
    assert_eq!(p.b.nic.received.len(), 3);
    assert_eq!(p.b.host.statistics().unwrap().port(port, PortCounter::RxAddressFiltered), 3);
}

#[test]
fn tx_counts_on_one_side_equal_rx_counts_on_the_other() {
    let (_d, mut p) = pair();
    let (a, b) = ((p.a.mac(), A_IP), (p.b.mac(), B_IP));
    for round in 0..20u16 {
        let batch: Vec<TxRequest> = (0..5).map(|i| plain(ping(a, b, round * 5 + i, &[i as u8; 100]))).collect();
        p.a.host.xmit(&mut p.a.nic, 0, &batch);
        p.b.host.xmit(&mut p.b.nic, 0, &[plain(ping(b, a, round, &[0; 40]))]);
        p.pump();
    }
    let (ca, cb) = (p.a.host.dev.counters().clone(), p.b.host.dev.counters().clone());
    assert_eq!(ca.tx_frames(), 100);
    assert_eq!(cb.rx_frames(), 100);
    assert_eq!(cb.tx_frames(), 20);
    assert_eq!(ca.rx_frames(), 20);
    let tx_bytes: u64 = ca.tx_rings.values().map(|r| r.bytes).sum();
    let rx_bytes: u64 = cb.rx_rings.values().map(|r| r.bytes).sum();
    assert_eq!(tx_bytes, rx_bytes);
    assert_eq!(p.b.nic.received.len(), 100);
    let port = p.b.nic.port;
    assert_eq!(p.b.host.statistics().unwrap().port(port, PortCounter::RxUnicastPackets), 100);
}
