//! `ocetool raw`: send any command and print its statuses and the whole command buffer.
//!
//! The command goes to the firmware exactly as given. A known read-only query
//! ([`oce_mailbox::commands::READ_ONLY_QUERIES`]) is sent at once; any other command may change
//! the adapter, so it is confirmed like every change: asked on a terminal, refused without
//! `--yes` in a script (exit 4, nothing sent). The response offsets match `spec/protocol.md`
//! because the buffer is printed from byte 0, response header included.

use std::time::Duration;

use oce_mailbox::commands::read_only_query;
use oce_mailbox::header::HEADER_LEN;
use oce_mailbox::wrb::EMBEDDED_MAX;
use oce_mailbox::{RawCommand, RawResponse};
use oce_pci::PciFunction;
use serde::Serialize;

use crate::args::RawArgs;
use crate::error::{CliError, CliResult, ErrorCode, mailbox_error};
use crate::output::{Report, confirm, hexdump};
use crate::session::{Job, Session, stop_point};

/// Largest non-embedded buffer `raw` allocates (GET_FUNC_CONFIG needs 23252, WRITE_FLASHROM 32804).
const MAX_NON_EMBEDDED: usize = 64 * 1024;

/// The `raw` job.
#[derive(Debug)]
pub struct Raw {
    cmd: RawCommand,
    /// `--yes`: send a command that may change the adapter without asking.
    yes: bool,
}

impl Raw {
    /// Builds the command from the arguments, validating payload and length.
    pub fn from_args(args: &RawArgs, yes: bool) -> CliResult<Self> {
        let payload = match &args.payload {
            Some(text) => parse_hex(text)?,
            None => Vec::new(),
        };
        let embedded = !args.non_embedded;
        let len = match (args.length, embedded) {
            (Some(len), _) => len,
            (None, true) => EMBEDDED_MAX,
            (None, false) => {
                return Err(CliError::new(
                    ErrorCode::BadArgument,
                    "--non-embedded needs --length (the DMA buffer size)",
                ));
            }
        };
        let max = if embedded { EMBEDDED_MAX } else { MAX_NON_EMBEDDED };
        if len < HEADER_LEN || len > max {
            return Err(CliError::new(
                ErrorCode::BadArgument,
                format!(
                    "--length {len} is out of range: {HEADER_LEN}..={max} bytes for {} commands",
                    if embedded { "embedded" } else { "non-embedded" }
                ),
            ));
        }
        if payload.len() > len - HEADER_LEN {
            return Err(CliError::new(
                ErrorCode::BadArgument,
                format!(
                    "--payload is {} bytes but a {len}-byte command holds only {} after the header",
                    payload.len(),
                    len - HEADER_LEN
                ),
            ));
        }
        let cmd = RawCommand {
            subsystem: args.subsystem,
            opcode: args.opcode,
            version: args.version,
            domain: args.domain,
            embedded,
            len,
            payload,
            timeout: Duration::from_secs(args.timeout),
        };
        Ok(Self { cmd, yes })
    }
}

/// Parses hex with optional spaces, colons, dashes and a leading 0x.
pub fn parse_hex(text: &str) -> CliResult<Vec<u8>> {
    let t = text.trim();
    let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t);
    let cleaned: String = t.chars().filter(|c| !matches!(c, ' ' | ':' | '-' | '_' | '\n' | '\t')).collect();
    hex::decode(&cleaned).map_err(|e| CliError::new(ErrorCode::BadArgument, format!("--payload is not valid hex: {e}")))
}

/// What `raw` prints.
#[derive(Debug, Serialize)]
pub struct RawReport {
    subsystem: u8,
    opcode: u8,
    version: u8,
    embedded: bool,
    length: usize,
    base_status: u16,
    base_status_name: Option<&'static str>,
    additional_status: u8,
    additional_status_name: Option<&'static str>,
    response_length: u32,
    response: String,
}

impl Job for Raw {
    type Output = RawReport;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<RawReport> {
        let cmd = self.cmd;
        if read_only_query(cmd.subsystem, cmd.opcode).is_none() {
            confirm(
                self.yes,
                &format!(
                    "send subsystem {} opcode {} to {}, which is not a known read-only query and may change the adapter",
                    cmd.subsystem,
                    cmd.opcode,
                    session.device.describe()
                ),
            )?;
            stop_point("send the command")?;
        }
        let RawResponse { status, header, buffer } =
            session.mbox.execute_raw(&cmd).map_err(|e| mailbox_error("the raw command did not complete", &e))?;
        Ok(RawReport {
            subsystem: cmd.subsystem,
            opcode: cmd.opcode,
            version: cmd.version,
            embedded: cmd.embedded,
            length: cmd.len,
            base_status: status.base.raw(),
            base_status_name: status.base.c_name(),
            additional_status: status.additional.raw(),
            additional_status_name: status.additional.c_name(),
            response_length: header.response_length,
            response: hex::encode(&buffer),
        })
    }
}

impl Report for RawReport {
    fn text(&self) -> String {
        let name = |n: Option<&str>| n.map(|n| format!(" ({n})")).unwrap_or_default();
        let mut out = format!(
            "subsystem {} opcode {} version {} ({}, {} bytes)\nbase status        {}{}\nadditional status  {:#04x}{}\nresponse_length    {}\n",
            self.subsystem,
            self.opcode,
            self.version,
            if self.embedded { "embedded" } else { "non-embedded" },
            self.length,
            self.base_status,
            name(self.base_status_name),
            self.additional_status,
            name(self.additional_status_name),
            self.response_length,
        );
        out.push_str(&hexdump(&hex::decode(&self.response).unwrap_or_default()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_payload_forms() {
        assert_eq!(parse_hex("0x01 02:03-04").unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(parse_hex("").unwrap(), Vec::<u8>::new());
        assert_eq!(parse_hex("abc").unwrap_err().code, ErrorCode::BadArgument);
        assert_eq!(parse_hex("zz").unwrap_err().code, ErrorCode::BadArgument);
    }
}
