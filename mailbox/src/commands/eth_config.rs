//! Ethernet configuration: ETH RSS_CONFIG v1 (3-1) and ACPI_WOL_MAGIC_CONFIG v1 as be2net's
//! capability query (3-12) (spec/protocol.md §5.0, spec/be2net-driver.md §2 step 11d, §4.1 step
//! 4). The counters (GET_STATISTICS) are in `eth_stats`.

use super::support::fill_to;
use crate::command::{Command, Empty};
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// ETH RSS_CONFIG v1: embedded, 196 bytes (spec/protocol.md §5.0, be2net-driver.md §4.1).
#[doc(alias = "be_cmd_req_rss_config")]
#[doc(alias = "OPCODE_ETH_RSS_CONFIG")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RssConfig {
    /// `if_id` u32 @16.
    pub if_id: u32,
    /// `enable_rss` u16 @20: the hash types (be2net: 0x3F, TCP/IP v4/v6 and UDP v4/v6); 0 turns
    /// RSS off.
    pub enable_rss: u16,
    /// `cpu_table_size_log2` u16 @22 (be2net: 7, a 128-entry table).
    pub cpu_table_size_log2: u16,
    /// `hash` @24: the 40-byte hash key.
    pub hash_key: [u8; 40],
    /// `cpu_table` @64: 128 `rss_id`s of the RSS rings.
    pub cpu_table: [u8; 128],
    /// `flush` u8 @192.
    pub flush: u8,
}

impl Wire for RssConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("if_id", self.if_id)?;
        w.u16("enable_rss", self.enable_rss)?;
        w.u16("cpu_table_size_log2", self.cpu_table_size_log2)?;
        w.bytes("hash", &self.hash_key)?;
        w.bytes("cpu_table", &self.cpu_table)?;
        w.u8("flush", self.flush)?;
        w.zeros("rsvd0", 3)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            if_id: r.u32("if_id")?,
            enable_rss: r.u16("enable_rss")?,
            cpu_table_size_log2: r.u16("cpu_table_size_log2")?,
            hash_key: r.array("hash")?,
            cpu_table: r.array("cpu_table")?,
            flush: r.u8("flush")?,
        })
    }
}

impl Command for RssConfig {
    const NAME: &'static str = "RSS_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Eth;
    const OPCODE: u8 = 1;
    const VERSION: u8 = 1;
    const EMBEDDED: bool = true;
    const LEN: usize = 196;
    type Response = Empty;
}

/// ETH ACPI_WOL_MAGIC_CONFIG v1 as be2net's probe sends it: the Wake-on-LAN capability query.
/// Non-embedded, 1204 bytes; `query_options` u8 @18 (spec/protocol.md §5.0).
#[doc(alias = "be_cmd_req_acpi_wol_magic_config_v1")]
#[doc(alias = "OPCODE_ETH_ACPI_WOL_MAGIC_CONFIG")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcpiWolQuery {
    /// `query_options` u8 @18.
    pub query_options: u8,
}

impl AcpiWolQuery {
    /// "Get the WoL capability" (`BE_GET_WOL_CAP`).
    #[doc(alias = "BE_GET_WOL_CAP")]
    pub const GET_WOL_CAPABILITY: u8 = 2;
}

impl Default for AcpiWolQuery {
    fn default() -> Self {
        Self { query_options: Self::GET_WOL_CAPABILITY }
    }
}

impl Wire for AcpiWolQuery {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.zeros("rsvd0", 2)?;
        w.u8("query_options", self.query_options)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.skip("rsvd0", 2)?;
        Ok(Self { query_options: r.u8("query_options")? })
    }
}

impl Command for AcpiWolQuery {
    const NAME: &'static str = "ACPI_WOL_MAGIC_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Eth;
    const OPCODE: u8 = 12;
    const VERSION: u8 = 1;
    const EMBEDDED: bool = false;
    const LEN: usize = 1204;
    type Response = WolCapabilities;
}

/// The ACPI_WOL_MAGIC_CONFIG v1 response: `wol_settings` u8 @18, `magic_mac` @1176.
#[doc(alias = "be_cmd_resp_acpi_wol_magic_config_v1")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WolCapabilities {
    /// Capability bits: [`WolCapabilities::WOL`], PME from D0 0x8, D1 0x10, D2 0x20, D3hot 0x40,
    /// D3cold 0x80.
    pub wol_settings: u8,
    /// The magic-packet MAC; all zero when Wake-on-LAN is not armed.
    pub magic_mac: [u8; 6],
}

impl WolCapabilities {
    /// Wake-on-LAN capable (`BE_WOL_CAP`).
    #[doc(alias = "BE_WOL_CAP")]
    pub const WOL: u8 = 0x1;
    /// Offset of `magic_mac`.
    const MAGIC_MAC_OFFSET: usize = 1176;
}

impl Wire for WolCapabilities {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.zeros("rsvd0", 2)?;
        w.u8("wol_settings", self.wol_settings)?;
        fill_to(w, "rsvd2", Self::MAGIC_MAC_OFFSET)?;
        w.bytes("magic_mac", &self.magic_mac)?;
        w.zeros("rsvd3", 22)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.skip("rsvd0", 2)?;
        let wol_settings = r.u8("wol_settings")?;
        r.seek("magic_mac", Self::MAGIC_MAC_OFFSET)?;
        Ok(Self { wol_settings, magic_mac: r.array("magic_mac")? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn rss_config_golden_bytes() {
        let mut cpu_table = [0u8; 128];
        cpu_table.iter_mut().enumerate().for_each(|(i, b)| *b = (i % 4) as u8 + 1);
        let cmd =
            RssConfig { if_id: 1, enable_rss: 0x3F, cpu_table_size_log2: 7, hash_key: [0xA5; 40], cpu_table, flush: 0 };
        let buf = encode_request(&cmd).unwrap();
        assert_eq!(buf.len(), 196);
        // ETH 1, len 180, v1; interface 1, hash types 0x3F, table log2 7.
        assert_eq!(hex::encode(&buf[..24]), concat!("0103000000000000b400000001000000", "01000000", "3f000700"));
        assert!(buf[24..64].iter().all(|&b| b == 0xA5));
        assert_eq!(&buf[64..68], &[1, 2, 3, 4]);
        assert_eq!(buf[192..], [0, 0, 0, 0]);
        assert_eq!(decode_request::<RssConfig>(&buf).unwrap().1, cmd);
    }

    #[test]
    fn acpi_wol_query_golden_bytes() {
        let buf = encode_request(&AcpiWolQuery::default()).unwrap();
        assert_eq!(buf.len(), 1204);
        // ETH 12, len 1188, v1; query_options 2 @18.
        assert_eq!(hex::encode(&buf[..20]), concat!("0c03000000000000a404000001000000", "00000200"));
        let mut rsp = buf.clone();
        rsp[8..12].copy_from_slice(&1188u32.to_le_bytes());
        rsp[18] = WolCapabilities::WOL;
        rsp[1176..1182].copy_from_slice(&[0, 0, 0xC9, 1, 2, 3]);
        let (_, caps) = decode_response::<AcpiWolQuery>(&rsp).unwrap();
        assert_eq!(caps, WolCapabilities { wol_settings: 1, magic_mac: [0, 0, 0xC9, 1, 2, 3] });
        let mut out = vec![0u8; 1204];
        caps.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(out[16..], rsp[16..]);
    }
}
