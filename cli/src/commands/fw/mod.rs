//! `ocetool fw inspect|verify|update|build`: firmware images (`.ufi`).

pub mod build;
pub mod inspect;
mod progress;
pub mod update;
pub mod verify;
