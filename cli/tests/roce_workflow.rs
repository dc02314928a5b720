//! The RoCE workflow end to end through the CLI: switch a fresh adapter to RoCE, activate it by chip reset
//! or power cycle, check every design.md §7 field along the way, and switch back.

mod common;

use common::{Run, emu_arg, ocetool};
use serde_json::Value;

fn fresh() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let dev = emu_arg(&dir.path().join("emu"));
    (dir, dev)
}

fn ok_json(args: &[&str]) -> Value {
    let run = ocetool(args);
    assert_eq!(run.code, 0, "{args:?}\nstdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    run.json()
}

fn query(dev: &str) -> Value {
    ok_json(&["--device", dev, "query", "--json"])
}

/// The `firmware` and `profile` objects every change reports (design.md §7).
fn assert_change_fields(v: &Value) {
    assert!(v["changed"].is_boolean() && v["reset_required"].is_boolean(), "{v:#}");
    assert!(v["firmware"]["running"].is_string() && v["firmware"]["stored"].is_string(), "{v:#}");
    for side in ["active", "next"] {
        let p = &v["profile"][side];
        assert!(p["id"].is_u64() && p["name"].is_string() && p["roce"].is_boolean(), "{side}: {v:#}");
    }
}

fn assert_nic_running(q: &Value) {
    assert_eq!(q["profile"]["active"]["name"], "NIC", "{q:#}");
    assert_eq!(q["profile"]["active"]["roce"], false);
    assert_eq!(q["roce_enabled"], false);
    assert_eq!(q["function_mode"].as_u64().unwrap() & 0x4, 0);
}

fn assert_roce_running(q: &Value) {
    assert_eq!(q["profile"]["active"]["roce"], true, "{q:#}");
    assert_eq!(q["profile"]["active"]["name"], "RoCE-2 (NIC+RoCE)");
    assert_eq!(q["roce_enabled"], true);
    assert_eq!(q["function_mode"].as_u64().unwrap() & 0x4, 0x4);
    assert_eq!(q["reset_required"], false);
}

/// Steps shared by both activation paths; `activate` is the reset or the power cycle.
fn roce_cycle(activate: &[&str]) {
    let (_d, dev) = fresh();
    assert_nic_running(&query(&dev));

    let set = ok_json(&["--device", &dev, "set-profile", "roce", "--yes", "--json"]);
    assert_change_fields(&set);
    assert_eq!(set["changed"], true);
    assert_eq!(set["reset_required"], true);
    assert_eq!(set["profile"]["next"]["roce"], true);
    assert_eq!(set["profile"]["next"]["name"], "RoCE-2 (NIC+RoCE)");
    assert_eq!(set["profile"]["active"]["name"], "NIC", "nothing runs differently before the reset");
    assert_eq!(set["roce_enabled"], false);

    let again = ok_json(&["--device", &dev, "set-profile", "roce", "--yes", "--json"]);
    assert_change_fields(&again);
    assert_eq!(again["changed"], false, "asking for the pending profile is no change");
    assert_eq!(again["reset_required"], true);

    let q = query(&dev);
    assert_eq!(q["reset_required"], true);
    assert_eq!(q["profile"]["next"]["roce"], true);

    let mut args = vec!["--device", dev.as_str()];
    args.extend_from_slice(activate);
    args.push("--json");
    let act = ok_json(&args);
    assert_eq!(act["changed"], true);
    assert_roce_running(&query(&dev));

    let back = ok_json(&["--device", &dev, "set-profile", "nic", "--yes", "--json"]);
    assert_change_fields(&back);
    assert_eq!((back["changed"].clone(), back["reset_required"].clone()), (Value::Bool(true), Value::Bool(true)));
    assert_eq!(back["profile"]["next"]["name"], "NIC");
    let mut args = vec!["--device", dev.as_str()];
    args.extend_from_slice(activate);
    ok_json(&[args.as_slice(), &["--json"]].concat());
    let q = query(&dev);
    assert_nic_running(&q);
    assert_eq!(q["reset_required"], false);
}

#[test]
fn roce_cycle_activated_by_chip_reset() {
    roce_cycle(&["reset", "--yes"]);
}

#[test]
fn roce_cycle_activated_by_power_cycle() {
    roce_cycle(&["emulator", "power-cycle"]);
}

#[test]
fn reset_reports_what_now_runs() {
    let (_d, dev) = fresh();
    ok_json(&["--device", &dev, "set-profile", "roce", "--yes", "--json"]);
    let r = ok_json(&["--device", &dev, "reset", "--yes", "--json"]);
    assert_change_fields(&r);
    assert_eq!(r["reset_required"], false);
    assert_eq!(r["profile"]["active"]["roce"], true);
    assert_eq!(r["function_mode"].as_u64().unwrap() & 0x4, 0x4);
    assert_eq!(r["roce_enabled"], true);
}

#[test]
fn without_yes_or_a_terminal_nothing_changes() {
    let (_d, dev) = fresh();
    let r: Run = ocetool(&["--device", &dev, "set-profile", "roce"]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(r.stderr.contains("--yes"), "{}", r.stderr);
    let j = ocetool(&["--device", &dev, "set-profile", "roce", "--json"]);
    assert_eq!(j.code, 4);
    assert_eq!(j.json()["error"]["kind"], "refused");
    let q = query(&dev);
    assert_eq!(q["profile"]["next"]["name"], "NIC", "nothing was set");
    assert_eq!(q["reset_required"], false);
    let reset = ocetool(&["--device", &dev, "reset"]);
    assert_eq!(reset.code, 4, "reset also needs --yes: {}", reset.stderr);
}

#[test]
fn asking_for_the_running_profile_cancels_a_pending_change() {
    let (_d, dev) = fresh();
    ok_json(&["--device", &dev, "set-profile", "roce", "--yes", "--json"]);
    let cancel = ok_json(&["--device", &dev, "set-profile", "nic", "--yes", "--json"]);
    assert_eq!(cancel["changed"], true);
    assert_eq!(cancel["reset_required"], false);
    assert_eq!(cancel["profile"]["next"]["name"], "NIC");
    // Asking for the running profile with nothing pending is no change, and needs no --yes.
    let same = ok_json(&["--device", &dev, "set-profile", "nic", "--json"]);
    assert_eq!(same["changed"], false);
}

#[test]
fn dry_run_changes_nothing() {
    let (_d, dev) = fresh();
    let dry = ok_json(&["--device", &dev, "set-profile", "roce", "--dry-run", "--json"]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["changed"], true, "reports what a real run would do");
    assert_eq!(dry["target"]["name"], "RoCE-2 (NIC+RoCE)");
    assert_eq!(query(&dev)["profile"]["next"]["name"], "NIC");
    let dry_reset = ok_json(&["--device", &dev, "reset", "--dry-run", "--json"]);
    assert_eq!(dry_reset["changed"], false);
}

#[test]
fn profiles_by_id_and_unknown_ids() {
    let (_d, dev) = fresh();
    let profiles = ok_json(&["--device", &dev, "profiles", "--json"]);
    let roce1 = profiles["profiles"].as_array().unwrap().iter().find(|p| p["name"] == "RoCE-1 (NIC+RoCE)").unwrap();
    let id = roce1["id"].as_u64().unwrap().to_string();
    let set = ok_json(&["--device", &dev, "set-profile", &id, "--yes", "--json"]);
    assert_eq!(set["profile"]["next"]["name"], "RoCE-1 (NIC+RoCE)", "an ID selects exactly");
    for bad in ["250", "banana", "-1"] {
        let r = ocetool(&["--device", &dev, "set-profile", bad, "--yes"]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
    }
    assert_eq!(query(&dev)["profile"]["next"]["name"], "RoCE-1 (NIC+RoCE)");
}

#[test]
fn concurrent_switches_are_serialized() {
    let (_d, dev) = fresh();
    ok_json(&["--device", &dev, "emulator", "init", "--json"]);
    let bin = common::OCETOOL;
    let children: Vec<_> = (0..6)
        .map(|i| {
            let target = if i % 2 == 0 { "roce" } else { "nic" };
            std::process::Command::new(bin)
                .args(["--device", &dev, "--wait", "30", "set-profile", target, "--yes", "--json"])
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap()
        })
        .collect();
    for c in &children {
        assert_eq!(c.status.code(), Some(0), "{}", String::from_utf8_lossy(&c.stdout));
    }
    let next = query(&dev)["profile"]["next"]["name"].as_str().unwrap().to_owned();
    assert!(next == "NIC" || next == "RoCE-2 (NIC+RoCE)", "{next}");
}

#[test]
fn a_virtual_function_reports_but_does_not_switch() {
    let dir = tempfile::tempdir().unwrap();
    let dev = emu_arg(&dir.path().join("vf"));
    ok_json(&["--device", &dev, "emulator", "init", "--vf", "--json"]);
    let q = query(&dev);
    assert_eq!(q["pci"]["device_id"], "0x0728");
    assert!(q["profile"].is_null(), "the profile commands are PF-only: {q:#}");
    assert_eq!(q["roce_enabled"], false);
    for args in [vec!["set-profile", "roce", "--yes"], vec!["reset", "--yes"]] {
        let mut all = vec!["--device", dev.as_str()];
        all.extend(args.iter());
        let r = ocetool(&all);
        assert_eq!(r.code, 3, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("virtual function") && r.stderr.contains("physical function"), "{}", r.stderr);
    }
    // The firmware itself refuses a VF too (UNAUTHORIZED_REQUEST, spec §3.5), whatever the CLI does.
    let raw = ok_json(&[
        "--device",
        &dev,
        "raw",
        "--subsystem",
        "1",
        "--opcode",
        "168",
        "--payload",
        "1b000000",
        "--yes",
        "--json",
    ]);
    assert_eq!(raw["base_status"], 5);
    assert_eq!(raw["base_status_name"], "MCC_STATUS_UNAUTHORIZED_REQUEST");
}
