//! Function-level settings a driver makes while it sets up: SET_INTERRUPT_ENABLE (COMMON 89),
//! SET_DRIVER_FUNCTION_CAP (COMMON 103), SET / GET_FLOW_CONTROL (COMMON 36 / 37),
//! SET_LOGICAL_LINK_CONFIG (COMMON 80), GET_CNTL_ADDITIONAL_ATTRIBUTES (COMMON 121) and
//! MODIFY_EQ_DELAY (COMMON 41) (spec/protocol.md §5.0, §5.4, §5.17; spec/be2net-driver.md §2,
//! §3.7).

use super::support::{empty_body, fill_to};
use crate::command::{Command, Empty};
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// SET_INTERRUPT_ENABLE: embedded, 20 bytes; `intr_enabled` u8 @16 (spec/protocol.md §5.4).
#[doc(alias = "be_cmd_req_intr_set")]
#[doc(alias = "OPCODE_COMMON_SET_INTERRUPT_ENABLE")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetInterruptEnable {
    /// Host interrupts on or off.
    pub enabled: bool,
}

impl Wire for SetInterruptEnable {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("intr_enabled", self.enabled.into())?;
        w.zeros("rsvd", 3)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { enabled: r.u8("intr_enabled")? != 0 })
    }
}

impl Command for SetInterruptEnable {
    const NAME: &'static str = "SET_INTERRUPT_ENABLE";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 89;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = Empty;
}

/// SET_DRIVER_FUNCTION_CAP: embedded, 236 bytes; `valid_cap_flags` u32 @16, `cap_flags` u32
/// @20 (spec/protocol.md §5.0). The response has the same two words: the capabilities granted.
#[doc(alias = "be_cmd_req_set_func_cap")]
#[doc(alias = "OPCODE_COMMON_SET_DRIVER_FUNCTION_CAP")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetDriverFunctionCap {
    /// Which bits of `cap_flags` the driver speaks about.
    pub valid_cap_flags: u32,
    /// The capabilities it asks for.
    pub cap_flags: u32,
}

impl SetDriverFunctionCap {
    /// Software timestamps (`CAPABILITY_SW_TIMESTAMPS`).
    #[doc(alias = "CAPABILITY_SW_TIMESTAMPS")]
    pub const SW_TIMESTAMPS: u32 = 0x2;
    /// The BE3-native ERX interface, v1 RX completions (`CAPABILITY_BE3_NATIVE_ERX_API`).
    #[doc(alias = "CAPABILITY_BE3_NATIVE_ERX_API")]
    pub const BE3_NATIVE_ERX_API: u32 = 0x4;
}

impl Wire for SetDriverFunctionCap {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("valid_cap_flags", self.valid_cap_flags)?;
        w.u32("cap_flags", self.cap_flags)?;
        fill_to(w, "rsvd", 236)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { valid_cap_flags: r.u32("valid_cap_flags")?, cap_flags: r.u32("cap_flags")? })
    }
}

impl Command for SetDriverFunctionCap {
    const NAME: &'static str = "SET_DRIVER_FUNCTION_CAP";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 103;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 236;
    type Response = SetDriverFunctionCap;
}

/// Flow control (pause frames) in each direction: SET_FLOW_CONTROL's request and
/// GET_FLOW_CONTROL's response, `tx_flow_control` u16 @16, `rx_flow_control` u16 @18.
#[doc(alias = "be_cmd_req_set_flow_control")]
#[doc(alias = "be_cmd_resp_get_flow_control")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowControl {
    /// Send pause frames.
    pub tx: bool,
    /// Honour received pause frames.
    pub rx: bool,
}

impl Wire for FlowControl {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("tx_flow_control", self.tx.into())?;
        w.u16("rx_flow_control", self.rx.into())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { tx: r.u16("tx_flow_control")? != 0, rx: r.u16("rx_flow_control")? != 0 })
    }
}

/// SET_FLOW_CONTROL v1: embedded, 20 bytes, header-only response.
#[doc(alias = "OPCODE_COMMON_SET_FLOW_CONTROL")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetFlowControl(pub FlowControl);

impl Wire for SetFlowControl {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        self.0.encode(w)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        FlowControl::decode(r).map(Self)
    }
}

impl Command for SetFlowControl {
    const NAME: &'static str = "SET_FLOW_CONTROL";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 36;
    const VERSION: u8 = 1;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = Empty;
}

/// GET_FLOW_CONTROL: embedded, 20/20 bytes; the request body is one reserved dword.
#[doc(alias = "be_cmd_req_get_flow_control")]
#[doc(alias = "OPCODE_COMMON_GET_FLOW_CONTROL")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetFlowControl;

empty_body!(GetFlowControl);

impl Command for GetFlowControl {
    const NAME: &'static str = "GET_FLOW_CONTROL";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 37;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = FlowControl;
}

/// SET_LOGICAL_LINK_CONFIG v2 (be2net falls back to v1 on ILLEGAL_REQUEST): embedded, 20 bytes;
/// `link_config` u32 @16 (spec/protocol.md §5.17).
#[doc(alias = "be_cmd_req_set_ll_link")]
#[doc(alias = "OPCODE_COMMON_SET_LOGICAL_LINK_CONFIG")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetLogicalLinkConfig {
    /// [`SetLogicalLinkConfig::ENABLE`], [`SetLogicalLinkConfig::TRACK_PHYSICAL`].
    pub link_config: u32,
}

impl SetLogicalLinkConfig {
    /// Bit 0: the logical link is enabled (`PLINK_ENABLE`).
    #[doc(alias = "PLINK_ENABLE")]
    pub const ENABLE: u32 = 0x1;
    /// Bit 8: the logical link follows the physical one (`PLINK_TRACK`).
    #[doc(alias = "PLINK_TRACK")]
    pub const TRACK_PHYSICAL: u32 = 0x100;
}

impl Wire for SetLogicalLinkConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("link_config", self.link_config)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { link_config: r.u32("link_config")? })
    }
}

impl Command for SetLogicalLinkConfig {
    const NAME: &'static str = "SET_LOGICAL_LINK_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 80;
    const VERSION: u8 = 2;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = Empty;
}

/// GET_CNTL_ADDITIONAL_ATTRIBUTES: embedded, 24/24 bytes, completed asynchronously; be2net's
/// worker reads the die temperature with it every 64 s (spec/be2net-driver.md §3.7).
#[doc(alias = "be_cmd_req_get_cntl_addnl_attribs")]
#[doc(alias = "OPCODE_COMMON_GET_CNTL_ADDITIONAL_ATTRIBUTES")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetCntlAdditionalAttributes;

empty_body!(GetCntlAdditionalAttributes);

impl Command for GetCntlAdditionalAttributes {
    const NAME: &'static str = "GET_CNTL_ADDITIONAL_ATTRIBUTES";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 121;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 24;
    type Response = AdditionalAttributes;
}

/// The GET_CNTL_ADDITIONAL_ATTRIBUTES response: `ipl_file_number` u16 @16, `ipl_file_version`
/// u8 @18, `on_die_temperature` u8 @20 (°C).
#[doc(alias = "be_cmd_resp_get_cntl_addnl_attribs")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AdditionalAttributes {
    /// The IPL file in use.
    pub ipl_file_number: u16,
    /// Its version.
    pub ipl_file_version: u8,
    /// The ASIC's die temperature in °C.
    pub on_die_temperature: u8,
}

impl Wire for AdditionalAttributes {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("ipl_file_number", self.ipl_file_number)?;
        w.u8("ipl_file_version", self.ipl_file_version)?;
        w.zeros("rsvd0", 1)?;
        w.u8("on_die_temperature", self.on_die_temperature)?;
        w.zeros("rsvd1", 3)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let ipl_file_number = r.u16("ipl_file_number")?;
        let ipl_file_version = r.u8("ipl_file_version")?;
        r.skip("rsvd0", 1)?;
        let on_die_temperature = r.u8("on_die_temperature")?;
        Ok(Self { ipl_file_number, ipl_file_version, on_die_temperature })
    }
}

/// One EQ's new interrupt delay in MODIFY_EQ_DELAY (`be_set_eqd`, 12 bytes).
#[doc(alias = "be_set_eqd")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EqDelay {
    /// The EQ.
    pub eq_id: u32,
    /// `phase`.
    pub phase: u32,
    /// `delay_multiplier`.
    pub delay_multiplier: u32,
}

/// MODIFY_EQ_DELAY: embedded; `num_eq` u32 @16, then `num_eq` × [`EqDelay`] @20. be2net declares
/// the full 404-byte layout (32 entries) though only 236 bytes fit a WRB and it sends at most 8
/// entries per command (spec/protocol.md §5.0, §8 item 7); this type's [`Command::LEN`] is what
/// fits.
#[doc(alias = "be_cmd_req_modify_eq_delay")]
#[doc(alias = "OPCODE_COMMON_MODIFY_EQ_DELAY")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModifyEqDelay {
    /// The EQs and their delays.
    pub entries: Vec<EqDelay>,
}

impl ModifyEqDelay {
    /// Entries that fit an embedded command: (236 − 20) / 12.
    pub const MAX_ENTRIES: usize = 18;
}

impl Wire for ModifyEqDelay {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("num_eq", self.entries.len() as u32)?;
        for e in &self.entries {
            w.u32("eq_id", e.eq_id)?;
            w.u32("phase", e.phase)?;
            w.u32("delay_multiplier", e.delay_multiplier)?;
        }
        Ok(())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let count = r.u32("num_eq")? as usize;
        let needed = count.saturating_mul(12);
        if needed > r.remaining() {
            return Err(WireError { field: "set_eqd", offset: r.position(), needed, available: r.remaining() });
        }
        let entries = (0..count)
            .map(|_| {
                Ok(EqDelay {
                    eq_id: r.u32("eq_id")?,
                    phase: r.u32("phase")?,
                    delay_multiplier: r.u32("delay_multiplier")?,
                })
            })
            .collect::<Result<_, WireError>>()?;
        Ok(Self { entries })
    }
}

impl Command for ModifyEqDelay {
    const NAME: &'static str = "MODIFY_EQ_DELAY";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 41;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 236;
    type Response = Empty;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn interrupt_enable_golden_bytes() {
        let buf = encode_request(&SetInterruptEnable { enabled: true }).unwrap();
        assert_eq!(hex::encode(&buf), "5901000000000000040000000000000001000000");
        assert!(decode_request::<SetInterruptEnable>(&buf).unwrap().1.enabled);
    }

    #[test]
    fn driver_function_cap_golden_bytes() {
        let cmd = SetDriverFunctionCap { valid_cap_flags: 0x6, cap_flags: 0x4 };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 236);
        // 103, request_length 220, v0; valid 0x6, cap 0x4, the rest reserved.
        assert_eq!(hex::encode(&buf[..24]), concat!("6701000000000000dc00000000000000", "0600000004000000"));
        assert!(buf[24..].iter().all(|&b| b == 0));
        assert_eq!(decode_request::<SetDriverFunctionCap>(&buf).unwrap().1, cmd);
        let mut rsp = buf.clone();
        rsp[8] = 8;
        assert_eq!(decode_response::<SetDriverFunctionCap>(&rsp).unwrap().1, cmd);
    }

    #[test]
    fn flow_control_golden_bytes() {
        let set = encode_request(&SetFlowControl(FlowControl { tx: true, rx: true })).unwrap();
        assert_eq!(hex::encode(&set), "2401000000000000040000000100000001000100");
        let get = encode_request(&GetFlowControl).unwrap();
        assert_eq!(hex::encode(&get), "2501000000000000040000000000000000000000");
        let rsp = hex::decode(concat!("25010000000000000400000004000000", "01000000")).unwrap();
        assert_eq!(decode_response::<GetFlowControl>(&rsp).unwrap().1, FlowControl { tx: true, rx: false });
    }

    #[test]
    fn logical_link_and_additional_attributes_golden_bytes() {
        let link =
            SetLogicalLinkConfig { link_config: SetLogicalLinkConfig::ENABLE | SetLogicalLinkConfig::TRACK_PHYSICAL };
        assert_eq!(hex::encode(encode_request(&link).unwrap()), "5001000000000000040000000200000001010000");
        let buf = encode_request(&GetCntlAdditionalAttributes).unwrap();
        assert_eq!(hex::encode(&buf), concat!("79010000000000000800000000000000", "0000000000000000"));
        let rsp = hex::decode(concat!("79010000000000000800000008000000", "0300020037000000")).unwrap();
        let attrs = decode_response::<GetCntlAdditionalAttributes>(&rsp).unwrap().1;
        assert_eq!(attrs, AdditionalAttributes { ipl_file_number: 3, ipl_file_version: 2, on_die_temperature: 55 });
    }

    #[test]
    fn modify_eq_delay_golden_bytes_and_be2net_length() {
        let cmd = ModifyEqDelay { entries: vec![EqDelay { eq_id: 2, phase: 0, delay_multiplier: 65 }] };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(
            hex::encode(&buf[..32]),
            concat!("2901000000000000dc00000000000000", "01000000", "02000000", "00000000", "41000000")
        );
        // be2net's header declares 388 body bytes; the decoder reads only num_eq entries.
        let mut be2net = buf.clone();
        be2net[8..12].copy_from_slice(&388u32.to_le_bytes());
        assert_eq!(decode_request::<ModifyEqDelay>(&be2net).unwrap().1, cmd);
        be2net[16] = 19;
        assert_eq!(decode_request::<ModifyEqDelay>(&be2net).unwrap_err().field, "set_eqd");
    }
}
