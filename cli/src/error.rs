//! The CLI's error: a kind that fixes the exit code and the JSON `error.kind`, a one-line message
//! that says what failed and what to do next, and the cause chain for `-v` (design.md §7).

use std::fmt;

/// What kind of failure, which decides the exit code (README "Exit codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The operation failed: the device or its firmware reported an error, or did not answer.
    Failed,
    /// The command line is wrong.
    Usage,
    /// No such device, or a device ocetool cannot drive.
    NoDevice,
    /// A safety check refused the operation (no `--yes`, incompatible image, driver bound, ...).
    Refused,
    /// Another ocetool holds the device.
    Busy,
    /// Stopped by SIGINT after the command in flight finished.
    Interrupted,
    /// Stopped by SIGTERM after the command in flight finished.
    Terminated,
}

impl ErrorKind {
    /// The process exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Failed => 1,
            Self::Usage => 2,
            Self::NoDevice => 3,
            Self::Refused => 4,
            Self::Busy => 5,
            Self::Interrupted => 130,
            Self::Terminated => 143,
        }
    }

    /// The stable name used in JSON (`error.kind`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Failed => "failed",
            Self::Usage => "usage",
            Self::NoDevice => "no_device",
            Self::Refused => "refused",
            Self::Busy => "busy",
            Self::Interrupted => "interrupted",
            Self::Terminated => "terminated",
        }
    }
}

/// An error as the user sees it.
#[derive(Debug)]
pub struct CliError {
    /// The kind.
    pub kind: ErrorKind,
    /// One line: what failed and what to do next.
    pub message: String,
    /// The causes, outermost first (shown with `-v` and in JSON).
    pub causes: Vec<String>,
}

impl CliError {
    /// An error of `kind` with `message` and no cause.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), causes: Vec::new() }
    }

    /// An error whose causes are the `source()` chain of `err`. The one-line message is
    /// `context`, the error's own text and then each cause, so it names the operation that failed
    /// and the symptom underneath (a CRC query that failed *because* the completion lacked VALID
    /// says both). A cause whose text an outer message already contains is not repeated.
    pub fn from_error(kind: ErrorKind, context: &str, err: &(dyn std::error::Error + 'static)) -> Self {
        let mut causes = Vec::new();
        let mut source = err.source();
        while let Some(e) = source {
            causes.push(e.to_string());
            source = e.source();
        }
        let mut message = if context.is_empty() { err.to_string() } else { format!("{context}: {err}") };
        for cause in &causes {
            if !message.contains(cause.as_str()) {
                message.push_str(": ");
                message.push_str(cause);
            }
        }
        Self { kind, message, causes }
    }

    /// Appends advice ("what to do next") to the message.
    pub fn hint(mut self, hint: &str) -> Self {
        self.message.push_str("; ");
        self.message.push_str(hint);
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Shorthand for results in the CLI.
pub type CliResult<T> = Result<T, CliError>;
