//! `ocetool reset`: the chip soft reset (pcicfg 0x5C bit 7, spec/protocol.md §2.5, §7.4), the
//! POST wait, and a report of what now runs. On a real adapter it is refused while another
//! function of the card stays on a host driver through it (`handoff::refuse_reset_under_drivers`).
//!
//! Before the reset, when the firmware answers, the flash is checked read-only
//! (`oce_firmware::flash::read_flash`): a directory whose boot sections (0xA0, 0xB0) both fail
//! their CRCs would not boot, and the reset is refused (exit 4) unless `--force`: the firmware
//! still runs from RAM, so a rerun of the interrupted `fw update` can still repair the flash,
//! which no command can after a failed POST.

use oce_firmware::flash::{self, Bootable, OnFlash};
use oce_mailbox::BootstrapMailbox;
use oce_mailbox::adapter::read_profiles;
use oce_pci::PciFunction;
use serde::Serialize;

use crate::error::{CliError, CliResult, ErrorCode, mailbox_error, reset_error};
use crate::output::{Report, confirm};
use crate::report::{FirmwareVersions, ProfilePair, RunningState};
use crate::session::{Job, Session, require_physical_function, stop_point};

/// The `reset` job.
#[derive(Debug)]
pub struct Reset {
    /// Only report what a reset would activate.
    pub dry_run: bool,
    /// `--yes`.
    pub yes: bool,
}

/// The `reset` document.
#[derive(Debug, Serialize)]
pub struct ResetJson {
    /// True when the chip was reset (always, unless `--dry-run`).
    pub changed: bool,
    /// Nothing was done.
    pub dry_run: bool,
    /// Still true after the reset only if something remains pending.
    pub reset_required: bool,
    /// Profiles after the reset (before it, with `--dry-run`).
    pub profile: ProfilePair,
    /// Firmware after the reset.
    pub firmware: FirmwareVersions,
    /// `function_mode` after the reset.
    pub function_mode: u32,
    /// RoCE after the reset: `function_mode` has 0x4.
    pub roce_enabled: bool,
    /// The POST semaphore after the reset.
    pub semaphore: u32,
    /// The flash as checked before the reset (`directory`, `boot[]` with each boot section's
    /// `state`), or `null` when the firmware did not answer (a hung adapter is reset unchecked).
    pub flash: Option<OnFlash>,
    /// What the check found: `yes` / `no` (then only reset with `--force`) / `unknown`.
    pub flash_bootable: Bootable,
}

/// `ocetool reset [--force]`: [`Reset`], with `--force` resetting into a flash that would not
/// boot.
#[derive(Debug)]
pub struct ResetCommand {
    /// The reset.
    pub reset: Reset,
    /// `--force`.
    pub force: bool,
}

impl Job for Reset {
    type Output = ResetJson;

    fn needs_ready_adapter(&self) -> bool {
        false
    }

    fn resets_the_chip(&self) -> bool {
        !self.dry_run
    }

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<ResetJson> {
        self.run_checked(session, false)
    }
}

impl Job for ResetCommand {
    type Output = ResetJson;

    fn needs_ready_adapter(&self) -> bool {
        self.reset.needs_ready_adapter()
    }

    fn resets_the_chip(&self) -> bool {
        self.reset.resets_the_chip()
    }

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<ResetJson> {
        self.reset.run_checked(session, self.force)
    }
}

impl Reset {
    /// The reset, refused into a flash that would not boot unless `force`.
    fn run_checked<F: PciFunction>(self, session: &mut Session<F>, force: bool) -> CliResult<ResetJson> {
        require_physical_function(session, "a chip reset")?;
        let mbox = &mut session.mbox;
        let checked = if self.dry_run {
            mbox.initialize().map_err(|e| mailbox_error("cannot initialise the adapter's firmware interface", &e))?;
            flash::read_flash(mbox).ok()
        } else {
            check_flash(mbox)
        };
        let flash_bootable = checked.as_ref().map_or(Bootable::Unknown, OnFlash::bootable);
        if flash_bootable == Bootable::No && !force && !self.dry_run {
            return Err(refuse_unbootable(checked.as_ref()));
        }
        let semaphore = if self.dry_run {
            mbox.read_semaphore().map_err(|e| mailbox_error("cannot read the POST semaphore", &e))?
        } else {
            confirm(
                self.yes,
                &format!(
                    "reset the chip of {}: every PCI function of the adapter restarts, and its links go down briefly",
                    session.device.describe()
                ),
            )?;
            stop_point("reset the adapter")?;
            // No POST wait before the reset: it also recovers an adapter whose firmware hangs.
            let sem = mbox.soft_reset().map_err(|e| reset_error("the chip reset did not complete", &e))?;
            mbox.check_ue().map_err(|e| reset_error("the adapter still reports an error after the chip reset", &e))?;
            mbox.function_reset().map_err(|e| reset_error("cannot reset the function after the chip reset", &e))?;
            sem
        };
        let profiles = read_profiles(mbox).map_err(|e| mailbox_error("cannot read the profiles", &e))?;
        let running = RunningState::read(mbox)?;
        Ok(ResetJson {
            changed: !self.dry_run,
            dry_run: self.dry_run,
            reset_required: profiles.change_pending() || running.firmware_pending(),
            profile: ProfilePair::of(&profiles),
            function_mode: running.function_mode.0,
            roce_enabled: running.function_mode.is_rdma(),
            firmware: running.firmware,
            semaphore: semaphore.0,
            flash: checked,
            flash_bootable,
        })
    }
}

/// The flash check before a reset, when the firmware can answer now: POST complete without
/// error (a hung or failed adapter is not waited for; the reset is its remedy), no UE. `None`
/// when it cannot be made.
fn check_flash<F: PciFunction>(mbox: &mut BootstrapMailbox<F>) -> Option<OnFlash> {
    let sem = mbox.read_semaphore().ok()?;
    if !sem.is_ready() || sem.is_error() || mbox.check_ue().is_err() {
        return None;
    }
    mbox.fw_init().ok()?;
    mbox.function_reset().ok()?;
    flash::read_flash(mbox).ok()
}

/// The refusal of a reset into a flash that would not boot: what fails and the remedies.
fn refuse_unbootable(flash: Option<&OnFlash>) -> CliError {
    let at = flash
        .and_then(|f| f.directory.as_ref())
        .and_then(|d| d.address)
        .map_or_else(String::new, |a| format!(" of the flash directory at {a:#x}"));
    CliError::new(
        ErrorCode::UnbootableFlash,
        format!(
            "refusing to reset: the adapter's flash would not boot (no boot section{at} passes its CRC), so the \
             adapter would fail POST and no command could reach it again; its firmware still runs: rerun `ocetool fw \
             update FILE` with the image that was being flashed, or pass --force to reset anyway"
        ),
    )
}

impl Report for ResetJson {
    fn text(&self) -> String {
        let mut out = String::new();
        if self.dry_run {
            out.push_str("Dry run: the adapter was not reset.\n");
            if self.reset_required {
                out.push_str(&format!(
                    "A reset would activate profile {} and firmware {}.\n",
                    self.profile.next.label(),
                    self.firmware.stored
                ));
            } else {
                out.push_str("Nothing is pending: a reset would change nothing.\n");
            }
            return out;
        }
        out.push_str("The adapter was reset and its firmware is ready.\n");
        if self.flash_bootable == Bootable::Unknown {
            out.push_str(
                "The flash was not checked before the reset (the firmware did not answer, or REPORT did not).\n",
            );
        }
        out.push_str(&format!("Running profile  {}\n", self.profile.active.label()));
        out.push_str(&format!("Firmware         {}\n", self.firmware.running));
        out.push_str(&format!(
            "Function mode    {:#x} (RoCE {})\n",
            self.function_mode,
            if self.roce_enabled { "enabled" } else { "disabled" }
        ));
        out
    }
}
