//! The fault matrix: every emulator fault × every operation, through the CLI binary.
//!
//! Each cell checks that the operation ends as expected (a one-line error naming the symptom with
//! exit code 1, or success where the fault does not touch the operation or the operation clears
//! it), that the scenario really happened (the emulated adapter's event log, printed with `-vvv`,
//! shows the fault firing or the command it targets executing; a fault the operation must not
//! touch is still set as it was), that the adapter's persistent state is consistent afterwards (each profile and each firmware version the old or
//! the new one, and the adapter boots), and that the operation succeeds once the fault is cleared.
//!
//! The resulting table must equal the one in `docs/reliability.md` (between the fault-matrix
//! markers); run with `OCETOOL_BLESS=1` to rewrite it after an intended change.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use common::{Run, emu_arg, ocetool};
use oce_firmware::build::ImageBuilder;
use serde_json::Value;

const FACTORY: &str = "11.1.172.23";
const NEW: &str = "11.2.0.9";

/// An operation of the matrix, and the command it depends on most (the target of the
/// per-command faults): spec/protocol.md §5 opcodes.
struct Op {
    name: &'static str,
    key_opcode: u8,
}

const OPS: [Op; 5] = [
    Op { name: "query", key_opcode: 35 },        // GET_FW_VERSION
    Op { name: "profiles", key_opcode: 166 },    // GET_PROFILE_LIST
    Op { name: "set-profile", key_opcode: 168 }, // SET_ACTIVE_PROFILE
    Op { name: "fw update", key_opcode: 6 },     // READ_FLASHROM (the CRC query)
    Op { name: "reset", key_opcode: 167 },       // GET_ACTIVE_PROFILE (read after the reset)
];

impl Op {
    fn args(&self, image: &Path) -> Vec<String> {
        let v: Vec<&str> = match self.name {
            "query" => vec!["query"],
            "profiles" => vec!["profiles"],
            "set-profile" => vec!["set-profile", "roce", "--yes"],
            "fw update" => vec!["fw", "update", image.to_str().unwrap_or_default(), "--yes"],
            _ => vec!["reset", "--yes"],
        };
        v.into_iter().map(String::from).collect()
    }
}

/// What a cell must do.
#[derive(Clone, Copy)]
enum Expect {
    /// Exit 1 with every phrase in the one-line message; the table shows `label`.
    Fail { phrases: &'static [&'static str], label: &'static str },
    /// Exit 0.
    Ok,
    /// Exit 0, and the operation (a chip reset) cleared the fault.
    Cleared,
}

/// What a cell's run left to look at: the run itself, with `-vvv` (the emulated adapter's event
/// log: every command it executed, resets, faults that fired), and the faults still set after it.
struct Seen {
    run: Run,
    faults: Vec<String>,
}

impl Seen {
    fn ran(&self, opcode: u8) -> Result<(), String> {
        if self.run.ran(opcode) { Ok(()) } else { Err(format!("opcode {opcode} never ran")) }
    }

    fn did_not_run(&self, opcode: u8) -> Result<(), String> {
        if self.run.ran(opcode) { Err(format!("opcode {opcode} ran")) } else { Ok(()) }
    }

    /// Nothing reached the firmware: no command and no signature WRB was executed.
    fn nothing_sent(&self) -> Result<(), String> {
        match self.run.events().into_iter().find(|e| e.starts_with("Command {") || e.starts_with("Signature {")) {
            Some(e) => Err(format!("the firmware executed {e}")),
            None => Ok(()),
        }
    }

    /// The fault fired during the operation (`rdy-hang`, `flash-fail-at`, `power-loss-at`).
    fn fired(&self) -> Result<(), String> {
        let fired = self.run.events().iter().any(|e| e.starts_with("FaultTriggered"));
        if fired { Ok(()) } else { Err("the fault never fired".into()) }
    }

    /// The completion of command `opcode` was held back at least `at_least`: the adapter's log
    /// of the delay (`CompletionDelayed`, measured on its clock from the command's execution to
    /// its completion).
    fn delayed(&self, opcode: u8, at_least: Duration) -> Result<(), String> {
        let needle = format!("CompletionDelayed {{ subsystem: 1, opcode: {opcode}, held: ");
        let held: Vec<Duration> = (self.run.events().iter())
            .filter_map(|e| e.strip_prefix(needle.as_str())?.strip_suffix(" }"))
            .map(|d| debug_duration(d).unwrap_or_else(|| panic!("a duration: {d}")))
            .collect();
        match held.iter().max() {
            None => Err(format!("the completion of opcode {opcode} was never held")),
            Some(&longest) if longest < at_least => Err(format!("held only {longest:?}, not {at_least:?}")),
            Some(_) => Ok(()),
        }
    }

    /// The fault is still set afterwards, exactly as it was (a countdown that never moved).
    fn still_set(&self, spec: &str) -> Result<(), String> {
        if self.faults.iter().any(|f| f == spec) { Ok(()) } else { Err(format!("{spec} is gone: {:?}", self.faults)) }
    }

    /// The chip reset ran and the fault is gone with it.
    fn cleared_by_reset(&self) -> Result<(), String> {
        if !self.run.events().contains(&"ChipReset") {
            return Err("no chip reset".into());
        }
        if self.faults.is_empty() { Ok(()) } else { Err(format!("still set after the reset: {:?}", self.faults)) }
    }
}

struct Fault {
    /// Row label (the fault spec, with OP for the operation's key opcode).
    row: &'static str,
    /// The spec for an operation.
    spec: fn(&Op) -> String,
    expect: fn(&Op) -> Expect,
    /// What shows that the cell's scenario really happened.
    evidence: fn(&Op, &Seen) -> Result<(), String>,
    /// Clearing needs a power cycle (power is lost until then).
    power_cycle: bool,
}

const fn fail(phrases: &'static [&'static str], label: &'static str) -> Expect {
    Expect::Fail { phrases, label }
}

fn is_reset(op: &Op) -> bool {
    op.name == "reset"
}

fn is_flash(op: &Op) -> bool {
    op.name == "fw update"
}

/// READ_FLASHROM and WRITE_FLASHROM (spec/protocol.md §5): the only commands flash faults touch.
const READ_FLASHROM: u8 = 6;
const WRITE_FLASHROM: u8 = 7;

fn faults() -> Vec<Fault> {
    vec![
        Fault {
            row: "post-stuck=0x0002",
            spec: |_| "post-stuck=0x0002".into(),
            expect: |_| fail(&["stuck at stage 0x0002"], "POST stuck at 0x0002"),
            evidence: |_, s| s.nothing_sent(),
            power_cycle: false,
        },
        Fault {
            row: "post-error",
            spec: |_| "post-error".into(),
            expect: |_| fail(&["POST failed"], "POST failed"),
            evidence: |_, s| s.nothing_sent(),
            power_cycle: false,
        },
        Fault {
            row: "ue=0x1",
            spec: |_| "ue=0x1".into(),
            expect: |op| {
                if is_reset(op) { Expect::Cleared } else { fail(&["unrecoverable error"], "unrecoverable error (UE)") }
            },
            evidence: |op, s| if is_reset(op) { s.cleared_by_reset() } else { s.nothing_sent() },
            power_cycle: false,
        },
        Fault {
            row: "rdy-never",
            spec: |_| "rdy-never".into(),
            expect: |op| {
                if is_reset(op) {
                    Expect::Cleared
                } else {
                    fail(&["did not become ready", "before the address high write"], "firmware not ready")
                }
            },
            evidence: |op, s| if is_reset(op) { s.cleared_by_reset() } else { s.nothing_sent() },
            power_cycle: false,
        },
        Fault {
            row: "rdy-hang",
            spec: |_| "rdy-hang".into(),
            expect: |op| {
                if is_reset(op) { Expect::Cleared } else { fail(&["did not become ready"], "firmware not ready") }
            },
            evidence: |op, s| if is_reset(op) { s.cleared_by_reset() } else { s.fired().and(s.nothing_sent()) },
            power_cycle: false,
        },
        Fault {
            row: "rdy-after=3",
            spec: |_| "rdy-after=3".into(),
            expect: |_| Expect::Ok,
            evidence: |op, s| {
                s.ran(op.key_opcode)?;
                s.still_set("rdy-after=3")?;
                match s.run.events().into_iter().find(|e| e.starts_with("WriteWhileBusy")) {
                    Some(e) => Err(format!("the host ignored RDY: {e}")),
                    None => Ok(()),
                }
            },
            power_cycle: false,
        },
        Fault {
            row: "gone",
            spec: |_| "gone".into(),
            expect: |_| fail(&["stopped answering"], "adapter stopped answering"),
            evidence: |_, s| s.nothing_sent(),
            power_cycle: false,
        },
        Fault {
            row: "power-lost",
            spec: |_| "power-lost".into(),
            expect: |_| fail(&["stopped answering"], "adapter stopped answering"),
            evidence: |_, s| s.nothing_sent(),
            power_cycle: true,
        },
        Fault {
            row: "status=1:OP:1",
            spec: |op| format!("status=1:{}:1", op.key_opcode),
            expect: |_| fail(&["base status 1"], "command failed (status 1)"),
            evidence: |op, s| s.ran(op.key_opcode),
            power_cycle: false,
        },
        Fault {
            row: "response-length=1:OP:100000",
            spec: |op| format!("response-length=1:{}:100000", op.key_opcode),
            expect: |_| fail(&["response claims 100000 bytes"], "response longer than its buffer"),
            evidence: |op, s| s.ran(op.key_opcode),
            power_cycle: false,
        },
        Fault {
            row: "truncate=1:OP:2",
            spec: |op| format!("truncate=1:{}:2", op.key_opcode),
            // SET_ACTIVE_PROFILE has no response body to cut.
            expect: |op| {
                if op.name == "set-profile" {
                    Expect::Ok
                } else {
                    fail(&["malformed response", "at byte"], "truncated response")
                }
            },
            evidence: |op, s| s.ran(op.key_opcode),
            power_cycle: false,
        },
        Fault {
            row: "no-valid=1:OP",
            spec: |op| format!("no-valid=1:{}", op.key_opcode),
            expect: |_| fail(&["VALID not set"], "completion without VALID"),
            evidence: |op, s| s.ran(op.key_opcode),
            power_cycle: false,
        },
        Fault {
            row: "slow=1:OP:50",
            spec: |op| format!("slow=1:{}:50", op.key_opcode),
            expect: |_| Expect::Ok,
            evidence: |op, s| s.ran(op.key_opcode).and(s.delayed(op.key_opcode, Duration::from_millis(50))),
            power_cycle: false,
        },
        Fault {
            row: "flash-fail-at=2",
            spec: |_| "flash-fail-at=2".into(),
            expect: |op| if is_flash(op) { fail(&["writing section"], "section write failed") } else { Expect::Ok },
            evidence: |op, s| if is_flash(op) { s.fired() } else { s.still_set("flash-fail-at=2") },
            power_cycle: false,
        },
        Fault {
            row: "power-loss-at=3",
            spec: |_| "power-loss-at=3".into(),
            expect: |op| if is_flash(op) { fail(&["stopped answering"], "power lost mid-flash") } else { Expect::Ok },
            evidence: |op, s| if is_flash(op) { s.fired() } else { s.still_set("power-loss-at=3") },
            power_cycle: true,
        },
        Fault {
            row: "slow-flash=1",
            spec: |_| "slow-flash=1".into(),
            expect: |_| Expect::Ok,
            evidence: |op, s| if is_flash(op) { s.ran(WRITE_FLASHROM) } else { s.did_not_run(WRITE_FLASHROM) },
            power_cycle: false,
        },
        Fault {
            row: "no-offset-mode",
            spec: |_| "no-offset-mode".into(),
            expect: |_| Expect::Ok,
            evidence: |op, s| {
                if is_flash(op) {
                    let fell_back = s.run.json()["fell_back"] == true;
                    if fell_back { Ok(()) } else { Err("the walk did not fall back to op types".into()) }
                } else if op.name == "reset" {
                    // reset reads the flash directory (READ_FLASHROM) to check it boots.
                    s.did_not_run(WRITE_FLASHROM)
                } else {
                    s.did_not_run(READ_FLASHROM).and(s.did_not_run(WRITE_FLASHROM))
                }
            },
            power_cycle: false,
        },
        Fault {
            row: "pfc-unsync",
            spec: |_| "pfc-unsync".into(),
            // A switch that disagrees about PFC touches DCB only: the adapter works on.
            expect: |_| Expect::Ok,
            evidence: |_, s| s.still_set("pfc-unsync"),
            power_cycle: false,
        },
        Fault {
            row: "link-down",
            spec: |_| "link-down".into(),
            // A pulled cable is the network's: the mailbox works on, and query shows it.
            expect: |_| Expect::Ok,
            evidence: |op, s| {
                let port = &s.run.json()["ports"][0];
                let shown = op.name != "query" || (port["link_up"] == false && port["speed_mbps"].is_null());
                if !shown {
                    return Err(format!("query did not show the link down, without a speed: {port}"));
                }
                s.still_set("link-down")
            },
            power_cycle: false,
        },
    ]
}

/// A `Duration` as `{:?}` prints it (`50.08ms`, `1.2s`, `999µs`, `12ns`).
fn debug_duration(text: &str) -> Option<Duration> {
    let units = [("ns", 1e-9), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)];
    let (number, scale) = units.iter().find_map(|(unit, scale)| Some((text.strip_suffix(unit)?, scale)))?;
    Some(Duration::from_secs_f64(number.parse::<f64>().ok()? * scale))
}

fn run(dev: &str, args: &[String]) -> Run {
    let mut all = vec![
        "--device".to_owned(),
        dev.to_owned(),
        "--post-timeout".into(),
        "0.3".into(),
        "--command-timeout".into(),
        "0.3".into(),
    ];
    all.extend_from_slice(args);
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    ocetool(&refs)
}

fn json(dev: &str, args: &[&str]) -> Value {
    let mut v: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    v.push("--json".into());
    let r = run(dev, &v);
    assert_eq!(r.code, 0, "{args:?}: {}{}", r.stdout, r.stderr);
    r.json()
}

/// Runs one cell; returns the table text, or a description of what went wrong.
fn cell(template: &Path, image: &Path, work: &Path, fault: &Fault, op: &Op) -> Result<String, String> {
    let dir = work.join(format!("{}-{}", fault.row.replace([':', '='], "_"), op.name.replace(' ', "_")));
    copy_dir(template, &dir);
    let dev = emu_arg(&dir);
    let spec = (fault.spec)(op);
    json(&dev, &["emulator", "fault", "set", &spec]);

    let mut args = op.args(image);
    args.extend(["--json".into(), "-vvv".into()]);
    let r = run(&dev, &args);
    let faults_after = json(&dev, &["emulator", "fault", "list"])["faults"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let expect = (fault.expect)(op);
    let text = match expect {
        Expect::Ok if r.code == 0 => "ok".to_owned(),
        Expect::Cleared if r.code == 0 => "ok: the reset clears it".to_owned(),
        Expect::Fail { phrases, label } if r.code == 1 => {
            let msg = r.json()["error"]["message"].as_str().unwrap_or_default().to_owned();
            if phrases.iter().any(|p| !msg.contains(p)) || msg.contains('\n') {
                return Err(format!("{spec} × {}: message {msg:?} lacks one of {phrases:?}", op.name));
            }
            format!("exit 1: {label}")
        }
        _ => return Err(format!("{spec} × {}: exit {} ({}{})", op.name, r.code, r.stdout, r.stderr)),
    };
    let seen = Seen { run: r, faults: faults_after };
    (fault.evidence)(op, &seen).map_err(|e| {
        format!("{spec} × {}: the scenario did not happen: {e}\nevents:\n{}", op.name, seen.run.events().join("\n"))
    })?;

    // Clear the fault (and restore power), then the adapter must be consistent and usable.
    json(&dev, &["emulator", "fault", "clear", "--all"]);
    if fault.power_cycle {
        json(&dev, &["emulator", "power-cycle"]);
    }
    let q = json(&dev, &["query"]);
    for side in ["active", "next"] {
        let name = q["profile"][side]["name"].as_str().unwrap_or_default();
        if name != "NIC" && name != "RoCE-2 (NIC+RoCE)" {
            return Err(format!("{spec} × {}: profile.{side} is {name:?}", op.name));
        }
    }
    for which in ["running", "stored"] {
        let v = q["firmware"][which].as_str().unwrap_or_default();
        if v != FACTORY && v != NEW {
            return Err(format!("{spec} × {}: firmware.{which} is {v:?}", op.name));
        }
    }
    let rerun = run(&dev, &op.args(image));
    if rerun.code != 0 {
        return Err(format!("{spec} × {}: rerun after clearing failed: {}", op.name, rerun.stderr));
    }
    std::fs::remove_dir_all(&dir).ok();
    Ok(text)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

fn table(rows: &[(String, Vec<String>)]) -> String {
    let mut out = String::from("| fault | ");
    out.push_str(&OPS.iter().map(|o| o.name).collect::<Vec<_>>().join(" | "));
    out.push_str(" |\n|---|");
    out.push_str(&"---|".repeat(OPS.len()));
    out.push('\n');
    for (row, cells) in rows {
        out.push_str(&format!("| `{row}` | {} |\n", cells.join(" | ")));
    }
    out
}

const BEGIN: &str = "<!-- fault-matrix:begin (generated by cli/tests/fault_matrix.rs) -->";
const END: &str = "<!-- fault-matrix:end -->";

fn doc_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reliability.md")
}

#[test]
fn every_fault_times_every_operation() {
    let work = tempfile::tempdir().unwrap();
    let template = work.path().join("template");
    json(&emu_arg(&template), &["emulator", "init"]);
    let image = work.path().join("new.ufi");
    std::fs::write(&image, ImageBuilder::new(NEW).build().unwrap()).unwrap();

    let faults = faults();
    let cells: Vec<(usize, usize)> = (0..faults.len()).flat_map(|f| (0..OPS.len()).map(move |o| (f, o))).collect();
    let results = Mutex::new(vec![vec![String::new(); OPS.len()]; faults.len()]);
    let errors = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    let Some(&(f, o)) = cells.get(i) else { break };
                    match cell(&template, &image, work.path(), &faults[f], &OPS[o]) {
                        Ok(text) => results.lock().unwrap()[f][o] = text,
                        Err(e) => errors.lock().unwrap().push(e),
                    }
                }
            });
        }
    });
    let errors = errors.into_inner().unwrap();
    assert!(errors.is_empty(), "{} cells failed:\n{}", errors.len(), errors.join("\n"));

    let rows: Vec<(String, Vec<String>)> =
        faults.iter().map(|f| f.row.to_owned()).zip(results.into_inner().unwrap()).collect();
    let table = table(&rows);
    println!("{table}");

    let doc = std::fs::read_to_string(doc_path()).expect("docs/reliability.md");
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("fault-matrix markers missing in docs/reliability.md")
    };
    let current = &doc[b + BEGIN.len()..e];
    let generated = format!("\n{table}");
    if std::env::var_os("OCETOOL_BLESS").is_some() {
        let updated = format!("{}{}{}{}", &doc[..b], BEGIN, generated, &doc[e..]);
        std::fs::write(doc_path(), updated).unwrap();
    } else {
        assert_eq!(
            current, generated,
            "docs/reliability.md's matrix differs from what the test shows; rerun with OCETOOL_BLESS=1"
        );
    }
}
