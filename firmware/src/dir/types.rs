//! Image type codes of directory entries, flash op-types, and the Skyhawk type→op-type map.

use std::fmt;

/// The `type` of a flash-directory entry: what a section holds (ufi-firmware.md §2.4).
///
/// Codes not in the table are kept as [`ImageType::Unknown`]; [`ImageType::from_raw`] never maps
/// a known code to `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ImageType {
    /// 0x10: NC-SI firmware.
    #[doc(alias = "IMAGE_NCSI")]
    #[doc(alias = "IMG_NCSI")]
    Ncsi,
    /// 0x20: PXE option ROM.
    #[doc(alias = "IMAGE_OPTION_ROM_PXE")]
    #[doc(alias = "IMG_PXEBIOS")]
    OptionRomPxe,
    /// 0x21: FCoE option ROM.
    #[doc(alias = "IMAGE_OPTION_ROM_FCOE")]
    #[doc(alias = "IMG_FCOEBIOS")]
    OptionRomFcoe,
    /// 0x22: iSCSI option ROM.
    #[doc(alias = "IMAGE_OPTION_ROM_ISCSI")]
    #[doc(alias = "IMG_BIOS")]
    OptionRomIscsi,
    /// 0x30: FlashISM jump vector.
    #[doc(alias = "IMAGE_FLASHISM_JUMPVECTOR")]
    FlashismJumpVector,
    /// 0xA0: the active (iSCSI/NIC) firmware; its `ver_data` is "the firmware version".
    #[doc(alias = "IMAGE_FIRMWARE_ISCSI")]
    #[doc(alias = "IMG_ISCSI")]
    FirmwareIscsi,
    /// 0xA2: FCoE firmware.
    #[doc(alias = "IMAGE_FIRMWARE_FCOE")]
    #[doc(alias = "IMG_FCOE")]
    FirmwareFcoe,
    /// 0xB0: backup (iSCSI/NIC) firmware.
    #[doc(alias = "IMAGE_FIRMWARE_BACKUP_ISCSI")]
    #[doc(alias = "IMG_ISCSI_BAK")]
    FirmwareBackupIscsi,
    /// 0xB2: backup FCoE firmware.
    #[doc(alias = "IMAGE_FIRMWARE_BACKUP_FCOE")]
    #[doc(alias = "IMG_FCOE_BAK")]
    FirmwareBackupFcoe,
    /// 0xC0: PHY firmware.
    #[doc(alias = "IMAGE_FIRMWARE_PHY")]
    #[doc(alias = "IMG_PHY")]
    FirmwarePhy,
    /// 0xD0: redboot directory.
    #[doc(alias = "IMAGE_REDBOOT_DIR")]
    RedbootDir,
    /// 0xD1: redboot configuration.
    #[doc(alias = "IMAGE_REDBOOT_CONFIG")]
    RedbootConfig,
    /// 0xD2: the UFI flash directory itself.
    #[doc(alias = "IMAGE_UFI_DIR")]
    UfiDir,
    /// 0xE2: boot code (redboot), as Linux numbers it.
    #[doc(alias = "IMAGE_BOOT_CODE")]
    BootCode,
    /// 0xE0: boot code as FreeBSD numbers it (`IMG_REDBOOT`); Linux has no op-type for it
    /// (ufi-firmware.md §2.4, disagreement).
    #[doc(alias = "IMG_REDBOOT")]
    BootCodeFreeBsd,
    /// Any other code, kept as read.
    Unknown(u32),
}

impl ImageType {
    /// Every known code, in table order (ufi-firmware.md §2.4).
    pub const KNOWN: [ImageType; 15] = [
        Self::Ncsi,
        Self::OptionRomPxe,
        Self::OptionRomFcoe,
        Self::OptionRomIscsi,
        Self::FlashismJumpVector,
        Self::FirmwareIscsi,
        Self::FirmwareFcoe,
        Self::FirmwareBackupIscsi,
        Self::FirmwareBackupFcoe,
        Self::FirmwarePhy,
        Self::RedbootDir,
        Self::RedbootConfig,
        Self::UfiDir,
        Self::BootCode,
        Self::BootCodeFreeBsd,
    ];

    /// The type for a raw code.
    pub fn from_raw(raw: u32) -> Self {
        Self::KNOWN.into_iter().find(|t| t.raw() == raw).unwrap_or(Self::Unknown(raw))
    }

    /// The raw code (ufi-firmware.md §2.4).
    pub fn raw(self) -> u32 {
        match self {
            Self::Ncsi => 0x10,
            Self::OptionRomPxe => 0x20,
            Self::OptionRomFcoe => 0x21,
            Self::OptionRomIscsi => 0x22,
            Self::FlashismJumpVector => 0x30,
            Self::FirmwareIscsi => 0xA0,
            Self::FirmwareFcoe => 0xA2,
            Self::FirmwareBackupIscsi => 0xB0,
            Self::FirmwareBackupFcoe => 0xB2,
            Self::FirmwarePhy => 0xC0,
            Self::RedbootDir => 0xD0,
            Self::RedbootConfig => 0xD1,
            Self::UfiDir => 0xD2,
            Self::BootCodeFreeBsd => 0xE0,
            Self::BootCode => 0xE2,
            Self::Unknown(raw) => raw,
        }
    }

    /// A short human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ncsi => "NC-SI firmware",
            Self::OptionRomPxe => "PXE option ROM",
            Self::OptionRomFcoe => "FCoE option ROM",
            Self::OptionRomIscsi => "iSCSI option ROM",
            Self::FlashismJumpVector => "FlashISM jump vector",
            Self::FirmwareIscsi => "firmware",
            Self::FirmwareFcoe => "FCoE firmware",
            Self::FirmwareBackupIscsi => "backup firmware",
            Self::FirmwareBackupFcoe => "FCoE backup firmware",
            Self::FirmwarePhy => "PHY firmware",
            Self::RedbootDir => "redboot directory",
            Self::RedbootConfig => "redboot configuration",
            Self::UfiDir => "flash directory",
            Self::BootCode => "boot code",
            Self::BootCodeFreeBsd => "boot code (FreeBSD numbering)",
            Self::Unknown(_) => "unknown",
        }
    }

    /// True for the option-ROM types 0x20–0x22, whose sections hold PCI expansion ROMs.
    pub fn is_option_rom(self) -> bool {
        matches!(self, Self::OptionRomPxe | Self::OptionRomFcoe | Self::OptionRomIscsi)
    }

    /// The op-type Linux uses for this type on Skyhawk when the entry's `optype` is 0xFFFF
    /// (ufi-firmware.md §2.5); `None` means the Skyhawk walk skips the entry.
    #[doc(alias = "be_get_img_optype")]
    pub fn skyhawk_optype(self) -> Option<OpType> {
        Some(match self {
            Self::FirmwareIscsi => OpType::IscsiActive,
            Self::BootCode => OpType::Redboot,
            Self::OptionRomIscsi => OpType::Bios,
            Self::OptionRomPxe => OpType::PxeBios,
            Self::OptionRomFcoe => OpType::FcoeBios,
            Self::FirmwareBackupIscsi => OpType::IscsiBackup,
            Self::Ncsi => OpType::NcsiFw,
            Self::RedbootDir => OpType::RedbootDir,
            Self::RedbootConfig => OpType::RedbootConfig,
            Self::FirmwarePhy => OpType::ShPhyFw,
            Self::FlashismJumpVector => OpType::FlashismJumpVector,
            Self::UfiDir => OpType::UfiDir,
            Self::FirmwareFcoe | Self::FirmwareBackupFcoe | Self::BootCodeFreeBsd | Self::Unknown(_) => return None,
        })
    }
}

impl fmt::Display for ImageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#04x} ({})", self.raw(), self.name())
    }
}

/// A flash op-type, the `op_type` of READ/WRITE_FLASHROM (ufi-firmware.md §2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpType {
    /// 0: active iSCSI/NIC firmware.
    #[doc(alias = "OPTYPE_ISCSI_ACTIVE")]
    IscsiActive,
    /// 1: boot code.
    #[doc(alias = "OPTYPE_REDBOOT")]
    Redboot,
    /// 2: iSCSI option ROM.
    #[doc(alias = "OPTYPE_BIOS")]
    Bios,
    /// 3: PXE option ROM.
    #[doc(alias = "OPTYPE_PXE_BIOS")]
    PxeBios,
    /// 7: offset mode — the command's `offset` field is the flash address.
    #[doc(alias = "OPTYPE_OFFSET_SPECIFIED")]
    OffsetSpecified,
    /// 8: FCoE option ROM.
    #[doc(alias = "OPTYPE_FCOE_BIOS")]
    FcoeBios,
    /// 9: backup iSCSI/NIC firmware.
    #[doc(alias = "OPTYPE_ISCSI_BACKUP")]
    IscsiBackup,
    /// 10: FCoE firmware (BEx only).
    #[doc(alias = "OPTYPE_FCOE_FW_ACTIVE")]
    FcoeFwActive,
    /// 11: backup FCoE firmware (BEx only).
    #[doc(alias = "OPTYPE_FCOE_FW_BACKUP")]
    FcoeFwBackup,
    /// 13: NC-SI firmware.
    #[doc(alias = "OPTYPE_NCSI_FW")]
    NcsiFw,
    /// 18: redboot directory.
    #[doc(alias = "OPTYPE_REDBOOT_DIR")]
    RedbootDir,
    /// 19: redboot configuration.
    #[doc(alias = "OPTYPE_REDBOOT_CONFIG")]
    RedbootConfig,
    /// 21: Skyhawk PHY firmware.
    #[doc(alias = "OPTYPE_SH_PHY_FW")]
    ShPhyFw,
    /// 22: FlashISM jump vector.
    #[doc(alias = "OPTYPE_FLASHISM_JUMPVECTOR")]
    FlashismJumpVector,
    /// 23: the UFI directory.
    #[doc(alias = "OPTYPE_UFI_DIR")]
    UfiDir,
    /// 99: BE3 PHY firmware (PHY_SAVE / PHY_FLASH).
    #[doc(alias = "OPTYPE_PHY_FW")]
    PhyFw,
    /// Any other value, kept as read.
    Unknown(u32),
}

impl OpType {
    /// Every known op-type (ufi-firmware.md §2.5).
    pub const KNOWN: [OpType; 16] = [
        Self::IscsiActive,
        Self::Redboot,
        Self::Bios,
        Self::PxeBios,
        Self::OffsetSpecified,
        Self::FcoeBios,
        Self::IscsiBackup,
        Self::FcoeFwActive,
        Self::FcoeFwBackup,
        Self::NcsiFw,
        Self::RedbootDir,
        Self::RedbootConfig,
        Self::ShPhyFw,
        Self::FlashismJumpVector,
        Self::UfiDir,
        Self::PhyFw,
    ];

    /// The op-type for a raw value.
    pub fn from_raw(raw: u32) -> Self {
        Self::KNOWN.into_iter().find(|t| t.raw() == raw).unwrap_or(Self::Unknown(raw))
    }

    /// The raw value (ufi-firmware.md §2.5).
    pub fn raw(self) -> u32 {
        match self {
            Self::IscsiActive => 0,
            Self::Redboot => 1,
            Self::Bios => 2,
            Self::PxeBios => 3,
            Self::OffsetSpecified => 7,
            Self::FcoeBios => 8,
            Self::IscsiBackup => 9,
            Self::FcoeFwActive => 10,
            Self::FcoeFwBackup => 11,
            Self::NcsiFw => 13,
            Self::RedbootDir => 18,
            Self::RedbootConfig => 19,
            Self::ShPhyFw => 21,
            Self::FlashismJumpVector => 22,
            Self::UfiDir => 23,
            Self::PhyFw => 99,
            Self::Unknown(raw) => raw,
        }
    }
}

impl fmt::Display for OpType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.raw())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_is_kept() {
        for t in ImageType::KNOWN {
            assert_eq!(ImageType::from_raw(t.raw()), t);
        }
        for t in OpType::KNOWN {
            assert_eq!(OpType::from_raw(t.raw()), t);
        }
        assert_eq!(ImageType::from_raw(0xE1), ImageType::Unknown(0xE1));
        assert_eq!(ImageType::from_raw(0xE2), ImageType::BootCode);
        assert_eq!(ImageType::from_raw(0xE0), ImageType::BootCodeFreeBsd);
        assert_eq!(OpType::from_raw(0xFFFF), OpType::Unknown(0xFFFF));
        assert_eq!(ImageType::FirmwareIscsi.to_string(), "0xa0 (firmware)");
    }

    #[test]
    fn skyhawk_map_matches_the_spec_table() {
        // ufi-firmware.md §2.5, written out as (type, optype) pairs.
        let expected = [
            (0xA0, Some(0)),
            (0xE2, Some(1)),
            (0x22, Some(2)),
            (0x20, Some(3)),
            (0x21, Some(8)),
            (0xB0, Some(9)),
            (0x10, Some(13)),
            (0xD0, Some(18)),
            (0xD1, Some(19)),
            (0xC0, Some(21)),
            (0x30, Some(22)),
            (0xD2, Some(23)),
            (0xA2, None),
            (0xB2, None),
            (0xE0, None),
            (0x77, None),
        ];
        for (ty, optype) in expected {
            assert_eq!(ImageType::from_raw(ty).skyhawk_optype().map(OpType::raw), optype, "type {ty:#x}");
        }
    }
}
