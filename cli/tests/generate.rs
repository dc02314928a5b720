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

#[test]
fn manpage_writes_section_8_pages_for_the_tool_and_every_subcommand() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("man");
    let run = ocetool(&["manpage", "--out-dir", out.to_str().unwrap(), "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["schema"], "ocetool/1");
    for page in ["ocetool.8", "ocetool-apply.8", "ocetool-fw-update.8", "ocetool-set-profile.8"] {
        let text = std::fs::read_to_string(out.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH ") && text.contains(" 8 "), "{page}: {}", &text[..200.min(text.len())]);
    }
    let top = std::fs::read_to_string(out.join("ocetool.8")).unwrap();
    assert!(top.contains("Exit codes"), "the exit codes are in the man page too");
}
