//! The ends of the `--help` of the commands that change the adapter or that scripts run most:
//! one or two examples, and the exit codes that command can give (the README's "Exit codes"
//! table, narrowed to it). `ocetool --help` ends with the whole table (`args::AFTER_HELP`).

/// The help of every subcommand: its own options, then where the global options are described
/// (they are accepted before or after the subcommand, and hidden from its help), then its
/// `after_help` (examples and exit codes, where it has them).
pub const SUBCOMMAND_TEMPLATE: &str = "\
{before-help}{about-with-newline}
{usage-heading} {usage}

{all-args}

Global options (before or after the subcommand): --device, --json, --quiet, --yes, --unbind,
--backend, --wait, --post-timeout, --command-timeout, --verbose, --log-file; see `ocetool --help`.\
{after-help}";

/// `ocetool query --help`.
pub const QUERY: &str = "\
Examples:
  ocetool --device 03:00.0 query
  ocetool --device 03:00.0 query --json     one JSON document (\"schema\": \"ocetool/1\")
  ocetool query --all --json                every adapter, each with its versions or its error

While `ocetool emulator serve` holds an emulated adapter, query asks the server (\"source\":
\"server\"): the link, its speed and, on a cable (--wire), the peer's MAC; null where only the
mailbox answers, which the VM's driver owns.

Exit codes: 0 reported; 1 the adapter did not answer (with --all: one of them did not, the
report lists every adapter either way); 3 no such or unsupported device; 5 busy (another
ocetool).";

/// `ocetool set-profile --help`.
pub const SET_PROFILE: &str = "\
Examples:
  ocetool --device 03:00.0 set-profile roce --dry-run          would it change anything?
  ocetool --device 03:00.0 --unbind --yes set-profile roce     then `reset` (or reboot) to run it

Exit codes: 0 set, or already the next-boot profile; 1 the firmware refused; 2 unknown profile;
3 no such or unsupported device (or a virtual function); 4 refused (no --yes without a terminal,
a driver bound without --unbind); 5 busy; 130/143 stopped (nothing changed).";

/// `ocetool reset --help`.
pub const RESET: &str = "\
Examples:
  ocetool --device 03:00.0 reset --dry-run        what a reset would activate
  ocetool --device 03:00.0 --unbind --yes reset

Before the reset the flash is checked read-only: when neither boot section (0xA0, 0xB0) of the
directory on flash passes its CRC, the adapter would fail POST, and the reset is refused; rerun
the interrupted `fw update` with its image (the firmware still runs), or pass --force.

Exit codes: 0 reset and ready; 1 POST failed again or the adapter left the bus (power-cycle it);
3 no such or unsupported device; 4 refused (no --yes without a terminal, a driver bound without
--unbind, another function of the card still on a host driver, a flash that would not boot
without --force); 5 busy; 130/143 stopped.";

/// `ocetool fw update --help`.
pub const FW_UPDATE: &str = "\
Examples:
  ocetool --device 03:00.0 fw update oc14-11.4.1231.6.ufi --dry-run     which sections, and why
  ocetool --device 03:00.0 --unbind --yes fw update oc14-11.4.1231.6.ufi

The sections are written in an order that keeps a bootable firmware (old or new) on flash after
every write; an image for which no such order exists (or an adapter whose flash directory cannot
be read) is refused unless --force. A stop between the chunks of a section abandons it before
its commit; running the update again finishes it.

Exit codes: 0 flashed, or nothing to write; 1 the flash failed; 2 a missing or unreadable file
or one that is not a regular file; 3 no such or unsupported device; 4 refused (not flashable,
not for this adapter, a downgrade without --allow-downgrade, no write order that keeps a
bootable copy without --force, no --yes without a terminal, a driver bound without --unbind);
5 busy; 130/143 stopped (a command in flight is finished first).";

/// `ocetool fw verify --help`.
pub const FW_VERIFY: &str = "\
Examples:
  ocetool fw verify oc14-11.4.1231.6.ufi                      a flashable image?
  ocetool --device 03:00.0 fw verify oc14-11.4.1231.6.ufi     and would `fw update` accept it there?

With a device it also reports whether the adapter's flash boots now (flash_bootable).

Exit codes: 0 flashable (and accepted by the device); 4 not, with the reasons; 2 a missing or
unreadable file or one that is not a regular file; 3 no such or unsupported device; 5 busy.";

/// `ocetool raw --help`.
pub const RAW: &str = "\
Examples:
  ocetool --device 03:00.0 raw --subsystem 1 --opcode 35     GET_FW_VERSION (a read-only query)
  ocetool --device 03:00.0 --json raw --subsystem 1 --opcode 167

Exit codes: 0 sent (the statuses are in the output, even a failure's); 1 the adapter did not
answer; 2 bad hex or a bad length; 3 no such or unsupported device; 4 refused (a command that is
not a known read-only query, without --yes and without a terminal: nothing sent); 5 busy.";

/// `ocetool doctor --help`.
pub const DOCTOR: &str = "\
Examples:
  ocetool doctor                             the host: IOMMU, vfio-pci, lockdown, drivers
  ocetool --device 03:00.0 doctor --json     and that adapter: pending changes, RoCE, PFC

Exit codes: 0 no check failed (warnings allowed); 1 a check failed; the report is printed
either way.";

/// `ocetool apply --help`.
pub const APPLY: &str = "\
Examples:
  ocetool apply --dry-run                    what /etc/ocetool/ocetool.toml would change
  ocetool --device 03:00.0 apply --config ./ocetool.toml --json
  ocetool apply --firmware-budget 0          all but a firmware flash, which is deferred and reported

Exit codes: 0 every adapter as configured (changed or not); 2 a bad, missing or unreadable
configuration (a bad one names the file, line and key); 4 a configuration or image that anyone
but root (or you) could change, nothing touched; else the first failed adapter's code (1 failed,
2 image missing, 3 no such device, 4 refused, 5 busy), the others still worked on; 130/143
stopped.";

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::args::Cli;

    const ALL: [(&[&str], &str); 8] = [
        (&["query"], QUERY),
        (&["set-profile"], SET_PROFILE),
        (&["reset"], RESET),
        (&["fw", "update"], FW_UPDATE),
        (&["fw", "verify"], FW_VERIFY),
        (&["raw"], RAW),
        (&["doctor"], DOCTOR),
        (&["apply"], APPLY),
    ];

    /// The command of each example line: what comes before the two-space gap of its comment.
    fn examples(text: &str) -> Vec<Vec<&str>> {
        text.lines()
            .filter_map(|l| l.strip_prefix("  ocetool "))
            .map(|l| l.split("  ").next().unwrap_or_default().split_whitespace().collect())
            .collect()
    }

    #[test]
    fn every_example_parses_as_the_command_it_documents() {
        for (path, text) in ALL {
            let lines = examples(text);
            assert!(!lines.is_empty(), "{path:?}: no example");
            for args in lines {
                let cli = Cli::try_parse_from(std::iter::once("ocetool").chain(args.iter().copied()));
                assert!(cli.is_ok(), "{path:?}: `ocetool {}` does not parse: {:?}", args.join(" "), cli.err());
                let at = args.iter().position(|a| *a == path[0]);
                assert!(at.is_some_and(|i| args[i..].starts_with(path)), "{path:?}: {args:?}");
            }
        }
    }

    #[test]
    fn exit_codes_are_the_readme_s() {
        for (path, text) in ALL {
            let codes = text.split_once("\nExit codes: ").map(|(_, c)| c).unwrap_or_default();
            assert!(codes.starts_with("0 "), "{path:?}: {text}");
            for number in codes.split(|c: char| !c.is_ascii_digit()).filter(|n| !n.is_empty()) {
                assert!(["0", "1", "2", "3", "4", "5", "130", "143"].contains(&number), "{path:?}: {number}");
            }
        }
    }

    #[test]
    fn each_subcommand_ends_its_help_with_its_text() {
        let mut cli = Cli::command();
        // The subcommands' trees are deferred until built.
        cli.build();
        for (path, text) in ALL {
            let mut cmd = &mut cli;
            for name in path {
                cmd = cmd.find_subcommand_mut(name).unwrap();
            }
            assert_eq!(cmd.get_after_help().map(ToString::to_string).as_deref(), Some(text), "{path:?}");
        }
    }
}
