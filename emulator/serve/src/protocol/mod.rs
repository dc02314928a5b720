//! The vfio-user wire format: the 16-byte message header, the command numbers, and a reader that
//! cannot panic on untrusted bytes.
//!
//! Source for every offset and number here: QEMU's `docs/interop/vfio-user.rst` ("Header",
//! "Commands" and one section per command), which reuses the structures of `<linux/vfio.h>`.
//! The message bodies are in [`messages`]. All fields are little-endian (the spec says "the
//! endianness of the host system"; this server runs on x86-64 and says so explicitly).

pub mod messages;

use byteorder::{ByteOrder, LittleEndian};
/// The checked reader every decoder here uses: oce-mailbox's, which reports the field, offset and
/// the bytes missing.
pub use oce_mailbox::wire::{Reader, WireError};

pub use messages::{
    DmaMap, DmaUnmap, IrqInfo, RegionInfo, Reply, Request, SetIrqs, VersionCaps, decode_request, encode_error,
    encode_reply, encode_request,
};

/// Length of the header that starts every message (vfio-user.rst "Header").
pub const HEADER_LEN: usize = 16;

/// The largest `count` of one region or DMA transfer this server accepts and sends
/// (`max_data_xfer_size`; vfio-user.rst "Version": default 1048576).
pub const MAX_DATA_XFER: usize = 1 << 20;

/// The largest message this server reads: a transfer of [`MAX_DATA_XFER`] bytes plus its
/// fixed fields and the header, with room for the largest fixed body (SET_IRQS with a boolean
/// per vector). Anything larger is a protocol error and ends the connection.
pub const MAX_MESSAGE: usize = MAX_DATA_XFER + 4096;

/// Header flag bits 0-3: the message type (vfio-user.rst "Header").
pub const FLAG_TYPE_MASK: u32 = 0xF;
/// Message type "command".
pub const TYPE_COMMAND: u32 = 0x0;
/// Message type "reply".
pub const TYPE_REPLY: u32 = 0x1;
/// Header flag bit 4: the sender wants no reply.
pub const FLAG_NO_REPLY: u32 = 1 << 4;
/// Header flag bit 5: the reply reports an error; the header's error field holds an errno.
pub const FLAG_ERROR: u32 = 1 << 5;

/// A vfio-user command number (vfio-user.rst "Commands").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `VFIO_USER_VERSION` (1): version and capability negotiation.
    Version,
    /// `VFIO_USER_DMA_MAP` (2).
    DmaMap,
    /// `VFIO_USER_DMA_UNMAP` (3).
    DmaUnmap,
    /// `VFIO_USER_DEVICE_GET_INFO` (4).
    DeviceGetInfo,
    /// `VFIO_USER_DEVICE_GET_REGION_INFO` (5).
    DeviceGetRegionInfo,
    /// `VFIO_USER_DEVICE_GET_REGION_IO_FDS` (6).
    DeviceGetRegionIoFds,
    /// `VFIO_USER_DEVICE_GET_IRQ_INFO` (7).
    DeviceGetIrqInfo,
    /// `VFIO_USER_DEVICE_SET_IRQS` (8).
    DeviceSetIrqs,
    /// `VFIO_USER_REGION_READ` (9).
    RegionRead,
    /// `VFIO_USER_REGION_WRITE` (10).
    RegionWrite,
    /// `VFIO_USER_DMA_READ` (11), server to client.
    DmaRead,
    /// `VFIO_USER_DMA_WRITE` (12), server to client.
    DmaWrite,
    /// `VFIO_USER_DEVICE_RESET` (13).
    DeviceReset,
    /// `VFIO_USER_REGION_WRITE_MULTI` (15).
    RegionWriteMulti,
    /// Any other number, kept as sent (style rule 9).
    Unknown(u16),
}

impl Command {
    /// The command for a raw number.
    pub fn from_raw(raw: u16) -> Self {
        match raw {
            1 => Self::Version,
            2 => Self::DmaMap,
            3 => Self::DmaUnmap,
            4 => Self::DeviceGetInfo,
            5 => Self::DeviceGetRegionInfo,
            6 => Self::DeviceGetRegionIoFds,
            7 => Self::DeviceGetIrqInfo,
            8 => Self::DeviceSetIrqs,
            9 => Self::RegionRead,
            10 => Self::RegionWrite,
            11 => Self::DmaRead,
            12 => Self::DmaWrite,
            13 => Self::DeviceReset,
            15 => Self::RegionWriteMulti,
            other => Self::Unknown(other),
        }
    }

    /// The raw number.
    pub fn raw(self) -> u16 {
        match self {
            Self::Version => 1,
            Self::DmaMap => 2,
            Self::DmaUnmap => 3,
            Self::DeviceGetInfo => 4,
            Self::DeviceGetRegionInfo => 5,
            Self::DeviceGetRegionIoFds => 6,
            Self::DeviceGetIrqInfo => 7,
            Self::DeviceSetIrqs => 8,
            Self::RegionRead => 9,
            Self::RegionWrite => 10,
            Self::DmaRead => 11,
            Self::DmaWrite => 12,
            Self::DeviceReset => 13,
            Self::RegionWriteMulti => 15,
            Self::Unknown(raw) => raw,
        }
    }
}

/// The message header.
#[doc(alias = "vfio_user_header")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Message ID, echoed in the reply.
    pub id: u16,
    /// The command.
    pub command: Command,
    /// Size of the whole message, header included.
    pub size: u32,
    /// Type, no-reply and error bits.
    pub flags: u32,
    /// An errno in an error reply; reserved in a command.
    pub error: u32,
}

impl Header {
    /// Decodes the first [`HEADER_LEN`] bytes of `bytes`.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let id = r.u16("header.id")?;
        let command = Command::from_raw(r.u16("header.command")?);
        let size = r.u32("header.size")?;
        let flags = r.u32("header.flags")?;
        let error = r.u32("header.error")?;
        Ok(Self { id, command, size, flags, error })
    }

    /// The header as bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        LittleEndian::write_u16(&mut b[0..2], self.id);
        LittleEndian::write_u16(&mut b[2..4], self.command.raw());
        LittleEndian::write_u32(&mut b[4..8], self.size);
        LittleEndian::write_u32(&mut b[8..12], self.flags);
        LittleEndian::write_u32(&mut b[12..16], self.error);
        b
    }

    /// True for a reply, false for a command.
    pub fn is_reply(&self) -> bool {
        self.flags & FLAG_TYPE_MASK == TYPE_REPLY
    }

    /// True when the sender wants no reply (posted writes).
    pub fn no_reply(&self) -> bool {
        self.flags & FLAG_NO_REPLY != 0
    }

    /// The errno of an error reply, `None` for success.
    pub fn error(&self) -> Option<u32> {
        (self.flags & FLAG_ERROR != 0).then_some(self.error)
    }

    /// The payload length the header announces, or why it cannot be a message this server reads.
    pub fn payload_len(&self) -> Result<usize, DecodeError> {
        let size = self.size as usize;
        if !(HEADER_LEN..=MAX_MESSAGE).contains(&size) {
            return Err(DecodeError::BadSize { size: self.size, max: MAX_MESSAGE });
        }
        Ok(size - HEADER_LEN)
    }
}

/// Why bytes are not a valid message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// A field runs past the end of the message.
    #[error("truncated message: {0}")]
    Truncated(#[from] WireError),
    /// The header's size is below the header's own length or above what this server reads.
    #[error("message size {size} is outside 16..={max}")]
    BadSize {
        /// The size field.
        size: u32,
        /// The largest accepted.
        max: usize,
    },
    /// A field holds a value the protocol does not allow.
    #[error("bad {field}: {value:#x}")]
    BadField {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// The VERSION message's capability string is not NUL-terminated UTF-8 JSON.
    #[error("malformed version capabilities: {reason}")]
    BadCapabilities {
        /// What is wrong.
        reason: String,
    },
}

/// Builds a message: header first (size patched at the end), then little-endian fields.
#[derive(Debug)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// A message with this header's id, command and flags (the size is filled in by
    /// [`Writer::finish`]).
    pub fn new(id: u16, command: Command, flags: u32, error: u32) -> Self {
        let header = Header { id, command, size: 0, flags, error };
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(&header.encode());
        Self { buf }
    }

    /// Appends a u16.
    pub fn u16(&mut self, v: u16) -> &mut Self {
        let mut b = [0u8; 2];
        LittleEndian::write_u16(&mut b, v);
        self.buf.extend_from_slice(&b);
        self
    }

    /// Appends a u32.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        let mut b = [0u8; 4];
        LittleEndian::write_u32(&mut b, v);
        self.buf.extend_from_slice(&b);
        self
    }

    /// Appends a u64.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        let mut b = [0u8; 8];
        LittleEndian::write_u64(&mut b, v);
        self.buf.extend_from_slice(&b);
        self
    }

    /// Appends raw bytes.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }

    /// The finished message, with the header's size field set.
    pub fn finish(mut self) -> Vec<u8> {
        let size = u32::try_from(self.buf.len()).unwrap_or(u32::MAX);
        LittleEndian::write_u32(&mut self.buf[4..8], size);
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_golden_bytes() {
        // REGION_READ (9), id 0x1234, 32 bytes, command type, no error.
        let bytes = hex("3412 0900 20000000 00000000 00000000");
        let h = Header::decode(&bytes).unwrap();
        assert_eq!(h, Header { id: 0x1234, command: Command::RegionRead, size: 32, flags: 0, error: 0 });
        assert_eq!(h.encode().to_vec(), bytes);
        assert_eq!(h.payload_len(), Ok(16));
        // An error reply with errno 22 (EINVAL), no-reply clear.
        let e = Header::decode(&hex("0100 0a00 10000000 21000000 16000000")).unwrap();
        assert!(e.is_reply());
        assert_eq!(e.error(), Some(22));
        assert!(!e.no_reply());
    }

    #[test]
    fn sizes_outside_the_limits_are_refused() {
        let mut h = Header { id: 0, command: Command::Version, size: 15, flags: 0, error: 0 };
        assert!(matches!(h.payload_len(), Err(DecodeError::BadSize { size: 15, .. })));
        h.size = (MAX_MESSAGE + 1) as u32;
        assert!(h.payload_len().is_err());
        assert!(matches!(
            Header::decode(&[0; 15]),
            Err(DecodeError::Truncated(WireError { field: "header.error", .. }))
        ));
    }

    #[test]
    fn unknown_commands_keep_their_number() {
        assert_eq!(Command::from_raw(99), Command::Unknown(99));
        assert_eq!(Command::Unknown(99).raw(), 99);
        for raw in 1..=15 {
            assert_eq!(Command::from_raw(raw).raw(), raw);
        }
    }

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let clean: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..clean.len()).step_by(2).map(|i| u8::from_str_radix(&clean[i..i + 2], 16).unwrap()).collect()
    }
}
