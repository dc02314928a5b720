//! The real host stack (`oce-mailbox`'s driver and command types) against the emulator, one test
//! per command of spec/protocol.md §5 that ocetool sends, each checking the answer against what
//! the emulated adapter is (its `info()` snapshot), not against the codec.

use oce_mailbox::adapter::{ProfileTarget, read_info, read_profiles, resolve_target};
use oce_mailbox::commands::*;
use oce_mailbox::{BaseStatus, MailboxError, RawCommand};
use oce_tests::{fresh_emulator, host};

#[test]
fn get_fw_version_reports_running_and_flash_versions() {
    let (_dir, emu) = fresh_emulator();
    let v = host(&emu).execute(&GetFwVersion).unwrap();
    let info = emu.info();
    assert_eq!(Some(v.running.clone()), info.firmware.running);
    assert_eq!(Some(v.on_flash.clone()), info.firmware.stored);
    assert_eq!(v.running.split('.').count(), 4, "dotted quad: {}", v.running);
}

#[test]
fn get_cntl_attributes_match_the_adapter_identity() {
    let (_dir, emu) = fresh_emulator();
    let a = host(&emu).execute(&GetCntlAttributes).unwrap();
    let info = emu.info();
    assert_eq!(a.model_number, info.model);
    assert_eq!(a.serial_string(), info.serial);
    assert_eq!(a.manufacturer, "Emulex");
    assert_eq!((a.pci_vendor_id, a.pci_device_id), (0x10df, 0x0720));
    assert_eq!(usize::from(a.hba_port_count), info.ports.len());
    assert_eq!(Some(a.firmware_version.clone()), info.firmware.running);
    assert_eq!(Some(a.fw_on_flash_version.clone()), info.firmware.stored);
}

#[test]
fn query_firmware_config_reports_the_nic_function_mode() {
    let (_dir, emu) = fresh_emulator();
    let cfg = host(&emu).execute(&QueryFirmwareConfig).unwrap();
    assert_eq!(cfg.function_mode.0, emu.info().function_mode);
    assert!(cfg.function_mode.contains(FunctionMode::NIC));
    assert!(!cfg.function_mode.is_rdma(), "factory profile is NIC");
    assert_eq!(cfg.asic_rev(), 0x10);
}

#[test]
fn get_func_config_has_a_usable_nic_descriptor() {
    let (_dir, emu) = fresh_emulator();
    let fc = host(&emu).execute(&GetFuncConfig).unwrap();
    let nic = fc.nic().expect("a NIC descriptor");
    // be2net's minimum (spec §5.7): a MAC, an EQ, TX/RX queues, the basic filter flags 0x830.
    assert!(nic.unicast_mac_count >= 1 && nic.eq_count >= 1 && nic.txq_count >= 1 && nic.rq_count >= 1);
    assert_eq!(nic.cap_flags & 0x830, 0x830);
}

#[test]
fn get_mac_list_gives_the_ports_permanent_mac() {
    let (_dir, emu) = fresh_emulator();
    let macs = host(&emu).execute(&GetMacList::permanent()).unwrap();
    assert_eq!(macs.permanent_mac(), Some(emu.info().ports[0].mac.0));
    assert_eq!(&macs.permanent_mac().unwrap()[..3], &[0x00, 0x00, 0xC9], "Emulex OUI");
}

#[test]
fn port_name_link_and_phy() {
    let (_dir, emu) = fresh_emulator();
    let mut h = host(&emu);
    let names = h.execute(&GetPortName).unwrap();
    for p in emu.info().ports {
        assert_eq!(names.port(usize::from(p.index)).map(String::from), Some(p.name));
    }
    let link = h.execute(&LinkStatusQuery).unwrap();
    assert!(link.is_link_up());
    assert_eq!(link.speed_mbps(), Some(emu.info().ports[0].speed_mbps));
    let phy = h.execute(&GetPhyDetails).unwrap();
    assert!(phy.fixed_speeds.0 != 0 || phy.auto_speeds.0 != 0);
}

#[test]
fn privileges_allow_what_a_pf_needs() {
    let (_dir, emu) = fresh_emulator();
    let p = host(&emu).execute(&GetFnPrivileges).unwrap();
    // A PF needs at least VHADM | DEVCFG | DEVSEC (0x700, spec §5.19).
    assert_eq!(p.0 & 0x700, 0x700);
}

#[test]
fn profiles_list_active_and_config_agree() {
    let (_dir, emu) = fresh_emulator();
    let mut h = host(&emu);
    let ids = h.execute(&GetActiveProfile).unwrap();
    assert_eq!(ids.active, ids.next, "nothing pending on a fresh adapter");
    let list = h.execute(&GetProfileList { start_index: 0 }).unwrap();
    let names: Vec<&str> = list.entries.iter().map(|e| e.description.as_str()).collect();
    for want in ["NIC", "RoCE-1 (NIC+RoCE)", "RoCE-2 (NIC+RoCE)", "NIC+iSCSI", "NIC+FCoE"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let active = h.execute(&GetProfileConfig::active()).unwrap();
    let pcie = active.pcies().next().expect("PCIe descriptor");
    assert_eq!(pcie.pf_type, PfType::MISSION_NIC);
    assert!(active.nics().next().is_some() && active.ports().next().is_some());

    let state = read_profiles(&mut h).unwrap();
    let info = emu.info();
    for p in &state.profiles {
        let e = info.profiles.iter().find(|i| i.id == p.id).expect("same ids");
        assert_eq!((p.name.as_str(), p.roce), (e.name.as_str(), e.roce), "profile {}", p.id);
    }
    let roce = resolve_target(&state, ProfileTarget::Roce).unwrap();
    assert_eq!(roce.name, "RoCE-2 (NIC+RoCE)", "RoCE-2 is preferred");
    let saved = h
        .execute(&GetProfileConfig { profile_id: roce.id, selector: ProfileSelector::Saved, query_modifiable: false })
        .unwrap();
    assert_eq!(saved.pcies().next().unwrap().pf_type, PfType::MISSION_RDMA);
    assert_eq!(resolve_target(&state, ProfileTarget::Nic).unwrap().name, "NIC");
}

#[test]
fn beacon_on_and_off() {
    let (_dir, emu) = fresh_emulator();
    let mut h = host(&emu);
    assert!(!h.execute(&GetBeaconState { port_num: 0 }).unwrap().is_enabled());
    h.execute(&EnableDisableBeacon { port_num: 0, beacon_state: 1, beacon_duration: 0, status_duration: 0 }).unwrap();
    assert!(h.execute(&GetBeaconState { port_num: 0 }).unwrap().is_enabled());
    h.execute(&EnableDisableBeacon { port_num: 0, beacon_state: 0, beacon_duration: 0, status_duration: 0 }).unwrap();
    assert!(!h.execute(&GetBeaconState { port_num: 0 }).unwrap().is_enabled());
}

#[test]
fn function_reset_and_signatures() {
    let (_dir, emu) = fresh_emulator();
    let mut h = host(&emu);
    h.function_reset().unwrap();
    h.fw_clean().unwrap();
    h.fw_init().unwrap();
    h.execute(&GetFwVersion).unwrap();
}

#[test]
fn unimplemented_opcode_is_illegal_request() {
    let (_dir, emu) = fresh_emulator();
    let mut h = host(&emu);
    let raw = RawCommand {
        subsystem: 1,
        opcode: 99,
        version: 0,
        domain: 0,
        embedded: true,
        len: 20,
        payload: vec![],
        timeout: std::time::Duration::from_secs(1),
    };
    let resp = h.execute_raw(&raw).unwrap();
    assert_eq!(resp.status.base, BaseStatus::IllegalRequest);
    assert_eq!(resp.header.base_status, BaseStatus::IllegalRequest, "response header carries it too");
    // A typed command of an unsupported version fails the same way.
    let v0 = RawCommand { opcode: 77, version: 7, ..raw };
    assert_eq!(h.execute_raw(&v0).unwrap().status.base, BaseStatus::IllegalRequest);
}

#[test]
fn a_failed_command_is_a_typed_error() {
    let (_dir, emu) = fresh_emulator();
    let err = host(&emu).execute(&GetBeaconState { port_num: 9 }).unwrap_err();
    match err {
        MailboxError::CommandFailed { command, opcode, status, .. } => {
            assert_eq!((command, opcode), ("GET_BEACON_STATE", 70));
            assert_ne!(status.base, BaseStatus::Success);
        }
        other => panic!("expected CommandFailed, got {other:?}"),
    }
}

#[test]
fn read_info_is_consistent_with_the_adapter() {
    let (_dir, emu) = fresh_emulator();
    let info = read_info(&mut host(&emu)).unwrap();
    let e = emu.info();
    assert_eq!(info.identity.serial, e.serial);
    assert_eq!(info.config.function_mode.0, e.function_mode);
    assert_eq!(info.roce_enabled(), e.function_mode & 0x4 != 0);
    assert!(!info.reset_required());
    assert_eq!(info.ports.len(), e.ports.len());
    assert_eq!(info.ports[0].mac, Some(e.ports[0].mac.0));
    assert_eq!(info.ports[1].mac, None, "port 1 belongs to another function");
}
