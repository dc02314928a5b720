//! The error type of the hardware seam.

use std::path::PathBuf;

/// What can go wrong between ocetool and a PCI function.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PciError {
    /// A PCI address that does not parse.
    #[error("invalid PCI address {input:?}: {reason} (expected DDDD:BB:DD.F or BB:DD.F)")]
    BadAddress {
        /// What the user gave.
        input: String,
        /// Which part is wrong.
        reason: &'static str,
    },
    /// A config-space access outside the 4 KiB extended space or not dword-aligned.
    #[error("config space access at {off:#x} is outside the space or not 4-byte aligned")]
    ConfigOffset {
        /// The offset asked for.
        off: u16,
    },
    /// The function has no memory BAR with this index.
    #[error("BAR{bar} is not a memory BAR of this function")]
    NoSuchBar {
        /// BAR index.
        bar: u8,
    },
    /// The BAR exists but is shorter than the registers ocetool needs.
    #[error("BAR{bar} is {len:#x} bytes, shorter than the {needed:#x} bytes needed")]
    BarTooSmall {
        /// BAR index.
        bar: u8,
        /// Its length.
        len: u64,
        /// The length the caller needs.
        needed: u64,
    },
    /// An access outside a DMA buffer.
    #[error("DMA access of {len} bytes at offset {off} is outside the {size}-byte buffer")]
    DmaOutOfBounds {
        /// Start offset.
        off: usize,
        /// Access length.
        len: usize,
        /// Buffer size.
        size: usize,
    },
    /// No DMA memory could be allocated or mapped for the device.
    #[error("cannot allocate {len} bytes of DMA memory: {reason}")]
    DmaAlloc {
        /// Requested length.
        len: usize,
        /// Why.
        reason: String,
    },
    /// An I/O error on a sysfs or /dev path.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}
