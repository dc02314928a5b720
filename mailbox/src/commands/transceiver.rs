//! READ_TRANSRECV_DATA (COMMON 73): one 256-byte page of the port's module EEPROM, what
//! `ethtool -m` shows on be2net (`be_cmd_read_port_transceiver_data` in be_cmds.c;
//! spec/protocol.md §5.0), and the identity fields inside it (SFF-8472 for SFP/SFP+, SFF-8436 for
//! QSFP+; identifier codes from SFF-8024).

use super::support::code_enum;
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer, decode_c_string};

/// Bytes in one page (`PAGE_DATA_LEN`, be_cmds.h).
pub const PAGE_DATA_LEN: usize = 256;

code_enum! {
    /// `page_num`: the two-wire address of the EEPROM page (`TR_PAGE_A0` / `TR_PAGE_A2`).
    TransceiverPage(u32) {
        /// Serial ID page: identifier, vendor, part number (SFF-8472 address A0h).
        #[doc(alias = "TR_PAGE_A0")]
        A0 = 0xA0, "A0";
        /// Diagnostics page (SFF-8472 address A2h).
        #[doc(alias = "TR_PAGE_A2")]
        A2 = 0xA2, "A2";
    }
}

/// READ_TRANSRECV_DATA: non-embedded, version 0, 280-byte buffer; `page_num` u32 @16, `port`
/// u32 @20 (be2net sends `hba_port_num`).
#[doc(alias = "be_cmd_req_port_type")]
#[doc(alias = "OPCODE_COMMON_READ_TRANSRECV_DATA")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTransceiverData {
    /// The page.
    pub page: TransceiverPage,
    /// The physical port.
    pub port: u32,
}

impl Wire for ReadTransceiverData {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("page_num", self.page.raw())?;
        w.u32("port", self.port)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { page: TransceiverPage::from_raw(r.u32("page_num")?), port: r.u32("port")? })
    }
}

impl Command for ReadTransceiverData {
    const NAME: &'static str = "READ_TRANSRECV_DATA";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 73;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = 24 + PAGE_DATA_LEN;
    type Response = TransceiverData;
}

/// The READ_TRANSRECV_DATA response (`be_cmd_resp_port_type`).
#[doc(alias = "be_cmd_resp_port_type")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransceiverData {
    /// `page_num` u32 @16, echoed.
    pub page: TransceiverPage,
    /// `port` u32 @20, echoed.
    pub port: u32,
    /// `page_data` @24.
    pub data: [u8; PAGE_DATA_LEN],
}

impl Wire for TransceiverData {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("page_num", self.page.raw())?;
        w.u32("port", self.port)?;
        w.bytes("page_data", &self.data)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            page: TransceiverPage::from_raw(r.u32("page_num")?),
            port: r.u32("port")?,
            data: r.array("page_data")?,
        })
    }
}

code_enum! {
    /// Byte 0 of the serial ID page: what kind of module sits in the cage (SFF-8024 table 4-1).
    ModuleIdentifier(u8) {
        /// No module, or the EEPROM is blank.
        Unspecified = 0x00, "unspecified";
        /// GBIC.
        Gbic = 0x01, "GBIC";
        /// Soldered to the board.
        Soldered = 0x02, "soldered";
        /// SFP or SFP+ (SFF-8472).
        Sfp = 0x03, "SFP/SFP+";
        /// QSFP (INF-8438).
        Qsfp = 0x0C, "QSFP";
        /// QSFP+ (SFF-8436).
        QsfpPlus = 0x0D, "QSFP+";
        /// QSFP28 (SFF-8636).
        Qsfp28 = 0x11, "QSFP28";
    }
}

/// Where the identity fields sit in a page, per module family.
struct IdentityLayout {
    name: usize,
    oui: usize,
    part: usize,
    revision: usize,
    revision_len: usize,
    serial: usize,
}

/// SFF-8472 address A0h: vendor name @20, OUI @37, part number @40, revision @56 (4 bytes),
/// serial number @68.
const SFF_8472: IdentityLayout =
    IdentityLayout { name: 20, oui: 37, part: 40, revision: 56, revision_len: 4, serial: 68 };

/// SFF-8436 / SFF-8636 upper page 00h (bytes 128–255 of what the adapter returns): vendor name
/// @148, OUI @165, part number @168, revision @184 (2 bytes), serial number @196.
const SFF_8436: IdentityLayout =
    IdentityLayout { name: 148, oui: 165, part: 168, revision: 184, revision_len: 2, serial: 196 };

/// Width of the vendor name, part number and serial number fields in both layouts.
const ID_FIELD_LEN: usize = 16;

/// Who made the module in the cage and what it is: the fields `ethtool -m` prints first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleIdentity {
    /// Byte 0: the module type.
    pub identifier: ModuleIdentifier,
    /// Vendor name (ASCII, trailing blanks removed).
    pub vendor: String,
    /// Vendor IEEE OUI, 3 bytes.
    pub vendor_oui: [u8; 3],
    /// Vendor part number.
    pub part_number: String,
    /// Vendor revision.
    pub revision: String,
    /// Vendor serial number.
    pub serial_number: String,
}

impl TransceiverData {
    /// The module's identity from a serial ID (A0) page; `None` when the cage is empty (identifier
    /// 0) or the module type has no known layout.
    pub fn identity(&self) -> Option<ModuleIdentity> {
        let identifier = ModuleIdentifier::from_raw(self.data[0]);
        let layout = match identifier {
            ModuleIdentifier::Sfp | ModuleIdentifier::Gbic | ModuleIdentifier::Soldered => &SFF_8472,
            ModuleIdentifier::Qsfp | ModuleIdentifier::QsfpPlus | ModuleIdentifier::Qsfp28 => &SFF_8436,
            ModuleIdentifier::Unspecified | ModuleIdentifier::Unknown(_) => return None,
        };
        let text = |at: usize, len: usize| decode_c_string(&self.data[at..at + len]).trim_end().to_owned();
        Some(ModuleIdentity {
            identifier,
            vendor: text(layout.name, ID_FIELD_LEN),
            vendor_oui: [self.data[layout.oui], self.data[layout.oui + 1], self.data[layout.oui + 2]],
            part_number: text(layout.part, ID_FIELD_LEN),
            revision: text(layout.revision, layout.revision_len),
            serial_number: text(layout.serial, ID_FIELD_LEN),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn request_golden_bytes() {
        let buf = encode_request(&ReadTransceiverData { page: TransceiverPage::A0, port: 1 }).unwrap();
        assert_eq!(buf.len(), 280);
        // opcode 73 (0x49), subsystem 1, request_length 264 (0x108); page 0xA0 @16, port 1 @20.
        assert_eq!(
            hex::encode(&buf[..24]),
            concat!("49010000", "00000000", "08010000", "00000000", "a0000000", "01000000")
        );
        let (_, req) = decode_request::<ReadTransceiverData>(&buf).unwrap();
        assert_eq!((req.page, req.port), (TransceiverPage::A0, 1));
    }

    fn sfp_page() -> Vec<u8> {
        let mut buf = vec![0u8; 280];
        buf[..16].copy_from_slice(&hex::decode("49010000000000000801000008010000").unwrap());
        buf[16] = 0xA0;
        buf[20] = 1;
        let page = &mut buf[24..];
        page[0] = 0x03;
        page[20..36].copy_from_slice(b"EMULEX          ");
        page[37..40].copy_from_slice(&[0x00, 0x00, 0xc9]);
        page[40..56].copy_from_slice(b"SFP10GSR-85     ");
        page[56..60].copy_from_slice(b"A   ");
        page[68..84].copy_from_slice(b"ECL1234567      ");
        buf
    }

    #[test]
    fn sfp_identity_from_sff_8472_offsets() {
        let rsp = sfp_page();
        let (_, page) = decode_response::<ReadTransceiverData>(&rsp).unwrap();
        assert_eq!((page.page, page.port), (TransceiverPage::A0, 1));
        let id = page.identity().unwrap();
        assert_eq!(id.identifier, ModuleIdentifier::Sfp);
        assert_eq!(id.identifier.to_string(), "SFP/SFP+");
        assert_eq!((id.vendor.as_str(), id.part_number.as_str()), ("EMULEX", "SFP10GSR-85"));
        assert_eq!((id.revision.as_str(), id.serial_number.as_str()), ("A", "ECL1234567"));
        assert_eq!(id.vendor_oui, [0, 0, 0xc9]);
        let mut out = vec![0u8; 280];
        page.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &rsp[16..]);
    }

    #[test]
    fn qsfp_identity_from_upper_page() {
        let mut data = [0u8; PAGE_DATA_LEN];
        data[0] = 0x0D;
        data[148..164].copy_from_slice(b"VENDOR-Q        ");
        data[168..184].copy_from_slice(b"QSFP-40G-SR4    ");
        data[184..186].copy_from_slice(b"02");
        data[196..212].copy_from_slice(b"Q0001           ");
        let page = TransceiverData { page: TransceiverPage::A0, port: 0, data };
        let id = page.identity().unwrap();
        assert_eq!(id.identifier, ModuleIdentifier::QsfpPlus);
        assert_eq!(
            (id.vendor.as_str(), id.part_number.as_str(), id.revision.as_str()),
            ("VENDOR-Q", "QSFP-40G-SR4", "02")
        );
        assert_eq!(id.serial_number, "Q0001");
    }

    #[test]
    fn empty_cage_and_unknown_modules_have_no_identity() {
        let mut page = TransceiverData { page: TransceiverPage::A0, port: 0, data: [0u8; PAGE_DATA_LEN] };
        assert_eq!(page.identity(), None);
        page.data[0] = 0x7f;
        assert_eq!(page.identity(), None);
        assert_eq!(ModuleIdentifier::from_raw(0x7f), ModuleIdentifier::Unknown(0x7f));
    }

    #[test]
    fn truncated_page() {
        let mut rsp = sfp_page();
        rsp[8..12].copy_from_slice(&100u32.to_le_bytes());
        let err = decode_response::<ReadTransceiverData>(&rsp).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("page_data", 24, 256, 92));
    }
}
