//! Output: one JSON document on stdout with `--json`, readable text otherwise; confirmations on a
//! terminal, refusal without `--yes` in a script (design.md §7).

use std::borrow::Cow;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::Duration;

use oce_pci::signals;
use serde::Serialize;

use crate::error::{CliError, CliResult, ErrorCode, stopped};

/// `--quiet`: nothing but errors on stderr, and no text report on stdout.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Records `--quiet` for the whole process (set once, before any command runs).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// `--quiet` was given: warnings, progress and notices stay off stderr.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Prints a warning (`ocetool: warning: ...`) on stderr, unless `--quiet`.
pub fn warn(message: &str) {
    if !quiet() {
        let _ = writeln!(std::io::stderr().lock(), "ocetool: warning: {}", printable(message));
    }
}

/// The schema every JSON document names in its `schema` field. Fields scripts key on are only
/// ever added under one schema; a rename or removal would be `ocetool/2`.
pub const SCHEMA: &str = "ocetool/1";

/// A command's result: serialisable for `--json`, and printable as text.
pub trait Report: Serialize {
    /// The human-readable form, ending in a newline.
    fn text(&self) -> String;

    /// The exit code that goes with the report: 0, unless the report itself is a "no" a script
    /// acts on (`doctor` with a failing check: 1; `fw verify` of an image that cannot be flashed: 4).
    fn exit_code(&self) -> u8 {
        0
    }
}

/// A JSON document: the schema first, then the command's own fields.
#[derive(Serialize)]
struct Document<'a, T: Serialize + ?Sized> {
    schema: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

/// Prints `report` as JSON or text on stdout; with `--quiet`, the text form not at all.
pub fn print_report(report: &dyn ErasedReport, json: bool) {
    if !json && quiet() {
        return;
    }
    let out = if json { report.json() } else { report.text_form() };
    let mut stdout = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) is not an error worth a panic.
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
}

/// Object-safe view of a [`Report`], so `main` can print any command's result.
pub trait ErasedReport {
    /// The JSON document, pretty-printed, with a trailing newline.
    fn json(&self) -> String;
    /// The text form.
    fn text_form(&self) -> String;
    /// [`Report::exit_code`].
    fn exit_code(&self) -> u8;
}

impl<T: Report> ErasedReport for T {
    fn json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&Document { schema: SCHEMA, body: self }).unwrap_or_else(|e| {
            format!(
                "{{\"schema\": \"{SCHEMA}\", \"error\": {{\"kind\": \"failed\", \"code\": \"internal-error\", \"message\": \"cannot encode the result: {e}\"}}}}"
            )
        });
        s.push('\n');
        s
    }
    fn text_form(&self) -> String {
        self.text()
    }
    fn exit_code(&self) -> u8 {
        Report::exit_code(self)
    }
}

/// Prints an error: JSON on stdout with `--json`, one line (plus causes with `-v`) on stderr
/// otherwise.
pub fn print_error(err: &CliError, json: bool, verbose: u8) {
    if json {
        let doc = serde_json::json!({
            "schema": SCHEMA,
            "error": { "kind": err.kind().name(), "code": err.code.name(), "message": err.message, "causes": err.causes }
        });
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "ocetool: {}", printable(&err.message));
        if verbose > 0 {
            for cause in &err.causes {
                let _ = writeln!(stderr, "  caused by: {}", printable(cause));
            }
        }
    }
}

/// Asks for confirmation of a change.
///
/// With `--yes` it proceeds. On a terminal it asks on stderr and reads a line from stdin. Without
/// a terminal it refuses (exit 4) rather than hang a script. Ctrl-C (or SIGTERM) at the prompt
/// ends the wait at once: exit 130 (143), nothing changed.
pub fn confirm(yes: bool, action: &str) -> CliResult<()> {
    if yes {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(CliError::new(
            ErrorCode::ConfirmationRequired,
            format!("refusing to {action} without confirmation: stdin is not a terminal; pass --yes"),
        ));
    }
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "About to {action}. Continue? [y/N] ");
    let _ = stderr.flush();
    let line = read_answer().inspect_err(|_| {
        let _ = writeln!(stderr);
    })?;
    match line.trim() {
        "y" | "Y" | "yes" | "YES" | "Yes" => Ok(()),
        _ => Err(CliError::new(ErrorCode::ConfirmationRequired, format!("did not {action}: not confirmed"))),
    }
}

/// Reads one line of stdin while watching for a stop request.
///
/// The signal handlers keep interrupted system calls restarting (`SA_RESTART`), so a firmware
/// command in flight is never cut short, and `read_line` retries an interrupted read anyway; a
/// read on the main thread would sit out Ctrl-C until Enter. So a helper thread reads, and this
/// thread polls the stop flag between waits for its answer; on a stop request the process leaves
/// the helper blocked and exits.
fn read_answer() -> CliResult<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = tx.send(std::io::stdin().lock().read_line(&mut line).map(|_| line));
    });
    loop {
        if let Some(signal) = signals::pending() {
            return Err(stopped(signal).hint("nothing was changed"));
        }
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(Ok(line)) => return Ok(line),
            Ok(Err(e)) => {
                return Err(CliError::new(ErrorCode::ConfirmationRequired, format!("cannot read the answer: {e}")));
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(CliError::new(ErrorCode::ConfirmationRequired, "cannot read the answer: stdin closed"));
            }
        }
    }
}

/// Text taken from a file or the device, made safe for a terminal: control characters (escape
/// sequences, carriage returns, NULs) are written as escapes (`\u{1b}`, `\r`), everything else as
/// is. JSON output needs no such care: serde_json escapes them.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect(),
    )
}

/// Formats bytes as a hex dump with absolute offsets, 16 bytes a line, so offsets match the spec.
pub fn hexdump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (i, chunk) in bytes.chunks(16).enumerate() {
        let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let ascii: String = chunk.iter().map(|&b| if (0x20..0x7f).contains(&b) { b as char } else { '.' }).collect();
        out.push_str(&format!("  {:04x}  {:<47}  {}\n", i * 16, hex.join(" "), ascii));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_in_text() {
        assert_eq!(printable("OCe14102"), "OCe14102");
        assert_eq!(printable("a\u{1b}[2Jb\r\n\0"), "a\\u{1b}[2Jb\\r\\n\\u{0}");
        assert_eq!(printable("caf\u{e9}"), "caf\u{e9}", "printable non-ASCII stays");
    }

    #[test]
    fn hexdump_offsets_and_ascii() {
        let d = hexdump(b"0123456789abcdefXY");
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("  0000  30 31 32"));
        assert!(lines[0].ends_with("0123456789abcdef"));
        assert!(lines[1].starts_with("  0010  58 59"));
    }
}
