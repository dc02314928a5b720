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

/// Declares [`ErrorCode`]: each code with its stable name, the kind (so the exit code) it always
/// has, and its meaning, which the README's "Error codes" table repeats word for word.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $kind:ident, $meaning:literal;)*) => {
        /// Why an operation failed, finer than its kind: the JSON `error.code` scripts switch on.
        /// A code always comes with the same kind, so the same exit code (README "Error codes").
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in the README's order.
            pub const ALL: &[ErrorCode] = &[$(Self::$variant,)*];

            /// The stable kebab-case name (`error.code`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            /// The kind, which fixes the exit code.
            pub fn kind(self) -> ErrorKind {
                match self {
                    $(Self::$variant => ErrorKind::$kind,)*
                }
            }

            /// What the code means, as the README says it.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(Self::$variant => $meaning,)*
                }
            }
        }
    };
}

error_codes! {
    /// The firmware answered a command with an error status, or did not keep a change it accepted.
    CommandFailed = "command-failed", Failed,
        "the adapter's firmware refused or failed a command (an error status), or did not keep a change it accepted";
    /// Register or configuration space reads return all ones.
    DeviceGone = "device-gone", Failed,
        "the adapter stopped answering (reads return 0xffffffff): it left the bus or hung; power-cycle it";
    /// The mailbox never became ready.
    FirmwareNotReady = "firmware-not-ready", Failed,
        "the firmware did not become ready for a command in time (hung or busy): `ocetool reset` or a power cycle";
    /// POST did not finish, or failed.
    PostFailed = "post-failed", Failed,
        "the firmware did not finish booting (POST stuck, failed, or no valid SLI interface)";
    /// The adapter reports an unrecoverable error.
    UnrecoverableError = "unrecoverable-error", Failed,
        "the adapter reports an unrecoverable error (UE): `ocetool reset` or a power cycle";
    /// The firmware answered out of protocol.
    ProtocolError = "protocol-error", Failed,
        "the firmware answered out of protocol (a completion without VALID, wrong tags, a malformed or oversized response)";
    /// The chip reset itself failed.
    ResetFailed = "reset-failed", Failed,
        "the chip reset did not bring the firmware back; the next remedy is a power cycle";
    /// Writing the flash failed.
    FlashFailed = "flash-failed", Failed,
        "writing the flash failed or the adapter rejected a section (CRC, signature); sections written are whole, run the update again";
    /// Moving a function between drivers failed.
    HandoffFailed = "handoff-failed", Failed,
        "the driver hand-off failed: a sysfs write, a driver that did not let go of the function or take it back, or the record of a stopped ocetool's hand-off that cannot be used or undone";
    /// The host would not let ocetool reach the function.
    HostFailed = "host-failed", Failed,
        "the host would not let ocetool reach the function: reading sysfs, opening it through VFIO or sysfs, mapping its BARs or DMA memory";
    /// An I/O error on a file or directory ocetool could open.
    IoError = "io-error", Failed,
        "an I/O error on a file or directory ocetool could use (a disk error, a full or read-only file system)";
    /// `emulator serve` cannot serve, or the running server cannot be reached.
    ServeFailed = "serve-failed", Failed,
        "`emulator serve`: the socket cannot be created, the VM broke the protocol, or the running server cannot be reached";
    /// A bug in ocetool: an invariant it checks did not hold.
    InternalError = "internal-error", Failed,
        "an invariant ocetool checks did not hold (a bug: report it)";
    /// A malformed or missing argument.
    BadArgument = "bad-argument", Usage,
        "a malformed or missing argument, an unknown option, bad hex or a bad length for `raw`, a bad fault spec";
    /// A profile the adapter does not have.
    UnknownProfile = "unknown-profile", Usage,
        "the adapter has no such profile, or the name matches several: see `ocetool profiles`";
    /// A named file that cannot be used.
    UnusableFile = "unusable-file", Usage,
        "a file the user named (an image, an output file) is missing, not a regular file, a link loop, or not readable or writable";
    /// A bad `apply` configuration.
    BadConfig = "bad-config", Usage,
        "the `apply` configuration is missing, unreadable, not UTF-8 or TOML, or has an unknown key, a wrong type or an unknown profile";
    /// No such device.
    NoSuchDevice = "no-such-device", NoDevice,
        "no such PCI device, or no `--device` and not exactly one OCe14000 adapter found";
    /// A device ocetool does not drive.
    UnsupportedDevice = "unsupported-device", NoDevice,
        "not an OCe14000 NIC function (another device or chip, an FCoE or iSCSI function), or a virtual function where the PF is needed";
    /// The host lacks what the backend needs.
    BackendUnavailable = "backend-unavailable", NoDevice,
        "no backend can reach the function: vfio-pci not loaded, no IOMMU group, no permission, lockdown, no free huge page, a `--backend` the function cannot use";
    /// The emulator's state directory cannot be used.
    BadEmulatorState = "bad-emulator-state", NoDevice,
        "`emu:DIR` is not a directory or holds no emulator state, or its state is missing, corrupt, of another schema or inconsistent";
    /// A change asked for no confirmation.
    ConfirmationRequired = "confirmation-required", Refused,
        "a change needs confirmation: no `--yes` and stdin is not a terminal, or the answer at the prompt was not yes";
    /// A driver holds the function.
    BoundToDriver = "bound-to-driver", Refused,
        "a driver holds the function, or another function of the adapter in its IOMMU group, and `--unbind` was not given";
    /// A foreign device, or a storage function of the card, in the IOMMU group.
    GroupNotViable = "group-not-viable", Refused,
        "a device that is not a function of this adapter, or the adapter's FCoE or iSCSI function, shares its IOMMU group and is held by a host driver ocetool never unbinds";
    /// Another function of the card stays on a host driver through a reset.
    CardInUse = "card-in-use", Refused,
        "a `reset` would restart another function of the card that stays on a host driver";
    /// Not a valid image.
    InvalidImage = "invalid-image", Refused,
        "the file is not a flashable UFI image (truncated, no flash directory, sections out of bounds, ...)";
    /// An image for another adapter.
    IncompatibleImage = "incompatible-image", Refused,
        "the image is not for this adapter (chip or ASIC revision)";
    /// An older image without `--allow-downgrade`.
    DowngradeRefused = "downgrade-refused", Refused,
        "the image is older than the firmware on flash (or not comparable), and `--allow-downgrade` was not given";
    /// A path someone else could change.
    UntrustedFile = "untrusted-file", Refused,
        "a file or directory someone other than root (or the invoking user) could change, a symbolic link or a non-regular file where ocetool keeps its own";
    /// A write order or a reset that would leave an adapter that fails POST.
    UnbootableFlash = "unbootable-flash", Refused,
        "no order of the writes keeps a bootable firmware on flash, or a reset would boot a flash no boot section of which passes its CRC (`--force` overrides)";
    /// `emulator init` over an existing state.
    EmulatorExists = "emulator-exists", Refused,
        "`emulator init` would overwrite an emulated adapter's state";
    /// Another ocetool holds the adapter.
    DeviceBusy = "device-busy", Busy,
        "another ocetool (or a VM) holds the adapter's lock or its VFIO group, or a running `emulator serve` holds the socket or did not take a change in time";
    /// SIGINT.
    Interrupted = "interrupted", Interrupted,
        "stopped by SIGINT (Ctrl-C); a command in flight was finished first";
    /// SIGTERM.
    Terminated = "terminated", Terminated,
        "stopped by SIGTERM; a command in flight was finished first";
}

/// An error as the user sees it.
#[derive(Debug)]
pub struct CliError {
    /// Why, which fixes the kind and the exit code.
    pub code: ErrorCode,
    /// One line: what failed and what to do next.
    pub message: String,
    /// The causes, outermost first (shown with `-v` and in JSON).
    pub causes: Vec<String>,
}

impl CliError {
    /// An error with `code` and `message` and no cause.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), causes: Vec::new() }
    }

    /// An error whose causes are the `source()` chain of `err`. The one-line message is
    /// `context`, the error's own text and then each cause, so it names the operation that failed
    /// and the symptom underneath (a CRC query that failed *because* the completion lacked VALID
    /// says both). A cause whose text an outer message already contains is not repeated.
    pub fn from_error(code: ErrorCode, context: &str, err: &(dyn std::error::Error + 'static)) -> Self {
        let causes = oce_pci::error_causes(err);
        let head = if context.is_empty() { err.to_string() } else { format!("{context}: {err}") };
        let message = oce_pci::join_causes(head, &causes);
        Self { code, message, causes }
    }

    /// The kind, fixed by the code.
    pub fn kind(&self) -> ErrorKind {
        self.code.kind()
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

/// The code of a PCI-layer error.
fn pci_code(e: &PciError) -> ErrorCode {
    use ErrorCode as C;
    match e {
        PciError::Untrusted { .. } | PciError::Symlink { .. } => C::UntrustedFile,
        PciError::Interrupted { signal: Signal::Interrupt } => C::Interrupted,
        PciError::Interrupted { signal: Signal::Terminate } => C::Terminated,
        PciError::DriverBound { .. } | PciError::AdapterFunctionBound { .. } => C::BoundToDriver,
        PciError::GroupNotViable { .. } | PciError::StorageFunctionBound { .. } => C::GroupNotViable,
        PciError::VfioGroupBusy { .. } => C::DeviceBusy,
        PciError::BadAddress { .. } => C::BadArgument,
        PciError::NotAFile { .. } => C::UnusableFile,
        PciError::VfioPciNotLoaded { .. }
        | PciError::NoIommuGroup { .. }
        | PciError::SysfsBackend { .. }
        | PciError::SysfsBackendTranslated { .. }
        | PciError::VfioPermission { .. }
        | PciError::SysfsPermission { .. }
        | PciError::LockedDown { .. } => C::BackendUnavailable,
        PciError::SysfsWrite { .. }
        | PciError::UnbindTimeout { .. }
        | PciError::BindTimeout { .. }
        | PciError::BindingChanged { .. }
        | PciError::RestoreFailed { .. }
        | PciError::RestoreFailures { .. }
        | PciError::RecordUntrusted { .. }
        | PciError::RecordInvalid { .. }
        | PciError::HandOffLeftOver { .. }
        | PciError::RepairFailed { .. } => C::HandoffFailed,
        e if e.is_no_device() => C::NoSuchDevice,
        _ => C::HostFailed,
    }
}

/// Turns a PCI-layer error into a CLI error with the code (and exit code) its variant calls for.
pub fn pci_error(context: &str, e: &PciError) -> CliError {
    let err = CliError::from_error(pci_code(e), context, e);
    match e {
        PciError::Untrusted { .. } | PciError::Symlink { .. } => err.hint(trust_hint(e)),
        _ => err,
    }
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

/// The code of a problem with a file the user named (an image, a configuration, an output
/// file): a path that names no usable file — missing, a directory, a named pipe, a device node, a
/// socket, a symbolic link loop, a path through something that is not a directory, a name too
/// long, or no permission — is `unusable-file` (2), the argument is wrong; a file someone else
/// could change is `untrusted-file` (4); any other I/O error (a disk error, a full or read-only
/// file system) is `io-error` (1).
pub fn file_code(e: &PciError) -> ErrorCode {
    match e {
        PciError::Untrusted { .. } | PciError::Symlink { .. } => ErrorCode::UntrustedFile,
        PciError::NotAFile { .. } => ErrorCode::UnusableFile,
        PciError::Io { source, .. } => io_code(source),
        _ => ErrorCode::IoError,
    }
}

/// The kind of [`file_code`].
pub fn file_kind(e: &PciError) -> ErrorKind {
    file_code(e).kind()
}

/// [`file_code`] of an OS error on a path the user named.
pub fn io_code(e: &std::io::Error) -> ErrorCode {
    const NAMES_NO_USABLE_FILE: [i32; 5] = [libc::ENOENT, libc::ENOTDIR, libc::EISDIR, libc::ELOOP, libc::ENAMETOOLONG];
    if e.raw_os_error().is_some_and(|code| NAMES_NO_USABLE_FILE.contains(&code))
        || matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied)
    {
        ErrorCode::UnusableFile
    } else {
        ErrorCode::IoError
    }
}

/// The error for a file the user named that cannot be used ([`file_code`]), after `context`.
pub fn file_error(context: &str, e: &PciError) -> CliError {
    let err = CliError::from_error(file_code(e), context, e);
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
        PciError::NotAFile { .. } => CliError::from_error(ErrorCode::UntrustedFile, context, e)
            .hint("that is not ocetool's file: find out who put it there, and remove it"),
        PciError::Untrusted { .. } | PciError::Symlink { .. } => pci_error(context, e),
        _ => CliError::from_error(ErrorCode::IoError, context, e),
    }
}

/// The error for a stop request (Ctrl-C, SIGTERM) that arrived: exit 130 or 143.
pub fn stopped(signal: Signal) -> CliError {
    pci_error("", &PciError::Interrupted { signal })
}

/// The code of a mailbox error.
fn mailbox_code(e: &MailboxError) -> ErrorCode {
    use ErrorCode as C;
    match e {
        MailboxError::DeviceGone { .. } | MailboxError::ConfigGone => C::DeviceGone,
        MailboxError::NotReady { .. } => C::FirmwareNotReady,
        MailboxError::PostTimeout { .. }
        | MailboxError::PostError { .. }
        | MailboxError::BadSliIntf { .. }
        | MailboxError::Stopped { .. } => C::PostFailed,
        MailboxError::UnrecoverableError { .. } => C::UnrecoverableError,
        MailboxError::InvalidCompletion { .. }
        | MailboxError::TagMismatch { .. }
        | MailboxError::Malformed { .. }
        | MailboxError::ResponseMismatch { .. }
        | MailboxError::ResponseTooLong { .. }
        | MailboxError::Encode { .. } => C::ProtocolError,
        MailboxError::Pci(_) => C::HostFailed,
        _ => C::CommandFailed,
    }
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
    let err = CliError::from_error(mailbox_code(e), context, e);
    match hint {
        Some(h) => err.hint(h),
        None => err,
    }
}

/// An error of the chip reset itself: the next remedy is a power cycle, not another reset.
pub fn reset_error(context: &str, e: &MailboxError) -> CliError {
    CliError::from_error(ErrorCode::ResetFailed, context, e)
        .hint("power-cycle the adapter (reboot the host; on the emulator: `ocetool emulator power-cycle`)")
}

/// Maps a profile choice the adapter cannot make: a target it has no profile for is usage (2), a
/// change the adapter did not keep is a failure (1).
pub fn profile_error(e: ProfileError) -> CliError {
    match e {
        ProfileError::NotApplied { .. } => CliError::from_error(ErrorCode::CommandFailed, "", &e)
            .hint("the adapter did not keep the change; retry, and check the firmware"),
        _ => CliError::from_error(ErrorCode::UnknownProfile, "", &e).hint("see `ocetool profiles`"),
    }
}

/// Maps an image-layer error: a file that cannot be used as the image is as [`file_code`] says
/// (usage, 2, for a missing or unreadable one or one that is not a regular file), an image or a
/// version the policy refuses 4.
pub fn image_error(context: &str, e: &ImageError) -> CliError {
    let code = match e {
        // For a file that cannot be read, the OS error is the symptom worth the one line.
        ImageError::Io(io) => return file_error(context, io),
        ImageError::Incompatible(_) => ErrorCode::IncompatibleImage,
        ImageError::Downgrade { .. } | ImageError::VersionUnordered { .. } => ErrorCode::DowngradeRefused,
        _ => ErrorCode::InvalidImage,
    };
    let err = CliError::from_error(code, context, e);
    match code {
        ErrorCode::DowngradeRefused => err.hint("pass --allow-downgrade to flash it anyway"),
        _ => err,
    }
}

/// Maps a flash-layer error: an adapter ocetool cannot flash is 3, a stop request 130/143, a
/// device or firmware failure 1, and an image problem as [`image_error`] says.
pub fn flash_error(context: &str, e: &FlashError) -> CliError {
    use FlashError as E;
    let code = match e {
        E::Image(image) => return image_error(context, image),
        E::Stopped { .. } => match signals::pending() {
            Some(Signal::Terminate) => ErrorCode::Terminated,
            _ => ErrorCode::Interrupted,
        },
        E::UnknownDevice { .. } | E::UnsupportedChip { .. } => ErrorCode::UnsupportedDevice,
        E::SectionPastAddressSpace { .. } => ErrorCode::InvalidImage,
        E::LayoutNeedsOffsetMode { .. } => ErrorCode::IncompatibleImage,
        E::UnsafeOrder { .. } => ErrorCode::UnbootableFlash,
        E::PlanMismatch => ErrorCode::InternalError,
        E::Device { .. }
        | E::CrcQueryFailed { .. }
        | E::FlashIncomplete { .. }
        | E::SignatureMissing { .. }
        | E::SignatureInvalid { .. }
        | E::CrcMismatch { .. }
        | E::WriteRejected { .. }
        | E::WriteFailed { .. } => ErrorCode::FlashFailed,
        // A variant this table does not know yet: refused, as a flash-layer check is.
        _ => ErrorCode::InvalidImage,
    };
    let err = CliError::from_error(code, context, e);
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
    let code = match e {
        EmulatorError::AlreadyExists { .. } => ErrorCode::EmulatorExists,
        EmulatorError::Untrusted { .. } => ErrorCode::UntrustedFile,
        EmulatorError::FaultSpec { .. } => ErrorCode::BadArgument,
        _ => ErrorCode::BadEmulatorState,
    };
    let err = CliError::from_error(code, "", e);
    match e {
        EmulatorError::AlreadyExists { .. } | EmulatorError::FaultSpec { .. } => err,
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
        _ => CliError::from_error(ErrorCode::CommandFailed, "cannot read the firmware's diagnostic dump", e)
            .hint("retry; if it persists, the firmware keeps no diagnostic log to send"),
    }
}

/// Maps a failure to create `ocetool emulator serve`'s socket: the operation failed (exit 1),
/// with what to do about the path.
pub fn socket_error(e: &SocketError) -> CliError {
    let err = CliError::from_error(ErrorCode::ServeFailed, "cannot serve the emulated adapter", e);
    match e {
        SocketError::InUse { .. } => err.hint("another server listens there: stop it, or choose another --socket"),
        _ => err,
    }
}

/// Maps a failed request to a running server's control socket: the server's refusal is a bad
/// request (exit 2, nothing changed); anything else, the operation failed (exit 1).
pub fn control_error(e: &ControlError) -> CliError {
    match e {
        ControlError::Refused(why) => {
            CliError::new(ErrorCode::BadArgument, format!("the running server refused: {why}"))
        }
        _ => CliError::from_error(ErrorCode::ServeFailed, "cannot reach the server that holds the adapter", e)
            .hint("check that `ocetool emulator serve` still runs, then retry"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case() {
        let mut seen = std::collections::BTreeSet::new();
        for code in ErrorCode::ALL {
            let name = code.name();
            assert!(seen.insert(name), "{name} twice");
            assert!(
                !name.is_empty() && name.split('-').all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase())),
                "{name}"
            );
        }
    }

    /// The README's "Error codes" table lists every code the source has, with its exit code and
    /// its meaning word for word, and no other.
    #[test]
    fn the_readme_lists_every_code_with_its_exit_code_and_meaning() {
        let readme = include_str!("../../README.md");
        let rows: Vec<(String, String, String)> = readme
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| {
                let cells: Vec<&str> = l.split(" | ").collect();
                let name = cells.first()?.strip_suffix('`')?;
                (cells.len() == 3 && name.contains(|c: char| c.is_ascii_lowercase()) && !name.contains(' '))
                    .then(|| (name.to_owned(), cells[1].to_owned(), cells[2].trim_end_matches(" |").to_owned()))
            })
            .filter(|(_, exit, _)| exit.parse::<u8>().is_ok())
            .collect();
        let listed: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        let source: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(listed, source, "the README's rows, in the source's order");
        for (code, (_, exit, meaning)) in ErrorCode::ALL.iter().zip(&rows) {
            assert_eq!(exit, &code.kind().exit_code().to_string(), "{}", code.name());
            assert_eq!(meaning, code.meaning(), "{}", code.name());
        }
    }
}
