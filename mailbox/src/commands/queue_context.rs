//! The context dwords of the queue-create commands and their page lists
//! (spec/be2net-driver.md §3.2: BTF `amap_eq_context`, `amap_cq_context_v2`,
//! `amap_mcc_context_v1`, bit positions converted to dword/bit; `phys_addr` page entries).

use crate::wire::{Reader, Wire, WireError, Writer};

/// Size of one ring page (`PAGE_SIZE` in the drivers; `page_size` 1 of CQ_CREATE).
pub const QUEUE_PAGE_LEN: u64 = 4096;
/// Entries of the smallest EQ or CQ: the `count` fields are log2(entries / 256).
const COUNT_BASE: u32 = 256;

/// Encodes `pages` as `{lo u32, hi u32}` entries and zero-fills the remaining of `slots`.
pub(crate) fn encode_pages(w: &mut Writer<'_>, pages: &[u64], slots: usize) -> Result<(), WireError> {
    if pages.len() > slots {
        return Err(WireError { field: "pages", offset: w.position(), needed: pages.len() * 8, available: slots * 8 });
    }
    for &page in pages {
        w.u32("page_lo", page as u32)?;
        w.u32("page_hi", (page >> 32) as u32)?;
    }
    w.zeros("pages", (slots - pages.len()) * 8)
}

/// Decodes `count` page entries (at most `slots`; only the ones in use are read, so a shorter
/// request form with fewer slots decodes when its pages fit).
pub(crate) fn decode_pages(r: &mut Reader<'_>, count: usize, slots: usize) -> Result<Vec<u64>, WireError> {
    if count > slots {
        return Err(WireError { field: "pages", offset: r.position(), needed: count * 8, available: slots * 8 });
    }
    let needed = count * 8;
    if r.remaining() < needed {
        return Err(WireError { field: "pages", offset: r.position(), needed, available: r.remaining() });
    }
    (0..count)
        .map(|_| {
            let lo = r.u32("page_lo")?;
            let hi = r.u32("page_hi")?;
            Ok((u64::from(hi) << 32) | u64::from(lo))
        })
        .collect()
}

/// Bits `hi..=lo` of `v`.
fn bits(v: u32, hi: u32, lo: u32) -> u32 {
    (v >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

/// `value` placed at bits `hi..=lo` (excess bits dropped).
fn field(value: u32, hi: u32, lo: u32) -> u32 {
    (value & ((1u32 << (hi - lo + 1)) - 1)) << lo
}

/// The EQ context (`amap_eq_context`, 16 bytes @20 of EQ_CREATE v2). The producer/consumer
/// indices, PD, solevent, stalled and phase fields no driver sets are not kept.
#[doc(alias = "amap_eq_context")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EqContext {
    /// dword0 bit 29: `valid`.
    pub valid: bool,
    /// dword0 bit 31: `size`; 0 = 4-byte entries, 1 = 16-byte entries.
    pub large_entries: bool,
    /// dword1 bits 28:26: `count` = log2(entries / 256).
    pub count: u8,
    /// dword1 bit 31: `armed` (never set by be2net or ocrdma).
    pub armed: bool,
    /// dword2 bits 22:13: `delaymult`, the interrupt delay multiplier.
    pub delay_multiplier: u16,
    /// dword2 bits 11:4: `func`.
    pub func: u8,
}

impl EqContext {
    /// be2net's EQ context: valid, 4-byte entries, `count`, no delay (`be_cmd_eq_create`).
    pub fn be2net(count: u8) -> Self {
        Self { valid: true, count, ..Self::default() }
    }
    /// Entries in the ring.
    pub fn entries(&self) -> u32 {
        COUNT_BASE << self.count
    }
    /// Bytes per entry.
    pub fn entry_len(&self) -> usize {
        if self.large_entries { 16 } else { 4 }
    }
}

impl Wire for EqContext {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("eq_context0", field(self.valid.into(), 29, 29) | field(self.large_entries.into(), 31, 31))?;
        w.u32("eq_context1", field(self.count.into(), 28, 26) | field(self.armed.into(), 31, 31))?;
        w.u32("eq_context2", field(self.delay_multiplier.into(), 22, 13) | field(self.func.into(), 11, 4))?;
        w.zeros("eq_context3", 4)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let dw0 = r.u32("eq_context0")?;
        let dw1 = r.u32("eq_context1")?;
        let dw2 = r.u32("eq_context2")?;
        r.skip("eq_context3", 4)?;
        Ok(Self {
            valid: bits(dw0, 29, 29) != 0,
            large_entries: bits(dw0, 31, 31) != 0,
            count: bits(dw1, 28, 26) as u8,
            armed: bits(dw1, 31, 31) != 0,
            delay_multiplier: bits(dw2, 22, 13) as u16,
            func: bits(dw2, 11, 4) as u8,
        })
    }
}

/// The CQ context, v2 (`amap_cq_context_v2`, 16 bytes @20 of CQ_CREATE v2).
#[doc(alias = "amap_cq_context_v2")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CqContext {
    /// dword0 bits 13:12: `coalescwm`, the coalescing watermark.
    pub coalesce_wm: u8,
    /// dword0 bit 14: `nodelay`.
    pub nodelay: bool,
    /// dword0 bits 28:27: `count` = log2(entries / 256).
    pub count: u8,
    /// dword0 bit 29: `valid`.
    pub valid: bool,
    /// dword0 bit 31: `eventable`: completions raise events on [`CqContext::eq_id`].
    pub eventable: bool,
    /// dword1 bits 15:0: `eqid`.
    pub eq_id: u16,
    /// dword1 bit 31: `armed` (never set by be2net or ocrdma).
    pub armed: bool,
    /// dword2, kept whole: ocrdma's `pdid_cqecnt` (CQE count in 15:0, PD in 31:16); 0 from
    /// be2net.
    pub dw2: u32,
}

impl CqContext {
    /// be2net's CQ context: valid, eventable on `eq_id` (`be_cmd_cq_create`).
    pub fn be2net(count: u8, eq_id: u16, nodelay: bool, coalesce_wm: u8) -> Self {
        Self { coalesce_wm, nodelay, count, valid: true, eventable: true, eq_id, armed: false, dw2: 0 }
    }
    /// Entries in the ring (16 bytes each).
    pub fn entries(&self) -> u32 {
        COUNT_BASE << self.count
    }
}

impl Wire for CqContext {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let dw0 = field(self.coalesce_wm.into(), 13, 12)
            | field(self.nodelay.into(), 14, 14)
            | field(self.count.into(), 28, 27)
            | field(self.valid.into(), 29, 29)
            | field(self.eventable.into(), 31, 31);
        w.u32("cq_context0", dw0)?;
        w.u32("cq_context1", u32::from(self.eq_id) | field(self.armed.into(), 31, 31))?;
        w.u32("cq_context2", self.dw2)?;
        w.zeros("cq_context3", 4)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let dw0 = r.u32("cq_context0")?;
        let dw1 = r.u32("cq_context1")?;
        let dw2 = r.u32("cq_context2")?;
        r.skip("cq_context3", 4)?;
        Ok(Self {
            coalesce_wm: bits(dw0, 13, 12) as u8,
            nodelay: bits(dw0, 14, 14) != 0,
            count: bits(dw0, 28, 27) as u8,
            valid: bits(dw0, 29, 29) != 0,
            eventable: bits(dw0, 31, 31) != 0,
            eq_id: dw1 as u16,
            armed: bits(dw1, 31, 31) != 0,
            dw2,
        })
    }
}

/// The MCC context, v1 (`amap_mcc_context_v1`, 16 bytes @24 of MCC_CREATE_EXT v1).
#[doc(alias = "amap_mcc_context_v1")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MccContext {
    /// dword0 bits 15:0: `async_cq_id`, where asynchronous events go.
    pub async_cq_id: u16,
    /// dword0 bits 19:16: `ring_size` = fls(entries) (16 is written as 0).
    pub ring_size: u8,
    /// dword1 bit 31: `valid`.
    pub valid: bool,
    /// dword2 bit 0: `async_cq_valid`.
    pub async_cq_valid: bool,
}

impl MccContext {
    /// be2net's MCC context: `entries` WRBs (a power of two), events to `async_cq_id`
    /// (`be_cmd_mccq_ext_create`).
    pub fn be2net(async_cq_id: u16, entries: u32) -> Self {
        let fls = u32::BITS - entries.leading_zeros();
        Self { async_cq_id, ring_size: (fls & 0xF) as u8, valid: true, async_cq_valid: true }
    }
    /// Entries in the ring: 2^(ring_size − 1), with code 0 standing for fls = 16.
    pub fn entries(&self) -> u32 {
        match self.ring_size {
            0 => 1 << 15,
            n => 1 << (n - 1),
        }
    }
}

impl Wire for MccContext {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("mcc_context0", u32::from(self.async_cq_id) | field(self.ring_size.into(), 19, 16))?;
        w.u32("mcc_context1", field(self.valid.into(), 31, 31))?;
        w.u32("mcc_context2", u32::from(self.async_cq_valid))?;
        w.zeros("mcc_context3", 4)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let dw0 = r.u32("mcc_context0")?;
        let dw1 = r.u32("mcc_context1")?;
        let dw2 = r.u32("mcc_context2")?;
        r.skip("mcc_context3", 4)?;
        Ok(Self {
            async_cq_id: dw0 as u16,
            ring_size: bits(dw0, 19, 16) as u8,
            valid: bits(dw1, 31, 31) != 0,
            async_cq_valid: dw2 & 1 != 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_sizes_follow_the_count_codes() {
        assert_eq!((EqContext::be2net(0).entries(), EqContext::be2net(4).entries()), (256, 4096));
        assert_eq!(CqContext::be2net(2, 0, false, 3).entries(), 1024);
        assert_eq!(MccContext::be2net(1, 128).ring_size, 8);
        assert_eq!(MccContext::be2net(1, 128).entries(), 128);
        assert_eq!(MccContext::be2net(1, 1 << 15).ring_size, 0, "fls 16 is written as 0");
        assert_eq!(MccContext { ring_size: 0, ..MccContext::default() }.entries(), 1 << 15);
        assert_eq!(
            (EqContext::default().entry_len(), EqContext { large_entries: true, ..Default::default() }.entry_len()),
            (4, 16)
        );
    }

    #[test]
    fn contexts_round_trip_every_field() {
        let eq =
            EqContext { valid: true, large_entries: true, count: 7, armed: true, delay_multiplier: 0x3FF, func: 0xAB };
        let cq = CqContext {
            coalesce_wm: 3,
            nodelay: true,
            count: 3,
            valid: true,
            eventable: true,
            eq_id: 0xFFFF,
            armed: true,
            dw2: 0x1234_5678,
        };
        let mcc = MccContext { async_cq_id: 0xBEEF, ring_size: 0xF, valid: true, async_cq_valid: true };
        let mut buf = [0u8; 16];
        eq.encode(&mut Writer::new(&mut buf)).unwrap();
        assert_eq!(EqContext::decode(&mut Reader::new(&buf)).unwrap(), eq);
        assert_eq!(hex::encode(buf), concat!("000000a0", "0000009c", "b0ea7f00", "00000000"));
        cq.encode(&mut Writer::new(&mut buf)).unwrap();
        assert_eq!(CqContext::decode(&mut Reader::new(&buf)).unwrap(), cq);
        mcc.encode(&mut Writer::new(&mut buf)).unwrap();
        assert_eq!(MccContext::decode(&mut Reader::new(&buf)).unwrap(), mcc);
        assert_eq!(hex::encode(buf), "efbe0f00000000800100000000000000");
    }
}
