//! The persistent state directory (design.md §4, §6): `flash.bin` plus one small JSON file,
//! `state.json`, holding identity, NVRAM, the running state and the faults.
//!
//! Schema (version [`SCHEMA_VERSION`]):
//!
//! ```json
//! {
//!   "schema": 1,
//!   "identity": { "model": "OCe14102", "serial": "EMU0123456789", "function": "pf",
//!                 "macs": ["00:00:c9:12:34:50", "00:00:c9:12:34:51"] },
//!   "nvram":    { "next_profile": 17, "saved": { "17": { <FunctionConfig> }, ... } },
//!   "runtime":  { "boot": "primary", "running_version": "11.1.172.23", "active_profile": 17,
//!                 "active": { <FunctionConfig> }, "beacon": [false, false],
//!                 "flash_directory_offset": 0 },
//!   "faults":   { "gone": false, "ue_status": [0, 0], ... }
//! }
//! ```
//!
//! Fields added after schema 1 was first written (`identity.function`, every fault but `gone`
//! and `ue_status`) have defaults, so older files load unchanged.
//!
//! `identity` and `nvram` survive a power cycle; `runtime` is rebuilt at every POST (but persists
//! across processes: the adapter keeps running between ocetool invocations); `faults` stay until
//! cleared. The file is replaced atomically (write a temporary file, fsync, rename, fsync the
//! directory), so a killed process leaves the old or the new state, never a mix. A file that is
//! missing, corrupt, of another schema version or self-contradictory is a typed error naming it;
//! nothing is ever reset silently.
//!
//! The directory is written in place, often by root: it must be the user's own and writable by
//! no one else ([`check_dir`]), and no state file is reached through a symbolic link. Files are
//! opened with `O_NOFOLLOW`; the temporary file is unlinked and created anew with
//! `O_CREAT | O_EXCL | O_NOFOLLOW`, so a link planted under its name is removed, never followed.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use oce_pci::PciError;
use oce_pci::trust::{self, Owners};
use serde::{Deserialize, Serialize};

use crate::assumptions::{MAC_OUI, MODEL, PORT_COUNT, PROFILES, SERIAL_PREFIX};
use crate::error::{EmulatorError, io_err};
use crate::events::BootOutcome;
use crate::faults::Faults;
use crate::firmware::flash::{BootCheck, temp_path};
use crate::firmware::profiles::{FunctionConfig, definition, factory_profile};
use crate::function::FunctionType;

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: u32 = 1;
/// Name of the JSON state file.
pub const STATE_FILE: &str = "state.json";
/// Name of the flash file.
pub const FLASH_FILE: &str = "flash.bin";
/// Most ports a state file may describe (GET_PORT_NAME has 4 characters, spec §5.10).
const MAX_PORTS: usize = 4;

/// A MAC address, written `00:00:c9:12:34:56` in the state file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MacAddress(pub [u8; 6]);

impl fmt::Display for MacAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

impl FromStr for MacAddress {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = [0u8; 6];
        let mut parts = s.split(':');
        for byte in &mut out {
            let part = parts.next().ok_or_else(|| format!("MAC {s:?} has fewer than 6 parts"))?;
            if part.len() != 2 {
                return Err(format!("MAC {s:?}: {part:?} is not two hex digits"));
            }
            *byte = u8::from_str_radix(part, 16).map_err(|_| format!("MAC {s:?}: {part:?} is not hex"))?;
        }
        if parts.next().is_some() {
            return Err(format!("MAC {s:?} has more than 6 parts"));
        }
        Ok(Self(out))
    }
}

impl TryFrom<String> for MacAddress {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<MacAddress> for String {
    fn from(m: MacAddress) -> String {
        m.to_string()
    }
}

/// Who the adapter is; fixed at manufacture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Identity {
    pub(crate) model: String,
    pub(crate) serial: String,
    /// One permanent MAC per physical port; the port count is their number.
    pub(crate) macs: Vec<MacAddress>,
    /// PF or VF (absent in files written before VFs existed: a PF).
    #[serde(default)]
    pub(crate) function: FunctionType,
}

/// What survives a power cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Nvram {
    /// The profile that becomes active at the next POST.
    pub(crate) next_profile: u8,
    /// The saved configuration of every profile.
    pub(crate) saved: BTreeMap<u8, FunctionConfig>,
}

/// What a power cycle or chip reset rebuilds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Runtime {
    /// What the last POST booted.
    pub(crate) boot: BootOutcome,
    /// `ver_data` of the firmware section that booted (`None` if POST failed).
    pub(crate) running_version: Option<String>,
    /// The active profile.
    pub(crate) active_profile: u8,
    /// Its running configuration (NOSV changes land here only).
    pub(crate) active: FunctionConfig,
    /// Beacon (port identification LED) on, per port.
    pub(crate) beacon: Vec<bool>,
    /// Where the last POST found the flash directory (a hint; the flash is the truth).
    pub(crate) flash_directory_offset: Option<u64>,
}

/// The whole state file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StateFile {
    pub(crate) schema: u32,
    pub(crate) identity: Identity,
    pub(crate) nvram: Nvram,
    pub(crate) runtime: Runtime,
    #[serde(default)]
    pub(crate) faults: Faults,
}

impl Runtime {
    /// The running state right after a POST that found `boot` on flash.
    pub(crate) fn after_post(nvram: &Nvram, ports: usize, boot: &BootCheck) -> Self {
        let active_profile = nvram.next_profile;
        let active = nvram
            .saved
            .get(&active_profile)
            .copied()
            .unwrap_or_else(|| FunctionConfig::factory(definition(active_profile).unwrap_or(factory_profile())));
        Self {
            boot: boot.outcome,
            running_version: boot.version.clone(),
            active_profile,
            active,
            beacon: vec![false; ports],
            flash_directory_offset: boot.directory_offset,
        }
    }
}

impl StateFile {
    /// A factory-fresh `function` whose serial number and MACs derive from `seed`, right after
    /// its first POST found `boot`.
    pub(crate) fn factory(seed: u64, function: FunctionType, boot: &BootCheck) -> Self {
        let serial = format!("{SERIAL_PREFIX}{:010}", seed % 10_000_000_000);
        // Consecutive MACs, the first with its low bits clear so the ports share a prefix.
        let base = ((seed >> 32) as u32 & 0x00FF_FFFF) & !(u32::from(PORT_COUNT).next_power_of_two() - 1);
        let macs = (0..u32::from(PORT_COUNT))
            .map(|port| {
                let n = (base + port).to_be_bytes();
                MacAddress([MAC_OUI[0], MAC_OUI[1], MAC_OUI[2], n[1], n[2], n[3]])
            })
            .collect::<Vec<_>>();
        let nvram = Nvram {
            next_profile: factory_profile().id,
            saved: PROFILES.iter().map(|p| (p.id, FunctionConfig::factory(p))).collect(),
        };
        let runtime = Runtime::after_post(&nvram, macs.len(), boot);
        Self {
            schema: SCHEMA_VERSION,
            identity: Identity { model: MODEL.to_owned(), serial, macs, function },
            nvram,
            runtime,
            faults: Faults::default(),
        }
    }

    /// Reads and checks the state file at `path`.
    pub(crate) fn load(path: &Path) -> Result<Self, EmulatorError> {
        let mut file =
            trust::open_no_follow(path, OpenOptions::new().read(true)).map_err(|e| state_file_error(path, e))?;
        let mut text = Vec::new();
        file.read_to_end(&mut text).map_err(io_err(path))?;
        #[derive(Deserialize)]
        struct Probe {
            schema: Option<serde_json::Value>,
        }
        let corrupt = |source| EmulatorError::Corrupt { path: path.to_path_buf(), source };
        let probe: Probe = serde_json::from_slice(&text).map_err(corrupt)?;
        let found = probe.schema.as_ref().and_then(serde_json::Value::as_u64);
        if found != Some(u64::from(SCHEMA_VERSION)) {
            return Err(EmulatorError::UnknownSchema { path: path.to_path_buf(), found, supported: SCHEMA_VERSION });
        }
        let state: Self = serde_json::from_slice(&text).map_err(corrupt)?;
        state.check().map_err(|reason| EmulatorError::Inconsistent { path: path.to_path_buf(), reason })?;
        Ok(state)
    }

    /// The consistency rules a loaded file must meet.
    fn check(&self) -> Result<(), String> {
        let ports = self.identity.macs.len();
        if !(1..=MAX_PORTS).contains(&ports) {
            return Err(format!("{ports} ports (MACs); expected 1 to {MAX_PORTS}"));
        }
        if self.runtime.beacon.len() != ports {
            return Err(format!("{} beacon states for {ports} ports", self.runtime.beacon.len()));
        }
        for (what, s) in [("serial", &self.identity.serial), ("model", &self.identity.model)] {
            if s.len() > 31 || !s.bytes().all(|b| (0x20..0x7F).contains(&b)) {
                return Err(format!("{what} {s:?} is not printable ASCII of at most 31 characters"));
            }
        }
        for (what, id) in [("next_profile", self.nvram.next_profile), ("active_profile", self.runtime.active_profile)] {
            if definition(id).is_none() {
                return Err(format!("{what} {id:#x} is not a profile this emulator offers"));
            }
        }
        let saved: Vec<u8> = self.nvram.saved.keys().copied().collect();
        let offered: Vec<u8> = {
            let mut ids: Vec<u8> = PROFILES.iter().map(|p| p.id).collect();
            ids.sort_unstable();
            ids
        };
        if saved != offered {
            return Err(format!("saved profiles {saved:x?} do not match the offered profiles {offered:x?}"));
        }
        Ok(())
    }

    /// Replaces the file at `path` atomically with this state.
    pub(crate) fn save(&self, path: &Path) -> Result<(), EmulatorError> {
        let json = serde_json::to_vec_pretty(self)
            .map_err(|e| EmulatorError::Io { path: path.to_path_buf(), source: std::io::Error::other(e) })?;
        write_atomically(path, &json)
    }
}

/// Writes `bytes` to `path` through `path.tmp`: write, fsync, rename, fsync the directory. The
/// temporary name is unlinked first (a file left by a killed process, or a planted link) and
/// created anew, refusing to follow a link (`O_CREAT | O_EXCL | O_NOFOLLOW`).
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EmulatorError> {
    let tmp = temp_path(path);
    match fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(&tmp)(e)),
    }
    let mut file = trust::create_new(&tmp).map_err(|e| state_file_error(&tmp, e))?;
    file.write_all(bytes).map_err(io_err(&tmp))?;
    file.sync_all().map_err(io_err(&tmp))?;
    drop(file);
    fs::rename(&tmp, path).map_err(io_err(path))?;
    let dir = parent_dir(path);
    File::open(&dir).and_then(|d| d.sync_all()).map_err(io_err(dir))
}

/// Refuses a state directory that is not safely this user's: owned by another user, or
/// writable by its group or by others (`oce_pci::trust`, the private rule).
pub(crate) fn check_dir(dir: &Path) -> Result<(), EmulatorError> {
    trust::check_private_dir(dir, Owners::only_me())
        .map_err(|source| EmulatorError::Untrusted { dir: dir.to_path_buf(), source })
}

/// The error for a state file at `path` that [`trust::open_no_follow`] refused: missing is
/// [`EmulatorError::MissingFile`], a link or a non-regular file [`EmulatorError::Untrusted`].
pub(crate) fn state_file_error(path: &Path, e: PciError) -> EmulatorError {
    match e {
        PciError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            EmulatorError::MissingFile { path: path.to_path_buf() }
        }
        PciError::Io { source, .. } => EmulatorError::Io { path: path.to_path_buf(), source },
        source => EmulatorError::Untrusted { dir: parent_dir(path), source },
    }
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot() -> BootCheck {
        BootCheck { outcome: BootOutcome::Primary, version: Some("11.1.172.23".into()), directory_offset: Some(0) }
    }

    #[test]
    fn mac_addresses_parse_and_print() {
        let mac: MacAddress = "00:00:c9:ab:CD:01".parse().unwrap();
        assert_eq!(mac.0, [0, 0, 0xC9, 0xAB, 0xCD, 1]);
        assert_eq!(mac.to_string(), "00:00:c9:ab:cd:01");
        for bad in ["", "00:00:c9:ab:cd", "00:00:c9:ab:cd:01:02", "0:00:c9:ab:cd:01", "zz:00:c9:ab:cd:01"] {
            assert!(bad.parse::<MacAddress>().is_err(), "{bad}");
        }
    }

    #[test]
    fn factory_identity_follows_the_assumptions() {
        let s = StateFile::factory(0x1234_5678_9ABC_DEF0, FunctionType::Pf, &boot());
        assert_eq!(s.identity.model, "OCe14102");
        assert!(s.identity.serial.starts_with("EMU") && s.identity.serial.len() == 13);
        assert_eq!(s.identity.macs.len(), 2);
        assert_eq!(s.identity.macs[0].0[..3], [0x00, 0x00, 0xC9]);
        assert_eq!(s.identity.macs[1].0[5], s.identity.macs[0].0[5] + 1);
        assert_eq!(s.runtime.active_profile, s.nvram.next_profile);
        assert!(s.check().is_ok());
    }

    #[test]
    fn json_round_trip_keeps_everything() {
        let s = StateFile::factory(7, FunctionType::Pf, &boot());
        let text = serde_json::to_string(&s).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["schema"], 1);
        assert_eq!(v["runtime"]["boot"], "primary");
        assert!(v["identity"]["macs"][0].as_str().unwrap().starts_with("00:00:c9:"));
        assert_eq!(serde_json::from_str::<StateFile>(&text).unwrap(), s);
    }

    #[test]
    fn files_without_a_function_are_pfs() {
        let mut v = serde_json::to_value(StateFile::factory(7, FunctionType::Vf, &boot())).unwrap();
        assert_eq!(v["identity"]["function"], "vf");
        v["identity"].as_object_mut().unwrap().remove("function");
        v.as_object_mut().unwrap().remove("faults");
        let s: StateFile = serde_json::from_value(v).unwrap();
        assert_eq!(s.identity.function, FunctionType::Pf);
        assert!(s.faults.is_clear());
    }

    #[test]
    fn inconsistent_states_are_refused() {
        let mut s = StateFile::factory(7, FunctionType::Pf, &boot());
        s.runtime.beacon.push(true);
        assert!(s.check().unwrap_err().contains("beacon"));
        let mut s = StateFile::factory(7, FunctionType::Pf, &boot());
        s.nvram.next_profile = 0xEE;
        assert!(s.check().unwrap_err().contains("next_profile"));
        let mut s = StateFile::factory(7, FunctionType::Pf, &boot());
        s.nvram.saved.remove(&s.nvram.next_profile.clone());
        assert!(s.check().unwrap_err().contains("saved profiles"));
    }
}
