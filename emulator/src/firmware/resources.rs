//! What a driver has created in the function, as the firmware keeps it: the queues (their rings
//! in host memory and the device-side indices), the interfaces with their MAC, multicast and
//! VLAN filters, the RoCE engine's objects ([`super::rdma`]), and the function's settings (host
//! interrupts, flow control, logical link).
//!
//! Everything here lives in firmware RAM: nothing is saved, a FUNCTION_RESET, a function-level
//! reset, a chip reset and a power cycle all start from [`Resources::default`]
//! (spec/protocol.md §5.4). The handlers (`handlers::queues`, `handlers::eth`,
//! `handlers::interface`) fill it; the device's queue engine (`crate::device::queues`) walks
//! the rings it describes.

use std::collections::BTreeMap;

use oce_mailbox::commands::{FlowControl, IfFlags, QUEUE_PAGE_LEN};
use oce_mailbox::wrb::COMPLETION_LEN;

use super::rdma::RdmaObjects;
use crate::assumptions::{DEFAULT_FLOW_CONTROL, FIRST_QUEUE_ID};

/// A ring in host memory: the bus address of each 4 KiB page, the number of entries and their
/// size. The host allocates one coherent buffer, but the device follows the page list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ring {
    pub(crate) pages: Vec<u64>,
    pub(crate) entries: u32,
    pub(crate) entry_len: u32,
}

impl Ring {
    /// A ring of `entries` entries of `entry_len` bytes in `pages`; `None` when the pages do not
    /// hold it, or it has no entries.
    pub(crate) fn new(pages: Vec<u64>, entries: u32, entry_len: u32) -> Option<Self> {
        let bytes = u64::from(entries) * u64::from(entry_len);
        let room = pages.len() as u64 * QUEUE_PAGE_LEN;
        (entries > 0 && entry_len > 0 && bytes <= room && QUEUE_PAGE_LEN.is_multiple_of(u64::from(entry_len)))
            .then_some(Self { pages, entries, entry_len })
    }

    /// The bus address of entry `index` (taken modulo the ring's size).
    pub(crate) fn entry(&self, index: u32) -> u64 {
        let off = u64::from(index % self.entries) * u64::from(self.entry_len);
        let page = (off / QUEUE_PAGE_LEN) as usize;
        self.pages.get(page).copied().unwrap_or(0) + off % QUEUE_PAGE_LEN
    }

    /// `index + n`, modulo the ring's size.
    pub(crate) fn advance(&self, index: u32, n: u32) -> u32 {
        ((u64::from(index) + u64::from(n)) % u64::from(self.entries)) as u32
    }
}

/// An event queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventQueue {
    pub(crate) ring: Ring,
    /// The MSI-X table entry the EQ interrupts on.
    pub(crate) msix_idx: u16,
    /// Where the next entry goes.
    pub(crate) producer: u32,
    /// Entries posted that the host has not reported popped.
    pub(crate) outstanding: u32,
    /// The next entry fires the interrupt.
    pub(crate) armed: bool,
    /// The EQ's INTx source is active (cleared by a doorbell with CLR).
    pub(crate) asserted: bool,
    /// The interrupt delay multiplier (EQ_CREATE, MODIFY_EQ_DELAY).
    pub(crate) delay_multiplier: u32,
}

/// A completion queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompletionQueue {
    pub(crate) ring: Ring,
    /// The EQ that hears of new entries (eventable CQs only).
    pub(crate) eq: Option<u16>,
    pub(crate) producer: u32,
    /// Entries written that the host has not reported popped (at most the ring's size).
    pub(crate) outstanding: u32,
    /// The next entry posts an event to [`CompletionQueue::eq`].
    pub(crate) armed: bool,
}

/// A completion the MCC engine holds back until `due` (a `slow` or `slow-flash` fault); the
/// ring stops behind it, so completions stay in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeldCompletion {
    pub(crate) bytes: [u8; COMPLETION_LEN],
    pub(crate) due: std::time::Instant,
    /// When the command ran.
    pub(crate) since: std::time::Instant,
    /// The command's (subsystem, opcode).
    pub(crate) command: Option<(u8, u8)>,
}

/// An MCC queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MccQueue {
    pub(crate) ring: Ring,
    /// Where command completions go.
    pub(crate) cq: u16,
    /// Where asynchronous events go, if anywhere.
    pub(crate) async_cq: Option<u16>,
    /// Bit n: post events of code n.
    pub(crate) async_events: u32,
    /// The next WRB to run.
    pub(crate) consumer: u32,
    /// WRBs posted and not yet run.
    pub(crate) posted: u32,
    pub(crate) held: Option<HeldCompletion>,
}

impl MccQueue {
    /// True when the MCC wants asynchronous events of `code`.
    pub(crate) fn wants(&self, code: u8) -> bool {
        self.async_cq.is_some() && code < 32 && self.async_events & (1 << code) != 0
    }
}

/// An Ethernet TX ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TxQueue {
    pub(crate) ring: Ring,
    pub(crate) cq: u16,
    pub(crate) if_id: u32,
    pub(crate) consumer: u32,
    /// WRBs posted and not yet sent.
    pub(crate) posted: u32,
}

/// An Ethernet RX ring. No frame ever arrives, so only its bookkeeping is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RxQueue {
    pub(crate) cq: u16,
    pub(crate) if_id: u32,
    pub(crate) rss_id: u8,
    pub(crate) rss: bool,
    /// Receive buffers the host has posted.
    pub(crate) buffers: u32,
}

/// A network interface and its filters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Interface {
    pub(crate) capabilities: IfFlags,
    /// The flags in effect (IF_CREATE's enable flags, then RX_FILTER).
    pub(crate) flags: IfFlags,
    /// MAC filters by pmac id.
    pub(crate) pmacs: BTreeMap<u32, [u8; 6]>,
    pub(crate) multicast: Vec<[u8; 6]>,
    pub(crate) vlans: Vec<u16>,
    pub(crate) vlan_promiscuous: bool,
    /// RSS hash types (0 = off) and the indirection table.
    pub(crate) rss_hash: u16,
    pub(crate) rss_table: Vec<u8>,
}

/// Everything a driver created in the function, and its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resources {
    pub(crate) eqs: BTreeMap<u16, EventQueue>,
    pub(crate) cqs: BTreeMap<u16, CompletionQueue>,
    pub(crate) mccs: BTreeMap<u16, MccQueue>,
    pub(crate) txqs: BTreeMap<u16, TxQueue>,
    pub(crate) rxqs: BTreeMap<u16, RxQueue>,
    pub(crate) interfaces: BTreeMap<u32, Interface>,
    /// Protection domains and address handle tables (RDMA subsystem).
    pub(crate) rdma: RdmaObjects,
    /// SET_INTERRUPT_ENABLE.
    pub(crate) host_interrupts: bool,
    pub(crate) flow_control: FlowControl,
    /// SET_LOGICAL_LINK_CONFIG's enable bit: the function's logical link may come up.
    pub(crate) logical_link_enabled: bool,
    /// CQs of RX rings destroyed since the device last looked, each owed a flush completion.
    pub(crate) rx_flushes: Vec<u16>,
}

impl Default for Resources {
    fn default() -> Self {
        Self {
            eqs: BTreeMap::new(),
            cqs: BTreeMap::new(),
            mccs: BTreeMap::new(),
            txqs: BTreeMap::new(),
            rxqs: BTreeMap::new(),
            interfaces: BTreeMap::new(),
            rdma: RdmaObjects::default(),
            host_interrupts: false,
            flow_control: DEFAULT_FLOW_CONTROL,
            logical_link_enabled: true,
            rx_flushes: Vec::new(),
        }
    }
}

impl Resources {
    /// The MSI-X index a new EQ gets: the lowest one no live EQ uses.
    pub(crate) fn free_msix_idx(&self) -> u16 {
        (0..=u16::MAX).find(|i| !self.eqs.values().any(|eq| eq.msix_idx == *i)).unwrap_or(u16::MAX)
    }

    /// True when some EQ drives its INTx source.
    pub(crate) fn intx_asserted(&self) -> bool {
        self.eqs.values().any(|eq| eq.asserted)
    }

    /// Every MAC filter of every interface.
    pub(crate) fn pmac_count(&self) -> usize {
        self.interfaces.values().map(|i| i.pmacs.len()).sum()
    }
}

/// The lowest id from [`FIRST_QUEUE_ID`] up to `max` that `map` does not use.
pub(crate) fn free_id<K: Ord + Copy + TryFrom<u32>, V>(map: &BTreeMap<K, V>, max: u32) -> Option<K> {
    (FIRST_QUEUE_ID..=max).filter_map(|n| K::try_from(n).ok()).find(|k| !map.contains_key(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_follow_their_page_list() {
        // 1024 × 16 bytes over four pages that are not contiguous.
        let pages = vec![0x10_0000, 0x30_0000, 0x20_0000, 0x40_0000];
        let ring = Ring::new(pages, 1024, 16).unwrap();
        assert_eq!(ring.entry(0), 0x10_0000);
        assert_eq!(ring.entry(255), 0x10_0000 + 255 * 16);
        assert_eq!(ring.entry(256), 0x30_0000);
        assert_eq!(ring.entry(1023), 0x40_0000 + 255 * 16);
        assert_eq!(ring.entry(1024), 0x10_0000, "indices wrap");
        assert_eq!(ring.advance(1023, 2), 1);
        assert!(Ring::new(vec![0x1000], 1024, 16).is_none(), "one page cannot hold 16 KiB");
        assert!(Ring::new(vec![0x1000], 0, 16).is_none());
    }

    #[test]
    fn ids_start_at_one_and_are_reused() {
        let mut map = BTreeMap::new();
        assert_eq!(free_id::<u16, ()>(&map, 4), Some(1));
        map.insert(1u16, ());
        map.insert(2u16, ());
        assert_eq!(free_id(&map, 4), Some(3));
        map.remove(&1);
        assert_eq!(free_id(&map, 4), Some(1));
        map.insert(1, ());
        map.insert(3, ());
        map.insert(4, ());
        assert_eq!(free_id(&map, 4), None, "the limit is inclusive");
    }

    #[test]
    fn msix_indices_fill_the_lowest_gap() {
        let mut r = Resources::default();
        let ring = Ring::new(vec![0x1000], 1024, 4).unwrap();
        let eq = |msix_idx| EventQueue {
            ring: ring.clone(),
            msix_idx,
            producer: 0,
            outstanding: 0,
            armed: false,
            asserted: false,
            delay_multiplier: 0,
        };
        assert_eq!(r.free_msix_idx(), 0);
        r.eqs.insert(1, eq(0));
        r.eqs.insert(2, eq(2));
        assert_eq!(r.free_msix_idx(), 1);
    }
}
