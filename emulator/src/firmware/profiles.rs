//! The profile model: what each profile configures, and the saved / active / next split
//! (design.md §6, spec/protocol.md §5.8, §5.9, §6.4).
//!
//! - **saved** (NVRAM, kept across power cycles): one [`FunctionConfig`] per profile, what
//!   GET_PROFILE_CONFIG SAVED reports and what a profile starts from when it becomes active;
//! - **next** (NVRAM): the profile that becomes active at the next POST;
//! - **active** (runtime, rebuilt at every POST from the saved config of the next profile): what
//!   runs now; GET_PROFILE_CONFIG ACTIVE, GET_FUNC_CONFIG and QUERY_FIRMWARE_CONFIG report it.
//!   Changes flagged NOSV land here only and are lost at the next POST.

use oce_mailbox::commands::{
    DescriptorFlags, DescriptorVersion, FunctionMode, McType, NicDescriptor, PcieDescriptor, PfType, PortDescriptor,
    ResourceDescriptor,
};
use serde::{Deserialize, Serialize};

use crate::assumptions::{FACTORY_PROFILE_ID, PF_NUM, PROFILES, ProfileDefinition, nic_limits};

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
    /// PCIe `pf_type`: MISSION_NIC (1) or MISSION_RDMA (8) ([`PfType`]).
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
        PfType(self.pf_type).is_rdma()
    }

    /// QUERY_FIRMWARE_CONFIG `function_mode` for this configuration: NIC (0x2), plus RDMA (0x4)
    /// for a RoCE PF (design.md §6).
    pub fn function_mode(&self) -> FunctionMode {
        FunctionMode(if self.is_roce() { FunctionMode::NIC_RDMA } else { FunctionMode::NIC })
    }

    /// The PCIe v1 descriptor of the emulated PF.
    pub fn pcie_descriptor(&self) -> PcieDescriptor {
        PcieDescriptor {
            version: DescriptorVersion::V1,
            flags: DescriptorFlags(0),
            instance: 0,
            pf_num: PF_NUM,
            sriov_state: self.sriov_state,
            pf_state: self.pf_state,
            pf_type: PfType(self.pf_type),
            num_vfs: self.num_vfs,
            roles: 0,
        }
    }

    /// The NIC v1 descriptor of the emulated PF (`cap_flags` marked valid).
    pub fn nic_descriptor(&self) -> NicDescriptor {
        let n = &self.nic;
        NicDescriptor {
            version: DescriptorVersion::V1,
            flags: DescriptorFlags(DescriptorFlags::IF_CAPS_VALID),
            vf_num: 0,
            pf_num: PF_NUM,
            unicast_mac_count: n.unicast_mac_count,
            mcc_count: n.mcc_count,
            vlan_count: n.vlan_count,
            mcast_mac_count: n.mcast_mac_count,
            txq_count: n.txq_count,
            rq_count: n.rq_count,
            rssq_count: n.rssq_count,
            lro_count: n.lro_count,
            cq_count: n.cq_count,
            toe_conn_count: n.toe_conn_count,
            eq_count: n.eq_count,
            iface_count: n.iface_count,
            cap_flags: n.cap_flags,
            link_param: n.link_param,
            bw_min: n.bw_min,
            bw_max: n.bw_max,
            ..NicDescriptor::default()
        }
    }

    /// The PORT descriptor of the port the PF sits on.
    pub fn port_descriptor(&self) -> PortDescriptor {
        PortDescriptor { mc_type: McType::from_raw(self.mc_type), ..PortDescriptor::new(self.nic.link_param) }
    }

    /// PCIe v1, NIC v1 and PORT v1, as GET_PROFILE_CONFIG reports a profile (spec §8 item 6).
    pub fn profile_descriptors(&self) -> Vec<ResourceDescriptor> {
        vec![
            ResourceDescriptor::Pcie(self.pcie_descriptor()),
            ResourceDescriptor::Nic(self.nic_descriptor()),
            ResourceDescriptor::Port(self.port_descriptor()),
        ]
    }
}

/// Why a SET_PROFILE_CONFIG descriptor cannot be applied (answered as ILLEGAL_FIELD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rejected;

impl FunctionConfig {
    /// Applies one SET_PROFILE_CONFIG descriptor, all-ones fields meaning "leave unchanged"
    /// (spec/protocol.md §5.8). Accepted: a PCIe descriptor for this PF (`pf_num` 0 or
    /// PF_NUM_IGNORE 255) with `num_vfs` 0 (the emulator has no SR-IOV) and `pf_type` NIC or RDMA;
    /// a NIC descriptor for this PF; a NIC descriptor flagged VFT (the VF template, which the
    /// emulator has no VFs to apply to, so it changes nothing). Anything else is rejected.
    pub(crate) fn apply(&mut self, descriptor: &ResourceDescriptor) -> Result<(), Rejected> {
        const PF_NUM_IGNORE: u8 = 255;
        let ours = |pf_num: u8| pf_num == PF_NUM || pf_num == PF_NUM_IGNORE;
        match descriptor {
            ResourceDescriptor::Pcie(d) if ours(d.pf_num) => {
                if d.num_vfs != 0xFFFF && d.num_vfs != 0 {
                    return Err(Rejected);
                }
                if d.pf_type != PfType::UNCHANGED && !d.pf_type.is_nic() && !d.pf_type.is_rdma() {
                    return Err(Rejected);
                }
                set(&mut self.sriov_state, d.sriov_state, 0xFF);
                set(&mut self.pf_state, d.pf_state, 0xFF);
                set(&mut self.pf_type, d.pf_type.0, PfType::UNCHANGED.0);
                Ok(())
            }
            ResourceDescriptor::Nic(d) if d.is_vf_template() => Ok(()),
            ResourceDescriptor::Nic(d) if ours(d.pf_num) => {
                let n = &mut self.nic;
                let keep = NicDescriptor::UNCHANGED_COUNT;
                for (field, value) in [
                    (&mut n.unicast_mac_count, d.unicast_mac_count),
                    (&mut n.mcc_count, d.mcc_count),
                    (&mut n.vlan_count, d.vlan_count),
                    (&mut n.mcast_mac_count, d.mcast_mac_count),
                    (&mut n.txq_count, d.txq_count),
                    (&mut n.rq_count, d.rq_count),
                    (&mut n.rssq_count, d.rssq_count),
                    (&mut n.lro_count, d.lro_count),
                    (&mut n.cq_count, d.cq_count),
                    (&mut n.toe_conn_count, d.toe_conn_count),
                    (&mut n.eq_count, d.eq_count),
                    (&mut n.iface_count, d.iface_count),
                ] {
                    set(field, value, keep);
                }
                set(&mut n.bw_min, d.bw_min, u32::MAX);
                set(&mut n.bw_max, d.bw_max, u32::MAX);
                if d.flags.contains(DescriptorFlags::IF_CAPS_VALID) {
                    n.cap_flags = d.cap_flags;
                }
                Ok(())
            }
            _ => Err(Rejected),
        }
    }
}

/// `*field = value` unless `value` is the "leave unchanged" pattern.
fn set<T: PartialEq>(field: &mut T, value: T, unchanged: T) {
    if value != unchanged {
        *field = value;
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
            assert!(p.pf_type == PfType::MISSION_NIC.0 || p.pf_type == PfType::MISSION_RDMA.0);
            assert_eq!(p.name.contains("RoCE"), PfType(p.pf_type).is_rdma());
        }
        assert!(PROFILES.iter().filter(|p| PfType(p.pf_type).is_rdma()).count() >= 2);
    }

    #[test]
    fn function_mode_follows_pf_type() {
        let nic = FunctionConfig::factory(factory_profile());
        assert_eq!(nic.function_mode().0, 0x2);
        let roce = FunctionConfig::factory(PROFILES.iter().find(|p| PfType(p.pf_type).is_rdma()).unwrap());
        assert_eq!(roce.function_mode().0, 0x6);
        assert_eq!(roce.pcie_descriptor().pf_type, PfType::MISSION_RDMA);
        assert!(roce.nic.eq_count >= 2);
    }
}
