//! The fault matrix: every emulator fault × every operation, through the CLI binary.
//!
//! Each cell checks that the operation ends as expected (a one-line error naming the symptom with
//! exit code 1, or success where the fault does not touch the operation), that the adapter's
//! persistent state is consistent afterwards (each profile and each firmware version the old or
//! the new one, and the adapter boots), and that the operation succeeds once the fault is cleared.
//!
//! The resulting table must equal the one in `docs/reliability.md` (between the fault-matrix
//! markers); run with `OCETOOL_BLESS=1` to rewrite it after an intended change.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    /// Exit 1 with this phrase in the one-line message; the table shows `label`.
    Fail { phrase: &'static str, label: &'static str },
    /// Exit 0.
    Ok,
}

struct Fault {
    /// Row label (the fault spec, with OP for the operation's key opcode).
    row: &'static str,
    /// The spec for an operation.
    spec: fn(&Op) -> String,
    expect: fn(&Op) -> Expect,
    /// Clearing needs a power cycle (power is lost until then).
    power_cycle: bool,
}

const fn fail(phrase: &'static str, label: &'static str) -> Expect {
    Expect::Fail { phrase, label }
}

fn faults() -> Vec<Fault> {
    vec![
        Fault {
            row: "post-stuck=0x0002",
            spec: |_| "post-stuck=0x0002".into(),
            expect: |_| fail("stuck at stage 0x0002", "POST stuck at 0x0002"),
            power_cycle: false,
        },
        Fault {
            row: "post-error",
            spec: |_| "post-error".into(),
            expect: |_| fail("POST failed", "POST failed"),
            power_cycle: false,
        },
        Fault {
            row: "ue=0x1",
            spec: |_| "ue=0x1".into(),
            expect: |_| fail("unrecoverable error", "unrecoverable error (UE)"),
            power_cycle: false,
        },
        Fault {
            row: "rdy-never",
            spec: |_| "rdy-never".into(),
            expect: |_| fail("did not become ready", "firmware not ready"),
            power_cycle: false,
        },
        Fault {
            row: "rdy-hang",
            spec: |_| "rdy-hang".into(),
            expect: |_| fail("did not become ready", "firmware not ready"),
            power_cycle: false,
        },
        Fault { row: "rdy-after=3", spec: |_| "rdy-after=3".into(), expect: |_| Expect::Ok, power_cycle: false },
        Fault {
            row: "gone",
            spec: |_| "gone".into(),
            expect: |_| fail("stopped answering", "adapter stopped answering"),
            power_cycle: false,
        },
        Fault {
            row: "power-lost",
            spec: |_| "power-lost".into(),
            expect: |_| fail("stopped answering", "adapter stopped answering"),
            power_cycle: true,
        },
        Fault {
            row: "status=1:OP:1",
            spec: |op| format!("status=1:{}:1", op.key_opcode),
            expect: |_| fail("base status 1", "command failed (status 1)"),
            power_cycle: false,
        },
        Fault {
            row: "response-length=1:OP:100000",
            spec: |op| format!("response-length=1:{}:100000", op.key_opcode),
            expect: |_| fail("response claims 100000 bytes", "response longer than its buffer"),
            power_cycle: false,
        },
        Fault {
            row: "truncate=1:OP:2",
            spec: |op| format!("truncate=1:{}:2", op.key_opcode),
            // SET_ACTIVE_PROFILE has no response body to cut.
            expect: |op| {
                if op.name == "set-profile" { Expect::Ok } else { fail("malformed response", "truncated response") }
            },
            power_cycle: false,
        },
        Fault {
            row: "no-valid=1:OP",
            spec: |op| format!("no-valid=1:{}", op.key_opcode),
            expect: |_| fail("VALID not set", "completion without VALID"),
            power_cycle: false,
        },
        Fault {
            row: "slow=1:OP:50",
            spec: |op| format!("slow=1:{}:50", op.key_opcode),
            expect: |_| Expect::Ok,
            power_cycle: false,
        },
        Fault {
            row: "flash-fail-at=2",
            spec: |_| "flash-fail-at=2".into(),
            expect: |op| {
                if op.name == "fw update" { fail("writing section", "section write failed") } else { Expect::Ok }
            },
            power_cycle: false,
        },
        Fault {
            row: "power-loss-at=3",
            spec: |_| "power-loss-at=3".into(),
            expect: |op| {
                if op.name == "fw update" { fail("stopped answering", "power lost mid-flash") } else { Expect::Ok }
            },
            power_cycle: true,
        },
        Fault { row: "slow-flash=1", spec: |_| "slow-flash=1".into(), expect: |_| Expect::Ok, power_cycle: false },
        Fault { row: "no-offset-mode", spec: |_| "no-offset-mode".into(), expect: |_| Expect::Ok, power_cycle: false },
    ]
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
    args.push("--json".into());
    let r = run(&dev, &args);
    let expect = (fault.expect)(op);
    let text = match expect {
        Expect::Ok if r.code == 0 => "ok".to_owned(),
        Expect::Fail { phrase, label } if r.code == 1 => {
            let msg = r.json()["error"]["message"].as_str().unwrap_or_default().to_owned();
            if !msg.contains(phrase) || msg.contains('\n') {
                return Err(format!("{spec} × {}: message {msg:?} lacks {phrase:?}", op.name));
            }
            format!("exit 1: {label}")
        }
        _ => return Err(format!("{spec} × {}: exit {} ({}{})", op.name, r.code, r.stdout, r.stderr)),
    };

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
