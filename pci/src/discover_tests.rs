//! Tests of discovery against fake sysfs trees.

use super::*;
use crate::backend::SysfsBlocker;
use crate::fake_sysfs::FakeTree;

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

fn only_function(inv: &Inventory) -> &FunctionInfo {
    assert_eq!(inv.adapters.len(), 1, "{inv:?}");
    assert_eq!(inv.adapters[0].functions.len(), 1, "{inv:?}");
    &inv.adapters[0].functions[0]
}

#[test]
fn without_an_iommu_group_the_sysfs_backend_and_its_prerequisites() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).driver("be2net");
    tree.as_user();
    tree.huge_pages(0, 0);
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    let f = only_function(&inv);
    assert_eq!(f.iommu_group, None);
    assert_eq!(f.backend, Some(Backend::Sysfs));
    assert!(f.backend_reason.as_deref().unwrap().starts_with("no IOMMU group (the IOMMU is off)"));
    assert!(!f.usable);
    assert_eq!(
        f.blockers,
        vec![
            Blocker::SysfsBackend(SysfsBlocker::NotRoot),
            Blocker::SysfsBackend(SysfsBlocker::NoFreeHugePage { size: 2 << 20, total: 0 }),
            Blocker::BoundTo { driver: "be2net".into() }
        ]
    );
    assert!(f.reason.as_deref().unwrap().starts_with("no IOMMU group, and the sysfs backend needs root"));

    // As root with a huge page to spare, only the driver is in the way.
    tree.as_root();
    tree.huge_pages(1, 1);
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    let f = only_function(&inv);
    assert_eq!(f.reason.as_deref(), Some("bound to be2net: pass --unbind"));
    assert_eq!(serde_json::to_value(f).unwrap()["backend"], "sysfs");
}

#[test]
fn the_other_port_in_the_group_is_named_as_the_adapters_own() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(7);
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720).group(7).driver("be2net");
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    let f = &inv.adapters[0].functions[0];
    assert_eq!(f.backend, Some(Backend::Vfio));
    assert_eq!(
        f.reason.as_deref(),
        Some("0000:03:00.1 of the same adapter and IOMMU group is bound to be2net: pass --unbind")
    );
}

#[test]
fn group_shared_with_another_device() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(7);
    tree.device(addr("0000:00:1f.2"), 0x8086, 0x2922).group(7).driver("ahci");
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    let f = only_function(&inv);
    assert_eq!(f.iommu_group, Some(7));
    assert_eq!(f.driver, None);
    assert!(!f.usable);
    assert_eq!(f.reason.as_deref(), Some("IOMMU group 7 shared with 0000:00:1f.2 (bound to ahci)"));
}

#[test]
fn device_bound_to_be2net() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    let f = only_function(&inv);
    assert_eq!(f.driver.as_deref(), Some("be2net"));
    assert!(!f.usable);
    assert_eq!(f.reason.as_deref(), Some("bound to be2net: pass --unbind"));
}

#[test]
fn vfio_pci_not_loaded() {
    let tree = FakeTree::new();
    tree.unload_driver("vfio-pci");
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12);
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    assert!(!inv.vfio_pci_loaded);
    let f = only_function(&inv);
    assert!(!f.usable);
    assert_eq!(f.reason.as_deref(), Some("vfio-pci not loaded: run modprobe vfio-pci"));
}

#[test]
fn function_already_bound_to_vfio_pci() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("vfio-pci");
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    assert!(inv.vfio_pci_loaded);
    let f = only_function(&inv);
    assert_eq!(f.driver.as_deref(), Some("vfio-pci"));
    assert!(f.usable);
    assert_eq!(f.reason, None);
    assert_eq!(f.blockers, vec![]);
}

#[test]
fn an_unbound_function_in_its_own_group_is_usable() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12);
    let f = discover(tree.roots(), Scope::OneConnect).unwrap().adapters[0].functions[0].clone();
    assert!(f.usable, "{f:?}");
}

#[test]
fn groups_functions_by_adapter_with_kinds_and_reasons() {
    let tree = FakeTree::new();
    // Adapter A: two NIC ports, FCoE and iSCSI, one group per function.
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(20).driver("be2net");
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720).group(21).driver("vfio-pci");
    tree.device(addr("0000:03:00.2"), 0x10df, 0x0724).group(22).driver("lpfc");
    tree.device(addr("0000:03:00.3"), 0x10df, 0x0722).group(23).driver("be2iscsi");
    // A VF of port 0 at another slot: listed with its PF's adapter.
    tree.device(addr("0000:03:04.0"), 0x10df, 0x0728).group(30).physfn(addr("0000:03:00.0"));
    // Adapter B: a BE3, and an unrelated Intel NIC that must not be listed.
    tree.device(addr("0000:05:00.0"), 0x19a2, 0x0710).group(40).driver("be2net");
    tree.device(addr("0000:06:00.0"), 0x8086, 0x100e).group(41).driver("e1000");
    tree.set_lockdown("none [integrity] confidentiality\n");

    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    assert_eq!(inv.lockdown, Lockdown::Integrity);
    assert!(inv.lockdown_note.is_some());
    let slots: Vec<&str> = inv.adapters.iter().map(|a| a.slot.as_str()).collect();
    assert_eq!(slots, ["0000:03:00", "0000:05:00"]);

    let a = &inv.adapters[0];
    assert_eq!(a.chip, Chip::Skyhawk);
    let rows: Vec<(String, FunctionKind, bool, Option<String>)> =
        a.functions.iter().map(|f| (f.address.to_string(), f.kind, f.usable, f.reason.clone())).collect();
    assert_eq!(
        rows,
        vec![
            ("0000:03:00.0".into(), FunctionKind::NicPf, false, Some("bound to be2net: pass --unbind".into())),
            ("0000:03:00.1".into(), FunctionKind::NicPf, true, None),
            (
                "0000:03:00.2".into(),
                FunctionKind::Fcoe,
                false,
                Some("FCoE function: ocetool drives the NIC physical function".into())
            ),
            (
                "0000:03:00.3".into(),
                FunctionKind::Iscsi,
                false,
                Some("iSCSI function: ocetool drives the NIC physical function".into())
            ),
            (
                "0000:03:04.0".into(),
                FunctionKind::NicVf,
                false,
                Some("VF: profile and firmware operations need the PF".into())
            ),
        ]
    );
    assert_eq!(a.functions[4].physical_function, Some(addr("0000:03:00.0")));

    let b = &inv.adapters[1];
    assert_eq!(b.chip, Chip::Be3);
    assert_eq!(b.functions[0].reason.as_deref(), Some("be3 (OCe11100): ocetool drives Skyhawk (OCe14000) only"));
}

#[test]
fn a_be3_vf_is_recognised_by_its_physfn_link() {
    let tree = FakeTree::new();
    tree.device(addr("0000:05:00.0"), 0x19a2, 0x0710).group(1);
    tree.device(addr("0000:05:00.4"), 0x19a2, 0x0710).group(2).physfn(addr("0000:05:00.0"));
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    let vf = &inv.adapters[0].functions[1];
    assert_eq!((vf.kind, vf.virtual_function), (FunctionKind::NicVf, true));
}

#[test]
fn json_uses_the_contract_field_names() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    let json = serde_json::to_value(&inv).unwrap();
    let f = &json["adapters"][0]["functions"][0];
    assert_eq!(f["address"], "0000:03:00.0");
    assert_eq!(f["vendor_id"], "0x10df");
    assert_eq!(f["device_id"], "0x0720");
    assert_eq!(f["chip"], "skyhawk");
    assert_eq!(f["kind"], "nic_pf");
    assert_eq!(f["driver"], "be2net");
    assert_eq!(f["iommu_group"], 12);
    assert_eq!(f["usable"], false);
    assert_eq!(f["reason"], "bound to be2net: pass --unbind");
    assert_eq!(f["backend"], "vfio");
    assert_eq!(f["backend_reason"], "IOMMU group 12: VFIO, the adapter's DMA confined to ocetool's buffers");
    assert_eq!(json["adapters"][0]["slot"], "0000:03:00");
    assert_eq!(json["lockdown"], "unknown", "no lockdown file in this tree");
    tree.set_lockdown("[none] integrity confidentiality\n");
    let json = serde_json::to_value(discover(tree.roots(), Scope::OneConnect).unwrap()).unwrap();
    assert_eq!(json["lockdown"], "none");
    assert_eq!(json["vfio_pci_loaded"], true);
}

#[test]
fn an_empty_bus_and_a_missing_sysfs() {
    let tree = FakeTree::new();
    assert_eq!(discover(tree.roots(), Scope::OneConnect).unwrap().adapters, vec![]);
    let missing = Roots::new(tree.roots().sysfs.join("nope"), "/dev");
    assert!(matches!(discover(&missing, Scope::OneConnect), Err(PciError::Io { .. })));
}

#[test]
fn scope_all_lists_the_other_functions_too() {
    let tree = FakeTree::new();
    tree.device(addr("0000:00:01.0"), 0x1234, 0x11e8).class(0x00ff00).group(1);
    tree.device(addr("0000:00:02.0"), 0x8086, 0x100e).group(2).driver("e1000");
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(3).driver("be2net");
    assert_eq!(discover(tree.roots(), Scope::OneConnect).unwrap().other_functions, vec![]);
    let inv = discover(tree.roots(), Scope::All).unwrap();
    assert_eq!(inv.adapters.len(), 1);
    let json = serde_json::to_value(&inv.other_functions).unwrap();
    assert_eq!(
        json,
        serde_json::json!([
            {"address": "0000:00:01.0", "vendor_id": "0x1234", "device_id": "0x11e8", "class": "0x00ff00",
             "driver": null, "iommu_group": 1},
            {"address": "0000:00:02.0", "vendor_id": "0x8086", "device_id": "0x100e", "class": "0x020000",
             "driver": "e1000", "iommu_group": 2},
        ])
    );
}

#[test]
fn functions_of_one_card_share_an_adapter_slot_and_a_missing_one_is_no_such_function() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720);
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720);
    tree.device(addr("0000:03:04.2"), 0x10df, 0x0728).physfn(addr("0000:03:00.1"));
    tree.device(addr("0000:04:00.0"), 0x10df, 0x0720);
    let slot = |a: &str| adapter_slot(tree.roots(), addr(a)).unwrap();
    assert_eq!(slot("0000:03:00.0"), "0000:03:00");
    assert_eq!(slot("0000:03:00.1"), "0000:03:00");
    assert_eq!(slot("0000:03:04.2"), "0000:03:00", "a VF counts with its PF");
    assert_eq!(slot("0000:04:00.0"), "0000:04:00");
    let err = describe(tree.roots(), addr("0000:09:00.0")).unwrap_err();
    assert!(err.is_no_device(), "{err}");
}

#[test]
fn a_storage_function_on_its_driver_in_the_group_is_a_blocker_unbind_does_not_lift() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(7);
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720).group(7).driver("be2net");
    tree.fcoe_function(addr("0000:03:00.2")).group(7).driver("lpfc");
    tree.iscsi_function(addr("0000:03:00.3")).group(7);
    let inv = discover(tree.roots(), Scope::OneConnect).unwrap();
    let port0 = &inv.adapters[0].functions[0];
    assert_eq!(
        port0.blockers,
        vec![
            Blocker::AdapterFunctionBound { member: addr("0000:03:00.1"), driver: "be2net".into() },
            Blocker::StorageFunctionBound {
                member: addr("0000:03:00.2"),
                kind: FunctionKind::Fcoe,
                driver: "lpfc".into()
            },
        ],
        "the unbound iSCSI function keeps nothing from VFIO"
    );
    assert_eq!(
        port0.blockers[1].to_string(),
        "0000:03:00.2, the adapter's FCoE function in the same IOMMU group, is bound to lpfc, which ocetool never \
         unbinds: stop what uses its disks and unbind it yourself"
    );
}
