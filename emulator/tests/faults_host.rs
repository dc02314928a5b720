//! Every non-flash fault against the real host driver: each one ends in the typed error that
//! names its symptom, and the adapter works again once the fault is cleared.

mod common;

use std::sync::Arc;

use common::fresh;
use oce_emulator::{Emulator, FaultSpec};
use oce_mailbox::commands::{GetActiveProfile, GetFwVersion};
use oce_mailbox::regs::PostStage;
use oce_mailbox::status::{AdditionalStatus, BaseStatus};
use oce_mailbox::{BootstrapMailbox, MailboxError, MailboxStep, ManualClock};

/// An adapter with `spec` set, and a host on a manual clock the emulator shares.
fn faulty(spec: &str) -> (tempfile::TempDir, Emulator, BootstrapMailbox<Emulator>) {
    let (dir, emu, host, _) = faulty_with_clock(spec);
    (dir, emu, host)
}

fn faulty_with_clock(spec: &str) -> (tempfile::TempDir, Emulator, BootstrapMailbox<Emulator>, Arc<ManualClock>) {
    let (dir, emu) = fresh();
    let clock = Arc::new(ManualClock::new());
    emu.set_clock(clock.clone());
    let host = BootstrapMailbox::open(emu.clone(), clock.clone()).unwrap();
    emu.set_fault(FaultSpec::parse(spec).unwrap()).unwrap();
    (dir, emu, host, clock)
}

/// Clears every fault and checks the host works again.
fn recovers(emu: &Emulator, host: &mut BootstrapMailbox<Emulator>) {
    emu.clear_faults().unwrap();
    host.initialize().unwrap();
    assert_eq!(host.execute(&GetFwVersion).unwrap().running, "11.1.172.23");
}

#[test]
fn post_stuck_is_a_post_timeout_naming_the_stage() {
    let (_d, emu, mut host) = faulty("post-stuck=0x0001");
    let err = host.initialize().unwrap_err();
    assert!(matches!(err, MailboxError::PostTimeout { stage: PostStage::AwaitingHostReady, .. }), "{err}");
    recovers(&emu, &mut host);
}

#[test]
fn post_error_is_a_post_error() {
    let (_d, emu, mut host) = faulty("post-error");
    let err = host.initialize().unwrap_err();
    assert!(matches!(err, MailboxError::PostError { raw: 0x8000_0002, .. }), "{err}");
    recovers(&emu, &mut host);
}

#[test]
fn ue_bits_are_an_unrecoverable_error() {
    let (_d, emu, mut host) = faulty("ue=0x4,0x0");
    let err = host.check_ue().unwrap_err();
    assert!(matches!(err, MailboxError::UnrecoverableError { ue } if ue.low == 4), "{err}");
    recovers(&emu, &mut host);
    host.check_ue().unwrap();
}

#[test]
fn rdy_never_times_out_before_the_first_write() {
    let (_d, emu, mut host) = faulty("rdy-never");
    let err = host.initialize().unwrap_err();
    assert!(matches!(err, MailboxError::NotReady { step: MailboxStep::BeforeHigh, .. }), "{err}");
    recovers(&emu, &mut host);
}

#[test]
fn rdy_hang_times_out_after_the_high_write() {
    let (_d, emu, mut host) = faulty("rdy-hang");
    let err = host.initialize().unwrap_err();
    assert!(matches!(err, MailboxError::NotReady { step: MailboxStep::BeforeLow, .. }), "{err}");
    assert!(emu.faults().rdy_never);
    recovers(&emu, &mut host);
}

#[test]
fn rdy_after_many_reads_is_still_a_working_adapter() {
    let (_d, emu, mut host) = faulty("rdy-after=200");
    host.initialize().unwrap();
    assert_eq!(host.execute(&GetFwVersion).unwrap().running, "11.1.172.23");
    recovers(&emu, &mut host);
}

#[test]
fn gone_is_a_gone_device() {
    let (_d, emu, mut host) = faulty("gone");
    let err = host.initialize().unwrap_err();
    assert!(matches!(err, MailboxError::ConfigGone), "{err}");
    assert!(matches!(BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new())), Err(MailboxError::ConfigGone)));
    recovers(&emu, &mut host);
}

#[test]
fn a_forced_status_is_a_command_failure() {
    let (_d, emu, mut host) = faulty("status=1:167:1:0x4d");
    host.initialize().unwrap();
    let err = host.execute(&GetActiveProfile).unwrap_err();
    let status = err.status().unwrap();
    assert_eq!((status.base, status.additional), (BaseStatus::Failed, AdditionalStatus::FlashImageCrcMismatch));
    recovers(&emu, &mut host);
}

#[test]
fn a_short_response_is_malformed() {
    for spec in ["truncate=1:35:8", "response-length=1:35:8"] {
        let (_d, emu, mut host) = faulty(spec);
        host.initialize().unwrap();
        let err = host.execute(&GetFwVersion).unwrap_err();
        assert!(matches!(err, MailboxError::Malformed { command: "GET_FW_VERSION", .. }), "{spec}: {err}");
        recovers(&emu, &mut host);
    }
}

#[test]
fn no_valid_is_an_invalid_completion() {
    let (_d, emu, mut host) = faulty("no-valid=1:35");
    host.initialize().unwrap();
    let err = host.execute(&GetFwVersion).unwrap_err();
    assert!(matches!(err, MailboxError::InvalidCompletion { flags: 0x1000_0000, .. }), "{err}");
    recovers(&emu, &mut host);
}

#[test]
fn a_slow_command_completes_within_its_timeout_and_times_out_beyond_it() {
    let (_d, emu, mut host, clock) = faulty_with_clock("slow=1:35:500");
    host.initialize().unwrap();
    assert_eq!(host.execute(&GetFwVersion).unwrap().running, "11.1.172.23");
    emu.set_fault(FaultSpec::parse("slow=1:35:60000").unwrap()).unwrap();
    let err = host.execute(&GetFwVersion).unwrap_err();
    assert!(matches!(err, MailboxError::NotReady { step: MailboxStep::Executing, .. }), "{err}");
    // The command is still running after the host gave up; clearing the fault does not cut it.
    emu.clear_faults().unwrap();
    assert!(matches!(host.execute(&GetFwVersion), Err(MailboxError::NotReady { step: MailboxStep::BeforeHigh, .. })));
    clock.advance(std::time::Duration::from_secs(60));
    recovers(&emu, &mut host);
}
