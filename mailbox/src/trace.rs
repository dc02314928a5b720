//! The firmware command trace: one `tracing` event per command the driver posts, with what was
//! sent and what came back, for `ocetool -vv` and `--log-file` (the subscriber lives in the CLI).
//!
//! Events go to target [`COMMAND_TARGET`] at DEBUG level. Nothing is measured or formatted unless
//! a subscriber listens at that level: [`CommandTrace::start`] asks `tracing` first, and a command
//! with no listener costs one cached callsite check.
//!
//! Fields of each event: `subsystem` and `subsystem_name`, `opcode`, `command` (the C name),
//! `version`, `embedded`, `request_len` and `response_len` (body bytes, header excluded),
//! `base_status` and `additional_status` (raw numbers) with `status` (their names), `elapsed_us`,
//! and `arguments` / `result` (the decoded request and response, cut to
//! [`MAX_FIELD_CHARS`]) or `error` when the command did not complete.

use std::fmt::{self, Debug, Display, Write as _};
use std::time::Instant;

use tracing::Level;

use crate::MailboxError;
use crate::header::Subsystem;
use crate::status::CompletionStatus;

/// The `tracing` target of command events.
pub const COMMAND_TARGET: &str = "oce_mailbox::command";

/// Longest `arguments` / `result` text: a flash chunk's 32 KiB would otherwise fill the log.
pub const MAX_FIELD_CHARS: usize = 512;

/// What identifies a command in the trace.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CommandMeta {
    pub name: &'static str,
    pub subsystem: Subsystem,
    pub opcode: u8,
    pub version: u8,
    pub embedded: bool,
    pub request_len: usize,
}

/// A command being traced: present only while a subscriber listens.
#[derive(Debug)]
pub(crate) struct CommandTrace {
    started: Instant,
    meta: CommandMeta,
}

impl CommandTrace {
    /// Starts the clock when someone listens; `None` (and no cost) otherwise.
    pub(crate) fn start(meta: CommandMeta) -> Option<Self> {
        tracing::enabled!(target: COMMAND_TARGET, Level::DEBUG).then(|| Self { started: Instant::now(), meta })
    }

    /// Emits the event for a command that completed (whatever its status).
    pub(crate) fn completed(
        self,
        status: CompletionStatus,
        response_len: usize,
        arguments: &dyn Debug,
        result: Option<&dyn Debug>,
    ) {
        self.emit(Some((status, response_len)), arguments, result, None);
    }

    /// Emits the event for a command that did not complete (no answer, device gone, bad
    /// completion).
    pub(crate) fn failed(self, error: &MailboxError, arguments: &dyn Debug) {
        self.emit(None, arguments, None, Some(error));
    }

    /// One event; the fields of what did not happen (no completion, no error) are left out.
    fn emit(
        self,
        completion: Option<(CompletionStatus, usize)>,
        arguments: &dyn Debug,
        result: Option<&dyn Debug>,
        error: Option<&MailboxError>,
    ) {
        let m = self.meta;
        let status = completion.map(|(s, _)| s);
        tracing::debug!(
            target: COMMAND_TARGET,
            subsystem = m.subsystem.raw(),
            subsystem_name = m.subsystem.name().unwrap_or("?"),
            opcode = m.opcode,
            command = m.name,
            version = m.version,
            embedded = m.embedded,
            request_len = m.request_len as u64,
            response_len = completion.map(|(_, len)| len as u64),
            base_status = status.map(|s| s.base.raw()),
            additional_status = status.map(|s| s.additional.raw()),
            status = status.map(tracing::field::display),
            elapsed_us = self.started.elapsed().as_micros() as u64,
            arguments = %Capped(arguments),
            result = result.map(|r| tracing::field::display(Capped(r))),
            error = error.map(tracing::field::display),
            "firmware command"
        );
    }
}

/// Formats a value's `Debug` form, stopping after [`MAX_FIELD_CHARS`] characters (the rest is
/// never formatted) and saying how it was cut.
#[derive(Debug)]
pub struct Capped<'a>(pub &'a dyn Debug);

impl Display for Capped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Bounded { text: String::new(), full: false };
        // A full buffer ends the formatting early with fmt::Error; what was written is kept.
        let _ = write!(out, "{:?}", self.0);
        f.write_str(&out.text)?;
        if out.full { f.write_str("…(cut)") } else { Ok(()) }
    }
}

/// A string that takes at most [`MAX_FIELD_CHARS`] bytes, then refuses more.
struct Bounded {
    text: String,
    full: bool,
}

impl fmt::Write for Bounded {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = MAX_FIELD_CHARS.saturating_sub(self.text.len());
        if s.len() <= room {
            self.text.push_str(s);
            return Ok(());
        }
        let mut cut = room;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        self.text.push_str(&s[..cut]);
        self.full = true;
        Err(fmt::Error)
    }
}

/// Hex of a raw command's payload, for the trace of `ocetool raw`.
pub(crate) struct HexBytes<'a>(pub &'a [u8]);

impl Debug for HexBytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_keeps_short_values_whole() {
        assert_eq!(Capped(&"abc").to_string(), "\"abc\"");
        assert_eq!(HexBytes(&[0, 0xab]).0.len(), 2);
        assert_eq!(format!("{:?}", HexBytes(&[0, 0xab, 0x10])), "00ab10");
    }

    #[test]
    fn capped_cuts_long_values_without_formatting_them_all() {
        let big = vec![7u8; 32 * 1024];
        let text = Capped(&big).to_string();
        assert!(text.ends_with("…(cut)"), "{text}");
        assert_eq!(text.len(), MAX_FIELD_CHARS + "…(cut)".len());
        // A multi-byte character at the cut is not split.
        let s = "é".repeat(MAX_FIELD_CHARS);
        let text = Capped(&s).to_string();
        assert!(text.ends_with("…(cut)") && text.len() <= MAX_FIELD_CHARS + "…(cut)".len());
    }
}
