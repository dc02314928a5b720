//! The client's memory as the served device reaches it: the DMA_MAP'd regions, each either
//! mapped from the file descriptor that came with it or, without one, reached by DMA_READ /
//! DMA_WRITE messages. Accesses split at region boundaries, since behind a vIOMMU every 4 KiB
//! page is a region of its own (recipes/vfio-user-qemu.md pitfall 6).
//!
//! A region with a descriptor is a [`GuestRegion`]: mapped when the client's file is sealed
//! against shrinking (QEMU's memfd), copied through the file otherwise, so a client that
//! truncates its file gets DMA faults, never a SIGBUS in the server (`oce_pci::guest_memory`).
//!
//! The client may hold at most [`MAX_DMA_MAPS`] regions at once, with or without descriptor
//! (advertised as `max_dma_maps` in the VERSION reply); a DMA_MAP past it is refused with
//! ENOSPC and the session goes on.
//!
//! The regions sit behind one `Mutex`: a [`GuestRegion`] may be touched by one thread at a time
//! (it is `!Sync`, see `oce_pci::guest_memory`), and the serving thread and an event injector
//! both reach guest memory. The lock is never held across a message exchange: a DMA_READ waits
//! for the client, and the serving thread, which routes the reply, may need the lock meanwhile
//! for a DMA_MAP that arrived first.

use std::collections::BTreeMap;
use std::fs::File;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use oce_pci::guest_memory::{Access, GuestRegion};

use crate::link::Link;
use crate::log::Log;
use crate::protocol::messages::{DMA_MAP_WRITE, decode_dma_read_reply};
use crate::protocol::{DmaMap, Request};
use oce_emulator::device::{DmaFault, DmaSpace};

/// The most regions a client may have mapped at once. Each region with a descriptor may be a
/// mapping of this process, and the kernel allows 65530 per process (`vm.max_map_count`,
/// `DEFAULT_MAX_MAP_COUNT` in `include/linux/mm.h`), which the process's own code, heap and
/// stacks share: half of it keeps the rest free. It is also below the 65535 that vfio-user
/// assumes when a server does not say (vfio-user.rst "Version", `max_dma_maps`), and far above
/// what a guest behind a vIOMMU maps at once (one region per 4 KiB page in use for DMA): be2net
/// probing, reloading and flashing in `tests/be2net-qemu/run.sh` peaked at 552 and 553 in two
/// runs (the server logs each session's peak).
pub const MAX_DMA_MAPS: usize = 32768;

/// How a region is reached.
#[derive(Debug)]
enum Backing {
    /// Through the client's file.
    Mapped(GuestRegion),
    /// Through messages; `writable` from the map's flags.
    Messages { writable: bool },
}

#[derive(Debug)]
struct Region {
    size: u64,
    backing: Backing,
}

#[derive(Debug, Default)]
struct Inner {
    regions: BTreeMap<u64, Region>,
    link: Option<Arc<Link>>,
    /// The most regions mapped at once since [`GuestDma::take_peak`].
    peak: usize,
    /// Whether the session was told that a file is copied through rather than mapped.
    said_unsealed: bool,
}

/// Why a DMA_MAP was refused (answered with this errno).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapRefused {
    /// The errno for the reply.
    pub errno: i32,
    /// What to log.
    pub reason: String,
}

/// The DMA space of the served device: cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct GuestDma {
    inner: Arc<Mutex<Inner>>,
    log: Log,
}

impl GuestDma {
    /// An empty DMA space: every access faults until the client maps memory.
    pub fn new(log: Log) -> Self {
        Self { inner: Arc::new(Mutex::new(Inner::default())), log }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Attaches (or, with `None`, detaches) the connection that carries DMA messages.
    pub(crate) fn set_link(&self, link: Option<Arc<Link>>) {
        self.lock().link = link;
    }

    /// The most regions the client may have mapped at once ([`MAX_DMA_MAPS`]).
    pub fn max_maps(&self) -> usize {
        MAX_DMA_MAPS
    }

    /// Adds a region (DMA_MAP). A range that overlaps a mapped one is refused with EEXIST, as the
    /// spec asks; a region past [`MAX_DMA_MAPS`] with ENOSPC, as the kernel's vfio refuses a map
    /// past its `dma_entry_limit` (`drivers/vfio/vfio_iommu_type1.c`).
    pub fn map(&self, map: &DmaMap, file: Option<&File>) -> Result<(), MapRefused> {
        let end = map.address.saturating_add(map.size);
        let mut inner = self.lock();
        if inner.regions.len() >= MAX_DMA_MAPS {
            return Err(MapRefused {
                errno: rustix::io::Errno::NOSPC.raw_os_error(),
                reason: format!(
                    "DMA_MAP {:#x}+{:#x}: the client already has {MAX_DMA_MAPS} regions mapped, the most this server \
                     takes (max_dma_maps)",
                    map.address, map.size
                ),
            });
        }
        let overlaps = inner
            .regions
            .range(..end)
            .next_back()
            .is_some_and(|(&start, r)| start.saturating_add(r.size) > map.address);
        if overlaps {
            return Err(MapRefused {
                errno: rustix::io::Errno::EXIST.raw_os_error(),
                reason: format!("DMA_MAP {:#x}+{:#x} overlaps a mapped region", map.address, map.size),
            });
        }
        let writable = map.flags & DMA_MAP_WRITE != 0;
        let backing = match file {
            Some(f) => {
                Backing::Mapped(GuestRegion::open(f, map.offset, map.size, writable).map_err(|e| MapRefused {
                    errno: rustix::io::Errno::INVAL.raw_os_error(),
                    reason: format!("DMA_MAP {:#x}+{:#x}: {e}", map.address, map.size),
                })?)
            }
            None => Backing::Messages { writable },
        };
        let unsealed = matches!(&backing, Backing::Mapped(r) if r.access() == Access::FileIo);
        if unsealed && !inner.said_unsealed {
            inner.said_unsealed = true;
            self.log.line(
                "the client's memory file is not sealed against shrinking (a memfd with F_SEAL_SHRINK, as QEMU's \
                 memory-backend-memfd makes by default): DMA copies through the file, more slowly",
            );
        }
        inner.regions.insert(map.address, Region { size: map.size, backing });
        inner.peak = inner.peak.max(inner.regions.len());
        Ok(())
    }

    /// Removes the regions inside `address .. address + size` (DMA_UNMAP), or all of them.
    /// Unmapping what was never mapped is not an error: QEMU unmaps huge ranges at vIOMMU enable
    /// and at shutdown (recipes/vfio-user-qemu.md pitfall 6). Returns how many were removed.
    pub fn unmap(&self, address: u64, size: u64, all: bool) -> usize {
        let mut inner = self.lock();
        let before = inner.regions.len();
        if all {
            inner.regions.clear();
            inner.said_unsealed = false;
        } else {
            let end = address.saturating_add(size);
            inner.regions.retain(|&start, r| !(start >= address && start.saturating_add(r.size) <= end));
        }
        before - inner.regions.len()
    }

    /// The most regions the client had mapped at once since the last call (a session's figure,
    /// against [`MAX_DMA_MAPS`]).
    pub fn take_peak(&self) -> usize {
        let mut inner = self.lock();
        let now = inner.regions.len();
        std::mem::replace(&mut inner.peak, now)
    }

    /// Number of regions mapped.
    pub fn region_count(&self) -> usize {
        self.lock().regions.len()
    }

    fn fault(&self, kind: &str, f: DmaFault) -> DmaFault {
        self.log
            .limited(&format!("DMA {kind} fault: {} bytes at {:#x} are outside the client's mappings", f.len, f.addr));
        f
    }

    fn copy_fault(&self, kind: &str, f: DmaFault, why: &oce_pci::PciError) -> DmaFault {
        self.log.limited(&format!("DMA {kind} fault: {} bytes at {:#x}: {why}", f.len, f.addr));
        f
    }
}

/// One region-sized piece of an access.
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// The region's start (its key).
    region: u64,
    /// Offset into the region.
    off: u64,
    /// Offset into the caller's buffer.
    at: usize,
    /// Length.
    len: usize,
    /// Reached by DMA_READ / DMA_WRITE rather than a mapping.
    by_message: bool,
}

/// Splits `addr .. addr + len` into region-sized pieces; a gap, or a write to a region shared
/// read-only, is a fault before anything is copied (all or nothing, as [`DmaSpace`] asks).
fn plan(inner: &Inner, addr: u64, len: usize, write: bool) -> Result<Vec<Piece>, DmaFault> {
    let fault = DmaFault { addr, len };
    let mut pieces = Vec::new();
    let mut done = 0usize;
    while done < len {
        let at = addr.checked_add(done as u64).ok_or(fault)?;
        let (&start, region) = inner.regions.range(..=at).next_back().ok_or(fault)?;
        let off = at - start;
        if off >= region.size {
            return Err(fault);
        }
        let n = usize::try_from(region.size - off).unwrap_or(usize::MAX).min(len - done);
        let (by_message, writable) = match &region.backing {
            Backing::Mapped(m) => (false, m.is_writable()),
            Backing::Messages { writable } => (true, *writable),
        };
        if write && !writable {
            return Err(fault);
        }
        pieces.push(Piece { region: start, off, at: done, len: n, by_message });
        done += n;
    }
    Ok(pieces)
}

/// The region a mapped piece copies through.
fn mapping<'a>(inner: &'a Inner, piece: &Piece) -> Result<&'a GuestRegion, oce_pci::PciError> {
    match inner.regions.get(&piece.region).map(|r| &r.backing) {
        Some(Backing::Mapped(m)) => Ok(m),
        _ => Err(oce_pci::PciError::DmaOutOfBounds { off: 0, len: piece.len, size: 0 }),
    }
}

impl DmaSpace for GuestDma {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        let fault = DmaFault { addr, len: buf.len() };
        let (pieces, link) = {
            let inner = self.lock();
            let pieces = plan(&inner, addr, buf.len(), false).map_err(|f| self.fault("read", f))?;
            for p in pieces.iter().filter(|p| !p.by_message) {
                let copied = mapping(&inner, p).and_then(|m| m.read_at(p.off as usize, &mut buf[p.at..p.at + p.len]));
                if let Err(why) = copied {
                    return Err(self.copy_fault("read", fault, &why));
                }
            }
            (pieces, inner.link.clone())
        };
        for p in pieces.iter().filter(|p| p.by_message) {
            if !message_read(link.as_deref(), addr + p.at as u64, &mut buf[p.at..p.at + p.len], &self.log) {
                return Err(fault);
            }
        }
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        let fault = DmaFault { addr, len: data.len() };
        let (pieces, link) = {
            let inner = self.lock();
            let pieces = plan(&inner, addr, data.len(), true).map_err(|f| self.fault("write", f))?;
            for p in pieces.iter().filter(|p| !p.by_message) {
                let copied = mapping(&inner, p).and_then(|m| m.write_at(p.off as usize, &data[p.at..p.at + p.len]));
                if let Err(why) = copied {
                    return Err(self.copy_fault("write", fault, &why));
                }
            }
            (pieces, inner.link.clone())
        };
        for p in pieces.iter().filter(|p| p.by_message) {
            if !message_write(link.as_deref(), addr + p.at as u64, &data[p.at..p.at + p.len], &self.log) {
                return Err(fault);
            }
        }
        Ok(())
    }
}

/// DMA_READ in pieces of at most the client's transfer size.
fn message_read(link: Option<&Link>, addr: u64, buf: &mut [u8], log: &Log) -> bool {
    let Some(link) = link else { return false };
    let max = link.max_transfer();
    for (i, chunk) in buf.chunks_mut(max).enumerate() {
        let at = addr + (i * max) as u64;
        let reply = match link.call(&Request::DmaRead { address: at, count: chunk.len() as u64 }) {
            Ok(r) => r,
            Err(e) => {
                log.limited(&format!("DMA_READ {:#x}+{:#x}: {e}", at, chunk.len()));
                return false;
            }
        };
        if let Some(errno) = reply.header.error() {
            log.limited(&format!("DMA_READ {:#x}+{:#x}: the client answered errno {errno}", at, chunk.len()));
            return false;
        }
        match decode_dma_read_reply(&reply.payload, at, chunk.len()) {
            Ok(data) => chunk.copy_from_slice(data),
            Err(e) => {
                log.limited(&format!("DMA_READ {:#x}+{:#x}: bad reply: {e}", at, chunk.len()));
                return false;
            }
        }
    }
    true
}

/// DMA_WRITE in pieces of at most the client's transfer size.
fn message_write(link: Option<&Link>, addr: u64, data: &[u8], log: &Log) -> bool {
    let Some(link) = link else { return false };
    let max = link.max_transfer();
    for (i, chunk) in data.chunks(max).enumerate() {
        let at = addr + (i * max) as u64;
        match link.call(&Request::DmaWrite { address: at, data: chunk }) {
            Ok(reply) if reply.header.error().is_none() => {}
            Ok(reply) => {
                log.limited(&format!("DMA_WRITE {:#x}+{:#x}: errno {:?}", at, chunk.len(), reply.header.error()));
                return false;
            }
            Err(e) => {
                log.limited(&format!("DMA_WRITE {:#x}+{:#x}: {e}", at, chunk.len()));
                return false;
            }
        }
    }
    true
}
