//! `ocetool query --all`: every adapter in one document — the OneConnect adapters of a fake sysfs
//! tree and the emulators — each with its versions (firmware, boot code, UNDI, NC-SI) and VPD, or
//! its error with its code, one failure never hiding the others; and the VPD a driver-held
//! function serves through sysfs, bad VPD an error in the field.

mod common;

use std::path::Path;

use common::{Run, emu_arg};
use oce_pci::PciAddress;
use oce_pci::fake_sysfs::FakeTree;
use serde_json::Value;

/// The factory firmware of the emulator (every section of its flash carries it).
const FACTORY: &str = "11.1.172.23";

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

/// ocetool on a fake sysfs tree, its locks, hand-off records and default emulator in `home`.
fn on_tree(tree: &FakeTree, home: &Path, args: &[&str]) -> Run {
    common::on_fake_tree(tree).env("XDG_STATE_HOME", home).args(args).output().unwrap().into()
}

fn entry<'a>(doc: &'a Value, device: &str) -> &'a Value {
    let all = doc["adapters"].as_array().unwrap();
    all.iter().find(|a| a["device"] == device).unwrap_or_else(|| panic!("{device} in {doc:#}"))
}

/// A two-port OCe14102 whose port 0 be2net holds (its VPD malformed), a card ocetool cannot
/// reach (no IOMMU group, not root), and an emulator.
#[test]
fn every_adapter_with_its_versions_or_its_error() {
    let tree = FakeTree::new();
    tree.load_module("be2net");
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(7).driver("be2net").netdev(
        "ocefake0",
        "00:00:c9:00:00:01",
        "up",
        Some(10_000),
    );
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(7);
    // An Identifier String that claims 0x40 bytes and has 3.
    std::fs::write(tree.roots().device_dir(addr("0000:03:00.0")).join("vpd"), b"\x82\x40\x00abc").unwrap();
    tree.device(addr("0000:05:00.0"), 0x10df, 0x0720);
    let home = tempfile::tempdir().unwrap();
    let emu = emu_arg(&home.path().join("named-emu"));

    let run = on_tree(&tree, home.path(), &["--device", &emu, "--json", "query", "--all"]);
    assert_eq!(run.code, 1, "one adapter failed: {run:?}");
    let doc = run.json();
    assert_eq!(doc["adapters"].as_array().unwrap().len(), 3, "{doc:#}");
    assert_eq!(doc["failed"], 1);

    let held = entry(&doc, "0000:03:00.0");
    assert_eq!(held["slot"], "0000:03:00");
    assert_eq!(held["query"]["source"], "kernel");
    let vpd_error = held["query"]["vpd"]["error"].as_str().unwrap();
    assert!(vpd_error.contains("malformed VPD at byte 0") && vpd_error.contains("runs past the end"), "{vpd_error}");
    assert!(held["error"].is_null());

    let unreachable = entry(&doc, "0000:05:00.0");
    assert!(unreachable["query"].is_null());
    let code = unreachable["error"]["code"].as_str().unwrap();
    let alone = on_tree(&tree, home.path(), &["--device", "0000:05:00.0", "--json", "query"]);
    assert_eq!(alone.json()["error"]["code"], code, "the code `query` gives for that adapter alone");
    assert_eq!(unreachable["error"]["kind"], alone.json()["error"]["kind"]);

    let emulated = entry(&doc, &emu);
    assert!(emulated["slot"].is_null() && emulated["error"].is_null());
    let q = &emulated["query"];
    assert_eq!(q["firmware"]["running"], FACTORY);
    for component in ["boot_code", "undi", "ncsi"] {
        assert_eq!(q["components"][component], FACTORY, "{component}");
    }
    assert_eq!(q["vpd"]["part_number"], "OCe14102");
    assert_eq!(q["vpd"]["engineering_change"], "A");
    assert_eq!(q["vpd"]["serial_number"], q["serial"], "VPD SN is the adapter's serial");

    // The text report: a block per adapter, the failure with its code.
    let text = on_tree(&tree, home.path(), &["--device", &emu, "query", "--all"]);
    assert_eq!(text.code, 1);
    assert!(text.stdout.contains(&format!("== {emu} ==")) && text.stdout.contains("Boot code      11.1.172.23"));
    assert!(text.stdout.contains(&format!("== 0000:05:00.0 ==\nerror ({code}): ")), "{}", text.stdout);
}

#[test]
fn all_answered_is_exit_0_and_the_default_emulator_counts_once_created() {
    let tree = FakeTree::new();
    let home = tempfile::tempdir().unwrap();
    let none = on_tree(&tree, home.path(), &["--json", "query", "--all"]);
    assert_eq!(none.code, 0, "{none:?}");
    assert_eq!(none.json()["adapters"], Value::Array(Vec::new()), "no emulator is created by looking");
    assert!(!home.path().join("ocetool").exists());

    let init = on_tree(&tree, home.path(), &["--device", "emu", "emulator", "init"]);
    assert_eq!(init.code, 0, "{init:?}");
    let default = format!("emu:{}", home.path().join("ocetool/emu").display());
    // Named with --device too: listed once.
    let run = on_tree(&tree, home.path(), &["--device", "emu", "--json", "query", "--all"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    assert_eq!(doc["failed"], 0);
    let devices: Vec<&Value> = doc["adapters"].as_array().unwrap().iter().map(|a| &a["device"]).collect();
    assert_eq!(devices, [&Value::from(default)]);
}

#[test]
fn a_driver_held_function_serves_its_vpd_through_sysfs() {
    let tree = FakeTree::new();
    tree.load_module("be2net");
    let port = addr("0000:03:00.0");
    tree.device(port, 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(7).driver("be2net");
    let vpd = oce_pci::vpd::encode("OCe14102-NM", &[("PN", b"P012345"), ("SN", b"FC00000001"), ("V1", b"x")]);
    std::fs::write(tree.roots().device_dir(port).join("vpd"), vpd).unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = on_tree(&tree, home.path(), &["--device", "0000:03:00.0", "--json", "query"]);
    assert_eq!(run.code, 0, "{run:?}");
    let v = &run.json()["vpd"];
    assert_eq!(v["product_name"], "OCe14102-NM");
    assert_eq!((v["part_number"].as_str(), v["serial_number"].as_str()), (Some("P012345"), Some("FC00000001")));
    assert!(v["engineering_change"].is_null() && v["error"].is_null());
    assert_eq!(v["keywords"]["V1"], "x");
    assert!(run.json()["components"].is_null(), "only the firmware reports them");
}
