//! Which adapter a command works on (`--device`, `OCETOOL_DEVICE`, or the only one found), whether
//! ocetool may drive it, and where the per-device lock that keeps two ocetool processes from
//! driving one adapter at once lives (design.md §4; the lock itself is [`crate::lock`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oce_pci::discover::{self, Blocker, Inventory, Scope, discover};
use oce_pci::ids::pair_string;
use oce_pci::{Chip, FunctionKind, PciAddress, Roots, sysfs};

use crate::args::GlobalArgs;
use crate::error::{CliError, CliResult, ErrorCode, pci_error};
use crate::lock::DeviceLock;

/// A device as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpec {
    /// The emulator with its state in this directory.
    Emulator(PathBuf),
    /// A real PCI function.
    Pci(PciAddress),
}

impl DeviceSpec {
    /// Parses `emu`, `emu:DIR` or a PCI address.
    pub fn parse(s: &str) -> CliResult<Self> {
        if s == "emu" {
            return default_emulator_dir().map(Self::Emulator);
        }
        if let Some(dir) = s.strip_prefix("emu:") {
            if dir.is_empty() {
                return Err(CliError::new(
                    ErrorCode::BadArgument,
                    "--device emu: needs a directory after the colon (emu:DIR)",
                ));
            }
            return Ok(Self::Emulator(PathBuf::from(dir)));
        }
        s.parse::<PciAddress>().map(Self::Pci).map_err(|e| {
            CliError::new(
                ErrorCode::BadArgument,
                format!("bad --device {s:?}: {e}; or use emu / emu:DIR for the emulator"),
            )
        })
    }

    /// A short name for messages.
    pub fn describe(&self) -> String {
        match self {
            Self::Emulator(dir) => format!("emulator at {}", dir.display()),
            Self::Pci(addr) => addr.to_string(),
        }
    }
}

/// The device the user selected with `--device` / `OCETOOL_DEVICE`; without either, the only
/// Skyhawk adapter found in sysfs (its first NIC physical function), as design.md §4 asks.
pub fn select_device(global: &GlobalArgs) -> CliResult<DeviceSpec> {
    if let Some(s) = &global.device {
        return DeviceSpec::parse(s);
    }
    let (inventory, candidates) = skyhawk_adapters(global)?;
    match candidates.as_slice() {
        [only] => Ok(DeviceSpec::Pci(*only)),
        [] => {
            let found: Vec<String> = inventory
                .adapters
                .iter()
                .flat_map(|a| a.functions.iter().map(|f| format!("{} ({} {})", f.address, f.chip, f.kind)))
                .collect();
            let found = if found.is_empty() {
                "no OneConnect functions found".to_owned()
            } else {
                format!("found only {}", found.join(", "))
            };
            Err(CliError::new(
                ErrorCode::NoSuchDevice,
                format!(
                    "no OCe14000 adapter to work on ({found}); pass --device BDF, or --device emu for the emulator"
                ),
            ))
        }
        many => Err(CliError::new(
            ErrorCode::NoSuchDevice,
            format!(
                "{} OCe14000 adapters found ({}); choose one with --device (see `ocetool list`), or --device emu for the emulator",
                many.len(),
                many.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// Every OCe14000 (Skyhawk) adapter in sysfs, each by its first NIC physical function (the
/// adapters `apply` works on without `--device`), and the inventory they were found in.
pub fn skyhawk_adapters(global: &GlobalArgs) -> CliResult<(Inventory, Vec<PciAddress>)> {
    let roots = global.roots();
    let inventory = discover(&roots, Scope::OneConnect)
        .map_err(|e| pci_error("no --device given, and sysfs cannot be searched for an adapter", &e))?;
    let found = inventory
        .adapters
        .iter()
        .filter(|a| a.chip == Chip::Skyhawk)
        .filter_map(|a| a.functions.iter().find(|f| f.kind == FunctionKind::NicPf).map(|f| f.address))
        .collect();
    Ok((inventory, found))
}

/// Refuses a PCI function ocetool cannot drive before anything touches its binding: a function
/// that is not OneConnect at all (a mistyped address must never unbind someone's other NIC), or
/// a OneConnect function of another chip or protocol.
///
/// Only a binary built with the cargo feature `unsafe-any-device` honours
/// `OCETOOL_UNSAFE_ANY_DEVICE=1`, which skips this check. The feature exists for the real-kernel
/// test (`tests/vfio-qemu/run.sh`), which has no OneConnect adapter and drives an e1000 through
/// the hand-off instead; a default (and every release) build has no such branch and ignores the
/// variable.
pub fn check_supported(roots: &Roots, addr: PciAddress) -> CliResult<()> {
    if !roots.device_dir(addr).exists() {
        return Err(CliError::new(
            ErrorCode::NoSuchDevice,
            format!("no such PCI device: {addr}; see `ocetool list` for the adapters ocetool can drive"),
        ));
    }
    // Compiled only into a test build: a default binary holds neither this branch nor the
    // variable's name.
    #[cfg(feature = "unsafe-any-device")]
    if std::env::var_os("OCETOOL_UNSAFE_ANY_DEVICE").is_some_and(|v| v == "1") {
        return Ok(());
    }
    let info = discover::describe(roots, addr).map_err(|e| pci_error(&format!("cannot read {addr}"), &e))?;
    let Some(info) = info else {
        return Err(CliError::new(
            ErrorCode::UnsupportedDevice,
            format!(
                "{addr} is not an Emulex OneConnect function; see `ocetool list` for the adapters ocetool can drive"
            ),
        ));
    };
    let inherent =
        info.blockers.iter().find(|b| matches!(b, Blocker::UnsupportedChip(_) | Blocker::Fcoe | Blocker::Iscsi));
    if let Some(b) = inherent {
        return Err(CliError::new(
            ErrorCode::UnsupportedDevice,
            format!("{addr} ({}): {b}", pair_string(info.vendor_id, info.device_id)),
        ));
    }
    Ok(())
}

/// A function of the card, other than the one a command drives, that a host driver holds: a chip
/// reset restarts it under that driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldFunction {
    /// The function.
    pub address: PciAddress,
    /// What it is: a NIC port (be2net), or a storage function (FCoE on lpfc, iSCSI on be2iscsi).
    pub kind: FunctionKind,
    /// The driver that holds it.
    pub driver: String,
    /// Its network interfaces, RDMA devices and SCSI hosts, by name.
    pub dependents: Vec<String>,
}

impl fmt::Display for HeldFunction {
    /// `0000:03:00.1 (be2net: eth1, ocrdma1)`; a storage function says what it is:
    /// `0000:03:00.2 (FCoE, lpfc: host3)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (", self.address)?;
        if self.kind.is_storage() {
            write!(f, "{}, ", self.kind.label())?;
        }
        f.write_str(&self.driver)?;
        if !self.dependents.is_empty() {
            write!(f, ": {}", self.dependents.join(", "))?;
        }
        f.write_str(")")
    }
}

/// The functions of `spec`'s card other than `spec` that a kernel driver other than vfio-pci
/// holds, by `inventory` (the OneConnect functions in sysfs: NIC ports, and the FCoE and iSCSI
/// functions lpfc and be2iscsi bind), each with what runs on it: a chip reset would pull the rug
/// from under them, storage I/O included. None for the emulator, which has one function.
pub fn drivers_on_the_card(
    roots: &Roots,
    inventory: Option<&Inventory>,
    spec: &DeviceSpec,
) -> CliResult<Vec<HeldFunction>> {
    let (DeviceSpec::Pci(addr), Some(inventory)) = (spec, inventory) else { return Ok(Vec::new()) };
    let card = discover::adapter_slot(roots, *addr).map_err(|e| pci_error(&format!("cannot read {addr}"), &e))?;
    inventory
        .adapters
        .iter()
        .filter(|a| a.slot == card)
        .flat_map(|a| &a.functions)
        .filter(|f| f.address != *addr)
        .filter_map(|f| f.driver.as_deref().filter(|d| *d != sysfs::VFIO_PCI).map(|d| (f, d)))
        .map(|(f, driver)| {
            let address = f.address;
            let unreadable = |e| pci_error(&format!("cannot read {address}"), &e);
            let on = sysfs::dependents(roots, address).map_err(unreadable)?;
            let mut dependents: Vec<String> = on.netdevs.into_iter().map(|n| n.name).collect();
            dependents.extend(on.rdma);
            dependents.extend(sysfs::scsi_hosts(roots, address).map_err(unreadable)?);
            Ok(HeldFunction { address, kind: f.kind, driver: driver.to_owned(), dependents })
        })
        .collect()
}

/// Takes the adapter's lock for the length of the command.
pub fn lock_device(global: &GlobalArgs, spec: &DeviceSpec) -> CliResult<DeviceLock> {
    let wait = Duration::try_from_secs_f64(global.wait.max(0.0)).unwrap_or(Duration::ZERO);
    let path = lock_path(spec, &global.roots())?;
    tracing::info!(lock = %path.display(), "taking the adapter's lock");
    DeviceLock::acquire(&path, wait, &spec.describe(), &global.roots().proc)
}

/// The default emulator state directory: `$XDG_STATE_HOME/ocetool/emu`, else
/// `$HOME/.local/state/ocetool/emu`.
pub fn default_emulator_dir() -> CliResult<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".local/state")));
    base.map(|b| b.join("ocetool").join("emu")).ok_or_else(|| {
        CliError::new(
            ErrorCode::BadArgument,
            "cannot place the default emulator state: neither XDG_STATE_HOME nor HOME is set; use --device emu:DIR",
        )
    })
}

/// Where the lock file of a real device lives: `$OCETOOL_LOCK_DIR`, else `/run/lock/ocetool`.
fn pci_lock_dir() -> PathBuf {
    std::env::var_os("OCETOOL_LOCK_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/run/lock/ocetool"), PathBuf::from)
}

/// The lock file path for a device: one per adapter, so every PCI function of a card (both
/// ports, and their virtual functions) shares it — a reset or a flash acts on the whole card —
/// while another card's functions have their own.
pub fn lock_path(spec: &DeviceSpec, roots: &Roots) -> CliResult<PathBuf> {
    Ok(match spec {
        // The emulator's lock sits beside its state directory, so the directory itself holds only
        // the adapter's state.
        DeviceSpec::Emulator(dir) => emulator_lock_path(dir),
        DeviceSpec::Pci(addr) => {
            let slot = discover::adapter_slot(roots, *addr)
                .map_err(|e| pci_error(&format!("cannot tell which adapter {addr} belongs to"), &e))?;
            pci_lock_dir().join(format!("{slot}.lock"))
        }
    })
}

/// The lock file of the emulated adapter in `dir`: beside the state directory, so the directory
/// itself holds only the adapter's state.
pub fn emulator_lock_path(dir: &Path) -> PathBuf {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "emu".into());
    dir.parent().unwrap_or(Path::new(".")).join(format!(".{name}.lock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_forms() {
        assert_eq!(DeviceSpec::parse("emu:/tmp/x").unwrap(), DeviceSpec::Emulator("/tmp/x".into()));
        assert_eq!(DeviceSpec::parse("03:00.0").unwrap(), DeviceSpec::Pci("0000:03:00.0".parse().unwrap()));
        assert_eq!(DeviceSpec::parse("emu:").unwrap_err().code, ErrorCode::BadArgument);
        let err = DeviceSpec::parse("eth0").unwrap_err();
        assert_eq!(err.code, ErrorCode::BadArgument);
        assert!(err.message.contains("emu:DIR"), "{}", err.message);
    }

    #[test]
    fn emulator_lock_sits_beside_the_state_directory() {
        let roots = Roots::new("/nonexistent/sys", "/nonexistent/dev");
        assert_eq!(
            lock_path(&DeviceSpec::Emulator("/a/b/emu1".into()), &roots).unwrap(),
            PathBuf::from("/a/b/.emu1.lock")
        );
    }
}
