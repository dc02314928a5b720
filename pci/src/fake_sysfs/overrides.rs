//! The fake kernel's `driver_override`: what the kernel holds for each function (a string or
//! nothing), apart from what the attribute shows (`(null)` for both nothing and the literal
//! string), and what a write stores.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use crate::PciAddress;
use crate::sysfs::Roots;

/// What the kernel holds as each function's `driver_override`: one file per function, named by
/// its address, holding the override; none when it is unset. Kept outside the sysfs tree, as the
/// kernel keeps it outside what the attribute shows.
#[derive(Debug, Clone)]
pub(super) struct Overrides(pub(super) PathBuf);

impl Overrides {
    fn path(&self, address: PciAddress) -> PathBuf {
        self.0.join(address.to_string())
    }

    pub(super) fn get(&self, address: PciAddress) -> Option<String> {
        std::fs::read_to_string(self.path(address)).ok()
    }

    pub(super) fn clear(&self, address: PciAddress) {
        let _ = std::fs::remove_file(self.path(address));
    }

    /// Holds `value` for `address` and shows it in the attribute file, as the kernel does.
    pub(super) fn set(&self, roots: &Roots, address: PciAddress, value: Option<&str>) {
        match value {
            Some(v) => std::fs::write(self.path(address), v).unwrap(),
            None => self.clear(address),
        }
        std::fs::write(roots.device_dir(address).join("driver_override"), show_override(value)).unwrap();
    }

    /// What is held for `address`, after checking that its attribute file shows it: a test that
    /// wrote the file itself (instead of [`FakeTree::set_driver_override`](super::FakeTree::set_driver_override)) would otherwise see
    /// the kernel act on something else than what the file says.
    pub(super) fn held(&self, roots: &Roots, address: PciAddress) -> Option<String> {
        let held = self.get(address);
        let shown = std::fs::read_to_string(roots.device_dir(address).join("driver_override")).unwrap();
        assert_eq!(
            shown,
            show_override(held.as_deref()),
            "{address}'s driver_override file was written around the fake kernel: use FakeTree::set_driver_override"
        );
        held
    }
}

/// The attribute's text for an override the kernel holds: `sysfs_emit(buf, "%s\n",
/// pdev->driver_override)` (`driver_override_show`, drivers/pci/pci-sysfs.c), and the kernel's
/// `%s` of a null pointer prints `(null)`.
pub(super) fn show_override(value: Option<&str>) -> String {
    format!("{}\n", value.unwrap_or("(null)"))
}

/// The length from which the kernel refuses a `driver_override` write with EINVAL: `len >=
/// (PAGE_SIZE - 1)` in `driver_set_override`, 4 KiB pages.
const OVERRIDE_WRITE_LIMIT: usize = 4096 - 1;

/// What the kernel holds after `value` is written to `driver_override` (`driver_set_override`,
/// drivers/base/driver.c, which pci-sysfs.c's `driver_override_store` calls; older kernels' own
/// store did the same): the text up to the first NUL, cut at its first newline. An empty write or
/// one that starts with a newline clears the override; anything else — `(null)` included — is
/// kept, spaces and all, as the name of the only driver that may bind the function.
pub fn stored_override(value: &str) -> std::io::Result<Option<String>> {
    if value.len() >= OVERRIDE_WRITE_LIMIT {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    let text = value.split('\0').next().unwrap_or_default();
    let name = text.split('\n').next().unwrap_or_default();
    Ok((!name.is_empty()).then(|| name.to_owned()))
}
