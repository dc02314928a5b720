//! Which profile runs and which runs next: GET_ACTIVE_PROFILE (COMMON 167), SET_ACTIVE_PROFILE
//! (COMMON 168) and GET_PROFILE_LIST (COMMON 166) (spec/protocol.md §5.9, §6.4).

use super::support::empty_body;
use crate::command::{Command, Empty};
use crate::header::{HEADER_LEN, Subsystem};
use crate::wire::{Reader, Wire, WireError, Writer};

/// GET_ACTIVE_PROFILE: embedded v0, 20/20 bytes, body reserved (spec/protocol.md §5.9).
#[doc(alias = "be_cmd_req_get_active_profile")]
#[doc(alias = "OPCODE_COMMON_GET_ACTIVE_PROFILE")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetActiveProfile;

empty_body!(GetActiveProfile);

impl Command for GetActiveProfile {
    const NAME: &'static str = "GET_ACTIVE_PROFILE";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 167;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = ActiveProfile;
}

/// The GET_ACTIVE_PROFILE response. be2net reads both IDs as u16; O defines them as bytes at
/// @16 and @18, which agree while IDs stay below 256 (spec §5.9).
#[doc(alias = "be_cmd_resp_get_active_profile")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ActiveProfile {
    /// `active_profile_id` u16 @16: the profile running now.
    pub active: u16,
    /// `next_profile_id` u16 @18: the profile that runs after the next reset.
    pub next: u16,
}

impl ActiveProfile {
    /// True when a different profile is staged for the next reset (an inference from the field
    /// names, spec §6.4).
    pub fn is_change_pending(&self) -> bool {
        self.active != self.next
    }
}

impl Wire for ActiveProfile {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u16("active_profile_id", self.active)?;
        w.u16("next_profile_id", self.next)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let active = r.u16("active_profile_id")?;
        let next = r.u16("next_profile_id")?;
        Ok(Self { active, next })
    }
}

/// SET_ACTIVE_PROFILE: chooses the profile for the next reset. Embedded, 20 bytes, header-only
/// response; layout from O sli4.h only (spec/protocol.md §5.9). Whether the change needs a cold
/// boot or a chip reset is not public (spec §10).
#[doc(alias = "sli4_req_common_set_active_profile_t")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SetActiveProfile {
    /// `active_profile_id`, bits 7:0 of the dword @16.
    pub profile_id: u8,
    /// Bit 31 of the dword @16, O's `fd`; its meaning is undocumented ("factory default" is a
    /// guess), so ocetool leaves it clear.
    pub fd: bool,
}

impl SetActiveProfile {
    /// Bit 31 of the request dword (O sli4.h `fd`).
    pub const FD: u32 = 1 << 31;

    /// Selects `profile_id` for the next reset, `fd` clear.
    pub fn new(profile_id: u8) -> Self {
        Self { profile_id, fd: false }
    }
}

impl Wire for SetActiveProfile {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("active_profile_id", u32::from(self.profile_id) | if self.fd { Self::FD } else { 0 })
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let raw = r.u32("active_profile_id")?;
        Ok(Self { profile_id: raw as u8, fd: raw & Self::FD != 0 })
    }
}

impl Command for SetActiveProfile {
    const NAME: &'static str = "SET_ACTIVE_PROFILE";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 168;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 20;
    type Response = Empty;
}

/// GET_PROFILE_LIST: the profiles stored on the adapter, from a start index (O sli4.h only,
/// spec/protocol.md §5.9).
///
/// The spec marks the transport "emb?". O sizes its response for 40 entries of 516 bytes
/// (`MAX_PRODUCT_DESCRIPTORS`), about 20 KiB, which cannot fit the 236 bytes of a WRB (even one
/// entry does not), so ocetool sends it **non-embedded**, version 0, with a buffer of
/// 16 + 4 + 40 × 516 bytes. This is ocetool's (and its emulator's) choice, not a documented fact.
#[doc(alias = "sli4_req_common_get_profile_list_t")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetProfileList {
    /// `start_profile_index`, bits 7:0 of the dword @16.
    pub start_index: u8,
}

impl Wire for GetProfileList {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("start_profile_index", u32::from(self.start_index))
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { start_index: r.u32("start_profile_index")? as u8 })
    }
}

impl Command for GetProfileList {
    const NAME: &'static str = "GET_PROFILE_LIST";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 166;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = HEADER_LEN + 4 + ProfileList::MAX_ENTRIES * ProfileListEntry::LEN;
    type Response = ProfileList;
}

/// One profile in the list: 516 bytes (O `sli4_profile_descriptor_t`).
#[doc(alias = "sli4_profile_descriptor_t")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProfileListEntry {
    /// `profile_id`, bits 7:0 of the entry's first dword.
    pub id: u8,
    /// `profile_index`, bits 23:16 of the entry's first dword.
    pub index: u8,
    /// `profile_description`, 512 bytes of NUL-padded ASCII after the first dword.
    pub description: String,
}

impl ProfileListEntry {
    /// Bytes per entry.
    pub const LEN: usize = 516;
    /// Width of the description field.
    pub const DESCRIPTION_LEN: usize = 512;
}

impl Wire for ProfileListEntry {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("profile_id", self.id)?;
        w.zeros("profile_rsvd0", 1)?;
        w.u8("profile_index", self.index)?;
        w.zeros("profile_rsvd1", 1)?;
        w.string("profile_description", &self.description, Self::DESCRIPTION_LEN)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id = r.u8("profile_id")?;
        r.skip("profile_rsvd0", 1)?;
        let index = r.u8("profile_index")?;
        r.skip("profile_rsvd1", 1)?;
        let description = r.string("profile_description", Self::DESCRIPTION_LEN)?;
        Ok(Self { id, index, description })
    }
}

/// The GET_PROFILE_LIST response: count u32 @16, entries from @20.
#[doc(alias = "sli4_res_common_get_profile_list_t")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProfileList {
    /// The profiles, in the order the firmware listed them.
    pub entries: Vec<ProfileListEntry>,
}

impl ProfileList {
    /// Most entries one response holds (O sli4.h `MAX_PRODUCT_DESCRIPTORS`).
    pub const MAX_ENTRIES: usize = 40;
}

impl Wire for ProfileList {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.entries.len() > Self::MAX_ENTRIES {
            return Err(WireError {
                field: "profile_descriptor",
                offset: w.position() + 4,
                needed: self.entries.len() * ProfileListEntry::LEN,
                available: Self::MAX_ENTRIES * ProfileListEntry::LEN,
            });
        }
        w.u32("profile_descriptor_count", self.entries.len() as u32)?;
        self.entries.iter().try_for_each(|e| e.encode(w))
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let count = r.u32("profile_descriptor_count")? as usize;
        // Never trust the count for the allocation: the buffer bounds how many entries exist;
        // a count beyond it fails below on the first missing entry.
        let mut entries = Vec::with_capacity(count.min(r.remaining() / ProfileListEntry::LEN));
        for _ in 0..count {
            entries.push(ProfileListEntry::decode(r)?);
        }
        Ok(Self { entries })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn get_active_profile_golden_bytes() {
        let buf = encode_request(&GetActiveProfile).unwrap();
        // opcode 167 (0xa7), subsystem 1, request_length 4, version 0.
        assert_eq!(hex::encode(&buf), "a701000000000000040000000000000000000000");
        let rsp = hex::decode(concat!(
            "a7010000", "00000000", "04000000", "04000000", // header, response_length 4
            "0500",     // @16 active_profile_id 5
            "0900",     // @18 next_profile_id 9
        ))
        .unwrap();
        let (_, p) = decode_response::<GetActiveProfile>(&rsp).unwrap();
        assert_eq!(p, ActiveProfile { active: 5, next: 9 });
        assert!(p.is_change_pending());
        let mut out = [0u8; 20];
        p.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &rsp[16..]);
    }

    #[test]
    fn get_active_profile_truncated() {
        let rsp = hex::decode("a70100000000000003000000040000000500090000").unwrap();
        let err = decode_response::<GetActiveProfile>(&rsp).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("next_profile_id", 18, 2, 1));
    }

    #[test]
    fn set_active_profile_golden_bytes() {
        let buf = encode_request(&SetActiveProfile::new(0x21)).unwrap();
        // opcode 168 (0xa8), request_length 4; dword @16: profile id 0x21, fd clear.
        assert_eq!(hex::encode(&buf), "a801000000000000040000000000000021000000");
        let fd = SetActiveProfile { profile_id: 3, fd: true };
        let buf = encode_request(&fd).unwrap();
        assert_eq!(hex::encode(&buf[16..]), "03000080"); // bit 31 = fd
        assert_eq!(decode_request::<SetActiveProfile>(&buf).unwrap().1, fd);
    }

    #[test]
    fn get_profile_list_request_is_non_embedded_and_sized_for_40_entries() {
        assert_eq!(GetProfileList::LEN, 20660);
        let buf = encode_request(&GetProfileList { start_index: 2 }).unwrap();
        // opcode 166 (0xa6), request_length 20644 (0x50a4), version 0; start index 2 @16.
        assert_eq!(hex::encode(&buf[..20]), "a601000000000000a45000000000000002000000");
        assert!(buf[20..].iter().all(|&b| b == 0));
        assert_eq!(decode_request::<GetProfileList>(&buf).unwrap().1.start_index, 2);
    }

    fn profile_list_response() -> Vec<u8> {
        let mut buf = hex::decode(concat!(
            "a6010000", "00000000", "0c040000", "0c040000", // header, response_length 4 + 2 × 516 = 1036
            "02000000", // @16 profile_descriptor_count 2
        ))
        .unwrap();
        buf.resize(HEADER_LEN + 4 + 2 * 516, 0);
        // Entry 0 @20: id 0x10 (bits 7:0), index 0 (bits 23:16), description @24.
        buf[20] = 0x10;
        buf[24..27].copy_from_slice(b"NIC");
        // Entry 1 @536: id 0x11, index 1 @538, description @540.
        buf[536] = 0x11;
        buf[538] = 1;
        buf[540..557].copy_from_slice(b"RoCE-2 (NIC+RoCE)");
        buf
    }

    #[test]
    fn profile_list_golden_offsets() {
        let buf = profile_list_response();
        let (_, list) = decode_response::<GetProfileList>(&buf).unwrap();
        assert_eq!(
            list.entries,
            [
                ProfileListEntry { id: 0x10, index: 0, description: "NIC".into() },
                ProfileListEntry { id: 0x11, index: 1, description: "RoCE-2 (NIC+RoCE)".into() },
            ]
        );
        let mut out = vec![0u8; buf.len()];
        list.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &buf[16..]);
    }

    #[test]
    fn profile_list_count_beyond_the_buffer_is_a_typed_error() {
        let mut buf = profile_list_response();
        buf[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = decode_response::<GetProfileList>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.available), ("profile_id", 1052, 0));
        // response_length cuts the second entry's description short.
        let mut buf = profile_list_response();
        buf[8..12].copy_from_slice(&600u32.to_le_bytes());
        let err = decode_response::<GetProfileList>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("profile_description", 540, 512, 76));
    }

    #[test]
    fn profile_list_encode_refuses_more_than_40_entries() {
        let list = ProfileList { entries: vec![ProfileListEntry::default(); 41] };
        let mut out = vec![0u8; 64 * 1024];
        let err = list.encode(&mut Writer::at(&mut out, 16)).unwrap_err();
        assert_eq!((err.field, err.needed, err.available), ("profile_descriptor", 41 * 516, 40 * 516));
    }
}
