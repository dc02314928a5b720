//! [`FaultSpec`]: one fault as a line of text, for `ocetool emulator fault set|clear|list` and
//! for tests. `FaultSpec::parse(s).to_string()` gives the canonical form back.
//!
//! | spec | fault |
//! |---|---|
//! | `post-stuck=STAGE` | the POST walk stops at STAGE and never reaches 0xC000 |
//! | `post-error[=STAGE]` | POST stops at STAGE (default 0x0002) with the error bit 31 |
//! | `ue=LOW[,HIGH]` | UE status low / high (pcicfg 0xA0 / 0xA4), until a chip reset or power cycle |
//! | `rdy-never` | the mailbox doorbell's RDY never reads 1, until a chip reset or power cycle |
//! | `rdy-hang` | RDY never reads 1 again after the next doorbell write (then shows as `rdy-never`) |
//! | `rdy-after=N` | every busy period of the doorbell lasts N reads |
//! | `gone` | every register reads all ones, writes are lost |
//! | `power-lost` | as `gone`, until the next power cycle |
//! | `status=SUB:OP:BASE[:ADDL]` | command SUB:OP is not executed and answers BASE / ADDL |
//! | `response-length=SUB:OP:LEN` | the response header of SUB:OP claims LEN bytes |
//! | `truncate=SUB:OP:LEN` | the response body of SUB:OP is cut to LEN bytes |
//! | `no-valid=SUB:OP` | the completion of SUB:OP lacks the VALID flag |
//! | `slow=SUB:OP:MS` | SUB:OP completes MS milliseconds (real time) after it ran |
//! | `flash-fail-at=N` | the N-th WRITE_FLASHROM chunk from now, and every later one, fails |
//! | `power-loss-at=N` | the adapter loses power at the N-th WRITE_FLASHROM chunk from now |
//! | `slow-flash=MS` | every WRITE_FLASHROM chunk completes MS milliseconds after it ran |
//! | `no-offset-mode` | READ/WRITE_FLASHROM with op type 7 (offset mode) answer ILLEGAL_FIELD |
//! | `pfc-unsync` | the operational DCBX configuration shows PFC enabled but not in sync with the switch |
//! | `link-down` | every port's link is down (the cable is out); a running device announces the change |
//!
//! Numbers are decimal or `0x` hex; SUB is the subsystem byte (1 = COMMON), OP the opcode.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use oce_mailbox::regs::Semaphore;
use serde::{Deserialize, Serialize};

use crate::assumptions::{MAX_FAULT_DELAY, POST_FAILED_STAGE_INDEX, POST_STAGES};
use crate::error::EmulatorError;

/// What a fault does to one command (see [`CommandFault`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CommandEffect {
    /// Not executed (no state change); the completion and the response header carry this status.
    Status {
        /// Base status (completion bits 15:0, response header byte 4).
        base: u8,
        /// Additional status (completion bits 23:16, response header byte 5).
        additional: u8,
    },
    /// Executed normally, but the response header's `response_length` says `len`.
    ResponseLength {
        /// The length claimed.
        len: u32,
    },
    /// Executed normally, but only the first `len` bytes of the response body are written and
    /// `response_length` says so (`actual_response_length` keeps the real length).
    Truncate {
        /// Bytes of body kept.
        len: u32,
    },
    /// Executed normally; the completion is written with COMPLETED but without VALID.
    NoValid,
    /// Executed normally; the completion is written, and RDY reads 1, only `delay` later.
    Slow {
        /// Real time between execution and completion.
        delay: Duration,
    },
}

impl CommandEffect {
    /// The spec key of this kind of effect.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Status { .. } => "status",
            Self::ResponseLength { .. } => "response-length",
            Self::Truncate { .. } => "truncate",
            Self::NoValid => "no-valid",
            Self::Slow { .. } => "slow",
        }
    }
}

/// A fault on one command, chosen by subsystem and opcode (any version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandFault {
    /// Subsystem byte of the request header (1 = COMMON).
    pub subsystem: u8,
    /// Opcode.
    pub opcode: u8,
    /// What happens to it.
    pub effect: CommandEffect,
}

/// Where POST goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PostFault {
    /// The walk stops at `stage` (bits 15:0 of the semaphore) without the error bit.
    Stuck {
        /// The stage shown forever.
        stage: u16,
    },
    /// The walk stops at `stage` with the error bit (31) set.
    Error {
        /// The stage shown with the error bit.
        stage: u16,
    },
}

/// One fault, as set by `ocetool emulator fault set SPEC` (module docs list the syntax).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultSpec {
    /// `post-stuck=STAGE` / `post-error[=STAGE]`.
    Post(PostFault),
    /// `ue=LOW[,HIGH]`.
    Ue {
        /// PCICFG_UE_STATUS_LOW.
        low: u32,
        /// PCICFG_UE_STATUS_HIGH.
        high: u32,
    },
    /// `rdy-never`.
    RdyNever,
    /// `rdy-hang`.
    RdyHang,
    /// `rdy-after=N`.
    RdyAfter {
        /// Doorbell reads that return RDY = 0 after each doorbell write.
        reads: u32,
    },
    /// `gone`.
    Gone,
    /// `power-lost`.
    PowerLost,
    /// `status=…`, `response-length=…`, `truncate=…`, `no-valid=…`, `slow=…`.
    Command(CommandFault),
    /// `flash-fail-at=N`.
    FlashFailAt {
        /// 1-based: the N-th WRITE_FLASHROM chunk from now fails.
        chunk: u32,
    },
    /// `power-loss-at=N`.
    PowerLossAt {
        /// 1-based: power is lost on the N-th WRITE_FLASHROM chunk from now.
        chunk: u32,
    },
    /// `slow-flash=MS`.
    SlowFlash {
        /// Real time each WRITE_FLASHROM chunk takes to complete.
        delay: Duration,
    },
    /// `no-offset-mode`.
    NoOffsetMode,
    /// `pfc-unsync`.
    PfcUnsync,
    /// `link-down`.
    LinkDown,
}

/// Every spec key, for error messages and `clear`.
pub const FAULT_NAMES: [&str; 19] = [
    "post-stuck",
    "post-error",
    "ue",
    "rdy-never",
    "rdy-hang",
    "rdy-after",
    "gone",
    "power-lost",
    "status",
    "response-length",
    "truncate",
    "no-valid",
    "slow",
    "flash-fail-at",
    "power-loss-at",
    "slow-flash",
    "no-offset-mode",
    "pfc-unsync",
    "link-down",
];

impl FaultSpec {
    /// Parses one spec (module docs); the error names the part that is wrong.
    pub fn parse(spec: &str) -> Result<Self, EmulatorError> {
        let p = Parser { spec };
        let (name, value) = match spec.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (spec, None),
        };
        let command = |effect: &dyn Fn(&[&str]) -> Result<CommandEffect, EmulatorError>, extra: &[usize]| {
            let v = p.value(value, name)?;
            let fields: Vec<&str> = v.split(':').collect();
            if fields.len() < 2 || !extra.contains(&(fields.len() - 2)) {
                return Err(p.bad(v, "does not have the fields SUB:OP[:...] this fault needs"));
            }
            let subsystem = p.number(fields[0], "subsystem")?;
            let opcode = p.number(fields[1], "opcode")?;
            Ok(Self::Command(CommandFault { subsystem, opcode, effect: effect(&fields[2..])? }))
        };
        let spec = match name {
            "post-stuck" => {
                let stage: u16 = p.number(p.value(value, name)?, "POST stage")?;
                if Semaphore(u32::from(stage)).is_ready() {
                    return Err(p.bad(value.unwrap_or_default(), "is the ready stage; a stuck POST never reaches it"));
                }
                Self::Post(PostFault::Stuck { stage })
            }
            "post-error" => {
                let stage = match value {
                    Some(v) => p.number(v, "POST stage")?,
                    None => POST_STAGES[POST_FAILED_STAGE_INDEX],
                };
                Self::Post(PostFault::Error { stage })
            }
            "ue" => {
                let v = p.value(value, name)?;
                let (low, high) = v.split_once(',').unwrap_or((v, "0"));
                Self::Ue { low: p.number(low, "UE status")?, high: p.number(high, "UE status")? }
            }
            "rdy-after" => Self::RdyAfter { reads: p.number(p.value(value, name)?, "read count")? },
            "status" => command(
                &|f| {
                    let base = p.number(f[0], "base status")?;
                    let additional = f.get(1).map_or(Ok(0), |a| p.number(a, "additional status"))?;
                    Ok(CommandEffect::Status { base, additional })
                },
                &[1, 2],
            )?,
            "response-length" => {
                command(&|f| Ok(CommandEffect::ResponseLength { len: p.number(f[0], "length")? }), &[1])?
            }
            "truncate" => command(&|f| Ok(CommandEffect::Truncate { len: p.number(f[0], "length")? }), &[1])?,
            "no-valid" => command(&|_| Ok(CommandEffect::NoValid), &[0])?,
            "slow" => command(&|f| Ok(CommandEffect::Slow { delay: p.delay(f[0])? }), &[1])?,
            "flash-fail-at" => Self::FlashFailAt { chunk: p.chunk(p.value(value, name)?)? },
            "power-loss-at" => Self::PowerLossAt { chunk: p.chunk(p.value(value, name)?)? },
            "slow-flash" => Self::SlowFlash { delay: p.delay(p.value(value, name)?)? },
            flag => {
                let parsed = match flag {
                    "rdy-never" => Self::RdyNever,
                    "rdy-hang" => Self::RdyHang,
                    "gone" => Self::Gone,
                    "power-lost" => Self::PowerLost,
                    "no-offset-mode" => Self::NoOffsetMode,
                    "pfc-unsync" => Self::PfcUnsync,
                    "link-down" => Self::LinkDown,
                    _ => {
                        let known = FAULT_NAMES.join(", ");
                        return Err(p.bad(flag, &format!("is not a fault (known: {known})")));
                    }
                };
                if let Some(v) = value {
                    return Err(p.bad(v, &format!("is a value, but {flag} takes none")));
                }
                parsed
            }
        };
        Ok(spec)
    }

    /// The spec key (`"status"`, `"gone"`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Post(PostFault::Stuck { .. }) => "post-stuck",
            Self::Post(PostFault::Error { .. }) => "post-error",
            Self::Ue { .. } => "ue",
            Self::RdyNever => "rdy-never",
            Self::RdyHang => "rdy-hang",
            Self::RdyAfter { .. } => "rdy-after",
            Self::Gone => "gone",
            Self::PowerLost => "power-lost",
            Self::Command(c) => c.effect.name(),
            Self::FlashFailAt { .. } => "flash-fail-at",
            Self::PowerLossAt { .. } => "power-loss-at",
            Self::SlowFlash { .. } => "slow-flash",
            Self::NoOffsetMode => "no-offset-mode",
            Self::PfcUnsync => "pfc-unsync",
            Self::LinkDown => "link-down",
        }
    }
}

impl fmt::Display for FaultSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        match self {
            Self::Post(PostFault::Stuck { stage } | PostFault::Error { stage }) => write!(f, "{name}={stage:#06x}"),
            Self::Ue { low, high } => write!(f, "{name}={low:#x},{high:#x}"),
            Self::RdyAfter { reads } => write!(f, "{name}={reads}"),
            Self::Command(CommandFault { subsystem, opcode, effect }) => {
                write!(f, "{name}={subsystem}:{opcode}")?;
                match effect {
                    CommandEffect::Status { base, additional } => write!(f, ":{base}:{additional}"),
                    CommandEffect::ResponseLength { len } | CommandEffect::Truncate { len } => write!(f, ":{len}"),
                    CommandEffect::NoValid => Ok(()),
                    CommandEffect::Slow { delay } => write!(f, ":{}", delay.as_millis()),
                }
            }
            Self::FlashFailAt { chunk } | Self::PowerLossAt { chunk } => write!(f, "{name}={chunk}"),
            Self::SlowFlash { delay } => write!(f, "{name}={}", delay.as_millis()),
            Self::RdyNever
            | Self::RdyHang
            | Self::Gone
            | Self::PowerLost
            | Self::NoOffsetMode
            | Self::PfcUnsync
            | Self::LinkDown => f.write_str(name),
        }
    }
}

impl FromStr for FaultSpec {
    type Err = EmulatorError;
    fn from_str(s: &str) -> Result<Self, EmulatorError> {
        Self::parse(s)
    }
}

impl Serialize for FaultSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Parsing helpers that name the bad part of `spec`.
struct Parser<'a> {
    spec: &'a str,
}

impl Parser<'_> {
    fn bad(&self, part: &str, problem: &str) -> EmulatorError {
        EmulatorError::FaultSpec { spec: self.spec.to_owned(), part: part.to_owned(), problem: problem.to_owned() }
    }

    fn value<'v>(&self, value: Option<&'v str>, name: &str) -> Result<&'v str, EmulatorError> {
        value.filter(|v| !v.is_empty()).ok_or_else(|| self.bad(name, "needs a value (NAME=VALUE)"))
    }

    /// A decimal or `0x` hex number that fits `T`.
    fn number<T: TryFrom<u64>>(&self, text: &str, what: &str) -> Result<T, EmulatorError> {
        let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => text.parse::<u64>(),
        };
        let n = parsed.map_err(|_| self.bad(text, &format!("is not a {what} (a decimal or 0x-hex number)")))?;
        T::try_from(n).map_err(|_| self.bad(text, &format!("is too large for a {what}")))
    }

    fn chunk(&self, text: &str) -> Result<u32, EmulatorError> {
        match self.number(text, "chunk number")? {
            0 => Err(self.bad(text, "is not a chunk number (chunks count from 1)")),
            n => Ok(n),
        }
    }

    fn delay(&self, text: &str) -> Result<Duration, EmulatorError> {
        let delay = Duration::from_millis(self.number(text, "delay in milliseconds")?);
        if delay > MAX_FAULT_DELAY {
            return Err(self.bad(text, &format!("is longer than the {} ms limit", MAX_FAULT_DELAY.as_millis())));
        }
        Ok(delay)
    }
}

#[cfg(test)]
mod tests;
