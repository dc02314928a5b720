//! The emulated adapter's state directory from the CLI: opening it (with errors that leave the
//! user's files alone), the control socket a server listens on beside its lock, and the event
//! log `-vvv` prints.

use std::path::{Path, PathBuf};

use oce_emulator::Emulator;

use crate::device::emulator_lock_path;
use crate::error::{CliError, CliResult, ErrorCode, emulator_error};

/// Opens the emulator in `dir`, creating a factory-fresh one when `dir` does not exist or is
/// empty. A non-empty directory that holds no emulator state is refused: ocetool never writes
/// its files into a directory it did not make.
pub fn open_emulator(dir: &Path) -> CliResult<Emulator> {
    check_state_dir(dir)?;
    Emulator::open_or_create(dir).map_err(|e| emulator_error(&e))
}

/// Refuses a `dir` that is not a directory, or a non-empty one that holds no emulator state
/// (ocetool never writes its files into a directory it did not make).
pub fn check_state_dir(dir: &Path) -> CliResult<()> {
    let has_state =
        dir.join(oce_emulator::state::STATE_FILE).exists() || dir.join(oce_emulator::state::FLASH_FILE).exists();
    if !has_state && dir.is_dir() && !is_empty_dir(dir)? {
        return Err(CliError::new(
            ErrorCode::BadEmulatorState,
            format!(
                "{} is not an emulator state directory (no {}); use a new or empty directory for emu:DIR",
                dir.display(),
                oce_emulator::state::STATE_FILE
            ),
        ));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(CliError::new(
            ErrorCode::BadEmulatorState,
            format!("{} is not a directory; emu:DIR needs a directory", dir.display()),
        ));
    }
    Ok(())
}

fn is_empty_dir(dir: &Path) -> CliResult<bool> {
    let mut entries = std::fs::read_dir(dir)
        .map_err(|e| CliError::new(ErrorCode::BadEmulatorState, format!("cannot read {}: {e}", dir.display())))?;
    Ok(entries.next().is_none())
}

/// Prints what the emulated adapter saw and did during this command (its event log: every
/// command with its status, resets, boots, faults that fired, host protocol violations), one
/// `ocetool: emulator event: ...` line each on stderr. `-vvv` asks for it: a script rehearsed on
/// the emulator shows exactly what it sent, and the CLI tests check that a fault really fired.
pub fn print_events(emu: &Emulator) {
    use std::io::Write;
    let mut stderr = std::io::stderr().lock();
    for event in emu.events() {
        let _ = writeln!(stderr, "ocetool: emulator event: {event:?}");
    }
    if emu.dropped_events() > 0 {
        let _ = writeln!(stderr, "ocetool: emulator event: ({} older events dropped)", emu.dropped_events());
    }
}

/// The control socket of the server for the emulated adapter in `dir`: beside its lock file.
pub fn control_path(dir: &Path) -> PathBuf {
    emulator_lock_path(dir).with_extension("control")
}
