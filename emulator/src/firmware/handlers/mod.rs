//! The command handlers, grouped by what they are about; [`super::dispatch`] picks one per
//! (subsystem, opcode). A handler gets the decoded request and returns the response to encode,
//! or a failure status.

pub(super) mod dcbx;
pub(super) mod device;
pub(super) mod eth;
pub(super) mod fat;
pub(super) mod flashrom;
pub(super) mod interface;
pub(crate) mod port;
pub(super) mod profile;
pub(super) mod queues;
pub(super) mod rdma;
pub(super) mod rdma_objects;
pub(super) mod transceiver;

use oce_mailbox::status::{BaseStatus, CompletionStatus};

/// ILLEGAL_REQUEST: opcode or version not implemented.
pub(crate) fn illegal_request() -> CompletionStatus {
    BaseStatus::IllegalRequest.into()
}

/// ILLEGAL_FIELD: a request field has a value the firmware rejects.
pub(crate) fn illegal_field() -> CompletionStatus {
    BaseStatus::IllegalField.into()
}

/// UNAUTHORIZED_REQUEST: the function may not send this command (a VF, spec/protocol.md §3.5).
pub(crate) fn unauthorized() -> CompletionStatus {
    BaseStatus::UnauthorizedRequest.into()
}
