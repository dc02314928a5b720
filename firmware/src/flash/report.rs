//! What a flash did: per-section outcomes in walk order, the mode it ran in, and the versions the
//! adapter reports afterwards — plain data the CLI prints or serialises (design.md §7 `fw update`).

use std::fmt;

use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

use crate::dir::ImageType;

/// One directory entry, named the way messages and JSON name it: its entry index and type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SectionRef {
    /// Entry index in the flash directory.
    pub index: usize,
    /// The entry's type.
    pub image_type: ImageType,
}

impl fmt::Display for SectionRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (entry {})", self.image_type, self.index)
    }
}

impl Serialize for SectionRef {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("SectionRef", 3)?;
        st.serialize_field("index", &self.index)?;
        st.serialize_field("type", &self.image_type.raw())?;
        st.serialize_field("name", self.image_type.name())?;
        st.end()
    }
}

/// Lists sections for an error message: `"0xa0 (firmware) (entry 0), …"`, or `"none"`.
pub(crate) fn list_sections(sections: &[SectionRef]) -> String {
    if sections.is_empty() {
        return "none".to_owned();
    }
    sections.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// What happened to one section (design.md §7: `flashed` / `skipped_same` / `skipped_unsupported`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Written and committed (SAVE … FLASH succeeded).
    Flashed,
    /// Not written: the adapter's CRC of the region already equals the section's trailer.
    SkippedSame,
    /// Not written: the walk has no op-type for it, or the firmware refused an old-format or PHY
    /// section the way be2net ignores (ufi-firmware.md §2.8 step 7, §3.3).
    SkippedUnsupported,
}

/// The outcome of one directory entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SectionOutcome {
    /// The entry.
    #[serde(flatten)]
    pub section: SectionRef,
    /// What happened.
    pub action: Outcome,
    /// The section's size (`pad_size`), whatever the action.
    pub bytes: u32,
    /// Why it was skipped, or how it was written.
    pub reason: String,
}

/// How the walk addressed the flash (ufi-firmware.md §2.8 step 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlashMode {
    /// Op type 7: every command carries the absolute flash offset.
    Offset,
    /// Each section's own op-type (after the fallback).
    OpType,
}

/// The result of a completed UFI flash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlashReport {
    /// At least one section was written.
    pub changed: bool,
    /// The mode the walk ended in.
    pub mode: FlashMode,
    /// The walk fell back from offset mode to op-type mode.
    pub fell_back: bool,
    /// Every directory entry in walk order.
    pub sections: Vec<SectionOutcome>,
    /// Bytes written (sum of the flashed sections).
    pub bytes_written: u64,
    /// GET_FW_VERSION after the flash: what runs now.
    pub running: String,
    /// GET_FW_VERSION after the flash: what is on flash and runs after the next reset.
    pub stored: String,
    /// The adapter must be reset for the stored firmware to run (`running != stored`).
    pub reset_required: bool,
}

impl FlashReport {
    /// The sections that were written.
    pub fn flashed(&self) -> impl Iterator<Item = &SectionOutcome> + '_ {
        self.sections.iter().filter(|s| s.action == Outcome::Flashed)
    }
}
