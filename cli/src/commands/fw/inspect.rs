//! `ocetool fw inspect FILE`: everything an image says about itself, checked, with no adapter.

use std::fmt::Write as _;
use std::path::Path;

use oce_firmware::inspect::{InspectReport, inspect_file};
use oce_pci::ids::pair_string;

use crate::error::{CliResult, image_error};
use crate::output::{Report, printable};

/// The `fw inspect` document is the library's report as is.
#[derive(Debug, serde::Serialize)]
#[serde(transparent)]
pub struct InspectJson(pub InspectReport);

/// Inspects `file`. A file that cannot be read is an error (exit 1); a file that reads but is
/// broken is a report whose `problems[]` say why and whose `flashable` is false (exit 0: the
/// inspection itself succeeded).
pub fn run(file: &Path) -> CliResult<InspectJson> {
    inspect_file(file).map(InspectJson).map_err(|e| image_error("cannot read the image", &e))
}

impl Report for InspectJson {
    fn text(&self) -> String {
        let r = &self.0;
        let mut out = String::new();
        let opt = |v: &Option<String>| v.as_deref().map_or_else(|| "-".into(), |v| printable(v).into_owned());
        let _ =
            writeln!(out, "File           {} bytes, {}", r.file_len, r.header_format.unwrap_or("unrecognised header"));
        let _ = writeln!(out, "Chip           {}", r.chip.map_or("unknown", |c| c.name()));
        let _ = writeln!(out, "Build          {}", opt(&r.build));
        let _ = writeln!(out, "Version        {}", opt(&r.version));
        if r.firmware_version.is_some() && r.firmware_version != r.version {
            let _ = writeln!(out, "Firmware       {} (the version the adapter will report)", opt(&r.firmware_version));
        }
        let _ = writeln!(out, "ASIC type rev  {}", r.asic_type_rev.map_or_else(|| "-".into(), |v| format!("{v:#04x}")));
        if let Some(d) = &r.directory {
            let cookie = if d.cookie_standard { "standard cookie" } else { "non-standard cookie" };
            let _ =
                writeln!(out, "Directory      at payload offset {:#x}, {} entries, {cookie}", d.offset, d.num_images);
        }
        let _ = writeln!(out, "Flashable      {}", if r.flashable { "yes" } else { "no" });
        if !r.sections.is_empty() {
            let _ = writeln!(
                out,
                "\n  {:<4} {:<26} {:>6} {:>10} {:>10}  {:<14} CRC model",
                "TYPE", "SECTION", "OPTYPE", "OFFSET", "SIZE", "VERSION"
            );
            for s in &r.sections {
                let optype = s.optype.map_or_else(|| "skip".into(), |o| o.to_string());
                let crc = match s.crc_ok {
                    Some(true) => "ok",
                    Some(false) => "MISMATCH",
                    None => "-",
                };
                let _ = writeln!(
                    out,
                    "  {:<4} {:<26} {:>6} {:>#10x} {:>10}  {:<14} {crc}",
                    format!("{:02x}", s.image_type),
                    s.name,
                    optype,
                    s.offset,
                    s.size,
                    printable(&s.version)
                );
                if let Some(rom) = &s.option_rom {
                    for img in &rom.images {
                        let pe = img
                            .pe
                            .as_ref()
                            .map(|pe| {
                                format!(
                                    ", PE {} subsystem {}",
                                    pe.machine_name,
                                    pe.subsystem.map_or("-".into(), |v| v.to_string())
                                )
                            })
                            .unwrap_or_default();
                        let _ = writeln!(
                            out,
                            "       option ROM image at {:#x}: {} {} rev {:#x}, {} bytes{pe}",
                            img.offset,
                            img.code_type_name,
                            pair_string(img.vendor_id, img.device_id),
                            img.code_revision,
                            img.length
                        );
                    }
                }
            }
        }
        if !r.problems.is_empty() {
            let _ = writeln!(out, "\nProblems");
            for p in &r.problems {
                let _ = writeln!(out, "  {:<7} {}", format!("{:?}", p.severity).to_lowercase(), printable(&p.message));
            }
        }
        out
    }
}
