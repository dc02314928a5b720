//! The error type of the command interface.

use std::time::Duration;

use oce_pci::PciError;

use crate::header::Subsystem;
use crate::regs::{PostStage, UeStatus};
use crate::status::CompletionStatus;
use crate::wire::WireError;

/// Which step of the mailbox handshake (spec/protocol.md §3.2) an error happened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailboxStep {
    /// Waiting for RDY before writing the high address half.
    BeforeHigh,
    /// Waiting for RDY between the high and the low address half.
    BeforeLow,
    /// Waiting for RDY after the low half: the firmware is executing the command.
    Executing,
}

impl std::fmt::Display for MailboxStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::BeforeHigh => "before the address high write",
            Self::BeforeLow => "between the address high and low writes",
            Self::Executing => "while the firmware executed the command",
        })
    }
}

/// What can go wrong talking to the adapter's firmware.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MailboxError {
    /// The PCI layer failed (config access, BAR mapping, DMA).
    #[error("PCI access failed")]
    Pci(#[from] PciError),
    /// A register read returned all ones: the device has dropped off the bus.
    #[error("the adapter stopped answering (register reads return 0xffffffff) {step}")]
    DeviceGone {
        /// Where it was noticed.
        step: MailboxStep,
    },
    /// The configuration space reads all ones: the device has dropped off the bus.
    #[error("the adapter stopped answering (configuration space reads return 0xffffffff)")]
    ConfigGone,
    /// The mailbox doorbell never showed RDY.
    #[error("the firmware did not become ready {step} within {waited:?}")]
    NotReady {
        /// The handshake step.
        step: MailboxStep,
        /// How long ocetool waited.
        waited: Duration,
    },
    /// The completion entry was not marked VALID after RDY.
    #[error("{command}: invalid mailbox completion (flags {flags:#010x}, VALID not set)")]
    InvalidCompletion {
        /// The command.
        command: &'static str,
        /// The completion's flags dword.
        flags: u32,
    },
    /// The completion carries other tags than the WRB: it belongs to another command.
    #[error("{command}: completion tags {found:#x?} do not match the request's {expected:#x?}")]
    TagMismatch {
        /// The command.
        command: &'static str,
        /// Tags sent.
        expected: [u32; 2],
        /// Tags received.
        found: [u32; 2],
    },
    /// The firmware answered with a failure status.
    #[error("{command} (subsystem {}, opcode {opcode}) failed: {status}", subsystem.raw())]
    CommandFailed {
        /// The command's name.
        command: &'static str,
        /// Its subsystem.
        subsystem: Subsystem,
        /// Its opcode.
        opcode: u8,
        /// The completion status.
        status: CompletionStatus,
    },
    /// The firmware refused a fw_init / fw_clean signature.
    #[error("the firmware refused the {which} signature: {status}")]
    SignatureFailed {
        /// `fw_init` or `fw_clean`.
        which: &'static str,
        /// The completion status.
        status: CompletionStatus,
    },
    /// The response header does not echo the request's opcode and subsystem.
    #[error("{command}: response header names opcode {opcode}, subsystem {subsystem}, not the command sent")]
    ResponseMismatch {
        /// The command.
        command: &'static str,
        /// Opcode found.
        opcode: u8,
        /// Subsystem found.
        subsystem: u8,
    },
    /// The response header claims more bytes than the command buffer holds.
    #[error("{command}: the response claims {claimed} bytes, more than the {capacity}-byte buffer holds")]
    ResponseTooLong {
        /// The command.
        command: &'static str,
        /// `response_length` as sent.
        claimed: usize,
        /// Body bytes the buffer has.
        capacity: usize,
    },
    /// The response body is malformed or shorter than its fields.
    #[error("{command}: malformed response")]
    Malformed {
        /// The command.
        command: &'static str,
        /// What did not fit.
        #[source]
        source: WireError,
    },
    /// A command could not be encoded (too large for its transport).
    #[error("{command}: cannot encode the request")]
    Encode {
        /// The command.
        command: &'static str,
        /// What did not fit.
        #[source]
        source: WireError,
    },
    /// SLI_INTF does not carry the VALID pattern: not a OneConnect function, or not initialised.
    #[error("SLI_INTF reads {raw:#010x}: not a valid SLI interface (bits 31:29 must be 0b110)")]
    BadSliIntf {
        /// The register value.
        raw: u32,
    },
    /// POST did not reach "firmware ready" in time.
    #[error("the adapter's firmware did not finish POST within {waited:?}: stuck at stage {stage}")]
    PostTimeout {
        /// The last stage seen.
        stage: PostStage,
        /// How long ocetool waited.
        waited: Duration,
    },
    /// The caller asked to stop while waiting for POST.
    #[error("stopped while waiting for the adapter's POST (at stage {stage})")]
    Stopped {
        /// The last stage seen.
        stage: PostStage,
    },
    /// POST reported an error.
    #[error("the adapter's POST failed at stage {stage} (semaphore {raw:#010x}, error bit set)")]
    PostError {
        /// The stage.
        stage: PostStage,
        /// The raw semaphore value.
        raw: u32,
    },
    /// The firmware accepted a change, but reading the state back shows it did not happen.
    #[error("{command} was accepted, but the state read back is {found}, not {expected}")]
    NotApplied {
        /// The command that was accepted.
        command: &'static str,
        /// The state asked for.
        expected: &'static str,
        /// The state read back.
        found: &'static str,
    },
    /// An unmasked unrecoverable-error bit is set.
    #[error("the adapter reports an unrecoverable error (UE status low {:#010x}, high {:#010x})", ue.low & !ue.low_mask, ue.high & !ue.high_mask)]
    UnrecoverableError {
        /// The UE registers.
        ue: UeStatus,
    },
}

impl MailboxError {
    /// The completion status, when the firmware answered with a failure.
    pub fn status(&self) -> Option<CompletionStatus> {
        match self {
            Self::CommandFailed { status, .. } => Some(*status),
            _ => None,
        }
    }
}
