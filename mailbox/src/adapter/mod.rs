//! Adapter-level operations built from commands: what `ocetool query` reports, the profile
//! catalogue and the profile switch, the DCB state, the firmware dump, the port and its locate
//! LED. Each function takes a [`BootstrapMailbox`](crate::BootstrapMailbox) and returns plain
//! data; printing is the CLI's job.

mod dcb;
mod dump;
mod info;
mod port;
mod profiles;

pub use dcb::{DcbState, PrioritySource, read_dcb};
pub use dump::{DumpError, MAX_DUMP_LEN, read_fat_dump};
pub use info::{AdapterInfo, Components, Firmware, Identity, PortStatus, read_info};
pub use port::{LocateOutcome, PortReport, read_port, set_locate};
pub use profiles::{
    Profile, ProfileError, ProfileState, ProfileTarget, RoceSource, SwitchError, SwitchOutcome, read_profiles,
    resolve_target, set_next_profile,
};
