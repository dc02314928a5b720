//! The JSON Schemas in `schemas/` (draft 2020-12; the package installs them in
//! `/usr/share/ocetool/schemas/`) describe every document ocetool prints with `--json`. These
//! tests run the real binary — every command against an emulated adapter, and on a fake sysfs
//! tree for what needs one (`list`, `query` while be2net holds the function) — and validate what
//! it printed, error documents included, against the schema of its command. A last test renames
//! or drops each field scripts key on (the README's "JSON" table) in a copy of a real document
//! and checks that the schema refuses it.

mod common;

use std::path::{Path, PathBuf};

use common::{Run, emu_arg, ocetool};
use oce_firmware::build::ImageBuilder;
use oce_pci::PciAddress;
use oce_pci::fake_sysfs::FakeTree;
use serde_json::Value;

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas")
}

/// The validator of `schemas/NAME.json`, checked to be a draft 2020-12 schema.
fn validator(name: &str) -> jsonschema::Validator {
    let path = schema_dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", "{name}");
    jsonschema::draft202012::meta::validate(&schema).unwrap_or_else(|e| panic!("{name} is not a valid schema: {e}"));
    jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The reasons `doc` is not valid against `schemas/NAME.json` (empty when it is).
fn problems(name: &str, doc: &Value) -> Vec<String> {
    validator(name).iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

/// Checks that `run` printed one JSON document valid against `schemas/NAME.json`, and returns it.
fn valid(name: &str, run: &Run) -> Value {
    let doc = run.json();
    let found = problems(name, &doc);
    assert!(found.is_empty(), "{name}: {found:#?}\n{}", run.stdout);
    doc
}

/// `ocetool ARGS --json` on the emulated adapter `dev`.
fn on(dev: &str, args: &[&str]) -> Run {
    ocetool(&[&["--device", dev, "--json"], args].concat())
}

#[test]
fn every_command_on_an_emulated_adapter() {
    let d = tempfile::tempdir().unwrap();
    let dev = emu_arg(&d.path().join("emu"));
    let path = |name: &str| d.path().join(name).to_str().unwrap().to_owned();
    valid("emulator", &on(&dev, &["emulator", "init"]));
    valid("query", &on(&dev, &["query"]));
    valid("profiles", &on(&dev, &["profiles"]));
    valid("set-profile", &on(&dev, &["set-profile", "roce", "--dry-run"]));
    valid("set-profile", &on(&dev, &["set-profile", "roce", "--yes"]));
    valid("reset", &on(&dev, &["reset", "--dry-run"]));
    valid("reset", &on(&dev, &["reset", "--yes"]));
    valid("fw-build", &ocetool(&["--json", "fw", "build", "--version", "11.2.0.0", "-o", &path("new.ufi")]));
    valid("fw-build", &ocetool(&["--json", "fw", "build", "--version", "10.0.0.0", "-o", &path("old.ufi")]));
    std::fs::write(path("junk.ufi"), vec![0x11; 2048]).unwrap();
    for image in ["new.ufi", "junk.ufi"] {
        valid("fw-inspect", &ocetool(&["--json", "fw", "inspect", &path(image)]));
        valid("fw-verify", &ocetool(&["--json", "fw", "verify", &path(image)]));
    }
    valid("fw-verify", &on(&dev, &["fw", "verify", &path("new.ufi")]));
    valid("fw-verify", &on(&dev, &["fw", "verify", &path("old.ufi")]));
    valid("fw-update", &on(&dev, &["fw", "update", &path("new.ufi"), "--dry-run"]));
    valid("fw-update", &on(&dev, &["fw", "update", &path("new.ufi"), "--yes"]));
    valid("fw-update", &on(&dev, &["fw", "update", &path("new.ufi"), "--yes"]));
    valid("raw", &on(&dev, &["raw", "--subsystem", "1", "--opcode", "35"]));
    valid("raw", &on(&dev, &["raw", "--subsystem", "1", "--opcode", "250", "--yes"]));
    valid("doctor", &on(&dev, &["doctor"]));
    valid("dcb", &on(&dev, &["dcb"]));
    valid("dump", &on(&dev, &["dump", "-o", &path("dump.bin")]));
    valid("port", &on(&dev, &["port"]));
    valid("locate", &on(&dev, &["locate", "--on"]));
    valid("locate", &on(&dev, &["locate", "--off"]));
    std::fs::write(
        path("ocetool.toml"),
        "[[adapter]]\nmatch = { all = true }\nprofile = \"nic\"\nactivate = \"reset\"\n",
    )
    .unwrap();
    valid("apply", &on(&dev, &["apply", "--config", &path("ocetool.toml"), "--dry-run"]));
    valid("apply", &on(&dev, &["apply", "--config", &path("ocetool.toml")]));
    std::fs::write(path("old.toml"), "[[adapter]]\nmatch = { all = true }\nfirmware = \"old.ufi\"\n").unwrap();
    let refused = valid("apply", &on(&dev, &["apply", "--config", &path("old.toml")]));
    assert_eq!(refused["adapters"][0]["error"]["code"], "downgrade-refused");
    // A flash whose worst case does not fit in the budget: deferred, and said so.
    valid("fw-build", &ocetool(&["--json", "fw", "build", "--version", "11.3.0.0", "-o", &path("newer.ufi")]));
    std::fs::write(path("newer.toml"), "[[adapter]]\nmatch = { all = true }\nfirmware = \"newer.ufi\"\n").unwrap();
    let deferred = valid("apply", &on(&dev, &["apply", "--config", &path("newer.toml"), "--firmware-budget", "0"]));
    assert!(deferred["adapters"][0]["deferred"].is_object(), "{deferred}");
    std::fs::write(path("none.toml"), "[[adapter]]\nmatch = { serial = \"none\" }\n").unwrap();
    valid("apply", &on(&dev, &["apply", "--config", &path("none.toml")]));
    valid("emulator", &on(&dev, &["emulator", "show"]));
    valid("emulator", &on(&dev, &["emulator", "power-cycle"]));
    valid("emulator-fault", &on(&dev, &["emulator", "fault", "set", "link-down", "pfc-unsync"]));
    valid("emulator-fault", &on(&dev, &["emulator", "fault", "list"]));
    valid("emulator", &on(&dev, &["emulator", "show"]));
    // A port whose link is down, a PFC out of sync with the switch.
    valid("query", &on(&dev, &["query"]));
    valid("port", &on(&dev, &["port"]));
    valid("dcb", &on(&dev, &["dcb"]));
    valid("doctor", &on(&dev, &["doctor"]));
    valid("emulator-fault", &on(&dev, &["emulator", "fault", "clear", "--all"]));
    valid("manpage", &ocetool(&["--json", "manpage", "--out-dir", &path("man")]));
    // An adapter that stopped answering: the adapter's checks fail, apply reports its error.
    assert_eq!(ocetool(&["--device", &dev, "emulator", "fault", "set", "gone"]).code, 0);
    valid("doctor", &on(&dev, &["doctor"]));
    let gone = valid("apply", &on(&dev, &["apply", "--config", &path("ocetool.toml")]));
    assert_eq!(gone["adapters"][0]["error"]["code"], "device-gone");
}

#[test]
fn a_virtual_function_and_the_serve_report() {
    let d = tempfile::tempdir().unwrap();
    let dev = emu_arg(&d.path().join("vf"));
    valid("emulator", &on(&dev, &["emulator", "init", "--vf"]));
    valid("query", &on(&dev, &["query"]));
    let profiles = on(&dev, &["profiles"]);
    valid(if profiles.code == 0 { "profiles" } else { "error" }, &profiles);
    // `emulator serve` until SIGINT: its report when it stops.
    let socket = d.path().join("vf.sock");
    let child = common::command()
        .args(["--device", &dev, "--json", "emulator", "serve", "--socket", socket.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_until("the server's socket", || socket.exists());
    let sent = std::process::Command::new("kill").arg("-INT").arg(child.id().to_string()).status().unwrap();
    assert!(sent.success());
    let served: Run = child.wait_with_output().unwrap().into();
    assert_eq!(served.code, 130, "stopped by SIGINT: {served:?}");
    valid("emulator-serve", &served);
}

/// Error documents, one per kind of error and several commands: all the one error schema.
#[test]
fn error_documents() {
    let (d, dev) = common::fresh();
    let runs = [
        ocetool(&["--json", "--device", "eth0", "query"]),
        ocetool(&["--json", "query", "--bogus"]),
        on(&dev, &["set-profile", "roce"]),
        on(&dev, &["set-profile", "200", "--yes"]),
        on(&dev, &["emulator", "init"]),
        on(&dev, &["raw", "--subsystem", "1", "--opcode", "35", "--payload", "zz"]),
        on(&dev, &["apply", "--config", d.path().join("missing.toml").to_str().unwrap()]),
        ocetool(&["--json", "fw", "inspect", d.path().join("missing.ufi").to_str().unwrap()]),
        ocetool(&["--json", "fw", "build", "--version", "1.0", "-o", d.path().join("x/y.ufi").to_str().unwrap()]),
        on(&dev, &["dump", "-o", d.path().join("x/y.bin").to_str().unwrap()]),
        ocetool(&["--json", "manpage", "--out-dir", "/proc/ocetool-man"]),
    ];
    for run in &runs {
        assert_ne!(run.code, 0, "{run:?}");
        valid("error", run);
    }
    assert_eq!(ocetool(&["--device", &dev, "emulator", "fault", "set", "gone"]).code, 0);
    for args in [&["query"][..], &["profiles"], &["port"], &["dcb"], &["locate", "--on"], &["reset", "--yes"]] {
        let run = on(&dev, args);
        assert_eq!(run.code, 1, "{args:?}: {run:?}");
        let doc = valid("error", &run);
        assert_eq!(doc["error"]["code"], "device-gone", "{args:?}");
    }
}

const PORT0: &str = "0000:03:00.0";

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

/// ocetool on a fake sysfs tree, its lock files in a folder of the tree.
fn on_tree(tree: &FakeTree, args: &[&str]) -> Run {
    common::on_fake_tree(tree).arg("--json").args(args).output().unwrap().into()
}

/// `list`, `query` answered from the kernel while be2net holds the function, and the host-side
/// errors, on a fake tree: a two-port OCe14102 (one port on be2net with a network interface and
/// an RDMA device, the other unbound), another card without an IOMMU group, and an Intel NIC.
#[test]
fn the_host_s_side_on_a_fake_sysfs_tree() {
    let tree = FakeTree::new();
    for module in ["be2net", "ocrdma"] {
        tree.load_module(module);
    }
    tree.device(addr(PORT0), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(7).driver("be2net").netdev(
        "ocefake0",
        "00:00:c9:00:00:01",
        "up",
        Some(10_000),
    );
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(7);
    tree.rdma_device("ocrdma0", addr(PORT0), &[("ACTIVE", "Ethernet")]);
    tree.device(addr("0000:05:00.0"), 0x10df, 0x0720);
    tree.device(addr("0000:06:00.0"), 0x8086, 0x100e).group(9).driver("e1000");
    valid("list", &on_tree(&tree, &["list"]));
    valid("list", &on_tree(&tree, &["list", "--all"]));
    valid("restore-drivers", &on_tree(&tree, &["restore-drivers"]));
    let kernel = valid("query", &on_tree(&tree, &["--device", PORT0, "query"]));
    assert_eq!(kernel["source"], "kernel");
    valid("doctor", &on_tree(&tree, &["doctor"]));
    valid("doctor", &on_tree(&tree, &["--device", PORT0, "doctor"]));
    for args in [
        &["--device", PORT0, "profiles"][..],
        &["--device", "0000:99:00.0", "query"],
        &["--device", "0000:06:00.0", "query"],
        &["--device", "0000:05:00.0", "--backend", "vfio", "query"],
        &["query"],
    ] {
        let run = on_tree(&tree, args);
        assert_ne!(run.code, 0, "{args:?}: {run:?}");
        valid("error", &run);
    }
}

/// Contract fields of a document (README "JSON"), as JSON pointers: each renamed, and each
/// dropped, in a copy of a real document makes it invalid.
fn contract_fields_are_enforced(name: &str, doc: &Value, pointers: &[&str]) {
    assert!(problems(name, doc).is_empty(), "{name}: the real document is valid");
    for pointer in pointers {
        let (parent, field) = pointer.rsplit_once('/').unwrap();
        for renamed in [true, false] {
            let mut copy = doc.clone();
            let object =
                copy.pointer_mut(parent).and_then(Value::as_object_mut).unwrap_or_else(|| panic!("{name}{pointer}"));
            let value = object.remove(field).unwrap_or_else(|| panic!("{name}: no {pointer} in {doc}"));
            if renamed {
                object.insert(format!("{field}_renamed"), value);
            }
            let what = if renamed { "renamed" } else { "dropped" };
            assert!(!problems(name, &copy).is_empty(), "{name}: {pointer} {what}, and the schema still accepts it");
        }
    }
}

#[test]
fn a_renamed_or_missing_contract_field_fails_its_schema() {
    let (d, dev) = common::fresh();
    let image = d.path().join("new.ufi");
    std::fs::write(&image, ImageBuilder::new("11.2.0.0").build().unwrap()).unwrap();
    let image = image.to_str().unwrap();
    let doc = |run: Run| run.json();
    contract_fields_are_enforced(
        "query",
        &doc(on(&dev, &["query"])),
        &[
            "/source",
            "/pci/vendor_id",
            "/pci/device_id",
            "/chip",
            "/model",
            "/serial",
            "/asic_revision",
            "/firmware/running",
            "/firmware/stored",
            "/function_mode",
            "/roce_enabled",
            "/profile/active/id",
            "/profile/active/name",
            "/profile/next/roce",
            "/reset_required",
            "/ports/0/index",
            "/ports/0/name",
            "/ports/0/netdev",
            "/ports/0/mac",
            "/ports/0/link_up",
            "/ports/0/speed_mbps",
            "/schema",
        ],
    );
    contract_fields_are_enforced(
        "profiles",
        &doc(on(&dev, &["profiles"])),
        &["/profiles/0/id", "/profiles/0/name", "/profiles/0/roce", "/profiles/0/active", "/profiles/0/next"],
    );
    contract_fields_are_enforced(
        "set-profile",
        &doc(on(&dev, &["set-profile", "roce", "--yes"])),
        &["/changed", "/reset_required", "/firmware/running", "/profile/next/id", "/function_mode", "/roce_enabled"],
    );
    contract_fields_are_enforced(
        "fw-inspect",
        &doc(ocetool(&["--json", "fw", "inspect", image])),
        &[
            "/chip",
            "/build",
            "/version",
            "/asic_type_rev",
            "/sections/0/type",
            "/sections/0/name",
            "/sections/0/optype",
            "/sections/0/offset",
            "/sections/0/size",
            "/sections/0/crc_ok",
            "/problems",
            "/flashable",
        ],
    );
    contract_fields_are_enforced(
        "fw-verify",
        &doc(on(&dev, &["fw", "verify", image])),
        &["/ok", "/flashable", "/compatible", "/version_change", "/reasons"],
    );
    contract_fields_are_enforced(
        "fw-update",
        &doc(on(&dev, &["fw", "update", image, "--yes"])),
        &[
            "/changed",
            "/reset_required",
            "/firmware/stored",
            "/profile/active",
            "/sections/0/type",
            "/sections/0/name",
            "/sections/0/action",
            "/sections/0/bytes",
        ],
    );
    contract_fields_are_enforced(
        "reset",
        &doc(on(&dev, &["reset", "--yes"])),
        &[
            "/changed",
            "/reset_required",
            "/firmware/running",
            "/profile/active/name",
            "/function_mode",
            "/roce_enabled",
        ],
    );
    contract_fields_are_enforced(
        "raw",
        &doc(on(&dev, &["raw", "--subsystem", "1", "--opcode", "35"])),
        &["/base_status", "/additional_status", "/response"],
    );
    contract_fields_are_enforced(
        "doctor",
        &doc(on(&dev, &["doctor"])),
        &[
            "/checks/0/id",
            "/checks/0/status",
            "/checks/0/detail",
            "/checks/0/hint",
            "/summary/pass",
            "/summary/fail",
            "/failed",
            "/device",
        ],
    );
    contract_fields_are_enforced(
        "dcb",
        &doc(on(&dev, &["dcb"])),
        &[
            "/device",
            "/dcbx/enabled",
            "/dcbx/operational/pfc_priorities",
            "/pfc/in_sync",
            "/pfc/ready_for_roce",
            "/roce_priority",
            "/roce_priority_source",
        ],
    );
    contract_fields_are_enforced(
        "dump",
        &doc(on(&dev, &["dump", "-o", d.path().join("d.bin").to_str().unwrap()])),
        &["/device", "/file", "/bytes", "/hint"],
    );
    contract_fields_are_enforced(
        "port",
        &doc(on(&dev, &["port"])),
        &[
            "/device",
            "/port",
            "/port_count",
            "/link/up",
            "/link/speed_mbps",
            "/phy/interface",
            "/module/vendor",
            "/locate",
        ],
    );
    contract_fields_are_enforced(
        "locate",
        &doc(on(&dev, &["locate", "--off"])),
        &["/device", "/port", "/locate", "/changed"],
    );
    let config = d.path().join("ocetool.toml");
    std::fs::write(&config, "[[adapter]]\nmatch = { all = true }\nprofile = \"nic\"\n").unwrap();
    contract_fields_are_enforced(
        "apply",
        &doc(on(&dev, &["apply", "--config", config.to_str().unwrap()])),
        &[
            "/changed",
            "/reset_required",
            "/adapters/0/device",
            "/adapters/0/serial",
            "/adapters/0/rule",
            "/adapters/0/actions",
            "/adapters/0/changed",
            "/adapters/0/reset_required",
            "/adapters/0/roce_enabled",
            "/adapters/0/profile",
            "/adapters/0/firmware",
            "/adapters/0/error",
        ],
    );
    contract_fields_are_enforced(
        "error",
        &doc(on(&dev, &["set-profile", "roce"])),
        &["/schema", "/error/kind", "/error/code", "/error/message", "/error/causes"],
    );
    let tree = FakeTree::new();
    tree.device(addr(PORT0), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(7);
    contract_fields_are_enforced(
        "list",
        &doc(on_tree(&tree, &["list"])),
        &[
            "/adapters/0/functions/0/address",
            "/adapters/0/functions/0/vendor_id",
            "/adapters/0/functions/0/device_id",
            "/adapters/0/functions/0/chip",
            "/adapters/0/functions/0/kind",
            "/adapters/0/functions/0/driver",
            "/adapters/0/functions/0/iommu_group",
            "/adapters/0/functions/0/backend",
            "/adapters/0/functions/0/backend_reason",
            "/adapters/0/functions/0/usable",
            "/adapters/0/functions/0/reason",
        ],
    );
}

/// The error schema ties each code to its kind as the README's "Error codes" table does: a
/// code with another kind, or a code the README does not list, is refused.
#[test]
fn the_error_schema_pairs_each_code_with_its_kind() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let section = readme.split("### Error codes").nth(1).unwrap().split("\n## ").next().unwrap();
    let kinds = [
        (1, "failed"),
        (2, "usage"),
        (3, "no_device"),
        (4, "refused"),
        (5, "busy"),
        (130, "interrupted"),
        (143, "terminated"),
    ];
    let rows: Vec<(&str, &str)> = section
        .lines()
        .filter_map(|l| {
            let (code, rest) = l.strip_prefix("| `")?.split_once("` | ")?;
            let exit: i32 = rest.split(" | ").next()?.parse().ok()?;
            Some((code, kinds.iter().find(|k| k.0 == exit)?.1))
        })
        .collect();
    assert!(rows.len() > 20);
    let doc = |code: &str, kind: &str| serde_json::json!({"schema": "ocetool/1", "error": {"kind": kind, "code": code, "message": "m", "causes": []}});
    for (code, kind) in &rows {
        assert!(problems("error", &doc(code, kind)).is_empty(), "{code} as {kind}");
        let other = if *kind == "refused" { "failed" } else { "refused" };
        assert!(!problems("error", &doc(code, other)).is_empty(), "{code} as {other} is accepted");
    }
    assert!(!problems("error", &doc("no-such-code", "failed")).is_empty());
}

/// Every schema in `schemas/` is for a document these tests produce, and is named in the README.
#[test]
fn every_schema_is_tested_and_documented() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let this = include_str!("json_schemas.rs");
    for entry in std::fs::read_dir(schema_dir()).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        let name = file.strip_suffix(".json").unwrap_or_else(|| panic!("{file}: not a .json schema"));
        validator(name);
        assert!(this.contains(&format!("valid(\"{name}\"")), "schemas/{file} validates no document here");
        assert!(readme.contains(&format!("`{file}`")), "the README does not name schemas/{file}");
    }
}

/// `query --all` on a fake tree (an adapter be2net holds, one ocetool cannot reach) and an
/// emulator: the document, and each adapter's `query` against the `query` schema.
#[test]
fn the_inventory_and_each_of_its_queries() {
    let tree = FakeTree::new();
    tree.load_module("be2net");
    tree.device(addr(PORT0), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(7).driver("be2net");
    tree.device(addr("0000:05:00.0"), 0x10df, 0x0720);
    let home = tempfile::tempdir().unwrap();
    let emu = emu_arg(&home.path().join("emu"));
    let root = tree.roots().sysfs.parent().unwrap();
    let run: Run = common::command()
        .env("OCETOOL_LOCK_DIR", root.join("locks"))
        .env("OCETOOL_RUN_DIR", root.join("run"))
        .env("XDG_STATE_HOME", home.path())
        .arg("--sysfs-root")
        .arg(&tree.roots().sysfs)
        .arg("--dev-root")
        .arg(&tree.roots().dev)
        .args(["--json", "--device", &emu, "query", "--all"])
        .output()
        .unwrap()
        .into();
    let doc = valid("query-all", &run);
    let adapters = doc["adapters"].as_array().unwrap();
    assert_eq!(adapters.len(), 3, "{doc:#}");
    let mut queries = 0;
    for query in adapters.iter().map(|a| &a["query"]).filter(|q| !q.is_null()) {
        let mut q = query.clone();
        q["schema"] = Value::from("ocetool/1");
        let found = problems("query", &q);
        assert!(found.is_empty(), "{found:#?}\n{q:#}");
        queries += 1;
    }
    assert_eq!(queries, 2, "the kernel's answer and the emulator's");
}
