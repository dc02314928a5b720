//! What the TX offloads a header WRB asks for do to a frame (spec/datapath.md §1.1; be2net turns
//! them all on, `be_main.c:5190-5202`):
//!
//! - `vlan`: the 802.1Q tag is inserted after the MAC addresses;
//! - `ipcs`, `tcpcs`, `udpcs`: the IPv4 header checksum and the TCP or UDP checksum are computed
//!   from scratch (the stack seeds the L4 field with the pseudo-header sum under
//!   CHECKSUM_PARTIAL; a sum over the zeroed field is right whatever it held);
//! - `lso`: the TCP segment is cut into segments of at most `lso_mss` payload bytes, each with
//!   its own IP length, IPv4 identification (incremented per segment) and header checksum, TCP
//!   sequence number, flags (FIN and PSH on the last segment only, CWR on the first only) and
//!   checksum — what a NIC does for TSO and TSO6.
//!
//! A frame whose headers do not carry what the offload asks for (a TCP checksum on a frame with
//! no TCP header, segmentation of a non-TCP frame, an MSS of 0) is refused:
//! [`OffloadError::HeaderParse`], which the TX engine completes with HDR_PARSE_ERR.

use super::checksum::{self, Sum};
use super::{
    ETH_MIN_LEN, ETHERTYPE_VLAN, IPPROTO_TCP, IPPROTO_UDP, Ip, IpVersion, TCP_HEADER_LEN, VLAN_TAG_LEN, be16, be32,
    l4_checksum_offset, l4_min_len, parse,
};

/// What the TX header asks of the frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offloads {
    /// The 802.1Q TCI to insert, if any.
    pub vlan: Option<u16>,
    /// Compute the IPv4 header checksum.
    pub ip_checksum: bool,
    /// Compute the TCP checksum.
    pub tcp_checksum: bool,
    /// Compute the UDP checksum.
    pub udp_checksum: bool,
    /// Segment at this MSS (TSO).
    pub lso_mss: Option<u16>,
}

/// Why a frame cannot be sent as asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffloadError {
    /// The frame's headers lack what an offload needs.
    HeaderParse,
}

/// The frames to put on the wire for `frame` sent with `offloads`: one, or one per segment.
/// Each is padded to the Ethernet minimum.
pub fn apply(mut frame: Vec<u8>, offloads: Offloads) -> Result<Vec<Vec<u8>>, OffloadError> {
    if let Some(tci) = offloads.vlan {
        frame = insert_vlan(&frame, tci).ok_or(OffloadError::HeaderParse)?;
    }
    let mut frames = match offloads.lso_mss {
        Some(mss) => segment(&frame, mss)?,
        None => {
            checksums(&mut frame, offloads)?;
            vec![frame]
        }
    };
    for f in &mut frames {
        if f.len() < ETH_MIN_LEN {
            f.resize(ETH_MIN_LEN, 0);
        }
    }
    Ok(frames)
}

/// `frame` with the tag `tci` after its MAC addresses; `None` when it has no EtherType.
pub fn insert_vlan(frame: &[u8], tci: u16) -> Option<Vec<u8>> {
    if frame.len() < 14 {
        return None;
    }
    let mut out = Vec::with_capacity(frame.len() + VLAN_TAG_LEN);
    out.extend_from_slice(&frame[..12]);
    out.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
    out.extend_from_slice(&tci.to_be_bytes());
    out.extend_from_slice(&frame[12..]);
    Some(out)
}

/// The IP header, which must carry `protocol` when one is given and hold its transport header.
fn ip_of(frame: &[u8], protocol: Option<u8>) -> Result<Ip, OffloadError> {
    let ip = parse(frame).and_then(|h| h.ip).ok_or(OffloadError::HeaderParse)?;
    match protocol {
        Some(p) if ip.protocol != p || ip.fragment || ip.l4_len < l4_min_len(p) => Err(OffloadError::HeaderParse),
        _ => Ok(ip),
    }
}

/// Computes the checksums `offloads` asks for, in place.
fn checksums(frame: &mut [u8], offloads: Offloads) -> Result<(), OffloadError> {
    if offloads.ip_checksum {
        let ip = ip_of(frame, None)?;
        if ip.version != IpVersion::V4 {
            return Err(OffloadError::HeaderParse);
        }
        ipv4_header_checksum(frame, ip);
    }
    for (asked, protocol) in [(offloads.tcp_checksum, IPPROTO_TCP), (offloads.udp_checksum, IPPROTO_UDP)] {
        if asked {
            let ip = ip_of(frame, Some(protocol))?;
            l4_checksum(frame, ip);
        }
    }
    Ok(())
}

/// Writes the IPv4 header checksum of the header at `ip.offset`.
fn ipv4_header_checksum(frame: &mut [u8], ip: Ip) {
    let header = ip.offset..ip.l4;
    frame[ip.offset + 10..ip.offset + 12].fill(0);
    let sum = checksum::checksum(&frame[header]);
    frame[ip.offset + 10..ip.offset + 12].copy_from_slice(&sum.to_be_bytes());
}

/// Writes the TCP or UDP checksum of the transport header and payload at `ip.l4`. A UDP sum of
/// 0 is sent as 0xFFFF (0 means "no checksum", RFC 768).
fn l4_checksum(frame: &mut [u8], ip: Ip) {
    let Some(field) = l4_checksum_offset(ip.protocol).map(|o| ip.l4 + o) else { return };
    frame[field..field + 2].fill(0);
    let mut sum = ip.pseudo_sum(frame).add_bytes(ip.l4_bytes(frame)).checksum();
    if sum == 0 && ip.protocol == IPPROTO_UDP {
        sum = 0xFFFF;
    }
    frame[field..field + 2].copy_from_slice(&sum.to_be_bytes());
}

/// TCP flag bits in byte 13 of the header.
const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;

/// Cuts the TCP segment in `frame` into frames of at most `mss` payload bytes; the IP length of
/// the request covers the whole send and is rewritten per segment.
pub fn segment(frame: &[u8], mss: u16) -> Result<Vec<Vec<u8>>, OffloadError> {
    let ip = ip_of(frame, Some(IPPROTO_TCP))?;
    let data_offset = usize::from(frame[ip.l4 + 12] >> 4) * 4;
    let header_len = ip.l4 + data_offset;
    let end = ip.l4 + ip.l4_len;
    if mss == 0 || data_offset < TCP_HEADER_LEN || header_len > end {
        return Err(OffloadError::HeaderParse);
    }
    let payload = &frame[header_len..end];
    let seq = be32(frame, ip.l4 + 4).ok_or(OffloadError::HeaderParse)?;
    let id = be16(frame, ip.offset + 4).ok_or(OffloadError::HeaderParse)?;
    let flags = frame[ip.l4 + 13];
    let chunks: Vec<&[u8]> =
        if payload.is_empty() { vec![payload] } else { payload.chunks(usize::from(mss)).collect() };
    let count = chunks.len();
    let mut out = Vec::with_capacity(count);
    for (i, chunk) in chunks.into_iter().enumerate() {
        let mut seg = Vec::with_capacity(header_len + chunk.len());
        seg.extend_from_slice(&frame[..header_len]);
        seg.extend_from_slice(chunk);
        let l4_len = data_offset + chunk.len();
        let mut seg_ip = ip;
        seg_ip.l4_len = l4_len;
        match ip.version {
            IpVersion::V4 => {
                let total = (ip.l4 - ip.offset + l4_len) as u16;
                seg[ip.offset + 2..ip.offset + 4].copy_from_slice(&total.to_be_bytes());
                seg[ip.offset + 4..ip.offset + 6].copy_from_slice(&id.wrapping_add(i as u16).to_be_bytes());
                ipv4_header_checksum(&mut seg, seg_ip);
            }
            IpVersion::V6 => {
                let payload_len = (ip.l4 - ip.offset - super::IPV6_HEADER_LEN + l4_len) as u16;
                seg[ip.offset + 4..ip.offset + 6].copy_from_slice(&payload_len.to_be_bytes());
            }
        }
        let offset = (i * usize::from(mss)) as u32;
        seg[ip.l4 + 4..ip.l4 + 8].copy_from_slice(&seq.wrapping_add(offset).to_be_bytes());
        let mut seg_flags = flags;
        if i + 1 < count {
            seg_flags &= !(TCP_FIN | TCP_PSH);
        }
        if i > 0 {
            seg_flags &= !TCP_CWR;
        }
        seg[ip.l4 + 13] = seg_flags;
        l4_checksum(&mut seg, seg_ip);
        out.push(seg);
    }
    Ok(out)
}

/// The sum a receiver computes over a transport header and payload with its pseudo-header:
/// all ones when the checksum is right.
pub fn l4_sum(frame: &[u8], ip: Ip) -> Sum {
    ip.pseudo_sum(frame).add_bytes(ip.l4_bytes(frame))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datapath::frame::ETHERTYPE_IPV4;

    /// Ethernet + IPv4 + TCP (20 bytes, flags `flags`) + `payload`, checksums zero.
    fn tcp4(payload: &[u8], flags: u8) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
        f.extend(ETHERTYPE_IPV4.to_be_bytes());
        let total = (20 + 20 + payload.len()) as u16;
        f.extend([0x45, 0]);
        f.extend(total.to_be_bytes());
        f.extend([0x12, 0x34, 0x40, 0, 64, IPPROTO_TCP, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend([0x30, 0x39, 0x00, 0x50]); // ports 12345 → 80
        f.extend(1000u32.to_be_bytes()); // seq
        f.extend(7u32.to_be_bytes()); // ack
        f.extend([0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0]);
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn vlan_goes_after_the_macs() {
        let f = insert_vlan(&tcp4(&[], 0x10), 0x2064).unwrap();
        assert_eq!(&f[12..18], &[0x81, 0x00, 0x20, 0x64, 0x08, 0x00]);
        assert!(insert_vlan(&[0; 13], 1).is_none());
    }

    #[test]
    fn checksums_verify_and_udp_zero_becomes_ffff() {
        let frame = tcp4(b"hello", 0x18);
        let out = apply(frame, Offloads { ip_checksum: true, tcp_checksum: true, ..Offloads::default() }).unwrap();
        let ip = parse(&out[0]).unwrap().ip.unwrap();
        assert!(Sum::default().add_bytes(&out[0][14..34]).verifies());
        assert!(l4_sum(&out[0], ip).verifies());
        assert_eq!(out[0].len(), ETH_MIN_LEN, "59 bytes are padded to 60");
        // UDP asked of a TCP frame: refused.
        let refused = apply(tcp4(b"x", 0), Offloads { udp_checksum: true, ..Offloads::default() });
        assert_eq!(refused, Err(OffloadError::HeaderParse));
    }

    #[test]
    fn segments_carry_their_own_headers() {
        let payload: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let frame = tcp4(&payload, TCP_FIN | TCP_PSH | TCP_CWR | 0x10);
        let segs = segment(&frame, 1000).unwrap();
        assert_eq!(segs.len(), 3);
        let mut joined = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            let ip = parse(s).unwrap().ip.unwrap();
            let len = if i < 2 { 1000 } else { 500 };
            assert_eq!(ip.l4_len, 20 + len);
            assert_eq!(be16(s, 16).unwrap() as usize, 40 + len, "total length");
            assert_eq!(be16(s, 18).unwrap(), 0x1234 + i as u16, "IP id increments");
            assert_eq!(be32(s, 38).unwrap(), 1000 + 1000 * i as u32, "sequence number");
            let flags = s[47];
            assert_eq!(flags & (TCP_FIN | TCP_PSH) != 0, i == 2, "FIN and PSH on the last");
            assert_eq!(flags & TCP_CWR != 0, i == 0, "CWR on the first");
            assert!(Sum::default().add_bytes(&s[14..34]).verifies());
            assert!(l4_sum(s, ip).verifies());
            joined.extend_from_slice(&s[54..]);
        }
        assert_eq!(joined, payload);
        assert_eq!(segment(&frame, 0), Err(OffloadError::HeaderParse));
    }
}
