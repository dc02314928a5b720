//! SET_LOGICAL_LINK_CONFIG's hold on the function's logical link, through the be2net-like host
//! on the MCC. spec/protocol.md §5.17: `link_config` u32 @16, bit 0 enable, bit 8 track the
//! physical link; be2net's probe sends 0x101 (spec/be2net-driver.md §2 step 21). The link the
//! driver sees is LINK_STATUS_QUERY's `logical_link_status` @24, 0 down and 1 up (§5.16). The
//! requests and the answers are built and read at those offsets here, not through the codec.

use oce_emulator::FaultSpec;
use oce_mailbox::header::Subsystem;
use oce_testhost::{Host, raw_request};

/// SET_LOGICAL_LINK_CONFIG: COMMON opcode 80, version 2, embedded, 20 bytes (spec/protocol.md
/// §5.17, the command table §4).
fn set_logical_link_config(host: &mut Host, link_config: u32) {
    let mut request = raw_request(80, Subsystem::Common, 2, 20);
    request[16..20].copy_from_slice(&link_config.to_le_bytes());
    host.mcc_raw(&request, true).expect("SET_LOGICAL_LINK_CONFIG succeeds");
}

/// LINK_STATUS_QUERY: COMMON opcode 5, version 1, embedded, 28 bytes; the byte @24
/// (spec/protocol.md §5.16).
fn logical_link_status(host: &mut Host) -> u8 {
    let response = host.mcc_raw(&raw_request(5, Subsystem::Common, 1, 28), true).expect("LINK_STATUS_QUERY succeeds");
    response[24]
}

/// be2net's own setting: enabled, tracking the physical link.
const ENABLE_TRACK: u32 = 0x101;
/// Tracking the physical link with the enable bit clear: the logical link is held down.
const TRACK_ONLY: u32 = 0x100;
const DOWN: u8 = 0;
const UP: u8 = 1;

fn probed() -> (tempfile::TempDir, Host) {
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::new(&dir.path().join("emu"));
    let mut nic = host.probe(1).unwrap();
    assert!(host.open(&mut nic).unwrap(), "after be2net's 0x101 the factory link is up");
    (dir, host)
}

#[test]
fn the_enable_bit_holds_the_logical_link_down_and_lets_it_up_again() {
    let (_d, mut host) = probed();
    assert_eq!(logical_link_status(&mut host), UP);
    set_logical_link_config(&mut host, TRACK_ONLY);
    assert_eq!(logical_link_status(&mut host), DOWN, "enable bit clear: held down with the cable in");
    set_logical_link_config(&mut host, ENABLE_TRACK);
    assert_eq!(logical_link_status(&mut host), UP, "enabled again: up, as the physical link is");
}

#[test]
fn a_held_link_stays_down_through_a_physical_flap() {
    let (_d, mut host) = probed();
    set_logical_link_config(&mut host, TRACK_ONLY);
    host.dev.set_fault(FaultSpec::parse("link-down").unwrap()).unwrap();
    assert_eq!(logical_link_status(&mut host), DOWN);
    host.dev.clear_fault("link-down").unwrap();
    assert_eq!(logical_link_status(&mut host), DOWN, "the cable back does not lift the hold");
    set_logical_link_config(&mut host, ENABLE_TRACK);
    assert_eq!(logical_link_status(&mut host), UP);
}

#[test]
fn enabling_a_link_whose_cable_is_out_leaves_it_down_until_the_cable_is_back() {
    let (_d, mut host) = probed();
    set_logical_link_config(&mut host, TRACK_ONLY);
    host.dev.set_fault(FaultSpec::parse("link-down").unwrap()).unwrap();
    set_logical_link_config(&mut host, ENABLE_TRACK);
    assert_eq!(logical_link_status(&mut host), DOWN, "enabled, but it tracks a physical link that is down");
    host.dev.clear_fault("link-down").unwrap();
    assert_eq!(logical_link_status(&mut host), UP);
}
