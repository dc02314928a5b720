//! The `ocetool` binary as a user or a script runs it, on temporary emulator directories:
//! query, profiles, raw, emulator init/show/power-cycle, the device lock, and bad input.

mod common;

use std::fs::OpenOptions;

use common::{Run, emu_arg, ocetool};
use serde_json::Value;

fn fresh() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let dev = emu_arg(&dir.path().join("emu"));
    (dir, dev)
}

fn ok(run: Run) -> Run {
    assert_eq!(run.code, 0, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    run
}

#[test]
fn query_json_has_the_contract_fields() {
    let (_d, dev) = fresh();
    let q = ok(ocetool(&["--device", &dev, "query", "--json"])).json();
    assert_eq!(q["pci"]["vendor_id"], "0x10df");
    assert_eq!(q["pci"]["device_id"], "0x0720");
    assert_eq!(q["chip"], "skyhawk");
    for key in ["model", "serial", "asic_revision", "function_mode", "roce_enabled", "reset_required", "ports"] {
        assert!(!q[key].is_null(), "{key} missing in {q:#}");
    }
    assert!(q["firmware"]["running"].is_string() && q["firmware"]["stored"].is_string());
    for side in ["active", "next"] {
        let p = &q["profile"][side];
        assert!(p["id"].is_u64() && p["name"].is_string() && p["roce"].is_boolean(), "{side}: {p}");
    }
    let mode = q["function_mode"].as_u64().unwrap();
    assert_eq!(q["roce_enabled"].as_bool().unwrap(), mode & 0x4 != 0);
    let ports = q["ports"].as_array().unwrap();
    assert_eq!(ports.len(), 2);
    for key in ["index", "name", "mac", "link_up", "speed_mbps"] {
        assert!(ports[0].get(key).is_some(), "ports[0].{key}");
    }
    assert_eq!(ports[0]["link_up"], true);
}

#[test]
fn query_text_is_a_readable_report() {
    let (_d, dev) = fresh();
    let out = ok(ocetool(&["--device", &dev, "query"])).stdout;
    for want in ["OCe14102", "skyhawk", "Firmware", "Function mode", "RoCE", "disabled", "Profile", "NIC", "Ports"] {
        assert!(out.contains(want), "{want} missing:\n{out}");
    }
}

fn hex_bytes(v: &Value) -> Vec<u8> {
    hex::decode(v["response"].as_str().unwrap()).unwrap()
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8(bytes[..end].to_vec()).unwrap()
}

#[test]
fn raw_responses_match_query_at_the_spec_offsets() {
    let (_d, dev) = fresh();
    let q = ok(ocetool(&["--device", &dev, "query", "--json"])).json();

    let fw = ok(ocetool(&["--device", &dev, "raw", "--subsystem", "1", "--opcode", "35", "--json"])).json();
    assert_eq!(fw["base_status"], 0);
    let bytes = hex_bytes(&fw);
    assert_eq!(c_string(&bytes[16..48]), q["firmware"]["running"].as_str().unwrap());
    assert_eq!(c_string(&bytes[48..80]), q["firmware"]["stored"].as_str().unwrap());

    let cfg = ok(ocetool(&["--device", &dev, "raw", "--subsystem", "1", "--opcode", "58", "--json"])).json();
    let bytes = hex_bytes(&cfg);
    let mode = u32::from_le_bytes(bytes[28..32].try_into().unwrap());
    assert_eq!(u64::from(mode), q["function_mode"].as_u64().unwrap());
}

#[test]
fn raw_non_embedded_and_failure_statuses() {
    let (_d, dev) = fresh();
    let r = ok(ocetool(&[
        "--device",
        &dev,
        "raw",
        "--subsystem",
        "1",
        "--opcode",
        "160",
        "--version",
        "1",
        "--non-embedded",
        "--length",
        "23252",
        "--json",
    ]))
    .json();
    assert_eq!(r["base_status"], 0);
    assert_eq!(hex_bytes(&r).len(), 23252);
    // An opcode the firmware does not know (so no known query: --yes): a completed command with
    // ILLEGAL_REQUEST, exit 0.
    let r = ok(ocetool(&["--device", &dev, "raw", "--subsystem", "1", "--opcode", "99", "--yes", "--json"])).json();
    assert_eq!(r["base_status"], 2);
    assert_eq!(r["base_status_name"], "MCC_STATUS_ILLEGAL_REQUEST");
}

#[test]
fn profiles_lists_five_with_active_and_next() {
    let (_d, dev) = fresh();
    let p = ok(ocetool(&["--device", &dev, "profiles", "--json"])).json();
    let rows = p["profiles"].as_array().unwrap();
    assert!(rows.len() >= 5);
    assert_eq!(rows.iter().filter(|r| r["active"] == true).count(), 1);
    assert_eq!(rows.iter().filter(|r| r["next"] == true).count(), 1);
    assert_eq!(rows.iter().filter(|r| r["roce"] == true).count(), 2);
    for r in rows {
        for key in ["id", "name", "roce", "active", "next"] {
            assert!(r.get(key).is_some(), "{key} in {r}");
        }
    }
}

#[test]
fn emulator_init_show_power_cycle() {
    let (_d, dev) = fresh();
    let init = ok(ocetool(&["--device", &dev, "emulator", "init", "--json"])).json();
    assert_eq!(init["changed"], true);
    let serial = init["serial"].clone();
    // A second init refuses (safety check, exit 4) and keeps the adapter.
    let again = ocetool(&["--device", &dev, "emulator", "init"]);
    assert_eq!(again.code, 4, "{}", again.stderr);
    assert!(again.stderr.contains("refusing to overwrite"), "{}", again.stderr);
    let show = ok(ocetool(&["--device", &dev, "emulator", "show", "--json"])).json();
    assert_eq!(show["serial"], serial);
    ok(ocetool(&["--device", &dev, "emulator", "power-cycle"]));
    let q = ok(ocetool(&["--device", &dev, "query", "--json"])).json();
    assert_eq!(q["serial"], serial, "power-cycle keeps the identity");
    // `emulator` on a PCI address is a usage error.
    assert_eq!(ocetool(&["--device", "03:00.0", "emulator", "show"]).code, 2);
}

#[test]
fn device_from_the_environment() {
    let (_d, dev) = fresh();
    let run: Run = std::process::Command::new(common::OCETOOL)
        .args(["query", "--json"])
        .env("OCETOOL_DEVICE", &dev)
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["chip"], "skyhawk");
}

#[test]
fn malformed_device_is_a_usage_error() {
    for bad in ["eth0", "03:00", "0000:03:00.8", "emu:"] {
        let r = ocetool(&["--device", bad, "query"]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(r.stderr.starts_with("ocetool: "), "{bad}: {}", r.stderr);
        assert_eq!(r.stderr.trim_end().lines().count(), 1, "one line: {}", r.stderr);
        let j = ocetool(&["--device", bad, "query", "--json"]);
        assert_eq!(j.code, 2);
        assert_eq!(j.json()["error"]["kind"], "usage");
        assert!(j.stderr.is_empty(), "nothing on stderr with --json: {}", j.stderr);
    }
}

#[test]
fn no_device_and_real_pci_device() {
    let r = ocetool(&["query", "--json"]);
    assert_eq!(r.code, 3);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("emu"));
}

#[test]
fn corrupt_state_is_refused_and_left_alone() {
    let (d, dev) = fresh();
    ok(ocetool(&["--device", &dev, "emulator", "init"]));
    let state = d.path().join("emu/state.json");
    std::fs::write(&state, b"{ this is not json").unwrap();
    let r = ocetool(&["--device", &dev, "query"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("corrupt") && r.stderr.contains("state.json"), "{}", r.stderr);
    assert_eq!(std::fs::read(&state).unwrap(), b"{ this is not json", "the user's file is untouched");
}

#[test]
fn missing_flash_is_refused_not_recreated() {
    let (d, dev) = fresh();
    ok(ocetool(&["--device", &dev, "emulator", "init"]));
    std::fs::remove_file(d.path().join("emu/flash.bin")).unwrap();
    let r = ocetool(&["--device", &dev, "query", "--json"]);
    assert_eq!(r.code, 3);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("flash.bin"));
    assert!(!d.path().join("emu/flash.bin").exists(), "not silently re-created");
}

#[test]
fn a_foreign_directory_is_not_taken_over() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("notes.txt"), b"mine").unwrap();
    let r = ocetool(&["--device", &emu_arg(d.path()), "query"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1, "nothing written");
}

#[test]
fn bad_raw_input_is_a_usage_error() {
    let (_d, dev) = fresh();
    for args in [
        vec!["--payload", "zz"],
        vec!["--payload", "abc"],
        vec!["--length", "8"],
        vec!["--length", "300"],
        vec!["--non-embedded"],
    ] {
        let mut all = vec!["--device", dev.as_str(), "raw", "--subsystem", "1", "--opcode", "35"];
        all.extend(args.iter());
        let r = ocetool(&all);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    }
    let r = ocetool(&["--device", &dev, "raw", "--subsystem", "1", "--opcode", "300"]);
    assert_eq!(r.code, 2);
}

#[test]
fn a_held_device_lock_means_busy() {
    let (d, dev) = fresh();
    ok(ocetool(&["--device", &dev, "emulator", "init"]));
    let lock = OpenOptions::new().create(true).truncate(false).write(true).open(d.path().join(".emu.lock")).unwrap();
    lock.lock().unwrap();
    let r = ocetool(&["--device", &dev, "--wait", "0.2", "query", "--json"]);
    assert_eq!(r.code, 5, "{}", r.stdout);
    assert_eq!(r.json()["error"]["kind"], "busy");
    lock.unlock().unwrap();
    ok(ocetool(&["--device", &dev, "query"]));
}

/// `OCETOOL_UNSAFE_ANY_DEVICE=1` is a test escape of the real-kernel test only: a binary built
/// without the cargo feature `unsafe-any-device` (the default, and every release build) still
/// refuses a function that is not OneConnect before touching it, and carries no trace of it.
#[test]
fn the_any_device_escape_needs_the_test_feature() {
    let d = tempfile::tempdir().unwrap();
    common::fake_pci_function(d.path(), "0000:00:03.0", 0x8086, 0x100e); // an e1000
    let run: Run = common::with_fake_sysfs(d.path())
        .args(["--device", "0000:00:03.0", "query"])
        .env("OCETOOL_UNSAFE_ANY_DEVICE", "1")
        .output()
        .unwrap()
        .into();
    let refused = run.stderr.contains("is not an Emulex OneConnect function");
    if cfg!(feature = "unsafe-any-device") {
        // The test build lets the e1000 through to the hand-off (which this fake tree cannot do).
        assert!(!refused, "{}", run.stderr);
    } else {
        assert_eq!(run.code, 3, "{}", run.stderr);
        assert!(refused, "{}", run.stderr);
    }
    // Without the feature the escape is compiled out: the binary does not even hold the
    // variable's name (with it, the name is there, which shows the search finds it).
    let binary = std::fs::read(common::OCETOOL).unwrap();
    let name = b"OCETOOL_UNSAFE_ANY_DEVICE";
    let carried = binary.windows(name.len()).any(|w| w == name);
    assert_eq!(carried, cfg!(feature = "unsafe-any-device"), "{} carries {:?}", common::OCETOOL, name);
}

/// ocetool drives OCe14000 (Skyhawk) adapters only: a Lancer (OCe15100) function is refused with
/// one line and exit 3 before anything touches it, for every command, firmware updates included.
#[test]
fn a_lancer_adapter_is_refused() {
    let d = tempfile::tempdir().unwrap();
    common::fake_pci_function(d.path(), "0000:00:04.0", 0x10df, 0xe220); // Lancer NIC PF (be2net OC_DEVICE_ID3)
    let image = d.path().join("new.ufi");
    std::fs::write(&image, oce_firmware::build::ImageBuilder::new("11.2.0.9").build().unwrap()).unwrap();
    for args in [vec!["query"], vec!["fw", "update", image.to_str().unwrap(), "--yes"]] {
        let run: Run =
            common::with_fake_sysfs(d.path()).args(["--device", "0000:00:04.0"]).args(&args).output().unwrap().into();
        assert_eq!(run.code, 3, "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("lancer (OCe15100): ocetool drives Skyhawk (OCe14000) only"), "{}", run.stderr);
        // The pair as lspci -n and `ocetool list` write it.
        assert!(run.stderr.contains("0000:00:04.0 (10df:e220): "), "{}", run.stderr);
    }
}
