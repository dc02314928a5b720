//! `ocetool completions SHELL`: the bash script, loaded into bash and asked to complete sample
//! command lines (COMP_WORDS / COMP_CWORD, as bash's programmable completion sets them); the
//! other scripts checked for what they offer.

mod common;

use std::path::Path;
use std::process::Command;

use common::{fake_pci_function, ocetool};

/// What the bash script completes for `words` (the cursor on the last word), one word a line.
fn complete(script: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let program = format!(
        "source '{}' || exit 9\nCOMP_WORDS=({})\nCOMP_CWORD={cword}\n_ocetool ocetool '{}' '{prev}' 2>/dev/null\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words[cword],
    );
    let out = Command::new("bash").arg("--norc").arg("-c").arg(program).output().expect("run bash");
    assert!(out.status.success(), "{words:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.is_empty()).map(str::to_owned).collect()
}

fn bash_script(dir: &Path) -> std::path::PathBuf {
    let run = ocetool(&["completions", "bash"]);
    assert_eq!(run.code, 0, "{run:?}");
    let path = dir.join("ocetool.bash");
    std::fs::write(&path, run.stdout).unwrap();
    path
}

#[test]
fn bash_offers_profiles_fault_names_and_subcommands() {
    let d = tempfile::tempdir().unwrap();
    let script = bash_script(d.path());
    let profiles = complete(&script, &["ocetool", "set-profile", ""]);
    assert!(profiles.contains(&"nic".into()) && profiles.contains(&"roce".into()), "{profiles:?}");
    assert_eq!(complete(&script, &["ocetool", "--device", "emu", "set-profile", "r"]), ["roce"]);
    let faults = complete(&script, &["ocetool", "emulator", "fault", "set", "po"]);
    assert_eq!(faults, ["post-stuck", "post-error", "power-lost", "power-loss-at"]);
    assert_eq!(complete(&script, &["ocetool", "emulator", "fault", "clear", "link"]), ["link-down"]);
    assert_eq!(complete(&script, &["ocetool", "set-"]), ["set-profile"]);
}

#[test]
fn bash_hides_the_test_flags_and_offers_the_global_ones_after_the_subcommand() {
    let d = tempfile::tempdir().unwrap();
    let script = bash_script(d.path());
    for words in [&["ocetool", "--"][..], &["ocetool", "query", "--"], &["ocetool", "fw", "update", "--"]] {
        let offered = complete(&script, words);
        assert!(offered.contains(&"--json".into()) && offered.contains(&"--device".into()), "{words:?}: {offered:?}");
        for hidden in ["--sysfs-root", "--dev-root", "--proc-root"] {
            assert!(!offered.contains(&hidden.into()), "{words:?} offers {hidden}");
        }
    }
}

#[test]
fn bash_offers_the_oneconnect_functions_in_sysfs_and_emu_for_device() {
    let d = tempfile::tempdir().unwrap();
    let script = bash_script(d.path());
    let root = d.path().join("host");
    fake_pci_function(&root, "0000:03:00.0", 0x10df, 0x0720); // Skyhawk PF
    fake_pci_function(&root, "0000:03:00.1", 0x10df, 0x0720);
    fake_pci_function(&root, "0000:05:00.0", 0x19a2, 0x0710); // BE3
    fake_pci_function(&root, "0000:00:1f.6", 0x8086, 0x15b7); // not a OneConnect function
    let sys = root.join("sys");
    let sys = sys.to_str().unwrap();
    let all = complete(&script, &["ocetool", "--sysfs-root", sys, "--device", ""]);
    assert_eq!(all, ["0000:03:00.0", "0000:03:00.1", "0000:05:00.0", "emu"]);
    assert_eq!(
        complete(&script, &["ocetool", "--sysfs-root", sys, "query", "-d", "0000:03"]),
        ["0000:03:00.0", "0000:03:00.1"]
    );
    assert_eq!(complete(&script, &["ocetool", &format!("--sysfs-root={sys}"), "query", "--device", "e"]), ["emu"]);
    // An empty bus: the emulator only.
    let empty = d.path().join("empty/sys/bus/pci/devices");
    std::fs::create_dir_all(&empty).unwrap();
    let empty = d.path().join("empty/sys");
    assert_eq!(complete(&script, &["ocetool", "--sysfs-root", empty.to_str().unwrap(), "--device", ""]), ["emu"]);
}

#[test]
fn zsh_and_fish_offer_the_same_values_and_no_test_flags() {
    let zsh = ocetool(&["completions", "zsh"]).stdout;
    let fish = ocetool(&["completions", "fish"]).stdout;
    assert!(zsh.contains(":DEVICE:_ocetool_devices'") && zsh.contains("\n_ocetool_devices() {"), "zsh");
    assert!(fish.contains("-a \"(__ocetool_devices)\"") && fish.contains("\nfunction __ocetool_devices\n"), "fish");
    assert!(zsh.contains(":(nic roce)'"), "zsh: set-profile's values");
    assert!(fish.contains("using_subcommand set-profile\" -f -a \"nic roce\""), "fish: set-profile's values");
    assert!(zsh.contains("(post-stuck post-error ue") && fish.contains("-a \"post-stuck post-error ue"), "fault names");
    for hidden in ["sysfs-root", "dev-root", "proc-root"] {
        assert!(!zsh.contains(&format!("'--{hidden}=")), "zsh offers --{hidden}");
        assert!(!fish.contains(&format!("-l {hidden}")), "fish offers --{hidden}");
    }
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        assert!(!ocetool(&["completions", shell]).stdout.contains("__ocetool_devices__"), "{shell}");
    }
}
