//! What crosses the wire, in the classic libpcap file format (pcap-savefile(5), tcpdump.org), so
//! tcpdump and Wireshark read it: a 24-byte file header, then per frame a 16-byte record header
//! and the frame. Every field is written little-endian; the magic number tells readers the order.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// pcap-savefile(5): the magic number of a file with microsecond timestamps.
pub const MAGIC: u32 = 0xA1B2_C3D4;
/// pcap-savefile(5): the format's version, 2.4 (the only one readers know).
pub const VERSION: (u16, u16) = (2, 4);
/// The longest frame a record holds whole (`snaplen`): larger than any frame the cable carries
/// ([`super::MAX_DATAGRAM`]), so nothing is cut.
pub const SNAPLEN: u32 = 65_535;
/// LINKTYPE_ETHERNET (tcpdump.org's link-layer header types): IEEE 802.3 frames, no FCS.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// The file header's length, and each record header's.
pub const FILE_HEADER_LEN: usize = 24;
pub const RECORD_HEADER_LEN: usize = 16;

/// A pcap file being written.
#[derive(Debug)]
pub struct Pcap {
    out: BufWriter<File>,
}

impl Pcap {
    /// Creates (or truncates) `path` and writes the file header.
    pub fn create(path: &Path) -> io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        let mut header = Vec::with_capacity(FILE_HEADER_LEN);
        header.extend_from_slice(&MAGIC.to_le_bytes());
        header.extend_from_slice(&VERSION.0.to_le_bytes());
        header.extend_from_slice(&VERSION.1.to_le_bytes());
        header.extend_from_slice(&0i32.to_le_bytes()); // thiszone: timestamps are UTC
        header.extend_from_slice(&0u32.to_le_bytes()); // sigfigs: always 0
        header.extend_from_slice(&SNAPLEN.to_le_bytes());
        header.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&header)?;
        out.flush()?;
        Ok(Self { out })
    }

    /// Appends one frame, stamped now, and flushes it, so a reader following the file (or a
    /// server killed a moment later) sees every record whole.
    pub fn record(&mut self, frame: &[u8]) -> io::Result<()> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let len = u32::try_from(frame.len()).unwrap_or(u32::MAX);
        let kept = len.min(SNAPLEN);
        let mut header = [0u8; RECORD_HEADER_LEN];
        header[0..4].copy_from_slice(&(now.as_secs() as u32).to_le_bytes());
        header[4..8].copy_from_slice(&now.subsec_micros().to_le_bytes());
        header[8..12].copy_from_slice(&kept.to_le_bytes());
        header[12..16].copy_from_slice(&len.to_le_bytes());
        self.out.write_all(&header)?;
        self.out.write_all(&frame[..kept as usize])?;
        self.out.flush()
    }
}
