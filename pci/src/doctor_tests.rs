//! Tests of the host checks against fake sysfs/proc trees: each check passing on a host set up
//! for RoCE, and each failing (or warning) on the host that lacks its piece.

use super::*;
use crate::fake_sysfs::FakeTree;

const NEEDED: u64 = 136 * 1024;
fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

/// A host ready for ocetool and RoCE ([`FakeTree::ready_for_roce`]).
fn healthy() -> FakeTree {
    FakeTree::ready_for_roce()
}

fn check(tree: &FakeTree, id: &str) -> Check {
    check_for(tree, Target::Any, id)
}

fn check_for(tree: &FakeTree, target: Target, id: &str) -> Check {
    let report = host_checks(tree.roots(), target, NEEDED);
    report.checks.into_iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no check {id}"))
}

fn assert_status(c: &Check, status: Status) {
    assert_eq!(c.status, status, "{c:?}");
    if matches!(status, Status::Warn | Status::Fail) {
        assert!(c.hint.as_deref().is_some_and(|h| !h.is_empty()), "{} {:?} without a hint", c.id, c.status);
    }
}

#[test]
fn a_healthy_host_passes_every_host_check_in_order() {
    let tree = healthy();
    let report = host_checks(tree.roots(), Target::Any, NEEDED);
    let ids: Vec<&str> = report.checks.iter().map(|c| c.id).collect();
    assert_eq!(ids, ["iommu", "vfio_pci", "iommu_group", "lockdown", "memlock", "drivers", "nfs_rdma"]);
    for c in &report.checks {
        assert_status(c, Status::Pass);
    }
    assert_eq!(nic_pfs(&report.adapters), [addr("0000:03:00.0")]);
    assert!(report.checks[0].detail.contains("intel_iommu=on iommu=pt"), "{}", report.checks[0].detail);
}

#[test]
fn iommu_fails_without_groups_and_says_what_to_change() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).driver("be2net");
    tree.write_proc("cmdline", "root=/dev/sda1 quiet\n");
    let c = check(&tree, "iommu");
    assert_status(&c, Status::Fail);
    assert!(c.hint.unwrap().contains("intel_iommu=on"));
    tree.write_proc("cmdline", "root=/dev/sda1 intel_iommu=on\n");
    assert!(check(&tree, "iommu").hint.unwrap().contains("firmware setup"));
    tree.write_proc("cmdline", "root=/dev/sda1 amd_iommu=off\n");
    assert!(check(&tree, "iommu").hint.unwrap().contains("remove amd_iommu=off"));
}

#[test]
fn vfio_chain_gaps_only_warn_without_an_adapter() {
    let tree = FakeTree::new();
    tree.without_vfio();
    tree.write_proc("cmdline", "quiet\n");
    let c = check_for(&tree, Target::Emulator, "iommu");
    assert_status(&c, Status::Warn);
    assert!(c.detail.contains("none found"), "{}", c.detail);
    assert_status(&check_for(&tree, Target::Emulator, "vfio_pci"), Status::Warn);
    assert_status(&check_for(&tree, Target::Emulator, "iommu_group"), Status::Skip);
    assert_status(&check_for(&tree, Target::Emulator, "drivers"), Status::Skip);
}

#[test]
fn vfio_pci_missing_or_without_its_node() {
    let tree = healthy();
    tree.without_vfio();
    let c = check(&tree, "vfio_pci");
    assert_status(&c, Status::Fail);
    assert!(c.hint.unwrap().contains("modprobe vfio-pci"));
    let tree = healthy();
    std::fs::remove_file(tree.roots().dev.join("vfio/vfio")).unwrap();
    let c = check(&tree, "vfio_pci");
    assert_status(&c, Status::Fail);
    assert!(c.detail.contains("missing"), "{}", c.detail);
}

#[test]
fn iommu_group_lists_members_and_fails_only_for_another_devices_member() {
    let tree = healthy();
    let c = check(&tree, "iommu_group");
    assert_eq!(c.detail, "0000:03:00.0: group 12 viable (0000:03:00.0 be2net): vfio backend");
    // The card's other port in the group: the hand-off moves it with --unbind.
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720).group(12).driver("be2net");
    let c = check_for(&tree, Target::Function(addr("0000:03:00.0")), "iommu_group");
    assert_status(&c, Status::Pass);
    // Another device in the group: VFIO cannot open it, and ocetool will not unbind it.
    tree.device(addr("0000:04:00.0"), 0x8086, 0x10d3).group(12).driver("e1000e");
    let c = check_for(&tree, Target::Function(addr("0000:03:00.0")), "iommu_group");
    assert_status(&c, Status::Fail);
    assert!(c.detail.contains("0000:03:00.0: group 12 not viable: 0000:04:00.0 by e1000e held"), "{}", c.detail);
    assert!(c.hint.unwrap().contains("echo 0000:04:00.0 > /sys/bus/pci/drivers/e1000e/unbind"));
}

#[test]
fn iommu_group_without_iommu_and_for_an_unknown_address() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).driver("be2net");
    let c = check(&tree, "iommu_group");
    assert_status(&c, Status::Fail);
    assert_eq!(c.detail, "0000:03:00.0: no IOMMU group: sysfs backend");
    assert!(c.hint.unwrap().contains("the sysfs backend needs root"));
    let c = check_for(&tree, Target::Function(addr("0000:05:00.0")), "iommu_group");
    assert_status(&c, Status::Fail);
    assert!(c.detail.contains("0000:05:00.0 is not an OCe14000 function"), "{}", c.detail);
    // With the target missing, the other VFIO checks stay strict: a real adapter was asked for.
    let tree = FakeTree::new();
    tree.without_vfio();
    assert_status(&check_for(&tree, Target::Function(addr("0000:05:00.0")), "vfio_pci"), Status::Fail);
}

#[test]
fn without_an_iommu_a_host_ready_for_the_sysfs_backend_only_warns() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).driver("be2net");
    tree.without_vfio();
    tree.write_proc("cmdline", "root=/dev/sda1 quiet\n");
    tree.as_root();
    tree.huge_pages(1, 1);
    let c = check(&tree, "iommu");
    assert_status(&c, Status::Warn);
    assert!(c.detail.contains("sysfs backend, without IOMMU protection"), "{}", c.detail);
    assert!(c.hint.unwrap().contains("intel_iommu=on"));
    let c = check(&tree, "iommu_group");
    assert_status(&c, Status::Warn);
    assert_eq!(c.detail, "0000:03:00.0: no IOMMU group: sysfs backend");
    let c = check(&tree, "vfio_pci");
    assert_status(&c, Status::Warn);
    assert!(c.detail.contains("needed only for the VFIO backend"), "{}", c.detail);
    // Without a free huge page the sysfs backend cannot run either: both say what to do.
    tree.huge_pages(0, 0);
    let c = check(&tree, "iommu");
    assert_status(&c, Status::Fail);
    assert!(c.hint.unwrap().contains("/proc/sys/vm/nr_hugepages"));
}

#[test]
fn lockdown_warns_with_a_way_out() {
    let tree = healthy();
    tree.set_lockdown("none [integrity] confidentiality\n");
    let c = check(&tree, "lockdown");
    assert_status(&c, Status::Warn);
    assert!(c.detail.contains("integrity mode"), "{}", c.detail);
    assert!(c.hint.unwrap().contains("vfio-pci.ids=10df:0720"));
}

#[test]
fn lockdown_the_kernel_does_not_report_is_a_skip_not_a_pass() {
    let tree = healthy();
    std::fs::remove_file(tree.roots().lockdown_file()).unwrap();
    let c = check(&tree, "lockdown");
    assert_status(&c, Status::Skip);
    assert!(c.detail.contains("does not say"), "{}", c.detail);
}

#[test]
fn memlock_against_what_ocetool_needs() {
    let tree = healthy();
    let limits = |soft: &str| format!("Max locked memory         {soft}              {soft}             bytes     \n");
    tree.write_proc("self/limits", &limits("65536"));
    let c = check(&tree, "memlock");
    assert_status(&c, Status::Fail);
    assert_eq!(c.detail, "RLIMIT_MEMLOCK 64 KiB, but ocetool needs 136 KiB for its DMA buffers");
    assert!(c.hint.unwrap().contains("ulimit -l 136"));
    tree.write_proc("self/limits", &limits("8388608"));
    let c = check(&tree, "memlock");
    assert_status(&c, Status::Pass);
    assert_eq!(c.detail, "RLIMIT_MEMLOCK 8192 KiB; ocetool needs 136 KiB");
    // CAP_IPC_LOCK (bit 14) lifts the limit.
    tree.write_proc("self/limits", &limits("65536"));
    tree.write_proc("self/status", "CapEff:\t0000000000004000\n");
    assert_status(&check(&tree, "memlock"), Status::Pass);
    // Unreadable.
    std::fs::remove_file(tree.roots().proc.join("self/status")).unwrap();
    std::fs::remove_file(tree.roots().proc.join("self/limits")).unwrap();
    assert_status(&check(&tree, "memlock"), Status::Warn);
}

#[test]
fn drivers_list_bindings_and_warn_about_gaps() {
    let tree = healthy();
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720).group(13).driver("vfio-pci");
    let c = check(&tree, "drivers");
    assert_status(&c, Status::Warn);
    assert_eq!(c.detail, "be2net loaded, ocrdma loaded; 0000:03:00.0 be2net, 0000:03:00.1 vfio-pci");
    assert!(c.hint.unwrap().contains("0000:03:00.1 is still on vfio-pci"));

    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    let c = check(&tree, "drivers");
    assert_status(&c, Status::Warn);
    assert!(c.detail.starts_with("be2net loaded, ocrdma not loaded"), "{}", c.detail);
    assert!(c.hint.unwrap().contains("modprobe ocrdma"));
}

#[test]
fn a_function_left_held_for_the_sysfs_backend_is_named_with_the_way_back() {
    let tree = healthy();
    let f = addr("0000:03:00.0");
    std::fs::remove_file(tree.roots().device_dir(f).join("driver")).unwrap();
    tree.set_driver_override(f, Some("ocetool-hold"));
    let c = check(&tree, "drivers");
    assert_status(&c, Status::Warn);
    let hint = c.hint.unwrap();
    assert!(hint.contains("0000:03:00.0 is still held for ocetool's sysfs backend"), "{hint}");
    assert!(hint.contains("echo > /sys/bus/pci/devices/0000:03:00.0/driver_override"), "{hint}");
}

#[test]
fn module_detection_reads_proc_modules_too() {
    let tree = FakeTree::new();
    tree.write_proc("modules", "ocrdma 139264 0 - Live 0x0000000000000000\nbe2net 135168 1 ocrdma, Live 0x0\n");
    assert!(host::module_loaded(tree.roots(), "ocrdma"));
    assert!(!host::module_loaded(tree.roots(), "rpcrdma"));
    assert!(host::module_loaded(tree.roots(), "vfio-pci"), "a PCI driver folder counts");
}

#[test]
fn nfs_rdma_passes_on_an_rdma_listener_or_mount() {
    let tree = healthy();
    let c = check(&tree, "nfs_rdma");
    assert_eq!(c.detail, "rpcrdma loaded; nfsd listens on rdma 20049");
    std::fs::remove_file(tree.roots().proc.join("fs/nfsd/portlist")).unwrap();
    tree.write_proc("mounts", "srv:/export /mnt/data nfs4 rw,vers=4.2,proto=rdma,port=20049 0 0\n");
    let c = check(&tree, "nfs_rdma");
    assert_status(&c, Status::Pass);
    assert!(c.detail.contains("mounted over RDMA: /mnt/data"), "{}", c.detail);
}

#[test]
fn nfs_rdma_warns_when_nfs_runs_without_rdma_and_skips_without_nfs() {
    let tree = healthy();
    tree.write_proc("fs/nfsd/portlist", "tcp 2049\nudp 2049\n");
    let c = check(&tree, "nfs_rdma");
    assert_status(&c, Status::Warn);
    assert!(c.detail.contains("nfsd listens on tcp 2049, udp 2049 but not on RDMA"), "{}", c.detail);
    assert!(c.hint.unwrap().contains("rdma 20049"));

    std::fs::remove_file(tree.roots().proc.join("fs/nfsd/portlist")).unwrap();
    tree.write_proc("mounts", "srv:/export /mnt/data nfs4 rw,vers=4.2,proto=tcp 0 0\n");
    let c = check(&tree, "nfs_rdma");
    assert_status(&c, Status::Warn);
    assert!(c.hint.unwrap().contains("proto=rdma"));

    tree.write_proc("mounts", "/dev/sda1 / ext4 rw 0 0\n");
    assert_status(&check(&tree, "nfs_rdma"), Status::Skip);
}

#[test]
fn rdma_devices_of_the_adapter_are_found() {
    let tree = healthy();
    tree.rdma_device("ocrdma0", addr("0000:03:00.0"), &[("ACTIVE", "Ethernet")]);
    tree.rdma_device("mlx5_0", addr("0000:81:00.0"), &[("ACTIVE", "InfiniBand")]);
    let report = host_checks(tree.roots(), Target::Any, NEEDED);
    let rdma = report.rdma.unwrap();
    assert_eq!(rdma.len(), 1, "only the adapter's own device: {rdma:?}");
    assert_eq!(rdma[0].name, "ocrdma0");
    assert_eq!(rdma[0].ports[0].state, "ACTIVE");
    assert_eq!(rdma[0].ports[0].link_layer, "Ethernet");
}

#[test]
fn an_rdma_device_is_ocrdma_by_its_kernel_name_or_by_its_node_description() {
    let tree = healthy();
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720).group(12).driver("be2net");
    tree.rdma_device("ocrdma0", addr("0000:03:00.0"), &[("ACTIVE", "Ethernet")]);
    // Renamed by udev (rdma_rename): ocrdma's node description tells it apart.
    tree.rdma_device("rocep3s0f1", addr("0000:03:00.1"), &[("ACTIVE", "Ethernet")]);
    tree.write_sys("class/infiniband/rocep3s0f1/node_desc", "Emulex OneConnect RoCE HCA\n");
    let rdma = host_checks(tree.roots(), Target::Any, NEEDED).rdma.unwrap();
    let ocrdma: Vec<(&str, bool)> = rdma.iter().map(|d| (d.name.as_str(), d.is_ocrdma())).collect();
    assert_eq!(ocrdma, [("ocrdma0", true), ("rocep3s0f1", true)]);

    // Another driver's name and description; a name that only starts like ocrdma's.
    tree.write_sys("class/infiniband/rocep3s0f1/node_desc", "rxe\n");
    assert!(!host_checks(tree.roots(), Target::Any, NEEDED).rdma.unwrap()[1].is_ocrdma());
    let named =
        |name: &str| host::RdmaDevice { name: name.into(), function: None, ports: vec![], node_desc: "".into() };
    assert!(named("ocrdma12").is_ocrdma());
    assert!(!named("ocrdma").is_ocrdma() && !named("ocrdma_x").is_ocrdma() && !named("mlx5_0").is_ocrdma());
}
