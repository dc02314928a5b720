//! [`Firmware::execute`]: one command, from request to response, in a buffer the transport owns
//! (spec/protocol.md §3.3, §3.5, §4).
//!
//! 1. Decode the request header; a forced-status fault skips the handler.
//! 2. Check that the declared request fits a non-embedded buffer (embedded requests may declare
//!    more than the WRB holds, spec/protocol.md §8 item 7), then dispatch.
//! 3. Write the response header and body over the request; a response longer than the buffer is
//!    INSUFFICIENT_BUFFER with its full length in `actual_response_length`.
//!
//! Command faults ([`crate::faults::CommandEffect`]) bend steps 1 and 3 (forced status,
//! `truncate`, `response-length`) and the completion the transport writes (`no-valid`, `slow`,
//! `slow-flash`), which [`Executed`] carries.

use std::time::Duration;

use oce_mailbox::Command;
use oce_mailbox::commands::WriteFlashrom;
use oce_mailbox::header::{HEADER_LEN, RequestHeader, ResponseHeader, Subsystem};
use oce_mailbox::status::{AdditionalStatus, BaseStatus, CompletionStatus};
use oce_mailbox::wire::{Reader, Wire, Writer};

use super::Firmware;
use crate::assumptions::STATUS_BAD_LENGTH;
use crate::events::Event;
use crate::faults::CommandEffect;

/// What the transport tells the firmware about the command it hands over: register state the
/// register-free firmware reports but does not own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// The POST semaphore (config 0x94) as it reads now, without moving the walk
    /// (GET_CNTL_ATTRIBUTES `firmware_post_status`).
    pub semaphore: u32,
}

/// What a command leaves the device's datapath to do before its completion is written. A
/// transport without rings (none are created through it) has nothing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Owed {
    /// An RX ring was destroyed: the CQ it completed to is owed the flush completion (no
    /// fragment), which be2net's `be_rx_cq_clean` waits for (spec/be2net-driver.md §4.2).
    pub rx_flush: Option<u16>,
    /// The function's logical link may have changed: the MCCs subscribed to link-state events
    /// hear of a change.
    pub link_event: bool,
    /// A memory region's PBL list is complete: the device reads its page-buffer entries from
    /// host memory (the firmware never touches host memory itself).
    pub mr_pbes: Option<u32>,
}

/// What executing one command did, for the transport to complete it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Executed {
    /// The status for the completion (also in the response header when one was written).
    pub status: CompletionStatus,
    /// How many bytes at the start of the buffer now hold the response (header and body): the
    /// transport copies back exactly these. 0 when no header could be decoded or written.
    pub written: usize,
    /// The request's (subsystem, opcode), when the buffer held a request header.
    pub command: Option<(u8, u8)>,
    /// Whether the completion carries VALID (a `no-valid` fault clears it).
    pub valid: bool,
    /// How long the completion is held back (`slow`, `slow-flash` faults).
    pub delay: Duration,
    /// What the command leaves the datapath to do.
    pub owed: Owed,
}

impl Executed {
    /// A command that failed before its request header could be read.
    fn refused(status: CompletionStatus) -> Self {
        Self { status, written: 0, command: None, valid: true, delay: Duration::ZERO, owed: Owed::default() }
    }
}

impl Firmware {
    /// Runs the command in `cmd` (request header and body; the buffer is the whole command area,
    /// an embedded WRB's payload or a non-embedded command's SGE buffer) and writes the response
    /// header and body over it. Never panics: a malformed request gets a failure status.
    ///
    /// When the adapter loses power running the command (`power-loss-at`), nothing is written
    /// and the adapter reads as gone afterwards: the transport writes no completion.
    pub fn execute(&mut self, cx: &Context, cmd: &mut [u8], embedded: bool) -> Executed {
        let Ok(hdr) = RequestHeader::decode(&mut Reader::new(cmd)) else {
            return Executed::refused(STATUS_BAD_LENGTH.into());
        };
        let (subsystem, opcode) = (hdr.subsystem.raw(), hdr.opcode);
        let effects: Vec<CommandEffect> = self.card().state.faults.command(subsystem, opcode).collect();
        let forced = effects.iter().find_map(|e| match *e {
            CommandEffect::Status { base, additional } => {
                Some(CompletionStatus::new(BaseStatus::from_raw(base.into()), AdditionalStatus::from_raw(additional)))
            }
            _ => None,
        });
        let capacity = cmd.len() - HEADER_LEN;
        let fits = embedded || usize::try_from(hdr.request_length).is_ok_and(|n| n <= capacity);
        let reply = match forced {
            Some(status) => Err(status),
            None if fits => self.dispatch(cx, &hdr, cmd),
            None => Err(STATUS_BAD_LENGTH.into()),
        };
        let mut executed =
            Executed { command: Some((subsystem, opcode)), ..Executed::refused(BaseStatus::Failed.into()) };
        if self.gone() {
            return executed;
        }
        let (status, mut body, actual) = match reply {
            Ok((body, owed)) if body.len() <= capacity => {
                executed.owed = owed;
                (CompletionStatus::SUCCESS, body.len(), body)
            }
            Ok((body, owed)) => {
                executed.owed = owed;
                (BaseStatus::InsufficientBuffer.into(), 0, body)
            }
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
                CommandEffect::NoValid => executed.valid = false,
                CommandEffect::Slow { delay } => executed.delay = executed.delay.max(delay),
                CommandEffect::Status { .. } => {}
            }
        }
        if (subsystem, opcode) == (Subsystem::Common.raw(), WriteFlashrom::OPCODE) {
            executed.delay = executed.delay.max(self.card().state.faults.slow_flash.unwrap_or_default());
        }
        let header = ResponseHeader {
            opcode,
            subsystem: hdr.subsystem,
            base_status: status.base,
            additional_status: status.additional,
            response_length,
            actual_response_length: actual.len() as u32,
        };
        if header.encode(&mut Writer::new(cmd)).is_ok() {
            cmd[HEADER_LEN..HEADER_LEN + body].copy_from_slice(&actual[..body]);
            executed.written = HEADER_LEN + body;
        }
        executed.status = status;
        self.log(Event::Command { subsystem, opcode, version: hdr.version, status });
        executed
    }
}
