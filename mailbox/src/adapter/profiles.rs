//! The profile catalogue and the next-boot profile switch (spec/protocol.md §5.8, §5.9, §6.4;
//! design.md §6, §7).
//!
//! No public source names profile IDs, so profiles are told apart by what they are: the `pf_type`
//! of the PCIe descriptor in each profile's saved configuration (MISSION_RDMA = RoCE), and, where
//! the firmware does not answer for a profile, its description.

use std::fmt;

use oce_pci::PciFunction;

use crate::commands::{
    GetActiveProfile, GetFuncConfig, GetProfileConfig, GetProfileList, PfType, ProfileList, ProfileSelector,
    SetActiveProfile,
};
use crate::{BaseStatus, BootstrapMailbox, MailboxError};

/// Most GET_PROFILE_LIST pages read: a firmware that keeps answering full pages cannot loop us.
const MAX_LIST_PAGES: usize = 6;

/// How a profile's RoCE capability was established.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceSource {
    /// The PCIe descriptor's `pf_type` in the profile's saved configuration.
    PfType,
    /// The description, because the firmware gave no PCIe descriptor for the profile.
    Description,
}

/// One profile of the adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Profile ID as the firmware numbers it.
    pub id: u8,
    /// Its index in the list.
    pub index: u8,
    /// The description.
    pub name: String,
    /// The PCIe descriptor's `pf_type`, when the firmware answered GET_PROFILE_CONFIG for it.
    pub pf_type: Option<PfType>,
    /// True for a NIC+RoCE profile.
    pub roce: bool,
    /// Where `roce` came from.
    pub roce_source: RoceSource,
}

impl Profile {
    /// True for the plain NIC profile: NIC mission, no RoCE, no storage protocol in its name.
    pub fn is_plain_nic(&self) -> bool {
        let lower = self.name.to_ascii_lowercase();
        let storage = ["iscsi", "fcoe", "roce", "rdma", "fc"].iter().any(|p| lower.contains(p));
        !self.roce && self.pf_type.is_none_or(PfType::is_nic) && !storage
    }
}

/// The profile list with the active and next-boot IDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileState {
    /// Every profile.
    pub profiles: Vec<Profile>,
    /// The running profile's ID (GET_ACTIVE_PROFILE @16).
    pub active: u16,
    /// The profile the next POST activates (GET_ACTIVE_PROFILE @18).
    pub next: u16,
}

impl ProfileState {
    /// The profile with this ID.
    pub fn by_id(&self, id: u16) -> Option<&Profile> {
        self.profiles.iter().find(|p| u16::from(p.id) == id)
    }
    /// The running profile, if it is in the list.
    pub fn active_profile(&self) -> Option<&Profile> {
        self.by_id(self.active)
    }
    /// The next-boot profile, if it is in the list.
    pub fn next_profile(&self) -> Option<&Profile> {
        self.by_id(self.next)
    }
    /// True when a different profile is staged for the next reset.
    pub fn change_pending(&self) -> bool {
        self.active != self.next
    }
}

/// Which profile the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileTarget {
    /// The plain NIC profile.
    Nic,
    /// A NIC+RoCE profile (RoCE-2 preferred when there are several).
    Roce,
    /// Exactly this ID.
    Id(u8),
}

impl std::str::FromStr for ProfileTarget {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "nic" => Ok(Self::Nic),
            "roce" => Ok(Self::Roce),
            other => {
                let id = match other.strip_prefix("0x") {
                    Some(hex) => u8::from_str_radix(hex, 16),
                    None => other.parse::<u8>(),
                };
                id.map(Self::Id).map_err(|_| format!("{s:?} is not a profile: use nic, roce, or a profile ID (0-255)"))
            }
        }
    }
}

impl fmt::Display for ProfileTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nic => f.write_str("nic"),
            Self::Roce => f.write_str("roce"),
            Self::Id(id) => write!(f, "{id}"),
        }
    }
}

/// Why a target does not name exactly one profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// No profile of that kind exists.
    #[error("the adapter has no {target} profile (profiles: {available})")]
    NoSuchProfile {
        /// What was asked for.
        target: ProfileTarget,
        /// The profiles the adapter lists, for the message.
        available: String,
    },
    /// Several candidates and no rule to choose.
    #[error("{target} matches several profiles ({candidates}); name one by ID")]
    Ambiguous {
        /// What was asked for.
        target: ProfileTarget,
        /// The candidates.
        candidates: String,
    },
    /// The adapter reports a next-boot profile other than the one just set.
    #[error("the adapter reports next-boot profile {found} after SET_ACTIVE_PROFILE {expected}")]
    NotApplied {
        /// The ID set.
        expected: u8,
        /// The ID read back.
        found: u16,
    },
}

/// Reads the profile list, the active and next IDs, and each profile's saved PCIe `pf_type`.
pub fn read_profiles<F: PciFunction>(mbox: &mut BootstrapMailbox<F>) -> Result<ProfileState, MailboxError> {
    let ids = mbox.execute(&GetActiveProfile)?;
    let own_pf = mbox.execute(&GetFuncConfig)?.nic().map(|n| n.pf_num);
    let mut profiles = Vec::new();
    for page in 0..MAX_LIST_PAGES {
        let start = profiles.len();
        let Ok(start_index) = u8::try_from(start) else { break };
        let list = mbox.execute(&GetProfileList { start_index })?;
        let full = list.entries.len() >= ProfileList::MAX_ENTRIES;
        for entry in list.entries {
            if profiles.iter().any(|p: &Profile| p.id == entry.id) {
                continue;
            }
            profiles.push(describe(mbox, entry.id, entry.index, entry.description, own_pf)?);
        }
        if !full || page + 1 == MAX_LIST_PAGES || profiles.len() == start {
            break;
        }
    }
    Ok(ProfileState { profiles, active: ids.active, next: ids.next })
}

/// Classifies one profile from its saved configuration; a firmware that refuses the per-profile
/// query (ILLEGAL_REQUEST / ILLEGAL_FIELD) leaves the description as the only evidence.
fn describe<F: PciFunction>(
    mbox: &mut BootstrapMailbox<F>,
    id: u8,
    index: u8,
    name: String,
    own_pf: Option<u8>,
) -> Result<Profile, MailboxError> {
    let query = GetProfileConfig { profile_id: id, selector: ProfileSelector::Saved, query_modifiable: false };
    let pf_type = match mbox.execute(&query) {
        Ok(config) => {
            let pcie = own_pf.and_then(|pf| config.pcie_for(pf)).or_else(|| config.pcies().next());
            pcie.map(|d| d.pf_type)
        }
        Err(MailboxError::CommandFailed { status, .. })
            if matches!(status.base, BaseStatus::IllegalRequest | BaseStatus::IllegalField) =>
        {
            None
        }
        Err(e) => return Err(e),
    };
    let (roce, roce_source) = match pf_type {
        Some(t) => (t.is_rdma(), RoceSource::PfType),
        None => (name_says_roce(&name), RoceSource::Description),
    };
    Ok(Profile { id, index, name, pf_type, roce, roce_source })
}

fn name_says_roce(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("roce") || lower.contains("rdma")
}

/// Picks the profile `target` names. `roce` prefers a profile whose name says RoCE-2 (the one
/// the vendor recommends for Linux, ecosystem.md §1.3) when several RoCE profiles exist.
pub fn resolve_target(state: &ProfileState, target: ProfileTarget) -> Result<&Profile, ProfileError> {
    let available = || state.profiles.iter().map(|p| format!("{} {:?}", p.id, p.name)).collect::<Vec<_>>().join(", ");
    let list = |ps: &[&Profile]| ps.iter().map(|p| format!("{} {:?}", p.id, p.name)).collect::<Vec<_>>().join(", ");
    let none = || ProfileError::NoSuchProfile { target, available: available() };
    match target {
        ProfileTarget::Id(id) => state.by_id(u16::from(id)).ok_or_else(none),
        ProfileTarget::Roce => {
            let roce: Vec<&Profile> = state.profiles.iter().filter(|p| p.roce).collect();
            let preferred: Vec<&Profile> = roce.iter().copied().filter(|p| is_roce2(&p.name)).collect();
            match (roce.as_slice(), preferred.as_slice()) {
                ([], _) => Err(none()),
                ([only], _) | (_, [only]) => Ok(only),
                (_, []) => Ok(roce[0]),
                (_, many) => Err(ProfileError::Ambiguous { target, candidates: list(many) }),
            }
        }
        ProfileTarget::Nic => {
            let nic: Vec<&Profile> = state.profiles.iter().filter(|p| p.is_plain_nic()).collect();
            match nic.as_slice() {
                [] => Err(none()),
                [only] => Ok(only),
                many => Err(ProfileError::Ambiguous { target, candidates: list(many) }),
            }
        }
    }
}

fn is_roce2(name: &str) -> bool {
    let compact: String = name.to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    compact.contains("roce2") || compact.contains("rocev2")
}

/// What a switch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchOutcome {
    /// True when SET_ACTIVE_PROFILE was sent.
    pub changed: bool,
    /// The state read back after the switch.
    pub after: ProfileState,
}

/// Makes `id` the next-boot profile, unless it already is, then reads the state back and checks
/// that the adapter took it. Asking for the running profile while another is pending cancels the
/// pending change (it sets the next-boot profile back to the running one).
pub fn set_next_profile<F: PciFunction>(
    mbox: &mut BootstrapMailbox<F>,
    before: &ProfileState,
    id: u8,
) -> Result<SwitchOutcome, SwitchError> {
    let changed = before.next != u16::from(id);
    if changed {
        mbox.execute(&SetActiveProfile::new(id)).map_err(SwitchError::Mailbox)?;
    }
    let ids = mbox.execute(&GetActiveProfile).map_err(SwitchError::Mailbox)?;
    if ids.next != u16::from(id) {
        return Err(SwitchError::Profile(ProfileError::NotApplied { expected: id, found: ids.next }));
    }
    let after = ProfileState { profiles: before.profiles.clone(), active: ids.active, next: ids.next };
    Ok(SwitchOutcome { changed, after })
}

/// Why a switch failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SwitchError {
    /// A command failed.
    #[error(transparent)]
    Mailbox(MailboxError),
    /// The adapter did not take the change.
    #[error(transparent)]
    Profile(ProfileError),
}
