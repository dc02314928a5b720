//! `ocetool apply`'s configuration (`/etc/ocetool/ocetool.toml`): the wanted state of each adapter
//! as `[[adapter]]` rules, read with serde so that an unknown key, a wrong type or an unknown
//! profile name is an error naming the file, the line and the key (exit 2).
//!
//! ```toml
//! [[adapter]]
//! match = { all = true }        # or { serial = "..." }, or { address = "0000:03:00" }
//! profile = "roce"              # nic | roce | a profile ID
//! firmware = "/usr/lib/firmware/ocetool/oc14-11.2.1.0.ufi"   # optional
//! allow_downgrade = false       # optional
//! activate = "reset"            # reset | next-boot (default)
//! unbind = false                # take a function from a bound driver (be2net) only when true
//! ```
//!
//! `apply` runs as root at boot and flashes what the file names, so the file, every image it
//! names and every directory above them must be changeable by no one but root (and the invoking
//! user, when that is not root): `oce_pci::trust`'s strict rule, like sshd's StrictModes. A
//! refusal is exit 4 naming the path, its owner and its mode. A relative `firmware` path is the
//! configuration file's directory's, never the working directory's.

use std::path::{Path, PathBuf};

use oce_mailbox::adapter::ProfileTarget;
use oce_pci::mmap::open_regular;
use oce_pci::trust::{self, Owners};
use oce_pci::{PciAddress, PciError};
use serde::Deserialize;

use crate::error::{CliError, CliResult, ErrorCode, ErrorKind, file_error, file_kind};

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The rules, in order: the first that matches an adapter decides its state.
    #[serde(default)]
    pub adapter: Vec<Rule>,
}

/// One `[[adapter]]` rule.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Which adapters the rule is for (`match = { ... }`).
    #[serde(rename = "match")]
    pub selector: Selector,
    /// The wanted profile: `nic`, `roce` or an ID.
    pub profile: Option<Profile>,
    /// A `.ufi` image whose firmware the adapter should hold.
    pub firmware: Option<PathBuf>,
    /// Allow the image to be older than the firmware on flash.
    #[serde(default)]
    pub allow_downgrade: bool,
    /// When the new state runs.
    #[serde(default)]
    pub activate: Activate,
    /// Take a function from its bound driver (be2net) for the length of the work.
    #[serde(default)]
    pub unbind: bool,
}

/// `match = { ... }` as written: exactly one of the keys, checked into a [`Selector`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Match {
    /// `all = true`: every adapter.
    all: Option<bool>,
    /// The adapter with this serial number.
    serial: Option<String>,
    /// The card at this slot (`0000:03:00`) or one of its functions (`0000:03:00.1`).
    address: Option<String>,
}

/// Which adapters a rule is for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Match")]
pub enum Selector {
    /// Every adapter.
    All,
    /// By serial number.
    Serial(String),
    /// By the card's PCI domain, bus and device.
    Slot { domain: u16, bus: u8, device: u8 },
}

/// `profile = "roce"` or `profile = 3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile(pub ProfileTarget);

impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Name(String),
            Id(i64),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Name(name) => name,
            Raw::Id(id) => id.to_string(),
        };
        text.parse::<ProfileTarget>().map(Profile).map_err(serde::de::Error::custom)
    }
}

/// `activate = "reset" | "next-boot"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activate {
    /// Soft-reset the chip (when no other driver holds a function of it), so the new state runs
    /// now.
    Reset,
    /// Only store it: it runs after the next reset or reboot.
    #[default]
    NextBoot,
}

impl TryFrom<Match> for Selector {
    type Error = String;

    fn try_from(m: Match) -> Result<Self, String> {
        match (m.all, m.serial, m.address) {
            (Some(true), None, None) => Ok(Self::All),
            (Some(false), None, None) => Err("`all = false` matches nothing; remove the rule instead".into()),
            (None, Some(serial), None) => Ok(Self::Serial(serial)),
            (None, None, Some(address)) => parse_slot(&address),
            _ => Err("give exactly one of `all = true`, `serial = \"...\"` or `address = \"...\"`".into()),
        }
    }
}

/// `0000:03:00`, `03:00`, or a function's address (`0000:03:00.1`), which names its card.
fn parse_slot(text: &str) -> Result<Selector, String> {
    let function = if text.contains('.') { text.to_owned() } else { format!("{text}.0") };
    let a: PciAddress = function.parse().map_err(|e| {
        format!("address {text:?} is not a PCI slot like 0000:03:00 or a function like 0000:03:00.0: {e}")
    })?;
    Ok(Selector::Slot { domain: a.domain, bus: a.bus, device: a.device })
}

impl Selector {
    /// True when the adapter at `slot` (its PF's address, if PCI) with `serial` is selected.
    pub fn matches(&self, slot: Option<PciAddress>, serial: &str) -> bool {
        match self {
            Self::All => true,
            Self::Serial(s) => s.trim() == serial.trim(),
            Self::Slot { domain, bus, device } => {
                slot.is_some_and(|a| (a.domain, a.bus, a.device) == (*domain, *bus, *device))
            }
        }
    }
}

/// Reads and checks the configuration at `path`: the file and the images it names must be
/// trusted (module docs), and each `firmware` path comes back absolute, resolved against the
/// file's directory. Every problem with the file itself is usage (exit 2), except a refusal of
/// trust (exit 4).
pub fn load(path: &Path) -> CliResult<Config> {
    use std::io::Read;
    let owners = Owners::root_and_me();
    let missing = || {
        CliError::new(
            ErrorCode::BadConfig,
            format!(
                "no configuration at {}; write one (see the README, `ocetool apply`) or pass --config",
                path.display()
            ),
        )
    };
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Err(missing());
    }
    let resolved = trust::check_path(path, owners).map_err(|e| config_error(path, None, &e))?.ok_or_else(missing)?;
    let mut file = open_regular(&resolved).map_err(|e| config_error(path, Some(&resolved), &e))?;
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(|e| {
        CliError::new(ErrorCode::BadConfig, format!("cannot read the configuration {}: {e}", path.display()))
    })?;
    let mut config = parse(path, &text)?;
    let dir = config_dir(path)?;
    for (index, rule) in config.adapter.iter_mut().enumerate() {
        if let Some(image) = &rule.firmware {
            rule.firmware = Some(trusted_image(&dir.join(image), owners, path, index)?);
        }
    }
    Ok(config)
}

/// The error for the configuration file at `path` (reached at `resolved`): refused when not
/// trusted, else usage, whatever the file's problem.
fn config_error(path: &Path, resolved: Option<&Path>, e: &PciError) -> CliError {
    if file_kind(e) == ErrorKind::Refused {
        // Name the configuration too when the path refused is a directory above it.
        let names_the_file = matches!(e, PciError::Untrusted { path: p, .. } | PciError::Symlink { path: p }
            if Some(p.as_path()) == resolved || p == path);
        let context = if names_the_file {
            "refusing the configuration".to_owned()
        } else {
            format!("refusing the configuration {}", path.display())
        };
        return file_error(&context, e);
    }
    let mut err = file_error("cannot read the configuration", e);
    err.code = ErrorCode::BadConfig;
    err
}

/// The directory of the configuration file as named (made absolute from the working directory,
/// links not resolved): where relative image paths start.
fn config_dir(path: &Path) -> CliResult<PathBuf> {
    let absolute = std::path::absolute(path).map_err(|e| {
        CliError::new(ErrorCode::BadConfig, format!("cannot make {} an absolute path: {e}", path.display()))
    })?;
    Ok(absolute.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf))
}

/// The image of rule `index` at `image` (absolute), checked: a path someone else could change is
/// refused before anything is touched; a missing or unreadable one is left for that adapter's
/// flash step to report (exit 2 there), since no one but root could put a file there meanwhile.
/// Returns the path with links resolved when the file exists.
fn trusted_image(image: &Path, owners: Owners, config: &Path, index: usize) -> CliResult<PathBuf> {
    match trust::check_path(image, owners) {
        Ok(Some(resolved)) => Ok(resolved),
        Ok(None) => Ok(image.to_path_buf()),
        Err(e) if file_kind(&e) == ErrorKind::Refused => {
            Err(file_error(&format!("refusing the firmware image of rule {index} in {}", config.display()), &e))
        }
        Err(_) => Ok(image.to_path_buf()),
    }
}

/// Parses configuration text; `path` only names the file in errors.
pub fn parse(path: &Path, text: &str) -> CliResult<Config> {
    let config: Config = toml::from_str(text).map_err(|e| {
        let located = e.span().map(|span| locate(text, span));
        let message = e.message().trim_end();
        CliError::new(
            ErrorCode::BadConfig,
            match located {
                Some((line, Some(key))) => format!("{}:{line}: key `{key}`: {message}", path.display()),
                Some((line, None)) => format!("{}:{line}: {message}", path.display()),
                None => format!("{}: {message}", path.display()),
            },
        )
    })?;
    Ok(config)
}

/// The line (from 1) of a byte span, and the key it belongs to: the key itself when the span
/// covers one (an unknown key), else the key before the nearest `=` (a value of the wrong type).
fn locate(text: &str, span: std::ops::Range<usize>) -> (usize, Option<String>) {
    let start = span.start.min(text.len());
    let line = text[..start].matches('\n').count() + 1;
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..start];
    let is_key = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let spanned = text.get(span.clone()).unwrap_or("").trim();
    if is_key(spanned) && !before.contains('=') || before.trim_end().ends_with(['{', ',']) {
        return (line, is_key(spanned).then(|| spanned.to_owned()));
    }
    let key = before.rfind('=').map(|eq| {
        before[..eq]
            .trim_end()
            .rsplit(|c: char| c == '{' || c == ',' || c.is_whitespace())
            .next()
            .unwrap_or("")
            .to_owned()
    });
    (line, key.filter(|k| is_key(k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_err(text: &str) -> String {
        let err = parse(Path::new("/etc/ocetool/ocetool.toml"), text).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadConfig);
        err.message
    }

    #[test]
    fn a_full_rule_parses() {
        let c = parse(
            Path::new("x"),
            "[[adapter]]\nmatch = { address = \"0000:03:00\" }\nprofile = \"roce\"\nfirmware = \"/f.ufi\"\n\
             allow_downgrade = true\nactivate = \"reset\"\nunbind = true\n\n[[adapter]]\nmatch = { all = true }\nprofile = 3\n",
        )
        .unwrap();
        assert_eq!(c.adapter.len(), 2);
        let r = &c.adapter[0];
        assert_eq!(r.selector, Selector::Slot { domain: 0, bus: 3, device: 0 });
        assert_eq!(r.profile, Some(Profile(ProfileTarget::Roce)));
        assert_eq!((r.activate, r.unbind, r.allow_downgrade), (Activate::Reset, true, true));
        assert_eq!(c.adapter[1].profile, Some(Profile(ProfileTarget::Id(3))));
        assert_eq!(c.adapter[1].activate, Activate::NextBoot);
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_key() {
        let m = parse_err("[[adapter]]\nmatch = { all = true }\nprofile = \"rocee\"\n");
        assert!(m.starts_with("/etc/ocetool/ocetool.toml:3: key `profile`:"), "{m}");
        assert!(m.contains("\"rocee\" is not a profile"), "{m}");
        let m = parse_err("[[adapter]]\nmatch = { all = true }\nprofil = \"roce\"\n");
        assert!(m.starts_with("/etc/ocetool/ocetool.toml:3: key `profil`:") && m.contains("unknown field"), "{m}");
        let m = parse_err("[[adapter]]\nmatch = { all = true }\nunbind = \"yes\"\n");
        assert!(m.starts_with("/etc/ocetool/ocetool.toml:3: key `unbind`:"), "{m}");
        let m = parse_err("[[adapter]]\nmatch = { all = true, serial = \"x\" }\n");
        assert!(m.starts_with("/etc/ocetool/ocetool.toml:2: key `match`: give exactly one"), "{m}");
        let m = parse_err("[[adapter]]\nmatch = { seria = \"x\" }\n");
        assert!(m.contains(":2: key `seria`"), "{m}");
        let m = parse_err("[[adapter]]\nmatch = { address = \"eth0\" }\n");
        assert!(m.contains("key `match`") && m.contains("not a PCI slot"), "{m}");
        let m = parse_err("[[adapter]]\nmatch = { all = true }\nactivate = \"now\"\n");
        assert!(m.contains(":3: key `activate`"), "{m}");
    }

    #[test]
    fn selectors_match_slots_serials_and_all() {
        let slot = Some("0000:03:00.0".parse().unwrap());
        assert!(Selector::All.matches(None, "x"));
        assert!(Selector::Serial("ABC".into()).matches(None, "ABC "));
        assert!(!Selector::Serial("ABC".into()).matches(slot, "ABD"));
        let s = parse_slot("03:00.1").unwrap();
        assert!(s.matches(slot, "x"));
        assert!(!s.matches(None, "x"), "the emulator has no slot");
        assert!(!parse_slot("0000:04:00").unwrap().matches(slot, "x"));
    }
}
