//! The write order against layouts built by hand: the directory order where it is safe, a
//! reordering where it is not, the refusals, and the repair of a flash that does not boot.

use crate::ImageBuilder;
use crate::build::{Layout, SectionSpec};
use crate::dir::ImageType;
use crate::flash::onflash::{BootState, OnFlash, describe};
use crate::flash::order::{Piece, Safety, order};
use crate::flash::{FlashMode, Region, SectionRef};

/// The flash holding `layout`, its directory at 0, its boot sections in `states` (0xA0, 0xB0).
fn flash(layout: Layout, states: [BootState; 2]) -> OnFlash {
    let mut dir = describe(ImageBuilder::new("1.0.0.0").layout(layout).directory(), Some(0));
    for (b, state) in dir.boot.iter_mut().zip(states) {
        b.state = state;
    }
    OnFlash { mode: FlashMode::Offset, directory: Some(dir), unreadable: None }
}

/// Every section of `layout`, all to write.
fn pieces(layout: &Layout) -> Vec<Piece> {
    layout
        .sections
        .iter()
        .enumerate()
        .map(|(pos, s)| Piece {
            pos,
            region: Region {
                section: SectionRef { index: pos, image_type: s.image_type },
                offset: s.offset,
                bytes: s.pad_size,
            },
            write: true,
            preempts: false,
        })
        .collect()
}

fn types(layout: &Layout, order: &[usize]) -> Vec<u32> {
    order.iter().map(|&i| layout.sections[i].image_type.raw()).collect()
}

const GOOD: [BootState; 2] = [BootState::Good, BootState::Good];

#[test]
fn the_same_layout_is_written_in_directory_order() {
    let new = Layout::small();
    let o = order(&flash(Layout::small(), GOOD), &pieces(&new), Some(0));
    assert_eq!(o.safety, Safety::Safe);
    assert_eq!(types(&new, &o.order), [0xA0, 0xB0, 0xE2, 0x20, 0x10, 0xD2]);
}

#[test]
fn with_a_bad_backup_the_backup_is_written_before_the_firmware() {
    // Writing the firmware first would tear the only good boot section.
    let new = Layout::small();
    let o = order(&flash(Layout::small(), [BootState::Good, BootState::Bad]), &pieces(&new), Some(0));
    assert_eq!(o.safety, Safety::Safe);
    assert_eq!(types(&new, &o.order), [0xB0, 0xA0, 0xE2, 0x20, 0x10, 0xD2]);
}

#[test]
fn full_over_small_switches_the_directory_before_the_boot_code() {
    let new = Layout::full();
    let o = order(&flash(Layout::small(), GOOD), &pieces(&new), Some(0));
    assert_eq!(o.safety, Safety::Safe);
    assert_eq!(types(&new, &o.order), [0xA0, 0xB0, 0x20, 0x10, 0xD2, 0xE2]);
}

#[test]
fn a_flash_that_does_not_boot_is_repaired_boot_sections_first() {
    let new = Layout::full();
    let o = order(&flash(Layout::small(), [BootState::Bad, BootState::Bad]), &pieces(&new), Some(0));
    assert_eq!(o.safety, Safety::NothingToKeep);
    assert_eq!(types(&new, &o.order), [0xA0, 0xB0, 0xD2, 0xE2, 0x20, 0x10]);
}

#[test]
fn refusals_say_why() {
    let unsafe_reason = |o: crate::flash::order::WriteOrder| match o.safety {
        Safety::Unsafe { reason } => reason,
        other => panic!("{other:?}"),
    };
    // Unreadable.
    let unread = OnFlash { mode: FlashMode::Offset, directory: None, unreadable: Some("no cookie".into()) };
    let reason = unsafe_reason(order(&unread, &pieces(&Layout::small()), Some(0)));
    assert!(reason.contains("cannot read the adapter's flash directory (no cookie)"), "{reason}");
    // Moved.
    let reason = unsafe_reason(order(&flash(Layout::small(), GOOD), &pieces(&Layout::small()), Some(0x8000)));
    assert!(reason.contains("moves the flash directory from 0x0 to 0x8000"), "{reason}");
    // No backup, and the firmware over both old boot sections.
    const KIB: u32 = 1 << 10;
    let lone = Layout {
        sections: vec![
            SectionSpec::new(ImageType::FirmwareIscsi, 256 * KIB, 1024 * KIB),
            SectionSpec::new(ImageType::UfiDir, 0, 4 * KIB),
        ],
    };
    let reason = unsafe_reason(order(&flash(Layout::small(), GOOD), &pieces(&lone), Some(0)));
    assert!(reason.contains("overwrites the adapter's 0xa0 (firmware) and the adapter's 0xb0"), "{reason}");
    // Sections of the image that overlap each other.
    let mut both = pieces(&Layout::small());
    both[1].region.offset = both[0].region.offset + 4;
    let reason = unsafe_reason(order(&flash(Layout::small(), GOOD), &both, Some(0)));
    assert!(reason.contains("overlap"), "{reason}");
}

#[test]
fn a_section_with_a_cookie_before_the_old_directory_waits_for_the_switch() {
    // The directory on flash sits at 0x1000; the image's PXE section (written first in directory
    // order) would put a cookie before it: POST would take that one. It goes after the switch.
    let mut old = Layout::small();
    old.sections.iter_mut().find(|s| s.image_type == ImageType::UfiDir).unwrap().offset = 0x1000;
    let mut on_flash = flash(old, GOOD);
    on_flash.directory.as_mut().unwrap().address = Some(0x1000);
    let new = {
        let mut l = Layout::small();
        l.sections.iter_mut().find(|s| s.image_type == ImageType::UfiDir).unwrap().offset = 0x1000;
        l
    };
    let mut p = pieces(&new);
    let pxe = new.sections.iter().position(|s| s.image_type == ImageType::OptionRomPxe).unwrap();
    p[pxe].preempts = true;
    let o = order(&on_flash, &p, Some(0x1000));
    assert_eq!(o.safety, Safety::Safe);
    assert_eq!(types(&new, &o.order), [0xA0, 0xB0, 0xE2, 0x10, 0xD2, 0x20]);
}
