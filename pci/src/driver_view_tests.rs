//! Tests of the kernel's view of a function on fake trees, the ethtool ioctl answered by a
//! double.

use super::*;
use crate::fake_sysfs::{FakeEthtool, FakeTree};

fn port0() -> PciAddress {
    "0000:03:00.0".parse().unwrap()
}

#[test]
fn a_be2net_port_with_its_firmware_link_and_rdma_device() {
    let tree = FakeTree::new();
    tree.device(port0(), 0x10df, 0x0720).subsystem(0x10df, 0xe702).driver("be2net").netdev(
        "enp3s0f0",
        "00:00:c9:12:34:56",
        "up",
        Some(10_000),
    );
    tree.rdma_device("ocrdma0", port0(), &[("ACTIVE", "Ethernet")]);
    tree.rdma_device("mlx5_0", "0000:05:00.0".parse().unwrap(), &[("ACTIVE", "InfiniBand")]);
    let ethtool = FakeEthtool::default().firmware("enp3s0f0", "11.4.1231.6 [11.9.300.7]");
    let view = read(tree.roots(), port0(), &ethtool).unwrap();
    assert_eq!(view.driver, "be2net");
    assert_eq!(view.ids, [0x10df, 0x0720, 0x10df, 0xe702]);
    assert_eq!(
        view.firmware,
        Some(DriverFirmware { running: "11.4.1231.6".into(), stored: "11.9.300.7".into(), driver: "be2net".into() })
    );
    assert_eq!(view.firmware_note, None);
    assert_eq!(
        view.netdevs,
        vec![NetdevState {
            name: "enp3s0f0".into(),
            mac: Some("00:00:c9:12:34:56".into()),
            operstate: "up".into(),
            link_up: true,
            speed_mbps: Some(10_000),
        }]
    );
    let rdma: Vec<&str> = view.rdma.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(rdma, ["ocrdma0"], "only the RDMA device on this function");
}

#[test]
fn a_port_that_is_down_has_no_speed_and_one_version_means_both() {
    let tree = FakeTree::new();
    tree.device(port0(), 0x10df, 0x0720).driver("be2net").netdev("eth1", "00:00:c9:00:00:02", "down", None);
    let ethtool = FakeEthtool::default().firmware("eth1", "11.4.1231.6");
    let view = read(tree.roots(), port0(), &ethtool).unwrap();
    let fw = view.firmware.unwrap();
    assert_eq!((fw.running.as_str(), fw.stored.as_str()), ("11.4.1231.6", "11.4.1231.6"));
    assert!(!view.netdevs[0].link_up);
    assert_eq!(view.netdevs[0].speed_mbps, None);
    assert!(view.rdma.is_empty());
}

#[test]
fn an_unanswered_ioctl_is_a_note_not_an_error() {
    let tree = FakeTree::new();
    tree.device(port0(), 0x10df, 0x0720).driver("be2net").netdev("eth1", "00:00:c9:00:00:02", "up", Some(1000));
    let view = read(tree.roots(), port0(), &FakeEthtool::default().fails("eth1", libc::EPERM)).unwrap();
    assert_eq!(view.firmware, None);
    assert_eq!(view.firmware_note.as_deref(), Some("ETHTOOL_GDRVINFO on eth1: Operation not permitted (os error 1)"));
    let tree = FakeTree::new();
    tree.device(port0(), 0x10df, 0x0720).driver("lpfc");
    let view = read(tree.roots(), port0(), &FakeEthtool::default()).unwrap();
    assert_eq!(view.firmware_note.as_deref(), Some("lpfc has no network interface on 0000:03:00.0 to ask"));
}

#[test]
fn a_missing_function_is_no_device() {
    let tree = FakeTree::new();
    let err = read(tree.roots(), port0(), &FakeEthtool::default()).unwrap_err();
    assert!(err.is_no_device());
}
