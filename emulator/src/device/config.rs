//! Configuration space as 1024 dword registers plus a writable-bits mask (the cloud-hypervisor
//! model): a write changes only the bits its mask allows (of the bytes it covers); absent
//! registers read zero, and the device answers all ones past the 4 KiB.
//!
//! The registers with behaviour (the POST semaphore at 0x94, soft reset at 0x5C, UE status at
//! 0xA0/0xA4, Initiate FLR, Interrupt Status) are intercepted by the device ([`super::Device`])
//! before they reach this file; here they are plain dwords. BAR0 is a memory-mapped view of the
//! same file (spec/protocol.md §2.5: "offsets within the pcicfg mapping = config-space offsets").
//! The capability list is built in [`super::capabilities`].

use oce_mailbox::regs::{AsicId, IntCtrl, SliIntf, SoftReset, UeStatus};

use super::layout::{self, Shape};
use crate::assumptions::{ASIC_ID, BAR_ADDRESSES, ONLINE, PCI_REVISION_ID, SUBSYSTEM_ID, SUBSYSTEM_VENDOR_ID};
use crate::function::FunctionType;

/// Size of PCIe configuration space in bytes.
pub const CONFIG_LEN: usize = 4096;
const DWORDS: usize = CONFIG_LEN / 4;

/// PCI vendor ID of Emulex (spec/protocol.md §1.1, `EMULEX_VENDOR_ID`).
pub const VENDOR_ID: u16 = 0x10DF;
/// Class code: network controller (0x02), Ethernet (0x00), prog-if 0 (PCI Code and ID
/// Assignment specification).
pub const CLASS_ETHERNET: u32 = 0x02_00_00;

/// Standard header offsets (PCI Local Bus specification, type 0 header).
pub mod offsets {
    /// Vendor and device ID.
    pub const ID: u16 = 0x00;
    /// Command (bits 15:0) and status (bits 31:16).
    pub const COMMAND: u16 = 0x04;
    /// Revision ID (7:0) and class code (31:8).
    pub const CLASS_REV: u16 = 0x08;
    /// BAR0, the first of six BAR registers.
    pub const BAR0: u16 = 0x10;
    /// Cache line size (7:0), latency timer (15:8), header type (23:16), BIST (31:24).
    pub const HEADER: u16 = 0x0C;
    /// Subsystem vendor (15:0) and subsystem ID (31:16).
    pub const SUBSYSTEM: u16 = 0x2C;
    /// Capabilities pointer (7:0).
    pub const CAP_PTR: u16 = 0x34;
    /// Interrupt line (7:0) and pin (15:8).
    pub const INTERRUPT: u16 = 0x3C;
    /// The power-management capability (its PMCSR at 0x44 is be2net's PCICFG_PM_CONTROL).
    pub const PM_CAP: u16 = 0x40;
    /// PMCSR, `PCICFG_PM_CONTROL_OFFSET` (spec/protocol.md §1.5).
    pub const PM_CONTROL: u16 = 0x44;
    /// PCICFG_ONLINE0 / ONLINE1 (spec/protocol.md §2.5).
    pub const ONLINE0: u16 = 0xB0;
    /// See [`ONLINE0`].
    pub const ONLINE1: u16 = 0xB4;
}

/// Command register bits the device implements: memory space (1), bus master (2), parity error
/// response (6), SERR# enable (8), INTx disable (10). I/O space (0) is hard-wired 0: no I/O BARs.
const COMMAND_WRITABLE: u32 = (1 << 1) | (1 << 2) | (1 << 6) | (1 << 8) | (1 << 10);
/// Command register bit 2: Bus Master Enable; without it the function may not send memory
/// writes, MSI-X messages included (PCI Local Bus 3.0 §6.2.2, §6.8.3.5).
pub(crate) const COMMAND_BUS_MASTER: u32 = 1 << 2;
/// Command register bit 10: Interrupt Disable; set, the function may not assert INTx.
pub(crate) const COMMAND_INTX_DISABLE: u32 = 1 << 10;
/// Status register bit 3 (bit 19 of the dword at 0x04): Interrupt Status, the function's INTx
/// state whatever Interrupt Disable says.
pub(crate) const STATUS_INTERRUPT: u32 = 1 << 19;
/// Status register bit 4: a capabilities list is present.
const STATUS_CAP_LIST: u32 = 1 << 4;
/// Header type bit 7 (bit 23 of the dword at 0x0C): the device has more than one function
/// (PCI Local Bus 3.0 §6.2.1, "Header Type"); layout 0 (a type 0 header) in bits 6:0.
pub const HEADER_TYPE_MULTI_FUNCTION: u32 = 1 << 23;
/// BAR low-dword flags: memory, 64-bit (type 0b10), not prefetchable.
const BAR_FLAGS_MEM64: u32 = 0b0100;
/// Interrupt pin INTA#.
const INTERRUPT_PIN_INTA: u32 = 1;

/// The register file.
#[derive(Debug, Clone)]
pub(crate) struct ConfigRegisters {
    values: Box<[u32; DWORDS]>,
    writable: Box<[u32; DWORDS]>,
}

impl ConfigRegisters {
    /// Configuration space of `function` in `shape` as the emulated firmware presents it after
    /// power-on (or a function-level reset).
    ///
    /// A VF's BARs really live in its PF's SR-IOV capability; the emulator presents them as
    /// ordinary BAR registers, which is what a user of the VF through VFIO sees.
    pub(crate) fn power_on(function: FunctionType, shape: Shape) -> Self {
        let mut regs = Self { values: Box::new([0; DWORDS]), writable: Box::new([0; DWORDS]) };
        regs.set(offsets::ID, (u32::from(function.device_id()) << 16) | u32::from(VENDOR_ID), 0);
        regs.set(offsets::COMMAND, STATUS_CAP_LIST << 16, COMMAND_WRITABLE);
        regs.set(offsets::CLASS_REV, (CLASS_ETHERNET << 8) | u32::from(PCI_REVISION_ID), 0);
        for (bar, addr) in BAR_ADDRESSES {
            let Some(len) = layout::bar_len(function, shape, bar) else { continue };
            let low = offsets::BAR0 + 4 * u16::from(bar);
            let size_mask = !(len - 1);
            regs.set(low, (addr as u32 & size_mask as u32) | BAR_FLAGS_MEM64, size_mask as u32 & !0xF);
            regs.set(low + 4, (addr >> 32) as u32, (size_mask >> 32) as u32);
        }
        regs.set(offsets::SUBSYSTEM, (u32::from(SUBSYSTEM_ID) << 16) | u32::from(SUBSYSTEM_VENDOR_ID), 0);
        let pin = if layout::has_intx(function, shape) { INTERRUPT_PIN_INTA } else { 0 };
        regs.set(offsets::INTERRUPT, pin << 8, 0xFF);
        regs.install_capabilities(shape);
        regs.set(SliIntf::OFFSET, function.sli_intf(), 0);
        regs.set(SoftReset::OFFSET as u16, 0, 0);
        regs.set(AsicId::OFFSET, ASIC_ID, 0);
        regs.set(UeStatus::LOW_MASK_OFFSET as u16, 0, u32::MAX);
        regs.set(UeStatus::HIGH_MASK_OFFSET as u16, 0, u32::MAX);
        regs.set(offsets::ONLINE0, ONLINE[0], 0);
        regs.set(offsets::ONLINE1, ONLINE[1], 0);
        regs.set(IntCtrl::OFFSET, 0, IntCtrl::HOSTINTR);
        regs
    }

    /// Sets the dword at `off` and which of its bits software may write.
    pub(crate) fn set(&mut self, off: u16, value: u32, writable: u32) {
        let i = usize::from(off / 4);
        self.values[i] = value;
        self.writable[i] = writable;
    }

    /// The dword at `off`; `off` must be a checked, aligned offset below [`CONFIG_LEN`].
    pub(crate) fn read(&self, off: u16) -> u32 {
        self.values[usize::from(off / 4) % DWORDS]
    }

    /// Writes `value` at `off`, changing only writable bits.
    #[cfg(test)]
    pub(crate) fn write(&mut self, off: u16, value: u32) {
        self.write_masked(off, value, u32::MAX);
    }

    /// Writes the bytes of `value` that `lanes` selects (0xFF per byte written) at `off`,
    /// changing only writable bits: a byte or word write leaves the rest of the dword alone.
    pub(crate) fn write_masked(&mut self, off: u16, value: u32, lanes: u32) {
        let i = usize::from(off / 4) % DWORDS;
        let mask = self.writable[i] & lanes;
        self.values[i] = (self.values[i] & !mask) | (value & mask);
    }
}

/// True when `off` is a dword-aligned offset inside configuration space.
pub(crate) fn valid_offset(off: u16) -> bool {
    off.is_multiple_of(4) && usize::from(off) < CONFIG_LEN
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::assumptions::{BAR0_LEN, BAR4_LEN, VF_BAR0_LEN};

    #[test]
    fn identity_registers() {
        let r = ConfigRegisters::power_on(FunctionType::Pf, Shape::Polled);
        assert_eq!(r.read(offsets::ID), 0x0720_10DF);
        assert_eq!(r.read(offsets::SUBSYSTEM), 0xE702_10DF);
        assert_eq!(r.read(offsets::CLASS_REV) >> 8, 0x02_00_00);
        assert_eq!(r.read(SliIntf::OFFSET), 0xC000_0F40);
        assert_eq!(r.read(AsicId::OFFSET), 0x0410);
    }

    #[test]
    fn read_only_registers_ignore_writes() {
        let mut r = ConfigRegisters::power_on(FunctionType::Pf, Shape::Polled);
        for off in [offsets::ID, offsets::CLASS_REV, offsets::SUBSYSTEM, SliIntf::OFFSET, AsicId::OFFSET] {
            let before = r.read(off);
            r.write(off, !before);
            assert_eq!(r.read(off), before, "offset {off:#x}");
        }
    }

    #[test]
    fn command_register_writes_only_its_implemented_bits() {
        let mut r = ConfigRegisters::power_on(FunctionType::Pf, Shape::Polled);
        r.write(offsets::COMMAND, 0xFFFF_FFFF);
        assert_eq!(r.read(offsets::COMMAND), (STATUS_CAP_LIST << 16) | COMMAND_WRITABLE);
        r.write(offsets::COMMAND, 0);
        assert_eq!(r.read(offsets::COMMAND), STATUS_CAP_LIST << 16);
    }

    #[test]
    fn bar_sizing_reads_back_the_size_mask() {
        let mut r = ConfigRegisters::power_on(FunctionType::Pf, Shape::Polled);
        r.write(offsets::BAR0, u32::MAX);
        assert_eq!(r.read(offsets::BAR0), !(BAR0_LEN as u32 - 1) | BAR_FLAGS_MEM64);
        r.write(offsets::BAR0 + 16, u32::MAX);
        assert_eq!(r.read(offsets::BAR0 + 16), !(BAR4_LEN as u32 - 1) | BAR_FLAGS_MEM64);
        // BAR2 (and its high half) is not implemented: reads 0 and stays 0.
        r.write(offsets::BAR0 + 8, u32::MAX);
        assert_eq!(r.read(offsets::BAR0 + 8), 0);
    }

    #[test]
    fn a_vf_has_its_own_id_sli_intf_and_one_bar() {
        let mut r = ConfigRegisters::power_on(FunctionType::Vf, Shape::Polled);
        assert_eq!(r.read(offsets::ID), 0x0728_10DF);
        assert_eq!(r.read(SliIntf::OFFSET), 0xC000_1F41);
        r.write(offsets::BAR0, u32::MAX);
        assert_eq!(r.read(offsets::BAR0), !(VF_BAR0_LEN as u32 - 1) | BAR_FLAGS_MEM64);
        r.write(offsets::BAR0 + 16, u32::MAX);
        assert_eq!(r.read(offsets::BAR0 + 16), 0, "no BAR4");
    }

    #[test]
    fn int_ctrl_bit_29_is_the_only_writable_bit() {
        let mut r = ConfigRegisters::power_on(FunctionType::Pf, Shape::Polled);
        r.write(IntCtrl::OFFSET, u32::MAX);
        assert_eq!(r.read(IntCtrl::OFFSET), IntCtrl::HOSTINTR);
    }

    #[test]
    fn offsets_are_checked() {
        assert!(valid_offset(0xFFC));
        assert!(!valid_offset(0x1000));
        assert!(!valid_offset(0x5A));
    }
}
