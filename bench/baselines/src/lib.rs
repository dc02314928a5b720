//! Baseline processes that `bench/run.sh` times next to `ocetool`: each does the least
//! a command of its kind could do, so the ratio against it shows what ocetool adds.
//!
//! - `noop`: starts and exits (the process-start floor for `ocetool query`);
//! - `crc FILE`: maps FILE the way ocetool maps an image and runs crc32fast over every byte (the
//!   floor for `ocetool fw inspect`);
//! - `memcpy FILE`: maps FILE and copies its bytes into a fresh buffer (the floor for
//!   `ocetool fw update`, which must at least move every byte once).
//!
//! The helpers here are what `crc` and `memcpy` share: argument handling and the file map.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use oce_pci::mmap::ReadOnlyMap;

/// Maps the one FILE argument read-only (the same map ocetool's `fw inspect` and `fw update`
/// use) and runs `work` on its bytes; prints `work`'s line on stdout. Usage errors exit 2, an
/// unreadable file 1.
pub fn with_mapped_file(tool: &str, work: impl FnOnce(&[u8]) -> String) -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        eprintln!("usage: {tool} FILE");
        return ExitCode::from(2);
    };
    let path = PathBuf::from(path);
    match ReadOnlyMap::open(&path) {
        Ok(map) => {
            println!("{}", work(map.as_slice()));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{tool}: {}: {e}", path.display());
            ExitCode::from(1)
        }
    }
}
