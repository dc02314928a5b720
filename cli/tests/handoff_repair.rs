//! A driver hand-off whose ocetool was killed (`kill -9`) in the middle, on a fake sysfs tree of a
//! two-port OCe14102 (both ports in IOMMU group 7 on be2net): the next ocetool run gives the
//! function back to be2net and clears its `driver_override` before anything else, and never takes
//! vfio-pci for the original driver; `restore-drivers` does the same on its own.
//!
//! The fake tree's attributes are plain files, so a small model of the kernel stands beside the
//! process: it acts on what ocetool wrote to `drivers/*/unbind` and `drivers_probe` the way the
//! PCI core does (the in-process `FakeKernel` of `oce_pci::fake_sysfs`, seen from outside).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use common::{Run, wait_until};
use oce_pci::PciAddress;
use oce_pci::fake_sysfs::FakeTree;

const PORT0: &str = "0000:03:00.0";
const PORT1: &str = "0000:03:00.1";
const GROUP: u32 = 7;

fn addr(s: &str) -> PciAddress {
    s.parse().unwrap()
}

/// The card: both ports in group 7 on be2net, each with its network interface.
fn two_port_card() -> FakeTree {
    let tree = FakeTree::new();
    for (port, netdev) in [(PORT0, "ocefake0"), (PORT1, "ocefake1")] {
        tree.device(addr(port), 0x10df, 0x0720).subsystem(0x10df, 0xe702).group(GROUP).driver("be2net").netdev(
            netdev,
            "00:00:c9:00:00:01",
            "up",
            Some(10_000),
        );
    }
    tree
}

/// ocetool on `tree`: its lock files and runtime folder in the tree too.
fn on_tree(tree: &FakeTree, args: &[&str]) -> Command {
    let mut cmd = common::on_fake_tree(tree);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

fn run(tree: &FakeTree, args: &[&str]) -> Run {
    on_tree(tree, args).output().unwrap().into()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// A function's `driver_override`, `(null)` when unset, as the kernel shows it (ocetool clears it
/// by writing a newline, which the plain file keeps).
fn driver_override(tree: &FakeTree, port: &str) -> String {
    let text = read(&tree.roots().device_dir(addr(port)).join("driver_override")).trim().to_owned();
    if text.is_empty() { "(null)".to_owned() } else { text }
}

fn record(tree: &FakeTree) -> PathBuf {
    tree.roots().run.join("handoff-0000:03:00.json")
}

/// The PCI core's answers to what was written into the fake tree's attribute files.
#[derive(Clone)]
struct FileKernel {
    sysfs: PathBuf,
    dev: PathBuf,
}

impl FileKernel {
    fn new(tree: &FakeTree) -> Self {
        Self { sysfs: tree.roots().sysfs.clone(), dev: tree.roots().dev.clone() }
    }

    /// The address written to `file` since the last look, which is emptied (before acting, so
    /// a write that follows the act is not lost).
    fn take(file: &Path) -> Option<PciAddress> {
        let text = read(file);
        if text.trim().is_empty() {
            return None;
        }
        std::fs::write(file, "").unwrap();
        text.trim().parse().ok()
    }

    fn device(&self, a: PciAddress) -> PathBuf {
        self.sysfs.join("bus/pci/devices").join(a.to_string())
    }

    fn bound(&self, a: PciAddress) -> Option<String> {
        std::fs::read_link(self.device(a).join("driver")).ok()?.file_name().map(|n| n.to_string_lossy().into_owned())
    }

    /// One pass, in the order ocetool writes (override, unbind, probe) and the kernel acts: a
    /// probe is taken first and carried out after every unbind, so an unbind written just before
    /// it (and seen only now) is done first.
    fn step(&self) {
        let probe = Self::take(&self.sysfs.join("bus/pci/drivers_probe"));
        let drivers = self.sysfs.join("bus/pci/drivers");
        for entry in std::fs::read_dir(&drivers).unwrap().flatten() {
            let driver = entry.file_name().to_string_lossy().into_owned();
            if let Some(a) = Self::take(&entry.path().join("unbind"))
                && self.bound(a).as_deref() == Some(&driver)
            {
                std::fs::remove_file(self.device(a).join("driver")).unwrap();
                if driver == "vfio-pci" {
                    let _ = std::fs::remove_file(self.dev.join(format!("vfio/{GROUP}")));
                }
            }
        }
        let Some(a) = probe else { return };
        if self.bound(a).is_some() {
            return;
        }
        let ov = read(&self.device(a).join("driver_override")).trim().to_owned();
        let driver = if ov == "(null)" || ov.is_empty() { "be2net".to_owned() } else { ov };
        if !drivers.join(&driver).is_dir() {
            return;
        }
        if driver == "vfio-pci" {
            std::fs::write(self.dev.join(format!("vfio/{GROUP}")), "").unwrap();
        }
        std::os::unix::fs::symlink(format!("../../../bus/pci/drivers/{driver}"), self.device(a).join("driver"))
            .unwrap();
    }

    /// Runs [`FileKernel::step`] every 2 ms until the returned guard drops.
    fn start(&self) -> Running {
        let stop = Arc::new(AtomicBool::new(false));
        let (kernel, flag) = (self.clone(), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                kernel.step();
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        Running { stop, thread: Some(thread) }
    }
}

struct Running {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `ocetool --unbind --yes query` killed with SIGKILL in the middle of its hand-off (port 0
/// given to vfio-pci, the wait for the bind under way), and the kernel's side of what it had
/// written carried out: port 0 left on vfio-pci with `driver_override` naming it, the record
/// behind. Returns the killed process's PID.
fn killed_mid_hand_off(tree: &FakeTree) -> u32 {
    let mut child: Child = on_tree(tree, &["--device", PORT0, "--unbind", "--yes", "--json", "query"]).spawn().unwrap();
    let probe = tree.roots().sysfs.join("bus/pci/drivers_probe");
    wait_until("the hand-off's probe of port 0", || read(&probe).trim() == PORT0);
    assert!(record(tree).exists(), "the record was written before the override");
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().code(), None, "killed by SIGKILL");
    FileKernel::new(tree).step();
    assert_eq!(tree.driver_of(addr(PORT0)).as_deref(), Some("vfio-pci"));
    assert_eq!(driver_override(tree, PORT0), "vfio-pci", "be2net could not bind port 0 now");
    child.id()
}

#[test]
fn after_a_kill_9_mid_hand_off_the_next_run_gives_be2net_back_its_function_first() {
    let tree = two_port_card();
    let pid = killed_mid_hand_off(&tree);
    let _kernel = FileKernel::new(&tree).start();
    // Without --unbind: the leftover is undone, then the query is answered from be2net's view.
    let query = run(&tree, &["--device", PORT0, "--json", "query"]);
    assert_eq!(query.code, 0, "{query:?}");
    assert_eq!(query.json()["source"], "kernel", "be2net holds port 0 again: {}", query.stdout);
    let warning = query.stderr.lines().find(|l| l.starts_with("ocetool: warning: gave back")).unwrap_or_default();
    assert!(warning.contains(&format!("by ocetool (pid {pid})")), "{}", query.stderr);
    assert!(warning.contains("0000:03:00.0 is back on be2net, 0000:03:00.1 is back on be2net"), "{warning}");
    for port in [PORT0, PORT1] {
        assert_eq!(tree.driver_of(addr(port)).as_deref(), Some("be2net"), "{port}");
        assert_eq!(driver_override(&tree, port), "(null)", "{port}");
    }
    assert!(!record(&tree).exists(), "the record is removed once both ports are back");
    // A hand-off now finds be2net, and gives both ports back to it (the fake tree has no VFIO,
    // so the command itself fails after the hand-off).
    let again = run(&tree, &["--device", PORT0, "--unbind", "--yes", "--json", "query"]);
    assert_ne!(again.code, 0, "{again:?}");
    let message = again.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("cannot open 0000:03:00.0 through the vfio backend"), "{message}");
    for port in [PORT0, PORT1] {
        assert_eq!(tree.driver_of(addr(port)).as_deref(), Some("be2net"), "{port}: not vfio-pci, the original");
        assert_eq!(driver_override(&tree, port), "(null)", "{port}");
    }
    assert!(!record(&tree).exists());
}

#[test]
fn restore_drivers_undoes_every_recorded_hand_off_and_then_finds_nothing_to_do() {
    let tree = two_port_card();
    let pid = killed_mid_hand_off(&tree);
    let _kernel = FileKernel::new(&tree).start();
    let restore = run(&tree, &["--json", "restore-drivers"]);
    assert_eq!(restore.code, 0, "{restore:?}");
    let doc = restore.json();
    assert_eq!(doc["changed"], true);
    assert_eq!(doc["restored"][0]["pid"], pid);
    assert_eq!(doc["restored"][0]["functions"][0]["driver"], "be2net");
    assert_eq!(doc["restored"][0]["functions"][1]["address"], PORT1);
    assert_eq!(tree.driver_of(addr(PORT0)).as_deref(), Some("be2net"));
    assert_eq!(driver_override(&tree, PORT0), "(null)");
    let again = run(&tree, &["restore-drivers"]);
    assert_eq!((again.code, again.stdout.as_str()), (0, "No driver hand-off left to undo.\n"), "{again:?}");
}
