//! The client's memory as the served device reaches it: the DMA_MAP'd regions, each either
//! mapped from the file descriptor that came with it or, without one, reached by DMA_READ /
//! DMA_WRITE messages. Accesses split at region boundaries, since behind a vIOMMU every 4 KiB
//! page is a region of its own (recipes/vfio-user-qemu.md pitfall 6).

use std::collections::BTreeMap;
use std::fs::File;
use std::sync::{Arc, PoisonError, RwLock};

use oce_pci::guest_memory::GuestMapping;

use crate::link::Link;
use crate::log::Log;
use crate::protocol::messages::{DMA_MAP_WRITE, decode_dma_read_reply};
use crate::protocol::{DmaMap, Request};
use crate::seam::{DmaFault, DmaSpace};

/// How a region is reached.
#[derive(Debug)]
enum Backing {
    /// Mapped from the client's file.
    Mapped(GuestMapping),
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
    inner: Arc<RwLock<Inner>>,
    log: Log,
}

impl GuestDma {
    /// An empty DMA space: every access faults until the client maps memory.
    pub fn new(log: Log) -> Self {
        Self { inner: Arc::new(RwLock::new(Inner::default())), log }
    }

    fn read_inner(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_inner(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Attaches (or, with `None`, detaches) the connection that carries DMA messages.
    pub(crate) fn set_link(&self, link: Option<Arc<Link>>) {
        self.write_inner().link = link;
    }

    /// Adds a region (DMA_MAP). A range that overlaps a mapped one is refused with EEXIST, as the
    /// spec asks.
    pub fn map(&self, map: &DmaMap, file: Option<&File>) -> Result<(), MapRefused> {
        let end = map.address.saturating_add(map.size);
        let mut inner = self.write_inner();
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
                Backing::Mapped(GuestMapping::map(f, map.offset, map.size, writable).map_err(|e| MapRefused {
                    errno: rustix::io::Errno::INVAL.raw_os_error(),
                    reason: format!("DMA_MAP {:#x}+{:#x}: {e}", map.address, map.size),
                })?)
            }
            None => Backing::Messages { writable },
        };
        inner.regions.insert(map.address, Region { size: map.size, backing });
        Ok(())
    }

    /// Removes the regions inside `address .. address + size` (DMA_UNMAP), or all of them.
    /// Unmapping what was never mapped is not an error: QEMU unmaps huge ranges at vIOMMU enable
    /// and at shutdown (recipes/vfio-user-qemu.md pitfall 6). Returns how many were removed.
    pub fn unmap(&self, address: u64, size: u64, all: bool) -> usize {
        let mut inner = self.write_inner();
        let before = inner.regions.len();
        if all {
            inner.regions.clear();
        } else {
            let end = address.saturating_add(size);
            inner.regions.retain(|&start, r| !(start >= address && start.saturating_add(r.size) <= end));
        }
        before - inner.regions.len()
    }

    /// Number of regions mapped.
    pub fn region_count(&self) -> usize {
        self.read_inner().regions.len()
    }

    /// Runs `piece` on every region-sized piece of `addr .. addr + len`: (region start, region,
    /// offset into the region, offset into the caller's buffer, length). A gap is a fault.
    fn walk(
        &self,
        addr: u64,
        len: usize,
        mut piece: impl FnMut(&Inner, &Region, u64, usize, usize) -> bool,
    ) -> Result<(), DmaFault> {
        let fault = DmaFault { addr, len };
        let inner = self.read_inner();
        let mut done = 0usize;
        while done < len {
            let at = addr.checked_add(done as u64).ok_or(fault)?;
            let (&start, region) = inner.regions.range(..=at).next_back().ok_or(fault)?;
            let off = at - start;
            if off >= region.size {
                return Err(fault);
            }
            let n = usize::try_from(region.size - off).unwrap_or(usize::MAX).min(len - done);
            if !piece(&inner, region, off, done, n) {
                return Err(fault);
            }
            done += n;
        }
        Ok(())
    }

    fn fault(&self, kind: &str, f: DmaFault) -> DmaFault {
        self.log.line(&format!("DMA {kind} fault: {} bytes at {:#x} are outside the client's mappings", f.len, f.addr));
        f
    }
}

impl DmaSpace for GuestDma {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        let len = buf.len();
        self.walk(addr, len, |inner, region, off, at, n| match &region.backing {
            Backing::Mapped(m) => m.read_at(off as usize, &mut buf[at..at + n]).is_ok(),
            Backing::Messages { .. } => {
                message_read(inner.link.as_deref(), addr + at as u64, &mut buf[at..at + n], &self.log)
            }
        })
        .map_err(|f| self.fault("read", f))
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        self.walk(addr, data.len(), |inner, region, off, at, n| match &region.backing {
            Backing::Mapped(m) => m.write_at(off as usize, &data[at..at + n]).is_ok(),
            Backing::Messages { writable } => {
                *writable && message_write(inner.link.as_deref(), addr + at as u64, &data[at..at + n], &self.log)
            }
        })
        .map_err(|f| self.fault("write", f))
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
                log.line(&format!("DMA_READ {:#x}+{:#x}: {e}", at, chunk.len()));
                return false;
            }
        };
        if let Some(errno) = reply.header.error() {
            log.line(&format!("DMA_READ {:#x}+{:#x}: the client answered errno {errno}", at, chunk.len()));
            return false;
        }
        match decode_dma_read_reply(&reply.payload, at, chunk.len()) {
            Ok(data) => chunk.copy_from_slice(data),
            Err(e) => {
                log.line(&format!("DMA_READ {:#x}+{:#x}: bad reply: {e}", at, chunk.len()));
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
                log.line(&format!("DMA_WRITE {:#x}+{:#x}: errno {:?}", at, chunk.len(), reply.header.error()));
                return false;
            }
            Err(e) => {
                log.line(&format!("DMA_WRITE {:#x}+{:#x}: {e}", at, chunk.len()));
                return false;
            }
        }
    }
    true
}
