//! Entries of the host-memory rings other than the WRB and its completion: the event-queue entry
//! and the asynchronous events the firmware posts to an MCC's completion queue (spec/be2net-driver.md
//! §3.1, §3.5; be_hw.h, be_cmds.h); the Ethernet rings' entries are in [`eth`], the RDMA rings'
//! WQEs, RQEs, CQEs and AH-table entries in `rdma_wqe` and `rdma_cqe`, all re-exported here.

mod eth;
mod rdma_cqe;
mod rdma_wqe;

pub use eth::{
    RX_COMPLETION_LEN, RX_DESCRIPTOR_LEN, RxCompletion, RxDescriptor, TX_COMPLETION_LEN, TX_WRB_LEN, TxCompletion,
    TxFragmentWrb, TxHeaderWrb, TxStatus,
};

pub use rdma_cqe::{AV_LEN, Av, AvGrh, CQE_LEN, Cqe, ROCE_ETHERTYPE, cqe_status};
pub use rdma_wqe::{
    FastRegister, Rqe, SGE_LEN, Sge, TYPE_LKEY, UdHeader, WQE_HEADER_LEN, WQE_STRIDE, WqeHeader, flag as wqe_flag,
    fr_access, opcode as wqe_opcode,
};

use crate::wire::{Reader, Wire, WireError, Writer};
use crate::wrb::Completion;

/// Size of an EQ entry as be2net and ocrdma create their EQs (`be_eq_entry`; EQ context `size`
/// 0 = 4-byte entries).
pub const EQ_ENTRY_LEN: usize = 4;

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
}
