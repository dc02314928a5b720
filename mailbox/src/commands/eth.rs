//! The Ethernet subsystem's queues: ETH TX_CREATE v2 (3-7), RX_CREATE (3-8), TX_DESTROY (3-9)
//! and RX_DESTROY (3-10) (spec/be2net-driver.md §3.2, spec/protocol.md §5.20). RSS, Wake-on-LAN
//! and statistics are in [`super::eth_config`].

use super::queue_context::{decode_pages, encode_pages};
use super::queues::queue_destroy;
use super::support::fill_to;
use crate::command::{Command, Empty};

use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// Page slots of TX_CREATE (`pages[8]`).
const TX_PAGE_SLOTS: usize = 8;
/// Page slots of RX_CREATE (`pages[2]`).
const RX_PAGE_SLOTS: usize = 2;

/// ETH TX_CREATE v2: embedded, 148 bytes (spec/be2net-driver.md §3.2).
#[doc(alias = "be_cmd_req_eth_tx_create")]
#[doc(alias = "OPCODE_ETH_TX_CREATE")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxCreate {
    /// `ulp_num` u8 @17 (be2net: 1).
    pub ulp_num: u8,
    /// `type` u16 @18 (2 = standard, `BE_ETH_TX_RING_TYPE_STANDARD`).
    pub tx_type: u16,
    /// `if_id` u16 @20 (v2): the interface the ring sends for.
    pub if_id: u16,
    /// `queue_size` u8 @22: fls(entries) (2048 WRBs → 12).
    pub queue_size: u8,
    /// `cq_id` u16 @28: where TX completions go.
    pub cq_id: u16,
    /// Bus address of each 4 KiB page (`num_pages` u8 @16, pages @84).
    pub pages: Vec<u64>,
}

impl TxCreate {
    /// A standard ring type.
    pub const TYPE_STANDARD: u16 = 2;
    /// Offset of the page list.
    const PAGES_OFFSET: usize = 84;

    /// Entries in the ring: 2^(queue_size − 1).
    pub fn entries(&self) -> u32 {
        1u32.checked_shl(u32::from(self.queue_size).saturating_sub(1)).unwrap_or(0)
    }
}

impl Wire for TxCreate {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("num_pages", self.pages.len() as u8)?;
        w.u8("ulp_num", self.ulp_num)?;
        w.u16("type", self.tx_type)?;
        w.u16("if_id", self.if_id)?;
        w.u8("queue_size", self.queue_size)?;
        w.zeros("rsvd0", 5)?;
        w.u16("cq_id", self.cq_id)?;
        fill_to(w, "rsvd3", Self::PAGES_OFFSET)?;
        encode_pages(w, &self.pages, TX_PAGE_SLOTS)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let count = r.u8("num_pages")?;
        let ulp_num = r.u8("ulp_num")?;
        let tx_type = r.u16("type")?;
        let if_id = r.u16("if_id")?;
        let queue_size = r.u8("queue_size")?;
        r.skip("rsvd0", 5)?;
        let cq_id = r.u16("cq_id")?;
        r.seek("pages", Self::PAGES_OFFSET)?;
        let pages = decode_pages(r, count.into(), TX_PAGE_SLOTS)?;
        Ok(Self { ulp_num, tx_type, if_id, queue_size, cq_id, pages })
    }
}

impl Command for TxCreate {
    const NAME: &'static str = "TX_CREATE";
    const SUBSYSTEM: Subsystem = Subsystem::Eth;
    const OPCODE: u8 = 7;
    const VERSION: u8 = 2;
    const EMBEDDED: bool = true;
    const LEN: usize = 148;
    type Response = TxCreated;
}

/// The TX_CREATE response (40 bytes): `cid` u16 @16 (the ring id), `rid` u16 @18,
/// `db_offset` u32 @20 (where in the doorbell BAR this ring's doorbell is).
#[doc(alias = "be_cmd_resp_eth_tx_create")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxCreated {
    /// The ring id the TX doorbell names.
    pub cid: u16,
    /// `rid`.
    pub rid: u16,
    /// The ring's doorbell offset in the doorbell BAR.
    pub db_offset: u32,
}

impl Wire for TxCreated {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("cid", self.cid)?;
        w.u16("rid", self.rid)?;
        w.u32("db_offset", self.db_offset)?;
        w.zeros("rsvd0", 16)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { cid: r.u16("cid")?, rid: r.u16("rid")?, db_offset: r.u32("db_offset")? })
    }
}

/// ETH RX_CREATE v0: embedded, 48 bytes (spec/be2net-driver.md §3.2).
#[doc(alias = "be_cmd_req_eth_rx_create")]
#[doc(alias = "OPCODE_ETH_RX_CREATE")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxCreate {
    /// `cq_id` u16 @16.
    pub cq_id: u16,
    /// `frag_size` u8 @18: log2 of the receive fragment size (2048 → 11).
    pub frag_size: u8,
    /// Bus address of each 4 KiB page (`num_pages` u8 @19, `pages[2]` @20).
    pub pages: Vec<u64>,
    /// `interface_id` u32 @36.
    pub interface_id: u32,
    /// `max_frame_size` u16 @40.
    pub max_frame_size: u16,
    /// `rss_queue` u32 @44: 1 for an RSS ring, 0 for the default ring.
    pub rss_queue: u32,
}

impl Wire for RxCreate {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("cq_id", self.cq_id)?;
        w.u8("frag_size", self.frag_size)?;
        w.u8("num_pages", self.pages.len() as u8)?;
        encode_pages(w, &self.pages, RX_PAGE_SLOTS)?;
        w.u32("interface_id", self.interface_id)?;
        w.u16("max_frame_size", self.max_frame_size)?;
        w.zeros("rsvd0", 2)?;
        w.u32("rss_queue", self.rss_queue)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let cq_id = r.u16("cq_id")?;
        let frag_size = r.u8("frag_size")?;
        let count = r.u8("num_pages")?;
        let pages = decode_pages(r, count.into(), RX_PAGE_SLOTS)?;
        r.seek("interface_id", 36)?;
        let interface_id = r.u32("interface_id")?;
        let max_frame_size = r.u16("max_frame_size")?;
        r.skip("rsvd0", 2)?;
        let rss_queue = r.u32("rss_queue")?;
        Ok(Self { cq_id, frag_size, pages, interface_id, max_frame_size, rss_queue })
    }
}

impl Command for RxCreate {
    const NAME: &'static str = "RX_CREATE";
    const SUBSYSTEM: Subsystem = Subsystem::Eth;
    const OPCODE: u8 = 8;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 48;
    type Response = RxCreated;
}

/// The RX_CREATE response: `id` u16 @16 (the ring id the RQ doorbell names), `rss_id` u8 @18
/// (what the RSS indirection table holds for this ring).
#[doc(alias = "be_cmd_resp_eth_rx_create")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxCreated {
    /// The ring id.
    pub id: u16,
    /// The ring's RSS id.
    pub rss_id: u8,
}

impl Wire for RxCreated {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("id", self.id)?;
        w.u8("rss_id", self.rss_id)?;
        w.zeros("rsvd0", 1)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { id: r.u16("id")?, rss_id: r.u8("rss_id")? })
    }
}

queue_destroy!(
    /// ETH TX_DESTROY: destroys a TX ring.
    TxDestroy, "TX_DESTROY", Subsystem::Eth, 9
);
queue_destroy!(
    /// ETH RX_DESTROY: destroys an RX ring (sent over the MCC, unlike the other destroys).
    RxDestroy, "RX_DESTROY", Subsystem::Eth, 10
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn tx_create_golden_bytes() {
        let pages: Vec<u64> = (0..8).map(|i| 0x8000_0000 + i * 0x1000).collect();
        let cmd = TxCreate { ulp_num: 1, tx_type: 2, if_id: 3, queue_size: 12, cq_id: 4, pages };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 148);
        assert_eq!(hex::encode(&buf[..16]), "07030000000000008400000002000000"); // ETH 7, len 132, v2
        // 8 pages, ULP 1, type 2, interface 3, queue size 12, reserved, CQ 4.
        assert_eq!(hex::encode(&buf[16..32]), concat!("08010200", "03000c00", "00000000", "04000000"));
        assert!(buf[32..84].iter().all(|&b| b == 0));
        assert_eq!(hex::encode(&buf[84..92]), "0000008000000000");
        assert_eq!(hex::encode(&buf[140..148]), "0070008000000000");
        let (_, back) = decode_request::<TxCreate>(&buf).unwrap();
        assert_eq!(back, cmd);
        assert_eq!(back.entries(), 2048);
        let rsp = hex::decode(concat!(
            "07030000000000001800000018000000",
            "0200",     // cid 2
            "0500",     // rid 5
            "60000000", // db_offset 0x60
            "00000000000000000000000000000000",
        ))
        .unwrap();
        let (_, created) = decode_response::<TxCreate>(&rsp).unwrap();
        assert_eq!(created, TxCreated { cid: 2, rid: 5, db_offset: 0x60 });
    }

    #[test]
    fn rx_create_golden_bytes() {
        let cmd = RxCreate {
            cq_id: 6,
            frag_size: 11,
            pages: vec![0x1_0000_0000, 0x1_0000_1000],
            interface_id: 1,
            max_frame_size: 9018,
            rss_queue: 0,
        };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(
            hex::encode(&buf),
            concat!(
                "08030000000000002000000000000000", // ETH 8, len 32, v0
                "06000b02",                         // cq 6, frag 11, 2 pages
                "0000000001000000",
                "0010000001000000",
                "01000000", // interface 1
                "3a230000", // 9018
                "00000000", // rss_queue 0
            )
        );
        let (_, back) = decode_request::<RxCreate>(&buf).unwrap();
        assert_eq!(back, cmd);
        let rsp = hex::decode("080300000000000004000000040000000100070000").unwrap();
        assert_eq!(decode_response::<RxCreate>(&rsp).unwrap().1, RxCreated { id: 1, rss_id: 7 });
    }

    #[test]
    fn eth_destroys_golden_bytes() {
        assert_eq!(
            hex::encode(encode_request(&TxDestroy::new(2)).unwrap()),
            "0903000000000000040000000000000002000000"
        );
        assert_eq!(
            hex::encode(encode_request(&RxDestroy::new(1)).unwrap()),
            "0a03000000000000040000000000000001000000"
        );
    }
}
