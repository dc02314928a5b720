//! The hot paths whose speed docs/performance.md tracks, in process, through the real host stack and the emulator:
//!
//! - `mailbox_round_trip`: one command through `BootstrapMailbox<Emulator>` — embedded
//!   (GET_FW_VERSION, the 236-byte WRB payload) and non-embedded (GET_CNTL_ATTRIBUTES and
//!   GET_FUNC_CONFIG, the largest buffer ocetool sends: one SGE into a separate DMA buffer);
//! - `flash_16mib`: the whole library `fw update` flow (parse, `read_adapter`, `plan`,
//!   `flash_ufi`) of the 16 MiB `Layout::full()` image onto a factory-fresh emulated adapter,
//!   next to one memcpy of the same bytes (the physical limit the flash is measured against);
//!   and a re-flash of the same image onto the adapter that already holds it (CRC queries only).
//!
//! Parsing and validating a 16 MiB image is in `firmware/benches/inspect.rs`, the raw
//! WRITE_FLASHROM loop in `emulator/benches/flash.rs`. `bench/run.sh` runs all three next to the
//! process-level measurements. Throughputs are reported over the image file's bytes.
//!
//! Whatever a measured run must not do is asserted outside the timed loops: a full flash writes
//! every section, a re-flash reports no change and sends no WRITE_FLASHROM.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use oce_emulator::Emulator;
use oce_firmware::flash::{NoProgress, Policy};
use oce_firmware::{ImageBuilder, Layout};
use oce_mailbox::commands::{GetCntlAttributes, GetFuncConfig, GetFwVersion};
use oce_mailbox::{BootstrapMailbox, SystemClock};
use oce_tests::{flash_file, write_flashrom_count};
use tempfile::TempDir;

/// The image version flashed: newer than the emulator's factory firmware, so the plan allows it.
const IMAGE_VERSION: &str = "12.0.0.1";

/// A host mailbox as `ocetool` opens one: the system clock, POST waited, fw_init, FUNCTION_RESET.
fn open_host(emu: &Emulator) -> BootstrapMailbox<Emulator> {
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(SystemClock)).expect("open mailbox");
    mbox.initialize().expect("initialise");
    mbox
}

/// A factory-fresh adapter made once, copied for every flash: creating one builds the factory
/// image, which is no part of a flash.
struct Template {
    dir: TempDir,
}

impl Template {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        Emulator::create_seeded(&dir.path().join("emu"), 7).expect("create emulator");
        Self { dir }
    }

    /// A copy of the factory-fresh adapter in its own directory, opened and initialised.
    fn fresh(&self) -> (TempDir, BootstrapMailbox<Emulator>) {
        let copy = tempfile::tempdir().expect("temp dir");
        let emu_dir = copy.path().join("emu");
        copy_dir(&self.dir.path().join("emu"), &emu_dir);
        let emu = Emulator::open(&emu_dir).expect("open the copy");
        let mbox = open_host(&emu);
        (copy, mbox)
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy state file");
    }
}

fn mailbox_round_trip(c: &mut Criterion) {
    let template = Template::new();
    let (_dir, mut mbox) = template.fresh();
    let mut group = c.benchmark_group("mailbox_round_trip");
    group.bench_function("embedded_get_fw_version", |b| b.iter(|| mbox.execute(&GetFwVersion).expect("command")));
    group.bench_function("non_embedded_get_cntl_attributes", |b| {
        b.iter(|| mbox.execute(&GetCntlAttributes).expect("command"))
    });
    group.bench_function("non_embedded_get_func_config", |b| b.iter(|| mbox.execute(&GetFuncConfig).expect("command")));
    group.finish();
}

fn flash_16mib(c: &mut Criterion) {
    let file = ImageBuilder::new(IMAGE_VERSION).layout(Layout::full()).build().expect("valid preset");
    let template = Template::new();

    // Outside the timed loops: a full flash writes every section, and a re-flash of the same image
    // reports no change and sends no WRITE_FLASHROM (COMMON 7).
    let (_flashed_dir, mut flashed) = template.fresh();
    let report = flash_file(&mut flashed, &file, Policy::default(), &mut NoProgress).expect("full flash");
    assert!(report.changed && report.sections.iter().all(|s| s.bytes > 0));
    flashed.function().take_events();
    let report = flash_file(&mut flashed, &file, Policy::default(), &mut NoProgress).expect("re-flash");
    assert!(!report.changed, "re-flashing the same image changed something");
    assert_eq!(report.bytes_written, 0);
    assert_eq!(write_flashrom_count(flashed.function()), 0, "a re-flash sent WRITE_FLASHROM");

    let mut group = c.benchmark_group("flash_16mib");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(file.len() as u64));
    group.bench_function("memcpy", |b| {
        let mut dst = vec![0u8; file.len()];
        b.iter(|| {
            dst.copy_from_slice(black_box(&file));
            black_box(&dst);
        })
    });
    group.bench_function("full_flash", |b| {
        b.iter_batched_ref(
            || template.fresh(),
            |(_dir, mbox)| flash_file(mbox, black_box(&file), Policy::default(), &mut NoProgress).expect("flash"),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("reflash_unchanged", |b| {
        b.iter(|| flash_file(&mut flashed, black_box(&file), Policy::default(), &mut NoProgress).expect("re-flash"))
    });
    group.finish();
    assert_eq!(write_flashrom_count(flashed.function()), 0, "a timed re-flash sent WRITE_FLASHROM");
}

criterion_group!(benches, mailbox_round_trip, flash_16mib);
criterion_main!(benches);
