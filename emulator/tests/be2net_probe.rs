//! be2net's probe, remove and reload against the device, through the be2net-like host
//! (spec/be2net-driver.md §2, §4.6): every command answered, the values agreeing with what the
//! adapter reports to `ocetool query`, ids inside the driver's limits, nothing left behind.

use oce_testhost as be2net_host;

use be2net_host::driver::Nic;
use be2net_host::{Host, HostError};
use oce_emulator::{Event, FaultSpec};
use oce_mailbox::commands::IfCreate;
use oce_mailbox::{Command, Subsystem};

fn probed(eqs: u16) -> (tempfile::TempDir, Host, Nic) {
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::new(&dir.path().join("emu"));
    let nic = host.probe(eqs).unwrap();
    (dir, host, nic)
}

#[test]
fn probe_reads_what_ocetool_query_reports() {
    let (_d, host, nic) = probed(1);
    let info = host.dev.info();
    assert_eq!(nic.mac, info.ports[0].mac.0, "the netdev's MAC is port 0's");
    assert_eq!(Some(nic.fw.running), info.firmware.running);
    assert_eq!(Some(nic.fw.on_flash), info.firmware.stored);
    assert_eq!(nic.function_mode, 0x2, "NIC profile");
    assert_eq!(nic.port, 0);
    assert!(nic.native, "BE3-native RX completions granted");
    assert_eq!(nic.nic.cap_flags & 0x830, 0x830, "the basic filters ifup needs");
    let events = host.dev.firmware().events();
    assert!(!events.iter().any(|e| matches!(e, Event::DmaFault { .. })), "{events:?}");
    assert!(host.dev.queue_misses().is_empty(), "{:?}", host.dev.queue_misses());
}

#[test]
fn queue_ids_and_vectors_stay_inside_the_drivers_limits() {
    let (_d, host, nic) = probed(4);
    let vectors: Vec<u16> = host.eqs.iter().map(|e| e.msix_idx).collect();
    assert_eq!(vectors, [0, 1, 2, 3], "NIC EQs take the first vectors, one each");
    let ids: Vec<u16> = host.eqs.iter().map(|e| e.id).collect();
    assert_eq!(ids, [1, 2, 3, 4]);
    assert_eq!(nic.txqs.iter().map(|t| t.id).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert!(nic.txqs.iter().all(|t| t.db_offset == 0x60));
    let cqs: Vec<u16> = nic.txqs.iter().map(|t| t.cq.id).chain(nic.rx_cqs.iter().map(|c| c.id)).collect();
    assert!(cqs.iter().all(|&id| id < 2048));
    assert_eq!(host.mcc.as_ref().unwrap().0, 1);
    assert_eq!(nic.if_handle, 1);
}

#[test]
fn remove_then_probe_again_three_times_starts_clean() {
    let (_d, mut host, nic) = probed(2);
    let first = (host.eqs.iter().map(|e| (e.id, e.msix_idx)).collect::<Vec<_>>(), nic.if_handle);
    host.remove(nic).unwrap();
    for _ in 0..3 {
        let nic = host.probe(2).unwrap();
        let again = (host.eqs.iter().map(|e| (e.id, e.msix_idx)).collect::<Vec<_>>(), nic.if_handle);
        assert_eq!(again, first, "the same ids and vectors: nothing was left behind");
        host.remove(nic).unwrap();
    }
    let events = host.dev.firmware().events();
    assert!(!events.iter().any(|e| matches!(e, Event::DmaFault { .. })), "{events:?}");
    assert!(host.dev.queue_misses().is_empty(), "{:?}", host.dev.queue_misses());
}

#[test]
fn function_reset_at_probe_clears_what_a_crashed_driver_left() {
    let (_d, mut host, _lost) = probed(2);
    // The driver died without teardown; a new one starts with FUNCTION_RESET.
    host.eqs.clear();
    host.mcc = None;
    host.mcc_cq = None;
    let nic = host.probe(2).unwrap();
    assert_eq!(host.eqs.iter().map(|e| e.msix_idx).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(nic.if_handle, 1);
}

#[test]
fn a_withheld_completion_fails_the_probe_with_an_error_not_a_status() {
    // spec/be2net-driver.md §8, recipe pitfall 7: a non-zero status of a command be2net
    // propagates makes probe return a positive value the PCI core takes for success; a
    // completion without VALID is "invalid mailbox completion", -1, and probe fails cleanly.
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::new(&dir.path().join("emu"));
    let spec = format!("no-valid={}:{}", Subsystem::Common.raw(), IfCreate::OPCODE);
    host.dev.set_fault(FaultSpec::parse(&spec).unwrap()).unwrap();
    assert_eq!(host.probe(1).unwrap_err(), HostError::InvalidCompletion);
    // The device still answers everything else: be2net's error path tears down what it made.
    host.dev.clear_fault("no-valid").unwrap();
    let nic = host.probe(1).unwrap();
    host.remove(nic).unwrap();
}
