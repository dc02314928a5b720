//! `vpd` in `query`: the function's PCI Vital Product Data (`oce_pci::vpd`), read through its
//! VPD capability (or the kernel's sysfs `vpd` file while a driver holds the function). VPD that
//! cannot be read or does not parse is an `error` in the field, never a failed query.

use std::collections::BTreeMap;

use oce_pci::{ConfigSpace, PciError, vpd};
use serde::Serialize;

/// `vpd`: the Identifier String, the keywords scripts key on, every keyword's text, or why the
/// VPD could not be had (`error`, the rest empty).
#[derive(Debug, Clone, Default, Serialize)]
pub struct VpdJson {
    pub product_name: Option<String>,
    /// `PN`.
    pub part_number: Option<String>,
    /// `SN`.
    pub serial_number: Option<String>,
    /// `EC`.
    pub engineering_change: Option<String>,
    /// Every keyword of VPD-R and VPD-W but the checksum (`RV`) and the free space (`RW`).
    pub keywords: BTreeMap<String, String>,
    pub error: Option<String>,
}

impl VpdJson {
    /// `None` when the function has no VPD; else what was read, or the error.
    pub fn of(read: Result<Option<Vec<u8>>, PciError>) -> Option<Self> {
        let parsed = match read {
            Ok(None) => return None,
            Ok(Some(bytes)) => vpd::parse(&bytes),
            Err(e) => Err(e),
        };
        Some(match parsed {
            Ok(v) => Self {
                product_name: v.product_name.clone(),
                part_number: v.get("PN"),
                serial_number: v.get("SN"),
                engineering_change: v.get("EC"),
                keywords: v.read_only.iter().chain(&v.writable).map(|k| (k.name.clone(), k.text())).collect(),
                error: None,
            },
            Err(e) => {
                Self { error: Some(format!("cannot read the VPD: {}", oce_pci::error_line(&e))), ..Self::default() }
            }
        })
    }

    /// Through the VPD capability in `config`.
    pub fn read<C: ConfigSpace>(config: &C) -> Option<Self> {
        Self::of(vpd::read_capability(config))
    }

    /// One line for text output.
    pub fn text(&self) -> String {
        if let Some(e) = &self.error {
            return e.clone();
        }
        let mut parts = Vec::new();
        if let Some(n) = &self.product_name {
            parts.push(n.clone());
        }
        for (k, v) in &self.keywords {
            parts.push(format!("{k} {v}"));
        }
        parts.join(", ")
    }
}
