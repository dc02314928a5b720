//! MANAGE_FAT (COMMON 68): the size of the firmware's diagnostic log (QUERY) and pieces of it
//! (RETRIEVE), as be2net's `ethtool -w` reads them (spec/protocol.md §5.18). The log itself is
//! [`crate::firmware::fat`].

use oce_mailbox::commands::{FatLog, QueryFat, RetrieveFat};
use oce_mailbox::status::CompletionStatus;

use super::illegal_field;
use crate::firmware::{Context, Firmware};

/// QUERY: renders the log now and answers its size, the first dword included.
pub(crate) fn query_fat(fw: &mut Firmware, _: &Context, _: QueryFat) -> Result<FatLog, CompletionStatus> {
    let log_size = fw.render_fat_log().len() as u32;
    Ok(FatLog { log_size, read_log_length: 0, data: Vec::new() })
}

/// RETRIEVE: `length` bytes of the rendered log from `offset` (fewer at its end).
pub(crate) fn retrieve_fat(fw: &mut Firmware, _: &Context, req: RetrieveFat) -> Result<FatLog, CompletionStatus> {
    let log = fw.fat_log();
    let start = usize::try_from(req.offset).ok().filter(|&o| o <= log.len()).ok_or_else(illegal_field)?;
    let end = start.saturating_add(req.length as usize).min(log.len());
    let data = log[start..end].to_vec();
    Ok(FatLog { log_size: log.len() as u32, read_log_length: data.len() as u32, data })
}
