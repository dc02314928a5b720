//! The Ethernet rings' entries: the TX header WRB and fragment WRB the host posts, the TX
//! completion, the RX descriptor the host posts and the v1 RX completion (be_hw.h
//! `amap_eth_hdr_wrb`, `be_eth_wrb`, `amap_eth_tx_compl`, `be_eth_rx_d`, `amap_eth_rx_compl_v1`;
//! spec/datapath.md §1.1, §1.2; spec/be2net-driver.md §4.1).
//!
//! Every entry is little-endian dwords. The header and completion types keep their bit fields
//! in named dwords with accessors (style.md rule 6), so a device and a host build and read them
//! the same way, and a golden-bytes test pins each bit to the spec's offset.

use crate::wire::{Reader, Wire, WireError, Writer};

/// Size of a TX WRB, header or fragment (`be_eth_wrb`, `be_eth_hdr_wrb`).
pub const TX_WRB_LEN: usize = 16;
/// Size of a TX completion (`be_eth_tx_compl`).
pub const TX_COMPLETION_LEN: usize = 16;
/// Size of an RX descriptor (`be_eth_rx_d`).
pub const RX_DESCRIPTOR_LEN: usize = 8;
/// Size of an RX completion (`be_eth_rx_compl`).
pub const RX_COMPLETION_LEN: usize = 16;

/// The header WRB of an Ethernet TX request (`amap_eth_hdr_wrb`, spec/datapath.md §1.1).
/// dwords 0–1 are reserved; dword 2 holds the request's flags, `num_wrb` and `lso_mss`; dword 3
/// its length and the VLAN tag to insert (be2net `wrb_fill_hdr`).
///
/// | dword 2 bit | field | | dword 2 bits | field |
/// |---|---|---|---|---|
/// | 0 | `complete` | | 10 | `vlan` |
/// | 1 | `event` | | 12:11 | `gso` |
/// | 2 | `crc` | | 17:13 | `num_wrb` |
/// | 3 | `forward` | | 31:18 | `lso_mss` |
/// | 4 | `lso6` | | **dword 3** | |
/// | 5 | `mgmt` (OS2BMC copy) | | 15:0 | `len` |
/// | 6–8 | `ipcs`, `udpcs`, `tcpcs` | | 31:16 | `vlan_tag` (the TCI) |
/// | 9 | `lso` | | | |
#[doc(alias = "amap_eth_hdr_wrb")]
#[doc(alias = "be_eth_hdr_wrb")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TxHeaderWrb {
    /// dword 2: flags, `num_wrb`, `lso_mss`.
    pub dw2: u32,
    /// dword 3: bits 15:0 length, bits 31:16 VLAN tag.
    pub dw3: u32,
}

impl TxHeaderWrb {
    /// dword 2 bit 0: write a completion for this request (`TX_HDR_WRB_COMPL`).
    #[doc(alias = "TX_HDR_WRB_COMPL")]
    pub const COMPLETE: u32 = 1;
    /// dword 2 bit 1: raise an event with that completion (`TX_HDR_WRB_EVT`).
    #[doc(alias = "TX_HDR_WRB_EVT")]
    pub const EVENT: u32 = 1 << 1;
    /// dword 2 bit 2: append the Ethernet CRC (the wire carries no FCS, so nothing to do).
    pub const CRC: u32 = 1 << 2;
    /// dword 2 bit 3: `forward`.
    pub const FORWARD: u32 = 1 << 3;
    /// dword 2 bit 4: the LSO request is IPv6 (`lso6`).
    pub const LSO6: u32 = 1 << 4;
    /// dword 2 bit 5: an OS-to-BMC copy (`mgmt`): for the management controller, not the wire.
    pub const MGMT: u32 = 1 << 5;
    /// dword 2 bit 6: compute the IPv4 header checksum (`ipcs`).
    pub const IPCS: u32 = 1 << 6;
    /// dword 2 bit 7: compute the UDP checksum (`udpcs`).
    pub const UDPCS: u32 = 1 << 7;
    /// dword 2 bit 8: compute the TCP checksum (`tcpcs`).
    pub const TCPCS: u32 = 1 << 8;
    /// dword 2 bit 9: segment the request (TSO; `lso`).
    pub const LSO: u32 = 1 << 9;
    /// dword 2 bit 10: insert the 802.1Q tag of dword 3 (`vlan`).
    pub const VLAN: u32 = 1 << 10;
    /// dword 2 bits 17:13: WRBs in the request, header included (`TX_HDR_WRB_NUM_SHIFT`).
    #[doc(alias = "TX_HDR_WRB_NUM_SHIFT")]
    pub const NUM_WRB_SHIFT: u32 = 13;
    /// Mask of `num_wrb` after shifting (`TX_HDR_WRB_NUM_MASK`).
    #[doc(alias = "TX_HDR_WRB_NUM_MASK")]
    pub const NUM_WRB_MASK: u32 = 0x1F;
    /// dword 2 bits 31:18: the segment size of an LSO request (`lso_mss`).
    pub const LSO_MSS_SHIFT: u32 = 18;
    /// Mask of `lso_mss` after shifting (14 bits).
    pub const LSO_MSS_MASK: u32 = 0x3FFF;
    /// dword 3 bits 31:16: the VLAN tag (`vlan_tag`).
    pub const VLAN_TAG_SHIFT: u32 = 16;

    /// A header for a request of `num_wrb` WRBs and `len` bytes, with `complete` and `event`.
    pub fn new(num_wrb: u8, len: u16, complete: bool, event: bool) -> Self {
        let mut dw2 = (u32::from(num_wrb) & Self::NUM_WRB_MASK) << Self::NUM_WRB_SHIFT;
        if complete {
            dw2 |= Self::COMPLETE;
        }
        if event {
            dw2 |= Self::EVENT;
        }
        Self { dw2, dw3: u32::from(len) }
    }
    /// The same header with the dword-2 `flags` set (e.g. [`TxHeaderWrb::TCPCS`]).
    pub fn with_flags(self, flags: u32) -> Self {
        Self { dw2: self.dw2 | flags, ..self }
    }
    /// The same header asking for segmentation at `mss` bytes (`lso`, and `lso6` for IPv6).
    pub fn with_lso(self, mss: u16, ipv6: bool) -> Self {
        let dw2 = (self.dw2 & !(Self::LSO_MSS_MASK << Self::LSO_MSS_SHIFT))
            | Self::LSO
            | if ipv6 { Self::LSO6 } else { 0 }
            | ((u32::from(mss) & Self::LSO_MSS_MASK) << Self::LSO_MSS_SHIFT);
        Self { dw2, ..self }
    }
    /// The same header asking for the 802.1Q tag `tci` to be inserted.
    pub fn with_vlan(self, tci: u16) -> Self {
        Self { dw2: self.dw2 | Self::VLAN, dw3: (self.dw3 & 0xFFFF) | (u32::from(tci) << Self::VLAN_TAG_SHIFT) }
    }
    /// The same header with `num_wrb` replaced (be2net's padding WRB is added this way).
    pub fn with_num_wrb(self, num_wrb: u8) -> Self {
        let mask = Self::NUM_WRB_MASK << Self::NUM_WRB_SHIFT;
        Self { dw2: (self.dw2 & !mask) | ((u32::from(num_wrb) & Self::NUM_WRB_MASK) << Self::NUM_WRB_SHIFT), ..self }
    }

    fn bit(self, mask: u32) -> bool {
        self.dw2 & mask != 0
    }
    /// True when the request wants a completion.
    pub fn complete(self) -> bool {
        self.bit(Self::COMPLETE)
    }
    /// True when the request wants an event.
    pub fn event(self) -> bool {
        self.bit(Self::EVENT)
    }
    /// True for an OS-to-BMC copy (`mgmt`), which never goes on the wire.
    pub fn mgmt(self) -> bool {
        self.bit(Self::MGMT)
    }
    /// True when the IPv4 header checksum is to be computed.
    pub fn ipcs(self) -> bool {
        self.bit(Self::IPCS)
    }
    /// True when the UDP checksum is to be computed.
    pub fn udpcs(self) -> bool {
        self.bit(Self::UDPCS)
    }
    /// True when the TCP checksum is to be computed.
    pub fn tcpcs(self) -> bool {
        self.bit(Self::TCPCS)
    }
    /// True when the request is to be segmented (TSO).
    pub fn lso(self) -> bool {
        self.bit(Self::LSO)
    }
    /// True when the LSO request is IPv6.
    pub fn lso6(self) -> bool {
        self.bit(Self::LSO6)
    }
    /// True when a VLAN tag is to be inserted.
    pub fn vlan(self) -> bool {
        self.bit(Self::VLAN)
    }
    /// WRBs in the request, header included.
    pub fn num_wrb(self) -> u8 {
        ((self.dw2 >> Self::NUM_WRB_SHIFT) & Self::NUM_WRB_MASK) as u8
    }
    /// The LSO segment size.
    pub fn lso_mss(self) -> u16 {
        ((self.dw2 >> Self::LSO_MSS_SHIFT) & Self::LSO_MSS_MASK) as u16
    }
    /// Bytes of the frame (of every fragment together).
    pub fn frame_len(self) -> u16 {
        self.dw3 as u16
    }
    /// The VLAN tag (TCI: PCP 15:13, DEI 12, VID 11:0) to insert.
    pub fn vlan_tag(self) -> u16 {
        (self.dw3 >> Self::VLAN_TAG_SHIFT) as u16
    }
}

impl Wire for TxHeaderWrb {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.zeros("rsvd", 8)?;
        w.u32("dw2", self.dw2)?;
        w.u32("dw3", self.dw3)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.skip("rsvd", 8)?;
        Ok(Self { dw2: r.u32("dw2")?, dw3: r.u32("dw3")? })
    }
}

/// A fragment WRB of an Ethernet TX request (`be_eth_wrb`): dword 0 `frag_pa_hi`, dword 1
/// `frag_pa_lo`, dword 3 bits 15:0 `frag_len` (`ETH_WRB_FRAG_LEN_MASK`). An all-zero WRB is
/// be2net's padding ("dummy") WRB.
#[doc(alias = "be_eth_wrb")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TxFragmentWrb {
    /// The fragment's bus address.
    pub address: u64,
    /// Its length in bytes.
    pub len: u16,
}

impl TxFragmentWrb {
    /// True for a WRB that carries no data (be2net's dummy WRB has length 0).
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

impl Wire for TxFragmentWrb {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("frag_pa_hi", (self.address >> 32) as u32)?;
        w.u32("frag_pa_lo", self.address as u32)?;
        w.zeros("rsvd0", 4)?;
        w.u32("frag_len", u32::from(self.len))
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let hi = r.u32("frag_pa_hi")?;
        let lo = r.u32("frag_pa_lo")?;
        r.skip("rsvd0", 4)?;
        let len = r.u32("frag_len")? as u16;
        Ok(Self { address: (u64::from(hi) << 32) | u64::from(lo), len })
    }
}

/// The status of a TX completion (dword 0 bits 31:28; be.h "Tx Compl Status Encoding").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStatus {
    /// 0: sent.
    Sent,
    /// 0x2: the device could not parse the request's headers (`BE_TX_COMP_HDR_PARSE_ERR`,
    /// be2net's `tx_hdr_parse_err`).
    #[doc(alias = "BE_TX_COMP_HDR_PARSE_ERR")]
    HeaderParseError,
    /// 0x3: a fragment could not be read (`BE_TX_COMP_NDMA_ERR`, `tx_dma_err`).
    #[doc(alias = "BE_TX_COMP_NDMA_ERR")]
    DmaError,
    /// 0x5: refused by the spoof check (`BE_TX_COMP_ACL_ERR`, `tx_spoof_check_err`).
    #[doc(alias = "BE_TX_COMP_ACL_ERR")]
    AclError,
    /// Any other value.
    Unknown(u8),
}

impl TxStatus {
    /// The 4-bit code.
    pub fn raw(self) -> u8 {
        match self {
            Self::Sent => 0,
            Self::HeaderParseError => 0x2,
            Self::DmaError => 0x3,
            Self::AclError => 0x5,
            Self::Unknown(v) => v,
        }
    }
    /// The status of code `raw`.
    pub fn from_raw(raw: u8) -> Self {
        match raw {
            0 => Self::Sent,
            0x2 => Self::HeaderParseError,
            0x3 => Self::DmaError,
            0x5 => Self::AclError,
            v => Self::Unknown(v),
        }
    }
}

/// An Ethernet TX completion (`amap_eth_tx_compl`): dword 0 bits 15:0 `wrb_index` (the last WRB
/// of the request it completes), bits 31:28 `status`; dword 3 bits 26:16 `ringid`, bit 31
/// `valid`, which be2net tests and zeroes after use (be_hw.h).
#[doc(alias = "amap_eth_tx_compl")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxCompletion {
    /// Index of the last WRB of the completed request.
    pub wrb_index: u16,
    /// Completion status ([`TxStatus::raw`]); 0 = sent.
    pub status: u8,
    /// The TX ring's id.
    pub ring_id: u16,
    /// The valid bit.
    pub valid: bool,
}

impl TxCompletion {
    /// dword 0 bits 31:28: status.
    pub const STATUS_SHIFT: u32 = 28;
    /// dword 3 bits 26:16: ring id (11 bits).
    pub const RING_ID_SHIFT: u32 = 16;
    /// Mask of the ring id after shifting.
    pub const RING_ID_MASK: u32 = 0x7FF;
    /// dword 3 bit 31: valid.
    pub const VALID: u32 = 1 << 31;
}

impl Wire for TxCompletion {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("dw0", u32::from(self.wrb_index) | (u32::from(self.status & 0xF) << Self::STATUS_SHIFT))?;
        w.zeros("dw1_dw2", 8)?;
        let ring = (u32::from(self.ring_id) & Self::RING_ID_MASK) << Self::RING_ID_SHIFT;
        w.u32("dw3", ring | if self.valid { Self::VALID } else { 0 })
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let dw0 = r.u32("dw0")?;
        r.skip("dw1_dw2", 8)?;
        let dw3 = r.u32("dw3")?;
        Ok(Self {
            wrb_index: dw0 as u16,
            status: (dw0 >> Self::STATUS_SHIFT) as u8,
            ring_id: ((dw3 >> Self::RING_ID_SHIFT) & Self::RING_ID_MASK) as u16,
            valid: dw3 & Self::VALID != 0,
        })
    }
}

/// An RX descriptor (`be_eth_rx_d`): one receive fragment's bus address, **high dword first**
/// (spec/datapath.md §1.2). Its length is the ring's fragment size (RX_CREATE `frag_size`).
#[doc(alias = "be_eth_rx_d")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RxDescriptor {
    /// The fragment's bus address.
    pub address: u64,
}

impl Wire for RxDescriptor {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("fragpa_hi", (self.address >> 32) as u32)?;
        w.u32("fragpa_lo", self.address as u32)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let hi = r.u32("fragpa_hi")?;
        let lo = r.u32("fragpa_lo")?;
        Ok(Self { address: (u64::from(hi) << 32) | u64::from(lo) })
    }
}

/// An Ethernet RX completion in the BE3-native layout (`amap_eth_rx_compl_v1`, 16 bytes), the one
/// be2net parses once SET_DRIVER_FUNCTION_CAP granted BE3_NATIVE (spec/datapath.md §1.2):
///
/// | dword | bits |
/// |---|---|
/// | 0 | 15:0 `vlan_tag` (network byte order: be2net `swab16`s it) · 29:16 `pktsize` · 30 `vtp` · 31 `ip_opt` |
/// | 1 | 0 `err` · 1 `rsshp` · 2 `ipf` · 3 `tcpf` · 4 `udpf` · 5 `ipcksm` · 6 `l4_cksm` · 7 `ip_version` · 25:16 `fragndx` · 31:29 `numfrags` |
/// | 2 | 2:1 `cast_enc` · 3 `qnq` · 6:5 `port` · 30 `tunneled` · 31 `valid` |
/// | 3 | `rsshash` |
///
/// The flush completion the firmware posts after RX_DESTROY carries no fragment (`numfrags` 0):
/// be2net's `be_rx_cq_clean` waits for it (spec/be2net-driver.md §3.1).
#[doc(alias = "amap_eth_rx_compl_v1")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RxCompletion {
    /// The stripped 802.1Q tag (TCI) when `vtp`; encoded in network byte order.
    pub vlan_tag: u16,
    /// Bytes of the frame in the fragments (14 bits).
    pub pkt_size: u16,
    /// A VLAN tag was stripped: `vlan_tag` holds it.
    pub vtp: bool,
    /// `err`: the frame had an error (be2net counts it and skips checksum offload).
    pub err: bool,
    /// `ipf`: an IP fragment.
    pub ip_frag: bool,
    /// `tcpf`: a TCP segment.
    pub tcp: bool,
    /// `udpf`: a UDP datagram.
    pub udp: bool,
    /// `ipcksm`: the IPv4 header checksum is good.
    pub ip_checksum_ok: bool,
    /// `l4_cksm`: the TCP or UDP checksum is good.
    pub l4_checksum_ok: bool,
    /// `ip_version`: 1 for IPv6.
    pub ipv6: bool,
    /// `fragndx`: ring index of the first fragment (10 bits; be2net does not read it).
    pub frag_index: u16,
    /// `numfrags`: receive fragments the frame used (3 bits).
    pub num_frags: u8,
    /// `cast_enc` (2 bits).
    pub cast: u8,
    /// `qnq`.
    pub qnq: bool,
    /// `port`: the physical port the frame arrived on (2 bits).
    pub port: u8,
    /// `tunneled`.
    pub tunneled: bool,
    /// `valid`.
    pub valid: bool,
    /// `rsshash`: the RSS hash of the frame.
    pub rss_hash: u32,
}

impl RxCompletion {
    /// dword 0 bits 29:16: `pktsize`.
    pub const PKT_SIZE_SHIFT: u32 = 16;
    /// Mask of `pktsize` after shifting (14 bits).
    pub const PKT_SIZE_MASK: u32 = 0x3FFF;
    /// dword 0 bit 30: `vtp`.
    pub const VTP: u32 = 1 << 30;
    /// dword 1 bit 0: `err`.
    pub const ERR: u32 = 1;
    /// dword 1 bit 2: `ipf`.
    pub const IPF: u32 = 1 << 2;
    /// dword 1 bit 3: `tcpf`.
    pub const TCPF: u32 = 1 << 3;
    /// dword 1 bit 4: `udpf`.
    pub const UDPF: u32 = 1 << 4;
    /// dword 1 bit 5: `ipcksm`.
    pub const IPCKSM: u32 = 1 << 5;
    /// dword 1 bit 6: `l4_cksm`.
    pub const L4_CKSM: u32 = 1 << 6;
    /// dword 1 bit 7: `ip_version`.
    pub const IP_VERSION: u32 = 1 << 7;
    /// dword 1 bits 25:16: `fragndx`.
    pub const FRAG_INDEX_SHIFT: u32 = 16;
    /// Mask of `fragndx` after shifting (10 bits).
    pub const FRAG_INDEX_MASK: u32 = 0x3FF;
    /// dword 1 bits 31:29: `numfrags`.
    pub const NUM_FRAGS_SHIFT: u32 = 29;
    /// dword 2 bits 2:1: `cast_enc`.
    pub const CAST_SHIFT: u32 = 1;
    /// dword 2 bit 3: `qnq`.
    pub const QNQ: u32 = 1 << 3;
    /// dword 2 bits 6:5: `port`.
    pub const PORT_SHIFT: u32 = 5;
    /// dword 2 bit 30: `tunneled`.
    pub const TUNNELED: u32 = 1 << 30;
    /// dword 2 bit 31: `valid`.
    pub const VALID: u32 = 1 << 31;
    /// `cast_enc` of a unicast frame (be_hw.h "Rx Packet Type Encoding", `BE_UNICAST_PACKET`).
    #[doc(alias = "BE_UNICAST_PACKET")]
    pub const CAST_UNICAST: u8 = 0;
    /// `cast_enc` of a multicast frame (`BE_MULTICAST_PACKET`; be2net counts `rx_mcast_pkts`).
    #[doc(alias = "BE_MULTICAST_PACKET")]
    pub const CAST_MULTICAST: u8 = 1;
    /// `cast_enc` of a broadcast frame (`BE_BROADCAST_PACKET`).
    #[doc(alias = "BE_BROADCAST_PACKET")]
    pub const CAST_BROADCAST: u8 = 2;

    /// The flush completion: valid, no fragment.
    pub fn flush() -> Self {
        Self { valid: true, ..Self::default() }
    }
}

/// `mask` when `on`, else 0.
fn flag(on: bool, mask: u32) -> u32 {
    if on { mask } else { 0 }
}

impl Wire for RxCompletion {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let dw0 = u32::from(self.vlan_tag.swap_bytes())
            | ((u32::from(self.pkt_size) & Self::PKT_SIZE_MASK) << Self::PKT_SIZE_SHIFT)
            | flag(self.vtp, Self::VTP);
        let dw1 = flag(self.err, Self::ERR)
            | flag(self.ip_frag, Self::IPF)
            | flag(self.tcp, Self::TCPF)
            | flag(self.udp, Self::UDPF)
            | flag(self.ip_checksum_ok, Self::IPCKSM)
            | flag(self.l4_checksum_ok, Self::L4_CKSM)
            | flag(self.ipv6, Self::IP_VERSION)
            | ((u32::from(self.frag_index) & Self::FRAG_INDEX_MASK) << Self::FRAG_INDEX_SHIFT)
            | (u32::from(self.num_frags & 0x7) << Self::NUM_FRAGS_SHIFT);
        let dw2 = (u32::from(self.cast & 0x3) << Self::CAST_SHIFT)
            | flag(self.qnq, Self::QNQ)
            | (u32::from(self.port & 0x3) << Self::PORT_SHIFT)
            | flag(self.tunneled, Self::TUNNELED)
            | flag(self.valid, Self::VALID);
        w.u32("dw0", dw0)?;
        w.u32("dw1", dw1)?;
        w.u32("dw2", dw2)?;
        w.u32("rsshash", self.rss_hash)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let dw0 = r.u32("dw0")?;
        let dw1 = r.u32("dw1")?;
        let dw2 = r.u32("dw2")?;
        let rss_hash = r.u32("rsshash")?;
        Ok(Self {
            vlan_tag: (dw0 as u16).swap_bytes(),
            pkt_size: ((dw0 >> Self::PKT_SIZE_SHIFT) & Self::PKT_SIZE_MASK) as u16,
            vtp: dw0 & Self::VTP != 0,
            err: dw1 & Self::ERR != 0,
            ip_frag: dw1 & Self::IPF != 0,
            tcp: dw1 & Self::TCPF != 0,
            udp: dw1 & Self::UDPF != 0,
            ip_checksum_ok: dw1 & Self::IPCKSM != 0,
            l4_checksum_ok: dw1 & Self::L4_CKSM != 0,
            ipv6: dw1 & Self::IP_VERSION != 0,
            frag_index: ((dw1 >> Self::FRAG_INDEX_SHIFT) & Self::FRAG_INDEX_MASK) as u16,
            num_frags: (dw1 >> Self::NUM_FRAGS_SHIFT) as u8,
            cast: ((dw2 >> Self::CAST_SHIFT) & 0x3) as u8,
            qnq: dw2 & Self::QNQ != 0,
            port: ((dw2 >> Self::PORT_SHIFT) & 0x3) as u8,
            tunneled: dw2 & Self::TUNNELED != 0,
            valid: dw2 & Self::VALID != 0,
            rss_hash,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode<T: Wire>(value: &T, len: usize) -> Vec<u8> {
        let mut out = vec![0xEE; len];
        value.encode(&mut Writer::new(&mut out)).unwrap();
        out
    }

    /// The little-endian dword `i` of `raw`.
    fn dword(raw: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(raw[i * 4..i * 4 + 4].try_into().unwrap())
    }

    #[test]
    fn tx_header_wrb_golden_bytes() {
        // 3 WRBs, 1514 bytes, complete and event.
        let hdr = TxHeaderWrb::new(3, 1514, true, true);
        assert_eq!(hex::encode(encode(&hdr, TX_WRB_LEN)), "000000000000000003600000ea050000");
        let back = TxHeaderWrb::decode(&mut Reader::new(&encode(&hdr, TX_WRB_LEN))).unwrap();
        assert_eq!((back.num_wrb(), back.frame_len(), back.complete(), back.event()), (3, 1514, true, true));
        assert!(!TxHeaderWrb::new(1, 60, false, false).complete());
    }

    #[test]
    fn tx_header_offload_bits_sit_where_be_hw_h_puts_them() {
        // TSO6 at MSS 1440 with TCP checksum and VLAN 0x2064 (PCP 1, VID 100): each bit by its
        // amap position (dword 2: tcpcs 8, lso 9, vlan 10, lso6 4, lso_mss 31:18; dword 3:
        // vlan_tag 31:16).
        let hdr = TxHeaderWrb::new(4, 0xFFFF, true, true)
            .with_flags(TxHeaderWrb::TCPCS | TxHeaderWrb::IPCS | TxHeaderWrb::UDPCS | TxHeaderWrb::MGMT)
            .with_lso(1440, true)
            .with_vlan(0x2064);
        let raw = encode(&hdr, TX_WRB_LEN);
        let dw2 = dword(&raw, 2);
        let expected = 1 | (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10);
        assert_eq!(dw2 & 0x1FFF, expected, "bits 10:0, gso 12:11 clear");
        assert_eq!((dw2 >> 13) & 0x1F, 4);
        assert_eq!(dw2 >> 18, 1440);
        assert_eq!(hex::encode(&raw[12..16]), "ffff6420", "len 0xFFFF, then the TCI little-endian");
        let back = TxHeaderWrb::decode(&mut Reader::new(&raw)).unwrap();
        assert!(back.lso() && back.lso6() && back.tcpcs() && back.ipcs() && back.udpcs() && back.mgmt());
        assert!(back.vlan());
        assert_eq!((back.lso_mss(), back.vlan_tag(), back.num_wrb()), (1440, 0x2064, 4));
        assert_eq!(back.with_num_wrb(6).num_wrb(), 6);
        assert_eq!(back.with_num_wrb(6).lso_mss(), 1440, "num_wrb leaves the MSS alone");
    }

    #[test]
    fn tx_fragment_wrb_golden_bytes() {
        let frag = TxFragmentWrb { address: 0x0000_0001_2345_6780, len: 1448 };
        assert_eq!(hex::encode(encode(&frag, TX_WRB_LEN)), concat!("01000000", "80674523", "00000000", "a8050000"));
        assert_eq!(TxFragmentWrb::decode(&mut Reader::new(&encode(&frag, TX_WRB_LEN))).unwrap(), frag);
        let dummy = TxFragmentWrb::decode(&mut Reader::new(&[0; TX_WRB_LEN])).unwrap();
        assert!(dummy.is_empty());
    }

    #[test]
    fn tx_completion_golden_bytes() {
        let c = TxCompletion { wrb_index: 0x07FF, status: 0, ring_id: 2, valid: true };
        assert_eq!(hex::encode(encode(&c, TX_COMPLETION_LEN)), concat!("ff070000", "0000000000000000", "00000280"));
        let failed = TxCompletion { wrb_index: 1, status: TxStatus::DmaError.raw(), ring_id: 0x7FF, valid: true };
        let raw = encode(&failed, TX_COMPLETION_LEN);
        assert_eq!(hex::encode(&raw[..4]), "01000030");
        assert_eq!(TxCompletion::decode(&mut Reader::new(&raw)).unwrap(), failed);
        assert_eq!(TxStatus::from_raw(2), TxStatus::HeaderParseError);
        assert_eq!(TxStatus::from_raw(9), TxStatus::Unknown(9));
        assert_eq!(TxStatus::AclError.raw(), 5);
    }

    #[test]
    fn rx_descriptor_golden_bytes() {
        let d = RxDescriptor { address: 0x0000_0001_2000_0800 };
        assert_eq!(hex::encode(encode(&d, RX_DESCRIPTOR_LEN)), "0100000000080020", "high dword first");
        assert_eq!(RxDescriptor::decode(&mut Reader::new(&encode(&d, RX_DESCRIPTOR_LEN))).unwrap(), d);
    }

    #[test]
    fn rx_flush_completion_golden_bytes() {
        let flush = RxCompletion::flush();
        assert_eq!(hex::encode(encode(&flush, 16)), concat!("00000000", "00000000", "00000080", "00000000"));
        let three = RxCompletion { num_frags: 3, valid: true, ..RxCompletion::default() };
        let raw = encode(&three, 16);
        assert_eq!(hex::encode(&raw[4..8]), "00000060");
        assert_eq!(RxCompletion::decode(&mut Reader::new(&raw)).unwrap(), three);
    }

    #[test]
    fn rx_completion_v1_golden_bytes() {
        // A 3000-byte TCP/IPv4 frame, stripped of VLAN 100 priority 1 (TCI 0x2064), checksums
        // good, two fragments from ring index 513, port 1, multicast (cast_enc 1), hash
        // 0x51CCC178.
        let c = RxCompletion {
            vlan_tag: 0x2064,
            pkt_size: 3000,
            vtp: true,
            tcp: true,
            ip_checksum_ok: true,
            l4_checksum_ok: true,
            frag_index: 513,
            num_frags: 2,
            cast: 1,
            port: 1,
            valid: true,
            rss_hash: 0x51CC_C178,
            ..RxCompletion::default()
        };
        let raw = encode(&c, RX_COMPLETION_LEN);
        // dword 0: the TCI in network order (0x20, 0x64) in bits 15:0, 3000 << 16, vtp bit 30.
        assert_eq!(&raw[..2], &[0x20, 0x64]);
        assert_eq!(dword(&raw, 0), 0x6420 | (3000 << 16) | (1 << 30));
        // dword 1: tcpf 3, ipcksm 5, l4_cksm 6, fragndx 513 << 16, numfrags 2 << 29.
        assert_eq!(dword(&raw, 1), (1 << 3) | (1 << 5) | (1 << 6) | (513 << 16) | (2 << 29));
        // dword 2: cast_enc 1 << 1, port 1 << 5, valid 31.
        assert_eq!(dword(&raw, 2), (1 << 1) | (1 << 5) | (1 << 31));
        assert_eq!(hex::encode(&raw[12..]), "78c1cc51");
        assert_eq!(RxCompletion::decode(&mut Reader::new(&raw)).unwrap(), c);
        // IPv6 UDP, an IP fragment, an error, QnQ and tunneled: the remaining bits.
        let other = RxCompletion {
            udp: true,
            ipv6: true,
            ip_frag: true,
            err: true,
            qnq: true,
            tunneled: true,
            port: 3,
            cast: 2,
            ..RxCompletion::default()
        };
        let raw = encode(&other, RX_COMPLETION_LEN);
        assert_eq!(dword(&raw, 1), 1 | (1 << 2) | (1 << 4) | (1 << 7));
        assert_eq!(dword(&raw, 2), (2 << 1) | (1 << 3) | (3 << 5) | (1 << 30));
        assert_eq!(RxCompletion::decode(&mut Reader::new(&raw)).unwrap(), other);
    }
}
