//! GET_CNTL_ATTRIBUTES (COMMON 32): the controller's identity — model, serial, firmware
//! strings, port, PCI IDs.

use byteorder::{ByteOrder, LittleEndian};

use super::support::{empty_body, fill_to, jump};
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer, decode_c_string};

/// GET_CNTL_ATTRIBUTES: non-embedded v0, 592-byte buffer (16-byte header + 576-byte attribute
/// block), body reserved (spec/protocol.md §5.2). be2net treats its failure as fatal at probe.
#[doc(alias = "be_cmd_req_cntl_attribs")]
#[doc(alias = "OPCODE_COMMON_GET_CNTL_ATTRIBUTES")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetCntlAttributes;

empty_body!(GetCntlAttributes);

impl Command for GetCntlAttributes {
    const NAME: &'static str = "GET_CNTL_ATTRIBUTES";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 32;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = 592;
    type Response = CntlAttributes;
}

/// The controller attribute block (spec/protocol.md §5.2, combined from T14 be_hw.h, FreeBSD
/// oce_hw.h and ocrdma). Buffer offsets are the spec's attribute offsets + 16.
///
/// The decoder reads up to and including `netfilters` (@536), so it needs a `response_length`
/// of at least [`CntlAttributes::MIN_LEN`] (521) bytes; every historical layout (540, 544, 576)
/// is longer. The encoder writes [`CntlAttributes::ENCODED_LEN`] (540) bytes, reserved tail
/// included, which is what an emulator should report as `response_length`.
///
/// **Serial number.** The encoding is undocumented (spec §10): T14 and FreeBSD declare a 32-byte
/// string, recent be2net reads 8 little-endian u32 words and keeps the low 16 bits of each.
/// ocetool keeps the 32 raw bytes, shows them as a NUL-padded ASCII string
/// ([`CntlAttributes::serial_string`], what the emulator writes, design.md §6), and offers
/// be2net's view as [`CntlAttributes::serial_words`].
#[doc(alias = "mgmt_controller_attrib")]
#[doc(alias = "mgmt_hba_attribs")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CntlAttributes {
    /// `flashrom_version_string` @16.
    pub flashrom_version: String,
    /// `manufacturer_name` @48.
    pub manufacturer: String,
    /// `supported_modes` u32 @80.
    pub supported_modes: u32,
    /// EEPROM version low byte @84 (F).
    pub eeprom_version_lo: u8,
    /// EEPROM version high byte @85 (F).
    pub eeprom_version_hi: u8,
    /// Mailbox data-structure version u32 @88 (F).
    pub mbx_ds_version: u32,
    /// EP firmware data-structure version u32 @92 (F).
    pub ep_fw_ds_version: u32,
    /// `ncsi_version_string` @96 (12 bytes).
    pub ncsi_version: String,
    /// `default_extended_timeout` u32 @108.
    pub default_extended_timeout: u32,
    /// `controller_model_number` @112: the model name (ocrdma shows it).
    pub model_number: String,
    /// `controller_description` @144 (64 bytes).
    pub description: String,
    /// `controller_serial_number` @208, raw (see the type docs).
    pub serial_number: [u8; 32],
    /// `ip_version_string` @240.
    pub ip_version: String,
    /// `firmware_version_string` @272.
    pub firmware_version: String,
    /// `bios_version_string` @304.
    pub bios_version: String,
    /// `redboot_version_string` @336.
    pub redboot_version: String,
    /// `driver_version_string` @368.
    pub driver_version: String,
    /// `fw_on_flash_version_string` @400.
    pub fw_on_flash_version: String,
    /// `functionalities_supported` u32 @432.
    pub functionalities_supported: u32,
    /// `max_cdb_length` u16 @436.
    pub max_cdb_length: u16,
    /// `asic_revision` u8 @438.
    pub asic_revision: u8,
    /// `generational_guid` @439 (16 bytes).
    pub generational_guid: [u8; 16],
    /// `hba_port_count` u8 @455.
    pub hba_port_count: u8,
    /// `default_link_down_timeout` u16 @456.
    pub default_link_down_timeout: u16,
    /// `iscsi_version_min_max` u8 @458.
    pub iscsi_version_min_max: u8,
    /// `multifunction_device` u8 @459.
    pub multifunction_device: u8,
    /// `cache_valid` u8 @460.
    pub cache_valid: u8,
    /// `hba_status` u8 @461.
    pub hba_status: u8,
    /// `max_domains_supported` u8 @462.
    pub max_domains_supported: u8,
    /// `phy_port` u8 @463: bits 5:0 port number (be2net `hba_port_num`), bits 7:6 port type.
    pub phy_port: u8,
    /// `firmware_post_status` u32 @464.
    pub firmware_post_status: u32,
    /// `hba_mtu[8]` u32 each @468.
    pub hba_mtu: [u32; 8],
    /// iSCSI features u8 @500 (F).
    pub iscsi_features: u8,
    /// ASIC generation u8 @501 (F).
    pub asic_generation: u8,
    /// `pci_vendor_id` u16 @516.
    pub pci_vendor_id: u16,
    /// `pci_device_id` u16 @518.
    pub pci_device_id: u16,
    /// `pci_sub_vendor_id` u16 @520.
    pub pci_sub_vendor_id: u16,
    /// `pci_sub_system_id` u16 @522.
    pub pci_sub_system_id: u16,
    /// `pci_bus_number` u8 @524.
    pub pci_bus_number: u8,
    /// `pci_device_number` u8 @525.
    pub pci_device_number: u8,
    /// `pci_function_number` u8 @526 (be2net's `pf_num` on BEx).
    pub pci_function_number: u8,
    /// `interface_type` u8 @527.
    pub interface_type: u8,
    /// `unique_identifier` u64 @528.
    pub unique_identifier: u64,
    /// Netfilters u8 @536 (F).
    pub netfilters: u8,
}

/// Width of most string fields.
const STR: usize = 32;

impl CntlAttributes {
    /// Body bytes the decoder needs: through `netfilters` (attribute offset 520).
    pub const MIN_LEN: usize = 521;
    /// Body bytes the encoder writes: the 540-byte T14/ocrdma layout, reserved tail included.
    pub const ENCODED_LEN: usize = 540;

    /// The physical port number (bits 5:0 of `phy_port`), be2net's `hba_port_num`.
    pub fn port_number(&self) -> u8 {
        self.phy_port & 0x3F
    }

    /// The port type (bits 7:6 of `phy_port`).
    pub fn port_type(&self) -> u8 {
        self.phy_port >> 6
    }

    /// The serial number read as a NUL-padded ASCII string (T14 / FreeBSD view).
    pub fn serial_string(&self) -> String {
        decode_c_string(&self.serial_number)
    }

    /// The serial number as be2net reads it: 8 little-endian u32 words, low 16 bits of each.
    pub fn serial_words(&self) -> [u16; 8] {
        let mut out = [0u16; 8];
        for (word, chunk) in out.iter_mut().zip(self.serial_number.chunks_exact(4)) {
            *word = LittleEndian::read_u32(chunk) as u16;
        }
        out
    }

    /// A serial-number field holding `s` as NUL-padded ASCII (cut to 31 bytes).
    pub fn serial_from_str(s: &str) -> [u8; 32] {
        let mut out = [0u8; 32];
        let n = s.len().min(31);
        out[..n].copy_from_slice(&s.as_bytes()[..n]);
        out
    }
}

impl Wire for CntlAttributes {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let start = w.position();
        w.string("flashrom_version_string", &self.flashrom_version, STR)?;
        w.string("manufacturer_name", &self.manufacturer, STR)?;
        w.u32("supported_modes", self.supported_modes)?;
        w.u8("eeprom_version_lo", self.eeprom_version_lo)?;
        w.u8("eeprom_version_hi", self.eeprom_version_hi)?;
        w.zeros("rsvd_eeprom", 2)?;
        w.u32("mbx_ds_version", self.mbx_ds_version)?;
        w.u32("ep_fw_ds_version", self.ep_fw_ds_version)?;
        w.string("ncsi_version_string", &self.ncsi_version, 12)?;
        w.u32("default_extended_timeout", self.default_extended_timeout)?;
        w.string("controller_model_number", &self.model_number, STR)?;
        w.string("controller_description", &self.description, 64)?;
        w.bytes("controller_serial_number", &self.serial_number)?;
        w.string("ip_version_string", &self.ip_version, STR)?;
        w.string("firmware_version_string", &self.firmware_version, STR)?;
        w.string("bios_version_string", &self.bios_version, STR)?;
        w.string("redboot_version_string", &self.redboot_version, STR)?;
        w.string("driver_version_string", &self.driver_version, STR)?;
        w.string("fw_on_flash_version_string", &self.fw_on_flash_version, STR)?;
        w.u32("functionalities_supported", self.functionalities_supported)?;
        w.u16("max_cdb_length", self.max_cdb_length)?;
        w.u8("asic_revision", self.asic_revision)?;
        w.bytes("generational_guid", &self.generational_guid)?;
        w.u8("hba_port_count", self.hba_port_count)?;
        w.u16("default_link_down_timeout", self.default_link_down_timeout)?;
        w.u8("iscsi_version_min_max", self.iscsi_version_min_max)?;
        w.u8("multifunction_device", self.multifunction_device)?;
        w.u8("cache_valid", self.cache_valid)?;
        w.u8("hba_status", self.hba_status)?;
        w.u8("max_domains_supported", self.max_domains_supported)?;
        w.u8("phy_port", self.phy_port)?;
        w.u32("firmware_post_status", self.firmware_post_status)?;
        self.hba_mtu.iter().try_for_each(|&mtu| w.u32("hba_mtu", mtu))?;
        w.u8("iscsi_features", self.iscsi_features)?;
        w.u8("asic_generation", self.asic_generation)?;
        fill_to(w, "rsvd_pci", start + 500)?;
        w.u16("pci_vendor_id", self.pci_vendor_id)?;
        w.u16("pci_device_id", self.pci_device_id)?;
        w.u16("pci_sub_vendor_id", self.pci_sub_vendor_id)?;
        w.u16("pci_sub_system_id", self.pci_sub_system_id)?;
        w.u8("pci_bus_number", self.pci_bus_number)?;
        w.u8("pci_device_number", self.pci_device_number)?;
        w.u8("pci_function_number", self.pci_function_number)?;
        w.u8("interface_type", self.interface_type)?;
        w.u64("unique_identifier", self.unique_identifier)?;
        w.u8("netfilters", self.netfilters)?;
        fill_to(w, "rsvd_tail", start + Self::ENCODED_LEN)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start = r.position();
        let flashrom_version = r.string("flashrom_version_string", STR)?;
        let manufacturer = r.string("manufacturer_name", STR)?;
        let supported_modes = r.u32("supported_modes")?;
        let eeprom_version_lo = r.u8("eeprom_version_lo")?;
        let eeprom_version_hi = r.u8("eeprom_version_hi")?;
        jump(r, start + 72);
        let mbx_ds_version = r.u32("mbx_ds_version")?;
        let ep_fw_ds_version = r.u32("ep_fw_ds_version")?;
        let ncsi_version = r.string("ncsi_version_string", 12)?;
        let default_extended_timeout = r.u32("default_extended_timeout")?;
        let model_number = r.string("controller_model_number", STR)?;
        let description = r.string("controller_description", 64)?;
        let serial_number = r.array("controller_serial_number")?;
        let ip_version = r.string("ip_version_string", STR)?;
        let firmware_version = r.string("firmware_version_string", STR)?;
        let bios_version = r.string("bios_version_string", STR)?;
        let redboot_version = r.string("redboot_version_string", STR)?;
        let driver_version = r.string("driver_version_string", STR)?;
        let fw_on_flash_version = r.string("fw_on_flash_version_string", STR)?;
        let functionalities_supported = r.u32("functionalities_supported")?;
        let max_cdb_length = r.u16("max_cdb_length")?;
        let asic_revision = r.u8("asic_revision")?;
        let generational_guid = r.array("generational_guid")?;
        let hba_port_count = r.u8("hba_port_count")?;
        let default_link_down_timeout = r.u16("default_link_down_timeout")?;
        let iscsi_version_min_max = r.u8("iscsi_version_min_max")?;
        let multifunction_device = r.u8("multifunction_device")?;
        let cache_valid = r.u8("cache_valid")?;
        let hba_status = r.u8("hba_status")?;
        let max_domains_supported = r.u8("max_domains_supported")?;
        let phy_port = r.u8("phy_port")?;
        let firmware_post_status = r.u32("firmware_post_status")?;
        let mut hba_mtu = [0u32; 8];
        for mtu in &mut hba_mtu {
            *mtu = r.u32("hba_mtu")?;
        }
        let iscsi_features = r.u8("iscsi_features")?;
        let asic_generation = r.u8("asic_generation")?;
        jump(r, start + 500);
        Ok(Self {
            flashrom_version,
            manufacturer,
            supported_modes,
            eeprom_version_lo,
            eeprom_version_hi,
            mbx_ds_version,
            ep_fw_ds_version,
            ncsi_version,
            default_extended_timeout,
            model_number,
            description,
            serial_number,
            ip_version,
            firmware_version,
            bios_version,
            redboot_version,
            driver_version,
            fw_on_flash_version,
            functionalities_supported,
            max_cdb_length,
            asic_revision,
            generational_guid,
            hba_port_count,
            default_link_down_timeout,
            iscsi_version_min_max,
            multifunction_device,
            cache_valid,
            hba_status,
            max_domains_supported,
            phy_port,
            firmware_post_status,
            hba_mtu,
            iscsi_features,
            asic_generation,
            pci_vendor_id: r.u16("pci_vendor_id")?,
            pci_device_id: r.u16("pci_device_id")?,
            pci_sub_vendor_id: r.u16("pci_sub_vendor_id")?,
            pci_sub_system_id: r.u16("pci_sub_system_id")?,
            pci_bus_number: r.u8("pci_bus_number")?,
            pci_device_number: r.u8("pci_device_number")?,
            pci_function_number: r.u8("pci_function_number")?,
            interface_type: r.u8("interface_type")?,
            unique_identifier: r.u64("unique_identifier")?,
            netfilters: r.u8("netfilters")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};

    fn put(buf: &mut [u8], offset: usize, hex: &str) {
        let bytes = hex::decode(hex).unwrap();
        buf[offset..offset + bytes.len()].copy_from_slice(&bytes);
    }

    fn text(buf: &mut [u8], offset: usize, s: &str) {
        buf[offset..offset + s.len()].copy_from_slice(s.as_bytes());
    }

    /// A 592-byte response with every field set, placed at the §5.2 offsets (+16).
    fn response() -> Vec<u8> {
        let mut b = vec![0u8; GetCntlAttributes::LEN];
        put(&mut b, 0, concat!("20010000", "00000000", "1c020000", "40020000")); // opcode 32, resp_len 540
        text(&mut b, 16, "4.9.416.0"); // flashrom_version_string
        text(&mut b, 48, "Emulex"); // manufacturer_name
        put(&mut b, 80, "44332211"); // supported_modes
        put(&mut b, 84, "0501"); // EEPROM version lo, hi
        put(&mut b, 88, "a4a3a2a1"); // mailbox data-structure version
        put(&mut b, 92, "b4b3b2b1"); // EP firmware data-structure version
        text(&mut b, 96, "1.0.0"); // ncsi_version_string (12)
        put(&mut b, 108, "3c000000"); // default_extended_timeout 60
        text(&mut b, 112, "OCe14102-NM"); // controller_model_number
        text(&mut b, 144, "Emulex OCe14102"); // controller_description (64)
        text(&mut b, 208, "FC12345678"); // controller_serial_number
        text(&mut b, 240, "2.0"); // ip_version_string
        text(&mut b, 272, "11.1.172.23"); // firmware_version_string
        text(&mut b, 304, "11.1.172.0"); // bios_version_string
        text(&mut b, 336, "rb1"); // redboot_version_string
        text(&mut b, 400, "11.4.1231.6"); // fw_on_flash_version_string
        put(&mut b, 432, "23010000"); // functionalities_supported
        put(&mut b, 436, "1000"); // max_cdb_length 16
        put(&mut b, 438, "10"); // asic_revision
        put(&mut b, 439, "000102030405060708090a0b0c0d0e0f"); // generational_guid
        put(&mut b, 455, "02"); // hba_port_count
        put(&mut b, 456, "1e00"); // default_link_down_timeout 30
        put(&mut b, 458, "2101010010"); // iscsi min/max, multifunction, cache_valid, hba_status, max_domains
        put(&mut b, 463, "41"); // phy_port: port 1, type 1
        put(&mut b, 464, "00c00000"); // firmware_post_status
        put(&mut b, 468, &"dc050000".repeat(8)); // hba_mtu[8] = 1500
        put(&mut b, 500, "0f04"); // iSCSI features, asic_generation
        put(&mut b, 516, "df102007df1002e7"); // vendor 10df, device 0720, subvendor 10df, subsystem e702
        put(&mut b, 524, "03000102"); // bus 3, device 0, function 1, interface_type 2
        put(&mut b, 528, "efcdab8967452301"); // unique_identifier
        put(&mut b, 536, "5a"); // netfilters
        b
    }

    #[test]
    fn request_golden_bytes() {
        let buf = encode_request(&GetCntlAttributes).unwrap();
        assert_eq!(buf.len(), 592);
        // opcode 32 (0x20), subsystem 1, request_length 576 (0x240), version 0.
        assert_eq!(hex::encode(&buf[..16]), "20010000000000004002000000000000");
        assert!(buf[16..].iter().all(|&b| b == 0));
    }

    #[test]
    fn response_golden_offsets() {
        let buf = response();
        let (hdr, a) = decode_response::<GetCntlAttributes>(&buf).unwrap();
        assert_eq!(hdr.response_length as usize, CntlAttributes::ENCODED_LEN);
        assert_eq!((a.flashrom_version.as_str(), a.manufacturer.as_str()), ("4.9.416.0", "Emulex"));
        assert_eq!((a.supported_modes, a.eeprom_version_lo, a.eeprom_version_hi), (0x1122_3344, 5, 1));
        assert_eq!((a.mbx_ds_version, a.ep_fw_ds_version), (0xa1a2_a3a4, 0xb1b2_b3b4));
        assert_eq!((a.ncsi_version.as_str(), a.default_extended_timeout), ("1.0.0", 60));
        assert_eq!((a.model_number.as_str(), a.description.as_str()), ("OCe14102-NM", "Emulex OCe14102"));
        assert_eq!(a.serial_string(), "FC12345678");
        assert_eq!(a.ip_version, "2.0");
        assert_eq!((a.firmware_version.as_str(), a.fw_on_flash_version.as_str()), ("11.1.172.23", "11.4.1231.6"));
        assert_eq!(
            (a.bios_version.as_str(), a.redboot_version.as_str(), a.driver_version.as_str()),
            ("11.1.172.0", "rb1", "")
        );
        assert_eq!((a.functionalities_supported, a.max_cdb_length, a.asic_revision), (0x123, 16, 0x10));
        assert_eq!(a.generational_guid[15], 0x0f);
        assert_eq!((a.hba_port_count, a.default_link_down_timeout), (2, 30));
        assert_eq!(
            (a.iscsi_version_min_max, a.multifunction_device, a.cache_valid, a.hba_status, a.max_domains_supported),
            (0x21, 1, 1, 0, 0x10)
        );
        assert_eq!((a.phy_port, a.port_number(), a.port_type()), (0x41, 1, 1));
        assert_eq!((a.firmware_post_status, a.hba_mtu), (0xc000, [1500; 8]));
        assert_eq!((a.iscsi_features, a.asic_generation), (0x0f, 4));
        assert_eq!(
            (a.pci_vendor_id, a.pci_device_id, a.pci_sub_vendor_id, a.pci_sub_system_id),
            (0x10df, 0x0720, 0x10df, 0xe702)
        );
        assert_eq!((a.pci_bus_number, a.pci_device_number, a.pci_function_number, a.interface_type), (3, 0, 1, 2));
        assert_eq!((a.unique_identifier, a.netfilters), (0x0123_4567_89ab_cdef, 0x5a));

        let mut out = vec![0xEEu8; GetCntlAttributes::LEN];
        let mut w = Writer::at(&mut out, 16);
        a.encode(&mut w).unwrap();
        assert_eq!(w.position(), 16 + CntlAttributes::ENCODED_LEN);
        assert_eq!(out[16..556], buf[16..556]);
    }

    #[test]
    fn serial_number_both_views() {
        let a = CntlAttributes { serial_number: CntlAttributes::serial_from_str("FC12345678"), ..Default::default() };
        // "FC12" = 0x32314346 → 0x4346; "3456" → 0x3433; "78\0\0" → 0x3837; the rest are zero.
        assert_eq!(a.serial_words(), [0x4346, 0x3433, 0x3837, 0, 0, 0, 0, 0]);
        assert_eq!(a.serial_string(), "FC12345678");
        assert_eq!(CntlAttributes::serial_from_str(&"x".repeat(40))[31], 0);
    }

    #[test]
    fn short_response_length_names_the_missing_field() {
        let mut buf = response();
        put(&mut buf, 8, "08020000"); // 520 body bytes: one short of netfilters
        let err = decode_response::<GetCntlAttributes>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("netfilters", 536, 1, 0));
        put(&mut buf, 8, "09020000"); // 521 = MIN_LEN is enough
        assert!(decode_response::<GetCntlAttributes>(&buf).is_ok());
        put(&mut buf, 8, "c8000000"); // 200: the serial number is cut
        let err = decode_response::<GetCntlAttributes>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("controller_serial_number", 208, 32, 8));
        put(&mut buf, 8, "ea010000"); // 490: the gap before the PCI IDs is jumped, the IDs are missing
        let err = decode_response::<GetCntlAttributes>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("pci_vendor_id", 516, 2, 0));
    }
}
