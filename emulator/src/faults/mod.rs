//! Faults a test (or `ocetool emulator fault`) can switch on; kept in the state file until
//! cleared, so they survive across processes like the rest of the adapter.
//!
//! Each fault is a plain field with a do-nothing default, so a state file written before a fault
//! existed still loads, and new faults are added as new fields. [`FaultSpec`] is the textual
//! form: [`Faults::set`] adds one, [`Faults::clear`] removes them by name, [`Faults::describe`]
//! lists the active ones as specs that [`FaultSpec::parse`] reads back to the same faults.

mod spec;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use spec::{CommandEffect, CommandFault, FAULT_NAMES, FaultSpec, PostFault};

use crate::error::EmulatorError;

/// The switchable faults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Faults {
    /// The device has dropped off the bus: every config and BAR read returns all ones and writes
    /// are lost (spec/protocol.md §3.2 step 1, §7.3).
    pub gone: bool,
    /// PCICFG_UE_STATUS_LOW / HIGH (pcicfg 0xA0 / 0xA4): unrecoverable-error bits the firmware
    /// reports (spec/protocol.md §2.5). Zero on a healthy adapter.
    pub ue_status: [u32; 2],
    /// POST stuck, or failed, at a stage (the semaphore, config 0x94, spec §2.4).
    pub post: Option<PostFault>,
    /// The mailbox doorbell's RDY bit never reads 1; doorbell writes are ignored. A chip reset or
    /// power cycle ends it (`firmware_restarted`).
    pub rdy_never: bool,
    /// Armed: the next doorbell write hangs the mailbox (the fault then turns into `rdy_never`).
    pub rdy_hang: bool,
    /// Every busy period of the doorbell (after a HI write, after a LO write) lasts this many
    /// reads, instead of [`crate::Timing`]'s.
    pub rdy_after: Option<u32>,
    /// Per-command faults: at most one of each effect kind per (subsystem, opcode).
    pub commands: Vec<CommandFault>,
    /// Counts down one per WRITE_FLASHROM chunk; the chunk that finds it at 1 fails, and so does
    /// every later one (it stays at 1) until the fault is cleared.
    pub flash_fail_at: Option<u32>,
    /// Counts down one per WRITE_FLASHROM chunk; the chunk that finds it at 1 is lost with the
    /// power: the fault turns into `power_lost`.
    pub power_loss_at: Option<u32>,
    /// The adapter has lost power: like `gone`, but a power cycle ends it.
    pub power_lost: bool,
    /// Real time each WRITE_FLASHROM chunk takes to complete.
    pub slow_flash: Option<Duration>,
    /// Offset mode (op type 7) is refused with ILLEGAL_FIELD, as older firmware does
    /// (ufi-firmware.md §2.8 steps 5 and 7).
    pub no_offset_mode: bool,
    /// The switch does not agree with the adapter's PFC settings: the operational DCBX
    /// configuration shows PFC enabled but not in sync (DCBX GET_CONFIG, `pfc_state` without
    /// SYNC), so ocrdma falls back from it.
    pub pfc_unsync: bool,
    /// The cable is out: every port's link is down. Setting or clearing it on a running device
    /// posts the link-state event to every MCC queue that subscribed to it.
    pub link_down: bool,
}

impl Faults {
    /// True when no fault is set.
    pub fn is_clear(&self) -> bool {
        *self == Self::default()
    }

    /// Sets the fault `spec` describes, replacing one of the same kind (for a command fault:
    /// the same kind on the same command).
    pub fn set(&mut self, spec: FaultSpec) {
        match spec {
            FaultSpec::Post(p) => self.post = Some(p),
            FaultSpec::Ue { low, high } => self.ue_status = [low, high],
            FaultSpec::RdyNever => self.rdy_never = true,
            FaultSpec::RdyHang => self.rdy_hang = true,
            FaultSpec::RdyAfter { reads } => self.rdy_after = Some(reads),
            FaultSpec::Gone => self.gone = true,
            FaultSpec::PowerLost => self.power_lost = true,
            FaultSpec::Command(fault) => {
                self.commands.retain(|c| !same_slot(c, &fault));
                self.commands.push(fault);
            }
            FaultSpec::FlashFailAt { chunk } => self.flash_fail_at = Some(chunk),
            FaultSpec::PowerLossAt { chunk } => self.power_loss_at = Some(chunk),
            FaultSpec::SlowFlash { delay } => self.slow_flash = Some(delay),
            FaultSpec::NoOffsetMode => self.no_offset_mode = true,
            FaultSpec::PfcUnsync => self.pfc_unsync = true,
            FaultSpec::LinkDown => self.link_down = true,
        }
    }

    /// Parses `spec` and sets it.
    pub fn set_str(&mut self, spec: &str) -> Result<(), EmulatorError> {
        self.set(FaultSpec::parse(spec)?);
        Ok(())
    }

    /// Clears faults by `name`: a spec key (`"gone"`, `"status"` — every status fault), or a
    /// command fault's key with its command (`"status=1:168"`) for that one only. Returns
    /// whether anything was set; an unknown name is an error.
    pub fn clear(&mut self, name: &str) -> Result<bool, EmulatorError> {
        let before = self.clone();
        let (key, rest) = match name.split_once('=') {
            Some((key, rest)) => (key, Some(rest)),
            None => (name, None),
        };
        if !FAULT_NAMES.contains(&key) {
            return Err(bad_name(name, key, &format!("is not a fault (known: {})", FAULT_NAMES.join(", "))));
        }
        let command = rest.map(|r| command_key(name, r)).transpose()?;
        match (key, command) {
            ("post-stuck", None) => self.post = self.post.filter(|p| !matches!(p, PostFault::Stuck { .. })),
            ("post-error", None) => self.post = self.post.filter(|p| !matches!(p, PostFault::Error { .. })),
            ("ue", None) => self.ue_status = [0; 2],
            ("rdy-never", None) => self.rdy_never = false,
            ("rdy-hang", None) => self.rdy_hang = false,
            ("rdy-after", None) => self.rdy_after = None,
            ("gone", None) => self.gone = false,
            ("power-lost", None) => self.power_lost = false,
            ("flash-fail-at", None) => self.flash_fail_at = None,
            ("power-loss-at", None) => self.power_loss_at = None,
            ("slow-flash", None) => self.slow_flash = None,
            ("no-offset-mode", None) => self.no_offset_mode = false,
            ("pfc-unsync", None) => self.pfc_unsync = false,
            ("link-down", None) => self.link_down = false,
            ("status" | "response-length" | "truncate" | "no-valid" | "slow", which) => {
                self.commands.retain(|c| c.effect.name() != key || which.is_some_and(|w| w != (c.subsystem, c.opcode)))
            }
            _ => return Err(bad_name(name, key, "names no command; only command faults take =SUB:OP when cleared")),
        }
        Ok(*self != before)
    }

    /// Clears every fault.
    pub fn clear_all(&mut self) {
        *self = Self::default();
    }

    /// The active faults as specs, in a fixed order; setting them all on a clear [`Faults`]
    /// gives this one back.
    pub fn describe(&self) -> Vec<FaultSpec> {
        let flags = [
            (self.gone, FaultSpec::Gone),
            (self.power_lost, FaultSpec::PowerLost),
            (self.ue_status != [0; 2], FaultSpec::Ue { low: self.ue_status[0], high: self.ue_status[1] }),
        ];
        let mut out: Vec<FaultSpec> = flags.into_iter().filter(|(on, _)| *on).map(|(_, spec)| spec).collect();
        out.extend(self.post.map(FaultSpec::Post));
        out.extend(
            [(self.rdy_never, FaultSpec::RdyNever), (self.rdy_hang, FaultSpec::RdyHang)]
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, spec)| spec),
        );
        out.extend(self.rdy_after.map(|reads| FaultSpec::RdyAfter { reads }));
        out.extend(self.commands.iter().map(|&c| FaultSpec::Command(c)));
        out.extend(self.flash_fail_at.map(|chunk| FaultSpec::FlashFailAt { chunk }));
        out.extend(self.power_loss_at.map(|chunk| FaultSpec::PowerLossAt { chunk }));
        out.extend(self.slow_flash.map(|delay| FaultSpec::SlowFlash { delay }));
        out.extend(self.no_offset_mode.then_some(FaultSpec::NoOffsetMode));
        out.extend(self.pfc_unsync.then_some(FaultSpec::PfcUnsync));
        out.extend(self.link_down.then_some(FaultSpec::LinkDown));
        out
    }

    /// The firmware restarts (chip reset or power cycle, then POST): what lived only in the
    /// running firmware ends with it — a hung mailbox (`rdy-never`, and `rdy-hang`, armed or
    /// fired) and the UE status it reported. Everything else is a property of the hardware, the
    /// flash, the firmware image or the network (`link-down`) and outlives a reset
    /// (`crate::assumptions`, "Faults").
    pub(crate) fn firmware_restarted(&mut self) {
        self.rdy_never = false;
        self.rdy_hang = false;
        self.ue_status = [0; 2];
    }

    /// True when the adapter does not answer at all (`gone` or `power_lost`).
    pub(crate) fn unreachable(&self) -> bool {
        self.gone || self.power_lost
    }

    /// The effects set on command (`subsystem`, `opcode`).
    pub(crate) fn command(&self, subsystem: u8, opcode: u8) -> impl Iterator<Item = CommandEffect> + '_ {
        self.commands.iter().filter(move |c| (c.subsystem, c.opcode) == (subsystem, opcode)).map(|c| c.effect)
    }
}

/// True when `a` and `b` are the same kind of fault on the same command.
fn same_slot(a: &CommandFault, b: &CommandFault) -> bool {
    (a.subsystem, a.opcode) == (b.subsystem, b.opcode) && a.effect.name() == b.effect.name()
}

/// The error for a bad `clear` argument.
fn bad_name(name: &str, part: &str, problem: &str) -> EmulatorError {
    EmulatorError::FaultSpec { spec: name.to_owned(), part: part.to_owned(), problem: problem.to_owned() }
}

/// `SUB:OP` of a `clear` argument like `status=1:168`, read by the spec parser (a no-valid
/// fault has exactly the SUB:OP fields).
fn command_key(name: &str, rest: &str) -> Result<(u8, u8), EmulatorError> {
    match FaultSpec::parse(&format!("no-valid={rest}")) {
        Ok(FaultSpec::Command(c)) => Ok((c.subsystem, c.opcode)),
        Ok(_) => Err(bad_name(name, rest, "is not SUB:OP")),
        Err(EmulatorError::FaultSpec { part, problem, .. }) => Err(bad_name(name, &part, &problem)),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests;
