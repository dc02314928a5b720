//! The queue contexts: what the queue-create commands made, kept by the firmware and read by the
//! device's ring engines ([`crate::datapath`]). A context holds what the create command said —
//! the ring in host memory, the queues it reports to, its interface, its fragment size — and
//! nothing that moves: the producer and consumer indices, what is posted and armed, belong to
//! the engine that walks the ring.
//!
//! Each kind (EQ, CQ, MCC, TX, RX) has its own id space counting from
//! [`FIRST_QUEUE_ID`](crate::assumptions::FIRST_QUEUE_ID), the lowest free id reused
//! ([`crate::assumptions`], "Queues"). Every context carries a **serial**, unique among all the
//! queues the function ever had: an engine keeps its indices under (id, serial), so a queue
//! destroyed and created again under the same id — or after a reset — starts from fresh
//! indices without anyone having to tell the engine.

use std::collections::BTreeMap;

use oce_mailbox::commands::QUEUE_PAGE_LEN;

use super::resources::free_id;

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

/// An event queue's context (EQ_CREATE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EventQueue {
    pub(crate) ring: Ring,
    /// The MSI-X table entry the EQ interrupts on.
    pub(crate) msix_idx: u16,
    /// Armed at creation (the context's `armed` bit).
    pub(crate) armed: bool,
    /// The interrupt delay multiplier (EQ_CREATE, MODIFY_EQ_DELAY).
    pub(crate) delay_multiplier: u32,
    pub(crate) serial: u64,
}

/// A completion queue's context (CQ_CREATE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompletionQueue {
    pub(crate) ring: Ring,
    /// The EQ that hears of new entries (eventable CQs only).
    pub(crate) eq: Option<u16>,
    /// Armed at creation.
    pub(crate) armed: bool,
    pub(crate) serial: u64,
    /// The user context's PD a CQ_CREATE v3 gave (its doorbell rings on that PD's page); 0 for
    /// kernel CQs.
    pub(crate) user_pd: u16,
}

/// An MCC queue's context (MCC_CREATE_EXT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MccQueue {
    pub(crate) ring: Ring,
    /// Where command completions go.
    pub(crate) cq: u16,
    /// Where asynchronous events go, if anywhere.
    pub(crate) async_cq: Option<u16>,
    /// Bit n: post events of code n.
    pub(crate) async_events: u32,
    pub(crate) serial: u64,
}

impl MccQueue {
    /// True when the MCC wants asynchronous events of `code`.
    pub(crate) fn wants(&self, code: u8) -> bool {
        self.async_cq.is_some() && code < 32 && self.async_events & (1 << code) != 0
    }
}

/// An Ethernet TX ring's context (TX_CREATE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TxQueue {
    pub(crate) ring: Ring,
    pub(crate) cq: u16,
    pub(crate) if_id: u32,
    pub(crate) serial: u64,
}

/// An Ethernet RX ring's context (RX_CREATE): a ring of 8-byte descriptors, each naming one
/// receive fragment of `frag_size` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RxQueue {
    pub(crate) ring: Ring,
    pub(crate) cq: u16,
    pub(crate) if_id: u32,
    pub(crate) rss_id: u8,
    /// An RSS ring (`rss_queue` 1); the interface's default ring otherwise.
    pub(crate) rss: bool,
    /// Bytes of each receive fragment (2^`frag_size`).
    pub(crate) frag_size: u32,
    /// The largest frame the ring takes, VLAN tag included, FCS not (`max_frame_size`).
    pub(crate) max_frame_size: u16,
    pub(crate) serial: u64,
}

/// Every queue context of the function, by kind and id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct QueueContexts {
    eqs: BTreeMap<u16, EventQueue>,
    cqs: BTreeMap<u16, CompletionQueue>,
    mccs: BTreeMap<u16, MccQueue>,
    txqs: BTreeMap<u16, TxQueue>,
    rxqs: BTreeMap<u16, RxQueue>,
    /// The serial the next context gets.
    next_serial: u64,
}

/// Declares, for one kind of queue, lookup, count, insertion under the lowest free id (with a
/// fresh serial) and removal.
macro_rules! contexts_of {
    ($map:ident, $ty:ty, $get:ident, $count:ident, $add:ident, $remove:ident) => {
        /// The context of the queue with `id`, if it exists.
        pub(crate) fn $get(&self, id: u16) -> Option<&$ty> {
            self.$map.get(&id)
        }
        /// How many queues of this kind exist.
        pub(crate) fn $count(&self) -> usize {
            self.$map.len()
        }
        /// Adds a queue under the lowest free id up to `max_id`, made by `make` from its id and
        /// serial; `None` when every id is taken.
        pub(crate) fn $add(&mut self, max_id: u32, make: impl FnOnce(u16, u64) -> $ty) -> Option<u16> {
            let id = free_id(&self.$map, max_id)?;
            let serial = self.take_serial();
            self.$map.insert(id, make(id, serial));
            Some(id)
        }
        /// Removes the queue with `id`; its context, if it existed.
        pub(crate) fn $remove(&mut self, id: u16) -> Option<$ty> {
            self.$map.remove(&id)
        }
    };
}

impl QueueContexts {
    contexts_of!(eqs, EventQueue, event_queue, eq_count, add_eq, remove_eq);
    contexts_of!(cqs, CompletionQueue, cq, cq_count, add_cq, remove_cq);
    contexts_of!(mccs, MccQueue, mcc, mcc_count, add_mcc, remove_mcc);
    contexts_of!(txqs, TxQueue, txq, txq_count, add_txq, remove_txq);
    contexts_of!(rxqs, RxQueue, rxq, rxq_count, add_rxq, remove_rxq);

    /// Every RX ring, by id.
    pub(crate) fn rxqs(&self) -> impl Iterator<Item = (u16, &RxQueue)> {
        self.rxqs.iter().map(|(&id, q)| (id, q))
    }

    /// Every MCC, by id.
    pub(crate) fn mccs(&self) -> impl Iterator<Item = (u16, &MccQueue)> {
        self.mccs.iter().map(|(&id, q)| (id, q))
    }

    fn take_serial(&mut self) -> u64 {
        self.next_serial += 1;
        self.next_serial
    }

    /// Every queue gone; serials keep counting, so no later queue shares one with a queue an
    /// engine still remembers.
    pub(crate) fn clear(&mut self) {
        *self = Self { next_serial: self.next_serial, ..Self::default() };
    }

    /// The MSI-X index a new EQ gets: the lowest one no live EQ uses.
    pub(crate) fn free_msix_idx(&self) -> u16 {
        (0..=u16::MAX).find(|i| !self.eqs.values().any(|eq| eq.msix_idx == *i)).unwrap_or(u16::MAX)
    }

    /// Sets the delay multiplier of EQ `id`; false when it does not exist.
    pub(crate) fn set_eq_delay(&mut self, id: u16, multiplier: u32) -> bool {
        self.eqs.get_mut(&id).map(|eq| eq.delay_multiplier = multiplier).is_some()
    }
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

    fn eq(msix_idx: u16) -> impl FnOnce(u16, u64) -> EventQueue {
        move |_, serial| EventQueue {
            ring: Ring::new(vec![0x1000], 1024, 4).unwrap(),
            msix_idx,
            armed: false,
            delay_multiplier: 0,
            serial,
        }
    }

    #[test]
    fn msix_indices_fill_the_lowest_gap() {
        let mut q = QueueContexts::default();
        assert_eq!(q.free_msix_idx(), 0);
        q.add_eq(10, eq(0)).unwrap();
        q.add_eq(10, eq(2)).unwrap();
        assert_eq!(q.free_msix_idx(), 1);
    }

    #[test]
    fn serials_are_never_reused_even_across_a_clear() {
        let mut q = QueueContexts::default();
        let first = q.add_eq(10, eq(0)).unwrap();
        let serial = q.event_queue(first).unwrap().serial;
        q.remove_eq(first);
        let again = q.add_eq(10, eq(0)).unwrap();
        assert_eq!(again, first, "the lowest free id is reused");
        assert_ne!(q.event_queue(again).unwrap().serial, serial, "but not the serial");
        let before_clear = q.event_queue(again).unwrap().serial;
        q.clear();
        assert_eq!(q.eq_count(), 0);
        let after = q.add_eq(10, eq(0)).unwrap();
        assert!(q.event_queue(after).unwrap().serial > before_clear);
        assert!(q.add_eq(1, eq(1)).is_none(), "the limit is inclusive and id 1 is taken");
    }
}
