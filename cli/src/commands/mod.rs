//! One module per subcommand that runs on an adapter.

pub mod apply;
pub mod dcb;
pub mod doctor;
pub mod dump;
pub mod emulator;
pub mod fw;
pub mod generate;
pub mod list;
pub mod man_pages;
pub mod port;
pub mod profiles;
pub mod query;
pub mod query_all;
pub mod query_kernel;
pub mod raw;
pub mod reset;
pub mod restore_drivers;
pub mod served;
pub mod set_profile;
