//! The boot hook's report, `last-apply.json` in its run folder: replaced only by a whole JSON
//! document, written first to a temporary file of the run's own, so it is never empty or
//! half-written, two hooks at once never write into one file, and a run that leaves no whole
//! document (killed, cut short) keeps the previous report and says so in its log line. A killed
//! run is followed by `ocetool restore-drivers`.
//!
//! ocetool is replaced here by a small script (`OCETOOL_BIN`) that prints what a run in each
//! situation leaves on stdout, so each case happens exactly, every time.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

fn hook() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/be2net-hook")
}

/// The stand-in for ocetool. `STUB_MODE`: `whole` prints a whole document (with `STUB_ID` and
/// `STUB_PAD`, after `STUB_DELAY` seconds between its first line and the rest), `half` stops in
/// the middle of one and fails, `killed` dies of SIGKILL before printing. `restore-drivers`
/// leaves a mark and succeeds.
const STUB: &str = r#"#!/bin/sh
case "$*" in
    *restore-drivers*) echo "$*" > "$STUB_DIR/restore-drivers"; echo '{}'; exit 0 ;;
esac
case $STUB_MODE in
    whole)
        printf '{\n'
        sleep "${STUB_DELAY:-0}"
        printf '  "schema": "ocetool/1",\n  "changed": true,\n  "id": "%s",\n  "pad": "%s"\n}\n' "$STUB_ID" "$STUB_PAD" ;;
    half) printf '{\n  "schema": "ocetool/1",\n  "changed": tr'; exit 1 ;;
    killed) kill -9 $$ ;;
esac
"#;

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ocetool.toml"), "[[adapter]]\nmatch = { all = true }\n").unwrap();
        let stub = dir.path().join("ocetool");
        std::fs::write(&stub, STUB).unwrap();
        std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { dir }
    }

    fn run_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    fn report(&self) -> PathBuf {
        self.run_dir().join("last-apply.json")
    }

    fn spawn(&self, mode: &str, id: &str, pad: &str, delay: &str) -> Child {
        Command::new("sh")
            .arg(hook())
            .env("OCETOOL_CONFIG", self.dir.path().join("ocetool.toml"))
            .env("OCETOOL_BIN", self.dir.path().join("ocetool"))
            .env("OCETOOL_DEVICE", "emu:unused")
            .env("OCETOOL_RUN_DIR", self.run_dir())
            .env("OCETOOL_SERVICE_WANTS", self.dir.path().join("no-such-link"))
            .env("STUB_DIR", self.dir.path())
            .env("STUB_MODE", mode)
            .env("STUB_ID", id)
            .env("STUB_PAD", pad)
            .env("STUB_DELAY", delay)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// One hook run; its log line.
    fn run(&self, mode: &str, id: &str) -> String {
        log_line(&self.spawn(mode, id, "", "0").wait_with_output().unwrap())
    }

    /// Every file in the run folder.
    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.run_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn log_line(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(text.lines().count(), 1, "one line per run: {text}");
    assert_eq!(out.status.code(), Some(0), "the module load must not fail: {text}");
    text
}

/// The document the stub prints in `whole` mode.
fn document(id: &str, pad: &str) -> String {
    format!("{{\n  \"schema\": \"ocetool/1\",\n  \"changed\": true,\n  \"id\": \"{id}\",\n  \"pad\": \"{pad}\"\n}}\n")
}

#[test]
fn a_run_that_leaves_no_whole_document_keeps_the_previous_report_and_says_so() {
    let s = Setup::new();
    let line = s.run("whole", "first");
    assert!(line.contains("applied") && line.contains("exit 0 changed=true"), "{line}");
    let first = std::fs::read_to_string(s.report()).unwrap();
    assert_eq!(first, document("first", ""));
    assert_eq!(std::fs::metadata(s.report()).unwrap().permissions().mode() & 0o777, 0o644);

    // Cut short in the middle of its document.
    let line = s.run("half", "second");
    assert!(line.contains("failed (exit 1;"), "{line}");
    assert!(line.contains("no complete report from this run, the previous"), "{line}");
    assert_eq!(std::fs::read_to_string(s.report()).unwrap(), first);

    // Killed before printing anything: the previous report, and the drivers given back.
    let line = s.run("killed", "third");
    assert!(line.contains("was killed (exit 137); ocetool restore-drivers gave back what it held"), "{line}");
    assert!(line.contains("no complete report from this run, the previous"), "{line}");
    assert_eq!(std::fs::read_to_string(s.report()).unwrap(), first);
    let asked = std::fs::read_to_string(s.dir.path().join("restore-drivers")).unwrap();
    assert_eq!(asked.trim(), "--json --wait 5 restore-drivers");

    // No temporary file is left behind by any of them.
    assert_eq!(s.files(), ["last-apply.json"]);
}

#[test]
fn two_hooks_at_once_never_share_a_temporary_file() {
    let s = Setup::new();
    // The first prints a long document slowly; the second, started while the first is in the
    // middle of its own, a short one: one file for both would end with the short one written
    // over the long one, and its tail left behind.
    let long = "x".repeat(400);
    let a = s.spawn("whole", "a", &long, "0.8");
    std::thread::sleep(Duration::from_millis(300));
    let b = s.spawn("whole", "b", "", "0.8");
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    for out in [&a, &b] {
        let line = log_line(out);
        assert!(line.contains("applied") && !line.contains("no complete report"), "{line}");
    }
    let report = std::fs::read_to_string(s.report()).unwrap();
    assert!(report == document("a", &long) || report == document("b", ""), "not one run's whole document: {report:?}");
    assert_eq!(s.files(), ["last-apply.json"]);
}
