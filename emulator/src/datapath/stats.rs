//! What the datapath counted: per TX ring, per RX ring and for the port. The firmware reports
//! them in GET_STATISTICS v2 (`be_hw_stats_v2`, where be2net's `ethtool -S` reads the port's
//! drop and error counters and each RX ring's `rx_drops_no_frags`); a transport or a test reads
//! them whole through [`crate::device::Device::counters`].
//!
//! They live in firmware RAM: a POST starts them from zero; a ring's counters start from zero
//! when a ring is created under its id. The hardware's counters are 32 bits and wrap; they are
//! kept as 64 bits here and reported modulo 2^32.

use std::collections::BTreeMap;

use oce_mailbox::commands::{HwStatsV2, PortCounter, RxfCounter};
use serde::Serialize;

/// What one TX ring sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TxRingCounters {
    /// Requests completed (each header WRB consumed).
    pub requests: u64,
    /// Frames put on the wire (a segmented request counts each segment).
    pub frames: u64,
    /// Their bytes (VLAN tag and padding included, no FCS).
    pub bytes: u64,
    /// Requests completed with HDR_PARSE_ERR.
    pub header_parse_errors: u64,
    /// Requests completed with NDMA_ERR (a fragment could not be read).
    pub dma_errors: u64,
    /// Frames dropped because the link was down.
    pub link_down_drops: u64,
    /// OS-to-BMC copies (`mgmt`), which never go on the wire.
    pub bmc_copies: u64,
}

/// What one RX ring received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RxRingCounters {
    /// Frames written into its buffers and completed.
    pub frames: u64,
    /// Their bytes (as completed: a stripped VLAN tag not counted).
    pub bytes: u64,
    /// Receive fragments consumed.
    pub fragments: u64,
    /// Frames dropped for lack of receive buffers (`rx_drops_no_fragments`).
    pub drops_no_fragments: u64,
}

/// What the port saw arrive and leave.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PortCounters {
    /// Frames delivered to at least one ring, by kind of destination.
    pub rx_unicast: u64,
    /// Multicast frames delivered.
    pub rx_multicast: u64,
    /// Broadcast frames delivered.
    pub rx_broadcast: u64,
    /// Frames no filter accepted (`rx_address_filtered`).
    pub rx_address_filtered: u64,
    /// Frames shorter than an Ethernet header (`rx_dropped_runt`).
    pub rx_runt: u64,
    /// Frames too long for the ring (`rx_frame_too_long`).
    pub rx_too_long: u64,
    /// Frames that needed more fragments than a completion names (`rx_drops_too_many_frags`).
    pub rx_too_many_fragments: u64,
    /// Frames an interface accepted while it had no RX ring.
    pub rx_no_ring: u64,
    /// Frames that arrived while the link was down.
    pub rx_link_down: u64,
    /// Frames whose receive buffer could not be written.
    pub rx_dma_faults: u64,
    /// IPv4 headers with a wrong checksum (`rx_ip_checksum_errs`).
    pub rx_ip_checksum_errors: u64,
    /// TCP segments with a wrong checksum (`rx_tcp_checksum_errs`).
    pub rx_tcp_checksum_errors: u64,
    /// UDP datagrams with a wrong checksum (`rx_udp_checksum_errs`).
    pub rx_udp_checksum_errors: u64,
    /// Times the port paused its peer for lack of receive buffers (`tx_pauseframes`).
    pub pauses_sent: u64,
}

/// Everything the datapath counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Per TX ring, by ring id.
    pub tx_rings: BTreeMap<u16, TxRingCounters>,
    /// Per RX ring, by ring id.
    pub rx_rings: BTreeMap<u16, RxRingCounters>,
    /// The port.
    pub port: PortCounters,
}

/// A 64-bit count as a 32-bit hardware counter.
fn hw(count: u64) -> u32 {
    count as u32
}

impl Counters {
    /// A TX ring was created under `id`: its counters start from zero.
    pub(crate) fn tx_ring_created(&mut self, id: u16) {
        self.tx_rings.insert(id, TxRingCounters::default());
    }

    /// An RX ring was created under `id`: its counters start from zero.
    pub(crate) fn rx_ring_created(&mut self, id: u16) {
        self.rx_rings.insert(id, RxRingCounters::default());
    }

    pub(crate) fn tx(&mut self, id: u16) -> &mut TxRingCounters {
        self.tx_rings.entry(id).or_default()
    }

    pub(crate) fn rx(&mut self, id: u16) -> &mut RxRingCounters {
        self.rx_rings.entry(id).or_default()
    }

    /// Frames the TX rings put on the wire, all rings together.
    pub fn tx_frames(&self) -> u64 {
        self.tx_rings.values().map(|c| c.frames).sum()
    }

    /// Frames the RX rings delivered, all rings together.
    pub fn rx_frames(&self) -> u64 {
        self.rx_rings.values().map(|c| c.frames).sum()
    }

    /// The GET_STATISTICS v2 body for physical port `port`: its block of the RX filter counters,
    /// the adapter-wide drops, and each RX ring's `rx_drops_no_fragments`.
    pub fn hw_stats(&self, port: u8) -> HwStatsV2 {
        let p = &self.port;
        let mut s = HwStatsV2::zeroed();
        for (counter, value) in [
            (PortCounter::RxAddressFiltered, p.rx_address_filtered),
            (PortCounter::RxDroppedRunt, p.rx_runt),
            (PortCounter::RxFrameTooLong, p.rx_too_long),
            (PortCounter::RxIpChecksumErrors, p.rx_ip_checksum_errors),
            (PortCounter::RxTcpChecksumErrors, p.rx_tcp_checksum_errors),
            (PortCounter::RxUdpChecksumErrors, p.rx_udp_checksum_errors),
            (PortCounter::RxUnicastPackets, p.rx_unicast),
            (PortCounter::RxMulticastPackets, p.rx_multicast),
            (PortCounter::RxBroadcastPackets, p.rx_broadcast),
            (PortCounter::TxPauseFrames, p.pauses_sent),
        ] {
            s.set_port(port, counter, hw(value));
        }
        s.set_rxf(RxfCounter::RxDropsTooManyFrags, hw(p.rx_too_many_fragments));
        for (&id, ring) in &self.rx_rings {
            s.set_rx_drops_no_fragments(id, hw(ring.drops_no_fragments));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statistics_block_carries_the_counts() {
        let mut c = Counters::default();
        c.port.rx_address_filtered = 3;
        c.port.rx_broadcast = (1 << 32) + 5;
        c.rx(2).drops_no_fragments = 7;
        let s = c.hw_stats(1);
        assert_eq!(s.port(1, PortCounter::RxAddressFiltered), 3);
        assert_eq!(s.port(1, PortCounter::RxBroadcastPackets), 5, "32-bit counters wrap");
        assert_eq!(s.port(0, PortCounter::RxAddressFiltered), 0, "another port's block");
        assert_eq!(s.rx_drops_no_fragments(2), 7);
        c.rx_ring_created(2);
        assert_eq!(c.hw_stats(1).rx_drops_no_fragments(2), 0, "a new ring starts from zero");
    }
}
