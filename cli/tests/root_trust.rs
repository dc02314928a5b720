//! What root acts on: `apply` follows only a configuration and images that no one but root (and
//! the invoking user) can change, relative image paths are the configuration's, the emulator's
//! state files are never reached through a planted symbolic link, `--log-file` never appends to
//! another user's file, and the device lock is checked before and after it is taken.
//!
//! CI runs these as root: files of "another user" are made with `chown` to uid 65534 (nobody).
//! Run by another user, the tests that need `chown` say so and skip.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::{Run, fresh, next_profile, ocetool, wait_until};
use oce_firmware::build::ImageBuilder;

/// The user ID these tests run as (the owner of a file they create).
fn my_uid() -> u32 {
    let d = tempfile::tempdir().unwrap();
    let probe = d.path().join("probe");
    std::fs::write(&probe, b"").unwrap();
    std::fs::metadata(&probe).unwrap().uid()
}

/// Gives `path` to uid/gid 65534 (nobody); false (with a note) when this user may not.
fn give_to_nobody(path: &Path) -> bool {
    match std::os::unix::fs::lchown(path, Some(65534), Some(65534)) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("skipped: cannot chown {} to uid 65534 ({e}); run the tests as root", path.display());
            false
        }
    }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn write_config(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("ocetool.toml");
    std::fs::write(&path, text).unwrap();
    chmod(&path, 0o644);
    path
}

fn apply(dev: &str, config: &Path) -> Run {
    ocetool(&["--device", dev, "apply", "--config", config.to_str().unwrap(), "--json"])
}

/// The one error line of a run: the JSON error's message (with `--json`) or stderr.
fn one_line(run: &Run) -> String {
    if run.stdout.trim_start().starts_with('{') {
        let doc = run.json();
        doc["error"]["message"].as_str().unwrap_or_else(|| panic!("no error in {doc}")).to_owned()
    } else {
        assert_eq!(run.message_lines().len(), 1, "one line: {}", run.stderr);
        run.message_lines()[0].to_owned()
    }
}

const ROCE: &str = "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n";

#[test]
fn apply_refuses_a_configuration_others_can_write() {
    let (d, dev) = fresh();
    let config = write_config(d.path(), ROCE);
    chmod(&config, 0o666);
    let run = apply(&dev, &config);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert_eq!(run.json()["error"]["kind"], "refused");
    let m = one_line(&run);
    let owner = my_uid();
    assert!(
        m.contains(&format!("{}: writable by group and others (owner uid {owner}, mode 0666)", config.display())),
        "{m}"
    );
    assert_eq!(next_profile(&dev), "NIC", "nothing was applied");
    // Text mode: the same, on one line.
    let text = ocetool(&["--device", &dev, "apply", "--config", config.to_str().unwrap()]);
    assert_eq!(text.code, 4);
    assert!(one_line(&text).contains("mode 0666"), "{}", text.stderr);
    // Group-writable is refused too, even for a group of one.
    chmod(&config, 0o664);
    let run = apply(&dev, &config);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert!(one_line(&run).contains("writable by group (owner uid"), "{}", run.stdout);
    chmod(&config, 0o644);
    let run = apply(&dev, &config);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(next_profile(&dev).contains("RoCE"));
}

#[test]
fn apply_refuses_a_configuration_owned_by_another_user() {
    let (d, dev) = fresh();
    let config = write_config(d.path(), ROCE);
    if !give_to_nobody(&config) {
        return;
    }
    let run = apply(&dev, &config);
    assert_eq!(run.code, 4, "{}", run.stdout);
    let m = one_line(&run);
    assert!(m.contains(&config.display().to_string()) && m.contains("owned by another user"), "{m}");
    assert!(m.contains("(owner uid 65534, mode 0644)"), "{m}");
    assert_eq!(next_profile(&dev), "NIC");
}

#[test]
fn apply_refuses_a_configuration_in_a_directory_others_can_write() {
    let (d, dev) = fresh();
    let shared = d.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let config = write_config(&shared, ROCE);
    chmod(&shared, 0o777);
    let run = apply(&dev, &config);
    assert_eq!(run.code, 4, "{}", run.stdout);
    let m = one_line(&run);
    assert!(m.contains(&format!("{}: writable by group and others (owner", shared.display())), "{m}");
    assert!(m.contains("mode 0777"), "{m}");
    // Another user's directory above it.
    chmod(&shared, 0o755);
    if give_to_nobody(&shared) {
        let run = apply(&dev, &config);
        assert_eq!(run.code, 4, "{}", run.stdout);
        assert!(one_line(&run).contains(&format!("{}: owned by another user", shared.display())), "{}", run.stdout);
    }
    // A sticky directory others can write (like /tmp) may hold it: no one else can rename or
    // remove an entry they do not own there.
    std::os::unix::fs::chown(&shared, Some(my_uid()), None).unwrap();
    chmod(&shared, 0o1777);
    let run = apply(&dev, &config);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(next_profile(&dev).contains("RoCE"));
}

#[test]
fn apply_refuses_an_image_others_can_write_and_flashes_nothing() {
    let (d, dev) = fresh();
    let image = d.path().join("new.ufi");
    std::fs::write(&image, ImageBuilder::new("11.2.0.0").build().unwrap()).unwrap();
    chmod(&image, 0o666);
    let config =
        write_config(d.path(), &format!("[[adapter]]\nmatch = {{ all = true }}\nfirmware = \"{}\"\n", image.display()));
    let flash_before = std::fs::read(d.path().join("emu/flash.bin")).unwrap();
    let run = apply(&dev, &config);
    assert_eq!(run.code, 4, "{}", run.stdout);
    let m = one_line(&run);
    assert!(m.contains(&format!("{}: writable by group and others", image.display())), "{m}");
    assert!(m.contains("mode 0666"), "{m}");
    assert!(std::fs::read(d.path().join("emu/flash.bin")).unwrap() == flash_before, "nothing flashed");
    chmod(&image, 0o644);
    if give_to_nobody(&image) {
        let run = apply(&dev, &config);
        assert_eq!(run.code, 4, "{}", run.stdout);
        assert!(one_line(&run).contains("owned by another user, not by root (owner uid 65534"), "{}", run.stdout);
        assert!(std::fs::read(d.path().join("emu/flash.bin")).unwrap() == flash_before, "nothing flashed");
    }
}

#[test]
fn a_relative_image_path_is_the_configuration_directorys_not_the_working_directorys() {
    let (d, dev) = fresh();
    let etc = d.path().join("etc");
    let elsewhere = d.path().join("cwd");
    std::fs::create_dir(&etc).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::write(etc.join("new.ufi"), ImageBuilder::new("11.2.0.0").build().unwrap()).unwrap();
    std::fs::write(elsewhere.join("new.ufi"), ImageBuilder::new("11.3.0.0").build().unwrap()).unwrap();
    let config = write_config(&etc, "[[adapter]]\nmatch = { all = true }\nfirmware = \"new.ufi\"\n");
    let run: Run = common::command()
        .current_dir(&elsewhere)
        .args(["--device", &dev, "apply", "--config", config.to_str().unwrap(), "--json"])
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc = run.json();
    assert_eq!(doc["adapters"][0]["firmware"]["stored"], "11.2.0.0", "{doc}");
    // A relative --config: the image is still beside it.
    let run: Run = common::command()
        .current_dir(d.path())
        .args(["--device", &dev, "apply", "--config", "etc/ocetool.toml", "--json"])
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["adapters"][0]["actions"][0], "firmware 11.2.0.0 is already stored");
}

#[test]
fn a_symlink_planted_as_the_state_temporary_file_is_not_followed() {
    let (d, dev) = fresh();
    let victim = d.path().join("victim");
    std::fs::write(&victim, b"root's secret\n").unwrap();
    chmod(&victim, 0o600);
    let emu = d.path().join("emu");
    symlink(&victim, emu.join("state.json.tmp")).unwrap();
    let run = ocetool(&["--device", &dev, "set-profile", "roce", "--yes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let victim_now = String::from_utf8_lossy(&std::fs::read(&victim).unwrap()).into_owned();
    assert_eq!(victim_now, "root's secret\n", "the victim is untouched");
    assert_eq!(std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777, 0o600);
    let state = std::fs::symlink_metadata(emu.join("state.json")).unwrap();
    assert!(state.file_type().is_file(), "state.json is a regular file, not the planted link");
    assert!(next_profile(&dev).contains("RoCE"), "the state was saved");
}

#[test]
fn state_and_flash_files_reached_through_a_symlink_are_refused() {
    for name in ["flash.bin", "state.json"] {
        let (d, dev) = fresh();
        let emu = d.path().join("emu");
        let moved = d.path().join(name);
        std::fs::rename(emu.join(name), &moved).unwrap();
        symlink(&moved, emu.join(name)).unwrap();
        let before = std::fs::read(&moved).unwrap();
        let run = ocetool(&["--device", &dev, "set-profile", "roce", "--yes"]);
        assert_eq!(run.code, 4, "{name}: {}", run.stderr);
        let m = one_line(&run);
        assert!(m.contains(&format!("{} is a symbolic link", emu.join(name).display())), "{m}");
        assert!(std::fs::read(&moved).unwrap() == before, "{name}: the link's target is untouched");
    }
}

#[test]
fn a_state_directory_of_another_user_or_writable_by_others_is_refused() {
    let (d, dev) = fresh();
    let emu = d.path().join("emu");
    chmod(&emu, 0o770);
    let run = ocetool(&["--device", &dev, "query"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    let m = one_line(&run);
    assert!(m.contains(&format!("{}: writable by group", emu.display())) && m.contains("mode 0770"), "{m}");
    chmod(&emu, 0o707);
    assert!(one_line(&ocetool(&["--device", &dev, "query"])).contains("writable by others"));
    chmod(&emu, 0o755);
    assert_eq!(ocetool(&["--device", &dev, "query"]).code, 0);
    if !give_to_nobody(&emu) {
        return;
    }
    let state_before = std::fs::read(emu.join("state.json")).unwrap();
    let run = ocetool(&["--device", &dev, "set-profile", "roce", "--yes"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(one_line(&run).contains(&format!("{}: owned by another user", emu.display())), "{}", run.stderr);
    assert_eq!(std::fs::read(emu.join("state.json")).unwrap(), state_before);
}

#[test]
fn the_default_state_directory_is_checked_too() {
    let d = tempfile::tempdir().unwrap();
    let xdg = d.path().join("state");
    let run =
        |args: &[&str]| -> Run { common::command().env("XDG_STATE_HOME", &xdg).args(args).output().unwrap().into() };
    assert_eq!(run(&["--device", "emu", "emulator", "init"]).code, 0);
    let emu = xdg.join("ocetool/emu");
    assert_eq!(std::fs::metadata(&emu).unwrap().permissions().mode() & 0o777, 0o700, "created private");
    if !give_to_nobody(&emu) {
        return;
    }
    let refused = run(&["--device", "emu", "query"]);
    assert_eq!(refused.code, 4, "{}", refused.stderr);
    assert!(one_line(&refused).contains(&format!("{}: owned by another user", emu.display())), "{}", refused.stderr);
}

#[test]
fn a_log_file_of_another_user_or_a_symlink_costs_a_warning_and_is_left_alone() {
    let (d, dev) = fresh();
    let log = d.path().join("ocetool.log");
    std::fs::write(&log, b"someone else's log\n").unwrap();
    if give_to_nobody(&log) {
        let run = ocetool(&["--device", &dev, "--log-file", log.to_str().unwrap(), "query", "--json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.message_lines().len(), 1, "{}", run.stderr);
        let warning = run.message_lines()[0];
        assert!(warning.starts_with("ocetool: warning: cannot open the log file"), "{warning}");
        assert!(warning.contains(&format!("{}: owned by another user", log.display())), "{warning}");
        assert_eq!(std::fs::read(&log).unwrap(), b"someone else's log\n");
    }
    let target = d.path().join("target.log");
    std::fs::write(&target, b"keep\n").unwrap();
    let link = d.path().join("link.log");
    symlink(&target, &link).unwrap();
    let run = ocetool(&["--device", &dev, "--log-file", link.to_str().unwrap(), "query", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.message_lines()[0].contains(&format!("{} is a symbolic link", link.display())), "{}", run.stderr);
    assert_eq!(std::fs::read(&target).unwrap(), b"keep\n");
}

/// A fake sysfs with one OneConnect card at 0000:04:00, and `ocetool --device 0000:04:00.0`
/// with its locks in `locks`.
fn pci_run(root: &Path, locks: &Path, wait: &str) -> std::process::Command {
    common::fake_pci_function(root, "0000:04:00.0", 0x10df, 0x0720);
    let mut cmd = common::with_fake_sysfs(root);
    cmd.env("OCETOOL_LOCK_DIR", locks).args(["--device", "0000:04:00.0", "--wait", wait, "profiles"]);
    cmd
}

#[test]
fn a_lock_directory_that_is_a_symlink_another_users_or_writable_by_others_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real-locks");
    std::fs::create_dir(&real).unwrap();
    let link = d.path().join("locks");
    symlink(&real, &link).unwrap();
    let run: Run = pci_run(d.path(), &link, "0").output().unwrap().into();
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(one_line(&run).contains(&format!("{} is a symbolic link", link.display())), "{}", run.stderr);
    assert!(std::fs::read_dir(&real).unwrap().next().is_none(), "nothing created through the link");

    chmod(&real, 0o777);
    let run: Run = pci_run(d.path(), &real, "0").output().unwrap().into();
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(one_line(&run).contains(&format!("{}: writable by others", real.display())), "{}", run.stderr);
    // Sticky, like /run/lock: fine (the run then fails for want of an IOMMU group, not the lock).
    chmod(&real, 0o1777);
    let run: Run = pci_run(d.path(), &real, "0").output().unwrap().into();
    assert!(![4, 5].contains(&run.code), "{}", run.stderr);
    chmod(&real, 0o755);
    if give_to_nobody(&real) {
        let run: Run = pci_run(d.path(), &real, "0").output().unwrap().into();
        assert_eq!(run.code, 4, "{}", run.stderr);
        assert!(one_line(&run).contains(&format!("{}: owned by another user", real.display())), "{}", run.stderr);
    }
}

#[test]
fn a_lock_file_of_another_user_is_refused_and_a_new_one_is_the_groups() {
    let d = tempfile::tempdir().unwrap();
    let locks = d.path().join("locks");
    std::fs::create_dir(&locks).unwrap();
    let lock = locks.join("0000:04:00.lock");
    std::fs::write(&lock, b"").unwrap();
    if !give_to_nobody(&lock) {
        return;
    }
    let run: Run = pci_run(d.path(), &locks, "0").output().unwrap().into();
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(one_line(&run).contains(&format!("{}: owned by another user", lock.display())), "{}", run.stderr);
    // A lock directory shared with a group (tmpfiles.d: 0770 root:ocetool): the lock file root
    // creates is the group's, mode 0660, so the group's members can take it after root.
    std::fs::remove_file(&lock).unwrap();
    std::os::unix::fs::chown(&locks, Some(0), Some(65534)).unwrap();
    chmod(&locks, 0o770);
    let run: Run = pci_run(d.path(), &locks, "0").output().unwrap().into();
    assert!(![4, 5].contains(&run.code), "{}", run.stderr);
    let meta = std::fs::metadata(&lock).unwrap();
    assert_eq!((meta.gid(), meta.permissions().mode() & 0o777), (65534, 0o660));
}

#[test]
fn a_lock_file_replaced_while_waiting_is_taken_again_not_beside_the_new_holder() {
    let d = tempfile::tempdir().unwrap();
    let locks = d.path().join("locks");
    std::fs::create_dir(&locks).unwrap();
    let lock = locks.join("0000:04:00.lock");
    let open = || std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock).unwrap();
    // A first holder (this test) locks the file; ocetool opens the same file and waits.
    let first = open();
    first.try_lock().unwrap();
    let child = pci_run(d.path(), &locks, "3").stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let fd_dir = PathBuf::from(format!("/proc/{}/fd", child.id()));
    wait_until("ocetool to open the lock file", || {
        std::fs::read_dir(&fd_dir)
            .map(|fds| fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == lock)))
            .unwrap_or(false)
    });
    // Someone removes the lock file ("remove it") and a second holder creates and locks a new
    // one; then the first holder lets go of the old one.
    std::fs::remove_file(&lock).unwrap();
    let second = open();
    second.try_lock().unwrap();
    drop(first);
    // ocetool now holds the removed file's lock: it must see that the path is another file, and
    // wait for that one's holder instead of running beside it.
    let out = child.wait_with_output().unwrap();
    let run: Run = out.into();
    assert_eq!(run.code, 5, "{}", run.stderr);
    let m = one_line(&run);
    assert!(m.contains("device busy"), "{m}");
    assert!(m.contains(&format!("held by process {}", std::process::id())), "the holder is named: {m}");
    assert!(!m.contains("remove"), "no advice to remove a lock a live process holds: {m}");
    drop(second);
}
