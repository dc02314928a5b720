//! A small PCI device for the transport's own tests, benchmarks and the first guest boot: not an
//! adapter model (that is `oce-emulator`'s), just enough registers to prove every path of the
//! transport — config space, a BAR, DMA both ways, INTx and MSI-X — through the same seams the
//! emulated adapter uses, gated by its command register as a real function is.
//!
//! BAR0 (4 KiB) registers, 32 bits each:
//!
//! | offset | register |
//! |---|---|
//! | 0x00 | ECHO: reads back what was written |
//! | 0x08 / 0x0C | SRC address, low / high |
//! | 0x10 / 0x14 | DST address, low / high |
//! | 0x18 | GO: write n: read n bytes at SRC, write their complement at DST (in 64 KiB steps) |
//! | 0x1C | STATUS: 0 after a good GO, 1 after a DMA fault, 2 with bus mastering off |
//! | 0x20 | INTX: write 1 / 0 to assert / deassert INTx |
//! | 0x24 | MSIX: write v to send MSI-X vector v |

use oce_emulator::device::{DmaSpace, Interrupt};

use crate::backend::{Backend, Layout};

/// Vendor 0x1234 (QEMU's test devices, as `edu`), device 0x0ce0: this test device.
pub const TEST_ID: u32 = 0x0ce0_1234;
/// BAR0 length.
pub const BAR0_LEN: u64 = 4096;
/// Registers (see the module docs).
pub mod regs {
    /// ECHO.
    pub const ECHO: u64 = 0x00;
    /// SRC low.
    pub const SRC: u64 = 0x08;
    /// DST low.
    pub const DST: u64 = 0x10;
    /// GO.
    pub const GO: u64 = 0x18;
    /// STATUS.
    pub const STATUS: u64 = 0x1C;
    /// INTX.
    pub const INTX: u64 = 0x20;
    /// MSIX.
    pub const MSIX: u64 = 0x24;
}
/// The most a GO copies per DMA read and write (its own choice; the length written to GO is not
/// bounded, so a GO copies in steps of this size).
const GO_CHUNK: usize = 64 * 1024;
/// MSI-X vectors the test device offers.
pub const VECTORS: u16 = 4;

/// Command register bits (PCI Local Bus spec): memory space, bus master, INTx disable.
const CMD_MEMORY: u16 = 1 << 1;
const CMD_MASTER: u16 = 1 << 2;
const CMD_INTX_DISABLE: u16 = 1 << 10;

/// The test device over a DMA space and interrupt lines.
#[derive(Debug)]
pub struct TestDevice<D: DmaSpace, I: Interrupt> {
    dma: D,
    irq: I,
    config: [u8; 256],
    regs: [u32; 16],
    intx: bool,
}

impl<D: DmaSpace, I: Interrupt> TestDevice<D, I> {
    /// A device after power-on.
    pub fn new(dma: D, irq: I) -> Self {
        Self { dma, irq, config: power_on_config(), regs: [0; 16], intx: false }
    }

    fn command(&self) -> u16 {
        u16::from_le_bytes([self.config[4], self.config[5]])
    }

    fn reg(&self, off: u64) -> u32 {
        self.regs.get(off as usize / 4).copied().unwrap_or(0)
    }

    fn addr(&self, off: u64) -> u64 {
        u64::from(self.reg(off)) | (u64::from(self.reg(off + 4)) << 32)
    }

    fn go(&mut self, n: usize) -> u32 {
        if self.command() & CMD_MASTER == 0 {
            return 2;
        }
        // The length is the guest's: copy through a bounded buffer, never one of its size.
        let (src, dst) = (self.addr(regs::SRC), self.addr(regs::DST));
        let mut buf = vec![0u8; n.min(GO_CHUNK)];
        let mut done = 0;
        while done < n {
            let len = (n - done).min(GO_CHUNK);
            let chunk = &mut buf[..len];
            let at = done as u64;
            if self.dma.read(src.wrapping_add(at), chunk).is_err() {
                return 1;
            }
            chunk.iter_mut().for_each(|b| *b = !*b);
            if self.dma.write(dst.wrapping_add(at), chunk).is_err() {
                return 1;
            }
            done += len;
        }
        0
    }

    fn update_intx(&mut self) {
        let on = self.intx && self.command() & CMD_INTX_DISABLE == 0;
        // Status bit 3: interrupt status, as the kernel's INTx masking checks read it.
        self.config[6] = (self.config[6] & !0x08) | if self.intx { 0x08 } else { 0 };
        self.irq.set_level(on);
    }
}

impl<D: DmaSpace + Send, I: Interrupt + Send> Backend for TestDevice<D, I> {
    fn layout(&self) -> Layout {
        Layout { config_len: 256, bars: [BAR0_LEN, 0, 0, 0, 0, 0], msix_vectors: VECTORS }
    }

    fn read_config(&mut self, off: u16, data: &mut [u8]) {
        for (i, b) in data.iter_mut().enumerate() {
            *b = self.config.get(usize::from(off) + i).copied().unwrap_or(0);
        }
    }

    fn write_config(&mut self, off: u16, data: &[u8]) {
        for (i, &b) in data.iter().enumerate() {
            let at = usize::from(off) + i;
            // Only the command register's implemented bits are writable.
            let mask = (CMD_MEMORY | CMD_MASTER | CMD_INTX_DISABLE).to_le_bytes();
            if let Some(m) = at.checked_sub(4).and_then(|k| mask.get(k)) {
                self.config[at] = (self.config[at] & !m) | (b & m);
            }
        }
        self.update_intx();
    }

    fn read_bar(&mut self, _bar: u8, off: u64, data: &mut [u8]) {
        let v = self.reg(off & !3).to_le_bytes();
        for (i, b) in data.iter_mut().enumerate() {
            *b = v.get((off as usize & 3) + i).copied().unwrap_or(0);
        }
    }

    fn write_bar(&mut self, _bar: u8, off: u64, data: &[u8]) {
        if !off.is_multiple_of(4) || data.len() != 4 {
            return;
        }
        let v = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        match off {
            regs::GO => self.regs[regs::STATUS as usize / 4] = self.go(v as usize),
            regs::INTX => {
                self.intx = v != 0;
                self.update_intx();
            }
            regs::MSIX => {
                if self.command() & CMD_MASTER != 0 {
                    self.irq.signal(v as u16);
                }
            }
            _ => {
                if let Some(r) = self.regs.get_mut(off as usize / 4) {
                    *r = v;
                }
            }
        }
    }

    fn reset(&mut self) {
        self.config = power_on_config();
        self.regs = [0; 16];
        self.intx = false;
        self.irq.set_level(false);
    }
}

fn power_on_config() -> [u8; 256] {
    let mut config = [0u8; 256];
    config[0..4].copy_from_slice(&TEST_ID.to_le_bytes());
    config[0x0B] = 0xFF; // class: unassigned
    config[0x3D] = 1; // INTA#
    config
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use oce_emulator::device::{DmaFault, NoInterrupt};

    use super::*;

    /// Memory that is all zeros and records the length of every access.
    #[derive(Default)]
    struct Recording(RefCell<Vec<usize>>);

    impl DmaSpace for Recording {
        fn read(&self, _: u64, buf: &mut [u8]) -> Result<(), DmaFault> {
            self.0.borrow_mut().push(buf.len());
            buf.fill(0);
            Ok(())
        }
        fn write(&self, _: u64, data: &[u8]) -> Result<(), DmaFault> {
            self.0.borrow_mut().push(data.len());
            Ok(())
        }
    }

    #[test]
    fn a_go_never_holds_more_than_64_kib_whatever_length_the_guest_writes() {
        let mut dev = TestDevice::new(Recording::default(), NoInterrupt);
        dev.write_config(4, &CMD_MASTER.to_le_bytes());
        dev.write_bar(0, regs::GO, &(200_000u32).to_le_bytes());
        assert_eq!(dev.reg(regs::STATUS), 0);
        // 200000 = 3 * 65536 + 3392, each step read then written.
        let steps = [65536, 65536, 65536, 65536, 65536, 65536, 3392, 3392];
        assert_eq!(*dev.dma.0.borrow(), steps);
    }
}
