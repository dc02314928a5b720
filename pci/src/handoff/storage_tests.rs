//! The hand-off on a card with its storage functions — FCoE (lpfc) and iSCSI (be2iscsi) — in the
//! NIC ports' IOMMU group, on a fake sysfs tree and a fake kernel: a storage function its driver
//! holds is refused by name, `--unbind` or not, before anything is written; an unbound one stays
//! unbound while the NIC ports move and come back.

use super::tests::serial;
use super::*;
use crate::fake_sysfs::{FakeKernel, FakeTree};
use crate::ids::FunctionKind;

const PORT0: &str = "0000:03:00.0";
const PORT1: &str = "0000:03:00.1";
const FCOE: &str = "0000:03:00.2";
const ISCSI: &str = "0000:03:00.3";
const BRIDGE: &str = "0000:00:1c.0";

fn a(s: &str) -> PciAddress {
    s.parse().unwrap()
}

fn opts(allow_unbind: bool) -> HandOffOptions {
    HandOffOptions { allow_unbind, timeout: Duration::ZERO }
}

/// An OCe14102 with both NIC ports on be2net, its FCoE function (on `fcoe`, if given, with SCSI
/// host 3) and its iSCSI function (on `iscsi`, with SCSI host 4), and a bridge, all in IOMMU
/// group 7. The kernel's native drivers: be2net, lpfc, be2iscsi.
fn card(fcoe: Option<&str>, iscsi: Option<&str>) -> (FakeTree, Arc<FakeKernel>) {
    let tree = FakeTree::new();
    tree.device(a(PORT0), 0x10df, 0x0720).group(7).driver("be2net");
    tree.device(a(PORT1), 0x10df, 0x0720).group(7).driver("be2net");
    let f = tree.fcoe_function(a(FCOE)).group(7);
    if let Some(d) = fcoe {
        f.driver(d).scsi_host(3);
    }
    let i = tree.iscsi_function(a(ISCSI)).group(7);
    if let Some(d) = iscsi {
        i.driver(d).scsi_host(4);
    }
    tree.device(a(BRIDGE), 0x8086, 0xa110).class(0x060400).group(7).driver("pcieport");
    for driver in ["be2net", "lpfc", "be2iscsi"] {
        tree.load_driver(driver);
    }
    let kernel = FakeKernel::new(&tree)
        .native(a(PORT0), "be2net")
        .native(a(PORT1), "be2net")
        .native(a(FCOE), "lpfc")
        .native(a(ISCSI), "be2iscsi");
    (tree, Arc::new(kernel))
}

#[test]
fn a_storage_function_on_its_driver_is_refused_by_name_even_with_unbind() {
    let _s = serial();
    for (fcoe, iscsi, member, kind, driver) in [
        (Some("lpfc"), None, FCOE, FunctionKind::Fcoe, "lpfc"),
        (None, Some("be2iscsi"), ISCSI, FunctionKind::Iscsi, "be2iscsi"),
    ] {
        for allow_unbind in [true, false] {
            let (tree, kernel) = card(fcoe, iscsi);
            let err = HandOff::acquire(a(PORT0), tree.roots(), &opts(allow_unbind), kernel.clone()).unwrap_err();
            assert!(
                matches!(&err, PciError::StorageFunctionBound { member: m, kind: k, group: Some(7), driver: d, .. }
                    if *m == a(member) && *k == kind && d == driver),
                "{err:?}"
            );
            assert!(err.is_refusal());
            let text = err.to_string();
            assert!(
                text.starts_with(&format!(
                    "{member}, the {} function of the adapter of {PORT0} in its IOMMU group 7, is bound to {driver}, \
                     and ocetool never takes a storage function from its driver",
                    kind.label()
                )),
                "{text}"
            );
            assert!(text.contains(&format!("echo {member} > /sys/bus/pci/drivers/{driver}/unbind")), "{text}");
            assert_eq!(kernel.writes(), vec![], "refused before the first write");
            assert_eq!(tree.driver_of(a(member)).as_deref(), Some(driver));
            assert_eq!(tree.driver_of(a(PORT0)).as_deref(), Some("be2net"));
        }
    }
}

#[test]
fn unbound_storage_functions_stay_unbound_while_the_nic_ports_move_and_come_back() {
    let _s = serial();
    let (tree, kernel) = card(None, None);
    let guard = HandOff::acquire(a(PORT0), tree.roots(), &opts(true), kernel.clone()).unwrap();
    let moved: Vec<(PciAddress, Option<&str>)> =
        guard.moved().iter().map(|m| (m.address, m.driver.as_deref())).collect();
    assert_eq!(moved, [(a(PORT0), Some("be2net")), (a(PORT1), Some("be2net"))]);
    assert_eq!(tree.driver_of(a(PORT1)).as_deref(), Some("vfio-pci"));
    guard.restore().unwrap();
    for port in [PORT0, PORT1] {
        assert_eq!(tree.driver_of(a(port)).as_deref(), Some("be2net"), "{port}");
    }
    for storage in [FCOE, ISCSI] {
        assert_eq!((tree.driver_of(a(storage)), tree.driver_override(a(storage))), (None, None), "{storage}");
        assert!(!kernel.writes().iter().any(|(p, v)| p.contains(storage) || v == storage), "{storage} untouched");
    }
    assert_eq!(tree.driver_of(a(BRIDGE)).as_deref(), Some("pcieport"));
    // Unbound, with no override: each binds its own driver when probed.
    for (storage, driver) in [(FCOE, "lpfc"), (ISCSI, "be2iscsi")] {
        kernel.write_attr(&tree.roots().drivers_probe(), storage).unwrap();
        assert_eq!(tree.driver_of(a(storage)).as_deref(), Some(driver));
    }
}
