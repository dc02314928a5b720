//! The diagnostic commands through the real host driver: DCBX GET_CONFIG (subsystem 0x10),
//! MANAGE_FAT QUERY / RETRIEVE and READ_TRANSRECV_DATA, with the emulator's documented contents
//! and the requests it refuses.

mod common;

use std::time::Duration;

use common::{failure, fresh, host};
use oce_emulator::{Emulator, FaultSpec};
use oce_mailbox::commands::*;
use oce_mailbox::status::BaseStatus;
use oce_mailbox::{BootstrapMailbox, RawCommand};

/// The base status of a raw non-embedded command of `len` bytes with `payload` at byte 16.
fn raw_status(
    mbox: &mut BootstrapMailbox<Emulator>,
    subsystem: u8,
    opcode: u8,
    len: usize,
    payload: &[u8],
) -> BaseStatus {
    let cmd = RawCommand {
        subsystem,
        opcode,
        version: 0,
        domain: 0,
        embedded: false,
        len,
        payload: payload.to_vec(),
        timeout: Duration::from_secs(4),
    };
    mbox.execute_raw(&cmd).unwrap().status.base
}

#[test]
fn dcbx_reports_pfc_in_sync_on_the_roce_priority() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    for param_type in [DcbxParamType::Operational, DcbxParamType::Admin] {
        let cfg = mbox.execute(&GetDcbxConfig { param_type }).unwrap();
        assert!(cfg.dcbx_enabled(), "{param_type}");
        assert_eq!(cfg.pfc_state.names(), ["enabled", "advertised", "willing", "in_sync"]);
        assert_eq!(cfg.pfc_enabled_priorities(), [3]);
        let roce = cfg.roce_app_entry().expect("an entry for ethertype 0x8915");
        assert_eq!(roce.mapped_priorities(), [3]);
        assert_eq!(cfg.roce_priority(), Some(3));
    }
    let peer = mbox.execute(&GetDcbxConfig { param_type: DcbxParamType::Peer }).unwrap();
    assert_eq!(peer.pfc_state.names(), ["enabled", "advertised"]);
    assert_eq!(peer.roce_priority(), None, "a peer copy is never in sync");
}

#[test]
fn pfc_unsync_fault_takes_sync_out_of_the_operational_copy_only() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    emu.set_fault(FaultSpec::parse("pfc-unsync").unwrap()).unwrap();
    let oper = mbox.execute(&GetDcbxConfig { param_type: DcbxParamType::Operational }).unwrap();
    assert_eq!(oper.pfc_state.names(), ["enabled", "advertised", "willing"]);
    assert_eq!(oper.roce_priority(), None);
    let admin = mbox.execute(&GetDcbxConfig { param_type: DcbxParamType::Admin }).unwrap();
    assert!(admin.pfc_state.is_enabled_and_synced());
    // The fault is the switch's, not the firmware's: a chip reset keeps it.
    mbox.soft_reset().unwrap();
    let oper = mbox.execute(&GetDcbxConfig { param_type: DcbxParamType::Operational }).unwrap();
    assert!(!oper.pfc_state.contains(DcbxFeatureState::SYNC));
}

#[test]
fn dcbx_refuses_other_opcodes_and_unknown_parameter_types() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    assert_eq!(
        failure(mbox.execute(&GetDcbxConfig { param_type: DcbxParamType::Unknown(7) })),
        BaseStatus::IllegalField
    );
    // Subsystem 0x10 knows GET_CONFIG only; other subsystems nothing.
    assert_eq!(raw_status(&mut mbox, 0x10, 2, 328, &[]), BaseStatus::IllegalRequest);
    assert_eq!(raw_status(&mut mbox, 0x11, 1, 328, &[]), BaseStatus::IllegalRequest);
    assert_eq!(raw_status(&mut mbox, 0x10, 1, 328, &1u32.to_le_bytes()), BaseStatus::Success);
}

#[test]
fn fat_query_and_retrieve_agree_however_many_commands_run_between() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let size = mbox.execute(&QueryFat).unwrap().log_size;
    assert!(size > 4);
    // More commands add events, but RETRIEVE reads what QUERY rendered.
    for _ in 0..5 {
        mbox.execute(&GetFwVersion).unwrap();
    }
    let whole = mbox.execute(&RetrieveFat { offset: 0, length: size }).unwrap();
    assert_eq!((whole.log_size, whole.read_log_length as usize), (size, whole.data.len()));
    assert_eq!(whole.data.len(), size as usize);
    let count = u32::from_le_bytes(whole.data[..4].try_into().unwrap());
    let text = String::from_utf8(whole.data[4..].to_vec()).unwrap();
    assert!(text.starts_with("OCE14000 EMULATED FAT LOG 1\nadapter OCe14102 serial EMU"), "{text}");
    assert!(text.contains("fw_init signature"), "{text}");
    assert!(text.contains("command 1-61 v0: base status 0"), "FUNCTION_RESET of initialise: {text}");
    assert!(!text.contains("command 1-35"), "GET_FW_VERSION ran after the QUERY: {text}");
    assert_eq!(text.lines().count() as u32, 4 + count);
    // A piece from the middle, and one that runs past the end.
    let piece = mbox.execute(&RetrieveFat { offset: 10, length: 20 }).unwrap();
    assert_eq!(piece.data, whole.data[10..30]);
    let tail = mbox.execute(&RetrieveFat { offset: size - 3, length: 100 }).unwrap();
    assert_eq!(tail.data, whole.data[size as usize - 3..]);
    assert_eq!(failure(mbox.execute(&RetrieveFat { offset: size + 1, length: 4 })), BaseStatus::IllegalField);
    // A new QUERY sees the later commands.
    let again = mbox.execute(&QueryFat).unwrap().log_size;
    assert!(again > size);
}

#[test]
fn fat_refuses_an_unknown_operation() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    assert_eq!(raw_status(&mut mbox, 1, 68, 36, &5u32.to_le_bytes()), BaseStatus::IllegalField);
    assert_eq!(raw_status(&mut mbox, 1, 68, 36, &1u32.to_le_bytes()), BaseStatus::Success);
}

#[test]
fn every_port_has_an_sfp_plus_module_and_no_diagnostics() {
    let (_d, emu) = fresh();
    let mut mbox = host(&emu);
    let serial = mbox.execute(&GetCntlAttributes).unwrap().serial_string();
    for port in 0..2 {
        let page = mbox.execute(&ReadTransceiverData { page: TransceiverPage::A0, port }).unwrap();
        assert_eq!((page.page, page.port), (TransceiverPage::A0, port));
        let id = page.identity().unwrap();
        assert_eq!(id.identifier, ModuleIdentifier::Sfp);
        assert_eq!(
            (id.vendor.as_str(), id.part_number.as_str(), id.revision.as_str()),
            ("EMULATED", "SFP-10G-SR-EMU", "A")
        );
        assert_eq!(id.vendor_oui, [0x00, 0x00, 0xC9]);
        assert_eq!(id.serial_number, format!("{serial}P{port}"));
        let a2 = mbox.execute(&ReadTransceiverData { page: TransceiverPage::A2, port }).unwrap();
        assert!(a2.data.iter().all(|&b| b == 0));
    }
    let past = ReadTransceiverData { page: TransceiverPage::A0, port: 2 };
    assert_eq!(failure(mbox.execute(&past)), BaseStatus::IllegalField);
    let page = ReadTransceiverData { page: TransceiverPage::Unknown(0x50), port: 0 };
    assert_eq!(failure(mbox.execute(&page)), BaseStatus::IllegalField);
}
