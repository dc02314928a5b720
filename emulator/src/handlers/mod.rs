//! The command dispatcher: (subsystem, opcode, version) → handler, with the request decoded and
//! the response encoded by the command types of `oce_mailbox::commands` (the host and the
//! emulator share one codec; nothing is re-encoded by hand here).
//!
//! Unknown opcodes and unsupported versions answer ILLEGAL_REQUEST (2), as the real firmware
//! does (spec/protocol.md §3.5, §8 item 8).

mod device;

use oce_mailbox::command::{Command, decode_request};
use oce_mailbox::commands::{FunctionReset, GetFwVersion};
use oce_mailbox::header::{HEADER_LEN, RequestHeader, Subsystem};
use oce_mailbox::status::{BaseStatus, CompletionStatus};
use oce_mailbox::wire::{Wire, Writer};

use crate::assumptions::{STATUS_BAD_LENGTH, STATUS_NO_SUCH_DOMAIN};
use crate::mailbox::base;
use crate::model::Model;

/// A handler's answer: the encoded response body, or a failure status.
pub(crate) type Reply = Result<Vec<u8>, CompletionStatus>;

/// Largest response body a handler may produce (GET_FUNC_CONFIG's buffer is 23 252 bytes).
const MAX_RESPONSE_BODY: usize = 64 << 10;

/// ILLEGAL_REQUEST: opcode or version not implemented.
pub(crate) fn illegal_request() -> CompletionStatus {
    base(BaseStatus::IllegalRequest.raw())
}

/// Runs the command in `buf` (header already decoded as `hdr`).
pub(crate) fn dispatch(model: &mut Model, hdr: &RequestHeader, buf: &[u8]) -> Reply {
    match (hdr.subsystem, hdr.opcode) {
        (Subsystem::Common, FunctionReset::OPCODE) => run(model, hdr, buf, device::function_reset),
        (Subsystem::Common, GetFwVersion::OPCODE) => run(model, hdr, buf, device::get_fw_version),
        _ => Err(illegal_request()),
    }
}

/// A handler for command `C`.
type Handler<C> = fn(&mut Model, &RequestHeader, C) -> Result<<C as Command>::Response, CompletionStatus>;

/// Checks the version and domain, decodes `C`'s request, runs `handler`, encodes the response.
fn run<C: Command>(model: &mut Model, hdr: &RequestHeader, buf: &[u8], handler: Handler<C>) -> Reply {
    if hdr.version != C::VERSION {
        return Err(illegal_request());
    }
    if hdr.domain != 0 {
        return Err(base(STATUS_NO_SUCH_DOMAIN));
    }
    let (_, request) = decode_request::<C>(buf).map_err(|_| base(STATUS_BAD_LENGTH))?;
    let response = handler(model, hdr, request)?;
    encode_body(&response)
}

/// Encodes a response body as it sits at byte 16 of the command buffer (decoders and encoders
/// use absolute offsets) and returns the body bytes.
fn encode_body<T: Wire>(value: &T) -> Reply {
    let mut buf = vec![0u8; HEADER_LEN + MAX_RESPONSE_BODY];
    let mut w = Writer::at(&mut buf, HEADER_LEN);
    value.encode(&mut w).map_err(|_| base(BaseStatus::Failed.raw()))?;
    let end = w.position();
    buf.truncate(end);
    buf.drain(..HEADER_LEN);
    Ok(buf)
}
