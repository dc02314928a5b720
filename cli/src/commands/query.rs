//! `ocetool query`: the adapter's identity, firmware, function mode, RoCE state, profiles and
//! ports.

use oce_mailbox::adapter::read_info;
use oce_pci::PciFunction;

use crate::error::{CliResult, mailbox_error};
use crate::output::{Report, printable};
use crate::report::{QueryJson, link_text};
use crate::session::{Job, Session};
use crate::vpd::VpdJson;

/// The `query` job.
#[derive(Debug)]
pub struct Query;

impl Job for Query {
    type Output = QueryJson;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<QueryJson> {
        let info = read_info(&mut session.mbox).map_err(|e| mailbox_error("cannot query the adapter", &e))?;
        let mut doc = QueryJson::of(session.device.describe(), &info);
        doc.vpd = VpdJson::read(session.mbox.function().config());
        Ok(doc)
    }
}

impl Report for QueryJson {
    fn text(&self) -> String {
        let mut out = String::new();
        let mut line = |k: &str, v: String| out.push_str(&format!("{k:<15}{v}\n"));
        line("Adapter", format!("{}: {}", printable(&self.model), printable(&self.description)));
        line("Device", self.device.clone());
        line("PCI ID", self.pci.text());
        line("Chip", format!("{}, ASIC revision {:#04x}", self.chip.unwrap_or("unknown"), self.asic_revision));
        line("Serial", printable(&self.serial).into_owned());
        if let Some(vpd) = &self.vpd {
            line("VPD", printable(&vpd.text()).into_owned());
        }
        let fw = &self.firmware;
        let pending = if fw.running == fw.stored {
            String::new()
        } else {
            format!("  (stored {} runs after a reset)", fw.stored)
        };
        line(
            "Firmware",
            format!(
                "{}{}{}",
                printable(&fw.running),
                printable(&pending),
                if fw.backup_running { "  [BACKUP FIRMWARE RUNNING]" } else { "" }
            ),
        );
        let c = &self.components;
        for (name, version) in [("Boot code", &c.boot_code), ("UNDI", &c.undi), ("NC-SI", &c.ncsi)] {
            line(name, version.as_deref().map_or_else(|| "not reported".to_owned(), |v| printable(v).into_owned()));
        }
        line("Function mode", format!("{:#x} ({})", self.function_mode, self.function_mode_flags.join(", ")));
        line("RoCE", if self.roce_enabled { "enabled".into() } else { "disabled".into() });
        match &self.profile {
            None => line("Profile", "not visible from this function (a virtual function): query the PF".into()),
            Some(p) if p.active.id == p.next.id => line("Profile", p.active.label()),
            Some(p) => line("Profile", format!("{}  ->  {} after the next reset", p.active.label(), p.next.label())),
        }
        if self.reset_required {
            line("Reset", "required: run `ocetool reset` (or reboot) to activate the pending change".into());
        }
        out.push_str("Ports\n");
        for port in &self.ports {
            let name = port.name.as_deref().map_or_else(|| "?".into(), |n| printable(n).into_owned());
            if port.this_function {
                let link = link_text(port.link_up, port.speed_mbps);
                out.push_str(&format!(
                    "  {}  name {}  {}  {}\n",
                    port.index,
                    name,
                    port.mac.clone().unwrap_or_else(|| "-".into()),
                    link
                ));
            } else {
                out.push_str(&format!(
                    "  {}  name {}  (driven by another PCI function of the adapter)\n",
                    port.index, name
                ));
            }
        }
        out
    }
}
