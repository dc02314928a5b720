//! The function personality: whether a state directory models the adapter's physical function
//! (PF) or one of its virtual functions (VF), and everything that differs between the two — PCI
//! device ID, SLI_INTF, the BAR map, privileges (spec/protocol.md §1.1, §1.3, §2.1, §5.19).
//!
//! | | PF | VF |
//! |---|---|---|
//! | device ID | 0x0720 (`OC_DEVICE_ID5`) | 0x0728 (`OC_DEVICE_ID6`) |
//! | SLI_INTF | 0xC0000F40 | 0xC0001F41 (if_type 1, FT 1) |
//! | doorbell BAR | BAR4 | BAR0 (mailbox at BAR0 + 0x160) |
//! | pcicfg shadow | BAR0 | BAR0 + 0x1000 (`SRIOV_VF_PCICFG_OFFSET`) |
//! | GET_FN_PRIVILEGES | 0x7FF | 0x1 |
//!
//! Profile, flash and other adapter-wide commands answer UNAUTHORIZED_REQUEST on a VF
//! ([`crate::assumptions::VF_REFUSED_OPCODES`]).

use serde::{Deserialize, Serialize};

use crate::assumptions::{PF_PRIVILEGES, SLI_INTF_PF, SLI_INTF_VF, VF_PRIVILEGES};

/// Skyhawk PF device ID (spec/protocol.md §1.1).
#[doc(alias = "OC_DEVICE_ID5")]
pub const PF_DEVICE_ID: u16 = 0x0720;
/// Skyhawk VF device ID (spec/protocol.md §1.1).
#[doc(alias = "OC_DEVICE_ID6")]
pub const VF_DEVICE_ID: u16 = 0x0728;

/// Which function of the adapter a state directory models.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FunctionType {
    /// The physical function (10df:0720): every command, BAR0 pcicfg + BAR4 doorbells.
    #[default]
    Pf,
    /// A virtual function (10df:0728): one BAR, default privileges only.
    Vf,
}

impl FunctionType {
    /// True for a virtual function.
    pub fn is_vf(self) -> bool {
        self == Self::Vf
    }

    /// PCI device ID (config 0x00 bits 31:16).
    pub fn device_id(self) -> u16 {
        match self {
            Self::Pf => PF_DEVICE_ID,
            Self::Vf => VF_DEVICE_ID,
        }
    }

    /// SLI_INTF (config 0x58).
    pub fn sli_intf(self) -> u32 {
        match self {
            Self::Pf => SLI_INTF_PF,
            Self::Vf => SLI_INTF_VF,
        }
    }

    /// GET_FN_PRIVILEGES mask.
    pub fn privileges(self) -> u32 {
        match self {
            Self::Pf => PF_PRIVILEGES,
            Self::Vf => VF_PRIVILEGES,
        }
    }

    /// `"pf"` or `"vf"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pf => "pf",
            Self::Vf => "vf",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pf_and_vf_personalities() {
        let (pf, vf) = (FunctionType::Pf, FunctionType::Vf);
        assert_eq!((pf.device_id(), pf.sli_intf(), pf.privileges()), (0x0720, 0xC000_0F40, 0x7FF));
        assert_eq!((vf.device_id(), vf.sli_intf(), vf.privileges()), (0x0728, 0xC000_1F41, 0x1));
    }
}
