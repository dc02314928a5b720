//! The memory-region table REGISTER_NSMR, REGISTER_NSMR_CONT and DEALLOC_LKEY keep: each
//! region's geometry, access and PD, its PBL page list as the commands gave it, and, once the
//! last command arrived, the page-buffer entries the device read from those pages (the rules in
//! [`crate::assumptions`], "RoCE engine": keys, limits, what is checked).

use std::collections::BTreeMap;

use oce_mailbox::commands::{MrAccess, PBE_LEN, RegisterNsmr};

use crate::assumptions::{FIRST_MR_INDEX, ROCE_LIMITS};

/// One registered (or registering) region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemoryRegion {
    /// Its key: index in bits 31:8, generation in 7:0.
    pub(crate) key: u32,
    pub(crate) pd_id: u16,
    /// A fast-register MR: its pages arrive later, in an FR_MR WQE.
    pub(crate) fast_register: bool,
    pub(crate) access: MrAccess,
    pub(crate) va: u64,
    pub(crate) total_len: u64,
    pub(crate) first_byte_offset: u64,
    /// Bytes per data page.
    pub(crate) pbe_size: u64,
    /// Bytes per PBL page.
    pub(crate) pbl_size: u64,
    /// PBL pages the region has in all.
    pub(crate) num_pbl: u16,
    /// PBL page addresses received so far.
    pub(crate) pbl: Vec<u64>,
    /// The last command (REGISTER_NSMR or _CONT with `last`) arrived.
    pub(crate) complete: bool,
    /// The data pages' bus addresses, read from the PBL pages when the region completed.
    pub(crate) pbes: Vec<u64>,
}

impl MemoryRegion {
    /// How many data pages the region spans: `ceil((fbo + len) / pbe_size)`.
    pub(crate) fn data_pages(&self) -> u64 {
        (self.first_byte_offset + self.total_len).div_ceil(self.pbe_size.max(1))
    }

    /// Where PBE `n` sits in host memory: its PBL page and the offset in it.
    pub(crate) fn pbe_address(&self, n: u64) -> Option<u64> {
        let per_page = self.pbl_size / PBE_LEN as u64;
        let page = *self.pbl.get(usize::try_from(n / per_page.max(1)).ok()?)?;
        Some(page + (n % per_page.max(1)) * PBE_LEN as u64)
    }
}

/// Why a registration command is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MrRefusal {
    /// A field is out of range or inconsistent (ILLEGAL_FIELD).
    Field,
    /// The table is full (INSUFFICIENT_RESOURCES).
    Full,
}

/// Every region of the function, by index.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct MrTable {
    regions: BTreeMap<u32, MemoryRegion>,
    /// The generation byte each index last had, so a reused index gets a different key.
    generations: BTreeMap<u32, u8>,
}

impl MrTable {
    /// Opens a region from REGISTER_NSMR; its key.
    pub(crate) fn register(&mut self, req: &RegisterNsmr) -> Result<u32, MrRefusal> {
        let geometry_ok = req.pbe_size > 0 && req.pbl_size >= PBE_LEN as u64;
        let pbl_ok =
            req.pbl.len() <= usize::from(req.num_pbl) && (!req.last || req.pbl.len() == usize::from(req.num_pbl));
        if !geometry_ok || !pbl_ok {
            return Err(MrRefusal::Field);
        }
        let mut region = MemoryRegion {
            key: 0,
            pd_id: req.pd_id,
            fast_register: req.fast_register,
            access: req.access,
            va: req.va,
            total_len: req.total_len,
            first_byte_offset: req.first_byte_offset,
            pbe_size: req.pbe_size,
            pbl_size: req.pbl_size,
            num_pbl: req.num_pbl,
            pbl: req.pbl.clone(),
            complete: req.last,
            pbes: Vec::new(),
        };
        let room = u64::from(req.num_pbl) * (req.pbl_size / PBE_LEN as u64);
        if !req.fast_register && region.data_pages() > room {
            return Err(MrRefusal::Field);
        }
        let last = FIRST_MR_INDEX + ROCE_LIMITS.max_mr - 1;
        let index = (FIRST_MR_INDEX..=last).find(|i| !self.regions.contains_key(i)).ok_or(MrRefusal::Full)?;
        let generation = self.generations.entry(index).or_insert(0);
        *generation = generation.wrapping_add(1);
        region.key = (index << 8) | u32::from(*generation);
        self.regions.insert(index, region);
        Ok((index << 8) | u32::from(*generation))
    }

    /// Adds REGISTER_NSMR_CONT's PBL addresses to the open region `key`; the region after it.
    pub(crate) fn extend(
        &mut self,
        key: u32,
        offset: u16,
        pbl: &[u64],
        last: bool,
    ) -> Result<&MemoryRegion, MrRefusal> {
        let region =
            self.regions.get_mut(&(key >> 8)).filter(|r| r.key == key && !r.complete).ok_or(MrRefusal::Field)?;
        let total = region.pbl.len() + pbl.len();
        let fits = usize::from(offset) == region.pbl.len() && total <= usize::from(region.num_pbl);
        if !fits || (last && total != usize::from(region.num_pbl)) {
            return Err(MrRefusal::Field);
        }
        region.pbl.extend_from_slice(pbl);
        region.complete = last;
        Ok(region)
    }

    /// The region with exactly `key`.
    pub(crate) fn get(&self, key: u32) -> Option<&MemoryRegion> {
        self.regions.get(&(key >> 8)).filter(|r| r.key == key)
    }

    /// Stores the PBEs the device read for region `key`.
    pub(crate) fn set_pbes(&mut self, key: u32, pbes: Vec<u64>) {
        if let Some(region) = self.regions.get_mut(&(key >> 8)).filter(|r| r.key == key) {
            region.pbes = pbes;
        }
    }

    /// Removes the region with exactly `key`; false when there is none.
    pub(crate) fn remove(&mut self, key: u32) -> bool {
        if self.get(key).is_none() {
            return false;
        }
        self.regions.remove(&(key >> 8)).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(num_pbl: u16, carried: usize, last: bool) -> RegisterNsmr {
        RegisterNsmr {
            pd_id: 1,
            num_pbl,
            pbe_size: 4096,
            pbl_size: 4096,
            last,
            total_len: 4096 * 512 * u64::from(num_pbl),
            pbl: (0..carried as u64).map(|i| 0x10_0000 + i * 0x1000).collect(),
            ..RegisterNsmr::default()
        }
    }

    #[test]
    fn keys_carry_index_and_generation_and_change_on_reuse() {
        let mut t = MrTable::default();
        let key = t.register(&req(1, 1, true)).unwrap();
        assert_eq!(key, (FIRST_MR_INDEX << 8) | 1);
        assert!(t.remove(key));
        assert!(!t.remove(key), "only once");
        let again = t.register(&req(1, 1, true)).unwrap();
        assert_eq!(again >> 8, key >> 8, "the index is reused");
        assert_ne!(again, key, "the key is not");
        assert!(t.get(key).is_none(), "a stale key names nothing");
    }

    #[test]
    fn continuations_must_follow_in_order_and_end_complete() {
        let mut t = MrTable::default();
        let key = t.register(&req(30, 22, false)).unwrap();
        assert!(!t.get(key).unwrap().complete);
        assert_eq!(t.extend(key, 21, &[0; 8], true).unwrap_err(), MrRefusal::Field, "offset must be 22");
        assert_eq!(t.extend(key, 22, &[0; 7], true).unwrap_err(), MrRefusal::Field, "30 promised");
        let region = t.extend(key, 22, &[0x9000; 8], true).unwrap();
        assert!(region.complete && region.pbl.len() == 30);
        assert_eq!(t.extend(key, 30, &[], true).unwrap_err(), MrRefusal::Field, "already complete");
    }

    #[test]
    fn inconsistent_geometry_is_refused() {
        let mut t = MrTable::default();
        assert_eq!(t.register(&req(30, 22, true)).unwrap_err(), MrRefusal::Field, "last with 8 missing");
        let mut big = req(1, 1, true);
        big.total_len += 1;
        assert_eq!(t.register(&big).unwrap_err(), MrRefusal::Field, "513 pages in one PBL page of 512");
        let mut r = req(1, 1, true);
        r.pbe_size = 0;
        assert_eq!(t.register(&r).unwrap_err(), MrRefusal::Field);
        let r = req(2, 2, true);
        let key = MrTable::default().register(&r).unwrap();
        let mut t = MrTable::default();
        t.register(&r).unwrap();
        let region = t.get(key).unwrap();
        assert_eq!(region.pbe_address(511), Some(0x10_0000 + 511 * 8));
        assert_eq!(region.pbe_address(512), Some(0x10_1000), "the second PBL page");
        assert_eq!(region.pbe_address(1024), None);
    }
}
