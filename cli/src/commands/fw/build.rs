//! `ocetool fw build`: a synthetic Skyhawk image, valid by every check ocetool and the emulator
//! make, for tests and for rehearsing `fw update` on the emulator. No real image is public, so this
//! is also how the emulator's factory flash is made.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use oce_firmware::build::{ImageBuilder, Layout};
use oce_firmware::ufi::UfiImage;
use serde::Serialize;

use crate::args::LayoutArg;
use crate::error::{CliError, CliResult, ErrorCode, io_code};
use crate::output::Report;

/// What `fw build` writes and prints.
#[derive(Debug, Serialize)]
pub struct BuildJson {
    file: PathBuf,
    version: String,
    bytes: usize,
    asic_type_rev: u8,
    sections: Vec<BuiltSection>,
}

/// One section of the built image.
#[derive(Debug, Serialize)]
struct BuiltSection {
    #[serde(rename = "type")]
    image_type: u32,
    name: &'static str,
    offset: u32,
    size: u32,
}

/// Builds the image and writes it to `output` atomically (a temporary file renamed into place).
pub fn run(version: &str, output: &Path, layout: LayoutArg, asic_type_rev: u8) -> CliResult<BuildJson> {
    let layout = match layout {
        LayoutArg::Small => Layout::small(),
        LayoutArg::Full => Layout::full(),
    };
    let bytes = ImageBuilder::new(version)
        .layout(layout)
        .asic_type_rev(asic_type_rev)
        .build()
        .map_err(|e| CliError::from_error(ErrorCode::BadArgument, "cannot build the image", &e))?;
    let image = UfiImage::parse(&bytes)
        .map_err(|e| CliError::from_error(ErrorCode::InternalError, "the built image does not parse", &e))?;
    let sections = image
        .sections()
        .map(|s| BuiltSection {
            image_type: s.entry.image_type.raw(),
            name: s.entry.image_type.name(),
            offset: s.entry.offset,
            size: s.entry.pad_size,
        })
        .collect();
    write_atomically(output, &bytes)?;
    Ok(BuildJson {
        file: output.to_path_buf(),
        version: version.to_owned(),
        bytes: bytes.len(),
        asic_type_rev,
        sections,
    })
}

fn write_atomically(path: &Path, bytes: &[u8]) -> CliResult<()> {
    let fail = |e: std::io::Error| CliError::new(io_code(&e), format!("cannot write {}: {e}", path.display()));
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| CliError::new(ErrorCode::UnusableFile, format!("{} is not a file name", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp-{}", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(fail)
}

impl Report for BuildJson {
    fn text(&self) -> String {
        let mut out =
            format!("Wrote {} ({} bytes): Skyhawk image version {}\n", self.file.display(), self.bytes, self.version);
        for s in &self.sections {
            out.push_str(&format!(
                "  {:02x}  {:<26} offset {:#10x}  {} bytes\n",
                s.image_type, s.name, s.offset, s.size
            ));
        }
        out
    }
}
