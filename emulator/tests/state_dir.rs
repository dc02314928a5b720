//! The persistent state directory: creation, persistence across opens, typed errors that leave
//! the user's files alone, atomic writes.

mod common;

use std::fs;
use std::path::Path;

use oce_emulator::{Emulator, EmulatorError, Faults};

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn create_makes_exactly_two_files_of_the_right_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("emu");
    let emu = Emulator::create(&dir).unwrap();
    let names: Vec<String> = snapshot(&dir).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["flash.bin", "state.json"], "no temporary file is left behind");
    assert_eq!(fs::metadata(dir.join("flash.bin")).unwrap().len(), 16 << 20);
    let json: serde_json::Value = serde_json::from_slice(&fs::read(dir.join("state.json")).unwrap()).unwrap();
    assert_eq!(json["schema"], 1);
    assert_eq!(json["identity"]["model"], "OCe14102");
    assert_eq!(json["identity"]["macs"].as_array().unwrap().len(), 2);
    let info = emu.info();
    assert_eq!(info.firmware.running.as_deref(), Some("11.1.172.23"));
    assert_eq!(info.firmware.stored.as_deref(), Some("11.1.172.23"));
    assert_eq!(info.profiles.iter().find(|p| p.active).unwrap().name, "NIC");
    assert_eq!(info.function_mode, 0x2);
    assert_eq!(info.serial.len(), 13);
    assert!(info.ports.iter().all(|p| p.mac.0[..3] == [0x00, 0x00, 0xC9]));
}

#[test]
fn create_refuses_an_existing_adapter() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("emu");
    Emulator::create(&dir).unwrap();
    let before = snapshot(&dir);
    assert!(matches!(Emulator::create(&dir), Err(EmulatorError::AlreadyExists { .. })));
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn state_persists_across_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("emu");
    let first = Emulator::create(&dir).unwrap();
    first.set_faults(Faults { ue_status: [1, 0], ..Faults::default() }).unwrap();
    let identity = first.info();
    drop(first);
    let second = Emulator::open(&dir).unwrap();
    let info = second.info();
    assert_eq!((&info.serial, &info.ports), (&identity.serial, &identity.ports));
    assert_eq!(second.faults().ue_status, [1, 0]);
    let third = Emulator::open_or_create(&dir).unwrap();
    assert_eq!(third.info().serial, identity.serial, "open_or_create opens an existing adapter");
}

#[test]
fn open_or_create_creates_when_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let emu = Emulator::open_or_create(&tmp.path().join("new")).unwrap();
    assert_eq!(emu.info().firmware.running.as_deref(), Some("11.1.172.23"));
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    assert!(Emulator::open_or_create(&empty).is_ok(), "an empty directory counts as no state");
}

#[test]
fn a_missing_directory_is_a_typed_error() {
    let tmp = tempfile::tempdir().unwrap();
    let err = Emulator::open(&tmp.path().join("nope")).unwrap_err();
    assert!(matches!(err, EmulatorError::NoStateDirectory { .. }), "{err}");
    assert!(!tmp.path().join("nope").exists(), "open never creates");
}

/// Sets up an adapter, breaks it with `damage`, and checks that open and open_or_create both
/// fail with an error `check` accepts and leave every file byte for byte as it was.
fn refused(damage: impl FnOnce(&Path), check: impl Fn(&EmulatorError) -> bool) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("emu");
    drop(Emulator::create(&dir).unwrap());
    damage(&dir);
    let before = snapshot(&dir);
    for result in [Emulator::open(&dir), Emulator::open_or_create(&dir)] {
        let err = result.unwrap_err();
        assert!(check(&err), "unexpected error: {err:?}");
        assert!(err.to_string().contains(&dir.display().to_string()), "the message names the file: {err}");
    }
    assert_eq!(snapshot(&dir), before, "the user's files are untouched");
}

#[test]
fn missing_state_json_is_refused() {
    refused(|d| fs::remove_file(d.join("state.json")).unwrap(), |e| matches!(e, EmulatorError::MissingFile { .. }));
}

#[test]
fn missing_flash_is_refused() {
    refused(|d| fs::remove_file(d.join("flash.bin")).unwrap(), |e| matches!(e, EmulatorError::MissingFile { .. }));
}

#[test]
fn corrupt_json_is_refused() {
    refused(
        |d| fs::write(d.join("state.json"), b"{\"schema\": 1, \"ident").unwrap(),
        |e| matches!(e, EmulatorError::Corrupt { .. }),
    );
}

#[test]
fn json_of_the_wrong_shape_is_refused() {
    refused(
        |d| fs::write(d.join("state.json"), br#"{"schema": 1, "identity": 7}"#).unwrap(),
        |e| matches!(e, EmulatorError::Corrupt { .. }),
    );
}

#[test]
fn unknown_schema_is_refused() {
    refused(
        |d| {
            let text = fs::read_to_string(d.join("state.json")).unwrap();
            fs::write(d.join("state.json"), text.replacen("\"schema\": 1", "\"schema\": 99", 1)).unwrap();
        },
        |e| matches!(e, EmulatorError::UnknownSchema { found: Some(99), supported: 1, .. }),
    );
}

#[test]
fn inconsistent_state_is_refused() {
    refused(
        |d| {
            let mut v: serde_json::Value = serde_json::from_slice(&fs::read(d.join("state.json")).unwrap()).unwrap();
            v["nvram"]["next_profile"] = 250.into();
            fs::write(d.join("state.json"), serde_json::to_vec(&v).unwrap()).unwrap();
        },
        |e| matches!(e, EmulatorError::Inconsistent { reason, .. } if reason.contains("next_profile")),
    );
}

#[test]
fn wrong_flash_size_is_refused() {
    refused(
        |d| fs::OpenOptions::new().write(true).open(d.join("flash.bin")).unwrap().set_len(1 << 20).unwrap(),
        |e| matches!(e, EmulatorError::FlashSize { actual: 0x10_0000, expected: 0x100_0000, .. }),
    );
}

#[test]
fn saving_replaces_the_file_atomically() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("emu");
    let emu = Emulator::create(&dir).unwrap();
    // A stale temp file from a killed writer does not confuse the next save.
    fs::write(dir.join("state.json.tmp"), b"garbage").unwrap();
    let inode_before = std::os::unix::fs::MetadataExt::ino(&fs::metadata(dir.join("state.json")).unwrap());
    emu.power_cycle().unwrap();
    let inode_after = std::os::unix::fs::MetadataExt::ino(&fs::metadata(dir.join("state.json")).unwrap());
    assert_ne!(inode_before, inode_after, "the file was replaced by rename, not rewritten in place");
    assert!(emu.events().iter().all(|e| !matches!(e, oce_emulator::Event::StateSaveFailed { .. })));
    let names: Vec<String> = snapshot(&dir).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["flash.bin", "state.json"]);
    assert!(Emulator::open(&dir).is_ok());
}

#[test]
fn seeded_identities_are_reproducible_and_distinct() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Emulator::create_seeded(&tmp.path().join("a"), 42).unwrap().info();
    let b = Emulator::create_seeded(&tmp.path().join("b"), 42).unwrap().info();
    let c = Emulator::create(&tmp.path().join("c")).unwrap().info();
    assert_eq!((a.serial.clone(), a.ports.clone()), (b.serial, b.ports));
    assert_ne!(a.serial, c.serial);
}
