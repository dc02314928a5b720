//! The queue doorbells of the doorbell BAR: each a newtype over the dword the host writes, with a
//! constructor for the host side and pure accessors for the device side (style.md rule 6).
//! Offsets and bits: spec/protocol.md §2.2–§2.3, spec/be2net-driver.md §3.3 (be_hw.h, and
//! `be_eq_notify`, `be_cq_notify`, `be_rxq_notify`, `be_txq_notify`, `be_mcc_notify`).
//!
//! | offset | register | written by |
//! |---|---|---|
//! | 0x060 (or TX_CREATE's `db_offset`) | [`TxDoorbell`] | `be_txq_notify` |
//! | 0x100 | [`RqDoorbell`] | `be_rxq_notify` |
//! | 0x120 | [`EqDoorbell`] (bit 10 set) or [`CqDoorbell`] (bit 10 clear): [`EqCqDoorbell`] | `be_eq_notify`, `be_cq_notify` |
//! | 0x140 | [`MccDoorbell`] | `be_mcc_notify` |
//! | PD page + 0x1C0 | [`RoceSqDoorbell`] | ocrdma `ocrdma_ring_sq_db` |
//! | PD page + 0x100 | [`RoceRqDoorbell`] | ocrdma `ocrdma_ring_rq_db` |
//! | PD page + 0x120 | [`CqDoorbell`] with [`CqDoorbell::SOLICITED`] | ocrdma `ocrdma_ring_cq_db` |

/// The shared EQ/CQ doorbell dword at 0x120: bit 10 tells which queue kind it rings.
#[doc(alias = "DB_EQ_OFFSET")]
#[doc(alias = "DB_CQ_OFFSET")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EqCqDoorbell {
    /// An event-queue doorbell (bit 10 = 1).
    Eq(EqDoorbell),
    /// A completion-queue doorbell (bit 10 = 0).
    Cq(CqDoorbell),
}

impl EqCqDoorbell {
    /// Offset in the doorbell BAR.
    pub const OFFSET: u32 = 0x120;

    /// Decodes a written dword.
    pub fn decode(value: u32) -> Self {
        if value & EqDoorbell::EVENT != 0 { Self::Eq(EqDoorbell(value)) } else { Self::Cq(CqDoorbell(value)) }
    }
}

/// The EQ doorbell (0x120 with bit 10 set), spec/protocol.md §2.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EqDoorbell(pub u32);

impl EqDoorbell {
    /// Bits 8:0: EQ id bits 8:0 (`DB_EQ_RING_ID_MASK`).
    pub const ID_LOW_MASK: u32 = 0x1FF;
    /// EQ id bits 13:9 (`DB_EQ_RING_ID_EXT_MASK`), written to bits 15:11.
    pub const ID_EXT_MASK: u32 = 0x3E00;
    /// How far the id's extension bits move up (`DB_EQ_RING_ID_EXT_MASK_SHIFT`).
    pub const ID_EXT_SHIFT: u32 = 2;
    /// Bit 9: clear the interrupt (`DB_EQ_CLR_SHIFT`).
    pub const CLEAR: u32 = 1 << 9;
    /// Bit 10: this is an EQ doorbell (`DB_EQ_EVNT_SHIFT`).
    pub const EVENT: u32 = 1 << 10;
    /// Bits 28:16: entries popped (`DB_EQ_NUM_POPPED_SHIFT`; 13 bits).
    pub const POPPED_SHIFT: u32 = 16;
    /// Mask of the popped count after shifting.
    pub const POPPED_MASK: u32 = 0x1FFF;
    /// Bit 29: re-arm (`DB_EQ_REARM_SHIFT`).
    pub const REARM: u32 = 1 << 29;
    /// Bits 31:30: Skyhawk's R2I delay encoding (`DB_EQ_R2I_DLY_SHIFT`).
    pub const R2I_DELAY_SHIFT: u32 = 30;
    /// Largest EQ id the doorbell can name (14 bits).
    pub const MAX_ID: u16 = 0x3FFF;

    const ID: SplitId = SplitId { low: Self::ID_LOW_MASK, ext: Self::ID_EXT_MASK, shift: Self::ID_EXT_SHIFT };

    /// The value `be_eq_notify` writes for EQ `id`.
    pub fn new(id: u16, rearm: bool, clear: bool, popped: u16, r2i_delay: u8) -> Self {
        let mut v = Self::ID.encode(id) | Self::EVENT | notify_bits(popped, rearm);
        v |= (u32::from(r2i_delay) & 0x3) << Self::R2I_DELAY_SHIFT;
        if clear {
            v |= Self::CLEAR;
        }
        Self(v)
    }

    /// The EQ id: bits 8:0, plus bits 15:11 as id bits 13:9.
    pub fn id(self) -> u16 {
        Self::ID.decode(self.0)
    }
    /// Entries the host consumed.
    pub fn popped(self) -> u16 {
        popped_of(self.0)
    }
    /// True when the host re-arms the EQ.
    pub fn rearm(self) -> bool {
        self.0 & Self::REARM != 0
    }
    /// True when the host clears the interrupt.
    pub fn clear(self) -> bool {
        self.0 & Self::CLEAR != 0
    }
    /// The R2I delay code (0 none, 1 = 160 µs, 2 = 96 µs, 3 = 48 µs).
    pub fn r2i_delay(self) -> u8 {
        (self.0 >> Self::R2I_DELAY_SHIFT) as u8
    }
}

/// The CQ doorbell (0x120 with bit 10 clear), spec/protocol.md §2.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CqDoorbell(pub u32);

impl CqDoorbell {
    /// Bits 9:0: CQ id bits 9:0 (`DB_CQ_RING_ID_MASK`).
    pub const ID_LOW_MASK: u32 = 0x3FF;
    /// CQ id bits 14:10 (`DB_CQ_RING_ID_EXT_MASK`), written to bits 15:11.
    pub const ID_EXT_MASK: u32 = 0x7C00;
    /// How far the id's extension bits move up (`DB_CQ_RING_ID_EXT_MASK_SHIFT`).
    pub const ID_EXT_SHIFT: u32 = 1;
    /// Bits 28:16: entries popped (`DB_CQ_NUM_POPPED_SHIFT`).
    pub const POPPED_SHIFT: u32 = 16;
    /// Mask of the popped count after shifting.
    pub const POPPED_MASK: u32 = 0x1FFF;
    /// Bit 29: re-arm (`DB_CQ_REARM_SHIFT`).
    pub const REARM: u32 = 1 << 29;
    /// Bit 31: arm for solicited events only (ocrdma's `OCRDMA_DB_CQ_SOLICIT_SHIFT`).
    pub const SOLICITED: u32 = 1 << 31;
    /// Largest CQ id the doorbell can name (15 bits).
    pub const MAX_ID: u16 = 0x7FFF;

    const ID: SplitId = SplitId { low: Self::ID_LOW_MASK, ext: Self::ID_EXT_MASK, shift: Self::ID_EXT_SHIFT };

    /// The value `be_cq_notify` writes for CQ `id`.
    pub fn new(id: u16, rearm: bool, popped: u16) -> Self {
        Self(Self::ID.encode(id) | notify_bits(popped, rearm))
    }

    /// The CQ id: bits 9:0, plus bits 15:11 as id bits 14:10.
    pub fn id(self) -> u16 {
        Self::ID.decode(self.0)
    }
    /// Entries the host consumed.
    pub fn popped(self) -> u16 {
        popped_of(self.0)
    }
    /// True when the host re-arms the CQ.
    pub fn rearm(self) -> bool {
        self.0 & Self::REARM != 0
    }
    /// True when the re-arm is for solicited completions (and errors) only.
    pub fn solicited(self) -> bool {
        self.0 & Self::SOLICITED != 0
    }
}

/// An id split in two fields: its low bits in place, the bits of `ext` moved up by `shift`.
#[derive(Debug, Clone, Copy)]
struct SplitId {
    low: u32,
    ext: u32,
    shift: u32,
}

impl SplitId {
    fn encode(self, id: u16) -> u32 {
        let id = u32::from(id);
        (id & self.low) | ((id & self.ext) << self.shift)
    }
    fn decode(self, v: u32) -> u16 {
        ((v & self.low) | ((v >> self.shift) & self.ext)) as u16
    }
}

/// The popped count (bits 28:16) and REARM (bit 29), alike in the EQ and CQ doorbells.
fn notify_bits(popped: u16, rearm: bool) -> u32 {
    let v = (u32::from(popped) & EqDoorbell::POPPED_MASK) << EqDoorbell::POPPED_SHIFT;
    if rearm { v | EqDoorbell::REARM } else { v }
}

/// The popped count of an EQ or CQ doorbell.
fn popped_of(v: u32) -> u16 {
    ((v >> EqDoorbell::POPPED_SHIFT) & EqDoorbell::POPPED_MASK) as u16
}

/// Declares a doorbell of the shape "ring id in the low bits, a count in a higher field".
macro_rules! counting_doorbell {
    (
        $(#[$meta:meta])*
        $name:ident { offset: $offset:expr, id_mask: $id_mask:expr, count_shift: $shift:expr, count_mask: $count_mask:expr }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name(pub u32);

        impl $name {
            /// Offset in the doorbell BAR.
            pub const OFFSET: u32 = $offset;
            /// Mask of the ring id (low bits).
            pub const ID_MASK: u32 = $id_mask;
            /// Where the count field starts.
            pub const COUNT_SHIFT: u32 = $shift;
            /// Mask of the count after shifting.
            pub const COUNT_MASK: u32 = $count_mask;

            /// The value the host writes to post `count` entries on ring `id`.
            pub fn new(id: u16, count: u16) -> Self {
                Self((u32::from(id) & Self::ID_MASK) | ((u32::from(count) & Self::COUNT_MASK) << Self::COUNT_SHIFT))
            }
            /// The ring id.
            pub fn id(self) -> u16 {
                (self.0 & Self::ID_MASK) as u16
            }
            /// How many entries the host posted.
            pub fn count(self) -> u16 {
                ((self.0 >> Self::COUNT_SHIFT) & Self::COUNT_MASK) as u16
            }
        }
    };
}

counting_doorbell! {
    /// The MCC queue doorbell: bits 10:0 ring id, bits 29:16 WRBs posted (be2net always posts
    /// 1), spec/protocol.md §2.3.
    #[doc(alias = "DB_MCCQ_OFFSET")]
    MccDoorbell { offset: 0x140, id_mask: 0x7FF, count_shift: 16, count_mask: 0x3FFF }
}

counting_doorbell! {
    /// The RX queue doorbell: bits 9:0 ring id, bits 31:24 buffers posted (at most 255 per
    /// write), spec/protocol.md §2.3.
    #[doc(alias = "DB_RQ_OFFSET")]
    RqDoorbell { offset: 0x100, id_mask: 0x3FF, count_shift: 24, count_mask: 0xFF }
}

counting_doorbell! {
    /// The RoCE SQ doorbell on a PD's doorbell page (page `pd_id` of the BAR; the kernel's QPs
    /// use their PD's page too): bits 15:0 the SQ's doorbell id, bits 31:16 WQEs posted
    /// (ocrdma and libocrdma always post 1) (ocrdma_sli.h `OCRDMA_DB_SQ_OFFSET`,
    /// `OCRDMA_DB_SQ_SHIFT`; spec/datapath.md §2.2).
    #[doc(alias = "OCRDMA_DB_SQ_OFFSET")]
    RoceSqDoorbell { offset: 0x1C0, id_mask: 0xFFFF, count_shift: 16, count_mask: 0xFFFF }
}

counting_doorbell! {
    /// The RoCE RQ doorbell on a PD's doorbell page: bits 15:0 the RQ's doorbell id, bits
    /// 31:24 RQEs posted (`OCRDMA_DB_RQ_OFFSET`, `OCRDMA_DB_RQ_SHIFT`; spec/datapath.md §2.2).
    /// On page 0 the same offset is be2net's Ethernet [`RqDoorbell`].
    #[doc(alias = "OCRDMA_DB_RQ_OFFSET")]
    RoceRqDoorbell { offset: 0x100, id_mask: 0xFFFF, count_shift: 24, count_mask: 0xFF }
}

/// Bytes per doorbell page: a PD's doorbells are at `pd_id × 4096` in the doorbell BAR
/// (ocrdma `ocrdma_get_db_addr`, be2net's `db_page_size` on Skyhawk; spec/datapath.md §2.2).
pub const DOORBELL_PAGE_LEN: u32 = 4096;

counting_doorbell! {
    /// The TX doorbell: bits 10:0 ring id, bits 29:16 WRBs posted, spec/protocol.md §2.3. The
    /// offset is BEx's and Lancer's fixed one; on Skyhawk TX_CREATE v2 answers the offset to use.
    #[doc(alias = "DB_TXULP1_OFFSET")]
    TxDoorbell { offset: 0x060, id_mask: 0x7FF, count_shift: 16, count_mask: 0x3FFF }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq_doorbell_golden_values() {
        // EQ 0x2A5 (bits 13:9 = 0x01, bits 8:0 = 0xA5), clear, 3 popped, re-arm, R2I code 2.
        let db = EqDoorbell::new(0x2A5, true, true, 3, 2);
        assert_eq!(db.0, 0x2A5 & 0x1FF | (0x200 << 2) | (1 << 9) | (1 << 10) | (3 << 16) | (1 << 29) | (2 << 30));
        assert_eq!(db.0, 0xA003_0EA5);
        let EqCqDoorbell::Eq(back) = EqCqDoorbell::decode(db.0) else { panic!("not an EQ doorbell") };
        assert_eq!((back.id(), back.rearm(), back.clear(), back.popped(), back.r2i_delay()), (0x2A5, true, true, 3, 2));
        // The largest id survives the split.
        assert_eq!(EqDoorbell::new(EqDoorbell::MAX_ID, false, false, 0, 0).id(), EqDoorbell::MAX_ID);
    }

    #[test]
    fn cq_doorbell_golden_values() {
        // CQ 0x1405 (bits 14:10 = 0x05, bits 9:0 = 0x005), 17 popped, re-arm.
        let db = CqDoorbell::new(0x1405, true, 17);
        assert_eq!(db.0, 0x005 | (0x1400 << 1) | (17 << 16) | (1 << 29));
        assert_eq!(db.0, 0x2011_2805);
        assert_eq!(EqCqDoorbell::decode(db.0), EqCqDoorbell::Cq(db));
        assert_eq!((db.id(), db.popped(), db.rearm()), (0x1405, 17, true));
        assert_eq!(CqDoorbell::new(CqDoorbell::MAX_ID, false, 0).id(), CqDoorbell::MAX_ID);
        // be_cq_notify's disarm with nothing popped is the bare id.
        assert_eq!(CqDoorbell::new(7, false, 0).0, 7);
    }

    #[test]
    fn roce_doorbells_golden_values() {
        // ocrdma_ring_sq_db for dbid 2: 2 | 1 << 16; ocrdma_ring_rq_db: 2 | 1 << 24.
        assert_eq!(RoceSqDoorbell::new(2, 1).0, 0x0001_0002);
        assert_eq!(RoceRqDoorbell::new(2, 1).0, 0x0100_0002);
        assert_eq!((RoceRqDoorbell(0x0300_0405).id(), RoceRqDoorbell(0x0300_0405).count()), (0x405, 3));
        // ocrdma_ring_cq_db: CQ 5, armed solicited-only, 2 popped: 5 | 2 << 16 | 1 << 29 | 1 << 31.
        let db = CqDoorbell(0xA002_0005);
        assert_eq!((db.id(), db.popped(), db.rearm(), db.solicited()), (5, 2, true, true));
        assert!(!CqDoorbell::new(5, true, 2).solicited());
    }

    #[test]
    fn counting_doorbells_golden_values() {
        assert_eq!(MccDoorbell::new(5, 1).0, 0x0001_0005);
        assert_eq!((MccDoorbell(0x0001_0005).id(), MccDoorbell(0x0001_0005).count()), (5, 1));
        assert_eq!(RqDoorbell::new(0x3FF, 255).0, 0xFF00_03FF);
        assert_eq!((RqDoorbell(0xFF00_03FF).id(), RqDoorbell(0xFF00_03FF).count()), (0x3FF, 255));
        assert_eq!(TxDoorbell::new(0x7FF, 0x3FFF).0, 0x3FFF_07FF);
        assert_eq!(TxDoorbell(0x0002_0003).count(), 2);
        assert_eq!((MccDoorbell::OFFSET, RqDoorbell::OFFSET, TxDoorbell::OFFSET), (0x140, 0x100, 0x60));
    }
}
