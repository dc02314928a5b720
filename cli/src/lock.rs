//! The per-adapter lock that keeps two ocetool processes from driving one adapter at once
//! (design.md §4): an exclusive `flock(2)` on a lock file, released when the process ends, however
//! it ends.
//!
//! The lock directory may be shared (`/run/lock/ocetool`, 0770 root:ocetool; or the directory
//! above an emulator's state), so before anything is opened in it the directory is checked
//! (`oce_pci::trust::check_lock_dir`: not a link, owned by root or the invoking user, writable by
//! others only when sticky), the lock file is opened without following a link, must be a regular
//! file and belong to root or the invoking user — or, in a directory shared with a group (its
//! group may write it, others may not), to that group: its members may lock the adapter, and a
//! file one of them created holds nothing over root. A lock file ocetool creates in such a
//! directory gets the directory's group and mode 0660, so the group's members can take a lock
//! file root created. After the lock is taken, the locked file must still be the one at the path: a lock on
//! a file someone removed (or replaced) meanwhile protects nothing, so ocetool takes the file now
//! at the path instead.

use std::fs::{File, Metadata, OpenOptions, Permissions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use oce_pci::trust::{self, Owners};
use oce_pci::{PciError, signals};

use crate::error::{CliError, CliResult, ErrorCode, own_file_error, pci_error, stopped};

/// How often a waiting ocetool tries the lock again.
const POLL: Duration = Duration::from_millis(20);
/// How many times the lock file may be found replaced after locking it before ocetool gives up:
/// a bound, so that a program that keeps removing the file cannot keep ocetool looping.
const MAX_REPLACED: u32 = 10;
/// Write permission for the group (S_IWGRP, chmod(2)).
const GROUP_WRITE: u32 = 0o020;
/// Write permission for other users (S_IWOTH, chmod(2)).
const OTHER_WRITE: u32 = 0o002;
/// The mode of a lock file ocetool creates in a directory its group may write: read and write
/// for the owner and the group.
const SHARED_LOCK_MODE: u32 = 0o660;

/// An exclusive lock on one adapter, released when dropped (or by the kernel when the process
/// dies, so a killed ocetool never leaves a lock behind).
#[derive(Debug)]
pub struct DeviceLock {
    _file: File,
}

impl DeviceLock {
    /// Takes the lock at `path`, waiting up to `wait` for another holder, then failing "busy"
    /// with the holder named when `/proc/locks` (under `proc_root`) tells it. A stop request
    /// (Ctrl-C, SIGTERM) ends the wait at once.
    pub fn acquire(path: &Path, wait: Duration, device: &str, proc_root: &Path) -> CliResult<Self> {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let dir_meta = prepare_dir(dir)?;
        let deadline = Instant::now() + wait;
        for _ in 0..=MAX_REPLACED {
            let file = open_lock_file(path, &dir_meta)?;
            wait_for(&file, path, deadline, device, proc_root)?;
            if trust::is_still_at(path, &file).map_err(|e| pci_error("cannot check the lock file", &e))? {
                return Ok(Self { _file: file });
            }
            tracing::info!(lock = %path.display(), "the lock file was replaced while ocetool took it: taking the one now there");
        }
        Err(CliError::new(
            ErrorCode::DeviceBusy,
            format!(
                "device busy: the lock file {} of {device} was removed or replaced {} times while ocetool took it; \
                 stop whatever removes it, then retry",
                path.display(),
                MAX_REPLACED + 1
            ),
        ))
    }
}

/// Checks the lock directory, creating it (mode 0755) when it does not exist.
fn prepare_dir(dir: &Path) -> CliResult<Metadata> {
    let owners = Owners::root_and_me();
    match trust::check_lock_dir(dir, owners) {
        Err(PciError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new().recursive(true).mode(0o755).create(dir).map_err(|e| {
                CliError::new(ErrorCode::IoError, format!("cannot create the lock directory {}: {e}", dir.display()))
            })?;
            trust::check_lock_dir(dir, owners).map_err(|e| pci_error("cannot use the lock directory", &e))
        }
        other => other.map_err(|e| pci_error("cannot use the lock directory", &e)),
    }
}

/// Opens the lock file at `path`, creating it if missing: a new one gets the directory's group
/// and mode 0660 when that group may write the directory; an existing one must be a regular file
/// (not a link) of root or the invoking user, or of the directory's group when the directory is
/// shared with that group alone.
fn open_lock_file(path: &Path, dir: &Metadata) -> CliResult<File> {
    let refused = |e: PciError| own_file_error("cannot open the lock file", &e);
    match trust::create_new(path) {
        Ok(file) => {
            if dir.mode() & GROUP_WRITE != 0 {
                share_with_group(&file, path, dir.gid())?;
            }
            return Ok(file);
        }
        Err(PciError::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(refused(e)),
    }
    let file = trust::open_no_follow(path, OpenOptions::new().read(true)).map_err(refused)?;
    let group_dir = dir.mode() & (GROUP_WRITE | OTHER_WRITE) == GROUP_WRITE;
    let groups_file = file.metadata().is_ok_and(|m| m.gid() == dir.gid());
    if !(group_dir && groups_file) {
        trust::check_owned_file(path, &file, Owners::root_and_me()).map_err(refused)?;
    }
    Ok(file)
}

/// Gives a new lock file the lock directory's group, readable and writable by it.
fn share_with_group(file: &File, path: &Path, gid: u32) -> CliResult<()> {
    let shared = std::os::unix::fs::fchown(file, None, Some(gid))
        .and_then(|()| file.set_permissions(Permissions::from_mode(SHARED_LOCK_MODE)));
    shared.map_err(|e| {
        CliError::new(
            ErrorCode::IoError,
            format!("cannot give the lock file {} to the lock directory's group {gid}: {e}", path.display()),
        )
    })
}

/// Waits for the lock on `file` until `deadline`.
fn wait_for(file: &File, path: &Path, deadline: Instant, device: &str, proc_root: &Path) -> CliResult<()> {
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                if let Some(signal) = signals::pending() {
                    return Err(stopped(signal).hint("nothing was changed"));
                }
                std::thread::sleep(POLL);
            }
            Err(std::fs::TryLockError::WouldBlock) => return Err(busy(file, path, device, proc_root)),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(CliError::new(ErrorCode::IoError, format!("cannot lock {}: {e}", path.display())));
            }
        }
    }
}

/// "device busy", naming the process that holds the lock when `/proc/locks` tells it.
fn busy(file: &File, path: &Path, device: &str, proc_root: &Path) -> CliError {
    let holder = file.metadata().ok().and_then(|m| holder_of(proc_root, &m));
    let who = match &holder {
        Some(Holder { pid, command: Some(command) }) => format!("process {pid} ({command})"),
        Some(Holder { pid, command: None }) => format!("process {pid}"),
        None => "another process".to_owned(),
    };
    let stop = if holder.is_some() { " (or stop that process)" } else { "" };
    CliError::new(
        ErrorCode::DeviceBusy,
        format!(
            "device busy: the lock of {device} ({}) is held by {who}; wait for it to finish{stop}, or raise --wait",
            path.display()
        ),
    )
}

/// The process holding a lock, from `/proc/locks`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Holder {
    pid: u32,
    /// Its command name (`/proc/PID/comm`), when it can be read.
    command: Option<String>,
}

/// Who holds the `flock` on the file with `meta`: the `/proc/locks` line whose device and inode
/// are the file's (fs/locks.c, `lock_get_status`: `ID: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE
/// START END`, device numbers in hex; a waiter's line has `->` after the ID and is skipped).
fn holder_of(proc_root: &Path, meta: &Metadata) -> Option<Holder> {
    let text = std::fs::read_to_string(proc_root.join("locks")).ok()?;
    let pid = flock_holder(&text, libc::major(meta.dev()), libc::minor(meta.dev()), meta.ino())?;
    let command = std::fs::read_to_string(proc_root.join(pid.to_string()).join("comm")).ok();
    Some(Holder { pid, command: command.map(|c| c.trim().to_owned()).filter(|c| !c.is_empty()) })
}

/// The PID of the `FLOCK` holder of device `major:minor`, inode `ino` in `/proc/locks` text.
fn flock_holder(text: &str, major: u32, minor: u32, ino: u64) -> Option<u32> {
    text.lines().find_map(|line| {
        let mut fields = line.split_whitespace().skip(1);
        let kind = fields.next()?;
        if kind != "FLOCK" {
            return None;
        }
        let pid: i64 = fields.nth(2)?.parse().ok()?;
        let mut id = fields.next()?.split(':');
        let (maj, min, inode) = (id.next()?, id.next()?, id.next()?);
        let same = u32::from_str_radix(maj, 16).ok()? == major
            && u32::from_str_radix(min, 16).ok()? == minor
            && inode.parse::<u64>().ok()? == ino;
        // A holder in another PID namespace shows as 0 or -1.
        (same && pid > 0).then(|| u32::try_from(pid).ok()).flatten()
    })
}

#[cfg(test)]
#[path = "lock_tests.rs"]
mod tests;
