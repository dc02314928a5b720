//! The boot hook (`packaging/be2net-hook`, run by the modprobe.d `install be2net` line and, with
//! `--service`, by ocetool-apply.service) on an emulated adapter: nothing without a configuration,
//! one log line and a JSON report per run, bounded by its timeout, and exit 0 whatever happened,
//! so be2net always loads afterwards. A firmware flash is never cut: under udev's limit it is
//! deferred (and reported) to the service, which has the time and completes it; a SIGTERM in the
//! middle of one lets the command in flight finish. The report is replaced only by a whole
//! document, from a temporary file of the run's own. Runs at once (udev loads be2net once per
//! PCI function, in parallel) go one after the other, and a run that finds another at work waits
//! for its end before letting be2net load: the emulator's state directory stands for the card,
//! each hook for one function's module load.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{CHUNK_COUNTER, OCETOOL, chunks_received, fresh, ocetool, wait_until};
use serde_json::Value;

fn hook() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/be2net-hook")
}

/// The factory firmware of a fresh emulated adapter, and the version of the image flashed here.
const FACTORY: &str = "11.1.172.23";
const NEW: &str = "11.2.0.9";

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

    fn run_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    fn report(&self) -> PathBuf {
        self.run_dir().join("last-apply.json")
    }

    /// The link `systemctl enable ocetool-apply.service` makes (the hook looks for it).
    fn service_link(&self) -> PathBuf {
        self.dir.path().join("sysinit.target.wants-ocetool-apply.service")
    }

    /// A configuration asking for RoCE, activated by a reset, and the firmware of `NEW`.
    fn with_firmware(&self) {
        let image = self.dir.path().join("new.ufi");
        std::fs::write(&image, oce_firmware::build::ImageBuilder::new(NEW).build().unwrap()).unwrap();
        let rule = format!(
            "[[adapter]]\nmatch = {{ all = true }}\nprofile = \"roce\"\nfirmware = \"{}\"\nactivate = \"reset\"\n",
            image.display()
        );
        std::fs::write(self.config(), rule).unwrap();
    }

    /// A configuration asking for RoCE, activated by a reset.
    fn roce(&self) {
        std::fs::write(
            self.config(),
            "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nactivate = \"reset\"\n",
        )
        .unwrap();
    }

    /// True while a process holds the card's lock (the emulator's, beside its state directory),
    /// as `flock -n` finds it.
    fn card_locked(&self) -> bool {
        let lock = self.dir.path().join(".emu.lock");
        lock.exists() && !Command::new("flock").arg("-n").arg(&lock).arg("true").status().unwrap().success()
    }

    /// Starts the modprobe.d hook with limit `timeout_secs`; the handle gives its output and the
    /// moment it ended (when udev's modprobe would go on to load be2net).
    fn start(&self, timeout_secs: u32) -> JoinHandle<(Output, Instant)> {
        let child = self.command(&[], timeout_secs, Path::new(OCETOOL)).spawn().unwrap();
        std::thread::spawn(move || {
            let out = child.wait_with_output().unwrap();
            (out, Instant::now())
        })
    }

    fn faults(&self, specs: &[&str]) {
        let mut args = vec!["--device", self.dev.as_str(), "emulator", "fault", "set"];
        args.extend_from_slice(specs);
        assert_eq!(ocetool(&args).code, 0);
    }

    fn chunks(&self) -> u64 {
        chunks_received(&self.dir.path().join("emu"))
    }

    /// The hook as `args` call it (`[]`: the modprobe.d line; `["--service"]`: the unit), with
    /// its limit `timeout_secs` and `bin` as ocetool.
    fn command(&self, args: &[&str], timeout_secs: u32, bin: &Path) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg(hook())
            .args(args)
            .env("OCETOOL_CONFIG", self.config())
            .env("OCETOOL_BIN", bin)
            .env("OCETOOL_DEVICE", &self.dev)
            .env("OCETOOL_RUN_DIR", self.run_dir())
            .env("OCETOOL_SERVICE_WANTS", self.service_link())
            .env("OCETOOL_HOOK_TIMEOUT", timeout_secs.to_string())
            // On a host, not in an initramfs, and be2net not loaded (the unit before coldplug).
            .env("OCETOOL_INITRAMFS_MANIFEST", self.dir.path().join("no-initramfs-manifest"))
            .env("OCETOOL_BE2NET_MODULE", self.dir.path().join("no-be2net-module"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// The modprobe.d hook.
    fn run(&self, timeout_secs: u32) -> Output {
        self.command(&[], timeout_secs, Path::new(OCETOOL)).output().unwrap()
    }

    /// ocetool-apply.service's run.
    fn run_service(&self, timeout_secs: u32) -> Output {
        self.command(&["--service"], timeout_secs, Path::new(OCETOOL)).output().unwrap()
    }

    fn report_json(&self) -> Value {
        let bytes = std::fs::read(self.report()).unwrap();
        serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!("the report is not a whole document ({e}): {:?}", String::from_utf8_lossy(&bytes))
        })
    }
}

/// The hook's one log line.
fn log_line(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(text.lines().count(), 1, "one line per run: {text}");
    assert_eq!(out.status.code(), Some(0), "the module load must not fail: {text}");
    text
}

/// `pid` and every process below it, as systemd finds them in the unit's control group.
fn process_tree(pid: u32) -> Vec<u32> {
    let parent_of = |p: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        stat.rsplit_once(") ")?.1.split(' ').nth(1)?.parse().ok()
    };
    let all: Vec<u32> =
        std::fs::read_dir("/proc").unwrap().flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        let children: Vec<u32> =
            all.iter().copied().filter(|c| parent_of(*c) == Some(p) && !tree.contains(c)).collect();
        tree.extend(children);
        i += 1;
    }
    tree
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
    // The line says why, in ocetool's own words.
    assert!(line.contains("key `profile`: \"rocee\" is not a profile"), "{line}");
    let report = s.report_json();
    assert!(report["error"]["message"].as_str().unwrap().contains("key `profile`"), "{report}");
}

#[test]
fn the_hook_is_bounded_by_its_timeout() {
    let s = Setup::new();
    std::fs::write(s.config(), "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n").unwrap();
    // GET_ACTIVE_PROFILE takes 60 s: far past the hook's 1 s limit.
    s.faults(&["slow=1:167:60000"]);
    let started = Instant::now();
    let out = s.run(1);
    let line = log_line(&out);
    assert!(line.contains("stopped after 1s (exit 124), the command in flight finished first"), "{line}");
    // ocetool stopped by itself once the command in flight ended (at its 4 s timeout), long
    // before the 60 s after which `timeout` would kill it; generous for a slow machine.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let report = s.report_json();
    assert!(report["adapters"][0]["error"]["message"].is_string(), "{report}");
}

#[test]
fn at_boot_a_slow_flash_is_deferred_never_cut_and_the_services_later_run_completes_it() {
    let s = Setup::new();
    s.with_firmware();
    std::fs::write(s.service_link(), "").unwrap();
    // Each flash chunk takes 2 s: the 512 KiB firmware section alone would take 32 s, ten times
    // the hook's limit.
    s.faults(&["slow-flash=2000", &format!("flash-fail-at={CHUNK_COUNTER}")]);
    let out = s.run(3);
    let line = log_line(&out);
    assert!(line.contains("exit 0 changed=true reset_required=false deferred=true"), "{line}");
    assert!(
        line.contains(
            "a firmware flash was deferred to ocetool-apply.service, which flashes it before be2net at the next boot"
        ),
        "{line}"
    );
    let report = s.report_json();
    let adapter = &report["adapters"][0];
    assert_eq!(report["deferred"], true, "{report}");
    assert_eq!((&adapter["deferred"]["firmware"], &adapter["deferred"]["budget_secs"]), (&NEW.into(), &0.into()));
    assert!(adapter["deferred"]["worst_case_secs"].as_u64().unwrap() > 3, "{adapter}");
    // What must happen before be2net did: RoCE runs after the reset; the firmware was not touched.
    assert_eq!(adapter["roce_enabled"], true, "{adapter}");
    assert_eq!(adapter["firmware"]["stored"], FACTORY);
    assert_eq!(s.chunks(), 0, "no flash chunk was sent");

    // The service, before be2net at the next boot, has the time for the flash (its limit covers
    // the image's worst case) and completes it.
    s.faults(&["slow-flash=20"]);
    let out = s.run_service(4000);
    let line = log_line(&out);
    assert!(line.contains("applied") && line.contains("deferred=false"), "{line}");
    let report = s.report_json();
    let adapter = &report["adapters"][0];
    assert!(adapter["deferred"].is_null(), "{adapter}");
    let actions = adapter["actions"].to_string();
    assert!(actions.contains(&format!("flashed firmware {NEW} (was {FACTORY})")), "{actions}");
    assert_eq!((&adapter["firmware"]["stored"], &adapter["firmware"]["running"]), (&NEW.into(), &NEW.into()));
    assert!(s.chunks() > 0);
}

#[test]
fn a_deferred_flash_says_when_no_enabled_service_will_do_it() {
    let s = Setup::new();
    s.with_firmware();
    let line = log_line(&s.run(30));
    assert!(
        line.contains("ocetool-apply.service, which would flash it before be2net at boot, is not enabled"),
        "{line}"
    );
    assert!(line.contains("systemctl enable ocetool-apply.service"), "{line}");
}

#[test]
fn the_service_defers_a_flash_whose_worst_case_does_not_fit_in_its_time() {
    let s = Setup::new();
    s.with_firmware();
    s.faults(&[&format!("flash-fail-at={CHUNK_COUNTER}")]);
    // 600 s for the unit: 300 s of it for the flash, less than the image's worst case.
    let line = log_line(&s.run_service(600));
    assert!(line.contains("deferred=true") && line.contains("flash it by hand (ocetool fw update)"), "{line}");
    let deferred = &s.report_json()["adapters"][0]["deferred"];
    assert_eq!(deferred["budget_secs"], 300, "{deferred}");
    assert!(deferred["worst_case_secs"].as_u64().unwrap() > 300, "{deferred}");
    assert_eq!(s.chunks(), 0);
}

#[test]
fn sigterm_to_the_service_in_mid_flash_lets_the_command_in_flight_finish_and_keeps_a_whole_report() {
    let s = Setup::new();
    s.with_firmware();
    // 700 ms a chunk: stopping after the section in flight, or after the chunk in flight, takes
    // seconds, more than a 5 s grace before SIGKILL would give it.
    s.faults(&["slow-flash=700", &format!("flash-fail-at={CHUNK_COUNTER}")]);
    let child: Child = s.command(&["--service"], 4000, Path::new(OCETOOL)).spawn().unwrap();
    wait_until("the first chunks of the flash", || s.chunks() >= 2);
    // What systemd does to stop the unit (shutdown, `systemctl stop`): SIGTERM to each process.
    let pids: Vec<String> = process_tree(child.id()).iter().map(ToString::to_string).collect();
    assert!(pids.len() >= 3, "sh, timeout and ocetool: {pids:?}");
    assert!(Command::new("kill").arg("-TERM").args(&pids).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let line = log_line(&out);
    assert!(line.contains("stopped by SIGTERM (exit 143), the command in flight finished first"), "{line}");
    assert!(!line.contains("killed"), "{line}");
    let report = s.report_json();
    assert_eq!(report["adapters"][0]["error"]["kind"], "terminated", "{report}");
    // The adapter is consistent: the next run completes the flash.
    assert_eq!(ocetool(&["--device", &s.dev, "emulator", "fault", "clear", "--all"]).code, 0);
    let line2 = log_line(&s.run_service(4000));
    assert!(line2.contains("applied"), "{line2}");
    assert_eq!(s.report_json()["adapters"][0]["firmware"]["stored"], NEW);
}

#[test]
fn two_hooks_at_once_on_one_card_the_second_waits_for_the_first_and_never_gives_up_busy() {
    let s = Setup::new();
    s.roce();
    // Each GET_PROFILE_CONFIG takes 1.2 s: the first run's apply holds the card about 24 s, more
    // than the 20 s an ocetool of the hook waits for a card's lock, within the hook's 30 s.
    s.faults(&["slow=1:164:1200"]);
    let first = s.start(30);
    wait_until("the first run holds the card", || s.card_locked());
    let second = s.start(30);
    let (first, first_end) = first.join().unwrap();
    let (second, second_end) = second.join().unwrap();
    let first_line = log_line(&first);
    let second_line = log_line(&second);
    assert!(first_line.contains("applied") && first_line.contains("exit 0 changed=true"), "{first_line}");
    assert!(
        second_end >= first_end,
        "the second run ended, and be2net would load, while the first was changing the card: {second_line}"
    );
    assert!(!second_line.contains("exit 5"), "{second_line}");
    assert!(second_line.contains("was working on the adapters: waited"), "{second_line}");
    assert!(second_line.contains("so no card is in the middle of a change; it logged: applied"), "{second_line}");
    // One apply did the work, and its whole report is there; no temporary file is left.
    let report = s.report_json();
    assert_eq!((&report["changed"], &report["adapters"][0]["roce_enabled"]), (&true.into(), &true.into()), "{report}");
    let mut files: Vec<String> = std::fs::read_dir(s.run_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["hook.lock", "last-apply.json", "last-run"]);
}

#[test]
fn a_run_that_waits_covers_the_first_runs_command_in_flight_after_its_limit() {
    let s = Setup::new();
    s.roce();
    // The first GET_ACTIVE_PROFILE takes 3.5 s (within its 4 s): the first run is stopped at its
    // 1 s limit and finishes that command first, so it holds the card past the limit both runs
    // have. The second must not end before it.
    s.faults(&["slow=1:167:3500"]);
    let first = s.start(1);
    wait_until("the first run holds the card", || s.card_locked());
    let second = s.start(1);
    let (first, first_end) = first.join().unwrap();
    let (second, second_end) = second.join().unwrap();
    let first_line = log_line(&first);
    let second_line = log_line(&second);
    assert!(first_line.contains("stopped after 1s (exit 124), the command in flight finished first"), "{first_line}");
    assert!(second_end >= first_end, "the second run ended before the first: {second_line}");
    assert!(second_line.contains("it logged: apply of ") && second_line.contains("stopped after 1s"), "{second_line}");
}
