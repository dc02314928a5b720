//! Faults a test (or `ocetool emulator fault`) can switch on; kept in the state file until
//! cleared, so they survive across processes like the rest of the adapter.
//!
//! Each fault is a plain field with a do-nothing default, so a state file written before a fault
//! existed still loads, and new faults are added as new fields.

use serde::{Deserialize, Serialize};

/// The switchable faults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Faults {
    /// The device has dropped off the bus: every config and BAR read returns all ones and writes
    /// are lost (spec/protocol.md §3.2 step 1, §7.3).
    pub gone: bool,
    /// PCICFG_UE_STATUS_LOW / HIGH (pcicfg 0xA0 / 0xA4): unrecoverable-error bits the firmware
    /// reports (spec/protocol.md §2.5). Zero on a healthy adapter.
    pub ue_status: [u32; 2],
}

impl Faults {
    /// True when no fault is set.
    pub fn is_clear(&self) -> bool {
        *self == Self::default()
    }
}
