//! The BAR map: which register an offset of a memory BAR reaches (spec/protocol.md §2.1, §2.2,
//! §2.5; the table in [`crate::function`]).

use oce_mailbox::regs::bars::VF_PCICFG_OFFSET;

use crate::function::FunctionType;

/// What a dword of a BAR reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BarRegister {
    /// The pcicfg shadow, at this configuration-space offset.
    Pcicfg(u16),
    /// The doorbell page, at this offset from the doorbell BAR's start.
    Doorbell(u32),
}

/// What the dword at `dword` (4-byte aligned, inside the BAR) of `bar` reaches; `None` in a part
/// of the BAR the model does not decode (reads all ones, writes dropped).
pub(crate) fn decode(function: FunctionType, bar: u8, dword: u64) -> Option<BarRegister> {
    let len = function.bar_len(bar)?;
    if dword >= len {
        return None;
    }
    let off = u32::try_from(dword).ok()?;
    let pcicfg = |o: u32| u16::try_from(o).ok().map(BarRegister::Pcicfg);
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

    #[test]
    fn pf_map() {
        let pf = FunctionType::Pf;
        assert_eq!(decode(pf, 0, 0x58), Some(BarRegister::Pcicfg(0x58)));
        assert_eq!(decode(pf, 4, 0x160), Some(BarRegister::Doorbell(0x160)));
        assert_eq!(decode(pf, 0, 0x1000), None);
        assert_eq!(decode(pf, 2, 0), None);
    }

    #[test]
    fn vf_map() {
        let vf = FunctionType::Vf;
        assert_eq!(decode(vf, 0, 0x160), Some(BarRegister::Doorbell(0x160)));
        assert_eq!(decode(vf, 0, 0x1058), Some(BarRegister::Pcicfg(0x58)));
        assert_eq!(decode(vf, 0, 0x1FFC), Some(BarRegister::Pcicfg(0xFFC)));
        assert_eq!(decode(vf, 0, 0x2000), None);
        assert_eq!(decode(vf, 4, 0x160), None, "a VF has no BAR4");
    }
}
