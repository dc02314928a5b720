//! `trait Command`: a firmware command as a type, with its opcode, subsystem, version, transport
//! and timeout as associated constants (style.md rule 7), plus the helpers that put a command into
//! a buffer and take its response out.

use std::time::Duration;

use crate::header::{HEADER_LEN, RequestHeader, ResponseHeader, Subsystem};
use crate::wire::{Reader, Wire, WireError, Writer};
use crate::wrb::EMBEDDED_MAX;

/// The default wait for a mailbox command to complete: be2net polls RDY for about 4 s per step
/// (spec/protocol.md §3.9).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(4);

/// A firmware command.
///
/// The request type's [`Wire`] impl encodes and decodes the **body** only, starting at byte 16 of
/// the command buffer; offsets in the buffer match `spec/protocol.md` §5. The response type
/// likewise decodes the body after the 16-byte response header. Both directions exist so that the
/// host and the emulator share one codec; golden-bytes tests pin it to the spec. Both are `Debug`
/// so the command trace can show them.
pub trait Command: Wire + std::fmt::Debug {
    /// Human name, the C name without its prefix (e.g. `GET_FW_VERSION`).
    const NAME: &'static str;
    /// Subsystem.
    const SUBSYSTEM: Subsystem;
    /// Opcode.
    const OPCODE: u8;
    /// Command version.
    const VERSION: u8;
    /// True when the command travels inside the WRB; false for a separate DMA buffer (one SGE).
    const EMBEDDED: bool;
    /// Command buffer length in bytes, header included: the larger of request and response as
    /// be2net sizes it (spec/protocol.md §5.0). At most 236 for embedded commands.
    const LEN: usize;
    /// How long the firmware may take to answer.
    const TIMEOUT: Duration = DEFAULT_TIMEOUT;
    /// The decoded response body.
    type Response: Wire + std::fmt::Debug;

    /// Header `domain` byte: 0 = the issuing function, n + 1 = its virtual function n.
    fn domain(&self) -> u8 {
        0
    }
}

/// The request header for `cmd`.
pub fn request_header<C: Command>(cmd: &C) -> RequestHeader {
    RequestHeader {
        opcode: C::OPCODE,
        subsystem: C::SUBSYSTEM,
        port_number: 0,
        domain: cmd.domain(),
        timeout_secs: 0,
        request_length: (C::LEN - HEADER_LEN) as u32,
        version: C::VERSION,
    }
}

/// Encodes `cmd` (header and body) into a fresh buffer of `C::LEN` bytes.
pub fn encode_request<C: Command>(cmd: &C) -> Result<Vec<u8>, WireError> {
    if C::EMBEDDED && C::LEN > EMBEDDED_MAX {
        return Err(WireError { field: C::NAME, offset: 0, needed: C::LEN, available: EMBEDDED_MAX });
    }
    let mut buf = vec![0u8; C::LEN];
    let mut w = Writer::new(&mut buf);
    request_header(cmd).encode(&mut w)?;
    cmd.encode(&mut w)?;
    Ok(buf)
}

/// Decodes the response body of `C` from a command buffer whose first 16 bytes are the response
/// header. The reader is limited to `16 + response_length` bytes, so a response the firmware
/// declares short cannot be read past.
pub fn decode_response<C: Command>(buf: &[u8]) -> Result<(ResponseHeader, C::Response), WireError> {
    let hdr = ResponseHeader::decode(&mut Reader::new(buf))?;
    let end = HEADER_LEN.saturating_add(hdr.response_length as usize).min(buf.len());
    let resp = C::Response::decode(&mut Reader::at(&buf[..end], HEADER_LEN))?;
    Ok((hdr, resp))
}

/// The decoded request of `C` in a command buffer (the firmware's side).
pub fn decode_request<C: Command>(buf: &[u8]) -> Result<(RequestHeader, C), WireError> {
    let hdr = RequestHeader::decode(&mut Reader::new(buf))?;
    let cmd = C::decode(&mut Reader::at(buf, HEADER_LEN))?;
    Ok((hdr, cmd))
}

/// A command body with no fields (the request of most query commands): encodes nothing beyond
/// the header; the rest of the buffer stays zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Empty;

impl Wire for Empty {
    fn encode(&self, _w: &mut Writer<'_>) -> Result<(), WireError> {
        Ok(())
    }
    fn decode(_r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self)
    }
}
