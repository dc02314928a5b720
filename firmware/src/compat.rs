//! Whether an image suits an adapter: the chip from `build[0]`, the current Linux rule, and where
//! FreeBSD's rule would decide otherwise (ufi-firmware.md §1.5).

use std::fmt;

use serde::Serialize;

/// The ASIC revision boundary between "A0" and "B0" (BE3-R / Skyhawk-R) in both drivers.
pub const ASIC_REV_B0: u8 = 0x10;

pub use oce_pci::Chip;

/// The chip a UFI's `build[0]` character names: '2' BE2, '3' BE3, '4' Skyhawk (ufi-firmware.md
/// §1.5, be2net `BLD_STR_UFI_TYPE_*`). Lancer takes `.grp` objects, never UFIs.
#[doc(alias = "BLD_STR_UFI_TYPE_SH")]
pub fn chip_from_build_char(c: u8) -> Option<Chip> {
    match c {
        b'2' => Some(Chip::Be2),
        b'3' => Some(Chip::Be3),
        b'4' => Some(Chip::Skyhawk),
        _ => None,
    }
}

/// The adapter side: its chip and `asic_rev`, the low byte of QUERY_FIRMWARE_CONFIG's
/// `asic_revision` (ufi-firmware.md §1.5 rule 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adapter {
    /// The chip.
    pub chip: Chip,
    /// The ASIC revision.
    pub asic_rev: u8,
}

impl Adapter {
    /// An adapter from QUERY_FIRMWARE_CONFIG's whole `asic_revision` word.
    pub fn new(chip: Chip, asic_revision: u32) -> Self {
        Self { chip, asic_rev: (asic_revision & 0xFF) as u8 }
    }
}

/// The image side: what the rules read from the file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageTarget {
    /// `build[0]`.
    pub chip_char: u8,
    /// `asic_type_rev`.
    pub asic_type_rev: u8,
}

impl ImageTarget {
    /// The chip `build[0]` names.
    pub fn chip(&self) -> Option<Chip> {
        chip_from_build_char(self.chip_char)
    }
}

/// Why the Linux rule refuses an image ("Flash image is not compatible with adapter").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incompatibility {
    /// `build[0]` names another chip (or none).
    WrongChip {
        /// `build[0]`.
        chip_char: u8,
        /// The adapter's chip.
        adapter: Chip,
    },
    /// BE2/BE3: an image with `asic_type_rev` 0 only suits chips below revision 0x10.
    PreRevisionImage {
        /// The adapter's revision.
        adapter_rev: u8,
    },
    /// `asic_type_rev` is below the adapter's revision.
    AsicRevisionTooLow {
        /// The image's `asic_type_rev`.
        image_rev: u8,
        /// The adapter's revision.
        adapter_rev: u8,
    },
    /// The adapter does not take UFI images at all.
    NotUfiChip {
        /// The adapter's chip.
        adapter: Chip,
    },
}

impl fmt::Display for Incompatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongChip { chip_char, adapter } => match chip_from_build_char(*chip_char) {
                Some(chip) => write!(
                    f,
                    "the image is for {chip} (build[0] {:?}), the adapter is {adapter}",
                    char::from(*chip_char)
                ),
                None => {
                    write!(f, "build[0] {:?} names no known chip; the adapter is {adapter}", char::from(*chip_char))
                }
            },
            Self::PreRevisionImage { adapter_rev } => {
                write!(
                    f,
                    "an image with asic_type_rev 0 only suits ASIC revisions below 0x10, the adapter is {adapter_rev:#04x}"
                )
            }
            Self::AsicRevisionTooLow { image_rev, adapter_rev } => {
                write!(f, "the image targets ASIC revision {image_rev:#04x}, below the adapter's {adapter_rev:#04x}")
            }
            Self::NotUfiChip { adapter } => write!(f, "{adapter} adapters take .grp objects, not UFI images"),
        }
    }
}

/// The current Linux rule (`be_check_ufi_compatibility`, ufi-firmware.md §1.5).
#[doc(alias = "be_check_ufi_compatibility")]
pub fn check_linux(image: ImageTarget, adapter: Adapter) -> Result<(), Incompatibility> {
    if adapter.chip == Chip::Lancer {
        return Err(Incompatibility::NotUfiChip { adapter: adapter.chip });
    }
    if image.chip() != Some(adapter.chip) {
        return Err(Incompatibility::WrongChip { chip_char: image.chip_char, adapter: adapter.chip });
    }
    if matches!(adapter.chip, Chip::Be2 | Chip::Be3) && image.asic_type_rev == 0 {
        return if adapter.asic_rev < ASIC_REV_B0 {
            Ok(())
        } else {
            Err(Incompatibility::PreRevisionImage { adapter_rev: adapter.asic_rev })
        };
    }
    if image.asic_type_rev >= adapter.asic_rev {
        Ok(())
    } else {
        Err(Incompatibility::AsicRevisionTooLow { image_rev: image.asic_type_rev, adapter_rev: adapter.asic_rev })
    }
}

/// FreeBSD's numeric UFI types (`oce_get_ufi_type`, ufi-firmware.md §1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FreeBsdUfiType {
    /// 2: BE2.
    #[doc(alias = "UFI_TYPE2")]
    Type2,
    /// 3: BE3, `asic_type_rev != 0x10`.
    #[doc(alias = "UFI_TYPE3")]
    Type3,
    /// 10: BE3-R, `asic_type_rev == 0x10`.
    #[doc(alias = "UFI_TYPE3R")]
    Type3R,
    /// 4: Skyhawk A0, `asic_type_rev < 0x10`.
    #[doc(alias = "UFI_TYPE4")]
    Type4,
    /// 11: Skyhawk B0, `asic_type_rev >= 0x10`.
    #[doc(alias = "UFI_TYPE4R")]
    Type4R,
}

impl FreeBsdUfiType {
    /// FreeBSD's number for the type.
    pub fn raw(self) -> u8 {
        match self {
            Self::Type2 => 2,
            Self::Type3 => 3,
            Self::Type3R => 10,
            Self::Type4 => 4,
            Self::Type4R => 11,
        }
    }
}

/// `oce_get_ufi_type`: the type FreeBSD gives an image on an adapter, `None` for its -1.
pub fn freebsd_ufi_type(image: ImageTarget, adapter: Adapter) -> Option<FreeBsdUfiType> {
    match (adapter.chip, image.chip()) {
        (Chip::Be2, Some(Chip::Be2)) => Some(FreeBsdUfiType::Type2),
        (Chip::Be3, Some(Chip::Be3)) if image.asic_type_rev == ASIC_REV_B0 => Some(FreeBsdUfiType::Type3R),
        (Chip::Be3, Some(Chip::Be3)) => Some(FreeBsdUfiType::Type3),
        (Chip::Skyhawk, Some(Chip::Skyhawk)) if image.asic_type_rev >= ASIC_REV_B0 => Some(FreeBsdUfiType::Type4R),
        (Chip::Skyhawk, Some(Chip::Skyhawk)) => Some(FreeBsdUfiType::Type4),
        _ => None,
    }
}

/// FreeBSD's decision, with its message when it refuses (ufi-firmware.md §1.5 "FreeBSD rule").
pub fn check_freebsd(image: ImageTarget, adapter: Adapter) -> Result<(), &'static str> {
    match adapter.chip {
        Chip::Skyhawk => match freebsd_ufi_type(image, adapter) {
            Some(FreeBsdUfiType::Type4R) => Ok(()),
            Some(FreeBsdUfiType::Type4) if adapter.asic_rev < ASIC_REV_B0 => Ok(()),
            Some(_) => Err("Cant load SH A0 UFI on B0"),
            None => Err("UFI and Interface are not compatible for flashing"),
        },
        Chip::Be3 if image.chip_char == b'3' => Ok(()),
        Chip::Be3 => Err("Invalid BE3 firmware image"),
        Chip::Be2 => Err("Flashing not supported for BE2 yet."),
        Chip::Lancer => Err("Lancer takes .grp objects, not UFI images"),
    }
}

/// Both rules side by side, for reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompatReport {
    /// The Linux rule accepts the image (ocetool follows it).
    pub compatible: bool,
    /// Why Linux refuses, if it does.
    pub reason: Option<String>,
    /// FreeBSD's numeric UFI type, if it assigns one.
    pub freebsd_ufi_type: Option<u8>,
    /// FreeBSD would accept the image.
    pub freebsd_accepts: bool,
    /// Set when the two drivers decide differently: what FreeBSD would do.
    pub disagreement: Option<String>,
}

/// Applies both rules.
pub fn assess(image: ImageTarget, adapter: Adapter) -> CompatReport {
    let linux = check_linux(image, adapter);
    let freebsd = check_freebsd(image, adapter);
    let disagreement = match (&linux, freebsd) {
        (Ok(()), Err(msg)) => Some(format!("FreeBSD would refuse this image (\"{msg}\")")),
        (Err(_), Ok(())) => Some(match freebsd_ufi_type(image, adapter) {
            Some(t) => format!("FreeBSD would flash it (UFI type {}: it only checks the chip and A0/B0)", t.raw()),
            None => "FreeBSD would flash it (it checks only build[0] on BE3)".to_owned(),
        }),
        _ => None,
    };
    CompatReport {
        compatible: linux.is_ok(),
        reason: linux.err().map(|e| e.to_string()),
        freebsd_ufi_type: freebsd_ufi_type(image, adapter).map(FreeBsdUfiType::raw),
        freebsd_accepts: freebsd.is_ok(),
        disagreement,
    }
}

#[cfg(test)]
mod tests;
