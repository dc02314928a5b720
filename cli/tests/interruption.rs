//! A process killed or interrupted in the middle of a change leaves the adapter consistent
//! (docs/reliability.md, "Interruption"): killed between SET_ACTIVE_PROFILE and its read-back, a
//! failed SET injected, SIGINT and SIGTERM at a precise point, and no lock left behind.
//!
//! Precision comes from the emulator's `slow=SUB:OP:MS` fault, which keeps one command in flight
//! for a known time, and from watching `state.json`, which the emulator replaces atomically.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{CHUNK_COUNTER, OCETOOL, Run, chunks_received, fresh, ocetool, wait_until};
use serde_json::Value;

/// GET_ACTIVE_PROFILE: read before and after SET_ACTIVE_PROFILE (spec/protocol.md §5.9).
const GET_ACTIVE_PROFILE: u8 = 167;
/// SET_ACTIVE_PROFILE (spec/protocol.md §5.9).
const SET_ACTIVE_PROFILE: u8 = 168;

fn json(dev: &str, args: &[&str]) -> Value {
    let mut all = vec!["--device", dev];
    all.extend_from_slice(args);
    all.push("--json");
    let r = ocetool(&all);
    assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
    r.json()
}

fn next_profile_in_state(dir: &Path) -> u64 {
    let state: Value = serde_json::from_slice(&std::fs::read(dir.join("emu/state.json")).unwrap()).unwrap();
    state["nvram"]["next_profile"].as_u64().unwrap()
}

fn profile_id(dev: &str, name: &str) -> u64 {
    let p = json(dev, &["profiles"]);
    p["profiles"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()["id"].as_u64().unwrap()
}

fn spawn(dev: &str, args: &[&str]) -> Child {
    Command::new(OCETOOL)
        .arg("--device")
        .arg(dev)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// True while `child` has not exited: a kill or signal sent now lands in the middle of its work.
fn running(child: &mut Child) -> bool {
    child.try_wait().unwrap().is_none()
}

fn signal(child: &Child, sig: i32) {
    let status = Command::new("kill").arg(format!("-{sig}")).arg(child.id().to_string()).status().unwrap();
    assert!(status.success());
}

#[test]
fn killed_between_set_and_verification_leaves_the_new_profile_pending() {
    let (dir, dev) = fresh();
    let nic = profile_id(&dev, "NIC");
    let roce2 = profile_id(&dev, "RoCE-2 (NIC+RoCE)");
    json(&dev, &["emulator", "fault", "set", &format!("slow=1:{GET_ACTIVE_PROFILE}:1500")]);
    let mut child = spawn(&dev, &["set-profile", "roce", "--yes"]);
    // The SET has been stored once state.json names RoCE-2; the read-back is then in flight.
    wait_until("SET_ACTIVE_PROFILE to be stored", || next_profile_in_state(dir.path()) == roce2);
    assert!(running(&mut child), "the read-back is still in flight when the kill lands");
    child.kill().unwrap();
    child.wait().unwrap();

    json(&dev, &["emulator", "fault", "clear", "--all"]);
    let q = json(&dev, &["query"]);
    assert_eq!(q["profile"]["next"]["id"].as_u64(), Some(roce2), "the new profile is pending, whole");
    assert_eq!(q["profile"]["active"]["id"].as_u64(), Some(nic));
    assert_eq!(q["reset_required"], true);
    // Rerunning completes: nothing more to do.
    assert_eq!(json(&dev, &["set-profile", "roce", "--yes"])["changed"], false);
}

#[test]
fn killed_at_any_point_leaves_the_old_or_the_new_profile() {
    let (dir, dev) = fresh();
    let nic = profile_id(&dev, "NIC");
    let roce2 = profile_id(&dev, "RoCE-2 (NIC+RoCE)");
    json(&dev, &["emulator", "fault", "set", &format!("slow=1:{GET_ACTIVE_PROFILE}:40")]);
    // Kills at growing delays, until some landed before SET_ACTIVE_PROFILE and some after it
    // while the process still ran (the read-back in flight): both moments were really hit.
    let (mut before_set, mut after_set) = (0, 0);
    for delay_ms in [0u64, 5, 10, 20, 30, 45, 60, 75, 90, 110, 130, 150, 200, 250, 300].repeat(3) {
        if before_set > 0 && after_set > 0 {
            break;
        }
        let old = next_profile_in_state(dir.path());
        let target = if old == nic { "roce" } else { "nic" };
        let mut child = spawn(&dev, &["--wait", "10", "set-profile", target, "--yes"]);
        std::thread::sleep(Duration::from_millis(delay_ms));
        let mid_run = running(&mut child);
        child.kill().unwrap();
        child.wait().unwrap();
        let next = next_profile_in_state(dir.path());
        assert!(next == nic || next == roce2, "after a kill at {delay_ms} ms the next profile is {next}");
        match (mid_run, next == old) {
            (true, true) => before_set += 1,
            (true, false) => after_set += 1,
            (false, _) => {}
        }
    }
    assert!(before_set > 0 && after_set > 0, "kills before the SET: {before_set}, after it: {after_set}");
    json(&dev, &["emulator", "fault", "clear", "--all"]);
    let q = json(&dev, &["query"]);
    let next = q["profile"]["next"]["id"].as_u64().unwrap();
    assert!(next == nic || next == roce2);
}

#[test]
fn a_failed_set_changes_nothing() {
    let (dir, dev) = fresh();
    let before = next_profile_in_state(dir.path());
    // SET_ACTIVE_PROFILE (168) answers FAILED with INSUFFICIENT_PRIVILEGES and is not executed.
    json(&dev, &["emulator", "fault", "set", "status=1:168:1:0x60"]);
    let r = ocetool(&["--device", &dev, "set-profile", "roce", "--yes", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(msg.contains("SET_ACTIVE_PROFILE") && msg.contains("INSUFFICIENT_PRIVILEGES"), "{msg}");
    assert_eq!(next_profile_in_state(dir.path()), before);
    json(&dev, &["emulator", "fault", "clear", "status"]);
    assert_eq!(json(&dev, &["query"])["reset_required"], false);
    // Once the fault is gone the same command succeeds.
    assert_eq!(json(&dev, &["set-profile", "roce", "--yes"])["changed"], true);
}

fn interrupted_before_the_set(sig: i32, code: i32) {
    let (dir, dev) = fresh();
    let before = next_profile_in_state(dir.path());
    json(&dev, &["emulator", "fault", "set", &format!("slow=1:{GET_ACTIVE_PROFILE}:800")]);
    let child = spawn(&dev, &["-vvv", "set-profile", "roce", "--yes"]);
    // The first GET_ACTIVE_PROFILE (reading the profiles) is in flight for 800 ms.
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, sig);
    let run: Run = child.wait_with_output().unwrap().into();
    assert_eq!(run.code, code, "{}", run.stderr);
    let message = run.message_lines();
    assert_eq!(message.len(), 1, "one line: {}", run.stderr);
    assert!(message[0].contains("nothing was changed") && message[0].contains("run the command again"), "{message:?}");
    // The signal landed where it was meant to: GET_ACTIVE_PROFILE ran, SET_ACTIVE_PROFILE never did.
    assert!(run.ran(GET_ACTIVE_PROFILE) && !run.ran(SET_ACTIVE_PROFILE), "{:?}", run.events());
    assert_eq!(next_profile_in_state(dir.path()), before, "stopped before SET_ACTIVE_PROFILE");
    // The lock is free at once, and a rerun completes.
    json(&dev, &["emulator", "fault", "clear", "--all"]);
    let r = ocetool(&["--device", &dev, "--wait", "0", "set-profile", "roce", "--yes", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["changed"], true);
}

#[test]
fn sigint_before_the_set_stops_cleanly_with_130() {
    interrupted_before_the_set(2, 130);
}

#[test]
fn sigterm_before_the_set_stops_cleanly_with_143() {
    interrupted_before_the_set(15, 143);
}

#[test]
fn post_that_never_completes_after_reset_names_the_stage() {
    let (_d, dev) = fresh();
    json(&dev, &["emulator", "fault", "set", "post-stuck=0x0002"]);
    let r = ocetool(&["--device", &dev, "--post-timeout", "0.3", "reset", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("POST") && r.stderr.contains("0x0002"), "{}", r.stderr);
    json(&dev, &["emulator", "fault", "clear", "--all"]);
    assert_eq!(json(&dev, &["reset", "--yes"])["changed"], true);
}

fn interrupted_flash(sig: i32, code: i32) {
    let (dir, dev) = fresh();
    let image = dir.path().join("new.ufi");
    std::fs::write(&image, oce_firmware::build::ImageBuilder::new("11.2.0.9").build().unwrap()).unwrap();
    let flash_before = std::fs::read(dir.path().join("emu/flash.bin")).unwrap();
    // 20 ms a chunk: the 512 KiB firmware section (the first one written) takes 16 chunks.
    json(&dev, &["emulator", "fault", "set", "slow-flash=20", &format!("flash-fail-at={CHUNK_COUNTER}")]);
    let child = spawn(&dev, &["fw", "update", image.to_str().unwrap(), "--yes"]);
    wait_until("the first chunks of the firmware section", || chunks_received(&dir.path().join("emu")) >= 2);
    signal(&child, sig);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert!(stderr.contains("before committing 0xa0 (firmware)"), "the staged section was abandoned: {stderr}");
    assert!(stderr.contains("running the update again finishes it"), "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or_default().to_owned();
    assert!(last.contains("run the same `ocetool fw update` again"), "says how to resume: {last}");
    // The section being staged was never committed: the flash is as it was.
    let received = chunks_received(&dir.path().join("emu"));
    assert!(received < 16, "stopped before the firmware section's FLASH chunk ({received} chunks sent)");
    assert!(std::fs::read(dir.path().join("emu/flash.bin")).unwrap() == flash_before, "flash.bin unchanged");
    // The lock is free at once, and a rerun completes.
    json(&dev, &["emulator", "fault", "clear", "--all"]);
    let r = ocetool(&["--device", &dev, "--wait", "0", "fw", "update", image.to_str().unwrap(), "--yes", "--json"]);
    assert_eq!(r.code, 0, "the rerun completes: {}", r.stdout);
    let flashed: Vec<Value> =
        r.json()["sections"].as_array().unwrap().iter().filter(|s| s["action"] == "flashed").cloned().collect();
    assert!(flashed.iter().any(|s| s["name"] == "firmware"), "the abandoned section is written by the rerun");
    json(&dev, &["emulator", "power-cycle"]);
    assert_eq!(json(&dev, &["query"])["firmware"]["running"], "11.2.0.9");
}

#[test]
fn sigint_during_fw_update_abandons_the_staged_section_and_exits_130() {
    interrupted_flash(2, 130);
}

#[test]
fn sigterm_during_fw_update_abandons_the_staged_section_and_exits_143() {
    interrupted_flash(15, 143);
}

#[test]
fn sigint_during_a_post_wait_ends_it_at_once() {
    let (_d, dev) = fresh();
    json(&dev, &["emulator", "fault", "set", "post-stuck=0x0002"]);
    let started = Instant::now();
    let child = spawn(&dev, &["-vvv", "query"]); // the default POST wait is 60 s
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, 2);
    let run: Run = child.wait_with_output().unwrap().into();
    assert_eq!(run.code, 130, "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(10), "did not wait out the POST timeout");
    // Stopped in the POST wait itself: the message says so, and nothing reached the firmware.
    assert!(run.stderr.contains("nothing was changed") && run.stderr.contains("finished booting"), "{}", run.stderr);
    assert!(run.events().iter().all(|e| !e.starts_with("Command") && !e.starts_with("Signature")), "{}", run.stderr);
}

#[test]
fn a_signal_after_the_change_completes_and_says_so() {
    let (dir, dev) = fresh();
    let roce2 = profile_id(&dev, "RoCE-2 (NIC+RoCE)");
    // SET_ACTIVE_PROFILE itself takes 800 ms: the signal arrives while it is in flight.
    json(&dev, &["emulator", "fault", "set", "slow=1:168:800"]);
    let mut child = spawn(&dev, &["set-profile", "roce", "--yes"]);
    wait_until("SET_ACTIVE_PROFILE to be stored", || next_profile_in_state(dir.path()) == roce2);
    assert!(running(&mut child), "SET_ACTIVE_PROFILE's completion is still held back when the signal lands");
    signal(&child, 15);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("had finished"), "{stderr}");
    json(&dev, &["emulator", "fault", "clear", "--all"]);
    assert_eq!(json(&dev, &["query"])["profile"]["next"]["id"].as_u64(), Some(roce2));
}

/// A layout-changing update (the full layout over the emulator's small factory one), stopped by
/// `sig` once `after` chunks were received: the adapter boots the old or the new firmware after a
/// power cycle, and a rerun completes.
fn layout_change_stopped(sig: i32, after: u64) {
    let (dir, dev) = fresh();
    let image = dir.path().join("full.ufi");
    let layout = oce_firmware::build::Layout::full();
    std::fs::write(&image, oce_firmware::build::ImageBuilder::new("11.2.0.9").layout(layout).build().unwrap()).unwrap();
    // 5 ms a chunk: the 512 chunks of the full layout take about 2.5 s.
    json(&dev, &["emulator", "fault", "set", "slow-flash=5", &format!("flash-fail-at={CHUNK_COUNTER}")]);
    let child = spawn(&dev, &["fw", "update", image.to_str().unwrap(), "--yes"]);
    wait_until("the update to be under way", || chunks_received(&dir.path().join("emu")) >= after);
    signal(&child, sig);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match sig {
        9 => assert_eq!(out.status.code(), None, "killed: {stderr}"),
        _ => {
            assert_eq!(out.status.code(), Some(128 + sig), "{stderr}");
            assert!(stderr.contains("running the update again finishes it"), "{stderr}");
        }
    }
    json(&dev, &["emulator", "fault", "clear", "--all"]);
    json(&dev, &["emulator", "power-cycle"]);
    let running = json(&dev, &["query"])["firmware"]["running"].as_str().unwrap().to_owned();
    assert!(running == "11.1.172.23" || running == "11.2.0.9", "after a stop at {after} chunks it boots {running}");
    let r = ocetool(&["--device", &dev, "--wait", "5", "fw", "update", image.to_str().unwrap(), "--yes", "--json"]);
    assert_eq!(r.code, 0, "the rerun completes: {}{}", r.stdout, r.stderr);
    json(&dev, &["emulator", "power-cycle"]);
    assert_eq!(json(&dev, &["query"])["firmware"]["running"], "11.2.0.9");
}

#[test]
fn sigterm_and_sigkill_during_a_layout_change_leave_an_adapter_that_boots_and_a_rerun_completes() {
    // In the firmware section (chunks 1-160), the backup (161-320), and after the directory's
    // commit (chunk 481), in the boot code written last.
    for (sig, after) in [(15, 20), (9, 300), (15, 490)] {
        layout_change_stopped(sig, after);
    }
}
