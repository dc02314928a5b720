//! `ocetool query` while a kernel driver (be2net) holds the function: the answer comes from the
//! kernel — firmware from the driver (`ETHTOOL_GDRVINFO`, as `ethtool -i`), interfaces, MACs,
//! link and speed from sysfs, RoCE from the RDMA devices on the function — marked
//! `"source": "kernel"`, without taking the network down. `--unbind` asks the adapter instead.

use oce_pci::driver_view;
use oce_pci::ethtool::{Ethtool, KernelEthtool};
use oce_pci::sysfs::{self, VFIO_PCI};
use oce_pci::{PciAddress, Roots, host};
use serde::Serialize;

use super::query::Query;
use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, check_supported, lock_device, select_device};
use crate::error::{CliResult, pci_error};
use crate::handoff::{Handed, repair_leftover};
use crate::output::{Report, printable};
use crate::report::{KernelQueryJson, QueryJson, link_text};
use crate::session::run_job;
use crate::vpd::VpdJson;

/// A `query` answer, from the adapter or from the kernel.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum QueryDoc {
    /// Read through the mailbox.
    Adapter(QueryJson),
    /// Read from the kernel while its driver holds the function.
    Kernel(KernelQueryJson),
    /// Reported by `ocetool emulator serve` while it holds the emulated adapter.
    Served(KernelQueryJson),
}

impl Report for QueryDoc {
    fn text(&self) -> String {
        match self {
            Self::Adapter(q) => q.text(),
            Self::Kernel(k) => k.text(),
            Self::Served(s) => super::served::served_text(s),
        }
    }
}

/// Runs `query`: from the kernel when a driver other than vfio-pci holds the function and
/// `--unbind` was not given, from the server when `ocetool emulator serve` holds the emulated
/// adapter, else through the mailbox.
pub fn run(global: &GlobalArgs) -> CliResult<Handed<QueryDoc>> {
    if let spec @ DeviceSpec::Emulator(_) = select_device(global)?
        && let Some(doc) = super::served::query_served(&spec)?
    {
        return Ok(Handed::without(QueryDoc::Served(doc)));
    }
    if !global.unbind
        && let DeviceSpec::Pci(addr) = select_device(global)?
    {
        let roots = global.roots();
        check_supported(&roots, addr)?;
        // Under the adapter's lock, so no other ocetool is moving the function meanwhile.
        let lock = lock_device(global, &DeviceSpec::Pci(addr))?;
        // A killed ocetool may have left the function on vfio-pci: its driver first.
        repair_leftover(&roots, addr)?;
        let driver =
            sysfs::bound_driver(&roots, addr).map_err(|e| pci_error(&format!("cannot read {addr}'s driver"), &e))?;
        if driver.is_some_and(|d| d != VFIO_PCI) {
            return kernel_query(&roots, addr, &KernelEthtool).map(|k| Handed::without(QueryDoc::Kernel(k)));
        }
        drop(lock);
    }
    run_job(global, Query).map(|h| Handed { output: QueryDoc::Adapter(h.output), handoff: h.handoff })
}

/// The kernel's answer for `addr`, asking `ethtool` for the driver's firmware versions.
pub fn kernel_query(roots: &Roots, addr: PciAddress, ethtool: &dyn Ethtool) -> CliResult<KernelQueryJson> {
    let view = driver_view::read(roots, addr, ethtool)
        .map_err(|e| pci_error(&format!("cannot read what the kernel knows about {addr}"), &e))?;
    let mut doc = KernelQueryJson::of(addr.to_string(), &view, host::module_loaded(roots, "ocrdma"));
    doc.vpd = VpdJson::of(oce_pci::vpd::read_sysfs(roots, addr));
    Ok(doc)
}

impl Report for KernelQueryJson {
    fn text(&self) -> String {
        let mut out = String::new();
        let mut line = |k: &str, v: String| out.push_str(&format!("{k:<15}{v}\n"));
        let driver = self.driver.as_ref().map_or("its driver", |d| d.name.as_str());
        line("Device", format!("{} (held by {driver}: what the kernel knows)", self.device));
        line("PCI ID", self.pci.text());
        line("Chip", self.chip.unwrap_or("unknown").to_owned());
        if let Some(vpd) = &self.vpd {
            line("VPD", printable(&vpd.text()).into_owned());
        }
        let fw = &self.firmware;
        line(
            "Firmware",
            match (&fw.running, &fw.stored) {
                (Some(r), Some(s)) if r != s => {
                    format!("{}  (stored {} runs after a reset)", printable(r), printable(s))
                }
                (Some(r), _) => printable(r).into_owned(),
                (None, _) => "unknown (the driver did not say)".to_owned(),
            },
        );
        let rdma: Vec<&str> =
            self.driver.as_ref().map(|d| d.rdma_devices.iter().map(|r| r.name.as_str()).collect()).unwrap_or_default();
        line(
            "RoCE",
            match self.roce_enabled {
                Some(true) => format!("running ({})", printable(&rdma.join(", "))),
                Some(false) => "not running (ocrdma is loaded and has no device here)".to_owned(),
                None => "unknown (ocrdma is not loaded)".to_owned(),
            },
        );
        out.push_str("Interfaces\n");
        for port in &self.ports {
            let link = link_text(port.link_up, port.speed_mbps);
            out.push_str(&format!(
                "  {}  {}  {link}\n",
                printable(port.netdev.as_deref().unwrap_or("?")),
                printable(port.mac.as_deref().unwrap_or("-"))
            ));
        }
        if let Some(note) = &self.note {
            out.push_str(&format!("Note: {}\n", printable(note)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use oce_pci::fake_sysfs::{FakeEthtool, FakeTree};

    use super::*;

    fn port0() -> PciAddress {
        "0000:03:00.0".parse().unwrap()
    }

    fn be2net_port(tree: &FakeTree) {
        tree.device(port0(), 0x10df, 0x0720).subsystem(0x10df, 0xe702).driver("be2net").netdev(
            "enp3s0f0",
            "00:00:c9:12:34:56",
            "up",
            Some(10_000),
        );
    }

    #[test]
    fn firmware_link_and_roce_from_the_kernel_the_rest_null_with_a_note() {
        let tree = FakeTree::new();
        be2net_port(&tree);
        tree.load_module("ocrdma");
        tree.rdma_device("ocrdma0", port0(), &[("ACTIVE", "Ethernet")]);
        let ethtool = FakeEthtool::default().firmware("enp3s0f0", "11.4.1231.6 [11.9.300.7]");
        let doc = serde_json::to_value(kernel_query(tree.roots(), port0(), &ethtool).unwrap()).unwrap();
        assert_eq!(doc["source"], "kernel");
        assert_eq!(doc["pci"]["device_id"], "0x0720");
        assert_eq!(doc["pci"]["subsystem_id"], "0xe702");
        assert_eq!(doc["chip"], "skyhawk");
        assert_eq!(doc["firmware"]["running"], "11.4.1231.6");
        assert_eq!(doc["firmware"]["stored"], "11.9.300.7");
        assert_eq!(doc["reset_required"], true);
        assert_eq!(doc["roce_enabled"], true);
        assert_eq!(doc["driver"]["name"], "be2net");
        assert_eq!(doc["driver"]["rdma_devices"][0]["name"], "ocrdma0");
        assert_eq!(doc["ports"][0]["netdev"], "enp3s0f0");
        assert_eq!(doc["ports"][0]["mac"], "00:00:c9:12:34:56");
        assert_eq!(doc["ports"][0]["link_up"], true);
        assert_eq!(doc["ports"][0]["speed_mbps"], 10_000);
        for only_the_firmware_knows in ["model", "serial", "function_mode", "profile", "asic_revision"] {
            assert!(
                doc[only_the_firmware_knows].is_null(),
                "{only_the_firmware_knows}: {}",
                doc[only_the_firmware_knows]
            );
        }
        let note = doc["note"].as_str().unwrap();
        assert!(note.contains("`ocetool --unbind query`") && note.contains("taking enp3s0f0 down"), "{note}");
    }

    #[test]
    fn one_version_means_nothing_pending_and_roce_off_only_when_ocrdma_says_so() {
        let tree = FakeTree::new();
        be2net_port(&tree);
        let ethtool = FakeEthtool::default().firmware("enp3s0f0", "11.4.1231.6");
        let doc = serde_json::to_value(kernel_query(tree.roots(), port0(), &ethtool).unwrap()).unwrap();
        assert_eq!(doc["firmware"]["stored"], "11.4.1231.6");
        assert!(doc["reset_required"].is_null(), "a pending profile is not visible from here");
        assert!(doc["roce_enabled"].is_null(), "ocrdma not loaded: unknown");
        tree.load_module("ocrdma");
        let doc = serde_json::to_value(kernel_query(tree.roots(), port0(), &ethtool).unwrap()).unwrap();
        assert_eq!(doc["roce_enabled"], false);
        let text = QueryDoc::Kernel(kernel_query(tree.roots(), port0(), &ethtool).unwrap()).text();
        assert!(text.contains("held by be2net") && text.contains("enp3s0f0  00:00:c9:12:34:56  link up, 10000 Mb/s"));
    }

    #[test]
    fn a_driver_that_does_not_answer_leaves_the_firmware_null_and_says_why() {
        let tree = FakeTree::new();
        be2net_port(&tree);
        let doc =
            kernel_query(tree.roots(), port0(), &FakeEthtool::default().fails("enp3s0f0", libc::EOPNOTSUPP)).unwrap();
        assert_eq!(doc.firmware.running, None);
        let note = doc.note.unwrap();
        assert!(note.contains("no firmware version from the driver: ETHTOOL_GDRVINFO on enp3s0f0"), "{note}");
    }
}
