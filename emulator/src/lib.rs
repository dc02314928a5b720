//! A register-level model of an Emulex OneConnect OCe14000 (Skyhawk) NIC function: the physical
//! function, or one of its virtual functions ([`FunctionType`]), in three layers (design.md §9):
//!
//! - **[`firmware`]**, register-free: the persistent state, the flash, WRITE_FLASHROM staging,
//!   the profiles and the command handlers, behind one entry point every transport calls,
//!   [`Firmware::execute`](firmware::Firmware::execute) (the bootstrap mailbox engine today; the
//!   MCC ring engine and ocrdma's MQ next);
//! - **[`device`]**, the registers: [`Device<D, I>`](device::Device) with
//!   `read_config` / `write_config` / `read_bar` / `write_bar` at any width, `reset` (FLR) and
//!   `power_cycle`; configuration space with writable-bit masks and capabilities (power
//!   management; MSI-X and PCI Express in the [`Shape::Express`](device::Shape) shape), the pcicfg
//!   shadow, the bootstrap mailbox doorbell with RDY timing counted in reads, POST, MSI-X and
//!   INTx delivery. It reaches its host through two seams it takes as type parameters, in the
//!   style of rust-vmm's vm-superio: a [`DmaSpace`](device::DmaSpace) (copy in, execute, copy
//!   out; an address it cannot reach fails the command with a status and an [`Event`]) and an
//!   [`Interrupt`](device::Interrupt) (INTx level, MSI-X vector);
//! - **[`datapath`]**, the ring engines (EQ/CQ, MCC, TX, RX), each owning its indices and
//!   working on the firmware's queue contexts, host memory and the port's cable: TX requests
//!   gathered, offloaded (VLAN insertion, IPv4/TCP/UDP checksums, TSO) and put on a
//!   [`Wire`](datapath::Wire); frames that arrive ([`Device::receive`](device::Device::receive))
//!   filtered, written into the host's receive fragments and completed; a receiver without
//!   buffers pauses its sender, whose WRBs stay posted. [`datapath::cable`] joins two devices in
//!   process;
//! - **front ends**: [`Emulator`], the in-process one, implements [`oce_pci::PciFunction`] over a
//!   device in the polled shape, so the whole host stack — the mailbox driver, every command, the
//!   CLI — runs against it unchanged (design.md §2). Its DMA space is an IOVA table of the
//!   buffers from [`PciFunction::alloc_dma`](oce_pci::PciFunction::alloc_dma), so a wrong address
//!   shift or a skipped RDY poll fails as on hardware. A vfio-user server is the other front end:
//!   it builds a [`Device`](device::Device) in the PCI Express shape over guest memory.
//!
//! What the model covers:
//!
//! - **identity**: 10df:0720 (VF 0728), SLI_INTF, ASIC_ID, the POST semaphore that walks 0x0000
//!   → 0x0001 → 0x0002 → 0xC000; the pcicfg shadow (PF BAR0, VF BAR0 + 0x1000) with the
//!   soft-reset register (0x5C) and the UE status/mask registers;
//! - **commands**: the signatures, a dispatcher answering the query, profile, flash, queue,
//!   interface and statistics commands with consistent data, ILLEGAL_REQUEST for everything
//!   else;
//! - **Ethernet**: TX and RX rings that carry real frames between two cabled adapters, with the
//!   RX filters, VLAN tagging and stripping, checksum and segmentation offloads, RSS and the
//!   counters be2net reads with GET_STATISTICS;
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
//!
//! A transport builds its own device from a state directory:
//!
//! ```no_run
//! use oce_emulator::device::{Device, DmaFault, DmaSpace, Interrupt, Shape, TableOwner};
//! use oce_emulator::firmware::Firmware;
//!
//! struct NoMemory;
//! impl DmaSpace for NoMemory {
//!     fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
//!         Err(DmaFault { addr, len: buf.len() })
//!     }
//!     fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
//!         Err(DmaFault { addr, len: data.len() })
//!     }
//! }
//! struct Lines;
//! impl Interrupt for Lines {
//!     fn set_level(&self, asserted: bool) { /* drive INTx */ }
//!     fn signal(&self, vector: u16) { /* send MSI-X vector */ }
//! }
//!
//! let firmware = Firmware::open(std::path::Path::new("/tmp/emu")).unwrap();
//! let shape = Shape::Express { msix_table: TableOwner::Transport };
//! let mut device = Device::new(firmware, NoMemory, Lines, shape);
//! let mut id = [0u8; 4];
//! device.read_config(0, &mut id);
//! assert_eq!(u32::from_le_bytes(id), 0x0720_10DF);
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod assumptions;
pub mod datapath;
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
pub use events::{BootOutcome, Event, MsixBlock, QueueKind, QueueMiss, SignatureKind};
pub use faults::{CommandEffect, CommandFault, FAULT_NAMES, FaultSpec, Faults, PostFault};
pub use firmware::flash::FlashDurability;
pub use firmware::state::MacAddress;
pub use firmware::{CreateOptions, profiles, state};
pub use function::{FunctionType, PF_DEVICE_ID, VF_DEVICE_ID};
pub use info::{EmulatorInfo, FirmwareInfo, LinkState, PortInfo, ProfileInfo};
pub use inproc::{EmuBar, EmuConfig, EmuDma, Emulator};
