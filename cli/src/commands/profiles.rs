//! `ocetool profiles`: every profile, with which one runs and which runs after the next reset.

use oce_mailbox::adapter::{ProfileState, read_profiles};
use oce_pci::PciFunction;
use serde::Serialize;

use crate::error::{CliResult, mailbox_error};
use crate::output::{Report, printable};
use crate::report::ProfilePair;
use crate::session::{Job, Session};

/// The `profiles` job.
#[derive(Debug)]
pub struct Profiles;

/// One row of `profiles[]`.
#[derive(Debug, Serialize)]
pub struct ProfileRow {
    id: u8,
    name: String,
    roce: bool,
    pf_type: Option<u8>,
    active: bool,
    next: bool,
}

/// The `profiles` document.
#[derive(Debug, Serialize)]
pub struct ProfilesJson {
    profiles: Vec<ProfileRow>,
    profile: ProfilePair,
    reset_required: bool,
}

impl ProfilesJson {
    fn of(state: &ProfileState) -> Self {
        let profiles = state
            .profiles
            .iter()
            .map(|p| ProfileRow {
                id: p.id,
                name: p.name.clone(),
                roce: p.roce,
                pf_type: p.pf_type.map(|t| t.0),
                active: u16::from(p.id) == state.active,
                next: u16::from(p.id) == state.next,
            })
            .collect();
        Self { profiles, profile: ProfilePair::of(state), reset_required: state.change_pending() }
    }
}

impl Job for Profiles {
    type Output = ProfilesJson;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<ProfilesJson> {
        let state = read_profiles(&mut session.mbox).map_err(|e| mailbox_error("cannot read the profiles", &e))?;
        Ok(ProfilesJson::of(&state))
    }
}

impl Report for ProfilesJson {
    fn text(&self) -> String {
        let mut out = format!("{:>4}  {:<28} {:<5} {}\n", "ID", "PROFILE", "RoCE", "STATE");
        for p in &self.profiles {
            let state = match (p.active, p.next) {
                (true, true) => "active",
                (true, false) => "active (changes at the next reset)",
                (false, true) => "next (after the next reset)",
                _ => "",
            };
            out.push_str(&format!(
                "{:>4}  {:<28} {:<5} {}\n",
                p.id,
                printable(&p.name),
                if p.roce { "yes" } else { "no" },
                state
            ));
        }
        out
    }
}
