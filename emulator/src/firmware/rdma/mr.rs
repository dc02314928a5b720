//! The memory-region table REGISTER_NSMR, REGISTER_NSMR_CONT and DEALLOC_LKEY keep: each
//! region's geometry, access and PD, its PBL page list as the commands gave it, and, once the
//! last command arrived, the page-buffer entries the device read from those pages; for a
//! fast-register region, what its last FR_MR set and whether it is valid (the rules in
//! [`crate::assumptions`], "RoCE engine": keys, limits, what is checked).

use std::collections::BTreeMap;

use oce_mailbox::commands::{MrAccess, PBE_LEN, RegisterNsmr};

use crate::assumptions::{FIRST_MR_INDEX, ROCE_LIMITS};
use crate::datapath::roce::{FastRegistration, RegionRefusal};

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
    /// The data pages' bus addresses, read from the PBL pages when the region completed (for a
    /// fast-register region, when its FR_MR ran).
    pub(crate) pbes: Vec<u64>,
    /// The key may be used: always for a region registered with its pages; for a
    /// fast-register region, from its FR_MR until it is invalidated.
    pub(crate) valid: bool,
    /// The key REGISTER_NSMR answered: DEALLOC_LKEY names it, whatever key byte FR_MR set
    /// since (ocrdma_verbs.c `ocrdma_dereg_mr` passes `hwmr.lkey`).
    pub(crate) registered_key: u32,
}

impl MemoryRegion {
    /// How many data pages the region spans: `ceil((fbo + len) / pbe_size)`.
    pub(crate) fn data_pages(&self) -> u64 {
        (self.first_byte_offset + self.total_len).div_ceil(self.pbe_size.max(1))
    }

    /// PBEs the region's PBL pages hold: what an FR_MR may list at most.
    pub(crate) fn pbe_capacity(&self) -> u64 {
        u64::from(self.num_pbl) * (self.pbl_size / PBE_LEN as u64)
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
        // A fast-register region gets its page size from FR_MR: ocrdma_alloc_mr leaves
        // `pbe_size` (and length, VA, access) zero.
        let geometry_ok = (req.pbe_size > 0 || req.fast_register) && req.pbl_size >= PBE_LEN as u64;
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
            valid: !req.fast_register,
            registered_key: 0,
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
        region.registered_key = region.key;
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

    /// Removes the region whose key, or whose key as REGISTER_NSMR gave it, is exactly `key`;
    /// false when there is none.
    pub(crate) fn remove(&mut self, key: u32) -> bool {
        let named = self.regions.get(&(key >> 8)).is_some_and(|r| r.key == key || r.registered_key == key);
        named && self.regions.remove(&(key >> 8)).is_some()
    }

    /// The region an FR_MR for a QP of PD `pd` may register as `reg` asks, found by the key's
    /// index: complete, fast-register, invalid, of that PD, with room in its PBL for the pages,
    /// pages that cover the length, and LOCAL_WR wherever REMOTE_WR is asked.
    pub(crate) fn fast_register_target(&self, pd: u16, reg: &FastRegistration) -> Result<&MemoryRegion, RegionRefusal> {
        let region = self.regions.get(&(reg.key >> 8)).filter(|r| r.complete).ok_or(RegionRefusal::NoRegion)?;
        if !region.fast_register {
            return Err(RegionRefusal::NotFastRegister);
        }
        if region.valid {
            return Err(RegionRefusal::StillValid);
        }
        if region.pd_id != pd {
            return Err(RegionRefusal::Pd);
        }
        let room = u64::from(reg.pages) * reg.page_len;
        let covered = reg.first_byte_offset.checked_add(reg.len).is_some_and(|end| end <= room);
        if u64::from(reg.pages) > region.pbe_capacity() || !covered {
            return Err(RegionRefusal::Geometry);
        }
        // ocrdma refuses the same for registered memory (`ocrdma_reg_user_mr`).
        if reg.access.remote_write && !reg.access.local_write {
            return Err(RegionRefusal::Access);
        }
        Ok(region)
    }

    /// Carries out FR_MR `reg` for a QP of PD `pd` with the `pbes` the device read from the
    /// region's PBL: the region takes the key, access and geometry, and is valid.
    pub(crate) fn fast_register(
        &mut self,
        pd: u16,
        reg: &FastRegistration,
        pbes: Vec<u64>,
    ) -> Result<(), RegionRefusal> {
        self.fast_register_target(pd, reg)?;
        let index = reg.key >> 8;
        let region = self.regions.get_mut(&index).ok_or(RegionRefusal::NoRegion)?;
        region.key = reg.key;
        region.access = reg.access;
        region.va = reg.va;
        region.total_len = reg.len;
        region.first_byte_offset = reg.first_byte_offset;
        region.pbe_size = reg.page_len;
        region.pbes = pbes;
        region.valid = true;
        // A reused index must not hand out the key byte the region last had.
        self.generations.insert(index, reg.key as u8);
        Ok(())
    }

    /// Invalidates the fast-register region with exactly `key` for a QP of PD `pd`. An invalid
    /// region stays invalid, and that is a success (see [`crate::assumptions`]).
    pub(crate) fn invalidate(&mut self, pd: u16, key: u32) -> Result<(), RegionRefusal> {
        let region = self.regions.get_mut(&(key >> 8)).filter(|r| r.key == key).ok_or(RegionRefusal::NoRegion)?;
        if !region.fast_register {
            return Err(RegionRefusal::NotFastRegister);
        }
        if region.pd_id != pd {
            return Err(RegionRefusal::Pd);
        }
        region.valid = false;
        Ok(())
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

    /// An FR region as ocrdma_alloc_mr registers it: PBL pages only, no page size, length,
    /// VA or access.
    fn fr(pd: u16, num_pbl: u16) -> RegisterNsmr {
        RegisterNsmr {
            fast_register: true,
            pd_id: pd,
            num_pbl,
            pbl_size: 4096,
            last: true,
            pbl: (0..u64::from(num_pbl)).map(|i| 0x20_0000 + i * 0x1000).collect(),
            ..RegisterNsmr::default()
        }
    }

    fn reg(key: u32, pages: u32) -> FastRegistration {
        FastRegistration {
            key,
            access: MrAccess { local_write: true, remote_write: true, ..MrAccess::default() },
            va: 0x1_0000_0100,
            len: u64::from(pages) * 4096 - 0x100,
            first_byte_offset: 0x100,
            page_len: 4096,
            pages,
        }
    }

    #[test]
    fn a_fast_register_region_is_invalid_until_fr_mr_and_takes_the_wqes_key_byte() {
        let mut t = MrTable::default();
        let key = t.register(&fr(3, 1)).unwrap();
        assert!(!t.get(key).unwrap().valid, "no pages yet");
        assert_eq!(t.get(key).unwrap().pbe_capacity(), 512);
        let new_key = (key & !0xFF) | 0x42;
        t.fast_register(3, &reg(new_key, 2), vec![0x9000, 0xA000]).unwrap();
        assert!(t.get(key).is_none(), "the old key byte names nothing now");
        let r = t.get(new_key).unwrap();
        assert!(r.valid && r.access.remote_write && !r.access.remote_read);
        assert_eq!((r.va, r.total_len, r.first_byte_offset, r.pbe_size), (0x1_0000_0100, 8192 - 0x100, 0x100, 4096));
        assert_eq!(r.pbes, [0x9000, 0xA000]);
        assert_eq!(t.fast_register(3, &reg(new_key, 2), vec![]), Err(RegionRefusal::StillValid));
        // Invalidation needs the current key and the PD; twice is fine.
        assert_eq!(t.invalidate(3, key), Err(RegionRefusal::NoRegion));
        assert_eq!(t.invalidate(4, new_key), Err(RegionRefusal::Pd));
        assert_eq!(t.invalidate(3, new_key), Ok(()));
        assert!(!t.get(new_key).unwrap().valid);
        assert_eq!(t.invalidate(3, new_key), Ok(()), "an invalid region stays invalid");
        t.fast_register(3, &reg(new_key + 1, 1), vec![0xB000]).unwrap();
        // DEALLOC_LKEY names the key REGISTER_NSMR gave; the index then gets a fresh byte.
        assert!(t.remove(key));
        let again = t.register(&fr(3, 1)).unwrap();
        assert_eq!(again >> 8, key >> 8);
        assert_ne!(again & 0xFF, (new_key + 1) & 0xFF, "not the byte FR_MR last set");
    }

    #[test]
    fn fr_mr_checks_region_kind_pd_geometry_and_access() {
        let mut t = MrTable::default();
        let plain = t.register(&req(1, 1, true)).unwrap();
        assert_eq!(t.fast_register(1, &reg(plain, 1), vec![0]), Err(RegionRefusal::NotFastRegister));
        assert_eq!(t.invalidate(1, plain), Err(RegionRefusal::NotFastRegister));
        assert_eq!(t.fast_register(1, &reg(0x7777_7701, 1), vec![0]), Err(RegionRefusal::NoRegion));
        let key = t.register(&fr(1, 1)).unwrap();
        assert_eq!(t.fast_register(2, &reg(key, 1), vec![0]), Err(RegionRefusal::Pd));
        assert_eq!(t.fast_register(1, &reg(key, 513), vec![0]), Err(RegionRefusal::Geometry), "512 PBEs per page");
        let mut long = reg(key, 1);
        long.len += 0x101;
        assert_eq!(t.fast_register(1, &long, vec![0]), Err(RegionRefusal::Geometry), "past the pages");
        let mut wr_only = reg(key, 1);
        wr_only.access.local_write = false;
        assert_eq!(t.fast_register(1, &wr_only, vec![0]), Err(RegionRefusal::Access));
        assert!(!t.get(key).unwrap().valid, "every refusal leaves it invalid");
        let mut open = fr(1, 30);
        open.pbl.truncate(22);
        open.last = false;
        let key = t.register(&open).unwrap();
        assert_eq!(t.fast_register(1, &reg(key, 1), vec![0]), Err(RegionRefusal::NoRegion), "PBL incomplete");
    }
}
