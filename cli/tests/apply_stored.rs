//! `ocetool apply` on an adapter that arrives with a profile or a firmware stored but not running:
//! a boot hook cut short after it stored the RoCE profile, or a `fw update` run without a reset.
//! With `activate = "reset"`, `apply` activates what is stored although it stores nothing itself
//! (else the card boots in NIC mode forever); with `activate = "next-boot"` it reports it pending
//! and leaves it; a rule that asks for what runs cancels the stored change and needs no reset.
//! Every expectation is a value the test chose: the profile it asked for, the version it built
//! into the image.

mod common;

use std::path::Path;

use common::{Run, fresh, ocetool};
use oce_emulator::assumptions::FACTORY_FIRMWARE_VERSION as FACTORY;
use oce_firmware::build::ImageBuilder;
use serde_json::Value;

/// The version the test builds into its image.
const NEW: &str = "11.2.0.0";

fn write_config(dir: &Path, text: &str) -> String {
    let path = dir.join("ocetool.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn apply(dev: &str, config: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--device", dev, "apply", "--config", config, "--json"];
    args.extend_from_slice(extra);
    let run: Run = ocetool(&args);
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
    run.json()
}

fn query(dev: &str) -> Value {
    ocetool(&["--device", dev, "query", "--json"]).json()
}

fn actions(doc: &Value) -> Vec<String> {
    doc["adapters"][0]["actions"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_owned()).collect()
}

/// Stores the RoCE profile as the next-boot one, without a reset: RoCE stored, NIC running.
fn store_roce(dev: &str) {
    let run = ocetool(&["--device", dev, "set-profile", "roce", "--yes", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let q = query(dev);
    assert_eq!(
        (&q["profile"]["next"]["roce"], &q["profile"]["active"]["roce"]),
        (&Value::Bool(true), &Value::Bool(false))
    );
    assert_eq!(q["roce_enabled"], false);
}

/// Writes an image of firmware [`NEW`] beside the configuration and flashes it without a reset:
/// [`NEW`] stored, the factory firmware running. Returns the image's path.
fn store_new_firmware(dev: &str, dir: &Path) -> String {
    let image = dir.join("new.ufi");
    std::fs::write(&image, ImageBuilder::new(NEW).build().unwrap()).unwrap();
    let image = image.display().to_string();
    let run = ocetool(&["--device", dev, "fw", "update", &image, "--yes", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let q = query(dev);
    assert_eq!((q["firmware"]["stored"].as_str(), q["firmware"]["running"].as_str()), (Some(NEW), Some(FACTORY)));
    image
}

#[test]
fn a_stored_profile_is_activated_by_reset_though_apply_stores_nothing() {
    let (d, dev) = fresh();
    store_roce(&dev);
    let config =
        write_config(d.path(), "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nactivate = \"reset\"\n");

    let dry = apply(&dev, &config, &["--dry-run"]);
    let acts = actions(&dry);
    assert_eq!(acts.len(), 2, "{acts:?}");
    assert!(acts[0].ends_with("is already the next-boot profile"), "{acts:?}");
    assert_eq!(acts[1], "would reset the chip so that the stored state runs");
    assert_eq!(dry["changed"], true, "the real run would reset the chip: {dry}");
    assert_eq!(query(&dev)["roce_enabled"], false, "dry run: nothing ran");

    let doc = apply(&dev, &config, &[]);
    let a = &doc["adapters"][0];
    let acts = actions(&doc);
    assert_eq!(acts.len(), 2, "{acts:?}");
    assert!(acts[0].ends_with("is already the next-boot profile"), "{acts:?}");
    assert!(acts[1].starts_with("reset the chip: "), "{acts:?}");
    assert_eq!((&a["changed"], &a["reset_required"]), (&Value::Bool(true), &Value::Bool(false)), "{doc}");
    assert_eq!((&a["roce_enabled"], &a["profile"]["active"]["roce"]), (&Value::Bool(true), &Value::Bool(true)));
    let q = query(&dev);
    assert_eq!((&q["roce_enabled"], &q["reset_required"]), (&Value::Bool(true), &Value::Bool(false)), "{q}");

    let again = apply(&dev, &config, &[]);
    assert_eq!((&again["changed"], &again["reset_required"]), (&Value::Bool(false), &Value::Bool(false)), "{again}");
}

#[test]
fn a_stored_profile_with_next_boot_is_reported_pending_and_left() {
    let (d, dev) = fresh();
    store_roce(&dev);
    let config = write_config(d.path(), "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n");
    let doc = apply(&dev, &config, &[]);
    let a = &doc["adapters"][0];
    let acts = actions(&doc);
    assert_eq!(acts.len(), 2, "{acts:?}");
    assert!(acts[0].ends_with("is already the next-boot profile"), "{acts:?}");
    assert_eq!(acts[1], "the stored state runs after the next reset or reboot (activate = \"next-boot\")");
    assert_eq!((&a["changed"], &a["reset_required"]), (&Value::Bool(false), &Value::Bool(true)), "{doc}");
    assert_eq!(doc["reset_required"], true);
    let q = query(&dev);
    assert_eq!((&q["roce_enabled"], &q["profile"]["next"]["roce"]), (&Value::Bool(false), &Value::Bool(true)), "{q}");
}

#[test]
fn a_stored_firmware_is_activated_by_reset_though_apply_flashes_nothing() {
    let (d, dev) = fresh();
    let image = store_new_firmware(&dev, d.path());
    let config = write_config(
        d.path(),
        &format!("[[adapter]]\nmatch = {{ all = true }}\nfirmware = \"{image}\"\nactivate = \"reset\"\n"),
    );
    let flash_before = std::fs::read(d.path().join("emu/flash.bin")).unwrap();

    let doc = apply(&dev, &config, &[]);
    let a = &doc["adapters"][0];
    let acts = actions(&doc);
    assert_eq!(acts.len(), 2, "{acts:?}");
    assert_eq!(acts[0], format!("firmware {NEW} is already stored"));
    assert!(
        acts[1].starts_with("reset the chip: ") && acts[1].ends_with(&format!("firmware {NEW} now run")),
        "{acts:?}"
    );
    assert_eq!((&a["changed"], &a["reset_required"]), (&Value::Bool(true), &Value::Bool(false)), "{doc}");
    assert_eq!((a["firmware"]["running"].as_str(), a["firmware"]["stored"].as_str()), (Some(NEW), Some(NEW)));
    assert!(std::fs::read(d.path().join("emu/flash.bin")).unwrap() == flash_before, "nothing was flashed again");
    assert_eq!(query(&dev)["firmware"]["running"], NEW);
}

#[test]
fn a_stored_firmware_with_next_boot_is_reported_pending_and_left() {
    let (d, dev) = fresh();
    let image = store_new_firmware(&dev, d.path());
    let config = write_config(d.path(), &format!("[[adapter]]\nmatch = {{ all = true }}\nfirmware = \"{image}\"\n"));
    let doc = apply(&dev, &config, &[]);
    let a = &doc["adapters"][0];
    assert_eq!(
        actions(&doc),
        [
            format!("firmware {NEW} is already stored"),
            "the stored state runs after the next reset or reboot (activate = \"next-boot\")".to_owned()
        ]
    );
    assert_eq!((&a["changed"], &a["reset_required"]), (&Value::Bool(false), &Value::Bool(true)), "{doc}");
    assert_eq!((a["firmware"]["running"].as_str(), a["firmware"]["stored"].as_str()), (Some(FACTORY), Some(NEW)));
}

#[test]
fn a_rule_for_another_part_still_activates_what_is_stored() {
    // Firmware and profile both stored by earlier runs; the rule names the profile only. The
    // reset runs everything that is stored: the adapter never keeps half of it pending.
    let (d, dev) = fresh();
    store_new_firmware(&dev, d.path());
    store_roce(&dev);
    let config =
        write_config(d.path(), "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nactivate = \"reset\"\n");
    let doc = apply(&dev, &config, &[]);
    let a = &doc["adapters"][0];
    assert_eq!(
        (&a["changed"], &a["reset_required"], &a["roce_enabled"]),
        (&Value::Bool(true), &Value::Bool(false), &Value::Bool(true))
    );
    assert_eq!(a["firmware"]["running"], NEW, "{doc}");
}

#[test]
fn a_rule_asking_for_what_runs_cancels_the_stored_profile_without_a_reset() {
    let (d, dev) = fresh();
    store_roce(&dev);
    let config =
        write_config(d.path(), "[[adapter]]\nmatch = { all = true }\nprofile = \"nic\"\nactivate = \"reset\"\n");
    let doc = apply(&dev, &config, &[]);
    let a = &doc["adapters"][0];
    let acts = actions(&doc);
    assert_eq!(acts.len(), 1, "the change is cancelled, nothing is left to reset for: {acts:?}");
    assert!(acts[0].starts_with("made NIC") && acts[0].ends_with("the next-boot profile"), "{acts:?}");
    assert_eq!((&a["changed"], &a["reset_required"]), (&Value::Bool(true), &Value::Bool(false)), "{doc}");
    let q = query(&dev);
    assert_eq!((&q["profile"]["next"]["roce"], &q["roce_enabled"]), (&Value::Bool(false), &Value::Bool(false)), "{q}");
}
