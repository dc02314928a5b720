//! The inspect report, checked through its JSON form (the CLI contract of design.md §7).

use serde_json::{Value, json};

use super::*;
use crate::build::{EntryPatch, ImageBuilder};
use crate::dir::ImageType;

const V: &str = "11.1.172.23";

fn json_of(bytes: &[u8]) -> Value {
    serde_json::to_value(inspect(bytes)).unwrap()
}

#[test]
fn valid_image_report() {
    let v = json_of(&ImageBuilder::new(V).build().unwrap());
    assert_eq!(v["flashable"], true);
    assert_eq!(v["chip"], "skyhawk");
    assert_eq!(v["build"], "4 11.1.172.23");
    assert_eq!(v["version"], V);
    assert_eq!(v["asic_type_rev"], 16);
    assert_eq!(v["header_format"], "g3");
    assert_eq!(v["payload_base"], 176);
    assert_eq!(v["firmware_version"], V);
    assert_eq!(v["directory"]["cookie"], "split");
    assert_eq!(v["image_headers"], json!([{"index": 0, "imageid": 1, "version": V}]));
    assert_eq!(v["problems"], json!([]));
    let sections = v["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 6);
    let fw = &sections[0];
    assert_eq!(fw["type"], 0xA0);
    assert_eq!(fw["name"], "firmware");
    assert_eq!(fw["optype"], 0);
    assert_eq!(fw["offset"], 0x4_0000);
    assert_eq!(fw["size"], 0x8_0000);
    assert_eq!(fw["crc_ok"], true);
    assert_eq!(fw["version"], V);
    assert_eq!(fw["option_rom"], Value::Null);
    assert!(sections.iter().all(|s| s["crc_ok"] == true && s["crc_stored"] == s["crc_computed"]));
    let pxe = &sections[3];
    assert_eq!(pxe["type"], 0x20);
    let images = pxe["option_rom"]["images"].as_array().unwrap();
    assert_eq!(images.len(), 2);
    assert_eq!(images[0]["vendor_id"], "0x10df");
    assert_eq!(images[0]["device_id"], "0x0720");
    assert_eq!(images[0]["code_type"], 0);
    assert_eq!(images[1]["code_type"], 3);
    assert_eq!(images[1]["last"], true);
    assert_eq!(images[1]["pe"]["machine"], 0x8664);
    assert_eq!(images[1]["pe"]["subsystem"], 11);
}

/// The CRC model is the emulator's assumption, not the real adapter's algorithm: a mismatch is
/// reported, but it does not make an image unflashable (the adapter checks with its own).
#[test]
fn bad_crc_is_a_warning_not_a_refusal() {
    let report = inspect(&ImageBuilder::new(V).corrupt_crc(ImageType::BootCode).build().unwrap());
    assert!(report.flashable);
    let bad: Vec<_> = report.sections.iter().filter(|s| s.crc_ok == Some(false)).map(|s| s.image_type).collect();
    assert_eq!(bad, [0xE2]);
    assert_eq!(report.problems.len(), 1);
    let p = &report.problems[0];
    assert_eq!((p.kind, p.severity, p.section), ("crc_mismatch", Severity::Warning, Some(2)));
    assert!(p.message.contains("CRC model"), "{}", p.message);
}

#[test]
fn wrong_chip_is_reported() {
    let report = inspect(&ImageBuilder::new(V).chip_char(b'3').build().unwrap());
    assert!(!report.flashable);
    assert_eq!(report.chip, Some(Chip::Be3));
    assert_eq!(report.problems[0].kind, "not_skyhawk");
}

#[test]
fn broken_images_report_what_they_can() {
    let v = json_of(&[]);
    assert_eq!(v["file_len"], 0);
    assert_eq!(v["flashable"], false);
    assert_eq!(v["chip"], Value::Null);
    assert_eq!(v["problems"][0]["kind"], "unflashable");
    assert_eq!(v["problems"][0]["message"], "the image file is empty");

    let report = inspect(&ImageBuilder::new(V).cookie(None).build().unwrap());
    assert!(!report.flashable && report.directory.is_none() && report.sections.is_empty());
    assert_eq!(report.version.as_deref(), Some(V));
    assert!(report.problems[0].message.starts_with("no flash directory cookie found from byte 176"));

    // A section past the end: the others are still listed and checked.
    let report = inspect(&ImageBuilder::new(V).patch_entry(ImageType::Ncsi, EntryPatch::PastEof).build().unwrap());
    assert!(!report.flashable);
    let crc: Vec<_> = report.sections.iter().map(|s| (s.image_type, s.crc_ok)).collect();
    assert_eq!(crc[4], (0x10, None));
    assert_eq!(crc.iter().filter(|(_, ok)| *ok == Some(true)).count(), 5);

    let report = inspect(&ImageBuilder::new(V).num_imgs_field(u32::MAX).build().unwrap());
    assert_eq!(report.num_imgs, Some(u32::MAX));
    assert!(report.image_headers.len() <= MAX_LISTED_IMAGE_HEADERS);
}

#[test]
fn inspect_file_maps_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.ufi");
    std::fs::write(&path, ImageBuilder::new(V).build().unwrap()).unwrap();
    assert!(inspect_file(&path).unwrap().flashable);
    assert!(inspect_file(&dir.path().join("missing")).is_err());
}
