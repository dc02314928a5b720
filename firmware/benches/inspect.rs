//! Parse + CRC throughput on a 16 MiB built image against raw crc32fast over the same bytes.
//!
//! The inspect path must stay close to the raw CRC speed (target: at least 70%): it borrows the
//! sections from the file and runs one CRC pass over each, nothing else of size.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use oce_firmware::{ImageBuilder, Layout, UfiImage, inspect};

fn bench(c: &mut Criterion) {
    let file = ImageBuilder::new("11.1.172.23").layout(Layout::full()).build().expect("valid preset");
    let mut group = c.benchmark_group("16MiB");
    group.throughput(Throughput::Bytes(file.len() as u64));
    group.sample_size(30);
    group.bench_function("crc32fast_raw", |b| b.iter(|| crc32fast::hash(black_box(&file))));
    group.bench_function("parse_and_crc", |b| {
        b.iter(|| {
            let image = UfiImage::parse(black_box(&file)).expect("valid image");
            image.sections().filter(|s| s.check_crc().is_ok()).count()
        })
    });
    group.bench_function("inspect", |b| {
        b.iter(|| {
            let image = UfiImage::parse(black_box(&file)).expect("valid image");
            inspect::inspect_image(&image)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
