//! `ocetool apply [--config FILE] [--dry-run]`: bring every adapter to the state the configuration
//! asks for — firmware, profile, activation — idempotently, by running the `fw update`,
//! `set-profile` and `reset` jobs in turn (design.md §10). A second run changes nothing.
//!
//! The configuration is the confirmation: `apply` never asks (it runs at boot, before be2net,
//! from the modprobe hook and the systemd unit); `--dry-run` shows what it would do.

pub mod config;

use std::path::{Path, PathBuf};

use oce_firmware::flash::Policy;
use oce_mailbox::adapter::read_info;
use oce_pci::discover::{self, Inventory, Scope, discover};
use oce_pci::{PciAddress, PciFunction, Roots, sysfs};
use serde::Serialize;

use self::config::{Activate, Rule, Selector};
use super::fw::update::FwUpdate;
use super::reset::Reset;
use super::set_profile::SetProfile;
use crate::args::GlobalArgs;
use crate::device::{DeviceSpec, select_device, skyhawk_adapters};
use crate::error::{CliError, CliResult, mailbox_error, pci_error};
use crate::output::{Report, printable};
use crate::report::{FirmwareJson, ProfilePair};
use crate::session::{Job, Session, Unbind, run_job_on};

/// The `apply` document.
#[derive(Debug, Serialize)]
pub struct ApplyJson {
    config: PathBuf,
    dry_run: bool,
    /// Some adapter changed (with `--dry-run`: would change).
    changed: bool,
    /// Some adapter still needs a reset or reboot for its stored state to run.
    reset_required: bool,
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
    /// Why this adapter could not be brought to its state; the others are still worked on.
    error: Option<AdapterError>,
}

/// `error` of one adapter: as the top-level error document.
#[derive(Debug, Serialize)]
struct AdapterError {
    kind: &'static str,
    message: String,
    #[serde(skip)]
    exit_code: u8,
}

/// Runs `apply`: on `--device` (or `OCETOOL_DEVICE`) only, else on every OCe14000 adapter found.
pub fn run(global: &GlobalArgs, path: &Path, dry_run: bool) -> CliResult<ApplyJson> {
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
        adapters.push(apply_one(global, &roots, inventory.as_ref(), &config.adapter, &spec, dry_run));
    }
    Ok(ApplyJson {
        config: path.to_path_buf(),
        dry_run,
        changed: adapters.iter().any(|a| a.changed),
        reset_required: adapters.iter().any(|a| a.reset_required),
        adapters,
    })
}

/// The card's slot (its PF's address) of a PCI device; `None` for the emulator.
fn slot_of(roots: &Roots, spec: &DeviceSpec) -> CliResult<Option<PciAddress>> {
    let DeviceSpec::Pci(addr) = spec else { return Ok(None) };
    let pf = sysfs::physical_function(roots, *addr).map_err(|e| pci_error(&format!("cannot read {addr}"), &e))?;
    Ok(Some(pf.unwrap_or(*addr)))
}

/// Functions of the card other than `spec` that a kernel driver other than vfio-pci holds: a chip
/// reset would pull the rug from under them, so `activate = "reset"` waits for a reboot instead.
fn drivers_on_the_card(roots: &Roots, inventory: Option<&Inventory>, spec: &DeviceSpec) -> CliResult<Vec<String>> {
    let (DeviceSpec::Pci(addr), Some(inventory)) = (spec, inventory) else { return Ok(Vec::new()) };
    let card = discover::adapter_slot(roots, *addr).map_err(|e| pci_error(&format!("cannot read {addr}"), &e))?;
    Ok(inventory
        .adapters
        .iter()
        .filter(|a| a.slot == card)
        .flat_map(|a| &a.functions)
        .filter(|f| f.address != *addr)
        .filter_map(|f| f.driver.as_deref().filter(|d| *d != sysfs::VFIO_PCI).map(|d| format!("{} ({d})", f.address)))
        .collect())
}

/// The OneConnect functions in sysfs.
fn discover_one_connect(roots: &Roots) -> CliResult<Inventory> {
    discover(roots, Scope::OneConnect).map_err(|e| pci_error("cannot read the PCI devices from sysfs", &e))
}

const NO_RULE: &str = "no rule matches this adapter: left as it is";

impl AdapterJson {
    /// An adapter nothing was done to (yet): no rule, or an error before the work.
    fn untouched(device: String, action: Option<&str>, error: Option<CliError>) -> Self {
        Self {
            device,
            serial: None,
            rule: None,
            actions: action.map(str::to_owned).into_iter().collect(),
            changed: false,
            reset_required: false,
            roce_enabled: None,
            profile: None,
            firmware: None,
            error: error.map(|e| AdapterError {
                kind: e.kind.name(),
                message: e.message,
                exit_code: e.kind.exit_code(),
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
) -> AdapterJson {
    let work = || -> CliResult<Option<AdapterJson>> {
        let slot = slot_of(roots, spec)?;
        // The rules that may match before the serial is known: a slot rule for another card
        // cannot.
        let candidates: Vec<(usize, Rule)> = rules
            .iter()
            .enumerate()
            .filter(|(_, r)| !matches!(r.selector, Selector::Slot { .. }) || r.selector.matches(slot, ""))
            .map(|(i, r)| (i, r.clone()))
            .collect();
        if candidates.is_empty() {
            return Ok(None);
        }
        // A function a driver holds is taken from it only when every rule that may apply says so.
        let unbind = if candidates.iter().all(|(_, r)| r.unbind) {
            Unbind::Confirmed
        } else if global.unbind {
            Unbind::Ask
        } else {
            Unbind::No
        };
        let busy = drivers_on_the_card(roots, inventory, spec)?;
        run_job_on(global, spec, unbind, ApplyAdapter { candidates, slot, busy, dry_run }).map(|h| Some(h.output))
    };
    match work() {
        Ok(Some(done)) => done,
        Ok(None) => AdapterJson::untouched(spec.describe(), Some(NO_RULE), None),
        Err(e) => AdapterJson::untouched(spec.describe(), None, Some(e)),
    }
}

/// The work on one open adapter.
#[derive(Debug)]
struct ApplyAdapter {
    candidates: Vec<(usize, Rule)>,
    slot: Option<PciAddress>,
    busy: Vec<String>,
    dry_run: bool,
}

impl Job for ApplyAdapter {
    type Output = AdapterJson;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<AdapterJson> {
        let dry = self.dry_run;
        let info = read_info(&mut session.mbox).map_err(|e| mailbox_error("cannot query the adapter", &e))?;
        let serial = info.identity.serial.clone();
        let found = self.candidates.iter().find(|(_, r)| r.selector.matches(self.slot, &serial));
        let mut actions = Vec::new();
        let mut changed = false;
        // For a dry run: what a real run would leave pending.
        let mut pending = info.reset_required();
        match found {
            None => actions.push(NO_RULE.to_owned()),
            Some((_, rule)) => {
                if let Some(file) = &rule.firmware {
                    let policy = Policy { allow_downgrade: rule.allow_downgrade, force: false };
                    let update = FwUpdate::new(file, policy, dry, true, true)?;
                    update.refuse_unparsable_early()?;
                    let version = update.image_version().unwrap_or_default();
                    if version == info.firmware.stored {
                        actions.push(format!("firmware {version} is already stored"));
                    } else {
                        let out = update.run(session)?;
                        changed |= out.changed;
                        pending |= out.changed;
                        actions.push(match (out.changed, dry) {
                            (true, true) => {
                                format!("would flash firmware {version} (stored: {})", info.firmware.stored)
                            }
                            (true, false) => format!("flashed firmware {version} (was {})", info.firmware.stored),
                            (false, _) => format!("the flash already holds every section of {version}"),
                        });
                    }
                }
                if let Some(profile) = rule.profile {
                    let out = SetProfile { target: profile.0, dry_run: dry, yes: true }.run(session)?;
                    changed |= out.changed;
                    pending |= out.changed && out.target.id != out.profile.active.id;
                    let name = out.target.label();
                    actions.push(match (out.changed, dry) {
                        (true, true) => format!("would make {name} the next-boot profile"),
                        (true, false) => format!("made {name} the next-boot profile"),
                        (false, _) if out.profile.active.id == out.target.id => format!("profile {name} already runs"),
                        (false, _) => format!("profile {name} is already the next-boot profile"),
                    });
                }
                if rule.activate == Activate::Reset && pending {
                    if !self.busy.is_empty() {
                        actions.push(format!(
                            "reset postponed: {} still bound; the stored state runs after a reboot",
                            self.busy.join(", ")
                        ));
                    } else {
                        let out = Reset { dry_run: dry, yes: true }.run(session)?;
                        changed |= out.changed;
                        // After the reset only what it could not activate is pending.
                        pending = if dry { false } else { out.reset_required };
                        actions.push(if dry {
                            "would reset the chip so that the stored state runs".to_owned()
                        } else {
                            format!(
                                "reset the chip: {} and firmware {} now run",
                                out.profile.active.label(),
                                out.firmware.running
                            )
                        });
                    }
                } else if pending {
                    actions
                        .push("the stored state runs after the next reset or reboot (activate = \"next-boot\")".into());
                }
                if actions.is_empty() {
                    actions.push("the rule asks for nothing".into());
                }
            }
        }
        let after = if dry {
            info
        } else {
            read_info(&mut session.mbox).map_err(|e| mailbox_error("cannot query the adapter", &e))?
        };
        Ok(AdapterJson {
            device: session.device.describe(),
            serial: Some(serial),
            rule: found.map(|(i, _)| *i),
            actions,
            changed,
            reset_required: if dry { pending } else { after.reset_required() },
            roce_enabled: Some(after.roce_enabled()),
            profile: after.profiles.as_ref().map(ProfilePair::of),
            firmware: Some(FirmwareJson::of(&after)),
            error: None,
        })
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
            (true, true) => "Dry run: nothing was changed.\n",
            (true, false) | (false, false) => "Nothing to change: every adapter is as configured.\n",
            (false, true) => "Applied.\n",
        });
        if self.reset_required {
            out.push_str("Reset required: some stored state runs only after a reset or reboot.\n");
        }
        out
    }

    fn exit_code(&self) -> u8 {
        self.adapters.iter().find_map(|a| a.error.as_ref().map(|e| e.exit_code)).unwrap_or(0)
    }
}
