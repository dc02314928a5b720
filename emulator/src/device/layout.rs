//! The device's layout on the bus: its [`Shape`], which BARs it has and how long they are, where
//! the MSI-X table and PBA sit, and which register each BAR offset reaches (spec/protocol.md
//! §2.1, §2.2, §2.5; be2net-driver.md §1, §7; the table in [`crate::function`]).
//!
//! | | PF, polled | PF, Express | VF, polled | VF, Express |
//! |---|---|---|---|---|
//! | BAR0 | pcicfg shadow, 4 KiB | shadow @0, MSI-X table @0x2000, PBA @0x3000; 16 KiB | doorbells @0, shadow @0x1000; 8 KiB | as polled, then table @0x2000, PBA @0x3000; 16 KiB |
//! | BAR4 | doorbells, 64 KiB | doorbells, 64 KiB | — | — |
//! | capabilities | PM | PM → MSI-X → PCI Express | PM | PM → MSI-X → PCI Express |
//! | INTx pin | INTA | INTA | INTA | none (a VF has no INTx) |

use oce_mailbox::regs::bars::VF_PCICFG_OFFSET;

use crate::assumptions::{
    BAR0_LEN, BAR4_LEN, EXPRESS_BAR0_LEN, MSIX_PBA_OFFSET, MSIX_TABLE_OFFSET, MSIX_VECTORS, VF_BAR0_LEN,
};
use crate::function::FunctionType;

/// The PCI face a device shows; chosen by whoever builds it ([`super::Device::new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The face the in-process front end has always shown, for hosts that poll the mailbox:
    /// power management is the only capability, BAR0 holds only the pcicfg shadow (PF 4 KiB,
    /// VF 8 KiB), no MSI-X.
    Polled,
    /// A PCI Express endpoint as a guest kernel drives it: power management, MSI-X and PCI
    /// Express (v2, endpoint) capabilities, BAR0 16 KiB with the MSI-X table and PBA.
    Express {
        /// Who keeps the MSI-X table and PBA.
        msix_table: TableOwner,
    },
}

/// Who keeps the MSI-X table (message addresses, data, per-vector masks) and the PBA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableOwner {
    /// The device decodes the table and PBA in BAR0 and applies every mask: a masked vector
    /// sets its pending bit and is sent when unmasked (in-process hosts, VMMs that forward
    /// table accesses to the device).
    Device,
    /// The transport emulates the table and PBA and never forwards their accesses (QEMU's
    /// vfio-user client, recipes/vfio-user-qemu.md §3.3): the device sends a vector whenever
    /// MSI-X is enabled and bus mastering is on, and the transport applies the masks. The table
    /// and PBA ranges of BAR0 read all ones at the device.
    Transport,
}

/// Where a device's MSI-X table and PBA are and how many vectors it has, for a transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MsixLayout {
    /// Table entries (vectors).
    pub vectors: u16,
    /// The BAR holding table and PBA (the capability's BIR).
    pub bar: u8,
    /// Offset of the table in that BAR.
    pub table_offset: u64,
    /// Offset of the PBA in that BAR.
    pub pba_offset: u64,
    /// Who keeps the table.
    pub owner: TableOwner,
}

impl MsixLayout {
    /// Size of one table entry in bytes (PCI Local Bus 3.0 §6.8.2.6).
    pub const ENTRY_LEN: u64 = 16;

    /// Length of the table in bytes.
    pub fn table_len(&self) -> u64 {
        u64::from(self.vectors) * Self::ENTRY_LEN
    }

    /// Length of the PBA in bytes: one bit per vector, in whole qwords (§6.8.2.7).
    pub fn pba_len(&self) -> u64 {
        u64::from(self.vectors).div_ceil(64) * 8
    }
}

/// What a dword of a BAR reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BarRegister {
    /// The pcicfg shadow, at this configuration-space offset.
    Pcicfg(u16),
    /// The doorbell page, at this offset from the doorbell BAR's start.
    Doorbell(u32),
    /// The MSI-X table, at this offset from its start.
    MsixTable(u32),
    /// The MSI-X PBA, at this offset from its start.
    MsixPba(u32),
}

/// The memory BARs of `function` in `shape`, with their lengths.
pub(crate) fn bars(function: FunctionType, shape: Shape) -> &'static [(u8, u64)] {
    match (function, shape) {
        (FunctionType::Pf, Shape::Polled) => &[(0, BAR0_LEN), (4, BAR4_LEN)],
        (FunctionType::Pf, Shape::Express { .. }) => &[(0, EXPRESS_BAR0_LEN), (4, BAR4_LEN)],
        (FunctionType::Vf, Shape::Polled) => &[(0, VF_BAR0_LEN)],
        (FunctionType::Vf, Shape::Express { .. }) => &[(0, EXPRESS_BAR0_LEN)],
    }
}

/// Length of memory BAR `bar` of `function` in `shape`, if it has it.
pub(crate) fn bar_len(function: FunctionType, shape: Shape, bar: u8) -> Option<u64> {
    bars(function, shape).iter().find(|(b, _)| *b == bar).map(|&(_, len)| len)
}

/// True when `function` in `shape` has an INTx pin (INTA#). A PCI Express VF has none (SR-IOV
/// VFs do not implement INTx, and be2net never uses it on a VF, be2net-driver.md §3.5); the
/// polled shape keeps the pin every function had before the PCI Express shape existed.
pub(crate) fn has_intx(function: FunctionType, shape: Shape) -> bool {
    !(function.is_vf() && matches!(shape, Shape::Express { .. }))
}

/// The MSI-X layout of `shape`, if it has MSI-X.
pub(crate) fn msix(shape: Shape) -> Option<MsixLayout> {
    match shape {
        Shape::Polled => None,
        Shape::Express { msix_table } => Some(MsixLayout {
            vectors: MSIX_VECTORS,
            bar: 0,
            table_offset: MSIX_TABLE_OFFSET.into(),
            pba_offset: MSIX_PBA_OFFSET.into(),
            owner: msix_table,
        }),
    }
}

/// What the dword at `dword` (4-byte aligned) of `bar` reaches; `None` outside the BAR or in a
/// part of it the model does not decode (reads all ones, writes dropped).
pub(crate) fn decode(function: FunctionType, shape: Shape, bar: u8, dword: u64) -> Option<BarRegister> {
    if dword >= bar_len(function, shape, bar)? {
        return None;
    }
    let off = u32::try_from(dword).ok()?;
    if let Some(msix) = msix(shape).filter(|m| m.owner == TableOwner::Device && m.bar == bar) {
        let inside = |start: u64, len: u64| u64::from(off).checked_sub(start).filter(|&o| o < len);
        if let Some(o) = inside(msix.table_offset, msix.table_len()) {
            return Some(BarRegister::MsixTable(o as u32));
        }
        if let Some(o) = inside(msix.pba_offset, msix.pba_len()) {
            return Some(BarRegister::MsixPba(o as u32));
        }
    }
    let pcicfg = |o: u32| u16::try_from(o).ok().filter(|&o| u64::from(o) < BAR0_LEN).map(BarRegister::Pcicfg);
    match (function, bar) {
        (FunctionType::Pf, 0) => pcicfg(off),
        (FunctionType::Pf, _) => Some(BarRegister::Doorbell(off)),
        (FunctionType::Vf, _) if off < VF_PCICFG_OFFSET => Some(BarRegister::Doorbell(off)),
        (FunctionType::Vf, _) => off.checked_sub(VF_PCICFG_OFFSET).and_then(pcicfg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWNED: Shape = Shape::Express { msix_table: TableOwner::Device };
    const FORWARDED: Shape = Shape::Express { msix_table: TableOwner::Transport };

    #[test]
    fn polled_pf_map() {
        let pf = FunctionType::Pf;
        assert_eq!(decode(pf, Shape::Polled, 0, 0x58), Some(BarRegister::Pcicfg(0x58)));
        assert_eq!(decode(pf, Shape::Polled, 4, 0x160), Some(BarRegister::Doorbell(0x160)));
        assert_eq!(decode(pf, Shape::Polled, 0, 0x1000), None);
        assert_eq!(decode(pf, Shape::Polled, 2, 0), None);
        assert_eq!((bar_len(pf, Shape::Polled, 0), bar_len(pf, Shape::Polled, 4)), (Some(0x1000), Some(0x1_0000)));
    }

    #[test]
    fn polled_vf_map() {
        let vf = FunctionType::Vf;
        assert_eq!(decode(vf, Shape::Polled, 0, 0x160), Some(BarRegister::Doorbell(0x160)));
        assert_eq!(decode(vf, Shape::Polled, 0, 0x1058), Some(BarRegister::Pcicfg(0x58)));
        assert_eq!(decode(vf, Shape::Polled, 0, 0x1FFC), Some(BarRegister::Pcicfg(0xFFC)));
        assert_eq!(decode(vf, Shape::Polled, 0, 0x2000), None);
        assert_eq!(decode(vf, Shape::Polled, 4, 0x160), None, "a VF has no BAR4");
    }

    #[test]
    fn express_bar0_holds_shadow_table_and_pba_with_holes_between() {
        let pf = FunctionType::Pf;
        assert_eq!(bar_len(pf, OWNED, 0), Some(0x4000));
        assert_eq!(decode(pf, OWNED, 0, 0xFFC), Some(BarRegister::Pcicfg(0xFFC)));
        assert_eq!(decode(pf, OWNED, 0, 0x1000), None);
        assert_eq!(decode(pf, OWNED, 0, 0x2000), Some(BarRegister::MsixTable(0)));
        assert_eq!(decode(pf, OWNED, 0, 0x21FC), Some(BarRegister::MsixTable(0x1FC)));
        assert_eq!(decode(pf, OWNED, 0, 0x2200), None, "32 entries of 16 bytes");
        assert_eq!(decode(pf, OWNED, 0, 0x3004), Some(BarRegister::MsixPba(4)));
        assert_eq!(decode(pf, OWNED, 0, 0x3008), None, "32 pending bits fit one qword");
        assert_eq!(decode(pf, OWNED, 0, 0x4000), None);
        let vf = FunctionType::Vf;
        assert_eq!(decode(vf, OWNED, 0, 0x1058), Some(BarRegister::Pcicfg(0x58)));
        assert_eq!(decode(vf, OWNED, 0, 0x2010), Some(BarRegister::MsixTable(0x10)));
    }

    #[test]
    fn a_transport_owned_table_is_not_decoded() {
        assert_eq!(decode(FunctionType::Pf, FORWARDED, 0, 0x2000), None);
        assert_eq!(decode(FunctionType::Pf, FORWARDED, 0, 0x3000), None);
        let layout = msix(FORWARDED).unwrap();
        assert_eq!((layout.vectors, layout.table_len(), layout.pba_len()), (32, 512, 8));
        assert_eq!(msix(Shape::Polled), None);
    }
}
