//! Ethernet frames as the device handles them: parsing the headers a NIC looks at (Ethernet,
//! 802.1Q tags, IPv4, IPv6 with its extension headers, TCP, UDP), the Internet checksum, what
//! the TX offloads do to a frame ([`offload`]: VLAN insertion, checksums, TCP segmentation) and
//! what the receive side reports of one ([`classify`]: VLAN strip, checksum verdicts).
//!
//! Every parser here reads untrusted bytes (a guest's frame, a datagram off the wire): it never
//! panics, and a header it cannot make sense of is `None`.

pub mod checksum;
pub mod classify;
pub mod offload;

/// Bytes of an Ethernet header without tags: destination, source, EtherType (IEEE 802.3).
pub const ETH_HEADER_LEN: usize = 14;
/// The shortest frame a MAC sends, FCS excluded (IEEE 802.3 `minFrameSize` 64 − 4): shorter
/// frames are padded with zeros.
pub const ETH_MIN_LEN: usize = 60;
/// Bytes of an 802.1Q tag: TPID and TCI.
pub const VLAN_TAG_LEN: usize = 4;
/// EtherType of an 802.1Q (C-VLAN) tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// EtherType of an 802.1ad (S-VLAN) tag.
pub const ETHERTYPE_QINQ: u16 = 0x88A8;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;
/// Bytes of a TCP header without options.
pub const TCP_HEADER_LEN: usize = 20;
/// Bytes of a UDP header.
pub const UDP_HEADER_LEN: usize = 8;
/// Bytes of the fixed IPv6 header.
pub const IPV6_HEADER_LEN: usize = 40;

/// The IP version of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpVersion {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

/// Where the IP header and the transport header of a frame are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ip {
    /// IPv4 or IPv6.
    pub version: IpVersion,
    /// Offset of the IP header in the frame.
    pub offset: usize,
    /// The transport protocol (after IPv6 extension headers).
    pub protocol: u8,
    /// Offset of the transport header.
    pub l4: usize,
    /// Bytes of the transport header and payload, as the IP header gives them.
    pub l4_len: usize,
    /// An IP fragment (IPv4 MF or offset, or an IPv6 fragment header): no transport header to
    /// check, or not all of it.
    pub fragment: bool,
}

impl Ip {
    /// The source and destination addresses.
    pub fn addresses<'f>(&self, frame: &'f [u8]) -> (&'f [u8], &'f [u8]) {
        match self.version {
            IpVersion::V4 => (&frame[self.offset + 12..self.offset + 16], &frame[self.offset + 16..self.offset + 20]),
            IpVersion::V6 => (&frame[self.offset + 8..self.offset + 24], &frame[self.offset + 24..self.offset + 40]),
        }
    }

    /// The pseudo-header sum of the transport header and payload.
    pub fn pseudo_sum(&self, frame: &[u8]) -> checksum::Sum {
        let (src, dst) = self.addresses(frame);
        match self.version {
            IpVersion::V4 => checksum::pseudo_v4(src, dst, self.protocol, self.l4_len),
            IpVersion::V6 => checksum::pseudo_v6(src, dst, self.protocol, self.l4_len),
        }
    }

    /// The transport header and payload.
    pub fn l4_bytes<'f>(&self, frame: &'f [u8]) -> &'f [u8] {
        &frame[self.l4..self.l4 + self.l4_len]
    }
}

/// The headers of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers {
    /// Offset of the network header: after the MAC addresses and every VLAN tag.
    pub l3: usize,
    /// The EtherType of the network header.
    pub ethertype: u16,
    /// The IP header, when the network header is a well-formed IPv4 or IPv6 header.
    pub ip: Option<Ip>,
}

/// The big-endian u16 at `at`, if the frame holds it.
pub fn be16(frame: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]))
}

/// The big-endian u32 at `at`, if the frame holds it.
pub fn be32(frame: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(frame.get(at..at + 4)?.try_into().ok()?))
}

/// Parses the headers of `frame`; `None` when it is shorter than an Ethernet header. Up to two
/// VLAN tags (802.1Q, 802.1ad) are skipped.
pub fn parse(frame: &[u8]) -> Option<Headers> {
    let mut at = 12;
    let mut ethertype = be16(frame, at)?;
    for _ in 0..2 {
        if ethertype != ETHERTYPE_VLAN && ethertype != ETHERTYPE_QINQ {
            break;
        }
        at += VLAN_TAG_LEN;
        ethertype = be16(frame, at)?;
    }
    let l3 = at + 2;
    let ip = match ethertype {
        ETHERTYPE_IPV4 => parse_v4(frame, l3),
        ETHERTYPE_IPV6 => parse_v6(frame, l3),
        _ => None,
    };
    Some(Headers { l3, ethertype, ip })
}

/// An IPv4 header at `at`: version 4, a header length of 20–60 bytes, a total length that
/// covers the header and fits the frame (Ethernet padding may follow).
fn parse_v4(frame: &[u8], at: usize) -> Option<Ip> {
    let first = *frame.get(at)?;
    let header_len = usize::from(first & 0xF) * 4;
    if first >> 4 != 4 || header_len < 20 {
        return None;
    }
    let total = usize::from(be16(frame, at + 2)?);
    if total < header_len || at + total > frame.len() {
        return None;
    }
    let flags_offset = be16(frame, at + 6)?;
    let fragment = flags_offset & 0x3FFF != 0; // MF or a fragment offset
    Some(Ip {
        version: IpVersion::V4,
        offset: at,
        protocol: *frame.get(at + 9)?,
        l4: at + header_len,
        l4_len: total - header_len,
        fragment,
    })
}

/// IPv6 extension headers a NIC walks to find the transport header (RFC 8200 §4): hop-by-hop
/// options, routing, destination options; a fragment header (44) ends the walk.
const IPV6_EXTENSIONS: [u8; 3] = [0, 43, 60];
/// The IPv6 fragment header's next-header value.
const IPV6_FRAGMENT: u8 = 44;

/// An IPv6 header at `at` with its extension headers; a payload length of 0 (a jumbogram) is
/// not parsed.
fn parse_v6(frame: &[u8], at: usize) -> Option<Ip> {
    if *frame.get(at)? >> 4 != 6 {
        return None;
    }
    let payload = usize::from(be16(frame, at + 4)?);
    let end = at + IPV6_HEADER_LEN + payload;
    if payload == 0 || end > frame.len() {
        return None;
    }
    let mut next = *frame.get(at + 6)?;
    let mut l4 = at + IPV6_HEADER_LEN;
    let mut fragment = false;
    loop {
        if IPV6_EXTENSIONS.contains(&next) {
            let len = (usize::from(*frame.get(l4 + 1)?) + 1) * 8;
            next = *frame.get(l4)?;
            l4 += len;
        } else if next == IPV6_FRAGMENT {
            next = *frame.get(l4)?;
            l4 += 8;
            fragment = true;
            break;
        } else {
            break;
        }
        if l4 > end {
            return None;
        }
    }
    if l4 > end {
        return None;
    }
    Some(Ip { version: IpVersion::V6, offset: at, protocol: next, l4, l4_len: end - l4, fragment })
}

/// Offset of the TCP or UDP checksum field in its header.
pub fn l4_checksum_offset(protocol: u8) -> Option<usize> {
    match protocol {
        IPPROTO_TCP => Some(16),
        IPPROTO_UDP => Some(6),
        _ => None,
    }
}

/// The smallest header of `protocol` (TCP without options, UDP).
pub fn l4_min_len(protocol: u8) -> usize {
    if protocol == IPPROTO_TCP { TCP_HEADER_LEN } else { UDP_HEADER_LEN }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ethernet + IPv4 (20 bytes, total `total`) + `rest`.
    fn v4_frame(ethertype_tags: &[u16], protocol: u8, total: u16, flags: u16, rest: usize) -> Vec<u8> {
        let mut f = vec![0xAA; 12];
        for t in ethertype_tags {
            f.extend(t.to_be_bytes());
            f.extend([0, 5]);
        }
        f.extend(ETHERTYPE_IPV4.to_be_bytes());
        f.extend([0x45, 0, (total >> 8) as u8, total as u8, 0, 1]);
        f.extend(flags.to_be_bytes());
        f.extend([64, protocol, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend(vec![0; rest]);
        f
    }

    #[test]
    fn ipv4_behind_tags() {
        let f = v4_frame(&[ETHERTYPE_QINQ, ETHERTYPE_VLAN], IPPROTO_TCP, 40, 0x4000, 20 + 6);
        let h = parse(&f).unwrap();
        assert_eq!((h.l3, h.ethertype), (22, ETHERTYPE_IPV4));
        let ip = h.ip.unwrap();
        assert_eq!((ip.l4, ip.l4_len, ip.protocol, ip.fragment), (42, 20, IPPROTO_TCP, false), "DF is no fragment");
        assert_eq!(ip.addresses(&f), (&[10, 0, 0, 1][..], &[10, 0, 0, 2][..]));
    }

    #[test]
    fn ipv4_fragments_and_bad_lengths() {
        assert!(parse(&v4_frame(&[], IPPROTO_UDP, 28, 0x2000, 8)).unwrap().ip.unwrap().fragment, "MF");
        assert!(parse(&v4_frame(&[], IPPROTO_UDP, 28, 0x0010, 8)).unwrap().ip.unwrap().fragment, "offset");
        assert!(parse(&v4_frame(&[], IPPROTO_UDP, 60, 0, 8)).unwrap().ip.is_none(), "longer than the frame");
        assert!(parse(&v4_frame(&[], IPPROTO_UDP, 10, 0, 8)).unwrap().ip.is_none(), "shorter than its header");
        assert!(parse(&[0; 13]).is_none());
        let mut f = v4_frame(&[], IPPROTO_UDP, 28, 0, 8);
        f[14] = 0x44;
        assert!(parse(&f).unwrap().ip.is_none(), "IHL 4");
    }

    #[test]
    fn ipv6_walks_extension_headers() {
        let mut f = vec![0xAA; 12];
        f.extend(ETHERTYPE_IPV6.to_be_bytes());
        // payload 8 (hop-by-hop) + 8 (destination options) + 8 (UDP)
        f.extend([0x60, 0, 0, 0, 0, 24, 0, 64]);
        f.extend([0u8; 32]);
        f.extend([60, 0, 0, 0, 0, 0, 0, 0]); // hop-by-hop → destination options, 8 bytes
        f.extend([IPPROTO_UDP, 0, 0, 0, 0, 0, 0, 0]); // → UDP
        f.extend([0u8; 8]);
        let ip = parse(&f).unwrap().ip.unwrap();
        assert_eq!((ip.version, ip.protocol, ip.l4, ip.l4_len), (IpVersion::V6, IPPROTO_UDP, 14 + 56, 8));
        // A length that runs past the end: not parsed.
        f[14 + 5] = 200;
        assert!(parse(&f).unwrap().ip.is_none());
    }
}
