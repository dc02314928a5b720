//! Shared helpers for the end-to-end tests: fresh emulated adapters in temporary directories, a
//! host mailbox on them, and the `ocetool` binary run as a process.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, OnceLock};

use oce_emulator::Emulator;
use oce_mailbox::{BootstrapMailbox, ManualClock};
use tempfile::TempDir;

/// A fresh emulated adapter with a fixed identity seed, in its own temporary directory.
pub fn fresh_emulator() -> (TempDir, Emulator) {
    let dir = tempfile::tempdir().expect("temp dir");
    let emu = Emulator::create_seeded(&dir.path().join("emu"), 7).expect("create emulator");
    (dir, emu)
}

/// An initialised host mailbox (POST waited, fw_init, FUNCTION_RESET) on `emu`, with a manual
/// clock so a timeout in a test costs no real time.
pub fn host(emu: &Emulator) -> BootstrapMailbox<Emulator> {
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new())).expect("open mailbox");
    mbox.initialize().expect("initialise");
    mbox
}

/// The `ocetool` binary: `$OCETOOL_BIN`, else the one cargo built next to this test, built on
/// demand when a test runs alone (`cargo test -p oce-tests`).
pub fn ocetool_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(p) = std::env::var_os("OCETOOL_BIN") {
            return PathBuf::from(p);
        }
        // target/<profile>/deps/<test> -> target/<profile>/ocetool
        let exe = std::env::current_exe().expect("current exe");
        let profile_dir = exe.parent().and_then(Path::parent).expect("target profile dir").to_path_buf();
        let bin = profile_dir.join("ocetool");
        if !bin.exists() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "-q", "-p", "ocetool", "--bin", "ocetool"]);
            if profile_dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let status = cmd.status().expect("run cargo build");
            assert!(status.success(), "building ocetool failed");
        }
        bin
    })
    .clone()
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
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Self {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs ocetool with `args`, stdin closed (not a terminal), no `OCETOOL_DEVICE` from the caller's
/// environment.
pub fn ocetool(args: &[&str]) -> Run {
    Command::new(ocetool_bin())
        .args(args)
        .env_remove("OCETOOL_DEVICE")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run ocetool")
        .into()
}

/// `emu:DIR` for a path.
pub fn emu_arg(dir: &Path) -> String {
    format!("emu:{}", dir.display())
}

/// How many WRITE_FLASHROM (COMMON 7) commands `emu` has executed, from its event log.
pub fn write_flashrom_count(emu: &Emulator) -> usize {
    emu.events().iter().filter(|e| matches!(e, oce_emulator::Event::Command { subsystem: 1, opcode: 7, .. })).count()
}

/// The emulated adapter's `flash.bin`, as it is on disk.
pub fn flash_bin(emu: &Emulator) -> Vec<u8> {
    std::fs::read(emu.state_dir().join("flash.bin")).expect("read flash.bin")
}

/// The library's whole `fw update` flow on `file`: parse, read the adapter, plan under `policy`,
/// flash (the steps `oce_firmware::flash` documents).
pub fn flash_file(
    mbox: &mut BootstrapMailbox<Emulator>,
    file: &[u8],
    policy: oce_firmware::flash::Policy,
    observer: &mut dyn oce_firmware::flash::FlashObserver,
) -> Result<oce_firmware::flash::FlashReport, oce_firmware::FirmwareError> {
    use oce_firmware::flash;
    let image = oce_firmware::UfiImage::parse(file)?;
    let adapter = flash::read_adapter(mbox)?;
    let plan = flash::plan(&image, &adapter, policy)?;
    flash::flash_ufi(mbox, &image, &plan, observer)
}
