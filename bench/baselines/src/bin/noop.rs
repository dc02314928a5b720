//! Starts and exits: the cost of starting a Rust process on this machine.
#![forbid(unsafe_code)]

fn main() {}
