//! DCBX GET_CONFIG (DCBX subsystem 0x10, opcode 1): the adapter's DCBX state, PFC priorities and
//! application priority table, as ocrdma reads them to choose the RoCE service level
//! (`ocrdma_mbx_get_dcbx_config` and `ocrdma_parse_dcbxcfg_rsp` in ocrdma_hw.c, the layout in
//! ocrdma_sli.h; spec/be2net-driver.md §5.2 step 10).
//!
//! ocrdma converts the whole response from little-endian dwords and then reads `pfc_prio` and
//! `app_prio` byte by byte, so on the wire byte `i` of each 8-byte priority field is priority `i`.

use super::support::{bit_flags, code_enum};
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// The ethertype of RoCE (v1) frames, `ETH_P_IBOE` in if_ether.h: the application priority
/// entry ocrdma looks for.
#[doc(alias = "ETH_P_IBOE")]
pub const ROCE_ETHERTYPE: u16 = 0x8915;

/// The service level ocrdma uses when DCBX gives none (`OCRDMA_DEFAULT_SERVICE_LEVEL`,
/// ocrdma_hw.c).
#[doc(alias = "OCRDMA_DEFAULT_SERVICE_LEVEL")]
pub const DEFAULT_SERVICE_LEVEL: u8 = 5;

/// Number of 802.1p priorities; the per-priority byte arrays have one byte each
/// (`OCRDMA_MAX_SERVICE_LEVEL_INDEX`).
#[doc(alias = "OCRDMA_MAX_SERVICE_LEVEL_INDEX")]
pub const PRIORITIES: usize = 8;

/// Entries in the application priority table (`app_param[15]` in `ocrdma_dcbx_cfg`).
pub const APP_ENTRIES: usize = 15;

code_enum! {
    /// `param_type` of the request: which copy of the configuration (`OCRDMA_DCBX_PARAM_TYPE`).
    DcbxParamType(u32) {
        /// What the administrator configured on the adapter.
        #[doc(alias = "OCRDMA_PARAMETER_TYPE_ADMIN")]
        Admin = 0, "admin";
        /// What is in force after negotiation with the switch.
        #[doc(alias = "OCRDMA_PARAMETER_TYPE_OPER")]
        Operational = 1, "operational";
        /// What the link partner advertised.
        #[doc(alias = "OCRDMA_PARAMETER_TYPE_PEER")]
        Peer = 2, "peer";
    }
}

/// GET_CONFIG: non-embedded, version 0, one 328-byte buffer (the larger of the 20-byte request
/// and the 328-byte response); `param_type` u32 @16.
#[doc(alias = "ocrdma_get_dcbx_cfg_req")]
#[doc(alias = "OCRDMA_CMD_GET_DCBX_CONFIG")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetDcbxConfig {
    /// Which copy to read.
    pub param_type: DcbxParamType,
}

impl Wire for GetDcbxConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("param_type", self.param_type.raw())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { param_type: DcbxParamType::from_raw(r.u32("param_type")?) })
    }
}

impl Command for GetDcbxConfig {
    const NAME: &'static str = "DCBX_GET_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Dcbx;
    const OPCODE: u8 = 1;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = 328;
    type Response = DcbxConfig;
}

bit_flags! {
    /// The state word of one DCBX feature (PFC, traffic classes, QCN, application priority,
    /// logical link): `OCRDMA_DCBX_STATE_FLAGS`.
    DcbxFeatureState(u32) {
        /// The feature is on.
        #[doc(alias = "OCRDMA_STATE_FLAG_ENABLED")]
        ENABLED = 0x1, "enabled";
        /// The adapter advertises it to the link partner.
        #[doc(alias = "OCRDMA_STATE_FLAG_ADDVERTISED")]
        ADVERTISED = 0x2, "advertised";
        /// The adapter accepts the link partner's configuration.
        #[doc(alias = "OCRDMA_STATE_FLAG_WILLING")]
        WILLING = 0x4, "willing";
        /// The adapter's and the link partner's configurations agree.
        #[doc(alias = "OCRDMA_STATE_FLAG_SYNC")]
        SYNC = 0x8, "in_sync";
        /// The adapter does not support the feature.
        #[doc(alias = "OCRDMA_STATE_FLAG_UNSUPPORTED")]
        UNSUPPORTED = 0x4000_0000, "unsupported";
        /// Negotiation with the link partner failed.
        #[doc(alias = "OCRDMA_STATE_FLAG_NEG_FAILD")]
        NEGOTIATION_FAILED = 0x8000_0000, "negotiation_failed";
    }
}

impl DcbxFeatureState {
    /// Enabled and in sync with the link partner: the only PFC state ocrdma trusts
    /// (`ocrdma_is_enabled_and_synced`).
    pub fn is_enabled_and_synced(self) -> bool {
        self.contains(Self::ENABLED | Self::SYNC)
    }
}

/// The first dword of the configuration, `tcv_aev_opv_st` @16: four byte-wide fields
/// (`OCRDMA_TCV_AEV_OPV_ST` shifts and masks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DcbxSummary(pub u32);

impl DcbxSummary {
    /// Bits 7:0, the DCBX state: zero means DCBX is off (`OCRDMA_DCBX_STATE_MASK`).
    pub fn state(self) -> u8 {
        self.0 as u8
    }

    /// Bits 15:8, an operational parameter ocrdma does not interpret (`OCRDMA_DCBX_OP_PARAM_SHIFT`).
    pub fn op_param(self) -> u8 {
        (self.0 >> 8) as u8
    }

    /// Bits 23:16, how many application priority entries are filled (`OCRDMA_DCBX_APP_ENTRY_SHIFT`).
    pub fn app_entry_count(self) -> u8 {
        (self.0 >> 16) as u8
    }

    /// Bits 31:24, the number of traffic classes supported (`OCRDMA_DCBX_TC_SUPPORT_SHIFT`).
    pub fn traffic_classes(self) -> u8 {
        (self.0 >> 24) as u8
    }

    /// Builds the dword from its fields.
    pub fn new(state: u8, op_param: u8, app_entry_count: u8, traffic_classes: u8) -> Self {
        Self(
            u32::from(state)
                | (u32::from(op_param) << 8)
                | (u32::from(app_entry_count) << 16)
                | (u32::from(traffic_classes) << 24),
        )
    }
}

code_enum! {
    /// What an application priority entry's protocol number is (`OCRDMA_DCBX_PROTO`).
    AppSelector(u8) {
        /// An ethertype (layer 2).
        #[doc(alias = "OCRDMA_PROTO_SELECT_L2")]
        Ethertype = 0, "ethertype";
        /// A TCP/UDP port (layer 4).
        #[doc(alias = "OCRDMA_PROTO_SELECT_L4")]
        L4Port = 1, "l4_port";
    }
}

/// One application priority entry, 16 bytes (`ocrdma_app_parameter`).
#[doc(alias = "ocrdma_app_parameter")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AppPriority {
    /// `valid_proto_app` bits 31:24: non-zero when the entry is in use.
    pub valid: u8,
    /// `valid_proto_app` bits 23:16.
    pub selector: u8,
    /// `valid_proto_app` bits 15:0: the ethertype or port.
    pub protocol: u16,
    /// `oui` u32 @+4.
    pub oui: u32,
    /// `app_prio` @+8: one byte per priority, non-zero where the application is mapped.
    pub priorities: [u8; PRIORITIES],
}

impl AppPriority {
    /// The selector, decoded.
    pub fn selector(&self) -> AppSelector {
        AppSelector::from_raw(self.selector)
    }

    /// True for a valid entry that maps the RoCE ethertype.
    pub fn is_roce(&self) -> bool {
        self.valid != 0 && self.selector() == AppSelector::Ethertype && self.protocol == ROCE_ETHERTYPE
    }

    /// The priorities the application is mapped to, lowest first.
    pub fn mapped_priorities(&self) -> Vec<u8> {
        set_priorities(&self.priorities)
    }
}

impl Wire for AppPriority {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let word = (u32::from(self.valid) << 24) | (u32::from(self.selector) << 16) | u32::from(self.protocol);
        w.u32("valid_proto_app", word)?;
        w.u32("oui", self.oui)?;
        w.bytes("app_prio", &self.priorities)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let word = r.u32("valid_proto_app")?;
        Ok(Self {
            valid: (word >> 24) as u8,
            selector: (word >> 16) as u8,
            protocol: word as u16,
            oui: r.u32("oui")?,
            priorities: r.array("app_prio")?,
        })
    }
}

/// The priorities whose byte is non-zero, lowest first.
fn set_priorities(bytes: &[u8; PRIORITIES]) -> Vec<u8> {
    (0..PRIORITIES as u8).filter(|&p| bytes[usize::from(p)] != 0).collect()
}

/// The GET_CONFIG response, `ocrdma_dcbx_cfg` @16 (312 bytes).
#[doc(alias = "ocrdma_dcbx_cfg")]
#[doc(alias = "ocrdma_get_dcbx_cfg_rsp")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DcbxConfig {
    /// `tcv_aev_opv_st` @16.
    pub summary: DcbxSummary,
    /// `tc_state` @20: traffic classes (ETS).
    pub tc_state: DcbxFeatureState,
    /// `pfc_state` @24: priority flow control.
    pub pfc_state: DcbxFeatureState,
    /// `qcn_state` @28: congestion notification.
    pub qcn_state: DcbxFeatureState,
    /// `appl_state` @32: the application priority table.
    pub app_state: DcbxFeatureState,
    /// `ll_state` @36: logical link.
    pub logical_link_state: DcbxFeatureState,
    /// `tc_bw` @40, 8 bytes: bandwidth per traffic class (not interpreted by ocrdma).
    pub tc_bandwidth: [u8; 8],
    /// `tc_prio` @48, eight dwords (not interpreted by ocrdma).
    pub tc_priority: [u32; 8],
    /// `pfc_prio` @80: one byte per priority, non-zero where PFC is on.
    pub pfc_priorities: [u8; PRIORITIES],
    /// `app_param` @88: the application priority table, 15 entries of 16 bytes.
    pub app: [AppPriority; APP_ENTRIES],
}

impl DcbxConfig {
    /// DCBX runs at all: the state byte is non-zero (ocrdma logs "DCBX is disabled" otherwise).
    pub fn dcbx_enabled(&self) -> bool {
        self.summary.state() != 0
    }

    /// The filled application priority entries: the first `app_entry_count`, at most 15.
    pub fn app_entries(&self) -> &[AppPriority] {
        let n = usize::from(self.summary.app_entry_count()).min(APP_ENTRIES);
        &self.app[..n]
    }

    /// The entry that maps the RoCE ethertype, if any.
    pub fn roce_app_entry(&self) -> Option<&AppPriority> {
        self.app_entries().iter().find(|e| e.is_roce())
    }

    /// The priorities PFC is enabled on, lowest first.
    pub fn pfc_enabled_priorities(&self) -> Vec<u8> {
        set_priorities(&self.pfc_priorities)
    }

    /// The priority ocrdma would give RoCE traffic from this configuration, as
    /// `ocrdma_parse_dcbxcfg_rsp` decides: DCBX on, PFC enabled and in sync, and a valid RoCE
    /// ethertype entry whose lowest priority also has PFC on. `None` where ocrdma falls back to
    /// [`DEFAULT_SERVICE_LEVEL`].
    pub fn roce_priority(&self) -> Option<u8> {
        if !self.dcbx_enabled() || !self.pfc_state.is_enabled_and_synced() {
            return None;
        }
        self.app_entries().iter().filter(|e| e.is_roce()).find_map(|e| {
            (0..PRIORITIES).find(|&p| e.priorities[p] != 0 && self.pfc_priorities[p] != 0).map(|p| p as u8)
        })
    }
}

impl Wire for DcbxConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("tcv_aev_opv_st", self.summary.0)?;
        w.u32("tc_state", self.tc_state.0)?;
        w.u32("pfc_state", self.pfc_state.0)?;
        w.u32("qcn_state", self.qcn_state.0)?;
        w.u32("appl_state", self.app_state.0)?;
        w.u32("ll_state", self.logical_link_state.0)?;
        w.bytes("tc_bw", &self.tc_bandwidth)?;
        for word in self.tc_priority {
            w.u32("tc_prio", word)?;
        }
        w.bytes("pfc_prio", &self.pfc_priorities)?;
        self.app.iter().try_for_each(|e| e.encode(w))
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let summary = DcbxSummary(r.u32("tcv_aev_opv_st")?);
        let tc_state = DcbxFeatureState(r.u32("tc_state")?);
        let pfc_state = DcbxFeatureState(r.u32("pfc_state")?);
        let qcn_state = DcbxFeatureState(r.u32("qcn_state")?);
        let app_state = DcbxFeatureState(r.u32("appl_state")?);
        let logical_link_state = DcbxFeatureState(r.u32("ll_state")?);
        let tc_bandwidth = r.array("tc_bw")?;
        let mut tc_priority = [0u32; 8];
        for word in &mut tc_priority {
            *word = r.u32("tc_prio")?;
        }
        let pfc_priorities = r.array("pfc_prio")?;
        let mut app = [AppPriority::default(); APP_ENTRIES];
        for entry in &mut app {
            *entry = AppPriority::decode(r)?;
        }
        Ok(Self {
            summary,
            tc_state,
            pfc_state,
            qcn_state,
            app_state,
            logical_link_state,
            tc_bandwidth,
            tc_priority,
            pfc_priorities,
            app,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};
    use crate::header::HEADER_LEN;

    #[test]
    fn request_golden_bytes() {
        let buf = encode_request(&GetDcbxConfig { param_type: DcbxParamType::Operational }).unwrap();
        assert_eq!(buf.len(), 328);
        // opcode 1, subsystem 0x10, request_length 312 (0x138), version 0; param_type 1 @16.
        assert_eq!(hex::encode(&buf[..20]), concat!("01100000", "00000000", "38010000", "00000000", "01000000"));
        assert!(buf[20..].iter().all(|&b| b == 0));
        let (hdr, req) = decode_request::<GetDcbxConfig>(&buf).unwrap();
        assert_eq!(hdr.subsystem, Subsystem::Dcbx);
        assert_eq!(req.param_type, DcbxParamType::Operational);
        assert_eq!(DcbxParamType::from_raw(0), DcbxParamType::Admin);
        assert_eq!(DcbxParamType::from_raw(7), DcbxParamType::Unknown(7));
    }

    /// A response as an adapter in sync with a DCBX switch would send it: DCBX on, 8 traffic
    /// classes, two app entries (FCoE 0x8906 on priority 3, RoCE on priority 5), PFC on 3 and 5.
    fn response() -> Vec<u8> {
        let mut buf = vec![0u8; 328];
        buf[..16].copy_from_slice(&hex::decode("01100000000000003801000038010000").unwrap());
        let put = |buf: &mut Vec<u8>, off: usize, hex_bytes: &str| {
            let b = hex::decode(hex_bytes).unwrap();
            buf[off..off + b.len()].copy_from_slice(&b);
        };
        put(&mut buf, 16, "01000208"); // state 1, op_param 0, 2 app entries, 8 TCs
        put(&mut buf, 24, "0d000000"); // pfc_state: enabled | willing | in sync
        put(&mut buf, 32, "09000000"); // appl_state: enabled | in sync
        put(&mut buf, 80, "0000000100010000"); // pfc_prio: priorities 3 and 5
        put(&mut buf, 88, "06890001"); // app 0: valid 1, selector 0 (ethertype), 0x8906
        put(&mut buf, 96, "0000000100000000"); //        priority 3
        put(&mut buf, 104, "15890001"); // app 1: valid, ethertype, 0x8915
        put(&mut buf, 108, "00c0c900"); //        oui 00:c9:c0
        put(&mut buf, 112, "0000000000010000"); //   priority 5
        buf
    }

    #[test]
    fn response_offsets() {
        let rsp = response();
        let (_, cfg) = decode_response::<GetDcbxConfig>(&rsp).unwrap();
        assert!(cfg.dcbx_enabled());
        assert_eq!(cfg.summary.app_entry_count(), 2);
        assert_eq!(cfg.summary.traffic_classes(), 8);
        assert_eq!(cfg.pfc_state.names(), ["enabled", "willing", "in_sync"]);
        assert!(cfg.pfc_state.is_enabled_and_synced());
        assert_eq!(cfg.pfc_enabled_priorities(), [3, 5]);
        assert_eq!(cfg.app_entries().len(), 2);
        let roce = cfg.roce_app_entry().unwrap();
        assert_eq!((roce.protocol, roce.oui, roce.mapped_priorities()), (ROCE_ETHERTYPE, 0x00c9_c000, vec![5]));
        assert_eq!(cfg.app[0].protocol, 0x8906);
        assert!(!cfg.app[0].is_roce());
        assert_eq!(cfg.roce_priority(), Some(5));
        // The encoder writes the same bytes back.
        let mut out = vec![0xEEu8; 328];
        cfg.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(hex::encode(&out[16..]), hex::encode(&rsp[16..]));
    }

    #[test]
    fn roce_priority_follows_ocrdma() {
        let (_, cfg) = decode_response::<GetDcbxConfig>(&response()).unwrap();
        // PFC enabled but not in sync with the switch: ocrdma falls back to the default.
        let mut unsynced = cfg.clone();
        unsynced.pfc_state = DcbxFeatureState(DcbxFeatureState::ENABLED | DcbxFeatureState::WILLING);
        assert_eq!(unsynced.roce_priority(), None);
        // DCBX off.
        let mut off = cfg.clone();
        off.summary = DcbxSummary::new(0, 0, 2, 8);
        assert_eq!(off.roce_priority(), None);
        // The RoCE entry's priority has no PFC.
        let mut no_pfc = cfg.clone();
        no_pfc.pfc_priorities[5] = 0;
        assert_eq!(no_pfc.roce_priority(), None);
        // An entry beyond app_entry_count is ignored.
        let mut hidden = cfg.clone();
        hidden.summary = DcbxSummary::new(1, 0, 1, 8);
        assert_eq!(hidden.roce_app_entry(), None);
        assert_eq!(hidden.roce_priority(), None);
        // An invalid entry is ignored, and so is the RoCE port number under the L4 selector.
        let mut invalid = cfg.clone();
        invalid.app[1].valid = 0;
        assert_eq!(invalid.roce_priority(), None);
        invalid.app[1].valid = 1;
        invalid.app[1].selector = AppSelector::L4Port.raw();
        assert_eq!(invalid.roce_priority(), None);
        // The lowest priority with both wins.
        let mut two = cfg;
        two.app[1].priorities = [0, 0, 0, 1, 0, 1, 0, 0];
        assert_eq!(two.roce_priority(), Some(3));
    }

    #[test]
    fn summary_fields() {
        let s = DcbxSummary::new(0x01, 0x22, 0x03, 0x08);
        assert_eq!(s.0, 0x0803_2201);
        assert_eq!((s.state(), s.op_param(), s.app_entry_count(), s.traffic_classes()), (1, 0x22, 3, 8));
        // An entry count above 15 is capped at the table's size.
        let cfg = DcbxConfig { summary: DcbxSummary::new(1, 0, 200, 8), ..DcbxConfig::default() };
        assert_eq!(cfg.app_entries().len(), APP_ENTRIES);
        assert_eq!(DcbxFeatureState(0x8000_0001).names(), ["enabled", "negotiation_failed"]);
    }

    #[test]
    fn truncated_response_names_the_field() {
        let mut rsp = response();
        // 100 body bytes: the buffer ends at 16 + 100, inside app entry 1's priorities.
        rsp[8..12].copy_from_slice(&100u32.to_le_bytes());
        let err = decode_response::<GetDcbxConfig>(&rsp).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("app_prio", 112, 8, HEADER_LEN + 100 - 112));
    }
}
