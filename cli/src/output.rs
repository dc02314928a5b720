//! Output: one JSON document on stdout with `--json`, readable text otherwise; confirmations on a
//! terminal, refusal without `--yes` in a script (design.md §7).

use std::io::{BufRead, IsTerminal, Write};

use serde::Serialize;

use crate::error::{CliError, CliResult, ErrorKind};

/// A command's result: serialisable for `--json`, and printable as text.
pub trait Report: Serialize {
    /// The human-readable form, ending in a newline.
    fn text(&self) -> String;

    /// The exit code that goes with the report: 0, unless the report itself is a "no" a script
    /// acts on (`doctor` with a failing check: 1).
    fn exit_code(&self) -> u8 {
        0
    }
}

/// Prints `report` as JSON or text on stdout.
pub fn print_report(report: &dyn ErasedReport, json: bool) {
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
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            format!("{{\"error\": {{\"kind\": \"failed\", \"message\": \"cannot encode the result: {e}\"}}}}")
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
            "error": { "kind": err.kind.name(), "message": err.message, "causes": err.causes }
        });
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "ocetool: {}", err.message);
        if verbose > 0 {
            for cause in &err.causes {
                let _ = writeln!(stderr, "  caused by: {cause}");
            }
        }
    }
}

/// Asks for confirmation of a change.
///
/// With `--yes` it proceeds. On a terminal it asks on stderr and reads a line from stdin. Without
/// a terminal it refuses (exit 4) rather than hang a script.
pub fn confirm(yes: bool, action: &str) -> CliResult<()> {
    if yes {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(CliError::new(
            ErrorKind::Refused,
            format!("refusing to {action} without confirmation: stdin is not a terminal; pass --yes"),
        ));
    }
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "About to {action}. Continue? [y/N] ");
    let _ = stderr.flush();
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .map_err(|e| CliError::new(ErrorKind::Refused, format!("cannot read the answer: {e}")))?;
    match line.trim() {
        "y" | "Y" | "yes" | "YES" | "Yes" => Ok(()),
        _ => Err(CliError::new(ErrorKind::Refused, format!("did not {action}: not confirmed"))),
    }
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
    fn hexdump_offsets_and_ascii() {
        let d = hexdump(b"0123456789abcdefXY");
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("  0000  30 31 32"));
        assert!(lines[0].ends_with("0123456789abcdef"));
        assert!(lines[1].starts_with("  0010  58 59"));
    }
}
