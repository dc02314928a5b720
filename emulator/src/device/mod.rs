//! The device's registers: configuration space, the BARs, the bootstrap mailbox doorbell and its
//! engine, POST and timing.

pub mod config;
pub(crate) mod doorbell;
pub(crate) mod mailbox;
pub(crate) mod model;
pub(crate) mod post;
pub(crate) mod timing;
