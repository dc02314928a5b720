//! The 16-byte common request and response headers (spec/protocol.md §4).

use crate::status::{AdditionalStatus, BaseStatus, CompletionStatus};
use crate::wire::{Reader, Wire, WireError, Writer};

/// Length of either header in bytes.
pub const HEADER_LEN: usize = 16;

/// Command subsystems (spec/protocol.md §4, `CMD_SUBSYSTEM_*` in be_cmds.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subsystem {
    /// Common commands shared by every protocol (1).
    #[doc(alias = "CMD_SUBSYSTEM_COMMON")]
    Common,
    /// Ethernet (NIC) commands (3).
    #[doc(alias = "CMD_SUBSYSTEM_ETH")]
    Eth,
    /// RDMA / RoCE commands (10).
    Rdma,
    /// Low-level diagnostics (11).
    #[doc(alias = "CMD_SUBSYSTEM_LOWLEVEL")]
    LowLevel,
    /// DCBX queries (16), as ocrdma sends them (`OCRDMA_SUBSYS_DCBX` in ocrdma_sli.h). FreeBSD's
    /// oce driver names 16 "DIAG" and 15 "DCBX"; ocrdma is the one that runs on Skyhawk
    /// (spec/protocol.md §4).
    #[doc(alias = "OCRDMA_SUBSYS_DCBX")]
    Dcbx,
    /// Any other subsystem number, kept as sent.
    Other(u8),
}

impl Subsystem {
    /// Decodes a raw subsystem byte.
    pub fn from_raw(raw: u8) -> Self {
        match raw {
            1 => Self::Common,
            3 => Self::Eth,
            10 => Self::Rdma,
            11 => Self::LowLevel,
            16 => Self::Dcbx,
            other => Self::Other(other),
        }
    }

    /// The subsystem's name as the C headers spell it (`COMMON`, `ETH`, ...), `None` for a number
    /// no source names.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Self::Common => Some("COMMON"),
            Self::Eth => Some("ETH"),
            Self::Rdma => Some("RDMA"),
            Self::LowLevel => Some("LOWLEVEL"),
            Self::Dcbx => Some("DCBX"),
            Self::Other(_) => None,
        }
    }

    /// The raw byte.
    pub fn raw(self) -> u8 {
        match self {
            Self::Common => 1,
            Self::Eth => 3,
            Self::Rdma => 10,
            Self::LowLevel => 11,
            Self::Dcbx => 16,
            Self::Other(raw) => raw,
        }
    }
}

/// Common request header.
#[doc(alias = "be_cmd_req_hdr")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHeader {
    /// Command opcode (@0).
    pub opcode: u8,
    /// Subsystem (@1).
    pub subsystem: Subsystem,
    /// Port number (@2), 0 for almost every command.
    pub port_number: u8,
    /// Target function (@3): 0 = the issuing function, n + 1 = its VF n.
    pub domain: u8,
    /// Timeout in seconds (@4), 0 for almost every command.
    pub timeout_secs: u32,
    /// Bytes after the header (@8).
    pub request_length: u32,
    /// Command version (@12).
    pub version: u8,
}

impl Wire for RequestHeader {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("opcode", self.opcode)?;
        w.u8("subsystem", self.subsystem.raw())?;
        w.u8("port_number", self.port_number)?;
        w.u8("domain", self.domain)?;
        w.u32("timeout", self.timeout_secs)?;
        w.u32("request_length", self.request_length)?;
        w.u8("version", self.version)?;
        w.zeros("rsvd0", 3)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let opcode = r.u8("opcode")?;
        let subsystem = Subsystem::from_raw(r.u8("subsystem")?);
        let port_number = r.u8("port_number")?;
        let domain = r.u8("domain")?;
        let timeout_secs = r.u32("timeout")?;
        let request_length = r.u32("request_length")?;
        let version = r.u8("version")?;
        r.skip("rsvd0", 3)?;
        Ok(Self { opcode, subsystem, port_number, domain, timeout_secs, request_length, version })
    }
}

/// Common response header, written by the firmware over the request header.
#[doc(alias = "be_cmd_resp_hdr")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHeader {
    /// Echoed opcode (@0).
    pub opcode: u8,
    /// Echoed subsystem (@1).
    pub subsystem: Subsystem,
    /// Base status (@4).
    pub base_status: BaseStatus,
    /// Additional status (@5).
    pub additional_status: AdditionalStatus,
    /// Bytes of response body after the header (@8).
    pub response_length: u32,
    /// Bytes the firmware would have liked to return (@12).
    pub actual_response_length: u32,
}

impl ResponseHeader {
    /// The two status bytes as one completion status.
    pub fn status(&self) -> CompletionStatus {
        CompletionStatus::new(self.base_status, self.additional_status)
    }
}

impl Wire for ResponseHeader {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("opcode", self.opcode)?;
        w.u8("subsystem", self.subsystem.raw())?;
        w.zeros("rsvd0", 2)?;
        // The header has one byte per status; codes above 0xFF cannot be represented here.
        w.u8("base_status", self.base_status.raw() as u8)?;
        w.u8("addl_status", self.additional_status.raw())?;
        w.zeros("rsvd1", 2)?;
        w.u32("response_length", self.response_length)?;
        w.u32("actual_resp_len", self.actual_response_length)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let opcode = r.u8("opcode")?;
        let subsystem = Subsystem::from_raw(r.u8("subsystem")?);
        r.skip("rsvd0", 2)?;
        let base_status = BaseStatus::from_raw(u16::from(r.u8("base_status")?));
        let additional_status = AdditionalStatus::from_raw(r.u8("addl_status")?);
        r.skip("rsvd1", 2)?;
        let response_length = r.u32("response_length")?;
        let actual_response_length = r.u32("actual_resp_len")?;
        Ok(Self { opcode, subsystem, base_status, additional_status, response_length, actual_response_length })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_header_golden_bytes() {
        // GET_FW_VERSION (COMMON 35), 80-byte command: request_length 64, version 0 (§4, §5.1).
        let hdr = RequestHeader {
            opcode: 35,
            subsystem: Subsystem::Common,
            port_number: 0,
            domain: 2,
            timeout_secs: 30,
            request_length: 64,
            version: 1,
        };
        let mut buf = [0xEEu8; HEADER_LEN];
        hdr.encode(&mut Writer::new(&mut buf)).unwrap();
        assert_eq!(
            hex::encode(buf),
            "23010002" /* op, subsys, port, domain */.to_owned()
            + "1e000000" /* timeout */ + "40000000" /* request_length */ + "01000000" /* version + rsvd */
        );
        assert_eq!(RequestHeader::decode(&mut Reader::new(&buf)).unwrap(), hdr);
    }

    #[test]
    fn response_header_golden_bytes() {
        let raw = hex::decode("3a01ffff0300aaaa7c00000080000000").unwrap();
        let hdr = ResponseHeader::decode(&mut Reader::new(&raw)).unwrap();
        assert_eq!(hdr.opcode, 58);
        assert_eq!(hdr.subsystem, Subsystem::Common);
        assert_eq!(hdr.base_status, BaseStatus::IllegalField);
        assert_eq!(hdr.additional_status, AdditionalStatus::None);
        assert_eq!(hdr.response_length, 124);
        assert_eq!(hdr.actual_response_length, 128);
        let mut out = [0u8; 16];
        hdr.encode(&mut Writer::new(&mut out)).unwrap();
        assert_eq!(hex::encode(out), "3a010000030000007c00000080000000");
    }

    #[test]
    fn subsystem_codes() {
        for raw in 0..=u8::MAX {
            assert_eq!(Subsystem::from_raw(raw).raw(), raw);
        }
        assert_eq!(Subsystem::from_raw(1), Subsystem::Common);
        assert_eq!(Subsystem::from_raw(3), Subsystem::Eth);
        assert_eq!(Subsystem::from_raw(0x10), Subsystem::Dcbx);
        assert_eq!(Subsystem::Dcbx.name(), Some("DCBX"));
        assert_eq!(Subsystem::from_raw(0x22).name(), None);
    }
}
