//! The parts of the man pages clap does not know: the standard sections (EXIT STATUS, EXAMPLES,
//! ENVIRONMENT, FILES, SEE ALSO) made from each command's `--help` ending and from the error codes,
//! the boot hook and the unit on `ocetool-apply(8)`, and the whole of `ocetool.toml(5)`.

use crate::error::ErrorCode;

/// Escapes text for a roff line: backslashes, hyphens (so `--yes` is not hyphenated), and a
/// leading dot or apostrophe (a control line otherwise).
pub fn escape(text: &str) -> String {
    let body = text.replace('\\', "\\e").replace('-', "\\-");
    if body.starts_with(['.', '\'']) { format!("\\&{body}") } else { body }
}

/// A section with paragraphs of running text.
pub fn section(title: &str, paragraphs: &[&str]) -> String {
    let mut out = format!(".SH \"{title}\"\n");
    for (i, p) in paragraphs.iter().enumerate() {
        if i > 0 {
            out.push_str(".PP\n");
        }
        out.push_str(&escape(p.trim()));
        out.push('\n');
    }
    out
}

/// A section of tagged paragraphs: each term in bold, its text below.
pub fn tagged(title: &str, items: &[(&str, &str)]) -> String {
    let mut out = format!(".SH \"{title}\"\n");
    for (term, text) in items {
        out.push_str(&format!(".TP\n.B {}\n{}\n", escape(term), escape(text)));
    }
    out
}

/// Lines shown as they are (examples).
fn literal(lines: &[&str]) -> String {
    let mut out = String::from(".PP\n.nf\n.RS 4\n");
    for l in lines {
        out.push_str(&escape(l.trim_start()));
        out.push('\n');
    }
    out.push_str(".RE\n.fi\n");
    out
}

/// The sections a `--help` ending holds, in man-pages(7) order: its "Exit codes:" as EXIT
/// STATUS, its "Examples:" as EXAMPLES, any other paragraph as NOTES.
pub fn from_after_help(text: &str) -> (Option<String>, Option<String>, Option<String>) {
    let (mut status, mut examples, mut notes) = (None, None, Vec::new());
    for paragraph in text.split("\n\n") {
        if let Some(rest) = paragraph.strip_prefix("Examples:") {
            let lines: Vec<&str> = rest.lines().filter(|l| !l.trim().is_empty()).collect();
            examples = Some(format!(".SH EXAMPLES\n{}", literal(&lines)));
        } else if let Some(rest) = paragraph.strip_prefix("Exit codes:") {
            let joined = rest.lines().map(str::trim).collect::<Vec<_>>().join(" ");
            status = Some(section("EXIT STATUS", &[joined.trim()]));
        } else {
            notes.push(paragraph);
        }
    }
    let notes = (!notes.is_empty()).then(|| {
        let mut out = String::from(".SH NOTES\n");
        for p in notes {
            let indented = p.lines().any(|l| l.starts_with("  "));
            if indented {
                out.push_str(&literal(&p.lines().collect::<Vec<_>>()));
            } else {
                out.push_str(&format!(".PP\n{}\n", escape(&p.lines().map(str::trim).collect::<Vec<_>>().join(" "))));
            }
        }
        out
    });
    (status, examples, notes)
}

/// EXIT STATUS of `ocetool(8)`: every exit code, then every `error.code` with its exit code and
/// meaning (README "Exit codes", "Error codes").
pub fn exit_status() -> String {
    let kinds = [
        (0, "success, also when there was nothing to change (changed: false)"),
        (1, "the operation failed: the device or its firmware reported an error or stopped answering"),
        (2, "usage: a bad argument, configuration or named file"),
        (3, "no such or unsupported device"),
        (4, "refused by a safety check"),
        (5, "device busy: another ocetool holds the adapter"),
        (130, "stopped by SIGINT"),
        (143, "stopped by SIGTERM"),
    ];
    let mut out = String::from(".SH \"EXIT STATUS\"\n");
    for (code, text) in kinds {
        out.push_str(&format!(".TP\n.B {code}\n{}\n", escape(text)));
    }
    out.push_str(
        ".PP\nWith \\-\\-json the error document names the kind (error.kind) and the reason (error.code), one of:\n",
    );
    for code in ErrorCode::ALL {
        let exit = code.kind().exit_code();
        out.push_str(&format!(".TP\n.B {} \\fR(exit {exit})\n{}\n", escape(code.name()), escape(code.meaning())));
    }
    out
}

/// ENVIRONMENT of `ocetool(8)`.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    ("OCETOOL_DEVICE", "The default for --device."),
    ("OCETOOL_LOCK_DIR", "Where the adapters' lock files are (default /run/lock/ocetool)."),
    (
        "OCETOOL_REBOOT_REQUIRED",
        "For tests: the path of the reboot-required flag (default /run/reboot-required, its list PATH.pkgs). \
         Set, it is written for every device, the emulator included; unset, never for the emulator.",
    ),
    ("OCETOOL_RUN_DIR", "Where ocetool keeps its list of the adapters that wait for a reset (default /run/ocetool)."),
    ("XDG_STATE_HOME, HOME", "Place the default emulator state directory ($XDG_STATE_HOME/ocetool/emu)."),
];

/// FILES of `ocetool(8)`.
pub const FILES: &[(&str, &str)] = &[
    ("/etc/ocetool/ocetool.toml", "The configuration ocetool apply brings the adapters to; see ocetool.toml(5)."),
    ("/run/lock/ocetool/", "One lock file per adapter (group ocetool)."),
    ("/run/ocetool/last-apply.json", "The JSON report of the boot hook's last ocetool apply."),
    ("/run/ocetool/reset-pending", "The adapters that need a reset for what ocetool stored to run."),
    (
        "/run/reboot-required, /run/reboot-required.pkgs",
        "Debian's reboot-required flag, raised while an adapter needs a reset.",
    ),
    ("/usr/share/ocetool/schemas/", "JSON Schemas (draft 2020-12) of every --json document."),
    (
        "/usr/share/doc/ocetool/reliability.md",
        "What ocetool guarantees under faults, interruption and concurrency, with every injectable emulator fault.",
    ),
    ("/usr/share/doc/ocetool/README.md", "The full documentation, the JSON contract and the error codes included."),
];

/// The sections `ocetool-apply(8)` adds after its DESCRIPTION: the boot hook, the initramfs and
/// the unit (packaging/be2net-hook's header has the times and where each comes from).
pub fn apply_boot() -> String {
    let mut out = section(
        "BOOT HOOK",
        &[
            "/lib/modprobe.d/ocetool.conf makes every load of be2net run /usr/lib/ocetool/be2net-hook first \
             (install be2net /usr/lib/ocetool/be2net-hook; /sbin/modprobe --ignore-install be2net $CMDLINE_OPTS), \
             so the adapters get their profile before be2net binds them.",
            "The hook does nothing unless the configuration exists. It loads vfio-pci, runs ocetool --json apply \
             --firmware-budget 0 (the profile and its reset; a firmware flash is deferred to the unit) bounded by a \
             timeout (30 seconds, so that the module load stays within udev's 180), writes the report to \
             /run/ocetool/last-apply.json, logs one line with the tag ocetool-apply (journalctl -t ocetool-apply; \
             a failure at priority err), and always exits 0: be2net loads whatever happened.",
            "Runs go one at a time: udev loads be2net once per PCI function, in parallel, and every run applies \
             every adapter, so a run that finds another at work waits for its end (up to 115 seconds) and then \
             lets be2net load without an apply of its own.",
        ],
    );
    out.push_str(&section(
        "INITRAMFS",
        &["be2net usually loads in the initramfs. The package's initramfs-tools hook and dracut module put the \
             hook there and, when ocetool apply accepts the configuration, ocetool, the configuration and the \
             images it names (up to 32 MiB in all, OCETOOL_INITRAMFS_MAX_MIB), with a manifest of what went in and \
             what stayed out. After editing the configuration or an image, rebuild the initramfs \
             (update-initramfs -u -k all, or dracut --regenerate-all -f) and reboot. In the initramfs the hook \
             logs to the kernel log; a configuration that was refused when the initramfs was built is named \
             there, with the reason."],
    ));
    out.push_str(&section(
        "SYSTEMD UNIT",
        &["ocetool-apply.service runs the same hook once at boot, before systemd-udev-trigger.service (udev's \
           coldplug, which loads be2net) and network-pre.target, when /etc/ocetool/ocetool.toml exists, with the \
           time a firmware flash needs. It is installed disabled: systemctl enable ocetool-apply.service once the \
           configuration is written. When be2net was loaded in the initramfs, the unit has nothing left if the \
           hook did it all there, and otherwise logs at priority err what was not done before be2net and what to \
           do."],
    ));
    out
}

/// ENVIRONMENT and FILES of `ocetool-apply(8)`: the hook's.
pub fn apply_environment_and_files() -> String {
    let mut out = tagged(
        "ENVIRONMENT",
        &[
            ("OCETOOL_CONFIG", "The hook's configuration (default /etc/ocetool/ocetool.toml)."),
            (
                "OCETOOL_HOOK_TIMEOUT",
                "Seconds the hook lets ocetool apply run (default 30 under modprobe, 36000 for the unit); for tests.",
            ),
            ("OCETOOL_RUN_DIR", "Where the hook leaves last-apply.json and its records (default /run/ocetool)."),
            (
                "OCETOOL_INITRAMFS_MAX_MIB",
                "The initramfs builders' bound for the images, in MiB (default 32): OCETOOL_INITRAMFS_MAX_MIB=64 \
                 update-initramfs -u.",
            ),
            ("OCETOOL_BIN", "The ocetool the hook runs (default /usr/bin/ocetool); for tests."),
            ("OCETOOL_DEVICE", "Apply to this device only (e.g. emu:DIR); for tests."),
        ],
    );
    out.push_str(&tagged(
        "FILES",
        &[
            ("/etc/ocetool/ocetool.toml", "The configuration; see ocetool.toml(5)."),
            ("/usr/lib/ocetool/be2net-hook", "The hook."),
            ("/usr/lib/modprobe.d/ocetool.conf", "The install line that runs the hook before be2net."),
            ("/usr/lib/systemd/system/ocetool-apply.service", "The unit (installed disabled)."),
            ("/usr/share/initramfs-tools/hooks/ocetool", "The initramfs-tools hook."),
            ("/usr/lib/dracut/modules.d/90ocetool/", "The dracut module."),
            ("/usr/lib/ocetool/initramfs-files", "What of the configuration an initramfs gets, and its manifest."),
            ("/run/ocetool/last-apply.json", "The JSON report of the hook's last run."),
            (
                "/run/ocetool/last-run, /run/ocetool/initramfs-manifest",
                "The hook's last run (where, its exit code and line) and the initramfs' manifest, for the unit.",
            ),
            ("/usr/share/doc/ocetool/examples/ocetool.toml", "An example configuration."),
        ],
    ));
    out
}

/// The whole `ocetool.toml(5)` page, with the date and version of the other pages.
pub fn config_page(version: &str) -> String {
    let mut out = format!(".TH ocetool.toml 5 \"\" \"ocetool {version}\" \"File Formats Manual\"\n");
    out.push_str(".SH NAME\nocetool.toml \\- the adapter configuration ocetool apply brings every OCe14000 to\n");
    out.push_str(&section(
        "SYNOPSIS",
        &["/etc/ocetool/ocetool.toml (or the file given with ocetool apply --config FILE)"],
    ));
    out.push_str(&section(
        "DESCRIPTION",
        &[
            "A TOML file of [[adapter]] rules, tried in order: the first rule whose match fits an adapter decides \
             its state (firmware, profile, activation). An adapter no rule matches is left as it is. \
             ocetool apply runs the same work as fw update, set-profile and reset, idempotently: a second run \
             reports changed: false. The configuration is the confirmation: apply never asks.",
            "An unknown key, a value of the wrong type, an unknown profile name or a match with not exactly one \
             key is refused before anything is touched, with exit 2 (error.code bad-config) naming the file, the \
             line and the key.",
        ],
    ));
    out.push_str(&tagged(
        "KEYS",
        &[
            (
                "[[adapter]]",
                "Array of tables, one per rule. A file without a rule changes nothing (the only top-level key).",
            ),
            (
                "match",
                "Inline table, required: which adapters the rule is for, exactly one of its keys: all = true \
                 (every adapter; all = false is refused), serial = \"STRING\" (the adapter with that serial \
                 number, as ocetool query prints it), or address = \"DDDD:BB:DD\" (the card in that slot; a \
                 function's address DDDD:BB:DD.F names its card too).",
            ),
            (
                "profile",
                "String or integer, optional (default: the profile is left as it is): nic (the plain NIC \
                 profile), roce (a NIC+RoCE profile; RoCE-2 when there are several), or a profile ID (0-255) \
                 from ocetool profiles. Stored as the next-boot profile.",
            ),
            (
                "firmware",
                "String, optional (default: the firmware is left as it is): the path of a .ufi image, flashed \
                 when the version on flash differs. A relative path is relative to the configuration file's \
                 directory (as named: /etc/ocetool for the default file), never to the working directory.",
            ),
            (
                "allow_downgrade",
                "Boolean, optional (default false): also flash an image older than the firmware on flash.",
            ),
            (
                "activate",
                "String, optional (default \"next-boot\"): reset (a chip reset runs what was stored now, when no \
                 host driver holds another function of the card; else it is postponed to the next boot) or \
                 next-boot (only store it: it runs after the next reset or reboot).",
            ),
            (
                "unbind",
                "Boolean, optional (default false): take a function from the driver that holds it (be2net) for \
                 the length of the work, and give it back afterwards. Without it a bound function is refused \
                 (exit 4, bound-to-driver).",
            ),
        ],
    ));
    out.push_str(&section(
        "TRUST",
        &[
            "apply runs as root and flashes what the file names, so, like sshd's StrictModes, it acts only on a \
             configuration and images that no one but root can change: the file, each image it names, and every \
             directory above them (links are followed one step at a time, each link's directory checked too) \
             must belong to root and be writable by neither group nor others. A directory others may write is \
             passed only with the sticky bit (/tmp) and an entry of root's in it. Run by another user, root's \
             files and that user's own are trusted, and nobody else's; membership in a group grants nothing.",
            "Anything else is refused before anything is touched, with exit 4 (error.code untrusted-file) naming \
             the path, its owner and its mode: fix it with chmod go-w or chown root.",
        ],
    ));
    out.push_str(".SH EXAMPLES\n");
    out.push_str(&escape("Every adapter: the RoCE profile, running before be2net binds it:"));
    out.push('\n');
    out.push_str(&literal(&["[[adapter]]", "match = { all = true }", "profile = \"roce\"", "activate = \"reset\""]));
    out.push_str(".PP\n");
    out.push_str(&escape("One card by slot, with a firmware image beside the file, taken from be2net if it holds it:"));
    out.push('\n');
    out.push_str(&literal(&[
        "[[adapter]]",
        "match = { address = \"0000:03:00\" }",
        "profile = \"nic\"",
        "firmware = \"oc14-11.4.1231.6.ufi\"   # /etc/ocetool/oc14-11.4.1231.6.ufi",
        "allow_downgrade = false",
        "activate = \"next-boot\"",
        "unbind = true",
    ]));
    out.push_str(".PP\n");
    out.push_str(&escape("Rehearse on the emulator: ocetool --device emu apply --config ./ocetool.toml --dry-run"));
    out.push('\n');
    out.push_str(&tagged(
        "FILES",
        &[
            ("/etc/ocetool/ocetool.toml", "The default configuration."),
            ("/usr/share/doc/ocetool/examples/ocetool.toml", "An example."),
        ],
    ));
    out.push_str(&section("SEE ALSO", &["ocetool(8), ocetool-apply(8)"]));
    out
}
