//! Option-ROM sections (types 0x20–0x22): the chain of PCI expansion ROM images they hold.

pub mod format;

pub use format::{CodeType, EfiRomHeader, Pcir};
