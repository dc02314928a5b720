use std::cell::Cell;

use super::*;

/// Identifier String "OCe14102"; VPD-R: PN "P01", SN "S1", RV with the checksum 0xc6 (every byte
/// up to it sums to 0 mod 256); End. Written byte by byte from PCI Local Bus 3.0 Appendix I.
const GOLDEN: &str = "82 0800 4f43653134313032 90 0f00 504e03 503031 534e02 5331 525601 c6 78";

fn unhex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits.chunks(2).map(|d| u8::from_str_radix(std::str::from_utf8(d).unwrap(), 16).unwrap()).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn golden() -> Vec<u8> {
    unhex(GOLDEN)
}

#[test]
fn the_golden_vpd_parses_into_its_fields() {
    let vpd = parse(&golden()).unwrap();
    assert_eq!(vpd.product_name.as_deref(), Some("OCe14102"));
    assert_eq!(vpd.get("PN").as_deref(), Some("P01"));
    assert_eq!(vpd.get("SN").as_deref(), Some("S1"));
    assert_eq!(vpd.get("EC"), None);
    assert_eq!(vpd.read_only.len(), 2, "RV is not a field: {vpd:?}");
}

#[test]
fn encode_writes_the_golden_bytes() {
    assert_eq!(hex(&encode("OCe14102", &[("PN", b"P01"), ("SN", b"S1")])), GOLDEN.replace(' ', ""));
}

#[test]
fn text_drops_trailing_padding_and_escapes_control_bytes() {
    let k = Keyword { name: "V0".into(), data: b"a\x01b  \0\0".to_vec() };
    assert_eq!(k.text(), "a\\x01b");
}

/// Each malformation, with the offset and words of its error.
#[test]
fn malformed_vpd_is_an_error_naming_where_never_a_panic() {
    let g = golden();
    let mut bad_sum = g.clone();
    bad_sum[5] ^= 1; // a byte of the product name: the checksum no longer adds up
    let mut bad_name = g.clone();
    bad_name[14] = 0x01; // the first keyword's name
    let mut long_keyword = g.clone();
    long_keyword[16] = 0x20; // PN's length runs past VPD-R
    let cases: Vec<(Vec<u8>, usize, &str)> = vec![
        (bad_sum, 28, "RV checksum does not add up"),
        (bad_name, 14, "not two letters or digits"),
        (long_keyword, 14, "runs past its area"),
        (g[..20].to_vec(), 11, "runs past the end"),
        (g[..g.len() - 1].to_vec(), 29, "no End tag"),
        (vec![0xFF; 64], 0, "not a VPD tag"),
        (vec![0x82, 0x01], 0, "cut off in its header"),
        (Vec::new(), 0, "no End tag"),
    ];
    for (bytes, offset, words) in cases {
        match parse(&bytes) {
            Err(PciError::BadVpd { offset: at, problem }) => {
                assert_eq!(at, offset, "{problem}");
                assert!(problem.contains(words), "{problem:?} should say {words:?}");
            }
            other => panic!("{}: {other:?}", hex(&bytes)),
        }
    }
}

#[test]
fn parse_survives_every_truncation_and_byte_flip() {
    let g = golden();
    for len in 0..g.len() {
        assert!(parse(&g[..len]).is_err(), "a VPD cut at {len} bytes has no End tag");
    }
    for i in 0..g.len() {
        for bit in 0..8 {
            let mut b = g.clone();
            b[i] ^= 1 << bit;
            let _ = parse(&b);
        }
    }
}

/// Config space with a PM capability at 0x40 and a VPD capability at 0x60 serving `vpd`; the F
/// flag is set by the read that follows an address write, as a device that takes a moment does.
struct FakeConfig {
    vpd: Vec<u8>,
    address: Cell<Option<u16>>,
    ready: Cell<bool>,
    with_vpd: bool,
}

impl ConfigSpace for FakeConfig {
    fn read32(&self, off: u16) -> Result<u32, PciError> {
        Ok(match off {
            0x04 => 1 << 20,
            0x34 => 0x40,
            0x40 => {
                let next: u32 = if self.with_vpd { 0x60 } else { 0 };
                (next << 8) | 0x01
            }
            0x60 => match self.address.get() {
                Some(a) if self.ready.replace(true) => (1 << 31) | (u32::from(a) << 16) | 0x03,
                Some(a) => (u32::from(a) << 16) | 0x03,
                None => 0x03,
            },
            0x64 => {
                let a = usize::from(self.address.get().unwrap());
                let byte = |i: usize| u32::from(self.vpd.get(a + i).copied().unwrap_or(0xFF));
                byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24
            }
            _ => 0,
        })
    }

    fn write32(&self, off: u16, value: u32) -> Result<(), PciError> {
        assert_eq!(off, 0x60, "only the VPD address register is written");
        assert_eq!(value & (1 << 31), 0, "F clear: a read");
        self.address.set(Some((value >> 16) as u16 & 0x7FFF));
        self.ready.set(false);
        Ok(())
    }
}

#[test]
fn the_capability_is_read_dword_by_dword_up_to_the_end_tag() {
    let vpd = encode("OCe14102", &[("PN", b"OCe14102-NM"), ("EC", b"A"), ("SN", b"FC1234"), ("V0", b"x")]);
    let cfg = FakeConfig { vpd: vpd.clone(), address: Cell::new(None), ready: Cell::new(false), with_vpd: true };
    let read = read_capability(&cfg).unwrap().unwrap();
    assert_eq!(read, vpd, "every byte up to the End tag, none after");
    assert_eq!(parse(&read).unwrap().get("PN").as_deref(), Some("OCe14102-NM"));
    let none = FakeConfig { with_vpd: false, ..cfg };
    assert_eq!(read_capability(&none).unwrap(), None);
}

#[test]
fn a_capability_serving_all_ones_stops_at_once() {
    let cfg = FakeConfig { vpd: Vec::new(), address: Cell::new(None), ready: Cell::new(false), with_vpd: true };
    let read = read_capability(&cfg).unwrap().unwrap();
    assert_eq!(read.len(), 4, "0xff is no VPD tag: reading stops");
    assert!(parse(&read).is_err());
}

#[test]
fn sysfs_vpd_file_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let roots = Roots::new(dir.path(), dir.path());
    let addr: PciAddress = "0000:03:00.0".parse().unwrap();
    assert_eq!(read_sysfs(&roots, addr).unwrap(), None);
    let path = roots.device_dir(addr);
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("vpd"), golden()).unwrap();
    assert_eq!(read_sysfs(&roots, addr).unwrap(), Some(golden()));
}
