//! Tests of `apply`'s decisions that need no open adapter: who may take a bound function, and
//! which functions of a card keep a chip reset waiting (on a fake sysfs tree). The job that
//! writes the "reset postponed" action runs only on an opened PCI function, so that step itself
//! runs in a real kernel: tests/whole-card-qemu/run.sh (`apply-postpones`, `apply-activates`)
//! serves both functions of one emulated card to a guest whose be2net holds one of them.

use oce_pci::PciAddress;
use oce_pci::fake_sysfs::FakeTree;

use super::*;

const PORT0: &str = "0000:03:00.0";
const PORT1: &str = "0000:03:00.1";

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

fn rules(text: &str) -> Vec<(usize, Rule)> {
    config::parse(Path::new("ocetool.toml"), text).unwrap().adapter.into_iter().enumerate().collect()
}

#[test]
fn only_unbind_true_in_every_rule_that_may_apply_takes_a_bound_function_unasked() {
    let yes = rules("[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nunbind = true\n");
    assert_eq!(unbind_for(&yes, false), Unbind::Confirmed);
    assert_eq!(unbind_for(&yes, true), Unbind::Confirmed, "the configuration is the confirmation");
    let unset = rules("[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n");
    assert_eq!(unbind_for(&unset, false), Unbind::No);
    assert_eq!(unbind_for(&unset, true), Unbind::Ask, "--unbind still asks (or needs --yes)");
    // Before the serial is read, the serial rule may be the one that matches: it does not say so.
    let mixed = rules(
        "[[adapter]]\nmatch = { serial = \"A\" }\nprofile = \"nic\"\n\n\
         [[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nunbind = true\n",
    );
    assert_eq!(unbind_for(&mixed, false), Unbind::No);
}

/// Both ports of an OCe14102 in IOMMU group 7, `port1` on `driver` (none when `None`), port 0 on
/// vfio-pci (where ocetool would work on it).
fn card(port1: Option<&str>) -> FakeTree {
    let tree = FakeTree::new();
    tree.device(addr(PORT0), 0x10df, 0x0720).group(7).driver(sysfs::VFIO_PCI);
    let other = tree.device(addr(PORT1), 0x10df, 0x0720).group(7);
    if let Some(driver) = port1 {
        other.driver(driver);
    }
    tree
}

fn busy(tree: &FakeTree, spec: &DeviceSpec) -> Vec<String> {
    let inventory = discover_one_connect(tree.roots()).unwrap();
    drivers_on_the_card(tree.roots(), Some(&inventory), spec).unwrap().iter().map(ToString::to_string).collect()
}

#[test]
fn another_function_on_a_kernel_driver_postpones_the_reset() {
    let tree = card(Some("be2net"));
    let busy = busy(&tree, &DeviceSpec::Pci(addr(PORT0)));
    assert_eq!(busy, ["0000:03:00.1 (be2net)"]);
    assert_eq!(
        postponed(&busy),
        "reset postponed: 0000:03:00.1 (be2net) still bound; the stored state runs after a reboot"
    );
}

#[test]
fn the_function_itself_vfio_pci_and_unbound_functions_do_not() {
    assert!(busy(&card(None), &DeviceSpec::Pci(addr(PORT0))).is_empty());
    assert!(busy(&card(Some(sysfs::VFIO_PCI)), &DeviceSpec::Pci(addr(PORT0))).is_empty());
    // Port 1 itself on be2net, port 0 on vfio-pci: nothing else of the card holds a driver.
    assert!(busy(&card(Some("be2net")), &DeviceSpec::Pci(addr(PORT1))).is_empty());
}

#[test]
fn another_card_and_the_emulator_do_not() {
    let tree = card(None);
    tree.device(addr("0000:04:00.0"), 0x10df, 0x0720).group(8).driver("be2net");
    assert!(busy(&tree, &DeviceSpec::Pci(addr(PORT0))).is_empty());
    let emulator = DeviceSpec::Emulator("/nonexistent".into());
    assert!(drivers_on_the_card(tree.roots(), None, &emulator).unwrap().is_empty());
}

#[test]
fn a_storage_function_on_its_driver_postpones_the_reset_and_is_named_with_its_driver() {
    // The FCoE function on lpfc with its SCSI host, the iSCSI function on be2iscsi without one
    // (no target logged in yet): neither has a network interface, and both carry storage.
    let tree = card(None);
    tree.fcoe_function(addr("0000:03:00.2")).group(9).driver("lpfc").scsi_host(3);
    tree.iscsi_function(addr("0000:03:00.3")).group(10).driver("be2iscsi");
    let held = busy(&tree, &DeviceSpec::Pci(addr(PORT0)));
    assert_eq!(held, ["0000:03:00.2 (FCoE, lpfc: host3)", "0000:03:00.3 (iSCSI, be2iscsi)"]);
    assert_eq!(
        postponed(&held),
        "reset postponed: 0000:03:00.2 (FCoE, lpfc: host3), 0000:03:00.3 (iSCSI, be2iscsi) still bound; the stored \
         state runs after a reboot"
    );
    // Unbound, or on vfio-pci, they hold nothing up.
    let tree = card(None);
    tree.fcoe_function(addr("0000:03:00.2")).group(9);
    tree.iscsi_function(addr("0000:03:00.3")).group(10).driver(sysfs::VFIO_PCI);
    assert!(busy(&tree, &DeviceSpec::Pci(addr(PORT0))).is_empty());
}
