//! Tests of the hand-off record and of [`repair`]: a hand-off whose process died before it gave
//! the functions back (simulated by forgetting the guard and its registered restores, which is
//! all a SIGKILL leaves), against a fake sysfs tree and a fake kernel.

use std::os::unix::fs::PermissionsExt;

use super::tests::serial;
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

fn opts() -> HandOffOptions {
    HandOffOptions { allow_unbind: true, timeout: Duration::ZERO }
}

/// An OCe14102: both ports in IOMMU group 7 on `driver` (`None`: unbound, as at boot before
/// be2net loads), be2net their native driver.
fn card(driver: Option<&str>) -> (FakeTree, Arc<FakeKernel>) {
    let tree = FakeTree::new();
    for port in [port0(), port1()] {
        let dev = tree.device(port, 0x10df, 0x0720).group(7);
        if let Some(d) = driver {
            dev.driver(d);
        }
    }
    tree.load_driver("be2net");
    let kernel = FakeKernel::new(&tree).native(port0(), "be2net").native(port1(), "be2net");
    (tree, Arc::new(kernel))
}

fn record_path(tree: &FakeTree) -> PathBuf {
    tree.roots().run.join("handoff-0000:03:00.json")
}

fn driver_override(tree: &FakeTree, address: PciAddress) -> String {
    std::fs::read_to_string(tree.roots().device_dir(address).join("driver_override")).unwrap().trim().to_owned()
}

/// What a SIGKILL leaves of a hand-off: the moved functions where they were put, the record,
/// and no restore ever run.
fn killed(guard: HandOff) {
    std::mem::forget(guard);
    ACTIVE.lock().unwrap().clear();
}

/// A sysfs that checks, at the first write, that the record is already on disk.
#[derive(Debug)]
struct RecordFirst {
    kernel: Arc<FakeKernel>,
    record: PathBuf,
    seen_at_first_write: Mutex<Option<bool>>,
}

impl SysfsWrite for RecordFirst {
    fn write_attr(&self, path: &Path, value: &str) -> io::Result<()> {
        self.seen_at_first_write.lock().unwrap().get_or_insert(self.record.exists());
        self.kernel.write_attr(path, value)
    }
}

#[test]
fn the_record_is_written_before_the_first_sysfs_write_root_only_and_removed_after_the_restore() {
    let _s = serial();
    let (tree, kernel) = card(Some("be2net"));
    let path = record_path(&tree);
    let writer = Arc::new(RecordFirst { kernel, record: path.clone(), seen_at_first_write: Mutex::default() });
    let guard = HandOff::acquire(port0(), tree.roots(), &opts(), writer.clone()).unwrap();
    assert_eq!(*writer.seen_at_first_write.lock().unwrap(), Some(true), "the record came before the first write");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let slot = "0000:03:00";
    let rec = Record::load(tree.roots(), &path, slot).unwrap().unwrap();
    assert_eq!((rec.pid, rec.address, rec.target), (std::process::id(), port0(), Target::VfioPci));
    let expected: Vec<RecordedFunction> = [port0(), port1()]
        .into_iter()
        .map(|address| RecordedFunction { address, driver: Some("be2net".into()), driver_override: None })
        .collect();
    assert_eq!(rec.functions, expected);
    // Nothing but the record is left in the folder: the temporary file was renamed over it.
    let names: Vec<String> = std::fs::read_dir(&tree.roots().run)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["handoff-0000:03:00.json"]);
    drop(guard);
    assert!(!path.exists(), "removed once both ports are back");
    assert_eq!(tree.driver_of(port1()).as_deref(), Some("be2net"));
}

#[test]
fn a_killed_hand_off_is_refused_by_the_next_plan_and_undone_by_repair() {
    let _s = serial();
    let (tree, kernel) = card(Some("be2net"));
    killed(HandOff::acquire(port0(), tree.roots(), &opts(), kernel.clone()).unwrap());
    for port in [port0(), port1()] {
        assert_eq!(tree.driver_of(port).as_deref(), Some("vfio-pci"));
        assert_eq!(driver_override(&tree, port), "vfio-pci", "be2net could not bind {port} now");
    }
    // The next run does not take vfio-pci for the original driver...
    let err = Plan::new(port0(), tree.roots(), Target::VfioPci, true).unwrap_err();
    assert!(matches!(err, PciError::HandOffLeftOver { pid, .. } if pid == std::process::id()), "{err}");
    assert!(err.to_string().contains("run `ocetool restore-drivers`"), "{err}");
    // ...it gives both ports back to be2net first, and removes the record.
    let writes_before = kernel.writes().len();
    let repair = repair(tree.roots(), port1(), Duration::ZERO, kernel.clone()).unwrap().unwrap();
    assert_eq!((repair.pid, repair.address, repair.record), (std::process::id(), port0(), record_path(&tree)));
    let back: Vec<(PciAddress, Option<&str>)> =
        repair.functions.iter().map(|r| (r.address, r.driver.as_deref())).collect();
    assert_eq!(back, [(port0(), Some("be2net")), (port1(), Some("be2net"))]);
    for port in [port0(), port1()] {
        assert_eq!(tree.driver_of(port).as_deref(), Some("be2net"));
        assert_eq!(driver_override(&tree, port), "(null)");
    }
    assert!(!record_path(&tree).exists());
    assert!(kernel.writes().len() > writes_before);
    // The next hand-off finds be2net, and gives the ports back to it.
    let guard = HandOff::acquire(port0(), tree.roots(), &opts(), kernel.clone()).unwrap();
    assert_eq!(guard.original_driver(), Some("be2net"));
    drop(guard);
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("be2net"));
    // Nothing recorded: nothing to repair.
    assert_eq!(repair_now(&tree, &kernel), None);
}

fn repair_now(tree: &FakeTree, kernel: &Arc<FakeKernel>) -> Option<Repair> {
    repair(tree.roots(), port0(), Duration::ZERO, kernel.clone()).unwrap()
}

#[test]
fn at_boot_before_be2net_loads_the_repair_leaves_the_functions_unbound_for_it() {
    let _s = serial();
    // The modprobe hook runs before be2net is loaded: the functions are unbound.
    let (tree, kernel) = card(None);
    killed(HandOff::acquire(port0(), tree.roots(), &opts(), kernel.clone()).unwrap());
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("vfio-pci"));
    let repair = repair_now(&tree, &kernel).unwrap();
    assert!(repair.functions.iter().all(|r| r.driver.is_none()));
    for port in [port0(), port1()] {
        assert_eq!(tree.driver_of(port), None);
        assert_eq!(driver_override(&tree, port), "(null)", "be2net binds {port} when it loads");
    }
}

#[test]
fn a_recorded_driver_that_is_not_loaded_leaves_the_function_unbound_with_its_override_cleared() {
    let _s = serial();
    let (tree, kernel) = card(Some("be2net"));
    killed(HandOff::acquire(port0(), tree.roots(), &opts(), kernel.clone()).unwrap());
    tree.unload_driver("be2net");
    let repair = repair_now(&tree, &kernel).unwrap();
    assert_eq!(repair.functions.iter().map(|r| r.driver.clone()).collect::<Vec<_>>(), [None, None]);
    assert_eq!((tree.driver_of(port0()), driver_override(&tree, port0()).as_str()), (None, "(null)"));
    assert!(!record_path(&tree).exists());
}

#[test]
fn a_kill_between_two_moves_is_undone_for_the_moved_function_and_leaves_the_other_alone() {
    let _s = serial();
    let (tree, kernel) = card(Some("be2net"));
    killed(HandOff::acquire(port0(), tree.roots(), &opts(), kernel.clone()).unwrap());
    // Port 1 had not moved yet: as it was before the hand-off.
    tree.set_driver_override(port1(), None);
    std::fs::remove_file(tree.roots().device_dir(port1()).join("driver")).unwrap();
    tree.bind(port1(), "be2net");
    let before = kernel.writes().len();
    repair_now(&tree, &kernel).unwrap();
    let port1_writes = kernel.writes()[before..].iter().filter(|(p, v)| p.contains(PORT1) || v == PORT1).count();
    assert_eq!(port1_writes, 0, "{:?}", &kernel.writes()[before..]);
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("be2net"));
}

#[test]
fn a_repair_that_fails_keeps_the_record_for_the_next_run() {
    let _s = serial();
    let (tree, kernel) = card(Some("be2net"));
    killed(HandOff::acquire(port0(), tree.roots(), &opts(), kernel.clone()).unwrap());
    // be2net does not take the function back (the kernel model without a native driver).
    let stubborn = Arc::new(FakeKernel::new(&tree));
    let err = repair(tree.roots(), port0(), Duration::ZERO, stubborn).unwrap_err();
    assert!(matches!(err, PciError::RepairFailed { .. }), "{err}");
    assert!(err.to_string().contains("record kept in"), "{err}");
    assert!(record_path(&tree).exists());
    assert!(repair_now(&tree, &kernel).is_some(), "the next run completes it");
}

#[test]
fn restore_all_removes_the_record_of_every_hand_off_it_gives_back() {
    let _s = serial();
    let (tree, kernel) = card(Some("be2net"));
    let guard = HandOff::acquire(port0(), tree.roots(), &opts(), kernel.clone()).unwrap();
    assert!(restore_all().is_empty());
    assert!(!record_path(&tree).exists());
    drop(guard);
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("be2net"));
}

/// A record as a killed ocetool would leave it, written by hand with `text`.
fn plant(tree: &FakeTree, text: &str, mode: u32) -> PathBuf {
    let path = record_path(tree);
    std::fs::create_dir_all(&tree.roots().run).unwrap();
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    path
}

fn record_text(address: &str, driver: &str) -> String {
    format!(
        "{{\"format\": \"ocetool-handoff/1\", \"pid\": 4242, \"address\": \"{PORT0}\", \"target\": \"vfio_pci\", \
         \"functions\": [{{\"address\": \"{address}\", \"driver\": \"{driver}\", \"driver_override\": null}}]}}"
    )
}

#[test]
fn a_record_others_could_have_written_or_that_names_what_it_must_not_is_never_acted_on() {
    let _s = serial();
    let (tree, kernel) = card(Some("be2net"));
    let refused = |expect: &str| {
        let err = repair(tree.roots(), port0(), Duration::ZERO, kernel.clone()).unwrap_err();
        assert!(err.to_string().contains(expect), "{err}");
        assert!(kernel.writes().is_empty(), "nothing written on an untrusted record");
    };
    plant(&tree, &record_text(PORT0, "be2net"), 0o644);
    refused("its mode is 644, not 600");
    plant(&tree, &record_text(PORT0, "../../evil"), 0o600);
    refused("is not a driver name");
    tree.device("0000:04:00.0".parse().unwrap(), 0x10df, 0x0720);
    plant(&tree, &record_text("0000:04:00.0", "be2net"), 0o600);
    refused("0000:04:00.0 is not a function of the adapter in slot 0000:03:00");
    plant(&tree, "{\"format\": \"something-else\"}", 0o600);
    refused("is not valid");
    std::fs::set_permissions(&tree.roots().run, std::fs::Permissions::from_mode(0o777)).unwrap();
    plant(&tree, &record_text(PORT0, "be2net"), 0o600);
    refused("other users may write to it (mode 777)");
    std::fs::set_permissions(&tree.roots().run, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = record_path(&tree);
    std::fs::remove_file(&path).unwrap();
    let elsewhere = tree.roots().run.join("elsewhere.json");
    std::fs::write(&elsewhere, record_text(PORT0, "be2net")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    refused("Too many levels of symbolic links");
    // A plain, well-formed record of ours is acted on.
    std::fs::remove_file(&path).unwrap();
    plant(&tree, &record_text(PORT0, "be2net"), 0o600);
    assert_eq!(repair_now(&tree, &kernel).unwrap().pid, 4242);
}

#[test]
fn a_hand_off_that_cannot_write_its_record_moves_nothing() {
    let _s = serial();
    let (tree, kernel) = card(Some("be2net"));
    std::fs::create_dir_all(&tree.roots().run).unwrap();
    std::fs::set_permissions(&tree.roots().run, std::fs::Permissions::from_mode(0o777)).unwrap();
    let err = HandOff::acquire(port0(), tree.roots(), &opts(), kernel.clone()).unwrap_err();
    assert!(matches!(err, PciError::RecordUntrusted { .. }), "{err}");
    assert!(kernel.writes().is_empty());
    assert_eq!(tree.driver_of(port0()).as_deref(), Some("be2net"));
}
