//! ETH GET_STATISTICS v2 (3-4) and the counters of its response, `be_hw_stats_v2` (be_cmds.h;
//! spec/be2net-driver.md §3.7, §4.5; spec/datapath.md §1.2).
//!
//! The body is 670 little-endian dwords:
//!
//! | dwords | block | what be2net reads (`populate_be_v2_stats`, `be_parse_stats`) |
//! |---|---|---|
//! | 0–407 | `rxf.port[4]`, 102 dwords each (`be_port_rxf_stats_v2`) | the block of its own port (`port_num`): [`PortCounter`] |
//! | 408–458 | the rest of `be_rxf_stats_v2` | [`RxfCounter`] |
//! | 459–506 | `rsvd0[BE_TXP_SW_SZ]` | nothing |
//! | 507–645 | `be_erx_stats_v2`: `rx_drops_no_fragments[136]`, `rsvd[3]` | `rx_drops_no_frags` of each RX ring, indexed by ring id |
//! | 646–651 | `be_pmem_stats` | `eth_red_drops` |
//! | 652–669 | `rsvd1[18]` | nothing |

use crate::command::Command;
use crate::header::{HEADER_LEN, Subsystem};
use crate::wire::{Reader, Wire, WireError, Writer};

/// ETH GET_STATISTICS v2: non-embedded, 2696 bytes, completed asynchronously; the body is
/// reserved (spec/be2net-driver.md §3.7, §4.5).
#[doc(alias = "be_cmd_req_get_stats_v2")]
#[doc(alias = "OPCODE_ETH_GET_STATISTICS")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetStatistics;

impl Wire for GetStatistics {
    fn encode(&self, _w: &mut Writer<'_>) -> Result<(), WireError> {
        Ok(())
    }
    fn decode(_r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self)
    }
}

impl Command for GetStatistics {
    const NAME: &'static str = "GET_STATISTICS";
    const SUBSYSTEM: Subsystem = Subsystem::Eth;
    const OPCODE: u8 = 4;
    const VERSION: u8 = 2;
    const EMBEDDED: bool = false;
    const LEN: usize = HEADER_LEN + HwStatsV2::LEN;
    type Response = HwStatsV2;
}

/// A per-port counter of `be_port_rxf_stats_v2`, by its dword in the port's block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortCounter {
    /// `roce_frames_received` (17).
    RoceFramesReceived,
    /// `rx_pause_frames` (20).
    RxPauseFrames,
    /// `rx_frame_too_long` (25).
    RxFrameTooLong,
    /// `rx_address_filtered` (26): frames no MAC or VLAN filter accepted.
    RxAddressFiltered,
    /// `rx_dropped_too_short` (28).
    RxDroppedTooShort,
    /// `rx_dropped_runt` (31).
    RxDroppedRunt,
    /// `rx_ip_checksum_errs` (42).
    RxIpChecksumErrors,
    /// `rx_tcp_checksum_errs` (43).
    RxTcpChecksumErrors,
    /// `rx_udp_checksum_errs` (44).
    RxUdpChecksumErrors,
    /// `rx_switched_unicast_packets` (52).
    RxUnicastPackets,
    /// `rx_switched_multicast_packets` (53).
    RxMulticastPackets,
    /// `rx_switched_broadcast_packets` (54).
    RxBroadcastPackets,
    /// `tx_pauseframes` (58).
    TxPauseFrames,
}

impl PortCounter {
    /// The counter's dword in its port's block.
    pub fn dword(self) -> usize {
        match self {
            Self::RoceFramesReceived => 17,
            Self::RxPauseFrames => 20,
            Self::RxFrameTooLong => 25,
            Self::RxAddressFiltered => 26,
            Self::RxDroppedTooShort => 28,
            Self::RxDroppedRunt => 31,
            Self::RxIpChecksumErrors => 42,
            Self::RxTcpChecksumErrors => 43,
            Self::RxUdpChecksumErrors => 44,
            Self::RxUnicastPackets => 52,
            Self::RxMulticastPackets => 53,
            Self::RxBroadcastPackets => 54,
            Self::TxPauseFrames => 58,
        }
    }
}

/// An adapter-wide counter of `be_rxf_stats_v2` (after the four port blocks), by its dword in
/// the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxfCounter {
    /// `rx_drops_no_pbuf` (410).
    RxDropsNoPbuf,
    /// `rx_drops_too_many_frags` (420): a frame needed more receive fragments than a completion
    /// can name.
    RxDropsTooManyFrags,
    /// `rx_drops_invalid_ring` (421).
    RxDropsInvalidRing,
    /// `rx_drops_mtu` (423).
    RxDropsMtu,
}

impl RxfCounter {
    /// The counter's dword in the body.
    pub fn dword(self) -> usize {
        match self {
            Self::RxDropsNoPbuf => 410,
            Self::RxDropsTooManyFrags => 420,
            Self::RxDropsInvalidRing => 421,
            Self::RxDropsMtu => 423,
        }
    }
}

/// The GET_STATISTICS v2 response body, `be_hw_stats_v2` (2680 bytes), kept as raw bytes with
/// accessors for the counters a device fills and a driver reads.
#[doc(alias = "be_hw_stats_v2")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HwStatsV2(pub Vec<u8>);

impl HwStatsV2 {
    /// Size of `be_hw_stats_v2` (BTF, spec/be2net-driver.md §2 step 3).
    pub const LEN: usize = 2680;
    /// Dwords of one port's block (`be_port_rxf_stats_v2`).
    pub const PORT_DWORDS: usize = 102;
    /// Port blocks (`rxf.port[4]`).
    pub const PORTS: u8 = 4;
    /// Dword of `erx.rx_drops_no_fragments[0]`.
    pub const RX_DROPS_NO_FRAGMENTS_DWORD: usize = 507;
    /// Entries of `rx_drops_no_fragments`: RX rings with ids 0–135.
    pub const RX_DROPS_NO_FRAGMENTS_LEN: usize = 136;

    /// Every counter zero.
    pub fn zeroed() -> Self {
        Self(vec![0; Self::LEN])
    }

    fn get(&self, dword: usize) -> u32 {
        self.0.get(dword * 4..dword * 4 + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn set(&mut self, dword: usize, value: u32) {
        if let Some(b) = self.0.get_mut(dword * 4..dword * 4 + 4) {
            b.copy_from_slice(&value.to_le_bytes());
        }
    }

    /// Dword of `counter` in the block of `port`; `None` for a port past the four blocks.
    fn port_dword(port: u8, counter: PortCounter) -> Option<usize> {
        (port < Self::PORTS).then(|| usize::from(port) * Self::PORT_DWORDS + counter.dword())
    }

    /// `counter` of `port` (0 for a port past the four blocks).
    pub fn port(&self, port: u8, counter: PortCounter) -> u32 {
        Self::port_dword(port, counter).map_or(0, |d| self.get(d))
    }

    /// Sets `counter` of `port` (nothing for a port past the four blocks).
    pub fn set_port(&mut self, port: u8, counter: PortCounter, value: u32) {
        if let Some(d) = Self::port_dword(port, counter) {
            self.set(d, value);
        }
    }

    /// An adapter-wide counter.
    pub fn rxf(&self, counter: RxfCounter) -> u32 {
        self.get(counter.dword())
    }

    /// Sets an adapter-wide counter.
    pub fn set_rxf(&mut self, counter: RxfCounter, value: u32) {
        self.set(counter.dword(), value);
    }

    /// `rx_drops_no_fragments` of RX ring `ring` (0 past the 136 entries).
    pub fn rx_drops_no_fragments(&self, ring: u16) -> u32 {
        let ring = usize::from(ring);
        if ring >= Self::RX_DROPS_NO_FRAGMENTS_LEN {
            return 0;
        }
        self.get(Self::RX_DROPS_NO_FRAGMENTS_DWORD + ring)
    }

    /// Sets `rx_drops_no_fragments` of RX ring `ring` (nothing past the 136 entries).
    pub fn set_rx_drops_no_fragments(&mut self, ring: u16, value: u32) {
        let ring = usize::from(ring);
        if ring < Self::RX_DROPS_NO_FRAGMENTS_LEN {
            self.set(Self::RX_DROPS_NO_FRAGMENTS_DWORD + ring, value);
        }
    }
}

impl Wire for HwStatsV2 {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.0.len() != Self::LEN {
            return Err(WireError {
                field: "be_hw_stats_v2",
                offset: w.position(),
                needed: Self::LEN,
                available: self.0.len(),
            });
        }
        w.bytes("be_hw_stats_v2", &self.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self(r.bytes("be_hw_stats_v2", Self::LEN)?.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};

    #[test]
    fn statistics_golden_bytes() {
        let buf = encode_request(&GetStatistics).unwrap();
        assert_eq!(buf.len(), 2696);
        assert_eq!(hex::encode(&buf[..16]), "0403000000000000780a000002000000"); // len 2680, v2
        let mut rsp = vec![0u8; 2696];
        rsp[..16].copy_from_slice(&hex::decode("0403000000000000780a0000780a0000").unwrap());
        rsp[16] = 7;
        let (_, stats) = decode_response::<GetStatistics>(&rsp).unwrap();
        assert_eq!((stats.0.len(), stats.0[0]), (HwStatsV2::LEN, 7));
        rsp[8] = 0x77; // response_length 2679: one byte short
        assert_eq!(decode_response::<GetStatistics>(&rsp).unwrap_err().needed, HwStatsV2::LEN);
        assert!(HwStatsV2(vec![0; 3]).encode(&mut Writer::new(&mut [0u8; 4000])).is_err());
    }

    #[test]
    fn counters_sit_at_be_cmds_h_offsets() {
        // Byte offsets counted by hand from be_cmds.h: port p's block starts at p × 408;
        // rx_address_filtered is dword 26 of it, rx_switched_broadcast_packets dword 54;
        // rx_drops_too_many_frags is dword 420 of the body, rx_drops_no_fragments[0] dword 507.
        let mut s = HwStatsV2::zeroed();
        s.set_port(1, PortCounter::RxAddressFiltered, 0x0102_0304);
        assert_eq!(&s.0[408 + 26 * 4..408 + 27 * 4], &[4, 3, 2, 1]);
        s.set_port(0, PortCounter::RxBroadcastPackets, 9);
        assert_eq!(s.0[54 * 4], 9);
        s.set_port(3, PortCounter::TxPauseFrames, 5);
        assert_eq!(s.0[3 * 408 + 58 * 4], 5);
        s.set_rxf(RxfCounter::RxDropsTooManyFrags, 6);
        assert_eq!(s.0[1680], 6);
        s.set_rx_drops_no_fragments(1, 0xAB);
        assert_eq!(s.0[2028 + 4], 0xAB);
        s.set_rx_drops_no_fragments(135, 1);
        assert_eq!(s.0[2028 + 135 * 4], 1);
        // The last entry is followed by erx's 3 reserved dwords, pmem's 6 and 18 more: 2680.
        assert_eq!(2028 + 136 * 4 + (3 + 6 + 18) * 4, HwStatsV2::LEN);
        assert_eq!(s.port(1, PortCounter::RxAddressFiltered), 0x0102_0304);
        assert_eq!(s.rx_drops_no_fragments(1), 0xAB);
        assert_eq!(s.rxf(RxfCounter::RxDropsTooManyFrags), 6);
        // Out of range: nothing written, zero read.
        let before = s.clone();
        s.set_port(4, PortCounter::RxDroppedRunt, 1);
        s.set_rx_drops_no_fragments(136, 1);
        assert_eq!(s, before);
        assert_eq!(s.port(4, PortCounter::RxDroppedRunt), 0);
        assert_eq!(s.rx_drops_no_fragments(200), 0);
    }
}
