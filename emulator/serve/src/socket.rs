//! The listening socket: created mode 0600 (only the user who serves may attach), never over a
//! file that is not a socket, replacing only a stale socket nobody listens on, and removed when
//! the server ends.

use std::io;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
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
    /// A server is listening at the path.
    #[error("{path} is in use: a server is listening on it")]
    InUse {
        /// The path.
        path: PathBuf,
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

/// A listening socket that is unlinked when dropped.
#[derive(Debug)]
pub struct ServeSocket {
    listener: UnixListener,
    path: PathBuf,
}

impl ServeSocket {
    /// Creates the socket at `path`.
    pub fn bind(path: &Path) -> Result<Self, SocketError> {
        let io = |source| SocketError::Io { path: path.to_path_buf(), source };
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !meta.file_type().is_socket() => {
                return Err(SocketError::NotASocket { path: path.to_path_buf() });
            }
            Ok(_) => {
                // A socket: live if something accepts a connection, stale otherwise.
                if UnixStream::connect(path).is_ok() {
                    return Err(SocketError::InUse { path: path.to_path_buf() });
                }
                std::fs::remove_file(path).map_err(io)?;
            }
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
        Ok(Self { listener, path: path.to_path_buf() })
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
        assert!(matches!(ServeSocket::bind(&path), Err(SocketError::InUse { .. })));
        // A socket left behind by a killed server: nothing listens, so it is replaced.
        std::mem::forget(first);
        let stale = UnixListener::bind(dir.path().join("other.sock")).unwrap();
        drop(stale);
        let replaced = ServeSocket::bind(&dir.path().join("other.sock"));
        assert!(replaced.is_ok());
        drop(replaced);
        assert!(!dir.path().join("other.sock").exists(), "removed when dropped");
        let file = dir.path().join("plain");
        std::fs::write(&file, b"keep me").unwrap();
        assert!(matches!(ServeSocket::bind(&file), Err(SocketError::NotASocket { .. })));
        assert_eq!(std::fs::read(&file).unwrap(), b"keep me");
    }
}
