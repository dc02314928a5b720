//! Golden bytes (spec/protocol.md §5.8 offsets) and walk-rule tests for resource descriptors.

use super::*;

/// NIC v1 descriptor as the emulator reports it, offsets within the descriptor.
const NIC_V1: &str = concat!(
    "51",
    "58",
    "00",
    "41", // @0 type 0x51, @1 length 88, @2 rsvd, @3 flags IF_CAPS_VALID | IMM
    "00",
    "00",
    "01",
    "00", // @4 vf_num 0, @5 rsvd, @6 pf_num 1, @7 rsvd
    "1000",
    "000000000000", // @8 unicast_mac_count 16, @10 rsvd
    "0100",
    "4000",
    "2000",
    "1000", // @16 mcc 1, @18 vlan 64, @20 mcast 32, @22 txq 16
    "1100",
    "1000",
    "0000",
    "4000", // @24 rq 17, @26 rssq 16, @28 lro 0, @30 cq 64
    "0000",
    "2000",
    "0000",
    "0400",     // @32 toe_conn 0, @34 eq 32, @36 vlan_id 0, @38 iface 4
    "bc1b0001", // @40 cap_flags 0x01001bbc
    "01",
    "00",
    "0000", // @44 link_param 1, @45 rsvd, @46 channel_id_param 0
    "00000000",
    "64000000", // @48 bw_min 0, @52 bw_max 100
    "00",
    "00",
    "0000", // @56 acpi_params, @57 wol_param, @58 rsvd
    "0000",
    "0000",                                             // @60 tunnel_iface_count, @62 direct_tenant_iface_count
    "000000000000000000000000000000000000000000000000", // @64 24 reserved bytes
);

/// PCIe v1 descriptor of a RoCE PF.
const PCIE_V1: &str = concat!(
    "50",
    "58",
    "00",
    "00", // @0 type 0x50, @1 length 88, @2 rsvd, @3 flags 0
    "0000",
    "02",
    "00",       // @4 instance, @6 pf_num 2, @7 rsvd
    "00000000", // @8 rsvd
    "00",
    "01",
    "08",
    "00", // @12 sriov_state 0, @13 pf_state 1, @14 pf_type 8 (RDMA), @15 rsvd
    "0000",
    "0000",                                                             // @16 num_vfs 0, @18 rsvd
    "00000000",                                                         // @20 mission_roles dword
    "0000000000000000000000000000000000000000000000000000000000000000", // @24..56
    "0000000000000000000000000000000000000000000000000000000000000000", // @56..88
);

/// Port descriptor: link 1, no multi-channel, overlays disabled.
const PORT_V1: &str = concat!(
    "55",
    "58",
    "00",
    "00", // @0 type 0x55, @1 length 88, @2 rsvd, @3 flags
    "01",
    "01",
    "0000", // @4 link_num 1, @5 mc_type 1 (MC_NONE), @6 rsvd
    "01",
    "00",
    "b512", // @8 nv_flags: NV type 1 (disabled), @9 rsvd, @10 nv_port 4789
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000", // @12..60
    "00000000000000000000000000000000000000000000000000000000", // @60..88
);

fn decode_all(hex: &str, count: usize) -> Result<Vec<ResourceDescriptor>, WireError> {
    let buf = hex::decode(hex).unwrap();
    decode_descriptors(&mut Reader::new(&buf), count)
}

fn encode_one(d: &ResourceDescriptor) -> String {
    let mut buf = vec![0xEEu8; d.encoded_len()];
    d.encode(&mut Writer::new(&mut buf)).unwrap();
    hex::encode(buf)
}

fn nic_v1() -> NicDescriptor {
    NicDescriptor {
        flags: DescriptorFlags(DescriptorFlags::IF_CAPS_VALID | DescriptorFlags::IMM),
        pf_num: 1,
        unicast_mac_count: 16,
        mcc_count: 1,
        vlan_count: 64,
        mcast_mac_count: 32,
        txq_count: 16,
        rq_count: 17,
        rssq_count: 16,
        cq_count: 64,
        eq_count: 32,
        iface_count: 4,
        cap_flags: 0x0100_1BBC,
        link_param: 1,
        bw_max: 100,
        ..NicDescriptor::default()
    }
}

#[test]
fn nic_v1_golden_bytes() {
    assert_eq!(NIC_V1.len(), 176);
    let d = decode_all(NIC_V1, 1).unwrap();
    assert_eq!(d, [ResourceDescriptor::Nic(nic_v1())]);
    assert_eq!(encode_one(&d[0]), NIC_V1);
}

#[test]
fn pcie_and_port_golden_bytes() {
    let d = decode_all(&format!("{PCIE_V1}{PORT_V1}"), 2).unwrap();
    let pcie = PcieDescriptor { pf_num: 2, pf_state: 1, pf_type: PfType::MISSION_RDMA, ..PcieDescriptor::default() };
    let port = PortDescriptor { nv_port: 4789, ..PortDescriptor::new(1) };
    assert_eq!(d, [ResourceDescriptor::Pcie(pcie), ResourceDescriptor::Port(port)]);
    assert!(pcie.pf_type.is_nic() && pcie.pf_type.is_rdma());
    assert_eq!(pcie.pf_type.name(), Some("rdma"));
    assert_eq!(port.nv_type(), PortDescriptor::NV_TYPE_DISABLED);
    assert_eq!(encode_one(&d[0]), PCIE_V1);
    assert_eq!(encode_one(&d[1]), PORT_V1);
}

#[test]
fn unchanged_templates_golden_bytes() {
    let nic = ResourceDescriptor::Nic(NicDescriptor::unchanged(DescriptorVersion::V1));
    let expected = concat!(
        "51",
        "58",
        "00",
        "00",
        "00",
        "00",
        "00",
        "00", // type, length, rsvd, flags, vf_num, rsvd, pf_num, rsvd
        "ffff",
        "000000000000",                             // @8 unicast_mac_count, rsvd
        "ffffffffffffffffffffffffffffffffffffffff", // @16..36 ten counts (mcc … eq)
        "0000",
        "ffff",     // @36 vlan_id 0, @38 iface_count
        "00000000", // @40 cap_flags
        "ff",
        "00",
        "00f0", // @44 link_param 0xff, rsvd, @46 channel_id_param 0xf000
        "ffffffff",
        "ffffffff", // @48 bw_min, @52 bw_max
        "ff",
        "0f",
        "0000", // @56 acpi_params 0xff, @57 wol_param 0x0f, rsvd
        "ffff",
        "ffff", // @60 tunnel_iface_count, @62 direct_tenant_iface_count
        "000000000000000000000000000000000000000000000000",
    );
    assert_eq!(encode_one(&nic), expected);
    let pcie = ResourceDescriptor::Pcie(PcieDescriptor::unchanged(DescriptorVersion::V0));
    let expected = concat!(
        "40",
        "48",
        "00",
        "00",
        "0000",
        "00",
        "00",
        "00000000", // type 0x40, length 72, …, pf_num 0
        "ff",
        "ff",
        "ff",
        "00",
        "ffff",
        "0000",                                             // @12 sriov/pf_state/pf_type 0xff, @16 num_vfs
        "00000000",                                         // @20
        "000000000000000000000000000000000000000000000000", // @24..48
        "000000000000000000000000000000000000000000000000", // @48..72
    );
    assert_eq!(encode_one(&pcie), expected);
}

#[test]
fn v0_descriptors_and_length_zero_mean_72_bytes() {
    // A NIC v0 descriptor declared with length 0 (= 72), followed by an unknown RDMA one.
    let mut nic = hex::decode(NIC_V1).unwrap();
    nic.truncate(72);
    nic[0] = kind::NIC_V0;
    nic[1] = 0;
    let mut buf = nic.clone();
    buf.extend_from_slice(&[kind::RDMA, 8, 0, 0x80, 1, 2, 3, 4]);
    let d = decode_descriptors(&mut Reader::new(&buf), 2).unwrap();
    let expected = NicDescriptor { version: DescriptorVersion::V0, ..nic_v1() };
    assert_eq!(d[0], ResourceDescriptor::Nic(expected));
    assert_eq!(d[1], ResourceDescriptor::Unknown { kind: 0x54, bytes: buf[72..].to_vec() });
    // Unknown descriptors re-encode byte for byte; v0 encodes with its real length byte.
    assert_eq!(encode_one(&d[1]), hex::encode(&buf[72..]));
    nic[1] = 72;
    assert_eq!(encode_one(&d[0]), hex::encode(&nic));
}

#[test]
fn longer_known_descriptors_are_walked_by_their_length() {
    let mut buf = hex::decode(NIC_V1).unwrap();
    buf[1] = 96;
    buf.extend_from_slice(&[0xAB; 8]);
    buf.extend_from_slice(&hex::decode(PORT_V1).unwrap());
    let d = decode_descriptors(&mut Reader::new(&buf), 2).unwrap();
    assert_eq!(d[0], ResourceDescriptor::Nic(nic_v1()));
    assert!(matches!(d[1], ResourceDescriptor::Port(_)));
}

#[test]
fn malformed_walks_are_typed_errors() {
    // A descriptor running past the buffer.
    let mut buf = hex::decode(NIC_V1).unwrap();
    buf.truncate(80);
    let err = decode_descriptors(&mut Reader::at(&buf, 0), 1).unwrap_err();
    assert_eq!((err.field, err.offset, err.needed, err.available), ("descriptor", 0, 88, 80));
    // A NIC v1 declared shorter than its layout.
    let mut buf = hex::decode(NIC_V1).unwrap();
    buf[1] = 40;
    let err = decode_descriptors(&mut Reader::new(&buf), 1).unwrap_err();
    assert_eq!((err.field, err.offset, err.needed, err.available), ("nic_descriptor", 0, 88, 40));
    // A length that would not even cover the common header.
    let err = decode_descriptors(&mut Reader::new(&[0x51, 2, 0, 0]), 1).unwrap_err();
    assert_eq!((err.field, err.offset, err.needed, err.available), ("descriptor_length", 1, 4, 2));
    // A count beyond the buffer: the second descriptor is missing.
    let buf = hex::decode(PORT_V1).unwrap();
    let err = decode_descriptors(&mut Reader::new(&buf), usize::MAX).unwrap_err();
    assert_eq!((err.field, err.offset, err.available), ("descriptor_type", 88, 0));
}

#[test]
fn flags_and_unknown_encoding_rules() {
    let f = DescriptorFlags(0xC9);
    assert_eq!(f.names(), ["if_caps_valid", "vft", "imm", "nosv"]);
    let d = NicDescriptor { flags: DescriptorFlags(DescriptorFlags::VFT), ..nic_v1() };
    assert!(d.is_vf_template());
    let tiny = ResourceDescriptor::Unknown { kind: 0x56, bytes: vec![0x56, 2] };
    let mut buf = [0u8; 8];
    let err = tiny.encode(&mut Writer::new(&mut buf)).unwrap_err();
    assert_eq!((err.field, err.needed, err.available), ("descriptor", 4, 2));
    assert_eq!(McType::from_raw(5), McType::Npar);
    assert_eq!(McType::from_raw(9), McType::Unknown(9));
}
