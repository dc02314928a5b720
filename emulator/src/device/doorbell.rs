//! The bootstrap mailbox doorbell (DB BAR 0x160) as a pure state machine (spec/protocol.md §3.2).
//!
//! ```text
//!            HI write               ready_delay reads            LO write (accepted)
//!   Idle ──────────────▶ Latching ─────────────────▶ Idle{hi} ───────────────────▶ Busy
//!    ▲   RDY = 1           RDY = 0                     RDY = 1                      RDY = 0
//!    └──────────────────────────────────── the read after exec_delay reads: execute, RDY = 1
//! ```
//!
//! Any write while RDY reads 0 is a protocol violation: it is ignored and reported. The machine
//! does not touch memory; it tells [`crate::device::Device`] when to validate an address and when
//! to execute.

use oce_mailbox::regs::MailboxDoorbell;

use crate::assumptions::LO_CONSUMES_HI_LATCH;
use crate::device::timing::Timing;
use crate::events::Event;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Ready; `hi` is the latched high half, if any.
    Idle { hi: Option<MailboxDoorbell> },
    /// A HI write is being latched; RDY reads 0 for `reads_left` more reads.
    Latching { hi: MailboxDoorbell, reads_left: u32 },
    /// A command at `address` is executing; RDY reads 0 for `reads_left` more reads.
    Busy { address: u64, reads_left: u32 },
}

/// What a doorbell read does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DoorbellRead {
    /// Return this RDY value.
    Rdy(bool),
    /// The busy period ends now: execute the mailbox at `address`, then return RDY = 1.
    Execute { address: u64 },
}

/// What a doorbell write asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DoorbellWrite {
    /// The HI half was latched.
    High,
    /// A LO write: the caller validates `address` and calls [`MailboxDoorbellState::start`] or
    /// rejects it.
    Low { address: u64 },
}

/// The doorbell's state.
#[derive(Debug, Clone)]
pub(crate) struct MailboxDoorbellState {
    state: State,
    pub(crate) timing: Timing,
}

impl MailboxDoorbellState {
    pub(crate) fn new(timing: Timing) -> Self {
        Self { state: State::Idle { hi: None }, timing }
    }

    /// Back to idle with nothing latched (chip reset).
    pub(crate) fn reset(&mut self) {
        self.state = State::Idle { hi: None };
    }

    /// A read of the doorbell register.
    pub(crate) fn read(&mut self) -> DoorbellRead {
        match self.state {
            State::Idle { .. } => DoorbellRead::Rdy(true),
            State::Latching { hi, reads_left } => {
                if reads_left == 0 {
                    self.state = State::Idle { hi: Some(hi) };
                    DoorbellRead::Rdy(true)
                } else {
                    self.state = State::Latching { hi, reads_left: reads_left - 1 };
                    DoorbellRead::Rdy(false)
                }
            }
            State::Busy { address, reads_left } => {
                if reads_left == 0 {
                    self.state = State::Idle { hi: None };
                    DoorbellRead::Execute { address }
                } else {
                    self.state = State::Busy { address, reads_left: reads_left - 1 };
                    DoorbellRead::Rdy(false)
                }
            }
        }
    }

    /// A write of `value` to the doorbell register.
    pub(crate) fn write(&mut self, value: u32) -> Result<DoorbellWrite, Event> {
        let State::Idle { hi } = self.state else {
            return Err(Event::WriteWhileBusy { value });
        };
        let written = MailboxDoorbell(value);
        if written.is_hi() {
            self.state = if self.timing.ready_delay == 0 {
                State::Idle { hi: Some(written) }
            } else {
                State::Latching { hi: written, reads_left: self.timing.ready_delay }
            };
            return Ok(DoorbellWrite::High);
        }
        let Some(hi) = hi else {
            return Err(Event::LoBeforeHi { value });
        };
        if LO_CONSUMES_HI_LATCH {
            self.state = State::Idle { hi: None };
        }
        Ok(DoorbellWrite::Low { address: MailboxDoorbell::address_from(hi, written) })
    }

    /// Accepts the LO write: the command at `address` starts executing.
    pub(crate) fn start(&mut self, address: u64) {
        self.state = State::Busy { address, reads_left: self.timing.exec_delay };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDR: u64 = 0x0000_0037_0000_1010;

    fn hi() -> u32 {
        MailboxDoorbell::hi_for(ADDR).0
    }
    fn lo() -> u32 {
        MailboxDoorbell::lo_for(ADDR).0
    }

    #[test]
    fn full_handshake_with_default_timing() {
        let mut db = MailboxDoorbellState::new(Timing::default());
        assert_eq!(db.read(), DoorbellRead::Rdy(true));
        assert_eq!(db.write(hi()), Ok(DoorbellWrite::High));
        assert_eq!(db.read(), DoorbellRead::Rdy(false));
        assert_eq!(db.read(), DoorbellRead::Rdy(true));
        assert_eq!(db.write(lo()), Ok(DoorbellWrite::Low { address: ADDR }));
        db.start(ADDR);
        assert_eq!(db.read(), DoorbellRead::Rdy(false));
        assert_eq!(db.read(), DoorbellRead::Rdy(false));
        assert_eq!(db.read(), DoorbellRead::Execute { address: ADDR });
        assert_eq!(db.read(), DoorbellRead::Rdy(true));
    }

    #[test]
    fn lo_without_hi_is_refused_and_the_latch_is_single_use() {
        let mut db = MailboxDoorbellState::new(Timing { ready_delay: 0, exec_delay: 0, ..Timing::default() });
        assert_eq!(db.write(lo()), Err(Event::LoBeforeHi { value: lo() }));
        db.write(hi()).unwrap();
        assert_eq!(db.write(lo()), Ok(DoorbellWrite::Low { address: ADDR }));
        assert_eq!(db.write(lo()), Err(Event::LoBeforeHi { value: lo() }));
    }

    #[test]
    fn writes_while_rdy_is_low_are_refused() {
        let mut db = MailboxDoorbellState::new(Timing::default());
        db.write(hi()).unwrap();
        assert_eq!(db.write(lo()), Err(Event::WriteWhileBusy { value: lo() }));
        assert_eq!(db.read(), DoorbellRead::Rdy(false));
        assert_eq!(db.read(), DoorbellRead::Rdy(true));
        db.write(lo()).unwrap();
        db.start(ADDR);
        assert_eq!(db.write(hi()), Err(Event::WriteWhileBusy { value: hi() }));
    }
}
