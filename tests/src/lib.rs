//! Shared helpers for the end-to-end tests of the host stack against the emulator: fresh emulated
//! adapters in temporary directories, a host mailbox on them, and the library's flash flow.
//!
//! The tests that run the `ocetool` binary as a process live with the binary, in `cli/tests/`,
//! where cargo builds the binary from the current tree for every test run.
#![forbid(unsafe_code)]

use std::sync::Arc;

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
) -> Result<oce_firmware::flash::FlashReport, oce_firmware::FlashError> {
    use oce_firmware::flash;
    let image = oce_firmware::UfiImage::parse(file)?;
    let adapter = flash::read_adapter(mbox, &image)?;
    let plan = flash::plan(&image, &adapter, policy)?;
    flash::flash_ufi(mbox, &image, &plan, observer)
}
