//! The boot hook's report, `last-apply.json` in its run folder: replaced only by a whole JSON
//! document, written first to a temporary file of the run's own, so it is never empty or
//! half-written, two hooks at once never write into one file, and a run that leaves no whole
//! document (killed, cut short) keeps the previous report and says so in its log line. A killed
//! run is followed by `ocetool restore-drivers`. Two runs at once go one after the other (the
//! second waits for the first and leaves its report), and where they cannot (no flock(1)), they
//! still never write into one file.
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
/// `STUB_PAD`, after `STUB_DELAY` seconds between its first line and the rest; it marks its
/// start with the file `started-STUB_ID` in `STUB_DIR`), `half` stops in
/// the middle of one and fails, `none` prints the document of a run that found no adapter,
/// `killed` dies of SIGKILL before printing. `restore-drivers`
/// leaves a mark and succeeds.
const STUB: &str = r#"#!/bin/sh
case "$*" in
    *restore-drivers*) echo "$*" > "$STUB_DIR/restore-drivers"; echo '{}'; exit 0 ;;
esac
case $STUB_MODE in
    whole)
        printf '{\n'
        : > "$STUB_DIR/started-$STUB_ID"
        sleep "${STUB_DELAY:-0}"
        printf '  "schema": "ocetool/1",\n  "changed": true,\n  "id": "%s",\n  "pad": "%s"\n}\n' "$STUB_ID" "$STUB_PAD" ;;
    half) printf '{\n  "schema": "ocetool/1",\n  "changed": tr'; exit 1 ;;
    none) printf '{\n  "schema": "ocetool/1",\n  "changed": false,\n  "adapters": []\n}\n' ;;
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
        self.command(mode, id, pad, delay).spawn().unwrap()
    }

    fn command(&self, mode: &str, id: &str, pad: &str, delay: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg(hook())
            .env("OCETOOL_CONFIG", self.dir.path().join("ocetool.toml"))
            .env("OCETOOL_BIN", self.dir.path().join("ocetool"))
            .env("OCETOOL_DEVICE", "emu:unused")
            .env("OCETOOL_RUN_DIR", self.run_dir())
            .env("OCETOOL_SERVICE_WANTS", self.dir.path().join("no-such-link"))
            .env("OCETOOL_INITRAMFS_MANIFEST", self.dir.path().join("no-initramfs-manifest"))
            .env("OCETOOL_BE2NET_MODULE", self.dir.path().join("no-be2net-module"))
            .env("STUB_DIR", self.dir.path())
            .env("STUB_MODE", mode)
            .env("STUB_ID", id)
            .env("STUB_PAD", pad)
            .env("STUB_DELAY", delay)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// One hook run; its log line.
    fn run(&self, mode: &str, id: &str) -> String {
        log_line(&self.spawn(mode, id, "", "0").wait_with_output().unwrap())
    }

    /// A folder of links to every program on this machine's PATH but flock(1): a PATH on which
    /// the hook cannot take its lock.
    fn path_without_flock(&self) -> PathBuf {
        let bin = self.dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for dir in ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"] {
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if name != "flock" && !bin.join(&name).exists() {
                    std::os::unix::fs::symlink(entry.path(), bin.join(&name)).unwrap();
                }
            }
        }
        bin
    }

    /// Every file in the run folder.
    /// Waits until the stub of run `id` has begun its document (so that run holds the hook's
    /// lock if it takes one): an event to wait for, not a time, so a loaded machine that starts
    /// the first run late cannot swap the runs' order.
    fn wait_started(&self, id: &str) {
        let mark = self.dir.path().join(format!("started-{id}"));
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while !mark.exists() {
            assert!(std::time::Instant::now() < deadline, "run {id} never started its document");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

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
    assert_eq!(s.files(), ["hook.lock", "last-apply.json", "last-run"]);
}

#[test]
fn two_hooks_at_once_run_one_after_the_other_and_leave_the_first_ones_whole_report() {
    let s = Setup::new();
    // The first prints a long document slowly (3 s, the time the second has to start and reach
    // the lock); the second starts in the middle of it.
    let long = "x".repeat(400);
    let a = s.spawn("whole", "a", &long, "3");
    s.wait_started("a");
    let b = s.spawn("whole", "b", "", "0.8");
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let first = log_line(&a);
    assert!(first.contains("applied") && !first.contains("no complete report"), "{first}");
    let second = log_line(&b);
    assert!(second.contains("was working on the adapters: waited"), "{second}");
    assert!(second.contains("it logged: applied"), "{second}");
    // The second did not run ocetool: the report is the first run's whole document.
    assert_eq!(std::fs::read_to_string(s.report()).unwrap(), document("a", &long));
    assert_eq!(s.files(), ["hook.lock", "last-apply.json", "last-run"]);
}

#[test]
fn two_hooks_at_once_never_share_a_temporary_file() {
    let s = Setup::new();
    // Without flock(1) the runs cannot take their lock and overlap. The first prints a long
    // document slowly; the second, started while the first is in the middle of its own, a short
    // one: one file for both would end with the short one written over the long one, and its
    // tail left behind.
    let path = s.path_without_flock();
    let long = "x".repeat(400);
    let a = s.command("whole", "a", &long, "3").env("PATH", &path).spawn().unwrap();
    s.wait_started("a");
    let b = s.command("whole", "b", "", "0.8").env("PATH", &path).spawn().unwrap();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    for out in [&a, &b] {
        let line = log_line(out);
        assert!(line.contains("applied") && !line.contains("no complete report"), "{line}");
        assert!(line.contains("flock not found: runs of this hook are not serialised"), "{line}");
    }
    let report = std::fs::read_to_string(s.report()).unwrap();
    assert!(report == document("a", &long) || report == document("b", ""), "not one run's whole document: {report:?}");
    assert_eq!(s.files(), ["last-apply.json", "last-run"]);
}

#[test]
fn a_run_that_finds_no_adapter_says_so_at_priority_err() {
    let s = Setup::new();
    // As in an initramfs, whose kernel log shows an err line on a `quiet` console.
    let kmsg = s.dir.path().join("kmsg");
    let manifest = s.dir.path().join("initramfs-manifest");
    std::fs::write(&manifest, "config-state included\n").unwrap();
    let out = s
        .command("none", "", "", "0")
        .env("OCETOOL_INITRAMFS_MANIFEST", &manifest)
        .env("OCETOOL_KMSG", &kmsg)
        .output()
        .unwrap();
    let line = log_line(&out);
    assert!(line.contains("no OCe14000 adapter found: ") && line.contains("was applied to none (exit 0)"), "{line}");
    let logged = std::fs::read_to_string(&kmsg).unwrap();
    assert!(logged.starts_with("<3>ocetool-apply: no OCe14000 adapter found: "), "{logged}");
}
