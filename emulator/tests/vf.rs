//! A state directory made as a virtual function: its identity, its one-BAR register map
//! (spec/protocol.md §1.3, §2.1), its privileges, and the adapter-wide commands it may not send.

mod common;

use common::{failure, host};

use oce_emulator::{CreateOptions, Emulator, FunctionType};
use oce_mailbox::commands::*;
use oce_mailbox::regs::bars::{self, BarLayout};
use oce_mailbox::regs::{MailboxDoorbell, Semaphore, SliIntf, SoftReset, UeStatus};
use oce_mailbox::status::BaseStatus;
use oce_pci::{ConfigSpace, DmaBuffer, PciError, PciFunction, RegisterIo};

fn vf() -> (tempfile::TempDir, Emulator) {
    let dir = tempfile::tempdir().unwrap();
    let emu =
        Emulator::create_with(&dir.path().join("vf"), CreateOptions { seed: 9, function: FunctionType::Vf }).unwrap();
    (dir, emu)
}

#[test]
fn identity_and_sli_intf() {
    let (_d, emu) = vf();
    let cfg = emu.config();
    assert_eq!(cfg.read32(0x00).unwrap(), 0x0728_10DF, "10df:0728");
    let sli = SliIntf(cfg.read32(SliIntf::OFFSET).unwrap());
    assert_eq!(sli.0, 0xC000_1F41);
    assert!(sli.is_valid() && sli.is_vf());
    assert_eq!((sli.if_type(), sli.family(), sli.sli_rev()), (1, 0xF, 4));
    assert_eq!(emu.function(), FunctionType::Vf);
    assert_eq!((emu.info().device_id, emu.info().function), (0x0728, FunctionType::Vf));
}

#[test]
fn the_function_type_persists_and_old_creators_make_pfs() {
    let (d, emu) = vf();
    drop(emu);
    assert_eq!(Emulator::open(&d.path().join("vf")).unwrap().function(), FunctionType::Vf);
    let json = std::fs::read_to_string(d.path().join("vf/state.json")).unwrap();
    assert!(json.contains("\"function\": \"vf\""), "{json}");
    let (_d2, pf) = common::fresh();
    assert_eq!(pf.function(), FunctionType::Pf);
}

#[test]
fn one_bar_with_the_doorbells_and_the_pcicfg_shadow_at_0x1000() {
    let (_d, emu) = vf();
    assert!(matches!(emu.map_bar(4, 4), Err(PciError::NoSuchBar { bar: 4 })), "no BAR4 on a VF");
    assert!(matches!(emu.map_bar(0, 0x2001), Err(PciError::BarTooSmall { bar: 0, len: 0x2000, .. })));
    let layout = BarLayout::for_function(true);
    let bar0 = emu.map_bar(layout.doorbell, bars::DOORBELL_MIN_LEN).unwrap();
    let shadow = layout.pcicfg_base;
    assert_eq!(bar0.read32(shadow), 0x0728_10DF, "pcicfg shadow: config 0x00");
    assert_eq!(bar0.read32(shadow + u32::from(SliIntf::OFFSET)), 0xC000_1F41);
    assert_eq!(bar0.read32(shadow + u32::from(Semaphore::OFFSET)), 0xC000);
    assert_eq!(bar0.read32(shadow + UeStatus::LOW_OFFSET), 0);
    assert_eq!(bar0.read32(MailboxDoorbell::OFFSET), MailboxDoorbell::RDY, "mailbox doorbell at BAR0 + 0x160");
    assert_eq!(bar0.read32(0x58), 0, "the doorbell page is not the config view");
    assert_eq!(bar0.read32(0x2000), u32::MAX, "past the end of BAR0");
    // A soft reset through the shadow restarts POST.
    bar0.write32(shadow + SoftReset::OFFSET, SoftReset::SR);
    assert_eq!(emu.config().read32(Semaphore::OFFSET).unwrap(), 0x0000);
}

#[test]
fn the_bar_registers_show_one_bar() {
    let (_d, emu) = vf();
    let cfg = emu.config();
    cfg.write32(0x10, u32::MAX).unwrap();
    assert_eq!(cfg.read32(0x10).unwrap(), 0xFFFF_E004, "BAR0: 64-bit, 8 KiB");
    cfg.write32(0x20, u32::MAX).unwrap();
    assert_eq!(cfg.read32(0x20).unwrap(), 0, "BAR4 not implemented");
}

#[test]
fn the_host_driver_runs_a_vf_with_default_privileges() {
    let (_d, emu) = vf();
    let mut mbox = host(&emu);
    assert!(mbox.is_virtual_function());
    assert_eq!(mbox.execute(&GetFnPrivileges).unwrap().0, 0x1);
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().running, "11.1.172.23");
    assert_eq!(mbox.execute(&GetCntlAttributes).unwrap().pci_device_id, 0x0728);
    assert!(mbox.execute(&GetFuncConfig).unwrap().nic().is_some(), "a VF reads its own limits");
    assert!(mbox.execute(&QueryFirmwareConfig).is_ok());
}

#[test]
fn adapter_wide_commands_are_unauthorized_on_a_vf() {
    let (_d, emu) = vf();
    let mut mbox = host(&emu);
    let unauthorized = BaseStatus::UnauthorizedRequest;
    assert_eq!(failure(mbox.execute(&SetActiveProfile::new(0x1B))), unauthorized);
    assert_eq!(failure(mbox.execute(&GetActiveProfile)), unauthorized);
    assert_eq!(failure(mbox.execute(&GetProfileList::default())), unauthorized);
    assert_eq!(failure(mbox.execute(&GetProfileConfig::active())), unauthorized);
    let set = SetProfileConfig { profile_id: 0, isap: false, descriptors: Vec::new() };
    assert_eq!(failure(mbox.execute(&set)), unauthorized);
    assert_eq!(failure(mbox.execute(&ReadFlashrom::crc(FlashOpType::OffsetSpecified, 0xFFC))), unauthorized);
    let chunk = WriteFlashrom {
        op_code: FlashromOp::Flash,
        op_type: FlashOpType::OffsetSpecified,
        offset: 0,
        data: std::borrow::Cow::Borrowed(&[0u8; 8]),
    };
    assert_eq!(failure(mbox.execute(&chunk)), unauthorized);
    // Nothing changed: the next-boot profile is still the factory one.
    let info = emu.info();
    assert!(info.profiles.iter().any(|p| p.next && p.active));
}

#[test]
fn raw_unauthorized_bytes() {
    let (_d, emu) = vf();
    let layout = BarLayout::VF;
    let db = emu.map_bar(layout.doorbell, bars::DOORBELL_MIN_LEN).unwrap();
    let (mbox, addr, off) = common::mailbox(&emu);
    // SET_ACTIVE_PROFILE (168), embedded, request_length 4, profile 0x1B.
    let mut wrb = vec![0u8; 256];
    wrb[0] = 1;
    wrb[4] = 20;
    wrb[20..40].copy_from_slice(&hex::decode("a80100000000000004000000000000001b000000").unwrap());
    mbox.write_at(off, &wrb).unwrap();
    common::post_mailbox(&db, addr);
    // Response header: base status 5, response_length 0; completion status 5.
    assert_eq!(hex::encode(common::read(&mbox, off + 20, 16)), "a8010000050000000000000000000000");
    assert_eq!(common::read(&mbox, off + 256, 4), [5, 0, 0, 0]);
}
