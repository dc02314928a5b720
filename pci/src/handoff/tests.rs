//! Tests of the driver hand-off of one function against a fake sysfs tree and a fake kernel.

use std::sync::MutexGuard;

use super::*;
use crate::fake_sysfs::{FakeKernel, FakeTree};

/// The registry of live hand-offs and the recorded stop request are process-wide: these tests
/// (and the signal test, which raises SIGTERM) take turns, so that `restore_all` in one cannot
/// restore another's and a hand-off never sees another test's signal.
static SERIAL: Mutex<()> = Mutex::new(());

pub(crate) fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

const NIC: &str = "0000:03:00.0";

fn nic() -> PciAddress {
    NIC.parse().unwrap()
}

fn opts(allow_unbind: bool) -> HandOffOptions {
    HandOffOptions { allow_unbind, timeout: Duration::ZERO }
}

pub(super) fn w(path: &str, value: &str) -> (String, String) {
    (path.to_owned(), value.to_owned())
}

/// A Skyhawk PF alone in IOMMU group 7, bound to be2net.
fn be2net_tree() -> (FakeTree, Arc<FakeKernel>) {
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720).group(7).driver("be2net");
    let kernel = Arc::new(FakeKernel::new(&tree).native(nic(), "be2net"));
    (tree, kernel)
}

fn active_count() -> usize {
    ACTIVE.lock().unwrap().len()
}

#[test]
fn refuses_a_bound_device_without_unbind() {
    let _s = serial();
    let (tree, kernel) = be2net_tree();
    let err = HandOff::acquire(nic(), tree.roots(), &opts(false), kernel.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "0000:03:00.0 is bound to be2net: pass --unbind to hand it to vfio-pci for this command (be2net gets it back \
         afterwards)"
    );
    assert!(err.is_refusal());
    assert_eq!(kernel.writes(), vec![]);
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"));
}

#[test]
fn unbind_moves_to_vfio_pci_and_drop_gives_it_back() {
    let _s = serial();
    let (tree, kernel) = be2net_tree();
    let guard = HandOff::acquire(nic(), tree.roots(), &opts(true), kernel.clone()).unwrap();
    assert_eq!(
        kernel.writes(),
        vec![
            w("bus/pci/devices/0000:03:00.0/driver_override", "vfio-pci"),
            w("bus/pci/drivers/be2net/unbind", NIC),
            w("bus/pci/drivers_probe", NIC),
        ]
    );
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("vfio-pci"));
    assert!(tree.roots().dev.join("vfio/7").exists());
    assert_eq!((guard.group(), guard.original_driver(), guard.changed_binding()), (Some(7), Some("be2net"), true));
    assert_eq!(active_count(), 1);
    drop(guard);
    assert_eq!(
        kernel.writes()[3..],
        [
            w("bus/pci/devices/0000:03:00.0/driver_override", "\n"),
            w("bus/pci/drivers/vfio-pci/unbind", NIC),
            w("bus/pci/drivers_probe", NIC)
        ]
    );
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"));
    assert!(!tree.roots().dev.join("vfio/7").exists());
    assert_eq!(std::fs::read_to_string(tree.roots().device_dir(nic()).join("driver_override")).unwrap(), "(null)\n");
    assert_eq!(active_count(), 0);
}

#[test]
fn an_unbound_function_is_bound_and_left_unbound_again() {
    let _s = serial();
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720).group(7);
    let kernel = Arc::new(FakeKernel::new(&tree));
    let guard = HandOff::acquire(nic(), tree.roots(), &opts(false), kernel.clone()).unwrap();
    assert_eq!(
        kernel.writes(),
        vec![w("bus/pci/devices/0000:03:00.0/driver_override", "vfio-pci"), w("bus/pci/drivers_probe", NIC)]
    );
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("vfio-pci"));
    guard.restore().unwrap();
    assert_eq!(
        kernel.writes()[2..],
        [w("bus/pci/devices/0000:03:00.0/driver_override", "\n"), w("bus/pci/drivers/vfio-pci/unbind", NIC)]
    );
    assert_eq!(tree.driver_of(nic()), None);
}

#[test]
fn a_function_already_on_vfio_pci_is_left_alone() {
    let _s = serial();
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720).group(7).driver("vfio-pci");
    tree.create_group_node(7);
    let kernel = Arc::new(FakeKernel::new(&tree));
    let guard = HandOff::acquire(nic(), tree.roots(), &opts(false), kernel.clone()).unwrap();
    assert!(!guard.changed_binding());
    assert_eq!(guard.original_driver(), Some("vfio-pci"));
    drop(guard);
    assert_eq!(kernel.writes(), vec![]);
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("vfio-pci"));
}

#[test]
fn vfio_pci_not_loaded() {
    let _s = serial();
    let (tree, kernel) = be2net_tree();
    tree.unload_driver("vfio-pci");
    let err = HandOff::acquire(nic(), tree.roots(), &opts(true), kernel.clone()).unwrap_err();
    let expected = format!(
        "the vfio-pci driver is not loaded ({}/bus/pci/drivers/vfio-pci is missing): run `modprobe vfio-pci`",
        tree.roots().sysfs.display()
    );
    assert_eq!(err.to_string(), expected);
    assert_eq!(kernel.writes(), vec![]);
}

#[test]
fn no_iommu_group_names_the_kernel_parameters() {
    let _s = serial();
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720).driver("be2net");
    let kernel = Arc::new(FakeKernel::new(&tree));
    let err = HandOff::acquire(nic(), tree.roots(), &opts(true), kernel.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "0000:03:00.0 has no IOMMU group, so VFIO cannot reach it: enable the IOMMU with intel_iommu=on or \
         amd_iommu=on on the kernel command line (and VT-d / AMD-Vi in the firmware setup), then reboot; or let \
         ocetool use its sysfs backend (drop --backend vfio)"
    );
    assert_eq!(kernel.writes(), vec![]);
}

#[test]
fn a_group_member_of_another_device_blocks_before_anything_changes() {
    let _s = serial();
    let (tree, kernel) = be2net_tree();
    tree.device("0000:04:00.0".parse().unwrap(), 0x8086, 0x10d3).group(7).driver("e1000e");
    let err = HandOff::acquire(nic(), tree.roots(), &opts(true), kernel.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "IOMMU group 7 of 0000:03:00.0 is not viable: 0000:04:00.0 is bound to e1000e, and it is not a function of \
         this adapter, so ocetool leaves it alone; move it to vfio-pci yourself, or put the adapter in a slot with \
         an IOMMU group of its own"
    );
    assert!(err.is_refusal());
    assert_eq!(kernel.writes(), vec![]);
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"));
}

#[test]
fn a_failed_bind_is_reported_and_rolled_back() {
    let _s = serial();
    let (tree, _) = be2net_tree();
    let mut kernel = FakeKernel::new(&tree).native(nic(), "be2net");
    kernel.vfio_probe_fails = true;
    let kernel = Arc::new(kernel);
    let err = HandOff::acquire(nic(), tree.roots(), &opts(true), kernel.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "0000:03:00.0 did not move to vfio-pci within 0ns: its driver is none, and {}/vfio/7 did not appear",
            tree.roots().dev.display()
        )
    );
    // Rolled back: override cleared, nothing to unbind from vfio-pci, reprobed to be2net.
    assert_eq!(
        kernel.writes()[3..],
        [w("bus/pci/devices/0000:03:00.0/driver_override", "\n"), w("bus/pci/drivers_probe", NIC)]
    );
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"));
    assert_eq!(active_count(), 0);
}

#[test]
fn a_panic_still_gives_the_device_back() {
    let _s = serial();
    let (tree, kernel) = be2net_tree();
    let roots = tree.roots().clone();
    let k = kernel.clone();
    let result = std::panic::catch_unwind(move || {
        let _guard = HandOff::acquire(nic(), &roots, &opts(true), k).unwrap();
        panic!("command failed halfway");
    });
    assert!(result.is_err());
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"));
    assert_eq!(kernel.writes().len(), 6);
}

#[test]
fn restore_all_serves_an_exit_path_and_the_guard_then_does_nothing() {
    let _s = serial();
    let (tree, kernel) = be2net_tree();
    let guard = HandOff::acquire(nic(), tree.roots(), &opts(true), kernel.clone()).unwrap();
    assert!(restore_all().is_empty());
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"));
    assert_eq!(kernel.writes().len(), 6);
    drop(guard);
    assert_eq!(kernel.writes().len(), 6);
}

#[test]
fn an_existing_driver_override_is_put_back() {
    let _s = serial();
    let (tree, kernel) = be2net_tree();
    tree.set_driver_override(nic(), Some("be2net"));
    HandOff::acquire(nic(), tree.roots(), &opts(true), kernel.clone()).unwrap().restore().unwrap();
    assert_eq!(kernel.writes()[3], w("bus/pci/devices/0000:03:00.0/driver_override", "be2net\n"));
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"));
}

#[test]
fn a_restore_that_does_not_take_is_an_error() {
    let _s = serial();
    let (tree, kernel) = be2net_tree();
    let guard = HandOff::acquire(nic(), tree.roots(), &opts(true), kernel.clone()).unwrap();
    tree.unload_driver("be2net");
    let err = guard.restore().unwrap_err();
    assert!(
        err.to_string().starts_with("could not give 0000:03:00.0 back to be2net: it is bound to no driver"),
        "{err}"
    );
}

/// A sysfs that refuses every write with one errno.
#[derive(Debug)]
struct Refusing(i32);

impl SysfsWrite for Refusing {
    fn write_attr(&self, _: &Path, _: &str) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(self.0))
    }
}

#[test]
fn write_errors_say_what_they_mean() {
    let _s = serial();
    let (tree, _) = be2net_tree();
    let ov = tree.roots().device_dir(nic()).join("driver_override");
    let err = HandOff::acquire(nic(), tree.roots(), &opts(true), Arc::new(Refusing(libc::EACCES))).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("permission denied writing {}: moving a function between drivers needs root", ov.display())
    );
    tree.set_lockdown("none [integrity] confidentiality\n");
    let err = HandOff::acquire(nic(), tree.roots(), &opts(true), Arc::new(Refusing(libc::EPERM))).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the kernel refused to write {} while lockdown is in integrity mode: lockdown allows VFIO but blocks raw \
             PCI access (resourceN mmap, config writes through sysfs, /dev/mem), so something stricter is in force \
             here; bind the function to vfio-pci at boot (vfio-pci.ids=VENDOR:DEVICE) and retry",
            ov.display()
        )
    );
    assert_eq!(tree.driver_of(nic()).as_deref(), Some("be2net"));
}

#[test]
fn permission_and_busy_messages() {
    let path = PathBuf::from("/dev/vfio/7");
    assert_eq!(
        PciError::VfioPermission { path: path.clone() }.to_string(),
        "no permission to open /dev/vfio/7: run ocetool as root, or give your user that device node"
    );
    assert_eq!(
        PciError::VfioGroupBusy { path }.to_string(),
        "/dev/vfio/7 is already open in another process (a VM, or another ocetool?)"
    );
}

#[test]
fn a_missing_function_is_no_device() {
    let tree = FakeTree::new();
    let kernel = Arc::new(FakeKernel::new(&tree));
    let err = HandOff::acquire(nic(), tree.roots(), &opts(true), kernel).unwrap_err();
    assert!(err.is_no_device() && !err.is_refusal());
    assert_eq!(
        err.to_string(),
        format!("no PCI function 0000:03:00.0 in {}/bus/pci/devices/0000:03:00.0", tree.roots().sysfs.display())
    );
}
