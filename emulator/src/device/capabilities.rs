//! The capability list of configuration space: power management and VPD always, and in the PCI
//! Express shape MSI-X and PCI Express (v2, endpoint) after them. Registers and bits are named from the
//! specifications (PCI Local Bus 3.0 §6.7–§6.8, PCI Bus Power Management 1.2 §3.2, PCI Express
//! Base 3.0 §7.8); where each capability sits and what the device claims to support are
//! decided in [`crate::assumptions`].

use oce_mailbox::regs::{IntCtrl, Semaphore, SliIntf};

use super::config::{ConfigRegisters, offsets};
use super::layout::{Shape, msix};
use crate::assumptions::{
    MSIX_CAP_OFFSET, PCIE_CAP_OFFSET, PCIE_DEVICE_CAPABILITIES, PCIE_LINK_SPEED, PCIE_LINK_WIDTH, VPD_CAP_OFFSET,
};

/// Capability IDs (PCI Code and ID Assignment 1.11 §2).
mod id {
    /// PCI Power Management.
    pub(super) const PM: u32 = 0x01;
    /// Vital Product Data.
    pub(super) const VPD: u32 = 0x03;
    /// PCI Express.
    pub(super) const PCIE: u32 = 0x10;
    /// MSI-X.
    pub(super) const MSIX: u32 = 0x11;
}

/// PMC: PM specification version 3 (PCI PM 1.2), no PME support advertised.
const PMC_VERSION_3: u32 = 0x0003;
/// PMCSR writable bits: power state (1:0) and PME_En (8).
const PMCSR_WRITABLE: u32 = 0x0103;

/// The MSI-X capability's registers (PCI Local Bus 3.0 §6.8.2).
pub(crate) mod msix_cap {
    /// Message Control, in the upper half of the capability's first dword: MSI-X Enable (bit
    /// 15) and Function Mask (bit 14); Table Size − 1 in bits 10:0 (read-only).
    pub(crate) const ENABLE: u32 = 1 << 31;
    /// See [`ENABLE`].
    pub(crate) const FUNCTION_MASK: u32 = 1 << 30;
    /// Offset of the Table Offset/BIR register from the capability.
    pub(crate) const TABLE: u16 = 4;
    /// Offset of the PBA Offset/BIR register from the capability.
    pub(crate) const PBA: u16 = 8;
}

/// The VPD capability's registers (PCI Local Bus 3.0 §6.4).
pub(crate) mod vpd_cap {
    /// The VPD Address register, in the upper half of the capability's first dword: the address
    /// (bits 30:16) and the F flag (bit 31), both written by software.
    pub(crate) const ADDRESS_WRITABLE: u32 = 0xFFFF_0000;
    /// F: clear in a write asks for a read; the device sets it when the data is there.
    pub(crate) const FLAG_F: u32 = 1 << 31;
    /// The address bits (a dword address: bits 1:0 are ignored).
    pub(crate) const ADDRESS_SHIFT: u32 = 16;
    /// See [`ADDRESS_SHIFT`].
    pub(crate) const ADDRESS_MASK: u32 = 0x7FFC;
    /// Offset of the VPD Data register from the capability.
    pub(crate) const DATA: u16 = 4;
}

/// The PCI Express capability's registers (PCI Express Base 3.0 §7.8), as offsets from the
/// capability and bits of the dword there.
pub(crate) mod pcie_cap {
    /// PCI Express Capabilities register (upper half of the first dword): version 2, device/port
    /// type 0000b (PCI Express Endpoint), no slot.
    pub(crate) const CAPABILITIES: u32 = 0x0002;
    /// Device Capabilities.
    pub(crate) const DEVICE_CAPABILITIES: u16 = 0x04;
    /// Device Control (lower half) and Device Status (upper half).
    pub(crate) const DEVICE_CONTROL: u16 = 0x08;
    /// Device Control bit 15: Initiate Function-Level Reset (always reads 0).
    pub(crate) const INITIATE_FLR: u32 = 1 << 15;
    /// Device Control bits software may write: error reporting enables (3:0), relaxed ordering
    /// (4), Max_Payload_Size (7:5), extended tag (8), no snoop (11), Max_Read_Request_Size
    /// (14:12). Phantom functions and aux power are not supported and read 0.
    pub(crate) const DEVICE_CONTROL_WRITABLE: u32 = 0x79FF;
    /// Device Control at reset: relaxed ordering and no snoop enabled, 128-byte payload, 512-byte
    /// read requests (the defaults §7.8.4 gives).
    pub(crate) const DEVICE_CONTROL_DEFAULT: u32 = (1 << 4) | (1 << 11) | (0b010 << 12);
    /// Link Capabilities.
    pub(crate) const LINK_CAPABILITIES: u16 = 0x0C;
    /// Link Control (lower half) and Link Status (upper half).
    pub(crate) const LINK_CONTROL: u16 = 0x10;
    /// Link Control bits an endpoint's software may write: ASPM control (1:0), read completion
    /// boundary (3), common clock (6), extended synch (7).
    pub(crate) const LINK_CONTROL_WRITABLE: u32 = 0x00CB;
    /// Link Status bit 12: the link uses the slot's reference clock.
    pub(crate) const SLOT_CLOCK: u32 = 1 << 12;
    /// Link Capabilities 2.
    pub(crate) const LINK_CAPABILITIES_2: u16 = 0x2C;
    /// Link Control 2 (lower half) and Link Status 2 (upper half).
    pub(crate) const LINK_CONTROL_2: u16 = 0x30;
    /// Link Control 2 bits software may write: target link speed (3:0), enter compliance (4),
    /// hardware autonomous speed disable (5).
    pub(crate) const LINK_CONTROL_2_WRITABLE: u32 = 0x003F;
    /// Length of a version-2 capability (through Slot Status 2).
    pub(crate) const LEN: u16 = 0x3C;
}

// The capabilities stay clear of the vendor registers be2net uses (SLI_INTF at 0x58, the
// semaphore at 0x94, UE and online registers 0xA0–0xB7, INT_CTRL at 0xFC; spec/protocol.md §2.5).
const _: () = assert!(MSIX_CAP_OFFSET + MSIX_CAP_LEN <= SliIntf::OFFSET);
const _: () = assert!(VPD_CAP_OFFSET >= SliIntf::OFFSET + 8 && VPD_CAP_OFFSET + 8 <= Semaphore::OFFSET);
const _: () = assert!(PCIE_CAP_OFFSET >= offsets::ONLINE1 + 4 && PCIE_CAP_OFFSET + pcie_cap::LEN <= IntCtrl::OFFSET);

/// Length of the MSI-X capability: header and Message Control, table and PBA registers.
const MSIX_CAP_LEN: u16 = 12;

impl ConfigRegisters {
    /// Builds the capability list of `shape` and points the header's capabilities pointer at it.
    pub(crate) fn install_capabilities(&mut self, shape: Shape) {
        self.set(offsets::CAP_PTR, u32::from(offsets::PM_CAP), 0);
        let next_after_vpd = match shape {
            Shape::Polled => 0,
            Shape::Express { .. } => MSIX_CAP_OFFSET,
        };
        self.set(offsets::PM_CAP, (PMC_VERSION_3 << 16) | (u32::from(VPD_CAP_OFFSET) << 8) | id::PM, 0);
        self.set(offsets::PM_CONTROL, 0, PMCSR_WRITABLE);
        // F reads 1 until the first read is asked for: no read is pending.
        self.set(
            VPD_CAP_OFFSET,
            vpd_cap::FLAG_F | (u32::from(next_after_vpd) << 8) | id::VPD,
            vpd_cap::ADDRESS_WRITABLE,
        );
        self.set(VPD_CAP_OFFSET + vpd_cap::DATA, 0, 0);
        let Some(layout) = msix(shape) else { return };

        let table_size = u32::from(layout.vectors - 1);
        let header = (table_size << 16) | (u32::from(PCIE_CAP_OFFSET) << 8) | id::MSIX;
        self.set(MSIX_CAP_OFFSET, header, msix_cap::ENABLE | msix_cap::FUNCTION_MASK);
        let bir = u32::from(layout.bar);
        self.set(MSIX_CAP_OFFSET + msix_cap::TABLE, layout.table_offset as u32 | bir, 0);
        self.set(MSIX_CAP_OFFSET + msix_cap::PBA, layout.pba_offset as u32 | bir, 0);

        let link = PCIE_LINK_SPEED | (PCIE_LINK_WIDTH << 4);
        self.set(PCIE_CAP_OFFSET, (pcie_cap::CAPABILITIES << 16) | id::PCIE, 0);
        self.set(PCIE_CAP_OFFSET + pcie_cap::DEVICE_CAPABILITIES, PCIE_DEVICE_CAPABILITIES, 0);
        self.set(
            PCIE_CAP_OFFSET + pcie_cap::DEVICE_CONTROL,
            pcie_cap::DEVICE_CONTROL_DEFAULT,
            pcie_cap::DEVICE_CONTROL_WRITABLE,
        );
        self.set(PCIE_CAP_OFFSET + pcie_cap::LINK_CAPABILITIES, link, 0);
        self.set(
            PCIE_CAP_OFFSET + pcie_cap::LINK_CONTROL,
            (link | pcie_cap::SLOT_CLOCK) << 16,
            pcie_cap::LINK_CONTROL_WRITABLE,
        );
        // Supported Link Speeds Vector (bits 3:1): every speed up to the link's.
        let speeds = ((1u32 << PCIE_LINK_SPEED) - 1) << 1;
        self.set(PCIE_CAP_OFFSET + pcie_cap::LINK_CAPABILITIES_2, speeds, 0);
        self.set(PCIE_CAP_OFFSET + pcie_cap::LINK_CONTROL_2, PCIE_LINK_SPEED, pcie_cap::LINK_CONTROL_2_WRITABLE);
    }
}
