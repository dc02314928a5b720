//! GET_FW_VERSION (COMMON 35) and FUNCTION_RESET (COMMON 61).

use crate::command::{Command, Empty};
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// FUNCTION_RESET: resets the calling function's firmware state; header only
/// (spec/protocol.md §5.4).
#[doc(alias = "OPCODE_COMMON_FUNCTION_RESET")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FunctionReset;

impl Wire for FunctionReset {
    fn encode(&self, _w: &mut Writer<'_>) -> Result<(), WireError> {
        Ok(())
    }
    fn decode(_r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self)
    }
}

impl Command for FunctionReset {
    const NAME: &'static str = "FUNCTION_RESET";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 61;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 16;
    type Response = Empty;
}

/// GET_FW_VERSION: the running and on-flash firmware version strings (spec/protocol.md §5.1).
#[doc(alias = "be_cmd_req_get_fw_version")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetFwVersion;

impl Wire for GetFwVersion {
    fn encode(&self, _w: &mut Writer<'_>) -> Result<(), WireError> {
        Ok(())
    }
    fn decode(_r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self)
    }
}

impl Command for GetFwVersion {
    const NAME: &'static str = "GET_FW_VERSION";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 35;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 80;
    type Response = FwVersion;
}

/// The GET_FW_VERSION response.
#[doc(alias = "be_cmd_resp_get_fw_version")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FwVersion {
    /// `firmware_version_string` @16: the running firmware.
    pub running: String,
    /// `fw_on_flash_version_string` @48: the firmware stored on flash.
    pub on_flash: String,
}

impl FwVersion {
    /// Width of each version string field.
    pub const STRING_LEN: usize = 32;
}

impl Wire for FwVersion {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.string("firmware_version_string", &self.running, Self::STRING_LEN)?;
        w.string("fw_on_flash_version_string", &self.on_flash, Self::STRING_LEN)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let running = r.string("firmware_version_string", Self::STRING_LEN)?;
        let on_flash = r.string("fw_on_flash_version_string", Self::STRING_LEN)?;
        Ok(Self { running, on_flash })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};

    #[test]
    fn function_reset_is_header_only() {
        let buf = encode_request(&FunctionReset).unwrap();
        // opcode 61 (0x3d), subsystem 1, request_length 0, version 0.
        assert_eq!(hex::encode(&buf), "3d010000000000000000000000000000");
    }

    #[test]
    fn get_fw_version_request_golden_bytes() {
        let buf = encode_request(&GetFwVersion).unwrap();
        assert_eq!(buf.len(), 80);
        // opcode 35 (0x23), subsystem 1, request_length 64 (0x40), version 0; body reserved.
        assert_eq!(hex::encode(&buf[..16]), "23010000000000004000000000000000");
        assert!(buf[16..].iter().all(|&b| b == 0));
    }

    #[test]
    fn get_fw_version_response_offsets() {
        let mut buf = vec![0u8; 80];
        buf[0] = 35;
        buf[1] = 1;
        buf[8] = 64; // response_length
        buf[16..27].copy_from_slice(b"11.1.172.23");
        buf[48..59].copy_from_slice(b"11.4.1231.6");
        let (hdr, v) = decode_response::<GetFwVersion>(&buf).unwrap();
        assert_eq!(hdr.response_length, 64);
        assert_eq!(v, FwVersion { running: "11.1.172.23".into(), on_flash: "11.4.1231.6".into() });
        let mut out = vec![0u8; 80];
        v.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &buf[16..]);
    }

    #[test]
    fn short_response_length_is_a_typed_error() {
        let mut buf = vec![0u8; 80];
        buf[8] = 40; // claims only 40 body bytes: the on-flash string does not fit
        let err = decode_response::<GetFwVersion>(&buf).unwrap_err();
        assert_eq!(err.field, "fw_on_flash_version_string");
        assert_eq!((err.offset, err.needed, err.available), (48, 32, 8));
    }
}
