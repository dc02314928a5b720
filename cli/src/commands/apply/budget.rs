//! `apply --firmware-budget SECS`: a firmware flash starts only when its worst case fits in what
//! is left of the budget, so a caller bounded by a timer (the boot hook under udev, the systemd
//! unit) never has its timer fall in the middle of a flash; a flash that does not fit is deferred
//! and reported instead.
//!
//! The worst case counts every firmware command the update can send, each at its full timeout as
//! the mailbox driver waits it out (`BootstrapMailbox::post`: the ready poll before the
//! address-high write and before the address-low write, `--command-timeout` each, then the
//! completion, the command's own timeout):
//!
//! - one WRITE_FLASHROM per 32 KiB chunk of every section, 40 s each (spec/protocol.md §3.9,
//!   ufi-firmware.md §3.5: be2net's wait for one chunk's asynchronous completion), plus the
//!   chunks of the largest section once more: the fallback to op types may rewrite the section
//!   it happened in (ufi-firmware.md §2.8 steps 5 and 7); sections already on flash count too,
//!   since which ones differ is known only from the adapter;
//! - two READ_FLASHROM CRC queries per section (the check before the flash and the walk's own),
//!   plus one more for each of them at a fallback, 12 s each (ufi-firmware.md §3.5);
//! - [`OTHER_COMMANDS`] ordinary commands around them (versions, chip, profiles), 4 s each.

use std::path::Path;
use std::time::{Duration, Instant};

use oce_firmware::flash::CHUNK;
use oce_firmware::ufi::{UfiImage, map_file};
use oce_mailbox::Command;
use oce_mailbox::command::DEFAULT_TIMEOUT;
use oce_mailbox::commands::{ReadFlashrom, WriteFlashrom};
use serde::Serialize;

use crate::error::{CliResult, image_error};

/// The ordinary commands `fw update` sends around the flash: the adapter's versions and chip
/// before, the versions and the profiles after (about a dozen; counted generously).
pub const OTHER_COMMANDS: u32 = 16;

/// The longest one command can take: two ready polls, then its completion (`post` in
/// `mailbox/src/driver.rs`).
fn command_worst(timeout: Duration, ready: Duration) -> Duration {
    ready * 2 + timeout.max(ready)
}

/// The worst-case time of flashing `image` (see the module documentation), for a ready-poll
/// timeout of `ready` (`--command-timeout`).
pub fn worst_case(image: &UfiImage<'_>, ready: Duration) -> Duration {
    let chunks: Vec<u32> =
        image.sections().map(|s| u32::try_from(s.data.len().div_ceil(CHUNK)).unwrap_or(u32::MAX)).collect();
    let sections = u32::try_from(chunks.len()).unwrap_or(u32::MAX);
    let writes =
        chunks.iter().fold(0u32, |a, c| a.saturating_add(*c)).saturating_add(chunks.iter().copied().max().unwrap_or(0));
    let reads = sections.saturating_add(1).saturating_mul(2);
    command_worst(WriteFlashrom::TIMEOUT, ready).saturating_mul(writes)
        + command_worst(ReadFlashrom::TIMEOUT, ready).saturating_mul(reads)
        + command_worst(DEFAULT_TIMEOUT, ready).saturating_mul(OTHER_COMMANDS)
}

/// The time `apply` may spend on flashing, from its start.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    limit: Duration,
    started: Instant,
    ready: Duration,
}

/// `deferred` of an adapter in `apply`'s JSON: the flash that did not fit.
#[derive(Debug, Clone, Serialize)]
pub struct DeferredJson {
    /// The image's firmware version.
    pub firmware: String,
    /// The version on flash, which stays.
    pub stored: String,
    /// The flash's worst case, in seconds (rounded up).
    pub worst_case_secs: u64,
    /// `--firmware-budget`.
    pub budget_secs: u64,
    /// What was left of it when the flash was to start.
    pub left_secs: u64,
}

impl Budget {
    /// A budget of `limit` from now, for ready polls of `ready`.
    pub fn new(limit: Duration, ready: Duration) -> Self {
        Self { limit, started: Instant::now(), ready }
    }

    /// `Some` when flashing the image in `file` (firmware `version`, over `stored`) may not end
    /// within what is left of the budget.
    pub fn defers(&self, file: &Path, version: &str, stored: &str) -> CliResult<Option<DeferredJson>> {
        let map = map_file(file).map_err(|e| image_error("cannot read the image", &e))?;
        let image = UfiImage::parse(map.as_slice())
            .map_err(|e| image_error(&format!("{} is not a flashable image", file.display()), &e))?;
        let worst = worst_case(&image, self.ready);
        let left = self.limit.saturating_sub(self.started.elapsed());
        Ok((worst > left).then(|| DeferredJson {
            firmware: version.to_owned(),
            stored: stored.to_owned(),
            worst_case_secs: worst.as_secs() + u64::from(worst.subsec_nanos() > 0),
            budget_secs: self.limit.as_secs(),
            left_secs: left.as_secs(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use oce_firmware::build::ImageBuilder;

    use super::*;

    #[test]
    fn the_worst_case_counts_every_chunk_at_the_protocols_40_s_and_every_crc_query() {
        let bytes = ImageBuilder::new("11.2.0.9").build().unwrap();
        let image = UfiImage::parse(&bytes).unwrap();
        let sizes: Vec<usize> = image.sections().map(|s| s.data.len()).collect();
        // Counted here from the section sizes, independently of the code under test.
        let chunks: u64 = sizes.iter().map(|s| s.div_ceil(32 * 1024) as u64).sum();
        let largest = sizes.iter().map(|s| s.div_ceil(32 * 1024) as u64).max().unwrap();
        let reads = 2 * (sizes.len() as u64 + 1);
        let ready = 4;
        let expected = (chunks + largest) * (40 + 2 * ready) + reads * (12 + 2 * ready) + 16 * (4 + 2 * ready);
        assert_eq!(worst_case(&image, Duration::from_secs(ready)), Duration::from_secs(expected));
        assert!(expected > 600, "a whole image cannot fit in the modprobe hook's time: {expected} s");
    }

    #[test]
    fn a_flash_is_deferred_exactly_when_its_worst_case_does_not_fit_in_what_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("new.ufi");
        let bytes = ImageBuilder::new("11.2.0.9").build().unwrap();
        std::fs::write(&file, &bytes).unwrap();
        let ready = Duration::from_secs(4);
        let worst = worst_case(&UfiImage::parse(&bytes).unwrap(), ready);
        // A minute of room for the time this test itself takes.
        let roomy = Budget::new(worst + Duration::from_secs(60), ready);
        assert!(roomy.defers(&file, "11.2.0.9", "11.1.172.23").unwrap().is_none());
        let short = Budget::new(worst - Duration::from_secs(1), ready);
        let d = short.defers(&file, "11.2.0.9", "11.1.172.23").unwrap().unwrap();
        assert_eq!((d.firmware.as_str(), d.stored.as_str()), ("11.2.0.9", "11.1.172.23"));
        assert_eq!((d.worst_case_secs, d.budget_secs), (worst.as_secs(), worst.as_secs() - 1));
        assert!(d.left_secs < d.worst_case_secs);
        let none = Budget::new(Duration::ZERO, ready).defers(&file, "11.2.0.9", "x").unwrap().unwrap();
        assert_eq!((none.budget_secs, none.left_secs), (0, 0));
    }
}
