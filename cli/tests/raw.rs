//! `ocetool raw` and changes: a known read-only query runs at once; any other command may change
//! the adapter, so it is confirmed like every change — refused without `--yes` when stdin is not
//! a terminal (exit 4, nothing sent), asked on a terminal.

mod common;

use std::io::Write;

use common::{Run, fresh, next_profile, ocetool};

/// SET_ACTIVE_PROFILE (COMMON 168, spec/protocol.md §5.9): changes the next-boot profile.
const SET_ACTIVE_PROFILE: &str = "168";

/// SET_ACTIVE_PROFILE's body selecting the RoCE-2 profile: its ID, u32 little-endian @16.
fn set_roce2_payload(dev: &str) -> String {
    let p = ocetool(&["--device", dev, "profiles", "--json"]).json();
    let id = p["profiles"].as_array().unwrap().iter().find(|r| r["name"] == "RoCE-2 (NIC+RoCE)").unwrap()["id"]
        .as_u64()
        .unwrap() as u32;
    hex::encode(id.to_le_bytes())
}

#[test]
fn read_only_queries_run_without_confirmation() {
    let (_d, dev) = fresh();
    // GET_FW_VERSION, QUERY_FIRMWARE_CONFIG, GET_PROFILE_LIST, GET_ACTIVE_PROFILE.
    for opcode in ["35", "58", "166", "167"] {
        let r = ocetool(&["--device", &dev, "raw", "--subsystem", "1", "--opcode", opcode, "--json"]);
        assert_eq!(r.code, 0, "opcode {opcode}: {}", r.stdout);
        // Sent and completed (GET_PROFILE_LIST answers INSUFFICIENT_BUFFER in the default 236 bytes).
        assert!(r.json()["base_status"].is_u64(), "opcode {opcode}: {}", r.stdout);
    }
}

#[test]
fn a_command_that_may_change_the_adapter_needs_yes_in_a_script() {
    let (_d, dev) = fresh();
    let payload = set_roce2_payload(&dev);
    let raw = ["--device", &dev, "raw", "--subsystem", "1", "--opcode", SET_ACTIVE_PROFILE, "--payload", &payload];

    let refused = ocetool(&[&raw[..], &["-vvv"]].concat());
    assert_eq!(refused.code, 4, "{}", refused.stderr);
    let message = refused.message_lines();
    assert_eq!(message.len(), 1, "one line: {}", refused.stderr);
    assert!(message[0].contains("--yes") && message[0].contains("opcode 168"), "{message:?}");
    assert!(!refused.ran(168), "nothing was sent: {:?}", refused.events());
    let json = ocetool(&[&raw[..], &["--json"]].concat());
    assert_eq!((json.code, json.json()["error"]["kind"].as_str()), (4, Some("refused")));
    // An opcode nobody documents is no query either.
    let unknown = ocetool(&["--device", &dev, "raw", "--subsystem", "1", "--opcode", "99"]);
    assert_eq!(unknown.code, 4, "{}", unknown.stderr);
    assert_eq!(next_profile(&dev), "NIC", "nothing changed");

    let sent = ocetool(&[&raw[..], &["--yes", "--json"]].concat());
    assert_eq!(sent.code, 0, "{}", sent.stdout);
    assert_eq!(sent.json()["base_status"], 0);
    assert_eq!(next_profile(&dev), "RoCE-2 (NIC+RoCE)", "the command ran");
}

/// Runs `ocetool ARGS` on a pseudo-terminal (util-linux `script`), typing `answer` at it.
fn on_a_terminal(args: &[&str], answer: &str) -> Run {
    let mut child = common::spawn_on_a_terminal(args);
    child.stdin.take().unwrap().write_all(answer.as_bytes()).unwrap();
    child.wait_with_output().unwrap().into()
}

#[test]
fn on_a_terminal_a_command_that_may_change_the_adapter_is_asked_for() {
    let (_d, dev) = fresh();
    let payload = set_roce2_payload(&dev);
    let raw = ["--device", &dev, "raw", "--subsystem", "1", "--opcode", SET_ACTIVE_PROFILE, "--payload", &payload];

    let declined = on_a_terminal(&raw, "n\n");
    assert!(declined.stdout.contains("Continue? [y/N]"), "asked: {}", declined.stdout);
    assert_eq!(declined.code, 4, "{}", declined.stdout);
    assert!(declined.stdout.contains("not confirmed"), "{}", declined.stdout);
    assert_eq!(next_profile(&dev), "NIC", "declined: nothing changed");

    let accepted = on_a_terminal(&raw, "y\n");
    assert!(accepted.stdout.contains("Continue? [y/N]"), "asked: {}", accepted.stdout);
    assert_eq!(accepted.code, 0, "{}", accepted.stdout);
    assert_eq!(next_profile(&dev), "RoCE-2 (NIC+RoCE)", "confirmed: the command ran");

    // A read-only query asks nothing, terminal or not.
    let query = on_a_terminal(&["--device", &dev, "raw", "--subsystem", "1", "--opcode", "35"], "");
    assert_eq!(query.code, 0, "{}", query.stdout);
    assert!(!query.stdout.contains("Continue?"), "{}", query.stdout);
}
