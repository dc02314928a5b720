//! The host driver's POST wait after a chip reset, on the emulator with a manual clock: a POST
//! that never completes ends in a typed timeout naming the stage it stuck at, without real waiting.

use std::sync::Arc;
use std::time::Duration;

use oce_emulator::{Emulator, FaultSpec};
use oce_mailbox::regs::PostStage;
use oce_mailbox::{BootstrapMailbox, MailboxError, ManualClock, Timeouts};
use oce_tests::fresh_emulator;

#[test]
fn stuck_post_after_soft_reset_is_a_timeout_naming_the_stage() {
    let (_dir, emu): (_, Emulator) = fresh_emulator();
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new()))
        .unwrap()
        .with_timeouts(Timeouts { post: Duration::from_secs(60), ..Timeouts::default() });
    mbox.initialize().unwrap();
    emu.set_fault(FaultSpec::parse("post-stuck=0x0002").unwrap()).unwrap();
    match mbox.soft_reset() {
        Err(MailboxError::PostTimeout { stage, waited }) => {
            assert_eq!(stage, PostStage::HostReady);
            assert_eq!(waited, Duration::from_secs(60));
        }
        other => panic!("expected a POST timeout, got {other:?}"),
    }
    emu.clear_faults().unwrap();
    mbox.soft_reset().unwrap();
}
