//! The mailbox engine: what the emulated firmware does when a bootstrap-mailbox command's busy
//! period ends (spec/protocol.md §3.2–§3.4, §3.7, §8 item 4).
//!
//! 1. Fetch the 256-byte WRB at the mailbox address through the IOVA table (the completion slot
//!    at +256 must be mapped too); a fault logs [`Event::DmaFault`] and writes nothing.
//! 2. Recognise the fw_init / fw_clean signatures **before** reading dword 0 as flags.
//! 3. Otherwise decode the WRB: embedded → the command is the 236-byte payload area;
//!    non-embedded → exactly one SGE, whose buffer (at most [`MAX_NON_EMBEDDED_LEN`] bytes) the
//!    firmware works on in place (the IOVA table lends it; nothing is copied).
//! 4. Decode the request header, dispatch, and write the response header and body over the
//!    request in the same buffer.
//! 5. Write the completion at mailbox + 256: tags copied, status = base | additional << 16,
//!    flags VALID | COMPLETED.
//!
//! Command faults ([`crate::faults::CommandEffect`]) bend steps 4 and 5: a forced status skips
//! the handler, a response length or truncation changes the response header, no-valid drops
//! VALID, slow holds the completion (and RDY) back.

use std::time::Duration;

use oce_mailbox::Command;
use oce_mailbox::commands::WriteFlashrom;
use oce_mailbox::header::{HEADER_LEN, RequestHeader, ResponseHeader, Subsystem};
use oce_mailbox::status::{AdditionalStatus, BaseStatus, CompletionStatus};
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::{
    COMPLETION_LEN, Completion, FW_CLEAN_SIGNATURE, FW_INIT_SIGNATURE, MAILBOX_COMPLETION_OFFSET, MAILBOX_LEN, WRB_LEN,
    WRB_PAYLOAD_OFFSET, Wrb, WrbPayload,
};

use crate::assumptions::{
    MAX_NON_EMBEDDED_LEN, STATUS_BAD_LENGTH, STATUS_BAD_SGE_COUNT, STATUS_SGE_DMA_FAULT, STATUS_SGE_TOO_LONG,
};
use crate::device::model::Model;
use crate::events::{Event, SignatureKind};
use crate::faults::CommandEffect;
use crate::firmware::handlers;

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
    let (status, command) = if raw[..FW_INIT_SIGNATURE.len()] == FW_INIT_SIGNATURE {
        model.log(Event::Signature { kind: SignatureKind::FwInit });
        (CompletionStatus::SUCCESS, None)
    } else if raw[..FW_CLEAN_SIGNATURE.len()] == FW_CLEAN_SIGNATURE {
        model.log(Event::Signature { kind: SignatureKind::FwClean });
        (CompletionStatus::SUCCESS, None)
    } else {
        run_wrb(model, address, &raw)
    };
    if model.gone() {
        // The adapter lost power running the command: no completion is ever written.
        return;
    }
    let mut flags = Completion::VALID | Completion::COMPLETED;
    let mut delay = Duration::ZERO;
    if let Some((subsystem, opcode)) = command {
        for effect in model.state.faults.command(subsystem, opcode) {
            match effect {
                CommandEffect::NoValid => flags &= !Completion::VALID,
                CommandEffect::Slow { delay: d } => delay = delay.max(d),
                _ => {}
            }
        }
        if (subsystem, opcode) == (Subsystem::Common.raw(), WriteFlashrom::OPCODE) {
            delay = delay.max(model.state.faults.slow_flash.unwrap_or_default());
        }
    }
    let completion = Completion { status, tags, flags };
    let mut out = [0u8; COMPLETION_LEN];
    if completion.encode(&mut Writer::new(&mut out)).is_ok() {
        model.complete_after(address + MAILBOX_COMPLETION_OFFSET as u64, out, delay);
    }
}

/// The (subsystem, opcode) a completion belongs to, when the WRB held a command header.
type CommandKey = Option<(u8, u8)>;

/// Runs a (non-signature) WRB and returns the completion status.
fn run_wrb(model: &mut Model, address: u64, raw: &[u8; WRB_LEN]) -> (CompletionStatus, CommandKey) {
    let Ok(wrb) = Wrb::decode(&mut Reader::new(raw)) else {
        // Only an SGE count above the 19 that fit can fail to decode.
        return (base(STATUS_BAD_SGE_COUNT), None);
    };
    match wrb.payload {
        WrbPayload::Embedded(mut area) => {
            let (status, written, key) = run_command(model, &mut area, true);
            let at = address + WRB_PAYLOAD_OFFSET as u64;
            if !model.iova.write(at, &area[..written]) {
                model.log(Event::DmaFault { iova: at, len: written });
            }
            (status, key)
        }
        WrbPayload::NonEmbedded(sges) => {
            let [sge] = sges.as_slice() else { return (base(STATUS_BAD_SGE_COUNT), None) };
            let len = sge.len as usize;
            if len > MAX_NON_EMBEDDED_LEN {
                return (base(STATUS_SGE_TOO_LONG), None);
            }
            if len < HEADER_LEN {
                return (base(STATUS_BAD_LENGTH), None);
            }
            let Some(mut lent) = model.iova.take(sge.address, len) else {
                model.log(Event::DmaFault { iova: sge.address, len });
                return (base(STATUS_SGE_DMA_FAULT), None);
            };
            let at = lent.off;
            let (status, _, key) = run_command(model, &mut lent.bytes[at..at + len], false);
            model.iova.restore(lent);
            (status, key)
        }
    }
}

/// Runs the command in `buf` (header + body; at least 16 bytes) and writes the response header
/// and body over it. Returns the status, how many bytes of `buf` were written, and the command.
fn run_command(model: &mut Model, buf: &mut [u8], embedded: bool) -> (CompletionStatus, usize, CommandKey) {
    let Ok(hdr) = RequestHeader::decode(&mut Reader::new(buf)) else {
        return (base(STATUS_BAD_LENGTH), 0, None);
    };
    let key = Some((hdr.subsystem.raw(), hdr.opcode));
    let effects: Vec<CommandEffect> = model.state.faults.command(hdr.subsystem.raw(), hdr.opcode).collect();
    let forced = effects.iter().find_map(|e| match *e {
        CommandEffect::Status { base, additional } => {
            Some(CompletionStatus::new(BaseStatus::from_raw(base.into()), AdditionalStatus::from_raw(additional)))
        }
        _ => None,
    });
    let capacity = buf.len() - HEADER_LEN;
    let fits = embedded || usize::try_from(hdr.request_length).is_ok_and(|n| n <= capacity);
    let reply = match forced {
        Some(status) => Err(status),
        None if fits => handlers::dispatch(model, &hdr, buf),
        None => Err(base(STATUS_BAD_LENGTH)),
    };
    if model.gone() {
        return (base(BaseStatus::Failed.raw()), 0, key);
    }
    let (status, mut body, actual) = match reply {
        Ok(body) if body.len() <= capacity => (CompletionStatus::SUCCESS, body.len(), body),
        Ok(body) => (base(BaseStatus::InsufficientBuffer.raw()), 0, body),
        Err(status) => (status, 0, Vec::new()),
    };
    let mut response_length = body as u32;
    for effect in &effects {
        match *effect {
            CommandEffect::Truncate { len } => {
                body = body.min(len as usize);
                response_length = body as u32;
            }
            CommandEffect::ResponseLength { len } => response_length = len,
            _ => {}
        }
    }
    let header = ResponseHeader {
        opcode: hdr.opcode,
        subsystem: hdr.subsystem,
        base_status: status.base,
        additional_status: status.additional,
        response_length,
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
    (status, written, key)
}
