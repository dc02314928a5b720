//! One module per subcommand that runs on an adapter.

pub mod fw;
pub mod list;
pub mod profiles;
pub mod query;
pub mod raw;
pub mod reset;
pub mod set_profile;
