//! OneConnect firmware images (placeholder crate root; filled in by the firmware work).
#![forbid(unsafe_code)]
