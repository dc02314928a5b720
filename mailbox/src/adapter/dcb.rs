//! The adapter's DCB state as ocrdma sees it (`ocetool dcb`, doctor's `pfc` check): the
//! operational and administrative DCBX configurations, and the priority RoCE traffic gets, chosen
//! the way `ocrdma_init_service_level` chooses it (ocrdma_hw.c): the operational copy first, the
//! administrative copy when the operational one is unreadable or gives no RoCE priority, else the
//! default service level.

use oce_pci::PciFunction;

use crate::commands::{DEFAULT_SERVICE_LEVEL, DcbxConfig, DcbxParamType, GetDcbxConfig};
use crate::{BootstrapMailbox, MailboxError};

/// Where the RoCE priority came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrioritySource {
    /// The operational configuration (negotiated with the switch).
    Operational,
    /// The administrative configuration.
    Admin,
    /// Neither gave one: ocrdma's default service level.
    Default,
}

impl PrioritySource {
    /// A stable name for output.
    pub fn name(self) -> &'static str {
        match self {
            Self::Operational => "operational",
            Self::Admin => "admin",
            Self::Default => "default",
        }
    }
}

/// Both DCBX configurations and what they mean for RoCE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DcbState {
    /// The operational configuration, or why it could not be read.
    pub operational: Result<DcbxConfig, String>,
    /// The administrative configuration, or why it could not be read.
    pub admin: Result<DcbxConfig, String>,
    /// The priority (service level) ocrdma would give RoCE traffic.
    pub roce_priority: u8,
    /// Where it came from.
    pub roce_priority_source: PrioritySource,
}

impl DcbState {
    /// Derives the RoCE priority from the two configurations as ocrdma does.
    pub fn new(operational: Result<DcbxConfig, String>, admin: Result<DcbxConfig, String>) -> Self {
        let from = |cfg: &Result<DcbxConfig, String>| cfg.as_ref().ok().and_then(DcbxConfig::roce_priority);
        let (roce_priority, roce_priority_source) = match (from(&operational), from(&admin)) {
            (Some(p), _) => (p, PrioritySource::Operational),
            (None, Some(p)) => (p, PrioritySource::Admin),
            (None, None) => (DEFAULT_SERVICE_LEVEL, PrioritySource::Default),
        };
        Self { operational, admin, roce_priority, roce_priority_source }
    }

    /// DCBX runs, and PFC is enabled and in sync with the switch in the operational
    /// configuration, on the RoCE priority: lossless RoCE works end to end. (Without DCBX nothing
    /// is negotiated, so nothing can be in sync.)
    pub fn pfc_ready_for_roce(&self) -> bool {
        self.operational.as_ref().is_ok_and(|cfg| {
            cfg.dcbx_enabled()
                && cfg.pfc_state.is_enabled_and_synced()
                && cfg.pfc_enabled_priorities().contains(&self.roce_priority)
        })
    }
}

/// Reads both configurations. A configuration the firmware refuses is kept as its error text
/// (ocrdma, too, carries on without it); an adapter that refuses both is an error, so a firmware
/// without DCBX support is reported as such rather than as "PFC off".
pub fn read_dcb<F: PciFunction>(mbox: &mut BootstrapMailbox<F>) -> Result<DcbState, MailboxError> {
    tracing::info!("reading the operational and administrative DCBX configurations");
    let operational = mbox.execute(&GetDcbxConfig { param_type: DcbxParamType::Operational });
    let admin = mbox.execute(&GetDcbxConfig { param_type: DcbxParamType::Admin });
    match (operational, admin) {
        (Err(e), Err(_)) => Err(e),
        (operational, admin) => {
            Ok(DcbState::new(operational.map_err(|e| e.to_string()), admin.map_err(|e| e.to_string())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{AppPriority, DcbxFeatureState, DcbxSummary, ROCE_ETHERTYPE};

    fn config(pfc_state: u32, roce_prio: usize, pfc_prio: usize) -> DcbxConfig {
        let mut cfg = DcbxConfig {
            summary: DcbxSummary::new(1, 0, 1, 8),
            pfc_state: DcbxFeatureState(pfc_state),
            ..DcbxConfig::default()
        };
        cfg.pfc_priorities[pfc_prio] = 1;
        cfg.app[0] = AppPriority { valid: 1, selector: 0, protocol: ROCE_ETHERTYPE, oui: 0, priorities: [0; 8] };
        cfg.app[0].priorities[roce_prio] = 1;
        cfg
    }

    const SYNCED: u32 = DcbxFeatureState::ENABLED | DcbxFeatureState::SYNC;

    #[test]
    fn operational_wins_then_admin_then_default() {
        let s = DcbState::new(Ok(config(SYNCED, 4, 4)), Ok(config(SYNCED, 3, 3)));
        assert_eq!((s.roce_priority, s.roce_priority_source), (4, PrioritySource::Operational));
        assert!(s.pfc_ready_for_roce());

        let s = DcbState::new(Ok(config(DcbxFeatureState::ENABLED, 4, 4)), Ok(config(SYNCED, 3, 3)));
        assert_eq!((s.roce_priority, s.roce_priority_source), (3, PrioritySource::Admin));
        assert!(!s.pfc_ready_for_roce(), "the operational PFC is not in sync");

        let s = DcbState::new(Err("refused".into()), Ok(config(SYNCED, 3, 3)));
        assert_eq!(s.roce_priority_source, PrioritySource::Admin);
        assert!(!s.pfc_ready_for_roce());

        let mut no_dcbx = config(SYNCED, 4, 4);
        no_dcbx.summary = DcbxSummary::new(0, 0, 1, 8);
        let s = DcbState::new(Ok(no_dcbx), Err("refused".into()));
        assert_eq!(s.roce_priority_source, PrioritySource::Default);
        assert!(!s.pfc_ready_for_roce(), "DCBX is off");

        let s = DcbState::new(Ok(config(SYNCED, 4, 2)), Err("refused".into()));
        assert_eq!((s.roce_priority, s.roce_priority_source), (DEFAULT_SERVICE_LEVEL, PrioritySource::Default));
        assert_eq!(PrioritySource::Default.name(), "default");
    }
}
