//! Interface commands: NTWK_INTERFACE_CREATE / DESTROY (50 / 51), NTWK_PMAC_ADD / DEL
//! (59 / 60), NTWK_RX_FILTER (34) and NTWK_VLAN_CONFIG (4) (spec/protocol.md §5.0, §5.21;
//! spec/be2net-driver.md §2 step 15, §4.1, §4.2). Limits come from the running profile's NIC
//! descriptor, the numbers be2net read with GET_FUNC_CONFIG.

use oce_mailbox::command::Empty;
use oce_mailbox::commands::{
    IfCreate, IfCreated, IfDestroy, IfFlags, PmacAdd, PmacAdded, PmacDel, RxFilter, VlanConfig,
};
use oce_mailbox::status::{AdditionalStatus, BaseStatus, CompletionStatus};

use super::illegal_field;
use super::queues::{at_limit, exhausted};
use crate::firmware::resources::{Interface, Resources};
use crate::firmware::{Context, Firmware};

/// The lowest pmac id from 1 that no interface uses.
fn free_pmac_id(r: &Resources) -> Option<u32> {
    (1..=u32::MAX).find(|id| !r.interfaces.values().any(|i| i.pmacs.contains_key(id)))
}

/// NTWK_INTERFACE_CREATE: capabilities within the profile's `cap_flags`, enabled flags within
/// the capabilities; unless `pmac_invalid`, the request's MAC becomes the interface's first MAC
/// filter. More than the profile's `iface_count` interfaces is FAILED / TOO_MANY_INTERFACES.
pub(crate) fn if_create(fw: &mut Firmware, _: &Context, req: IfCreate) -> Result<IfCreated, CompletionStatus> {
    let nic = fw.card().state.runtime.active.nic;
    let caps = req.capability_flags;
    if caps.0 & !nic.cap_flags != 0 || req.enable_flags.0 & !caps.0 != 0 {
        return Err(illegal_field());
    }
    let r = &mut fw.resources;
    if at_limit(r.interfaces.len(), nic.iface_count) {
        return Err(CompletionStatus::new(BaseStatus::Failed, AdditionalStatus::TooManyInterfaces));
    }
    let id = (1..=u32::from(nic.iface_count)).find(|id| !r.interfaces.contains_key(id)).ok_or_else(exhausted)?;
    let mut iface = Interface { capabilities: caps, flags: req.enable_flags, ..Interface::default() };
    let mut pmac_id = 0;
    if !req.pmac_invalid {
        if at_limit(r.pmac_count(), nic.unicast_mac_count) {
            return Err(exhausted());
        }
        pmac_id = free_pmac_id(r).ok_or_else(exhausted)?;
        iface.pmacs.insert(pmac_id, req.mac);
    }
    r.interfaces.insert(id, iface);
    Ok(IfCreated { interface_id: id, pmac_id })
}

/// NTWK_INTERFACE_DESTROY: the interface and its MAC filters go.
pub(crate) fn if_destroy(fw: &mut Firmware, _: &Context, req: IfDestroy) -> Result<Empty, CompletionStatus> {
    fw.resources.interfaces.remove(&req.interface_id).map(|_| Empty).ok_or_else(illegal_field)
}

/// NTWK_PMAC_ADD: a MAC filter on a live interface; the function holds at most the profile's
/// `unicast_mac_count`.
pub(crate) fn pmac_add(fw: &mut Firmware, _: &Context, req: PmacAdd) -> Result<PmacAdded, CompletionStatus> {
    let limit = fw.card().state.runtime.active.nic.unicast_mac_count;
    let r = &mut fw.resources;
    if !r.interfaces.contains_key(&req.if_id) {
        return Err(illegal_field());
    }
    if at_limit(r.pmac_count(), limit) {
        return Err(exhausted());
    }
    let pmac_id = free_pmac_id(r).ok_or_else(exhausted)?;
    r.interfaces.get_mut(&req.if_id).ok_or_else(illegal_field)?.pmacs.insert(pmac_id, req.mac);
    Ok(PmacAdded { pmac_id })
}

/// NTWK_PMAC_DEL: removes a MAC filter of a live interface.
pub(crate) fn pmac_del(fw: &mut Firmware, _: &Context, req: PmacDel) -> Result<Empty, CompletionStatus> {
    let iface = fw.resources.interfaces.get_mut(&req.if_id).ok_or_else(illegal_field)?;
    iface.pmacs.remove(&req.pmac_id).map(|_| Empty).ok_or_else(illegal_field)
}

/// NTWK_RX_FILTER: the flags `if_flags_mask` selects take the values of `if_flags`; bits outside
/// the interface's capabilities are ignored. With MULTICAST selected, the multicast list is
/// replaced; more entries than the profile's `mcast_mac_count` is FAILED /
/// INSUFFICIENT_RESOURCES. The global flags are not modelled.
pub(crate) fn rx_filter(fw: &mut Firmware, _: &Context, req: RxFilter) -> Result<Empty, CompletionStatus> {
    let limit = fw.card().state.runtime.active.nic.mcast_mac_count;
    let iface = fw.resources.interfaces.get_mut(&req.if_id).ok_or_else(illegal_field)?;
    let mask = req.if_flags_mask.0 & iface.capabilities.0;
    if mask & IfFlags::MULTICAST != 0 {
        if req.mcast.len() > usize::from(limit) {
            return Err(exhausted());
        }
        iface.multicast = req.mcast;
    }
    iface.flags = IfFlags((iface.flags.0 & !mask) | (req.if_flags.0 & mask));
    Ok(Empty)
}

/// NTWK_VLAN_CONFIG: the VLAN filter of a live interface. More VLANs than the profile's
/// `vlan_count` is FAILED / INSUFFICIENT_VLANS, which makes be2net fall back to
/// VLAN-promiscuous mode without logging an error (spec/protocol.md §3.5).
pub(crate) fn vlan_config(fw: &mut Firmware, _: &Context, req: VlanConfig) -> Result<Empty, CompletionStatus> {
    let limit = fw.card().state.runtime.active.nic.vlan_count;
    let iface = fw.resources.interfaces.get_mut(&u32::from(req.interface_id)).ok_or_else(illegal_field)?;
    if req.vlans.len() > usize::from(limit) {
        return Err(CompletionStatus::new(BaseStatus::Failed, AdditionalStatus::InsufficientVlans));
    }
    iface.vlans = req.vlans;
    iface.vlan_promiscuous = req.promiscuous;
    Ok(Empty)
}
