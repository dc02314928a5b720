//! SET_PROFILE_CONFIG: saved vs running (NOSV) changes, be2net's unload pair, rejections.

mod common;

use std::sync::Arc;

use oce_emulator::Emulator;
use oce_mailbox::commands::*;
use oce_mailbox::status::BaseStatus;
use oce_mailbox::{BootstrapMailbox, MailboxError, ManualClock};

fn host(emu: &Emulator) -> BootstrapMailbox<Emulator> {
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new())).unwrap();
    mbox.initialize().unwrap();
    mbox
}

fn flags(bits: u8) -> DescriptorFlags {
    DescriptorFlags(bits)
}

fn nic_change(eq_count: u16, bits: u8) -> ResourceDescriptor {
    ResourceDescriptor::Nic(NicDescriptor {
        flags: flags(bits),
        eq_count,
        ..NicDescriptor::unchanged(DescriptorVersion::V1)
    })
}

fn eq_count(cfg: &ProfileConfig) -> u16 {
    cfg.nics().next().unwrap().eq_count
}

fn status(result: Result<impl std::fmt::Debug, MailboxError>) -> BaseStatus {
    match result {
        Err(MailboxError::CommandFailed { status, .. }) => status.base,
        other => panic!("expected a failure status, got {other:?}"),
    }
}

#[test]
fn be2net_unload_pair_is_accepted_and_changes_nothing() {
    let (_d, emu) = common::fresh();
    let mut mbox = host(&emu);
    let before = (
        mbox.execute(&GetActiveProfile).unwrap(),
        mbox.execute(&GetProfileConfig::active()).unwrap(),
        mbox.execute(&GetProfileConfig::saved()).unwrap(),
    );
    mbox.execute(&GetProfileConfig { query_modifiable: true, ..GetProfileConfig::active() }).unwrap();
    let pcie = PcieDescriptor {
        flags: flags(DescriptorFlags::IMM | DescriptorFlags::NOSV),
        pf_num: 0,
        sriov_state: 0,
        num_vfs: 0,
        ..PcieDescriptor::unchanged(DescriptorVersion::V1)
    };
    let vft = NicDescriptor {
        flags: flags(DescriptorFlags::IMM | DescriptorFlags::NOSV | DescriptorFlags::VFT),
        ..NicDescriptor::unchanged(DescriptorVersion::V1)
    };
    let set = SetProfileConfig {
        profile_id: 0,
        isap: false,
        descriptors: vec![ResourceDescriptor::Pcie(pcie), ResourceDescriptor::Nic(vft)],
    };
    mbox.execute(&set).unwrap();
    let after = (
        mbox.execute(&GetActiveProfile).unwrap(),
        mbox.execute(&GetProfileConfig::active()).unwrap(),
        mbox.execute(&GetProfileConfig::saved()).unwrap(),
    );
    assert_eq!(before, after);
}

#[test]
fn nosv_changes_only_the_running_config_until_the_next_post() {
    let (_d, emu) = common::fresh();
    let mut mbox = host(&emu);
    let factory = eq_count(&mbox.execute(&GetProfileConfig::active()).unwrap());
    let set = SetProfileConfig { profile_id: 0, isap: false, descriptors: vec![nic_change(3, DescriptorFlags::NOSV)] };
    mbox.execute(&set).unwrap();
    assert_eq!(eq_count(&mbox.execute(&GetProfileConfig::active()).unwrap()), 3);
    assert_eq!(mbox.execute(&GetFuncConfig).unwrap().nic().unwrap().eq_count, 3, "GET_FUNC_CONFIG agrees");
    assert_eq!(eq_count(&mbox.execute(&GetProfileConfig::saved()).unwrap()), factory, "not saved");
    emu.power_cycle().unwrap();
    let mut mbox = host(&emu);
    assert_eq!(eq_count(&mbox.execute(&GetProfileConfig::active()).unwrap()), factory, "lost at POST");
}

#[test]
fn a_saved_change_to_another_profile_persists_and_applies_when_it_boots() {
    let (_d, emu) = common::fresh();
    let mut mbox = host(&emu);
    let list = mbox.execute(&GetProfileList::default()).unwrap();
    let roce = list.entries.iter().find(|e| e.description.starts_with("RoCE-1")).unwrap().id;
    let set = SetProfileConfig { profile_id: roce, isap: false, descriptors: vec![nic_change(6, 0)] };
    mbox.execute(&set).unwrap();
    let saved = mbox.execute(&GetProfileConfig { profile_id: roce, ..GetProfileConfig::saved() }).unwrap();
    assert_eq!(eq_count(&saved), 6);
    assert_ne!(
        eq_count(&mbox.execute(&GetProfileConfig::active()).unwrap()),
        6,
        "the running NIC profile is untouched"
    );
    mbox.execute(&SetActiveProfile::new(roce)).unwrap();
    drop(mbox);
    let later = Emulator::open(&emu.state_dir()).unwrap();
    later.power_cycle().unwrap();
    let mut mbox = host(&later);
    assert_eq!(eq_count(&mbox.execute(&GetProfileConfig::active()).unwrap()), 6);
}

#[test]
fn rejected_requests_change_nothing() {
    let (_d, emu) = common::fresh();
    let mut mbox = host(&emu);
    let before = mbox.execute(&GetProfileConfig::active()).unwrap();
    let list = mbox.execute(&GetProfileList::default()).unwrap();
    let other = list.entries.iter().find(|e| e.description == "NIC+FCoE").unwrap().id;
    let vfs = ResourceDescriptor::Pcie(PcieDescriptor {
        pf_num: 0,
        num_vfs: 4,
        ..PcieDescriptor::unchanged(DescriptorVersion::V1)
    });
    for (profile_id, descriptors) in [
        (0, vec![nic_change(5, 0), vfs]),                            // SR-IOV: no VFs here
        (0xEE, vec![nic_change(5, 0)]),                              // unknown profile
        (other, vec![nic_change(5, DescriptorFlags::NOSV)]),         // NOSV on a profile that does not run
        (0, vec![ResourceDescriptor::Port(PortDescriptor::new(0))]), // not settable
    ] {
        let set = SetProfileConfig { profile_id, isap: false, descriptors };
        assert_eq!(status(mbox.execute(&set)), BaseStatus::IllegalField);
    }
    assert_eq!(mbox.execute(&GetProfileConfig::active()).unwrap(), before);
    assert_eq!(eq_count(&mbox.execute(&GetProfileConfig::saved()).unwrap()), eq_count(&before));
}
