//! `--quiet` keeps warnings off stderr too: a pending reset that cannot be recorded
//! (`OCETOOL_REBOOT_REQUIRED` under a path that cannot exist) warns without it, and says nothing
//! with it; the change itself succeeds either way.

mod common;

use common::{fresh, ocetool};

#[test]
fn a_reboot_flag_that_cannot_be_written_warns_unless_quiet() {
    let (d, dev) = fresh();
    let blocker = d.path().join("a-file");
    std::fs::write(&blocker, b"").unwrap();
    let flag = blocker.join("reboot-required");
    let run = |extra: &[&str]| {
        let mut cmd = common::command();
        cmd.env("OCETOOL_REBOOT_REQUIRED", &flag).env("OCETOOL_RUN_DIR", d.path().join("run"));
        cmd.args(["--device", &dev]).args(extra).output().unwrap()
    };
    let loud = run(&["set-profile", "roce", "--yes"]);
    assert_eq!(loud.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&loud.stderr);
    assert!(stderr.contains("ocetool: warning: cannot record the pending reset"), "{stderr}");
    let quiet = run(&["-q", "set-profile", "nic", "--yes"]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!((quiet.stdout.as_slice(), quiet.stderr.as_slice()), (&b""[..], &b""[..]));
    assert!(ocetool(&["--device", &dev, "--json", "query"]).json()["reset_required"].is_boolean());
}
