//! The event log: host protocol violations and notable device actions, recorded for tests.
//!
//! A real adapter silently ignores (or hangs on) a host that breaks the mailbox handshake; the
//! emulator ignores the same writes but also records what happened, so a test can assert that a
//! host bug was seen rather than only that "something timed out".

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use oce_mailbox::CompletionStatus;

use crate::faults::FaultSpec;

/// Something the emulated adapter observed or did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A mailbox LO write arrived with no HI half latched (spec/protocol.md §3.2 step 2 skipped).
    /// The write was ignored.
    LoBeforeHi {
        /// The value written.
        value: u32,
    },
    /// The LO write named an address 1–15 bytes below a mapped DMA buffer: the host posted a
    /// mailbox that is not 16-byte aligned, and the doorbell's encoding dropped address bits 3:0
    /// (spec/protocol.md §3.1). The write was ignored.
    UnalignedMailbox {
        /// The start of the host's buffer (where the host probably meant the mailbox to be).
        address: u64,
    },
    /// A doorbell write while RDY read 0 (between HI and LO before RDY returned, or while a
    /// command executed). The write was ignored.
    WriteWhileBusy {
        /// The value written.
        value: u32,
    },
    /// A doorbell write before POST completed (or after it failed). The write was ignored.
    WriteBeforePost {
        /// The value written.
        value: u32,
    },
    /// The firmware tried to reach host memory that is not mapped in the IOVA table (a wrong
    /// address encoding, a freed buffer, an SGE pointing nowhere).
    DmaFault {
        /// The bus address.
        iova: u64,
        /// The length of the access.
        len: usize,
    },
    /// A fw_init or fw_clean signature WRB was executed (spec/protocol.md §3.7).
    Signature {
        /// Which one.
        kind: SignatureKind,
    },
    /// A command WRB was executed and completed with `status`.
    Command {
        /// Subsystem byte of the request header.
        subsystem: u8,
        /// Opcode.
        opcode: u8,
        /// Command version.
        version: u8,
        /// The status written into the completion.
        status: CompletionStatus,
    },
    /// A chip soft reset was requested (pcicfg 0x5C bit 7); POST restarts.
    ChipReset,
    /// The function was reset (vfio-user DEVICE_RESET, or Initiate FLR in the PCI Express
    /// capability): its registers went back to power-on values; the firmware kept running.
    FunctionReset,
    /// The adapter was power-cycled; POST restarts.
    PowerCycle,
    /// The boot decided at POST: which firmware section runs, or that POST failed.
    Boot {
        /// The outcome.
        outcome: BootOutcome,
    },
    /// A fault fired: `rdy-hang` hung the mailbox, `flash-fail-at` failed a chunk,
    /// `power-loss-at` cut the power.
    FaultTriggered {
        /// The fault, as it was set.
        fault: FaultSpec,
    },
    /// A completion a `slow` or `slow-flash` fault held back was written, `held` after its
    /// command ran (on the device's clock): the host saw the command take that long.
    CompletionDelayed {
        /// Subsystem byte of the command's request header.
        subsystem: u8,
        /// Its opcode.
        opcode: u8,
        /// From the command's execution to its completion.
        held: Duration,
    },
    /// WRITE_FLASHROM committed a section to flash (flash.bin written; synced to disk only under
    /// [`crate::FlashDurability::Synced`]).
    FlashCommitted {
        /// Flash address of the section.
        offset: u64,
        /// Its length in bytes.
        len: u64,
    },
    /// An MSI-X vector the device raised was not sent (nor marked pending).
    MsixBlocked {
        /// The vector.
        vector: u16,
        /// Why not.
        reason: MsixBlock,
    },
    /// An event queue fired while host interrupts were off (SET_INTERRUPT_ENABLE, INT_CTRL
    /// HOSTINTR): no interrupt was raised.
    InterruptSuppressed {
        /// The EQ.
        eq: u16,
    },
    /// The function's logical link went up or down; subscribed MCC queues were told.
    LinkChanged {
        /// The new state.
        up: bool,
    },
    /// A RoCE QP's SQ doorbell announced work and no RoCE transport is plugged in: the WQEs
    /// stay posted, uncompleted.
    RoceNotModelled {
        /// The QP.
        qp: u16,
        /// Its SQ producer index after the doorbell.
        producer: u32,
    },
    /// Saving the state directory failed; the running model carries on in memory.
    StateSaveFailed {
        /// What went wrong.
        message: String,
    },
}

/// One line per event, as the emulated firmware's diagnostic (FAT) log shows it
/// (`crate::firmware::fat`): stable words, numbers in the units the spec uses.
impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LoBeforeHi { value } => write!(f, "mailbox LO write {value:#010x} without a HI half: ignored"),
            Self::UnalignedMailbox { address } => {
                write!(f, "mailbox below buffer {address:#x} is not 16-byte aligned: ignored")
            }
            Self::WriteWhileBusy { value } => write!(f, "doorbell write {value:#010x} while not ready: ignored"),
            Self::WriteBeforePost { value } => write!(f, "doorbell write {value:#010x} before POST: ignored"),
            Self::DmaFault { iova, len } => write!(f, "DMA fault: {len} bytes at IOVA {iova:#x}"),
            Self::Signature { kind: SignatureKind::FwInit } => f.write_str("fw_init signature"),
            Self::Signature { kind: SignatureKind::FwClean } => f.write_str("fw_clean signature"),
            Self::Command { subsystem, opcode, version, status } => {
                write!(f, "command {subsystem}-{opcode} v{version}: {status}")
            }
            Self::ChipReset => f.write_str("chip soft reset"),
            Self::FunctionReset => f.write_str("function reset"),
            Self::PowerCycle => f.write_str("power cycle"),
            Self::Boot { outcome } => write!(f, "POST boot: {}", outcome.name()),
            Self::FaultTriggered { fault } => write!(f, "fault fired: {fault}"),
            Self::CompletionDelayed { subsystem, opcode, held } => {
                write!(f, "command {subsystem}-{opcode} completed {} ms after it ran", held.as_millis())
            }
            Self::FlashCommitted { offset, len } => write!(f, "flash committed: {len} bytes at {offset:#x}"),
            Self::MsixBlocked { vector, reason } => write!(f, "MSI-X vector {vector} not sent: {reason:?}"),
            Self::InterruptSuppressed { eq } => write!(f, "EQ {eq} interrupt not raised: host interrupts are off"),
            Self::LinkChanged { up } => write!(f, "logical link {}", if *up { "up" } else { "down" }),
            Self::RoceNotModelled { qp, producer } => {
                write!(
                    f,
                    "QP {qp} SQ doorbell (producer {producer}): the RoCE transport is not modelled, WQEs not executed"
                )
            }
            Self::StateSaveFailed { message } => write!(f, "state save failed: {message}"),
        }
    }
}

/// Why an MSI-X vector was not sent (PCI Local Bus 3.0 §6.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsixBlock {
    /// The device has no MSI-X capability (the polled shape).
    NotImplemented,
    /// The vector is past the end of the table.
    NoSuchVector,
    /// MSI-X Enable is clear.
    Disabled,
    /// Bus Master Enable is clear: the function may not send the message's memory write.
    BusMasterOff,
}

/// The kinds of queue a doorbell rings (spec/protocol.md §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    /// Event queue.
    Eq,
    /// Completion queue.
    Cq,
    /// MCC queue.
    Mcc,
    /// Ethernet TX ring.
    Tx,
    /// Ethernet RX ring.
    Rx,
    /// RoCE queue pair (an SQ or RQ doorbell).
    Qp,
}

/// A queue the device was asked to touch that the function does not have: a queue doorbell
/// (EQ/CQ, MCC, TX, RQ) naming no queue, or a completion due on a CQ destroyed under the queue
/// that completes to it. The device's doorbell logic drops it before the firmware runs, so it is
/// recorded apart from the firmware's [`Event`] log (and so from its FAT log):
/// [`crate::device::Device::queue_misses`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueMiss {
    /// The kind of queue named.
    pub kind: QueueKind,
    /// The id named.
    pub id: u16,
}

impl fmt::Display for QueueMiss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} queue {} does not exist: ignored", self.kind, self.id)
    }
}

/// The two signature WRBs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureKind {
    /// `FF 12 34 FF FF 56 78 FF`.
    FwInit,
    /// `FF AA BB FF FF CC DD FF`.
    FwClean,
}

/// What POST booted (design.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BootOutcome {
    /// The active firmware section (type 0xA0) passed its CRC check and runs.
    Primary,
    /// The active section was bad; the backup (0xB0) runs and semaphore bit 30 is set.
    Backup,
    /// Neither section is bootable: POST stops with the error bit (31) set.
    Failed,
}

impl BootOutcome {
    /// The snake_case name, as in the state file.
    pub fn name(self) -> &'static str {
        match self {
            Self::Primary => "primary",
            Self::Backup => "backup",
            Self::Failed => "failed",
        }
    }
}

/// Most entries a log keeps; older ones are dropped first so a looping host cannot exhaust
/// memory.
const EVENT_LOG_CAPACITY: usize = 4096;

/// A bounded log of [`Event`]s (or of [`QueueMiss`]es).
#[derive(Debug)]
pub(crate) struct EventLog<T = Event> {
    events: VecDeque<T>,
    dropped: u64,
}

impl<T> Default for EventLog<T> {
    fn default() -> Self {
        Self { events: VecDeque::new(), dropped: 0 }
    }
}

impl<T: Clone> EventLog<T> {
    pub(crate) fn push(&mut self, event: T) {
        if self.events.len() == EVENT_LOG_CAPACITY {
            self.events.pop_front();
            self.dropped += 1;
        }
        self.events.push_back(event);
    }

    pub(crate) fn snapshot(&self) -> Vec<T> {
        self.events.iter().cloned().collect()
    }

    pub(crate) fn take(&mut self) -> Vec<T> {
        self.events.drain(..).collect()
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_is_bounded_and_keeps_the_newest() {
        let mut log = EventLog::<Event>::default();
        for value in 0..(EVENT_LOG_CAPACITY as u32 + 10) {
            log.push(Event::LoBeforeHi { value });
        }
        let events = log.snapshot();
        assert_eq!(events.len(), EVENT_LOG_CAPACITY);
        assert_eq!(events[0], Event::LoBeforeHi { value: 10 });
        assert_eq!(log.dropped(), 10);
        assert_eq!(log.take().len(), EVENT_LOG_CAPACITY);
        assert!(log.snapshot().is_empty());
    }

    #[test]
    fn events_print_as_one_line() {
        let status = CompletionStatus::SUCCESS;
        let command = Event::Command { subsystem: 1, opcode: 35, version: 0, status };
        assert_eq!(
            command.to_string(),
            "command 1-35 v0: base status 0 (MCC_STATUS_SUCCESS), additional status 0 (none)"
        );
        assert_eq!(Event::Boot { outcome: BootOutcome::Backup }.to_string(), "POST boot: backup");
        assert_eq!(Event::DmaFault { iova: 0x1000, len: 8 }.to_string(), "DMA fault: 8 bytes at IOVA 0x1000");
        assert_eq!(
            Event::FaultTriggered { fault: FaultSpec::RdyHang }.to_string(),
            "fault fired: rdy-hang",
            "faults print as their spec"
        );
    }
}
