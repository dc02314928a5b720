//! The hand-off record: what a hand-off is about to change, written before its first sysfs write
//! and removed once every function is back, so that a hand-off whose process died before it
//! could give the functions back (SIGKILL, a crash) is undone by the next run.
//!
//! Without it, a function left with `driver_override` naming vfio-pci (or
//! [`HOLD_OVERRIDE`](super::HOLD_OVERRIDE))
//! cannot be bound by be2net again until a reboot, and the next run would find it on vfio-pci
//! and take vfio-pci for its original driver, giving it back there forever.
//!
//! One record per adapter, `<run>/handoff-<slot>.json` ([`Roots::run`], normally
//! `/run/ocetool`; a tmpfs, empty after a reboot, like `driver_override` itself), named after the
//! card's slot as the adapter's lock file is: a record exists only while some ocetool holds the
//! card's lock, so a caller that holds the lock and finds one knows its writer is gone.
//!
//! The record decides what is written to sysfs as root, so it is trusted only when nobody else
//! could have written it: the folder is a real directory owned by root (or the caller) and
//! writable by no one else, the file a regular file (opened without following a symbolic link)
//! owned by root (or the caller) with mode 0600. It is written atomically (a new file in the same
//! folder, fsync, rename), so a reader never sees half of one. Its contents are checked too: only
//! functions of the record's own adapter, and driver names that are plain names.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::Target;
use crate::discover::adapter_slot;
use crate::mmap::open_regular_with;
use crate::sysfs::Roots;
use crate::{PciAddress, PciError};

/// The `format` of the record this version writes and reads.
const FORMAT: &str = "ocetool-handoff/1";

/// A record is a few hundred bytes; anything larger is not one of ours.
const MAX_LEN: u64 = 64 * 1024;

/// At most this many functions in one record (a card has 8 functions and their VFs; the kernel
/// allows 8 functions per device, and one group rarely holds more).
const MAX_FUNCTIONS: usize = 256;

/// The longest driver name accepted (the kernel's names are short: `be2net`, `vfio-pci`).
const MAX_DRIVER_NAME: usize = 64;

/// One function a hand-off moves, as it was before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedFunction {
    /// The function.
    pub address: PciAddress,
    /// The driver that held it; `None`: unbound.
    pub driver: Option<String>,
    /// Its `driver_override` before; `None`: unset.
    pub driver_override: Option<String>,
}

/// What a hand-off changes on one adapter, to be undone if its process dies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The process that made the hand-off (for messages only).
    pub pid: u32,
    /// The function the hand-off was for.
    pub address: PciAddress,
    /// Where the functions were put.
    pub target: Target,
    /// The functions, in the order they move.
    pub functions: Vec<RecordedFunction>,
}

/// The record as it is stored: plain strings, checked on the way in.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    format: String,
    pid: u32,
    address: String,
    target: String,
    functions: Vec<StoredFunction>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredFunction {
    address: String,
    driver: Option<String>,
    driver_override: Option<String>,
}

/// The record file of the adapter `address` belongs to: `<run>/handoff-<slot>.json`.
pub fn path_for(roots: &Roots, address: PciAddress) -> Result<PathBuf, PciError> {
    Ok(roots.run.join(format!("handoff-{}.json", adapter_slot(roots, address)?)))
}

/// True for a name that can be a kernel driver's: 1 to 64 characters of letters, digits, `-`,
/// `_` and `.` (what is written back to `driver_override` must be nothing else).
pub fn is_driver_name(name: &str) -> bool {
    (1..=MAX_DRIVER_NAME).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn target_name(target: Target) -> &'static str {
    match target {
        Target::VfioPci => "vfio_pci",
        Target::Detached => "detached",
    }
}

/// The effective user ID, which owns the files this process writes.
fn euid() -> u32 {
    // SAFETY: geteuid(2) takes no arguments, touches no memory of ours and always succeeds.
    unsafe { libc::geteuid() }
}

fn untrusted(path: &Path, why: String) -> PciError {
    PciError::RecordUntrusted { path: path.to_path_buf(), why }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> PciError + '_ {
    move |source| PciError::Io { path: path.to_path_buf(), source }
}

/// Refuses a folder another user could put a record into: a symbolic link, not a directory,
/// owned by someone else, or writable by group or others.
fn check_dir(dir: &Path) -> Result<(), PciError> {
    let meta = std::fs::symlink_metadata(dir).map_err(io_err(dir))?;
    if !meta.file_type().is_dir() {
        return Err(untrusted(dir, "it is not a directory (a symbolic link is not followed)".into()));
    }
    if meta.uid() != 0 && meta.uid() != euid() {
        return Err(untrusted(dir, format!("it is owned by uid {}, neither root nor this user", meta.uid())));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(untrusted(dir, format!("other users may write to it (mode {:o})", meta.mode() & 0o7777)));
    }
    Ok(())
}

impl Record {
    /// Writes the record to `path` atomically (a new 0600 file beside it, fsync, rename),
    /// creating the folder (0755) if it is missing. The folder must pass the same checks as for
    /// reading, so a record this writes is one the next run trusts.
    pub fn write(&self, path: &Path) -> Result<(), PciError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        if std::fs::symlink_metadata(dir).is_err() {
            DirBuilder::new().recursive(true).mode(0o755).create(dir).map_err(|e| match e.raw_os_error() {
                Some(libc::EACCES | libc::EPERM) => PciError::SysfsPermission { path: dir.to_path_buf() },
                _ => io_err(dir)(e),
            })?;
        }
        check_dir(dir)?;
        for f in &self.functions {
            for name in [&f.driver, &f.driver_override].into_iter().flatten() {
                if !is_driver_name(name) {
                    return Err(PciError::RecordInvalid {
                        path: path.to_path_buf(),
                        detail: format!(
                            "{} has a driver or driver_override {name:?} that is not a plain name",
                            f.address
                        ),
                    });
                }
            }
        }
        let stored = Stored {
            format: FORMAT.to_owned(),
            pid: self.pid,
            address: self.address.to_string(),
            target: target_name(self.target).to_owned(),
            functions: self
                .functions
                .iter()
                .map(|f| StoredFunction {
                    address: f.address.to_string(),
                    driver: f.driver.clone(),
                    driver_override: f.driver_override.clone(),
                })
                .collect(),
        };
        let text = serde_json::to_vec_pretty(&stored).map_err(|e| PciError::RecordInvalid {
            path: path.to_path_buf(),
            detail: format!("cannot encode it: {e}"),
        })?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        // A file of that name can only be left by a killed writer whose PID this process now has.
        match std::fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(&tmp)(e)),
        }
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .and_then(|mut f| {
                f.write_all(&text)?;
                f.write_all(b"\n")?;
                f.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(match e.raw_os_error() {
                // Moving functions needs root, and so does writing their record: say the former.
                Some(libc::EACCES | libc::EPERM) => PciError::SysfsPermission { path: dir.to_path_buf() },
                _ => io_err(path)(e),
            });
        }
        // The rename reaches the disk with the folder (a no-op on the tmpfs /run).
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Reads the record at `path`: `None` when there is none. A record that fails the trust
    /// checks or does not parse is an error, never acted on; so is one that names a function of
    /// another adapter than the one `path` is for (its slot in `slot`), when that function is
    /// still in sysfs.
    pub fn load(roots: &Roots, path: &Path, slot: &str) -> Result<Option<Self>, PciError> {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(path)(e)),
            Ok(_) => {}
        }
        check_dir(path.parent().unwrap_or(Path::new(".")))?;
        let mut options = OpenOptions::new();
        options.read(true);
        let mut file = open_regular_with(path, &mut options, libc::O_NOFOLLOW)?;
        let meta = file.metadata().map_err(io_err(path))?;
        if meta.uid() != 0 && meta.uid() != euid() {
            return Err(untrusted(path, format!("it is owned by uid {}, neither root nor this user", meta.uid())));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(untrusted(path, format!("its mode is {:o}, not 600", meta.mode() & 0o7777)));
        }
        if meta.len() > MAX_LEN {
            return Err(untrusted(path, format!("it is {} bytes long, far more than a record", meta.len())));
        }
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(io_err(path))?;
        let invalid = |detail: String| PciError::RecordInvalid { path: path.to_path_buf(), detail };
        let stored: Stored = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if stored.format != FORMAT {
            return Err(invalid(format!("format {:?}, not {FORMAT:?}", stored.format)));
        }
        let address: PciAddress = stored.address.parse().map_err(|e: PciError| invalid(e.to_string()))?;
        let target = match stored.target.as_str() {
            "vfio_pci" => Target::VfioPci,
            "detached" => Target::Detached,
            other => return Err(invalid(format!("unknown target {other:?}"))),
        };
        if stored.functions.is_empty() || stored.functions.len() > MAX_FUNCTIONS {
            return Err(invalid(format!("{} functions", stored.functions.len())));
        }
        let mut functions = Vec::with_capacity(stored.functions.len());
        for f in stored.functions {
            let fa: PciAddress = f.address.parse().map_err(|e: PciError| invalid(e.to_string()))?;
            for name in [&f.driver, &f.driver_override].into_iter().flatten() {
                if !is_driver_name(name) {
                    return Err(invalid(format!("{fa}: {name:?} is not a driver name")));
                }
            }
            if roots.device_dir(fa).exists() && adapter_slot(roots, fa)? != slot {
                return Err(invalid(format!("{fa} is not a function of the adapter in slot {slot}")));
            }
            functions.push(RecordedFunction { address: fa, driver: f.driver, driver_override: f.driver_override });
        }
        Ok(Some(Self { pid: stored.pid, address, target, functions }))
    }
}

/// Removes the record at `path`; one already gone is fine.
pub fn remove(path: &Path) -> Result<(), PciError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(path)(e)),
    }
}
