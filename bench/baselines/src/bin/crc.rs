//! `crc FILE`: CRC-32 (crc32fast) over every byte of FILE, mapped as ocetool maps an image.
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    oce_bench_baselines::with_mapped_file("crc", |bytes| format!("{:08x}", crc32fast::hash(bytes)))
}
