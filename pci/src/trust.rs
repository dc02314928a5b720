//! Whose files ocetool acts on. `ocetool apply` runs as root at boot and flashes what its
//! configuration names; the emulator keeps its state in a directory it writes in place; the lock
//! and log files sit in directories other users may share. Each of them is checked here before
//! ocetool acts on it.
//!
//! The rules:
//!
//! - **strict** ([`check_path`]), like OpenSSH's StrictModes (`auth.c`, `auth_secure_path`): a
//!   file, and every directory the path walks through (symbolic links followed one step at a
//!   time, each link's directory checked too), is owned by root or by the invoking user and
//!   writable by no one else — not by its group, not by others. One exception keeps `/tmp` usable:
//!   a directory others may write but with the sticky bit set (`/tmp`, `/run/lock`) is passed
//!   through when the entry taken in it is owned by root or the invoking user, since no one else
//!   can rename or remove that entry (unlink(2), rename(2): EPERM in a sticky directory); a name
//!   that does not exist yet in such a directory is refused, since anyone could create it.
//!   Membership in a group grants nothing: a file its group can write is refused, whoever runs
//!   ocetool, because root would follow the same file.
//! - **private** ([`check_private_dir`], [`check_owned_file`]): owned by the invoking user itself
//!   (root, when root runs ocetool) and writable by no group or other user: the emulator's state
//!   directory and the log file.
//! - **lock directory** ([`check_lock_dir`]): not a symbolic link, owned by root or the invoking
//!   user; its group may write it (`/run/lock/ocetool` is 0770 root:ocetool), others only when the
//!   sticky bit is set.
//!
//! Files ocetool keeps itself are opened without following a symbolic link ([`open_no_follow`]):
//! a planted link is [`PciError::Symlink`], never followed.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Metadata, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use crate::PciError;
use crate::mmap::open_regular_with;

/// Write permission for the file's group (S_IWGRP, chmod(2)).
const GROUP_WRITE: u32 = 0o020;
/// Write permission for other users (S_IWOTH, chmod(2)).
const OTHER_WRITE: u32 = 0o002;
/// The sticky bit (S_ISVTX, chmod(2)): in such a directory only an entry's owner, the
/// directory's owner or root may rename or remove the entry.
const STICKY: u32 = 0o1000;
/// The most symbolic links one path walk follows: the kernel's own limit (`MAXSYMLINKS`,
/// include/linux/namei.h), beyond which open(2) fails with ELOOP.
const MAX_SYMLINKS: usize = 40;

/// The effective user ID of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid(2) takes no arguments, touches no memory of ours and always succeeds.
    unsafe { libc::geteuid() }
}

/// Who may own (and alone write) what ocetool acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owners {
    euid: u32,
    root_too: bool,
}

impl Owners {
    /// Root and the invoking user (the effective user): the strict rule.
    pub fn root_and_me() -> Self {
        Self { euid: euid(), root_too: true }
    }

    /// The invoking user alone: the private rule.
    pub fn only_me() -> Self {
        Self { euid: euid(), root_too: false }
    }

    /// The same rule for another effective user ID (tests, and messages about another user).
    pub fn as_uid(self, euid: u32) -> Self {
        Self { euid, ..self }
    }

    /// True when `uid` may own what this rule checks.
    pub fn trusts(&self, uid: u32) -> bool {
        uid == self.euid || (self.root_too && uid == 0)
    }

    /// Who that is, for messages: "root", "root or you (uid 1000)", "you (uid 1000)".
    fn who(&self) -> String {
        match (self.euid, self.root_too) {
            (0, _) => "root".to_owned(),
            (uid, true) => format!("root or you (uid {uid})"),
            (uid, false) => format!("you (uid {uid})"),
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PciError + '_ {
    move |source| PciError::Io { path: path.to_path_buf(), source }
}

fn untrusted(path: &Path, meta: &Metadata, problem: String) -> PciError {
    PciError::Untrusted { path: path.to_path_buf(), owner: meta.uid(), mode: meta.mode() & 0o7777, problem }
}

/// "writable by group", "writable by others" or both, for write bits `bits` of a mode.
fn writable_by(bits: u32) -> Option<&'static str> {
    match (bits & GROUP_WRITE != 0, bits & OTHER_WRITE != 0) {
        (true, true) => Some("writable by group and others"),
        (true, false) => Some("writable by group"),
        (false, true) => Some("writable by others"),
        (false, false) => None,
    }
}

fn check_owner(path: &Path, meta: &Metadata, owners: Owners) -> Result<(), PciError> {
    if owners.trusts(meta.uid()) {
        return Ok(());
    }
    Err(untrusted(path, meta, format!("owned by another user, not by {}", owners.who())))
}

/// `meta` of `path` under the strict rule: owned by `owners`, writable by no group or other user.
pub fn check_strict(path: &Path, meta: &Metadata, owners: Owners) -> Result<(), PciError> {
    check_owner(path, meta, owners)?;
    match writable_by(meta.mode()) {
        Some(problem) => Err(untrusted(path, meta, problem.to_owned())),
        None => Ok(()),
    }
}

/// A directory a strict walk passes through: as [`check_strict`], except that a sticky one may
/// be writable by others. Returns true for such a shared directory: its next entry must then be
/// owned by `owners`.
fn check_walked_dir(dir: &Path, meta: &Metadata, owners: Owners) -> Result<bool, PciError> {
    check_owner(dir, meta, owners)?;
    match writable_by(meta.mode()) {
        None => Ok(false),
        Some(_) if meta.mode() & STICKY != 0 => Ok(true),
        Some(problem) => Err(untrusted(dir, meta, problem.to_owned())),
    }
}

/// Checks `path` under the strict rule (module docs): every directory from `/` down (a relative
/// path from the working directory), every symbolic link's directory on the way, and the file
/// itself when it is a regular file. Returns the path with every link resolved (open that, not
/// `path`), or `None` when the file does not exist and no one but `owners` could create it.
/// Something other than a regular file at the end is left to the caller's open to refuse.
pub fn check_path(path: &Path, owners: Owners) -> Result<Option<PathBuf>, PciError> {
    let absolute =
        if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().map_err(io_err(path))?.join(path) };
    let root = PathBuf::from("/");
    let lstat = |p: &Path| fs::symlink_metadata(p).map_err(io_err(p));
    // Components still to walk, the next one last.
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, &absolute);
    let mut dir = root.clone();
    let mut shared = check_walked_dir(&dir, &lstat(&dir)?, owners)?;
    let mut links = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            dir.pop();
            shared = check_walked_dir(&dir, &lstat(&dir)?, owners)?;
            continue;
        }
        let entry = dir.join(&name);
        let meta = match fs::symlink_metadata(&entry) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && shared => {
                let problem = format!(
                    "writable by others, and {} does not exist in it: anyone could create it",
                    name.to_string_lossy()
                );
                return Err(untrusted(&dir, &lstat(&dir)?, problem));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&entry)(e)),
        };
        if shared && !owners.trusts(meta.uid()) {
            let problem = format!("owned by another user, not by {}, in a directory others can write", owners.who());
            return Err(untrusted(&entry, &meta, problem));
        }
        if meta.file_type().is_symlink() {
            links += 1;
            if links > MAX_SYMLINKS {
                return Err(PciError::Io { path: path.to_path_buf(), source: errno(libc::ELOOP) });
            }
            let target = fs::read_link(&entry).map_err(io_err(&entry))?;
            if target.is_absolute() {
                dir = root.clone();
                shared = check_walked_dir(&dir, &lstat(&dir)?, owners)?;
            }
            push_components(&mut pending, &target);
            continue;
        }
        if pending.is_empty() {
            if meta.is_file() {
                check_strict(&entry, &meta, owners)?;
            }
            return Ok(Some(entry));
        }
        if !meta.is_dir() {
            return Err(PciError::Io { path: path.to_path_buf(), source: errno(libc::ENOTDIR) });
        }
        shared = check_walked_dir(&entry, &meta, owners)?;
        dir = entry;
    }
    Ok(Some(dir))
}

/// Puts the components of `path` on top of `pending` (its first component last, walked next);
/// `/` and `.` are no steps.
fn push_components(pending: &mut Vec<OsString>, path: &Path) {
    let steps: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsStr::new("..").to_os_string()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    pending.extend(steps.into_iter().rev());
}

fn errno(code: i32) -> std::io::Error {
    std::io::Error::from_raw_os_error(code)
}

/// A directory under the private rule: it (the target, if `dir` is a link — whose owner must be
/// trusted too) is owned by the invoking user and writable by no group or other user.
pub fn check_private_dir(dir: &Path, owners: Owners) -> Result<(), PciError> {
    let link = fs::symlink_metadata(dir).map_err(io_err(dir))?;
    if link.file_type().is_symlink() {
        check_owner(dir, &link, owners)?;
    }
    let meta = fs::metadata(dir).map_err(io_err(dir))?;
    check_strict(dir, &meta, owners)
}

/// A lock directory (module docs): returns its metadata (the caller gives new lock files its
/// group when the group may write it).
pub fn check_lock_dir(dir: &Path, owners: Owners) -> Result<Metadata, PciError> {
    let meta = fs::symlink_metadata(dir).map_err(io_err(dir))?;
    if meta.file_type().is_symlink() {
        return Err(PciError::Symlink { path: dir.to_path_buf() });
    }
    if !meta.is_dir() {
        return Err(PciError::Io { path: dir.to_path_buf(), source: errno(libc::ENOTDIR) });
    }
    check_owner(dir, &meta, owners)?;
    if meta.mode() & OTHER_WRITE != 0 && meta.mode() & STICKY == 0 {
        return Err(untrusted(dir, &meta, "writable by others".to_owned()));
    }
    Ok(meta)
}

/// `file`, open at `path`, is owned by `owners` (its mode is the caller's business).
pub fn check_owned_file(path: &Path, file: &File, owners: Owners) -> Result<Metadata, PciError> {
    let meta = file.metadata().map_err(io_err(path))?;
    check_owner(path, &meta, owners)?;
    Ok(meta)
}

/// Opens `path` with `options` without following a symbolic link at its last component
/// (`O_NOFOLLOW`) and without blocking on a FIFO, and checks on the descriptor that it is a
/// regular file: a link is [`PciError::Symlink`], anything else [`PciError::NotAFile`].
pub fn open_no_follow(path: &Path, options: &mut OpenOptions) -> Result<File, PciError> {
    match open_regular_with(path, options, libc::O_NOFOLLOW) {
        Err(PciError::Io { source, .. })
            if source.raw_os_error() == Some(libc::ELOOP)
                && fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
        {
            Err(PciError::Symlink { path: path.to_path_buf() })
        }
        other => other,
    }
}

/// Creates `path` for writing; anything already there — a file, or a symbolic link to anywhere
/// — makes it fail (`O_CREAT | O_EXCL | O_NOFOLLOW`). The mode is 0666 less the umask.
pub fn create_new(path: &Path) -> Result<File, PciError> {
    OpenOptions::new().write(true).create_new(true).custom_flags(libc::O_NOFOLLOW).open(path).map_err(io_err(path))
}

/// True when `file` is still the file at `path` (same device and inode; `path` not a link): a
/// lock taken on a file that was since removed or replaced protects nothing.
pub fn is_still_at(path: &Path, file: &File) -> Result<bool, PciError> {
    let open = file.metadata().map_err(io_err(path))?;
    match fs::symlink_metadata(path) {
        Ok(now) => Ok(now.dev() == open.dev() && now.ino() == open.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err(path)(e)),
    }
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
