//! Tests of the whole-adapter hand-off on a two-port card (both NIC functions in one IOMMU group,
//! both on be2net), and of the detached hand-off the sysfs backend uses, against a fake sysfs tree
//! and a fake kernel.

use super::tests::{serial, w};
use super::*;
use crate::fake_sysfs::{FakeKernel, FakeTree};

const PORT0: &str = "0000:03:00.0";
const PORT1: &str = "0000:03:00.1";

fn port0() -> PciAddress {
    PORT0.parse().unwrap()
}

fn port1() -> PciAddress {
    PORT1.parse().unwrap()
}

fn opts(allow_unbind: bool) -> HandOffOptions {
    HandOffOptions { allow_unbind, timeout: Duration::ZERO }
}

/// Adds a netdev with its operstate under function `address`, as be2net creates it.
fn netdev(tree: &FakeTree, address: PciAddress, name: &str, operstate: &str) {
    let dir = tree.roots().device_dir(address).join("net").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("operstate"), format!("{operstate}\n")).unwrap();
}

/// An OCe14102: two NIC functions in IOMMU group 7, both bound to be2net, each with its netdev;
/// ocrdma on port 0.
fn two_port_card() -> (FakeTree, FakeKernel) {
    let tree = FakeTree::new();
    tree.device(port0(), 0x10df, 0x0720).group(7).driver("be2net");
    tree.device(port1(), 0x10df, 0x0720).group(7).driver("be2net");
    netdev(&tree, port0(), "enp3s0f0", "up");
    netdev(&tree, port1(), "enp3s0f1", "down");
    std::fs::create_dir_all(tree.roots().device_dir(port0()).join("infiniband/ocrdma0")).unwrap();
    let kernel = FakeKernel::new(&tree).native(port0(), "be2net").native(port1(), "be2net");
    (tree, kernel)
}

#[test]
fn the_plan_names_both_ports_and_what_goes_down() {
    let (tree, _) = two_port_card();
    let plan = Plan::new(port0(), tree.roots(), Target::VfioPci, true).unwrap();
    assert_eq!(plan.iommu_group, Some(7));
    let moved: Vec<(PciAddress, Option<&str>, Vec<String>)> =
        plan.unbinds().map(|m| (m.address, m.driver.as_deref(), m.dependents.describe())).collect();
    assert_eq!(
        moved,
        vec![
            (port0(), Some("be2net"), vec!["enp3s0f0 (up)".to_owned(), "ocrdma0".to_owned()]),
            (port1(), Some("be2net"), vec!["enp3s0f1 (down)".to_owned()]),
        ]
    );
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(json["moves"][1]["address"], PORT1);
    assert_eq!(json["moves"][0]["netdevs"][0]["name"], "enp3s0f0");
    assert_eq!(json["moves"][0]["rdma"][0], "ocrdma0");
}

#[test]
fn with_unbind_both_ports_move_and_come_back() {
    let _s = serial();
    let (tree, kernel) = two_port_card();
    let kernel = Arc::new(kernel);
    let guard = HandOff::acquire(port0(), tree.roots(), &opts(true), kernel.clone()).unwrap();
    assert_eq!(
        kernel.writes(),
        vec![
            w("bus/pci/devices/0000:03:00.0/driver_override", "vfio-pci"),
            w("bus/pci/drivers/be2net/unbind", PORT0),
            w("bus/pci/drivers_probe", PORT0),
            w("bus/pci/devices/0000:03:00.1/driver_override", "vfio-pci"),
            w("bus/pci/drivers/be2net/unbind", PORT1),
            w("bus/pci/drivers_probe", PORT1),
        ]
    );
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("vfio-pci"));
    assert_eq!(tree.driver_of(port1()).as_deref(), Some("vfio-pci"));
    let moved: Vec<PciAddress> = guard.moved().iter().map(|m| m.address).collect();
    assert_eq!(moved, [port0(), port1()]);
    guard.restore().unwrap();
    // The last moved goes back first.
    assert_eq!(
        kernel.writes()[6..],
        [
            w("bus/pci/devices/0000:03:00.1/driver_override", "\n"),
            w("bus/pci/drivers/vfio-pci/unbind", PORT1),
            w("bus/pci/drivers_probe", PORT1),
            w("bus/pci/devices/0000:03:00.0/driver_override", "\n"),
            w("bus/pci/drivers/vfio-pci/unbind", PORT0),
            w("bus/pci/drivers_probe", PORT0),
        ]
    );
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("be2net"));
    assert_eq!(tree.driver_of(port1()).as_deref(), Some("be2net"));
}

#[test]
fn without_unbind_the_other_port_on_be2net_is_refused() {
    let _s = serial();
    let (tree, kernel) = two_port_card();
    let kernel = Arc::new(kernel);
    // Port 0 itself is free; its sibling in the group is not.
    std::fs::remove_file(tree.roots().device_dir(port0()).join("driver")).unwrap();
    let err = HandOff::acquire(port0(), tree.roots(), &opts(false), kernel.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "0000:03:00.1, another function of the adapter of 0000:03:00.0 in its IOMMU group 7, is bound to be2net: pass \
         --unbind to hand the adapter's functions to vfio-pci for this command (each gets its driver back afterwards)"
    );
    assert!(err.is_refusal());
    assert_eq!(kernel.writes(), vec![]);
}

#[test]
fn a_foreign_group_member_is_refused_by_name() {
    let _s = serial();
    let (tree, kernel) = two_port_card();
    let kernel = Arc::new(kernel);
    let nvme: PciAddress = "0000:04:00.0".parse().unwrap();
    tree.device(nvme, 0x144d, 0xa808).group(7).driver("nvme");
    let err = HandOff::acquire(port0(), tree.roots(), &opts(true), kernel.clone()).unwrap_err();
    assert!(
        matches!(&err, PciError::GroupNotViable { member, driver, .. } if member == "0000:04:00.0" && driver == "nvme")
    );
    assert!(err.is_refusal());
    assert_eq!(kernel.writes(), vec![]);
    assert_eq!(tree.driver_of(port1()).as_deref(), Some("be2net"));
}

#[test]
fn a_failure_in_the_middle_gives_back_what_moved() {
    let _s = serial();
    let (tree, kernel) = two_port_card();
    let kernel = Arc::new(kernel.vfio_probe_fails_on(port1()));
    let err = HandOff::acquire(port0(), tree.roots(), &opts(true), kernel.clone()).unwrap_err();
    assert!(matches!(err, PciError::BindTimeout { address, .. } if address == port1()), "{err}");
    // Port 0 had moved, port 1 was on its way: both are back on be2net, their overrides cleared.
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("be2net"));
    assert_eq!(tree.driver_of(port1()).as_deref(), Some("be2net"));
    for port in [port0(), port1()] {
        let ov = std::fs::read_to_string(tree.roots().device_dir(port).join("driver_override")).unwrap();
        assert_eq!(ov, "(null)\n", "{port}");
    }
    assert_eq!(ACTIVE.lock().unwrap().len(), 0);
}

#[test]
fn a_panic_gives_back_both_ports() {
    let _s = serial();
    let (tree, kernel) = two_port_card();
    let kernel = Arc::new(kernel);
    let roots = tree.roots().clone();
    let k = kernel.clone();
    let result = std::panic::catch_unwind(move || {
        let _guard = HandOff::acquire(port0(), &roots, &opts(true), k).unwrap();
        panic!("command failed halfway");
    });
    assert!(result.is_err());
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("be2net"));
    assert_eq!(tree.driver_of(port1()).as_deref(), Some("be2net"));
}

#[test]
fn a_driver_change_after_the_plan_stops_before_any_write() {
    let _s = serial();
    let (tree, kernel) = two_port_card();
    let kernel = Arc::new(kernel);
    let plan = Plan::new(port0(), tree.roots(), Target::VfioPci, true).unwrap();
    // While the user was being asked, port 0 lost its driver.
    std::fs::remove_file(tree.roots().device_dir(port0()).join("driver")).unwrap();
    let err = HandOff::execute(plan, tree.roots(), Duration::ZERO, kernel.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "0000:03:00.0 changed drivers while ocetool was getting ready (it was on be2net, now no driver): nothing was \
         moved that is not given back; run the command again"
    );
    assert_eq!(kernel.writes(), vec![]);
}

#[test]
fn detached_takes_only_the_function_and_holds_it_unbound() {
    let _s = serial();
    let tree = FakeTree::new();
    tree.device(port0(), 0x10df, 0x0720).driver("be2net");
    tree.device(port1(), 0x10df, 0x0720).driver("be2net");
    let kernel = Arc::new(FakeKernel::new(&tree).native(port0(), "be2net").native(port1(), "be2net"));
    let err = Plan::new(port0(), tree.roots(), Target::Detached, false).unwrap_err();
    assert!(matches!(err, PciError::DriverBound { .. }), "{err}");
    let plan = Plan::new(port0(), tree.roots(), Target::Detached, true).unwrap();
    let guard = HandOff::execute(plan, tree.roots(), Duration::ZERO, kernel.clone()).unwrap();
    assert_eq!(
        kernel.writes(),
        vec![
            w("bus/pci/devices/0000:03:00.0/driver_override", HOLD_OVERRIDE),
            w("bus/pci/drivers/be2net/unbind", PORT0)
        ]
    );
    assert_eq!(tree.driver_of(port0()), None);
    assert_eq!(tree.driver_of(port1()).as_deref(), Some("be2net"), "the other port keeps its driver");
    // A probe meanwhile (a `modprobe be2net`, a hotplug event) cannot claim it.
    kernel.write_attr(&tree.roots().drivers_probe(), PORT0).unwrap();
    assert_eq!(tree.driver_of(port0()), None);
    guard.restore().unwrap();
    assert_eq!(
        kernel.writes()[3..],
        [w("bus/pci/devices/0000:03:00.0/driver_override", "\n"), w("bus/pci/drivers_probe", PORT0)]
    );
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("be2net"));
}

#[test]
fn detached_holds_an_unbound_function_and_leaves_it_unbound() {
    let _s = serial();
    let tree = FakeTree::new();
    tree.device(port0(), 0x10df, 0x0720);
    let kernel = Arc::new(FakeKernel::new(&tree));
    let plan = Plan::new(port0(), tree.roots(), Target::Detached, false).unwrap();
    assert_eq!(plan.unbinds().count(), 0);
    let guard = HandOff::execute(plan, tree.roots(), Duration::ZERO, kernel.clone()).unwrap();
    assert!(guard.changed_binding());
    assert_eq!(guard.original_driver(), None);
    drop(guard);
    assert_eq!(
        kernel.writes(),
        vec![
            w("bus/pci/devices/0000:03:00.0/driver_override", HOLD_OVERRIDE),
            w("bus/pci/devices/0000:03:00.0/driver_override", "\n"),
        ]
    );
    assert_eq!(tree.driver_of(port0()), None);
}

#[test]
fn detached_in_a_passthrough_group_waits_for_no_vfio_node() {
    let _s = serial();
    let tree = FakeTree::new();
    tree.device(port0(), 0x10df, 0x0720).group(7).driver("be2net");
    let kernel = Arc::new(FakeKernel::new(&tree).native(port0(), "be2net"));
    let plan = Plan::new(port0(), tree.roots(), Target::Detached, true).unwrap();
    assert_eq!(plan.iommu_group, Some(7));
    let guard = HandOff::execute(plan, tree.roots(), Duration::ZERO, kernel.clone()).unwrap();
    assert_eq!(tree.driver_of(port0()), None);
    assert!(!tree.roots().vfio_group_node(7).exists());
    guard.restore().unwrap();
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("be2net"));
}
