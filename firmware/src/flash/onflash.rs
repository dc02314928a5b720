//! What the adapter's flash holds, read without writing anything: the flash directory the
//! adapter boots from and whether the sections it boots from (0xA0, 0xB0) pass their CRCs.
//!
//! Everything comes from READ_FLASHROM REPORT (ufi-firmware.md §3.4), the only read the drivers
//! send. REPORT answers 4 bytes at an `offset`:
//!
//! - **offset mode** (op type 7): ocetool takes them as the 4 bytes stored at that flash address,
//!   which is what the drivers compare with a section's trailer. With that, the directory is read
//!   4 bytes at a time (2240 bytes: 560 queries). The cookie proves the reading: a REPORT that
//!   computed something instead of returning stored bytes would not spell
//!   `"*** SE FLASH DIRECTORY ***"`.
//! - **op-type mode** (the section's own op type, `offset = pad_size − 4`): the CRC the firmware
//!   computes over the component's region in its directory — a firmware that knows the region
//!   can compute it, one given only an address cannot. A boot section passes when this equals
//!   the trailer stored at its end (offset mode).
//!
//! Both readings are the emulator's documented assumptions (`oce_emulator::assumptions`, "Flash
//! commands"); what real firmware answers is unknown (ufi-firmware.md §8). Where the answers do
//! not fit, ocetool does not guess: the directory is "not read" and a boot section "unchecked",
//! and the callers act on that conservatively (see [`super::order`]).

use oce_mailbox::commands::FlashOpType;
use oce_mailbox::{BaseStatus, MailboxError};
use serde::Serialize;

use super::report::{FlashMode, SectionRef};
use super::target::FlashTarget;
use crate::crc::TRAILER_LEN;
use crate::dir::{COOKIE_LEN, CookieForm, DirectoryLayout, FlashDirectory, ImageType, OpType, SCAN_STEP};

/// The boot sections POST looks at, in the order it tries them (design.md §6: the active
/// firmware, else the backup).
pub const BOOT_TYPES: [ImageType; 2] = [ImageType::FirmwareIscsi, ImageType::FirmwareBackupIscsi];

/// What the adapter's flash holds, as far as ocetool could read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OnFlash {
    /// How the adapter takes flash commands: offset mode unless it refused op type 7.
    pub mode: FlashMode,
    /// The directory the adapter boots from, when it could be read.
    pub directory: Option<OnFlashDirectory>,
    /// Why it could not be read.
    pub unreadable: Option<String>,
}

/// The flash directory on the adapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OnFlashDirectory {
    /// Flash address of its cookie (`None` in op-type mode when its own 0xD2 entry is missing).
    pub address: Option<u32>,
    /// `ver_data` of its 0xA0 entry: the stored firmware version.
    pub version: Option<String>,
    /// Every entry in use: where the directory puts each section.
    pub sections: Vec<Region>,
    /// The 0xA0 and 0xB0 entries, each with its CRC check.
    pub boot: Vec<BootSection>,
    /// The directory as decoded.
    #[serde(skip)]
    pub directory: FlashDirectory,
}

/// A section's place on flash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Region {
    /// The entry.
    #[serde(flatten)]
    pub section: SectionRef,
    /// Flash address.
    pub offset: u32,
    /// `pad_size`.
    pub bytes: u32,
}

impl Region {
    /// End address (exclusive).
    pub fn end(&self) -> u64 {
        u64::from(self.offset) + u64::from(self.bytes)
    }

    /// True when the two regions share a byte.
    pub fn overlaps(&self, other: &Region) -> bool {
        u64::from(self.offset) < other.end() && u64::from(other.offset) < self.end()
    }

    /// The same place and size.
    pub fn same_place(&self, other: &Region) -> bool {
        (self.offset, self.bytes) == (other.offset, other.bytes)
    }
}

/// One boot section of the directory on flash and what its CRC check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BootSection {
    /// Where it is.
    #[serde(flatten)]
    pub region: Region,
    /// Whether it passes its CRC.
    pub state: BootState,
}

/// The result of a boot section's CRC check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BootState {
    /// The CRC the adapter computes over the region equals the trailer stored at its end.
    Good,
    /// They differ: POST would not boot this section.
    Bad,
    /// Not checked (the adapter refused one of the two queries, e.g. no offset mode).
    Unchecked,
}

/// Whether the flash as read boots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bootable {
    /// A boot section of the directory passes its CRC.
    Yes,
    /// The directory was read and neither boot section passes: POST would fail.
    No,
    /// The directory could not be read, or its boot sections could not be checked.
    Unknown,
}

impl OnFlash {
    /// What POST would find, as far as the checks tell.
    pub fn bootable(&self) -> Bootable {
        self.directory.as_ref().map_or(Bootable::Unknown, OnFlashDirectory::bootable)
    }
}

impl OnFlashDirectory {
    /// [`Bootable::Yes`] when a boot section is good, `No` when every one was checked bad (or
    /// there is none), else `Unknown`.
    pub fn bootable(&self) -> Bootable {
        if self.boot.iter().any(|b| b.state == BootState::Good) {
            Bootable::Yes
        } else if self.boot.iter().all(|b| b.state == BootState::Bad) {
            Bootable::No
        } else {
            Bootable::Unknown
        }
    }

    /// The region the directory's own 0xD2 entry gives, else the 2240 directory bytes at its
    /// address.
    pub fn own_region(&self) -> Option<Region> {
        let listed = self.sections.iter().find(|r| r.section.image_type == ImageType::UfiDir).copied();
        listed.or_else(|| {
            self.address.map(|offset| Region {
                section: SectionRef { index: 0, image_type: ImageType::UfiDir },
                offset,
                bytes: FlashDirectory::LEN as u32,
            })
        })
    }
}

/// True for the statuses with which firmware says it does not take a request as addressed
/// (ufi-firmware.md §2.8 steps 5 and 7).
pub(crate) fn is_refusal(err: &MailboxError) -> bool {
    err.status().is_some_and(|s| matches!(s.base, BaseStatus::IllegalRequest | BaseStatus::IllegalField))
}

/// `len` bytes from `start` with REPORT, 4 at a time (`len` a multiple of 4).
fn read_bytes<T: FlashTarget + ?Sized>(
    dev: &mut T,
    op_type: FlashOpType,
    start: u32,
    len: usize,
) -> Result<Vec<u8>, MailboxError> {
    let mut out = Vec::with_capacity(len);
    for at in (0..len as u32).step_by(TRAILER_LEN) {
        out.extend_from_slice(&dev.read_crc(op_type, start.wrapping_add(at))?);
    }
    Ok(out)
}

/// Why a read of the directory found none.
fn no_directory(place: &str) -> String {
    format!(
        "no flash directory cookie at {place} (either none is there, or the adapter's READ_FLASHROM REPORT does \
         not return the stored bytes)"
    )
}

/// Reads the adapter's flash: the mode, the directory (looked for at flash address `at`, and at
/// every 32-byte step before it, since POST takes the first cookie) and the boot sections'
/// checks. Read-only. A device error is returned; a flash that cannot be read is an answer.
pub(crate) fn read_on_flash<T: FlashTarget + ?Sized>(dev: &mut T, at: u32) -> Result<OnFlash, MailboxError> {
    match dev.read_crc(FlashOpType::OffsetSpecified, at) {
        Ok(_) => {}
        Err(e) if is_refusal(&e) => return read_by_op_type(dev),
        Err(e) => return Err(e),
    }
    let mode = FlashMode::Offset;
    let Some(address) = first_cookie(dev, at)? else {
        let unreadable = Some(no_directory(&format!("flash address {at:#x} or before it")));
        return Ok(OnFlash { mode, directory: None, unreadable });
    };
    let bytes = match read_bytes(dev, FlashOpType::OffsetSpecified, address, FlashDirectory::LEN) {
        Ok(b) => b,
        Err(e) if is_refusal(&e) => {
            let unreadable = Some(format!("the directory at {address:#x} runs past what the adapter reads"));
            return Ok(OnFlash { mode, directory: None, unreadable });
        }
        Err(e) => return Err(e),
    };
    let directory = match FlashDirectory::parse_at(&bytes, 0, DirectoryLayout::G3) {
        Ok(d) => d,
        Err(e) => {
            let unreadable = Some(format!("the flash directory at {address:#x} does not parse: {e}"));
            return Ok(OnFlash { mode, directory: None, unreadable });
        }
    };
    let mut found = describe(directory, Some(address));
    for boot in &mut found.boot {
        boot.state = check_boot_section(dev, &boot.region)?;
    }
    Ok(OnFlash { mode, directory: Some(found), unreadable: None })
}

/// The address of the first cookie at a multiple of 32 bytes up to and including `at` (itself a
/// multiple of 32: the drivers find a directory only there, ufi-firmware.md §2.2): the first
/// 4 bytes at each step, the whole cookie only where they match.
fn first_cookie<T: FlashTarget + ?Sized>(dev: &mut T, at: u32) -> Result<Option<u32>, MailboxError> {
    for candidate in (0..=at).step_by(SCAN_STEP) {
        let head = match dev.read_crc(FlashOpType::OffsetSpecified, candidate) {
            Ok(h) => h,
            Err(e) if is_refusal(&e) => continue,
            Err(e) => return Err(e),
        };
        if head != COOKIE_HEAD {
            continue;
        }
        let cookie = read_bytes(dev, FlashOpType::OffsetSpecified, candidate, COOKIE_LEN)?;
        if CookieForm::detect(&cookie).is_some() {
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

/// The first 4 bytes of both cookie forms (ufi-firmware.md §2.1).
const COOKIE_HEAD: [u8; 4] = *b"*** ";

/// Op-type mode: the directory is read from the start of the 0xD2 region (op type 23), where
/// ocetool's images put it; the boot sections cannot be checked (there is no stored trailer to
/// compare the computed CRC with).
fn read_by_op_type<T: FlashTarget + ?Sized>(dev: &mut T) -> Result<OnFlash, MailboxError> {
    let mode = FlashMode::OpType;
    let op_type = FlashOpType::from_raw(OpType::UfiDir.raw());
    let bytes = match read_bytes(dev, op_type, 0, FlashDirectory::LEN) {
        Ok(b) => b,
        Err(e) if is_refusal(&e) => {
            let unreadable = Some(format!(
                "the adapter refuses offset mode and READ_FLASHROM of its directory region (op type {})",
                OpType::UfiDir.raw()
            ));
            return Ok(OnFlash { mode, directory: None, unreadable });
        }
        Err(e) => return Err(e),
    };
    if CookieForm::detect(&bytes).is_none() {
        return Ok(OnFlash {
            mode,
            directory: None,
            unreadable: Some(no_directory("the start of op type 23's region")),
        });
    }
    match FlashDirectory::parse_at(&bytes, 0, DirectoryLayout::G3) {
        Ok(directory) => {
            let address = directory.entry(ImageType::UfiDir).map(|e| e.offset);
            Ok(OnFlash { mode, directory: Some(describe(directory, address)), unreadable: None })
        }
        Err(e) => {
            let unreadable = Some(format!("the flash directory in op type 23's region does not parse: {e}"));
            Ok(OnFlash { mode, directory: None, unreadable })
        }
    }
}

pub(crate) fn describe(directory: FlashDirectory, address: Option<u32>) -> OnFlashDirectory {
    let sections: Vec<Region> = directory
        .entries_in_use()
        .map(|(index, e)| Region {
            section: SectionRef { index, image_type: e.image_type },
            offset: e.offset,
            bytes: e.pad_size,
        })
        .collect();
    let boot = BOOT_TYPES
        .iter()
        .filter_map(|t| sections.iter().find(|r| r.section.image_type == *t))
        .map(|&region| BootSection { region, state: BootState::Unchecked })
        .collect();
    OnFlashDirectory { address, version: directory.firmware_version(), sections, boot, directory }
}

/// A boot section's check: the CRC the adapter computes over the region (REPORT with its own op
/// type) against the trailer stored at its end (REPORT in offset mode).
fn check_boot_section<T: FlashTarget + ?Sized>(dev: &mut T, region: &Region) -> Result<BootState, MailboxError> {
    let Some(optype) = region.section.image_type.skyhawk_optype() else { return Ok(BootState::Unchecked) };
    if region.bytes < TRAILER_LEN as u32 || region.end() > 1 << 32 {
        return Ok(BootState::Bad);
    }
    let in_section = region.bytes - TRAILER_LEN as u32;
    let stored = match dev.read_crc(FlashOpType::OffsetSpecified, region.offset + in_section) {
        Ok(s) => s,
        Err(e) if is_refusal(&e) => return Ok(BootState::Bad),
        Err(e) => return Err(e),
    };
    let computed = match dev.read_crc(FlashOpType::from_raw(optype.raw()), in_section) {
        Ok(c) => c,
        Err(e) if is_refusal(&e) => return Ok(BootState::Unchecked),
        Err(e) => return Err(e),
    };
    Ok(if stored == computed { BootState::Good } else { BootState::Bad })
}
