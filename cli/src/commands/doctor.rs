//! `ocetool doctor`: the host checks (IOMMU, vfio-pci, groups, lockdown, locked memory, drivers,
//! NFS over RDMA) and the adapter checks (pending changes, boot sections, RoCE, PFC) in one
//! report. The adapter
//! is reached through the normal device path (selection, lock, driver hand-off); when it cannot
//! be, its checks are `skip` with the reason. Exit 1 when any check fails, with the report
//! printed all the same.

use oce_firmware::flash::{self, BootState, Bootable, OnFlash};
use oce_mailbox::doctor::{Check, DeviceFacts, Status, Target, has_failures, locked_memory_needed, read_device_facts};
use oce_pci::PciFunction;
use oce_pci::doctor::host_checks;
use serde::Serialize;

use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, select_device};
use crate::error::{CliResult, flash_error, mailbox_error};
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
    /// The facts, and the flash as read (or why it could not be).
    type Output = (DeviceFacts, Result<OnFlash, String>);

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<Self::Output> {
        let facts = read_device_facts(&mut session.mbox).map_err(|e| mailbox_error("cannot read the adapter", &e))?;
        let flash = flash::read_flash(&mut session.mbox)
            .map_err(|e| flash_error("cannot read the flash directory", &e).message);
        Ok((facts, flash))
    }
}

/// `boot`: the boot sections of the flash directory pass their CRCs, so the next reset or power
/// cycle boots.
fn boot_check(flash: &Result<Result<OnFlash, String>, String>) -> Check {
    const ID: &str = "boot";
    let flash = match flash {
        Ok(Ok(f)) => f,
        Ok(Err(reason)) => {
            return Check::warn(ID, format!("not checked: {reason}"), "run `ocetool doctor -v` for the cause");
        }
        Err(reason) => return Check::skip(ID, format!("adapter not reachable: {reason}")),
    };
    let Some(dir) = &flash.directory else {
        let why = flash.unreadable.clone().unwrap_or_default();
        return Check::warn(
            ID,
            format!("cannot check the boot sections: {why}"),
            "ocetool cannot tell whether the next reset boots; `fw update` refuses layout changes without --force here",
        );
    };
    let at = dir.address.map_or_else(|| "op type 23's region".to_owned(), |a| format!("{a:#x}"));
    let states: Vec<String> = dir
        .boot
        .iter()
        .map(|b| {
            let state = match b.state {
                BootState::Good => "passes its CRC",
                BootState::Bad => "FAILS its CRC",
                BootState::Unchecked => "unchecked",
            };
            format!("{} {state}", b.region.section.image_type)
        })
        .collect();
    let detail = format!(
        "flash directory at {at}: {}",
        if states.is_empty() { "no boot section".to_owned() } else { states.join(", ") }
    );
    match dir.bootable() {
        Bootable::Yes => Check::pass(ID, detail),
        Bootable::No => Check::fail(
            ID,
            format!("{detail}: the next reset or power cycle fails POST"),
            "do not reset: rerun `ocetool fw update FILE` with the image that was being flashed (the firmware still runs)",
        ),
        Bootable::Unknown => Check::warn(
            ID,
            detail,
            "the adapter did not answer the CRC checks (no offset mode?); the next reset may not boot",
        ),
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
    let read = match &spec {
        Ok(_) => run_job(global, ReadFacts).map(|h| h.output).map_err(|e| e.message),
        Err(e) => Err(e.message.clone()),
    };
    let (device, flash) = match read {
        Ok((facts, flash)) => (Ok(facts), Ok(flash)),
        Err(e) => (Err(e.clone()), Err(e)),
    };
    let mut checks = oce_mailbox::doctor::report(&host, target, &device);
    checks.push(boot_check(&flash));
    checks.sort_by_key(|c| oce_mailbox::doctor::ORDER.iter().position(|id| *id == c.id).unwrap_or(usize::MAX));
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
