//! OneConnect firmware images (`.ufi`): the flash directory, the section CRC model, and a builder
//! of synthetic Skyhawk images.
//!
//! - [`dir`]: the flash directory — cookie, section header, 64-byte entries, image types,
//!   op-types, and the scan that finds it (ufi-firmware.md §2);
//! - [`crc`]: the CRC-trailer model the emulator and the tools share (design.md §6);
//! - [`header`]: the g3/g2 file headers and the image headers (ufi-firmware.md §1);
//! - [`build`]: [`ImageBuilder`], valid synthetic images and broken ones for rejection tests;
//! - [`optionrom`]: PCI expansion ROM structures inside option-ROM sections.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod build;
pub mod crc;
pub mod dir;
mod error;
pub mod header;
pub mod optionrom;

pub use build::{ImageBuilder, Layout};
pub use dir::{CookieForm, FlashDirectory, ImageType, OpType, SectionEntry};
pub use error::FirmwareError;
