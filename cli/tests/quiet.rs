//! `-q/--quiet`: errors only. A successful command prints nothing in text mode, on either
//! stream; `--json` still prints its document; a failure still says what failed.

mod common;

use common::{fresh, ocetool};

#[test]
fn a_quiet_success_prints_nothing_at_all() {
    let (_d, dev) = fresh();
    for flags in [&["-q"][..], &["--quiet"], &["query", "-q"]] {
        let mut args = vec!["--device", dev.as_str()];
        args.extend_from_slice(flags);
        if !args.contains(&"query") {
            args.push("query");
        }
        let run = ocetool(&args);
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("", ""), "{args:?}");
    }
    // Without it, the same command reports.
    let loud = ocetool(&["--device", &dev, "query"]);
    assert!(loud.stdout.contains("Firmware"), "{loud:?}");
}

#[test]
fn quiet_json_still_prints_the_document() {
    let (_d, dev) = fresh();
    let run = ocetool(&["--device", &dev, "--json", "-q", "query"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["schema"], "ocetool/1");
    assert!(run.json()["firmware"]["running"].is_string());
    assert_eq!(run.stderr, "");
}

#[test]
fn a_quiet_failure_still_says_what_failed() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("missing.ufi");
    let run = ocetool(&["-q", "fw", "inspect", missing.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(run.stderr.starts_with("ocetool: ") && run.stderr.contains("missing.ufi"), "{run:?}");
}

#[test]
fn a_quiet_flash_shows_no_progress() {
    let (d, dev) = fresh();
    let image = d.path().join("new.ufi");
    let built = ocetool(&["fw", "build", "--version", "12.0.0.1", "--output", image.to_str().unwrap()]);
    assert_eq!(built.code, 0, "{built:?}");
    let quiet = ocetool(&["--device", &dev, "-q", "fw", "update", image.to_str().unwrap(), "--yes"]);
    assert_eq!(quiet.code, 0, "{quiet:?}");
    assert_eq!((quiet.stdout.as_str(), quiet.stderr.as_str()), ("", ""));
    // The same flash without --quiet writes a progress line per section (stdin and stderr are
    // not terminals here).
    let (d2, dev2) = fresh();
    let loud = ocetool(&["--device", &dev2, "fw", "update", image.to_str().unwrap(), "--yes"]);
    assert!(loud.stderr.contains("ocetool: writing "), "{loud:?}");
    drop(d2);
}

#[test]
fn quiet_and_verbose_are_a_usage_error() {
    for args in [&["-q", "-v", "list"][..], &["-q", "list", "-v"]] {
        let run = ocetool(args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stderr.contains("--quiet") && run.stderr.contains("--verbose"), "{run:?}");
    }
}
