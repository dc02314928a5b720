//! Test support: a fake sysfs + /dev + /proc tree in a temporary folder, laid out like the
//! kernel's, and a fake kernel that acts on sysfs writes (bind, unbind, probe) the way the PCI core
//! does. Built for this crate's tests and, with the `test-support` feature, for other crates'.
//!
//! `driver_override` is modelled as the kernel holds it, not as it reads: the kernel keeps a
//! string or nothing (`pci_dev.driver_override`), and the attribute shows `"%s\n"` of it, which
//! prints `(null)` both when nothing is set and when the literal string `(null)` was written. So
//! the fake keeps what the kernel holds beside the tree ([`FakeTree::driver_override`]), the
//! attribute file shows it the kernel's way, and a probe obeys what is held: a written `(null)`
//! is an override that no driver matches, as on a real kernel.
//!
//! Every helper panics when the temporary tree cannot be written: that is a broken test machine,
//! and the test should stop there.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod overrides;
#[cfg(test)]
mod tests;

pub use overrides::stored_override;
use overrides::{Overrides, show_override};

use crate::PciAddress;
use crate::handoff::SysfsWrite;
use crate::sysfs::{Roots, VFIO_PCI};

/// A fake tree: `<tmp>/sys/...`, `<tmp>/dev/...` and `<tmp>/proc/...`, and `<tmp>/run` as the
/// runtime folder (created by the first hand-off record).
#[derive(Debug)]
pub struct FakeTree {
    _dir: tempfile::TempDir,
    roots: Roots,
    /// What the kernel holds as each function's `driver_override` ([`Overrides`]).
    overrides: Overrides,
}

impl FakeTree {
    /// An empty PCI bus: `bus/pci/{devices,drivers,drivers_probe}`, `kernel/iommu_groups`,
    /// `/dev/vfio/vfio`, vfio-pci loaded, and an empty `/proc`.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let roots = Roots::new(dir.path().join("sys"), dir.path().join("dev"))
            .with_proc(dir.path().join("proc"))
            .with_run(dir.path().join("run"));
        std::fs::create_dir_all(&roots.proc).unwrap();
        for sub in
            ["bus/pci/devices", "bus/pci/drivers", "kernel/iommu_groups", "kernel/security", "devices/pci0000:00"]
        {
            std::fs::create_dir_all(roots.sysfs.join(sub)).unwrap();
        }
        std::fs::write(roots.drivers_probe(), "").unwrap();
        std::fs::create_dir_all(roots.dev.join("vfio")).unwrap();
        std::fs::write(roots.dev.join("vfio/vfio"), "").unwrap();
        let overrides = Overrides(dir.path().join("kernel-state/driver_override"));
        std::fs::create_dir_all(&overrides.0).unwrap();
        let tree = Self { _dir: dir, roots, overrides };
        tree.load_driver(VFIO_PCI);
        tree
    }

    /// The roots to pass to the code under test.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// Registers driver `name` (its folder with `bind` and `unbind`).
    pub fn load_driver(&self, name: &str) {
        let dir = self.roots.driver_dir(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("bind"), "").unwrap();
        std::fs::write(dir.join("unbind"), "").unwrap();
    }

    /// Unregisters driver `name`.
    pub fn unload_driver(&self, name: &str) {
        std::fs::remove_dir_all(self.roots.driver_dir(name)).unwrap();
    }

    /// Unloads vfio-pci and removes `/dev/vfio/vfio`, as on a host that never loaded VFIO.
    pub fn without_vfio(&self) {
        self.unload_driver(VFIO_PCI);
        std::fs::remove_file(self.roots.dev.join("vfio/vfio")).unwrap();
    }

    /// Marks kernel module `name` loaded (its `/sys/module/<name>` folder).
    pub fn load_module(&self, name: &str) {
        std::fs::create_dir_all(self.roots.sysfs.join("module").join(name.replace('-', "_"))).unwrap();
    }

    /// Writes `text` to `<proc>/<rel>`, creating folders.
    pub fn write_proc(&self, rel: &str, text: &str) {
        let path = self.roots.proc.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Writes `text` to `<sysfs>/<rel>`, creating folders.
    pub fn write_sys(&self, rel: &str, text: &str) {
        let path = self.roots.sysfs.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Adds RDMA device `name` on PCI function `function` with one port per `(state, link_layer)`,
    /// as `/sys/class/infiniband/<name>` (state written the kernel's way, e.g. `4: ACTIVE`).
    pub fn rdma_device(&self, name: &str, function: PciAddress, ports: &[(&str, &str)]) {
        let dir = self.roots.sysfs.join("class/infiniband").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        symlink(format!("../../../devices/pci0000:00/{function}"), dir.join("device")).unwrap();
        for (i, (state, link_layer)) in ports.iter().enumerate() {
            let code = match *state {
                "DOWN" => 1,
                "INIT" => 2,
                "ARMED" => 3,
                "ACTIVE" => 4,
                _ => 0,
            };
            let port = dir.join("ports").join((i + 1).to_string());
            std::fs::create_dir_all(&port).unwrap();
            std::fs::write(port.join("state"), format!("{code}: {state}\n")).unwrap();
            std::fs::write(port.join("link_layer"), format!("{link_layer}\n")).unwrap();
        }
    }

    /// Makes the process look like root with every capability (`<proc>/self/status`).
    pub fn as_root(&self) {
        self.write_proc("self/status", "Name:\tocetool\nUid:\t0\t0\t0\t0\nCapEff:\t000001ffffffffff\n");
    }

    /// Makes the process look like an ordinary user with no capabilities.
    pub fn as_user(&self) {
        self.write_proc("self/status", "Name:\tocetool\nUid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n");
    }

    /// Writes a huge page pool of `total` 2 MiB pages, `free` of them free (`<proc>/meminfo`).
    pub fn huge_pages(&self, total: u64, free: u64) {
        self.write_proc(
            "meminfo",
            &format!(
                "MemTotal:       16384000 kB\nHugePages_Total:   {total}\nHugePages_Free:    {free}\n\
                 HugePages_Rsvd:        0\nHugePages_Surp:        0\nHugepagesize:       2048 kB\n"
            ),
        );
    }

    /// Writes the lockdown file.
    pub fn set_lockdown(&self, text: &str) {
        std::fs::write(self.roots.lockdown_file(), text).unwrap();
    }

    /// Sets `address`'s `driver_override` as the kernel would hold it after a write (`None`:
    /// unset), and its attribute file as the kernel shows it.
    pub fn set_driver_override(&self, address: PciAddress, value: Option<&str>) {
        self.overrides.set(&self.roots, address, value);
    }

    /// The `driver_override` the kernel holds for `address` (`None`: unset). Unlike the attribute,
    /// which reads `(null)` for both, this tells an unset override from a literal `(null)`.
    pub fn driver_override(&self, address: PciAddress) -> Option<String> {
        self.overrides.get(address)
    }

    /// Adds the card's FCoE function: 10df:0724, `PCI_VENDOR_ID_EMULEX` / `PCI_DEVICE_ID_SKYHAWK`
    /// in lpfc's `lpfc_id_table` (drivers/scsi/lpfc/lpfc_ids.h; 0x0724 in lpfc_hw.h), which lpfc
    /// binds (`.driver("lpfc")`). Its class code is the fake's default: ocetool reads a class only
    /// to tell a bridge from a function.
    pub fn fcoe_function(&self, address: PciAddress) -> FakeDevice<'_> {
        self.device(address, crate::ids::VENDOR_EMULEX, 0x0724)
    }

    /// Adds the card's iSCSI function: 10df:0722, `ELX_VENDOR_ID` / `OC_SKH_ID1` in be2iscsi's
    /// `beiscsi_pci_id_table` (drivers/scsi/be2iscsi/be_main.c; the IDs in be_main.h), which
    /// be2iscsi binds (`.driver("be2iscsi")`).
    pub fn iscsi_function(&self, address: PciAddress) -> FakeDevice<'_> {
        self.device(address, crate::ids::VENDOR_EMULEX, 0x0722)
    }

    /// Adds a PCI function (class: Ethernet controller, no driver, no group, no driver_override).
    pub fn device(&self, address: PciAddress, vendor: u16, device: u16) -> FakeDevice<'_> {
        let real = self.roots.sysfs.join("devices/pci0000:00").join(address.to_string());
        std::fs::create_dir_all(&real).unwrap();
        std::fs::write(real.join("vendor"), format!("{vendor:#06x}\n")).unwrap();
        std::fs::write(real.join("device"), format!("{device:#06x}\n")).unwrap();
        std::fs::write(real.join("class"), "0x020000\n").unwrap();
        std::fs::write(real.join("subsystem_vendor"), format!("{vendor:#06x}\n")).unwrap();
        std::fs::write(real.join("subsystem_device"), "0x0000\n").unwrap();
        std::fs::write(real.join("driver_override"), show_override(None)).unwrap();
        self.overrides.clear(address);
        let link = self.roots.device_dir(address);
        if !link.exists() {
            symlink(format!("../../../devices/pci0000:00/{address}"), link).unwrap();
        }
        FakeDevice { tree: self, address }
    }

    /// Creates `/dev/vfio/<group>`, as vfio-pci does when it takes a group.
    pub fn create_group_node(&self, group: u32) {
        std::fs::write(self.roots.vfio_group_node(group), "").unwrap();
    }

    /// Binds `address` to `driver` (loading the driver if needed), as the kernel would.
    pub fn bind(&self, address: PciAddress, driver: &str) {
        if !self.roots.driver_dir(driver).exists() {
            self.load_driver(driver);
        }
        symlink(format!("../../../bus/pci/drivers/{driver}"), self.roots.device_dir(address).join("driver")).unwrap();
    }

    /// The driver `address` is bound to now.
    pub fn driver_of(&self, address: PciAddress) -> Option<String> {
        crate::sysfs::bound_driver(&self.roots, address).unwrap()
    }

    /// A host ready for ocetool and RoCE, on which every host check of `doctor` passes: an
    /// OCe14000 PF at 0000:03:00.0 in its own IOMMU group (12) bound to be2net, intel_iommu=on,
    /// vfio-pci, be2net, ocrdma and rpcrdma loaded, no lockdown, memlock unlimited, nfsd listening
    /// on RDMA.
    pub fn ready_for_roce() -> Self {
        let tree = Self::new();
        tree.device("0000:03:00.0".parse().unwrap(), 0x10df, 0x0720).group(12).driver("be2net");
        for module in ["be2net", "ocrdma", "rpcrdma"] {
            tree.load_module(module);
        }
        tree.write_proc("cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt\n");
        tree.write_proc("self/limits", LIMITS_UNLIMITED);
        tree.write_proc("self/status", "Name:\tocetool\nCapEff:\t0000000000000000\n");
        tree.write_proc("fs/nfsd/portlist", "rdma 20049\ntcp 2049\n");
        tree.write_proc("mounts", "/dev/sda1 / ext4 rw 0 0\n");
        tree.set_lockdown("[none] integrity confidentiality\n");
        tree
    }
}

/// `/proc/self/limits` with no locked-memory limit.
pub const LIMITS_UNLIMITED: &str = "Limit                     Soft Limit           Hard Limit           Units     \n\
Max locked memory         unlimited            unlimited            bytes     \n";

impl Default for FakeTree {
    fn default() -> Self {
        Self::new()
    }
}

/// A device being set up in a [`FakeTree`].
#[derive(Debug)]
pub struct FakeDevice<'t> {
    tree: &'t FakeTree,
    address: PciAddress,
}

impl FakeDevice<'_> {
    fn dir(&self) -> PathBuf {
        self.tree.roots.device_dir(self.address)
    }

    /// Puts the device in IOMMU group `group` (both links, as the kernel makes them).
    pub fn group(self, group: u32) -> Self {
        let devices = self.tree.roots.group_devices_dir(group);
        std::fs::create_dir_all(&devices).unwrap();
        symlink(format!("../../../kernel/iommu_groups/{group}"), self.dir().join("iommu_group")).unwrap();
        symlink(format!("../../../../devices/pci0000:00/{}", self.address), devices.join(self.address.to_string()))
            .unwrap();
        self
    }

    /// Binds the device to `driver`.
    pub fn driver(self, driver: &str) -> Self {
        self.tree.bind(self.address, driver);
        self
    }

    /// Sets the class code (e.g. 0x060400 for a PCI bridge).
    pub fn class(self, class: u32) -> Self {
        std::fs::write(self.dir().join("class"), format!("{class:#08x}\n")).unwrap();
        self
    }

    /// Sets the subsystem vendor and device IDs.
    pub fn subsystem(self, vendor: u16, device: u16) -> Self {
        std::fs::write(self.dir().join("subsystem_vendor"), format!("{vendor:#06x}\n")).unwrap();
        std::fs::write(self.dir().join("subsystem_device"), format!("{device:#06x}\n")).unwrap();
        self
    }

    /// Gives the device network interface `name` with its MAC and `operstate`; `speed` in Mb/s
    /// when the link is up (the kernel's `carrier` and `speed` read only while the interface is
    /// up, so they are left out otherwise).
    pub fn netdev(self, name: &str, mac: &str, operstate: &str, speed: Option<u32>) -> Self {
        let dir = self.dir().join("net").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("address"), format!("{mac}\n")).unwrap();
        std::fs::write(dir.join("operstate"), format!("{operstate}\n")).unwrap();
        if let Some(speed) = speed {
            std::fs::write(dir.join("carrier"), "1\n").unwrap();
            std::fs::write(dir.join("speed"), format!("{speed}\n")).unwrap();
        }
        self
    }

    /// Gives the device SCSI host `host<number>`, as lpfc and be2iscsi create one under each
    /// function they bind (`<device>/host<N>/scsi_host/host<N>`).
    pub fn scsi_host(self, number: u32) -> Self {
        let host = format!("host{number}");
        std::fs::create_dir_all(self.dir().join(&host).join("scsi_host").join(&host)).unwrap();
        self
    }

    /// Makes the device a VF of `pf`.
    pub fn physfn(self, pf: PciAddress) -> Self {
        symlink(format!("../{pf}"), self.dir().join("physfn")).unwrap();
        self
    }
}

/// A fake kernel: records every sysfs write and acts on it like the PCI core (driver_override,
/// `drivers/<d>/unbind`, `drivers_probe`), creating and removing `/dev/vfio/<group>`.
#[derive(Debug)]
pub struct FakeKernel {
    roots: Roots,
    overrides: Overrides,
    /// The driver that claims each device on a probe without an override (its "native" driver).
    native: HashMap<PciAddress, String>,
    /// When set, vfio-pci's probe fails (the device stays unbound).
    pub vfio_probe_fails: bool,
    /// Functions on which vfio-pci's probe fails (they stay unbound).
    vfio_probe_fails_on: Vec<PciAddress>,
    writes: Mutex<Vec<(String, String)>>,
}

impl FakeKernel {
    /// A kernel over `tree`.
    pub fn new(tree: &FakeTree) -> Self {
        Self {
            roots: tree.roots.clone(),
            overrides: tree.overrides.clone(),
            native: HashMap::new(),
            vfio_probe_fails: false,
            vfio_probe_fails_on: Vec::new(),
            writes: Mutex::default(),
        }
    }

    /// Declares `driver` as the one that claims `address` when it is probed without an override.
    pub fn native(mut self, address: PciAddress, driver: &str) -> Self {
        self.native.insert(address, driver.to_owned());
        self
    }

    /// Makes vfio-pci's probe of `address` fail (it stays unbound), as for a function the driver
    /// rejects.
    pub fn vfio_probe_fails_on(mut self, address: PciAddress) -> Self {
        self.vfio_probe_fails_on.push(address);
        self
    }

    /// Every write so far, as (path relative to the sysfs root, value).
    pub fn writes(&self) -> Vec<(String, String)> {
        self.writes.lock().unwrap().clone()
    }

    fn device_of(&self, value: &str) -> Option<PciAddress> {
        value.trim().parse().ok()
    }

    fn probe(&self, address: PciAddress) {
        let dir = self.roots.device_dir(address);
        if dir.join("driver").exists() {
            return;
        }
        // The PCI core matches only the driver the override names, whatever it is (`(null)`
        // included), and the device's ID table only when none is set (`pci_match_device`,
        // drivers/pci/pci-driver.c).
        let wanted = self.overrides.held(&self.roots, address).or_else(|| self.native.get(&address).cloned());
        let Some(driver) = wanted else { return };
        if !self.roots.driver_dir(&driver).is_dir()
            || (driver == VFIO_PCI && (self.vfio_probe_fails || self.vfio_probe_fails_on.contains(&address)))
        {
            return;
        }
        if driver == VFIO_PCI {
            let Some(group) = crate::sysfs::iommu_group(&self.roots, address).unwrap() else { return };
            std::fs::write(self.roots.vfio_group_node(group), "").unwrap();
        }
        symlink(format!("../../../bus/pci/drivers/{driver}"), dir.join("driver")).unwrap();
    }

    fn unbind(&self, driver: &str, address: PciAddress) {
        let dir = self.roots.device_dir(address);
        if crate::sysfs::bound_driver(&self.roots, address).unwrap().as_deref() != Some(driver) {
            return;
        }
        std::fs::remove_file(dir.join("driver")).unwrap();
        if driver == VFIO_PCI
            && let Some(group) = crate::sysfs::iommu_group(&self.roots, address).unwrap()
        {
            let _ = std::fs::remove_file(self.roots.vfio_group_node(group));
        }
    }
}

impl SysfsWrite for FakeKernel {
    fn write_attr(&self, path: &Path, value: &str) -> std::io::Result<()> {
        let rel = path.strip_prefix(&self.roots.sysfs).unwrap_or(path).to_string_lossy().into_owned();
        self.writes.lock().unwrap().push((rel.clone(), value.to_owned()));
        if !path.exists() {
            return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
        }
        if let Some(address) = rel.strip_suffix("/driver_override").and_then(|d| d.rsplit('/').next()) {
            let address: PciAddress =
                address.parse().map_err(|_| std::io::Error::from(std::io::ErrorKind::NotFound))?;
            // Checks first that no test wrote the attribute around the kernel.
            self.overrides.held(&self.roots, address);
            self.overrides.set(&self.roots, address, stored_override(value)?.as_deref());
        } else if rel == "bus/pci/drivers_probe" {
            if let Some(address) = self.device_of(value) {
                self.probe(address);
            }
        } else if let Some(driver) = rel.strip_prefix("bus/pci/drivers/").and_then(|r| r.strip_suffix("/unbind"))
            && let Some(address) = self.device_of(value)
        {
            self.unbind(driver, address);
        }
        Ok(())
    }
}

/// An ethtool that answers from a table, as a driver would: interface name → `fw_version`, or the
/// errno the kernel would return.
#[derive(Debug, Default)]
pub struct FakeEthtool {
    answers: HashMap<String, Result<String, i32>>,
}

impl FakeEthtool {
    /// Interface `name` reports `fw_version` (driver `be2net`).
    pub fn firmware(mut self, name: &str, fw_version: &str) -> Self {
        self.answers.insert(name.to_owned(), Ok(fw_version.to_owned()));
        self
    }

    /// Interface `name` fails with `errno`.
    pub fn fails(mut self, name: &str, errno: i32) -> Self {
        self.answers.insert(name.to_owned(), Err(errno));
        self
    }
}

impl crate::ethtool::Ethtool for FakeEthtool {
    fn driver_info(&self, name: &str) -> std::io::Result<crate::ethtool::DriverInfo> {
        match self.answers.get(name) {
            Some(Ok(fw)) => Ok(crate::ethtool::DriverInfo {
                driver: "be2net".to_owned(),
                version: String::new(),
                fw_version: fw.clone(),
                bus_info: String::new(),
            }),
            Some(Err(errno)) => Err(std::io::Error::from_raw_os_error(*errno)),
            None => Err(std::io::Error::from_raw_os_error(libc::ENODEV)),
        }
    }
}
