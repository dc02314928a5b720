//! OneConnect firmware images (`.ufi`): parsing and checking untrusted files, compatibility with
//! an adapter, option-ROM contents, the `fw inspect` report, and a builder of synthetic Skyhawk
//! images for tests, benchmarks and the emulator's factory flash.
//!
//! - [`header`]: the g3/g2 file headers and the image headers (ufi-firmware.md §1);
//! - [`dir`]: the flash directory — cookie, section header, 64-byte entries, image types,
//!   op-types, and the scan that finds it (ufi-firmware.md §2);
//! - [`crc`]: the CRC-trailer model the emulator and the tools share (design.md §6);
//! - [`ufi`]: [`UfiImage`], the zero-copy parser with every bounds check of ufi-firmware.md §9;
//! - [`problem`]: findings that do not stop parsing, with a severity;
//! - [`compat`]: chip and ASIC-revision rules (Linux), and where FreeBSD differs (§1.5);
//! - [`optionrom`]: PCI expansion ROM chains in option-ROM sections, PE headers via goblin;
//! - [`inspect`]: the serialisable report behind `ocetool fw inspect --json`;
//! - [`walk`]: the sections in flashing-walk order with their op-types (§2.8), for flash plans;
//! - [`version`]: dotted version strings and their order;
//! - [`build`]: [`ImageBuilder`], valid synthetic images and broken ones for rejection tests;
//! - [`flash`]: the flash plan and the Skyhawk walk over the mailbox, with a progress observer
//!   (other chips are refused: [`flash::check_chip`]).
//!
//! ```
//! use oce_firmware::{ImageBuilder, UfiImage, inspect};
//!
//! let file = ImageBuilder::new("11.1.172.23").build()?;
//! let image = UfiImage::parse(&file)?;
//! assert_eq!(image.firmware_version().as_deref(), Some("11.1.172.23"));
//! let report = inspect::inspect_image(&image);
//! assert!(report.flashable && report.sections.iter().all(|s| s.crc_ok == Some(true)));
//! # Ok::<(), oce_firmware::ImageError>(())
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod build;
pub mod compat;
pub mod crc;
pub mod dir;
mod error;
pub mod flash;
pub mod header;
pub mod inspect;
pub mod optionrom;
pub mod problem;
pub mod ufi;
pub mod version;
pub mod walk;

pub use build::{ImageBuilder, Layout};
pub use compat::{Adapter, Chip, ImageTarget, Incompatibility};
pub use dir::{CookieForm, FlashDirectory, ImageType, OpType, SectionEntry};
pub use error::ImageError;
pub use flash::FlashError;
pub use inspect::InspectReport;
pub use problem::{Problem, Severity};
pub use ufi::{Section, UfiImage};
