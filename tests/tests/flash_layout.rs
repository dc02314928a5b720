//! Updates that lay the sections out differently from what is on flash (full over small, small
//! over full, a section that grows): a power loss at any WRITE_FLASHROM, or a stop at any
//! section boundary or between a section's chunks, leaves an adapter that boots (POST completes,
//! on the old or the new firmware) and a rerun of the update that completes (docs/reliability.md,
//! guarantee 2). Where no order keeps a bootable copy, the update is refused without `force`.
//!
//! Every index starts from a copy of one prepared state directory (the indices are shared among
//! one worker thread per CPU). The power cycle runs after every index; the rerun runs once per distinct flash content left behind (indices inside one
//! section's SAVE chunks all leave the flash as it was before that section: the power cycle and
//! the rerun are functions of the state directory, so one rerun speaks for all of them).

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

use oce_emulator::{BootOutcome, Emulator, FaultSpec};
use oce_firmware::build::{Layout, SectionSpec};
use oce_firmware::dir::ImageType;
use oce_firmware::flash::{self, FlashObserver, NoProgress, Policy, Safety, SectionRef};
use oce_firmware::{FlashError, ImageBuilder, UfiImage};
use oce_tests::{flash_file, fresh_emulator, host, write_flashrom_count};
use tempfile::TempDir;

/// The emulator's factory firmware (small layout).
const FACTORY: &str = "11.1.172.23";

/// A temporary directory in memory where there is one: the emulator syncs its state file at
/// every chunk while a flash fault counts down, which a disk makes slow.
fn scratch() -> TempDir {
    let shm = Path::new("/dev/shm");
    let builder = tempfile::Builder::new();
    if shm.is_dir() { builder.tempdir_in(shm) } else { builder.tempdir() }.unwrap()
}

/// Copies the emulator state directory `from` into a new temporary directory.
fn copy_state(from: &Path) -> (TempDir, Emulator) {
    let dir = scratch();
    let to = dir.path().join("emu");
    std::fs::create_dir(&to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    let emu = Emulator::open(&to).unwrap();
    (dir, emu)
}

/// A power cycle, and what POST booted: the running version, or `None` when POST failed.
fn power_cycle(emu: &Emulator) -> Option<String> {
    emu.power_cycle().unwrap();
    let info = emu.info();
    match info.firmware.boot {
        BootOutcome::Failed => None,
        _ => info.firmware.running,
    }
}

/// An adapter whose flash holds `layout` with firmware `version`, flashed over the factory image
/// and booted (the template every index of a case starts from).
fn prepared(version: &str, layout: Layout) -> (TempDir, Emulator) {
    let (dir, emu) = fresh_emulator();
    if version != FACTORY {
        let file = ImageBuilder::new(version).layout(layout).build().unwrap();
        flash_file(&mut host(&emu), &file, Policy::default(), &mut NoProgress).unwrap();
        assert_eq!(power_cycle(&emu).as_deref(), Some(version));
    }
    (dir, emu)
}

/// The small layout with the firmware section grown from 512 KiB to 768 KiB: it now reaches
/// over the old backup, which moves up past it.
fn grown_firmware() -> Layout {
    const KIB: u32 = 1 << 10;
    Layout {
        sections: vec![
            SectionSpec::new(ImageType::FirmwareIscsi, 256 * KIB, 768 * KIB),
            SectionSpec::new(ImageType::FirmwareBackupIscsi, 1024 * KIB, 512 * KIB),
            SectionSpec::new(ImageType::BootCode, 64 * KIB, 128 * KIB),
            SectionSpec::new(ImageType::OptionRomPxe, 1536 * KIB, 64 * KIB),
            SectionSpec::new(ImageType::Ncsi, 1600 * KIB, 64 * KIB),
            SectionSpec::new(ImageType::UfiDir, 0, 4 * KIB),
        ],
    }
}

/// The sections committed to `emu`'s flash since it was opened: from one template, equal lists
/// leave equal flashes.
fn commits(emu: &Emulator) -> Vec<(u64, u64)> {
    assert_eq!(emu.dropped_events(), 0, "the event log holds every commit");
    emu.events()
        .into_iter()
        .filter_map(|e| match e {
            oce_emulator::Event::FlashCommitted { offset, len } => Some((offset, len)),
            _ => None,
        })
        .collect()
}

/// After an interruption: a power cycle boots `old` or `new`; once per distinct flash, a rerun
/// completes and the next power cycle boots `new`.
fn check_after_interruption(
    emu: &Emulator,
    file: &[u8],
    old: &str,
    new: &str,
    seen: &Mutex<HashSet<Vec<(u64, u64)>>>,
    at: &str,
) {
    let committed = commits(emu);
    let booted = power_cycle(emu);
    assert!(
        booted.as_deref() == Some(old) || booted.as_deref() == Some(new),
        "{at}: POST booted {booted:?}, not {old} or {new}"
    );
    if !seen.lock().unwrap().insert(committed) {
        return;
    }
    let report = flash_file(&mut host(emu), file, Policy::default(), &mut NoProgress)
        .unwrap_or_else(|e| panic!("rerun after {at}: {e}"));
    assert_eq!(report.stored, new, "{at}");
    assert_eq!(power_cycle(emu).as_deref(), Some(new), "after the rerun ({at})");
}

/// Flashes `file` (firmware `new`) over copies of `template` (firmware `old`), with a power loss
/// at every WRITE_FLASHROM of the update in turn.
fn power_loss_at_every_write(template: &Emulator, old: &str, file: &[u8], new: &str) {
    let state = template.state_dir();
    let writes = {
        let (_dir, emu) = copy_state(&state);
        flash_file(&mut host(&emu), file, Policy::default(), &mut NoProgress).unwrap();
        write_flashrom_count(&emu)
    };
    assert!(writes > 0);
    let seen = Mutex::new(HashSet::new());
    // The indices are independent: as many workers as there are CPUs share them.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(writes);
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let (state, seen) = (&state, &seen);
            scope.spawn(move || {
                for at in (1 + worker..=writes).step_by(workers) {
                    let (_dir, emu) = copy_state(state);
                    emu.set_fault(FaultSpec::PowerLossAt { chunk: at as u32 }).unwrap();
                    let err = flash_file(&mut host(&emu), file, Policy::default(), &mut NoProgress).unwrap_err();
                    assert!(matches!(err, FlashError::WriteFailed { .. }), "write {at}: {err:?}");
                    let what = format!("a power loss at write {at} of {writes}");
                    check_after_interruption(&emu, file, old, new, seen, &what);
                }
            });
        }
    });
    let distinct = seen.lock().unwrap().len();
    assert!(distinct > 2, "the power losses left several distinct flashes: {distinct}");
}

/// Stops after `chunks` accepted chunks (between sections or between a section's chunks).
struct StopAfterChunks {
    chunks: usize,
    sent: usize,
}

impl FlashObserver for StopAfterChunks {
    fn bytes_sent(&mut self, _: SectionRef, _: u32, _: u32) {
        self.sent += 1;
    }
    fn should_stop(&self) -> bool {
        self.sent >= self.chunks
    }
}

/// Stops the same update at every section boundary and in the middle of every section.
fn stop_at_every_section_boundary(template: &Emulator, old: &str, file: &[u8], new: &str) {
    let image = UfiImage::parse(file).unwrap();
    let state = template.state_dir();
    let plan = {
        let (_dir, emu) = copy_state(&state);
        let mut mbox = host(&emu);
        let adapter = flash::read_adapter(&mut mbox, &image).unwrap();
        flash::plan(&image, &adapter, Policy::default()).unwrap()
    };
    // Chunk counts at which the walk asks: each boundary, and half-way through each section.
    let mut stops = Vec::new();
    let mut chunks = 0;
    for s in plan.candidates() {
        let n = (s.bytes as usize).div_ceil(flash::CHUNK);
        stops.extend([chunks, chunks + n / 2]);
        chunks += n;
    }
    let seen = Mutex::new(HashSet::new());
    for &at in &stops {
        let (_dir, emu) = copy_state(&state);
        let mut stop = StopAfterChunks { chunks: at, sent: 0 };
        let err = flash_file(&mut host(&emu), file, Policy::default(), &mut stop).unwrap_err();
        let FlashError::Stopped { abandoned, .. } = &err else { panic!("stop after {at} chunks: {err:?}") };
        assert!(err.to_string().contains("running the update again finishes it"), "{err}");
        assert_eq!(stop.sent, at, "no chunk after the stop");
        if let Some(section) = abandoned {
            assert!(err.to_string().contains(&format!("before committing {section}")), "{err}");
        }
        check_after_interruption(&emu, file, old, new, &seen, &format!("a stop after {at} chunks"));
    }
}

#[test]
fn power_loss_at_every_write_of_full_over_small_leaves_a_bootable_adapter() {
    let (_dir, template) = prepared(FACTORY, Layout::small());
    let file = ImageBuilder::new("11.2.0.1").layout(Layout::full()).build().unwrap();
    power_loss_at_every_write(&template, FACTORY, &file, "11.2.0.1");
}

#[test]
fn power_loss_at_every_write_of_small_over_full_leaves_a_bootable_adapter() {
    let (_dir, template) = prepared("11.1.180.0", Layout::full());
    let file = ImageBuilder::new("11.2.0.2").build().unwrap();
    power_loss_at_every_write(&template, "11.1.180.0", &file, "11.2.0.2");
}

#[test]
fn power_loss_at_every_write_of_a_grown_section_leaves_a_bootable_adapter() {
    let (_dir, template) = prepared(FACTORY, Layout::small());
    let file = ImageBuilder::new("11.2.0.3").layout(grown_firmware()).build().unwrap();
    power_loss_at_every_write(&template, FACTORY, &file, "11.2.0.3");
}

#[test]
fn a_stop_at_every_section_boundary_of_layout_changes_leaves_a_bootable_adapter() {
    let (_small_dir, small) = prepared(FACTORY, Layout::small());
    let full = ImageBuilder::new("11.2.0.1").layout(Layout::full()).build().unwrap();
    stop_at_every_section_boundary(&small, FACTORY, &full, "11.2.0.1");
    let grown = ImageBuilder::new("11.2.0.3").layout(grown_firmware()).build().unwrap();
    stop_at_every_section_boundary(&small, FACTORY, &grown, "11.2.0.3");
    let (_full_dir, full_template) = prepared("11.1.180.0", Layout::full());
    let small_image = ImageBuilder::new("11.2.0.2").build().unwrap();
    stop_at_every_section_boundary(&full_template, "11.1.180.0", &small_image, "11.2.0.2");
}

#[test]
fn full_over_small_writes_around_the_old_boot_sections_and_switches_the_directory_before_the_rest() {
    let (_dir, emu) = prepared(FACTORY, Layout::small());
    let file = ImageBuilder::new("11.2.0.1").layout(Layout::full()).build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut mbox = host(&emu);
    let adapter = flash::read_adapter(&mut mbox, &image).unwrap();
    let on_flash = adapter.flash.directory.as_ref().unwrap();
    assert_eq!(on_flash.address, Some(0));
    assert_eq!(on_flash.version.as_deref(), Some(FACTORY));
    assert!(on_flash.boot.iter().all(|b| b.state == flash::BootState::Good), "{:?}", on_flash.boot);
    let plan = flash::plan(&image, &adapter, Policy::default()).unwrap();
    assert_eq!(plan.safety, Safety::Safe);
    let order: Vec<u32> = plan.candidates().map(|s| s.section.image_type.raw()).collect();
    // The new boot code (0x10000..0x100000) covers both old boot sections: it comes after the
    // directory; the new firmware only reaches the old backup, so the old firmware boots until
    // the switch.
    assert_eq!(order, [0xA0, 0xB0, 0x20, 0x10, 0xD2, 0xE2]);
}

/// A layout with the firmware over both old boot sections and no backup section: no section
/// can give the new directory a boot section before the switch without erasing the old ones.
fn no_backup_over_both() -> Layout {
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
fn an_update_with_no_safe_order_is_refused_and_force_flashes_it() {
    let (_dir, emu) = prepared(FACTORY, Layout::small());
    let file = ImageBuilder::new("11.2.0.4").layout(no_backup_over_both()).build().unwrap();
    let image = UfiImage::parse(&file).unwrap();
    let mut mbox = host(&emu);
    let writes = write_flashrom_count(&emu);
    let err = flash_file(&mut mbox, &file, Policy::default(), &mut NoProgress).unwrap_err();
    let FlashError::UnsafeOrder { reason } = &err else { panic!("{err:?}") };
    assert!(reason.contains("0xa0 (firmware) at 0x40000..0x140000 overwrites the adapter's 0xa0"), "{reason}");
    assert!(err.to_string().contains("fails POST at its next reset"), "{err}");
    assert_eq!(write_flashrom_count(&emu), writes, "nothing written");

    let adapter = flash::read_adapter(&mut mbox, &image).unwrap();
    let forced = Policy { allow_downgrade: false, force: true };
    let plan = flash::plan(&image, &adapter, forced).unwrap();
    assert!(matches!(plan.safety, Safety::Unsafe { .. }));
    flash::flash_ufi(&mut mbox, &image, &plan, &mut NoProgress).unwrap();
    assert_eq!(power_cycle(&emu).as_deref(), Some("11.2.0.4"));
}

#[test]
fn a_directory_that_moves_is_refused() {
    let (_dir, emu) = prepared(FACTORY, Layout::small());
    let mut layout = Layout::small();
    let dir = layout.sections.iter_mut().find(|s| s.image_type == ImageType::UfiDir).unwrap();
    dir.offset = 0x8000;
    let file = ImageBuilder::new("11.2.0.5").layout(layout).build().unwrap();
    let err = flash_file(&mut host(&emu), &file, Policy::default(), &mut NoProgress).unwrap_err();
    let FlashError::UnsafeOrder { reason } = &err else { panic!("{err:?}") };
    assert!(reason.contains("moves the flash directory from 0x0 to 0x8000"), "{reason}");
}
