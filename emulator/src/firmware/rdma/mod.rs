//! The RoCE engine's objects a driver creates in a function: protection domains, single or in
//! ranges the driver hands out itself, address handle tables, memory regions ([`mr`]) and queue
//! pairs ([`qp`]) (the rules in [`crate::assumptions`], "RoCE engine"). Firmware RAM: part of
//! [`Resources`](super::resources::Resources), so every reset drops them.

pub(crate) mod mr;
pub(crate) mod qp;

use std::collections::{BTreeMap, BTreeSet};

use crate::assumptions::{FIRST_PD_ID, MAX_AH_TABLES, RDMA_MAX_PD};
use mr::MrTable;
use qp::QpTable;

/// Where an address handle table lives: the page holding its page list (8-byte PBEs, hi dword
/// first, one per 4 KiB page of entries), how many pages, and the bytes per entry
/// (CREATE_AH_TBL; ocrdma_hw.c `ocrdma_mbx_create_ah_tbl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AhTable {
    pub(crate) page_list: u64,
    pub(crate) pages: u8,
    pub(crate) page_len: u64,
    pub(crate) entry_len: u16,
}

impl AhTable {
    /// Entries the table holds.
    pub(crate) fn entries(&self) -> u64 {
        u64::from(self.pages) * self.page_len / u64::from(self.entry_len.max(1))
    }
}

/// The function's PDs and tables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RdmaObjects {
    /// Single PDs in use.
    pds: BTreeSet<u16>,
    /// Ranges handed out: first id → count.
    ranges: BTreeMap<u16, u16>,
    /// Address handle tables by id, with where their entries are.
    ah_tables: BTreeMap<u16, AhTable>,
    /// Memory regions.
    pub(crate) mrs: MrTable,
    /// Queue pairs.
    pub(crate) qps: QpTable,
}

impl RdmaObjects {
    /// True when PD `id` is taken, alone or in a range.
    pub(crate) fn in_use(&self, id: u16) -> bool {
        self.pds.contains(&id) || self.ranges.iter().any(|(&start, &count)| (start..start + count).contains(&id))
    }

    /// Every PD id there is.
    fn ids() -> std::ops::Range<u16> {
        FIRST_PD_ID..FIRST_PD_ID + RDMA_MAX_PD
    }

    /// The lowest run of `count` free ids, taken as a range; `None` when none is long enough.
    pub(crate) fn alloc_range(&mut self, count: u16) -> Option<u16> {
        if count == 0 {
            return None;
        }
        let ids = Self::ids();
        let start = (ids.start..=ids.end.checked_sub(count)?)
            .find(|&start| (start..start + count).all(|id| !self.in_use(id)))?;
        self.ranges.insert(start, count);
        Some(start)
    }

    /// Gives back the range that starts at `start` with `count` ids; false when no such range
    /// was handed out.
    pub(crate) fn free_range(&mut self, start: u16, count: u16) -> bool {
        if self.ranges.get(&start) != Some(&count) {
            return false;
        }
        self.ranges.remove(&start);
        true
    }

    /// The lowest free id, taken as a single PD.
    pub(crate) fn alloc_one(&mut self) -> Option<u16> {
        let id = Self::ids().find(|&id| !self.in_use(id))?;
        self.pds.insert(id);
        Some(id)
    }

    /// Gives back single PD `id`; false when it is not one.
    pub(crate) fn free_one(&mut self, id: u16) -> bool {
        self.pds.remove(&id)
    }

    /// A new table's id, the lowest free from 1; `None` when the function has its tables.
    pub(crate) fn add_ah_table(&mut self, table: AhTable) -> Option<u16> {
        if self.ah_tables.len() >= MAX_AH_TABLES {
            return None;
        }
        let id = (1..=u16::MAX).find(|id| !self.ah_tables.contains_key(id))?;
        self.ah_tables.insert(id, table);
        Some(id)
    }

    /// The function's table (ocrdma creates exactly one).
    pub(crate) fn first_ah_table(&self) -> Option<&AhTable> {
        self.ah_tables.values().next()
    }

    /// Drops table `id`; false when there is none.
    pub(crate) fn remove_ah_table(&mut self, id: u16) -> bool {
        self.ah_tables.remove(&id).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_take_the_lowest_free_run_and_must_be_given_back_whole() {
        let mut r = RdmaObjects::default();
        assert_eq!(r.alloc_one(), Some(FIRST_PD_ID));
        assert_eq!(r.alloc_range(4), Some(FIRST_PD_ID + 1));
        assert_eq!(r.alloc_range(RDMA_MAX_PD), None, "not that many left");
        assert!(!r.free_range(FIRST_PD_ID + 1, 3), "a range goes back exactly as handed out");
        assert!(!r.free_range(FIRST_PD_ID, 1), "a single PD is not a range");
        assert!(r.free_range(FIRST_PD_ID + 1, 4));
        assert!(r.free_one(FIRST_PD_ID));
        assert!(!r.free_one(FIRST_PD_ID), "only once");
        assert_eq!(r.alloc_range(RDMA_MAX_PD), Some(FIRST_PD_ID), "every id, as ocrdma asks");
        assert_eq!(r.alloc_one(), None);
        assert_eq!(r.alloc_range(0), None);
    }

    #[test]
    fn one_ah_table_per_function() {
        let mut r = RdmaObjects::default();
        let t = AhTable { page_list: 0x1000, pages: 8, page_len: 4096, entry_len: 64 };
        assert_eq!(r.add_ah_table(t), Some(1));
        assert_eq!(r.add_ah_table(t), None);
        assert_eq!(r.first_ah_table().map(AhTable::entries), Some(512));
        assert!(!r.remove_ah_table(2));
        assert!(r.remove_ah_table(1));
        assert_eq!(r.add_ah_table(t), Some(1), "the id is reused");
    }
}
