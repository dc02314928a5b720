//! The compatibility rules of ufi-firmware.md §1.5, case by case.

use super::*;

fn sh(rev: u8) -> ImageTarget {
    ImageTarget { chip_char: b'4', asic_type_rev: rev }
}

fn skyhawk(rev: u8) -> Adapter {
    Adapter::new(Chip::Skyhawk, u32::from(rev))
}

#[test]
fn build_char_names_the_chip() {
    assert_eq!(chip_from_build_char(b'2'), Some(Chip::Be2));
    assert_eq!(chip_from_build_char(b'3'), Some(Chip::Be3));
    assert_eq!(chip_from_build_char(b'4'), Some(Chip::Skyhawk));
    assert_eq!(chip_from_build_char(b'5'), None);
    assert_eq!(Adapter::new(Chip::Skyhawk, 0xABCD_0111).asic_rev, 0x11, "low byte of asic_revision");
}

#[test]
fn skyhawk_same_or_newer_revision_is_accepted_by_both() {
    for (image, chip) in [(0x10, 0x10), (0x12, 0x11), (0x0F, 0x0F), (0x0F, 0x00)] {
        let r = assess(sh(image), skyhawk(chip));
        assert!(r.compatible && r.freebsd_accepts, "{image:#x} on {chip:#x}");
        assert_eq!(r.disagreement, None);
    }
    assert_eq!(assess(sh(0x10), skyhawk(0x10)).freebsd_ufi_type, Some(11));
    assert_eq!(assess(sh(0x0F), skyhawk(0x0F)).freebsd_ufi_type, Some(4));
}

#[test]
fn linux_rejects_0x10_image_on_0x11_chip_freebsd_accepts() {
    assert_eq!(
        check_linux(sh(0x10), skyhawk(0x11)),
        Err(Incompatibility::AsicRevisionTooLow { image_rev: 0x10, adapter_rev: 0x11 })
    );
    let r = assess(sh(0x10), skyhawk(0x11));
    assert!(!r.compatible);
    assert!(r.freebsd_accepts);
    assert_eq!(r.reason.as_deref(), Some("the image targets ASIC revision 0x10, below the adapter's 0x11"));
    assert!(r.disagreement.unwrap().contains("UFI type 11"));
}

#[test]
fn a0_image_on_b0_chip_is_refused_by_both() {
    assert!(check_linux(sh(0x0F), skyhawk(0x10)).is_err());
    assert_eq!(check_freebsd(sh(0x0F), skyhawk(0x10)), Err("Cant load SH A0 UFI on B0"));
    assert_eq!(assess(sh(0x0F), skyhawk(0x10)).disagreement, None);
}

#[test]
fn wrong_chip_is_refused() {
    let be3 = ImageTarget { chip_char: b'3', asic_type_rev: 0x10 };
    let err = check_linux(be3, skyhawk(0x10)).unwrap_err();
    assert_eq!(err, Incompatibility::WrongChip { chip_char: b'3', adapter: Chip::Skyhawk });
    assert_eq!(err.to_string(), "the image is for be3 (build[0] '3'), the adapter is skyhawk");
    assert!(!assess(be3, skyhawk(0x10)).freebsd_accepts);
    let err = crate::ImageError::from(err);
    assert!(matches!(err, crate::ImageError::Incompatible(Incompatibility::WrongChip { .. })));
    let junk = ImageTarget { chip_char: b'x', asic_type_rev: 0x10 };
    assert!(check_linux(junk, skyhawk(0x10)).unwrap_err().to_string().contains("names no known chip"));
}

#[test]
fn be3_and_be2_rules_and_disagreements() {
    let be3 = |rev| ImageTarget { chip_char: b'3', asic_type_rev: rev };
    let adapter = |rev| Adapter::new(Chip::Be3, rev);
    assert_eq!(check_linux(be3(0), adapter(0x02)), Ok(()));
    assert_eq!(check_linux(be3(0), adapter(0x10)), Err(Incompatibility::PreRevisionImage { adapter_rev: 0x10 }));
    // FreeBSD checks only build[0] on BE3.
    let r = assess(be3(0), adapter(0x10));
    assert!(!r.compatible && r.freebsd_accepts);
    assert_eq!(r.freebsd_ufi_type, Some(3));
    assert_eq!(assess(be3(0x10), adapter(0x10)).freebsd_ufi_type, Some(10));
    // BE2: Linux flashes, FreeBSD refuses.
    let be2 = ImageTarget { chip_char: b'2', asic_type_rev: 0 };
    let r = assess(be2, Adapter::new(Chip::Be2, 0));
    assert!(r.compatible && !r.freebsd_accepts);
    assert!(r.disagreement.unwrap().contains("Flashing not supported for BE2 yet."));
    assert_eq!(
        check_linux(sh(0x10), Adapter::new(Chip::Lancer, 0)),
        Err(Incompatibility::NotUfiChip { adapter: Chip::Lancer })
    );
}
