//! The adapter's diagnostics through the library, against the emulator: the DCB state as ocrdma
//! reads it, the firmware dump in 60 KiB pieces, the port report and the locate LED.

use oce_emulator::FaultSpec;
use oce_mailbox::adapter::{DumpError, PrioritySource, read_dcb, read_fat_dump, read_port, set_locate};
use oce_mailbox::commands::{GetFwVersion, LinkStatus, ModuleIdentifier, PhyInterface, RetrieveFat};
use oce_tests::{fresh_emulator, host};

#[test]
fn dcb_state_of_a_fresh_adapter_is_ready_for_roce() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let dcb = read_dcb(&mut mbox).unwrap();
    assert_eq!((dcb.roce_priority, dcb.roce_priority_source), (3, PrioritySource::Operational));
    assert!(dcb.pfc_ready_for_roce());
    let oper = dcb.operational.as_ref().unwrap();
    assert_eq!(oper.pfc_enabled_priorities(), [3]);
    assert!(dcb.admin.is_ok());
}

#[test]
fn dcb_state_with_pfc_out_of_sync_falls_back_to_the_admin_copy() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    emu.set_fault(FaultSpec::parse("pfc-unsync").unwrap()).unwrap();
    let dcb = read_dcb(&mut mbox).unwrap();
    assert_eq!((dcb.roce_priority, dcb.roce_priority_source), (3, PrioritySource::Admin));
    assert!(!dcb.pfc_ready_for_roce());
}

#[test]
fn dcb_read_fails_only_when_both_copies_are_refused() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    emu.set_fault(FaultSpec::parse("status=16:1:2").unwrap()).unwrap();
    let err = read_dcb(&mut mbox).unwrap_err();
    assert!(err.to_string().contains("DCBX_GET_CONFIG"), "{err}");
}

#[test]
fn the_dump_is_the_log_after_its_first_dword_read_in_pieces() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    // Enough commands for a log longer than one 60 KiB piece.
    for _ in 0..1000 {
        mbox.execute(&GetFwVersion).unwrap();
    }
    let mut progress = Vec::new();
    let dump = read_fat_dump(&mut mbox, |done, total| progress.push((done, total))).unwrap();
    let total = dump.len() as u32;
    assert!(total > RetrieveFat::CHUNK, "{total} bytes: one piece would do");
    assert_eq!(progress, [(RetrieveFat::CHUNK, total), (total.min(2 * RetrieveFat::CHUNK), total)][..progress.len()]);
    assert_eq!(progress.last(), Some(&(total, total)));
    let text = String::from_utf8(dump).unwrap();
    assert!(text.starts_with("OCE14000 EMULATED FAT LOG 1\n"), "{}", &text[..80]);
    assert!(text.contains("command 1-35 v0: base status 0"));
    // Every line is whole: the pieces join without a gap or an overlap.
    let numbers: Vec<u64> = text.lines().skip(4).map(|l| l.split(' ').next().unwrap().parse().unwrap()).collect();
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "event lines are consecutive");
}

#[test]
fn a_dump_of_a_refused_query_is_an_error() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    emu.set_fault(FaultSpec::parse("status=1:68:2").unwrap()).unwrap();
    assert!(matches!(read_fat_dump(&mut mbox, |_, _| ()), Err(DumpError::Mailbox(_))));
}

#[test]
fn port_report_has_link_phy_module_and_led() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let port = read_port(&mut mbox).unwrap();
    assert_eq!((port.port, port.port_count), (0, 2));
    assert_eq!(port.link.logical_link_status, u32::from(LinkStatus::LINK_UP));
    assert_eq!(port.link.speed_mbps(), Some(10_000));
    let phy = port.phy.as_ref().unwrap();
    assert_eq!(phy.interface_type, PhyInterface::from_raw(3));
    assert_eq!(port.speeds_supported().unwrap().names(), ["1G", "10G"]);
    assert_eq!(port.speeds_advertised().unwrap().names(), ["1G", "10G"]);
    let module = port.module.as_ref().unwrap().as_ref().unwrap();
    assert_eq!((module.identifier, module.vendor.as_str()), (ModuleIdentifier::Sfp, "EMULATED"));
    assert!(!port.beacon_on);
}

#[test]
fn a_refused_module_read_leaves_the_rest_of_the_report() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    emu.set_fault(FaultSpec::parse("status=1:73:2").unwrap()).unwrap();
    let port = read_port(&mut mbox).unwrap();
    assert!(port.module.as_ref().unwrap_err().contains("READ_TRANSRECV_DATA"), "{:?}", port.module);
    assert!(port.phy.is_ok());
}

#[test]
fn locate_switches_the_led_and_reports_no_change_the_second_time() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let on = set_locate(&mut mbox, true).unwrap();
    assert_eq!((on.port, on.beacon_on, on.changed), (0, true, true));
    assert!(read_port(&mut mbox).unwrap().beacon_on);
    let again = set_locate(&mut mbox, true).unwrap();
    assert_eq!((again.beacon_on, again.changed), (true, false));
    let off = set_locate(&mut mbox, false).unwrap();
    assert_eq!((off.beacon_on, off.changed), (false, true));
    assert!(!read_port(&mut mbox).unwrap().beacon_on);
}
