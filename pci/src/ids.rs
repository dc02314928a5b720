//! The OneConnect PCI ID table: which vendor/device pairs belong to which chip and function kind
//! (spec/protocol.md §1.1), and which of them ocetool drives.

use std::fmt;

use serde::Serialize;

/// ServerEngines, the vendor ID of BE2 and BE3 (spec/protocol.md §1.1).
#[doc(alias = "BE_VENDOR_ID")]
pub const VENDOR_SERVERENGINES: u16 = 0x19a2;
/// Emulex, the vendor ID of Lancer and Skyhawk (spec/protocol.md §1.1).
#[doc(alias = "EMULEX_VENDOR_ID")]
pub const VENDOR_EMULEX: u16 = 0x10df;

/// The silicon generation of a OneConnect function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Chip {
    /// BladeEngine 2 (OCe10100 generation).
    Be2,
    /// BladeEngine 3 (OCe11100 generation).
    Be3,
    /// Lancer (OCe15100 generation).
    Lancer,
    /// Skyhawk (OCe14000), the adapter ocetool is written for.
    Skyhawk,
}

impl Chip {
    /// The name used in output: `"be2"`, `"be3"`, `"lancer"`, `"skyhawk"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Be2 => "be2",
            Self::Be3 => "be3",
            Self::Lancer => "lancer",
            Self::Skyhawk => "skyhawk",
        }
    }

    /// The product line, for messages.
    pub fn product_line(self) -> &'static str {
        match self {
            Self::Be2 => "OCe10100",
            Self::Be3 => "OCe11100",
            Self::Lancer => "OCe15100",
            Self::Skyhawk => "OCe14000",
        }
    }
}

impl fmt::Display for Chip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a OneConnect PCI function does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FunctionKind {
    /// A NIC physical function (be2net).
    NicPf,
    /// A NIC virtual function (be2net on the VF).
    NicVf,
    /// An FCoE function (lpfc), physical or virtual.
    Fcoe,
    /// An iSCSI function (be2iscsi).
    Iscsi,
}

impl FunctionKind {
    /// The name used in output: `"nic_pf"`, `"nic_vf"`, `"fcoe"`, `"iscsi"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::NicPf => "nic_pf",
            Self::NicVf => "nic_vf",
            Self::Fcoe => "fcoe",
            Self::Iscsi => "iscsi",
        }
    }

    /// True for a function that carries storage (FCoE, iSCSI): taking it from its driver takes
    /// the disks behind it away from whatever uses them.
    pub fn is_storage(self) -> bool {
        matches!(self, Self::Fcoe | Self::Iscsi)
    }

    /// The kind as a message names it: `NIC`, `NIC VF`, `FCoE`, `iSCSI`.
    pub fn label(self) -> &'static str {
        match self {
            Self::NicPf => "NIC",
            Self::NicVf => "NIC VF",
            Self::Fcoe => "FCoE",
            Self::Iscsi => "iSCSI",
        }
    }
}

impl fmt::Display for FunctionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One row of the ID table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownId {
    /// PCI vendor ID.
    pub vendor: u16,
    /// PCI device ID.
    pub device: u16,
    /// The chip.
    pub chip: Chip,
    /// The function kind.
    pub kind: FunctionKind,
    /// True when the ID itself marks a virtual function (Lancer and Skyhawk have VF device IDs;
    /// BE3 VFs share the PF's ID and are recognised by their `physfn` link instead).
    pub virtual_function: bool,
    /// The kernel's macro name for the ID, where the spec records it.
    pub c_name: Option<&'static str>,
}

const fn id(
    vendor: u16,
    device: u16,
    chip: Chip,
    kind: FunctionKind,
    virtual_function: bool,
    c_name: Option<&'static str>,
) -> KnownId {
    KnownId { vendor, device, chip, kind, virtual_function, c_name }
}

use Chip::{Be2, Be3, Lancer, Skyhawk};
use FunctionKind::{Fcoe, Iscsi, NicPf, NicVf};

/// Every OneConnect function ID, from spec/protocol.md §1.1 (be2net `be.h`, lpfc `lpfc_hw.h`,
/// be2iscsi `be_main.h`). The iSCSI rows of BE2/BE3 are under the ServerEngines vendor ID, the
/// Skyhawk iSCSI row under Emulex: be2iscsi's `beiscsi_pci_id_table` (drivers/scsi/be2iscsi/
/// be_main.c) lists `PCI_DEVICE(ELX_VENDOR_ID, OC_SKH_ID1)`, 0x10DF:0x722 by be_main.h. The
/// Skyhawk FCoE rows are lpfc's `lpfc_id_table` entries (drivers/scsi/lpfc/lpfc_ids.h)
/// `PCI_VENDOR_ID_EMULEX` with `PCI_DEVICE_ID_SKYHAWK` / `PCI_DEVICE_ID_SKYHAWK_VF`.
pub const KNOWN_IDS: &[KnownId] = &[
    id(VENDOR_SERVERENGINES, 0x0211, Be2, NicPf, false, Some("BE_DEVICE_ID1")),
    id(VENDOR_SERVERENGINES, 0x0700, Be2, NicPf, false, Some("OC_DEVICE_ID1")),
    id(VENDOR_SERVERENGINES, 0x0221, Be3, NicPf, false, Some("BE_DEVICE_ID2")),
    id(VENDOR_SERVERENGINES, 0x0710, Be3, NicPf, false, Some("OC_DEVICE_ID2")),
    id(VENDOR_EMULEX, 0xe220, Lancer, NicPf, false, Some("OC_DEVICE_ID3")),
    id(VENDOR_EMULEX, 0xe228, Lancer, NicVf, true, Some("OC_DEVICE_ID4")),
    id(VENDOR_EMULEX, 0x0720, Skyhawk, NicPf, false, Some("OC_DEVICE_ID5")),
    id(VENDOR_EMULEX, 0x0728, Skyhawk, NicVf, true, Some("OC_DEVICE_ID6")),
    id(VENDOR_EMULEX, 0x0724, Skyhawk, Fcoe, false, Some("PCI_DEVICE_ID_SKYHAWK")),
    id(VENDOR_EMULEX, 0x072c, Skyhawk, Fcoe, true, Some("PCI_DEVICE_ID_SKYHAWK_VF")),
    id(VENDOR_SERVERENGINES, 0x0704, Be2, Fcoe, false, None),
    id(VENDOR_SERVERENGINES, 0x0714, Be3, Fcoe, false, None),
    id(VENDOR_EMULEX, 0x0722, Skyhawk, Iscsi, false, Some("OC_SKH_ID1")),
    id(VENDOR_SERVERENGINES, 0x0212, Be2, Iscsi, false, None),
    id(VENDOR_SERVERENGINES, 0x0702, Be2, Iscsi, false, None),
    id(VENDOR_SERVERENGINES, 0x0703, Be2, Iscsi, false, None),
    id(VENDOR_SERVERENGINES, 0x0222, Be3, Iscsi, false, None),
    id(VENDOR_SERVERENGINES, 0x0712, Be3, Iscsi, false, None),
];

/// Looks up a vendor/device pair in [`KNOWN_IDS`].
pub fn identify(vendor: u16, device: u16) -> Option<&'static KnownId> {
    KNOWN_IDS.iter().find(|k| k.vendor == vendor && k.device == device)
}

/// A PCI ID as ocetool writes it everywhere, text and JSON alike: `0x10df`.
pub fn id_string(id: u16) -> String {
    format!("{id:#06x}")
}

/// A vendor:device pair in text, as `lspci -n` writes it: `10df:0720` (the one form for pairs,
/// so an ID copied from ocetool's output can be searched for in lspci's).
pub fn pair_string(vendor: u16, device: u16) -> String {
    format!("{vendor:04x}:{device:04x}")
}

/// Serialises a PCI ID as [`id_string`] does (`#[serde(serialize_with = ...)]`), so every JSON
/// document spells IDs one way.
pub fn serialize_id<S: serde::Serializer>(id: &u16, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&id_string(*id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skyhawk_ids_from_the_spec() {
        let pf = identify(0x10df, 0x0720).unwrap();
        assert_eq!((pf.chip, pf.kind, pf.virtual_function), (Chip::Skyhawk, FunctionKind::NicPf, false));
        let vf = identify(0x10df, 0x0728).unwrap();
        assert_eq!((vf.chip, vf.kind, vf.virtual_function), (Chip::Skyhawk, FunctionKind::NicVf, true));
        assert_eq!(identify(0x10df, 0x0724).unwrap().kind, FunctionKind::Fcoe);
        assert_eq!(identify(0x10df, 0x0722).unwrap().kind, FunctionKind::Iscsi);
        assert_eq!(identify(0x19a2, 0x0710).unwrap().chip, Chip::Be3);
        assert_eq!(identify(0x10df, 0xe220).unwrap().chip, Chip::Lancer);
    }

    #[test]
    fn ids_and_pairs_are_written_one_way() {
        assert_eq!(id_string(0x10df), "0x10df");
        assert_eq!(id_string(0x720), "0x0720");
        assert_eq!(pair_string(0x10df, 0x720), "10df:0720");
    }

    #[test]
    fn the_vendor_matters() {
        assert!(identify(0x19a2, 0x0720).is_none());
        assert!(identify(0x10df, 0x0710).is_none());
        assert!(identify(0x8086, 0x100e).is_none());
    }

    #[test]
    fn every_pair_is_listed_once() {
        for (i, a) in KNOWN_IDS.iter().enumerate() {
            for b in &KNOWN_IDS[i + 1..] {
                assert!((a.vendor, a.device) != (b.vendor, b.device), "{a:?} and {b:?}");
            }
        }
    }
}
