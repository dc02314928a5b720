//! The shell completion scripts (`ocetool completions SHELL`): clap_complete's, from the command
//! line as completions should see it. The hidden options of tests (`--sysfs-root`, `--dev-root`,
//! `--proc-root`) are left out; values are offered where ocetool knows them: `nic` and `roce`
//! for `set-profile`, the fault names for `emulator fault set|clear`, and for `--device` the
//! OneConnect functions in sysfs and `emu`, listed when the shell completes (bash, zsh and fish
//! call a function the script defines).

use clap::builder::PossibleValuesParser;
use oce_pci::ids::KNOWN_IDS;

use crate::args::Cli;
use crate::parse::{Copies, whole};

/// What clap_complete writes where the device list goes; each shell's script gets its function
/// in its place.
const DEVICES: &str = "__ocetool_devices__";

/// The completion script for `shell`.
pub fn script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut command = command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "ocetool", &mut script);
    let script = String::from_utf8_lossy(&script).into_owned();
    let script = match shell {
        clap_complete::Shell::Bash => {
            script.replace(&format!("\"{DEVICES}\""), "\"$(_ocetool_devices)\"") + &bash_devices()
        }
        clap_complete::Shell::Zsh => script.replace(&format!("({DEVICES})"), "_ocetool_devices") + &zsh_devices(),
        clap_complete::Shell::Fish => {
            script.replace(&format!("\"{DEVICES}\\t''\""), "\"(__ocetool_devices)\"") + &fish_devices() + &fish_values()
        }
        // Elvish and PowerShell offer `emu` only.
        _ => script.replace(DEVICES, "emu"),
    };
    script.into_bytes()
}

/// The whole command line without the hidden options, with the values to offer.
fn command() -> clap::Command {
    let root = Cli::root();
    let visible: Vec<clap::Arg> = root.get_arguments().filter(|a| !a.is_hide_set()).cloned().collect();
    let bare = clap::Command::new("ocetool").version(env!("CARGO_PKG_VERSION")).args(visible);
    let mut command = whole(bare, Copies::Shown);
    command.build();
    offer(command)
}

/// `command` and its subcommands with the values to offer.
fn offer(command: clap::Command) -> clap::Command {
    let values: &[(&str, &str, &[&str])] = &[
        ("set-profile", "target", &["nic", "roce"]),
        ("set", "specs", &oce_emulator::FAULT_NAMES),
        ("clear", "names", &oce_emulator::FAULT_NAMES),
    ];
    let has = |c: &clap::Command, id: &str| c.get_arguments().any(|a| a.get_id() == id);
    let mut command = command;
    if has(&command, "device") {
        command = command.mut_arg("device", |a| a.value_parser(PossibleValuesParser::new([DEVICES])));
    }
    for (name, id, offered) in values {
        if command.get_name() == *name && has(&command, id) {
            command = command.mut_arg(*id, |a| a.value_parser(PossibleValuesParser::new(offered.iter().copied())));
        }
    }
    let subs: Vec<String> = command.get_subcommands().map(|s| s.get_name().to_owned()).collect();
    for sub in subs {
        command = command.mut_subcommand(sub, offer);
    }
    command
}

/// `case` patterns (`0x10df:0x0720|...`) of every OneConnect function ID.
fn id_patterns() -> String {
    KNOWN_IDS.iter().map(|k| format!("0x{:04x}:0x{:04x}", k.vendor, k.device)).collect::<Vec<_>>().join("|")
}

/// The shell function that prints the devices: the OneConnect functions under the command
/// line's `--sysfs-root` (the sysfs tree that command would read; `/sys` unless a test says
/// otherwise), then `emu`. `words` expands to the command line's words.
fn devices_function(name: &str, words: &str) -> String {
    format!(
        r#"
# The devices `--device` takes: the OneConnect functions in sysfs (the command line's
# --sysfs-root, else /sys), then `emu` (the emulator).
{name}() {{
    local sys=/sys prev= w d vendor device
    for w in {words}; do
        case $prev in --sysfs-root) sys=$w ;; esac
        case $w in --sysfs-root=*) sys=${{w#--sysfs-root=}} ;; esac
        prev=$w
    done
    for d in "$sys"/bus/pci/devices/*; do
        [ -r "$d/vendor" ] && [ -r "$d/device" ] || continue
        read -r vendor <"$d/vendor" && read -r device <"$d/device" || continue
        case "$vendor:$device" in
            {ids}) printf '%s\n' "${{d##*/}}" ;;
        esac
    done
    printf '%s\n' emu
}}
"#,
        ids = id_patterns()
    )
}

fn bash_devices() -> String {
    devices_function("_ocetool_devices", r#""${COMP_WORDS[@]}""#)
}

fn zsh_devices() -> String {
    // zsh: the function is an action of _arguments; it offers what the sh function prints.
    let lister = devices_function("_ocetool_device_list", r#""${words[@]}""#);
    format!("{lister}\n_ocetool_devices() {{\n    compadd -- ${{(f)\"$(_ocetool_device_list)\"}}\n}}\n")
}

/// The values of positional arguments, which clap_complete's fish script does not offer.
fn fish_values() -> String {
    let faults = oce_emulator::FAULT_NAMES.join(" ");
    format!(
        "\n# The values of set-profile's and emulator fault set|clear's arguments.\n\
         complete -c ocetool -n \"__fish_ocetool_using_subcommand set-profile\" -f -a \"nic roce\"\n\
         complete -c ocetool -n \"__fish_ocetool_using_subcommand emulator; and __fish_seen_subcommand_from fault; \
         and __fish_seen_subcommand_from set clear\" -f -a \"{faults}\"\n"
    )
}

fn fish_devices() -> String {
    // fish has no sh functions: the same walk in fish.
    format!(
        r#"
# The devices `--device` takes: the OneConnect functions in sysfs (the command line's
# --sysfs-root, else /sys), then `emu` (the emulator).
function __ocetool_devices
    set -l sys /sys
    set -l words (commandline -opc)
    for i in (seq (count $words))
        if test "$words[$i]" = --sysfs-root; and test $i -lt (count $words)
            set sys $words[(math $i + 1)]
        else if string match -q -- '--sysfs-root=*' $words[$i]
            set sys (string replace -- '--sysfs-root=' '' $words[$i])
        end
    end
    for d in $sys/bus/pci/devices/*
        test -r $d/vendor; and test -r $d/device; or continue
        set -l id (cat $d/vendor):(cat $d/device)
        if contains -- $id {ids}
            basename $d
        end
    end
    echo emu
end
"#,
        ids = KNOWN_IDS.iter().map(|k| format!("0x{:04x}:0x{:04x}", k.vendor, k.device)).collect::<Vec<_>>().join(" ")
    )
}
