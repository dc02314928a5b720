//! PCI Vital Product Data: read through the function's VPD capability (or the kernel's sysfs
//! `vpd` file while a driver holds the function) and parsed as the PCI Local Bus Specification
//! 3.0 lays it out (§6.4 the capability; Appendix I the format): resource tags — the large
//! Identifier String (0x82), VPD-R (0x90) and VPD-W (0x91), the small End tag (0x78) — and in
//! VPD-R/W the keywords (`PN` part number, `EC` engineering change, `SN` serial number, `MN`
//! manufacturer, `Vx` vendor-specific, `RV` checksum, ...). The bytes are untrusted: every
//! malformation is a [`PciError::BadVpd`] naming its offset, never a panic.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::{ConfigSpace, PciAddress, PciError, Roots};

/// Capability ID of VPD (PCI Code and ID Assignment 1.11 §2).
pub const CAP_ID_VPD: u8 = 0x03;
/// VPD addresses are 15 bits (§6.4): at most 32 KiB.
pub const MAX_LEN: usize = 0x8000;
/// How long a function may take to complete one VPD read: the limit Linux's `pci_vpd_wait`
/// (drivers/pci/vpd.c) gives it, 125 ms.
pub const WAIT: Duration = Duration::from_millis(125);

/// Large resource Identifier String (item 0x02): the product name.
const TAG_ID_STRING: u8 = 0x82;
/// Large resource VPD-R (item 0x10): read-only keywords.
const TAG_VPD_R: u8 = 0x90;
/// Large resource VPD-W (item 0x11): read/write keywords.
const TAG_VPD_W: u8 = 0x91;
/// Small resource End tag (item 0x0F, length 0).
const TAG_END: u8 = 0x78;
/// Config-space status register bit 4 (dword 0x04 bit 20): a capabilities list is present.
const STATUS_CAP_LIST: u32 = 1 << 20;
/// Capabilities pointer (type 0 header).
const CAP_PTR: u16 = 0x34;
/// Most capabilities a list can hold (Linux's `PCI_FIND_CAP_TTL`); a longer walk is a loop.
const CAP_TTL: usize = 48;
/// VPD Address register's F flag (bit 15 of the word, bit 31 of the capability's dword): the
/// host clears it to ask for a read, the function sets it when the Data register holds it.
const FLAG_F: u32 = 1 << 31;
/// The VPD Data register, after the capability's first dword.
const DATA: u16 = 4;

/// One keyword of VPD-R or VPD-W.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keyword {
    /// Its two-character name (`PN`, `SN`, `V0`, ...).
    pub name: String,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl Keyword {
    /// The data as text: ASCII, trailing NULs and spaces dropped, other bytes as `\xNN`.
    pub fn text(&self) -> String {
        ascii(&self.data)
    }
}

/// Parsed VPD.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vpd {
    /// The Identifier String.
    pub product_name: Option<String>,
    /// VPD-R's keywords, in order, without `RV`.
    pub read_only: Vec<Keyword>,
    /// VPD-W's keywords, in order, without `RW`.
    pub writable: Vec<Keyword>,
}

impl Vpd {
    /// The text of keyword `name`, read-only area first.
    pub fn get(&self, name: &str) -> Option<String> {
        self.read_only.iter().chain(&self.writable).find(|k| k.name == name).map(Keyword::text)
    }
}

fn ascii(bytes: &[u8]) -> String {
    let end = bytes.iter().rposition(|&b| b != 0 && b != b' ').map_or(0, |i| i + 1);
    bytes[..end]
        .iter()
        .map(|&b| if (0x20..0x7F).contains(&b) { char::from(b).to_string() } else { format!("\\x{b:02x}") })
        .collect()
}

fn bad(offset: usize, problem: impl Into<String>) -> PciError {
    PciError::BadVpd { offset, problem: problem.into() }
}

/// Parses VPD bytes up to their End tag (bytes after it are ignored).
pub fn parse(bytes: &[u8]) -> Result<Vpd, PciError> {
    let mut vpd = Vpd::default();
    let mut pos = 0;
    loop {
        let Some(&tag) = bytes.get(pos) else {
            return Err(bad(pos, format!("no End tag (0x78) in {} bytes", bytes.len())));
        };
        match tag {
            TAG_END => return Ok(vpd),
            TAG_ID_STRING | TAG_VPD_R | TAG_VPD_W => {
                let Some(len) = bytes.get(pos + 1..pos + 3) else {
                    return Err(bad(pos, format!("resource {tag:#04x} is cut off in its header")));
                };
                let len = usize::from(u16::from_le_bytes([len[0], len[1]]));
                let start = pos + 3;
                let Some(data) = bytes.get(start..start + len) else {
                    return Err(bad(
                        pos,
                        format!("resource {tag:#04x} of {len} bytes runs past the end ({} bytes)", bytes.len()),
                    ));
                };
                match tag {
                    TAG_ID_STRING => vpd.product_name = Some(ascii(data)),
                    TAG_VPD_R => vpd.read_only = keywords(bytes, start, len, "RV")?,
                    _ => vpd.writable = keywords(bytes, start, len, "RW")?,
                }
                pos = start + len;
            }
            other => {
                return Err(bad(
                    pos,
                    format!("resource tag {other:#04x} is not a VPD tag (0x82, 0x90, 0x91, End 0x78)"),
                ));
            }
        }
    }
}

/// The keywords of the area `bytes[start..start + len]`, up to `last` (`RV`, whose first byte
/// makes every byte of the VPD up to it sum to zero; `RW`, the unused rest), which ends it.
fn keywords(bytes: &[u8], start: usize, len: usize, last: &str) -> Result<Vec<Keyword>, PciError> {
    let end = start + len;
    let mut out = Vec::new();
    let mut pos = start;
    while pos < end {
        let Some(header) = bytes.get(pos..pos + 3).filter(|_| pos + 3 <= end) else {
            return Err(bad(pos, "a keyword is cut off in its header"));
        };
        if !header[..2].iter().all(u8::is_ascii_alphanumeric) {
            return Err(bad(
                pos,
                format!("keyword name {:02x}{:02x} is not two letters or digits", header[0], header[1]),
            ));
        }
        let name = String::from_utf8_lossy(&header[..2]).into_owned();
        let data_start = pos + 3;
        let data_end = data_start + usize::from(header[2]);
        if data_end > end {
            return Err(bad(pos, format!("keyword {name} of {} bytes runs past its area", header[2])));
        }
        if name == last {
            if name == "RV" {
                if data_end == data_start {
                    return Err(bad(pos, "the RV keyword has no checksum byte"));
                }
                let sum = bytes[..=data_start].iter().fold(0u8, |s, &b| s.wrapping_add(b));
                if sum != 0 {
                    return Err(bad(data_start, format!("the RV checksum does not add up (sum {sum:#04x}, not 0)")));
                }
            }
            break;
        }
        out.push(Keyword { name, data: bytes[data_start..data_end].to_vec() });
        pos = data_end;
    }
    Ok(out)
}

/// Builds VPD: the Identifier String `product_name`, a VPD-R holding `read_only` (each keyword's
/// data cut to 255 bytes) and its `RV` checksum, and the End tag. For the emulator and tests.
pub fn encode(product_name: &str, read_only: &[(&str, &[u8])]) -> Vec<u8> {
    let name = &product_name.as_bytes()[..product_name.len().min(usize::from(u16::MAX))];
    let mut out = vec![TAG_ID_STRING];
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(name);
    let mut area = Vec::new();
    for (keyword, data) in read_only {
        let data = &data[..data.len().min(usize::from(u8::MAX))];
        let kw = keyword.as_bytes();
        area.extend_from_slice(&[kw.first().copied().unwrap_or(b'?'), kw.get(1).copied().unwrap_or(b'?')]);
        area.push(data.len() as u8);
        area.extend_from_slice(data);
    }
    // RV: its checksum byte, and no reserved bytes after it.
    area.extend_from_slice(b"RV\x01");
    let area_len = (area.len() + 1) as u16;
    out.push(TAG_VPD_R);
    out.extend_from_slice(&area_len.to_le_bytes());
    out.extend_from_slice(&area);
    let sum = out.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    out.push(0u8.wrapping_sub(sum));
    out.push(TAG_END);
    out
}

/// How far a VPD prefix goes: complete at its End tag, or more bytes needed; `None` when it
/// holds a tag VPD does not use (reading stops; [`parse`] names the problem).
fn scan(bytes: &[u8]) -> Option<Result<usize, ()>> {
    let mut pos = 0;
    loop {
        let Some(&tag) = bytes.get(pos) else { return Some(Err(())) };
        match tag {
            TAG_END => return Some(Ok(pos + 1)),
            TAG_ID_STRING | TAG_VPD_R | TAG_VPD_W => {
                let Some(len) = bytes.get(pos + 1..pos + 3) else { return Some(Err(())) };
                pos += 3 + usize::from(u16::from_le_bytes([len[0], len[1]]));
            }
            _ => return None,
        }
    }
}

/// The offset of capability `id` in the function's list, if it has one.
pub fn find_capability<C: ConfigSpace>(cfg: &C, id: u8) -> Result<Option<u16>, PciError> {
    if cfg.read32(0x04)? & STATUS_CAP_LIST == 0 {
        return Ok(None);
    }
    let mut ptr = (cfg.read32(CAP_PTR)? & 0xFC) as u16;
    for _ in 0..CAP_TTL {
        if ptr < 0x40 {
            return Ok(None);
        }
        let header = cfg.read32(ptr)?;
        if header & 0xFF == u32::from(id) {
            return Ok(Some(ptr));
        }
        ptr = ((header >> 8) & 0xFC) as u16;
    }
    Ok(None)
}

/// Reads the VPD dword at `address` through the capability at `cap`.
fn read_dword<C: ConfigSpace>(cfg: &C, cap: u16, address: u16) -> Result<u32, PciError> {
    // The capability's ID and next pointer (the dword's low half) are read-only.
    cfg.write32(cap, u32::from(address) << 16)?;
    let deadline = Instant::now() + WAIT;
    loop {
        if cfg.read32(cap)? & FLAG_F != 0 {
            return cfg.read32(cap + DATA);
        }
        if Instant::now() >= deadline {
            return Err(PciError::VpdTimeout { address });
        }
        std::thread::sleep(Duration::from_micros(10));
    }
}

/// The VPD bytes through the VPD capability, up to the End tag (or [`MAX_LEN`], or a tag VPD
/// does not use, which [`parse`] then reports); `None` when the function has no VPD capability.
pub fn read_capability<C: ConfigSpace>(cfg: &C) -> Result<Option<Vec<u8>>, PciError> {
    let Some(cap) = find_capability(cfg, CAP_ID_VPD)? else { return Ok(None) };
    let mut bytes = Vec::new();
    while bytes.len() < MAX_LEN {
        match scan(&bytes) {
            Some(Ok(len)) => {
                bytes.truncate(len);
                break;
            }
            None => break,
            Some(Err(())) => {}
        }
        let dword = read_dword(cfg, cap, bytes.len() as u16)?;
        bytes.extend_from_slice(&dword.to_le_bytes());
    }
    Ok(Some(bytes))
}

/// The VPD bytes the kernel serves in sysfs (`/sys/bus/pci/devices/ADDR/vpd`, readable while a
/// driver holds the function); `None` when the function has no such file.
pub fn read_sysfs(roots: &Roots, addr: PciAddress) -> Result<Option<Vec<u8>>, PciError> {
    let path = roots.device_dir(addr).join("vpd");
    read_file(&path)
}

fn read_file(path: &Path) -> Result<Option<Vec<u8>>, PciError> {
    match std::fs::read(path) {
        Ok(mut bytes) => {
            bytes.truncate(MAX_LEN);
            Ok(Some(bytes))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PciError::Io { path: path.to_path_buf(), source }),
    }
}

#[cfg(test)]
#[path = "vpd_tests.rs"]
mod tests;
