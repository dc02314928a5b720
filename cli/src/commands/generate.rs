//! `ocetool completions <shell>` and `ocetool manpage --out-dir DIR`: the shell completions and the
//! man pages the Debian package installs, generated from the one command-line definition
//! (clap_complete, clap_mangen), so they never drift from `--help`.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use serde::Serialize;

use crate::args::Cli;
use crate::error::{CliError, CliResult, ErrorCode, io_code};
use crate::output::Report;

/// Man page section: ocetool is a system administration tool (man-pages(7): section 8).
const SECTION: &str = "8";

/// Writes the completion script for `shell` to stdout. The script is made in memory first:
/// clap_complete panics on a failed write, and a closed stdout (`| head`) is no reason to.
pub fn completions(shell: clap_complete::Shell) {
    use std::io::Write;
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "ocetool", &mut script);
    let _ = std::io::stdout().lock().write_all(&script);
}

/// What `manpage` wrote.
#[derive(Debug, Serialize)]
pub struct ManpageReport {
    files: Vec<PathBuf>,
}

/// Writes `ocetool.8` and one page per subcommand (`ocetool-fw-update.8`, ...) into `dir`.
pub fn manpages(dir: &Path) -> CliResult<ManpageReport> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::new(io_code(&e), format!("cannot create {}: {e}", dir.display())))?;
    let mut command = Cli::command().disable_help_subcommand(true);
    // Building names every subcommand for its page: `ocetool-fw-update`.
    command.build();
    let mut files = Vec::new();
    write_pages(dir, command, &mut files)?;
    Ok(ManpageReport { files })
}

fn write_pages(dir: &Path, command: clap::Command, files: &mut Vec<PathBuf>) -> CliResult<()> {
    for sub in command.get_subcommands().filter(|c| !c.is_hide_set()).cloned() {
        write_pages(dir, sub, files)?;
    }
    let man = clap_mangen::Man::new(command).section(SECTION);
    let path = man
        .generate_to(dir)
        .map_err(|e| CliError::new(ErrorCode::IoError, format!("cannot write {}: {e}", man.get_filename())))?;
    files.push(path);
    Ok(())
}

impl Report for ManpageReport {
    fn text(&self) -> String {
        self.files.iter().map(|f| format!("wrote {}\n", f.display())).collect()
    }
}
