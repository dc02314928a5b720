//! The host stack's PCI seam (`oce_pci::PciFunction`) over a vfio-user connection: what a guest's
//! vfio-pci gives ocetool, done from the host with the test [`Client`]. The mailbox driver, every
//! command and the flash procedure then drive a served adapter exactly as they drive the
//! in-process one — through the server, its region messages and shared memory — so host-side
//! tests (a server killed in the middle of a flash, a DMA fault) need no guest.
//!
//! DMA memory is one memfd shared with the server by DMA_MAP with its descriptor (as QEMU shares
//! guest RAM, sealed against shrinking and growing as QEMU seals it), handed out page-aligned from the bottom and never reused: buffers start zeroed.
//! The client reaches its own memory through `oce_pci::guest_memory` (the crate that holds the
//! `unsafe`), one mapping per buffer.

use std::fs::File;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use oce_pci::guest_memory::GuestMapping;
use oce_pci::{ConfigSpace, DmaBuffer, PciError, PciFunction, RegisterIo};

use super::{Client, ClientError};
use crate::protocol::Request;
use crate::server::CONFIG_REGION;

/// Where the shared memory starts in the device's DMA space (any address works; a high one shows
/// that the device uses the address it was given, not an offset).
const IOVA_BASE: u64 = 0x1_0000_0000;
/// Buffers are handed out at page boundaries.
const PAGE: u64 = 4096;

#[derive(Debug)]
struct Shared {
    client: Mutex<Client>,
    /// Names the connection in errors.
    name: PathBuf,
    ram: File,
    ram_len: u64,
    /// The next free offset in `ram`.
    next: Mutex<u64>,
}

impl Shared {
    fn client(&self) -> MutexGuard<'_, Client> {
        self.client.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn io_error(&self, e: ClientError) -> PciError {
        PciError::Io { path: self.name.clone(), source: std::io::Error::other(e.to_string()) }
    }
}

/// A served PCI function, driven from the host. Clones share the connection.
#[derive(Debug, Clone)]
pub struct ServedFunction {
    shared: Arc<Shared>,
    config: ServedConfig,
}

/// Config space through REGION_READ / REGION_WRITE of region 7.
#[derive(Debug, Clone)]
pub struct ServedConfig {
    shared: Arc<Shared>,
}

/// A BAR through REGION_READ / REGION_WRITE; writes are posted, as QEMU posts them.
#[derive(Debug, Clone)]
pub struct ServedBar {
    shared: Arc<Shared>,
    bar: u8,
    len: u64,
}

/// A buffer of the shared memory.
#[derive(Debug)]
pub struct ServedDma {
    mapping: GuestMapping,
    iova: u64,
    len: usize,
}

impl ServedFunction {
    /// Connects to the server at `path`, negotiates, and shares `ram_len` bytes of DMA memory.
    pub fn connect(path: &Path, ram_len: u64) -> Result<Self, ClientError> {
        let client = Client::connect(path).map_err(|e| ClientError::Link(e.into()))?;
        Self::over(client, path.to_path_buf(), ram_len)
    }

    /// The same over a connected client (one end of a socketpair); `name` names it in errors.
    pub fn over(mut client: Client, name: PathBuf, ram_len: u64) -> Result<Self, ClientError> {
        client.negotiate()?;
        let io = |e: rustix::io::Errno| ClientError::Link(std::io::Error::from(e).into());
        let flags = rustix::fs::MemfdFlags::CLOEXEC | rustix::fs::MemfdFlags::ALLOW_SEALING;
        let fd: OwnedFd = rustix::fs::memfd_create("served-function-dma", flags).map_err(io)?;
        let ram = File::from(fd);
        ram.set_len(ram_len).map_err(|e| ClientError::Link(e.into()))?;
        // Sealed as QEMU seals its memfd RAM, so the server maps it rather than copying through
        // the file (`oce_pci::guest_memory::region`).
        rustix::fs::fcntl_add_seals(&ram, rustix::fs::SealFlags::SHRINK | rustix::fs::SealFlags::GROW).map_err(io)?;
        client.map_file(IOVA_BASE, ram_len, &ram, 0)?;
        let shared = Arc::new(Shared { client: Mutex::new(client), name, ram, ram_len, next: Mutex::new(0) });
        Ok(Self { config: ServedConfig { shared: Arc::clone(&shared) }, shared })
    }

    /// Asks the server to reset the function (DEVICE_RESET).
    pub fn reset(&self) -> Result<(), ClientError> {
        self.shared.client().reset()
    }

    /// Wires eventfds to interrupts `start..` of type `index` (SET_IRQS, as
    /// [`Client::set_eventfds`]): what a guest's vfio-pci does when its driver asks for
    /// interrupts, which the `PciFunction` seam has no word for.
    pub fn set_eventfds(&self, index: u32, start: u32, fds: &[BorrowedFd<'_>]) -> Result<(), ClientError> {
        self.shared.client().set_eventfds(index, start, fds)
    }
}

impl PciFunction for ServedFunction {
    type Config = ServedConfig;
    type Bar = ServedBar;
    type Dma = ServedDma;

    fn config(&self) -> &ServedConfig {
        &self.config
    }

    fn map_bar(&self, bar: u8, min_len: u64) -> Result<ServedBar, PciError> {
        if bar > 5 {
            return Err(PciError::NoSuchBar { bar });
        }
        let len = self.shared.client().region_size(u32::from(bar)).map_err(|e| self.shared.io_error(e))?;
        if len == 0 {
            return Err(PciError::NoSuchBar { bar });
        }
        if len < min_len {
            return Err(PciError::BarTooSmall { bar, len, needed: min_len });
        }
        Ok(ServedBar { shared: Arc::clone(&self.shared), bar, len })
    }

    fn alloc_dma(&self, len: usize) -> Result<ServedDma, PciError> {
        let fail = |reason: &str| PciError::DmaAlloc { len, reason: reason.to_owned() };
        let size = (len.max(1) as u64).div_ceil(PAGE) * PAGE;
        let offset = {
            let mut next = self.shared.next.lock().unwrap_or_else(PoisonError::into_inner);
            let offset = *next;
            if offset + size > self.shared.ram_len {
                return Err(fail("the memory shared with the server is used up"));
            }
            *next += size;
            offset
        };
        let mapping = GuestMapping::map(&self.shared.ram, offset, size, true)?;
        Ok(ServedDma { mapping, iova: IOVA_BASE + offset, len })
    }
}

impl ConfigSpace for ServedConfig {
    fn read32(&self, off: u16) -> Result<u32, PciError> {
        self.shared.client().read32(CONFIG_REGION, off.into()).map_err(|e| self.shared.io_error(e))
    }

    fn write32(&self, off: u16, value: u32) -> Result<(), PciError> {
        self.shared.client().write32(CONFIG_REGION, off.into(), value).map_err(|e| self.shared.io_error(e))
    }
}

impl RegisterIo for ServedBar {
    fn read32(&self, off: u32) -> u32 {
        if u64::from(off) + 4 > self.len {
            return u32::MAX;
        }
        // A connection that broke reads like a device that is gone: all ones.
        self.shared.client().read32(u32::from(self.bar), off.into()).unwrap_or(u32::MAX)
    }

    fn write32(&self, off: u32, value: u32) {
        if u64::from(off) + 4 > self.len {
            return;
        }
        let bytes = value.to_le_bytes();
        let request = Request::RegionWrite { offset: off.into(), region: u32::from(self.bar), data: &bytes };
        // Posted: a write to a connection that broke is lost, as on a bus.
        let _ = self.shared.client().post(&request);
    }
}

impl DmaBuffer for ServedDma {
    fn iova(&self) -> u64 {
        self.iova
    }

    fn len(&self) -> usize {
        self.len
    }

    fn write_at(&self, off: usize, src: &[u8]) -> Result<(), PciError> {
        oce_pci::check_dma_range(off, src.len(), self.len)?;
        self.mapping.write_at(off, src)
    }

    fn read_at(&self, off: usize, dst: &mut [u8]) -> Result<(), PciError> {
        oce_pci::check_dma_range(off, dst.len(), self.len)?;
        self.mapping.read_at(off, dst)
    }
}
