//! The OCe14000 emulator.
#![forbid(unsafe_code)]
