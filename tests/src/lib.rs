//! Shared helpers for the end-to-end tests.
#![forbid(unsafe_code)]
