//! Tests of the backend choice and of the sysfs backend's host prerequisites on fake trees.

use super::*;
use crate::fake_sysfs::FakeTree;

fn nic() -> PciAddress {
    "0000:03:00.0".parse().unwrap()
}

#[test]
fn auto_picks_vfio_with_a_group_and_sysfs_without() {
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720).group(7);
    let vfio = choose(tree.roots(), nic(), Request::Auto).unwrap();
    assert_eq!(vfio.backend, Backend::Vfio);
    assert_eq!(vfio.reason, "IOMMU group 7: VFIO, the adapter's DMA confined to ocetool's buffers");

    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720);
    let sysfs = choose(tree.roots(), nic(), Request::Auto).unwrap();
    assert_eq!(sysfs.backend, Backend::Sysfs);
    assert!(sysfs.reason.starts_with("no IOMMU group (the IOMMU is off)"), "{}", sysfs.reason);
    assert!(sysfs.reason.contains("without IOMMU protection"), "{}", sysfs.reason);
}

#[test]
fn forcing_vfio_without_a_group_says_what_to_do() {
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720);
    let err = choose(tree.roots(), nic(), Request::Force(Backend::Vfio)).unwrap_err();
    assert!(matches!(err, PciError::NoIommuGroup { .. }));
    let text = err.to_string();
    assert!(text.starts_with("0000:03:00.0 has no IOMMU group, so VFIO cannot reach it"), "{text}");
    assert!(text.contains("intel_iommu=on") && text.contains("drop --backend vfio"), "{text}");
}

#[test]
fn forcing_sysfs_needs_an_untranslated_group() {
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720).group(7);
    let err = choose(tree.roots(), nic(), Request::Force(Backend::Sysfs)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--backend sysfs cannot drive 0000:03:00.0: its IOMMU group 7 translates DMA (type unknown), so the physical \
         addresses the sysfs backend hands the adapter would fault; use VFIO (drop --backend sysfs)"
    );
    tree.write_sys("kernel/iommu_groups/7/type", "DMA-FQ\n");
    let err = choose(tree.roots(), nic(), Request::Force(Backend::Sysfs)).unwrap_err();
    assert!(err.to_string().contains("(type DMA-FQ)"), "{err}");
    tree.write_sys("kernel/iommu_groups/7/type", "identity\n");
    let ok = choose(tree.roots(), nic(), Request::Force(Backend::Sysfs)).unwrap();
    assert_eq!(ok.backend, Backend::Sysfs);
    assert_eq!(ok.reason, "--backend sysfs (IOMMU group 7 passes DMA through untranslated)");
}

#[test]
fn a_root_host_with_a_free_huge_page_has_no_blockers() {
    let tree = FakeTree::new();
    tree.as_root();
    tree.huge_pages(1, 1);
    assert_eq!(sysfs_blockers(tree.roots()), vec![]);
}

#[test]
fn each_missing_piece_is_a_blocker_that_says_what_to_do() {
    let tree = FakeTree::new();
    tree.as_user();
    tree.huge_pages(3, 0);
    tree.set_lockdown("none [integrity] confidentiality\n");
    let blockers = sysfs_blockers(tree.roots());
    assert_eq!(
        blockers,
        vec![
            SysfsBlocker::NotRoot,
            SysfsBlocker::LockedDown(Lockdown::Integrity),
            SysfsBlocker::NoFreeHugePage { size: 2 << 20, total: 3 }
        ]
    );
    assert_eq!(
        blockers[2].to_string(),
        "no free 2048 KiB huge page for the adapter's DMA memory: reserve one with `echo 4 > /proc/sys/vm/nr_hugepages` \
         (vm.nr_hugepages in /etc/sysctl.d/ keeps it)"
    );
    assert!(blockers[0].to_string().contains("run ocetool as root"));
    assert!(blockers[1].to_string().contains("kernel lockdown (integrity) forbids"));
}

#[test]
fn overcommit_counts_and_a_kernel_without_huge_pages_is_named() {
    let tree = FakeTree::new();
    tree.as_root();
    tree.huge_pages(0, 0);
    tree.write_proc("sys/vm/nr_overcommit_hugepages", "2\n");
    assert_eq!(sysfs_blockers(tree.roots()), vec![]);
    tree.write_proc("meminfo", "MemTotal:       16384000 kB\n");
    assert_eq!(sysfs_blockers(tree.roots()), vec![SysfsBlocker::NoHugePageSupport]);
}

#[test]
fn root_needs_uid_0_and_cap_sys_admin() {
    let tree = FakeTree::new();
    tree.huge_pages(1, 1);
    // No status file at all: not provably root.
    assert_eq!(sysfs_blockers(tree.roots()), vec![SysfsBlocker::NotRoot]);
    tree.write_proc("self/status", "Uid:\t0\t0\t0\t0\nCapEff:\t0000000000000000\n");
    assert_eq!(sysfs_blockers(tree.roots()), vec![SysfsBlocker::NotRoot]);
    tree.write_proc("self/status", "Uid:\t1000\t0\t0\t0\nCapEff:\t0000000000200000\n");
    assert_eq!(sysfs_blockers(tree.roots()), vec![]);
}
