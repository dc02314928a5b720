//! The CLI on fake sysfs trees of an OCe14000 that carries storage besides its NIC ports: the FCoE
//! function (10df:0724, lpfc) and the iSCSI function (10df:0722, be2iscsi). A chip reset restarts
//! them too, so `reset` is refused while one stays on its driver, naming it with its driver and
//! its SCSI host; `--unbind` never takes one from its driver (its disks would vanish under
//! whatever uses them), so a bound storage function in the NIC's IOMMU group is refused by name
//! before anything is written, `apply`'s `unbind = true` included; unbound ones block nothing.
//! (`oce_pci::handoff`'s storage tests cover the moves with a fake kernel.)

mod common;

use common::Run;
use oce_pci::PciAddress;
use oce_pci::fake_sysfs::FakeTree;

const PORT0: &str = "0000:03:00.0";
const PORT1: &str = "0000:03:00.1";
const FCOE: &str = "0000:03:00.2";
const ISCSI: &str = "0000:03:00.3";

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

/// How each function of the card is found: its IOMMU group and its driver.
struct Layout {
    port0: (u32, Option<&'static str>),
    port1: (u32, Option<&'static str>),
    fcoe: (u32, Option<&'static str>),
    iscsi: (u32, Option<&'static str>),
}

/// The card as `layout` says; a bound storage function has its SCSI host (host3 for FCoE, host4
/// for iSCSI), a bound NIC port its network interface.
fn card(layout: &Layout) -> FakeTree {
    let tree = FakeTree::new();
    for (address, (group, driver), name) in [(PORT0, layout.port0, "ocefake0"), (PORT1, layout.port1, "ocefake1")] {
        let dev = tree.device(addr(address), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(group);
        if let Some(d) = driver {
            let dev = dev.driver(d);
            if d == "be2net" {
                dev.netdev(name, "00:00:c9:00:00:01", "up", Some(10_000));
            }
        }
    }
    let (group, driver) = layout.fcoe;
    let dev = tree.fcoe_function(addr(FCOE)).group(group);
    if let Some(d) = driver {
        dev.driver(d).scsi_host(3);
    }
    let (group, driver) = layout.iscsi;
    let dev = tree.iscsi_function(addr(ISCSI)).group(group);
    if let Some(d) = driver {
        dev.driver(d).scsi_host(4);
    }
    tree
}

/// ocetool on `tree`, with its lock files and its runtime folder in the tree.
fn on_tree(tree: &FakeTree, args: &[&str]) -> Run {
    common::on_fake_tree(tree).args(args).output().expect("run ocetool").into()
}

/// The error message of a run refused (exit 4) with the error code `code`.
fn refusal(tree: &FakeTree, code: &str, args: &[&str]) -> String {
    let run = on_tree(tree, args);
    assert_eq!(run.code, 4, "{run:?}");
    let doc = run.json();
    assert_eq!((&doc["error"]["kind"], &doc["error"]["code"]), (&"refused".into(), &code.into()), "{doc}");
    doc["error"]["message"].as_str().unwrap().to_owned()
}

/// Nothing was written: every function on the driver it was found on, no override set.
fn untouched(tree: &FakeTree, layout: &Layout) {
    for (address, (_, driver)) in
        [(PORT0, layout.port0), (PORT1, layout.port1), (FCOE, layout.fcoe), (ISCSI, layout.iscsi)]
    {
        let ov = std::fs::read_to_string(tree.roots().device_dir(addr(address)).join("driver_override")).unwrap();
        assert_eq!(ov, "(null)\n", "{address}");
        assert_eq!(tree.driver_of(addr(address)).as_deref(), driver, "{address}");
    }
}

/// ACS: a group per function. Port 0 on be2net (what `--unbind` would take), port 1 unbound.
const ACS: Layout = Layout { port0: (7, Some("be2net")), port1: (8, None), fcoe: (9, None), iscsi: (10, None) };

#[test]
fn reset_is_refused_while_the_fcoe_or_iscsi_function_stays_on_its_driver() {
    for (layout, named, driver) in [
        (Layout { fcoe: (9, Some("lpfc")), ..ACS }, "0000:03:00.2 (FCoE, lpfc: host3)", "lpfc"),
        (Layout { iscsi: (10, Some("be2iscsi")), ..ACS }, "0000:03:00.3 (iSCSI, be2iscsi: host4)", "be2iscsi"),
    ] {
        let tree = card(&layout);
        let message = refusal(&tree, "card-in-use", &["--device", PORT0, "--unbind", "--yes", "--json", "reset"]);
        let function = &named[..12];
        assert_eq!(
            message,
            format!(
                "refusing to reset the chip of {PORT0}: the reset restarts every function of the card, and {named} \
                 stays on a host driver through it (the hand-off moves only the functions in IOMMU group 7); unbind \
                 it first ({function} carries storage: stop what uses its disks before unbinding it) (echo {function} \
                 > /sys/bus/pci/drivers/{driver}/unbind; echo {function} > /sys/bus/pci/drivers_probe gives it back \
                 after the reset), or reboot instead"
            )
        );
        untouched(&tree, &layout);
    }
    // Both at once: both named.
    let both = Layout { fcoe: (9, Some("lpfc")), iscsi: (10, Some("be2iscsi")), ..ACS };
    let tree = card(&both);
    let message = refusal(&tree, "card-in-use", &["--device", PORT0, "--unbind", "--yes", "--json", "reset"]);
    assert!(
        message.contains(
            "0000:03:00.2 (FCoE, lpfc: host3), 0000:03:00.3 (iSCSI, be2iscsi: host4) stay on a host driver through it"
        ),
        "{message}"
    );
    assert!(message.contains("(0000:03:00.2, 0000:03:00.3 carry storage: stop what uses their disks"), "{message}");
    untouched(&tree, &both);
}

#[test]
fn reset_without_an_iommu_is_refused_while_a_storage_function_stays_on_its_driver() {
    // No IOMMU: the sysfs backend takes port 0 alone (unbound: no --unbind needed).
    let tree = FakeTree::new();
    tree.device(addr(PORT0), 0x10df, 0x0720);
    tree.fcoe_function(addr(FCOE)).driver("lpfc").scsi_host(3);
    tree.as_root();
    tree.huge_pages(1, 1);
    let message = refusal(&tree, "card-in-use", &["--device", PORT0, "--yes", "--json", "reset"]);
    assert!(
        message.contains(
            "and 0000:03:00.2 (FCoE, lpfc: host3) stays on a host driver through it (the sysfs backend hands off \
             only 0000:03:00.0)"
        ),
        "{message}"
    );
    assert_eq!(tree.driver_of(addr(FCOE)).as_deref(), Some("lpfc"));
    assert_eq!(tree.driver_of(addr(PORT0)), None);
}

#[test]
fn unbound_storage_functions_and_one_on_vfio_pci_do_not_block_the_reset() {
    let layout = Layout { fcoe: (9, None), iscsi: (10, Some("vfio-pci")), ..ACS };
    let tree = card(&layout);
    // Not refused for them: the hand-off's own confirmation (no --yes) is what stops it.
    let message = refusal(&tree, "confirmation-required", &["--device", PORT0, "--unbind", "--json", "reset"]);
    assert!(message.starts_with("refusing to unbind be2net from 0000:03:00.0"), "{message}");
    untouched(&tree, &layout);
}

/// No ACS: every function of the card in group 7, both ports on be2net.
const SHARED: Layout =
    Layout { port0: (7, Some("be2net")), port1: (7, Some("be2net")), fcoe: (7, None), iscsi: (7, None) };

#[test]
fn unbind_refuses_a_bound_storage_function_in_the_group_by_name_before_anything_moves() {
    for (layout, function, kind, driver) in [
        (Layout { fcoe: (7, Some("lpfc")), ..SHARED }, FCOE, "FCoE", "lpfc"),
        (Layout { iscsi: (7, Some("be2iscsi")), ..SHARED }, ISCSI, "iSCSI", "be2iscsi"),
    ] {
        let tree = card(&layout);
        let wanted = format!(
            "{function}, the {kind} function of the adapter of {PORT0} in its IOMMU group 7, is bound to {driver}, \
             and ocetool never takes a storage function from its driver"
        );
        for command in ["query", "reset"] {
            let message =
                refusal(&tree, "group-not-viable", &["--device", PORT0, "--unbind", "--yes", "--json", command]);
            assert!(message.contains(&wanted), "{command}: {message}");
            assert!(message.contains(&format!("echo {function} > /sys/bus/pci/drivers/{driver}/unbind")), "{message}");
        }
        untouched(&tree, &layout);
        // Port 0 unbound, no --unbind: the advice is not "pass --unbind", which would not help.
        let free = Layout { port0: (7, None), ..layout };
        let free_tree = card(&free);
        let message = refusal(&free_tree, "group-not-viable", &["--device", PORT0, "--json", "query"]);
        assert!(message.contains(&wanted) && !message.contains("pass --unbind"), "{message}");
        untouched(&free_tree, &free);

        // `list` says so, and that --unbind does not lift it.
        let doc = on_tree(&tree, &["--json", "list"]).json();
        let reason = doc["adapters"][0]["functions"][0]["reason"].as_str().unwrap().to_owned();
        assert!(
            reason.contains(&format!(
                "{function}, the adapter's {kind} function in the same IOMMU group, is bound to {driver}, which \
                 ocetool never unbinds"
            )),
            "{reason}"
        );
    }
}

#[test]
fn apply_with_unbind_true_refuses_a_bound_storage_function_by_name() {
    let layout = Layout { fcoe: (7, Some("lpfc")), ..SHARED };
    let tree = card(&layout);
    let config = tree.roots().sysfs.parent().unwrap().join("ocetool.toml");
    std::fs::write(
        &config,
        "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nactivate = \"reset\"\nunbind = true\n",
    )
    .unwrap();
    let run = on_tree(&tree, &["--device", PORT0, "--json", "apply", "--config", config.to_str().unwrap()]);
    assert_eq!(run.code, 4, "{run:?}");
    let doc = run.json();
    let a = &doc["adapters"][0];
    assert_eq!(
        (&a["error"]["kind"], &a["error"]["code"], &a["changed"]),
        (&"refused".into(), &"group-not-viable".into(), &false.into()),
        "{doc}"
    );
    let message = a["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "0000:03:00.2, the FCoE function of the adapter of 0000:03:00.0 in its IOMMU group 7, is bound to lpfc"
        ),
        "{message}"
    );
    untouched(&tree, &layout);
}
