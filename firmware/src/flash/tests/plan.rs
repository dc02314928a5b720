//! The plan: compatibility, version policy, `force`, and each entry's action.

use super::on_flash;
use crate::build::{Layout, SectionSpec};
use crate::compat::Incompatibility;
use crate::dir::{ImageType, SectionEntry};
use crate::flash::plan::{REASON_DIFFERS, REASON_FORCE, REASON_NO_OPTYPE, REASON_OLD_IMAGE, planned};
use crate::flash::skyhawk;
use crate::flash::{Action, Policy, VersionChange, check_chip, plan};
use crate::ufi::{Section, UfiImage};
use crate::walk::WalkStep;
use crate::{FlashError, ImageBuilder, ImageError};

const ALLOW: Policy = Policy { allow_downgrade: true, force: false };

#[test]
fn an_upgrade_checks_every_section_in_walk_order() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let p = plan(&image, &on_flash(&image, "1.0.0.0"), Policy::default()).unwrap();
    assert_eq!(p.version_change, VersionChange::Upgrade);
    assert_eq!(p.image_version, "2.0.0.0");
    assert!(p.compatibility.compatible);
    let types: Vec<u32> = p.sections.iter().map(|s| s.section.image_type.raw()).collect();
    assert_eq!(types, [0xA0, 0xB0, 0xE2, 0x20, 0x10, 0xD2], "directory order, directory last");
    for s in &p.sections {
        assert_eq!((s.action, s.reason, s.old_image), (Action::Flash, REASON_DIFFERS, false));
    }
    let fw = &p.sections[0];
    assert_eq!((fw.optype, fw.offset, fw.bytes), (Some(0), 0x40000, 0x80000));
    assert_eq!(p.max_bytes(), p.sections.iter().map(|s| u64::from(s.bytes)).sum::<u64>());
    assert!(p.matches(&image));
    let json = serde_json::to_value(&p.sections[0]).unwrap();
    assert_eq!(json["type"], 0xA0);
    assert_eq!(json["name"], "firmware");
    assert_eq!(json["action"], "flash");
}

#[test]
fn the_same_version_is_planned_with_crc_checks_and_needs_no_flag() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let p = plan(&image, &on_flash(&image, "2.0.0.0"), Policy::default()).unwrap();
    assert_eq!(p.version_change, VersionChange::Same);
    assert!(p.sections.iter().all(|s| s.action == Action::Flash));
}

#[test]
fn a_downgrade_is_refused_unless_allowed() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let err = plan(&image, &on_flash(&image, "10.0.0.0"), Policy { allow_downgrade: false, force: true }).unwrap_err();
    let FlashError::Image(ImageError::Downgrade { image: i, stored }) = &err else { panic!("{err:?}") };
    assert_eq!((i.as_str(), stored.as_str()), ("2.0.0.0", "10.0.0.0"), "numeric order, not text");
    assert!(err.to_string().contains("older than the 10.0.0.0 on flash"), "{err}");
    let p = plan(&image, &on_flash(&image, "10.0.0.0"), ALLOW).unwrap();
    assert_eq!(p.version_change, VersionChange::Downgrade);
}

#[test]
fn unordered_versions_need_allow_downgrade_and_an_empty_stored_version_does_not() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let err = plan(&image, &on_flash(&image, "custom-build"), Policy::default()).unwrap_err();
    assert!(matches!(err, FlashError::Image(ImageError::VersionUnordered { .. })), "{err:?}");
    assert_eq!(
        plan(&image, &on_flash(&image, "custom-build"), ALLOW).unwrap().version_change,
        VersionChange::Unordered
    );
    assert_eq!(
        plan(&image, &on_flash(&image, ""), Policy::default()).unwrap().version_change,
        VersionChange::NoneOnFlash
    );
}

#[test]
fn force_writes_every_section_and_nothing_else_changes() {
    let file = ImageBuilder::new("2.0.0.0").build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let force = Policy { allow_downgrade: false, force: true };
    let p = plan(&image, &on_flash(&image, "2.0.0.0"), force).unwrap();
    assert!(p.sections.iter().all(|s| (s.action, s.reason) == (Action::Flash, REASON_FORCE)));
    // force is not allow_downgrade.
    assert!(matches!(
        plan(&image, &on_flash(&image, "3.0.0.0"), force),
        Err(FlashError::Image(ImageError::Downgrade { .. }))
    ));
}

#[test]
fn incompatible_images_are_refused_whatever_the_policy() {
    let everything = Policy { allow_downgrade: true, force: true };
    let be3 = ImageBuilder::new("2.0.0.0").chip_char(b'3').build().unwrap();
    let be3 = UfiImage::parse(&be3).unwrap();
    let err = plan(&be3, &on_flash(&be3, "1.0.0.0"), everything).unwrap_err();
    assert!(
        matches!(err, FlashError::Image(ImageError::Incompatible(Incompatibility::WrongChip { chip_char: b'3', .. }))),
        "{err:?}"
    );

    let file = ImageBuilder::new("2.0.0.0").asic_type_rev(0x10).build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let newer_chip = super::AdapterState { asic_rev: 0x11, ..on_flash(&image, "1.0.0.0") };
    let err = plan(&image, &newer_chip, everything).unwrap_err();
    assert!(
        matches!(
            err,
            FlashError::Image(ImageError::Incompatible(Incompatibility::AsicRevisionTooLow {
                image_rev: 0x10,
                adapter_rev: 0x11
            }))
        ),
        "{err:?}"
    );
    let lancer = super::AdapterState { chip: oce_pci::Chip::Lancer, ..on_flash(&image, "1.0.0.0") };
    let err = plan(&image, &lancer, everything).unwrap_err();
    assert!(matches!(err, FlashError::Image(ImageError::Incompatible(Incompatibility::NotUfiChip { .. }))), "{err:?}");
    assert_eq!(
        check_chip(oce_pci::Chip::Lancer).unwrap_err().to_string(),
        "cannot flash a lancer adapter: Lancer adapters are not supported; ocetool flashes OCe14000 (Skyhawk) adapters \
         only"
    );
}

#[test]
fn lancer_be3_and_be2_adapters_are_refused() {
    let file = ImageBuilder::new("2.0.0.0").chip_char(b'3').build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let be3 = super::AdapterState { chip: oce_pci::Chip::Be3, ..on_flash(&image, "1.0.0.0") };
    let err = plan(&image, &be3, ALLOW).unwrap_err();
    assert!(matches!(err, FlashError::UnsupportedChip { chip: oce_pci::Chip::Be3, .. }), "{err:?}");
    assert!(matches!(check_chip(oce_pci::Chip::Be2), Err(FlashError::UnsupportedChip { .. })));
    assert!(check_chip(oce_pci::Chip::Skyhawk).is_ok());
}

#[test]
fn old_format_and_unmapped_entries() {
    let file = ImageBuilder::new("2.0.0.0").old_image_optypes(true).build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let p = plan(&image, &on_flash(&image, "1.0.0.0"), Policy::default()).unwrap();
    assert!(p.sections.iter().all(|s| s.old_image && (s.action, s.reason) == (Action::Flash, REASON_OLD_IMAGE)));

    let mut layout = Layout::small();
    layout.sections.insert(1, SectionSpec::new(ImageType::FirmwareFcoe, 0x160000, 0x1000));
    let file = ImageBuilder::new("2.0.0.0").layout(layout).build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let p = plan(&image, &on_flash(&image, "1.0.0.0"), Policy::default()).unwrap();
    let fcoe = &p.sections[1];
    assert_eq!(fcoe.section.image_type, ImageType::FirmwareFcoe);
    assert_eq!((fcoe.action, fcoe.reason, fcoe.optype), (Action::SkipUnsupported, REASON_NO_OPTYPE, None));
    assert_eq!(p.candidates().count(), 6);
}

#[test]
fn a_plan_only_fits_its_own_image() {
    let a = ImageBuilder::new("2.0.0.0").build().unwrap();
    let b = ImageBuilder::new("2.0.0.0").layout(Layout::full()).build().unwrap();
    let (a, b) = (UfiImage::parse(&a).unwrap(), UfiImage::parse(&b).unwrap());
    let p = plan(&a, &on_flash(&a, "1.0.0.0"), Policy::default()).unwrap();
    let err = plan(&b, &on_flash(&a, "1.0.0.0"), Policy::default()).unwrap_err();
    assert!(matches!(err, FlashError::PlanMismatch), "an adapter state read for another image: {err:?}");
    assert!(!p.matches(&b));
    let mut fake = super::fake::Fake::erased(16 << 20, &b);
    let err = skyhawk::run(&mut fake, &b, &p, &mut crate::flash::NoProgress).unwrap_err();
    assert!(matches!(err, FlashError::PlanMismatch), "{err:?}");
    assert!(fake.log.is_empty(), "nothing sent");
}

#[test]
fn a_section_past_the_32_bit_address_space_is_refused() {
    let entry = SectionEntry::new(ImageType::FirmwareIscsi, 0xFFFF_F000, 0x2000, "2.0.0.0");
    let data = [0u8; 4];
    let step = WalkStep {
        section: Section { index: 3, entry: &entry, file_offset: 0, data: &data },
        optype: entry.effective_optype(),
        old_image: false,
    };
    let flash = crate::flash::OnFlash { mode: crate::flash::FlashMode::Offset, directory: None, unreadable: None };
    let err = planned(&step, Policy::default(), None, &flash).unwrap_err();
    let FlashError::SectionPastAddressSpace { section, end } = err else { panic!("{err:?}") };
    assert_eq!((section.index, end), (3, 0x1_0000_1000));
    let entry = SectionEntry::new(ImageType::FirmwareIscsi, 0xFFFF_E000, 0x2000, "2.0.0.0");
    let step = WalkStep { section: Section { entry: &entry, ..step.section }, ..step };
    assert!(planned(&step, Policy::default(), None, &flash).is_ok(), "ending exactly at 2^32 is fine");
}
