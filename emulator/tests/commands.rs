//! The adapter queries and profile commands (attributes, firmware and function config, MAC list,
//! port name, link, PHY, privileges, beacon, profile list/active/config) through the real host
//! driver, checking the answers are consistent with each other and with the emulator's identity;
//! key offsets are also checked in raw bytes.

mod common;

use std::time::Duration;

use common::{failure, fresh, host};
use oce_emulator::Emulator;
use oce_mailbox::commands::*;
use oce_mailbox::status::BaseStatus;
use oce_mailbox::{BootstrapMailbox, Command, RawCommand};

fn raw(mbox: &mut BootstrapMailbox<Emulator>, opcode: u8, version: u8, embedded: bool, len: usize) -> Vec<u8> {
    let cmd = RawCommand {
        subsystem: 1,
        opcode,
        version,
        domain: 0,
        embedded,
        len,
        payload: Vec::new(),
        timeout: Duration::from_secs(4),
    };
    let resp = mbox.execute_raw(&cmd).unwrap();
    assert!(resp.status.is_success(), "opcode {opcode}: {}", resp.status);
    resp.buffer
}

#[test]
fn controller_attributes_match_the_identity() {
    let (_d, emu) = fresh();
    let info = emu.info();
    let mut mbox = host(&emu);
    let attrs = mbox.execute(&GetCntlAttributes).unwrap();
    assert_eq!(attrs.model_number, "OCe14102");
    assert_eq!(attrs.manufacturer, "Emulex");
    assert_eq!(attrs.serial_string(), info.serial);
    assert_eq!(attrs.firmware_version, "11.1.172.23");
    assert_eq!(attrs.fw_on_flash_version, "11.1.172.23");
    assert_eq!(attrs.redboot_version, "11.1.172.23", "boot code version from the directory");
    assert_eq!(attrs.hba_port_count, 2);
    assert_eq!(attrs.port_number(), 0);
    assert_eq!(attrs.asic_revision, 0x10);
    assert_eq!((attrs.pci_vendor_id, attrs.pci_device_id), (0x10DF, 0x0720));
    assert_eq!((attrs.pci_sub_vendor_id, attrs.pci_sub_system_id), (0x10DF, 0xE702));
    assert_eq!(attrs.firmware_post_status, 0xC000);
    // Raw bytes: model @16+96, serial @16+192 (spec §5.2).
    let buf = raw(&mut mbox, 32, 0, false, 592);
    assert_eq!(&buf[112..120], b"OCe14102");
    assert_eq!(&buf[208..208 + info.serial.len()], info.serial.as_bytes());
}

#[test]
fn firmware_config_reports_the_nic_function_mode() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let cfg = mbox.execute(&QueryFirmwareConfig).unwrap();
    assert_eq!(cfg.function_mode.0, 0x2);
    assert!(!cfg.function_mode.is_rdma());
    assert_eq!(cfg.asic_rev(), 0x10);
    assert_eq!(cfg.ulp[0].ulp_mode, cfg.function_mode);
    let buf = raw(&mut mbox, 58, 0, true, 140);
    assert_eq!(u32::from_le_bytes(buf[28..32].try_into().unwrap()), 0x2, "function_mode @28");
    assert_eq!(buf[20], 0x10, "asic_revision @20");
}

#[test]
fn func_config_has_one_nic_descriptor_with_the_basic_filters() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let fc = mbox.execute(&GetFuncConfig).unwrap();
    assert_eq!(fc.descriptors.len(), 1);
    let nic = fc.nic().unwrap();
    assert_eq!((nic.pf_num, nic.vf_num), (0, 0));
    assert!(nic.unicast_mac_count >= 1 && nic.eq_count >= 1 && nic.txq_count >= 1 && nic.rq_count >= 1);
    assert_eq!(nic.cap_flags & 0x830, 0x830, "BROADCAST | UNTAGGED | PASS_L3L4_ERRORS");
    // Raw: desc_count u32 @16, first descriptor type 0x51, length 88 @20.
    let buf = raw(&mut mbox, 160, 1, false, GetFuncConfig::LEN);
    assert_eq!(&buf[16..22], &[1, 0, 0, 0, 0x51, 88]);
}

#[test]
fn mac_list_port_name_link_and_phy() {
    let (_d, emu) = fresh();
    let info = emu.info();
    let mut mbox = host(&emu);
    let macs = mbox.execute(&GetMacList::permanent()).unwrap();
    assert_eq!(macs.permanent_mac(), Some(info.ports[0].mac.0));
    assert_eq!(macs.true_mac_count, 1);
    let names = mbox.execute(&GetPortName).unwrap();
    assert_eq!(names.port_or_default(0), '0');
    assert_eq!(names.port_or_default(1), '1');
    let link = mbox.execute(&LinkStatusQuery).unwrap();
    assert!(link.is_link_up());
    assert_eq!(link.speed_mbps(), Some(10_000));
    assert_eq!(link.port_number(), 0);
    let phy = mbox.execute(&GetPhyDetails).unwrap();
    assert_eq!(phy.interface_type, PhyInterface::SfpPlus10G);
    assert!(phy.fixed_speeds.contains(PhySpeeds::SPEED_10G));
    let buf = raw(&mut mbox, 5, 1, true, 28);
    assert_eq!((buf[18], u16::from_le_bytes([buf[22], buf[23]]), buf[24]), (4, 1000, 1), "speed code, link_speed, up");
}

#[test]
fn privileges_are_everything_for_the_pf() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    assert_eq!(mbox.execute(&GetFnPrivileges).unwrap().0, 0x7FF);
}

#[test]
fn beacon_state_follows_enable_disable_and_persists() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    assert!(!mbox.execute(&GetBeaconState { port_num: 1 }).unwrap().is_enabled());
    let on = EnableDisableBeacon { port_num: 1, beacon_state: 1, beacon_duration: 0, status_duration: 0 };
    mbox.execute(&on).unwrap();
    assert!(mbox.execute(&GetBeaconState { port_num: 1 }).unwrap().is_enabled());
    assert!(!mbox.execute(&GetBeaconState { port_num: 0 }).unwrap().is_enabled());
    drop(mbox);
    let again = Emulator::open(&emu.state_dir()).unwrap();
    let mut mbox = host(&again);
    assert!(mbox.execute(&GetBeaconState { port_num: 1 }).unwrap().is_enabled(), "kept across processes");
    again.power_cycle().unwrap();
    let mut mbox = host(&again);
    assert!(!mbox.execute(&GetBeaconState { port_num: 1 }).unwrap().is_enabled(), "lost at power cycle");
    assert_eq!(failure(mbox.execute(&GetBeaconState { port_num: 2 })), BaseStatus::IllegalField);
    let bad = EnableDisableBeacon { port_num: 0, beacon_state: 7, beacon_duration: 0, status_duration: 0 };
    assert_eq!(failure(mbox.execute(&bad)), BaseStatus::IllegalField);
}

#[test]
fn profile_list_active_profile_and_configs_agree() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let list = mbox.execute(&GetProfileList::default()).unwrap();
    let names: Vec<&str> = list.entries.iter().map(|e| e.description.as_str()).collect();
    for want in ["NIC", "RoCE-1 (NIC+RoCE)", "RoCE-2 (NIC+RoCE)", "NIC+iSCSI", "NIC+FCoE"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let active = mbox.execute(&GetActiveProfile).unwrap();
    assert!(!active.is_change_pending());
    let nic = list.entries.iter().find(|e| e.description == "NIC").unwrap();
    assert_eq!(active.active, u16::from(nic.id));
    // Every profile's SAVED PCIe descriptor says what it is.
    for entry in &list.entries {
        let cfg = mbox.execute(&GetProfileConfig { profile_id: entry.id, ..GetProfileConfig::saved() }).unwrap();
        let kinds: Vec<u8> = cfg.descriptors.iter().map(ResourceDescriptor::kind).collect();
        assert_eq!(kinds, [0x50, 0x51, 0x55], "PCIe v1, NIC v1, PORT v1");
        let pcie = cfg.pcie_for(0).unwrap();
        assert_eq!(pcie.pf_type.is_rdma(), entry.description.contains("RoCE"), "{}", entry.description);
        assert_eq!(pcie.num_vfs, 0);
        assert_eq!(cfg.ports().next().unwrap().mc_type, McType::None);
    }
    let active_cfg = mbox.execute(&GetProfileConfig::active()).unwrap();
    assert_eq!(active_cfg.pcie_for(0).unwrap().pf_type, PfType::MISSION_NIC);
    let modifiable = mbox.execute(&GetProfileConfig { query_modifiable: true, ..GetProfileConfig::active() }).unwrap();
    assert_eq!(modifiable.nics().next().unwrap().eq_count, 0xFFFF);
    assert_eq!(modifiable.pcie_for(0).unwrap().num_vfs, 0);
    // A page of the list from index 3 on.
    let tail = mbox.execute(&GetProfileList { start_index: 3 }).unwrap();
    assert_eq!(tail.entries.len(), list.entries.len() - 3);
    assert_eq!(tail.entries[0], list.entries[3]);
    assert_eq!(
        failure(mbox.execute(&GetProfileConfig { profile_id: 0xEE, ..GetProfileConfig::saved() })),
        BaseStatus::IllegalField
    );
}

#[test]
fn roce_profile_becomes_active_only_after_a_reset() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let list = mbox.execute(&GetProfileList::default()).unwrap();
    let roce = list.entries.iter().find(|e| e.description.starts_with("RoCE-2")).unwrap().id;
    mbox.execute(&SetActiveProfile::new(roce)).unwrap();
    let pending = mbox.execute(&GetActiveProfile).unwrap();
    assert_eq!(pending.next, u16::from(roce));
    assert!(pending.is_change_pending());
    assert_eq!(mbox.execute(&QueryFirmwareConfig).unwrap().function_mode.0, 0x2, "not before the reset");
    let saved_next = mbox.execute(&GetProfileConfig::saved()).unwrap();
    assert!(saved_next.pcie_for(0).unwrap().pf_type.is_rdma(), "SAVED with ID 0 = the next-boot profile");
    mbox.soft_reset().unwrap();
    mbox.function_reset().unwrap();
    let now = mbox.execute(&GetActiveProfile).unwrap();
    assert_eq!((now.active, now.next), (u16::from(roce), u16::from(roce)));
    assert_eq!(mbox.execute(&QueryFirmwareConfig).unwrap().function_mode.0, 0x6);
    assert!(mbox.execute(&GetProfileConfig::active()).unwrap().pcie_for(0).unwrap().pf_type.is_rdma());
    assert_eq!(emu.info().function_mode, 0x6);
    assert_eq!(failure(mbox.execute(&SetActiveProfile::new(0xEE))), BaseStatus::IllegalField);
}

#[test]
fn next_profile_survives_a_new_process_and_activates_at_power_cycle() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let list = mbox.execute(&GetProfileList::default()).unwrap();
    let roce = list.entries.iter().find(|e| e.description.starts_with("RoCE-1")).unwrap().id;
    mbox.execute(&SetActiveProfile::new(roce)).unwrap();
    drop(mbox);
    let later = Emulator::open(&emu.state_dir()).unwrap();
    assert_eq!(later.info().profiles.iter().find(|p| p.next).unwrap().id, roce);
    assert!(!later.info().profiles.iter().find(|p| p.active).unwrap().roce);
    later.power_cycle().unwrap();
    let mut mbox = host(&later);
    assert_eq!(mbox.execute(&QueryFirmwareConfig).unwrap().function_mode.0, 0x6);
}
