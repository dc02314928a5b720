//! Throughput of a full flash through the emulator (docs/performance.md targets), as a
//! measurement that prints and asserts nothing about time (design.md §8: no timed assertions in
//! tests). Run:
//!
//! ```text
//! cargo test --release -p oce-tests --test flash_perf -- --ignored --nocapture
//! ```
//!
//! It prints, best of a few runs each: a 16 MiB `memcpy`; a full flash of the 16 MiB
//! `Layout::full()` image on a fresh emulated adapter; `fw inspect` of that image (parse, every
//! section's CRC, option ROMs); a forced full rewrite on one adapter; and a re-flash of the
//! unchanged image (CRC queries only).
//!
//! The emulated adapter lives in a temporary directory (`TMPDIR`). The emulator writes each
//! committed section to `flash.bin` through the page cache (`FlashDurability::PageCache`, the
//! default; no fdatasync), so the numbers measure the command path (host and emulated firmware)
//! and the page-cache copy, not the disk.

use std::sync::Arc;
use std::time::{Duration, Instant};

use oce_emulator::Emulator;
use oce_firmware::flash::{self, NoProgress, Policy};
use oce_firmware::{ImageBuilder, Layout, UfiImage, inspect};
use oce_mailbox::{BootstrapMailbox, SystemClock};

const RUNS: usize = 5;

fn best(mut f: impl FnMut() -> Duration) -> Duration {
    (0..RUNS).map(|_| f()).min().unwrap_or_default()
}

fn mib_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / (1 << 20) as f64 / d.as_secs_f64()
}

fn open(emu: &Emulator) -> BootstrapMailbox<Emulator> {
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(SystemClock)).unwrap();
    mbox.initialize().unwrap();
    mbox
}

#[test]
#[ignore = "a measurement: run with --release -- --ignored --nocapture"]
fn full_flash_throughput_against_memcpy() {
    let file = ImageBuilder::new("11.2.1.0").layout(Layout::full()).build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let payload = file.len() - image.payload_base();

    let mut dst = vec![0u8; file.len()];
    let memcpy = best(|| {
        let t = Instant::now();
        dst.copy_from_slice(std::hint::black_box(&file));
        std::hint::black_box(&dst);
        t.elapsed()
    });

    let mut reflash = Duration::MAX;
    let full = best(|| {
        let dir = tempfile::tempdir().unwrap();
        let emu = Emulator::create_seeded(&dir.path().join("emu"), 7).unwrap();
        let mut mbox = open(&emu);
        let t = Instant::now();
        let adapter = flash::read_adapter(&mut mbox, &image).unwrap();
        let plan = flash::plan(&image, &adapter, Policy::default()).unwrap();
        let report = flash::flash_ufi(&mut mbox, &image, &plan, &mut NoProgress).unwrap();
        let elapsed = t.elapsed();
        assert_eq!(report.bytes_written as usize, payload);

        let t = Instant::now();
        let reparsed = UfiImage::parse(&file).unwrap();
        let adapter = flash::read_adapter(&mut mbox, &reparsed).unwrap();
        let plan = flash::plan(&reparsed, &adapter, Policy::default()).unwrap();
        let report = flash::flash_ufi(&mut mbox, &reparsed, &plan, &mut NoProgress).unwrap();
        reflash = reflash.min(t.elapsed());
        assert!(!report.changed);
        elapsed
    });

    // Forced full rewrites on one adapter (no emulator creation in the loop; OCE_FLASH_PERF_LOOPS
    // raises the count for profiling).
    let dir = tempfile::tempdir().unwrap();
    let emu = Emulator::create_seeded(&dir.path().join("emu"), 7).unwrap();
    let mut mbox = open(&emu);
    let adapter = flash::read_adapter(&mut mbox, &image).unwrap();
    let forced = flash::plan(&image, &adapter, Policy { allow_downgrade: true, force: true }).unwrap();
    let loops = std::env::var("OCE_FLASH_PERF_LOOPS").ok().and_then(|v| v.parse().ok()).unwrap_or(RUNS);
    let rewrite = (0..loops)
        .map(|_| {
            let t = Instant::now();
            let report = flash::flash_ufi(&mut mbox, &image, &forced, &mut NoProgress).unwrap();
            assert_eq!(report.bytes_written as usize, payload);
            t.elapsed()
        })
        .min()
        .unwrap_or_default();

    let inspect = best(|| {
        let t = Instant::now();
        let report = inspect::inspect(std::hint::black_box(&file));
        std::hint::black_box(&report);
        t.elapsed()
    });

    println!("image: {} bytes, payload {} bytes ({} chunks)", file.len(), payload, payload / flash::CHUNK);
    println!("memcpy 16 MiB:           {memcpy:>10.3?}  {:>8.0} MiB/s", mib_per_s(file.len(), memcpy));
    println!("full flash (emulator):   {full:>10.3?}  {:>8.0} MiB/s", mib_per_s(payload, full));
    println!(
        "  = {:.1}% of memcpy throughput (target >= 15%)",
        100.0 * memcpy.as_secs_f64() / full.as_secs_f64() * payload as f64 / file.len() as f64
    );
    println!("forced full rewrite:     {rewrite:>10.3?}  {:>8.0} MiB/s", mib_per_s(payload, rewrite));
    println!("fw inspect:              {inspect:>10.3?}");
    println!(
        "re-flash unchanged:      {reflash:>10.3?}  = {:.2}x inspect (target <= 1.2x)",
        reflash.as_secs_f64() / inspect.as_secs_f64()
    );
}
