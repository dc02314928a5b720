//! The mailbox doorbell register (DB BAR + 0x160) as the host sees it: the handshake state
//! machine ([`crate::device::doorbell`]) plus what POST, the RDY faults and delayed completions do to it.

use std::time::{Duration, Instant};

use oce_mailbox::regs::MailboxDoorbell;
use oce_mailbox::wrb::{COMPLETION_LEN, MAILBOX_LEN};

use super::Model;
use crate::device::doorbell::{DoorbellRead, DoorbellWrite};
use crate::device::mailbox;
use crate::device::timing::Timing;
use crate::events::Event;
use crate::faults::FaultSpec;

/// A completion entry the firmware has built but writes only at `due` (a `slow` fault): until
/// then the command is still running, RDY reads 0 and doorbell writes are ignored.
#[derive(Debug, Clone)]
pub(crate) struct PendingCompletion {
    /// Bus address of the completion entry.
    pub(crate) address: u64,
    /// Its bytes.
    pub(crate) bytes: [u8; COMPLETION_LEN],
    /// When it is written.
    pub(crate) due: Instant,
}

impl Model {
    /// The busy periods in effect: [`Timing`], or the `rdy-after` fault's read count.
    fn effective_timing(&self) -> Timing {
        match self.state.faults.rdy_after {
            Some(reads) => Timing { ready_delay: reads, exec_delay: reads, ..self.timing },
            None => self.timing,
        }
    }

    /// Holds `bytes` back as the completion at `address` until `delay` has passed; a zero delay
    /// writes it now.
    pub(crate) fn complete_after(&mut self, address: u64, bytes: [u8; COMPLETION_LEN], delay: Duration) {
        let now = self.clock.now();
        match now.checked_add(delay).filter(|_| !delay.is_zero()) {
            Some(due) => self.pending = Some(PendingCompletion { address, bytes, due }),
            None => self.write_completion(address, &bytes),
        }
    }

    /// Writes a completion entry through the IOVA table.
    pub(crate) fn write_completion(&mut self, address: u64, bytes: &[u8; COMPLETION_LEN]) {
        if !self.iova.write(address, bytes) {
            self.log(Event::DmaFault { iova: address, len: COMPLETION_LEN });
        }
    }

    /// A read of the mailbox doorbell.
    pub(super) fn doorbell_read(&mut self) -> u32 {
        if !self.post_ready() || self.state.faults.rdy_never {
            return 0;
        }
        if let Some(pending) = &self.pending {
            if self.clock.now() < pending.due {
                return 0;
            }
            let PendingCompletion { address, bytes, .. } = pending.clone();
            self.pending = None;
            self.write_completion(address, &bytes);
            return MailboxDoorbell::RDY;
        }
        match self.doorbell.read() {
            DoorbellRead::Rdy(ready) => u32::from(ready) * MailboxDoorbell::RDY,
            DoorbellRead::Execute { address } => {
                mailbox::execute(self, address);
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
            self.log(Event::WriteBeforePost { value });
            return;
        }
        if self.state.faults.rdy_hang {
            // The firmware hangs on this write: from now on RDY never returns.
            self.state.faults.rdy_hang = false;
            self.state.faults.rdy_never = true;
            self.log(Event::FaultTriggered { fault: FaultSpec::RdyHang });
            self.save_or_log();
            return;
        }
        if self.state.faults.rdy_never || self.pending.is_some() {
            self.log(Event::WriteWhileBusy { value });
            return;
        }
        self.doorbell.timing = self.effective_timing();
        match self.doorbell.write(value) {
            Err(event) => self.log(event),
            Ok(DoorbellWrite::High) => {}
            Ok(DoorbellWrite::Low { address }) => {
                if !self.iova.contains(address, MAILBOX_LEN)
                    && let Some(start) = self.iova.buffer_starting_just_above(address)
                {
                    self.log(Event::UnalignedMailbox { address: start });
                    return;
                }
                // An address that maps nowhere faults when the firmware fetches the WRB.
                self.doorbell.start(address);
            }
        }
    }
}
