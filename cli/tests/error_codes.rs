//! One test per `error.code` of the README's "Error codes" table: each provokes the code with the
//! real binary (on a temporary emulated adapter, or a fake sysfs tree for the host's side) and
//! checks the code and the exit code that goes with it (JSON), and that the error is one line on
//! stderr saying what failed (text). A last test holds the README and this file to each other:
//! every code the README lists has its test here, and every test here is for a listed code.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{Run, fresh, ocetool};
use oce_firmware::build::ImageBuilder;
use oce_pci::PciAddress;
use oce_pci::fake_sysfs::FakeTree;

/// Checks a provoked error both ways: `json` (the run with `--json`) has `error.code` = `code`
/// and exits `exit`; `text` (the same run without it) exits the same, and prints one
/// `ocetool: ` line on stderr that holds `needle` (after the progress lines of a flash, if any).
fn check(code: &str, exit: i32, needle: &str, text: &Run, json: &Run) {
    assert_eq!(text.code, exit, "{code}: {}", text.stderr);
    let lines: Vec<&str> = text.message_lines().into_iter().filter(|l| !is_progress(l)).collect();
    assert_eq!(lines.len(), 1, "{code}: one line: {}", text.stderr);
    assert!(lines[0].starts_with("ocetool: ") && lines[0].contains(needle), "{code}: {needle:?} not in {}", lines[0]);
    assert_eq!(json.code, exit, "{code} --json: {}", json.stdout);
    let doc = json.json();
    assert_eq!(doc["error"]["code"], code, "{}", json.stdout);
    assert!(doc["error"]["message"].as_str().unwrap().contains(needle), "{code}: {}", json.stdout);
}

/// A progress line of `fw update` without a terminal: `ocetool: writing firmware (524288 bytes)`.
fn is_progress(line: &str) -> bool {
    line.starts_with("ocetool: writing ") && line.ends_with(" bytes)")
}

/// [`check`] of `ocetool ARGS` and `ocetool ARGS --json`.
fn expect(code: &str, exit: i32, needle: &str, args: &[&str]) {
    check(code, exit, needle, &ocetool(args), &ocetool(&[args, &["--json"]].concat()));
}

/// [`check`] of ocetool on a fake sysfs tree, its lock files and hand-off records in folders of
/// the tree.
fn expect_on_tree(tree: &FakeTree, code: &str, exit: i32, needle: &str, args: &[&str]) {
    let run = |json: bool| -> Run {
        let mut cmd = common::on_fake_tree(tree);
        cmd.args(args);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap().into()
    };
    check(code, exit, needle, &run(false), &run(true));
}

const PORT0: &str = "0000:03:00.0";
const PORT1: &str = "0000:03:00.1";

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

/// A two-port OCe14102, each port in the IOMMU group given, both on be2net.
fn card(groups: [u32; 2]) -> FakeTree {
    let tree = FakeTree::new();
    for (port, group) in [(PORT0, groups[0]), (PORT1, groups[1])] {
        tree.device(addr(port), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(group).driver("be2net");
    }
    tree
}

/// Sets `faults` on the emulated adapter `dev`.
fn fault(dev: &str, faults: &[&str]) {
    let run = ocetool(&[&["--device", dev, "emulator", "fault", "set"], faults].concat());
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// Writes a built image of `version` into `dir`, with `asic_type_rev`.
fn image(dir: &Path, version: &str, asic_type_rev: u8) -> String {
    let path = dir.join(format!("{version}-{asic_type_rev:#x}.ufi"));
    std::fs::write(&path, ImageBuilder::new(version).asic_type_rev(asic_type_rev).build().unwrap()).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn code_command_failed() {
    let (_d, dev) = fresh();
    // GET_FW_VERSION (COMMON 35, spec/protocol.md §5.3) answered with MCC_STATUS_FAILED (1).
    fault(&dev, &["status=1:35:1"]);
    expect("command-failed", 1, "base status 1", &["--device", &dev, "query"]);
}

#[test]
fn code_device_gone() {
    let (_d, dev) = fresh();
    fault(&dev, &["gone"]);
    expect("device-gone", 1, "stopped answering", &["--device", &dev, "query"]);
}

#[test]
fn code_firmware_not_ready() {
    let (_d, dev) = fresh();
    fault(&dev, &["rdy-never"]);
    expect("firmware-not-ready", 1, "did not become ready", &["--device", &dev, "--command-timeout", "0.2", "query"]);
}

#[test]
fn code_post_failed() {
    let (_d, dev) = fresh();
    fault(&dev, &["post-error=0x0002"]);
    expect("post-failed", 1, "POST failed at stage", &["--device", &dev, "query"]);
}

#[test]
fn code_unrecoverable_error() {
    let (_d, dev) = fresh();
    fault(&dev, &["ue=0x1"]);
    expect("unrecoverable-error", 1, "unrecoverable error", &["--device", &dev, "query"]);
}

#[test]
fn code_protocol_error() {
    let (_d, dev) = fresh();
    fault(&dev, &["no-valid=1:35"]);
    expect("protocol-error", 1, "VALID not set", &["--device", &dev, "query"]);
}

#[test]
fn code_reset_failed() {
    let (_d, dev) = fresh();
    fault(&dev, &["post-stuck=0x0002"]);
    expect("reset-failed", 1, "power-cycle", &["--device", &dev, "--post-timeout", "0.2", "reset", "--yes"]);
}

#[test]
fn code_flash_failed() {
    let (d, dev) = fresh();
    let new = image(d.path(), "11.2.0.0", 0x10);
    fault(&dev, &["flash-fail-at=3"]);
    expect("flash-failed", 1, "the firmware update failed", &["--device", &dev, "fw", "update", &new, "--yes"]);
}

#[test]
fn code_handoff_failed() {
    let tree = card([7, 7]);
    // The kernel refuses the unbind (the attribute is not writable): the hand-off's first write.
    let unbind = tree.roots().driver_dir("be2net").join("unbind");
    std::fs::remove_file(&unbind).unwrap();
    std::fs::create_dir(&unbind).unwrap();
    expect_on_tree(
        &tree,
        "handoff-failed",
        1,
        "cannot take 0000:03:00.0 for ocetool",
        &["--device", PORT0, "--unbind", "--yes", "profiles"],
    );
}

#[test]
fn code_host_failed() {
    // Both ports on vfio-pci already: nothing to move, and opening the function through VFIO is
    // where it fails (no such group node on this host).
    let tree = FakeTree::new();
    for port in [PORT0, PORT1] {
        tree.device(addr(port), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(4093).driver("vfio-pci");
    }
    tree.create_group_node(4093);
    expect_on_tree(&tree, "host-failed", 1, "through the vfio backend", &["--device", PORT0, "profiles"]);
}

#[test]
fn code_io_error() {
    // The lock directory cannot be created: /proc takes no new directory.
    let tree = card([7, 7]);
    let lock_dir = "/proc/ocetool-no-such/locks";
    let run = |json: bool| -> Run {
        let mut cmd = common::command();
        cmd.env("OCETOOL_LOCK_DIR", lock_dir)
            .env("OCETOOL_RUN_DIR", tree.roots().sysfs.parent().unwrap().join("run"))
            .arg("--sysfs-root")
            .arg(&tree.roots().sysfs)
            .arg("--dev-root")
            .arg(&tree.roots().dev)
            .args(["--device", PORT0, "profiles"]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap().into()
    };
    check("io-error", 1, "cannot create the lock directory /proc/ocetool-no-such/locks", &run(false), &run(true));
}

#[test]
fn code_serve_failed() {
    let (d, dev) = fresh();
    let taken = d.path().join("not-a-socket");
    std::fs::write(&taken, b"x").unwrap();
    let socket = taken.to_str().unwrap();
    expect("serve-failed", 1, "is not a socket", &["--device", &dev, "emulator", "serve", "--socket", socket]);
}

#[test]
fn code_bad_argument() {
    expect("bad-argument", 2, "bad --device \"eth0\"", &["--device", "eth0", "query"]);
    expect("bad-argument", 2, "unexpected argument '--bogus'", &["query", "--bogus"]);
}

#[test]
fn code_unknown_profile() {
    let (_d, dev) = fresh();
    expect("unknown-profile", 2, "the adapter has no 200 profile", &["--device", &dev, "set-profile", "200", "--yes"]);
}

#[test]
fn code_unusable_file() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("missing.ufi");
    expect("unusable-file", 2, "No such file or directory", &["fw", "inspect", missing.to_str().unwrap()]);
}

#[test]
fn code_bad_config() {
    let (d, dev) = fresh();
    let config = d.path().join("ocetool.toml");
    std::fs::write(&config, b"[[adapter]]\nmatch = { all = true }\nprofil = \"roce\"\n").unwrap();
    expect("bad-config", 2, "key `profil`", &["--device", &dev, "apply", "--config", config.to_str().unwrap()]);
}

#[test]
fn code_no_such_device() {
    let tree = card([7, 7]);
    expect_on_tree(
        &tree,
        "no-such-device",
        3,
        "no such PCI device: 0000:99:00.0",
        &["--device", "0000:99:00.0", "query"],
    );
}

#[test]
fn code_unsupported_device() {
    let tree = card([7, 7]);
    tree.device(addr("0000:04:00.0"), 0x8086, 0x100e);
    expect_on_tree(
        &tree,
        "unsupported-device",
        3,
        "is not an Emulex OneConnect function",
        &["--device", "0000:04:00.0", "query"],
    );
}

#[test]
fn code_backend_unavailable() {
    let tree = FakeTree::new();
    tree.device(addr("0000:05:00.0"), 0x10df, 0x0720);
    expect_on_tree(
        &tree,
        "backend-unavailable",
        3,
        "has no IOMMU group",
        &["--device", "0000:05:00.0", "--backend", "vfio", "query"],
    );
}

#[test]
fn code_bad_emulator_state() {
    let (d, dev) = fresh();
    std::fs::write(d.path().join("emu/state.json"), b"{ not json").unwrap();
    expect("bad-emulator-state", 3, "is corrupt", &["--device", &dev, "query"]);
}

#[test]
fn code_confirmation_required() {
    let (_d, dev) = fresh();
    expect("confirmation-required", 4, "pass --yes", &["--device", &dev, "set-profile", "roce"]);
}

#[test]
fn code_bound_to_driver() {
    let tree = card([7, 7]);
    expect_on_tree(&tree, "bound-to-driver", 4, "is bound to be2net", &["--device", PORT0, "profiles"]);
}

#[test]
fn code_group_not_viable() {
    let tree = card([7, 7]);
    tree.device(addr("0000:04:00.0"), 0x144d, 0xa808).group(7).driver("nvme");
    expect_on_tree(
        &tree,
        "group-not-viable",
        4,
        "0000:04:00.0 is bound to nvme",
        &["--device", PORT0, "--unbind", "--yes", "profiles"],
    );
}

#[test]
fn code_card_in_use() {
    // A group per port: --unbind moves port 0 alone, and the reset would restart port 1 on be2net.
    let tree = card([7, 8]);
    expect_on_tree(
        &tree,
        "card-in-use",
        4,
        "refusing to reset the chip of 0000:03:00.0",
        &["--device", PORT0, "--unbind", "--yes", "reset"],
    );
}

#[test]
fn code_invalid_image() {
    let (d, dev) = fresh();
    let junk = d.path().join("junk.ufi");
    std::fs::write(&junk, vec![0x11; 2048]).unwrap();
    expect("invalid-image", 4, "not a flashable image", &["--device", &dev, "fw", "update", junk.to_str().unwrap()]);
}

#[test]
fn code_incompatible_image() {
    let (d, dev) = fresh();
    let other = image(d.path(), "11.2.0.0", 0x08);
    expect(
        "incompatible-image",
        4,
        "not compatible with the adapter",
        &["--device", &dev, "fw", "update", &other, "--yes"],
    );
}

#[test]
fn code_downgrade_refused() {
    let (d, dev) = fresh();
    let old = image(d.path(), "10.0.0.0", 0x10);
    expect("downgrade-refused", 4, "--allow-downgrade", &["--device", &dev, "fw", "update", &old, "--yes"]);
}

#[test]
fn code_untrusted_file() {
    let (d, dev) = fresh();
    let config = d.path().join("ocetool.toml");
    std::fs::write(&config, b"[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n").unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o666)).unwrap();
    expect("untrusted-file", 4, "mode 0666", &["--device", &dev, "apply", "--config", config.to_str().unwrap()]);
}

#[test]
fn code_unbootable_flash() {
    use oce_firmware::build::{Layout, SectionSpec};
    use oce_firmware::dir::ImageType;
    const KIB: u32 = 1 << 10;
    // A firmware section that covers both boot sections on flash (the active one and the backup):
    // every order of the writes passes through a flash that would not boot.
    let layout = Layout {
        sections: vec![
            SectionSpec::new(ImageType::FirmwareIscsi, 256 * KIB, 1024 * KIB),
            SectionSpec::new(ImageType::BootCode, 64 * KIB, 128 * KIB),
            SectionSpec::new(ImageType::UfiDir, 0, 4 * KIB),
        ],
    };
    let (d, dev) = fresh();
    let path = d.path().join("over-both.ufi");
    std::fs::write(&path, ImageBuilder::new("11.2.0.0").layout(layout).build().unwrap()).unwrap();
    expect(
        "unbootable-flash",
        4,
        "no order of the writes keeps a bootable firmware",
        &["--device", &dev, "fw", "update", path.to_str().unwrap(), "--yes"],
    );
}

#[test]
fn code_emulator_exists() {
    let (_d, dev) = fresh();
    expect("emulator-exists", 4, "refusing to overwrite", &["--device", &dev, "emulator", "init"]);
}

#[test]
fn code_device_busy() {
    let (d, dev) = fresh();
    let held = std::fs::File::create(d.path().join(".emu.lock")).unwrap();
    held.try_lock().unwrap();
    expect("device-busy", 5, "device busy", &["--device", &dev, "--wait", "0", "query"]);
}

/// `set-profile` waiting for a held lock, stopped by `signal`: the JSON error document.
fn stopped_while_waiting(signal: &str) -> (i32, serde_json::Value) {
    let (d, dev) = fresh();
    let held = std::fs::File::create(d.path().join(".emu.lock")).unwrap();
    held.try_lock().unwrap();
    let (child, _stderr, _) = common::set_profile_waiting_for_lock(&dev, true, Stdio::piped());
    assert!(Command::new("kill").arg(signal).arg(child.id().to_string()).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap();
    (out.status.code().unwrap_or(-1), doc)
}

#[test]
fn code_interrupted() {
    let (exit, doc) = stopped_while_waiting("-INT");
    assert_eq!((exit, &doc["error"]["code"]), (130, &serde_json::json!("interrupted")), "{doc}");
    assert!(doc["error"]["message"].as_str().unwrap().contains("stopped by SIGINT"), "{doc}");
}

#[test]
fn code_terminated() {
    let (exit, doc) = stopped_while_waiting("-TERM");
    assert_eq!((exit, &doc["error"]["code"]), (143, &serde_json::json!("terminated")), "{doc}");
    assert!(doc["error"]["message"].as_str().unwrap().contains("stopped by SIGTERM"), "{doc}");
}

/// Codes no test can provoke while ocetool works: each marks a bug.
const UNPROVOKABLE: [&str; 1] = ["internal-error"];

/// The README's "Error codes" table and this file agree: a test `code_NAME` for every code the
/// README lists (but the ones that mark a bug), checking that code, and no test for a code it
/// does not list. (The README lists exactly the codes of the source: a unit test of
/// `cli/src/error.rs` holds it to that.)
#[test]
fn every_code_of_the_readme_has_its_test_here() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let section = readme.split("### Error codes").nth(1).expect("an \"Error codes\" section").split("\n## ").next();
    let listed: Vec<&str> =
        section.unwrap().lines().filter_map(|l| l.strip_prefix("| `")?.split_once('`').map(|(code, _)| code)).collect();
    assert!(listed.len() > 20, "{listed:?}");
    let source = include_str!("error_codes.rs");
    let tests: Vec<&str> =
        source.lines().filter_map(|l| l.strip_prefix("fn code_")?.split_once('(')).map(|t| t.0).collect();
    for code in &listed {
        if UNPROVOKABLE.contains(code) {
            continue;
        }
        let name = code.replace('-', "_");
        assert!(tests.contains(&name.as_str()), "the README lists `{code}` but no test `code_{name}` provokes it");
        let body = source.split(&format!("fn code_{name}()")).nth(1).unwrap().split("\n}\n").next().unwrap();
        assert!(body.contains(&format!("\"{code}\"")), "code_{name} does not check `{code}`");
    }
    for test in tests {
        let code = test.replace('_', "-");
        assert!(listed.contains(&code.as_str()), "code_{test} is for `{code}`, which the README does not list");
    }
}
