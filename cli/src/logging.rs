//! What ocetool tells besides its result, and the one place a `tracing` subscriber is installed:
//!
//! - `-v`: the steps taken (the libraries' INFO events: POST wait, fw_init, reading DCBX, ...),
//!   one `ocetool: step: ...` line each on stderr (the cause chain of an error is `output.rs`'s);
//! - `-vv`: also one `ocetool: fw: ...` line per firmware command (the mailbox driver's DEBUG
//!   events, `oce_mailbox::trace`): subsystem, opcode, name, version, request and response
//!   lengths, base/additional status, time taken;
//! - `-vvv`: also the emulated adapter's own event log (`emulator.rs`);
//! - `--log-file FILE`: every firmware command and step, with the command's arguments and result,
//!   appended to FILE as JSON lines, between a `start` line (version, arguments) and an `end`
//!   line (exit code).
//!
//! The log file is opened for appending without following a symlink and without blocking (a named
//! pipe with no reader cannot hang the boot hook in `open`), and only a regular file that the
//! invoking user owns is kept (root never appends to another user's file, which could be a hard
//! link to anything of theirs); each line goes out in one `write` of its own (no buffer a killed
//! process could lose, nothing interleaved with another ocetool appending to the same file), and a
//! file that cannot be opened or written costs a warning, never the operation: the boot hook must
//! converge the adapter even when the log's filesystem is read-only.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use oce_mailbox::trace::COMMAND_TARGET;
use oce_pci::PciError;
use oce_pci::trust::{self, Owners};
use serde_json::{Map, Value, json};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::Registry;

/// How a step line starts on stderr.
pub const STEP_PREFIX: &str = "ocetool: step: ";
/// How a firmware command line starts on stderr.
pub const COMMAND_PREFIX: &str = "ocetool: fw: ";

/// The log file, once opened (written by the subscriber and by [`finish`]).
static LOG_FILE: OnceLock<Mutex<File>> = OnceLock::new();

/// Installs the subscriber for `verbose` (`-v` count) and `log_file`; with neither, none, so
/// nothing is formatted or measured. `argv` goes into the log's `start` line.
pub fn init(verbose: u8, log_file: Option<&Path>, argv: &[std::ffi::OsString]) {
    let file = log_file.and_then(|path| match open_log(path) {
        Ok(file) => Some(file),
        Err(e) => {
            crate::output::warn(&format!("cannot open the log file: {e}; carrying on without it"));
            None
        }
    });
    let logging = file.is_some();
    if let Some(file) = file {
        let _ = LOG_FILE.set(Mutex::new(file));
        let args: Vec<String> = argv.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
        append(json!({"event": "start", "version": env!("CARGO_PKG_VERSION"), "arguments": args}));
    }
    let commands = if verbose >= 2 || logging { LevelFilter::DEBUG } else { LevelFilter::OFF };
    let steps = if verbose >= 1 || logging { LevelFilter::INFO } else { LevelFilter::OFF };
    if commands == LevelFilter::OFF && steps == LevelFilter::OFF {
        return;
    }
    let filter = Targets::new().with_target(COMMAND_TARGET, commands).with_default(steps);
    let layer = Output { verbose, logging }.with_filter(filter);
    let _ = tracing::subscriber::set_global_default(Registry::default().with(layer));
}

/// Writes the log's `end` line with the process's exit code.
pub fn finish(exit_code: u8) {
    append(json!({"event": "end", "exit_code": exit_code}));
}

/// Opens `path` for appending (created 0640 if missing), refusing a symlink, anything but a
/// regular file, and a file another user owns (all checked on the open descriptor). The open is
/// non-blocking, so a FIFO without a reader fails at once instead of waiting for one;
/// `O_NONBLOCK` does not change writes to a regular file.
fn open_log(path: &Path) -> Result<File, PciError> {
    let file = trust::open_no_follow(path, OpenOptions::new().append(true).create(true).mode(0o640))?;
    trust::check_owned_file(path, &file, Owners::only_me())?;
    Ok(file)
}

/// Appends one JSON line, stamped with the time and the process id, in one write.
fn append(mut line: Value) {
    let Some(file) = LOG_FILE.get() else { return };
    if let Value::Object(map) = &mut line {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        map.insert("time".into(), json!(now.as_secs_f64()));
        map.insert("pid".into(), json!(std::process::id()));
    }
    let mut bytes = line.to_string().into_bytes();
    bytes.push(b'\n');
    if let Ok(mut f) = file.lock() {
        // A full disk loses log lines, never the operation.
        let _ = f.write_all(&bytes);
    }
}

/// The layer that prints steps and commands on stderr and appends them to the log file.
struct Output {
    verbose: u8,
    logging: bool,
}

impl<S: Subscriber> Layer<S> for Output {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut map = fields.0;
        if event.metadata().target() == COMMAND_TARGET {
            if self.verbose >= 2 {
                eprintln!("{COMMAND_PREFIX}{}", command_line(&map));
            }
            if self.logging {
                map.insert("event".into(), json!("command"));
                append(Value::Object(map));
            }
        } else if *event.metadata().level() <= Level::INFO {
            if self.verbose >= 1 {
                eprintln!("{STEP_PREFIX}{}", step_line(&map));
            }
            if self.logging {
                map.insert("event".into(), json!("step"));
                map.insert("target".into(), json!(event.metadata().target()));
                append(Value::Object(map));
            }
        }
    }
}

/// One trace line: `GET_FW_VERSION (subsystem 1 COMMON, opcode 35, v0): request 64 B, response
/// 64 B, status 0/0, 120 us`; a failed status is spelt out, a command with no answer says why.
fn command_line(f: &Map<String, Value>) -> String {
    let text = |k: &str| f.get(k).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
    let get = |k: &str| text(k).unwrap_or_else(|| "?".into());
    let mut line = format!(
        "{} (subsystem {} {}, opcode {}, v{}): request {} B",
        get("command"),
        get("subsystem"),
        get("subsystem_name"),
        get("opcode"),
        get("version"),
        get("request_len")
    );
    match (text("base_status"), text("additional_status")) {
        (Some(base), Some(additional)) => {
            line.push_str(&format!(", response {} B, status {base}/{additional}", get("response_len")));
            if base != "0" || additional != "0" {
                line.push_str(&format!(" ({})", get("status")));
            }
        }
        _ => line.push_str(&format!(", no completion: {}", get("error"))),
    }
    line.push_str(&format!(", {} us", get("elapsed_us")));
    line
}

/// One step line: the message, then the other fields as `name=value`.
fn step_line(f: &Map<String, Value>) -> String {
    let mut line = f.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
    for (k, v) in f.iter().filter(|(k, _)| *k != "message") {
        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        line.push_str(&format!(" {k}={v}"));
    }
    line
}

/// An event's fields as JSON values: numbers and booleans as such, the rest as text.
#[derive(Default)]
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), json!(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), json!(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), json!(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), json!(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), json!(format!("{value:?}")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn command_lines_name_the_numbers_and_spell_out_a_failure() {
        let ok = map(json!({"command": "GET_FW_VERSION", "subsystem": 1, "subsystem_name": "COMMON", "opcode": 35,
            "version": 0, "request_len": 64, "response_len": 64, "base_status": 0, "additional_status": 0,
            "status": "base status 0 (MCC_STATUS_SUCCESS), additional status 0 (none)", "elapsed_us": 120}));
        assert_eq!(
            command_line(&ok),
            "GET_FW_VERSION (subsystem 1 COMMON, opcode 35, v0): request 64 B, response 64 B, status 0/0, 120 us"
        );
        let mut failed = ok.clone();
        failed.insert("base_status".into(), json!(3));
        failed.insert("status".into(), json!("base status 3 (MCC_STATUS_ILLEGAL_FIELD)"));
        assert!(command_line(&failed).contains("status 3/0 (base status 3 (MCC_STATUS_ILLEGAL_FIELD))"));
        let mut lost = ok;
        lost.remove("base_status");
        lost.insert("error".into(), json!("the adapter stopped answering"));
        assert!(command_line(&lost).contains("no completion: the adapter stopped answering"));
    }

    #[test]
    fn step_lines_put_the_message_first() {
        let step = map(json!({"message": "switching the locate LED", "on": true, "port": 0}));
        assert_eq!(step_line(&step), "switching the locate LED on=true port=0");
    }
}
