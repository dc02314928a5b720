//! Golden bytes from the offsets of vfio-user.rst, and round trips through the encoders.

use super::*;
use crate::protocol::HEADER_LEN;
use crate::protocol::tests::hex;

fn decode(bytes: &[u8]) -> Result<Request<'_>, DecodeError> {
    let h = Header::decode(bytes)?;
    decode_request(&h, &bytes[HEADER_LEN..])
}

#[test]
fn dma_map_golden_bytes() {
    // id 7, DMA_MAP (2), 48 bytes; argsz 32, flags R|W, offset 0x1000, address 0x10000000, size 0x2000.
    let bytes = hex("0700 0200 30000000 00000000 00000000
         20000000 03000000 0010000000000000 0000001000000000 0020000000000000");
    let want = DmaMap { flags: 3, offset: 0x1000, address: 0x1000_0000, size: 0x2000 };
    assert_eq!(decode(&bytes), Ok(Request::DmaMap(want)));
    assert_eq!(encode_request(7, &Request::DmaMap(want), 0), bytes);
}

#[test]
fn region_read_request_and_reply_golden_bytes() {
    let req = hex("0200 0900 20000000 00000000 00000000  1c00000000000000 00000000 04000000");
    assert_eq!(decode(&req), Ok(Request::RegionRead { offset: 0x1c, region: 0, count: 4 }));
    let reply =
        encode_reply(2, Command::RegionRead, &Reply::RegionRead { offset: 0x1c, region: 0, data: &[1, 2, 3, 4] });
    assert_eq!(reply, hex("0200 0900 24000000 01000000 00000000  1c00000000000000 00000000 04000000 01020304"));
}

#[test]
fn region_info_reply_golden_bytes() {
    let reply = encode_reply(
        5,
        Command::DeviceGetRegionInfo,
        &Reply::RegionInfo(RegionInfo { flags: 3, index: 7, size: 4096 }),
    );
    assert_eq!(
        reply,
        hex(
            "0500 0500 30000000 01000000 00000000  20000000 03000000 07000000 00000000 0010000000000000 0000000000000000"
        )
    );
}

#[test]
fn error_reply_is_the_header_alone() {
    assert_eq!(encode_error(9, Command::RegionWrite, 22), hex("0900 0a00 10000000 21000000 16000000"));
}

#[test]
fn set_irqs_eventfd_and_bool() {
    let s = SetIrqs { flags: IRQ_SET_DATA_EVENTFD | IRQ_SET_ACTION_TRIGGER, index: 2, start: 0, count: 2, bools: &[] };
    let bytes = encode_request(3, &Request::SetIrqs(s), 0);
    assert_eq!(bytes, hex("0300 0800 24000000 00000000 00000000  14000000 24000000 02000000 00000000 02000000"));
    assert_eq!(decode(&bytes), Ok(Request::SetIrqs(s)));
    let b = SetIrqs { flags: IRQ_SET_DATA_BOOL | IRQ_SET_ACTION_MASK, index: 0, start: 0, count: 1, bools: &[1] };
    assert_eq!(decode(&encode_request(4, &Request::SetIrqs(b), 0)), Ok(Request::SetIrqs(b)));
    // Two action bits at once.
    let mut bad = bytes.clone();
    bad[20] = 0x2c;
    assert!(matches!(decode(&bad), Err(DecodeError::BadField { field: "set_irqs.flags", .. })));
}

#[test]
fn version_with_and_without_capabilities() {
    let mut bytes = hex("0000 0100 00000000 00000000 00000000 0000 0000");
    let json = br#"{"capabilities":{"max_msg_fds":16,"max_data_xfer_size":1048576,"migration":{"pgsize":4096}}}"#;
    bytes.extend_from_slice(json);
    bytes.push(0);
    let n = bytes.len() as u32;
    bytes[4..8].copy_from_slice(&n.to_le_bytes());
    let caps = VersionCaps { max_msg_fds: Some(16), max_data_xfer_size: Some(1 << 20) };
    assert_eq!(decode(&bytes), Ok(Request::Version { major: 0, minor: 0, caps }));
    // No JSON at all: the defaults.
    let bare = hex("0000 0100 14000000 00000000 00000000 0000 0100");
    assert_eq!(decode(&bare), Ok(Request::Version { major: 0, minor: 1, caps: VersionCaps::default() }));
    // JSON without its NUL, and JSON that is not JSON.
    let mut no_nul = bytes.clone();
    no_nul.pop();
    assert!(matches!(decode(&no_nul), Err(DecodeError::BadCapabilities { .. })));
    let mut garbage = hex("0000 0100 00000000 00000000 00000000 0000 0000");
    garbage.extend_from_slice(b"{\"capab\x00");
    assert!(matches!(decode(&garbage), Err(DecodeError::BadCapabilities { .. })));
    // Round trip of the client's encoder.
    let enc = encode_request(0, &Request::Version { major: 0, minor: 0, caps }, 0);
    assert_eq!(decode(&enc), Ok(Request::Version { major: 0, minor: 0, caps }));
}

#[test]
fn truncated_bodies_name_the_missing_field() {
    let mut bytes = encode_request(1, &Request::RegionWrite { offset: 0, region: 4, data: &[0; 8] }, 0);
    bytes.truncate(bytes.len() - 1);
    match decode(&bytes) {
        Err(DecodeError::Truncated(crate::protocol::WireError { field, needed, available, .. })) => {
            assert_eq!((field, needed, available), ("region_write.data", 8, 7));
        }
        other => panic!("{other:?}"),
    }
    let short = hex("0100 0200 14000000 00000000 00000000 20000000");
    assert!(matches!(
        decode(&short),
        Err(DecodeError::Truncated(crate::protocol::WireError { field: "dma_map.flags", .. }))
    ));
}

#[test]
fn dma_map_and_unmap_bounds() {
    let zero = DmaMap { flags: 3, offset: 0, address: 0x1000, size: 0 };
    assert!(decode(&encode_request(1, &Request::DmaMap(zero), 0)).is_err());
    let wraps = DmaMap { flags: 3, offset: 0, address: u64::MAX - 10, size: 0x1000 };
    assert!(decode(&encode_request(1, &Request::DmaMap(wraps), 0)).is_err());
    let all = DmaUnmap { argsz: 24, flags: DMA_UNMAP_FLAG_ALL, address: 0, size: 0 };
    assert_eq!(decode(&encode_request(1, &Request::DmaUnmap(all), 0)), Ok(Request::DmaUnmap(all)));
    let dirty = DmaUnmap { flags: 1, ..all };
    assert!(decode(&encode_request(1, &Request::DmaUnmap(dirty), 0)).is_err());
}

#[test]
fn replies_are_not_requests_and_unknown_commands_are_kept() {
    let reply = encode_reply(1, Command::DeviceReset, &Reply::Empty);
    assert!(matches!(decode(&reply), Err(DecodeError::BadField { .. })));
    let unknown = hex("0100 6300 10000000 00000000 00000000");
    assert_eq!(decode(&unknown), Ok(Request::Unsupported(Command::Unknown(99))));
}

#[test]
fn dma_read_reply_is_checked_against_the_request() {
    let reply = encode_reply(1, Command::DmaRead, &Reply::DmaRead { address: 0x2000, data: &[9; 4] });
    let payload = &reply[HEADER_LEN..];
    assert_eq!(decode_dma_read_reply(payload, 0x2000, 4), Ok(&[9u8; 4][..]));
    assert!(decode_dma_read_reply(payload, 0x3000, 4).is_err());
    assert!(decode_dma_read_reply(payload, 0x2000, 8).is_err());
    assert!(decode_dma_read_reply(&payload[..19], 0x2000, 4).is_err());
}
