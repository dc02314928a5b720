//! A register-level model of an Emulex OneConnect OCe14000 (Skyhawk) NIC function: the physical
//! function, or one of its virtual functions ([`FunctionType`]).
//!
//! [`Emulator`] implements [`oce_pci::PciFunction`], so the whole host stack — the bootstrap
//! mailbox driver, every command, the CLI — runs against it unchanged (design.md §2):
//!
//! - **configuration space** ([`config`]): 10df:0720 (VF 0728), registers with writable-bit
//!   masks, SLI_INTF, ASIC_ID, the POST semaphore that walks 0x0000 → 0x0001 → 0x0002 → 0xC000;
//! - **pcicfg** (PF BAR0, VF BAR0 + 0x1000): a memory-mapped view of configuration space with the
//!   soft-reset register (0x5C) and the UE status/mask registers;
//! - **doorbells** (PF BAR4, VF BAR0): the bootstrap mailbox doorbell as a state machine with
//!   RDY timing counted in reads (spec/protocol.md §3.2);
//! - **DMA**: every buffer from [`PciFunction::alloc_dma`] is registered in an IOVA table, and the
//!   emulated firmware reads WRBs and writes responses and completions only through the address
//!   the host wrote into the doorbell, so a wrong shift or a skipped RDY poll fails as on hardware;
//! - **firmware**: the signatures, a dispatcher answering the query, profile and flash commands
//!   with consistent data, ILLEGAL_REQUEST for everything else;
//! - **flash**: READ_FLASHROM REPORT, WRITE_FLASHROM SAVE / FLASH with the CRC check, in offset
//!   and op-type modes; versions derived from the directory on flash; boot from the backup
//!   section when the active one is corrupt;
//! - **faults** ([`Faults`], [`FaultSpec`]): POST, UE, RDY, gone, per-command statuses and
//!   malformed responses, slow commands, flash failures and power loss, persisted until cleared;
//! - **persistence**: a state directory with `flash.bin` (16 MiB, memory-mapped) and one JSON
//!   file ([`state`]), created factory-fresh and never reset silently.
//!
//! Host protocol violations are ignored like hardware ignores them, and recorded as [`Event`]s.
//! Everything the public sources do not say is decided in [`assumptions`].
//!
//! ```no_run
//! use oce_emulator::Emulator;
//! use oce_pci::{ConfigSpace, PciFunction};
//!
//! let emu = Emulator::open_or_create(std::path::Path::new("/tmp/emu")).unwrap();
//! assert_eq!(emu.config().read32(0).unwrap(), 0x0720_10DF);
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod assumptions;
pub mod device;
mod error;
mod events;
mod faults;
pub mod firmware;
mod function;
mod info;
mod inproc;

pub use device::config;
pub use device::timing::Timing;
pub use error::EmulatorError;
pub use events::{BootOutcome, Event, MsixBlock, SignatureKind};
pub use faults::{CommandEffect, CommandFault, FAULT_NAMES, FaultSpec, Faults, PostFault};
pub use firmware::flash::FlashDurability;
pub use firmware::state::MacAddress;
pub use firmware::{CreateOptions, profiles, state};
pub use function::{FunctionType, PF_DEVICE_ID, VF_DEVICE_ID};
pub use info::{EmulatorInfo, FirmwareInfo, PortInfo, ProfileInfo};
pub use inproc::{EmuBar, EmuConfig, EmuDma, Emulator};
