//! `ocetool fw update FILE`: check the image against the adapter and the version policy before
//! touching anything, show what will be written, ask, flash only the sections that differ, and
//! report what runs and what is stored (design.md §7).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use oce_firmware::flash::{
    self, Action, FlashObserver, FlashPlan, OnFlash, Outcome, Policy, Safety, SectionOutcome, SectionRef, VersionChange,
};
use oce_firmware::ufi::{UfiImage, map_file};
use oce_firmware::{FlashError, ImageError};
use oce_mailbox::Command;
use oce_mailbox::adapter::read_profiles;
use oce_mailbox::commands::WriteFlashrom;
use oce_pci::PciFunction;
use oce_pci::mmap::ReadOnlyMap;
use oce_pci::signals;
use serde::Serialize;

use super::progress::Bar;

use crate::error::{CliError, CliResult, flash_error, image_error};
use crate::output::{Report, confirm};
use crate::report::{FirmwareVersions, ProfilePair};
use crate::session::{Job, Session, require_physical_function, stop_point};

/// The `fw update` job: the image is mapped and parsed before any device is touched.
#[derive(Debug)]
pub struct FwUpdate {
    file: PathBuf,
    map: ReadOnlyMap,
    /// Why the file is not a flashable UFI image, if it is not.
    parse_error: Option<ImageError>,
    policy: Policy,
    dry_run: bool,
    yes: bool,
    /// `--json` or `--quiet`: no progress output at all.
    quiet: bool,
}

impl FwUpdate {
    /// Maps and parses `file`. A file that cannot be read is an error here; an image that does not
    /// parse is remembered, and refused by [`FwUpdate::refuse_unparsable_early`].
    pub fn new(file: &Path, policy: Policy, dry_run: bool, yes: bool, quiet: bool) -> CliResult<Self> {
        let map = map_file(file).map_err(|e| image_error("cannot read the image", &e))?;
        let parse_error = UfiImage::parse(map.as_slice()).err();
        Ok(Self { file: file.to_path_buf(), map, parse_error, policy, dry_run, yes, quiet })
    }

    /// The firmware version the image carries (what the adapter reports after the update), or
    /// `None` when it does not parse.
    pub fn image_version(&self) -> Option<String> {
        let image = UfiImage::parse(self.map.as_slice()).ok()?;
        Some(image.firmware_version().unwrap_or_else(|| image.version()))
    }

    /// Refuses an image that does not parse, before the adapter is opened.
    pub fn refuse_unparsable_early(&self) -> CliResult<()> {
        match &self.parse_error {
            Some(e) => Err(self.not_flashable(e)),
            None => Ok(()),
        }
    }

    fn not_flashable(&self, e: &ImageError) -> CliError {
        image_error(&format!("{} is not a flashable image", self.file.display()), e)
            .hint("nothing was written; `ocetool fw inspect FILE` lists every problem")
    }
}

/// The `fw update` document.
#[derive(Debug, Serialize)]
pub struct UpdateJson {
    /// Sections were written (with `--dry-run`: would be).
    pub changed: bool,
    dry_run: bool,
    file: PathBuf,
    /// The image's firmware version.
    image_version: String,
    /// upgrade / same / downgrade / none_on_flash / unordered.
    version_change: VersionChange,
    /// The new firmware runs only after a reset (`firmware.running != firmware.stored`).
    pub reset_required: bool,
    firmware: FirmwareVersions,
    profile: Option<ProfilePair>,
    /// Each directory entry: `type`, `name`, `action`, `bytes`, `reason`.
    sections: Vec<SectionJson>,
    bytes_written: u64,
    /// offset / op_type (the walk falls back to op types when offset mode is refused).
    mode: flash::FlashMode,
    fell_back: bool,
    /// The sections written (with `--dry-run`: to write), in the order the walk writes them.
    write_order: Vec<SectionRef>,
    /// Whether that order keeps a bootable copy at every step: `verdict` safe /
    /// nothing_to_keep / unsafe (then `reason`; only flashed with `--force`).
    safety: Safety,
    /// The flash as read before the update: `mode`, `directory` (`address`, `version`,
    /// `sections[]`, `boot[]` with each boot section's `state`), or why it was `unreadable`.
    on_flash: OnFlash,
}

/// One section of the result.
#[derive(Debug, Serialize)]
struct SectionJson {
    #[serde(flatten)]
    section: SectionRef,
    /// flashed / skipped_same / skipped_unsupported (design.md §7); with `--dry-run`, what a
    /// real run would do.
    action: &'static str,
    bytes: u32,
    reason: String,
}

impl SectionJson {
    fn outcome(o: &SectionOutcome) -> Self {
        Self { section: o.section, action: action_name(o.action), bytes: o.bytes, reason: o.reason.clone() }
    }

    /// A section of a plan that is not carried out (a dry run, or nothing to write): the outcome
    /// a flash would have.
    fn planned(p: &flash::PlannedSection) -> Self {
        let outcome = match p.action {
            Action::Flash => Outcome::Flashed,
            Action::SkipSame => Outcome::SkippedSame,
            Action::SkipUnsupported => Outcome::SkippedUnsupported,
        };
        Self { section: p.section, action: action_name(outcome), bytes: p.bytes, reason: p.reason.to_owned() }
    }
}

/// The one spelling of each section action in the JSON (design.md §7).
fn action_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Flashed => "flashed",
        Outcome::SkippedSame => "skipped_same",
        Outcome::SkippedUnsupported => "skipped_unsupported",
    }
}

impl Job for FwUpdate {
    type Output = UpdateJson;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<UpdateJson> {
        let image = UfiImage::parse(self.map.as_slice()).map_err(|e| self.not_flashable(&e))?;
        // Read the adapter (read-only), then plan: one value the flash carries out as it is.
        let plan = plan_on(session, &image, self.policy)?;
        let device = session.device.describe();
        let mbox = &mut session.mbox;
        let to_write: Vec<&flash::PlannedSection> = plan.candidates().collect();
        let bytes = plan.max_bytes();
        let adapter = &plan.adapter;
        let write_order: Vec<SectionRef> = to_write.iter().map(|s| s.section).collect();

        if self.dry_run || to_write.is_empty() {
            let profiles = read_profiles(mbox).ok().map(|p| ProfilePair::of(&p));
            return Ok(UpdateJson {
                changed: !to_write.is_empty(),
                dry_run: self.dry_run,
                file: self.file.clone(),
                image_version: plan.image_version.clone(),
                version_change: plan.version_change,
                reset_required: adapter.running != adapter.stored,
                firmware: FirmwareVersions { running: adapter.running.clone(), stored: adapter.stored.clone() },
                profile: profiles,
                sections: plan.sections.iter().map(SectionJson::planned).collect(),
                bytes_written: 0,
                mode: plan.mode,
                fell_back: plan.mode == flash::FlashMode::OpType,
                write_order,
                safety: plan.safety.clone(),
                on_flash: adapter.flash.clone(),
            });
        }

        confirm(
            self.yes,
            &format!(
                "flash firmware {} onto {device} ({} section{}, {:.1} MiB; it runs {} now){}",
                plan.image_version,
                to_write.len(),
                if to_write.len() == 1 { "" } else { "s" },
                bytes as f64 / f64::from(1u32 << 20),
                adapter.running,
                match &plan.safety {
                    Safety::Unsafe { .. } => " WITHOUT a bootable copy at every step (--force)",
                    _ => "",
                }
            ),
        )?;
        stop_point("flash the image")?;
        let mut progress = Progress::new(self.quiet, &plan);
        if !crate::output::quiet() {
            signals::set_notice(Some(&stop_notice(&plan.safety)));
        }
        let report = flash::flash_ufi(mbox, &image, &plan, &mut progress);
        signals::set_notice(None);
        progress.finish();
        let report = report.map_err(|e| flash_error("the firmware update failed", &e))?;
        let profiles = read_profiles(mbox).ok().map(|p| ProfilePair::of(&p));
        Ok(UpdateJson {
            changed: report.changed,
            dry_run: false,
            file: self.file.clone(),
            image_version: plan.image_version.clone(),
            version_change: plan.version_change,
            reset_required: report.reset_required,
            firmware: FirmwareVersions { running: report.running.clone(), stored: report.stored.clone() },
            profile: profiles,
            sections: report.sections.iter().map(SectionJson::outcome).collect(),
            bytes_written: report.bytes_written,
            mode: report.mode,
            fell_back: report.fell_back || plan.mode == flash::FlashMode::OpType,
            write_order,
            safety: plan.safety.clone(),
            on_flash: plan.adapter.flash.clone(),
        })
    }
}

/// The checks `fw update` makes before it writes a byte: a physical function, of a chip ocetool
/// flashes; then the adapter read once, read-only ([`flash::read_adapter`]: versions, the flash
/// directory and its boot sections, the CRC diff), and the plan made from it ([`flash::plan`]:
/// compatibility, version policy, the write order and its safety). `fw verify --device` asks
/// exactly these questions.
pub fn plan_on<F: PciFunction>(session: &mut Session<F>, image: &UfiImage<'_>, policy: Policy) -> CliResult<FlashPlan> {
    require_physical_function(session, "a firmware update")?;
    let adapter = flash::read_adapter(&mut session.mbox, image).map_err(|e| match e {
        FlashError::UnsupportedChip { .. } => flash_error("", &e),
        FlashError::UnknownDevice { .. } => flash_error("cannot identify the adapter", &e),
        _ => flash_error("cannot read the adapter's firmware state", &e),
    })?;
    flash::plan(image, &adapter, policy).map_err(|e| flash_error("refusing to flash", &e))
}

/// The line printed the moment SIGINT or SIGTERM arrives during the flash (on stderr; the JSON
/// document is unchanged; not with `--quiet`). The walk asks to stop only between 32 KiB chunks
/// (`FlashObserver::should_stop`), so the stop waits for the write in flight, whose limit is
/// WRITE_FLASHROM's 40 s timeout (ufi-firmware.md §3.2, §3.5).
fn stop_notice(safety: &Safety) -> String {
    let secs = <WriteFlashrom<'_> as Command>::TIMEOUT.as_secs();
    let rerun = match safety {
        Safety::Unsafe { .. } => "this forced update may leave no bootable copy: run it again before any reset",
        Safety::Safe | Safety::NothingToKeep => "the flash is safe to rerun, and running it again finishes the update",
    };
    format!(
        "ocetool: stop requested: the flash stops after the write in flight (the current 32 KiB chunk, \
         within {secs} s); the section being staged is not committed; {rerun}"
    )
}

/// Progress on stderr: a bar on a terminal, a line per section otherwise, nothing with `--json`
/// or `--quiet`.
struct Progress {
    bar: Option<Bar>,
    lines: bool,
    done: u64,
}

impl Progress {
    fn new(quiet: bool, plan: &FlashPlan) -> Self {
        let total = plan.sections.iter().map(|s| u64::from(s.bytes)).sum();
        let tty = std::io::stderr().is_terminal();
        let bar = (!quiet && tty).then(|| Bar::new(total));
        Self { bar, lines: !quiet && !tty, done: 0 }
    }

    fn finish(&mut self) {
        if let Some(bar) = &mut self.bar {
            bar.finish_and_clear();
        }
    }
}

impl FlashObserver for Progress {
    fn section_started(&mut self, section: SectionRef, bytes: u32) {
        if let Some(bar) = &mut self.bar {
            bar.set_message(section.image_type.name());
        }
        if self.lines {
            eprintln!("ocetool: writing {} ({bytes} bytes)", section.image_type.name());
        }
    }

    fn bytes_sent(&mut self, _section: SectionRef, sent: u32, _total: u32) {
        let position = self.done + u64::from(sent);
        if let Some(bar) = &mut self.bar {
            bar.set_position(position);
        }
    }

    fn section_done(&mut self, outcome: &SectionOutcome) {
        self.done += u64::from(outcome.bytes);
        if let Some(bar) = &mut self.bar {
            bar.set_position(self.done);
        }
        if self.lines {
            let what = match outcome.action {
                Outcome::Flashed => "flashed",
                Outcome::SkippedSame => "already on flash",
                Outcome::SkippedUnsupported => "skipped",
            };
            eprintln!("ocetool: {}: {what}", outcome.section.image_type.name());
        }
    }

    fn should_stop(&self) -> bool {
        signals::pending().is_some()
    }
}

impl Report for UpdateJson {
    fn text(&self) -> String {
        let mut out = String::new();
        let version = &self.image_version;
        match (self.dry_run, self.changed) {
            (true, true) => out.push_str(&format!("Dry run: flashing {version} would write these sections:\n")),
            (true, false) | (false, false) => {
                out.push_str(&format!("Nothing to do: the adapter already holds every section of {version}.\n"));
            }
            (false, true) => out.push_str(&format!(
                "Flashed {version}: {:.1} MiB written{}.\n",
                self.bytes_written as f64 / f64::from(1u32 << 20),
                if self.fell_back { " (the adapter refused offset mode; op types were used)" } else { "" }
            )),
        }
        for s in &self.sections {
            let action = match s.action {
                "flashed" if self.dry_run => "would flash",
                "flashed" => "flashed",
                "skipped_same" => "already on flash",
                _ => "skipped",
            };
            out.push_str(&format!(
                "  {:02x}  {:<26} {:>9} bytes  {action}\n",
                s.section.image_type.raw(),
                s.section.image_type.name(),
                s.bytes
            ));
        }
        if !self.write_order.is_empty() {
            let names: Vec<String> = self.write_order.iter().map(|s| format!("{:02x}", s.image_type.raw())).collect();
            out.push_str(&format!("Write order: {}\n", names.join(", ")));
        }
        match &self.safety {
            Safety::Safe => {}
            Safety::NothingToKeep => {
                out.push_str("The flash did not boot before the update (its boot sections fail their CRCs).\n");
            }
            Safety::Unsafe { reason } => out.push_str(&format!("Not interruption-safe (--force): {reason}\n")),
        }
        out.push_str(&format!("Firmware: running {}, stored {}\n", self.firmware.running, self.firmware.stored));
        if self.reset_required && !self.dry_run {
            out.push_str("Reset required: run `ocetool reset` (or reboot) to run the new firmware.\n");
        }
        out
    }
}
