//! `ocetool reset` as the remedy for a hung adapter: a chip reset restarts the firmware, which
//! ends a hung mailbox and clears a UE (be2net recovers a Skyhawk the same way,
//! spec/protocol.md §7.4), but not a boot that fails or a device gone from the bus — then the
//! advice is a power cycle (emulator/src/assumptions/mod.rs, "What a reset clears").

mod common;

use common::{Run, fresh, ocetool};

fn faults(dev: &str) -> Vec<String> {
    let r = ocetool(&["--device", dev, "emulator", "fault", "list", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json()["faults"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_owned()).collect()
}

/// Runs `args` with short timeouts, so a hung adapter costs a fraction of a second.
fn run(dev: &str, args: &[&str]) -> Run {
    let mut all = vec!["--device", dev, "--post-timeout", "0.3", "--command-timeout", "0.3"];
    all.extend_from_slice(args);
    ocetool(&all)
}

#[test]
fn a_chip_reset_recovers_a_hung_mailbox_and_a_ue() {
    for fault in ["rdy-never", "rdy-hang", "ue=0x1"] {
        let (_d, dev) = fresh();
        assert_eq!(run(&dev, &["emulator", "fault", "set", fault]).code, 0);
        let hung = run(&dev, &["query"]);
        assert_eq!(hung.code, 1, "{fault}: {}", hung.stderr);
        assert!(hung.stderr.contains("`ocetool reset`"), "{fault}: the advice names the remedy: {}", hung.stderr);

        let reset = run(&dev, &["reset", "--yes", "--json", "-vvv"]);
        assert_eq!(reset.code, 0, "{fault}: {}{}", reset.stdout, reset.stderr);
        assert!(reset.events().contains(&"ChipReset"), "{fault}: {:?}", reset.events());
        assert_eq!(reset.json()["changed"], true);
        assert!(faults(&dev).is_empty(), "{fault}: the reset cleared it");
        let q = run(&dev, &["query", "--json"]);
        assert_eq!(q.code, 0, "{fault}: {}", q.stdout);
        assert_eq!(q.json()["chip"], "skyhawk");
    }
}

#[test]
fn a_failing_boot_or_a_dead_adapter_needs_a_power_cycle() {
    for fault in ["post-stuck=0x0002", "post-error=0x0002", "gone"] {
        let (_d, dev) = fresh();
        assert_eq!(run(&dev, &["emulator", "fault", "set", fault]).code, 0);
        let reset = run(&dev, &["reset", "--yes"]);
        assert_eq!(reset.code, 1, "{fault}: {}", reset.stderr);
        assert!(reset.stderr.contains("power-cycle"), "{fault}: {}", reset.stderr);
        assert_eq!(reset.message_lines().len(), 1, "{fault}: one line: {}", reset.stderr);
        assert_eq!(faults(&dev), [fault], "{fault}: a chip reset does not clear it");
    }
}
