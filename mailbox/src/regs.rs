//! The Skyhawk register map: each register as a newtype over its raw value, with named masks and
//! pure accessors (style.md rule 6). Offsets and bits: spec/protocol.md §1.3–§2.5.

use std::fmt;

/// Which BAR holds what on a Skyhawk function (spec/protocol.md §2.1, be2net `be_map_pci_bars`,
/// `db_bar`).
pub mod bars {
    /// Bytes of the pcicfg window ocetool touches (through PCICFG_ONLINE1 at 0xB4).
    pub const PCICFG_WINDOW: u64 = 0xB8;
    /// Bytes of the doorbell BAR ocetool touches (through the mailbox doorbell at 0x160).
    pub const DOORBELL_MIN_LEN: u64 = 0x164;
    /// Where a VF's pcicfg shadow sits inside its doorbell BAR (`SRIOV_VF_PCICFG_OFFSET`).
    #[doc(alias = "SRIOV_VF_PCICFG_OFFSET")]
    pub const VF_PCICFG_OFFSET: u32 = 0x1000;

    /// Where the doorbells and the pcicfg shadow of one function live.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct BarLayout {
        /// The BAR with the doorbells (mailbox doorbell at +0x160).
        pub doorbell: u8,
        /// The BAR holding the pcicfg shadow.
        pub pcicfg: u8,
        /// Offset of the pcicfg shadow inside that BAR.
        pub pcicfg_base: u32,
    }

    impl BarLayout {
        /// Skyhawk PF: doorbells in BAR4, pcicfg shadow in BAR0.
        pub const PF: Self = Self { doorbell: 4, pcicfg: 0, pcicfg_base: 0 };
        /// Skyhawk VF: doorbells in BAR0, pcicfg shadow at BAR0 + 0x1000.
        pub const VF: Self = Self { doorbell: 0, pcicfg: 0, pcicfg_base: VF_PCICFG_OFFSET };

        /// The layout for a function, from SLI_INTF's FT bit.
        pub fn for_function(is_vf: bool) -> Self {
            if is_vf { Self::VF } else { Self::PF }
        }

        /// The length the pcicfg BAR must have.
        pub fn pcicfg_min_len(self) -> u64 {
            u64::from(self.pcicfg_base) + PCICFG_WINDOW
        }
    }
}

/// SLI_INTF, configuration space 0x58 (spec/protocol.md §1.3).
#[doc(alias = "SLI_INTF_REG_OFFSET")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliIntf(pub u32);

impl SliIntf {
    /// Config-space offset.
    pub const OFFSET: u16 = 0x58;
    /// Bits 31:29 VALID (`SLI_INTF_VALID_MASK`).
    pub const VALID_MASK: u32 = 0xE000_0000;
    /// The value VALID must hold (`SLI_INTF_VALID`).
    pub const VALID: u32 = 0xC000_0000;
    /// Bits 15:12 interface type.
    pub const IF_TYPE_MASK: u32 = 0x0000_F000;
    /// Bits 11:8 SLI family (`SLI_INTF_FAMILY_MASK`).
    pub const FAMILY_MASK: u32 = 0x0000_0F00;
    /// Bits 7:4 SLI revision.
    pub const REV_MASK: u32 = 0x0000_00F0;
    /// Bit 0 function type: 1 = virtual function (`SLI_INTF_FT_MASK`).
    pub const FT_MASK: u32 = 0x0000_0001;
    /// Family 0xF: "check the ASIC_ID register", what Skyhawk is inferred to report.
    pub const FAMILY_SEE_ASIC_ID: u8 = 0xF;

    /// True when bits 31:29 read 0b110.
    pub fn is_valid(self) -> bool {
        self.0 & Self::VALID_MASK == Self::VALID
    }
    /// Interface type (0 = BE3/Skyhawk PF style, 1 = VF style, 2/3 = Lancer).
    pub fn if_type(self) -> u8 {
        ((self.0 & Self::IF_TYPE_MASK) >> 12) as u8
    }
    /// SLI family nibble.
    pub fn family(self) -> u8 {
        ((self.0 & Self::FAMILY_MASK) >> 8) as u8
    }
    /// SLI revision (4 for SLI-4).
    pub fn sli_rev(self) -> u8 {
        ((self.0 & Self::REV_MASK) >> 4) as u8
    }
    /// True for a virtual function.
    pub fn is_vf(self) -> bool {
        self.0 & Self::FT_MASK != 0
    }
}

/// A POST stage: the low 16 bits of the semaphore register (spec/protocol.md §2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PostStage {
    /// 0x0000: power-on.
    PowerOn,
    /// 0x0001: waiting for the host (`POST_STAGE_AWAITING_HOST_RDY`).
    AwaitingHostReady,
    /// 0x0002: host ready (`POST_STAGE_HOST_RDY`).
    HostReady,
    /// 0x0003: chip reset requested (`POST_STAGE_BE_RESET`).
    ChipReset,
    /// 0x0D00: the firmware is dumping its FAT log (`POST_STAGE_FAT_LOG_START`).
    FatLogStart,
    /// 0xC000: firmware ready (`POST_STAGE_ARMFW_RDY`).
    ArmFwReady,
    /// 0xE000..=0xEFFF: recoverable error, low 12 bits = code (`POST_STAGE_RECOVERABLE_ERR`).
    RecoverableError(u16),
    /// 0xF000: unrecoverable firmware error (`POST_STAGE_ARMFW_UE`).
    ArmFwUe,
    /// Any other stage value, kept as read.
    Other(u16),
}

impl PostStage {
    /// Decodes a raw 16-bit stage.
    pub fn from_raw(raw: u16) -> Self {
        match raw {
            0x0000 => Self::PowerOn,
            0x0001 => Self::AwaitingHostReady,
            0x0002 => Self::HostReady,
            0x0003 => Self::ChipReset,
            0x0D00 => Self::FatLogStart,
            0xC000 => Self::ArmFwReady,
            0xF000 => Self::ArmFwUe,
            r if r & 0xF000 == 0xE000 => Self::RecoverableError(r & 0x0FFF),
            other => Self::Other(other),
        }
    }

    /// The raw 16-bit stage.
    pub fn raw(self) -> u16 {
        match self {
            Self::PowerOn => 0x0000,
            Self::AwaitingHostReady => 0x0001,
            Self::HostReady => 0x0002,
            Self::ChipReset => 0x0003,
            Self::FatLogStart => 0x0D00,
            Self::ArmFwReady => 0xC000,
            Self::RecoverableError(code) => 0xE000 | (code & 0x0FFF),
            Self::ArmFwUe => 0xF000,
            Self::Other(raw) => raw,
        }
    }
}

impl fmt::Display for PostStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Self::PowerOn => "power-on",
            Self::AwaitingHostReady => "awaiting host ready",
            Self::HostReady => "host ready",
            Self::ChipReset => "chip reset",
            Self::FatLogStart => "FAT log dump",
            Self::ArmFwReady => "firmware ready",
            Self::RecoverableError(_) => "recoverable error",
            Self::ArmFwUe => "unrecoverable firmware error",
            Self::Other(_) => "unknown stage",
        };
        write!(f, "{:#06x} ({name})", self.raw())
    }
}

/// SLIPORT_SEMAPHORE / POST status, configuration space 0x94 on Skyhawk (spec/protocol.md §2.4).
#[doc(alias = "SLIPORT_SEMAPHORE_OFFSET_SH")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Semaphore(pub u32);

impl Semaphore {
    /// Config-space offset on Skyhawk.
    pub const OFFSET: u16 = 0x94;
    /// Bits 15:0 POST stage (`POST_STAGE_MASK`).
    pub const STAGE_MASK: u32 = 0xFFFF;
    /// Bit 30: backup firmware running (FreeBSD `SFI`).
    pub const BACKUP_FW_RUNNING: u32 = 1 << 30;
    /// Bit 31: POST error (`POST_ERR_MASK`).
    pub const ERROR: u32 = 1 << 31;

    /// The POST stage.
    pub fn stage(self) -> PostStage {
        PostStage::from_raw((self.0 & Self::STAGE_MASK) as u16)
    }
    /// True when the POST error bit is set.
    pub fn is_error(self) -> bool {
        self.0 & Self::ERROR != 0
    }
    /// True when the adapter booted its backup firmware.
    pub fn backup_firmware_running(self) -> bool {
        self.0 & Self::BACKUP_FW_RUNNING != 0
    }
    /// True when POST has completed: stage 0xC000 and no error.
    pub fn is_ready(self) -> bool {
        !self.is_error() && self.stage() == PostStage::ArmFwReady
    }
}

/// ASIC_ID, configuration space 0x9C (spec/protocol.md §1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsicId(pub u32);

impl AsicId {
    /// Config-space offset.
    pub const OFFSET: u16 = 0x9C;
    /// Generation code of Skyhawk (`OCRDMA_ASIC_GEN_SKH_R`).
    pub const GEN_SKYHAWK: u8 = 0x04;

    /// Revision, bits 7:0 (A0 = 0x00, B0 = 0x10, C0 = 0x20).
    pub fn revision(self) -> u8 {
        self.0 as u8
    }
    /// Generation, bits 15:8.
    pub fn generation(self) -> u8 {
        (self.0 >> 8) as u8
    }
}

/// MPU_MAILBOX_DB, doorbell BAR 0x160 (spec/protocol.md §3.2).
#[doc(alias = "MPU_MAILBOX_DB_OFFSET")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MailboxDoorbell(pub u32);

impl MailboxDoorbell {
    /// Offset in the doorbell BAR.
    pub const OFFSET: u32 = 0x160;
    /// Bit 0: the firmware is ready for the next write (`MPU_MAILBOX_DB_RDY_MASK`).
    pub const RDY: u32 = 1 << 0;
    /// Bit 1: this write carries the high half of the address (`MPU_MAILBOX_DB_HI_MASK`).
    pub const HI: u32 = 1 << 1;
    /// Bits 31:2: address bits.
    pub const ADDRESS_MASK: u32 = !0x3;

    /// True when RDY is set. A device that is gone reads all ones, so check
    /// [`MailboxDoorbell::is_all_ones`] first.
    pub fn is_ready(self) -> bool {
        self.0 & Self::RDY != 0
    }
    /// True when the read returned 0xFFFFFFFF: the device has dropped off the bus.
    pub fn is_all_ones(self) -> bool {
        self.0 == u32::MAX
    }
    /// True when this (written) value is the HI half.
    pub fn is_hi(self) -> bool {
        self.0 & Self::HI != 0
    }

    /// The HI write for mailbox bus address `addr`: `addr[63:34] << 2 | HI`.
    pub fn hi_for(addr: u64) -> Self {
        Self((((addr >> 34) as u32) << 2) | Self::HI)
    }
    /// The LO write for mailbox bus address `addr`: `addr[33:4] << 2`.
    pub fn lo_for(addr: u64) -> Self {
        Self((((addr >> 4) & 0x3FFF_FFFF) as u32) << 2)
    }
    /// The bus address a device rebuilds from a HI and a LO write:
    /// `(hi & !3) << 32 | (lo & !3) << 2`.
    pub fn address_from(hi: Self, lo: Self) -> u64 {
        (u64::from(hi.0 & Self::ADDRESS_MASK) << 32) | (u64::from(lo.0 & Self::ADDRESS_MASK) << 2)
    }
}

/// SLIPORT_SOFTRESET, pcicfg BAR 0x5C (spec/protocol.md §2.5).
#[doc(alias = "SLIPORT_SOFTRESET_OFFSET")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftReset(pub u32);

impl SoftReset {
    /// Offset in the pcicfg BAR.
    pub const OFFSET: u32 = 0x5C;
    /// Bit 7: chip soft reset (`SLIPORT_SOFTRESET_SR_MASK`).
    pub const SR: u32 = 1 << 7;

    /// The value with SR set, other bits kept (read, OR, write back as be2net does).
    pub fn with_reset(self) -> Self {
        Self(self.0 | Self::SR)
    }
}

/// The unrecoverable-error status words and their masks, pcicfg BAR 0xA0–0xAC
/// (spec/protocol.md §2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UeStatus {
    /// `PCICFG_UE_STATUS_LOW` (0xA0).
    pub low: u32,
    /// `PCICFG_UE_STATUS_HIGH` (0xA4).
    pub high: u32,
    /// `PCICFG_UE_STATUS_LOW_MASK` (0xA8): set bits are ignored.
    pub low_mask: u32,
    /// `PCICFG_UE_STATUS_HI_MASK` (0xAC).
    pub high_mask: u32,
}

impl UeStatus {
    /// Offset of the low status word.
    pub const LOW_OFFSET: u32 = 0xA0;
    /// Offset of the high status word.
    pub const HIGH_OFFSET: u32 = 0xA4;
    /// Offset of the low mask.
    pub const LOW_MASK_OFFSET: u32 = 0xA8;
    /// Offset of the high mask.
    pub const HIGH_MASK_OFFSET: u32 = 0xAC;

    /// The unmasked error bits, low word in bits 31:0 and high word in bits 63:32.
    pub fn unmasked(self) -> u64 {
        u64::from(self.low & !self.low_mask) | (u64::from(self.high & !self.high_mask) << 32)
    }
    /// True when any unmasked bit is set: an unrecoverable error exists.
    pub fn has_error(self) -> bool {
        self.unmasked() != 0
    }
}

/// PCICFG_MEMBAR_CTRL_INT_CTRL, configuration space 0xFC (spec/protocol.md §1.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntCtrl(pub u32);

impl IntCtrl {
    /// Config-space offset.
    pub const OFFSET: u16 = 0xFC;
    /// Bit 29: host interrupts enabled (`MEMBAR_CTRL_INT_CTRL_HOSTINTR_MASK`).
    pub const HOSTINTR: u32 = 1 << 29;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doorbell_address_encoding_matches_spec() {
        // spec/protocol.md §3.2: HI = 0x2 | (A[63:34] << 2); LO = A[33:4] << 2.
        let addr: u64 = 0x0000_0123_4567_89A0;
        let hi = MailboxDoorbell::hi_for(addr);
        let lo = MailboxDoorbell::lo_for(addr);
        assert_eq!(hi.0, ((0x0000_0123_4567_89A0u64 >> 34) as u32) << 2 | 2);
        assert_eq!(lo.0, (((addr >> 4) & 0x3FFF_FFFF) as u32) << 2);
        assert!(hi.is_hi() && !lo.is_hi());
        assert_eq!(MailboxDoorbell::address_from(hi, lo), addr);
        // A high address exercises the top bits.
        let top: u64 = 0xFFFF_FFFF_FFFF_FFF0;
        assert_eq!(MailboxDoorbell::address_from(MailboxDoorbell::hi_for(top), MailboxDoorbell::lo_for(top)), top);
        // A 32-bit address has a zero HI payload.
        assert_eq!(MailboxDoorbell::hi_for(0x1000).0, MailboxDoorbell::HI);
        assert_eq!(MailboxDoorbell::lo_for(0x1000).0, 0x1000 >> 2);
    }

    #[test]
    fn doorbell_ready_and_gone() {
        assert!(MailboxDoorbell(1).is_ready());
        assert!(!MailboxDoorbell(0).is_ready());
        assert!(MailboxDoorbell(u32::MAX).is_all_ones());
    }

    #[test]
    fn sli_intf_fields() {
        // The emulator's PF value (design.md §6): valid, if_type 0, family 0xF, rev 4, PF.
        let pf = SliIntf(0xC000_0F40);
        assert!(pf.is_valid());
        assert_eq!((pf.if_type(), pf.family(), pf.sli_rev(), pf.is_vf()), (0, 0xF, 4, false));
        let vf = SliIntf(0xC000_1F41);
        assert_eq!((vf.if_type(), vf.is_vf()), (1, true));
        assert!(!SliIntf(0x4000_0F40).is_valid());
    }

    #[test]
    fn semaphore_stages_and_flags() {
        assert!(Semaphore(0xC000).is_ready());
        assert!(!Semaphore(0x8000_C000).is_ready());
        assert!(Semaphore(0x4000_C000).backup_firmware_running());
        assert_eq!(Semaphore(0x0002).stage(), PostStage::HostReady);
        assert_eq!(Semaphore(0xE012).stage(), PostStage::RecoverableError(0x12));
        assert_eq!(Semaphore(0xF000).stage(), PostStage::ArmFwUe);
        assert_eq!(Semaphore(0x1234).stage(), PostStage::Other(0x1234));
        for raw in 0..=u16::MAX {
            assert_eq!(PostStage::from_raw(raw).raw(), raw);
        }
        assert_eq!(PostStage::HostReady.to_string(), "0x0002 (host ready)");
    }

    #[test]
    fn asic_id_and_ue() {
        let id = AsicId(0x0410);
        assert_eq!((id.generation(), id.revision()), (AsicId::GEN_SKYHAWK, 0x10));
        let ue = UeStatus { low: 0b1010, high: 0x8000_0000, low_mask: 0b0010, high_mask: 0x8000_0000 };
        assert_eq!(ue.unmasked(), 0b1000);
        assert!(ue.has_error());
        assert!(!UeStatus { low: 1, low_mask: 1, ..Default::default() }.has_error());
        assert_eq!(SoftReset(0x01).with_reset().0, 0x81);
    }
}
