//! The CLI on a fake sysfs tree of a two-port OCe14102 (both NIC functions in one IOMMU group,
//! both on be2net): what `--unbind` would take down, the refusals that come before any sysfs
//! write (a chip reset that would leave the other port on be2net among them), the backend each
//! function would use, and `query` answered from the kernel while be2net holds the function;
//! `apply`'s `unbind = true` as the permission to take a bound function.
//! (Moving functions for real needs a kernel: the fake-kernel tests of
//! `oce_pci::handoff` and the guest tests cover that.)

mod common;

use common::{Run, emu_arg, ocetool};
use oce_pci::PciAddress;
use oce_pci::fake_sysfs::FakeTree;

const PORT0: &str = "0000:03:00.0";
const PORT1: &str = "0000:03:00.1";

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

/// The card: both ports in group 7 on be2net, each with a network interface, ocrdma on port 0.
fn two_port_card() -> FakeTree {
    card_in_groups([Some(7), Some(7)])
}

/// The card with each port in the IOMMU group given (`None`: no IOMMU, the sysfs backend).
fn card_in_groups(groups: [Option<u32>; 2]) -> FakeTree {
    let tree = FakeTree::new();
    let port = |address: &str, group: Option<u32>| {
        let dev = tree.device(addr(address), 0x10df, 0x0720).subsystem(0x10df, 0xe702);
        match group {
            Some(g) => dev.group(g),
            None => dev,
        }
        .driver("be2net")
    };
    port(PORT0, groups[0]).netdev("ocefake0", "00:00:c9:00:00:01", "up", Some(10_000));
    port(PORT1, groups[1]).netdev("ocefake1", "00:00:c9:00:00:02", "down", None);
    std::fs::create_dir_all(tree.roots().device_dir(addr(PORT0)).join("infiniband/ocrdma0")).unwrap();
    tree
}

/// ocetool on `tree`, with its lock files and its runtime folder (hand-off records) in the tree.
fn on_tree(tree: &FakeTree, args: &[&str]) -> Run {
    common::on_fake_tree(tree).args(args).output().expect("run ocetool").into()
}

fn driver_override(tree: &FakeTree, address: &str) -> String {
    std::fs::read_to_string(tree.roots().device_dir(addr(address)).join("driver_override")).unwrap()
}

/// Nothing was written: both overrides as they were, both ports on be2net.
fn untouched(tree: &FakeTree) {
    for port in [PORT0, PORT1] {
        assert_eq!(driver_override(tree, port), "(null)\n", "{port}");
        assert_eq!(tree.driver_of(addr(port)).as_deref(), Some("be2net"), "{port}");
    }
}

#[test]
fn unbind_without_yes_names_both_ports_and_what_goes_down() {
    let tree = two_port_card();
    let run = on_tree(&tree, &["--device", PORT0, "--unbind", "--json", "query"]);
    assert_eq!(run.code, 4, "{run:?}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_owned();
    assert_eq!(
        message,
        "refusing to unbind the adapter's functions in IOMMU group 7 for the length of this command (be2net from \
         0000:03:00.0, taking down ocefake0 (up), ocrdma0; be2net from 0000:03:00.1, taking down ocefake1 (down)) \
         without confirmation: stdin is not a terminal; pass --yes"
    );
    untouched(&tree);
}

#[test]
fn without_unbind_the_other_port_is_a_refusal_that_names_it() {
    let tree = two_port_card();
    std::fs::remove_file(tree.roots().device_dir(addr(PORT0)).join("driver")).unwrap();
    let run = on_tree(&tree, &["--device", PORT0, "--json", "query"]);
    assert_eq!(run.code, 4, "{run:?}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("0000:03:00.1, another function of the adapter of 0000:03:00.0"), "{message}");
    assert!(message.contains("pass --unbind"), "{message}");
    assert_eq!(driver_override(&tree, PORT1), "(null)\n");
}

#[test]
fn a_foreign_group_member_is_refused_by_name_before_anything_moves() {
    let tree = two_port_card();
    tree.device(addr("0000:04:00.0"), 0x144d, 0xa808).group(7).driver("nvme");
    let run = on_tree(&tree, &["--device", PORT0, "--unbind", "--yes", "--json", "query"]);
    assert_eq!(run.code, 4, "{run:?}");
    let doc = run.json();
    assert_eq!(doc["error"]["kind"], "refused");
    let message = doc["error"]["message"].as_str().unwrap();
    assert!(message.contains("0000:04:00.0 is bound to nvme, and it is not a function of this adapter"), "{message}");
    untouched(&tree);
}

/// The refusal of a chip reset on port 0 while port 1 stays on be2net, as `reset --json` prints it.
fn reset_refusal(tree: &FakeTree, args: &[&str]) -> String {
    let mut all = vec!["--device", PORT0];
    all.extend_from_slice(args);
    all.extend(["--yes", "--json", "reset"]);
    let run = on_tree(tree, &all);
    assert_eq!(run.code, 4, "{run:?}");
    let doc = run.json();
    assert_eq!(doc["error"]["kind"], "refused");
    let message = doc["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with(
            "refusing to reset the chip of 0000:03:00.0: the reset restarts every function of the card, and \
             0000:03:00.1 (be2net: ocefake1) stays on a host driver through it ("
        ),
        "{message}"
    );
    assert!(message.contains("echo 0000:03:00.1 > /sys/bus/pci/drivers/be2net/unbind"), "{message}");
    message
}

#[test]
fn reset_without_an_iommu_is_refused_while_the_other_port_stays_on_be2net() {
    // No IOMMU: the sysfs backend takes port 0 alone (unbound here, so no --unbind is needed),
    // and the chip reset would restart port 1 under be2net.
    let tree = card_in_groups([None, None]);
    tree.as_root();
    tree.huge_pages(1, 1);
    std::fs::remove_file(tree.roots().device_dir(addr(PORT0)).join("driver")).unwrap();
    let message = reset_refusal(&tree, &[]);
    assert!(message.contains("(the sysfs backend hands off only 0000:03:00.0)"), "{message}");
    // Refused before anything was written.
    assert_eq!(driver_override(&tree, PORT0), "(null)\n");
    assert_eq!(tree.driver_of(addr(PORT0)), None);
    assert_eq!(
        (driver_override(&tree, PORT1).as_str(), tree.driver_of(addr(PORT1)).as_deref()),
        ("(null)\n", Some("be2net"))
    );

    // With --unbind the sysfs backend still moves port 0 only: refused all the same.
    tree.bind(addr(PORT0), "be2net");
    reset_refusal(&tree, &["--unbind"]);
    untouched(&tree);

    // A dry run resets nothing, so nothing is refused for it: it goes on to the hand-off, which
    // asks before taking port 0 from be2net.
    let run = on_tree(&tree, &["--device", PORT0, "--unbind", "--json", "reset", "--dry-run"]);
    assert_eq!(run.code, 4, "{run:?}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.starts_with("refusing to unbind be2net from 0000:03:00.0"), "{message}");
    untouched(&tree);
}

#[test]
fn reset_with_a_group_per_port_is_refused_while_the_other_port_stays_on_be2net() {
    // ACS: each port in its own IOMMU group, so --unbind moves port 0's group only.
    let tree = card_in_groups([Some(7), Some(8)]);
    let message = reset_refusal(&tree, &["--unbind"]);
    assert!(message.contains("(the hand-off moves only the functions in IOMMU group 7)"), "{message}");
    untouched(&tree);

    // Port 1 on vfio-pci (another ocetool, or a VM) is not a host driver: no refusal of the reset
    // for it; the hand-off's own confirmation comes next.
    std::fs::remove_file(tree.roots().device_dir(addr(PORT1)).join("driver")).unwrap();
    tree.bind(addr(PORT1), "vfio-pci");
    let run = on_tree(&tree, &["--device", PORT0, "--unbind", "--json", "reset"]);
    assert_eq!(run.code, 4, "{run:?}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.starts_with("refusing to unbind be2net from 0000:03:00.0"), "{message}");
}

#[test]
fn reset_of_a_card_the_hand_off_takes_whole_is_not_refused_for_its_ports() {
    // One group for both ports: --unbind moves both, so neither stays on be2net through the reset.
    // The hand-off's confirmation, which names both, is what stops it here (no --yes).
    let tree = two_port_card();
    let run = on_tree(&tree, &["--device", PORT0, "--unbind", "--json", "reset"]);
    assert_eq!(run.code, 4, "{run:?}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.starts_with("refusing to unbind the adapter's functions in IOMMU group 7"), "{message}");
    untouched(&tree);
}

#[test]
fn query_while_be2net_holds_the_port_answers_from_the_kernel() {
    let tree = two_port_card();
    let run = on_tree(&tree, &["--device", PORT0, "--json", "query"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    assert_eq!(doc["source"], "kernel");
    assert_eq!(doc["device"], PORT0);
    assert_eq!(doc["pci"]["subsystem_id"], "0xe702");
    assert_eq!(doc["ports"][0]["netdev"], "ocefake0");
    assert_eq!(doc["ports"][0]["speed_mbps"], 10_000);
    assert!(doc["profile"].is_null() && doc["function_mode"].is_null() && doc["serial"].is_null());
    // The interface exists only in the fake tree, so the driver could not be asked: said so.
    assert!(doc["firmware"]["running"].is_null());
    assert!(doc["note"].as_str().unwrap().contains("ETHTOOL_GDRVINFO on ocefake0"), "{}", doc["note"]);
    untouched(&tree);

    let text = on_tree(&tree, &["--device", PORT0, "query"]);
    assert_eq!(text.code, 0, "{text:?}");
    assert!(text.stdout.contains("held by be2net: what the kernel knows"), "{}", text.stdout);
}

#[test]
fn kernel_and_adapter_answers_have_the_same_keys() {
    let tree = two_port_card();
    let kernel = on_tree(&tree, &["--device", PORT0, "--json", "query"]).json();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("emu");
    assert_eq!(ocetool(&["--device", &emu_arg(&state), "emulator", "init"]).code, 0);
    let adapter = ocetool(&["--device", &emu_arg(&state), "--json", "query"]).json();
    assert_eq!(adapter["source"], "adapter");
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&kernel), keys(&adapter));
    assert_eq!(keys(&kernel["firmware"]), keys(&adapter["firmware"]));
    assert_eq!(keys(&kernel["ports"][0]), keys(&adapter["ports"][0]));
}

#[test]
fn list_says_which_backend_each_function_would_use_and_why() {
    let tree = two_port_card();
    let lone = addr("0000:05:00.0");
    tree.device(lone, 0x10df, 0x0720);
    let run = on_tree(&tree, &["--json", "list"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    let functions: Vec<(String, String, String)> = doc["adapters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["functions"].as_array().unwrap().iter())
        .map(|f| {
            (
                f["address"].as_str().unwrap().to_owned(),
                f["backend"].as_str().unwrap().to_owned(),
                f["backend_reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(functions[0].0, PORT0);
    assert_eq!(functions[0].1, "vfio");
    assert_eq!(functions[0].2, "IOMMU group 7: VFIO, the adapter's DMA confined to ocetool's buffers");
    assert_eq!(functions[2].0, "0000:05:00.0");
    assert_eq!(functions[2].1, "sysfs");
    assert!(functions[2].2.contains("without IOMMU protection"), "{}", functions[2].2);
    // Not provably root, no huge page: the sysfs backend's prerequisites are the reasons.
    let lone_row = &doc["adapters"][1]["functions"][0];
    assert_eq!(lone_row["usable"], false);
    assert!(lone_row["reason"].as_str().unwrap().contains("the sysfs backend needs root"), "{lone_row}");
    tree.as_root();
    tree.huge_pages(1, 1);
    let doc = on_tree(&tree, &["--json", "list"]).json();
    assert_eq!(doc["adapters"][1]["functions"][0]["usable"], true, "{doc}");
    let text = on_tree(&tree, &["list"]).stdout;
    assert!(text.contains("backend vfio") && text.contains("backend sysfs"), "{text}");
}

#[test]
fn forcing_a_backend_the_function_cannot_use_says_why() {
    let tree = two_port_card();
    let lone = "0000:05:00.0";
    tree.device(addr(lone), 0x10df, 0x0720);
    let run = on_tree(&tree, &["--device", lone, "--backend", "vfio", "--json", "query"]);
    assert_eq!(run.code, 3, "{run:?}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("0000:05:00.0 has no IOMMU group, so VFIO cannot reach it"), "{message}");

    std::fs::remove_file(tree.roots().device_dir(addr(PORT0)).join("driver")).unwrap();
    std::fs::remove_file(tree.roots().device_dir(addr(PORT1)).join("driver")).unwrap();
    let run = on_tree(&tree, &["--device", PORT0, "--backend", "sysfs", "--json", "query"]);
    assert_eq!(run.code, 3, "{run:?}");
    let message = run.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("its IOMMU group 7 translates DMA"), "{message}");
}

#[test]
fn help_documents_the_backend_flag() {
    let run = ocetool(&["--help"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("--backend <BACKEND>"), "{}", run.stdout);
    assert!(run.stdout.contains("VFIO when the function has an IOMMU group, sysfs otherwise"), "{}", run.stdout);
    let list = ocetool(&["list", "--help"]);
    assert!(list.stdout.contains("--backend"), "{}", list.stdout);
}

/// `apply --device PORT0` with one `[[adapter]]` rule for every adapter, `extra` lines added to it.
fn apply_on_tree(tree: &FakeTree, extra: &str, flags: &[&str]) -> Run {
    let config = tree.roots().sysfs.parent().unwrap().join("ocetool.toml");
    std::fs::write(&config, format!("[[adapter]]\nmatch = {{ all = true }}\nprofile = \"roce\"\n{extra}")).unwrap();
    let mut args = vec!["--device", PORT0, "--json"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["apply", "--config", config.to_str().unwrap()]);
    on_tree(tree, &args)
}

fn adapter_error(run: &Run) -> String {
    run.json()["adapters"][0]["error"]["message"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn apply_without_unbind_in_the_config_refuses_a_bound_function_by_name() {
    let tree = two_port_card();
    let run = apply_on_tree(&tree, "", &[]);
    assert_eq!(run.code, 4, "{run:?}");
    let message = adapter_error(&run);
    assert!(message.contains("0000:03:00.0 is bound to be2net"), "{message}");
    assert!(message.contains("--unbind"), "{message}");
    assert_eq!(run.json()["adapters"][0]["changed"], false);
    untouched(&tree);
    // `--unbind` on the command line still asks, and stdin is not a terminal.
    let run = apply_on_tree(&tree, "unbind = false\n", &["--unbind"]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(adapter_error(&run).contains("without confirmation: stdin is not a terminal; pass --yes"), "{run:?}");
    untouched(&tree);
}

#[test]
fn apply_with_unbind_true_takes_the_function_from_be2net_unasked() {
    let tree = two_port_card();
    // The kernel refuses the unbind (the attribute is not writable): the hand-off stops at its
    // first unbind, so the test sees how far the configuration let it go without a real kernel.
    let unbind = tree.roots().driver_dir("be2net").join("unbind");
    std::fs::remove_file(&unbind).unwrap();
    std::fs::create_dir(&unbind).unwrap();
    let run = apply_on_tree(&tree, "unbind = true\n", &[]);
    let message = adapter_error(&run);
    assert!(message.contains(&format!("cannot take {PORT0} for ocetool")), "{run:?}");
    assert!(message.contains(&unbind.display().to_string()), "it got as far as unbinding be2net: {message}");
    assert!(!message.contains("--unbind") && !message.contains("--yes"), "neither refused nor asked: {message}");
    assert_eq!(run.code, 1, "a failed sysfs write, not a refusal (4)");
    // Given back: both ports still on be2net.
    for port in [PORT0, PORT1] {
        assert_eq!(tree.driver_of(addr(port)).as_deref(), Some("be2net"), "{port}");
    }
}
