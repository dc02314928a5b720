//! Function-level commands: FUNCTION_RESET (61) and GET_FW_VERSION (35).

use oce_mailbox::command::Empty;
use oce_mailbox::commands::{FunctionReset, FwVersion, GetFwVersion};
use oce_mailbox::header::RequestHeader;
use oce_mailbox::status::CompletionStatus;

use crate::model::Model;

/// FUNCTION_RESET resets the calling function's firmware state: queues, interfaces and MACs a
/// previous driver created (spec/protocol.md §5.4). The emulator models none of those (only the
/// bootstrap mailbox), so there is nothing to clear; port-level state (beacon, link) is kept.
pub(super) fn function_reset(_: &mut Model, _: &RequestHeader, _: FunctionReset) -> Result<Empty, CompletionStatus> {
    Ok(Empty)
}

/// GET_FW_VERSION: the running version (what the last POST booted) and the on-flash version
/// (`ver_data` of the 0xA0 entry now on flash) (spec/protocol.md §5.1, design.md §6).
pub(super) fn get_fw_version(
    model: &mut Model,
    _: &RequestHeader,
    _: GetFwVersion,
) -> Result<FwVersion, CompletionStatus> {
    let runtime = &model.state.runtime;
    Ok(FwVersion {
        running: runtime.running_version.clone().unwrap_or_default(),
        on_flash: model.flash.stored_version(runtime.flash_directory_offset).unwrap_or_default(),
    })
}
