//! One test per row of the README's "Exit codes" table: each provokes every situation the row
//! names (those a test can provoke) with the real binary, and checks the exit code, the JSON
//! `error.kind` where it applies, and that the error is one line on stderr.

mod common;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::{Command, Stdio};

use common::{Run, fresh, ocetool};
use oce_firmware::build::ImageBuilder;

/// Runs `args` in text mode and with `--json`, and checks both: exit `code`, one `ocetool: `
/// line on stderr (text) holding `needle`, and `error.kind` = `kind` (JSON).
fn expect(args: &[&str], code: i32, kind: &str, needle: &str) {
    let text = ocetool(args);
    assert_eq!(text.code, code, "{args:?}: {}", text.stderr);
    let lines = text.message_lines();
    assert_eq!(lines.len(), 1, "{args:?}: one line: {}", text.stderr);
    assert!(lines[0].starts_with("ocetool: "), "{args:?}: {}", lines[0]);
    assert!(lines[0].contains(needle), "{args:?}: {needle:?} not in {}", lines[0]);
    let json = ocetool(&[args, &["--json"]].concat());
    assert_eq!(json.code, code, "{args:?} --json: {}", json.stdout);
    assert_eq!(json.json()["error"]["kind"], kind, "{args:?}: {}", json.stdout);
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// True when this process can read a file whatever its mode (root): then "permission denied" on
/// a local file cannot be provoked, and the tests say so.
fn reads_everything(dir: &Path) -> bool {
    let probe = dir.join("unreadable-probe");
    std::fs::write(&probe, b"x").unwrap();
    chmod(&probe, 0o000);
    let readable = std::fs::read(&probe).is_ok();
    if readable {
        eprintln!("note: running as root, so the \"permission denied\" case is not provoked here");
    }
    readable
}

#[test]
fn success_is_0() {
    let (_d, dev) = fresh();
    assert_eq!(ocetool(&["--device", &dev, "query"]).code, 0);
    let unchanged = ocetool(&["--device", &dev, "set-profile", "nic", "--yes", "--json"]);
    assert_eq!(unchanged.code, 0, "{}", unchanged.stderr);
    assert_eq!(unchanged.json()["changed"], false, "nothing to change is success");
}

#[test]
fn a_device_or_firmware_error_is_1() {
    let (_d, dev) = fresh();
    // GET_FW_VERSION (COMMON 35, spec/protocol.md §5.3) answered with MCC_STATUS_FAILED.
    assert_eq!(ocetool(&["--device", &dev, "emulator", "fault", "set", "status=1:35:1"]).code, 0);
    expect(&["--device", &dev, "query"], 1, "failed", "base status 1");
    assert_eq!(ocetool(&["--device", &dev, "emulator", "fault", "clear", "--all"]).code, 0);
    assert_eq!(ocetool(&["--device", &dev, "emulator", "fault", "set", "gone"]).code, 0);
    expect(&["--device", &dev, "query"], 1, "failed", "stopped answering");
}

#[test]
fn a_bad_argument_is_2() {
    let (_d, dev) = fresh();
    expect(&["--device", "eth0", "query"], 2, "usage", "bad --device \"eth0\"");
    expect(&["--device", &dev, "set-profile", "rocee", "--yes"], 2, "usage", "\"rocee\" is not a profile");
    expect(&["--device", &dev, "raw", "--subsystem", "1", "--opcode", "35", "--payload", "zz"], 2, "usage", "hex");
    expect(&["fw", "build", "--output", "x.ufi"], 2, "usage", "not provided: --version <VERSION>");
    expect(&["query", "--bogus"], 2, "usage", "unexpected argument '--bogus'");
}

#[test]
fn a_named_file_that_cannot_be_used_is_2() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let fifo = dir.join("image.fifo");
    mkfifo(&fifo);
    let loop_a = dir.join("loop-a.ufi");
    symlink(dir.join("loop-b.ufi"), &loop_a).unwrap();
    symlink(&loop_a, dir.join("loop-b.ufi")).unwrap();
    let plain = dir.join("plain");
    std::fs::write(&plain, b"x").unwrap();
    let cases = [
        (dir.join("missing.ufi"), "No such file or directory"),
        (dir.to_path_buf(), "is a directory, not a regular file"),
        (fifo, "is a named pipe (FIFO), not a regular file"),
        ("/dev/null".into(), "is a character device, not a regular file"),
        (loop_a, "Too many levels of symbolic links"),
        (plain.join("image.ufi"), "Not a directory"),
    ];
    for (file, needle) in &cases {
        let file = file.to_str().unwrap();
        expect(&["fw", "inspect", file], 2, "usage", needle);
        expect(&["fw", "verify", file], 2, "usage", needle);
    }
    if !reads_everything(dir) {
        let locked = dir.join("locked.ufi");
        std::fs::write(&locked, ImageBuilder::new("11.2.0.0").build().unwrap()).unwrap();
        chmod(&locked, 0o000);
        expect(&["fw", "inspect", locked.to_str().unwrap()], 2, "usage", "Permission denied");
    }
    // An output file in a directory that does not exist.
    let out = dir.join("no-such-dir/image.ufi");
    let build = ["fw", "build", "--version", "11.2.0.0", "--output", out.to_str().unwrap()];
    expect(&build, 2, "usage", "No such file or directory");
}

#[test]
fn every_problem_with_the_apply_configuration_is_2() {
    let (d, dev) = fresh();
    let dir = d.path();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let fifo = dir.join("fifo.toml");
    mkfifo(&fifo);
    let loop_a = dir.join("loop-a.toml");
    symlink(dir.join("loop-b.toml"), &loop_a).unwrap();
    symlink(&loop_a, dir.join("loop-b.toml")).unwrap();
    let cases = [
        (dir.join("missing.toml"), "no configuration at"),
        (dir.join("emu"), "is a directory, not a regular file"),
        (fifo, "is a named pipe (FIFO), not a regular file"),
        (loop_a, "Too many levels of symbolic links"),
        (write("latin1.toml", b"# caf\xe9\n"), "valid UTF-8"),
        (write("broken.toml", b"[[adapter]\n"), ":1:"),
        (write("unknown.toml", b"[[adapter]]\nmatch = { all = true }\nprofil = \"roce\"\n"), "key `profil`"),
        (write("type.toml", b"[[adapter]]\nmatch = { all = true }\nunbind = \"yes\"\n"), "key `unbind`"),
    ];
    for (config, needle) in &cases {
        expect(&["--device", &dev, "apply", "--config", config.to_str().unwrap()], 2, "usage", needle);
    }
    if !reads_everything(dir) {
        let locked = write("locked.toml", b"[[adapter]]\nmatch = { all = true }\n");
        chmod(&locked, 0o000);
        expect(&["--device", &dev, "apply", "--config", locked.to_str().unwrap()], 2, "usage", "Permission denied");
    }
    assert!(common::next_profile(&dev) == "NIC", "nothing was applied");
}

#[test]
fn no_such_or_unsupported_device_is_3() {
    let d = tempfile::tempdir().unwrap();
    common::fake_pci_function(d.path(), "0000:04:00.0", 0x8086, 0x100e);
    let run = |args: &[&str]| -> Run { common::with_fake_sysfs(d.path()).args(args).output().unwrap().into() };
    for (args, needle) in [
        (&["--device", "0000:99:00.0", "query"][..], "no such PCI device: 0000:99:00.0"),
        (&["--device", "0000:04:00.0", "query"][..], "is not an Emulex OneConnect function"),
        (&["query"][..], "no OCe14000 adapter to work on"),
    ] {
        let text = run(args);
        assert_eq!(text.code, 3, "{args:?}: {}", text.stderr);
        assert_eq!(text.message_lines().len(), 1, "{}", text.stderr);
        assert!(text.message_lines()[0].contains(needle), "{}", text.stderr);
        let json = run(&[args, &["--json"]].concat());
        assert_eq!(json.json()["error"]["kind"], "no_device");
    }
}

#[test]
fn an_unusable_emulator_state_directory_is_3() {
    let (d, dev) = fresh();
    let state = d.path().join("emu/state.json");
    std::fs::write(&state, b"{ not json").unwrap();
    expect(&["--device", &dev, "query"], 3, "no_device", "is corrupt");
    std::fs::write(&state, b"{\"schema\": 99}").unwrap();
    expect(&["--device", &dev, "query"], 3, "no_device", "schema version 99");
    std::fs::remove_file(&state).unwrap();
    expect(&["--device", &dev, "query"], 3, "no_device", "state.json is missing");
    let file = d.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    expect(&["--device", &common::emu_arg(&file), "query"], 3, "no_device", "is not a directory");
    let foreign = d.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), b"mine").unwrap();
    expect(&["--device", &common::emu_arg(&foreign), "query"], 3, "no_device", "is not an emulator state directory");
}

#[test]
fn a_safety_refusal_is_4() {
    let (d, dev) = fresh();
    expect(&["--device", &dev, "set-profile", "roce"], 4, "refused", "--yes");
    let old = d.path().join("old.ufi");
    std::fs::write(&old, ImageBuilder::new("10.0.0.0").build().unwrap()).unwrap();
    expect(&["--device", &dev, "fw", "update", old.to_str().unwrap(), "--yes"], 4, "refused", "--allow-downgrade");
    let junk = d.path().join("junk.ufi");
    std::fs::write(&junk, vec![0x11; 2048]).unwrap();
    expect(&["--device", &dev, "fw", "update", junk.to_str().unwrap(), "--yes"], 4, "refused", "not a flashable image");
    expect(&["--device", &dev, "emulator", "init"], 4, "refused", "refusing to overwrite");
}

#[test]
fn a_path_ocetool_does_not_trust_is_4() {
    let (d, dev) = fresh();
    let config = d.path().join("ocetool.toml");
    std::fs::write(&config, b"[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n").unwrap();
    chmod(&config, 0o666);
    expect(&["--device", &dev, "apply", "--config", config.to_str().unwrap()], 4, "refused", "mode 0666");
    chmod(&config, 0o644);
    let image = d.path().join("new.ufi");
    std::fs::write(&image, ImageBuilder::new("11.2.0.0").build().unwrap()).unwrap();
    chmod(&image, 0o646);
    std::fs::write(&config, b"[[adapter]]\nmatch = { all = true }\nfirmware = \"new.ufi\"\n").unwrap();
    expect(&["--device", &dev, "apply", "--config", config.to_str().unwrap()], 4, "refused", "writable by others");
    let emu = d.path().join("emu");
    chmod(&emu, 0o775);
    expect(&["--device", &dev, "query"], 4, "refused", "writable by group");
    chmod(&emu, 0o700);
    let state = emu.join("state.json");
    std::fs::rename(&state, d.path().join("state.json")).unwrap();
    symlink(d.path().join("state.json"), &state).unwrap();
    expect(&["--device", &dev, "query"], 4, "refused", "is a symbolic link");
    std::fs::remove_file(&state).unwrap();
    std::fs::rename(d.path().join("state.json"), &state).unwrap();
    std::fs::remove_file(d.path().join(".emu.lock")).unwrap();
    mkfifo(&d.path().join(".emu.lock"));
    expect(&["--device", &dev, "query"], 4, "refused", "is a named pipe (FIFO), not a regular file");
}

#[test]
fn busy_is_5_and_names_the_holder() {
    let (d, dev) = fresh();
    let held = std::fs::File::create(d.path().join(".emu.lock")).unwrap();
    held.try_lock().unwrap();
    let needle = format!("is held by process {} (", std::process::id());
    expect(&["--device", &dev, "--wait", "0", "query"], 5, "busy", &needle);
    let run = ocetool(&["--device", &dev, "--wait", "0", "query"]);
    assert!(!run.stderr.contains("remove"), "no advice to remove a lock a live process holds: {}", run.stderr);
}

#[test]
fn a_stop_request_is_130_or_143() {
    let (d, dev) = fresh();
    let held = std::fs::File::create(d.path().join(".emu.lock")).unwrap();
    held.try_lock().unwrap();
    for (signal, code, name) in [("-INT", 130, "SIGINT"), ("-TERM", 143, "SIGTERM")] {
        let (mut child, mut stderr, mut text) = common::set_profile_waiting_for_lock(&dev, false, Stdio::null());
        assert!(Command::new("kill").arg(signal).arg(child.id().to_string()).status().unwrap().success());
        let status = child.wait().unwrap();
        std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
        assert_eq!(status.code(), Some(code), "{text}");
        let errors: Vec<&str> = text.lines().filter(|l| !l.starts_with(common::STEP_PREFIX)).collect();
        assert_eq!(errors.len(), 1, "one line: {text}");
        assert!(errors[0].contains(&format!("stopped by {name}")), "{text}");
    }
    drop(held);
    assert_eq!(common::next_profile(&dev), "NIC", "nothing changed");
}
