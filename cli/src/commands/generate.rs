//! `ocetool completions <shell>` and `ocetool manpage --out-dir DIR`: the shell completions and the
//! man pages the Debian package installs, generated from the one command-line definition
//! (clap_complete, clap_mangen), so they never drift from `--help`.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use serde::Serialize;

use super::man_pages;
use crate::args::Cli;
use crate::error::{CliError, CliResult, ErrorCode, io_code};
use crate::output::Report;

/// Man page section: ocetool is a system administration tool (man-pages(7): section 8).
const SECTION: &str = "8";

/// Writes the completion script for `shell` (`crate::completion`) to stdout. The script is made
/// in memory first: clap_complete panics on a failed write, and a closed stdout (`| head`) is no
/// reason to.
pub fn completions(shell: clap_complete::Shell) {
    use std::io::Write;
    let script = crate::completion::script(shell);
    let _ = std::io::stdout().lock().write_all(&script);
}

/// What `manpage` wrote.
#[derive(Debug, Serialize)]
pub struct ManpageReport {
    files: Vec<PathBuf>,
}

/// Writes `ocetool.8`, one page per subcommand (`ocetool-fw-update.8`, ...; `ocetool-apply.8`
/// also documents the boot hook and the unit) and `ocetool.toml.5` into `dir`.
pub fn manpages(dir: &Path) -> CliResult<ManpageReport> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::new(io_code(&e), format!("cannot create {}: {e}", dir.display())))?;
    let mut command = Cli::command().disable_help_subcommand(true);
    // Building names every subcommand for its page: `ocetool-fw-update`.
    command.build();
    let mut files = Vec::new();
    write_pages(dir, command, &mut files)?;
    let config = dir.join("ocetool.toml.5");
    write(&config, man_pages::config_page(env!("CARGO_PKG_VERSION")).as_bytes())?;
    files.push(config);
    Ok(ManpageReport { files })
}

fn write(path: &Path, bytes: &[u8]) -> CliResult<()> {
    std::fs::write(path, bytes).map_err(|e| CliError::new(io_code(&e), format!("cannot write {}: {e}", path.display())))
}

fn write_pages(dir: &Path, command: clap::Command, files: &mut Vec<PathBuf>) -> CliResult<()> {
    for sub in command.get_subcommands().filter(|c| !c.is_hide_set()).cloned() {
        write_pages(dir, sub, files)?;
    }
    let name = command.get_display_name().unwrap_or(command.get_name()).to_owned();
    let after = command.get_after_long_help().or(command.get_after_help()).map(ToString::to_string);
    // clap_mangen would put the help's ending in a section of its own ("EXTRA"): it goes into the
    // standard sections instead.
    let page = clap_mangen::Man::new(command.after_help(None::<&str>).after_long_help(None::<&str>)).section(SECTION);
    let path = dir.join(page.get_filename());
    let mut roff = Vec::new();
    page.render(&mut roff).map_err(|e| CliError::new(ErrorCode::IoError, format!("cannot render {name}: {e}")))?;
    let mut roff = String::from_utf8_lossy(&roff).into_owned();
    let version_at = roff.find(".SH VERSION").unwrap_or(roff.len());
    roff.insert_str(version_at, &standard_sections(&name, after.as_deref()));
    write(&path, roff.as_bytes())?;
    files.push(path);
    Ok(())
}

/// EXIT STATUS, ENVIRONMENT, FILES, NOTES, EXAMPLES and SEE ALSO of the page of command `name`
/// (man-pages(7) order), from its `--help` ending and, for the top page, the error codes.
fn standard_sections(name: &str, after_help: Option<&str>) -> String {
    let (status, examples, notes) = after_help.map(man_pages::from_after_help).unwrap_or_default();
    let mut out = String::new();
    let top = name == "ocetool";
    if name == "ocetool-apply" {
        out.push_str(&man_pages::apply_boot());
    }
    if top {
        out.push_str(&man_pages::exit_status());
    } else {
        out.push_str(&status.unwrap_or_else(|| {
            man_pages::section("EXIT STATUS", &["0 on success; otherwise as ocetool(8) lists, with the error code."])
        }));
    }
    if top {
        out.push_str(&man_pages::tagged("ENVIRONMENT", man_pages::ENVIRONMENT));
        out.push_str(&man_pages::tagged("FILES", man_pages::FILES));
    }
    if name == "ocetool-apply" {
        out.push_str(&man_pages::apply_environment_and_files());
    }
    out.push_str(&notes.unwrap_or_default());
    out.push_str(&examples.unwrap_or_default());
    let see_also = if top { "ocetool.toml(5), ocetool-apply(8)" } else { "ocetool(8), ocetool.toml(5)" };
    out.push_str(&man_pages::section("SEE ALSO", &[see_also]));
    out
}

impl Report for ManpageReport {
    fn text(&self) -> String {
        self.files.iter().map(|f| format!("wrote {}\n", f.display())).collect()
    }
}
