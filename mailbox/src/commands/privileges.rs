//! GET_FN_PRIVILEGES (COMMON 170): the calling function's privilege mask.

use super::support::{bit_flags, empty_body};
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// GET_FN_PRIVILEGES: embedded, 20/20 bytes, body reserved (spec/protocol.md §5.19).
#[doc(alias = "be_cmd_req_get_fn_privileges")]
#[doc(alias = "OPCODE_COMMON_GET_FN_PRIVILEGES")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetFnPrivileges;

empty_body!(GetFnPrivileges);

impl Command for GetFnPrivileges {
    const NAME: &'static str = "GET_FN_PRIVILEGES";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 170;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = FnPrivileges;
}

bit_flags! {
    /// `privilege_mask` u32 @16 of the GET_FN_PRIVILEGES response (spec/protocol.md §5.19, be.h).
    #[doc(alias = "be_cmd_resp_get_fn_privileges")]
    FnPrivileges(u32) {
        /// Default privileges.
        #[doc(alias = "BE_PRIV_DEFAULT")]
        DEFAULT = 0x1, "default";
        /// Query the link.
        #[doc(alias = "BE_PRIV_LNKQUERY")]
        LNK_QUERY = 0x2, "lnkquery";
        /// Read link statistics.
        #[doc(alias = "BE_PRIV_LNKSTATS")]
        LNK_STATS = 0x4, "lnkstats";
        /// Manage the link.
        #[doc(alias = "BE_PRIV_LNKMGMT")]
        LNK_MGMT = 0x8, "lnkmgmt";
        /// Link diagnostics.
        #[doc(alias = "BE_PRIV_LNKDIAG")]
        LNK_DIAG = 0x10, "lnkdiag";
        /// Utility queries.
        #[doc(alias = "BE_PRIV_UTILQUERY")]
        UTIL_QUERY = 0x20, "utilquery";
        /// Filter management.
        #[doc(alias = "BE_PRIV_FILTMGMT")]
        FILT_MGMT = 0x40, "filtmgmt";
        /// Interface management.
        #[doc(alias = "BE_PRIV_IFACEMGMT")]
        IFACE_MGMT = 0x80, "ifacemgmt";
        /// Virtual-host administration.
        #[doc(alias = "BE_PRIV_VHADM")]
        VH_ADM = 0x100, "vhadm";
        /// Device configuration.
        #[doc(alias = "BE_PRIV_DEVCFG")]
        DEV_CFG = 0x200, "devcfg";
        /// Device security.
        #[doc(alias = "BE_PRIV_DEVSEC")]
        DEV_SEC = 0x400, "devsec";
    }
}

impl FnPrivileges {
    /// What be2net assumes for a PF before asking: VHADM | DEVCFG | DEVSEC (spec §5.19).
    pub const PF_DEFAULT: u32 = Self::VH_ADM | Self::DEV_CFG | Self::DEV_SEC;
    /// The mask that lets a function send GET_PHY_DETAILS and other link-management commands
    /// (any one bit suffices, spec §5.19).
    pub const LINK_MANAGEMENT: u32 = Self::LNK_MGMT | Self::PF_DEFAULT;

    /// True when any bit of `allowed` is set: be2net's gate for privileged commands (§5.19).
    pub fn allows(self, allowed: u32) -> bool {
        self.intersects(allowed)
    }
}

impl Wire for FnPrivileges {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("privilege_mask", self.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self(r.u32("privilege_mask")?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};

    #[test]
    fn request_golden_bytes() {
        let buf = encode_request(&GetFnPrivileges).unwrap();
        // opcode 170 (0xaa), subsystem 1, request_length 4, version 0, reserved dword @16.
        assert_eq!(hex::encode(&buf), "aa01000000000000040000000000000000000000");
    }

    #[test]
    fn response_golden_bytes() {
        let buf = hex::decode(concat!(
            "aa010000", // opcode 170, subsystem 1
            "00000000", // base/additional status 0
            "04000000", // response_length 4
            "04000000", // actual_resp_len 4
            "ff070000", // @16 privilege_mask 0x7ff
        ))
        .unwrap();
        let (_, p) = decode_response::<GetFnPrivileges>(&buf).unwrap();
        assert_eq!(p, FnPrivileges(0x7ff));
        assert!(p.allows(FnPrivileges::LINK_MANAGEMENT));
        assert_eq!(p.names().len(), 11);
        assert_eq!(FnPrivileges(0x700).names(), ["vhadm", "devcfg", "devsec"]);
        assert!(!FnPrivileges(0x1).allows(FnPrivileges::LINK_MANAGEMENT));
        let mut out = [0u8; 20];
        p.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &buf[16..]);
    }

    #[test]
    fn truncated_response_names_the_field() {
        let buf = hex::decode("aa010000000000000200000004000000ff070000").unwrap();
        let err = decode_response::<GetFnPrivileges>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("privilege_mask", 16, 4, 2));
    }
}
