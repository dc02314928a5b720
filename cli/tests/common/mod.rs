//! Shared helpers of the CLI tests: the `ocetool` binary cargo built from this tree for this test
//! run (`CARGO_BIN_EXE_ocetool`, never a binary left over from an earlier build), run as a process
//! on temporary emulator directories.
//!
//! Each test file uses some of these helpers, so the unused rest is allowed per file.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The `ocetool` binary cargo built for this test run.
pub const OCETOOL: &str = env!("CARGO_BIN_EXE_ocetool");

/// A command for the binary with stdin closed (not a terminal) and no `OCETOOL_DEVICE` from the
/// caller's environment; the caller adds arguments and pipes.
pub fn command() -> Command {
    let mut cmd = Command::new(OCETOOL);
    cmd.env_remove("OCETOOL_DEVICE").stdin(Stdio::null());
    cmd
}

/// What one ocetool run produced.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Stdout parsed as JSON; panics with the output when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }

    /// The emulated adapter's event log lines on stderr (`-vvv` on an `emu:` device), without
    /// their prefix.
    pub fn events(&self) -> Vec<&str> {
        self.stderr.lines().filter_map(|l| l.strip_prefix(EVENT_PREFIX)).collect()
    }

    /// Stderr without the event log, step and firmware command lines: what a user sees without
    /// `-v`.
    pub fn message_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| ![EVENT_PREFIX, STEP_PREFIX, COMMAND_PREFIX].iter().any(|p| l.starts_with(p)))
            .collect()
    }

    /// The firmware command trace on stderr (`-vv`), without its prefix.
    pub fn trace(&self) -> Vec<&str> {
        self.stderr.lines().filter_map(|l| l.strip_prefix(COMMAND_PREFIX)).collect()
    }

    /// True when the event log shows command `opcode` of subsystem COMMON (1) executed.
    pub fn ran(&self, opcode: u8) -> bool {
        let needle = format!("subsystem: 1, opcode: {opcode},");
        self.events().iter().any(|e| e.starts_with("Command {") && e.contains(&needle))
    }
}

/// How `-vvv` marks a line of the emulated adapter's event log on stderr.
pub const EVENT_PREFIX: &str = "ocetool: emulator event: ";

/// How `-v` marks a step taken on stderr.
pub const STEP_PREFIX: &str = "ocetool: step: ";

/// How `-vv` marks a firmware command on stderr.
pub const COMMAND_PREFIX: &str = "ocetool: fw: ";

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Self {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs ocetool with `args`, stdin closed (not a terminal).
pub fn ocetool(args: &[&str]) -> Run {
    command().args(args).output().expect("run ocetool").into()
}

/// Adds PCI function `address` with the given IDs to a fake sysfs tree under `root`
/// (`root/sys/bus/pci/devices/ADDR/{vendor,device,class}`), for `--sysfs-root root/sys`.
pub fn fake_pci_function(root: &Path, address: &str, vendor: u16, device: u16) {
    let dir = root.join("sys/bus/pci/devices").join(address);
    std::fs::create_dir_all(&dir).expect("fake sysfs");
    for (file, value) in [("vendor", u32::from(vendor)), ("device", u32::from(device)), ("class", 0x02_0000)] {
        let text = if file == "class" { format!("{value:#08x}\n") } else { format!("{value:#06x}\n") };
        std::fs::write(dir.join(file), text).expect("fake sysfs");
    }
}

/// `ocetool --sysfs-root ROOT/sys --dev-root ROOT/dev`, for a fake tree made by
/// [`fake_pci_function`], with its runtime folder (driver hand-off records) in `ROOT/run`.
pub fn with_fake_sysfs(root: &Path) -> Command {
    let mut cmd = command();
    cmd.env("OCETOOL_RUN_DIR", root.join("run"));
    cmd.arg("--sysfs-root").arg(root.join("sys")).arg("--dev-root").arg(root.join("dev"));
    cmd
}

/// A factory-fresh emulated adapter in a temporary directory: the directory (kept alive by the
/// caller) and the `emu:DIR` device for it.
pub fn fresh() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let dev = emu_arg(&dir.path().join("emu"));
    assert_eq!(ocetool(&["--device", &dev, "emulator", "init"]).code, 0);
    (dir, dev)
}

/// The name of the adapter's next-boot profile.
pub fn next_profile(dev: &str) -> String {
    let q = ocetool(&["--device", dev, "query", "--json"]);
    assert_eq!(q.code, 0, "{}", q.stderr);
    q.json()["profile"]["next"]["name"].as_str().unwrap().to_owned()
}

/// Starts `ocetool ARGS` on a pseudo-terminal (util-linux `script`), with stdin, stdout and
/// stderr piped: what is written to stdin is typed at the terminal.
pub fn spawn_on_a_terminal(args: &[&str]) -> std::process::Child {
    let line = std::iter::once(OCETOOL).chain(args.iter().copied()).collect::<Vec<_>>().join(" ");
    Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_remove("OCETOOL_DEVICE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs a command on a pseudo-terminal")
}

/// `emu:DIR` for a path.
pub fn emu_arg(dir: &Path) -> String {
    format!("emu:{}", dir.display())
}

/// A count of the WRITE_FLASHROM chunks an emulated adapter received, readable while another
/// process flashes it: set the fault `flash-fail-at=CHUNK_COUNTER` (far more chunks than any
/// update sends, so it never fires); the emulator saves its countdown in `state.json` at every
/// chunk, so `CHUNK_COUNTER - flash_fail_at` chunks have arrived.
pub const CHUNK_COUNTER: u64 = 100_000;

/// Chunks received since `flash-fail-at=CHUNK_COUNTER` was set on the adapter in `state_dir`.
pub fn chunks_received(state_dir: &Path) -> u64 {
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(state_dir.join("state.json")).expect("state.json")).expect("JSON");
    CHUNK_COUNTER - state["faults"]["flash_fail_at"].as_u64().expect("flash-fail-at is set")
}

/// Polls `done` every 5 ms for up to 20 s; panics naming `what` when it never holds.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A `set-profile roce --yes` (with `--json` when `json`) that waits for the emulated adapter's
/// lock, which the caller holds: returned once `-v` has said it is waiting (its signal handlers are
/// in place by then), with its stderr so far and the reader of the rest.
pub fn set_profile_waiting_for_lock(
    dev: &str,
    json: bool,
    stdout: Stdio,
) -> (std::process::Child, std::io::BufReader<std::process::ChildStderr>, String) {
    use std::io::BufRead;
    let mut args = vec!["--device", dev, "--wait", "600", "-v"];
    if json {
        args.push("--json");
    }
    args.extend(["set-profile", "roce", "--yes"]);
    let mut child = command().args(&args).stdout(stdout).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut text = String::new();
    while !text.contains("taking the adapter's lock") {
        assert!(stderr.read_line(&mut text).unwrap() > 0, "{text}");
    }
    (child, stderr, text)
}

/// `ocetool` on a fake kernel (`oce_pci::fake_sysfs`): its sysfs, `/dev` and `/proc`, with the
/// lock files (`ROOT/locks`) and the runtime folder (hand-off records) in the tree too, so that
/// nothing of the host's is read or written; the caller adds the arguments.
pub fn on_fake_tree(tree: &oce_pci::fake_sysfs::FakeTree) -> Command {
    let roots = tree.roots();
    let root = roots.sysfs.parent().expect("the fake tree's root");
    let mut cmd = command();
    cmd.env("OCETOOL_LOCK_DIR", root.join("locks"))
        .env("OCETOOL_RUN_DIR", &roots.run)
        .arg("--sysfs-root")
        .arg(&roots.sysfs)
        .arg("--dev-root")
        .arg(&roots.dev)
        .arg("--proc-root")
        .arg(&roots.proc);
    cmd
}
