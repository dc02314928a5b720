//! `ocetool apply` on the emulator: a dry run changes nothing, the first run converges (and with
//! `activate = "reset"` RoCE runs), the second changes nothing, and a bad configuration is exit 2
//! naming the file, the line and the key.

mod common;

use std::path::Path;

use common::{Run, fresh, ocetool};
use oce_emulator::assumptions::FACTORY_FIRMWARE_VERSION as FACTORY;
use oce_firmware::build::ImageBuilder;
use serde_json::Value;

fn write_config(dir: &Path, text: &str) -> String {
    let path = dir.join("ocetool.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn apply(dev: &str, config: &str, extra: &[&str]) -> Run {
    let mut args = vec!["--device", dev, "apply", "--config", config, "--json"];
    args.extend_from_slice(extra);
    ocetool(&args)
}

fn query(dev: &str) -> Value {
    ocetool(&["--device", dev, "query", "--json"]).json()
}

/// A configuration whose one rule asks for everything: firmware 11.2.0.0 (an image written
/// beside it), the RoCE profile, activated by a reset.
fn full_rule(dir: &Path) -> String {
    let image = dir.join("new.ufi");
    std::fs::write(&image, ImageBuilder::new("11.2.0.0").build().unwrap()).unwrap();
    let rule = format!(
        "[[adapter]]\nmatch = {{ all = true }}\nprofile = \"roce\"\nfirmware = \"{}\"\nactivate = \"reset\"\n",
        image.display()
    );
    write_config(dir, &rule)
}

#[test]
fn dry_run_then_first_run_then_nothing_to_do() {
    let (d, dev) = fresh();
    let config = full_rule(d.path());
    let before = query(&dev);
    let state_before = std::fs::read(d.path().join("emu/state.json")).unwrap();
    let flash_before = std::fs::read(d.path().join("emu/flash.bin")).unwrap();

    let dry = apply(&dev, &config, &["--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.stdout);
    let doc = dry.json();
    assert_eq!(doc["schema"], "ocetool/1");
    assert_eq!((&doc["dry_run"], &doc["changed"]), (&Value::Bool(true), &Value::Bool(true)));
    let actions = doc["adapters"][0]["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 3, "{actions:?}");
    assert!(actions[0].as_str().unwrap().starts_with("would flash firmware 11.2.0.0"), "{actions:?}");
    assert_eq!(std::fs::read(d.path().join("emu/state.json")).unwrap(), state_before, "dry run: state untouched");
    assert!(std::fs::read(d.path().join("emu/flash.bin")).unwrap() == flash_before, "dry run: flash untouched");
    assert_eq!(query(&dev)["profile"], before["profile"]);

    let first = apply(&dev, &config, &[]);
    assert_eq!(first.code, 0, "{}", first.stdout);
    let doc = first.json();
    let a = &doc["adapters"][0];
    assert_eq!((&doc["changed"], &a["changed"]), (&Value::Bool(true), &Value::Bool(true)), "{doc}");
    assert_eq!(a["roce_enabled"], true, "{doc}");
    assert_eq!(a["reset_required"], false, "{doc}");
    assert_eq!(a["rule"], 0);
    assert_eq!(a["firmware"]["running"], "11.2.0.0");
    let q = query(&dev);
    assert_eq!((&q["roce_enabled"], &q["firmware"]["running"]), (&Value::Bool(true), &Value::from("11.2.0.0")));

    let second = apply(&dev, &config, &[]);
    assert_eq!(second.code, 0, "{}", second.stdout);
    let doc = second.json();
    assert_eq!((&doc["changed"], &doc["adapters"][0]["changed"]), (&Value::Bool(false), &Value::Bool(false)), "{doc}");
    assert_eq!(doc["adapters"][0]["roce_enabled"], true);
}

#[test]
fn next_boot_only_stores_the_profile() {
    let (d, dev) = fresh();
    let config = write_config(d.path(), "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n");
    let doc = apply(&dev, &config, &[]).json();
    let a = &doc["adapters"][0];
    assert_eq!(
        (&a["changed"], &a["reset_required"], &a["roce_enabled"]),
        (&Value::Bool(true), &Value::Bool(true), &Value::Bool(false))
    );
    assert_eq!(a["profile"]["next"]["roce"], true);
    let again = apply(&dev, &config, &[]).json();
    assert_eq!(again["adapters"][0]["changed"], false, "{again}");
    assert_eq!(again["reset_required"], true, "still pending: reported, not redone");
}

#[test]
fn rules_match_by_serial_and_the_first_match_wins() {
    let (d, dev) = fresh();
    let serial = query(&dev)["serial"].as_str().unwrap().to_owned();
    let config = write_config(
        d.path(),
        &format!(
            "[[adapter]]\nmatch = {{ serial = \"NOT-{serial}\" }}\nprofile = \"roce\"\n\n\
             [[adapter]]\nmatch = {{ address = \"0000:03:00\" }}\nprofile = \"roce\"\n\n\
             [[adapter]]\nmatch = {{ serial = \"{serial}\" }}\nprofile = \"nic\"\n\n\
             [[adapter]]\nmatch = {{ all = true }}\nprofile = \"roce\"\n"
        ),
    );
    let doc = apply(&dev, &config, &[]).json();
    assert_eq!(doc["adapters"][0]["rule"], 2, "{doc}");
    assert_eq!(doc["adapters"][0]["changed"], false, "NIC already runs");
    let none = write_config(d.path(), "[[adapter]]\nmatch = { serial = \"nobody\" }\nprofile = \"roce\"\n");
    let doc = apply(&dev, &none, &[]).json();
    assert_eq!((&doc["adapters"][0]["rule"], &doc["changed"]), (&Value::Null, &Value::Bool(false)), "{doc}");
}

#[test]
fn a_bad_configuration_is_exit_2_naming_the_file_line_and_key() {
    let (d, dev) = fresh();
    let cases = [
        ("[[adapter]]\nmatch = { all = true }\nprofile = \"rocee\"\n", ":3: key `profile`"),
        ("[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nactivate = \"soon\"\n", ":4: key `activate`"),
        ("[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nunbind = 1\n", ":4: key `unbind`"),
        ("[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nfirmwre = \"x.ufi\"\n", ":4: key `firmwre`"),
    ];
    for (text, wanted) in cases {
        let config = write_config(d.path(), text);
        let run = apply(&dev, &config, &[]);
        assert_eq!(run.code, 2, "{text}: {}", run.stdout);
        let message = run.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.starts_with(&format!("{config}{wanted}")), "{text}: {message}");
        let text_run = ocetool(&["--device", &dev, "apply", "--config", &config]);
        assert_eq!(text_run.code, 2);
        assert_eq!(text_run.stderr.lines().count(), 1, "{}", text_run.stderr);
    }
    assert_eq!(query(&dev)["profile"]["next"]["name"], "NIC", "nothing was applied");
    let missing = ocetool(&["--device", &dev, "apply", "--config", "/nonexistent/ocetool.toml"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("no configuration at /nonexistent/ocetool.toml"), "{}", missing.stderr);
}

#[test]
fn a_bad_image_fails_that_adapter_with_the_image_error() {
    let (d, dev) = fresh();
    let junk = d.path().join("junk.ufi");
    std::fs::write(&junk, vec![0x11; 2048]).unwrap();
    let config = write_config(
        d.path(),
        &format!("[[adapter]]\nmatch = {{ all = true }}\nfirmware = \"{}\"\nprofile = \"roce\"\n", junk.display()),
    );
    let run = apply(&dev, &config, &[]);
    assert_eq!(run.code, 4, "{}", run.stdout);
    let doc = run.json();
    let err = &doc["adapters"][0]["error"];
    assert_eq!(err["kind"], "refused");
    assert!(err["message"].as_str().unwrap().contains("is not a flashable image"), "{doc}");
    assert_eq!(query(&dev)["profile"]["next"]["name"], "NIC", "stopped before the profile");
}

#[test]
fn without_a_device_every_adapter_in_sysfs_is_worked_on() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("sys/bus/pci/devices")).unwrap();
    let config = write_config(d.path(), "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n");
    let run: Run = common::with_fake_sysfs(d.path()).args(["apply", "--config", &config]).output().unwrap().into();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("No OCe14000 adapter found"), "{}", run.stdout);
}

#[test]
fn a_step_failing_after_the_flash_keeps_the_flash_in_the_report() {
    let (d, dev) = fresh();
    let config = full_rule(d.path());
    // SET_ACTIVE_PROFILE (COMMON 168, spec/protocol.md §5.9) fails with MCC_STATUS_FAILED: the
    // step after the flash.
    assert_eq!(ocetool(&["--device", &dev, "emulator", "fault", "set", "status=1:168:1"]).code, 0);

    let run = apply(&dev, &config, &[]);
    assert_eq!(run.code, 1, "the profile step's error: {}", run.stdout);
    let doc = run.json();
    let a = &doc["adapters"][0];
    let actions: Vec<&str> = a["actions"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(actions, [format!("flashed firmware 11.2.0.0 (was {FACTORY})")], "{doc}");
    assert_eq!((&doc["changed"], &a["changed"]), (&Value::Bool(true), &Value::Bool(true)), "{doc}");
    assert!(a["error"]["message"].as_str().unwrap().contains("SET_ACTIVE_PROFILE"), "{doc}");
    assert_eq!(a["error"]["kind"], "failed");
    // Read back after the failure: the new firmware is stored, not yet running, and no reset ran.
    assert_eq!(
        (&a["firmware"]["stored"], &a["firmware"]["running"]),
        (&Value::from("11.2.0.0"), &Value::from(FACTORY))
    );
    assert_eq!(a["reset_required"], true, "{doc}");
    assert_eq!(a["profile"]["next"]["name"], "NIC");

    let text = ocetool(&["--device", &dev, "apply", "--config", &config]);
    assert_eq!(text.code, 1);
    assert!(text.stdout.contains("error: cannot set the next-boot profile"), "{}", text.stdout);
}
