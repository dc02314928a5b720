//! `ocetool`: the command-line front end. Parsing, device selection, output and exit codes live
//! here; everything that talks to the adapter lives in the libraries.
#![forbid(unsafe_code)]

mod args;
mod commands;
mod completion;
mod device;
mod error;
mod handoff;
mod help;
mod lock;
mod logging;
mod output;
mod parse;
mod reboot;
mod report;
mod session;
mod vpd;

use std::process::ExitCode;

use crate::args::{Cli, Command, FwAction};
use crate::error::{CliError, CliResult, ErrorCode, ErrorKind};
use crate::output::{ErasedReport, print_error, print_report};
use crate::session::run_job;

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match parse::parse(&argv) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&argv, &e),
    };
    if let Command::Completions { shell } = &cli.command {
        commands::generate::completions(*shell);
        return ExitCode::SUCCESS;
    }
    output::set_quiet(cli.global.quiet);
    logging::init(cli.global.verbose, cli.global.log_file.as_deref(), &argv);
    let code = match oce_pci::signals::install().map_err(|e| error::pci_error("", &e)).and_then(|()| run(&cli)) {
        Ok(report) => {
            print_report(report.as_ref(), cli.global.json);
            report.exit_code()
        }
        Err(err) => {
            print_error(&err, cli.global.json, cli.global.verbose);
            err.kind().exit_code()
        }
    };
    logging::finish(code);
    ExitCode::from(code)
}

/// Prints a parse error as every other error: one line (`ocetool: ...` on stderr, or the JSON
/// error document with `--json`), exit 2. Help and version are not errors: clap prints them.
fn usage_error(argv: &[std::ffi::OsString], e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind as K;
    if matches!(e.kind(), K::DisplayHelp | K::DisplayVersion | K::DisplayHelpOnMissingArgumentOrSubcommand) {
        let _ = e.print();
        return ExitCode::from(e.exit_code() as u8);
    }
    // clap's first paragraph says what is wrong (a required argument's name on its second
    // line); the usage and the pointer to --help that follow become one hint.
    let rendered = e.to_string();
    let detail = rendered.split("\n\n").next().unwrap_or_default().lines().map(str::trim).collect::<Vec<_>>().join(" ");
    let detail = detail.trim_start_matches("error: ");
    let message = if detail.is_empty() { e.kind().as_str().unwrap_or("bad arguments") } else { detail };
    let err = CliError::new(ErrorCode::BadArgument, message).hint("see `ocetool --help`");
    print_error(&err, argv.iter().any(|a| a == "--json"), 0);
    ExitCode::from(ErrorKind::Usage.exit_code())
}

fn boxed<T: ErasedReport + 'static>(r: T) -> Box<dyn ErasedReport> {
    Box::new(r)
}

fn run(cli: &Cli) -> CliResult<Box<dyn ErasedReport>> {
    let g = &cli.global;
    match &cli.command {
        Command::Query { all: false } => commands::query_kernel::run(g).map(boxed),
        Command::Query { all: true } => commands::query_all::run(g).map(boxed),
        Command::Profiles => run_job(g, commands::profiles::Profiles).map(boxed),
        Command::SetProfile(args) => {
            let job = commands::set_profile::SetProfile { target: args.target, dry_run: args.dry_run, yes: g.yes };
            let out = run_job(g, job)?;
            if !args.dry_run {
                reboot::record_selected(g, out.output.reset_required);
            }
            Ok(boxed(out))
        }
        Command::Reset { dry_run, force } => {
            let reset = commands::reset::Reset { dry_run: *dry_run, yes: g.yes };
            let out = run_job(g, commands::reset::ResetCommand { reset, force: *force })?;
            if !dry_run {
                reboot::record_selected(g, out.output.reset_required);
            }
            Ok(boxed(out))
        }
        Command::Doctor => commands::doctor::run(g).map(boxed),
        Command::Dcb => run_job(g, commands::dcb::Dcb).map(boxed),
        Command::Dump { output } => run_job(g, commands::dump::Dump { output: output.clone() }.check()?).map(boxed),
        Command::Port => commands::port::run(g).map(boxed),
        Command::Locate { on, .. } => run_job(g, commands::port::Locate { on: *on }).map(boxed),
        Command::Raw(args) => run_job(g, commands::raw::Raw::from_args(args, g.yes)?).map(boxed),
        Command::Emulator { action } => commands::emulator::run(g, action).map(boxed),
        Command::Fw { action } => match action {
            FwAction::Inspect { file } => commands::fw::inspect::run(file).map(boxed),
            FwAction::Verify { file, allow_downgrade } => {
                commands::fw::verify::run(g, file, *allow_downgrade).map(boxed)
            }
            FwAction::Update { file, dry_run, allow_downgrade, force } => {
                let policy = oce_firmware::flash::Policy { allow_downgrade: *allow_downgrade, force: *force };
                let job = commands::fw::update::FwUpdate::new(file, policy, *dry_run, g.yes, g.json || g.quiet)?;
                job.refuse_unparsable_early()?;
                let out = run_job(g, job)?;
                if !dry_run && out.output.changed {
                    reboot::record_selected(g, out.output.reset_required);
                }
                Ok(boxed(out))
            }
            FwAction::Build { version, output, layout, asic_type_rev } => {
                commands::fw::build::run(version, output, *layout, *asic_type_rev).map(boxed)
            }
        },
        Command::Apply { config, dry_run, firmware_budget } => {
            let budget = firmware_budget.map(std::time::Duration::from_secs);
            let out = commands::apply::run(g, config, *dry_run, budget)?;
            if !dry_run {
                for (device, reset_required) in out.read_back() {
                    reboot::record(reboot::on_emulator(g), device, reset_required);
                }
            }
            Ok(boxed(out))
        }
        Command::RestoreDrivers => commands::restore_drivers::run(g).map(boxed),
        Command::Manpage { out_dir } => commands::generate::manpages(out_dir).map(boxed),
        Command::Completions { .. } => unreachable!("handled before any device work"),
        Command::List { all } => commands::list::run(g, *all).map(boxed),
    }
}
