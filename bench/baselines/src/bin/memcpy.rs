//! `memcpy FILE`: copies every byte of FILE (mapped as ocetool maps an image) into a fresh buffer.
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    oce_bench_baselines::with_mapped_file("memcpy", |bytes| {
        let copy = bytes.to_vec();
        // Print something that depends on the copy so the copy cannot be optimised away.
        format!("{} bytes, last {:?}", copy.len(), std::hint::black_box(&copy).last())
    })
}
