//! Port-level commands: GET_MAC_LIST (147), GET_PORT_NAME (77), LINK_STATUS_QUERY (5),
//! GET_PHY_DETAILS (102), GET_BEACON_STATE (70), ENABLE_DISABLE_BEACON (69), SET / GET_FLOW_CONTROL
//! (36 / 37), SET_LOGICAL_LINK_CONFIG (80).
//!
//! The emulated PF sits on port 0 ([`crate::assumptions::PF_NUM`]); the link is up at 10 Gb/s
//! unless the `link-down` fault pulls the cable or the driver disables the logical link; the PHY
//! is an SFP+ cage.

use oce_mailbox::command::Empty;
use oce_mailbox::commands::{
    BeaconState, EnableDisableBeacon, FlowControl, GetBeaconState, GetFlowControl, GetMacList, GetPhyDetails,
    GetPortName, LinkStatus, LinkStatusQuery, MacList, MacSpeed, PhyDetails, PhyInterface, PhySpeeds, PortName,
    SetFlowControl, SetLogicalLinkConfig,
};
use oce_mailbox::entries::LinkStateEvent;
use oce_mailbox::status::{BaseStatus, CompletionStatus};

use super::illegal_field;
use crate::assumptions::{
    LINK_SPEED_10MBPS, LINK_SPEED_CODE, MAC_DUPLEX, PHY_INTERFACE_TYPE, PHY_SPEEDS, PHY_TYPE, PORT_NAMES,
};
use crate::firmware::{Context, Firmware, Owed};

/// The port the function's own commands are about: the one it sits on.
fn own_port(fw: &Firmware) -> usize {
    usize::from(fw.port())
}

/// GET_MAC_LIST: one true MAC, the port's permanent address (spec/protocol.md §5.6).
pub(crate) fn get_mac_list(fw: &mut Firmware, _: &Context, _: GetMacList) -> Result<MacList, CompletionStatus> {
    let mac = *fw.card().state.identity.macs.get(own_port(fw)).ok_or_else(illegal_field)?;
    Ok(MacList::single(mac.0))
}

/// GET_PORT_NAME v1: one character per physical port (spec/protocol.md §5.10).
pub(crate) fn get_port_name(_: &mut Firmware, _: &Context, _: GetPortName) -> Result<PortName, CompletionStatus> {
    Ok(PortName { names: PORT_NAMES })
}

/// LINK_STATUS_QUERY v1: up at 10 Gb/s, or down with no speed (spec/protocol.md §5.16, §8
/// item 6).
pub(crate) fn link_status_query(
    fw: &mut Firmware,
    _: &Context,
    _: LinkStatusQuery,
) -> Result<LinkStatus, CompletionStatus> {
    Ok(link_status(fw))
}

/// What LINK_STATUS_QUERY reports now.
pub(crate) fn link_status(fw: &Firmware) -> LinkStatus {
    let up = fw.logical_link_up();
    LinkStatus {
        physical_port: own_port(fw) as u8,
        mac_duplex: if up { MAC_DUPLEX } else { 0 },
        mac_speed: if up { MacSpeed::from_raw(LINK_SPEED_CODE) } else { MacSpeed::None },
        mac_fault: 0,
        mgmt_mac_duplex: 0,
        mgmt_mac_speed: 0,
        link_speed: if up { LINK_SPEED_10MBPS } else { 0 },
        logical_link_status: u32::from(if up { LinkStatus::LINK_UP } else { 0 }),
    }
}

/// Whether the locate LED of `port` blinks (GET_BEACON_STATE's answer).
pub(crate) fn beacon_on(fw: &Firmware, port: u8) -> bool {
    fw.card().state.runtime.beacon.get(usize::from(port)).copied().unwrap_or(false)
}

/// The link-state asynchronous event announcing that the function's logical link is now `up`:
/// the PF's port, with the duplex and speed codes LINK_STATUS_QUERY reports (spec/protocol.md
/// §3.8; [`crate::assumptions`], "queues").
pub(crate) fn link_state_event(fw: &Firmware, up: bool) -> LinkStateEvent {
    let (duplex, speed) = if up { (MAC_DUPLEX, LINK_SPEED_CODE) } else { (0, 0) };
    LinkStateEvent::logical(own_port(fw) as u8, up, duplex, speed)
}

/// SET_FLOW_CONTROL v1: pause frames on or off in each direction, until the next function reset.
pub(crate) fn set_flow_control(fw: &mut Firmware, _: &Context, req: SetFlowControl) -> Result<Empty, CompletionStatus> {
    fw.resources.flow_control = req.0;
    Ok(Empty)
}

/// GET_FLOW_CONTROL: what SET_FLOW_CONTROL set, or [`crate::assumptions::DEFAULT_FLOW_CONTROL`].
pub(crate) fn get_flow_control(
    fw: &mut Firmware,
    _: &Context,
    _: GetFlowControl,
) -> Result<FlowControl, CompletionStatus> {
    Ok(fw.resources.flow_control)
}

/// SET_LOGICAL_LINK_CONFIG v2: the enable bit lets the function's logical link follow the
/// physical one (be2net's 0x101) or holds it down (spec/protocol.md §5.17); a change of the
/// logical link is announced to the subscribed MCCs like any other.
pub(crate) fn set_logical_link_config(
    fw: &mut Firmware,
    _: &Context,
    req: SetLogicalLinkConfig,
) -> Result<(Empty, Owed), CompletionStatus> {
    fw.resources.logical_link_enabled = req.link_config & SetLogicalLinkConfig::ENABLE != 0;
    Ok((Empty, Owed { link_event: true, ..Owed::default() }))
}

/// GET_PHY_DETAILS: an SFP+ 10G PHY supporting 1G and 10G (spec/protocol.md §5.11).
pub(crate) fn get_phy_details(_: &mut Firmware, _: &Context, _: GetPhyDetails) -> Result<PhyDetails, CompletionStatus> {
    Ok(PhyDetails {
        phy_type: PHY_TYPE,
        interface_type: PhyInterface::from_raw(PHY_INTERFACE_TYPE),
        misc_params: 0,
        ext_phy_details: 0,
        auto_speeds: PhySpeeds(PHY_SPEEDS),
        fixed_speeds: PhySpeeds(PHY_SPEEDS),
    })
}

/// GET_BEACON_STATE: whether the port's identification LED blinks (spec/protocol.md §5.12).
pub(crate) fn get_beacon_state(
    fw: &mut Firmware,
    _: &Context,
    req: GetBeaconState,
) -> Result<BeaconState, CompletionStatus> {
    let on = *fw.card().state.runtime.beacon.get(usize::from(req.port_num)).ok_or_else(illegal_field)?;
    Ok(BeaconState { state: if on { BeaconState::ENABLED } else { BeaconState::DISABLED } })
}

/// ENABLE_DISABLE_BEACON: switches the port's LED on (1) or off (0); other states and ports are
/// ILLEGAL_FIELD. The durations are ignored (their semantics are not public); the state lasts
/// until changed or until the next POST, and is saved so the next process sees it.
pub(crate) fn enable_disable_beacon(
    fw: &mut Firmware,
    _: &Context,
    req: EnableDisableBeacon,
) -> Result<Empty, CompletionStatus> {
    let on = match req.beacon_state {
        BeaconState::ENABLED => true,
        BeaconState::DISABLED => false,
        _ => return Err(illegal_field()),
    };
    let port = usize::from(req.port_num);
    let before = {
        let mut card = fw.card();
        let slot = card.state.runtime.beacon.get_mut(port).ok_or_else(illegal_field)?;
        std::mem::replace(slot, on)
    };
    if before != on && fw.save().is_err() {
        fw.card().state.runtime.beacon[port] = before;
        return Err(BaseStatus::Failed.into());
    }
    Ok(Empty)
}
