//! Real-kernel tests of the VFIO backend and the driver hand-off, run inside the QEMU guest that
//! `tests/vfio-qemu/run.sh` boots (recipes/vfio-qemu.md). On any other machine they are ignored.
//!
//! The guest has QEMU's `edu` device (1234:11e8, unbound) and an `e1000` (8086:100e, held by the
//! e1000 driver); the script passes their addresses in `OCE_EDU` and `OCE_E1000`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use oce_pci::handoff::restore_all;
use oce_pci::signals::{self, Signal};
use oce_pci::sysfs::{self, VFIO_PCI};
use oce_pci::{
    ConfigSpace, DmaBuffer, HandOff, HandOffOptions, KernelSysfs, PciAddress, PciError, PciFunction, RegisterIo, Roots,
    VfioFunction,
};

fn address(var: &str) -> PciAddress {
    let value = std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set: run this inside the vfio-qemu guest"));
    value.parse().unwrap()
}

fn options(allow_unbind: bool) -> HandOffOptions {
    HandOffOptions { allow_unbind, ..HandOffOptions::default() }
}

/// edu's registers (QEMU docs/specs/edu.txt; recipes/vfio-qemu.md).
mod edu {
    pub const ID: u32 = 0x00;
    pub const ID_VALUE: u32 = 0x0100_00ed;
    pub const LIVENESS: u32 = 0x04;
    pub const DMA_SRC: u32 = 0x80;
    pub const DMA_DST: u32 = 0x88;
    pub const DMA_COUNT: u32 = 0x90;
    pub const DMA_CMD: u32 = 0x98;
    pub const DMA_START: u32 = 1 << 0;
    pub const DMA_TO_RAM: u32 = 1 << 1;
    /// The device-side DMA window: only 0x40000..0x41000 is valid.
    pub const DMA_WINDOW: u32 = 0x40000;
    /// edu's DMA mask is 28 bits.
    pub const DMA_LIMIT: u64 = 1 << 28;
}

/// Starts one edu DMA transfer and waits for the engine to finish.
fn edu_dma(bar: &impl RegisterIo, src: u64, dst: u64, count: u32, cmd: u32) {
    // edu keeps the whole 64-bit value of a 4-byte write to these registers; all addresses here
    // are below 256 MiB.
    bar.write32(edu::DMA_SRC, u32::try_from(src).unwrap());
    bar.write32(edu::DMA_DST, u32::try_from(dst).unwrap());
    bar.write32(edu::DMA_COUNT, count);
    bar.write32(edu::DMA_CMD, cmd | edu::DMA_START);
    let deadline = Instant::now() + Duration::from_secs(10);
    while bar.read32(edu::DMA_CMD) & edu::DMA_START != 0 {
        assert!(Instant::now() < deadline, "edu DMA did not finish");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
#[ignore = "needs the vfio-qemu guest (tests/vfio-qemu/run.sh)"]
fn edu_config_bar_and_dma_through_vfio() {
    let addr = address("OCE_EDU");
    let roots = Roots::default();
    assert_eq!(sysfs::bound_driver(&roots, addr).unwrap(), None, "edu starts unbound");
    let handoff = HandOff::acquire(addr, &roots, &options(false), Arc::new(KernelSysfs)).unwrap();
    assert!(handoff.changed_binding());
    assert_eq!(sysfs::bound_driver(&roots, addr).unwrap().as_deref(), Some(VFIO_PCI));
    {
        let func = VfioFunction::open(&handoff).unwrap();
        println!("edu: iova ranges {:x?}, IOMMU page {:#x}", func.iova_ranges(), func.iommu_alignment());

        let id = func.config().read32(0).unwrap();
        println!("edu: config[0] = {id:#010x}");
        assert_eq!(id & 0xffff, 0x1234, "vendor");
        assert_eq!(id >> 16, 0x11e8, "device");
        assert!(matches!(func.config().read32(2), Err(PciError::ConfigOffset { off: 2 })));
        let command = func.config().read32(0x04).unwrap();
        assert_eq!(command & 0b110, 0b110, "memory space and bus master enabled on open");

        let bar = func.map_bar(0, 0x100).unwrap();
        println!("edu: BAR0 {:#x} bytes, mapped: {}", bar.len(), bar.is_mapped());
        assert!(bar.is_mapped(), "edu's BAR0 is mmap-able");
        assert_eq!(bar.read32(edu::ID), edu::ID_VALUE);
        bar.write32(edu::LIVENESS, 0x1234_5678);
        assert_eq!(bar.read32(edu::LIVENESS), !0x1234_5678);
        let len = u32::try_from(bar.len()).unwrap();
        assert_eq!(bar.read32(len), u32::MAX, "outside the BAR reads all ones");
        assert_eq!(bar.read32(2), u32::MAX, "unaligned reads all ones");
        assert!(matches!(func.map_bar(0, 1 << 30), Err(PciError::BarTooSmall { bar: 0, .. })));

        let by_fd = func.map_bar_unmapped(0, 0x100).unwrap();
        assert!(!by_fd.is_mapped());
        assert_eq!(by_fd.read32(edu::ID), edu::ID_VALUE, "pread path");
        by_fd.write32(edu::LIVENESS, 0x0f0f_0000);
        assert_eq!(by_fd.read32(edu::LIVENESS), 0xf0f0_ffff, "pwrite path");
        assert_eq!(bar.read32(edu::LIVENESS), 0xf0f0_ffff, "both paths reach the same register");
        assert_eq!(by_fd.read32(len), u32::MAX, "outside the BAR reads all ones (pread path)");
        assert!(matches!(func.map_bar(6, 0), Err(PciError::NoSuchBar { bar: 6 })));

        let src = func.alloc_dma(4096).unwrap();
        let dst = func.alloc_dma(100).unwrap();
        println!("edu: DMA buffers at IOVA {:#x} and {:#x}", src.iova(), dst.iova());
        assert!(src.iova() + 4096 <= edu::DMA_LIMIT && dst.iova() + 4096 <= edu::DMA_LIMIT);
        assert_ne!(src.iova(), dst.iova());
        assert_eq!(dst.len(), 100);
        let pattern: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(7) ^ (i >> 8)) as u8).collect();
        // An unaligned head and tail exercise the byte path of the word-by-word copy.
        src.write_at(0, &pattern[..3]).unwrap();
        src.write_at(3, &pattern[3..4093]).unwrap();
        src.write_at(4093, &pattern[4093..]).unwrap();
        assert!(matches!(src.write_at(4095, &[0, 0]), Err(PciError::DmaOutOfBounds { .. })));
        let mut back = vec![0u8; 4096];
        src.read_at(0, &mut back).unwrap();
        assert_eq!(back, pattern, "host-side copy in and out");

        // QEMU 7.2's edu rejects (and aborts on) a transfer that ends exactly at the end of its
        // 4 KiB window, so stay inside it.
        let window = u64::from(edu::DMA_WINDOW);
        edu_dma(&bar, src.iova(), window, 2048, 0);
        edu_dma(&bar, window + 7, dst.iova(), 100, edu::DMA_TO_RAM);
        let mut got = vec![0u8; 100];
        dst.read_at(0, &mut got).unwrap();
        assert_eq!(got, pattern[7..107], "RAM -> edu -> RAM through the IOMMU");
        println!("edu: DMA round trip through the IOMMU ok");
    }
    handoff.restore().unwrap();
    assert_eq!(sysfs::bound_driver(&roots, addr).unwrap(), None, "edu is left unbound, as it was found");
}

#[test]
#[ignore = "needs the vfio-qemu guest (tests/vfio-qemu/run.sh)"]
fn e1000_hand_off_and_back() {
    let addr = address("OCE_E1000");
    let roots = Roots::default();
    assert_eq!(sysfs::bound_driver(&roots, addr).unwrap().as_deref(), Some("e1000"));

    let err = HandOff::acquire(addr, &roots, &options(false), Arc::new(KernelSysfs)).unwrap_err();
    println!("e1000 without --unbind: {err}");
    assert!(err.is_refusal());
    assert!(matches!(&err, PciError::DriverBound { driver, .. } if driver == "e1000"));
    assert!(err.to_string().contains("--unbind"));
    assert_eq!(sysfs::bound_driver(&roots, addr).unwrap().as_deref(), Some("e1000"));

    let handoff = HandOff::acquire(addr, &roots, &options(true), Arc::new(KernelSysfs)).unwrap();
    assert_eq!(handoff.original_driver(), Some("e1000"));
    assert_eq!(sysfs::bound_driver(&roots, addr).unwrap().as_deref(), Some(VFIO_PCI));
    assert!(handoff.vfio_group_node().is_some_and(|n| n.exists()));
    {
        let func = VfioFunction::open(&handoff).unwrap();
        assert_eq!(func.config().read32(0).unwrap(), 0x100e_8086);
        let bar = func.map_bar(0, 0x2_0000).unwrap();
        let ctrl = bar.read32(0);
        println!("e1000: BAR0 {:#x} bytes, mapped: {}, register 0 (CTRL) = {ctrl:#010x}", bar.len(), bar.is_mapped());
        assert_ne!(ctrl, u32::MAX, "register 0 reads from the device, not an unclaimed address");
        assert!(matches!(func.map_bar(0, 0x4_0000), Err(PciError::BarTooSmall { bar: 0, len: 0x2_0000, .. })));
        // e1000's BAR1 is an I/O-port BAR: not a memory BAR.
        assert!(matches!(func.map_bar(1, 0), Err(PciError::NoSuchBar { bar: 1 })));
    }
    handoff.restore().unwrap();
    assert_eq!(sysfs::bound_driver(&roots, addr).unwrap().as_deref(), Some("e1000"));
    println!("e1000: back on e1000");
}

/// The path the CLI takes on Ctrl-C / SIGTERM: the handler only records the signal, the command
/// notices it between steps and returns, and the guard gives the device back as it drops.
fn command_stopped_by_a_signal(addr: PciAddress, roots: &Roots) -> Result<(), PciError> {
    let handoff = HandOff::acquire(addr, roots, &options(true), Arc::new(KernelSysfs))?;
    let func = VfioFunction::open(&handoff)?;
    let _bar = func.map_bar(0, 0x2_0000)?;
    // SAFETY: raise(3) of a signal whose handler `signals::install` set.
    assert_eq!(unsafe { libc::raise(libc::SIGTERM) }, 0);
    signals::check()?;
    unreachable!("the signal was recorded");
}

#[test]
#[ignore = "needs the vfio-qemu guest (tests/vfio-qemu/run.sh)"]
fn sigterm_mid_command_restores_e1000() {
    let addr = address("OCE_E1000");
    let roots = Roots::default();
    signals::install().unwrap();
    let err = command_stopped_by_a_signal(addr, &roots).unwrap_err();
    assert!(matches!(err, PciError::Interrupted { signal: Signal::Terminate }), "{err}");
    assert_eq!(signals::pending().map(Signal::exit_code), Some(143));
    signals::clear();
    assert_eq!(sysfs::bound_driver(&roots, addr).unwrap().as_deref(), Some("e1000"));
    assert!(restore_all().is_empty(), "nothing left to restore");
    println!("e1000: SIGTERM mid-command, back on e1000");
}
