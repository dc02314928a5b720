//! The emulated firmware: the persistent state, the flash, WRITE_FLASHROM staging, the profiles
//! and the command handlers.

pub(crate) mod flash;
pub(crate) mod handlers;
pub mod profiles;
pub mod state;
