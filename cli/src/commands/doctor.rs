//! `ocetool doctor`: the host checks (IOMMU, vfio-pci, groups, lockdown, locked memory, drivers,
//! NFS over RDMA) and the adapter checks (pending changes, RoCE, PFC) in one report. The adapter
//! is reached through the normal device path (selection, lock, driver hand-off); when it cannot
//! be, its checks are `skip` with the reason. Exit 1 when any check fails, with the report
//! printed all the same.

use oce_mailbox::doctor::{Check, DeviceFacts, Status, Target, has_failures, locked_memory_needed, read_device_facts};
use oce_pci::PciFunction;
use oce_pci::doctor::host_checks;
use serde::Serialize;

use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, select_device};
use crate::error::{CliResult, mailbox_error};
use crate::output::{Report, printable};
use crate::session::{Job, Session, run_job};

/// The `doctor` report.
#[derive(Debug, Serialize)]
pub struct DoctorReport {
    /// The adapter the device checks are about, when one was selected.
    pub device: Option<String>,
    /// Every check, in the documented order.
    pub checks: Vec<Check>,
    /// How many checks ended in each status.
    pub summary: Summary,
    /// True when a check failed (exit code 1).
    pub failed: bool,
}

/// Counts per status.
#[derive(Debug, Default, Serialize)]
pub struct Summary {
    pub pass: usize,
    pub warn: usize,
    pub fail: usize,
    pub skip: usize,
}

/// Reads the adapter facts the device checks need.
struct ReadFacts;

impl Job for ReadFacts {
    type Output = DeviceFacts;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<DeviceFacts> {
        read_device_facts(&mut session.mbox).map_err(|e| mailbox_error("cannot read the adapter", &e))
    }
}

/// Runs every check.
pub fn run(global: &GlobalArgs) -> CliResult<DoctorReport> {
    let roots = global.roots();
    let spec = select_device(global);
    let target = match &spec {
        Ok(DeviceSpec::Pci(addr)) if global.device.is_some() => Target::Function(*addr),
        Ok(DeviceSpec::Emulator(_)) => Target::Emulator,
        _ => Target::Any,
    };
    let host = host_checks(&roots, target, locked_memory_needed());
    let device = match &spec {
        Ok(_) => run_job(global, ReadFacts).map(|h| h.output).map_err(|e| e.message),
        Err(e) => Err(e.message.clone()),
    };
    let checks = oce_mailbox::doctor::report(&host, target, &device);
    let mut summary = Summary::default();
    for c in &checks {
        *match c.status {
            Status::Pass => &mut summary.pass,
            Status::Warn => &mut summary.warn,
            Status::Fail => &mut summary.fail,
            Status::Skip => &mut summary.skip,
        } += 1;
    }
    let failed = has_failures(&checks);
    Ok(DoctorReport { device: spec.ok().map(|s| s.describe()), checks, summary, failed })
}

impl Report for DoctorReport {
    fn text(&self) -> String {
        let mut out = String::new();
        if let Some(d) = &self.device {
            out.push_str(&format!("Device: {d}\n"));
        }
        for c in &self.checks {
            let status = match c.status {
                Status::Pass => "pass",
                Status::Warn => "WARN",
                Status::Fail => "FAIL",
                Status::Skip => "skip",
            };
            out.push_str(&format!("{status:<5} {:<12} {}\n", c.id, printable(&c.detail)));
            if let Some(hint) = &c.hint {
                out.push_str(&format!("{:<18} -> {hint}\n", ""));
            }
        }
        let s = &self.summary;
        out.push_str(&format!("{} pass, {} warn, {} fail, {} skip\n", s.pass, s.warn, s.fail, s.skip));
        out
    }

    fn exit_code(&self) -> u8 {
        u8::from(self.failed)
    }
}
