//! The lock on real files: busy with the holder named, links and FIFOs refused, `/proc/locks`
//! read right.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;

use super::*;
use crate::error::ErrorKind;

const PROC: &str = "/proc";

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn second_lock_is_busy_and_names_the_holder() {
    let d = dir();
    let path = d.path().join("dev.lock");
    let first = DeviceLock::acquire(&path, Duration::ZERO, "x", Path::new(PROC)).unwrap();
    let err = DeviceLock::acquire(&path, Duration::from_millis(50), "x", Path::new(PROC)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    // This process holds it (through `first`): /proc/locks says so.
    let me = std::process::id();
    assert!(err.message.contains(&format!("is held by process {me} (")), "{}", err.message);
    assert!(err.message.contains("wait for it to finish (or stop that process), or raise --wait"), "{}", err.message);
    assert!(!err.message.contains("remove"), "{}", err.message);
    drop(first);
    DeviceLock::acquire(&path, Duration::ZERO, "x", Path::new(PROC)).unwrap();
}

#[test]
fn without_proc_locks_the_holder_is_another_process() {
    let d = dir();
    let path = d.path().join("dev.lock");
    let _first = DeviceLock::acquire(&path, Duration::ZERO, "x", Path::new(PROC)).unwrap();
    let err = DeviceLock::acquire(&path, Duration::ZERO, "x", &d.path().join("no-proc")).unwrap_err();
    assert!(err.message.contains("is held by another process; wait for it to finish, or raise"), "{}", err.message);
}

#[test]
fn a_lock_path_that_is_a_symlink_or_a_fifo_is_refused() {
    let d = dir();
    let target = d.path().join("someone-elses-file");
    std::fs::write(&target, b"keep").unwrap();
    let link = d.path().join("dev.lock");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = DeviceLock::acquire(&link, Duration::ZERO, "x", Path::new(PROC)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{}", err.message);
    assert!(err.message.contains("is a symbolic link"), "{}", err.message);
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    let fifo = d.path().join("fifo.lock");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let err = DeviceLock::acquire(&fifo, Duration::ZERO, "x", Path::new(PROC)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{}", err.message);
    assert!(err.message.contains("named pipe"), "{}", err.message);
}

#[test]
fn a_missing_lock_directory_is_created() {
    let d = dir();
    let path: PathBuf = d.path().join("run/lock/ocetool/0000:03:00.lock");
    drop(DeviceLock::acquire(&path, Duration::ZERO, "x", Path::new(PROC)).unwrap());
    let meta = std::fs::symlink_metadata(path.parent().unwrap()).unwrap();
    assert!(meta.is_dir());
}

#[test]
fn proc_locks_lines_are_matched_by_device_and_inode() {
    let text = "\
1: POSIX  ADVISORY  WRITE 700 08:01:1234 0 EOF
2: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF
2: -> FLOCK  ADVISORY  WRITE 4343 fd:01:1234 0 EOF
3: FLOCK  ADVISORY  WRITE 0 fd:01:99 0 EOF
4: FLOCK  ADVISORY  WRITE 5151 103:05:1234 0 EOF
";
    assert_eq!(flock_holder(text, 0xfd, 1, 1234), Some(4242), "the holder, not the waiter");
    assert_eq!(flock_holder(text, 8, 1, 1234), None, "a POSIX lock is not ocetool's flock");
    assert_eq!(flock_holder(text, 0xfd, 1, 99), None, "a holder in another PID namespace");
    assert_eq!(flock_holder(text, 0x103, 5, 1234), Some(5151), "major numbers above 0xff");
    assert_eq!(flock_holder(text, 0xfd, 2, 1234), None);
}

#[test]
fn the_real_proc_locks_names_this_process() {
    let d = dir();
    let path = d.path().join("x.lock");
    let file = File::create(&path).unwrap();
    file.try_lock().unwrap();
    let meta = file.metadata().unwrap();
    let holder = holder_of(Path::new(PROC), &meta).expect("this process's flock is in /proc/locks");
    assert_eq!(holder.pid, std::process::id());
    let comm = std::fs::read_to_string("/proc/self/comm").unwrap();
    assert_eq!(holder.command.as_deref(), Some(comm.trim()));
    assert_eq!(libc::major(meta.dev()), libc::major(std::fs::metadata(&path).unwrap().dev()));
}

#[test]
fn in_a_directory_shared_with_a_group_that_groups_lock_file_is_taken() {
    let d = dir();
    let locks = d.path().join("locks");
    std::fs::create_dir(&locks).unwrap();
    let path = locks.join("0000:03:00.lock");
    std::fs::write(&path, b"").unwrap();
    // A member of group 65534 created the lock file (as ocetool would: the directory's group).
    if std::os::unix::fs::chown(&path, Some(65534), Some(65534)).is_err() {
        eprintln!("skipped: chown needs root");
        return;
    }
    let take = || DeviceLock::acquire(&path, Duration::ZERO, "x", Path::new(PROC));
    // A private directory: another user's file is refused.
    let err = take().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused, "{}", err.message);
    assert!(err.message.contains("owned by another user"), "{}", err.message);
    // The directory shared with group 65534 (0770, like /run/lock/ocetool): the group's file is
    // taken; another group's file still is not.
    std::os::unix::fs::chown(&locks, None, Some(65534)).unwrap();
    std::fs::set_permissions(&locks, std::fs::Permissions::from_mode(0o770)).unwrap();
    drop(take().unwrap());
    std::os::unix::fs::chown(&path, None, Some(0)).unwrap();
    assert_eq!(take().unwrap_err().kind(), ErrorKind::Refused);
    // Others may write it too (no sticky bit): the directory itself is refused.
    std::fs::set_permissions(&locks, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(take().unwrap_err().message.contains("writable by others"));
}
