//! `ocetool set-profile <nic|roce|ID>`: choose the next-boot profile, verified by reading it
//! back; idempotent (design.md §7).
//!
//! The change is one SET_ACTIVE_PROFILE command: the adapter stores the next-boot profile in its
//! NVRAM as a unit, so a process killed at any point leaves either the old or the new next-boot
//! profile.

use oce_mailbox::adapter::{ProfileTarget, SwitchError, read_profiles, resolve_target, set_next_profile};
use oce_pci::PciFunction;
use serde::Serialize;

use crate::error::{CliError, CliResult, ErrorCode, mailbox_error, profile_error};
use crate::output::{Report, confirm};
use crate::report::{FirmwareVersions, ProfilePair, ProfileRef, RunningState};
use crate::session::{Job, Session, require_physical_function, stop_point};

/// The `set-profile` job.
#[derive(Debug)]
pub struct SetProfile {
    /// What the user asked for.
    pub target: ProfileTarget,
    /// Only report.
    pub dry_run: bool,
    /// `--yes`.
    pub yes: bool,
}

/// The `set-profile` document.
#[derive(Debug, Serialize)]
pub struct SetProfileJson {
    /// True when the next-boot profile changed (with `--dry-run`: would change).
    pub changed: bool,
    /// Nothing was written.
    pub dry_run: bool,
    /// The profile `target` resolved to.
    pub target: ProfileRef,
    /// A reset or reboot is needed for the running profile to become `profile.next`.
    pub reset_required: bool,
    /// Running and next-boot profile, after the operation.
    pub profile: ProfilePair,
    /// Running and stored firmware.
    pub firmware: FirmwareVersions,
    /// `function_mode` of the running profile (changes only at the reset).
    pub function_mode: u32,
    /// RoCE in the running profile.
    pub roce_enabled: bool,
}

impl Job for SetProfile {
    type Output = SetProfileJson;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<SetProfileJson> {
        require_physical_function(session, "choosing a profile")?;
        let mbox = &mut session.mbox;
        let before = read_profiles(mbox).map_err(|e| mailbox_error("cannot read the profiles", &e))?;
        let target = resolve_target(&before, self.target).map_err(profile_error)?.clone();
        let would_change = before.next != u16::from(target.id);

        let after = if would_change && !self.dry_run {
            let active = ProfileRef::of(&before, before.active);
            confirm(
                self.yes,
                &format!(
                    "make {:?} (id {}) the profile {} runs after its next reset (it runs {} now)",
                    target.name,
                    target.id,
                    session.device.describe(),
                    active.label()
                ),
            )?;
            stop_point("set the profile")?;
            let outcome = set_next_profile(mbox, &before, target.id).map_err(|e| match e {
                SwitchError::Mailbox(e) => mailbox_error("cannot set the next-boot profile", &e),
                SwitchError::Profile(e) => profile_error(e),
                other => CliError::from_error(ErrorCode::CommandFailed, "cannot set the next-boot profile", &other),
            })?;
            outcome.after
        } else {
            before.clone()
        };

        let running = RunningState::read(mbox)?;
        Ok(SetProfileJson {
            changed: would_change,
            dry_run: self.dry_run,
            target: ProfileRef::of(&after, u16::from(target.id)),
            reset_required: after.change_pending() || running.firmware_pending(),
            profile: ProfilePair::of(&after),
            function_mode: running.function_mode.0,
            roce_enabled: running.function_mode.is_rdma(),
            firmware: running.firmware,
        })
    }
}

impl Report for SetProfileJson {
    fn text(&self) -> String {
        let p = &self.profile;
        let mut out = match (self.changed, self.dry_run) {
            (false, _) if p.next.id == p.active.id => {
                format!("The adapter already runs {}: nothing to do.\n", p.active.label())
            }
            (false, _) => format!("{} is already the next-boot profile: nothing to do.\n", p.next.label()),
            (true, true) => {
                format!("Would make {} the next-boot profile (dry run: nothing changed).\n", self.target.label())
            }
            (true, false) if p.next.id == p.active.id => {
                format!("Cancelled the pending profile change: the adapter stays on {}.\n", p.active.label())
            }
            (true, false) => format!("Next-boot profile set to {}.\n", p.next.label()),
        };
        out.push_str(&format!("Running profile: {}\n", p.active.label()));
        if self.reset_required && !self.dry_run {
            let drivers = if p.next.roce == Some(true) { "be2net and ocrdma" } else { "be2net" };
            out.push_str(&format!(
                "Reset required: run `ocetool reset` (or reboot), then load {drivers}; `ocetool query` shows the result.\n"
            ));
        }
        out
    }
}
