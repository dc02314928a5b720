//! A stop requested during a flash is acknowledged at once: the moment SIGINT or SIGTERM arrives,
//! one line on stderr says the stop is pending, when it happens (after the write in flight) and
//! that the flash is safe to rerun, while the chunk in flight is still being written. The JSON
//! document is unchanged; `--quiet` drops the line.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::{CHUNK_COUNTER, OCETOOL, chunks_received, fresh, ocetool, wait_until};

/// The notice's first words.
const NOTICE: &str = "ocetool: stop requested: the flash stops after the write in flight";

/// An update of a fresh emulator whose every chunk takes `chunk_ms`, started with `flags`.
fn slow_update(chunk_ms: u32, flags: &[&str]) -> (tempfile::TempDir, Child) {
    let (dir, dev) = fresh();
    let image = dir.path().join("new.ufi");
    std::fs::write(&image, oce_firmware::build::ImageBuilder::new("11.2.0.9").build().unwrap()).unwrap();
    let fault = ["--device", &dev, "emulator", "fault", "set"];
    let slow = format!("slow-flash={chunk_ms}");
    let counter = format!("flash-fail-at={CHUNK_COUNTER}");
    let set = ocetool(&[&fault[..], &[slow.as_str(), counter.as_str()]].concat());
    assert_eq!(set.code, 0, "{set:?}");
    let child = Command::new(OCETOOL)
        .env_remove("OCETOOL_DEVICE")
        .args(["--device", &dev])
        .args(flags)
        .args(["fw", "update", image.to_str().unwrap(), "--yes"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let state = dir.path().join("emu");
    wait_until("the first chunks to arrive", || chunks_received(&state) >= 1);
    (dir, child)
}

fn signal(child: &Child, sig: i32) {
    let status = Command::new("kill").arg(format!("-{sig}")).arg(child.id().to_string()).status().unwrap();
    assert!(status.success());
}

#[test]
fn the_notice_comes_while_the_chunk_in_flight_is_still_written() {
    for (sig, code, kind) in [(2, 130, "interrupted"), (15, 143, "terminated")] {
        // 1.5 s a chunk: the notice must not wait for it.
        let (_dir, mut child) = slow_update(1500, &["--json"]);
        signal(&child, sig);
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let still_running = child.try_wait().unwrap().is_none();
        assert!(line.starts_with(NOTICE), "the first line on stderr is the notice: {line:?}");
        assert!(still_running, "the notice came before the stop happened");
        assert!(line.contains("32 KiB chunk, within 40 s") && line.contains("safe to rerun"), "{line}");
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code));
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
        assert!(!rest.contains(NOTICE), "one line, once: {rest}");
        // The JSON document is the stop's error, as without the notice.
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["error"]["kind"], kind, "{doc}");
    }
}

#[test]
fn quiet_drops_the_notice_and_a_flash_without_a_stop_prints_none() {
    let (_dir, child) = slow_update(300, &["--json", "--quiet"]);
    signal(&child, 2);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(NOTICE), "{stderr}");

    let (_dir, child) = slow_update(1, &[]);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("stop requested"), "{stderr}");
}
