//! `doctor`, `dcb`, `dump`, `port`, `locate`, the firmware command trace (`-vv`) and the JSON
//! command log (`--log-file`), through the binary: on fake hosts (sysfs, /dev and /proc trees)
//! and on the emulator.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Run, command, emu_arg, ocetool};
use oce_pci::PciAddress;
use oce_pci::fake_sysfs::FakeTree;
use serde_json::Value;

/// Every doctor check id, in report order.
const IDS: [&str; 11] = [
    "iommu",
    "vfio_pci",
    "iommu_group",
    "lockdown",
    "memlock",
    "drivers",
    "pending",
    "boot",
    "roce",
    "pfc",
    "nfs_rdma",
];

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

/// ocetool on the fake host `tree`.
fn on_host(tree: &FakeTree) -> Command {
    let roots = tree.roots();
    let mut cmd = command();
    cmd.arg("--sysfs-root").arg(&roots.sysfs).arg("--dev-root").arg(&roots.dev).arg("--proc-root").arg(&roots.proc);
    cmd
}

fn run(mut cmd: Command, args: &[&str]) -> Run {
    cmd.args(args).output().expect("run ocetool").into()
}

/// A host ready for RoCE: every host check passes.
fn healthy_host() -> FakeTree {
    FakeTree::ready_for_roce()
}

/// A fresh emulator directory; `roce` switches it to a RoCE profile and resets it.
fn emulator(dir: &Path, roce: bool) -> String {
    let dev = emu_arg(&dir.join("emu"));
    assert_eq!(ocetool(&["-d", &dev, "emulator", "init"]).code, 0);
    if roce {
        assert_eq!(ocetool(&["-d", &dev, "set-profile", "roce", "--yes"]).code, 0);
        assert_eq!(ocetool(&["-d", &dev, "reset", "--yes"]).code, 0);
    }
    dev
}

fn checks(r: &Run) -> Vec<Value> {
    r.json()["checks"].as_array().cloned().unwrap_or_default()
}

fn check<'a>(checks: &'a [Value], id: &str) -> &'a Value {
    checks.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no check {id}: {checks:?}"))
}

fn assert_status(c: &Value, status: &str) {
    assert_eq!(c["status"], status, "{c}");
    if status == "warn" || status == "fail" {
        assert!(c["hint"].as_str().is_some_and(|h| !h.is_empty()), "{c} has no hint");
    }
}

#[test]
fn doctor_on_a_be2net_host_without_iommu_or_vfio_lists_every_check_and_exits_1() {
    // An OCe14000 bound to be2net, no IOMMU groups, no vfio-pci, no ocrdma; no --device.
    let tree = FakeTree::new();
    tree.without_vfio();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).driver("be2net");
    tree.load_module("be2net");
    tree.write_proc("cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet\n");
    let r = run(on_host(&tree), &["doctor", "--json"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let c = checks(&r);
    let ids: Vec<&str> = c.iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, IDS);
    assert_status(check(&c, "iommu"), "fail");
    assert!(check(&c, "iommu")["hint"].as_str().unwrap().contains("intel_iommu=on"));
    assert_ne!(check(&c, "vfio_pci")["status"], "pass");
    for id in ["pending", "pfc"] {
        assert_status(check(&c, id), "skip");
        let detail = check(&c, id)["detail"].as_str().unwrap();
        assert!(detail.starts_with("adapter not reachable: ") && detail.contains("vfio-pci"), "{detail}");
    }
    assert!(check(&c, "drivers")["detail"].as_str().unwrap().contains("ocrdma not loaded"));
    assert_eq!(r.json()["failed"], true);
    // The text report is printed on exit 1 too.
    let text = run(on_host(&tree), &["doctor"]);
    assert_eq!(text.code, 1);
    assert!(text.stdout.contains("FAIL  iommu") && text.stdout.contains("-> "), "{}", text.stdout);
}

#[test]
fn doctor_on_a_host_without_any_adapter_skips_the_device_checks_and_exits_0() {
    // No OneConnect function at all (another vendor's NIC only), no VFIO, no --device.
    let tree = FakeTree::new();
    tree.without_vfio();
    tree.device(addr("0000:05:00.0"), 0x8086, 0x10fb).driver("ixgbe");
    let r = run(on_host(&tree), &["doctor", "--json"]);
    assert_eq!(r.code, 0, "nothing fails without an adapter: {}{}", r.stdout, r.stderr);
    let c = checks(&r);
    let ids: Vec<&str> = c.iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, IDS);
    for id in ["pending", "roce", "pfc"] {
        assert_status(check(&c, id), "skip");
        let detail = check(&c, id)["detail"].as_str().unwrap();
        assert!(detail.contains("no OCe14000 adapter to work on"), "{id}: {detail}");
    }
    for id in ["iommu_group", "drivers"] {
        assert_status(check(&c, id), "skip");
        assert_eq!(check(&c, id)["detail"], "no OCe14000 adapter in sysfs");
    }
    // What real adapters would need is only a warning here.
    for id in ["iommu", "vfio_pci"] {
        assert_status(check(&c, id), "warn");
        assert!(check(&c, id)["detail"].as_str().unwrap().ends_with("(needed only for real adapters; none found)"));
    }
    assert!(c.iter().all(|c| c["status"] != "fail"), "{c:?}");
    let j = r.json();
    assert_eq!((j["failed"].as_bool(), j["summary"]["fail"].as_u64()), (Some(false), Some(0)));
    assert!(j["device"].is_null(), "{j}");
    let text = run(on_host(&tree), &["doctor"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains("skip  pending      adapter not reachable: no OCe14000 adapter"), "{}", text.stdout);
}

#[test]
fn doctor_passes_every_check_on_a_healthy_host_with_a_roce_emulator() {
    let tree = healthy_host();
    let dir = tempfile::tempdir().unwrap();
    let dev = emulator(dir.path(), true);
    let r = run(on_host(&tree), &["-d", &dev, "doctor", "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for c in checks(&r) {
        assert_status(&c, "pass");
    }
    assert_eq!(r.json()["summary"]["pass"], IDS.len());
}

#[test]
fn doctor_flags_pfc_out_of_sync_and_a_pending_profile() {
    let tree = healthy_host();
    let dir = tempfile::tempdir().unwrap();
    let dev = emulator(dir.path(), true);
    assert_eq!(ocetool(&["-d", &dev, "emulator", "fault", "set", "pfc-unsync"]).code, 0);
    let r = run(on_host(&tree), &["-d", &dev, "doctor", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let c = checks(&r);
    assert_status(check(&c, "pfc"), "fail");
    assert!(check(&c, "pfc")["hint"].as_str().unwrap().contains("not in sync"), "{}", check(&c, "pfc"));

    // Back to the NIC profile, not yet active: pending warns, the rest still holds (exit 0).
    assert_eq!(ocetool(&["-d", &dev, "emulator", "fault", "clear", "--all"]).code, 0);
    assert_eq!(ocetool(&["-d", &dev, "set-profile", "nic", "--yes"]).code, 0);
    let r = run(on_host(&tree), &["-d", &dev, "doctor", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let c = checks(&r);
    assert_status(check(&c, "pending"), "warn");
    assert!(check(&c, "pending")["hint"].as_str().unwrap().contains("ocetool reset"));
    assert_status(check(&c, "pfc"), "pass");
}

#[test]
fn doctor_skips_the_device_checks_of_an_unreachable_adapter_with_the_reason() {
    let tree = healthy_host();
    let dir = tempfile::tempdir().unwrap();
    let dev = emulator(dir.path(), false);
    assert_eq!(ocetool(&["-d", &dev, "emulator", "fault", "set", "gone"]).code, 0);
    let r = run(on_host(&tree), &["-d", &dev, "--command-timeout", "0.3", "doctor", "--json"]);
    let c = checks(&r);
    for id in ["pending", "pfc"] {
        assert_status(check(&c, id), "skip");
        assert!(check(&c, id)["detail"].as_str().unwrap().contains("stopped answering"), "{}", check(&c, id));
    }
    assert_eq!(r.code, 0, "a skipped check is no failure: {}", r.stdout);

    // A real function bound to be2net is not taken without --unbind: skipped, and why.
    let r = run(on_host(&tree), &["-d", "0000:03:00.0", "doctor", "--json"]);
    let c = checks(&r);
    for id in ["pending", "pfc"] {
        assert_status(check(&c, id), "skip");
        assert!(check(&c, id)["detail"].as_str().unwrap().contains("be2net"), "{}", check(&c, id));
    }
    assert_status(check(&c, "iommu_group"), "pass");
}

#[test]
fn dcb_reports_dcbx_pfc_and_the_roce_priority() {
    let dir = tempfile::tempdir().unwrap();
    let dev = emulator(dir.path(), false);
    let r = ocetool(&["-d", &dev, "dcb", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!((j["dcbx"]["enabled"].as_bool(), j["dcbx"]["willing"].as_bool()), (Some(true), Some(true)));
    assert_eq!(j["pfc"]["in_sync"], true);
    assert_eq!(j["pfc"]["priorities"], serde_json::json!([3]));
    assert_eq!(j["pfc"]["ready_for_roce"], true);
    assert_eq!((j["roce_priority"].as_u64(), j["roce_priority_source"].as_str()), (Some(3), Some("operational")));
    assert_eq!(j["dcbx"]["operational"]["app"][0]["protocol"], "0x8915");
    assert_eq!(j["dcbx"]["admin"]["app"][0]["roce"], true);

    assert_eq!(ocetool(&["-d", &dev, "emulator", "fault", "set", "pfc-unsync"]).code, 0);
    let j = ocetool(&["-d", &dev, "dcb", "--json"]).json();
    assert_eq!((j["pfc"]["in_sync"].as_bool(), j["pfc"]["ready_for_roce"].as_bool()), (Some(false), Some(false)));
    assert_eq!(j["roce_priority_source"], "admin");
    let text = ocetool(&["-d", &dev, "dcb"]);
    assert!(text.stdout.contains("in sync with the switch: no"), "{}", text.stdout);
}

#[test]
fn dump_writes_the_log_atomically_and_says_what_to_send() {
    let dir = tempfile::tempdir().unwrap();
    let dev = emulator(dir.path(), false);
    let file = dir.path().join("fat.bin");
    let r = ocetool(&["-d", &dev, "dump", "-o", file.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let written = std::fs::read(&file).unwrap();
    assert!(written.starts_with(b"OCE14000 EMULATED FAT LOG 1\n"), "{:?}", &written[..40.min(written.len())]);
    assert_eq!(r.json()["bytes"].as_u64(), Some(written.len() as u64));
    assert!(r.json()["hint"].as_str().unwrap().contains("support"));
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "no temporary file left: {names:?}");

    // A failed dump leaves the old file as it was.
    assert_eq!(ocetool(&["-d", &dev, "emulator", "fault", "set", "status=1:68:1"]).code, 0);
    let failed = ocetool(&["-d", &dev, "dump", "-o", file.to_str().unwrap()]);
    assert_eq!(failed.code, 1, "{}", failed.stderr);
    assert!(failed.stderr.contains("MANAGE_FAT"), "{}", failed.stderr);
    assert_eq!(std::fs::read(&file).unwrap(), written);

    // A directory that does not exist is a usage error, found before the adapter is touched.
    let nowhere = dir.path().join("no/such/dir/fat.bin");
    assert_eq!(ocetool(&["-d", &dev, "dump", "-o", nowhere.to_str().unwrap()]).code, 2);
}

#[test]
fn port_reports_link_phy_speeds_module_and_led() {
    let dir = tempfile::tempdir().unwrap();
    let dev = emulator(dir.path(), false);
    let r = ocetool(&["-d", &dev, "port", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!((j["port"].as_u64(), j["port_count"].as_u64()), (Some(0), Some(2)));
    assert_eq!((j["link"]["up"].as_bool(), j["link"]["speed_mbps"].as_u64()), (Some(true), Some(10_000)));
    assert_eq!(j["phy"]["speeds_supported"], serde_json::json!(["1G", "10G"]));
    assert_eq!(j["phy"]["speeds_advertised"], serde_json::json!(["1G", "10G"]));
    assert_eq!(
        (j["module"]["identifier"].as_str(), j["module"]["vendor"].as_str()),
        (Some("SFP/SFP+"), Some("EMULATED"))
    );
    assert_eq!(j["module"]["vendor_oui"], "00:00:c9");
    assert_eq!(j["locate"], false);
}

#[test]
fn locate_switches_the_led_on_and_off() {
    let dir = tempfile::tempdir().unwrap();
    let dev = emulator(dir.path(), false);
    let on = ocetool(&["-d", &dev, "locate", "--on", "--json"]).json();
    assert_eq!((on["locate"].as_bool(), on["changed"].as_bool()), (Some(true), Some(true)));
    assert_eq!(ocetool(&["-d", &dev, "port", "--json"]).json()["locate"], true);
    let again = ocetool(&["-d", &dev, "locate", "--on", "--json"]).json();
    assert_eq!(again["changed"], false);
    let off = ocetool(&["-d", &dev, "locate", "--off", "--json"]).json();
    assert_eq!((off["locate"].as_bool(), off["changed"].as_bool()), (Some(false), Some(true)));
    assert_eq!(ocetool(&["-d", &dev, "locate"]).code, 2, "--on or --off is required");
    assert_eq!(ocetool(&["-d", &dev, "locate", "--on", "--off"]).code, 2);
}

#[test]
fn vv_traces_every_firmware_command_and_v_the_steps() {
    let dir = tempfile::tempdir().unwrap();
    let dev = emulator(dir.path(), false);
    let r = ocetool(&["-d", &dev, "-vv", "query", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json();
    let trace = r.trace();
    assert!(
        trace.iter().any(|l| l.starts_with(
            "GET_FW_VERSION (subsystem 1 COMMON, opcode 35, v0): request 64 B, response 64 B, status 0/0, "
        ) && l.ends_with(" us")),
        "{trace:?}"
    );
    assert!(trace.iter().any(|l| l.starts_with("QUERY_FIRMWARE_CONFIG")), "{trace:?}");
    assert!(r.events().is_empty(), "the emulator's event log needs -vvv");
    assert!(r.stderr.contains("ocetool: step: "), "-vv includes the steps");

    let steps = ocetool(&["-d", &dev, "-v", "query"]);
    assert!(steps.trace().is_empty() && steps.stderr.contains("ocetool: step: "), "{}", steps.stderr);
    let quiet = ocetool(&["-d", &dev, "query"]);
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
    let events = ocetool(&["-d", &dev, "-vvv", "query"]);
    assert!(events.ran(35), "{}", events.stderr);

    // A refused command shows its statuses.
    assert_eq!(ocetool(&["-d", &dev, "emulator", "fault", "set", "status=16:1:3:0x4d"]).code, 0);
    let failed = ocetool(&["-d", &dev, "-vv", "dcb"]);
    assert!(
        failed
            .trace()
            .iter()
            .any(|l| l.starts_with("DCBX_GET_CONFIG (subsystem 16 DCBX, opcode 1, v0)") && l.contains("status 3/77 (")),
        "{}",
        failed.stderr
    );
}

#[test]
fn log_file_appends_valid_json_lines_with_arguments_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let dev = emulator(dir.path(), false);
    let log = dir.path().join("ocetool.jsonl");
    let log_arg = log.to_str().unwrap();
    assert_eq!(ocetool(&["-d", &dev, "--log-file", log_arg, "query", "--json"]).code, 0);
    assert_eq!(ocetool(&["-d", &dev, "emulator", "fault", "set", "status=1:35:1"]).code, 0);
    assert_eq!(ocetool(&["-d", &dev, "--log-file", log_arg, "query"]).code, 1);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["event"].as_str()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "start").count(), 2, "the second run appended");
    assert_eq!(lines.last().unwrap()["exit_code"], 1);
    assert!(kinds.contains(&"step"));
    let fw = lines.iter().find(|l| l["event"] == "command" && l["command"] == "GET_FW_VERSION").unwrap();
    assert_eq!(
        (fw["subsystem"].as_u64(), fw["opcode"].as_u64(), fw["request_len"].as_u64()),
        (Some(1), Some(35), Some(64))
    );
    assert_eq!(fw["arguments"], "GetFwVersion");
    assert!(fw["result"].as_str().unwrap().contains("11.1.172.23"), "{fw}");
    assert!(fw["elapsed_us"].is_u64() && fw["time"].is_f64() && fw["pid"].is_u64());
    let refused = lines.iter().rev().find(|l| l["event"] == "command" && l["opcode"] == 35).unwrap();
    assert_eq!(refused["base_status"], 1);

    // A log file that cannot be opened costs a warning, not the operation.
    let r = ocetool(&["-d", &dev, "--log-file", dir.path().join("no/such/dir/log").to_str().unwrap(), "profiles"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("cannot open the log file"), "{}", r.stderr);
}
