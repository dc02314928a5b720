//! The byte codec every wire type uses: a non-panicking [`Reader`] and [`Writer`].
//!
//! All fields are little-endian, read and written one by one in spec order through byteorder
//! (design.md §3). Offsets are absolute within the buffer the codec was made for, so a decoder's
//! error names the same byte offset as `spec/protocol.md` does.

use byteorder::{ByteOrder, LittleEndian};

/// A field could not be read or written because the buffer is too short.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} at byte {offset} needs {needed} bytes, only {available} available")]
pub struct WireError {
    /// The field being read or written.
    pub field: &'static str,
    /// Its byte offset in the buffer.
    pub offset: usize,
    /// Bytes the field needs.
    pub needed: usize,
    /// Bytes left in the buffer at that offset.
    pub available: usize,
}

/// Reads little-endian fields from a byte slice without ever panicking.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader positioned at byte 0 of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// A reader over `buf` positioned at `pos` (for command bodies that start after the header).
    pub fn at(buf: &'a [u8], pos: usize) -> Self {
        Self { buf, pos }
    }

    /// The current absolute offset.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left after the current position.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// The whole underlying buffer.
    pub fn buffer(&self) -> &'a [u8] {
        self.buf
    }

    /// Moves to absolute offset `pos`, which must lie inside the buffer (or at its end).
    pub fn seek(&mut self, field: &'static str, pos: usize) -> Result<(), WireError> {
        if pos > self.buf.len() {
            return Err(WireError { field, offset: pos, needed: 0, available: 0 });
        }
        self.pos = pos;
        Ok(())
    }

    /// Skips `n` reserved bytes.
    pub fn skip(&mut self, field: &'static str, n: usize) -> Result<(), WireError> {
        self.bytes(field, n).map(|_| ())
    }

    /// Reads `n` raw bytes.
    pub fn bytes(&mut self, field: &'static str, n: usize) -> Result<&'a [u8], WireError> {
        let available = self.remaining();
        if n > available {
            return Err(WireError { field, offset: self.pos, needed: n, available });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Reads a fixed-size byte array.
    pub fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], WireError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(field, N)?);
        Ok(out)
    }

    /// Reads one byte.
    pub fn u8(&mut self, field: &'static str) -> Result<u8, WireError> {
        Ok(self.bytes(field, 1)?[0])
    }

    /// Reads a little-endian u16.
    pub fn u16(&mut self, field: &'static str) -> Result<u16, WireError> {
        Ok(LittleEndian::read_u16(self.bytes(field, 2)?))
    }

    /// Reads a little-endian u32.
    pub fn u32(&mut self, field: &'static str) -> Result<u32, WireError> {
        Ok(LittleEndian::read_u32(self.bytes(field, 4)?))
    }

    /// Reads a little-endian u64.
    pub fn u64(&mut self, field: &'static str) -> Result<u64, WireError> {
        Ok(LittleEndian::read_u64(self.bytes(field, 8)?))
    }

    /// Reads a fixed-width, NUL-terminated, NUL-padded ASCII field (spec/protocol.md §5.1:
    /// `firmware_version_string[32]`, NUL-terminated); stops at the first NUL and replaces bytes
    /// that are not printable ASCII, so a misbehaving device cannot inject control characters. A
    /// field with no NUL gives its first `width - 1` bytes, as be2net's `strscpy` copies it
    /// (`be_cmd_get_fw_ver`, spec/be2net-driver.md §4.3) and as [`Writer::string`] writes a
    /// string that long.
    pub fn string(&mut self, field: &'static str, width: usize) -> Result<String, WireError> {
        let raw = self.bytes(field, width)?;
        Ok(decode_c_string(&raw[..width.saturating_sub(1)]))
    }
}

/// Decodes a NUL-terminated, NUL-padded ASCII field (see [`Reader::string`]).
pub fn decode_c_string(raw: &[u8]) -> String {
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    raw[..end].iter().map(|&b| if (0x20..0x7f).contains(&b) { b as char } else { '?' }).collect()
}

/// Writes little-endian fields into a byte slice without ever panicking.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
    /// One past the furthest byte written ([`Writer::written_end`]).
    end: usize,
}

impl<'a> Writer<'a> {
    /// A writer positioned at byte 0 of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, pos: 0, end: 0 }
    }

    /// A writer over `buf` positioned at `pos`.
    pub fn at(buf: &'a mut [u8], pos: usize) -> Self {
        Self { buf, pos, end: pos }
    }

    /// The current absolute offset.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// One past the furthest byte written so far, wherever [`Writer::seek`] has since moved the
    /// position (the start position when nothing was written): what a caller reusing the buffer
    /// must clear.
    pub fn written_end(&self) -> usize {
        self.end
    }

    /// Bytes left after the current position.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Moves to absolute offset `pos` (inside the buffer or at its end).
    pub fn seek(&mut self, field: &'static str, pos: usize) -> Result<(), WireError> {
        if pos > self.buf.len() {
            return Err(WireError { field, offset: pos, needed: 0, available: 0 });
        }
        self.pos = pos;
        Ok(())
    }

    fn slot(&mut self, field: &'static str, n: usize) -> Result<&mut [u8], WireError> {
        let available = self.remaining();
        if n > available {
            return Err(WireError { field, offset: self.pos, needed: n, available });
        }
        let start = self.pos;
        self.pos += n;
        self.end = self.end.max(self.pos);
        Ok(&mut self.buf[start..start + n])
    }

    /// Writes raw bytes.
    pub fn bytes(&mut self, field: &'static str, src: &[u8]) -> Result<(), WireError> {
        self.slot(field, src.len())?.copy_from_slice(src);
        Ok(())
    }

    /// Writes `n` zero bytes (reserved fields).
    pub fn zeros(&mut self, field: &'static str, n: usize) -> Result<(), WireError> {
        self.slot(field, n)?.fill(0);
        Ok(())
    }

    /// Writes one byte.
    pub fn u8(&mut self, field: &'static str, v: u8) -> Result<(), WireError> {
        self.slot(field, 1)?[0] = v;
        Ok(())
    }

    /// Writes a little-endian u16.
    pub fn u16(&mut self, field: &'static str, v: u16) -> Result<(), WireError> {
        LittleEndian::write_u16(self.slot(field, 2)?, v);
        Ok(())
    }

    /// Writes a little-endian u32.
    pub fn u32(&mut self, field: &'static str, v: u32) -> Result<(), WireError> {
        LittleEndian::write_u32(self.slot(field, 4)?, v);
        Ok(())
    }

    /// Writes a little-endian u64.
    pub fn u64(&mut self, field: &'static str, v: u64) -> Result<(), WireError> {
        LittleEndian::write_u64(self.slot(field, 8)?, v);
        Ok(())
    }

    /// Writes `s` into a fixed-width field, NUL-padded; a longer string is cut to `width - 1`
    /// bytes so the field always stays NUL-terminated.
    pub fn string(&mut self, field: &'static str, s: &str, width: usize) -> Result<(), WireError> {
        let slot = self.slot(field, width)?;
        slot.fill(0);
        let n = s.len().min(width.saturating_sub(1));
        slot[..n].copy_from_slice(&s.as_bytes()[..n]);
        Ok(())
    }
}

/// A value with a fixed wire encoding (a header, a WRB, a command request or response).
///
/// `encode` writes at the writer's position; `decode` reads from the reader's position. Offsets
/// in error messages are absolute in the buffer.
pub trait Wire: Sized {
    /// Encodes `self`.
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError>;
    /// Decodes a value.
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_reports_field_offset_and_shortfall() {
        let buf = [1u8, 2, 3];
        let mut r = Reader::new(&buf);
        assert_eq!(r.u16("a").unwrap(), 0x0201);
        let err = r.u32("b").unwrap_err();
        assert_eq!(err, WireError { field: "b", offset: 2, needed: 4, available: 1 });
        assert_eq!(err.to_string(), "b at byte 2 needs 4 bytes, only 1 available");
        // A failed read does not move the cursor.
        assert_eq!(r.u8("c").unwrap(), 3);
        assert!(r.u8("d").is_err());
        assert!(r.seek("e", 4).is_err());
    }

    #[test]
    fn reader_at_past_the_end_never_panics() {
        let buf = [0u8; 4];
        let mut r = Reader::at(&buf, 100);
        assert_eq!(r.remaining(), 0);
        assert_eq!(r.u8("x").unwrap_err().available, 0);
        assert!(r.bytes("y", usize::MAX).is_err());
    }

    #[test]
    fn writer_is_little_endian_and_bounded() {
        let mut buf = [0xAAu8; 10];
        let mut w = Writer::new(&mut buf);
        w.u32("a", 0x1234_5678).unwrap();
        w.u16("b", 0xBEEF).unwrap();
        w.u8("c", 7).unwrap();
        let err = w.u32("d", 1).unwrap_err();
        assert_eq!((err.offset, err.needed, err.available), (7, 4, 3));
        assert_eq!(buf, [0x78, 0x56, 0x34, 0x12, 0xEF, 0xBE, 7, 0xAA, 0xAA, 0xAA]);
    }

    #[test]
    fn written_end_is_the_furthest_byte_written_whatever_the_position() {
        let mut buf = [0u8; 16];
        let mut w = Writer::at(&mut buf, 4);
        assert_eq!(w.written_end(), 4, "nothing written yet");
        w.seek("far", 12).unwrap();
        assert_eq!(w.written_end(), 4, "a seek writes nothing");
        w.u16("x", 1).unwrap();
        w.seek("back", 6).unwrap();
        w.u8("y", 2).unwrap();
        assert_eq!((w.position(), w.written_end()), (7, 14));
        assert!(w.u32("too far", 0).is_ok() && w.u8("z", 3).is_ok());
        assert_eq!(w.written_end(), 14, "writes behind the furthest one leave it");
    }

    #[test]
    fn strings_are_nul_padded_and_sanitised() {
        let mut buf = [0xFFu8; 8];
        Writer::new(&mut buf).string("s", "11.1.172.23", 8).unwrap();
        assert_eq!(&buf, b"11.1.17\0");
        assert_eq!(Reader::new(&buf).string("s", 8).unwrap(), "11.1.17");
        assert_eq!(decode_c_string(b"ab\x07\xffc\0zz"), "ab??c");
    }

    #[test]
    fn a_field_without_nul_reads_as_the_c_string_it_holds() {
        // Eight bytes and no NUL: a C reader (strscpy into 8 bytes) keeps 7, and so does the
        // Reader; the Writer writes those 7 and the NUL, so the value survives a round trip.
        let full = *b"12345678";
        let s = Reader::new(&full).string("s", 8).unwrap();
        assert_eq!(s, "1234567");
        let mut out = [0xFFu8; 8];
        Writer::new(&mut out).string("s", &s, 8).unwrap();
        assert_eq!(Reader::new(&out).string("s", 8).unwrap(), s);
    }
}
