//! ocetool processes mutating one emulated adapter at once are serialized by the
//! device lock, the final state is one some order of the operations produces, and a lock left by
//! a killed process never blocks anyone.

mod common;

use std::fs::OpenOptions;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{OCETOOL, emu_arg, ocetool};
use oce_firmware::build::ImageBuilder;

#[test]
fn parallel_mutations_end_in_a_serial_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let dev = emu_arg(&dir.path().join("emu"));
    assert_eq!(ocetool(&["--device", &dev, "emulator", "init"]).code, 0);
    let v2 = dir.path().join("v2.ufi");
    let v3 = dir.path().join("v3.ufi");
    std::fs::write(&v2, ImageBuilder::new("11.2.0.2").build().unwrap()).unwrap();
    std::fs::write(&v3, ImageBuilder::new("11.3.0.3").build().unwrap()).unwrap();
    let jobs: Vec<Vec<String>> = vec![
        vec!["fw".into(), "update".into(), v2.display().to_string(), "--yes".into()],
        vec!["set-profile".into(), "roce".into(), "--yes".into()],
        vec!["fw".into(), "update".into(), v3.display().to_string(), "--yes".into()],
        vec!["set-profile".into(), "nic".into(), "--yes".into()],
        vec!["set-profile".into(), "roce".into(), "--yes".into()],
        vec!["query".into()],
    ];
    let children: Vec<_> = jobs
        .iter()
        .map(|args| {
            Command::new(OCETOOL)
                .args(["--device", &dev, "--wait", "60"])
                .args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let codes: Vec<i32> =
        children.into_iter().map(|c| c.wait_with_output().unwrap().status.code().unwrap_or(-1)).collect();
    // v2 succeeds when it runs before v3, and is refused as a downgrade (exit 4) after it;
    // everything else always succeeds.
    assert!(codes[0] == 0 || codes[0] == 4, "v2: {}", codes[0]);
    assert!(codes[1..].iter().all(|&c| c == 0), "{codes:?}");
    let q = ocetool(&["--device", &dev, "query", "--json"]).json();
    assert_eq!(q["firmware"]["stored"], "11.3.0.3", "in every order v3 ends on flash");
    let next = q["profile"]["next"]["name"].as_str().unwrap();
    assert!(next == "NIC" || next == "RoCE-2 (NIC+RoCE)", "{next}");
    // The flash holds exactly one whole image, not a mix: the emulated adapter boots it.
    assert_eq!(ocetool(&["--device", &dev, "reset", "--yes"]).code, 0);
    assert_eq!(ocetool(&["--device", &dev, "query", "--json"]).json()["firmware"]["running"], "11.3.0.3");
}

#[test]
fn a_lock_left_by_a_killed_process_does_not_block() {
    let dir = tempfile::tempdir().unwrap();
    let dev = emu_arg(&dir.path().join("emu"));
    assert_eq!(ocetool(&["--device", &dev, "emulator", "init"]).code, 0);
    // GET_ACTIVE_PROFILE takes 5 s: the process holds the lock while it waits.
    assert_eq!(ocetool(&["--device", &dev, "emulator", "fault", "set", "slow=1:167:5000"]).code, 0);
    let mut child = Command::new(OCETOOL)
        .args(["--device", &dev, "profiles"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock_path = dir.path().join(".emu.lock");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let f = OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).unwrap();
        if f.try_lock().is_err() {
            break; // the child holds it
        }
        drop(f);
        assert!(Instant::now() < deadline, "the child never took the lock");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The kernel released the dead process's lock: no waiting at all is needed.
    let r = ocetool(&["--device", &dev, "--wait", "0", "emulator", "fault", "clear", "--all"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ocetool(&["--device", &dev, "--wait", "0", "query"]).code, 0);
}
