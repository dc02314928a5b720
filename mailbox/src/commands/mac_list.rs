//! GET_MAC_LIST (COMMON 147): the function's permanent and programmed MAC addresses.

use super::support::{format_mac, jump};
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// GET_MAC_LIST: non-embedded v0, buffer 548 bytes (spec/protocol.md §5.6). Per VF, be2net sets
/// the header `domain`; ocetool always queries itself.
#[doc(alias = "be_cmd_req_get_mac_list")]
#[doc(alias = "OPCODE_COMMON_GET_MAC_LIST")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetMacList {
    /// `mac_type` u8 @16 ([`GetMacList::MAC_TYPE_NETWORK`] for the NIC).
    pub mac_type: u8,
    /// `perm_override` u8 @17: 1 = "give me the permanent address".
    pub perm_override: bool,
    /// `iface_id` u16 @18.
    pub iface_id: u16,
    /// `mac_id` u32 @20, when asking about a specific pmac.
    pub mac_id: u32,
}

impl GetMacList {
    /// Network MAC (spec §5.5, §5.6).
    #[doc(alias = "MAC_ADDRESS_TYPE_NETWORK")]
    pub const MAC_TYPE_NETWORK: u8 = 1;

    /// The query be2net uses for the permanent MAC on Skyhawk: network type, perm_override.
    pub fn permanent() -> Self {
        Self { mac_type: Self::MAC_TYPE_NETWORK, perm_override: true, iface_id: 0, mac_id: 0 }
    }
}

impl Wire for GetMacList {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("mac_type", self.mac_type)?;
        w.u8("perm_override", u8::from(self.perm_override))?;
        w.u16("iface_id", self.iface_id)?;
        w.u32("mac_id", self.mac_id)?;
        w.zeros("rsvd", 12)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            mac_type: r.u8("mac_type")?,
            perm_override: r.u8("perm_override")? != 0,
            iface_id: r.u16("iface_id")?,
            mac_id: r.u32("mac_id")?,
        })
    }
}

impl Command for GetMacList {
    const NAME: &'static str = "GET_MAC_LIST";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 147;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = 548;
    type Response = MacList;
}

/// One 8-byte MAC-list entry: size u16, then 6 bytes whose meaning the size selects.
#[doc(alias = "get_list_macaddr")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacEntry {
    /// Size 6: a MAC address at entry bytes 2..8.
    Mac([u8; 6]),
    /// Size 4: a programmed MAC's pmac_id, u32 at entry bytes 4..8.
    PmacId(u32),
    /// Any other size (0 for an empty slot): kept as sent.
    Other {
        /// The size field.
        size: u16,
        /// Entry bytes 2..8.
        raw: [u8; 6],
    },
}

impl MacEntry {
    /// Bytes per entry.
    pub const LEN: usize = 8;
    /// An empty slot (size 0).
    pub const EMPTY: Self = Self::Other { size: 0, raw: [0; 6] };

    /// The MAC address, if this entry holds one.
    pub fn mac(&self) -> Option<[u8; 6]> {
        match self {
            Self::Mac(mac) => Some(*mac),
            _ => None,
        }
    }
}

impl std::fmt::Display for MacEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Mac(mac) => f.write_str(&format_mac(mac)),
            Self::PmacId(id) => write!(f, "pmac_id {id}"),
            Self::Other { size, .. } => write!(f, "entry of size {size}"),
        }
    }
}

impl Wire for MacEntry {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        match self {
            Self::Mac(mac) => {
                w.u16("mac_addr_size", 6)?;
                w.bytes("mac_addr", mac)
            }
            Self::PmacId(id) => {
                w.u16("mac_addr_size", 4)?;
                w.zeros("mac_id_rsvd", 2)?;
                w.u32("mac_id", *id)
            }
            Self::Other { size, raw } => {
                w.u16("mac_addr_size", *size)?;
                w.bytes("mac_addr", raw)
            }
        }
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start = r.position();
        let size = r.u16("mac_addr_size")?;
        Ok(match size {
            6 => Self::Mac(r.array("mac_addr")?),
            4 => {
                jump(r, start + 4);
                Self::PmacId(r.u32("mac_id")?)
            }
            size => Self::Other { size, raw: r.array("mac_addr")? },
        })
    }
}

/// The GET_MAC_LIST response (spec/protocol.md §5.6).
#[doc(alias = "be_cmd_resp_get_mac_list")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacList {
    /// Factory-default entry @16.
    pub factory: MacEntry,
    /// "Soft MAC for mac_id" entry @24.
    pub soft: MacEntry,
    /// `true_mac_count` u8 @32.
    pub true_mac_count: u8,
    /// `pseudo_mac_count` u8 @33.
    pub pseudo_mac_count: u8,
    /// `mac_list_size` u8 @34.
    pub mac_list_size: u8,
    /// The list @36: `true_mac_count + pseudo_mac_count` entries are read (as be2net scans
    /// them), at most [`MacList::MAX_ENTRIES`]. The encoder writes the counts as given.
    pub entries: Vec<MacEntry>,
}

impl MacList {
    /// Entries the list area holds.
    pub const MAX_ENTRIES: usize = 64;

    /// A list holding one permanent MAC, as the emulator answers (spec §5.6).
    pub fn single(mac: [u8; 6]) -> Self {
        Self {
            factory: MacEntry::Mac(mac),
            soft: MacEntry::EMPTY,
            true_mac_count: 1,
            pseudo_mac_count: 0,
            mac_list_size: 1,
            entries: vec![MacEntry::Mac(mac)],
        }
    }

    /// The first MAC address in the list, else the factory-default one: the permanent MAC
    /// as be2net takes it with `perm_override` set.
    pub fn permanent_mac(&self) -> Option<[u8; 6]> {
        self.entries.iter().find_map(MacEntry::mac).or_else(|| self.factory.mac())
    }

    /// The first pmac_id entry: an active programmed MAC (spec §5.6).
    pub fn active_pmac_id(&self) -> Option<u32> {
        self.entries.iter().find_map(|e| match e {
            MacEntry::PmacId(id) => Some(*id),
            _ => None,
        })
    }
}

impl Wire for MacList {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.entries.len() > Self::MAX_ENTRIES {
            return Err(WireError {
                field: "macaddr_list",
                offset: w.position() + 20,
                needed: self.entries.len() * MacEntry::LEN,
                available: Self::MAX_ENTRIES * MacEntry::LEN,
            });
        }
        self.factory.encode(w)?;
        self.soft.encode(w)?;
        w.u8("true_mac_count", self.true_mac_count)?;
        w.u8("pseudo_mac_count", self.pseudo_mac_count)?;
        w.u8("mac_list_size", self.mac_list_size)?;
        w.zeros("rsvd", 1)?;
        self.entries.iter().try_for_each(|e| e.encode(w))
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let factory = MacEntry::decode(r)?;
        let soft = MacEntry::decode(r)?;
        let true_mac_count = r.u8("true_mac_count")?;
        let pseudo_mac_count = r.u8("pseudo_mac_count")?;
        let mac_list_size = r.u8("mac_list_size")?;
        r.skip("rsvd", 1)?;
        let count = usize::from(true_mac_count) + usize::from(pseudo_mac_count);
        let mut entries = Vec::with_capacity(count.min(Self::MAX_ENTRIES));
        for _ in 0..count {
            entries.push(MacEntry::decode(r)?);
        }
        Ok(Self { factory, soft, true_mac_count, pseudo_mac_count, mac_list_size, entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn request_golden_bytes() {
        let buf = encode_request(&GetMacList::permanent()).unwrap();
        assert_eq!(buf.len(), 548);
        // opcode 147 (0x93), request_length 532 (0x214), version 0; mac_type 1, perm_override 1,
        // iface_id 0, mac_id 0, 12 reserved.
        assert_eq!(
            hex::encode(&buf[..24]),
            concat!("93010000", "00000000", "14020000", "00000000", "01010000", "00000000")
        );
        assert!(buf[24..].iter().all(|&b| b == 0));
        let q = GetMacList { mac_type: 1, perm_override: false, iface_id: 0x1234, mac_id: 7 };
        let buf = encode_request(&q).unwrap();
        assert_eq!(hex::encode(&buf[16..24]), "0100341207000000");
        assert_eq!(decode_request::<GetMacList>(&buf).unwrap().1, q);
    }

    fn response() -> Vec<u8> {
        hex::decode(concat!(
            "93010000",
            "00000000",
            "2c000000",
            "2c000000", // response_length 44
            "0600",
            "0000c9aabbcc", // @16 factory: size 6, MAC
            "0000",
            "000000000000", // @24 soft: empty
            "02",
            "01",
            "03",
            "00", // @32 true 2, pseudo 1, list size 3, rsvd
            "0400",
            "0000",
            "2a000000", // @36 entry 0: size 4, rsvd, pmac_id 42
            "0600",
            "0000c9aabbcd", // @44 entry 1: MAC
            "0200",
            "010203040506", // @52 entry 2: size 2, kept raw
        ))
        .unwrap()
    }

    #[test]
    fn response_golden_offsets() {
        let buf = response();
        let (_, list) = decode_response::<GetMacList>(&buf).unwrap();
        assert_eq!(list.factory, MacEntry::Mac([0, 0, 0xc9, 0xaa, 0xbb, 0xcc]));
        assert_eq!(list.soft, MacEntry::EMPTY);
        assert_eq!((list.true_mac_count, list.pseudo_mac_count, list.mac_list_size), (2, 1, 3));
        assert_eq!(
            list.entries,
            [
                MacEntry::PmacId(42),
                MacEntry::Mac([0, 0, 0xc9, 0xaa, 0xbb, 0xcd]),
                MacEntry::Other { size: 2, raw: [1, 2, 3, 4, 5, 6] }
            ]
        );
        assert_eq!(list.active_pmac_id(), Some(42));
        assert_eq!(list.permanent_mac(), Some([0, 0, 0xc9, 0xaa, 0xbb, 0xcd]));
        assert_eq!(list.entries[1].to_string(), "00:00:c9:aa:bb:cd");
        let mut out = vec![0u8; buf.len()];
        list.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(out[16..], buf[16..]);
    }

    #[test]
    fn single_mac_answer() {
        let list = MacList::single([0, 0, 0xc9, 1, 2, 3]);
        let mut out = vec![0u8; 548];
        list.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(
            hex::encode(&out[16..44]),
            concat!("06000000c9010203", "0000000000000000", "01000100", "06000000c9010203")
        );
        let back = MacList::decode(&mut Reader::at(&out, 16)).unwrap();
        assert_eq!(back.permanent_mac(), Some([0, 0, 0xc9, 1, 2, 3]));
    }

    #[test]
    fn truncated_and_oversized() {
        let mut buf = response();
        buf[8] = 38; // the third entry is cut after its size field
        let err = decode_response::<GetMacList>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("mac_addr", 54, 6, 0));
        buf[8] = 17;
        let err = decode_response::<GetMacList>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("pseudo_mac_count", 33, 1, 0));
        let list = MacList { entries: vec![MacEntry::EMPTY; 65], ..MacList::single([0; 6]) };
        let mut out = vec![0u8; 1024];
        let err = list.encode(&mut Writer::at(&mut out, 16)).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("macaddr_list", 36, 520, 512));
    }
}
