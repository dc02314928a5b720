//! Unit tests of the device, one per register behaviour, against test doubles of its seams:
//! [`Memory`] (a [`DmaSpace`] of a few regions, some read-only) and [`Recorder`] (an
//! [`Interrupt`] that records every call).

mod config;
mod interrupts;
mod mailbox;

use std::sync::Mutex;

use oce_mailbox::regs::MailboxDoorbell;
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::{COMPLETION_LEN, Completion, MAILBOX_COMPLETION_OFFSET, WRB_LEN, Wrb};

use super::timing::Timing;
use super::{Device, DmaFault, DmaSpace, Interrupt, Shape, TableOwner};
use crate::firmware::{CreateOptions, Firmware};
use crate::function::FunctionType;

/// Host memory as a test lays it out: regions at fixed bus addresses, each writable by the device
/// or not. Anything else faults.
#[derive(Debug, Default)]
pub(super) struct Memory {
    regions: Mutex<Vec<Region>>,
}

#[derive(Debug)]
struct Region {
    addr: u64,
    bytes: Vec<u8>,
    device_writable: bool,
}

impl Memory {
    /// Maps `len` zeroed bytes at `addr`.
    pub(super) fn map(&self, addr: u64, len: usize, device_writable: bool) {
        self.regions.lock().unwrap().push(Region { addr, bytes: vec![0; len], device_writable });
    }

    /// The host writes its own memory (no permission applies).
    pub(super) fn poke(&self, addr: u64, data: &[u8]) {
        self.access(addr, data.len(), true, |bytes| bytes.copy_from_slice(data)).expect("poke outside the map");
    }

    /// The host reads its own memory.
    pub(super) fn peek(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0; len];
        self.access(addr, len, true, |bytes| out.copy_from_slice(bytes)).expect("peek outside the map");
        out
    }

    fn access(&self, addr: u64, len: usize, write_ok: bool, f: impl FnOnce(&mut [u8])) -> Result<(), DmaFault> {
        let mut regions = self.regions.lock().unwrap();
        let fault = DmaFault { addr, len };
        let region = regions
            .iter_mut()
            .find(|r| addr >= r.addr && addr.saturating_add(len as u64) <= r.addr + r.bytes.len() as u64)
            .ok_or(fault)?;
        if !write_ok {
            return Err(fault);
        }
        let off = (addr - region.addr) as usize;
        f(&mut region.bytes[off..off + len]);
        Ok(())
    }

    fn writable(&self, addr: u64) -> bool {
        self.regions
            .lock()
            .unwrap()
            .iter()
            .any(|r| r.device_writable && addr >= r.addr && addr - r.addr < r.bytes.len() as u64)
    }
}

impl DmaSpace for Memory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
        self.access(addr, buf.len(), true, |bytes| buf.copy_from_slice(bytes))
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), DmaFault> {
        let ok = self.writable(addr);
        self.access(addr, data.len(), ok, |bytes| bytes.copy_from_slice(data))
    }
}

/// One call a device made on its interrupt lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Irq {
    /// `set_level(asserted)`.
    Level(bool),
    /// `signal(vector)`.
    Msix(u16),
}

/// Interrupt lines that record every call, oldest first.
#[derive(Debug, Default)]
pub(super) struct Recorder {
    calls: Mutex<Vec<Irq>>,
}

impl Recorder {
    /// The calls so far, cleared.
    pub(super) fn take(&self) -> Vec<Irq> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

impl Interrupt for Recorder {
    fn set_level(&self, asserted: bool) {
        self.calls.lock().unwrap().push(Irq::Level(asserted));
    }

    fn signal(&self, vector: u16) {
        self.calls.lock().unwrap().push(Irq::Msix(vector));
    }
}

/// The device under test, its state directory kept alive beside it.
pub(super) type TestDevice = Device<Memory, Recorder>;

/// The PCI Express shape with the table kept by the device.
pub(super) const EXPRESS: Shape = Shape::Express { msix_table: TableOwner::Device };

/// A factory-fresh PF in the PCI Express shape (device-owned MSI-X table) in a temporary
/// directory, with busy periods of zero reads.
pub(super) fn device() -> (tempfile::TempDir, TestDevice) {
    device_with(FunctionType::Pf, EXPRESS)
}

/// A factory-fresh `function` in `shape` in a temporary directory, with busy periods of zero
/// reads.
pub(super) fn device_with(function: FunctionType, shape: Shape) -> (tempfile::TempDir, TestDevice) {
    let dir = tempfile::tempdir().unwrap();
    let firmware = Firmware::create_with(&dir.path().join("emu"), CreateOptions { seed: 1, function }).unwrap();
    let mut dev = Device::new(firmware, Memory::default(), Recorder::default(), shape);
    dev.set_timing(Timing { ready_delay: 0, exec_delay: 0, post_reads_per_stage: 1 });
    (dir, dev)
}

/// The PF's doorbell BAR.
const DB_BAR: u8 = 4;

/// A dword read of `bar` at `off`.
pub(super) fn read32(dev: &mut TestDevice, bar: u8, off: u64) -> u32 {
    let mut bytes = [0u8; 4];
    dev.read_bar(bar, off, &mut bytes);
    u32::from_le_bytes(bytes)
}

/// A dword write of `bar` at `off`.
pub(super) fn write32(dev: &mut TestDevice, bar: u8, off: u64, value: u32) {
    dev.write_bar(bar, off, &value.to_le_bytes());
}

/// Posts the mailbox at `addr` (HI, LO) and reads RDY once, which runs it.
pub(super) fn ring(dev: &mut TestDevice, addr: u64) -> u32 {
    let db = u64::from(MailboxDoorbell::OFFSET);
    write32(dev, DB_BAR, db, MailboxDoorbell::hi_for(addr).0);
    write32(dev, DB_BAR, db, MailboxDoorbell::lo_for(addr).0);
    read32(dev, DB_BAR, db)
}

/// Writes `wrb` as the mailbox at `addr` (the completion slot zeroed).
pub(super) fn post_wrb(mem: &Memory, addr: u64, wrb: &Wrb) {
    let mut raw = [0u8; WRB_LEN + COMPLETION_LEN];
    wrb.encode(&mut Writer::new(&mut raw)).unwrap();
    mem.poke(addr, &raw);
}

/// The completion the device wrote for the mailbox at `addr`.
pub(super) fn completion(mem: &Memory, addr: u64) -> Completion {
    let raw = mem.peek(addr + MAILBOX_COMPLETION_OFFSET as u64, COMPLETION_LEN);
    Completion::decode(&mut Reader::new(&raw)).unwrap()
}

#[test]
fn a_device_is_send_when_its_seams_are() {
    fn assert_send<T: Send>() {}
    assert_send::<TestDevice>();
}
