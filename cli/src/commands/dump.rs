//! `ocetool dump -o FILE`: the firmware's diagnostic dump (MANAGE_FAT, what `ethtool -w` returns
//! on be2net), written atomically: a temporary file beside FILE, fsync, rename over FILE, fsync
//! of the directory. A failed or interrupted dump leaves FILE as it was.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use oce_mailbox::adapter::read_fat_dump;
use oce_pci::PciFunction;
use serde::Serialize;

use crate::error::{CliError, CliResult, ErrorCode, dump_error, io_code};
use crate::output::Report;
use crate::session::{Job, Session};

/// What support asks for besides the dump.
const SUPPORT_HINT: &str = "send this file to your adapter support, together with the output of \
                            `ocetool query --json` and `ocetool doctor --json`";

/// The `dump` job.
#[derive(Debug)]
pub struct Dump {
    /// Where the dump goes.
    pub output: PathBuf,
}

/// `ocetool dump --json`.
#[derive(Debug, Serialize)]
pub struct DumpJson {
    pub device: String,
    /// The file written.
    pub file: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// What to do with it.
    pub hint: &'static str,
}

impl Dump {
    /// Refuses an output path whose directory does not exist before the adapter is touched.
    pub fn check(self) -> CliResult<Self> {
        let dir = parent_dir(&self.output);
        if !dir.is_dir() {
            return Err(CliError::new(
                ErrorCode::UnusableFile,
                format!("cannot write {}: {} is not a directory", self.output.display(), dir.display()),
            ));
        }
        if self.output.is_dir() {
            return Err(CliError::new(
                ErrorCode::UnusableFile,
                format!("cannot write {}: it is a directory; name a file", self.output.display()),
            ));
        }
        Ok(self)
    }
}

impl Job for Dump {
    type Output = DumpJson;

    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<DumpJson> {
        let dump = read_fat_dump(&mut session.mbox, |_, _| ()).map_err(|e| dump_error(&e))?;
        write_atomically(&self.output, &dump).map_err(|e| {
            CliError::new(io_code(&e), format!("cannot write the dump to {}: {e}", self.output.display()))
                .hint("nothing was written there; choose another file")
        })?;
        Ok(DumpJson {
            device: session.device.describe(),
            file: self.output,
            bytes: dump.len() as u64,
            hint: SUPPORT_HINT,
        })
    }
}

impl Report for DumpJson {
    fn text(&self) -> String {
        format!(
            "Wrote the firmware's diagnostic dump of {} ({} bytes) to {}.\nNext: {SUPPORT_HINT}.\n",
            self.device,
            self.bytes,
            self.file.display()
        )
    }
}

/// The directory `path` lives in.
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `bytes` to `path` through a new temporary file in the same directory; the temporary
/// file is removed on any failure.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent_dir(path);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.ocetool-{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    File::open(&dir)?.sync_all()
}
