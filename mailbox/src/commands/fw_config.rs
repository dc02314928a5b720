//! QUERY_FIRMWARE_CONFIG (COMMON 58): port number, ASIC revision and the function mode that says
//! whether RoCE is on.

use super::support::{bit_flags, empty_body};
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// QUERY_FIRMWARE_CONFIG: embedded v0, 140/140 bytes, body reserved (spec/protocol.md §5.3).
#[doc(alias = "be_cmd_req_query_fw_cfg")]
#[doc(alias = "OPCODE_COMMON_QUERY_FIRMWARE_CONFIG")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryFirmwareConfig;

empty_body!(QueryFirmwareConfig);

impl Command for QueryFirmwareConfig {
    const NAME: &'static str = "QUERY_FIRMWARE_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 58;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 140;
    type Response = FirmwareConfig;
}

bit_flags! {
    /// `function_mode` (and each ULP's `ulp_mode`): the protocols this PCI function runs
    /// (spec/protocol.md §5.3; names from FreeBSD oce_hw.h, four also in be2net).
    #[doc(alias = "CQFW_FUNCTION_MODES_SUPPORTED")]
    FunctionMode(u32) {
        /// TCP offload.
        #[doc(alias = "FNM_TOE_MODE")]
        TOE = 0x1, "toe";
        /// Raw Ethernet (NIC).
        #[doc(alias = "FNM_NIC_MODE")]
        NIC = 0x2, "nic";
        /// RDMA (RoCE): be2net registers the RoCE device only on Skyhawk with this bit (§6.2).
        #[doc(alias = "FNM_RDMA_MODE")]
        #[doc(alias = "RDMA_ENABLED")]
        RDMA = 0x4, "rdma";
        /// Virtual machines.
        #[doc(alias = "FNM_VM_MODE")]
        VM = 0x8, "vm";
        /// iSCSI initiator.
        #[doc(alias = "FNM_ISCSI_INI_MODE")]
        ISCSI_INITIATOR = 0x10, "iscsi_initiator";
        /// iSCSI target (plus initiator).
        #[doc(alias = "FNM_ISCSI_TGT_MODE")]
        ISCSI_TARGET = 0x20, "iscsi_target";
        /// FCoE initiator.
        #[doc(alias = "FNM_FCOE_INI_MODE")]
        FCOE_INITIATOR = 0x40, "fcoe_initiator";
        /// FCoE target.
        #[doc(alias = "FNM_FCOE_TGT_MODE")]
        FCOE_TARGET = 0x80, "fcoe_target";
        /// DAL.
        #[doc(alias = "FNM_DAL_MODE")]
        DAL = 0x100, "dal";
        /// LRO.
        #[doc(alias = "FNM_LRO_MODE")]
        LRO = 0x200, "lro";
        /// FLEX10 / QinQ (be2net `QNQ_MODE`, `FLEX10_MODE`).
        #[doc(alias = "FNM_FLEX10_MODE")]
        #[doc(alias = "QNQ_MODE")]
        FLEX10 = 0x400, "flex10";
        /// NC-SI.
        #[doc(alias = "FNM_NCSI_MODE")]
        NCSI = 0x800, "ncsi";
        /// IPv6 stack enabled.
        #[doc(alias = "FNM_IPV6_MODE")]
        IPV6 = 0x1000, "ipv6";
        /// BE2 compatibility.
        #[doc(alias = "FNM_BE2_COMPAT_MODE")]
        BE2_COMPAT = 0x2000, "be2_compat";
        /// Invalid.
        #[doc(alias = "FNM_INVALID_MODE")]
        INVALID = 0x8000, "invalid";
        /// BE3 compatibility.
        #[doc(alias = "FNM_BE3_COMPAT_MODE")]
        BE3_COMPAT = 0x10000, "be3_compat";
        /// IBM vNIC mode.
        #[doc(alias = "FNM_VNIC_MODE")]
        #[doc(alias = "VNIC_MODE")]
        VNIC = 0x20000, "vnic";
        /// VNTAG mode.
        #[doc(alias = "FNM_VNTAG_MODE")]
        VNTAG = 0x40000, "vntag";
        /// UMC default enabled.
        #[doc(alias = "FNM_UMC_DEF_EN")]
        UMC_DEFAULT = 0x100000, "umc_default";
        /// 1 Gb default.
        #[doc(alias = "FNM_ONE_GB_EN")]
        ONE_GB = 0x200000, "one_gb";
        /// VNIC default valid.
        #[doc(alias = "FNM_VNIC_DEF_VALID")]
        VNIC_DEFAULT_VALID = 0x400000, "vnic_default_valid";
        /// VNIC default enabled.
        #[doc(alias = "FNM_VNIC_DEF_EN")]
        VNIC_DEFAULT_ENABLED = 0x800000, "vnic_default_enabled";
        /// UMC (be2net `UMC_ENABLED`).
        #[doc(alias = "FNM_UMC_MODE")]
        #[doc(alias = "UMC_ENABLED")]
        UMC = 0x1000000, "umc";
    }
}

impl FunctionMode {
    /// be2net's name for bit 10 (the same bit as [`FunctionMode::FLEX10`]).
    pub const QNQ: u32 = Self::FLEX10;
    /// What an emulated RoCE-enabled NIC function reports: NIC | RDMA (spec §5.3).
    pub const NIC_RDMA: u32 = Self::NIC | Self::RDMA;

    /// True when the RDMA bit (0x4) is set: RoCE is enabled on this function.
    pub fn is_rdma(self) -> bool {
        self.contains(Self::RDMA)
    }
}

bit_flags! {
    /// `function_caps` (spec/protocol.md §5.3; be2net uses RSS and SUPER_NIC, FreeBSD lists more).
    FunctionCaps(u32) {
        /// Unclassified statistics.
        #[doc(alias = "FNC_UNCLASSIFIED_STATS")]
        UNCLASSIFIED_STATS = 0x1, "unclassified_stats";
        /// RSS.
        #[doc(alias = "BE_FUNCTION_CAPS_RSS")]
        RSS = 0x2, "rss";
        /// Promiscuous mode.
        PROMISCUOUS = 0x4, "promiscuous";
        /// Legacy mode.
        LEGACY_MODE = 0x8, "legacy_mode";
        /// Super-NIC profile.
        #[doc(alias = "BE_FUNCTION_CAPS_SUPER_NIC")]
        SUPER_NIC = 0x40, "super_nic";
        /// Header-data split.
        HDS = 0x4000, "hds";
        /// VMQ.
        VMQ = 0x10000, "vmq";
        /// NetQueue.
        NETQ = 0x20000, "netq";
        /// Queue groups.
        QGROUPS = 0x40000, "qgroups";
        /// LRO.
        LRO = 0x100000, "lro";
        /// VLAN offload.
        VLAN_OFFLOAD = 0x800000, "vlan_offload";
    }
}

/// One ULP's resource block: 13 × u32 = 52 bytes (spec/protocol.md §5.3, per F and O).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UlpResources {
    /// `ulp_mode`: the same bits as `function_mode`.
    pub ulp_mode: FunctionMode,
    /// `nic_wqid_base`.
    pub nic_wqid_base: u32,
    /// `nic_wq_tot`.
    pub nic_wq_tot: u32,
    /// `toe_wqid_base`.
    pub toe_wqid_base: u32,
    /// `toe_wq_tot`.
    pub toe_wq_tot: u32,
    /// `toe_rqid_base`.
    pub toe_rqid_base: u32,
    /// `toe_rq_tot`.
    pub toe_rq_tot: u32,
    /// `toe_defrqid_base`.
    pub toe_defrqid_base: u32,
    /// `toe_defrq_tot`.
    pub toe_defrq_tot: u32,
    /// `lro_rqid_base`.
    pub lro_rqid_base: u32,
    /// `lro_rqid_tot`.
    pub lro_rqid_tot: u32,
    /// `iscsi_icd_base`.
    pub iscsi_icd_base: u32,
    /// `iscsi_icd_count`.
    pub iscsi_icd_count: u32,
}

impl UlpResources {
    /// Bytes per block.
    pub const LEN: usize = 52;

    fn words(&self) -> [(&'static str, u32); 13] {
        [
            ("ulp_mode", self.ulp_mode.0),
            ("nic_wqid_base", self.nic_wqid_base),
            ("nic_wq_tot", self.nic_wq_tot),
            ("toe_wqid_base", self.toe_wqid_base),
            ("toe_wq_tot", self.toe_wq_tot),
            ("toe_rqid_base", self.toe_rqid_base),
            ("toe_rq_tot", self.toe_rq_tot),
            ("toe_defrqid_base", self.toe_defrqid_base),
            ("toe_defrq_tot", self.toe_defrq_tot),
            ("lro_rqid_base", self.lro_rqid_base),
            ("lro_rqid_tot", self.lro_rqid_tot),
            ("iscsi_icd_base", self.iscsi_icd_base),
            ("iscsi_icd_count", self.iscsi_icd_count),
        ]
    }
}

impl Wire for UlpResources {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        self.words().iter().try_for_each(|&(field, v)| w.u32(field, v))
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            ulp_mode: FunctionMode(r.u32("ulp_mode")?),
            nic_wqid_base: r.u32("nic_wqid_base")?,
            nic_wq_tot: r.u32("nic_wq_tot")?,
            toe_wqid_base: r.u32("toe_wqid_base")?,
            toe_wq_tot: r.u32("toe_wq_tot")?,
            toe_rqid_base: r.u32("toe_rqid_base")?,
            toe_rq_tot: r.u32("toe_rq_tot")?,
            toe_defrqid_base: r.u32("toe_defrqid_base")?,
            toe_defrq_tot: r.u32("toe_defrq_tot")?,
            lro_rqid_base: r.u32("lro_rqid_base")?,
            lro_rqid_tot: r.u32("lro_rqid_tot")?,
            iscsi_icd_base: r.u32("iscsi_icd_base")?,
            iscsi_icd_count: r.u32("iscsi_icd_count")?,
        })
    }
}

/// The QUERY_FIRMWARE_CONFIG response as be2net sizes it (140 bytes; F, O and ocrdma define
/// longer ones, whose tail ocetool does not read).
#[doc(alias = "be_cmd_resp_query_fw_cfg")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FirmwareConfig {
    /// `be_config_number` u32 @16 (F lists meanings such as 0xC = NIC+RDMA+iSCSI; whether Skyhawk
    /// still reports them is unknown, spec §5.3).
    pub config_number: u32,
    /// `asic_revision` u32 @20; be2net keeps the low byte (see [`FirmwareConfig::asic_rev`]).
    pub asic_revision: u32,
    /// `phys_port` u32 @24: be2net's `port_num`.
    pub phys_port: u32,
    /// `function_mode` u32 @28.
    pub function_mode: FunctionMode,
    /// The resource blocks of ULP 0 (@32) and ULP 1 (@84).
    pub ulp: [UlpResources; 2],
    /// `function_caps` u32 @136.
    pub function_caps: FunctionCaps,
}

impl FirmwareConfig {
    /// The ASIC revision as be2net uses it for the UFI compatibility check: the low byte of
    /// `asic_revision` (spec §5.3, §5.14).
    pub fn asic_rev(&self) -> u8 {
        self.asic_revision as u8
    }
}

impl Wire for FirmwareConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("be_config_number", self.config_number)?;
        w.u32("asic_revision", self.asic_revision)?;
        w.u32("phys_port", self.phys_port)?;
        w.u32("function_mode", self.function_mode.0)?;
        self.ulp.iter().try_for_each(|u| u.encode(w))?;
        w.u32("function_caps", self.function_caps.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            config_number: r.u32("be_config_number")?,
            asic_revision: r.u32("asic_revision")?,
            phys_port: r.u32("phys_port")?,
            function_mode: FunctionMode(r.u32("function_mode")?),
            ulp: [UlpResources::decode(r)?, UlpResources::decode(r)?],
            function_caps: FunctionCaps(r.u32("function_caps")?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};

    /// A response with every field distinct, written from the §5.3 offsets.
    fn response() -> Vec<u8> {
        let mut hex = String::from(concat!(
            "3a010000", "00000000", "7c000000", "7c000000", // opcode 58, response_length 124
            "0c000000", // @16 be_config_number 0xC
            "10000004", // @20 asic_revision 0x04000010 (low byte 0x10)
            "01000000", // @24 phys_port 1
            "06000000", // @28 function_mode NIC | RDMA
        ));
        // @32 ULP[0]: ulp_mode 0x6, then 1..=12; @84 ULP[1]: ulp_mode 0x10, then 101..=112.
        for (mode, base) in [(6u32, 0u32), (0x10, 100)] {
            hex += &hex::encode(mode.to_le_bytes());
            for i in 1..=12u32 {
                hex += &hex::encode((base + i).to_le_bytes());
            }
        }
        hex += "42000000"; // @136 function_caps RSS | SUPER_NIC
        hex::decode(hex).unwrap()
    }

    #[test]
    fn request_golden_bytes() {
        let buf = encode_request(&QueryFirmwareConfig).unwrap();
        assert_eq!(buf.len(), 140);
        // opcode 58 (0x3a), subsystem 1, request_length 124 (0x7c), version 0.
        assert_eq!(hex::encode(&buf[..16]), "3a010000000000007c00000000000000");
        assert!(buf[16..].iter().all(|&b| b == 0));
    }

    #[test]
    fn response_golden_offsets() {
        let buf = response();
        assert_eq!(buf.len(), 140);
        let (_, c) = decode_response::<QueryFirmwareConfig>(&buf).unwrap();
        assert_eq!((c.config_number, c.asic_revision, c.asic_rev(), c.phys_port), (0xC, 0x0400_0010, 0x10, 1));
        assert!(c.function_mode.is_rdma());
        assert_eq!(c.function_mode.names(), ["nic", "rdma"]);
        assert_eq!(c.ulp[0].ulp_mode, FunctionMode(6));
        assert_eq!((c.ulp[0].nic_wqid_base, c.ulp[0].iscsi_icd_count), (1, 12));
        assert_eq!((c.ulp[1].ulp_mode.0, c.ulp[1].nic_wqid_base, c.ulp[1].iscsi_icd_count), (0x10, 101, 112));
        assert!(c.function_caps.contains(FunctionCaps::RSS | FunctionCaps::SUPER_NIC));
        let mut out = vec![0u8; 140];
        c.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(out[16..], buf[16..]);
    }

    #[test]
    fn function_mode_keeps_unknown_bits() {
        let m = FunctionMode(0x0200_4002);
        assert!(!m.is_rdma());
        assert_eq!(m.names(), ["nic"]);
        assert_eq!(m.unknown_bits(), 0x0200_4000);
        assert_eq!(FunctionMode(FunctionMode::NIC_RDMA).0, 0x6);
        assert_eq!(FunctionMode::QNQ, 0x400);
    }

    #[test]
    fn truncated_response_names_the_field() {
        let mut buf = response();
        buf[8] = 122; // two bytes short of function_caps
        let err = decode_response::<QueryFirmwareConfig>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("function_caps", 136, 4, 2));
        buf[8] = 24; // ULP[0] cut after two words
        let err = decode_response::<QueryFirmwareConfig>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset), ("nic_wq_tot", 40));
    }
}
