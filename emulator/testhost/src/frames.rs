//! Frames as a test builds and checks them: Ethernet, 802.1Q, IPv4, IPv6, ICMP, ICMPv6, TCP and
//! UDP, each field written by hand from its RFC, with an Internet checksum of its own — never
//! the emulator's — so a test that checks what crossed the wire does not check the emulator
//! against itself.

/// EtherType of IPv4 (RFC 894).
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6 (RFC 2464).
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// EtherType of an 802.1Q tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// IP protocol numbers (IANA).
pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const PROTO_ICMPV6: u8 = 58;
/// TCP flags.
pub const TCP_FIN: u8 = 0x01;
pub const TCP_SYN: u8 = 0x02;
pub const TCP_PSH: u8 = 0x08;
pub const TCP_ACK: u8 = 0x10;

/// RFC 1071, written out: 16-bit big-endian words added with end-around carry, complemented.
pub fn internet_checksum(parts: &[&[u8]]) -> u16 {
    let mut sum: u32 = 0;
    let mut carry_byte: Option<u8> = None;
    for part in parts {
        for &b in part.iter() {
            match carry_byte.take() {
                None => carry_byte = Some(b),
                Some(hi) => {
                    sum += (u32::from(hi) << 8) | u32::from(b);
                    sum = (sum & 0xFFFF) + (sum >> 16);
                }
            }
        }
    }
    if let Some(hi) = carry_byte {
        sum += u32::from(hi) << 8;
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// An IP address pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addrs {
    /// IPv4 source and destination.
    V4([u8; 4], [u8; 4]),
    /// IPv6 source and destination.
    V6([u8; 16], [u8; 16]),
}

impl Addrs {
    /// The pseudo-header of a transport message of `len` bytes (RFC 793 §3.1; RFC 8200 §8.1).
    pub fn pseudo_header(&self, protocol: u8, len: usize) -> Vec<u8> {
        let mut p = Vec::new();
        match self {
            Self::V4(s, d) => {
                p.extend_from_slice(s);
                p.extend_from_slice(d);
                p.extend_from_slice(&[0, protocol]);
                p.extend_from_slice(&(len as u16).to_be_bytes());
            }
            Self::V6(s, d) => {
                p.extend_from_slice(s);
                p.extend_from_slice(d);
                p.extend_from_slice(&(len as u32).to_be_bytes());
                p.extend_from_slice(&[0, 0, 0, protocol]);
            }
        }
        p
    }
}

/// How a transport checksum field is filled when a frame is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Csum {
    /// The full checksum (software checksum, offload off).
    Full,
    /// The pseudo-header sum, not complemented: what Linux leaves for a CHECKSUM_PARTIAL offload.
    Partial,
    /// Zero.
    Zero,
}

/// An Ethernet frame.
pub fn ethernet(dst: [u8; 6], src: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + payload.len());
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// An IPv4 packet (no options, DF set, TTL 64) with its header checksum.
pub fn ipv4(src: [u8; 4], dst: [u8; 4], protocol: u8, id: u16, payload: &[u8]) -> Vec<u8> {
    let total = (20 + payload.len()) as u16;
    let mut h = vec![0x45, 0];
    h.extend_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&id.to_be_bytes());
    h.extend_from_slice(&[0x40, 0, 64, protocol, 0, 0]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let sum = internet_checksum(&[&h]);
    h[10..12].copy_from_slice(&sum.to_be_bytes());
    h.extend_from_slice(payload);
    h
}

/// An IPv6 packet (hop limit 64).
pub fn ipv6(src: [u8; 16], dst: [u8; 16], next_header: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0];
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.extend_from_slice(&[next_header, 64]);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h.extend_from_slice(payload);
    h
}

/// An IP packet of either version around `payload`.
pub fn ip(addrs: Addrs, protocol: u8, id: u16, payload: &[u8]) -> Vec<u8> {
    match addrs {
        Addrs::V4(s, d) => ipv4(s, d, protocol, id, payload),
        Addrs::V6(s, d) => ipv6(s, d, protocol, payload),
    }
}

/// An ICMP echo request (RFC 792) with its checksum.
pub fn icmp_echo(id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut m = vec![8, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(data);
    let sum = internet_checksum(&[&m]);
    m[2..4].copy_from_slice(&sum.to_be_bytes());
    m
}

/// An ICMPv6 echo request (RFC 4443) with its checksum over the pseudo-header.
pub fn icmpv6_echo(addrs: Addrs, id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut m = vec![128, 0, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(data);
    let sum = internet_checksum(&[&addrs.pseudo_header(PROTO_ICMPV6, m.len()), &m]);
    m[2..4].copy_from_slice(&sum.to_be_bytes());
    m
}

/// Fills the checksum field at `field` of transport message `m` as `csum` says.
fn fill_checksum(addrs: Addrs, protocol: u8, m: &mut [u8], field: usize, csum: Csum) {
    let pseudo = addrs.pseudo_header(protocol, m.len());
    let value = match csum {
        Csum::Full => internet_checksum(&[&pseudo, m]),
        // The uncomplemented sum of the pseudo-header.
        Csum::Partial => !internet_checksum(&[&pseudo]),
        Csum::Zero => 0,
    };
    m[field..field + 2].copy_from_slice(&value.to_be_bytes());
}

/// A TCP segment (no options, window 65535).
#[allow(clippy::too_many_arguments)]
pub fn tcp(addrs: Addrs, sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, payload: &[u8], csum: Csum) -> Vec<u8> {
    let mut m = Vec::with_capacity(20 + payload.len());
    m.extend_from_slice(&sport.to_be_bytes());
    m.extend_from_slice(&dport.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(&ack.to_be_bytes());
    m.extend_from_slice(&[0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0]);
    m.extend_from_slice(payload);
    fill_checksum(addrs, PROTO_TCP, &mut m, 16, csum);
    m
}

/// A UDP datagram.
pub fn udp(addrs: Addrs, sport: u16, dport: u16, payload: &[u8], csum: Csum) -> Vec<u8> {
    let mut m = Vec::with_capacity(8 + payload.len());
    m.extend_from_slice(&sport.to_be_bytes());
    m.extend_from_slice(&dport.to_be_bytes());
    m.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    m.extend_from_slice(&[0, 0]);
    m.extend_from_slice(payload);
    fill_checksum(addrs, PROTO_UDP, &mut m, 6, csum);
    m
}

/// A frame taken apart: where its IP header and transport message are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The 802.1Q TCI, if the frame carries a tag.
    pub vlan: Option<u16>,
    /// The addresses.
    pub addrs: Addrs,
    /// The transport protocol.
    pub protocol: u8,
    /// The IPv4 identification (0 for IPv6).
    pub ip_id: u16,
    /// The IP header's bytes.
    pub ip_header: Vec<u8>,
    /// The transport message (header and payload), as long as the IP header says.
    pub l4: Vec<u8>,
}

impl Parsed {
    /// Takes `frame` apart; `None` when it is not IPv4 or IPv6 (no extension headers).
    pub fn of(frame: &[u8]) -> Option<Self> {
        let mut at = 12;
        let mut vlan = None;
        let mut ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
        if ethertype == ETHERTYPE_VLAN {
            vlan = Some(u16::from_be_bytes([*frame.get(14)?, *frame.get(15)?]));
            ethertype = u16::from_be_bytes([*frame.get(16)?, *frame.get(17)?]);
            at += 4;
        }
        let l3 = frame.get(at + 2..)?;
        match ethertype {
            ETHERTYPE_IPV4 => {
                let ihl = usize::from(l3.first()? & 0xF) * 4;
                let total = usize::from(u16::from_be_bytes([*l3.get(2)?, *l3.get(3)?]));
                Some(Self {
                    vlan,
                    addrs: Addrs::V4(l3.get(12..16)?.try_into().ok()?, l3.get(16..20)?.try_into().ok()?),
                    protocol: *l3.get(9)?,
                    ip_id: u16::from_be_bytes([*l3.get(4)?, *l3.get(5)?]),
                    ip_header: l3.get(..ihl)?.to_vec(),
                    l4: l3.get(ihl..total)?.to_vec(),
                })
            }
            ETHERTYPE_IPV6 => {
                let len = usize::from(u16::from_be_bytes([*l3.get(4)?, *l3.get(5)?]));
                Some(Self {
                    vlan,
                    addrs: Addrs::V6(l3.get(8..24)?.try_into().ok()?, l3.get(24..40)?.try_into().ok()?),
                    protocol: *l3.get(6)?,
                    ip_id: 0,
                    ip_header: l3.get(..40)?.to_vec(),
                    l4: l3.get(40..40 + len)?.to_vec(),
                })
            }
            _ => None,
        }
    }

    /// True when the IPv4 header checksum is right (always for IPv6, which has none).
    pub fn ip_checksum_ok(&self) -> bool {
        matches!(self.addrs, Addrs::V6(..)) || internet_checksum(&[&self.ip_header]) == 0
    }

    /// True when the transport checksum (TCP, UDP, ICMP or ICMPv6) is right.
    pub fn l4_checksum_ok(&self) -> bool {
        match self.protocol {
            PROTO_ICMP => internet_checksum(&[&self.l4]) == 0,
            p => internet_checksum(&[&self.addrs.pseudo_header(p, self.l4.len()), &self.l4]) == 0,
        }
    }

    /// The TCP sequence number.
    pub fn tcp_seq(&self) -> u32 {
        u32::from_be_bytes([self.l4[4], self.l4[5], self.l4[6], self.l4[7]])
    }

    /// The TCP flags.
    pub fn tcp_flags(&self) -> u8 {
        self.l4[13]
    }

    /// The transport payload (after a TCP header with its options, or a UDP or ICMP header).
    pub fn payload(&self) -> &[u8] {
        let header = match self.protocol {
            PROTO_TCP => usize::from(self.l4[12] >> 4) * 4,
            _ => 8,
        };
        &self.l4[header..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_of_rfc_1071s_example() {
        // RFC 1071 §3: 0001 f203 f4f5 f6f7 sums to ddf2.
        assert_eq!(internet_checksum(&[&[0x00, 0x01, 0xf2, 0x03], &[0xf4, 0xf5, 0xf6, 0xf7]]), !0xddf2);
        assert_eq!(internet_checksum(&[&[0x00, 0x01, 0xf2], &[0x03, 0xf4, 0xf5, 0xf6, 0xf7]]), !0xddf2, "split");
    }

    #[test]
    fn built_frames_verify() {
        let a = Addrs::V4([10, 0, 0, 1], [10, 0, 0, 2]);
        let seg = tcp(a, 1, 2, 3, 4, TCP_ACK, b"payload", Csum::Full);
        let f = ethernet([2; 6], [4; 6], ETHERTYPE_IPV4, &ipv4([10, 0, 0, 1], [10, 0, 0, 2], PROTO_TCP, 9, &seg));
        let p = Parsed::of(&f).unwrap();
        assert!(p.ip_checksum_ok() && p.l4_checksum_ok());
        assert_eq!(p.payload(), b"payload");
        let partial = tcp(a, 1, 2, 3, 4, TCP_ACK, b"payload", Csum::Partial);
        let f = ethernet([2; 6], [4; 6], ETHERTYPE_IPV4, &ipv4([10, 0, 0, 1], [10, 0, 0, 2], PROTO_TCP, 9, &partial));
        assert!(!Parsed::of(&f).unwrap().l4_checksum_ok(), "a seeded field is no checksum");
        let echo = ipv4([10, 0, 0, 1], [10, 0, 0, 2], PROTO_ICMP, 1, &icmp_echo(1, 1, b"ping"));
        assert!(Parsed::of(&ethernet([2; 6], [4; 6], ETHERTYPE_IPV4, &echo)).unwrap().l4_checksum_ok());
    }
}
