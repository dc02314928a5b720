//! The bootstrap mailbox (DB BAR + 0x160) as the host sees it: the doorbell register, with what
//! POST, the RDY faults and delayed completions do to it, and the engine that runs a command when
//! the busy period ends (spec/protocol.md §3.2–§3.4, §3.7, §8 item 4).
//!
//! 1. Fetch the 256-byte WRB at the mailbox address through the [`DmaSpace`] (the completion
//!    slot at +256 must be reachable too); a fault logs [`Event::DmaFault`] and writes nothing.
//! 2. Recognise the fw_init / fw_clean signatures **before** reading dword 0 as flags.
//! 3. Otherwise decode the WRB: embedded → the command is the 236-byte payload area;
//!    non-embedded → exactly one SGE, whose buffer (at most [`MAX_NON_EMBEDDED_LEN`] bytes) is
//!    copied in; a buffer the device cannot reach fails the command with [`STATUS_DMA_FAULT`].
//! 4. [`Firmware::execute`](crate::firmware::Firmware::execute) runs it; the bytes of the
//!    response are copied back over the request (only those: a truncated response leaves the
//!    rest of the buffer as it was).
//! 5. Write the completion at mailbox + 256: tags copied, status = base | additional << 16,
//!    flags VALID | COMPLETED — at once, or when a `slow` fault's delay has passed.

use std::time::{Duration, Instant};

use oce_mailbox::regs::MailboxDoorbell;
use oce_mailbox::status::CompletionStatus;
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::{
    COMPLETION_LEN, Completion, FW_CLEAN_SIGNATURE, FW_INIT_SIGNATURE, MAILBOX_COMPLETION_OFFSET, MAILBOX_LEN, WRB_LEN,
    WRB_PAYLOAD_OFFSET, Wrb, WrbPayload,
};

use super::doorbell::{DoorbellRead, DoorbellWrite};
use super::timing::Timing;
use super::{Device, DmaFault, DmaSpace, Interrupt};
use crate::assumptions::{
    MAX_NON_EMBEDDED_LEN, STATUS_BAD_LENGTH, STATUS_BAD_SGE_COUNT, STATUS_DMA_FAULT, STATUS_SGE_TOO_LONG,
};
use crate::events::{Event, SignatureKind};
use crate::faults::FaultSpec;
use crate::firmware::Executed;

/// A completion entry the firmware has built but writes only at `due` (a `slow` fault): until
/// then the command is still running, RDY reads 0 and doorbell writes are ignored.
#[derive(Debug, Clone)]
pub(super) struct PendingCompletion {
    /// Bus address of the completion entry.
    address: u64,
    /// Its bytes.
    bytes: [u8; COMPLETION_LEN],
    /// When it is written.
    due: Instant,
    /// When the command ran.
    since: Instant,
    /// The command's (subsystem, opcode).
    command: Option<(u8, u8)>,
}

/// The furthest below a mapped buffer a LO write's address may lie and still be taken for a
/// mailbox the host did not align to 16 bytes (the doorbell drops address bits 3:0,
/// spec/protocol.md §3.1).
const ALIGNMENT_SLACK: u64 = 15;

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// The busy periods in effect: [`Timing`], or the `rdy-after` fault's read count.
    fn effective_timing(&self) -> Timing {
        match self.firmware.card().state.faults.rdy_after {
            Some(reads) => Timing { ready_delay: reads, exec_delay: reads, ..self.timing },
            None => self.timing,
        }
    }

    /// A read of the mailbox doorbell.
    pub(super) fn doorbell_read(&mut self) -> u32 {
        if !self.post_ready() || self.firmware.card().state.faults.rdy_never {
            return 0;
        }
        if let Some(pending) = &self.pending {
            if self.clock.now() < pending.due {
                return 0;
            }
            let PendingCompletion { address, bytes, since, command, .. } = pending.clone();
            self.pending = None;
            self.write_dma(address, &bytes);
            self.log_delayed(command, since);
            return MailboxDoorbell::RDY;
        }
        match self.doorbell.read() {
            DoorbellRead::Rdy(ready) => u32::from(ready) * MailboxDoorbell::RDY,
            DoorbellRead::Execute { address } => {
                self.execute_mailbox(address);
                if self.gone() {
                    // The adapter died running the command (power-loss-at).
                    u32::MAX
                } else if self.pending.is_some() {
                    0
                } else {
                    MailboxDoorbell::RDY
                }
            }
        }
    }

    /// A write of the mailbox doorbell.
    pub(super) fn doorbell_write(&mut self, value: u32) {
        if !self.post_ready() {
            self.firmware.log(Event::WriteBeforePost { value });
            return;
        }
        if self.firmware.card().state.faults.rdy_hang {
            // The firmware hangs on this write: from now on RDY never returns.
            {
                let faults = &mut self.firmware.card().state.faults;
                faults.rdy_hang = false;
                faults.rdy_never = true;
            }
            self.firmware.log(Event::FaultTriggered { fault: FaultSpec::RdyHang });
            self.firmware.save_or_log();
            return;
        }
        if self.firmware.card().state.faults.rdy_never || self.pending.is_some() {
            self.firmware.log(Event::WriteWhileBusy { value });
            return;
        }
        self.doorbell.timing = self.effective_timing();
        match self.doorbell.write(value) {
            Err(event) => self.firmware.log(event),
            Ok(DoorbellWrite::High) => {}
            Ok(DoorbellWrite::Low { address }) => {
                if let Some(start) = self.mapping_just_above(address) {
                    self.firmware.log(Event::UnalignedMailbox { address: start });
                    return;
                }
                // An address that maps nowhere faults when the firmware fetches the WRB.
                self.doorbell.start(address);
            }
        }
    }

    /// When the mailbox at `address` cannot be reached but a mapping starts 1–15 bytes above
    /// it, that mapping's start: the signature of a host that did not round its mailbox up to 16
    /// bytes. A reachable first byte ends the search at once (the fetch itself finds whether the
    /// rest of the mailbox is there).
    fn mapping_just_above(&self, address: u64) -> Option<u64> {
        let reachable = |at: u64| self.dma.read(at, &mut [0u8; 1]).is_ok();
        let first = (0..=ALIGNMENT_SLACK).map_while(|k| address.checked_add(k)).find(|&at| reachable(at))?;
        (first != address).then_some(first)
    }

    /// Executes the mailbox at `address`.
    fn execute_mailbox(&mut self, address: u64) {
        let mut mailbox = [0u8; MAILBOX_LEN];
        if let Err(fault) = self.dma.read(address, &mut mailbox) {
            self.log_fault(fault);
            return;
        }
        let mut raw = [0u8; WRB_LEN];
        raw.copy_from_slice(&mailbox[..WRB_LEN]);
        let mut r = Reader::at(&raw, 8);
        let tags = [r.u32("tag0").unwrap_or(0), r.u32("tag1").unwrap_or(0)];
        let signature = if raw[..FW_INIT_SIGNATURE.len()] == FW_INIT_SIGNATURE {
            Some(SignatureKind::FwInit)
        } else if raw[..FW_CLEAN_SIGNATURE.len()] == FW_CLEAN_SIGNATURE {
            Some(SignatureKind::FwClean)
        } else {
            None
        };
        let (status, executed) = match signature {
            Some(kind) => {
                self.firmware.log(Event::Signature { kind });
                (CompletionStatus::SUCCESS, None)
            }
            None => self.run_wrb(address, &raw),
        };
        if self.gone() {
            // The adapter lost power running the command: no completion is ever written.
            return;
        }
        // What the command owes the datapath comes before its own completion.
        if let Some(e) = executed {
            self.pay(e.owed);
        }
        let (valid, delay, command) = executed.map_or((true, Duration::ZERO, None), |e| (e.valid, e.delay, e.command));
        let mut flags = Completion::COMPLETED;
        if valid {
            flags |= Completion::VALID;
        }
        let completion = Completion { status, tags, flags };
        let mut out = [0u8; COMPLETION_LEN];
        if completion.encode(&mut Writer::new(&mut out)).is_ok() {
            self.complete_after(address + MAILBOX_COMPLETION_OFFSET as u64, out, delay, command);
        }
        self.settle();
    }

    /// Runs a (non-signature) WRB: returns the completion status and, when the firmware ran the
    /// command, what it did.
    pub(super) fn run_wrb(&mut self, address: u64, raw: &[u8; WRB_LEN]) -> (CompletionStatus, Option<Executed>) {
        let Ok(wrb) = Wrb::decode(&mut Reader::new(raw)) else {
            // Only an SGE count above the 19 that fit can fail to decode.
            return (STATUS_BAD_SGE_COUNT.into(), None);
        };
        let cx = self.context();
        match wrb.payload {
            WrbPayload::Embedded(mut area) => {
                let executed = self.firmware.execute(&cx, &mut area, true);
                let at = address + WRB_PAYLOAD_OFFSET as u64;
                (self.copy_out(at, &area[..executed.written], executed.status), Some(executed))
            }
            WrbPayload::NonEmbedded(sges) => {
                let [sge] = sges.as_slice() else { return (STATUS_BAD_SGE_COUNT.into(), None) };
                let len = sge.len as usize;
                if len > MAX_NON_EMBEDDED_LEN {
                    return (STATUS_SGE_TOO_LONG.into(), None);
                }
                if len < oce_mailbox::header::HEADER_LEN {
                    return (STATUS_BAD_LENGTH.into(), None);
                }
                let mut buf = std::mem::take(&mut self.scratch);
                if buf.len() < len {
                    buf.resize(len, 0);
                }
                let result = match self.dma.read(sge.address, &mut buf[..len]) {
                    Err(fault) => {
                        self.log_fault(fault);
                        (STATUS_DMA_FAULT.into(), None)
                    }
                    Ok(()) => {
                        let executed = self.firmware.execute(&cx, &mut buf[..len], false);
                        (self.copy_out(sge.address, &buf[..executed.written], executed.status), Some(executed))
                    }
                };
                self.scratch = buf;
                result
            }
        }
    }

    /// Copies a response back to the host: `status` if it arrives, [`STATUS_DMA_FAULT`] (and
    /// an event) if the device cannot write there.
    fn copy_out(&mut self, address: u64, bytes: &[u8], status: CompletionStatus) -> CompletionStatus {
        if bytes.is_empty() {
            return status;
        }
        match self.dma.write(address, bytes) {
            Ok(()) => status,
            Err(fault) => {
                self.log_fault(fault);
                STATUS_DMA_FAULT.into()
            }
        }
    }

    /// Holds `bytes` back as the completion of `command` at `address` until `delay` has passed;
    /// a zero delay writes it now.
    fn complete_after(
        &mut self,
        address: u64,
        bytes: [u8; COMPLETION_LEN],
        delay: Duration,
        command: Option<(u8, u8)>,
    ) {
        let now = self.clock.now();
        match now.checked_add(delay).filter(|_| !delay.is_zero()) {
            Some(due) => self.pending = Some(PendingCompletion { address, bytes, due, since: now, command }),
            None => self.write_dma(address, &bytes),
        }
    }

    /// Logs that the held completion of `command`, which ran at `since`, has been written
    /// ([`Event::CompletionDelayed`]).
    pub(super) fn log_delayed(&mut self, command: Option<(u8, u8)>, since: Instant) {
        let held = self.clock.now().saturating_duration_since(since);
        let (subsystem, opcode) = command.unwrap_or_default();
        self.firmware.log(Event::CompletionDelayed { subsystem, opcode, held });
    }

    /// A device write to host memory whose failure has no one to report to but the log.
    pub(super) fn write_dma(&mut self, address: u64, bytes: &[u8]) {
        if let Err(fault) = self.dma.write(address, bytes) {
            self.log_fault(fault);
        }
    }

    pub(super) fn log_fault(&mut self, fault: DmaFault) {
        self.firmware.log(Event::DmaFault { iova: fault.addr, len: fault.len });
    }
}
