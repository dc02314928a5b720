//! `ocetool fw verify FILE [--device D]`: the question a script asks before it flashes — is this
//! image flashable (and, with a device, would `fw update` accept it there)? Exit 0 for yes, 4 for
//! no, with the reasons. The answers come from the checks that already exist: `fw inspect`'s
//! problems for the image, and `fw update`'s own checks ([`plan_on`]: compatibility, version
//! policy, a write order that keeps a bootable copy) for the adapter. With a device it also
//! reports whether the flash as it is boots (`flash_bootable`, the boot sections' CRC checks):
//! a flash that would not boot does not make the image unflashable — flashing it is the
//! remedy — so it is a warning, not a reason.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use oce_firmware::Severity;
use oce_firmware::flash::{self, Bootable, OnFlash, Policy, VersionChange};
use oce_firmware::inspect::inspect_file;
use oce_firmware::ufi::{UfiImage, map_file};
use oce_pci::PciFunction;
use oce_pci::mmap::ReadOnlyMap;
use serde::Serialize;

use super::update::plan_on;
use crate::args::GlobalArgs;
use crate::error::{CliResult, ErrorKind, image_error};
use crate::output::{Report, printable};
use crate::session::{Job, Session, run_job};

/// The `fw verify` document.
#[derive(Debug, Serialize)]
pub struct VerifyJson {
    file: PathBuf,
    /// The image is flashable (and, with a device, `fw update` would accept it there).
    ok: bool,
    /// The image passes every check that needs no adapter.
    flashable: bool,
    /// The firmware version the adapter would report after the update.
    image_version: Option<String>,
    /// The device checked against (absent without `--device`).
    device: Option<String>,
    /// With a device: the image suits its chip and revision, and the version policy allows it.
    compatible: Option<bool>,
    /// With a device: the image's version against the one on flash.
    version_change: Option<VersionChange>,
    /// Why not, one line each (empty when `ok`).
    reasons: Vec<String>,
    /// With a device: whether the adapter's flash boots as it is: `yes` / `no` / `unknown`.
    flash_bootable: Option<Bootable>,
    /// With a device: the flash as read (`directory` with `boot[]` and each boot section's
    /// `state`, or why it is `unreadable`).
    flash: Option<OnFlash>,
    /// Things to know that do not stop the update, one line each.
    warnings: Vec<String>,
}

/// Verifies `file`, against the selected adapter when `--device` (or `OCETOOL_DEVICE`) names one.
pub fn run(global: &GlobalArgs, file: &Path, allow_downgrade: bool) -> CliResult<VerifyJson> {
    let report = inspect_file(file).map_err(|e| image_error("cannot read the image", &e))?;
    let reasons: Vec<String> =
        report.problems.iter().filter(|p| p.severity >= Severity::Error).map(|p| p.message.clone()).collect();
    let mut out = VerifyJson {
        file: file.to_path_buf(),
        ok: report.flashable,
        flashable: report.flashable,
        image_version: report.firmware_version.clone().or(report.version.clone()),
        device: None,
        compatible: None,
        version_change: None,
        reasons,
        flash_bootable: None,
        flash: None,
        warnings: Vec::new(),
    };
    if global.device.is_none() || !report.flashable {
        return Ok(out);
    }
    let map = map_file(file).map_err(|e| image_error("cannot read the image", &e))?;
    let job = OnDevice { map, policy: Policy { allow_downgrade, force: false } };
    let (device, answer, on_flash) = run_job(global, job)?.output;
    out.device = Some(device);
    out.flash_bootable = on_flash.as_ref().map(OnFlash::bootable);
    match out.flash_bootable {
        Some(Bootable::No) => out.warnings.push(
            "the adapter's flash would not boot now (no boot section passes its CRC): flash an image before any reset"
                .to_owned(),
        ),
        Some(Bootable::Unknown) => out.warnings.push(format!(
            "the adapter's boot sections could not be checked{}",
            on_flash.as_ref().and_then(|f| f.unreadable.as_ref()).map(|r| format!(": {r}")).unwrap_or_default()
        )),
        _ => {}
    }
    out.flash = on_flash;
    match answer {
        Ok(version_change) => {
            out.compatible = Some(true);
            out.version_change = Some(version_change);
        }
        Err(reason) => {
            out.compatible = Some(false);
            out.ok = false;
            out.reasons.push(reason);
        }
    }
    Ok(out)
}

/// The adapter half: `fw update`'s checks, with a refusal as an answer rather than an error.
#[derive(Debug)]
struct OnDevice {
    map: ReadOnlyMap,
    policy: Policy,
}

impl Job for OnDevice {
    /// The device, the version change or why the update would be refused, and the flash.
    type Output = (String, Result<VersionChange, String>, Option<OnFlash>);

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<Self::Output> {
        let image = UfiImage::parse(self.map.as_slice()).map_err(|e| image_error("the image changed", &e))?;
        let answer = match plan_on(session, &image, self.policy) {
            Ok(plan) => Ok(plan.version_change),
            Err(e) if matches!(e.kind(), ErrorKind::Refused | ErrorKind::NoDevice) => Err(e.message),
            Err(e) => return Err(e),
        };
        let on_flash = flash::read_flash(&mut session.mbox).ok();
        Ok((session.device.describe(), answer, on_flash))
    }
}

impl Report for VerifyJson {
    fn text(&self) -> String {
        let mut out = String::new();
        let file = self.file.display().to_string();
        let version = self.image_version.as_deref().map(printable).unwrap_or_default();
        match (&self.device, self.ok) {
            (None, true) => {
                let _ = writeln!(out, "{}: flashable (firmware {version})", printable(&file));
            }
            (Some(d), true) => {
                let _ = writeln!(out, "{}: flashable on {d} (firmware {version})", printable(&file));
            }
            (Some(d), false) if self.flashable => {
                let _ = writeln!(out, "{}: a valid image, but NOT flashable on {d}", printable(&file));
            }
            (_, false) => {
                let _ = writeln!(out, "{}: NOT flashable", printable(&file));
            }
        }
        for r in &self.reasons {
            let _ = writeln!(out, "  {}", printable(r));
        }
        for w in &self.warnings {
            let _ = writeln!(out, "  warning: {}", printable(w));
        }
        out
    }

    fn exit_code(&self) -> u8 {
        if self.ok { 0 } else { ErrorKind::Refused.exit_code() }
    }
}
