//! `ocetool apply [--config FILE] [--dry-run]`: bring every adapter to the state the configuration
//! asks for — firmware, profile, activation — idempotently, by running the `fw update`,
//! `set-profile` and `reset` jobs in turn (design.md §10). A second run changes nothing.
//!
//! The configuration is the confirmation: `apply` never asks (it runs at boot, before be2net,
//! from the modprobe hook and the systemd unit); `--dry-run` shows what it would do.
//!
//! `--firmware-budget SECS` ([`budget`]) defers a flash whose worst case does not fit in the
//! time left, and reports it (`deferred`), so a caller under a timer never has a flash cut: the
//! modprobe hook gives 0 and leaves every flash to ocetool-apply.service, which has the time.
//! Before touching a real adapter, `apply` gives back what a killed ocetool's driver hand-off
//! left on it (`crate::handoff::repair_leftover`), and says so in the adapter's `actions`.

pub mod budget;
pub mod config;

use std::path::{Path, PathBuf};
use std::time::Duration;

use oce_firmware::flash::Policy;
use oce_mailbox::adapter::{AdapterInfo, ProfileState, read_info};
use oce_pci::discover::{Inventory, Scope, discover};
use oce_pci::{PciAddress, PciFunction, Roots, signals, sysfs};
use serde::Serialize;

use self::budget::{Budget, DeferredJson};
use self::config::{Activate, Rule, Selector};
use super::fw::update::FwUpdate;
use super::reset::Reset;
use super::set_profile::SetProfile;
use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, drivers_on_the_card, lock_device, select_device, skyhawk_adapters};
use crate::error::{CliError, CliResult, mailbox_error, pci_error};
use crate::handoff::repair_leftover;
use crate::output::{Report, printable};
use crate::report::{FirmwareJson, ProfilePair};
use crate::session::{Job, Session, Unbind, run_job_on, timeouts};

/// The `apply` document.
#[derive(Debug, Serialize)]
pub struct ApplyJson {
    config: PathBuf,
    dry_run: bool,
    /// Some adapter changed (with `--dry-run`: would change).
    changed: bool,
    /// Some adapter still needs a reset or reboot for its stored state to run.
    reset_required: bool,
    /// Some adapter's firmware flash was deferred (`--firmware-budget`): its `deferred` says why.
    deferred: bool,
    /// `--firmware-budget`, in seconds; `null` without it.
    firmware_budget_secs: Option<u64>,
    adapters: Vec<AdapterJson>,
}

/// What `apply` did on one adapter.
#[derive(Debug, Serialize)]
pub struct AdapterJson {
    device: String,
    serial: Option<String>,
    /// Index of the `[[adapter]]` rule that matched (from 0), or `null`.
    rule: Option<usize>,
    /// What was done (or, with `--dry-run`, would be), one line each, in order.
    actions: Vec<String>,
    changed: bool,
    reset_required: bool,
    roce_enabled: Option<bool>,
    profile: Option<ProfilePair>,
    firmware: Option<FirmwareJson>,
    /// The firmware flash that did not fit in `--firmware-budget` and was left for a run that has
    /// the time (ocetool-apply.service); `null` when nothing was deferred.
    deferred: Option<DeferredJson>,
    /// Why this adapter could not be brought to its state; the others are still worked on.
    error: Option<AdapterError>,
}

/// `error` of one adapter: as the top-level error document.
#[derive(Debug, Serialize)]
struct AdapterError {
    kind: &'static str,
    code: &'static str,
    message: String,
    #[serde(skip)]
    exit_code: u8,
}

/// Runs `apply`: on `--device` (or `OCETOOL_DEVICE`) only, else on every OCe14000 adapter found;
/// a flash starts only when its worst case fits in what is left of `firmware_budget`.
pub fn run(global: &GlobalArgs, path: &Path, dry_run: bool, firmware_budget: Option<Duration>) -> CliResult<ApplyJson> {
    let budget = firmware_budget.map(|limit| Budget::new(limit, timeouts(global).ready));
    let config = config::load(path)?;
    let roots = global.roots();
    // sysfs is read once: each adapter's hand-off gives back every binding it changed, so what
    // the other functions of a card are bound to is the same for every adapter in turn.
    let (targets, inventory) = match &global.device {
        Some(_) => match select_device(global)? {
            spec @ DeviceSpec::Pci(_) => (vec![spec], Some(discover_one_connect(&roots)?)),
            spec => (vec![spec], None),
        },
        None => {
            let (inventory, found) = skyhawk_adapters(global)?;
            (found.into_iter().map(DeviceSpec::Pci).collect(), Some(inventory))
        }
    };
    let mut adapters = Vec::new();
    for spec in targets {
        tracing::info!(device = %spec.describe(), "applying the configuration");
        let rules = &config.adapter;
        adapters.push(apply_one(global, &roots, inventory.as_ref(), rules, &spec, dry_run, budget));
    }
    Ok(ApplyJson {
        config: path.to_path_buf(),
        dry_run,
        changed: adapters.iter().any(|a| a.changed),
        reset_required: adapters.iter().any(|a| a.reset_required),
        deferred: adapters.iter().any(|a| a.deferred.is_some()),
        firmware_budget_secs: firmware_budget.map(|b| b.as_secs()),
        adapters,
    })
}

/// The card's slot (its PF's address) of a PCI device; `None` for the emulator.
fn slot_of(roots: &Roots, spec: &DeviceSpec) -> CliResult<Option<PciAddress>> {
    let DeviceSpec::Pci(addr) = spec else { return Ok(None) };
    let pf = sysfs::physical_function(roots, *addr).map_err(|e| pci_error(&format!("cannot read {addr}"), &e))?;
    Ok(Some(pf.unwrap_or(*addr)))
}

/// The OneConnect functions in sysfs.
fn discover_one_connect(roots: &Roots) -> CliResult<Inventory> {
    discover(roots, Scope::OneConnect).map_err(|e| pci_error("cannot read the PCI devices from sysfs", &e))
}

const NO_RULE: &str = "no rule matches this adapter: left as it is";

/// What `apply` has done on one adapter so far. The job fills it in step by step, so that when a
/// later step fails (a profile refused after a flash) the report still lists what was done.
#[derive(Debug, Default)]
struct Progress {
    serial: Option<String>,
    rule: Option<usize>,
    actions: Vec<String>,
    changed: bool,
    /// What the steps taken leave pending (with `--dry-run`: would leave).
    pending: bool,
    /// The flash left for a run with the time for it.
    deferred: Option<DeferredJson>,
    /// The adapter as read after the work (with `--dry-run`: before it); `None` when it could
    /// not be read.
    after: Option<AdapterInfo>,
}

impl Progress {
    /// The report of one adapter: what was done, the state read back, and the error that stopped
    /// the work, if one did.
    fn into_json(self, device: String, dry_run: bool, error: Option<CliError>) -> AdapterJson {
        let after = self.after.as_ref();
        AdapterJson {
            device,
            serial: self.serial,
            rule: self.rule,
            actions: self.actions,
            changed: self.changed,
            // Without a read-back (the adapter stopped answering), what the steps taken know.
            reset_required: match after {
                Some(info) if !dry_run => info.reset_required(),
                _ => self.pending,
            },
            roce_enabled: after.map(AdapterInfo::roce_enabled),
            profile: after.and_then(|i| i.profiles.as_ref()).map(ProfilePair::of),
            firmware: after.map(FirmwareJson::of),
            deferred: self.deferred,
            error: error.map(|e| AdapterError {
                kind: e.kind().name(),
                code: e.code.name(),
                exit_code: e.kind().exit_code(),
                message: e.message,
            }),
        }
    }
}

fn apply_one(
    global: &GlobalArgs,
    roots: &Roots,
    inventory: Option<&Inventory>,
    rules: &[Rule],
    spec: &DeviceSpec,
    dry_run: bool,
    budget: Option<Budget>,
) -> AdapterJson {
    let mut progress = Progress::default();
    let work = Work { global, roots, inventory, rules, spec, dry_run, budget };
    let result = work.run(&mut progress);
    progress.into_json(spec.describe(), dry_run, result.err())
}

/// What `apply` works with on one adapter.
struct Work<'a> {
    global: &'a GlobalArgs,
    roots: &'a Roots,
    inventory: Option<&'a Inventory>,
    rules: &'a [Rule],
    spec: &'a DeviceSpec,
    dry_run: bool,
    budget: Option<Budget>,
}

impl Work<'_> {
    /// Opens the adapter and brings it to the state of the first rule that matches it, recording
    /// each step in `progress`.
    fn run(self, progress: &mut Progress) -> CliResult<()> {
        let Self { global, roots, inventory, rules, spec, dry_run, budget } = self;
        let slot = slot_of(roots, spec)?;
        if let DeviceSpec::Pci(addr) = spec {
            // Before the drivers are read: what a killed run left on vfio-pci goes back first.
            let lock = lock_device(global, spec)?;
            if let Some(repaired) = repair_leftover(roots, *addr)? {
                progress.actions.push(repaired.describe());
            }
            drop(lock);
        }
        // The rules that may match before the serial is known: a slot rule for another card cannot.
        let candidates: Vec<(usize, Rule)> = rules
            .iter()
            .enumerate()
            .filter(|(_, r)| !matches!(r.selector, Selector::Slot { .. }) || r.selector.matches(slot, ""))
            .map(|(i, r)| (i, r.clone()))
            .collect();
        if candidates.is_empty() {
            progress.actions.push(NO_RULE.to_owned());
            return Ok(());
        }
        let unbind = unbind_for(&candidates, global.unbind);
        let busy = drivers_on_the_card(roots, inventory, spec)?.iter().map(ToString::to_string).collect();
        let job = ApplyAdapter { candidates, slot, busy, dry_run, budget, progress };
        run_job_on(global, spec, unbind, job).map(|_| ())
    }
}

/// A function a driver holds is taken from it only when every rule that may apply says
/// `unbind = true`; else `--unbind` asks, and without it a bound function is refused.
fn unbind_for(candidates: &[(usize, Rule)], flag: bool) -> Unbind {
    if candidates.iter().all(|(_, r)| r.unbind) {
        Unbind::Confirmed
    } else if flag {
        Unbind::Ask
    } else {
        Unbind::No
    }
}

/// The work on one open adapter.
#[derive(Debug)]
struct ApplyAdapter<'a> {
    candidates: Vec<(usize, Rule)>,
    slot: Option<PciAddress>,
    busy: Vec<String>,
    dry_run: bool,
    budget: Option<Budget>,
    progress: &'a mut Progress,
}

impl Job for ApplyAdapter<'_> {
    type Output = ();

    fn run<F: PciFunction>(mut self, session: &mut Session<F>) -> CliResult<()> {
        let info = read_info(&mut session.mbox).map_err(|e| mailbox_error("cannot query the adapter", &e))?;
        let done = self.steps(session, &info);
        if self.dry_run {
            self.progress.after = Some(info);
            return done;
        }
        if signals::pending().is_some() {
            // Stopped (SIGTERM from the hook's timeout or systemd): the command in flight has
            // finished; leave now rather than send more, so the stop ends within the time the
            // caller gives it. The report says what was done.
            return done;
        }
        // Read back what runs and is stored now, after a failed step too: a flash that went
        // through before the failure is part of the report.
        match read_info(&mut session.mbox) {
            Ok(after) => self.progress.after = Some(after),
            Err(e) if done.is_ok() => return Err(mailbox_error("cannot query the adapter", &e)),
            Err(e) => tracing::warn!(error = %e, "cannot read the adapter back after the failed step"),
        }
        done
    }
}

impl ApplyAdapter<'_> {
    /// The steps of the matching rule, in order: firmware, profile, activation.
    fn steps<F: PciFunction>(&mut self, session: &mut Session<F>, info: &AdapterInfo) -> CliResult<()> {
        let dry = self.dry_run;
        let serial = info.identity.serial.clone();
        let found = self.candidates.iter().find(|(_, r)| r.selector.matches(self.slot, &serial));
        let p = &mut *self.progress;
        p.serial = Some(serial.clone());
        p.rule = found.map(|(i, _)| *i);
        // What is stored but not running, part by part. The adapter may arrive that way (a boot
        // hook cut short after storing the profile, a `fw update` without a reset): that state is
        // pending as much as one this run stores, and `activate = "reset"` runs it too. A step
        // may also cancel it (a rule asking for the profile that runs).
        let mut firmware_pending = info.firmware.running != info.firmware.stored;
        let mut profile_pending = info.profiles.as_ref().is_some_and(ProfileState::change_pending);
        p.pending = firmware_pending || profile_pending;
        let Some((_, rule)) = found else {
            p.actions.push(NO_RULE.to_owned());
            return Ok(());
        };
        if let Some(file) = &rule.firmware {
            let policy = Policy { allow_downgrade: rule.allow_downgrade, force: false };
            let update = FwUpdate::new(file, policy, dry, true, true)?;
            update.refuse_unparsable_early()?;
            let version = update.image_version().unwrap_or_default();
            let deferred = match (&self.budget, version == info.firmware.stored) {
                (Some(budget), false) => budget.defers(file, &version, &info.firmware.stored)?,
                _ => None,
            };
            if version == info.firmware.stored {
                p.actions.push(format!("firmware {version} is already stored"));
            } else if let Some(d) = deferred {
                p.actions.push(format!(
                    "{} firmware {version} (stored: {}): flashing it may take up to {} s (40 s per 32 KiB chunk), \
                     more than the {} s left of --firmware-budget {}; a run with the time flashes it \
                     (ocetool-apply.service before be2net, or `ocetool apply`)",
                    if dry { "would defer" } else { "deferred" },
                    info.firmware.stored,
                    d.worst_case_secs,
                    d.left_secs,
                    d.budget_secs,
                ));
                p.deferred = Some(d);
            } else {
                let out = update.run(session)?;
                p.changed |= out.changed;
                firmware_pending = match (out.changed, dry) {
                    // Would be stored: pending unless it is what runs.
                    (true, true) => version != info.firmware.running,
                    _ => out.reset_required,
                };
                p.pending = firmware_pending || profile_pending;
                p.actions.push(match (out.changed, dry) {
                    (true, true) => format!("would flash firmware {version} (stored: {})", info.firmware.stored),
                    (true, false) => format!("flashed firmware {version} (was {})", info.firmware.stored),
                    (false, _) => format!("the flash already holds every section of {version}"),
                });
            }
        }
        if let Some(profile) = rule.profile {
            let out = SetProfile { target: profile.0, dry_run: dry, yes: true }.run(session)?;
            p.changed |= out.changed;
            // The target is the next-boot profile now (with --dry-run: would be).
            profile_pending = out.target.id != out.profile.active.id;
            p.pending = firmware_pending || profile_pending;
            let name = out.target.label();
            p.actions.push(match (out.changed, dry) {
                (true, true) => format!("would make {name} the next-boot profile"),
                (true, false) => format!("made {name} the next-boot profile"),
                (false, _) if out.profile.active.id == out.target.id => format!("profile {name} already runs"),
                (false, _) => format!("profile {name} is already the next-boot profile"),
            });
        }
        if rule.activate == Activate::Reset && p.pending {
            if !self.busy.is_empty() {
                p.actions.push(postponed(&self.busy));
            } else {
                let out = Reset { dry_run: dry, yes: true }.run(session)?;
                // A dry run says what the real run would change, and that resets the chip.
                p.changed |= dry || out.changed;
                // After the reset only what it could not activate is pending.
                p.pending = if dry { false } else { out.reset_required };
                p.actions.push(if dry {
                    "would reset the chip so that the stored state runs".to_owned()
                } else {
                    format!(
                        "reset the chip: {} and firmware {} now run",
                        out.profile.active.label(),
                        out.firmware.running
                    )
                });
            }
        } else if p.pending {
            p.actions.push("the stored state runs after the next reset or reboot (activate = \"next-boot\")".into());
        }
        if p.actions.is_empty() {
            p.actions.push("the rule asks for nothing".into());
        }
        Ok(())
    }
}

/// The action of an `activate = "reset"` that waits: `busy` still hold functions of the card.
fn postponed(busy: &[String]) -> String {
    format!("reset postponed: {} still bound; the stored state runs after a reboot", busy.join(", "))
}

impl ApplyJson {
    /// Each adapter whose state was read back after the work, with whether it needs a reset.
    pub fn read_back(&self) -> impl Iterator<Item = (&str, bool)> {
        self.adapters.iter().filter(|a| a.profile.is_some()).map(|a| (a.device.as_str(), a.reset_required))
    }
}

impl Report for ApplyJson {
    fn text(&self) -> String {
        let mut out = String::new();
        if self.adapters.is_empty() {
            out.push_str("No OCe14000 adapter found: nothing to apply.\n");
        }
        for a in &self.adapters {
            let serial = a.serial.as_deref().map(|s| format!(" (serial {})", printable(s))).unwrap_or_default();
            out.push_str(&format!("{}{serial}\n", a.device));
            for action in &a.actions {
                out.push_str(&format!("  {}\n", printable(action)));
            }
            if let Some(e) = &a.error {
                out.push_str(&format!("  error: {}\n", printable(&e.message)));
            }
        }
        let failed = self.adapters.iter().filter(|a| a.error.is_some()).count();
        if failed > 0 {
            out.push_str(&format!("{failed} adapter(s) could not be brought to the configured state.\n"));
        }
        out.push_str(match (self.dry_run, self.changed) {
            (false, false) if failed > 0 => "",
            (false, true) if failed > 0 => "Partly applied: the steps listed were done before the error.\n",
            (true, true) => "Dry run: nothing was changed.\n",
            (true, false) | (false, false) => "Nothing to change: every adapter is as configured.\n",
            (false, true) => "Applied.\n",
        });
        if self.reset_required {
            out.push_str("Reset required: some stored state runs only after a reset or reboot.\n");
        }
        if self.deferred {
            out.push_str("Firmware deferred: a run with the time for the flash does it (see above).\n");
        }
        out
    }

    fn exit_code(&self) -> u8 {
        self.adapters.iter().find_map(|a| a.error.as_ref().map(|e| e.exit_code)).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests;
