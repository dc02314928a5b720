//! The Internet checksum (RFC 1071): the ones' complement of the ones' complement sum of 16-bit
//! big-endian words, an odd last byte padded with zero; and the pseudo-headers TCP and UDP
//! cover (RFC 793 §3.1, RFC 768 for IPv4; RFC 8200 §8.1 for IPv6).

/// A running ones' complement sum, unfolded (32 bits hold the carries of any frame this size).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum(u64);

impl Sum {
    /// Adds `data` as big-endian 16-bit words. `data` must start on an even offset of what is
    /// summed (every caller sums whole headers and payloads that start at even offsets of the
    /// checksummed span).
    pub fn add_bytes(mut self, data: &[u8]) -> Self {
        let mut words = data.chunks_exact(2);
        for w in &mut words {
            self.0 += u64::from(u16::from_be_bytes([w[0], w[1]]));
        }
        if let [last] = words.remainder() {
            self.0 += u64::from(*last) << 8;
        }
        self
    }

    /// Adds one 16-bit value.
    pub fn add_u16(self, v: u16) -> Self {
        Self(self.0 + u64::from(v))
    }

    /// Adds one 32-bit value as two words.
    pub fn add_u32(self, v: u32) -> Self {
        self.add_u16((v >> 16) as u16).add_u16(v as u16)
    }

    /// The sum folded to 16 bits (end-around carry).
    pub fn fold(self) -> u16 {
        let mut s = self.0;
        while s > 0xFFFF {
            s = (s & 0xFFFF) + (s >> 16);
        }
        s as u16
    }

    /// The checksum to store: the complement of the folded sum.
    pub fn checksum(self) -> u16 {
        !self.fold()
    }

    /// True when the data summed includes a correct checksum (the folded sum is all ones).
    pub fn verifies(self) -> bool {
        self.fold() == 0xFFFF
    }
}

/// The checksum of `data` alone (an IPv4 header, an ICMP message).
pub fn checksum(data: &[u8]) -> u16 {
    Sum::default().add_bytes(data).checksum()
}

/// The TCP/UDP pseudo-header sum of an IPv4 packet: source and destination addresses, zero,
/// protocol, and `l4_len`, the length of the TCP or UDP header and payload.
pub fn pseudo_v4(src: &[u8], dst: &[u8], protocol: u8, l4_len: usize) -> Sum {
    Sum::default().add_bytes(src).add_bytes(dst).add_u16(u16::from(protocol)).add_u32(l4_len as u32)
}

/// The upper-layer pseudo-header sum of an IPv6 packet: source and destination addresses, the
/// upper-layer length as 32 bits, three zero bytes and the next header.
pub fn pseudo_v6(src: &[u8], dst: &[u8], next_header: u8, l4_len: usize) -> Sum {
    Sum::default().add_bytes(src).add_bytes(dst).add_u32(l4_len as u32).add_u16(u16::from(next_header))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_1071_example() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (folded).
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(Sum::default().add_bytes(&data).fold(), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn a_known_ipv4_header() {
        // The IPv4 header of Wikipedia's "IPv4 header checksum" example; its checksum is b861.
        let mut h = hex::decode("450000730000400040110000c0a80001c0a800c7").unwrap();
        assert_eq!(checksum(&h), 0xb861);
        h[10..12].copy_from_slice(&[0xb8, 0x61]);
        assert!(Sum::default().add_bytes(&h).verifies());
    }

    #[test]
    fn odd_lengths_pad_with_zero() {
        assert_eq!(Sum::default().add_bytes(&[0x12]).fold(), 0x1200);
        assert_eq!(Sum::default().add_bytes(&[0xFF, 0xFF, 0xFF, 0xFF]).fold(), 0xFFFF);
    }
}
