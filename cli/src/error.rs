//! The CLI's error: a kind that fixes the exit code and the JSON `error.kind`, a one-line message
//! that says what failed and what to do next, and the cause chain for `-v` (design.md §7).
//!
//! This is also the one place where every library error becomes a CLI error: which exit code its
//! variant calls for, and the advice that goes with it (design.md §10).

use std::fmt;

use oce_emulator::EmulatorError;
use oce_emulator_serve::SocketError;
use oce_emulator_serve::control::ControlError;
use oce_firmware::{FlashError, ImageError};
use oce_mailbox::adapter::{DumpError, ProfileError};
use oce_mailbox::{BaseStatus, MailboxError};
use oce_pci::PciError;
use oce_pci::signals::{self, Signal};

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
        let causes = oce_pci::error_causes(err);
        let head = if context.is_empty() { err.to_string() } else { format!("{context}: {err}") };
        let message = oce_pci::join_causes(head, &causes);
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

/// Turns a PCI-layer error into a CLI error with the exit code its kind calls for.
pub fn pci_error(context: &str, e: &PciError) -> CliError {
    let kind = match e {
        PciError::Untrusted { .. } | PciError::Symlink { .. } => {
            return CliError::from_error(ErrorKind::Refused, context, e).hint(trust_hint(e));
        }
        PciError::Interrupted { signal: Signal::Interrupt } => ErrorKind::Interrupted,
        PciError::Interrupted { signal: Signal::Terminate } => ErrorKind::Terminated,
        PciError::DriverBound { .. } | PciError::AdapterFunctionBound { .. } | PciError::GroupNotViable { .. } => {
            ErrorKind::Refused
        }
        PciError::VfioGroupBusy { .. } => ErrorKind::Busy,
        PciError::BadAddress { .. } | PciError::NotAFile { .. } => ErrorKind::Usage,
        PciError::VfioPciNotLoaded { .. }
        | PciError::NoIommuGroup { .. }
        | PciError::SysfsBackend { .. }
        | PciError::SysfsBackendTranslated { .. }
        | PciError::VfioPermission { .. }
        | PciError::SysfsPermission { .. }
        | PciError::LockedDown { .. } => ErrorKind::NoDevice,
        e if e.is_no_device() => ErrorKind::NoDevice,
        _ => ErrorKind::Failed,
    };
    CliError::from_error(kind, context, e)
}

/// What to do about a path [`oce_pci::trust`] refused.
fn trust_hint(e: &PciError) -> &'static str {
    match e {
        PciError::Symlink { .. } => "ocetool never follows a link there: put the file or directory itself in its place",
        _ => {
            "ocetool acts only on what no one but root (and the invoking user) can change: fix its owner (chown) \
             or mode (chmod go-w)"
        }
    }
}

/// The kind of a problem with a file the user named (an image, a configuration, an output
/// file): a path that names no usable file — missing, a directory, a named pipe, a device node, a
/// socket, a symbolic link loop, a path through something that is not a directory, a name too
/// long, or no permission — is usage (2), the argument is wrong; a file someone else could change
/// is refused (4); any other I/O error (a disk error, a full or read-only file system) is a
/// failure (1).
pub fn file_kind(e: &PciError) -> ErrorKind {
    match e {
        PciError::Untrusted { .. } | PciError::Symlink { .. } => ErrorKind::Refused,
        PciError::NotAFile { .. } => ErrorKind::Usage,
        PciError::Io { source, .. } => io_kind(source),
        _ => ErrorKind::Failed,
    }
}

/// [`file_kind`] of an OS error on a path the user named.
pub fn io_kind(e: &std::io::Error) -> ErrorKind {
    const NAMES_NO_USABLE_FILE: [i32; 5] = [libc::ENOENT, libc::ENOTDIR, libc::EISDIR, libc::ELOOP, libc::ENAMETOOLONG];
    if e.raw_os_error().is_some_and(|code| NAMES_NO_USABLE_FILE.contains(&code))
        || matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied)
    {
        ErrorKind::Usage
    } else {
        ErrorKind::Failed
    }
}

/// The error for a file the user named that cannot be used ([`file_kind`]), after `context`.
pub fn file_error(context: &str, e: &PciError) -> CliError {
    let err = CliError::from_error(file_kind(e), context, e);
    match e {
        PciError::Untrusted { .. } | PciError::Symlink { .. } => err.hint(trust_hint(e)),
        _ => err,
    }
}

/// The error for a path where ocetool keeps a file of its own (a lock file): anything planted
/// there — a link, a named pipe or other non-regular file, another user's file — is refused (4);
/// any other I/O error is a failure (1).
pub fn own_file_error(context: &str, e: &PciError) -> CliError {
    match e {
        PciError::NotAFile { .. } => CliError::from_error(ErrorKind::Refused, context, e)
            .hint("that is not ocetool's file: find out who put it there, and remove it"),
        PciError::Untrusted { .. } | PciError::Symlink { .. } => pci_error(context, e),
        _ => CliError::from_error(ErrorKind::Failed, context, e),
    }
}

/// The error for a stop request (Ctrl-C, SIGTERM) that arrived: exit 130 or 143.
pub fn stopped(signal: Signal) -> CliError {
    pci_error("", &PciError::Interrupted { signal })
}

/// Turns a mailbox error into a one-line CLI error with advice.
pub fn mailbox_error(context: &str, e: &MailboxError) -> CliError {
    if let (MailboxError::Stopped { .. }, Some(signal)) = (e, signals::pending()) {
        return pci_error(context, &PciError::Interrupted { signal })
            .hint("nothing was changed; run the command again when the adapter has finished booting");
    }
    let hint = match e {
        MailboxError::DeviceGone { .. } | MailboxError::ConfigGone => {
            Some("check that the adapter is still present (lspci) and power-cycle it")
        }
        MailboxError::NotReady { .. } => {
            Some("the firmware is hung or busy: run `ocetool reset`, or power-cycle the adapter")
        }
        MailboxError::PostTimeout { .. } | MailboxError::PostError { .. } => {
            Some("the firmware did not boot: power-cycle the adapter; if it persists, the flash may need recovery")
        }
        MailboxError::UnrecoverableError { .. } => {
            Some("the adapter needs a reset: run `ocetool reset` or power-cycle it")
        }
        MailboxError::InvalidCompletion { .. } | MailboxError::TagMismatch { .. } | MailboxError::Malformed { .. } => {
            Some("the firmware answered out of protocol; retry, and reset the adapter if it persists")
        }
        MailboxError::CommandFailed { status, .. } if status.base == BaseStatus::UnauthorizedRequest => {
            Some("this PCI function may not do that (a virtual function?): use the adapter's physical function")
        }
        MailboxError::CommandFailed { status, .. } if status.base == BaseStatus::IllegalRequest => {
            Some("the adapter's firmware does not implement this command")
        }
        _ => None,
    };
    let err = CliError::from_error(ErrorKind::Failed, context, e);
    match hint {
        Some(h) => err.hint(h),
        None => err,
    }
}

/// An error of the chip reset itself: the next remedy is a power cycle, not another reset.
pub fn reset_error(context: &str, e: &MailboxError) -> CliError {
    CliError::from_error(ErrorKind::Failed, context, e)
        .hint("power-cycle the adapter (reboot the host; on the emulator: `ocetool emulator power-cycle`)")
}

/// Maps a profile choice the adapter cannot make: a target it has no profile for is usage (2), a
/// change the adapter did not keep is a failure (1).
pub fn profile_error(e: ProfileError) -> CliError {
    let kind = match e {
        ProfileError::NotApplied { .. } => ErrorKind::Failed,
        _ => ErrorKind::Usage,
    };
    let err = CliError::from_error(kind, "", &e);
    match e {
        ProfileError::NotApplied { .. } => {
            err.hint("the adapter did not keep the change; retry, and check the firmware")
        }
        _ => err.hint("see `ocetool profiles`"),
    }
}

/// Maps an image-layer error: a file that cannot be used as the image is as [`file_kind`] says
/// (usage, 2, for a missing or unreadable one or one that is not a regular file), an image or a
/// version the policy refuses 4.
pub fn image_error(context: &str, e: &ImageError) -> CliError {
    // For a file that cannot be read, the OS error is the symptom worth the one line.
    let err = match e {
        ImageError::Io(io) => return file_error(context, io),
        _ => CliError::from_error(ErrorKind::Refused, context, e),
    };
    match e {
        ImageError::Downgrade { .. } | ImageError::VersionUnordered { .. } => {
            err.hint("pass --allow-downgrade to flash it anyway")
        }
        _ => err,
    }
}

/// Maps a flash-layer error: an adapter ocetool cannot flash is 3, a stop request 130/143, a
/// device or firmware failure 1, and an image problem as [`image_error`] says.
pub fn flash_error(context: &str, e: &FlashError) -> CliError {
    use FlashError as E;
    let kind = match e {
        E::Image(image) => return image_error(context, image),
        E::Stopped { .. } => match signals::pending() {
            Some(Signal::Terminate) => ErrorKind::Terminated,
            _ => ErrorKind::Interrupted,
        },
        E::UnknownDevice { .. } | E::UnsupportedChip { .. } => ErrorKind::NoDevice,
        E::Device { .. }
        | E::CrcQueryFailed { .. }
        | E::FlashIncomplete { .. }
        | E::SignatureMissing { .. }
        | E::SignatureInvalid { .. }
        | E::CrcMismatch { .. }
        | E::WriteRejected { .. }
        | E::WriteFailed { .. } => ErrorKind::Failed,
        _ => ErrorKind::Refused,
    };
    let err = CliError::from_error(kind, context, e);
    match e {
        E::Stopped { .. } => {
            err.hint("the sections written are complete; run the same `ocetool fw update` again to finish")
        }
        _ => err,
    }
}

/// Maps an emulator error to the CLI: a state directory that cannot be used is "no such device"
/// (exit 3), one that is not safely the user's is refused (4), and the files are never touched.
pub fn emulator_error(e: &EmulatorError) -> CliError {
    let kind = match e {
        EmulatorError::AlreadyExists { .. } | EmulatorError::Untrusted { .. } => ErrorKind::Refused,
        _ => ErrorKind::NoDevice,
    };
    let err = CliError::from_error(kind, "", e);
    match e {
        EmulatorError::AlreadyExists { .. } => err,
        EmulatorError::Untrusted { source: PciError::Untrusted { .. }, .. } => err.hint(
            "an emulator's state directory must be the invoking user's alone: fix its owner (chown) or mode \
             (chmod go-w), or use another emu:DIR",
        ),
        EmulatorError::Untrusted { source, .. } => err.hint(match source {
            PciError::Symlink { .. } => trust_hint(source),
            _ => "that is not the emulator's file: find out who put it there, and move it away",
        }),
        EmulatorError::Io { .. } | EmulatorError::Flash(_) => {
            err.hint("check the directory's permissions and free space")
        }
        _ => err.hint("the state directory was left as it is: repair or move it, or use another emu:DIR"),
    }
}

/// Maps a failed firmware dump: a failed command as every mailbox error; a log the firmware
/// reports as empty or impossibly large is a failure of the dump.
pub fn dump_error(e: &DumpError) -> CliError {
    match e {
        DumpError::Mailbox(m) => mailbox_error("cannot read the firmware's diagnostic dump", m),
        _ => CliError::from_error(ErrorKind::Failed, "cannot read the firmware's diagnostic dump", e)
            .hint("retry; if it persists, the firmware keeps no diagnostic log to send"),
    }
}

/// Maps a failure to create `ocetool emulator serve`'s socket: the operation failed (exit 1),
/// with what to do about the path.
pub fn socket_error(e: &SocketError) -> CliError {
    let err = CliError::from_error(ErrorKind::Failed, "cannot serve the emulated adapter", e);
    match e {
        SocketError::InUse { .. } => err.hint("another server listens there: stop it, or choose another --socket"),
        _ => err,
    }
}

/// Maps a failed request to a running server's control socket: the server's refusal is a bad
/// request (exit 2, nothing changed); anything else, the operation failed (exit 1).
pub fn control_error(e: &ControlError) -> CliError {
    match e {
        ControlError::Refused(why) => CliError::new(ErrorKind::Usage, format!("the running server refused: {why}")),
        _ => CliError::from_error(ErrorKind::Failed, "cannot reach the server that holds the adapter", e)
            .hint("check that `ocetool emulator serve` still runs, then retry"),
    }
}
