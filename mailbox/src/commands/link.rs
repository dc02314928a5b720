//! Link and PHY state: LINK_STATUS_QUERY (COMMON 5) and GET_PHY_DETAILS (COMMON 102).

use super::support::{bit_flags, code_enum, empty_body, jump};
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// LINK_STATUS_QUERY: embedded, version 1 (not BE2), request 20 bytes with one reserved dword,
/// response 28 bytes (spec/protocol.md §5.16).
#[doc(alias = "be_cmd_req_link_status")]
#[doc(alias = "OPCODE_COMMON_NTWK_LINK_STATUS_QUERY")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkStatusQuery;

empty_body!(LinkStatusQuery);

impl Command for LinkStatusQuery {
    const NAME: &'static str = "NTWK_LINK_STATUS_QUERY";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 5;
    const VERSION: u8 = 1;
    const EMBEDDED: bool = true;
    const LEN: usize = 28;
    type Response = LinkStatus;
}

code_enum! {
    /// `mac_speed` codes of LINK_STATUS_QUERY (spec/protocol.md §5.16, be_cmds.h).
    MacSpeed(u8) {
        /// No link.
        #[doc(alias = "PHY_LINK_SPEED_ZERO")]
        None = 0, "none";
        /// 10 Mb/s.
        #[doc(alias = "PHY_LINK_SPEED_10MBPS")]
        Mbps10 = 1, "10M";
        /// 100 Mb/s.
        #[doc(alias = "PHY_LINK_SPEED_100MBPS")]
        Mbps100 = 2, "100M";
        /// 1 Gb/s.
        #[doc(alias = "PHY_LINK_SPEED_1GBPS")]
        Gbps1 = 3, "1G";
        /// 10 Gb/s.
        #[doc(alias = "PHY_LINK_SPEED_10GBPS")]
        Gbps10 = 4, "10G";
        /// 20 Gb/s.
        #[doc(alias = "PHY_LINK_SPEED_20GBPS")]
        Gbps20 = 5, "20G";
        /// 25 Gb/s.
        #[doc(alias = "PHY_LINK_SPEED_25GBPS")]
        Gbps25 = 6, "25G";
        /// 40 Gb/s.
        #[doc(alias = "PHY_LINK_SPEED_40GBPS")]
        Gbps40 = 7, "40G";
    }
}

impl MacSpeed {
    /// The speed in Mb/s; `None` for no link or an unknown code.
    pub fn mbps(self) -> Option<u32> {
        match self {
            Self::Mbps10 => Some(10),
            Self::Mbps100 => Some(100),
            Self::Gbps1 => Some(1_000),
            Self::Gbps10 => Some(10_000),
            Self::Gbps20 => Some(20_000),
            Self::Gbps25 => Some(25_000),
            Self::Gbps40 => Some(40_000),
            Self::None | Self::Unknown(_) => None,
        }
    }
}

/// The LINK_STATUS_QUERY v1 response (spec/protocol.md §5.16).
#[doc(alias = "be_cmd_resp_link_status")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStatus {
    /// `physical_port` u8 @16: bits 5:0 port number, bits 7:6 port type (F, ocrdma).
    pub physical_port: u8,
    /// `mac_duplex` u8 @17.
    pub mac_duplex: u8,
    /// `mac_speed` u8 @18.
    pub mac_speed: MacSpeed,
    /// `mac_fault` u8 @19.
    pub mac_fault: u8,
    /// `mgmt_mac_duplex` u8 @20.
    pub mgmt_mac_duplex: u8,
    /// `mgmt_mac_speed` u8 @21 (raw; the spec does not say it uses the `mac_speed` codes).
    pub mgmt_mac_speed: u8,
    /// `link_speed` u16 @22, in units of 10 Mb/s; 0 = not reported.
    pub link_speed: u16,
    /// The dword @24: bits 7:0 `logical_link_status` (0 down, 1 up); F and ocrdma put
    /// flow-control information in bits 10:8. Kept whole.
    pub logical_link_status: u32,
}

impl LinkStatus {
    /// Logical link up.
    pub const LINK_UP: u8 = 1;

    /// Port number, bits 5:0 of `physical_port`.
    pub fn port_number(&self) -> u8 {
        self.physical_port & 0x3F
    }

    /// Port type, bits 7:6 of `physical_port`.
    pub fn port_type(&self) -> u8 {
        self.physical_port >> 6
    }

    /// True when `logical_link_status` says up.
    pub fn is_link_up(&self) -> bool {
        self.logical_link_status as u8 == Self::LINK_UP
    }

    /// Bits 10:8 of the dword @24 (flow control per F and ocrdma).
    pub fn flow_control(&self) -> u8 {
        ((self.logical_link_status >> 8) & 0x7) as u8
    }

    /// The link speed in Mb/s as be2net computes it: `link_speed × 10` when non-zero, else the
    /// `mac_speed` code; `None` when neither reports a speed.
    pub fn speed_mbps(&self) -> Option<u32> {
        if self.link_speed != 0 { Some(u32::from(self.link_speed) * 10) } else { self.mac_speed.mbps() }
    }
}

impl Wire for LinkStatus {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("physical_port", self.physical_port)?;
        w.u8("mac_duplex", self.mac_duplex)?;
        w.u8("mac_speed", self.mac_speed.raw())?;
        w.u8("mac_fault", self.mac_fault)?;
        w.u8("mgmt_mac_duplex", self.mgmt_mac_duplex)?;
        w.u8("mgmt_mac_speed", self.mgmt_mac_speed)?;
        w.u16("link_speed", self.link_speed)?;
        w.u32("logical_link_status", self.logical_link_status)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            physical_port: r.u8("physical_port")?,
            mac_duplex: r.u8("mac_duplex")?,
            mac_speed: MacSpeed::from_raw(r.u8("mac_speed")?),
            mac_fault: r.u8("mac_fault")?,
            mgmt_mac_duplex: r.u8("mgmt_mac_duplex")?,
            mgmt_mac_speed: r.u8("mgmt_mac_speed")?,
            link_speed: r.u16("link_speed")?,
            logical_link_status: r.u32("logical_link_status")?,
        })
    }
}

/// GET_PHY_DETAILS: non-embedded v0, 40-byte buffer, body reserved (spec/protocol.md §5.11).
/// be2net sends it only when the privilege mask allows link management (§5.19).
#[doc(alias = "be_cmd_req_get_phy_info")]
#[doc(alias = "OPCODE_COMMON_GET_PHY_DETAILS")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetPhyDetails;

empty_body!(GetPhyDetails);

impl Command for GetPhyDetails {
    const NAME: &'static str = "GET_PHY_DETAILS";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 102;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = 40;
    type Response = PhyDetails;
}

code_enum! {
    /// `interface_type` of GET_PHY_DETAILS: be2net's `PHY_TYPE_*` list (spec/protocol.md §5.11).
    PhyInterface(u16) {
        /// CX4, 10G.
        #[doc(alias = "PHY_TYPE_CX4_10GB")]
        Cx4_10G = 0, "CX4 10G";
        /// XFP, 10G.
        #[doc(alias = "PHY_TYPE_XFP_10GB")]
        Xfp10G = 1, "XFP 10G";
        /// SFP, 1G.
        #[doc(alias = "PHY_TYPE_SFP_1GB")]
        Sfp1G = 2, "SFP 1G";
        /// SFP+, 10G.
        #[doc(alias = "PHY_TYPE_SFP_PLUS_10GB")]
        SfpPlus10G = 3, "SFP+ 10G";
        /// KR backplane, 10G.
        #[doc(alias = "PHY_TYPE_KR_10GB")]
        Kr10G = 4, "KR 10G";
        /// KX4 backplane, 10G.
        #[doc(alias = "PHY_TYPE_KX4_10GB")]
        Kx4_10G = 5, "KX4 10G";
        /// BASE-T, 10G.
        #[doc(alias = "PHY_TYPE_BASET_10GB")]
        BaseT10G = 6, "BASE-T 10G";
        /// BASE-T, 1G.
        #[doc(alias = "PHY_TYPE_BASET_1GB")]
        BaseT1G = 7, "BASE-T 1G";
        /// BASE-X, 1G.
        #[doc(alias = "PHY_TYPE_BASEX_1GB")]
        BaseX1G = 8, "BASE-X 1G";
        /// SGMII.
        #[doc(alias = "PHY_TYPE_SGMII")]
        Sgmii = 9, "SGMII";
        /// QSFP.
        #[doc(alias = "PHY_TYPE_QSFP")]
        Qsfp = 10, "QSFP";
        /// KR4 backplane, 40G.
        #[doc(alias = "PHY_TYPE_KR4_40GB")]
        Kr4_40G = 11, "KR4 40G";
        /// KR2 backplane, 20G.
        #[doc(alias = "PHY_TYPE_KR2_20GB")]
        Kr2_20G = 12, "KR2 20G";
        /// TN 8022.
        #[doc(alias = "PHY_TYPE_TN_8022")]
        Tn8022 = 13, "TN 8022";
        /// The PHY is disabled.
        #[doc(alias = "PHY_TYPE_DISABLED")]
        Disabled = 255, "disabled";
    }
}

bit_flags! {
    /// A set of PHY speeds (`auto_speeds_supported`, `fixed_speeds_supported`; spec §5.11).
    PhySpeeds(u16) {
        /// 10 Mb/s.
        #[doc(alias = "BE_SUPPORTED_SPEED_10MBPS")]
        SPEED_10M = 0x1, "10M";
        /// 100 Mb/s.
        #[doc(alias = "BE_SUPPORTED_SPEED_100MBPS")]
        SPEED_100M = 0x2, "100M";
        /// 1 Gb/s.
        #[doc(alias = "BE_SUPPORTED_SPEED_1GBPS")]
        SPEED_1G = 0x4, "1G";
        /// 10 Gb/s.
        #[doc(alias = "BE_SUPPORTED_SPEED_10GBPS")]
        SPEED_10G = 0x8, "10G";
        /// 20 Gb/s.
        #[doc(alias = "BE_SUPPORTED_SPEED_20GBPS")]
        SPEED_20G = 0x10, "20G";
        /// 40 Gb/s.
        #[doc(alias = "BE_SUPPORTED_SPEED_40GBPS")]
        SPEED_40G = 0x20, "40G";
    }
}

/// The GET_PHY_DETAILS response (spec/protocol.md §5.11). The 8 bytes of "future use" @32 are
/// not read, so a response of 16 body bytes suffices.
#[doc(alias = "be_cmd_resp_get_phy_info")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhyDetails {
    /// `phy_type` u16 @16: PHY vendor/type code, not interpreted by be2net.
    pub phy_type: u16,
    /// `interface_type` u16 @18.
    pub interface_type: PhyInterface,
    /// `misc_params` u32 @20.
    pub misc_params: u32,
    /// `ext_phy_details` u16 @24.
    pub ext_phy_details: u16,
    /// `auto_speeds_supported` u16 @28.
    pub auto_speeds: PhySpeeds,
    /// `fixed_speeds_supported` u16 @30.
    pub fixed_speeds: PhySpeeds,
}

impl Wire for PhyDetails {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("phy_type", self.phy_type)?;
        w.u16("interface_type", self.interface_type.raw())?;
        w.u32("misc_params", self.misc_params)?;
        w.u16("ext_phy_details", self.ext_phy_details)?;
        w.zeros("rsvd", 2)?;
        w.u16("auto_speeds_supported", self.auto_speeds.0)?;
        w.u16("fixed_speeds_supported", self.fixed_speeds.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let phy_type = r.u16("phy_type")?;
        let interface_type = PhyInterface::from_raw(r.u16("interface_type")?);
        let misc_params = r.u32("misc_params")?;
        let ext_phy_details = r.u16("ext_phy_details")?;
        jump(r, 28);
        let auto_speeds = PhySpeeds(r.u16("auto_speeds_supported")?);
        let fixed_speeds = PhySpeeds(r.u16("fixed_speeds_supported")?);
        Ok(Self { phy_type, interface_type, misc_params, ext_phy_details, auto_speeds, fixed_speeds })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};

    const LINK_RSP: &str = concat!(
        "05010000", "00000000", "0c000000", "0c000000", // opcode 5, subsystem 1, response_length 12
        "41",       // @16 physical_port: port 1, type 1
        "02",       // @17 mac_duplex
        "04",       // @18 mac_speed 4 = 10G
        "00",       // @19 mac_fault
        "00",       // @20 mgmt_mac_duplex
        "00",       // @21 mgmt_mac_speed
        "e803",     // @22 link_speed 1000 × 10 Mb/s
        "01020000", // @24 logical_link_status 1 (up), flow-control bits 10:8 = 2
    );

    #[test]
    fn link_status_golden_bytes() {
        let buf = encode_request(&LinkStatusQuery).unwrap();
        // opcode 5, request_length 12, version 1; body reserved.
        assert_eq!(
            hex::encode(&buf),
            concat!("05010000", "00000000", "0c000000", "01000000", "0000000000000000", "00000000")
        );
        let rsp = hex::decode(LINK_RSP).unwrap();
        let (_, s) = decode_response::<LinkStatusQuery>(&rsp).unwrap();
        assert_eq!((s.port_number(), s.port_type()), (1, 1));
        assert_eq!(s.mac_speed, MacSpeed::Gbps10);
        assert!(s.is_link_up());
        assert_eq!(s.flow_control(), 2);
        assert_eq!(s.speed_mbps(), Some(10_000));
        let mut out = [0u8; 28];
        s.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &rsp[16..]);
    }

    #[test]
    fn speed_prefers_link_speed_then_mac_speed() {
        let rsp = hex::decode(LINK_RSP).unwrap();
        let (_, mut s) = decode_response::<LinkStatusQuery>(&rsp).unwrap();
        s.link_speed = 2500;
        assert_eq!(s.speed_mbps(), Some(25_000));
        s.link_speed = 0;
        s.mac_speed = MacSpeed::Gbps40;
        assert_eq!(s.speed_mbps(), Some(40_000));
        s.mac_speed = MacSpeed::from_raw(9);
        assert_eq!(s.mac_speed, MacSpeed::Unknown(9));
        assert_eq!(s.speed_mbps(), None);
        s.mac_speed = MacSpeed::None;
        assert_eq!(s.speed_mbps(), None);
    }

    #[test]
    fn link_status_truncated() {
        let mut rsp = hex::decode(LINK_RSP).unwrap();
        rsp[8] = 10;
        let err = decode_response::<LinkStatusQuery>(&rsp).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("logical_link_status", 24, 4, 2));
    }

    const PHY_RSP: &str = concat!(
        "66010000",
        "00000000",
        "18000000",
        "18000000",         // opcode 102, response_length 24
        "3412",             // @16 phy_type 0x1234
        "0300",             // @18 interface_type 3 = SFP+ 10G
        "78563412",         // @20 misc_params
        "cdab",             // @24 ext_phy_details
        "0000",             // @26 reserved
        "0c00",             // @28 auto speeds 1G | 10G
        "0800",             // @30 fixed speeds 10G
        "0000000000000000", // @32 future use
    );

    #[test]
    fn phy_details_golden_bytes() {
        let buf = encode_request(&GetPhyDetails).unwrap();
        assert_eq!(buf.len(), 40);
        // opcode 102 (0x66), request_length 24, version 0.
        assert_eq!(hex::encode(&buf[..16]), "66010000000000001800000000000000");
        let rsp = hex::decode(PHY_RSP).unwrap();
        let (_, p) = decode_response::<GetPhyDetails>(&rsp).unwrap();
        assert_eq!(p.phy_type, 0x1234);
        assert_eq!(p.interface_type, PhyInterface::SfpPlus10G);
        assert_eq!(p.interface_type.to_string(), "SFP+ 10G");
        assert_eq!((p.misc_params, p.ext_phy_details), (0x1234_5678, 0xabcd));
        assert_eq!(p.auto_speeds.names(), ["1G", "10G"]);
        assert!(p.fixed_speeds.contains(PhySpeeds::SPEED_10G));
        let mut out = [0u8; 40];
        p.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &rsp[16..]);
        assert_eq!(PhyInterface::from_raw(255), PhyInterface::Disabled);
        assert_eq!(PhyInterface::from_raw(14), PhyInterface::Unknown(14));
    }

    #[test]
    fn phy_details_truncated() {
        let mut rsp = hex::decode(PHY_RSP).unwrap();
        rsp[8] = 14;
        let err = decode_response::<GetPhyDetails>(&rsp).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("fixed_speeds_supported", 30, 2, 0));
    }
}
