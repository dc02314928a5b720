//! A register read as a guest sees it: inside a QEMU guest, opens a PCI function through the
//! guest kernel's vfio-pci with ocetool's own VFIO backend (`oce_pci::VfioFunction`), maps BAR0
//! and times 32-bit reads of one register. With a vfio-user device each read is a round trip
//! guest → QEMU → server → QEMU → guest. Run by `tests/qemu/smoke.sh`; reported in
//! docs/performance.md.
//!
//! Usage: `guest-bar-read BDF [OFFSET] [READS]`; prints one line with the value read first and the
//! median of 5 rounds.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use oce_pci::{HandOff, HandOffOptions, KernelSysfs, PciAddress, PciFunction, RegisterIo, Roots, VfioFunction};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(addr) = args.get(1).and_then(|a| a.parse::<PciAddress>().ok()) else {
        eprintln!("usage: guest-bar-read BDF [OFFSET] [READS]");
        return ExitCode::from(2);
    };
    let offset: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let reads: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let roots = Roots::new("/sys", "/dev");
    let handoff = match HandOff::acquire(addr, &roots, &HandOffOptions::default(), Arc::new(KernelSysfs)) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("guest-bar-read: {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bar = match VfioFunction::open(&handoff).and_then(|f| f.map_bar(0, u64::from(offset) + 4)) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("guest-bar-read: {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let value = bar.read32(offset);
    let mut rounds = Vec::new();
    let mut sink = 0u32;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reads {
            sink = sink.wrapping_add(bar.read32(offset));
        }
        rounds.push(t.elapsed().as_secs_f64() * 1e6 / f64::from(reads));
    }
    rounds.sort_by(f64::total_cmp);
    println!(
        "guest-bar-read: BAR0+{offset:#x} reads {value:#010x}; {reads} reads per round, median {:.1} us per read (rounds {:.1}..{:.1} us; sum {sink:#x})",
        rounds[2], rounds[0], rounds[4]
    );
    ExitCode::SUCCESS
}
