//! READ_TRANSRECV_DATA (COMMON 73): the EEPROM pages of the SFP+ module in a port's cage
//! (spec/protocol.md §5.0; the page layout is SFF-8472's, codes from SFF-8024). The module is the
//! emulator's ([`crate::assumptions`], "Transceiver").

use oce_mailbox::commands::{ModuleIdentifier, PAGE_DATA_LEN, ReadTransceiverData, TransceiverData, TransceiverPage};
use oce_mailbox::status::CompletionStatus;

use super::illegal_field;
use crate::assumptions::{
    MODULE_DATE_CODE, MODULE_OUI, MODULE_PART_NUMBER, MODULE_REVISION, MODULE_VENDOR, MODULE_WAVELENGTH_NM,
};
use crate::firmware::{Context, Firmware};

/// SFF-8472 A0 byte 1: the module's function is defined by its two-wire serial ID.
const EXT_IDENTIFIER_SERIAL_ID: u8 = 0x04;
/// SFF-8472 A0 byte 2: LC connector (SFF-8024 table 4-3).
const CONNECTOR_LC: u8 = 0x07;
/// SFF-8472 A0 byte 3 bit 4: 10GBASE-SR compliance (SFF-8472 table 5-3).
const COMPLIANCE_10GBASE_SR: u8 = 0x10;
/// SFF-8472 A0 byte 11: 64B/66B encoding (SFF-8024 table 4-2).
const ENCODING_64B66B: u8 = 0x06;
/// SFF-8472 A0 byte 12: nominal signalling rate in units of 100 MBd (10.3125 GBd rounds to 103).
const NOMINAL_RATE_100MBD: u8 = 103;

/// READ_TRANSRECV_DATA: page A0 (serial ID) or A2 (diagnostics: zeros, the module has none) of
/// the module in physical port `port`.
pub(crate) fn read_transceiver_data(
    fw: &mut Firmware,
    _: &Context,
    req: ReadTransceiverData,
) -> Result<TransceiverData, CompletionStatus> {
    let ports = fw.card().state.identity.macs.len();
    let port = usize::try_from(req.port).ok().filter(|&p| p < ports).ok_or_else(illegal_field)?;
    let data = match req.page {
        TransceiverPage::A0 => serial_id_page(&fw.card().state.identity.serial, port),
        TransceiverPage::A2 => [0; PAGE_DATA_LEN],
        TransceiverPage::Unknown(_) => return Err(illegal_field()),
    };
    Ok(TransceiverData { page: req.page, port: req.port, data })
}

/// The SFF-8472 A0 page of a 10GBASE-SR SFP+ module whose serial number is the adapter's with
/// `P<port>` appended. Multi-byte numbers are big-endian, as SFF-8472 §4.1 stores them.
fn serial_id_page(adapter_serial: &str, port: usize) -> [u8; PAGE_DATA_LEN] {
    let mut p = [0u8; PAGE_DATA_LEN];
    p[0] = ModuleIdentifier::Sfp.raw();
    p[1] = EXT_IDENTIFIER_SERIAL_ID;
    p[2] = CONNECTOR_LC;
    p[3] = COMPLIANCE_10GBASE_SR;
    p[11] = ENCODING_64B66B;
    p[12] = NOMINAL_RATE_100MBD;
    ascii(&mut p[20..36], MODULE_VENDOR);
    p[37..40].copy_from_slice(&MODULE_OUI);
    ascii(&mut p[40..56], MODULE_PART_NUMBER);
    ascii(&mut p[56..60], MODULE_REVISION);
    p[60..62].copy_from_slice(&MODULE_WAVELENGTH_NM.to_be_bytes());
    p[63] = check_code(&p[..63]);
    ascii(&mut p[68..84], &format!("{adapter_serial}P{port}"));
    ascii(&mut p[84..92], MODULE_DATE_CODE);
    // Byte 92 (diagnostic monitoring type) stays 0: no digital diagnostics, page A2 is unused.
    p[95] = check_code(&p[64..95]);
    p
}

/// Writes `text` into `field`, cut to its width and padded with spaces (SFF-8472 §4.1: ASCII
/// fields are blank-padded).
fn ascii(field: &mut [u8], text: &str) {
    field.fill(b' ');
    let n = text.len().min(field.len());
    field[..n].copy_from_slice(&text.as_bytes()[..n]);
}

/// CC_BASE / CC_EXT: the low 8 bits of the sum of the bytes covered (SFF-8472 bytes 63 and 95).
fn check_code(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |sum, &b| sum.wrapping_add(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_id_page_has_the_sff_8472_fields_and_check_codes() {
        let page = serial_id_page("EMU0000000007", 1);
        assert_eq!(&page[..4], [0x03, 0x04, 0x07, 0x10]);
        assert_eq!((page[11], page[12]), (0x06, 103));
        assert_eq!(&page[20..36], b"EMULATED        ");
        assert_eq!(&page[40..56], b"SFP-10G-SR-EMU  ");
        assert_eq!(&page[60..62], [0x03, 0x52], "850 nm, big-endian");
        assert_eq!(&page[68..84], b"EMU0000000007P1 ");
        assert_eq!(&page[84..92], b"150601  ");
        let sum = |r: std::ops::Range<usize>| page[r].iter().fold(0u8, |s, &b| s.wrapping_add(b));
        assert_eq!(page[63], sum(0..63));
        assert_eq!(page[95], sum(64..95));
        assert_eq!(page[92], 0, "no digital diagnostics");
        // A long adapter serial is cut to the 16-byte field.
        assert_eq!(&serial_id_page("EMU0123456789ABCDEFG", 0)[68..84], b"EMU0123456789ABC");
    }
}
