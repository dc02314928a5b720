//! Network interfaces and their filters: NTWK_INTERFACE_CREATE / DESTROY (COMMON 50 / 51),
//! NTWK_PMAC_ADD / DEL (COMMON 59 / 60), NTWK_RX_FILTER (COMMON 34) and NTWK_VLAN_CONFIG
//! (COMMON 4) (spec/protocol.md §5.0, §5.21; spec/be2net-driver.md §2 step 15, §4.1, §4.2).

use super::support::bit_flags;
use crate::command::{Command, Empty};
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

bit_flags! {
    /// Interface capability and filter flags (`BE_IF_FLAGS_*`, spec/protocol.md §5.21).
    IfFlags(u32) {
        /// Receive-side scaling.
        #[doc(alias = "BE_IF_FLAGS_RSS")]
        RSS = 0x4, "rss";
        /// Promiscuous.
        #[doc(alias = "BE_IF_FLAGS_PROMISCUOUS")]
        PROMISCUOUS = 0x8, "promiscuous";
        /// Broadcast frames.
        #[doc(alias = "BE_IF_FLAGS_BROADCAST")]
        BROADCAST = 0x10, "broadcast";
        /// Untagged frames.
        #[doc(alias = "BE_IF_FLAGS_UNTAGGED")]
        UNTAGGED = 0x20, "untagged";
        /// ULP.
        #[doc(alias = "BE_IF_FLAGS_ULP")]
        ULP = 0x40, "ulp";
        /// VLAN promiscuous.
        #[doc(alias = "BE_IF_FLAGS_VLAN_PROMISCUOUS")]
        VLAN_PROMISCUOUS = 0x80, "vlan_promiscuous";
        /// VLAN filtering.
        #[doc(alias = "BE_IF_FLAGS_VLAN")]
        VLAN = 0x100, "vlan";
        /// Multicast promiscuous.
        #[doc(alias = "BE_IF_FLAGS_MCAST_PROMISCUOUS")]
        MCAST_PROMISCUOUS = 0x200, "mcast_promiscuous";
        /// Pass frames with L2 errors.
        #[doc(alias = "BE_IF_FLAGS_PASS_L2_ERRORS")]
        PASS_L2_ERRORS = 0x400, "pass_l2_errors";
        /// Pass frames with L3/L4 errors.
        #[doc(alias = "BE_IF_FLAGS_PASS_L3L4_ERRORS")]
        PASS_L3L4_ERRORS = 0x800, "pass_l3l4_errors";
        /// Multicast filtering.
        #[doc(alias = "BE_IF_FLAGS_MULTICAST")]
        MULTICAST = 0x1000, "multicast";
        /// A default RSS queue.
        #[doc(alias = "BE_IF_FLAGS_DEFQ_RSS")]
        DEFQ_RSS = 0x0100_0000, "defq_rss";
    }
}

/// NTWK_INTERFACE_CREATE: embedded, 40 bytes (spec/protocol.md §5.21).
#[doc(alias = "be_cmd_req_if_create")]
#[doc(alias = "OPCODE_COMMON_NTWK_INTERFACE_CREATE")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IfCreate {
    /// `version` u32 @16 (be2net: 0).
    pub version: u32,
    /// `capability_flags` u32 @20: what the interface may ever do.
    pub capability_flags: IfFlags,
    /// `enable_flags` u32 @24: what it does from the start.
    pub enable_flags: IfFlags,
    /// `mac_addr` @28.
    pub mac: [u8; 6],
    /// `pmac_invalid` u8 @35: do not attach `mac` (be2net: 1).
    pub pmac_invalid: bool,
    /// `vlan_tag` u32 @36.
    pub vlan_tag: u32,
}

impl Wire for IfCreate {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("version", self.version)?;
        w.u32("capability_flags", self.capability_flags.0)?;
        w.u32("enable_flags", self.enable_flags.0)?;
        w.bytes("mac_addr", &self.mac)?;
        w.zeros("rsvd0", 1)?;
        w.u8("pmac_invalid", self.pmac_invalid.into())?;
        w.u32("vlan_tag", self.vlan_tag)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let version = r.u32("version")?;
        let capability_flags = IfFlags(r.u32("capability_flags")?);
        let enable_flags = IfFlags(r.u32("enable_flags")?);
        let mac = r.array("mac_addr")?;
        r.skip("rsvd0", 1)?;
        let pmac_invalid = r.u8("pmac_invalid")? != 0;
        let vlan_tag = r.u32("vlan_tag")?;
        Ok(Self { version, capability_flags, enable_flags, mac, pmac_invalid, vlan_tag })
    }
}

impl Command for IfCreate {
    const NAME: &'static str = "NTWK_INTERFACE_CREATE";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 50;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 40;
    type Response = IfCreated;
}

/// The NTWK_INTERFACE_CREATE response: `interface_id` u32 @16, `pmac_id` u32 @20.
#[doc(alias = "be_cmd_resp_if_create")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IfCreated {
    /// The new interface's handle.
    pub interface_id: u32,
    /// The MAC filter made from the request's MAC (meaningless with `pmac_invalid`).
    pub pmac_id: u32,
}

impl Wire for IfCreated {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("interface_id", self.interface_id)?;
        w.u32("pmac_id", self.pmac_id)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { interface_id: r.u32("interface_id")?, pmac_id: r.u32("pmac_id")? })
    }
}

/// NTWK_INTERFACE_DESTROY: embedded, 20 bytes, `interface_id` u32 @16.
#[doc(alias = "be_cmd_req_if_destroy")]
#[doc(alias = "OPCODE_COMMON_NTWK_INTERFACE_DESTROY")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IfDestroy {
    /// The interface.
    pub interface_id: u32,
}

impl Wire for IfDestroy {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("interface_id", self.interface_id)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { interface_id: r.u32("interface_id")? })
    }
}

impl Command for IfDestroy {
    const NAME: &'static str = "NTWK_INTERFACE_DESTROY";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 51;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = Empty;
}

/// NTWK_PMAC_ADD: embedded, 28 bytes; `if_id` u32 @16, `mac_address` @20.
#[doc(alias = "be_cmd_req_pmac_add")]
#[doc(alias = "OPCODE_COMMON_NTWK_PMAC_ADD")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PmacAdd {
    /// The interface.
    pub if_id: u32,
    /// The unicast MAC to accept.
    pub mac: [u8; 6],
}

impl Wire for PmacAdd {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("if_id", self.if_id)?;
        w.bytes("mac_address", &self.mac)?;
        w.zeros("rsvd0", 2)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { if_id: r.u32("if_id")?, mac: r.array("mac_address")? })
    }
}

impl Command for PmacAdd {
    const NAME: &'static str = "NTWK_PMAC_ADD";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 59;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 28;
    type Response = PmacAdded;
}

/// The NTWK_PMAC_ADD response: `pmac_id` u32 @16.
#[doc(alias = "be_cmd_resp_pmac_add")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PmacAdded {
    /// The new MAC filter's id.
    pub pmac_id: u32,
}

impl Wire for PmacAdded {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("pmac_id", self.pmac_id)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { pmac_id: r.u32("pmac_id")? })
    }
}

/// NTWK_PMAC_DEL: embedded, 24 bytes; `if_id` u32 @16, `pmac_id` u32 @20.
#[doc(alias = "be_cmd_req_pmac_del")]
#[doc(alias = "OPCODE_COMMON_NTWK_PMAC_DEL")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PmacDel {
    /// The interface.
    pub if_id: u32,
    /// The MAC filter.
    pub pmac_id: u32,
}

impl Wire for PmacDel {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("if_id", self.if_id)?;
        w.u32("pmac_id", self.pmac_id)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { if_id: r.u32("if_id")?, pmac_id: r.u32("pmac_id")? })
    }
}

impl Command for PmacDel {
    const NAME: &'static str = "NTWK_PMAC_DEL";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 60;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 24;
    type Response = Empty;
}

/// NTWK_RX_FILTER: non-embedded, 424 bytes (spec/be2net-driver.md §8.4): global flags and mask
/// @16/@20, interface flags and mask @24/@28, `if_id` @32, `mcast_num` @36, `mcast_mac[64]`
/// @40. Only the flags the mask selects change.
#[doc(alias = "be_cmd_req_rx_filter")]
#[doc(alias = "OPCODE_COMMON_NTWK_RX_FILTER")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RxFilter {
    /// `global_flags_mask` u32 @16.
    pub global_flags_mask: u32,
    /// `global_flags` u32 @20.
    pub global_flags: u32,
    /// `if_flags_mask` u32 @24: which interface flags this command sets or clears.
    pub if_flags_mask: IfFlags,
    /// `if_flags` u32 @28: their new values.
    pub if_flags: IfFlags,
    /// `if_id` u32 @32.
    pub if_id: u32,
    /// The multicast list (`mcast_num` u32 @36, 6-byte entries @40).
    pub mcast: Vec<[u8; 6]>,
}

impl RxFilter {
    /// Entries of the multicast list (`BE_MAX_MC`).
    #[doc(alias = "BE_MAX_MC")]
    pub const MAX_MCAST: usize = 64;
}

impl Wire for RxFilter {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.mcast.len() > Self::MAX_MCAST {
            let available = Self::MAX_MCAST * 6;
            return Err(WireError { field: "mcast_mac", offset: 40, needed: self.mcast.len() * 6, available });
        }
        w.u32("global_flags_mask", self.global_flags_mask)?;
        w.u32("global_flags", self.global_flags)?;
        w.u32("if_flags_mask", self.if_flags_mask.0)?;
        w.u32("if_flags", self.if_flags.0)?;
        w.u32("if_id", self.if_id)?;
        w.u32("mcast_num", self.mcast.len() as u32)?;
        self.mcast.iter().try_for_each(|mac| w.bytes("mcast_mac", mac))?;
        w.zeros("mcast_mac", (Self::MAX_MCAST - self.mcast.len()) * 6)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let global_flags_mask = r.u32("global_flags_mask")?;
        let global_flags = r.u32("global_flags")?;
        let if_flags_mask = IfFlags(r.u32("if_flags_mask")?);
        let if_flags = IfFlags(r.u32("if_flags")?);
        let if_id = r.u32("if_id")?;
        let count = r.u32("mcast_num")? as usize;
        if count > Self::MAX_MCAST {
            let available = Self::MAX_MCAST * 6;
            return Err(WireError { field: "mcast_num", offset: r.position(), needed: count * 6, available });
        }
        let mcast = (0..count).map(|_| r.array("mcast_mac")).collect::<Result<_, _>>()?;
        Ok(Self { global_flags_mask, global_flags, if_flags_mask, if_flags, if_id, mcast })
    }
}

impl Command for RxFilter {
    const NAME: &'static str = "NTWK_RX_FILTER";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 34;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = 424;
    type Response = Empty;
}

/// NTWK_VLAN_CONFIG: embedded, 148 bytes; `interface_id` u8 @16, `promiscuous` u8 @17,
/// `untagged` u8 @18, `num_vlan` u8 @19, `normal_vlan[64]` u16 @20 (spec/protocol.md §5.0).
#[doc(alias = "be_cmd_req_vlan_config")]
#[doc(alias = "OPCODE_COMMON_NTWK_VLAN_CONFIG")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VlanConfig {
    /// The interface (one byte on the wire).
    pub interface_id: u8,
    /// VLAN-promiscuous.
    pub promiscuous: bool,
    /// Accept untagged frames.
    pub untagged: bool,
    /// The VLAN ids to accept.
    pub vlans: Vec<u16>,
}

impl VlanConfig {
    /// Slots of the VLAN list (`BE_NUM_VLANS_SUPPORTED`).
    pub const MAX_VLANS: usize = 64;
}

impl Wire for VlanConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.vlans.len() > Self::MAX_VLANS {
            let available = Self::MAX_VLANS * 2;
            return Err(WireError { field: "normal_vlan", offset: 20, needed: self.vlans.len() * 2, available });
        }
        w.u8("interface_id", self.interface_id)?;
        w.u8("promiscuous", self.promiscuous.into())?;
        w.u8("untagged", self.untagged.into())?;
        w.u8("num_vlan", self.vlans.len() as u8)?;
        self.vlans.iter().try_for_each(|&v| w.u16("normal_vlan", v))?;
        w.zeros("normal_vlan", (Self::MAX_VLANS - self.vlans.len()) * 2)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let interface_id = r.u8("interface_id")?;
        let promiscuous = r.u8("promiscuous")? != 0;
        let untagged = r.u8("untagged")? != 0;
        let count = usize::from(r.u8("num_vlan")?);
        if count > Self::MAX_VLANS {
            let available = Self::MAX_VLANS * 2;
            return Err(WireError { field: "num_vlan", offset: r.position(), needed: count * 2, available });
        }
        let vlans = (0..count).map(|_| r.u16("normal_vlan")).collect::<Result<_, _>>()?;
        Ok(Self { interface_id, promiscuous, untagged, vlans })
    }
}

impl Command for VlanConfig {
    const NAME: &'static str = "NTWK_VLAN_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 4;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 148;
    type Response = Empty;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    const MAC: [u8; 6] = [0x00, 0x00, 0xC9, 0x12, 0x34, 0x56];

    #[test]
    fn if_create_and_destroy_golden_bytes() {
        let cmd = IfCreate {
            capability_flags: IfFlags(0x0100_1BBC),
            enable_flags: IfFlags(IfFlags::RSS | IfFlags::DEFQ_RSS),
            pmac_invalid: true,
            ..IfCreate::default()
        };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(
            hex::encode(&buf),
            concat!(
                "32010000000000001800000000000000", // 50, len 24, v0
                "00000000",                         // version
                "bc1b0001",                         // capability_flags
                "04000001",                         // enable_flags RSS | DEFQ_RSS
                "000000000000",                     // mac
                "00",
                "01",       // pmac_invalid
                "00000000", // vlan_tag
            )
        );
        assert_eq!(decode_request::<IfCreate>(&buf).unwrap().1, cmd);
        let rsp = hex::decode("320100000000000008000000080000000100000000000000").unwrap();
        assert_eq!(decode_response::<IfCreate>(&rsp).unwrap().1, IfCreated { interface_id: 1, pmac_id: 0 });
        let destroy = encode_request(&IfDestroy { interface_id: 1 }).unwrap();
        assert_eq!(hex::encode(destroy), "3301000000000000040000000000000001000000");
        assert_eq!(IfFlags(0x0100_1BBC).names().len(), 10);
    }

    #[test]
    fn pmac_golden_bytes() {
        let add = encode_request(&PmacAdd { if_id: 2, mac: MAC }).unwrap();
        // 59, len 12, v0; interface 2, the MAC, 2 reserved bytes.
        assert_eq!(hex::encode(&add), concat!("3b010000000000000c00000000000000", "02000000", "0000c9123456", "0000"));
        assert_eq!(decode_request::<PmacAdd>(&add).unwrap().1, PmacAdd { if_id: 2, mac: MAC });
        let rsp = hex::decode(concat!("3b010000000000000400000004000000", "09000000")).unwrap();
        assert_eq!(decode_response::<PmacAdd>(&rsp).unwrap().1, PmacAdded { pmac_id: 9 });
        let del = encode_request(&PmacDel { if_id: 2, pmac_id: 9 }).unwrap();
        assert_eq!(hex::encode(del), "3c0100000000000008000000000000000200000009000000");
    }

    #[test]
    fn rx_filter_golden_bytes() {
        let basic = IfFlags::BROADCAST | IfFlags::UNTAGGED | IfFlags::PASS_L3L4_ERRORS;
        let cmd = RxFilter {
            if_flags_mask: IfFlags(basic),
            if_flags: IfFlags(basic),
            if_id: 1,
            mcast: vec![[0x33, 0x33, 0, 0, 0, 1]],
            ..RxFilter::default()
        };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 424);
        assert_eq!(
            hex::encode(&buf[..46]),
            concat!(
                "22010000000000009801000000000000", // 34, len 408, v0
                "00000000",
                "00000000",
                "30080000", // if_flags_mask 0x830
                "30080000",
                "01000000", // if_id
                "01000000", // mcast_num
                "333300000001",
            )
        );
        assert_eq!(decode_request::<RxFilter>(&buf).unwrap().1, cmd);
        let mut bad = buf.clone();
        bad[36] = 65;
        assert_eq!(decode_request::<RxFilter>(&bad).unwrap_err().field, "mcast_num");
    }

    #[test]
    fn vlan_config_golden_bytes() {
        let cmd = VlanConfig { interface_id: 1, promiscuous: false, untagged: true, vlans: vec![10, 4094] };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 148);
        // 4, len 132, v0; interface 1, not promiscuous, untagged, 2 VLANs: 10, 4094.
        assert_eq!(hex::encode(&buf[..24]), concat!("04010000000000008400000000000000", "010001020a00fe0f"));
        assert_eq!(decode_request::<VlanConfig>(&buf).unwrap().1, cmd);
    }
}
