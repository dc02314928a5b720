use clap::CommandFactory;

use super::*;

fn argv(line: &str) -> Vec<OsString> {
    std::iter::once("ocetool").chain(line.split_whitespace()).map(OsString::from).collect()
}

/// Command lines of every shape: options before and after the subcommand, values joined and
/// apart, nested subcommands.
const LINES: [&str; 14] = [
    "query",
    "--device emu:/tmp/x --json query",
    "-d emu -vv query --json",
    "-demu query -q",
    "--wait=2 -y reset --force",
    "--backend sysfs --log-file /tmp/l set-profile roce --dry-run",
    "fw inspect image.ufi",
    "--json fw verify image.ufi --allow-downgrade --device 03:00.0",
    "fw --json update image.ufi --yes --dry-run",
    "emulator fault set gone slow=1:167:500",
    "-d emu emulator --json fault clear --all",
    "emulator serve --socket /tmp/s",
    "raw --subsystem 1 --opcode 35 --payload 00",
    "--sysfs-root /tmp/sys --proc-root /tmp/proc list --all",
];

#[test]
fn finds_the_subcommand_path_past_options_and_their_values() {
    let root = Cli::root();
    for (line, want) in [
        ("query", vec!["query"]),
        ("--device emu query", vec!["query"]),
        ("-d emu query", vec!["query"]),
        ("-demu query", vec!["query"]),
        ("-vd emu query", vec!["query"]),
        ("--device=emu --wait 3 --backend vfio fw inspect f", vec!["fw", "inspect", "f"]),
        ("--log-file f -vv emulator fault set gone x", vec!["emulator", "fault", "set"]),
    ] {
        assert_eq!(invoked(&root, &argv(line)), Invoked::Path(want), "{line}");
    }
    for line in ["", "--help", "-h", "query --help", "-vh query", "--json", "help query", "-- query"] {
        let want = if line == "help query" { Invoked::Path(vec!["help", "query"]) } else { Invoked::Other };
        assert_eq!(invoked(&root, &argv(line)), want, "{line:?}");
    }
    assert_eq!(invoked(&root, &argv("--version")), Invoked::Version);
    assert_eq!(invoked(&root, &argv("-V --json")), Invoked::Version);
}

#[test]
fn only_the_invoked_path_is_built() {
    let top =
        |line: &str| command_for(&argv(line)).get_subcommands().map(|s| s.get_name().to_owned()).collect::<Vec<_>>();
    assert_eq!(top("--json query"), ["query"]);
    assert_eq!(top("--version"), Vec::<String>::new());
    let fw = command_for(&argv("fw inspect f"));
    let fw = fw.find_subcommand("fw").unwrap();
    assert_eq!(fw.get_subcommands().map(|s| s.get_name()).collect::<Vec<_>>(), ["inspect"]);
    // No subcommand, help, an unknown one, a group alone: the whole tree.
    let all = Cli::command().get_subcommands().count();
    for line in ["", "--help", "help fw", "quey", "fw", "fw bogus", "emulator fault"] {
        assert_eq!(top(line).len(), all, "{line:?}");
    }
}

#[test]
fn the_invoked_path_parses_as_the_whole_tree_does() {
    for line in LINES {
        let pruned = parse(&argv(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
        let mut whole = whole(Cli::root(), Copies::Hidden);
        let matches = whole.try_get_matches_from_mut(argv(line)).unwrap();
        let derived = Cli::from_arg_matches(&matches).unwrap();
        assert_eq!(format!("{pruned:?}"), format!("{derived:?}"), "{line}");
        // And as the derived definition (every option shown everywhere) does.
        let full = <Cli as clap::Parser>::try_parse_from(argv(line)).unwrap();
        assert_eq!(format!("{pruned:?}"), format!("{full:?}"), "{line}");
    }
}

#[test]
fn errors_and_help_are_the_whole_tree_s() {
    for line in ["query --bogus", "fw inspect", "emulator fault set", "set-profile", "query --help", "fw update -h"] {
        let pruned = parse(&argv(line)).unwrap_err();
        let whole = whole(Cli::root(), Copies::Hidden).try_get_matches_from(argv(line)).unwrap_err();
        assert_eq!(pruned.kind(), whole.kind(), "{line}");
        assert_eq!(pruned.to_string(), whole.to_string(), "{line}");
    }
}

#[test]
fn subcommand_help_points_to_the_global_options_listed_once_at_the_top() {
    let help = |line: &str| parse(&argv(line)).unwrap_err().to_string();
    let top = help("--help");
    assert!(top.contains("Global options:") && top.contains("--post-timeout <SECS>"), "{top}");
    for line in ["query --help", "fw inspect --help", "emulator fault set -h", "set-profile --help"] {
        let sub = help(line);
        assert!(!sub.contains("--post-timeout <SECS>") && !sub.contains("Global options:"), "{line}: {sub}");
        assert!(sub.contains("see `ocetool --help`"), "{line}: {sub}");
    }
    // The pointer names every global option the top-level help shows.
    let root = Cli::root();
    for arg in root.get_arguments().filter(|a| !a.is_hide_set()) {
        let long = format!("--{}", arg.get_long().unwrap());
        assert!(help::SUBCOMMAND_TEMPLATE.contains(&long), "{long} missing from the pointer");
    }
}

#[test]
fn groups_are_as_derived() {
    let mut derived = Cli::command();
    derived.build();
    let mut found = Vec::new();
    fn walk(cmd: &clap::Command, path: &mut Vec<String>, found: &mut Vec<Vec<String>>) {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            path.push(sub.get_name().to_owned());
            if sub.has_subcommands() {
                found.push(path.clone());
                walk(sub, path, found);
            }
            path.pop();
        }
    }
    walk(&derived, &mut Vec::new(), &mut found);
    let listed: Vec<Vec<String>> = GROUPS.iter().map(|(p, _)| p.iter().map(|s| (*s).to_owned()).collect()).collect();
    assert_eq!(found, listed, "every command with subcommands is in GROUPS");
    for (path, children) in GROUPS {
        let mut group = &derived;
        for name in path {
            group = group.find_subcommand(name).unwrap();
        }
        assert!(group.is_subcommand_required_set() && group.is_arg_required_else_help_set(), "{path:?}");
        let globals: Vec<_> = Cli::root().get_arguments().map(|a| a.get_id().clone()).collect();
        let own: Vec<_> =
            group.get_arguments().filter(|a| !globals.contains(a.get_id()) && a.get_id() != "help").collect();
        assert!(own.is_empty(), "{path:?} has arguments of its own: {own:?}");
        let stubs = children(clap::Command::new("x"));
        let names = |c: &clap::Command| c.get_subcommands().map(|s| s.get_name().to_owned()).collect::<Vec<_>>();
        let mut derived_names = names(group);
        derived_names.retain(|n| n != "help");
        assert_eq!(names(&stubs), derived_names, "{path:?}");
    }
}

#[test]
fn a_global_option_counts_at_the_deepest_level_that_gives_it() {
    let cli = parse(&argv("--wait 7 --json -d emu:/a fw --device emu:/b inspect f --wait 9")).unwrap();
    assert_eq!(cli.global.device.as_deref(), Some("emu:/b"));
    assert_eq!(cli.global.wait, 9.0);
    assert!(cli.global.json);
    let cli = parse(&argv("query")).unwrap();
    assert_eq!((cli.global.wait, cli.global.post_timeout, cli.global.verbose, cli.global.json), (3.0, 60.0, 0, false));
    assert_eq!(cli.global.sysfs_root, std::path::Path::new("/sys"));
    assert_eq!(parse(&argv("-v query -vv")).unwrap().global.verbose, 2);
}

#[test]
fn quiet_and_verbose_conflict_wherever_they_are_given() {
    for line in ["-q -v query", "-q query -v", "query -v --quiet", "emulator -v fault --quiet list"] {
        let e = parse(&argv(line)).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{line}: {e}");
    }
    assert!(parse(&argv("query -q")).unwrap().global.quiet);
}

#[test]
fn the_fake_roots_of_tests_go_before_the_subcommand_only() {
    assert!(parse(&argv("--sysfs-root /x list")).is_ok());
    let e = parse(&argv("list --sysfs-root /x")).unwrap_err();
    assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument);
}
