//! Receive-side scaling: the Toeplitz hash of a frame's addresses (and ports), and the RX ring the
//! interface's indirection table picks for it (spec/datapath.md §1.2). The hash types are
//! RSS_CONFIG's `enable_rss` bits (be_cmds.h `RSS_ENABLE_*`); "when multiple RSS types are
//! enabled, HW picks the best hash policy based on the type of the received packet" (the same
//! comment): the 4-tuple when the frame's transport is enabled, else the address pair.

use super::frame::{self, IPPROTO_TCP, IPPROTO_UDP, IpVersion};

/// `RSS_ENABLE_IPV4`.
pub const IPV4: u16 = 0x1;
/// `RSS_ENABLE_TCP_IPV4`.
pub const TCP_IPV4: u16 = 0x2;
/// `RSS_ENABLE_IPV6`.
pub const IPV6: u16 = 0x4;
/// `RSS_ENABLE_TCP_IPV6`.
pub const TCP_IPV6: u16 = 0x8;
/// `RSS_ENABLE_UDP_IPV4`.
pub const UDP_IPV4: u16 = 0x10;
/// `RSS_ENABLE_UDP_IPV6`.
pub const UDP_IPV6: u16 = 0x20;

/// The Toeplitz hash of `input` under `key` (Microsoft's RSS specification): for every set bit
/// of the input, most significant first, the 32 key bits starting at that bit's position are
/// XORed into the result.
pub fn toeplitz(key: &[u8; 40], input: &[u8]) -> u32 {
    let mut result = 0u32;
    let mut window = u32::from_be_bytes([key[0], key[1], key[2], key[3]]);
    for (i, byte) in input.iter().enumerate() {
        let next = key.get(i + 4).copied().unwrap_or(0);
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                result ^= window;
            }
            window = (window << 1) | u32::from((next >> (7 - bit)) & 1);
        }
    }
    result
}

/// The hash of `frame` (no VLAN tag in front of its IP header, or one: the parser skips it) for
/// the hash types `types`; `None` when no enabled type applies (a non-IP frame, or its version
/// not enabled).
pub fn hash(key: &[u8; 40], types: u16, frame: &[u8]) -> Option<u32> {
    let ip = frame::parse(frame)?.ip?;
    let (addr_type, tcp_type, udp_type) = match ip.version {
        IpVersion::V4 => (IPV4, TCP_IPV4, UDP_IPV4),
        IpVersion::V6 => (IPV6, TCP_IPV6, UDP_IPV6),
    };
    let (src, dst) = ip.addresses(frame);
    let mut input = Vec::with_capacity(36);
    input.extend_from_slice(src);
    input.extend_from_slice(dst);
    let l4_type = match ip.protocol {
        IPPROTO_TCP => tcp_type,
        IPPROTO_UDP => udp_type,
        _ => 0,
    };
    if l4_type != 0 && types & l4_type != 0 && !ip.fragment && ip.l4_len >= 4 {
        input.extend_from_slice(&frame[ip.l4..ip.l4 + 4]);
    } else if types & (addr_type | tcp_type | udp_type) == 0 {
        return None;
    }
    Some(toeplitz(key, &input))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of Microsoft's "Verifying the RSS Hash Calculation".
    const KEY: [u8; 40] = [
        0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca,
        0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b,
        0xbe, 0xac, 0x01, 0xfa,
    ];

    fn v4(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> (Vec<u8>, Vec<u8>) {
        let addrs = [src, dst].concat();
        let mut tuple = addrs.clone();
        tuple.extend(sport.to_be_bytes());
        tuple.extend(dport.to_be_bytes());
        (addrs, tuple)
    }

    #[test]
    fn microsoft_ipv4_vectors() {
        // (source, destination, IPv4 hash, TCP/IPv4 hash) from the verification table.
        let cases = [
            (([66, 9, 149, 187], 2794), ([161, 142, 100, 80], 1766), 0x323e_8fc2, 0x51cc_c178),
            (([199, 92, 111, 2], 14230), ([65, 69, 140, 83], 4739), 0xd718_262a, 0xc626_b0ea),
            (([24, 19, 198, 95], 12898), ([12, 22, 207, 184], 38024), 0xd2d0_a5de, 0x5c2b_394a),
        ];
        for ((src, sport), (dst, dport), addr_hash, tcp_hash) in cases {
            let (addrs, tuple) = v4(src, dst, sport, dport);
            assert_eq!(toeplitz(&KEY, &addrs), addr_hash);
            assert_eq!(toeplitz(&KEY, &tuple), tcp_hash);
        }
    }

    #[test]
    fn the_frame_picks_its_hash_type() {
        let mut f = vec![0u8; 12];
        f.extend(0x0800u16.to_be_bytes());
        f.extend([0x45, 0, 0, 40, 0, 0, 0, 0, 64, IPPROTO_TCP, 0, 0, 66, 9, 149, 187, 161, 142, 100, 80]);
        f.extend(2794u16.to_be_bytes());
        f.extend(1766u16.to_be_bytes());
        f.extend([0u8; 16]);
        assert_eq!(hash(&KEY, TCP_IPV4, &f), Some(0x51cc_c178));
        assert_eq!(hash(&KEY, IPV4, &f), Some(0x323e_8fc2), "TCP not enabled: the address pair");
        assert_eq!(hash(&KEY, IPV6 | TCP_IPV6, &f), None, "IPv4 not enabled");
        assert_eq!(hash(&KEY, 0x3F, &[0u8; 60]), None, "not IP");
    }
}
