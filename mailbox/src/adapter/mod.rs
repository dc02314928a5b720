//! Adapter-level operations built from commands: what `ocetool query` reports, the profile
//! catalogue and the profile switch. Each function takes a [`BootstrapMailbox`](crate::BootstrapMailbox)
//! and returns plain data; printing is the CLI's job.

mod info;
mod profiles;

pub use info::{AdapterInfo, Firmware, Identity, PortStatus, read_info};
pub use profiles::{
    Profile, ProfileError, ProfileState, ProfileTarget, RoceSource, SwitchError, SwitchOutcome, read_profiles,
    resolve_target, set_next_profile,
};
