//! Flashing a full 16 MiB image (oce-firmware's full layout, six sections) through the real host
//! driver and the emulator, in offset mode, against one memcpy of the same 16 MiB: the emulator's
//! share should stay close to one copy into flash plus one CRC per section. Measured with each
//! [`FlashDurability`]: on a disk-backed state directory the per-section fdatasync of `Synced`
//! costs about as much as everything else together.

use std::borrow::Cow;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use oce_emulator::{Emulator, FlashDurability};
use oce_firmware::{ImageBuilder, Layout};
use oce_mailbox::commands::{FlashOpType, FlashromOp, WriteFlashrom};
use oce_mailbox::{BootstrapMailbox, SystemClock};

const FLASH: usize = 16 << 20;

fn flash_all(mbox: &mut BootstrapMailbox<Emulator>, image: &[u8], sections: &[(u32, u32)]) {
    for &(offset, size) in sections {
        let section = &image[offset as usize..][..size as usize];
        let count = section.len().div_ceil(WriteFlashrom::CHUNK);
        for (i, data) in section.chunks(WriteFlashrom::CHUNK).enumerate() {
            let op_code = if i + 1 == count { FlashromOp::Flash } else { FlashromOp::Save };
            let cmd = WriteFlashrom {
                op_code,
                op_type: FlashOpType::OffsetSpecified,
                offset: offset + (i * WriteFlashrom::CHUNK) as u32,
                data: Cow::Borrowed(data),
            };
            mbox.execute(&cmd).expect("chunk");
        }
    }
}

fn bench(c: &mut Criterion) {
    let layout = Layout::full();
    let sections: Vec<(u32, u32)> = layout.sections.iter().map(|s| (s.offset, s.pad_size)).collect();
    let image = ImageBuilder::new("12.0.0.1").layout(layout).build_flash().expect("image");
    assert_eq!(image.len(), FLASH);
    let dir = tempfile::tempdir().expect("temp dir");
    let emu = Emulator::create_seeded(&dir.path().join("emu"), 1).expect("emulator");
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(SystemClock)).expect("mailbox");
    mbox.initialize().expect("initialise");

    let mut group = c.benchmark_group("flash_16mib");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(FLASH as u64));
    group.bench_function("memcpy", |b| {
        let mut dst = vec![0u8; FLASH];
        b.iter(|| {
            dst.copy_from_slice(black_box(&image));
            black_box(&dst);
        })
    });
    for (name, durability) in
        [("emulator_synced", FlashDurability::Synced), ("emulator_page_cache", FlashDurability::PageCache)]
    {
        emu.set_flash_durability(durability);
        group.bench_function(name, |b| b.iter(|| flash_all(&mut mbox, &image, &sections)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
