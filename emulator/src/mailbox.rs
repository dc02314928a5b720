//! The mailbox engine: what the emulated firmware does when a bootstrap-mailbox command's busy
//! period ends (spec/protocol.md §3.2–§3.4, §3.7, §8 item 4).
//!
//! 1. Fetch the 256-byte WRB at the mailbox address through the IOVA table (the completion slot
//!    at +256 must be mapped too); a fault logs [`Event::DmaFault`] and writes nothing.
//! 2. Recognise the fw_init / fw_clean signatures **before** reading dword 0 as flags.
//! 3. Otherwise decode the WRB: embedded → the command is the 236-byte payload area;
//!    non-embedded → exactly one SGE, whose buffer (at most
//!    [`MAX_NON_EMBEDDED_LEN`] bytes) is read through the IOVA table.
//! 4. Decode the request header, dispatch, and write the response header and body over the
//!    request in the same buffer.
//! 5. Write the completion at mailbox + 256: tags copied, status = base | additional << 16,
//!    flags VALID | COMPLETED.

use oce_mailbox::header::{HEADER_LEN, RequestHeader, ResponseHeader};
use oce_mailbox::status::{AdditionalStatus, BaseStatus, CompletionStatus};
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::{
    COMPLETION_LEN, Completion, FW_CLEAN_SIGNATURE, FW_INIT_SIGNATURE, MAILBOX_COMPLETION_OFFSET, MAILBOX_LEN, WRB_LEN,
    WRB_PAYLOAD_OFFSET, Wrb, WrbPayload,
};

use crate::assumptions::{
    MAX_NON_EMBEDDED_LEN, STATUS_BAD_LENGTH, STATUS_BAD_SGE_COUNT, STATUS_SGE_DMA_FAULT, STATUS_SGE_TOO_LONG,
};
use crate::events::{Event, SignatureKind};
use crate::handlers;
use crate::model::Model;

/// A completion status with no additional status.
pub(crate) fn base(code: u16) -> CompletionStatus {
    CompletionStatus::new(BaseStatus::from_raw(code), AdditionalStatus::None)
}

/// Executes the mailbox at `address`.
pub(crate) fn execute(model: &mut Model, address: u64) {
    let mut raw = [0u8; WRB_LEN];
    if !model.iova.contains(address, MAILBOX_LEN) || !model.iova.read(address, &mut raw) {
        model.log(Event::DmaFault { iova: address, len: MAILBOX_LEN });
        return;
    }
    let mut r = Reader::at(&raw, 8);
    let tags = [r.u32("tag0").unwrap_or(0), r.u32("tag1").unwrap_or(0)];
    let status = if raw[..FW_INIT_SIGNATURE.len()] == FW_INIT_SIGNATURE {
        model.log(Event::Signature { kind: SignatureKind::FwInit });
        CompletionStatus::SUCCESS
    } else if raw[..FW_CLEAN_SIGNATURE.len()] == FW_CLEAN_SIGNATURE {
        model.log(Event::Signature { kind: SignatureKind::FwClean });
        CompletionStatus::SUCCESS
    } else {
        run_wrb(model, address, &raw)
    };
    let completion = Completion { status, tags, flags: Completion::VALID | Completion::COMPLETED };
    let mut out = [0u8; COMPLETION_LEN];
    if completion.encode(&mut Writer::new(&mut out)).is_ok() {
        let at = address + MAILBOX_COMPLETION_OFFSET as u64;
        if !model.iova.write(at, &out) {
            model.log(Event::DmaFault { iova: at, len: COMPLETION_LEN });
        }
    }
}

/// Runs a (non-signature) WRB and returns the completion status.
fn run_wrb(model: &mut Model, address: u64, raw: &[u8; WRB_LEN]) -> CompletionStatus {
    let Ok(wrb) = Wrb::decode(&mut Reader::new(raw)) else {
        // Only an SGE count above the 19 that fit can fail to decode.
        return base(STATUS_BAD_SGE_COUNT);
    };
    match wrb.payload {
        WrbPayload::Embedded(mut area) => {
            let (status, written) = run_command(model, &mut area, true);
            let at = address + WRB_PAYLOAD_OFFSET as u64;
            if !model.iova.write(at, &area[..written]) {
                model.log(Event::DmaFault { iova: at, len: written });
            }
            status
        }
        WrbPayload::NonEmbedded(sges) => {
            let [sge] = sges.as_slice() else { return base(STATUS_BAD_SGE_COUNT) };
            let len = sge.len as usize;
            if len > MAX_NON_EMBEDDED_LEN {
                return base(STATUS_SGE_TOO_LONG);
            }
            if len < HEADER_LEN {
                return base(STATUS_BAD_LENGTH);
            }
            let mut buf = vec![0u8; len];
            if !model.iova.read(sge.address, &mut buf) {
                model.log(Event::DmaFault { iova: sge.address, len });
                return base(STATUS_SGE_DMA_FAULT);
            }
            let (status, written) = run_command(model, &mut buf, false);
            if !model.iova.write(sge.address, &buf[..written]) {
                model.log(Event::DmaFault { iova: sge.address, len: written });
            }
            status
        }
    }
}

/// Runs the command in `buf` (header + body; at least 16 bytes) and writes the response header
/// and body over it. Returns the status and how many bytes of `buf` were written.
fn run_command(model: &mut Model, buf: &mut [u8], embedded: bool) -> (CompletionStatus, usize) {
    let Ok(hdr) = RequestHeader::decode(&mut Reader::new(buf)) else {
        return (base(STATUS_BAD_LENGTH), 0);
    };
    let capacity = buf.len() - HEADER_LEN;
    let fits = embedded || usize::try_from(hdr.request_length).is_ok_and(|n| n <= capacity);
    let reply = if fits { handlers::dispatch(model, &hdr, buf) } else { Err(base(STATUS_BAD_LENGTH)) };
    let (status, body, actual) = match reply {
        Ok(body) if body.len() <= capacity => (CompletionStatus::SUCCESS, body.len(), body),
        Ok(body) => (base(BaseStatus::InsufficientBuffer.raw()), 0, body),
        Err(status) => (status, 0, Vec::new()),
    };
    let header = ResponseHeader {
        opcode: hdr.opcode,
        subsystem: hdr.subsystem,
        base_status: status.base,
        additional_status: status.additional,
        response_length: body as u32,
        actual_response_length: actual.len() as u32,
    };
    let written = match header.encode(&mut Writer::new(buf)) {
        Ok(()) => {
            buf[HEADER_LEN..HEADER_LEN + body].copy_from_slice(&actual[..body]);
            HEADER_LEN + body
        }
        Err(_) => 0,
    };
    model.log(Event::Command { subsystem: hdr.subsystem.raw(), opcode: hdr.opcode, version: hdr.version, status });
    (status, written)
}
