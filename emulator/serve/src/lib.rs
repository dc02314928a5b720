//! The emulated adapter as a PCI device any vfio-user client can attach: QEMU ≥ 10.1's
//! `vfio-user-pci` puts it in a guest, where the guest's own kernel — vfio-pci, be2net, ocetool
//! through vfio — drives it (design.md §9, recipes/vfio-user-qemu.md).
//!
//! # Shape
//!
//! - [`protocol`]: the wire format of QEMU's `docs/interop/vfio-user.rst`, decoded from untrusted
//!   bytes by a reader that cannot panic (fuzzed: `fuzz/fuzz_targets/vfio_user.rs`);
//! - [`Server`]: one client connection, served request by request; regions are config space
//!   and the BARs, every access a message (no mmap, so QEMU keeps posted writes);
//! - [`GuestDma`]: the device's [`DmaSpace`] — the client's DMA_MAP'd memory, reached through the
//!   file descriptor that came with it (mapped if the file is sealed against shrinking, else
//!   copied through the file: `oce_pci::guest_memory`, the one crate allowed `unsafe`), or by
//!   DMA_READ / DMA_WRITE messages when none came; accesses split at mapping boundaries (every
//!   vIOMMU page is its own mapping), at most [`MAX_DMA_MAPS`] of them;
//! - [`IrqLines`]: the device's [`Interrupt`] — SET_IRQS eventfds for INTx (level, automasked,
//!   re-signalled on UNMASK) and MSI-X (the table is QEMU's; a vector without an eventfd stays
//!   pending);
//! - [`Backend`]: what the transport needs from a device (byte-granular config and BAR access,
//!   reset); the emulator's `Device` is one ([`Adapter`]: the served OneConnect adapter, a PCI
//!   Express endpoint with 32 MSI-X vectors whose table QEMU keeps), [`testing::TestDevice`] is a
//!   small one for the transport's own tests;
//! - [`control`]: a second socket through which host commands (`ocetool emulator fault set`)
//!   reach the adapter while a server holds it;
//! - [`cable`]: the adapter's port on an AF_UNIX datagram cable, one raw Ethernet frame a
//!   datagram as QEMU's `-netdev dgram` sends them, lossless, with an optional pcap of what crosses;
//! - [`clock`]: a thread that writes what waits on time (completions a slow fault holds back)
//!   while the guest only polls its memory;
//! - [`client::Client`]: a client for tests and benchmarks, and [`client::ServedFunction`], the
//!   host stack's `PciFunction` over it (the mailbox driver and the flash procedure drive a
//!   served adapter from the host, as they drive the in-process one).
//!
//! [`GuestDma`] and [`IrqLines`] are cheap clones usable from any thread: an event injector (link
//! changes, asynchronous completions) holds clones and the device's `Arc<Mutex<_>>`, and its DMA
//! by message is carried by the serving thread, which keeps routing replies even while it waits
//! for the device's lock.
//!
//! # Why our own protocol code, not rust-vmm's `vfio_user` crate
//!
//! The crate (0.1.7, Apache-2.0, now maintained in the rust-vmm/vfio monorepo) was evaluated
//! first, in a prototype that served a stub adapter to QEMU 11.1 (recipes/vfio-user-qemu.md §2).
//! It negotiates with QEMU and handles region access, DMA_MAP with descriptors and SET_IRQS. It
//! was not adopted because it cannot meet what this server must do:
//!
//! - its socket is private to a blocking `run()`, so the server cannot send DMA_READ /
//!   DMA_WRITE: a client that shares memory without descriptors (QEMU without a memfd-backed RAM)
//!   gets a device whose DMA silently fails;
//! - backend errors are answered with the error bit and errno 0, which QEMU reads as a zero-length
//!   success;
//! - a malformed VERSION message panics it (an `unwrap` on the capability string, an unchecked
//!   subtraction of the message size);
//! - one connection, one thread, the backend borrowed `&mut` for the whole session: nothing else
//!   can reach the device, its memory or its interrupts while it serves.
//!
//! Patching around those means forking its server loop, which is most of the crate. The protocol
//! itself is small — a 16-byte header, a dozen fixed bodies and a JSON string — so owning it
//! costs a few hundred lines that follow this repository's rules (explicit little-endian
//! fields, a checked reader, golden bytes per message) and drops about 30 crates (vm-memory,
//! vfio-bindings pinned exactly, serde derive) from the tree. What the crate offers beyond that
//! (sparse mmap of BARs, a client) this server does not want: mmap'd BARs would cost QEMU's
//! posted writes, and the test client here is a hundred lines over the same codec.
#![forbid(unsafe_code)]

mod adapter;
mod backend;
pub mod cable;
pub mod client;
pub mod clock;
pub mod control;
mod dma;
mod irq;
mod link;
mod log;
pub mod protocol;
mod server;
mod socket;
pub mod testing;

pub use adapter::{Adapter, AdapterDevice, SERVED_SHAPE};
pub use backend::{Backend, Layout};
pub use dma::{GuestDma, MAX_DMA_MAPS, MapRefused};
pub use irq::IrqLines;
pub use log::Log;
pub use oce_emulator::device::{DmaFault, DmaSpace, Interrupt};
pub use server::{CONFIG_REGION, NUM_REGIONS, Outcome, Server};
pub use socket::{ServeSocket, SocketError};
