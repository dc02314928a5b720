//! The boot hook (`packaging/be2net-hook`, run by the modprobe.d `install be2net` line and by
//! ocetool-apply.service) on an emulated adapter: nothing without a configuration, one log line
//! and a JSON report per run, bounded by its timeout, and exit 0 whatever happened, so be2net
//! always loads afterwards.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{OCETOOL, fresh, ocetool};

fn hook() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/be2net-hook")
}

struct Setup {
    dir: tempfile::TempDir,
    dev: String,
}

impl Setup {
    fn new() -> Self {
        let (dir, dev) = fresh();
        Self { dir, dev }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("ocetool.toml")
    }

    fn report(&self) -> PathBuf {
        self.dir.path().join("run/last-apply.json")
    }

    fn run(&self, timeout_secs: u32) -> Output {
        Command::new("sh")
            .arg(hook())
            .env("OCETOOL_CONFIG", self.config())
            .env("OCETOOL_BIN", OCETOOL)
            .env("OCETOOL_DEVICE", &self.dev)
            .env("OCETOOL_RUN_DIR", self.dir.path().join("run"))
            .env("OCETOOL_HOOK_TIMEOUT", timeout_secs.to_string())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn report_json(&self) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.report()).unwrap()).unwrap()
    }
}

#[test]
fn without_a_configuration_the_hook_does_nothing() {
    let s = Setup::new();
    let out = s.run(30);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!s.report().exists());
}

#[test]
fn the_hook_applies_logs_one_line_and_a_second_run_changes_nothing() {
    let s = Setup::new();
    std::fs::write(s.config(), "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nactivate = \"reset\"\n")
        .unwrap();
    let first = s.run(30);
    assert_eq!(first.status.code(), Some(0));
    let line = String::from_utf8_lossy(&first.stderr).into_owned();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.starts_with("ocetool-apply: applied ") && line.contains("exit 0 changed=true"), "{line}");
    let report = s.report_json();
    assert_eq!((&report["changed"], &report["adapters"][0]["roce_enabled"]), (&true.into(), &true.into()), "{report}");
    let second = s.run(30);
    assert!(String::from_utf8_lossy(&second.stderr).contains("changed=false"));
    assert_eq!(s.report_json()["changed"], false);
}

#[test]
fn a_bad_configuration_is_logged_and_be2net_still_loads() {
    let s = Setup::new();
    std::fs::write(s.config(), "[[adapter]]\nmatch = { all = true }\nprofile = \"rocee\"\n").unwrap();
    let out = s.run(30);
    assert_eq!(out.status.code(), Some(0), "the module load must not fail");
    let line = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(line.contains("failed (exit 2;") && line.contains("be2net loads anyway"), "{line}");
    let report = s.report_json();
    assert!(report["error"]["message"].as_str().unwrap().contains("key `profile`"), "{report}");
}

#[test]
fn the_hook_is_bounded_by_its_timeout() {
    let s = Setup::new();
    std::fs::write(s.config(), "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n").unwrap();
    // GET_ACTIVE_PROFILE takes 60 s: far past the hook's 1 s limit.
    assert_eq!(ocetool(&["--device", &s.dev, "emulator", "fault", "set", "slow=1:167:60000"]).code, 0);
    let started = Instant::now();
    let out = s.run(1);
    assert_eq!(out.status.code(), Some(0));
    let line = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(line.contains("stopped after 1s"), "{line}");
    // Generous: 1 s plus the 5 s grace before SIGKILL, and a slow machine.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
}
