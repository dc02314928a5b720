//! The profile model: what each profile configures, and the saved / active / next split
//! (design.md §6, spec/protocol.md §5.8, §5.9, §6.4).
//!
//! - **saved** (NVRAM, kept across power cycles): one [`FunctionConfig`] per profile, what
//!   GET_PROFILE_CONFIG SAVED reports and what a profile starts from when it becomes active;
//! - **next** (NVRAM): the profile that becomes active at the next POST;
//! - **active** (runtime, rebuilt at every POST from the saved config of the next profile): what
//!   runs now; GET_PROFILE_CONFIG ACTIVE, GET_FUNC_CONFIG and QUERY_FIRMWARE_CONFIG report it.
//!   Changes flagged NOSV land here only and are lost at the next POST.

use serde::{Deserialize, Serialize};

use crate::assumptions::{FACTORY_PROFILE_ID, PROFILES, ProfileDefinition, nic_limits};

/// PCIe descriptor `pf_type` of a NIC PF (be_cmds.h `MISSION_NIC`, spec/protocol.md §5.8).
pub const MISSION_NIC: u8 = 1;
/// PCIe descriptor `pf_type` of a NIC+RDMA PF (be_cmds.h `MISSION_RDMA`, spec/protocol.md §5.8).
pub const MISSION_RDMA: u8 = 8;
/// function_mode bit 1: NIC (spec/protocol.md §5.3).
pub const FUNCTION_MODE_NIC: u32 = 0x2;
/// function_mode bit 2: RDMA (be2net `RDMA_ENABLED`, spec/protocol.md §5.3).
#[doc(alias = "RDMA_ENABLED")]
pub const FUNCTION_MODE_RDMA: u32 = 0x4;

/// NIC resource limits of the PF (the NIC v1 descriptor's fields, spec/protocol.md §5.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct NicResources {
    pub unicast_mac_count: u16,
    pub mcc_count: u16,
    pub vlan_count: u16,
    pub mcast_mac_count: u16,
    pub txq_count: u16,
    pub rq_count: u16,
    pub rssq_count: u16,
    pub lro_count: u16,
    pub cq_count: u16,
    pub toe_conn_count: u16,
    pub eq_count: u16,
    pub iface_count: u16,
    pub cap_flags: u32,
    pub link_param: u8,
    pub bw_min: u32,
    pub bw_max: u32,
}

/// What one profile configures for the emulated PF: its PCIe, NIC and PORT descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionConfig {
    /// PCIe `pf_type`: [`MISSION_NIC`] or [`MISSION_RDMA`].
    pub pf_type: u8,
    /// PCIe `pf_state` (non-zero = enabled).
    pub pf_state: u8,
    /// PCIe `sriov_state` (1 = SR-IOV enabled).
    pub sriov_state: u8,
    /// PCIe `num_vfs` (0: the emulator has no VFs, spec §8 item 6).
    pub num_vfs: u16,
    /// PORT `mc_type`.
    pub mc_type: u8,
    /// NIC limits.
    pub nic: NicResources,
}

impl FunctionConfig {
    /// The factory configuration of `profile`.
    pub fn factory(profile: &ProfileDefinition) -> Self {
        use nic_limits::*;
        Self {
            pf_type: profile.pf_type,
            pf_state: PF_STATE_ENABLED,
            sriov_state: 0,
            num_vfs: 0,
            mc_type: MC_TYPE_NONE,
            nic: NicResources {
                unicast_mac_count: UNICAST_MAC_COUNT,
                mcc_count: MCC_COUNT,
                vlan_count: VLAN_COUNT,
                mcast_mac_count: MCAST_MAC_COUNT,
                txq_count: TXQ_COUNT,
                rq_count: RQ_COUNT,
                rssq_count: RSSQ_COUNT,
                lro_count: 0,
                cq_count: CQ_COUNT,
                toe_conn_count: 0,
                eq_count: profile.eq_count,
                iface_count: IFACE_COUNT,
                cap_flags: CAP_FLAGS,
                link_param: 0,
                bw_min: 0,
                bw_max: BW_MAX_PERCENT,
            },
        }
    }

    /// True when the PF runs NIC+RDMA (RoCE).
    pub fn is_roce(&self) -> bool {
        self.pf_type == MISSION_RDMA
    }

    /// QUERY_FIRMWARE_CONFIG `function_mode` for this configuration: NIC (0x2), plus RDMA (0x4)
    /// for a RoCE PF (design.md §6).
    pub fn function_mode(&self) -> u32 {
        if self.is_roce() { FUNCTION_MODE_NIC | FUNCTION_MODE_RDMA } else { FUNCTION_MODE_NIC }
    }
}

/// The profile with `id`, if the emulated adapter offers one.
pub fn definition(id: u8) -> Option<&'static ProfileDefinition> {
    PROFILES.iter().find(|p| p.id == id)
}

/// The factory profile.
pub fn factory_profile() -> &'static ProfileDefinition {
    definition(FACTORY_PROFILE_ID).unwrap_or(&PROFILES[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        assert_eq!(factory_profile().id, FACTORY_PROFILE_ID);
        let mut ids: Vec<u8> = PROFILES.iter().map(|p| p.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), PROFILES.len(), "profile IDs are unique");
        for p in &PROFILES {
            assert!(p.pf_type == MISSION_NIC || p.pf_type == MISSION_RDMA);
            assert_eq!(p.name.contains("RoCE"), p.pf_type == MISSION_RDMA);
        }
        assert!(PROFILES.iter().filter(|p| p.pf_type == MISSION_RDMA).count() >= 2);
    }

    #[test]
    fn function_mode_follows_pf_type() {
        let nic = FunctionConfig::factory(factory_profile());
        assert_eq!(nic.function_mode(), 0x2);
        let roce = FunctionConfig::factory(PROFILES.iter().find(|p| p.pf_type == MISSION_RDMA).unwrap());
        assert_eq!(roce.function_mode(), 0x6);
        assert!(roce.nic.eq_count >= 2);
    }
}
