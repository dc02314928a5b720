//! Tests of the adapter checks and the assembled report, on fake hosts and hand-made adapter
//! facts: each check passing, and failing or warning on the adapter or host that lacks its piece.

use oce_pci::PciAddress;
use oce_pci::doctor::host_checks;
use oce_pci::fake_sysfs::FakeTree;

use super::*;
use crate::adapter::{Profile, RoceSource};
use crate::commands::{AppPriority, DcbxConfig, DcbxFeatureState, DcbxSummary, PfType, ROCE_ETHERTYPE};

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

fn profile(id: u8, name: &str, roce: bool) -> Profile {
    let pf_type = Some(if roce { PfType::MISSION_RDMA } else { PfType::MISSION_NIC });
    Profile { id, index: id, name: name.into(), pf_type, roce, roce_source: RoceSource::PfType }
}

/// DCBX as a switch in sync would leave it: PFC on priority 5, RoCE mapped to 5.
fn dcbx(pfc_state: u32) -> DcbxConfig {
    let mut cfg = DcbxConfig {
        summary: DcbxSummary::new(1, 0, 1, 8),
        pfc_state: DcbxFeatureState(pfc_state),
        ..DcbxConfig::default()
    };
    cfg.pfc_priorities[5] = 1;
    cfg.app[0] =
        AppPriority { valid: 1, selector: 0, protocol: ROCE_ETHERTYPE, oui: 0, priorities: [0, 0, 0, 0, 0, 1, 0, 0] };
    cfg
}

const IN_SYNC: u32 = DcbxFeatureState::ENABLED | DcbxFeatureState::WILLING | DcbxFeatureState::SYNC;

/// A RoCE adapter with nothing pending and PFC in sync.
fn roce_adapter() -> DeviceFacts {
    DeviceFacts {
        firmware: Firmware { running: "11.4.1.0".into(), stored: "11.4.1.0".into(), backup_running: false },
        profiles: Some(ProfileState {
            profiles: vec![profile(1, "NIC", false), profile(3, "RoCE-2 (NIC+RoCE)", true)],
            active: 3,
            next: 3,
        }),
        function_mode: 0x6,
        roce_enabled: true,
        dcb: Ok(DcbState::new(Ok(dcbx(IN_SYNC)), Ok(dcbx(IN_SYNC)))),
    }
}

fn nic_adapter() -> DeviceFacts {
    let mut d = roce_adapter();
    d.profiles.as_mut().unwrap().active = 1;
    d.profiles.as_mut().unwrap().next = 1;
    d.function_mode = 0x2;
    d.roce_enabled = false;
    d
}

/// The host of `roce_adapter`: an OCe14000 PF on be2net with ocrdma0 ACTIVE on Ethernet.
fn roce_host() -> FakeTree {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    tree.rdma_device("ocrdma0", addr("0000:03:00.0"), &[("ACTIVE", "Ethernet")]);
    tree
}

fn check(tree: &FakeTree, target: Target, device: Result<DeviceFacts, String>, id: &str) -> Check {
    let host = host_checks(tree.roots(), target, locked_memory_needed());
    report(&host, target, &device).into_iter().find(|c| c.id == id).unwrap()
}

fn assert_status(c: &Check, status: Status) {
    assert_eq!(c.status, status, "{c:?}");
    if matches!(status, Status::Warn | Status::Fail) {
        assert!(c.hint.as_deref().is_some_and(|h| !h.is_empty()), "{} {:?} without a hint", c.id, c.status);
    }
}

#[test]
fn ocetool_needs_the_mailbox_and_its_largest_buffer_twice() {
    // 4 KiB for the mailbox, 64 KiB for MANAGE_FAT RETRIEVE's 61,472 bytes; mlock + VFIO pin.
    assert_eq!(LARGEST_COMMAND, 61_472);
    assert_eq!(locked_memory_needed(), 2 * (4096 + 65_536));
}

#[test]
fn a_host_without_iommu_or_vfio_lists_every_check_and_fails() {
    // An OCe14000 bound to be2net, no IOMMU groups, no vfio-pci, no ocrdma; the adapter cannot be
    // reached (it is on be2net and there is no VFIO).
    let tree = FakeTree::new();
    tree.without_vfio();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).driver("be2net");
    tree.write_proc("cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet\n");
    let host = host_checks(tree.roots(), Target::Any, locked_memory_needed());
    let checks = report(&host, Target::Any, &Err("0000:03:00.0 is bound to be2net".into()));
    let ids: Vec<&str> = checks.iter().map(|c| c.id).collect();
    // `boot` needs the firmware crate's flash reader: the CLI adds it.
    assert_eq!(ids, ORDER.iter().copied().filter(|id| *id != "boot").collect::<Vec<_>>());
    let by_id = |id: &str| checks.iter().find(|c| c.id == id).unwrap();
    assert_status(by_id("iommu"), Status::Fail);
    assert_ne!(by_id("vfio_pci").status, Status::Pass);
    assert_status(by_id("pending"), Status::Skip);
    assert!(by_id("pending").detail.contains("bound to be2net"), "{:?}", by_id("pending"));
    assert_status(by_id("pfc"), Status::Skip);
    assert_status(by_id("roce"), Status::Skip);
    assert!(by_id("drivers").detail.contains("ocrdma not loaded"));
    assert!(has_failures(&checks));
}

#[test]
fn pending_passes_when_nothing_is_staged_and_warns_otherwise() {
    let tree = roce_host();
    let c = check(&tree, Target::Any, Ok(roce_adapter()), "pending");
    assert_status(&c, Status::Pass);
    assert_eq!(c.detail, "firmware 11.4.1.0 running and stored; profile RoCE-2 (NIC+RoCE) (3) active and next");

    let mut d = roce_adapter();
    d.firmware.stored = "11.4.2.0".into();
    d.profiles.as_mut().unwrap().next = 1;
    let c = check(&tree, Target::Any, Ok(d), "pending");
    assert_status(&c, Status::Warn);
    assert_eq!(
        c.detail,
        "firmware 11.4.1.0 runs, 11.4.2.0 is on flash; profile RoCE-2 (NIC+RoCE) (3) runs, NIC (1) is staged"
    );
    assert!(c.hint.unwrap().contains("ocetool reset"));
}

#[test]
fn roce_passes_with_ocrdma_active_on_ethernet_and_a_roce_profile() {
    let c = check(&roce_host(), Target::Any, Ok(roce_adapter()), "roce");
    assert_status(&c, Status::Pass);
    assert_eq!(
        c.detail,
        "ocrdma0 on 0000:03:00.0: port 1 ACTIVE (Ethernet); profile RoCE-2 (NIC+RoCE) (3), function_mode 0x6: RoCE"
    );

    // Renamed by udev: ocrdma's all the same, by its node description.
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    tree.rdma_device("rocep3s0f0", addr("0000:03:00.0"), &[("ACTIVE", "Ethernet")]);
    tree.write_sys("class/infiniband/rocep3s0f0/node_desc", &format!("{}\n", oce_pci::host::OCRDMA_NODE_DESC));
    assert_status(&check(&tree, Target::Any, Ok(roce_adapter()), "roce"), Status::Pass);

    // Profiles not readable: the function mode's RDMA bit stands in for the profile.
    let mut d = roce_adapter();
    d.profiles = None;
    let c = check(&roce_host(), Target::Any, Ok(d), "roce");
    assert_status(&c, Status::Pass);
    assert!(c.detail.ends_with("; function_mode 0x6: RoCE"), "{}", c.detail);
}

#[test]
fn roce_on_the_host_alone_passes_and_says_the_profile_went_unchecked() {
    // be2net holds the function, so the adapter is not reachable: its profile is unknown.
    let c = check(&roce_host(), Target::Any, Err("0000:03:00.0 is bound to be2net".into()), "roce");
    assert_status(&c, Status::Pass);
    assert_eq!(
        c.detail,
        "ocrdma0 on 0000:03:00.0: port 1 ACTIVE (Ethernet); profile not checked (known only when the adapter is \
         reachable): 0000:03:00.0 is bound to be2net"
    );
}

#[test]
fn roce_fails_on_an_rdma_device_that_is_not_ocrdmas() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    tree.rdma_device("roce0", addr("0000:03:00.0"), &[("ACTIVE", "Ethernet")]);
    tree.write_sys("class/infiniband/roce0/node_desc", "some other HCA\n");
    let c = check(&tree, Target::Any, Ok(roce_adapter()), "roce");
    assert_status(&c, Status::Fail);
    assert!(
        c.detail.starts_with(
            "roce0 on 0000:03:00.0: port 1 ACTIVE (Ethernet): not ocrdma's (node description \"some other HCA\")"
        ),
        "{}",
        c.detail
    );
    assert!(c.hint.unwrap().contains("modprobe ocrdma"));
}

#[test]
fn roce_fails_when_the_profile_is_not_roce_under_an_ocrdma_device() {
    let c = check(&roce_host(), Target::Any, Ok(nic_adapter()), "roce");
    assert_status(&c, Status::Fail);
    assert!(
        c.detail
            .ends_with("profile NIC (1), function_mode 0x2: the adapter runs without RoCE, yet the host has ocrdma0"),
        "{}",
        c.detail
    );
    assert!(c.hint.unwrap().contains("modprobe -r ocrdma be2net"));

    // Without profiles, the function mode says it.
    let mut d = nic_adapter();
    d.profiles = None;
    let c = check(&roce_host(), Target::Any, Ok(d), "roce");
    assert_status(&c, Status::Fail);
    assert!(c.detail.contains("function_mode 0x2: the adapter runs without RoCE"), "{}", c.detail);
}

#[test]
fn roce_warns_on_a_port_that_is_down_and_fails_on_infiniband() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    tree.rdma_device("ocrdma0", addr("0000:03:00.0"), &[("DOWN", "Ethernet")]);
    let c = check(&tree, Target::Any, Ok(roce_adapter()), "roce");
    assert_status(&c, Status::Warn);
    assert!(c.hint.unwrap().contains("ip link set"));

    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    tree.rdma_device("ocrdma0", addr("0000:03:00.0"), &[("ACTIVE", "InfiniBand")]);
    let c = check(&tree, Target::Any, Ok(roce_adapter()), "roce");
    assert_status(&c, Status::Fail);
    assert!(c.hint.unwrap().contains("RoCE runs over Ethernet"));
}

#[test]
fn roce_names_every_device_of_the_adapter_and_the_worst_verdict_wins() {
    let tree = roce_host();
    tree.device(addr("0000:03:00.1"), 0x10df, 0x0720).group(12).driver("be2net");
    tree.rdma_device("ocrdma1", addr("0000:03:00.1"), &[("DOWN", "Ethernet")]);
    let c = check(&tree, Target::Any, Ok(roce_adapter()), "roce");
    assert_status(&c, Status::Warn);
    assert!(
        c.detail.starts_with("ocrdma0 on 0000:03:00.0: port 1 ACTIVE (Ethernet); ocrdma1 on 0000:03:00.1: port 1 DOWN"),
        "{}",
        c.detail
    );
    assert!(c.hint.unwrap().contains("ip link set"));
}

#[test]
fn roce_fails_when_the_profile_has_rdma_but_the_host_has_no_device() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    let c = check(&tree, Target::Any, Ok(roce_adapter()), "roce");
    assert_status(&c, Status::Fail);
    assert!(c.detail.contains("profile RoCE-2 (NIC+RoCE) (3), function_mode 0x6"), "{}", c.detail);
    assert!(c.hint.unwrap().contains("modprobe ocrdma"));
}

#[test]
fn roce_warns_on_a_nic_profile_and_on_a_staged_one() {
    let tree = FakeTree::new();
    tree.device(addr("0000:03:00.0"), 0x10df, 0x0720).group(12).driver("be2net");
    let c = check(&tree, Target::Any, Ok(nic_adapter()), "roce");
    assert_status(&c, Status::Warn);
    assert!(c.hint.unwrap().contains("set-profile roce"));

    let mut staged = nic_adapter();
    staged.profiles.as_mut().unwrap().next = 3;
    let c = check(&tree, Target::Any, Ok(staged), "roce");
    assert_status(&c, Status::Warn);
    assert!(c.detail.contains("the RoCE profile RoCE-2 (NIC+RoCE) is staged"), "{}", c.detail);
}

#[test]
fn roce_on_the_emulator_goes_by_the_function_mode() {
    let tree = FakeTree::new();
    assert_status(&check(&tree, Target::Emulator, Ok(roce_adapter()), "roce"), Status::Pass);
    assert_status(&check(&tree, Target::Emulator, Ok(nic_adapter()), "roce"), Status::Warn);
}

#[test]
fn pfc_passes_in_sync_on_the_roce_priority() {
    let c = check(&roce_host(), Target::Any, Ok(roce_adapter()), "pfc");
    assert_status(&c, Status::Pass);
    assert_eq!(c.detail, "DCBX on; PFC enabled, willing, in_sync on priorities [5]; RoCE priority 5 (operational)");
}

#[test]
fn pfc_not_in_sync_fails_a_roce_adapter_and_warns_a_nic_one() {
    let mut d = roce_adapter();
    let unsynced = DcbxFeatureState::ENABLED | DcbxFeatureState::WILLING;
    d.dcb = Ok(DcbState::new(Ok(dcbx(unsynced)), Ok(dcbx(unsynced))));
    let c = check(&roce_host(), Target::Any, Ok(d.clone()), "pfc");
    assert_status(&c, Status::Fail);
    assert!(c.detail.contains("RoCE priority 5 (default)"), "{}", c.detail);
    assert!(c.hint.unwrap().contains("not in sync"));

    d.roce_enabled = false;
    let c = check(&roce_host(), Target::Any, Ok(d), "pfc");
    assert_status(&c, Status::Warn);
    assert!(c.detail.ends_with("(RoCE is off)"), "{}", c.detail);
}

#[test]
fn pfc_names_what_is_missing() {
    let mut off = dcbx(IN_SYNC);
    off.summary = DcbxSummary::new(0, 0, 1, 8);
    let mut d = roce_adapter();
    d.dcb = Ok(DcbState::new(Ok(off), Err("refused".into())));
    let c = check(&roce_host(), Target::Any, Ok(d.clone()), "pfc");
    assert_status(&c, Status::Fail);
    assert!(c.hint.unwrap().contains("enable DCBX"));

    let mut no_prio = dcbx(IN_SYNC);
    no_prio.pfc_priorities = [0, 0, 0, 1, 0, 0, 0, 0];
    d.dcb = Ok(DcbState::new(Ok(no_prio), Err("refused".into())));
    let c = check(&roce_host(), Target::Any, Ok(d.clone()), "pfc");
    assert_status(&c, Status::Fail);
    assert!(c.hint.unwrap().contains("0x8915"));

    d.dcb = Err("DCBX_GET_CONFIG failed: MCC_STATUS_ILLEGAL_REQUEST".into());
    let c = check(&roce_host(), Target::Any, Ok(d), "pfc");
    assert_status(&c, Status::Warn);
    assert!(c.detail.contains("ILLEGAL_REQUEST"), "{}", c.detail);
}

#[test]
fn a_healthy_roce_host_reports_no_failure() {
    let tree = roce_host();
    tree.load_module("be2net");
    tree.load_module("ocrdma");
    tree.write_proc("cmdline", "root=/dev/sda1 intel_iommu=on\n");
    tree.write_proc("self/limits", "Max locked memory         unlimited            unlimited            bytes\n");
    tree.write_proc("self/status", "CapEff:\t0000000000000000\n");
    // A real host says it is not locked down; without the file the check is a skip.
    tree.set_lockdown("[none] integrity confidentiality\n");
    let host = host_checks(tree.roots(), Target::Any, locked_memory_needed());
    let checks = report(&host, Target::Any, &Ok(roce_adapter()));
    assert!(!has_failures(&checks), "{checks:#?}");
    assert!(checks.iter().filter(|c| c.id != "nfs_rdma").all(|c| c.status == Status::Pass), "{checks:#?}");
}
