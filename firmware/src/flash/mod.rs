//! Flashing firmware over the mailbox: the plan, the Skyhawk UFI walk and the progress observer
//! (ufi-firmware.md §2.8, §3).
//!
//! A `fw update` goes in steps, so a caller can show the plan and ask before anything changes:
//!
//! 1. [`read_adapter`]: chip (PCI IDs), ASIC revision, running and stored versions — read-only;
//! 2. [`check_chip`]: Skyhawk takes the UFI walk; Lancer, BE3 and BE2 are refused;
//! 3. [`plan`]: compatibility, version policy ([`Policy`]) and each entry's [`Action`], without
//!    touching the device; [`check_crcs`] optionally resolves "flash if changed" with read-only
//!    CRC queries for a dry run;
//! 4. [`flash_ufi`]: the walk, reporting to a [`FlashObserver`], ending in a [`FlashReport`].
//!
//! ```no_run
//! # fn demo<F: oce_pci::PciFunction>(mbox: &mut oce_mailbox::BootstrapMailbox<F>, file: &[u8])
//! # -> Result<(), oce_firmware::FlashError> {
//! use oce_firmware::UfiImage;
//! use oce_firmware::flash::{self, NoProgress, Policy};
//!
//! let image = UfiImage::parse(file)?;
//! let adapter = flash::read_adapter(mbox)?;
//! let plan = flash::plan(&image, &adapter, Policy::default())?;
//! let report = flash::flash_ufi(mbox, &image, &plan, &mut NoProgress)?;
//! assert_eq!(report.reset_required, report.running != report.stored);
//! # Ok(()) }
//! ```
//!
//! The image is borrowed throughout (typically a read-only memory map): each 32 KiB chunk is
//! copied once into the command buffer and once into DMA memory, nothing else.

mod error;
mod observer;
mod plan;
mod report;
mod skyhawk;
mod target;

#[cfg(test)]
mod tests;

use oce_mailbox::commands::{GetFwVersion, QueryFirmwareConfig};
use oce_mailbox::{BootstrapMailbox, MailboxError};
use oce_pci::{Chip, ConfigSpace, PciFunction, ids};

use crate::ufi::UfiImage;

pub use error::FlashError;
pub use observer::{FlashObserver, NoProgress};
pub use plan::{Action, AdapterState, FlashPlan, PlannedSection, Policy, VersionChange, plan, version_change};
pub use report::{FlashMode, FlashReport, Outcome, SectionOutcome, SectionRef};
pub use skyhawk::CHUNK;

/// Refuses a chip ocetool does not flash: only Skyhawk (OCe14000) takes the UFI walk.
///
/// Lancer is refused: be2net downloads its `.grp` file as an object with WRITE_OBJECT
/// (`lancer_fw_download`, ufi-firmware.md §4), a path ocetool does not implement; ocetool drives
/// OCe14000 (Skyhawk) adapters only. BE3 is refused: be2net flashes it with a different walk over
/// a fixed flash map (`be_flash_BEx`, ufi-firmware.md §2.6–§2.7: table offsets, NC-SI version
/// gate, PHY gate), which ocetool does not implement; running the Skyhawk walk there would write
/// the wrong places. BE2 is refused as FreeBSD refuses it ("Flashing not supported for BE2 yet.",
/// §1.5).
pub fn check_chip(chip: Chip) -> Result<(), FlashError> {
    match chip {
        Chip::Skyhawk => Ok(()),
        Chip::Lancer => Err(FlashError::UnsupportedChip {
            chip,
            reason: "Lancer adapters are not supported; ocetool flashes OCe14000 (Skyhawk) adapters only",
        }),
        Chip::Be3 => Err(FlashError::UnsupportedChip {
            chip,
            reason: "BE3 firmware is flashed with be2net's fixed-flash-map walk, which ocetool does not implement",
        }),
        Chip::Be2 => Err(FlashError::UnsupportedChip {
            chip,
            reason: "BE2 flashing is refused, as FreeBSD refuses it (its g2 images use another walk)",
        }),
    }
}

/// Config-space offset of the vendor and device IDs (PCI header).
const CFG_ID: u16 = 0x00;

/// The chip of the mailbox's function, from its PCI IDs (`oce_pci::ids`).
pub fn read_chip<F: PciFunction>(mbox: &BootstrapMailbox<F>) -> Result<Chip, FlashError> {
    let word = mbox
        .function()
        .config()
        .read32(CFG_ID)
        .map_err(|e| FlashError::Device { during: "reading the PCI IDs", source: MailboxError::Pci(e) })?;
    let (vendor, device) = (word as u16, (word >> 16) as u16);
    ids::identify(vendor, device).map(|k| k.chip).ok_or(FlashError::UnknownDevice { vendor, device })
}

/// Everything [`plan`] needs from the adapter: chip, ASIC revision (QUERY_FIRMWARE_CONFIG) and
/// versions (GET_FW_VERSION). Read-only.
pub fn read_adapter<F: PciFunction>(mbox: &mut BootstrapMailbox<F>) -> Result<AdapterState, FlashError> {
    let chip = read_chip(mbox)?;
    let config = mbox
        .execute(&QueryFirmwareConfig)
        .map_err(|source| FlashError::Device { during: "QUERY_FIRMWARE_CONFIG", source })?;
    let versions =
        mbox.execute(&GetFwVersion).map_err(|source| FlashError::Device { during: "GET_FW_VERSION", source })?;
    Ok(AdapterState { chip, asic_rev: config.asic_rev(), running: versions.running, stored: versions.on_flash })
}

/// Dry run: resolves the plan's "flash if changed" entries with read-only CRC queries (falling
/// back to op-type mode as the walk would), so the plan shows exactly what a flash would write.
pub fn check_crcs<F: PciFunction>(
    mbox: &mut BootstrapMailbox<F>,
    image: &UfiImage<'_>,
    plan: &mut FlashPlan,
) -> Result<FlashMode, FlashError> {
    skyhawk::check_crcs(mbox, image, plan)
}

/// Flashes `image` following `plan` (which must have been made from this image) with the Skyhawk
/// walk, then reads the versions. See [`FlashObserver`] for progress and stopping.
pub fn flash_ufi<F: PciFunction, O: FlashObserver + ?Sized>(
    mbox: &mut BootstrapMailbox<F>,
    image: &UfiImage<'_>,
    plan: &FlashPlan,
    observer: &mut O,
) -> Result<FlashReport, FlashError> {
    skyhawk::run(mbox, image, plan, observer)
}
