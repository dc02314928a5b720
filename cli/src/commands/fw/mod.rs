//! `ocetool fw inspect|update|build`: firmware images (`.ufi`).

pub mod build;
pub mod inspect;
pub mod update;
