//! The emulated adapter's PCI Vital Product Data. The format is public (PCI Local Bus 3.0
//! §6.4, Appendix I; `oce_pci::vpd`); what an OCe14000's VPD holds is not, so every value and
//! the capability's place are **assumed**:
//!
//! - The VPD capability (ID 0x03) sits at [`VPD_CAP_OFFSET`], next in the list after power
//!   management (0x40), before MSI-X in the PCI Express shape.
//! - Contents ([`vpd_bytes`]): the Identifier String is the controller description
//!   ([`super::DESCRIPTION`]); VPD-R holds `PN` (the model, as GET_CNTL_ATTRIBUTES reports it),
//!   `EC` ([`VPD_ENGINEERING_CHANGE`]), `SN` (the serial, as GET_CNTL_ATTRIBUTES reports it),
//!   `V0` ([`VPD_V0`]) and the `RV` checksum; no VPD-W.
//! - A read (F clear) completes at once: the Data register holds the 4 bytes at the address
//!   (0xFF past the end, like erased EEPROM) and F reads 1. A write (F set) is not implemented:
//!   F stays set, so a host waiting for it to clear times out.

/// Where the VPD capability (8 bytes) sits in configuration space. **GUESS**: a free spot
/// between the vendor registers at 0x5C and 0x94 (spec/protocol.md §2.5).
pub const VPD_CAP_OFFSET: u16 = 0x60;
/// VPD-R `EC`, the engineering change level. **Assumed**.
pub const VPD_ENGINEERING_CHANGE: &str = "A";
/// VPD-R `V0`, a vendor-specific field; says what this VPD is. **Assumed**.
pub const VPD_V0: &str = "emulated VPD";

/// The VPD bytes of an adapter with this model and serial.
pub fn vpd_bytes(model: &str, serial: &str) -> Vec<u8> {
    oce_pci::vpd::encode(
        super::DESCRIPTION,
        &[
            ("PN", model.as_bytes()),
            ("EC", VPD_ENGINEERING_CHANGE.as_bytes()),
            ("SN", serial.as_bytes()),
            ("V0", VPD_V0.as_bytes()),
        ],
    )
}
