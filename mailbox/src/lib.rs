//! The OneConnect command interface, generic over any [`oce_pci::PciFunction`].
//!
//! - [`regs`]: the Skyhawk registers as newtypes (SLI_INTF, POST semaphore, ASIC_ID, mailbox
//!   doorbell, UE status, soft reset); [`doorbells`]: the queue doorbells (EQ/CQ, MCC, RQ, TX);
//! - [`entries`]: ring entries besides the WRB and its completion (EQ entry, asynchronous
//!   events; the Ethernet TX header and fragment WRBs, TX completion, RX descriptor and v1 RX
//!   completion);
//! - [`wire`]: the non-panicking little-endian codec every wire type uses;
//! - [`header`], [`wrb`], [`status`]: request/response headers, WRB, SGE, completion, status codes;
//! - [`Command`] and [`commands`]: every command as a type with its layout;
//! - [`BootstrapMailbox`]: the driver that posts commands through the bootstrap mailbox, waits for
//!   POST and resets the chip;
//! - [`trace`]: one `tracing` event per command, for whoever listens;
//! - [`doctor`]: the adapter checks of `ocetool doctor` and the whole report.
//!
//! Facts come from `spec/protocol.md`; each item cites its section.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod adapter;
pub mod clock;
mod codes;
pub mod command;
pub mod commands;
pub mod doctor;
pub mod doorbells;
mod driver;
pub mod entries;
mod error;
pub mod header;
pub mod regs;
pub mod status;
pub mod trace;
pub mod wire;
pub mod wrb;

pub use clock::{Clock, ManualClock, SystemClock};
pub use command::Command;
pub use driver::{BootstrapMailbox, RawCommand, RawResponse, Timeouts};
pub use error::{MailboxError, MailboxStep};
pub use header::Subsystem;
pub use status::{AdditionalStatus, BaseStatus, CompletionStatus};
pub use wire::{Reader, Wire, WireError, Writer};
