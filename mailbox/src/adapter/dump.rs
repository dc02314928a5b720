//! The firmware's diagnostic dump (`ocetool dump`): what `ethtool -w` returns on be2net. The log
//! size comes from MANAGE_FAT QUERY; the dump is the log after its first dword, read with
//! RETRIEVE in 60 KiB pieces (`be_cmd_get_fat_dump_len`, `be_cmd_get_fat_dump` in be_cmds.c).

use oce_pci::PciFunction;

use crate::commands::{QueryFat, RetrieveFat};
use crate::{BootstrapMailbox, MailboxError};

/// Largest dump ocetool accepts: a log size beyond this is a misbehaving firmware, not a log
/// (real FAT logs are tens to hundreds of KiB; the field is a u32).
pub const MAX_DUMP_LEN: u32 = 64 << 20;

/// Why a dump could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DumpError {
    /// A MANAGE_FAT command failed.
    #[error("reading the firmware log failed")]
    Mailbox(#[from] MailboxError),
    /// The firmware reports an empty log.
    #[error("the firmware reports an empty diagnostic log (MANAGE_FAT log_size {log_size})")]
    Empty {
        /// The `log_size` it reported.
        log_size: u32,
    },
    /// The firmware reports a log too large to be one.
    #[error(
        "the firmware reports a {log_size}-byte diagnostic log, more than the {MAX_DUMP_LEN} bytes ocetool accepts"
    )]
    TooLarge {
        /// The `log_size` it reported.
        log_size: u32,
    },
    /// A RETRIEVE returned another amount than asked for.
    #[error("MANAGE_FAT RETRIEVE at log offset {offset} returned {got} bytes, {wanted} were asked for")]
    ShortRead {
        /// The log offset asked for.
        offset: u32,
        /// Bytes asked for.
        wanted: u32,
        /// Bytes returned.
        got: usize,
    },
}

/// Reads the whole dump. `progress` is told the bytes read so far and the total after each piece.
pub fn read_fat_dump<F: PciFunction>(
    mbox: &mut BootstrapMailbox<F>,
    mut progress: impl FnMut(u32, u32),
) -> Result<Vec<u8>, DumpError> {
    let log_size = mbox.execute(&QueryFat)?.log_size;
    if log_size > MAX_DUMP_LEN {
        return Err(DumpError::TooLarge { log_size });
    }
    let total = log_size.saturating_sub(RetrieveFat::LOG_START);
    if total == 0 {
        return Err(DumpError::Empty { log_size });
    }
    tracing::info!(log_size, dump_len = total, "reading the firmware's diagnostic log");
    let mut dump = Vec::with_capacity(total as usize);
    let mut done = 0u32;
    while done < total {
        let length = (total - done).min(RetrieveFat::CHUNK);
        let offset = RetrieveFat::LOG_START + done;
        let piece = mbox.execute(&RetrieveFat { offset, length })?;
        if piece.data.len() != length as usize {
            return Err(DumpError::ShortRead { offset, wanted: length, got: piece.data.len() });
        }
        dump.extend_from_slice(&piece.data);
        done += length;
        progress(done, total);
    }
    Ok(dump)
}
