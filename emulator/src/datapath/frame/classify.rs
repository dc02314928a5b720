//! What the receive side finds in a frame before it hands it to the host: the outer 802.1Q tag
//! (stripped, its TCI reported: be2net always has VLAN RX offload on), the destination's kind
//! (unicast, multicast, broadcast), and the checksum verdicts the v1 RX completion carries
//! (spec/datapath.md §1.2): `tcpf`/`udpf` by protocol, `ipcksm` when the IPv4 header checksum
//! is right, `l4_cksm` when the TCP or UDP checksum is, `ipf` for an IP fragment (whose
//! transport checksum is never claimed).

use super::checksum::Sum;
use super::offload::l4_sum;
use super::{ETH_HEADER_LEN, ETHERTYPE_VLAN, IPPROTO_TCP, IPPROTO_UDP, IpVersion, VLAN_TAG_LEN, be16, parse};

/// The kind of a destination MAC address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cast {
    /// Individual address.
    Unicast,
    /// Group address other than broadcast.
    Multicast,
    /// ff:ff:ff:ff:ff:ff.
    Broadcast,
}

impl Cast {
    /// The kind of `mac`.
    pub fn of(mac: &[u8; 6]) -> Self {
        if *mac == [0xFF; 6] {
            Self::Broadcast
        } else if mac[0] & 1 != 0 {
            Self::Multicast
        } else {
            Self::Unicast
        }
    }
}

/// What the checksum engine says of a frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verdict {
    /// A TCP segment.
    pub tcp: bool,
    /// A UDP datagram.
    pub udp: bool,
    /// IPv6.
    pub ipv6: bool,
    /// An IP fragment.
    pub ip_fragment: bool,
    /// The IPv4 header checksum is right.
    pub ip_checksum_ok: bool,
    /// The TCP or UDP checksum is right.
    pub l4_checksum_ok: bool,
    /// An IPv4 header whose checksum is wrong.
    pub ip_checksum_bad: bool,
    /// A TCP or UDP checksum that is wrong.
    pub l4_checksum_bad: bool,
}

/// A received frame, its outer VLAN tag taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The frame as the host gets it.
    pub frame: Vec<u8>,
    /// The TCI of the stripped tag.
    pub vlan: Option<u16>,
}

/// Takes the outer 802.1Q tag out of `frame` (a frame too short to hold one after its MACs
/// keeps it).
pub fn strip_vlan(frame: &[u8]) -> Received {
    match be16(frame, 12) {
        Some(ETHERTYPE_VLAN) if frame.len() >= ETH_HEADER_LEN + VLAN_TAG_LEN => {
            let tci = be16(frame, 14).unwrap_or(0);
            let mut out = Vec::with_capacity(frame.len() - VLAN_TAG_LEN);
            out.extend_from_slice(&frame[..12]);
            out.extend_from_slice(&frame[12 + VLAN_TAG_LEN..]);
            Received { frame: out, vlan: Some(tci) }
        }
        _ => Received { frame: frame.to_vec(), vlan: None },
    }
}

/// The checksum engine's verdict on `frame`.
pub fn verdict(frame: &[u8]) -> Verdict {
    let Some(ip) = parse(frame).and_then(|h| h.ip) else { return Verdict::default() };
    let mut v = Verdict { ipv6: ip.version == IpVersion::V6, ip_fragment: ip.fragment, ..Verdict::default() };
    if ip.version == IpVersion::V4 {
        let ok = Sum::default().add_bytes(&frame[ip.offset..ip.l4]).verifies();
        v.ip_checksum_ok = ok;
        v.ip_checksum_bad = !ok;
    }
    if ip.fragment {
        return v;
    }
    v.tcp = ip.protocol == IPPROTO_TCP;
    v.udp = ip.protocol == IPPROTO_UDP;
    if v.tcp || v.udp {
        let min = if v.tcp { 20 } else { 8 };
        let no_udp_sum = v.udp && ip.version == IpVersion::V4 && be16(frame, ip.l4 + 6) == Some(0);
        let ok = ip.l4_len >= min && (no_udp_sum || l4_sum(frame, ip).verifies());
        v.l4_checksum_ok = ok;
        v.l4_checksum_bad = !ok;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datapath::frame::offload::{Offloads, apply};
    use crate::datapath::frame::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};

    fn udp4(sum: u16) -> Vec<u8> {
        let mut f = vec![0xFF; 6];
        f.extend([2, 0, 0, 0, 0, 2]);
        f.extend(ETHERTYPE_IPV4.to_be_bytes());
        f.extend([0x45, 0, 0, 32, 0, 0, 0, 0, 64, IPPROTO_UDP, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend([0, 53, 0, 53, 0, 12]);
        f.extend(sum.to_be_bytes());
        f.extend(b"abcd");
        f
    }

    #[test]
    fn good_and_bad_checksums() {
        let offloads = Offloads { ip_checksum: true, udp_checksum: true, ..Offloads::default() };
        let good = apply(udp4(0), offloads).unwrap().remove(0);
        let v = verdict(&good);
        assert!(v.udp && v.ip_checksum_ok && v.l4_checksum_ok && !v.ipv6 && !v.tcp);
        let mut bad = good.clone();
        bad[44] ^= 1;
        let v = verdict(&bad);
        assert!(v.ip_checksum_ok && !v.l4_checksum_ok && v.l4_checksum_bad);
        let mut bad_ip = good;
        bad_ip[22] ^= 1; // the TTL
        assert!(verdict(&bad_ip).ip_checksum_bad);
    }

    #[test]
    fn a_udp4_datagram_without_a_checksum_passes() {
        let mut f = apply(udp4(0), Offloads { ip_checksum: true, ..Offloads::default() }).unwrap().remove(0);
        f[40..42].fill(0);
        assert!(verdict(&f).l4_checksum_ok);
    }

    #[test]
    fn non_ip_frames_claim_nothing() {
        let mut f = vec![0u8; 60];
        f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(verdict(&f), Verdict::default());
        f[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        assert_eq!(verdict(&f), Verdict::default(), "an IPv6 EtherType without an IPv6 header");
    }

    #[test]
    fn the_outer_tag_is_stripped() {
        let tagged = crate::datapath::frame::offload::insert_vlan(&udp4(0), 0xA00B).unwrap();
        let r = strip_vlan(&tagged);
        assert_eq!((r.vlan, r.frame), (Some(0xA00B), udp4(0)));
        assert_eq!(strip_vlan(&udp4(0)).vlan, None);
        assert_eq!(Cast::of(&[0xFF; 6]), Cast::Broadcast);
        assert_eq!(Cast::of(&[0x33, 0x33, 0, 0, 0, 1]), Cast::Multicast);
        assert_eq!(Cast::of(&[0x02, 0, 0, 0, 0, 1]), Cast::Unicast);
    }
}
