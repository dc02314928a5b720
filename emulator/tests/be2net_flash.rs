//! `ethtool -f` through the be2net-like host (spec/be2net-driver.md §4.4): be2net's own walk over
//! the MCC, each WRITE_FLASHROM completed asynchronously and found through the interrupt path;
//! afterwards the adapter stores the new version and a second walk finds nothing to write.

use oce_testhost as be2net_host;

use std::time::Duration;

use be2net_host::driver::Nic;
use be2net_host::{Host, HostError, Irq};
use oce_emulator::FaultSpec;
use oce_firmware::build::ImageBuilder;
use oce_mailbox::BaseStatus;
use oce_mailbox::commands::{FlashOpType, FlashromOp, GetFwVersion, WriteFlashrom};

const NEW: &str = "11.2.0.9";

fn up() -> (tempfile::TempDir, Host, Nic) {
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::new(&dir.path().join("emu"));
    let mut nic = host.probe(1).unwrap();
    assert!(host.open(&mut nic).unwrap());
    host.interrupt(&mut nic);
    (dir, host, nic)
}

#[test]
fn be2nets_walk_writes_the_image_and_a_second_walk_writes_nothing() {
    let (_d, mut host, mut nic) = up();
    let image = ImageBuilder::new(NEW).build().unwrap();
    let chunks = host.flash(&mut nic, &image).unwrap();
    assert!(chunks > 0);
    assert_eq!(nic.fw.on_flash, NEW, "GET_FW_VERSION after the walk sees the new version on flash");
    assert_ne!(nic.fw.running, NEW, "it runs after the next reset");
    assert_eq!(host.dev.info().firmware.stored.as_deref(), Some(NEW));
    assert_eq!(host.flash(&mut nic, &image).unwrap(), 0, "every CRC matches: nothing to write");
}

#[test]
fn the_workers_statistics_interleave_with_the_flash_in_ring_order() {
    let (_d, mut host, mut nic) = up();
    let stats = host.worker_stats();
    let image = ImageBuilder::new(NEW).build().unwrap();
    host.flash(&mut nic, &image).unwrap();
    assert!(host.completed[&stats].is_success());
    assert_eq!(host.mcc_outstanding(), 0);
}

#[test]
fn a_slow_flash_chunk_completes_only_when_its_time_has_come() {
    let (_d, mut host, mut nic) = up();
    host.dev.set_fault(FaultSpec::parse("slow-flash=500").unwrap()).unwrap();
    let image = ImageBuilder::new(NEW).build().unwrap();
    let section = oce_firmware::ufi::UfiImage::parse(&image).unwrap().sections().next().unwrap().data.to_vec();
    let chunk = WriteFlashrom {
        op_code: FlashromOp::Save,
        op_type: FlashOpType::OffsetSpecified,
        offset: 0,
        data: section[..section.len().min(WriteFlashrom::CHUNK)].to_vec().into(),
    };
    let tag = host.mcc_post(&chunk);
    assert!(host.irq.take().is_empty(), "the doorbell write returned with the completion held");
    let due = host.dev.poll().expect("a completion is held");
    assert!(due > host.clock_now());
    host.clock.advance(Duration::from_millis(500));
    host.dev.poll();
    assert_eq!(host.interrupt(&mut nic).0, [Irq::Msix(0)]);
    assert!(host.completed[&tag].is_success());
}

#[test]
fn a_failing_chunk_reports_its_status_in_the_completion() {
    let (_d, mut host, mut nic) = up();
    host.dev.set_fault(FaultSpec::parse("flash-fail-at=1").unwrap()).unwrap();
    let image = ImageBuilder::new(NEW).build().unwrap();
    match host.flash(&mut nic, &image) {
        Err(HostError::Status(s)) => assert_eq!(s.base, BaseStatus::Failed),
        other => panic!("{other:?}"),
    }
    host.dev.clear_fault("flash-fail-at").unwrap();
    host.flash(&mut nic, &image).unwrap();
    assert_eq!(host.mcc(&GetFwVersion).unwrap().on_flash, NEW);
}
