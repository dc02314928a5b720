//! GET_PROFILE_CONFIG (COMMON 164) and SET_PROFILE_CONFIG (COMMON 165): a profile's resource
//! descriptors, read and changed (spec/protocol.md §5.8, §6.4).

use super::descriptors::{RESOURCE_DESC_SIZE_V1, ResourceDescriptor, decode_descriptors, encode_descriptors};
use super::func_config::{MAX_RESOURCE_DESC, nics, pcies, ports};
use super::support::code_enum;
use crate::command::{Command, Empty};
use crate::commands::descriptors::{NicDescriptor, PcieDescriptor, PortDescriptor};
use crate::header::{HEADER_LEN, Subsystem};
use crate::wire::{Reader, Wire, WireError, Writer};

code_enum! {
    /// Which copy of the profile GET_PROFILE_CONFIG reads: the type byte @17 without the
    /// QUERY_MODIFIABLE bit (spec/protocol.md §5.8).
    ProfileSelector(u8) {
        /// What is stored in flash: takes effect after a reboot.
        #[doc(alias = "SAVED_PROFILE_TYPE")]
        Saved = 0x0, "saved";
        /// What runs now.
        #[doc(alias = "ACTIVE_PROFILE_TYPE")]
        Active = 0x2, "active";
    }
}

/// GET_PROFILE_CONFIG: non-embedded, version 1 (Lancer 0), buffer 23252 bytes.
///
/// Request body: profile id @16, type @17, reserved u16 @18. The type byte is be2net's (L);
/// the profile id is O sli4.h's `profile_id` (bits 7:0 of the dword @16, with `typ` in bits
/// 9:8 — the same byte be2net's type lands in). be2net leaves @16 at 0, meaning the active
/// profile; a non-zero id asks for that profile. The spec (§5.8, §6.4) only says "O also
/// carries a profile ID in the request", so its placement in byte 16 is ocetool's and its
/// emulator's reading of O, not verified on hardware. The header `domain` byte would select
/// another function; ocetool always queries itself.
#[doc(alias = "be_cmd_req_get_profile_config")]
#[doc(alias = "OPCODE_COMMON_GET_PROFILE_CONFIG")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetProfileConfig {
    /// Profile id @16 (0 = the active profile, as be2net sends it).
    pub profile_id: u8,
    /// Saved or active copy (type @17 bits other than 3).
    pub selector: ProfileSelector,
    /// Type bit 3 (`QUERY_MODIFIABLE_FIELDS_TYPE`): ask which fields may change; all-ones
    /// fields in the answer are modifiable.
    pub query_modifiable: bool,
}

impl GetProfileConfig {
    /// The QUERY_MODIFIABLE bit of the type byte.
    #[doc(alias = "QUERY_MODIFIABLE_FIELDS_TYPE")]
    pub const QUERY_MODIFIABLE: u8 = 0x8;

    /// The running profile, as be2net asks for it at probe.
    pub fn active() -> Self {
        Self { profile_id: 0, selector: ProfileSelector::Active, query_modifiable: false }
    }

    /// The saved (next-boot) copy of the current profile.
    pub fn saved() -> Self {
        Self { profile_id: 0, selector: ProfileSelector::Saved, query_modifiable: false }
    }

    /// The type byte @17.
    pub fn type_byte(&self) -> u8 {
        self.selector.raw() | if self.query_modifiable { Self::QUERY_MODIFIABLE } else { 0 }
    }
}

impl Default for GetProfileConfig {
    fn default() -> Self {
        Self::active()
    }
}

impl Wire for GetProfileConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("profile_id", self.profile_id)?;
        w.u8("type", self.type_byte())?;
        w.zeros("rsvd", 2)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let profile_id = r.u8("profile_id")?;
        let ty = r.u8("type")?;
        Ok(Self {
            profile_id,
            selector: ProfileSelector::from_raw(ty & !Self::QUERY_MODIFIABLE),
            query_modifiable: ty & Self::QUERY_MODIFIABLE != 0,
        })
    }
}

impl Command for GetProfileConfig {
    const NAME: &'static str = "GET_PROFILE_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 164;
    const VERSION: u8 = 1;
    const EMBEDDED: bool = false;
    const LEN: usize = HEADER_LEN + 4 + MAX_RESOURCE_DESC * RESOURCE_DESC_SIZE_V1;
    type Response = ProfileConfig;
}

/// The GET_PROFILE_CONFIG response: `desc_count` le16 @16 (T13-era kernels: u32), reserved
/// u16 @18, descriptors from @20.
#[doc(alias = "be_cmd_resp_get_profile_config")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProfileConfig {
    /// The descriptors in wire order.
    pub descriptors: Vec<ResourceDescriptor>,
}

impl ProfileConfig {
    /// The NIC descriptors.
    pub fn nics(&self) -> impl Iterator<Item = &NicDescriptor> {
        nics(&self.descriptors)
    }

    /// The PCIe descriptors.
    pub fn pcies(&self) -> impl Iterator<Item = &PcieDescriptor> {
        pcies(&self.descriptors)
    }

    /// The port descriptors.
    pub fn ports(&self) -> impl Iterator<Item = &PortDescriptor> {
        ports(&self.descriptors)
    }

    /// The PCIe descriptor of function `pf_num`.
    pub fn pcie_for(&self, pf_num: u8) -> Option<&PcieDescriptor> {
        self.pcies().find(|p| p.pf_num == pf_num)
    }
}

impl Wire for ProfileConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let count = u16::try_from(self.descriptors.len()).map_err(|_| WireError {
            field: "desc_count",
            offset: w.position(),
            needed: self.descriptors.len(),
            available: usize::from(u16::MAX),
        })?;
        w.u16("desc_count", count)?;
        w.zeros("rsvd", 2)?;
        encode_descriptors(w, &self.descriptors)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let count = usize::from(r.u16("desc_count")?);
        r.skip("rsvd", 2)?;
        Ok(Self { descriptors: decode_descriptors(r, count)? })
    }
}

/// SET_PROFILE_CONFIG: changes resource descriptors; non-embedded, version 1 (Lancer 0), buffer
/// 200 bytes: profile word u32 @16 (O: bits 7:0 `profile_id`, bit 31 `isap`), `desc_count` u32
/// @20, up to two 88-byte descriptors @24 (spec/protocol.md §5.8). Without the NOSV flag a
/// change is saved to flash. The header `domain` byte would target another function; ocetool
/// always targets itself.
///
/// Encoding more than two descriptors, or one that is not 88 bytes long (a v0 descriptor, or an
/// unknown one of another size), fails with a [`WireError`] naming `descriptors`.
#[doc(alias = "be_cmd_req_set_profile_config")]
#[doc(alias = "OPCODE_COMMON_SET_PROFILE_CONFIG")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetProfileConfig {
    /// Bits 7:0 of the dword @16 (O `profile_id`; be2net leaves 0).
    pub profile_id: u8,
    /// Bit 31 of the dword @16 (O `isap`; meaning undocumented, ocetool leaves it clear).
    pub isap: bool,
    /// At most two v1 descriptors.
    pub descriptors: Vec<ResourceDescriptor>,
}

impl SetProfileConfig {
    /// Most descriptors one request carries (the 200-byte buffer).
    pub const MAX_DESCRIPTORS: usize = 2;
    /// Bit 31 of the profile word.
    pub const ISAP: u32 = 1 << 31;
    /// Where the descriptors start.
    const DESC_OFFSET: usize = 24;

    fn check(&self) -> Result<(), WireError> {
        if self.descriptors.len() > Self::MAX_DESCRIPTORS {
            return Err(WireError {
                field: "descriptors (at most 2)",
                offset: Self::DESC_OFFSET,
                needed: self.descriptors.len() * RESOURCE_DESC_SIZE_V1,
                available: Self::MAX_DESCRIPTORS * RESOURCE_DESC_SIZE_V1,
            });
        }
        for (i, d) in self.descriptors.iter().enumerate() {
            if d.encoded_len() != RESOURCE_DESC_SIZE_V1 {
                return Err(WireError {
                    field: "descriptors (v1, 88 bytes, required)",
                    offset: Self::DESC_OFFSET + i * RESOURCE_DESC_SIZE_V1,
                    needed: RESOURCE_DESC_SIZE_V1,
                    available: d.encoded_len(),
                });
            }
        }
        Ok(())
    }
}

impl Wire for SetProfileConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        self.check()?;
        let word = u32::from(self.profile_id) | if self.isap { Self::ISAP } else { 0 };
        w.u32("profile_id", word)?;
        w.u32("desc_count", self.descriptors.len() as u32)?;
        encode_descriptors(w, &self.descriptors)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let word = r.u32("profile_id")?;
        let count = r.u32("desc_count")? as usize;
        Ok(Self { profile_id: word as u8, isap: word & Self::ISAP != 0, descriptors: decode_descriptors(r, count)? })
    }
}

impl Command for SetProfileConfig {
    const NAME: &'static str = "SET_PROFILE_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 165;
    const VERSION: u8 = 1;
    const EMBEDDED: bool = false;
    const LEN: usize = 200;
    type Response = Empty;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};
    use crate::commands::descriptors::{DescriptorFlags, DescriptorVersion, McType, PfType};

    #[test]
    fn get_request_golden_bytes() {
        assert_eq!(GetProfileConfig::LEN, 23252);
        let buf = encode_request(&GetProfileConfig::active()).unwrap();
        // opcode 164 (0xa4), request_length 23236 (0x5ac4), version 1; @16 profile 0, @17 type 2.
        assert_eq!(hex::encode(&buf[..20]), concat!("a4010000", "00000000", "c45a0000", "01000000", "00020000"));
        let q = GetProfileConfig { profile_id: 5, selector: ProfileSelector::Active, query_modifiable: true };
        let buf = encode_request(&q).unwrap();
        assert_eq!(hex::encode(&buf[16..20]), "050a0000"); // profile 5, ACTIVE | QUERY_MODIFIABLE
        assert_eq!(decode_request::<GetProfileConfig>(&buf).unwrap().1, q);
        let buf = encode_request(&GetProfileConfig::saved()).unwrap();
        assert_eq!(hex::encode(&buf[16..20]), "00000000");
        let odd = GetProfileConfig::decode(&mut Reader::new(&[0, 0x0b])).unwrap();
        assert_eq!((odd.selector, odd.query_modifiable), (ProfileSelector::Unknown(3), true));
    }

    fn put(buf: &mut [u8], offset: usize, hex: &str) {
        let bytes = hex::decode(hex).unwrap();
        buf[offset..offset + bytes.len()].copy_from_slice(&bytes);
    }

    /// PCIe v1 @20, NIC v1 @108, port @196: what the emulator's NIC profile reports.
    fn response() -> Vec<u8> {
        let mut b = vec![0u8; HEADER_LEN + 4 + 3 * 88];
        put(&mut b, 0, concat!("a4010000", "00000000", "0c010000", "0c010000")); // response_length 268
        put(&mut b, 16, "0300"); // desc_count 3 (le16), @18 reserved
        put(&mut b, 20, "50580000"); // PCIe v1, length 88, flags 0
        put(&mut b, 26, "01"); // pf_num 1
        put(&mut b, 32, "000101"); // sriov_state 0, pf_state 1, pf_type 1 (NIC)
        put(&mut b, 108, "51580001"); // NIC v1, flags IF_CAPS_VALID
        put(&mut b, 114, "01"); // pf_num 1
        put(&mut b, 116, "0400"); // unicast_mac_count 4
        put(&mut b, 148, "bc1b0001"); // cap_flags
        put(&mut b, 152, "01"); // link_param 1
        put(&mut b, 196, "55580000"); // port descriptor
        put(&mut b, 200, "0102"); // link_num 1, mc_type 2 (UMC)
        b
    }

    #[test]
    fn get_response_golden_offsets() {
        let buf = response();
        let (_, cfg) = decode_response::<GetProfileConfig>(&buf).unwrap();
        assert_eq!(cfg.descriptors.len(), 3);
        let pcie = cfg.pcie_for(1).expect("PF 1");
        assert_eq!((pcie.sriov_state, pcie.pf_state, pcie.pf_type), (0, 1, PfType::MISSION_NIC));
        let nic = cfg.nics().next().unwrap();
        assert_eq!((nic.pf_num, nic.unicast_mac_count, nic.cap_flags, nic.link_param), (1, 4, 0x0100_1bbc, 1));
        let port = cfg.ports().next().unwrap();
        assert_eq!((port.link_num, port.mc_type), (1, McType::Umc));
        let mut out = vec![0u8; buf.len()];
        cfg.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(out[16..], buf[16..]);
    }

    #[test]
    fn get_response_truncated() {
        let mut buf = response();
        put(&mut buf, 8, "01000000");
        let err = decode_response::<GetProfileConfig>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("desc_count", 16, 2, 1));
        put(&mut buf, 8, "00010000"); // 256: the port descriptor is cut at 180 of its 88 bytes
        let err = decode_response::<GetProfileConfig>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("descriptor", 196, 88, 76));
    }

    fn teardown_request() -> SetProfileConfig {
        // be2net's teardown with TotalVFs = 0: PCIe v1 (num_vfs 0, sriov off) + VF-template NIC v1,
        // both IMM | NOSV, pf_num = devfn 8 (spec §5.8 point 4).
        let imm_nosv = DescriptorFlags::IMM | DescriptorFlags::NOSV;
        let pcie = PcieDescriptor {
            flags: DescriptorFlags(imm_nosv),
            pf_num: 8,
            sriov_state: 0,
            num_vfs: 0,
            ..PcieDescriptor::unchanged(DescriptorVersion::V1)
        };
        let nic = NicDescriptor {
            flags: DescriptorFlags(imm_nosv | DescriptorFlags::VFT),
            pf_num: 8,
            ..NicDescriptor::unchanged(DescriptorVersion::V1)
        };
        SetProfileConfig {
            profile_id: 0,
            isap: false,
            descriptors: vec![ResourceDescriptor::Pcie(pcie), ResourceDescriptor::Nic(nic)],
        }
    }

    #[test]
    fn set_request_golden_bytes() {
        let buf = encode_request(&teardown_request()).unwrap();
        let expected = [
            concat!("a5010000", "00000000", "b8000000", "01000000"), // opcode 165, request_length 184, v1
            concat!("00000000", "02000000"),                         // @16 profile word 0, @20 desc_count 2
            // @24 PCIe v1: flags IMM|NOSV, pf_num 8, sriov_state 0, pf_state/pf_type 0xff, num_vfs 0
            concat!("505800c0", "00000800", "00000000", "00ffff00", "00000000", "00000000"),
            &"00".repeat(64),
            // @112 NIC v1: flags IMM|NOSV|VFT, pf_num 8, every count 0xffff, link_param 0xff, …
            concat!("515800c8", "00000800", "ffff000000000000"),
            &"ff".repeat(20),
            concat!("0000ffff", "00000000", "ff0000f0", "ffffffff", "ffffffff", "ff0f0000", "ffffffff"),
            &"00".repeat(24),
        ]
        .concat();
        assert_eq!(hex::encode(&buf), expected);
        assert_eq!(decode_request::<SetProfileConfig>(&buf).unwrap().1, teardown_request());
        let isap = SetProfileConfig { profile_id: 7, isap: true, descriptors: vec![] };
        assert_eq!(hex::encode(&encode_request(&isap).unwrap()[16..24]), "0700008000000000");
    }

    #[test]
    fn set_request_rejects_bad_descriptor_sets() {
        let mut three = teardown_request();
        three.descriptors.push(three.descriptors[0].clone());
        let err = encode_request(&three).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("descriptors (at most 2)", 24, 264, 176));
        let mut v0 = teardown_request();
        v0.descriptors[1] = ResourceDescriptor::Nic(NicDescriptor::unchanged(DescriptorVersion::V0));
        let err = encode_request(&v0).unwrap_err();
        assert_eq!(
            (err.field, err.offset, err.needed, err.available),
            ("descriptors (v1, 88 bytes, required)", 112, 88, 72)
        );
    }
}
