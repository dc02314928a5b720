//! The command line as a process parses it: only the subcommand it names is built.
//!
//! With clap's own global options every subcommand gets a copy of each (a dozen options × 30
//! subcommands, with their help texts), and each level's values are copied to every other after
//! parsing; building, merging and dropping all that was most of ocetool's start-up
//! (docs/performance.md). A process runs one subcommand, so it builds the top level and the
//! path to that subcommand only (`fw`, then `fw inspect`). Every other command line — `--help`,
//! `help SUBCOMMAND`, none, an unknown subcommand — gets the whole tree, so help, errors and
//! their suggestions are as before. The subcommands' own arguments are deferred
//! (`#[command(defer = true)]` in `args.rs`): clap adds them when the parser enters the
//! subcommand.
//!
//! The global options are defined on the top level ([`GlobalArgs`]), and every subcommand gets
//! plain copies of the visible ones: they parse before or after the subcommand name (`ocetool
//! query --json`), and [`global_args`] takes each from the deepest level that was given it on
//! the command line. A process's copies are hidden: a subcommand's help stays short and points
//! to `ocetool --help`, which lists them once. [`Cli::command`] shows them everywhere, for
//! completions and man pages.

use std::ffi::OsString;

use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches, Subcommand};

use crate::args::{Cli, Command, EmulatorAction, FaultAction, FwAction, GlobalArgs};
use crate::help;

/// Parses `argv` (program name first). Never inlined, so a profile (`bench/profile.sh`) can
/// tell the command line's cost (building the clap command and parsing) from the rest.
#[inline(never)]
pub fn parse(argv: &[OsString]) -> Result<Cli, clap::Error> {
    let mut command = command_for(argv);
    let mut matches = command.try_get_matches_from_mut(argv)?;
    Cli::from_arg_matches_mut(&mut matches)
}

/// The clap command that parses `argv`: the top level with the path to the subcommand `argv`
/// names, or with every subcommand when it names none (or one that does not exist).
pub fn command_for(argv: &[OsString]) -> clap::Command {
    let root = Cli::root();
    match invoked(&root, argv) {
        Invoked::Path(path) => match path_to(&root, &path) {
            Some(sub) => root.subcommand(sub),
            None => whole(root, Copies::Hidden),
        },
        // `ocetool --version` prints the version and needs no subcommand.
        Invoked::Version => root,
        Invoked::Other => whole(root, Copies::Hidden),
    }
}

/// How the subcommands' copies of the global options appear in their help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copies {
    /// Hidden, as a process parses: the help points to `ocetool --help`.
    Hidden,
    /// Shown: completions and man pages offer them after the subcommand too.
    Shown,
}

/// The top level with every subcommand, each with copies of the global options.
pub fn whole(root: clap::Command, copies: Copies) -> clap::Command {
    let globals = global_copies(&root, copies);
    let top = Command::augment_subcommands(clap::Command::new("ocetool"));
    let subs: Vec<clap::Command> =
        top.get_subcommands().map(|stub| expand(&[stub.get_name()], stub.clone(), &globals, copies, None)).collect();
    root.subcommands(subs)
}

/// A command that only groups subcommands: its path, and the derived builder of its
/// subcommands' stubs.
type Group = (&'static [&'static str], fn(clap::Command) -> clap::Command);

/// The groups. Each has no argument of its own and requires one of its subcommands (the
/// `#[command(subcommand)]` field of its variant in `args.rs`); `tests::groups_are_as_derived`
/// holds this table to the derived definition.
const GROUPS: [Group; 3] = [
    (&["fw"], FwAction::augment_subcommands),
    (&["emulator"], EmulatorAction::augment_subcommands),
    (&["emulator", "fault"], FaultAction::augment_subcommands),
];

/// `stub` (the subcommand at `path`, as its parent's derive made it) with the copies of the
/// global options and, hidden, the short help; a group gets its subcommands here, every one of
/// them, or with `only`, the one it names (and the rest of `only` below that one).
fn expand(
    path: &[&str],
    stub: clap::Command,
    globals: &[clap::Arg],
    copies: Copies,
    only: Option<&[&str]>,
) -> clap::Command {
    let mut command = stub.args(globals.iter().cloned());
    if copies == Copies::Hidden {
        command = command.help_template(help::SUBCOMMAND_TEMPLATE);
    }
    let Some((_, children)) = GROUPS.iter().find(|(p, _)| *p == path) else { return command };
    let stubs = children(clap::Command::new("group"));
    let subs: Vec<clap::Command> = stubs
        .get_subcommands()
        .filter(|s| only.is_none_or(|o| o.first() == Some(&s.get_name())))
        .map(|s| {
            let mut child = path.to_vec();
            child.push(s.get_name());
            expand(&child, s.clone(), globals, copies, only.map(|o| &o[1..]))
        })
        .collect();
    // The derive's deferred builder of a group adds exactly these subcommands and requires one;
    // they are added here instead (only the one invoked), so it is replaced by the identity.
    command.defer(|c| c).subcommands(subs).subcommand_required(true).arg_required_else_help(true)
}

/// The path `path` (top-level subcommand first) built alone, or `None` when a word of it names
/// no subcommand or it ends at a group (clap's help or error needs the whole tree). Words past
/// a leaf are its arguments.
fn path_to(root: &clap::Command, path: &[&str]) -> Option<clap::Command> {
    let top = Command::augment_subcommands(clap::Command::new("ocetool"));
    let stub = top.find_subcommand(path[0])?.clone();
    // The path as far as it goes through groups, then its leaf.
    let mut depth = 1;
    while depth < path.len() && GROUPS.iter().any(|(p, _)| *p == &path[..depth]) {
        depth += 1;
    }
    let path = &path[..depth];
    if GROUPS.iter().any(|(p, _)| *p == path) {
        // A group without its subcommand: clap's help or error lists them all.
        return None;
    }
    let command = expand(&path[..1], stub, &global_copies(root, Copies::Hidden), Copies::Hidden, Some(&path[1..]));
    // Every word of the path must have matched a subcommand.
    let mut at = &command;
    for name in &path[1..] {
        at = at.find_subcommand(name)?;
    }
    Some(command)
}

/// Copies of `root`'s visible options (its hidden ones, the fake trees of tests, stay on the
/// top level). Hidden copies need no help text, and no default or environment variable: the
/// top level's provide those ([`global_args`]).
fn global_copies(root: &clap::Command, copies: Copies) -> Vec<clap::Arg> {
    root.get_arguments()
        .filter(|a| !a.is_hide_set())
        .map(|a| match copies {
            Copies::Shown => a.clone(),
            Copies::Hidden => a.clone().hide(true).help(None).long_help(None).default_value(None).env(None),
        })
        .collect()
}

/// The global options from `matches` and its subcommands' matches: each from the deepest level
/// that was given it on the command line, else from the top level (its default, or its
/// environment variable).
pub fn global_args(matches: &ArgMatches) -> Result<GlobalArgs, clap::Error> {
    let mut levels = vec![matches];
    while let Some((_, sub)) = levels[levels.len() - 1].subcommand() {
        levels.push(sub);
    }
    let at = |id: &str| {
        let given = |m: &ArgMatches| m.ids().any(|i| i == id) && m.value_source(id) == Some(ValueSource::CommandLine);
        levels.iter().rev().copied().find(|m| given(m)).unwrap_or(matches)
    };
    let global = GlobalArgs {
        device: value(at("device"), "device")?,
        json: flag(at("json"), "json")?,
        quiet: flag(at("quiet"), "quiet")?,
        yes: flag(at("yes"), "yes")?,
        unbind: flag(at("unbind"), "unbind")?,
        backend: required(at("backend"), "backend")?,
        sysfs_root: required(matches, "sysfs_root")?,
        dev_root: required(matches, "dev_root")?,
        wait: required(at("wait"), "wait")?,
        post_timeout: required(at("post_timeout"), "post_timeout")?,
        command_timeout: required(at("command_timeout"), "command_timeout")?,
        verbose: required(at("verbose"), "verbose")?,
        log_file: value(at("log_file"), "log_file")?,
        proc_root: required(matches, "proc_root")?,
    };
    if global.quiet && global.verbose > 0 {
        // clap finds the conflict within one level; this is the one across levels.
        return Err(clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            "the argument '--quiet' cannot be used with '--verbose'\n",
        ));
    }
    Ok(global)
}

fn value<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Result<Option<T>, clap::Error> {
    m.try_get_one::<T>(id)
        .map(Option::<&T>::cloned)
        .map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{id}: {e}\n")))
}

fn required<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> Result<T, clap::Error> {
    value(m, id)?.ok_or_else(|| {
        clap::Error::raw(clap::error::ErrorKind::MissingRequiredArgument, format!("{id} has no value\n"))
    })
}

fn flag(m: &ArgMatches, id: &str) -> Result<bool, clap::Error> {
    Ok(value(m, id)?.unwrap_or(false))
}

/// What the command line asks for, as far as choosing the tree goes.
#[derive(Debug, PartialEq, Eq)]
enum Invoked<'a> {
    /// The words that are neither options nor options' values, up to three: the subcommand, and
    /// maybe a subcommand of it.
    Path(Vec<&'a str>),
    /// `--version` / `-V` and no subcommand or help flag.
    Version,
    /// Anything else: help, nothing, `--`, a word that is not UTF-8.
    Other,
}

/// The deepest a subcommand path goes (`emulator fault set`).
const MAX_DEPTH: usize = 3;

/// Finds the subcommand path in `argv`, skipping options and the values of the global options
/// that take one (the next word, unless written `--opt=value` or `-dVALUE`). Groups have no
/// options of their own, so their subcommand is found the same way.
fn invoked<'a>(root: &clap::Command, argv: &'a [OsString]) -> Invoked<'a> {
    let takes_value = |long: Option<&str>, short: Option<char>| {
        root.get_arguments().any(|a| {
            a.get_action().takes_values()
                && ((long.is_some() && a.get_long() == long) || (short.is_some() && a.get_short() == short))
        })
    };
    let mut version = false;
    let mut path = Vec::new();
    let mut words = argv.iter().skip(1);
    while let Some(word) = words.next() {
        let Some(word) = word.to_str() else { return Invoked::Other };
        if word == "--" || word == "--help" || word == "-h" {
            return Invoked::Other;
        }
        if let Some(long) = word.strip_prefix("--") {
            version |= long == "version";
            if !long.contains('=') && takes_value(Some(long), None) {
                words.next();
            }
        } else if let Some(shorts) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            for (at, c) in shorts.char_indices() {
                if c == 'h' {
                    return Invoked::Other;
                }
                version |= c == 'V';
                if takes_value(None, Some(c)) {
                    // The value is the rest of the word, or the next word.
                    if at + c.len_utf8() == shorts.len() {
                        words.next();
                    }
                    break;
                }
            }
        } else {
            path.push(word);
            if path.len() == MAX_DEPTH {
                break;
            }
        }
    }
    match (path.is_empty(), version) {
        (false, _) => Invoked::Path(path),
        (true, true) => Invoked::Version,
        (true, false) => Invoked::Other,
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
