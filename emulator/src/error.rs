//! The error type of the emulator: what can go wrong opening, creating or saving a state
//! directory, or reading a fault spec. Register and command traffic never fails this way: the
//! device answers with status codes and events, as hardware does.

use std::path::PathBuf;

/// Why an emulated adapter could not be opened, created or saved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmulatorError {
    /// The state directory does not exist.
    #[error("emulator state directory {dir} does not exist (create it with `ocetool emulator init`)")]
    NoStateDirectory {
        /// The directory.
        dir: PathBuf,
    },
    /// A function the adapter does not have was asked for (it has one NIC function per port, a
    /// VF one function).
    #[error("the emulated adapter has no function {number}: it has {functions} (0 to {})", functions - 1)]
    NoSuchFunction {
        /// The function asked for.
        number: u8,
        /// How many it has.
        functions: usize,
    },
    /// A state file is missing from an existing state directory.
    #[error("emulator state file {path} is missing; the state directory is incomplete")]
    MissingFile {
        /// The missing file.
        path: PathBuf,
    },
    /// `create` found state files already there; they are left alone.
    #[error("{path} already exists: refusing to overwrite an emulated adapter's state")]
    AlreadyExists {
        /// The existing file.
        path: PathBuf,
    },
    /// The state file is not valid JSON, or not the expected structure.
    #[error("emulator state file {path} is corrupt")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the parser found.
        #[source]
        source: serde_json::Error,
    },
    /// The state file was written by a different version of the emulator.
    #[error(
        "emulator state file {path} has schema version {}, this ocetool reads version {supported}",
        found.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
    )]
    UnknownSchema {
        /// The file.
        path: PathBuf,
        /// The version in the file (`None` if the field is missing or not a number).
        found: Option<u64>,
        /// The version this build reads and writes.
        supported: u32,
    },
    /// The state file parses but its contents contradict each other.
    #[error("emulator state file {path} is inconsistent: {reason}")]
    Inconsistent {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The flash file has the wrong size.
    #[error("emulator flash file {path} is {actual} bytes, expected {expected}")]
    FlashSize {
        /// The file.
        path: PathBuf,
        /// Its size.
        actual: u64,
        /// The size of the modelled flash.
        expected: u64,
    },
    /// The state directory, or a file in it, is not safely this user's: another user's
    /// directory, one a group or other users can write, or a symbolic link (or anything but a
    /// regular file) where a state file belongs. Nothing was read or written through it.
    #[error("refusing the emulator state in {}", dir.display())]
    Untrusted {
        /// The state directory.
        dir: PathBuf,
        /// What is wrong, and with which path.
        #[source]
        source: oce_pci::PciError,
    },
    /// An I/O error on a state file.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A fault spec (`ocetool emulator fault set SPEC`) does not parse.
    #[error("bad fault spec {spec:?}: {part:?} {problem}")]
    FaultSpec {
        /// The whole spec.
        spec: String,
        /// The part that is wrong.
        part: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Mapping or writing the flash file failed.
    #[error("emulator flash access failed")]
    Flash(#[from] oce_pci::PciError),
    /// The factory firmware image could not be built.
    #[error("cannot build the factory firmware image")]
    FactoryImage(#[from] oce_firmware::ImageError),
}

/// Shorthand for building an [`EmulatorError::Io`] from a path.
pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> EmulatorError {
    let path = path.into();
    move |source| EmulatorError::Io { path, source }
}
