//! The fake kernel's `driver_override` against the kernel's rules (`driver_set_override`,
//! drivers/base/driver.c; `driver_override_show`, drivers/pci/pci-sysfs.c; `pci_match_device`,
//! drivers/pci/pci-driver.c): what a write stores, what a read shows, what a probe binds.

use std::sync::Arc;

use super::*;

const NIC: &str = "0000:03:00.0";

fn nic() -> PciAddress {
    NIC.parse().unwrap()
}

/// An unbound Skyhawk PF whose native driver, be2net, is loaded.
fn unbound_nic() -> (FakeTree, Arc<FakeKernel>) {
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720).group(7);
    tree.load_driver("be2net");
    let kernel = Arc::new(FakeKernel::new(&tree).native(nic(), "be2net"));
    (tree, kernel)
}

fn write_override(tree: &FakeTree, kernel: &FakeKernel, value: &str) -> std::io::Result<()> {
    kernel.write_attr(&tree.roots().device_dir(nic()).join("driver_override"), value)
}

fn probe(tree: &FakeTree, kernel: &FakeKernel) {
    kernel.write_attr(&tree.roots().drivers_probe(), NIC).unwrap();
}

fn shown(tree: &FakeTree) -> String {
    std::fs::read_to_string(tree.roots().device_dir(nic()).join("driver_override")).unwrap()
}

#[test]
fn an_unset_override_reads_null_and_a_probe_binds_the_native_driver() {
    let (tree, kernel) = unbound_nic();
    assert_eq!((shown(&tree).as_str(), tree.driver_override(nic())), ("(null)\n", None));
    probe(&tree, &kernel);
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"));
}

#[test]
fn a_written_null_is_a_literal_override_that_no_driver_matches() {
    for written in ["(null)", "(null)\n"] {
        let (tree, kernel) = unbound_nic();
        write_override(&tree, &kernel, written).unwrap();
        // It reads exactly as an unset one does; only what the kernel holds tells them apart.
        assert_eq!(shown(&tree), "(null)\n");
        assert_eq!(tree.driver_override(nic()).as_deref(), Some("(null)"), "{written:?}");
        probe(&tree, &kernel);
        assert_eq!(tree.driver_of(nic()), None, "no driver is called (null): {written:?}");
    }
}

#[test]
fn an_empty_write_or_one_that_starts_with_a_newline_clears_it() {
    for clearing in ["", "\n", "\n(null)", "\0vfio-pci"] {
        let (tree, kernel) = unbound_nic();
        tree.set_driver_override(nic(), Some("vfio-pci"));
        write_override(&tree, &kernel, clearing).unwrap();
        assert_eq!((shown(&tree).as_str(), tree.driver_override(nic())), ("(null)\n", None), "{clearing:?}");
        probe(&tree, &kernel);
        assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"), "{clearing:?}");
    }
}

#[test]
fn a_write_is_cut_at_its_first_newline_and_kept_as_written_otherwise() {
    assert_eq!(stored_override("vfio-pci").unwrap().as_deref(), Some("vfio-pci"));
    assert_eq!(stored_override("vfio-pci\n").unwrap().as_deref(), Some("vfio-pci"));
    assert_eq!(stored_override("be2net\nvfio-pci\n").unwrap().as_deref(), Some("be2net"));
    assert_eq!(stored_override(" vfio-pci").unwrap().as_deref(), Some(" vfio-pci"), "not trimmed");
    assert_eq!(stored_override("be2net\0junk").unwrap().as_deref(), Some("be2net"));
    let long = "x".repeat(4095);
    assert_eq!(stored_override(&long).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    assert!(stored_override(&long[..4094]).unwrap().is_some());
}

#[test]
fn an_override_binds_only_the_driver_it_names() {
    let (tree, kernel) = unbound_nic();
    write_override(&tree, &kernel, "vfio-pci").unwrap();
    assert_eq!(shown(&tree), "vfio-pci\n");
    probe(&tree, &kernel);
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("vfio-pci"));
    // A name with a space is another name: nothing binds.
    let (tree, kernel) = unbound_nic();
    write_override(&tree, &kernel, " be2net\n").unwrap();
    probe(&tree, &kernel);
    assert_eq!(tree.driver_of(nic()), None);
}

#[test]
#[should_panic(expected = "written around the fake kernel")]
fn a_test_that_writes_the_attribute_itself_is_stopped() {
    let (tree, kernel) = unbound_nic();
    std::fs::write(tree.roots().device_dir(nic()).join("driver_override"), "vfio-pci\n").unwrap();
    probe(&tree, &kernel);
}
