//! The listening socket: created mode 0600 (only the user who serves may attach), never over a
//! file that is not a socket, replacing only a stale socket no live server owns, and removed when
//! the server ends.
//!
//! Who owns a socket path is said by a lock file beside it (`PATH.lock`, mode 0600), which the
//! server holds locked (`flock`, through `File::try_lock`) for its whole life: the kernel drops
//! the lock when the process ends, however it ends, so a socket whose lock is free is stale. A
//! second server asks the lock, never the socket: connecting to the socket to see whether it is
//! live would be taken by a waiting server as its one client, and end that server's session when
//! the probe hangs up.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

/// Why the socket could not be created.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// Something other than a socket is at the path.
    #[error("{path} exists and is not a socket; choose another --socket path")]
    NotASocket {
        /// The path.
        path: PathBuf,
    },
    /// A live server owns the path (it holds the lock file beside it).
    #[error("{path} is in use: a live server owns it (it holds {lock})")]
    InUse {
        /// The path.
        path: PathBuf,
        /// The lock file the live server holds.
        lock: PathBuf,
    },
    /// A system call failed.
    #[error("cannot create the socket {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// The lock file that says who owns the socket at `path`.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Attempts at taking a lock file that a departing server unlinks under us (each such race
/// needs a server to end between our open and our lock; two in a row are already unlikely).
const LOCK_ATTEMPTS: usize = 5;

/// Takes the lock file at `lock` without waiting: `Ok(None)` when a live server holds it. The
/// file locked is the one at the path afterwards (a server that ended between our open and our
/// lock unlinked the file we opened: then again, with the new one).
fn take_lock(lock: &Path) -> io::Result<Option<File>> {
    for _ in 0..LOCK_ATTEMPTS {
        // O_NOFOLLOW: the lock may sit in a world-writable directory (/tmp) beside the socket.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(lock)?;
        if !file.metadata()?.file_type().is_file() {
            return Err(io::Error::other(format!("{} is not a regular file", lock.display())));
        }
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        let held = file.metadata()?;
        match std::fs::symlink_metadata(lock) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => return Ok(Some(file)),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!("{} keeps being replaced; try again", lock.display())))
}

/// A listening socket that is unlinked when dropped, with the lock that says it is live.
#[derive(Debug)]
pub struct ServeSocket {
    listener: UnixListener,
    path: PathBuf,
    lock: File,
    lock_path: PathBuf,
}

impl ServeSocket {
    /// Creates the socket at `path`, unless a live server owns it.
    pub fn bind(path: &Path) -> Result<Self, SocketError> {
        let io = |source| SocketError::Io { path: path.to_path_buf(), source };
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.file_type().is_socket() => {
                return Err(SocketError::NotASocket { path: path.to_path_buf() });
            }
            _ => {}
        }
        let lock_path = lock_path(path);
        let lock = take_lock(&lock_path)
            .map_err(io)?
            .ok_or_else(|| SocketError::InUse { path: path.to_path_buf(), lock: lock_path.clone() })?;
        // Ours now: whatever socket is at the path was left by a server that ended.
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.file_type().is_socket() => {
                return Err(SocketError::NotASocket { path: path.to_path_buf() });
            }
            Ok(_) => std::fs::remove_file(path).map_err(io)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        // The socket file gets the permissions of the umask at bind: 0177 makes it 0600 from the
        // first moment, with no window in which another user could connect.
        let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o177));
        let bound = UnixListener::bind(path);
        rustix::process::umask(old);
        let listener = bound.map_err(io)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        Ok(Self { listener, path: path.to_path_buf(), lock, lock_path })
    }

    /// The listener.
    pub fn listener(&self) -> &UnixListener {
        &self.listener
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ServeSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        // Unlinked while still locked, so a server that opened it meanwhile sees it replaced
        // (`take_lock`) rather than owning a file nobody can find.
        let _ = std::fs::remove_file(&self.lock_path);
        let _ = self.lock.unlock();
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn mode_0600_stale_replaced_live_and_files_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let first = ServeSocket::bind(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(lock_path(&path)).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(matches!(ServeSocket::bind(&path), Err(SocketError::InUse { .. })));
        drop(first);
        assert!(!path.exists() && !lock_path(&path).exists(), "both removed when dropped");
        // A socket left behind by a killed server: nobody holds its lock, so it is replaced.
        let stale = UnixListener::bind(dir.path().join("other.sock")).unwrap();
        std::fs::write(lock_path(&dir.path().join("other.sock")), b"").unwrap();
        let replaced = ServeSocket::bind(&dir.path().join("other.sock"));
        assert!(replaced.is_ok(), "{replaced:?}");
        drop((replaced, stale));
        let file = dir.path().join("plain");
        std::fs::write(&file, b"keep me").unwrap();
        assert!(matches!(ServeSocket::bind(&file), Err(SocketError::NotASocket { .. })));
        assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
    }

    #[test]
    fn a_symlink_as_the_lock_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let target = dir.path().join("victim");
        std::fs::write(&target, b"keep me").unwrap();
        std::os::unix::fs::symlink(&target, lock_path(&path)).unwrap();
        assert!(matches!(ServeSocket::bind(&path), Err(SocketError::Io { .. })));
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
    }
}
