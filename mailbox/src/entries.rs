//! Entries of the host-memory rings other than the WRB and its completion: the event-queue entry,
//! the asynchronous events the firmware posts to an MCC's completion queue, and the Ethernet TX
//! header WRB and TX completion (spec/be2net-driver.md §3.1, §3.5, §4.1; be_hw.h, be_cmds.h).

use crate::wire::{Reader, Wire, WireError, Writer};
use crate::wrb::Completion;

/// Size of an EQ entry as be2net and ocrdma create their EQs (`be_eq_entry`; EQ context `size`
/// 0 = 4-byte entries).
pub const EQ_ENTRY_LEN: usize = 4;
/// Size of a TX WRB (`be_eth_wrb`, `be_eth_hdr_wrb`).
pub const TX_WRB_LEN: usize = 16;
/// Size of a TX completion (`be_eth_tx_compl`).
pub const TX_COMPLETION_LEN: usize = 16;

/// An event-queue entry: bit 0 valid, bits 31:16 the id of the completion queue that has news
/// (`be_eq_entry`, `EQ_ENTRY_VALID_MASK`, `EQ_ENTRY_RES_ID_SHIFT`). ocrdma takes an entry for a
/// CQ event only when bits 15:1 are all zero (`OCRDMA_EQE_FOR_CQE_MASK`), so a device writes
/// exactly [`EqEntry::for_cq`].
#[doc(alias = "be_eq_entry")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EqEntry(pub u32);

impl EqEntry {
    /// Bit 0: the entry is valid.
    pub const VALID: u32 = 1;
    /// Bits 31:16: the resource (CQ) id.
    pub const RESOURCE_SHIFT: u32 = 16;

    /// The entry that announces a completion on CQ `cq_id`: `(cq_id << 16) | 1`.
    pub fn for_cq(cq_id: u16) -> Self {
        Self((u32::from(cq_id) << Self::RESOURCE_SHIFT) | Self::VALID)
    }
    /// True when the entry is valid.
    pub fn is_valid(self) -> bool {
        self.0 & Self::VALID != 0
    }
    /// The CQ id it names.
    pub fn cq_id(self) -> u16 {
        (self.0 >> Self::RESOURCE_SHIFT) as u16
    }
}

impl Wire for EqEntry {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("evt", self.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self(r.u32("evt")?))
    }
}

/// The flags dword (@12) of an asynchronous event on an MCC's completion queue: VALID | ASYNC,
/// the event code in bits 15:8 and its type in bits 23:16 (`be_async_event_trailer`,
/// `ASYNC_TRAILER_EVENT_CODE_SHIFT`, `ASYNC_TRAILER_EVENT_TYPE_SHIFT`).
#[doc(alias = "be_async_event_trailer")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncTrailer(pub u32);

impl AsyncTrailer {
    /// Bits 15:8: the event code.
    pub const CODE_SHIFT: u32 = 8;
    /// Bits 23:16: the event type.
    pub const TYPE_SHIFT: u32 = 16;
    /// The link-state event (`ASYNC_EVENT_CODE_LINK_STATE`); bit 1 of an MCC's subscription
    /// bitmap.
    #[doc(alias = "ASYNC_EVENT_CODE_LINK_STATE")]
    pub const CODE_LINK_STATE: u8 = 0x1;
    /// Group-5 events: QoS speed, priority, PVID (`ASYNC_EVENT_CODE_GRP_5`).
    #[doc(alias = "ASYNC_EVENT_CODE_GRP_5")]
    pub const CODE_GRP_5: u8 = 0x5;

    /// The trailer of a valid asynchronous event with `code` and `event_type`.
    pub fn new(code: u8, event_type: u8) -> Self {
        Self(
            Completion::VALID
                | Completion::ASYNC
                | (u32::from(code) << Self::CODE_SHIFT)
                | (u32::from(event_type) << Self::TYPE_SHIFT),
        )
    }
    /// True when VALID and ASYNC are both set.
    pub fn is_async_event(self) -> bool {
        self.0 & (Completion::VALID | Completion::ASYNC) == Completion::VALID | Completion::ASYNC
    }
    /// The event code.
    pub fn code(self) -> u8 {
        (self.0 >> Self::CODE_SHIFT) as u8
    }
    /// The event type.
    pub fn event_type(self) -> u8 {
        (self.0 >> Self::TYPE_SHIFT) as u8
    }
}

/// The link-state asynchronous event (`be_async_event_link_state`, 16 bytes; spec/protocol.md
/// §3.8, spec/be2net-driver.md §3.5).
#[doc(alias = "be_async_event_link_state")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStateEvent {
    /// `physical_port` @0.
    pub physical_port: u8,
    /// `port_link_status` @1: [`LinkStateEvent::PHYSICAL_UP`], [`LinkStateEvent::LOGICAL`].
    pub port_link_status: u8,
    /// `port_duplex` @2.
    pub port_duplex: u8,
    /// `port_speed` @3.
    pub port_speed: u8,
    /// `port_fault` @4.
    pub port_fault: u8,
    /// The trailer @12.
    pub trailer: AsyncTrailer,
}

impl LinkStateEvent {
    /// `port_link_status` bit 0: the link is up (`LINK_STATUS_MASK`).
    #[doc(alias = "LINK_STATUS_MASK")]
    pub const PHYSICAL_UP: u8 = 0x1;
    /// `port_link_status` bit 1: this is the logical-link notification; Skyhawk's be2net ignores
    /// an event without it (`LOGICAL_LINK_STATUS_MASK`).
    #[doc(alias = "LOGICAL_LINK_STATUS_MASK")]
    pub const LOGICAL: u8 = 0x2;

    /// The logical-link event for `port` going `up` or down, with the given duplex and speed
    /// codes; type 0.
    pub fn logical(port: u8, up: bool, duplex: u8, speed: u8) -> Self {
        Self {
            physical_port: port,
            port_link_status: Self::LOGICAL | if up { Self::PHYSICAL_UP } else { 0 },
            port_duplex: duplex,
            port_speed: speed,
            port_fault: 0,
            trailer: AsyncTrailer::new(AsyncTrailer::CODE_LINK_STATE, 0),
        }
    }
    /// True when the event says the link is up.
    pub fn is_up(&self) -> bool {
        self.port_link_status & Self::PHYSICAL_UP != 0
    }
}

impl Wire for LinkStateEvent {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("physical_port", self.physical_port)?;
        w.u8("port_link_status", self.port_link_status)?;
        w.u8("port_duplex", self.port_duplex)?;
        w.u8("port_speed", self.port_speed)?;
        w.u8("port_fault", self.port_fault)?;
        w.zeros("rsvd0", 7)?;
        w.u32("trailer", self.trailer.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let physical_port = r.u8("physical_port")?;
        let port_link_status = r.u8("port_link_status")?;
        let port_duplex = r.u8("port_duplex")?;
        let port_speed = r.u8("port_speed")?;
        let port_fault = r.u8("port_fault")?;
        r.skip("rsvd0", 7)?;
        let trailer = AsyncTrailer(r.u32("trailer")?);
        Ok(Self { physical_port, port_link_status, port_duplex, port_speed, port_fault, trailer })
    }
}

/// The header WRB of an Ethernet TX request (`amap_eth_hdr_wrb`): the fields a device needs to
/// complete it. dword 2: bit 0 `complete`, bit 1 `event`, bits 17:13 `num_wrb`; dword 3: bits
/// 15:0 `len` (be_hw.h; `TX_HDR_WRB_COMPL`, `TX_HDR_WRB_EVT`, `TX_HDR_WRB_NUM_SHIFT`).
#[doc(alias = "amap_eth_hdr_wrb")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxHeaderWrb {
    /// dword 2, kept whole (checksum, LSO and VLAN bits included).
    pub dw2: u32,
    /// dword 3: bits 15:0 length, bits 31:16 VLAN tag.
    pub dw3: u32,
}

impl TxHeaderWrb {
    /// dword 2 bit 0: write a completion for this request (`TX_HDR_WRB_COMPL`).
    pub const COMPLETE: u32 = 1;
    /// dword 2 bit 1: raise an event with that completion (`TX_HDR_WRB_EVT`).
    pub const EVENT: u32 = 1 << 1;
    /// dword 2 bits 17:13: WRBs in the request, header included (`TX_HDR_WRB_NUM_SHIFT`).
    pub const NUM_WRB_SHIFT: u32 = 13;
    /// Mask of `num_wrb` after shifting (`TX_HDR_WRB_NUM_MASK`).
    pub const NUM_WRB_MASK: u32 = 0x1F;

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
    /// True when the request wants a completion.
    pub fn complete(self) -> bool {
        self.dw2 & Self::COMPLETE != 0
    }
    /// True when the request wants an event.
    pub fn event(self) -> bool {
        self.dw2 & Self::EVENT != 0
    }
    /// WRBs in the request, header included.
    pub fn num_wrb(self) -> u8 {
        ((self.dw2 >> Self::NUM_WRB_SHIFT) & Self::NUM_WRB_MASK) as u8
    }
    /// Bytes of the frame.
    pub fn frame_len(self) -> u16 {
        self.dw3 as u16
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

/// An Ethernet TX completion (`amap_eth_tx_compl`): dword 0 bits 15:0 `wrb_index` (the last WRB
/// of the request it completes), bits 31:28 `status`; dword 3 bits 26:16 `ringid`, bit 31
/// `valid`, which be2net tests and zeroes after use (be_hw.h).
#[doc(alias = "amap_eth_tx_compl")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxCompletion {
    /// Index of the last WRB of the completed request.
    pub wrb_index: u16,
    /// Completion status; 0 = sent.
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

/// An Ethernet RX completion (`amap_eth_rx_compl_v1`, 16 bytes; v0 has `valid` at the same
/// place): the fields a device that receives nothing writes. The flush completion the firmware
/// posts after RX_DESTROY carries no fragment (`numfrags` 0): be2net's `be_rx_cq_clean` waits
/// for it, else logs "did not receive flush compl" (spec/be2net-driver.md §3.1).
#[doc(alias = "amap_eth_rx_compl_v1")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxCompletion {
    /// dword 1 bits 31:29: receive buffers the frame used (v1).
    pub num_frags: u8,
    /// dword 2 bit 31: valid.
    pub valid: bool,
}

impl RxCompletion {
    /// dword 1 bits 31:29: `numfrags` (v1).
    pub const NUM_FRAGS_SHIFT: u32 = 29;
    /// dword 2 bit 31: `valid`.
    pub const VALID: u32 = 1 << 31;

    /// The flush completion: valid, no fragment.
    pub fn flush() -> Self {
        Self { num_frags: 0, valid: true }
    }
}

impl Wire for RxCompletion {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.zeros("dw0", 4)?;
        w.u32("dw1", u32::from(self.num_frags & 0x7) << Self::NUM_FRAGS_SHIFT)?;
        w.u32("dw2", if self.valid { Self::VALID } else { 0 })?;
        w.zeros("dw3", 4)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.skip("dw0", 4)?;
        let dw1 = r.u32("dw1")?;
        let dw2 = r.u32("dw2")?;
        r.skip("dw3", 4)?;
        Ok(Self { num_frags: (dw1 >> Self::NUM_FRAGS_SHIFT) as u8, valid: dw2 & Self::VALID != 0 })
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

    #[test]
    fn eq_entry_golden_bytes() {
        let e = EqEntry::for_cq(0x0123);
        assert_eq!(hex::encode(encode(&e, EQ_ENTRY_LEN)), "01002301");
        assert!(e.is_valid());
        assert_eq!(e.cq_id(), 0x123);
        // ocrdma's CQ-event test: bits 15:1 all zero.
        assert_eq!(e.0 & 0xFFFE, 0);
        assert!(!EqEntry::decode(&mut Reader::new(&[0, 0, 0, 0])).unwrap().is_valid());
    }

    #[test]
    fn link_state_event_golden_bytes() {
        let up = LinkStateEvent::logical(1, true, 2, 4);
        // port 1, status 0x3 (logical | up), duplex 2, speed 4, fault 0, 7 reserved bytes, then
        // flags VALID | ASYNC | code 1 << 8.
        assert_eq!(hex::encode(encode(&up, 16)), "010302040000000000000000000100c0");
        let back = LinkStateEvent::decode(&mut Reader::new(&encode(&up, 16))).unwrap();
        assert_eq!(back, up);
        assert!(back.is_up() && back.trailer.is_async_event());
        assert_eq!((back.trailer.code(), back.trailer.event_type()), (AsyncTrailer::CODE_LINK_STATE, 0));
        let down = LinkStateEvent::logical(0, false, 0, 0);
        assert_eq!(down.port_link_status, LinkStateEvent::LOGICAL);
        assert!(!down.is_up());
        assert_eq!(AsyncTrailer::new(AsyncTrailer::CODE_GRP_5, 2).0, 0xC002_0500);
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
    fn rx_flush_completion_golden_bytes() {
        let flush = RxCompletion::flush();
        assert_eq!(hex::encode(encode(&flush, 16)), concat!("00000000", "00000000", "00000080", "00000000"));
        let three = RxCompletion { num_frags: 3, valid: true };
        let raw = encode(&three, 16);
        assert_eq!(hex::encode(&raw[4..8]), "00000060");
        assert_eq!(RxCompletion::decode(&mut Reader::new(&raw)).unwrap(), three);
    }

    #[test]
    fn tx_completion_golden_bytes() {
        let c = TxCompletion { wrb_index: 0x07FF, status: 0, ring_id: 2, valid: true };
        assert_eq!(hex::encode(encode(&c, TX_COMPLETION_LEN)), concat!("ff070000", "0000000000000000", "00000280"));
        let failed = TxCompletion { wrb_index: 1, status: 3, ring_id: 0x7FF, valid: true };
        let raw = encode(&failed, TX_COMPLETION_LEN);
        assert_eq!(hex::encode(&raw[..4]), "01000030");
        assert_eq!(TxCompletion::decode(&mut Reader::new(&raw)).unwrap(), failed);
    }
}
