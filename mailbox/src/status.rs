//! Base and additional status codes returned in completions and response headers.

use std::fmt;

use crate::codes::code_enum;

code_enum! {
    /// Base status: bits 15:0 of the completion status and byte 4 of the response header
    /// (spec/protocol.md §3.5, `enum mcc_base_status` in be_cmds.h).
    BaseStatus(u16) {
        /// Success.
        #[doc(alias = "MCC_STATUS_SUCCESS")]
        Success = 0, "MCC_STATUS_SUCCESS";
        /// Generic failure.
        #[doc(alias = "MCC_STATUS_FAILED")]
        Failed = 1, "MCC_STATUS_FAILED";
        /// Opcode or version not implemented by this firmware.
        #[doc(alias = "MCC_STATUS_ILLEGAL_REQUEST")]
        IllegalRequest = 2, "MCC_STATUS_ILLEGAL_REQUEST";
        /// A field of the request has a value the firmware rejects.
        #[doc(alias = "MCC_STATUS_ILLEGAL_FIELD")]
        IllegalField = 3, "MCC_STATUS_ILLEGAL_FIELD";
        /// The response does not fit the buffer.
        #[doc(alias = "MCC_STATUS_INSUFFICIENT_BUFFER")]
        InsufficientBuffer = 4, "MCC_STATUS_INSUFFICIENT_BUFFER";
        /// The function may not issue this command.
        #[doc(alias = "MCC_STATUS_UNAUTHORIZED_REQUEST")]
        UnauthorizedRequest = 5, "MCC_STATUS_UNAUTHORIZED_REQUEST";
        /// Not supported.
        #[doc(alias = "MCC_STATUS_NOT_SUPPORTED")]
        NotSupported = 66, "MCC_STATUS_NOT_SUPPORTED";
        /// Feature not supported.
        #[doc(alias = "MCC_STATUS_FEATURE_NOT_SUPPORTED")]
        FeatureNotSupported = 68, "MCC_STATUS_FEATURE_NOT_SUPPORTED";
        /// Invalid length.
        #[doc(alias = "MCC_STATUS_INVALID_LENGTH")]
        InvalidLength = 116, "MCC_STATUS_INVALID_LENGTH";
    }
}

code_enum! {
    /// Additional status: bits 23:16 of the completion status and byte 5 of the response header
    /// (spec/protocol.md §3.5, `enum mcc_addl_status` in be_cmds.h).
    AdditionalStatus(u8) {
        /// No additional status.
        None = 0x00, "none";
        /// Resources exhausted.
        #[doc(alias = "MCC_ADDL_STATUS_INSUFFICIENT_RESOURCES")]
        InsufficientResources = 0x16, "MCC_ADDL_STATUS_INSUFFICIENT_RESOURCES";
        /// Too many interfaces.
        #[doc(alias = "MCC_ADDL_STATUS_TOO_MANY_INTERFACES")]
        TooManyInterfaces = 0x4A, "MCC_ADDL_STATUS_TOO_MANY_INTERFACES";
        /// The committed flash section's CRC does not match its trailer.
        #[doc(alias = "MCC_ADDL_STATUS_FLASH_IMAGE_CRC_MISMATCH")]
        FlashImageCrcMismatch = 0x4D, "MCC_ADDL_STATUS_FLASH_IMAGE_CRC_MISMATCH";
        /// The image's digital signature is invalid.
        #[doc(alias = "MCC_ADDL_STATUS_INVALID_SIGNATURE")]
        InvalidSignature = 0x56, "MCC_ADDL_STATUS_INVALID_SIGNATURE";
        /// The image carries no digital signature.
        #[doc(alias = "MCC_ADDL_STATUS_MISSING_SIGNATURE")]
        MissingSignature = 0x57, "MCC_ADDL_STATUS_MISSING_SIGNATURE";
        /// The function lacks the privilege for this command.
        #[doc(alias = "MCC_ADDL_STATUS_INSUFFICIENT_PRIVILEGES")]
        InsufficientPrivileges = 0x60, "MCC_ADDL_STATUS_INSUFFICIENT_PRIVILEGES";
        /// Not enough VLANs.
        #[doc(alias = "MCC_ADDL_STATUS_INSUFFICIENT_VLANS")]
        InsufficientVlans = 0xAB, "MCC_ADDL_STATUS_INSUFFICIENT_VLANS";
    }
}

impl BaseStatus {
    /// The C name used by the Linux driver (`MCC_STATUS_*`), if the code is known.
    pub fn c_name(self) -> Option<&'static str> {
        self.name()
    }
}

impl AdditionalStatus {
    /// The C name used by the Linux driver (`MCC_ADDL_STATUS_*`), if the code is known.
    pub fn c_name(self) -> Option<&'static str> {
        self.name()
    }
}

/// `3 (MCC_STATUS_ILLEGAL_FIELD)`, or `6 (unknown)`: the raw code with its C name.
fn code_and_name(f: &mut fmt::Formatter<'_>, raw: u32, name: Option<&str>) -> fmt::Result {
    write!(f, "{raw} ({})", name.unwrap_or("unknown"))
}

/// The 32-bit status word of a completion: base status in bits 15:0, additional in 23:16
/// (spec/protocol.md §3.4, `CQE_BASE_STATUS_MASK`, `CQE_ADDL_STATUS_MASK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletionStatus {
    /// Base status.
    pub base: BaseStatus,
    /// Additional status.
    pub additional: AdditionalStatus,
}

impl CompletionStatus {
    /// `CQE_BASE_STATUS_MASK` (be_cmds.h).
    pub const BASE_MASK: u32 = 0xFFFF;
    /// `CQE_ADDL_STATUS_SHIFT` (be_cmds.h).
    pub const ADDL_SHIFT: u32 = 16;
    /// `CQE_ADDL_STATUS_MASK` (be_cmds.h).
    pub const ADDL_MASK: u32 = 0xFF;

    /// Success with no additional status.
    pub const SUCCESS: Self = Self { base: BaseStatus::Success, additional: AdditionalStatus::None };

    /// Builds a status from its two parts.
    pub fn new(base: BaseStatus, additional: AdditionalStatus) -> Self {
        Self { base, additional }
    }

    /// Decodes the raw completion dword.
    pub fn from_raw(raw: u32) -> Self {
        Self {
            base: BaseStatus::from_raw((raw & Self::BASE_MASK) as u16),
            additional: AdditionalStatus::from_raw(((raw >> Self::ADDL_SHIFT) & Self::ADDL_MASK) as u8),
        }
    }

    /// Encodes the raw completion dword.
    pub fn raw(self) -> u32 {
        u32::from(self.base.raw()) | (u32::from(self.additional.raw()) << Self::ADDL_SHIFT)
    }

    /// True when the base status is success.
    pub fn is_success(self) -> bool {
        self.base == BaseStatus::Success
    }
}

impl From<BaseStatus> for CompletionStatus {
    /// `base` with no additional status: how a firmware reports most failures.
    fn from(base: BaseStatus) -> Self {
        Self::new(base, AdditionalStatus::None)
    }
}

impl fmt::Display for CompletionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("base status ")?;
        code_and_name(f, u32::from(self.base.raw()), self.base.name())?;
        f.write_str(", additional status ")?;
        code_and_name(f, u32::from(self.additional.raw()), self.additional.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_round_trip_and_unknown_codes_are_kept() {
        for raw in 0..=u8::MAX {
            assert_eq!(AdditionalStatus::from_raw(raw).raw(), raw);
        }
        for raw in [0u16, 1, 2, 3, 4, 5, 66, 68, 116, 6, 200, 0xFFFF] {
            assert_eq!(BaseStatus::from_raw(raw).raw(), raw);
        }
        assert_eq!(BaseStatus::from_raw(6), BaseStatus::Unknown(6));
        assert_eq!(AdditionalStatus::from_raw(0x4D), AdditionalStatus::FlashImageCrcMismatch);
        assert_eq!(AdditionalStatus::from_raw(0x4E), AdditionalStatus::Unknown(0x4E));
    }

    #[test]
    fn completion_status_word_layout() {
        // base 3 (ILLEGAL_FIELD), additional 0x4D, garbage in bits 31:24 is ignored.
        let s = CompletionStatus::from_raw(0xAB4D_0003);
        assert_eq!(s.base, BaseStatus::IllegalField);
        assert_eq!(s.additional, AdditionalStatus::FlashImageCrcMismatch);
        assert_eq!(s.raw(), 0x004D_0003);
        assert_eq!(CompletionStatus::from(BaseStatus::InvalidLength).raw(), 116);
        assert_eq!(
            s.to_string(),
            "base status 3 (MCC_STATUS_ILLEGAL_FIELD), additional status 77 (MCC_ADDL_STATUS_FLASH_IMAGE_CRC_MISMATCH)"
        );
    }
}
