//! The mailbox doorbell handshake and the mailbox engine, driven by raw register writes and raw
//! DMA bytes (no oce-mailbox driver): each test proves the bytes of spec/protocol.md §3.

mod common;

use common::{db, fresh, mailbox, poll_rdy, post_mailbox, rdy, read, violations};
use oce_emulator::{Event, SignatureKind, Timing};
use oce_mailbox::regs::MailboxDoorbell;
use oce_pci::{DmaBuffer, PciFunction, RegisterIo};

const DB: u32 = MailboxDoorbell::OFFSET;

/// A GET_FW_VERSION WRB written byte by byte from spec/protocol.md §3.3, §4, §5.1: embedded
/// (dword 0 = 1), payload_length 80, tags, then the request header at WRB offset 20.
fn get_fw_version_wrb() -> Vec<u8> {
    let mut wrb = vec![0u8; 256];
    wrb[..20].copy_from_slice(&hex::decode("01000000" /* embedded */.to_owned() + "50000000" /* 80 */ + "44332211" /* tag0 */ + "88776655" /* tag1 */ + "00000000").unwrap());
    // opcode 35, subsystem 1, port 0, domain 0, timeout 0, request_length 64, version 0.
    wrb[20..36].copy_from_slice(&hex::decode("23010000000000004000000000000000").unwrap());
    wrb
}

#[test]
fn handshake_rdy_timing_and_execution_at_the_final_poll() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &get_fw_version_wrb()).unwrap();

    assert_eq!(rdy(&db), 1, "idle: RDY");
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    assert_eq!(poll_rdy(&db, 10), 1, "one read of RDY = 0 after the HI write");
    db.write32(DB, MailboxDoorbell::lo_for(addr).0);
    assert_eq!(rdy(&db), 0);
    assert_eq!(rdy(&db), 0);
    assert_eq!(read(&mbox, off + 256, 16), [0u8; 16], "nothing written before the busy period ends");
    assert_eq!(rdy(&db), 1, "the read that ends the busy period executes the command");
    // Completion: status 0, tags copied, flags VALID | COMPLETED (spec §3.4).
    assert_eq!(hex::encode(read(&mbox, off + 256, 16)), "00000000443322118877665500000090");
    assert!(violations(&emu).is_empty(), "{:?}", violations(&emu));
}

#[test]
fn get_fw_version_round_trip_proves_the_response_bytes() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &get_fw_version_wrb()).unwrap();
    post_mailbox(&db, addr);
    let resp = read(&mbox, off + 20, 80);
    // Response header: opcode 35, subsystem 1, status 0/0, response_length 64, actual 64.
    assert_eq!(hex::encode(&resp[..16]), "23010000000000004000000040000000");
    assert_eq!(&resp[16..28], b"11.1.172.23\0", "running version @16");
    assert_eq!(&resp[48..60], b"11.1.172.23\0", "on-flash version @48");
    assert_eq!(
        emu.events().last(),
        Some(&Event::Command { subsystem: 1, opcode: 35, version: 0, status: oce_mailbox::CompletionStatus::SUCCESS })
    );
}

#[test]
fn non_embedded_command_through_one_sge() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    let data = emu.alloc_dma(80).unwrap();
    data.write_at(0, &hex::decode("23010000000000004000000000000000").unwrap()).unwrap();
    let mut wrb = vec![0u8; 256];
    // dword 0 = 1 << 3 (one SGE), payload_length 80, SGE {pa_lo, pa_hi, len} at @20.
    wrb[0] = 0x08;
    wrb[4] = 80;
    wrb[20..24].copy_from_slice(&(data.iova() as u32).to_le_bytes());
    wrb[24..28].copy_from_slice(&((data.iova() >> 32) as u32).to_le_bytes());
    wrb[28..32].copy_from_slice(&80u32.to_le_bytes());
    mbox.write_at(off, &wrb).unwrap();
    post_mailbox(&db, addr);
    let resp = read(&data, 0, 80);
    assert_eq!(hex::encode(&resp[..16]), "23010000000000004000000040000000");
    assert_eq!(&resp[16..27], b"11.1.172.23");
    assert_eq!(read(&mbox, off + 268, 4), [0, 0, 0, 0x90], "VALID | COMPLETED");
}

#[test]
fn signatures_complete_before_any_flags_decoding() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    for (sig, kind) in [
        (oce_mailbox::wrb::FW_INIT_SIGNATURE, SignatureKind::FwInit),
        (oce_mailbox::wrb::FW_CLEAN_SIGNATURE, SignatureKind::FwClean),
    ] {
        let mut wrb = [0u8; 272];
        wrb[..8].copy_from_slice(&sig);
        mbox.write_at(off, &wrb).unwrap();
        post_mailbox(&db, addr);
        assert_eq!(hex::encode(read(&mbox, off + 256, 16)), "00000000000000000000000000000090");
        assert_eq!(emu.events().last(), Some(&Event::Signature { kind }));
        assert_eq!(read(&mbox, off, 8), sig, "the signature WRB is left as written");
    }
}

#[test]
fn lo_before_hi_is_ignored_and_reported() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &get_fw_version_wrb()).unwrap();
    db.write32(DB, MailboxDoorbell::lo_for(addr).0);
    assert_eq!(rdy(&db), 1, "nothing started");
    assert_eq!(read(&mbox, off + 256, 16), [0u8; 16]);
    assert_eq!(violations(&emu), [Event::LoBeforeHi { value: MailboxDoorbell::lo_for(addr).0 }]);
}

#[test]
fn every_command_needs_its_own_hi_write() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &get_fw_version_wrb()).unwrap();
    post_mailbox(&db, addr);
    db.write32(DB, MailboxDoorbell::lo_for(addr).0);
    assert_eq!(violations(&emu), [Event::LoBeforeHi { value: MailboxDoorbell::lo_for(addr).0 }]);
}

#[test]
fn lo_right_after_hi_without_polling_is_a_write_while_busy() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &get_fw_version_wrb()).unwrap();
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    db.write32(DB, MailboxDoorbell::lo_for(addr).0);
    assert_eq!(violations(&emu), [Event::WriteWhileBusy { value: MailboxDoorbell::lo_for(addr).0 }]);
    poll_rdy(&db, 10);
    assert_eq!(read(&mbox, off + 256, 16), [0u8; 16], "the ignored LO started nothing");
}

#[test]
fn a_new_command_before_rdy_is_a_write_while_busy() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &get_fw_version_wrb()).unwrap();
    poll_rdy(&db, 10);
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    poll_rdy(&db, 10);
    db.write32(DB, MailboxDoorbell::lo_for(addr).0);
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    assert_eq!(violations(&emu), [Event::WriteWhileBusy { value: MailboxDoorbell::hi_for(addr).0 }]);
    poll_rdy(&db, 10);
    assert_eq!(read(&mbox, off + 268, 4), [0, 0, 0, 0x90], "the first command still completes");
}

#[test]
fn an_unaligned_mailbox_is_reported() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    // The host uses the start of its buffer (8 bytes past a page) as the mailbox.
    let mbox = emu.alloc_dma(288).unwrap();
    let addr = mbox.iova();
    assert_ne!(addr % 16, 0);
    mbox.write_at(0, &get_fw_version_wrb()).unwrap();
    post_mailbox(&db, addr);
    assert_eq!(violations(&emu), [Event::UnalignedMailbox { address: addr }]);
    assert_eq!(read(&mbox, 256, 16), [0u8; 16], "no completion");
}

#[test]
fn a_mailbox_that_maps_nowhere_is_a_dma_fault() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, _) = mailbox(&emu);
    drop(mbox);
    // The buffer is freed: the address no longer translates.
    post_mailbox(&db, addr);
    assert_eq!(violations(&emu), [Event::DmaFault { iova: addr, len: 272 }]);
    assert_eq!(rdy(&db), 1, "RDY returns to 1 after the fault");
}

#[test]
fn unknown_opcode_and_unsupported_version_answer_illegal_request() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    for header in
        ["c8010000000000000400000000000000" /* opcode 200 */, "23010000000000004000000007000000" /* v7 */]
    {
        let mut wrb = get_fw_version_wrb();
        wrb[20..36].copy_from_slice(&hex::decode(header).unwrap());
        mbox.write_at(off, &wrb).unwrap();
        post_mailbox(&db, addr);
        // Header: opcode/subsystem echoed, base status 2, response_length 0.
        assert_eq!(hex::encode(read(&mbox, off + 20, 16)), format!("{}0000020000000000000000000000", &header[..4]));
        assert_eq!(read(&mbox, off + 256, 4), [2, 0, 0, 0]);
    }
}

#[test]
fn a_vf_domain_is_an_illegal_field() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    let mut wrb = get_fw_version_wrb();
    wrb[23] = 1; // domain 1 = VF 0
    mbox.write_at(off, &wrb).unwrap();
    post_mailbox(&db, addr);
    assert_eq!(read(&mbox, off + 256, 4), [3, 0, 0, 0]);
}

/// Posts a non-embedded GET_FW_VERSION whose SGE says `sge_len` at `sge_addr`; returns the
/// completion status dword.
fn non_embedded(emu: &oce_emulator::Emulator, sge_addr: u64, sge_len: u32) -> u32 {
    let db = db(emu);
    let (mbox, addr, off) = mailbox(emu);
    let mut wrb = vec![0u8; 256];
    wrb[0] = 0x08;
    wrb[20..24].copy_from_slice(&(sge_addr as u32).to_le_bytes());
    wrb[24..28].copy_from_slice(&((sge_addr >> 32) as u32).to_le_bytes());
    wrb[28..32].copy_from_slice(&sge_len.to_le_bytes());
    mbox.write_at(off, &wrb).unwrap();
    post_mailbox(&db, addr);
    u32::from_le_bytes(read(&mbox, off + 256, 4).try_into().unwrap())
}

#[test]
fn a_response_larger_than_the_buffer_is_insufficient_buffer() {
    let (_d, emu) = fresh();
    let data = emu.alloc_dma(40).unwrap();
    // request_length 24 fits the 40-byte buffer; the 64-byte response does not.
    data.write_at(0, &hex::decode("23010000000000001800000000000000").unwrap()).unwrap();
    assert_eq!(non_embedded(&emu, data.iova(), 40), 4);
    // response_length 0, actual_resp_len 64.
    assert_eq!(hex::encode(read(&data, 0, 16)), "23010000040000000000000040000000");
}

#[test]
fn a_request_length_beyond_the_buffer_is_invalid_length() {
    let (_d, emu) = fresh();
    let data = emu.alloc_dma(80).unwrap();
    data.write_at(0, &hex::decode("23010000000000004100000000000000").unwrap()).unwrap();
    assert_eq!(non_embedded(&emu, data.iova(), 80), 116);
}

#[test]
fn sge_limits_and_faults() {
    let (_d, emu) = fresh();
    let data = emu.alloc_dma(80).unwrap();
    assert_eq!(non_embedded(&emu, data.iova(), (1 << 20) + 1), 3, "longer than 1 MiB");
    assert_eq!(non_embedded(&emu, data.iova(), 8), 116, "shorter than a header");
    emu.take_events();
    assert_eq!(non_embedded(&emu, data.iova() + 8, 80), 1, "runs past the buffer");
    assert_eq!(violations(&emu), [Event::DmaFault { iova: data.iova() + 8, len: 80 }]);
}

#[test]
fn two_sges_are_refused() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    let mut wrb = vec![0u8; 256];
    wrb[0] = 2 << 3;
    mbox.write_at(off, &wrb).unwrap();
    post_mailbox(&db, addr);
    assert_eq!(read(&mbox, off + 256, 4), [3, 0, 0, 0]);
}

#[test]
fn zero_delays_still_execute_only_on_a_read() {
    let (_d, emu) = fresh();
    emu.set_timing(Timing { ready_delay: 0, exec_delay: 0, post_reads_per_stage: 1 });
    let db = db(&emu);
    let (mbox, addr, off) = mailbox(&emu);
    mbox.write_at(off, &get_fw_version_wrb()).unwrap();
    db.write32(DB, MailboxDoorbell::hi_for(addr).0);
    db.write32(DB, MailboxDoorbell::lo_for(addr).0);
    assert_eq!(read(&mbox, off + 268, 4), [0; 4]);
    assert_eq!(rdy(&db), 1);
    assert_eq!(read(&mbox, off + 268, 4), [0, 0, 0, 0x90]);
    assert!(violations(&emu).is_empty());
}

#[test]
fn other_doorbells_accept_writes_and_do_nothing() {
    let (_d, emu) = fresh();
    let db = db(&emu);
    for off in [0x60u32, 0x100, 0x120, 0x140] {
        db.write32(off, 0xFFFF_FFFF);
        assert_eq!(db.read32(off), 0, "write-only doorbell {off:#x} reads 0");
    }
    assert_eq!(rdy(&db), 1);
    assert!(emu.events().is_empty());
    assert_eq!(db.read32(0x1_0000), u32::MAX, "past the end of BAR4");
}
