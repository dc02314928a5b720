//! The invariant CRC of a RoCE v1 packet (IBTA vol 1 §7.8.1, Annex A16 §A16.4.3).
//!
//! CRC-32 (the Ethernet polynomial, as zlib computes it) over: 8 bytes of ones standing for the
//! absent LRH, the GRH with its variant fields (traffic class, flow label, hop limit) set to ones,
//! the BTH with its byte 4 (F, B and the reserved bits) set to ones, then every following byte
//! up to the ICRC — extended headers, payload and pad. The ICRC goes on the wire least
//! significant byte first, as the Ethernet FCS does (`rxe_icrc.c` stores `~crc` the same way).

use super::{Bth, Grh};

/// The CRC over `packet`: the bytes from the GRH up to, not including, the ICRC. The caller
/// guarantees `packet` holds at least a GRH and a BTH.
pub fn compute(packet: &[u8]) -> u32 {
    let mut masked = [0u8; Grh::LEN + Bth::LEN];
    masked.copy_from_slice(&packet[..Grh::LEN + Bth::LEN]);
    // GRH: IPVer (bits 31:28) kept; traffic class and flow label (bits 27:0) are variant.
    masked[0] |= 0x0F;
    masked[1..4].fill(0xFF);
    // GRH byte 7: hop limit.
    masked[7] = 0xFF;
    // BTH byte 4: FECN, BECN and reserved bits.
    masked[Grh::LEN + 4] = 0xFF;
    let mut h = crc32fast::Hasher::new();
    h.update(&[0xFF; 8]);
    h.update(&masked);
    h.update(&packet[Grh::LEN + Bth::LEN..]);
    h.finalize()
}
