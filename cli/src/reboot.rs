//! `/run/reboot-required`: the flag Debian's update-notifier, unattended-upgrades and the MOTD
//! read to tell an admin that the machine needs a reboot (with the packages that asked for it in
//! `/run/reboot-required.pkgs`, one a line), kept in step with what ocetool leaves pending.
//!
//! A command that changes the adapter (`set-profile`, `fw update`, `reset`, `apply`; not a dry
//! run) reports `reset_required` as read back from the adapter afterwards. ocetool keeps the
//! adapters that need a reset in its own list (`/run/ocetool/reset-pending`, one device a line):
//! while the list is not empty the flag exists and `ocetool` is in `.pkgs`; when the last adapter
//! is reset (or set back to what runs), `ocetool` leaves `.pkgs`, and the flag and `.pkgs` are
//! removed when no other package is listed there — a flag another package raised stays.
//!
//! The emulator touches none of this unless asked: a rehearsal on `emu` must not make the host
//! say "reboot required". `OCETOOL_REBOOT_REQUIRED=PATH` asks (for tests, and to watch a rehearsal):
//! the flag is PATH, its list `PATH.pkgs`, for every device, the emulator included;
//! `OCETOOL_RUN_DIR` moves ocetool's list (default `/run/ocetool`, as for the boot hook's report).
//! Failing to write any of it costs a warning, never the operation.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, select_device};

/// The flag Debian's tools read (update-notifier's `update-motd-reboot-required`).
const FLAG: &str = "/run/reboot-required";
/// What update-notifier writes into the flag.
const FLAG_TEXT: &str = "*** System restart required ***\n";
/// The name ocetool lists in `.pkgs`: its Debian package.
const PACKAGE: &str = "ocetool";
/// ocetool's list of the adapters that need a reset, in its runtime directory.
const LIST: &str = "reset-pending";

/// Where the flag and ocetool's list are, for a command on an emulated adapter or a real one;
/// `None` when nothing is to be written (the emulator, not asked).
fn paths(emulator: bool) -> Option<(PathBuf, PathBuf)> {
    let asked = std::env::var_os("OCETOOL_REBOOT_REQUIRED").filter(|v| !v.is_empty()).map(PathBuf::from);
    let flag = match (asked, emulator) {
        (Some(path), _) => path,
        (None, true) => return None,
        (None, false) => PathBuf::from(FLAG),
    };
    let run_dir = std::env::var_os("OCETOOL_RUN_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/run/ocetool"), PathBuf::from);
    Some((flag, run_dir.join(LIST)))
}

/// Records that the adapter the command worked on (`--device`, or the only one found) needs a
/// reset, or no longer does.
pub fn record_selected(global: &GlobalArgs, reset_required: bool) {
    if let Ok(spec) = select_device(global) {
        record(matches!(spec, DeviceSpec::Emulator(_)), &spec.describe(), reset_required);
    }
}

/// True when `--device` names an emulated adapter.
pub fn on_emulator(global: &GlobalArgs) -> bool {
    global.device.as_deref().is_some_and(|d| matches!(DeviceSpec::parse(d), Ok(DeviceSpec::Emulator(_))))
}

/// Records that the adapter `device` (as ocetool names it in messages) needs a reset, or no longer
/// does, after a command that changed it; a warning on stderr when it cannot.
pub fn record(emulator: bool, device: &str, reset_required: bool) {
    let Some((flag, list)) = paths(emulator) else { return };
    if let Err(e) = update(&flag, &list, device, reset_required) {
        tracing::warn!("cannot record the pending reset in {}: {e}", flag.display());
        crate::output::warn(&format!("cannot record the pending reset in {}: {e}", flag.display()));
    }
}

fn pkgs_path(flag: &Path) -> PathBuf {
    let mut name = flag.as_os_str().to_owned();
    name.push(".pkgs");
    PathBuf::from(name)
}

/// Updates ocetool's list under its lock (two ocetool processes on two adapters may finish at
/// once), then the flag and `.pkgs` to match it.
fn update(flag: &Path, list: &Path, device: &str, pending: bool) -> std::io::Result<()> {
    if let Some(dir) = list.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(list)?;
    file.lock()?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let mut devices: Vec<&str> = text.lines().filter(|l| !l.is_empty() && *l != device).collect();
    if pending {
        devices.push(device);
    }
    rewrite(&mut file, &devices)?;
    let pkgs = pkgs_path(flag);
    if !devices.is_empty() {
        add_package(&pkgs)?;
        if !flag.exists() {
            std::fs::write(flag, FLAG_TEXT)?;
        }
        return Ok(());
    }
    // Nothing of ocetool's is pending: take its name out, and the flag when no one else is left.
    let others = remove_package(&pkgs)?;
    if others == Some(0) {
        remove_if_present(&pkgs)?;
        remove_if_present(flag)?;
    }
    Ok(())
}

fn rewrite(file: &mut File, lines: &[&str]) -> std::io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(lines.iter().map(|l| format!("{l}\n")).collect::<String>().as_bytes())
}

/// Appends ocetool to `.pkgs` unless it is listed.
fn add_package(pkgs: &Path) -> std::io::Result<()> {
    let listed = std::fs::read_to_string(pkgs).unwrap_or_default();
    if listed.lines().any(|l| l.trim() == PACKAGE) {
        return Ok(());
    }
    let mut file = OpenOptions::new().append(true).create(true).open(pkgs)?;
    let sep = if listed.is_empty() || listed.ends_with('\n') { "" } else { "\n" };
    file.write_all(format!("{sep}{PACKAGE}\n").as_bytes())
}

/// Takes ocetool out of `.pkgs`; the number of other packages left, or `None` when ocetool was not
/// listed (the flag is not ocetool's to remove).
fn remove_package(pkgs: &Path) -> std::io::Result<Option<usize>> {
    let listed = match std::fs::read_to_string(pkgs) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !listed.lines().any(|l| l.trim() == PACKAGE) {
        return Ok(None);
    }
    let others: Vec<&str> = listed.lines().filter(|l| !l.trim().is_empty() && l.trim() != PACKAGE).collect();
    std::fs::write(pkgs, others.iter().map(|l| format!("{l}\n")).collect::<String>())?;
    Ok(Some(others.len()))
}

fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_follows_the_list_and_leaves_other_packages_alone() {
        let d = tempfile::tempdir().unwrap();
        let (flag, list) = (d.path().join("reboot-required"), d.path().join("run/reset-pending"));
        let pkgs = pkgs_path(&flag);
        update(&flag, &list, "0000:03:00.0", true).unwrap();
        update(&flag, &list, "0000:04:00.0", true).unwrap();
        update(&flag, &list, "0000:04:00.0", true).unwrap();
        assert_eq!(std::fs::read_to_string(&flag).unwrap(), FLAG_TEXT);
        assert_eq!(std::fs::read_to_string(&pkgs).unwrap(), "ocetool\n");
        assert_eq!(std::fs::read_to_string(&list).unwrap(), "0000:03:00.0\n0000:04:00.0\n");
        update(&flag, &list, "0000:03:00.0", false).unwrap();
        assert!(flag.exists(), "0000:04:00.0 still needs its reset");
        update(&flag, &list, "0000:04:00.0", false).unwrap();
        assert!(!flag.exists() && !pkgs.exists());

        // Another package's flag: ocetool joins it, and leaves it when its own work is done.
        std::fs::write(&flag, FLAG_TEXT).unwrap();
        std::fs::write(&pkgs, "linux-image-amd64").unwrap();
        update(&flag, &list, "0000:03:00.0", true).unwrap();
        assert_eq!(std::fs::read_to_string(&pkgs).unwrap(), "linux-image-amd64\nocetool\n");
        update(&flag, &list, "0000:03:00.0", false).unwrap();
        assert_eq!(std::fs::read_to_string(&pkgs).unwrap(), "linux-image-amd64\n");
        assert!(flag.exists());

        // A flag ocetool did not raise is not ocetool's to remove.
        std::fs::remove_file(&pkgs).unwrap();
        update(&flag, &list, "0000:03:00.0", false).unwrap();
        assert!(flag.exists());
    }
}
