//! No `driver_override` is left behind by a hand-off, on a fake sysfs tree whose fake kernel keeps
//! the override as the kernel does (a written `(null)` is an override no driver matches): after a
//! VFIO hand-off, a sysfs-backend one, and the repair of a killed one, the kernel holds no
//! override, and a reprobe binds each function's own driver.

use super::tests::{serial, w};
use super::*;
use crate::fake_sysfs::{FakeKernel, FakeTree};

const PORT0: &str = "0000:03:00.0";
const PORT1: &str = "0000:03:00.1";

fn a(s: &str) -> PciAddress {
    s.parse().unwrap()
}

fn opts() -> HandOffOptions {
    HandOffOptions { allow_unbind: true, timeout: Duration::ZERO }
}

/// Both ports of an OCe14102 on be2net in IOMMU group 7, be2net their native driver.
fn card() -> (FakeTree, Arc<FakeKernel>) {
    let tree = FakeTree::new();
    tree.device(a(PORT0), 0x10df, 0x0720).group(7).driver("be2net");
    tree.device(a(PORT1), 0x10df, 0x0720).group(7).driver("be2net");
    let kernel = FakeKernel::new(&tree).native(a(PORT0), "be2net").native(a(PORT1), "be2net");
    (tree, Arc::new(kernel))
}

/// Unbinds every function in `functions` from its driver and reprobes it, as a driver reload does:
/// only a function with no override left binds its own driver again.
fn reload(tree: &FakeTree, kernel: &FakeKernel, functions: &[(&str, &str)]) {
    for (function, driver) in functions {
        kernel.write_attr(&tree.roots().driver_dir(driver).join("unbind"), function).unwrap();
        assert_eq!(tree.driver_of(a(function)), None);
        kernel.write_attr(&tree.roots().drivers_probe(), function).unwrap();
    }
}

#[test]
fn after_a_vfio_hand_off_no_override_remains_and_a_reprobe_binds_be2net() {
    let _s = serial();
    let (tree, kernel) = card();
    HandOff::acquire(a(PORT0), tree.roots(), &opts(), kernel.clone()).unwrap().restore().unwrap();
    for port in [PORT0, PORT1] {
        assert_eq!(tree.driver_override(a(port)), None, "{port}: the kernel holds no override");
        assert_eq!(tree.driver_of(a(port)).as_deref(), Some("be2net"), "{port}");
    }
    reload(&tree, &kernel, &[(PORT0, "be2net"), (PORT1, "be2net")]);
    for port in [PORT0, PORT1] {
        assert_eq!(tree.driver_of(a(port)).as_deref(), Some("be2net"), "{port} after a reprobe");
    }
}

#[test]
fn after_a_sysfs_backend_hand_off_no_override_remains_and_a_reprobe_binds_be2net() {
    let _s = serial();
    let tree = FakeTree::new();
    tree.device(a(PORT0), 0x10df, 0x0720).driver("be2net");
    let kernel = Arc::new(FakeKernel::new(&tree).native(a(PORT0), "be2net"));
    let plan = Plan::new(a(PORT0), tree.roots(), Target::Detached, true).unwrap();
    let guard = HandOff::execute(plan, tree.roots(), Duration::ZERO, kernel.clone()).unwrap();
    assert_eq!(tree.driver_override(a(PORT0)).as_deref(), Some(HOLD_OVERRIDE));
    assert_eq!(tree.driver_of(a(PORT0)), None);
    guard.restore().unwrap();
    assert_eq!(kernel.writes()[2], w("bus/pci/devices/0000:03:00.0/driver_override", "\n"));
    assert_eq!(tree.driver_override(a(PORT0)), None);
    assert_eq!(tree.driver_of(a(PORT0)).as_deref(), Some("be2net"));
    reload(&tree, &kernel, &[(PORT0, "be2net")]);
    assert_eq!(tree.driver_of(a(PORT0)).as_deref(), Some("be2net"));
}

#[test]
fn after_a_repair_no_override_remains_and_a_driver_loaded_later_binds() {
    let _s = serial();
    // A hand-off killed before be2net was loaded (the boot hook's case): the repair leaves the
    // ports unbound, with nothing held that would keep be2net from them when it loads.
    let (tree, kernel) = card();
    let guard = HandOff::acquire(a(PORT0), tree.roots(), &opts(), kernel.clone()).unwrap();
    std::mem::forget(guard);
    ACTIVE.lock().unwrap_or_else(PoisonError::into_inner).clear();
    tree.unload_driver("be2net");
    repair(tree.roots(), a(PORT0), Duration::ZERO, kernel.clone()).unwrap().unwrap();
    tree.load_driver("be2net");
    for port in [PORT0, PORT1] {
        assert_eq!((tree.driver_of(a(port)), tree.driver_override(a(port))), (None, None), "{port}");
        kernel.write_attr(&tree.roots().drivers_probe(), port).unwrap();
        assert_eq!(tree.driver_of(a(port)).as_deref(), Some("be2net"), "{port}");
    }
}
