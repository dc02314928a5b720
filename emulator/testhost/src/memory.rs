//! The host side's memory and interrupt lines: what a guest kernel's DMA API and interrupt
//! controller are to the device.

use std::collections::BTreeMap;
use std::sync::Mutex;

use oce_emulator::device::{DmaFault, DmaSpace, Interrupt};

/// Where the first allocation lands: above 4 GiB, so the high halves of addresses matter.
const BASE: u64 = 0x0000_0001_2000_0000;
/// Allocations are page-aligned and separated by an unmapped page, so an overrun faults.
const PAGE: u64 = 4096;

/// Host memory: separately allocated, page-aligned buffers at bus addresses; anything else
/// faults, as behind an IOMMU.
#[derive(Debug, Default)]
pub struct HostMemory {
    inner: Mutex<Regions>,
}

#[derive(Debug, Default)]
struct Regions {
    next: u64,
    map: BTreeMap<u64, Vec<u8>>,
}

impl HostMemory {
    /// A zeroed buffer of `len` bytes; its bus address.
    pub fn alloc(&self, len: usize) -> u64 {
        let mut r = self.inner.lock().unwrap();
        let addr = BASE + r.next;
        r.next += (len as u64).div_ceil(PAGE) * PAGE + PAGE;
        r.map.insert(addr, vec![0; len]);
        addr
    }

    /// Frees the buffer at `addr`.
    pub fn free(&self, addr: u64) {
        self.inner.lock().unwrap().map.remove(&addr);
    }

    /// The host writes its memory.
    pub fn poke(&self, addr: u64, data: &[u8]) {
        self.access(addr, data.len(), |m| m.copy_from_slice(data)).expect("poke outside host memory");
    }

    /// The host reads its memory.
    pub fn peek(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0; len];
        self.access(addr, len, |m| out.copy_from_slice(m)).expect("peek outside host memory");
        out
    }

    /// A little-endian dword of host memory.
    pub fn peek32(&self, addr: u64) -> u32 {
        u32::from_le_bytes(self.peek(addr, 4).try_into().unwrap())
    }

    fn access(&self, addr: u64, len: usize, f: impl FnOnce(&mut [u8])) -> Result<(), DmaFault> {
        let mut r = self.inner.lock().unwrap();
        let fault = DmaFault { addr, len };
        let (&start, buf) = r.map.range_mut(..=addr).next_back().ok_or(fault)?;
        let off = (addr - start) as usize;
        let end = off.checked_add(len).filter(|&e| e <= buf.len()).ok_or(fault)?;
        f(&mut buf[off..end]);
        Ok(())
    }
}

impl DmaSpace for HostMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        self.access(addr, buf.len(), |m| buf.copy_from_slice(m))
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        self.access(addr, data.len(), |m| m.copy_from_slice(data))
    }
}

/// One interrupt the device raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Irq {
    /// INTA# driven to this level.
    Level(bool),
    /// An MSI-X message for this vector.
    Msix(u16),
}

/// The interrupt controller: records every interrupt, oldest first.
#[derive(Debug, Default)]
pub struct Lines {
    calls: Mutex<Vec<Irq>>,
}

impl Lines {
    /// The interrupts so far, cleared.
    pub fn take(&self) -> Vec<Irq> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

impl Interrupt for Lines {
    fn set_level(&self, asserted: bool) {
        self.calls.lock().unwrap().push(Irq::Level(asserted));
    }
    fn signal(&self, vector: u16) {
        self.calls.lock().unwrap().push(Irq::Msix(vector));
    }
}
