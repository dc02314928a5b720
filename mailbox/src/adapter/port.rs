//! The port this function drives (`ocetool port`, `ocetool locate`): PHY, link, transceiver
//! module and the locate LED, read the way `ethtool`, `ethtool -m` and `ethtool -p` read them on
//! be2net (`be_get_link_ksettings`, `be_cmd_read_port_transceiver_data`, `be_set_phys_id`).

use oce_pci::PciFunction;

use crate::commands::{
    BeaconState, EnableDisableBeacon, GetBeaconState, GetCntlAttributes, GetPhyDetails, LinkStatus, LinkStatusQuery,
    ModuleIdentity, PhyDetails, PhySpeeds, ReadTransceiverData, TransceiverPage,
};
use crate::{BootstrapMailbox, Command, MailboxError};

/// Everything `ocetool port` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortReport {
    /// The physical port number (`hba_port_num`: GET_CNTL_ATTRIBUTES `phy_port`, as be2net uses it).
    pub port: u8,
    /// How many physical ports the adapter has.
    pub port_count: u8,
    /// LINK_STATUS_QUERY.
    pub link: LinkStatus,
    /// GET_PHY_DETAILS, or why not (the firmware lets only functions with the link-management
    /// privilege read it, spec/protocol.md §5.11, §5.19).
    pub phy: Result<PhyDetails, String>,
    /// The module in the cage: `Ok(None)` for an empty cage, or why it could not be read.
    pub module: Result<Option<ModuleIdentity>, String>,
    /// The locate LED blinks.
    pub beacon_on: bool,
}

impl PortReport {
    /// Speeds the PHY supports: auto-negotiated and fixed, as `ethtool` lists "Supported link
    /// modes" on be2net.
    pub fn speeds_supported(&self) -> Option<PhySpeeds> {
        self.phy.as_ref().ok().map(|p| PhySpeeds(p.auto_speeds.0 | p.fixed_speeds.0))
    }

    /// Speeds the PHY advertises: the auto-negotiated ones (be2net's "Advertised link modes").
    pub fn speeds_advertised(&self) -> Option<PhySpeeds> {
        self.phy.as_ref().ok().map(|p| p.auto_speeds)
    }
}

/// Keeps a refusal as text, so one unreadable part does not hide the rest of the report; a lost
/// adapter or a broken handshake still ends the report.
fn optional<T>(result: Result<T, MailboxError>) -> Result<Result<T, String>, MailboxError> {
    match result {
        Ok(v) => Ok(Ok(v)),
        Err(e @ MailboxError::CommandFailed { .. }) => Ok(Err(e.to_string())),
        Err(e) => Err(e),
    }
}

/// The physical port this function drives and the adapter's port count.
fn own_port<F: PciFunction>(mbox: &mut BootstrapMailbox<F>) -> Result<(u8, u8), MailboxError> {
    let attrs = mbox.execute(&GetCntlAttributes)?;
    Ok((attrs.phy_port, attrs.hba_port_count))
}

/// Reads the report.
pub fn read_port<F: PciFunction>(mbox: &mut BootstrapMailbox<F>) -> Result<PortReport, MailboxError> {
    let (port, port_count) = own_port(mbox)?;
    let link = mbox.execute(&LinkStatusQuery)?;
    let phy = optional(mbox.execute(&GetPhyDetails))?;
    let module = optional(mbox.execute(&ReadTransceiverData { page: TransceiverPage::A0, port: u32::from(port) }))?
        .map(|page| page.identity());
    let beacon_on = mbox.execute(&GetBeaconState { port_num: port })?.is_enabled();
    Ok(PortReport { port, port_count, link, phy, module, beacon_on })
}

/// What `ocetool locate` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocateOutcome {
    /// The physical port.
    pub port: u8,
    /// The LED state read back after the command.
    pub beacon_on: bool,
    /// False when the LED already was in the state asked for.
    pub changed: bool,
}

/// Switches the locate LED of this function's port on or off, as `ethtool -p` does (durations 0:
/// until switched off), and reads the state back.
pub fn set_locate<F: PciFunction>(mbox: &mut BootstrapMailbox<F>, on: bool) -> Result<LocateOutcome, MailboxError> {
    let (port, _) = own_port(mbox)?;
    let before = mbox.execute(&GetBeaconState { port_num: port })?.is_enabled();
    if before == on {
        return Ok(LocateOutcome { port, beacon_on: before, changed: false });
    }
    tracing::info!(port, on, "switching the locate LED");
    let beacon_state = if on { BeaconState::ENABLED } else { BeaconState::DISABLED };
    mbox.execute(&EnableDisableBeacon { port_num: port, beacon_state, beacon_duration: 0, status_duration: 0 })?;
    let after = mbox.execute(&GetBeaconState { port_num: port })?.is_enabled();
    if after != on {
        let state = |on: bool| if on { "on" } else { "off" };
        return Err(MailboxError::NotApplied {
            command: EnableDisableBeacon::NAME,
            expected: state(on),
            found: state(after),
        });
    }
    Ok(LocateOutcome { port, beacon_on: after, changed: true })
}
