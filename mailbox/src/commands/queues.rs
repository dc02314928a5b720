//! Creating and destroying the function's queues: EQ_CREATE v2 (COMMON 13), CQ_CREATE v2
//! (COMMON 12), MCC_CREATE_EXT v1 (COMMON 90), and MCC / CQ / EQ_DESTROY (COMMON 53 / 54 / 55).
//! Layouts: spec/be2net-driver.md §3.2 (offsets from BTF; amap bit positions converted to
//! dword/bit), spec/protocol.md §5.20. The context words live in [`super::queue_context`].

use super::queue_context::{CqContext, EqContext, MccContext, decode_pages, encode_pages};
use crate::command::{Command, Empty};
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// Page slots in the EQ, CQ and MCC create requests (`pages[8]`).
pub const QUEUE_PAGE_SLOTS: usize = 8;

/// EQ_CREATE v2: embedded, 100 bytes; `num_pages` u16 @16, context @20, `pages[8]` @36
/// (spec/be2net-driver.md §3.2). ocrdma writes `num_pages` as a u32, whose high half is the
/// reserved u16 @18.
#[doc(alias = "be_cmd_req_eq_create")]
#[doc(alias = "OPCODE_COMMON_EQ_CREATE")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EqCreate {
    /// The context dwords.
    pub context: EqContext,
    /// Bus address of each 4 KiB page of the ring.
    pub pages: Vec<u64>,
}

impl Wire for EqCreate {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("num_pages", self.pages.len() as u16)?;
        w.zeros("rsvd0", 2)?;
        self.context.encode(w)?;
        encode_pages(w, &self.pages, QUEUE_PAGE_SLOTS)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let count = r.u16("num_pages")?;
        r.skip("rsvd0", 2)?;
        let context = EqContext::decode(r)?;
        let pages = decode_pages(r, count.into(), QUEUE_PAGE_SLOTS)?;
        Ok(Self { context, pages })
    }
}

impl Command for EqCreate {
    const NAME: &'static str = "EQ_CREATE";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 13;
    const VERSION: u8 = 2;
    const EMBEDDED: bool = true;
    const LEN: usize = 100;
    type Response = EqCreated;
}

/// The EQ_CREATE v2 response: `eq_id` u16 @16 and `msix_idx` u16 @18, the MSI-X vector the EQ
/// interrupts on (v2 only).
#[doc(alias = "be_cmd_resp_eq_create")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EqCreated {
    /// The new EQ's id.
    pub eq_id: u16,
    /// Its MSI-X table index.
    pub msix_idx: u16,
}

impl Wire for EqCreated {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("eq_id", self.eq_id)?;
        w.u16("msix_idx", self.msix_idx)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { eq_id: r.u16("eq_id")?, msix_idx: r.u16("msix_idx")? })
    }
}

/// CQ_CREATE v2: embedded; `num_pages` u16 @16, `page_size` u8 @18 (1 = 4 KiB), context @20,
/// pages @36. be2net sends 100 bytes (8 page slots); ocrdma a 68-byte form with 4 slots, which
/// decodes the same as long as `num_pages` fits (spec/be2net-driver.md §3.2).
#[doc(alias = "be_cmd_req_cq_create")]
#[doc(alias = "OPCODE_COMMON_CQ_CREATE")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CqCreate {
    /// `page_size` in 4 KiB units.
    pub page_size: u8,
    /// The context dwords.
    pub context: CqContext,
    /// Bus address of each page of the ring.
    pub pages: Vec<u64>,
}

impl CqCreate {
    /// `page_size` of a 4 KiB page.
    pub const PAGE_SIZE_4K: u8 = 1;
}

impl Wire for CqCreate {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("num_pages", self.pages.len() as u16)?;
        w.u8("page_size", self.page_size)?;
        w.zeros("rsvd0", 1)?;
        self.context.encode(w)?;
        encode_pages(w, &self.pages, QUEUE_PAGE_SLOTS)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let count = r.u16("num_pages")?;
        let page_size = r.u8("page_size")?;
        r.skip("rsvd0", 1)?;
        let context = CqContext::decode(r)?;
        let pages = decode_pages(r, count.into(), QUEUE_PAGE_SLOTS)?;
        Ok(Self { page_size, context, pages })
    }
}

impl Command for CqCreate {
    const NAME: &'static str = "CQ_CREATE";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 12;
    const VERSION: u8 = 2;
    const EMBEDDED: bool = true;
    const LEN: usize = 100;
    type Response = QueueCreated;
}

/// The response of CQ_CREATE, MCC_CREATE_EXT and RX-less creates: the new queue's `id` u16 @16
/// (ocrdma reads the dword and masks it).
#[doc(alias = "be_cmd_resp_cq_create")]
#[doc(alias = "be_cmd_resp_mcc_create")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueCreated {
    /// The new queue's id.
    pub id: u16,
}

impl Wire for QueueCreated {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("id", self.id)?;
        w.zeros("rsvd0", 2)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { id: r.u16("id")? })
    }
}

/// MCC_CREATE_EXT v1: embedded, 104 bytes; `num_pages` u16 @16, `cq_id` u16 @18 (where command
/// completions go), `async_event_bitmap` u32 @20, context @24, `pages[8]` @40
/// (spec/be2net-driver.md §3.2).
#[doc(alias = "be_cmd_req_mcc_ext_create")]
#[doc(alias = "OPCODE_COMMON_MCC_CREATE_EXT")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MccCreateExt {
    /// The CQ command completions are written to.
    pub cq_id: u16,
    /// Bit n set: post asynchronous events of code n to the async CQ.
    pub async_event_bitmap: u32,
    /// The context dwords.
    pub context: MccContext,
    /// Bus address of each 4 KiB page of the ring.
    pub pages: Vec<u64>,
}

impl MccCreateExt {
    /// be2net's subscription: link state (1), group 5 (5), QnQ (6), SLIPORT (17).
    pub const BE2NET_ASYNC_EVENTS: u32 = 0x0002_0062;

    /// True when the MCC subscribed to asynchronous events of `code`.
    pub fn wants(&self, code: u8) -> bool {
        code < 32 && self.async_event_bitmap & (1 << code) != 0
    }
}

impl Wire for MccCreateExt {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("num_pages", self.pages.len() as u16)?;
        w.u16("cq_id", self.cq_id)?;
        w.u32("async_event_bitmap", self.async_event_bitmap)?;
        self.context.encode(w)?;
        encode_pages(w, &self.pages, QUEUE_PAGE_SLOTS)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let count = r.u16("num_pages")?;
        let cq_id = r.u16("cq_id")?;
        let async_event_bitmap = r.u32("async_event_bitmap")?;
        let context = MccContext::decode(r)?;
        let pages = decode_pages(r, count.into(), QUEUE_PAGE_SLOTS)?;
        Ok(Self { cq_id, async_event_bitmap, context, pages })
    }
}

impl Command for MccCreateExt {
    const NAME: &'static str = "MCC_CREATE_EXT";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 90;
    const VERSION: u8 = 1;
    const EMBEDDED: bool = true;
    const LEN: usize = 104;
    type Response = QueueCreated;
}

/// Declares a queue-destroy command: embedded, 20 bytes, `id` u16 @16 and `bypass_flush` u16 @18
/// (RX only), header-only response (`be_cmd_req_q_destroy`, spec/be2net-driver.md §3.2).
macro_rules! queue_destroy {
    ($(#[$meta:meta])* $name:ident, $c_name:literal, $subsystem:expr, $opcode:expr) => {
        $(#[$meta])*
        #[doc(alias = "be_cmd_req_q_destroy")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name {
            /// The queue to destroy.
            pub id: u16,
            /// `bypass_flush` (RX_DESTROY only; be2net sends 0).
            pub bypass_flush: u16,
        }

        impl $name {
            /// Destroys queue `id`, flushing it.
            pub fn new(id: u16) -> Self {
                Self { id, bypass_flush: 0 }
            }
        }

        impl Wire for $name {
            fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
                w.u16("id", self.id)?;
                w.u16("bypass_flush", self.bypass_flush)
            }
            fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
                Ok(Self { id: r.u16("id")?, bypass_flush: r.u16("bypass_flush")? })
            }
        }

        impl Command for $name {
            const NAME: &'static str = $c_name;
            const SUBSYSTEM: Subsystem = $subsystem;
            const OPCODE: u8 = $opcode;
            const VERSION: u8 = 0;
            const EMBEDDED: bool = true;
            const LEN: usize = 20;
            type Response = Empty;
        }
    };
}

pub(crate) use queue_destroy;

queue_destroy!(
    /// MCC_DESTROY: destroys an MCC queue.
    MccDestroy, "MCC_DESTROY", Subsystem::Common, 53
);
queue_destroy!(
    /// CQ_DESTROY: destroys a completion queue.
    CqDestroy, "CQ_DESTROY", Subsystem::Common, 54
);
queue_destroy!(
    /// EQ_DESTROY: destroys an event queue.
    EqDestroy, "EQ_DESTROY", Subsystem::Common, 55
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    fn page(i: u64) -> u64 {
        0x0000_0001_2340_0000 + i * 0x1000
    }

    #[test]
    fn eq_create_golden_bytes() {
        // be2net's EQ: 1024 × 4 B (count 2), valid, delay multiplier 0, one page.
        let cmd = EqCreate { context: EqContext::be2net(2), pages: vec![page(0)] };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 100);
        assert_eq!(hex::encode(&buf[..16]), "0d010000000000005400000002000000"); // 13, len 84, v2
        assert_eq!(hex::encode(&buf[16..20]), "01000000"); // num_pages 1
        // context dword0 bit 29 valid; dword1 count 2 << 26.
        assert_eq!(hex::encode(&buf[20..36]), concat!("00000020", "00000008", "0000000000000000"));
        assert_eq!(hex::encode(&buf[36..44]), "0000402301000000"); // lo, hi
        assert!(buf[44..].iter().all(|&b| b == 0));
        let (_, back) = decode_request::<EqCreate>(&buf).unwrap();
        assert_eq!(back, cmd);
        assert_eq!(back.context.entries(), 1024);
        let rsp = hex::decode("0d010000000000000400000004000000050003000000").unwrap();
        let (_, created) = decode_response::<EqCreate>(&rsp).unwrap();
        assert_eq!(created, EqCreated { eq_id: 5, msix_idx: 3 });
    }

    #[test]
    fn cq_create_golden_bytes_both_forms() {
        // be2net's MCC CQ: 256 entries (count 0), no-delay, eventable, on EQ 7.
        let cmd = CqCreate { page_size: 1, context: CqContext::be2net(0, 7, true, 0), pages: vec![page(1)] };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(hex::encode(&buf[..16]), "0c010000000000005400000002000000");
        assert_eq!(hex::encode(&buf[16..20]), "01000100");
        // dword0: nodelay bit 14, valid bit 29, eventable bit 31; dword1 eqid 7.
        assert_eq!(hex::encode(&buf[20..36]), "004000a0070000000000000000000000");
        let (_, back) = decode_request::<CqCreate>(&buf).unwrap();
        assert_eq!(back, cmd);
        // ocrdma's 68-byte form: pgsz_pgcnt (1 << 16) | 1, ev_cnt_flags 0xA0004000, eqn 9,
        // pdid_cqecnt 256, one page.
        let ocrdma = hex::decode(concat!(
            "0c010000140000003400000002000000",
            "01000100",
            "004000a0",
            "09000000",
            "00010000",
            "00000000",
            "0010402301000000",
            "000000000000000000000000000000000000000000000000",
        ))
        .unwrap();
        assert_eq!(ocrdma.len(), 68);
        let (_, back) = decode_request::<CqCreate>(&ocrdma).unwrap();
        assert_eq!(back.pages, [page(1)]);
        assert_eq!((back.context.eq_id, back.context.entries(), back.context.eventable), (9, 256, true));
        assert_eq!(back.context.dw2, 256);
        // More pages than the 68-byte form holds fail, naming the page list.
        let mut five = ocrdma.clone();
        five[16] = 5;
        assert_eq!(decode_request::<CqCreate>(&five).unwrap_err().field, "pages");
    }

    #[test]
    fn mcc_create_ext_golden_bytes() {
        let pages: Vec<u64> = (0..8).map(page).collect();
        let cmd = MccCreateExt {
            cq_id: 3,
            async_event_bitmap: MccCreateExt::BE2NET_ASYNC_EVENTS,
            context: MccContext::be2net(3, 128),
            pages,
        };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 104);
        assert_eq!(hex::encode(&buf[..16]), "5a010000000000005800000001000000"); // 90, len 88, v1
        assert_eq!(hex::encode(&buf[16..24]), "0800030062000200");
        // dword0: async CQ 3, ring size code 8 (128 entries); dword1 valid; dword2 async valid.
        assert_eq!(hex::encode(&buf[24..40]), "03000800000000800100000000000000");
        assert_eq!(hex::encode(&buf[96..104]), "0070402301000000");
        let (_, back) = decode_request::<MccCreateExt>(&buf).unwrap();
        assert_eq!(back, cmd);
        assert_eq!(back.context.entries(), 128);
        assert!(back.wants(1) && back.wants(17) && !back.wants(2) && !back.wants(40));
    }

    #[test]
    fn destroys_golden_bytes() {
        let buf = encode_request(&CqDestroy::new(0x102)).unwrap();
        assert_eq!(hex::encode(&buf), "3601000000000000040000000000000002010000");
        assert_eq!(encode_request(&EqDestroy::new(1)).unwrap()[0], 55);
        assert_eq!(encode_request(&MccDestroy::new(1)).unwrap()[0], 53);
        let (_, back) = decode_request::<CqDestroy>(&buf).unwrap();
        assert_eq!(back, CqDestroy::new(0x102));
    }

    #[test]
    fn page_lists_longer_than_their_slots_are_refused() {
        let cmd = EqCreate { context: EqContext::be2net(2), pages: vec![0; 9] };
        assert_eq!(encode_request(&cmd).unwrap_err().field, "pages");
    }
}
