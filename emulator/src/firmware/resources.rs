//! What a driver has created in the function, as the firmware keeps it: the queue contexts
//! ([`super::queues`]), the interfaces with their MAC, multicast and VLAN filters, the RoCE
//! engine's objects ([`super::rdma`]), and the function's settings (host interrupts, flow
//! control, logical link).
//!
//! Everything here lives in firmware RAM: nothing is saved, a FUNCTION_RESET, a function-level
//! reset, a chip reset and a power cycle all start from [`Resources::default`]
//! (spec/protocol.md §5.4). The handlers (`handlers::queues`, `handlers::eth`,
//! `handlers::interface`) fill it; the ring engines ([`crate::datapath`]) read it.

use std::collections::BTreeMap;

use oce_mailbox::commands::{FlowControl, IfFlags};

use super::queues::QueueContexts;
use super::rdma::RdmaObjects;
use crate::assumptions::{DEFAULT_FLOW_CONTROL, FIRST_QUEUE_ID};

/// A network interface and its filters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Interface {
    pub(crate) capabilities: IfFlags,
    /// The flags in effect (IF_CREATE's enable flags, then RX_FILTER).
    pub(crate) flags: IfFlags,
    /// MAC filters by pmac id.
    pub(crate) pmacs: BTreeMap<u32, [u8; 6]>,
    pub(crate) multicast: Vec<[u8; 6]>,
    pub(crate) vlans: Vec<u16>,
    pub(crate) vlan_promiscuous: bool,
    /// RSS hash types (0 = off), the Toeplitz key and the indirection table (RSS_CONFIG).
    pub(crate) rss_hash: u16,
    pub(crate) rss_key: [u8; 40],
    pub(crate) rss_table: Vec<u8>,
}

impl Default for Interface {
    fn default() -> Self {
        Self {
            capabilities: IfFlags(0),
            flags: IfFlags(0),
            pmacs: BTreeMap::new(),
            multicast: Vec::new(),
            vlans: Vec::new(),
            vlan_promiscuous: false,
            rss_hash: 0,
            rss_key: [0; 40],
            rss_table: Vec::new(),
        }
    }
}

/// Everything a driver created in the function, and its settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resources {
    /// The queue contexts.
    pub(crate) queues: QueueContexts,
    pub(crate) interfaces: BTreeMap<u32, Interface>,
    /// Protection domains and address handle tables (RDMA subsystem).
    pub(crate) rdma: RdmaObjects,
    /// SET_INTERRUPT_ENABLE.
    pub(crate) host_interrupts: bool,
    pub(crate) flow_control: FlowControl,
    /// SET_LOGICAL_LINK_CONFIG's enable bit: the function's logical link may come up.
    pub(crate) logical_link_enabled: bool,
}

impl Default for Resources {
    fn default() -> Self {
        Self {
            queues: QueueContexts::default(),
            interfaces: BTreeMap::new(),
            rdma: RdmaObjects::default(),
            host_interrupts: false,
            flow_control: DEFAULT_FLOW_CONTROL,
            logical_link_enabled: true,
        }
    }
}

impl Resources {
    /// Everything the driver created is gone and the settings are back to their defaults (a
    /// reset); the queue serials keep counting ([`QueueContexts::clear`]).
    pub(crate) fn reset(&mut self) {
        let mut queues = std::mem::take(&mut self.queues);
        queues.clear();
        *self = Self { queues, ..Self::default() };
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
}
