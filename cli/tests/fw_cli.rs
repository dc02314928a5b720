//! Firmware updates through the CLI binary: `fw update` of a new image on a fresh emulator, the rerun that
//! changes nothing, activation by reset, every rejection with its exit code, the adapter's own CRC
//! refusal, and a flash killed in mid-section.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{CHUNK_COUNTER, OCETOOL, Run, chunks_received, emu_arg, ocetool, wait_until};
use oce_firmware::build::{EntryPatch, ImageBuilder};
use oce_firmware::dir::ImageType;
use serde_json::Value;

/// The emulator's factory firmware version (emulator/src/assumptions/mod.rs).
const FACTORY: &str = "11.1.172.23";
const NEW: &str = "11.2.0.9";

struct Setup {
    dir: tempfile::TempDir,
    dev: String,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let dev = emu_arg(&dir.path().join("emu"));
        assert_eq!(ocetool(&["--device", &dev, "emulator", "init"]).code, 0);
        Self { dir, dev }
    }

    fn image(&self, name: &str, builder: ImageBuilder) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, builder.build().unwrap()).unwrap();
        path
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--device", self.dev.as_str()];
        all.extend_from_slice(args);
        all.push("--json");
        let r = ocetool(&all);
        assert_eq!(r.code, 0, "{args:?}:\n{}{}", r.stdout, r.stderr);
        r.json()
    }

    fn update(&self, file: &Path, extra: &[&str]) -> Run {
        let mut args = vec!["--device", self.dev.as_str(), "fw", "update", file.to_str().unwrap(), "--yes", "--json"];
        args.extend_from_slice(extra);
        ocetool(&args)
    }

    fn flash(&self) -> Vec<u8> {
        std::fs::read(self.dir.path().join("emu/flash.bin")).unwrap()
    }
}

#[test]
fn new_image_flashes_then_the_rerun_changes_nothing_then_reset_runs_it() {
    let s = Setup::new();
    let file = s.image("new.ufi", ImageBuilder::new(NEW));
    let r = s.update(&file, &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let u = r.json();
    assert_eq!(u["changed"], true);
    assert_eq!(u["reset_required"], true);
    let sections = u["sections"].as_array().unwrap();
    assert!(!sections.is_empty());
    for sec in sections {
        assert!(sec["type"].is_u64() && sec["name"].is_string() && sec["bytes"].is_u64(), "{sec}");
    }
    let flashed: Vec<&str> =
        sections.iter().filter(|x| x["action"] == "flashed").map(|x| x["name"].as_str().unwrap()).collect();
    assert!(flashed.contains(&"firmware") && flashed.contains(&"flash directory"), "{flashed:?}");
    assert_eq!((u["firmware"]["running"].as_str(), u["firmware"]["stored"].as_str()), (Some(FACTORY), Some(NEW)));

    let q = s.json(&["query"]);
    assert_eq!((q["firmware"]["running"].as_str(), q["firmware"]["stored"].as_str()), (Some(FACTORY), Some(NEW)));
    assert_eq!(q["reset_required"], true);

    // The same file again: every section already on flash, nothing written.
    let again = s.update(&file, &[]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let again = again.json();
    assert_eq!(again["changed"], false);
    assert!(again["sections"].as_array().unwrap().iter().all(|x| x["action"] == "skipped_same"), "{again:#}");

    let reset = s.json(&["reset", "--yes"]);
    assert_eq!(reset["firmware"]["running"], NEW);
    let q = s.json(&["query"]);
    assert_eq!((q["firmware"]["running"].as_str(), q["firmware"]["stored"].as_str()), (Some(NEW), Some(NEW)));
    assert_eq!(q["reset_required"], false);
}

#[test]
fn without_yes_in_a_script_nothing_is_written() {
    let s = Setup::new();
    let file = s.image("new.ufi", ImageBuilder::new(NEW));
    let before = s.flash();
    let r = ocetool(&["--device", &s.dev, "fw", "update", file.to_str().unwrap()]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert_eq!(s.flash(), before);
    let dry = s.json(&["fw", "update", file.to_str().unwrap(), "--dry-run"]);
    assert_eq!((dry["dry_run"].as_bool(), dry["changed"].as_bool()), (Some(true), Some(true)));
    // What a real run would do, in the same words as a real run's report.
    let actions: Vec<&str> =
        dry["sections"].as_array().unwrap().iter().map(|x| x["action"].as_str().unwrap()).collect();
    assert!(actions.contains(&"flashed"), "{actions:?}");
    assert!(actions.iter().all(|a| ["flashed", "skipped_same", "skipped_unsupported"].contains(a)), "{actions:?}");
    assert_eq!(s.flash(), before, "a dry run writes nothing");
}

#[test]
fn older_images_need_allow_downgrade() {
    let s = Setup::new();
    let old = s.image("old.ufi", ImageBuilder::new("10.6.193.31"));
    let r = s.update(&old, &[]);
    assert_eq!(r.code, 4);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("--allow-downgrade"));
    let r = s.update(&old, &["--allow-downgrade"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["firmware"]["stored"], "10.6.193.31");
}

/// Each image `fw update` must refuse, with the exit code and a phrase of the one-line message.
#[test]
fn every_rejection_has_its_exit_code_and_touches_nothing() {
    let s = Setup::new();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("wrong chip (build '3')", ImageBuilder::new(NEW).chip_char(b'3').build().unwrap(), "not compatible"),
        ("asic revision too low", ImageBuilder::new(NEW).asic_type_rev(0x0F).build().unwrap(), "not compatible"),
        ("no cookie", ImageBuilder::new(NEW).cookie(None).build().unwrap(), "cookie"),
        ("truncated file", ImageBuilder::new(NEW).truncate(100_000).build().unwrap(), "not a flashable image"),
        (
            "section past the end",
            ImageBuilder::new(NEW).patch_entry(ImageType::FirmwareIscsi, EntryPatch::PastEof).build().unwrap(),
            "not a flashable image",
        ),
        ("huge num_imgs", ImageBuilder::new(NEW).num_imgs_field(0x7FFF_FFFF).build().unwrap(), "not a flashable image"),
        ("empty file", Vec::new(), "not a flashable image"),
        ("more than 32 entries", ImageBuilder::new(NEW).num_images_field(33).build().unwrap(), "not a flashable image"),
    ];
    let before = s.flash();
    for (what, bytes, phrase) in cases {
        let path = s.dir.path().join("bad.ufi");
        std::fs::write(&path, &bytes).unwrap();
        let r = s.update(&path, &[]);
        assert_eq!(r.code, 4, "{what}: {}", r.stdout);
        let msg = r.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(msg.to_lowercase().contains(phrase), "{what}: {msg}");
        assert!(!msg.contains('\n'), "{what}: one line");
        assert_eq!(s.flash(), before, "{what}: flash untouched");
    }
}

#[test]
fn a_wrong_crc_trailer_is_refused_by_the_adapter_and_flash_is_untouched() {
    let s = Setup::new();
    let file = s.image("badcrc.ufi", ImageBuilder::new(NEW).corrupt_crc(ImageType::FirmwareIscsi));
    let inspect = s.json(&["fw", "inspect", file.to_str().unwrap()]);
    assert_eq!(inspect["flashable"], true, "the CRC model alone never refuses an image");
    let before = s.flash();
    let r = s.update(&file, &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let msg = r.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(msg.contains("CRC"), "{msg}");
    // The section the adapter refused is exactly as before.
    let fw = ImageBuilder::new(NEW).directory().entry(ImageType::FirmwareIscsi).unwrap().clone();
    let range = fw.offset as usize..(fw.offset + fw.pad_size) as usize;
    assert_eq!(s.flash()[range.clone()], before[range]);
    assert_eq!(s.json(&["query"])["firmware"]["stored"], FACTORY);
}

#[test]
fn a_flash_killed_in_mid_section_leaves_the_adapter_bootable_and_a_rerun_completes() {
    let s = Setup::new();
    let file = s.image("new.ufi", ImageBuilder::new(NEW));
    s.json(&["emulator", "fault", "set", "slow-flash=20", &format!("flash-fail-at={CHUNK_COUNTER}")]);
    let mut child = Command::new(OCETOOL)
        .args(["--device", &s.dev, "fw", "update", file.to_str().unwrap(), "--yes"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The firmware section (written first) is 512 KiB = 16 chunks of 20 ms: kill after two.
    let state = s.dir.path().join("emu");
    wait_until("the first chunks of the firmware section", || chunks_received(&state) >= 2);
    child.kill().unwrap();
    child.wait().unwrap();
    let received = chunks_received(&state);
    assert!((2..16).contains(&received), "the kill landed inside the firmware section: {received} chunks in");

    s.json(&["emulator", "fault", "clear", "--all"]);
    s.json(&["emulator", "power-cycle"]);
    let q = s.json(&["query"]);
    let running = q["firmware"]["running"].as_str().unwrap().to_owned();
    assert!(running == FACTORY || running == NEW, "boots old or new firmware, got {running}");

    let r = s.update(&file, &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    s.json(&["reset", "--yes"]);
    let q = s.json(&["query"]);
    assert_eq!((q["firmware"]["running"].as_str(), q["firmware"]["stored"].as_str()), (Some(NEW), Some(NEW)));
}

#[test]
fn build_and_inspect_from_the_cli() {
    let s = Setup::new();
    let out = s.dir.path().join("built.ufi");
    let b = s.json(&["fw", "build", "--version", NEW, "-o", out.to_str().unwrap()]);
    assert_eq!(b["version"], NEW);
    let i = s.json(&["fw", "inspect", out.to_str().unwrap()]);
    assert_eq!(i["chip"], "skyhawk");
    assert_eq!(i["version"], NEW);
    assert_eq!(i["flashable"], true);
    for sec in i["sections"].as_array().unwrap() {
        for key in ["type", "name", "optype", "offset", "size", "crc_ok"] {
            assert!(sec.get(key).is_some(), "{key} in {sec}");
        }
    }
    assert!(i["problems"].as_array().unwrap().is_empty());
    let rom = &i["sections"].as_array().unwrap().iter().find(|s| s["type"] == 0x20).unwrap()["option_rom"];
    assert_eq!((&rom["images"][0]["vendor_id"], &rom["images"][0]["device_id"]), (&"0x10df".into(), &"0x0720".into()));
    // Text writes the pair as lspci -n and `ocetool list` do.
    let text = ocetool(&["fw", "inspect", out.to_str().unwrap()]).stdout;
    assert!(text.contains("option ROM image at 0x0: x86 (legacy BIOS) 10df:0720 rev"), "{text}");
}

/// A layout whose firmware section covers both of the factory image's boot sections, with no
/// backup: no write order keeps a bootable copy when it is flashed over the factory image.
fn no_backup_over_both() -> oce_firmware::build::Layout {
    use oce_firmware::build::{Layout, SectionSpec};
    const KIB: u32 = 1 << 10;
    Layout {
        sections: vec![
            SectionSpec::new(ImageType::FirmwareIscsi, 256 * KIB, 1024 * KIB),
            SectionSpec::new(ImageType::BootCode, 64 * KIB, 128 * KIB),
            SectionSpec::new(ImageType::UfiDir, 0, 4 * KIB),
        ],
    }
}

#[test]
fn a_layout_change_dry_run_shows_the_write_order_and_its_safety() {
    let s = Setup::new();
    let full = s.image("full.ufi", ImageBuilder::new(NEW).layout(oce_firmware::build::Layout::full()));
    let r = s.update(&full, &["--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    let order: Vec<u64> = j["write_order"].as_array().unwrap().iter().map(|s| s["type"].as_u64().unwrap()).collect();
    assert_eq!(order, [0xA0, 0xB0, 0x20, 0x10, 0xD2, 0xE2], "the boot code over the old boot sections comes last");
    assert_eq!(j["safety"]["verdict"], "safe");
    assert_eq!(j["on_flash"]["directory"]["address"], 0);
    let boot = j["on_flash"]["directory"]["boot"].as_array().unwrap();
    assert!(boot.iter().all(|b| b["state"] == "good"), "{boot:?}");
    // The text form names the order too.
    let text = ocetool(&["--device", &s.dev, "fw", "update", full.to_str().unwrap(), "--dry-run"]);
    assert!(text.stdout.contains("Write order: a0, b0, 20, 10, d2, e2"), "{}", text.stdout);
}

#[test]
fn an_update_no_order_keeps_bootable_is_refused_with_4_and_force_flashes_it() {
    let s = Setup::new();
    let image = s.image("nobackup.ufi", ImageBuilder::new(NEW).layout(no_backup_over_both()));
    let before = s.flash();
    let r = ocetool(&["--device", &s.dev, "fw", "update", image.to_str().unwrap(), "--yes"]);
    assert_eq!(r.code, 4, "refused by a safety check: {}", r.stderr);
    let lines = r.message_lines();
    assert_eq!(lines.len(), 1, "one line: {}", r.stderr);
    assert!(lines[0].contains("no order of the writes keeps a bootable firmware"), "why: {}", lines[0]);
    assert!(lines[0].contains("fails POST at its next reset"), "the risk: {}", lines[0]);
    assert!(s.flash() == before, "nothing written");
    // fw verify --device says the same, as a reason.
    let v = ocetool(&["--device", &s.dev, "fw", "verify", image.to_str().unwrap(), "--json"]);
    assert_eq!(v.code, 4);
    assert!(v.json()["reasons"][0].as_str().unwrap().contains("no order of the writes"), "{}", v.stdout);

    let r = s.update(&image, &["--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["safety"]["verdict"], "unsafe");
    assert_eq!(s.json(&["reset", "--yes"])["firmware"]["running"], NEW);
}

#[test]
fn reset_refuses_an_unbootable_flash_until_the_update_is_rerun() {
    let s = Setup::new();
    let image = s.image("nobackup.ufi", ImageBuilder::new(NEW).layout(no_backup_over_both()));
    // --force writes the firmware section (32 chunks) over both old boot sections; the 33rd
    // chunk fails, so the old directory stays with both its boot sections overwritten.
    s.json(&["emulator", "fault", "set", "flash-fail-at=33"]);
    assert_eq!(s.update(&image, &["--force"]).code, 1);
    s.json(&["emulator", "fault", "clear", "--all"]);

    // doctor, fw verify and reset see it, read-only.
    let before = s.flash();
    let d = ocetool(&["--device", &s.dev, "doctor", "--json"]);
    let boot = d.json()["checks"].as_array().unwrap().iter().find(|c| c["id"] == "boot").cloned().unwrap();
    assert_eq!(boot["status"], "fail", "{boot}");
    assert!(boot["hint"].as_str().unwrap().contains("rerun `ocetool fw update FILE`"), "{boot}");
    let v = s.json(&["fw", "verify", image.to_str().unwrap()]);
    assert_eq!(v["flash_bootable"], "no");
    let r = ocetool(&["--device", &s.dev, "reset", "--yes"]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    let lines = r.message_lines();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(lines[0].contains("would not boot") && lines[0].contains("rerun `ocetool fw update FILE`"), "{}", lines[0]);
    assert!(lines[0].contains("--force"), "{}", lines[0]);
    assert!(s.flash() == before, "nothing written");
    assert_eq!(s.json(&["query"])["firmware"]["running"], FACTORY, "the firmware still runs: no reset happened");

    // The rerun needs no --force (there is no bootable copy left to keep) and repairs it.
    let r = s.update(&image, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["safety"]["verdict"], "nothing_to_keep");
    assert_eq!(s.json(&["fw", "verify", image.to_str().unwrap()])["flash_bootable"], "yes");
    let reset = s.json(&["reset", "--yes"]);
    assert_eq!(reset["firmware"]["running"], NEW);
    assert_eq!(reset["flash_bootable"], "yes");
}

#[test]
fn reset_force_resets_into_an_unbootable_flash_and_post_fails() {
    let s = Setup::new();
    let image = s.image("nobackup.ufi", ImageBuilder::new(NEW).layout(no_backup_over_both()));
    s.json(&["emulator", "fault", "set", "flash-fail-at=33"]);
    assert_eq!(s.update(&image, &["--force"]).code, 1);
    s.json(&["emulator", "fault", "clear", "--all"]);
    let r = ocetool(&["--device", &s.dev, "reset", "--yes", "--force"]);
    assert_eq!(r.code, 1, "the reset ran and POST failed: {}", r.stderr);
    assert!(r.stderr.contains("POST"), "{}", r.stderr);
}

#[test]
fn doctor_and_verify_pass_the_boot_sections_of_a_good_flash() {
    let s = Setup::new();
    let d = s.json(&["doctor"]);
    let boot = d["checks"].as_array().unwrap().iter().find(|c| c["id"] == "boot").cloned().unwrap();
    assert_eq!(boot["status"], "pass", "{boot}");
    assert!(boot["detail"].as_str().unwrap().contains("0xa0 (firmware) passes its CRC"), "{boot}");
    let image = s.image("new.ufi", ImageBuilder::new(NEW));
    let v = s.json(&["fw", "verify", image.to_str().unwrap()]);
    assert_eq!((v["ok"].as_bool(), v["flash_bootable"].as_str()), (Some(true), Some("yes")));
    assert_eq!(s.json(&["reset", "--dry-run"])["flash_bootable"], "yes");
}

/// On a terminal, `fw update` draws one progress line, redrawn in place (carriage return and
/// erase-line) with the section, the bar and the bytes, and erased at the end; the outcome is
/// printed after it. `script` (util-linux) gives the run a pseudo-terminal.
#[test]
fn a_terminal_sees_a_progress_bar_that_is_erased_at_the_end() {
    let s = Setup::new();
    let file = s.image("new.ufi", ImageBuilder::new(NEW));
    let command = format!("'{OCETOOL}' --device '{}' fw update '{}' --yes", s.dev, file.display());
    let out = Command::new("script")
        .args(["--quiet", "--return", "--command", &command, "/dev/null"])
        .env_remove("OCETOOL_DEVICE")
        .stdin(Stdio::null())
        .output()
        .expect("script (util-linux) runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let erase = "\r\u{1b}[2K";
    let draws: Vec<&str> = text.split(erase).skip(1).collect();
    assert!(draws.len() >= 2, "a bar drawn and erased:\n{text:?}");
    let first = draws[0];
    assert!(first.starts_with("firmware") || first.contains(" ["), "{first:?}");
    assert!(first.contains(" [") && first.contains("] ") && first.contains(" B/"), "a bar with bytes: {first:?}");
    let last = draws.last().unwrap();
    assert!(last.trim_start().starts_with(&format!("Flashed {NEW}")), "the outcome after the erased bar: {last:?}");
}
