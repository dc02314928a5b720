//! `ocetool dcb`: the adapter's DCBX configuration as ocrdma reads it — operational and
//! administrative copies, PFC, the RoCE application priority — and the priority RoCE traffic gets.

use oce_mailbox::adapter::{DcbState, read_dcb};
use oce_mailbox::commands::{DcbxConfig, DcbxFeatureState};
use oce_pci::PciFunction;
use serde::Serialize;

use crate::error::{CliResult, mailbox_error};
use crate::output::Report;
use crate::session::{Job, Session};

/// The `dcb` job.
#[derive(Debug)]
pub struct Dcb;

/// `ocetool dcb --json`.
#[derive(Debug, Serialize)]
pub struct DcbReport {
    pub device: String,
    /// DCBX itself, with both copies of the configuration.
    pub dcbx: DcbxJson,
    /// PFC as the operational copy shows it (the administrative one when the operational copy
    /// cannot be read).
    pub pfc: Option<PfcJson>,
    /// The priority (service level) ocrdma gives RoCE traffic.
    pub roce_priority: u8,
    /// Where it comes from: `operational`, `admin`, or `default` (ocrdma's default, 5).
    pub roce_priority_source: &'static str,
}

/// `dcbx`.
#[derive(Debug, Serialize)]
pub struct DcbxJson {
    /// DCBX runs (operational copy).
    pub enabled: bool,
    /// The adapter takes the switch's PFC settings (operational copy).
    pub willing: bool,
    pub operational: ConfigJson,
    pub admin: ConfigJson,
}

/// `pfc`.
#[derive(Debug, Serialize)]
pub struct PfcJson {
    /// Which copy this is: `operational` or `admin`.
    pub copy: &'static str,
    pub enabled: bool,
    pub willing: bool,
    pub in_sync: bool,
    /// The state flags by name.
    pub state: Vec<&'static str>,
    /// Priorities PFC is on for.
    pub priorities: Vec<u8>,
    /// DCBX on, PFC enabled and in sync, on the RoCE priority: lossless RoCE works.
    pub ready_for_roce: bool,
}

/// One copy of the configuration, or why it could not be read.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ConfigJson {
    Read(Box<ConfigBody>),
    Unreadable { error: String },
}

/// A copy of the configuration.
#[derive(Debug, Serialize)]
pub struct ConfigBody {
    pub dcbx_enabled: bool,
    pub traffic_classes: u8,
    pub pfc_state: Vec<&'static str>,
    pub pfc_priorities: Vec<u8>,
    pub app_state: Vec<&'static str>,
    /// The filled application priority entries.
    pub app: Vec<AppJson>,
    /// The RoCE priority this copy gives, if any.
    pub roce_priority: Option<u8>,
}

/// An application priority entry.
#[derive(Debug, Serialize)]
pub struct AppJson {
    /// `ethertype` or `l4_port` (or `unknown (0x..)`).
    pub selector: String,
    /// The ethertype or port, as `"0x8915"`.
    pub protocol: String,
    pub priorities: Vec<u8>,
    /// The entry maps RoCE (ethertype 0x8915).
    pub roce: bool,
}

impl ConfigJson {
    fn of(cfg: &Result<DcbxConfig, String>) -> Self {
        match cfg {
            Err(error) => Self::Unreadable { error: error.clone() },
            Ok(c) => Self::Read(Box::new(ConfigBody {
                dcbx_enabled: c.dcbx_enabled(),
                traffic_classes: c.summary.traffic_classes(),
                pfc_state: c.pfc_state.names(),
                pfc_priorities: c.pfc_enabled_priorities(),
                app_state: c.app_state.names(),
                app: c
                    .app_entries()
                    .iter()
                    .map(|e| AppJson {
                        selector: e.selector().to_string(),
                        protocol: format!("{:#06x}", e.protocol),
                        priorities: e.mapped_priorities(),
                        roce: e.is_roce(),
                    })
                    .collect(),
                roce_priority: c.roce_priority(),
            })),
        }
    }
}

impl DcbReport {
    fn of(device: String, state: &DcbState) -> Self {
        let pfc_from = |copy, c: &DcbxConfig| PfcJson {
            copy,
            enabled: c.pfc_state.contains(DcbxFeatureState::ENABLED),
            willing: c.pfc_state.contains(DcbxFeatureState::WILLING),
            in_sync: c.pfc_state.contains(DcbxFeatureState::SYNC),
            state: c.pfc_state.names(),
            priorities: c.pfc_enabled_priorities(),
            ready_for_roce: copy == "operational" && state.pfc_ready_for_roce(),
        };
        let pfc = match (&state.operational, &state.admin) {
            (Ok(c), _) => Some(pfc_from("operational", c)),
            (Err(_), Ok(c)) => Some(pfc_from("admin", c)),
            _ => None,
        };
        let oper = state.operational.as_ref().ok();
        Self {
            device,
            dcbx: DcbxJson {
                enabled: oper.is_some_and(DcbxConfig::dcbx_enabled),
                willing: oper.is_some_and(|c| c.pfc_state.contains(DcbxFeatureState::WILLING)),
                operational: ConfigJson::of(&state.operational),
                admin: ConfigJson::of(&state.admin),
            },
            pfc,
            roce_priority: state.roce_priority,
            roce_priority_source: state.roce_priority_source.name(),
        }
    }
}

impl Job for Dcb {
    type Output = DcbReport;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<DcbReport> {
        let state = read_dcb(&mut session.mbox).map_err(|e| mailbox_error("cannot read the DCBX configuration", &e))?;
        Ok(DcbReport::of(session.device.describe(), &state))
    }
}

fn list(v: &[u8]) -> String {
    if v.is_empty() { "none".into() } else { v.iter().map(u8::to_string).collect::<Vec<_>>().join(", ") }
}

fn flags(v: &[&str]) -> String {
    if v.is_empty() { "off".into() } else { v.join(", ") }
}

impl Report for DcbReport {
    fn text(&self) -> String {
        let mut out = format!("Device         {}\n", self.device);
        let yes = |b: bool| if b { "yes" } else { "no" };
        out.push_str(&format!(
            "DCBX           {}, willing {}\n",
            if self.dcbx.enabled { "on" } else { "off" },
            yes(self.dcbx.willing)
        ));
        match &self.pfc {
            Some(p) => {
                out.push_str(&format!(
                    "PFC            {} ({} copy) on priorities {}; in sync with the switch: {}\n",
                    flags(&p.state),
                    p.copy,
                    list(&p.priorities),
                    yes(p.in_sync)
                ));
            }
            None => out.push_str("PFC            unknown: neither configuration could be read\n"),
        }
        out.push_str(&format!(
            "RoCE priority  {} (from the {} configuration)\n",
            self.roce_priority, self.roce_priority_source
        ));
        for (name, cfg) in [("Operational", &self.dcbx.operational), ("Admin", &self.dcbx.admin)] {
            match cfg {
                ConfigJson::Unreadable { error } => out.push_str(&format!("{name:<15}unreadable: {error}\n")),
                ConfigJson::Read(c) => {
                    out.push_str(&format!(
                        "{name:<15}DCBX {}, {} traffic classes, PFC {} on [{}], app table {}\n",
                        if c.dcbx_enabled { "on" } else { "off" },
                        c.traffic_classes,
                        flags(&c.pfc_state),
                        list(&c.pfc_priorities),
                        flags(&c.app_state)
                    ));
                    for a in &c.app {
                        out.push_str(&format!(
                            "{:<17}{} {} -> priorities {}{}\n",
                            "",
                            a.selector,
                            a.protocol,
                            list(&a.priorities),
                            if a.roce { " (RoCE)" } else { "" }
                        ));
                    }
                }
            }
        }
        if self.pfc.as_ref().is_some_and(|p| !p.ready_for_roce) {
            out.push_str("Note           lossless RoCE needs PFC enabled and in sync on the RoCE priority; see `ocetool doctor`\n");
        }
        out
    }
}
