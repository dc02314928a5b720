//! Golden bytes for the file and image headers, written from ufi-firmware.md §1.2–§1.4.

use super::*;

fn g3() -> FileHeaderG3 {
    FileHeaderG3 {
        sign: c_string("ServerEngines Corp. "),
        ufi_version: *b"0305",
        file_len: 0x0001_0203,
        cksum: 0x0A0B_0C0D,
        antidote: 0x1A1B_1C1D,
        num_imgs: 2,
        build: c_string("4 11.1.172.23"),
        asic_type_rev: 0x10,
    }
}

#[test]
fn g3_header_golden_bytes() {
    let mut buf = [0xEEu8; 128];
    g3().encode(&mut Writer::new(&mut buf)).unwrap();
    assert_eq!(&buf[..20], b"ServerEngines Corp. ");
    assert!(buf[20..0x34].iter().all(|&b| b == 0));
    // 0x34 ufi_version, 0x38 file_len, 0x3C cksum, 0x40 antidote, 0x44 num_imgs.
    assert_eq!(hex::encode(&buf[0x34..0x48]), "30333035030201000d0c0b0a1d1c1b1a02000000");
    // 0x48 build (24 bytes), 0x60 asic_type_rev, 0x61.. rsvd.
    assert_eq!(&buf[0x48..0x55], b"4 11.1.172.23");
    assert!(buf[0x55..0x60].iter().all(|&b| b == 0));
    assert_eq!(buf[0x60], 0x10);
    assert!(buf[0x61..].iter().all(|&b| b == 0));

    let parsed = FileHeader::parse(&buf).unwrap();
    assert_eq!(parsed, FileHeader::G3(g3()));
    assert_eq!(parsed.chip_char(), b'4');
    assert_eq!(parsed.version(), "11.1.172.23");
    assert_eq!(parsed.build_string(), "4 11.1.172.23");
    assert_eq!(parsed.asic_type_rev(), Some(0x10));
    assert_eq!(parsed.payload_base(), 128 + 96);
}

#[test]
fn g2_header_is_chosen_by_build_char_2() {
    let h = FileHeaderG2 {
        sign: c_string("ServerEngines Corp. "),
        cksum: 1,
        antidote: 2,
        cont_id: [0x19A2, 0x0211, 0x10DF, 0xE602],
        file_len: 3,
        chunk_num: 4,
        total_chunks: 5,
        num_imgs: 6,
        build: c_string("2 2.102.348.0"),
    };
    let mut buf = [0u8; 96];
    h.encode(&mut Writer::new(&mut buf)).unwrap();
    // 0x20 cksum, 0x24 antidote, 0x28 cont_id, 0x38 file_len, 0x3C chunk_num, 0x40 total_chunks, 0x44 num_imgs.
    assert_eq!(
        hex::encode(&buf[0x20..0x48]),
        concat!(
            "01000000", "02000000", // cksum, antidote
            "a2190000", "11020000", "df100000", "02e60000", // cont_id
            "03000000", "04000000", "05000000", "06000000", // file_len, chunk_num, total_chunks, num_imgs
        )
    );
    assert_eq!(&buf[0x48..0x55], b"2 2.102.348.0");
    let parsed = FileHeader::parse(&buf).unwrap();
    assert_eq!(parsed, FileHeader::G2(h));
    assert_eq!(parsed.len(), 96);
    assert_eq!(parsed.payload_base(), 96);
    assert_eq!(parsed.asic_type_rev(), None);
}

#[test]
fn image_header_golden_bytes() {
    let h = ImageHeader {
        imageid: 1,
        imageoffset: 0x100,
        imagelength: 0x20_0000,
        image_checksum: 0xDEAD_BEEF,
        image_version: c_string("11.1.172.23"),
    };
    let mut buf = [0u8; 48];
    h.encode(&mut Writer::new(&mut buf)).unwrap();
    assert_eq!(hex::encode(&buf[..16]), "010000000001000000002000efbeadde");
    assert_eq!(&buf[16..27], b"11.1.172.23");
    assert_eq!(ImageHeader::decode(&mut Reader::new(&buf)).unwrap(), h);
}

#[test]
fn short_and_empty_headers_are_typed_errors() {
    assert!(matches!(FileHeader::parse(&[]), Err(ImageError::Empty)));
    let err = FileHeader::parse(&[0u8; 0x48]).unwrap_err();
    assert!(matches!(err, ImageError::Truncated(WireError { field: "build", offset: 0x48, needed: 1, available: 0 })));
    let mut buf = [0u8; 127];
    buf[0x48] = b'4';
    let err = FileHeader::parse(&buf).unwrap_err();
    assert!(matches!(err, ImageError::Truncated(WireError { field: "rsvd", offset: 0x61, needed: 31, available: 30 })));
    // A g2 header needs only 96 bytes.
    let mut buf = [0u8; 96];
    buf[0x48] = b'2';
    assert!(FileHeader::parse(&buf).is_ok());
    assert!(FileHeader::parse(&buf[..95]).is_err());
}
