//! Per-port identity and the locate LED: GET_PORT_NAME (COMMON 77), GET_BEACON_STATE (COMMON 70)
//! and ENABLE_DISABLE_BEACON (COMMON 69).

use super::support::empty_body;
use crate::command::{Command, Empty};
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// GET_PORT_NAME: embedded, version 1 on Skyhawk, 20/20 bytes; the request body is one reserved
/// dword (spec/protocol.md §5.10).
#[doc(alias = "be_cmd_req_get_port_name")]
#[doc(alias = "OPCODE_COMMON_GET_PORT_NAME")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetPortName;

empty_body!(GetPortName);

impl Command for GetPortName {
    const NAME: &'static str = "GET_PORT_NAME";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 77;
    const VERSION: u8 = 1;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = PortName;
}

/// The GET_PORT_NAME response: `port_name[4]` @16, one ASCII character per physical port.
#[doc(alias = "be_cmd_resp_get_port_name")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortName {
    /// The raw bytes, indexed by physical port number (`hba_port_num`).
    pub names: [u8; 4],
}

impl PortName {
    /// Port `index`'s name character, if the firmware gave a printable ASCII one.
    pub fn port(&self, index: usize) -> Option<char> {
        self.names.get(index).filter(|b| b.is_ascii_graphic()).map(|&b| char::from(b))
    }

    /// Port `index`'s name, or be2net's fallback `'0' + index` when the firmware gave none
    /// (spec §5.10).
    pub fn port_or_default(&self, index: u8) -> char {
        self.port(usize::from(index)).unwrap_or_else(|| char::from(b'0'.wrapping_add(index)))
    }
}

impl Wire for PortName {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.bytes("port_name", &self.names)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { names: r.array("port_name")? })
    }
}

/// GET_BEACON_STATE: embedded, 20/20 bytes; `port_num` u8 @16 (spec/protocol.md §5.12).
#[doc(alias = "be_cmd_req_get_beacon_state")]
#[doc(alias = "OPCODE_COMMON_GET_BEACON_STATE")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetBeaconState {
    /// Physical port number.
    pub port_num: u8,
}

impl Wire for GetBeaconState {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("port_num", self.port_num)?;
        w.zeros("rsvd0", 3)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { port_num: r.u8("port_num")? })
    }
}

impl Command for GetBeaconState {
    const NAME: &'static str = "GET_BEACON_STATE";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 70;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = BeaconState;
}

/// The GET_BEACON_STATE response: `beacon_state` u8 @16.
#[doc(alias = "be_cmd_resp_get_beacon_state")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BeaconState {
    /// The raw state: [`BeaconState::ENABLED`] or [`BeaconState::DISABLED`].
    pub state: u8,
}

impl BeaconState {
    /// The locate LED is blinking (spec §5.12).
    #[doc(alias = "BEACON_STATE_ENABLED")]
    pub const ENABLED: u8 = 1;
    /// The locate LED is off (spec §5.12).
    #[doc(alias = "BEACON_STATE_DISABLED")]
    pub const DISABLED: u8 = 0;

    /// True when the beacon is on.
    pub fn is_enabled(&self) -> bool {
        self.state == Self::ENABLED
    }
}

impl Wire for BeaconState {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("beacon_state", self.state)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { state: r.u8("beacon_state")? })
    }
}

/// ENABLE_DISABLE_BEACON: switches a port's locate LED; embedded 20 bytes, header-only response
/// (spec/protocol.md §5.12).
#[doc(alias = "be_cmd_req_enable_disable_beacon")]
#[doc(alias = "OPCODE_COMMON_ENABLE_DISABLE_BEACON")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EnableDisableBeacon {
    /// `port_num` u8 @16.
    pub port_num: u8,
    /// `beacon_state` u8 @17: [`BeaconState::ENABLED`] or [`BeaconState::DISABLED`].
    pub beacon_state: u8,
    /// `beacon_duration` u8 @18.
    pub beacon_duration: u8,
    /// `status_duration` u8 @19.
    pub status_duration: u8,
}

impl Wire for EnableDisableBeacon {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("port_num", self.port_num)?;
        w.u8("beacon_state", self.beacon_state)?;
        w.u8("beacon_duration", self.beacon_duration)?;
        w.u8("status_duration", self.status_duration)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            port_num: r.u8("port_num")?,
            beacon_state: r.u8("beacon_state")?,
            beacon_duration: r.u8("beacon_duration")?,
            status_duration: r.u8("status_duration")?,
        })
    }
}

impl Command for EnableDisableBeacon {
    const NAME: &'static str = "ENABLE_DISABLE_BEACON";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 69;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = Empty;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn get_port_name_golden_bytes() {
        let buf = encode_request(&GetPortName).unwrap();
        // opcode 77 (0x4d), subsystem 1, request_length 4, version 1.
        assert_eq!(hex::encode(&buf), concat!("4d010000", "00000000", "04000000", "01000000", "00000000"));
        let rsp = hex::decode(concat!("4d010000", "00000000", "04000000", "04000000", "30313233")).unwrap();
        let (_, names) = decode_response::<GetPortName>(&rsp).unwrap();
        assert_eq!(names.names, *b"0123");
        assert_eq!(names.port(2), Some('2'));
        assert_eq!(names.port(4), None);
        let mut out = [0u8; 20];
        names.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &rsp[16..]);
    }

    #[test]
    fn port_name_falls_back_like_be2net() {
        let names = PortName { names: [b'A', 0, 0x07, b'D'] };
        assert_eq!(names.port_or_default(0), 'A');
        assert_eq!(names.port_or_default(1), '1');
        assert_eq!(names.port_or_default(2), '2');
        assert_eq!(names.port_or_default(7), '7');
    }

    #[test]
    fn port_name_truncated() {
        let rsp = hex::decode(concat!("4d010000", "00000000", "03000000", "04000000", "30313233")).unwrap();
        let err = decode_response::<GetPortName>(&rsp).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("port_name", 16, 4, 3));
    }

    #[test]
    fn beacon_golden_bytes() {
        let buf = encode_request(&GetBeaconState { port_num: 1 }).unwrap();
        // opcode 70 (0x46), request_length 4; port_num 1 @16.
        assert_eq!(hex::encode(&buf), "4601000000000000040000000000000001000000");
        assert_eq!(decode_request::<GetBeaconState>(&buf).unwrap().1.port_num, 1);
        let rsp = hex::decode(concat!("46010000", "00000000", "04000000", "04000000", "01000000")).unwrap();
        let (_, state) = decode_response::<GetBeaconState>(&rsp).unwrap();
        assert!(state.is_enabled());
        let rsp = hex::decode(concat!("46010000", "00000000", "00000000", "04000000", "01000000")).unwrap();
        let err = decode_response::<GetBeaconState>(&rsp).unwrap_err();
        assert_eq!((err.field, err.offset, err.available), ("beacon_state", 16, 0));

        let set = EnableDisableBeacon { port_num: 1, beacon_state: 1, beacon_duration: 10, status_duration: 0 };
        let buf = encode_request(&set).unwrap();
        // opcode 69 (0x45); port 1 @16, state 1 @17, beacon_duration 10 @18, status_duration 0 @19.
        assert_eq!(hex::encode(&buf), concat!("45010000", "00000000", "04000000", "00000000", "0101", "0a00"));
        assert_eq!(decode_request::<EnableDisableBeacon>(&buf).unwrap().1, set);
    }
}
