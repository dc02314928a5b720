//! Every firmware command ocetool sends, one type per command (spec/protocol.md §5).
//!
//! Each request type implements [`Command`](crate::Command) and [`Wire`](crate::Wire) for its
//! body; each response type implements [`Wire`](crate::Wire). Byte offsets in the docs and tests
//! are from the start of the command buffer, header included, as in the spec.

mod version;

pub use version::{FunctionReset, FwVersion, GetFwVersion};
