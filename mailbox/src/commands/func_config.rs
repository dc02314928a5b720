//! GET_FUNC_CONFIG (COMMON 160): the calling function's own resource descriptors.

use super::descriptors::{
    NicDescriptor, PcieDescriptor, PortDescriptor, RESOURCE_DESC_SIZE_V1, ResourceDescriptor, decode_descriptors,
    encode_descriptors,
};
use super::support::empty_body;
use crate::command::Command;
use crate::header::{HEADER_LEN, Subsystem};
use crate::wire::{Reader, Wire, WireError, Writer};

/// GET_FUNC_CONFIG: non-embedded, version 1 on Skyhawk, buffer 23252 bytes, body reserved
/// (spec/protocol.md §5.7). be2net treats its failure as fatal.
#[doc(alias = "be_cmd_req_get_func_config")]
#[doc(alias = "OPCODE_COMMON_GET_FUNC_CONFIG")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetFuncConfig;

empty_body!(GetFuncConfig);

impl Command for GetFuncConfig {
    const NAME: &'static str = "GET_FUNC_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 160;
    const VERSION: u8 = 1;
    const EMBEDDED: bool = false;
    /// 16 + 4 + 264 × 88 (spec §5.7).
    const LEN: usize = HEADER_LEN + 4 + MAX_RESOURCE_DESC * RESOURCE_DESC_SIZE_V1;
    type Response = FuncConfig;
}

/// How many v1 descriptors the GET_FUNC_CONFIG / GET_PROFILE_CONFIG buffers hold (be2net
/// `MAX_RESOURCE_DESC`, spec §5.7).
pub const MAX_RESOURCE_DESC: usize = 264;

/// The GET_FUNC_CONFIG response: `desc_count` u32 @16, descriptors from @20.
#[doc(alias = "be_cmd_resp_get_func_config")]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FuncConfig {
    /// The descriptors in wire order.
    pub descriptors: Vec<ResourceDescriptor>,
}

impl FuncConfig {
    /// The first NIC descriptor, whatever its `pf_num`: what be2net takes its `pf_num`, `vf_num`
    /// and resource limits from (spec §5.7).
    pub fn nic(&self) -> Option<&NicDescriptor> {
        nics(&self.descriptors).next()
    }
}

/// The NIC descriptors of a list, in order.
pub fn nics(descriptors: &[ResourceDescriptor]) -> impl Iterator<Item = &NicDescriptor> {
    descriptors.iter().filter_map(|d| match d {
        ResourceDescriptor::Nic(n) => Some(n),
        _ => None,
    })
}

/// The PCIe descriptors of a list, in order.
pub fn pcies(descriptors: &[ResourceDescriptor]) -> impl Iterator<Item = &PcieDescriptor> {
    descriptors.iter().filter_map(|d| match d {
        ResourceDescriptor::Pcie(p) => Some(p),
        _ => None,
    })
}

/// The port descriptors of a list, in order.
pub fn ports(descriptors: &[ResourceDescriptor]) -> impl Iterator<Item = &PortDescriptor> {
    descriptors.iter().filter_map(|d| match d {
        ResourceDescriptor::Port(p) => Some(p),
        _ => None,
    })
}

impl Wire for FuncConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("desc_count", self.descriptors.len() as u32)?;
        encode_descriptors(w, &self.descriptors)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let count = r.u32("desc_count")? as usize;
        Ok(Self { descriptors: decode_descriptors(r, count)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};
    use crate::commands::descriptors::DescriptorFlags;

    #[test]
    fn request_golden_bytes() {
        assert_eq!(GetFuncConfig::LEN, 23252);
        let buf = encode_request(&GetFuncConfig).unwrap();
        // opcode 160 (0xa0), subsystem 1, request_length 23236 (0x5ac4), version 1.
        assert_eq!(hex::encode(&buf[..16]), "a001000000000000c45a000001000000");
        assert!(buf[16..].iter().all(|&b| b == 0));
    }

    fn response() -> Vec<u8> {
        let mut buf = hex::decode(concat!(
            "a0010000",
            "00000000",
            "5c000000",
            "5c000000", // opcode 160, response_length 4 + 88
            "01000000", // @16 desc_count 1 (u32)
            // @20 NIC v1: type 0x51, length 88, flags IF_CAPS_VALID, vf_num 0, pf_num 3
            "51580001",
            "00000300",
            "0800000000000000", // @28 unicast_mac_count 8
            "0100",
            "0000",
            "0000",
            "0400",
            "0500",
            "0400",
            "0000",
            "1000", // @36 mcc … cq
            "0000",
            "0800",
            "0000",
            "0100",     // @52 toe_conn, eq_count 8, vlan_id, iface_count 1
            "30080000", // @60 cap_flags 0x830
        ))
        .unwrap();
        buf.resize(HEADER_LEN + 4 + 88, 0);
        buf
    }

    #[test]
    fn response_golden_offsets() {
        let buf = response();
        let (_, cfg) = decode_response::<GetFuncConfig>(&buf).unwrap();
        let nic = cfg.nic().expect("one NIC descriptor");
        assert_eq!((nic.pf_num, nic.vf_num, nic.unicast_mac_count), (3, 0, 8));
        assert_eq!((nic.mcc_count, nic.txq_count, nic.rq_count, nic.rssq_count), (1, 4, 5, 4));
        assert_eq!((nic.cq_count, nic.eq_count, nic.iface_count, nic.cap_flags), (16, 8, 1, 0x830));
        assert_eq!(nic.flags, DescriptorFlags(DescriptorFlags::IF_CAPS_VALID));
        let mut out = vec![0u8; buf.len()];
        cfg.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(out[16..], buf[16..]);
    }

    #[test]
    fn hostile_counts_are_bounded_by_the_buffer() {
        let mut buf = response();
        buf[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = decode_response::<GetFuncConfig>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.available), ("descriptor_type", 108, 0));
        let mut buf = response();
        buf[8] = 60; // response_length cuts the descriptor
        let err = decode_response::<GetFuncConfig>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("descriptor", 20, 88, 56));
        buf[8] = 2;
        let err = decode_response::<GetFuncConfig>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset), ("desc_count", 16));
    }
}
