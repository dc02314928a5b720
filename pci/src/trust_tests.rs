//! The trust rules on real files in a temporary directory. Files of "another user" need chown:
//! as root (CI) they are made; run as another user, those checks say so and are skipped.

use std::os::unix::fs::{PermissionsExt, symlink};

use super::*;

/// A private directory for one test (under `/tmp`, whose sticky bit the strict walk passes).
fn private() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn file(path: &Path, mode: u32) -> PathBuf {
    fs::write(path, b"x").unwrap();
    chmod(path, mode);
    path.to_path_buf()
}

/// Gives `path` (not following a link) to `uid`; false when this user may not (not root).
fn chown(path: &Path, uid: u32) -> bool {
    match std::os::unix::fs::lchown(path, Some(uid), None) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("skipped: cannot chown {} to uid {uid} ({e}); run the tests as root", path.display());
            false
        }
    }
}

/// The owner and problem of an [`PciError::Untrusted`] for `path`, else a panic.
fn refusal(result: Result<impl std::fmt::Debug, PciError>, path: &Path) -> (u32, u32, String) {
    match result {
        Err(PciError::Untrusted { path: p, owner, mode, problem }) if p == path => (owner, mode, problem),
        other => panic!("expected {} to be refused, got {other:?}", path.display()),
    }
}

fn me() -> Owners {
    Owners::root_and_me()
}

#[test]
fn a_private_tree_passes_and_resolves_links() {
    let d = private();
    let conf = file(&d.path().join("ocetool.toml"), 0o644);
    assert_eq!(check_path(&conf, me()).unwrap(), Some(conf.clone()));
    // Through a relative link with `..`: the resolved path comes back.
    fs::create_dir(d.path().join("sub")).unwrap();
    symlink("../ocetool.toml", d.path().join("sub/link")).unwrap();
    assert_eq!(check_path(&d.path().join("sub/link"), me()).unwrap(), Some(conf));
    // A file that does not exist in a private directory: nobody else could create it.
    assert_eq!(check_path(&d.path().join("missing.ufi"), me()).unwrap(), None);
    assert_eq!(check_path(&d.path().join("no/such/dir/x"), me()).unwrap(), None);
}

#[test]
fn a_file_or_a_directory_above_it_that_others_can_write_is_refused() {
    let d = private();
    let conf = file(&d.path().join("ocetool.toml"), 0o666);
    let (_, mode, problem) = refusal(check_path(&conf, me()), &conf);
    assert_eq!((mode, problem.as_str()), (0o666, "writable by group and others"));
    chmod(&conf, 0o646);
    assert_eq!(refusal(check_path(&conf, me()), &conf).2, "writable by others");
    chmod(&conf, 0o664);
    assert_eq!(refusal(check_path(&conf, me()), &conf).2, "writable by group");
    chmod(&conf, 0o644);
    let sub = d.path().join("etc");
    fs::create_dir(&sub).unwrap();
    let inner = file(&sub.join("ocetool.toml"), 0o644);
    chmod(&sub, 0o775);
    assert_eq!(refusal(check_path(&inner, me()), &sub).2, "writable by group");
    // Not sticky: a name that does not exist there is refused too, before anyone plants it.
    chmod(&sub, 0o777);
    assert_eq!(refusal(check_path(&sub.join("later.ufi"), me()), &sub).2, "writable by group and others");
}

#[test]
fn a_link_in_a_directory_others_can_write_is_refused_even_to_a_good_target() {
    let d = private();
    let good = file(&d.path().join("good.ufi"), 0o644);
    let shared = d.path().join("shared");
    fs::create_dir(&shared).unwrap();
    symlink(&good, shared.join("image.ufi")).unwrap();
    chmod(&shared, 0o777);
    assert_eq!(refusal(check_path(&shared.join("image.ufi"), me()), &shared).2, "writable by group and others");
    // A link to somewhere others can write is followed there, and refused there.
    chmod(&shared, 0o755);
    let private_link = d.path().join("link.ufi");
    symlink(shared.join("image.ufi"), &private_link).unwrap();
    assert_eq!(check_path(&private_link, me()).unwrap(), Some(good));
    chmod(&shared, 0o757);
    assert_eq!(refusal(check_path(&private_link, me()), &shared).2, "writable by others");
}

#[test]
fn a_sticky_directory_passes_only_entries_of_trusted_owners() {
    let d = private();
    let sticky = d.path().join("tmp");
    fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    let mine = file(&sticky.join("mine.toml"), 0o644);
    assert_eq!(check_path(&mine, me()).unwrap(), Some(mine.clone()));
    let problem = refusal(check_path(&sticky.join("absent.ufi"), me()), &sticky).2;
    assert!(problem.contains("absent.ufi does not exist in it: anyone could create it"), "{problem}");
    if chown(&mine, 65534) {
        let (owner, _, problem) = refusal(check_path(&mine, me()), &mine);
        assert_eq!(owner, 65534);
        assert!(problem.starts_with("owned by another user, not by "), "{problem}");
        assert!(problem.ends_with("in a directory others can write"), "{problem}");
    }
}

#[test]
fn another_users_file_is_refused_and_a_non_root_user_trusts_root_and_itself() {
    let d = private();
    let conf = file(&d.path().join("ocetool.toml"), 0o644);
    if !chown(&conf, 65534) {
        return;
    }
    let (owner, _, problem) = refusal(check_path(&conf, me().as_uid(0)), &conf);
    assert_eq!((owner, problem.as_str()), (65534, "owned by another user, not by root"));
    // The same file, checked for uid 1000: root's and 1000's own files pass, 65534's do not.
    let user = me().as_uid(1000);
    assert_eq!(refusal(check_path(&conf, user), &conf).2, "owned by another user, not by root or you (uid 1000)");
    assert!(chown(&conf, 1000));
    assert_eq!(check_path(&conf, user).unwrap(), Some(conf.clone()));
    assert!(chown(&conf, 0));
    assert_eq!(check_path(&conf, user).unwrap(), Some(conf.clone()));
    // The private rule, for uid 1000: root's directory is not its own.
    assert_eq!(
        refusal(check_private_dir(d.path(), Owners::only_me().as_uid(1000)), d.path()).2,
        "owned by another user, not by you (uid 1000)"
    );
}

#[test]
fn a_private_directory_is_the_users_alone() {
    let d = private();
    check_private_dir(d.path(), Owners::only_me()).unwrap();
    chmod(d.path(), 0o770);
    assert_eq!(refusal(check_private_dir(d.path(), Owners::only_me()), d.path()).2, "writable by group");
    chmod(d.path(), 0o700);
    if chown(d.path(), 65534) {
        let problem = refusal(check_private_dir(d.path(), Owners::only_me()), d.path()).2;
        assert!(problem.starts_with("owned by another user, not by "), "{problem}");
        assert!(chown(d.path(), euid()));
    }
}

#[test]
fn a_lock_directory_is_no_link_and_shared_only_with_its_group_or_sticky() {
    let d = private();
    let locks = d.path().join("locks");
    fs::create_dir(&locks).unwrap();
    chmod(&locks, 0o770);
    check_lock_dir(&locks, me()).unwrap();
    chmod(&locks, 0o1777);
    check_lock_dir(&locks, me()).unwrap();
    chmod(&locks, 0o777);
    assert_eq!(refusal(check_lock_dir(&locks, me()), &locks).2, "writable by others");
    let link = d.path().join("link");
    symlink(&locks, &link).unwrap();
    assert!(matches!(check_lock_dir(&link, me()), Err(PciError::Symlink { path }) if path == link));
}

#[test]
fn opening_without_following_refuses_a_link_and_a_fifo() {
    let d = private();
    let target = file(&d.path().join("target"), 0o600);
    let link = d.path().join("state.json");
    symlink(&target, &link).unwrap();
    let err = open_no_follow(&link, OpenOptions::new().read(true)).unwrap_err();
    assert!(matches!(&err, PciError::Symlink { path } if *path == link), "{err}");
    assert_eq!(err.to_string(), format!("{} is a symbolic link; ocetool does not follow one there", link.display()));
    let fifo = d.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let err = open_no_follow(&fifo, OpenOptions::new().read(true)).unwrap_err();
    assert!(matches!(err, PciError::NotAFile { kind: "a named pipe (FIFO)", .. }), "{err}");
    open_no_follow(&target, OpenOptions::new().read(true)).unwrap();
}

#[test]
fn a_replaced_file_is_no_longer_at_its_path() {
    let d = private();
    let path = file(&d.path().join("x.lock"), 0o644);
    let open = File::open(&path).unwrap();
    assert!(is_still_at(&path, &open).unwrap());
    fs::remove_file(&path).unwrap();
    assert!(!is_still_at(&path, &open).unwrap(), "removed");
    file(&path, 0o644);
    assert!(!is_still_at(&path, &open).unwrap(), "replaced by another file");
}

#[test]
fn the_message_names_the_path_its_owner_and_its_mode() {
    let d = private();
    let conf = file(&d.path().join("ocetool.toml"), 0o666);
    let err = check_path(&conf, me()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: writable by group and others (owner uid {}, mode 0666)",
            conf.display(),
            fs::metadata(&conf).unwrap().uid()
        )
    );
}
