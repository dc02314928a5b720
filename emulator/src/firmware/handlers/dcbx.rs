//! DCBX GET_CONFIG (DCBX subsystem 0x10, opcode 1): the configuration ocrdma reads to choose the
//! RoCE service level (spec/be2net-driver.md §5.2 step 10). The contents are the emulator's
//! ([`crate::assumptions`], "DCBX"): the real firmware's defaults are not public.

use oce_mailbox::commands::{
    APP_ENTRIES, AppPriority, AppSelector, DcbxConfig, DcbxFeatureState, DcbxParamType, DcbxSummary, GetDcbxConfig,
    PRIORITIES, ROCE_ETHERTYPE,
};
use oce_mailbox::status::CompletionStatus;

use super::illegal_field;
use crate::assumptions::{
    DCBX_APP_STATE, DCBX_PEER_STATE, DCBX_PFC_STATE, DCBX_ROCE_PRIORITY, DCBX_STATE_ON, DCBX_TRAFFIC_CLASSES,
};
use crate::firmware::{Context, Firmware};

/// GET_CONFIG: the operational, administrative or peer copy; the `pfc-unsync` fault takes SYNC
/// out of the operational copy's PFC state.
pub(crate) fn get_dcbx_config(
    fw: &mut Firmware,
    _: &Context,
    req: GetDcbxConfig,
) -> Result<DcbxConfig, CompletionStatus> {
    let (pfc_state, app_state) = match req.param_type {
        DcbxParamType::Operational if fw.card().state.faults.pfc_unsync => {
            (DCBX_PFC_STATE & !DcbxFeatureState::SYNC, DCBX_APP_STATE)
        }
        DcbxParamType::Operational | DcbxParamType::Admin => (DCBX_PFC_STATE, DCBX_APP_STATE),
        DcbxParamType::Peer => (DCBX_PEER_STATE, DCBX_PEER_STATE),
        DcbxParamType::Unknown(_) => return Err(illegal_field()),
    };
    let mut priorities = [0u8; PRIORITIES];
    priorities[usize::from(DCBX_ROCE_PRIORITY)] = 1;
    let mut app = [AppPriority::default(); APP_ENTRIES];
    app[0] =
        AppPriority { valid: 1, selector: AppSelector::Ethertype.raw(), protocol: ROCE_ETHERTYPE, oui: 0, priorities };
    Ok(DcbxConfig {
        summary: DcbxSummary::new(DCBX_STATE_ON, 0, 1, DCBX_TRAFFIC_CLASSES),
        pfc_state: DcbxFeatureState(pfc_state),
        app_state: DcbxFeatureState(app_state),
        pfc_priorities: priorities,
        app,
        ..DcbxConfig::default()
    })
}
