//! The shell completions and man pages the package ships come from the binary itself.

mod common;

use common::ocetool;

#[test]
fn completions_for_each_shell_the_package_ships() {
    for (shell, marker) in
        [("bash", "complete -F _ocetool"), ("zsh", "#compdef ocetool"), ("fish", "complete -c ocetool")]
    {
        let run = ocetool(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stdout.contains(marker), "{shell}: {}", &run.stdout[..run.stdout.len().min(300)]);
        assert!(run.stdout.contains("set-profile") && run.stdout.contains("apply"), "{shell}");
    }
    assert_eq!(ocetool(&["completions", "tcsh"]).code, 2);
}

#[test]
fn a_closed_stdout_is_no_panic() {
    let mut child = common::command()
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away, as `| head -1` does
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `ocetool manpage` into a temporary directory: the directory (kept alive by the caller) and the
/// pages' folder.
fn pages() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("man");
    let run = ocetool(&["manpage", "--out-dir", out.to_str().unwrap(), "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["schema"], "ocetool/1");
    (d, out)
}

fn page(dir: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The section titles of a roff page, in order.
fn sections(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.strip_prefix(".SH ")).map(|t| t.trim_matches('"').to_owned()).collect()
}

#[test]
fn manpage_writes_the_pages_of_the_tool_every_subcommand_and_the_configuration() {
    let (_d, out) = pages();
    for name in ["ocetool.8", "ocetool-apply.8", "ocetool-fw-update.8", "ocetool-set-profile.8"] {
        let text = page(&out, name);
        assert!(text.contains(".TH ") && text.contains(" 8 "), "{name}: {}", &text[..200.min(text.len())]);
    }
    let config = page(&out, "ocetool.toml.5");
    assert!(config.starts_with(".TH ocetool.toml 5 "), "{}", &config[..100.min(config.len())]);
}

#[test]
fn examples_and_exit_status_are_standard_sections_and_nothing_is_extra() {
    let (_d, out) = pages();
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let found = sections(&std::fs::read_to_string(&path).unwrap());
        assert!(!found.iter().any(|s| s == "EXTRA"), "{name}: {found:?}");
        assert!(found.iter().any(|s| s == "SEE ALSO"), "{name}: {found:?}");
        if name.ends_with(".8") {
            assert!(found.iter().any(|s| s == "EXIT STATUS"), "{name}: {found:?}");
        }
    }
    // The pages of the commands whose --help ends with examples show them as EXAMPLES.
    for name in ["ocetool.8", "ocetool-apply.8", "ocetool-reset.8", "ocetool-set-profile.8", "ocetool-fw-update.8"] {
        let text = page(&out, name);
        assert!(sections(&text).iter().any(|s| s == "EXAMPLES"), "{name}");
        assert!(text.contains("ocetool \\-\\-device 03:00.0"), "{name}: the examples themselves");
    }
    // The top page: every exit code, every error code, where files live and what the variables do.
    let top = page(&out, "ocetool.8");
    let found = sections(&top);
    for wanted in ["EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"] {
        assert!(found.iter().any(|s| s == wanted), "ocetool.8 has no {wanted}: {found:?}");
    }
    for code in ["downgrade\\-refused", "bound\\-to\\-driver", "confirmation\\-required", "device\\-busy"] {
        assert!(top.contains(&format!(".B {code} ")), "ocetool.8: {code}");
    }
    for path in ["/usr/share/doc/ocetool/reliability.md", "/usr/share/ocetool/schemas/", "/run/reboot\\-required"] {
        assert!(top.contains(path), "ocetool.8 names {path}");
    }
    assert!(top.contains("OCETOOL_REBOOT_REQUIRED") && top.contains("OCETOOL_LOCK_DIR"));
    // ocetool-apply(8), which the unit names: the hook, the unit, their files and variables.
    let apply = page(&out, "ocetool-apply.8");
    let found = sections(&apply);
    for wanted in ["BOOT HOOK", "INITRAMFS", "SYSTEMD UNIT", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"] {
        assert!(found.iter().any(|s| s == wanted), "ocetool-apply.8 has no {wanted}: {found:?}");
    }
    for needle in
        ["/usr/lib/ocetool/be2net\\-hook", "ocetool\\-apply.service", "OCETOOL_HOOK_TIMEOUT", "last\\-apply.json"]
    {
        assert!(apply.contains(needle), "ocetool-apply.8: {needle}");
    }
    let unit = include_str!("../../packaging/systemd/ocetool-apply.service");
    assert!(unit.contains("Documentation=man:ocetool-apply(8)"), "the unit names the page");
}

/// The keys `ocetool apply`'s parser accepts at one level, as its refusal of an unknown key lists
/// them (serde's "expected one of ..."), so the list is the parser's own.
fn parser_keys(dir: &std::path::Path, dev: &str, text: &str) -> Vec<String> {
    let config = dir.join("probe.toml");
    std::fs::write(&config, text).unwrap();
    let run = ocetool(&["--device", dev, "apply", "--config", config.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let expected = run.stderr.split("expected ").nth(1).unwrap_or_else(|| panic!("{}", run.stderr));
    expected.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

#[test]
fn every_key_and_value_of_the_configuration_is_in_ocetool_toml_5() {
    let (d, out) = pages();
    let dev = common::emu_arg(&d.path().join("emu"));
    let page = page(&out, "ocetool.toml.5").replace("\\-", "-");
    // The top level and the rule: each key has an entry of its own in KEYS.
    let mut keys = parser_keys(d.path(), &dev, "bogus = 1\n");
    keys.extend(parser_keys(d.path(), &dev, "[[adapter]]\nmatch = { all = true }\nbogus = 1\n"));
    let matches = parser_keys(d.path(), &dev, "[[adapter]]\nmatch = { bogus = 1 }\n");
    let activate = parser_keys(d.path(), &dev, "[[adapter]]\nmatch = { all = true }\nactivate = \"x\"\n");
    assert!(keys.len() >= 7 && matches.len() == 3 && activate.len() == 2, "{keys:?} {matches:?} {activate:?}");
    for key in &keys {
        let entry = page.contains(&format!(".B {key}\n")) || page.contains(&format!(".B [[{key}]]\n"));
        assert!(entry, "ocetool.toml(5) does not document the key `{key}`");
    }
    // `match`'s keys, in its entry.
    let entry = page.split(".B match\n").nth(1).unwrap().split(".TP").next().unwrap();
    for key in &matches {
        assert!(entry.contains(&format!("{key} = ")), "ocetool.toml(5) does not document match's key `{key}`");
    }
    for value in activate {
        assert!(page.contains(&value), "ocetool.toml(5) does not document activate = {value:?}");
    }
    for section in ["KEYS", "TRUST", "EXAMPLES", "FILES"] {
        assert!(sections(&page).iter().any(|s| s == section), "ocetool.toml(5) has no {section}");
    }
    assert!(page.contains("relative to the configuration file's directory"), "relative images");
    assert!(page.contains("no one but root can change"), "the trust rule");
}
