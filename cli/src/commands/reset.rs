//! `ocetool reset`: the chip soft reset (pcicfg 0x5C bit 7, spec/protocol.md §2.5, §7.4), the
//! POST wait, and a report of what now runs. On a real adapter it is refused while another
//! function of the card stays on a host driver through it (`handoff::refuse_reset_under_drivers`).

use oce_mailbox::adapter::read_profiles;
use oce_pci::PciFunction;
use serde::Serialize;

use crate::error::{CliResult, mailbox_error, reset_error};
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
        require_physical_function(session, "a chip reset")?;
        let mbox = &mut session.mbox;
        let semaphore = if self.dry_run {
            mbox.initialize().map_err(|e| mailbox_error("cannot initialise the adapter's firmware interface", &e))?;
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
        })
    }
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
