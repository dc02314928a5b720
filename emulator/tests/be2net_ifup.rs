//! `ip link set up` and what follows, through the be2net-like host (spec/be2net-driver.md §3.5,
//! §4.1, §4.2, §4.5): arming, EQ entries and interrupts (MSI-X and INTx), the TX sink, the
//! link-state event, asynchronous statistics, ordered completions under a slow command.

use oce_testhost as be2net_host;

use std::time::Duration;

use be2net_host::driver::Nic;
use be2net_host::{Host, Irq};
use oce_emulator::{Event, FaultSpec};
use oce_mailbox::Reader;
use oce_mailbox::Wire;
use oce_mailbox::commands::{GetFwVersion, LinkStatusQuery, SetInterruptEnable};
use oce_mailbox::entries::LinkStateEvent;

fn up(eqs: u16) -> (tempfile::TempDir, Host, Nic) {
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::new(&dir.path().join("emu"));
    let mut nic = host.probe(eqs).unwrap();
    assert!(host.irq.take().is_empty(), "probe needs no interrupt: nothing is armed");
    assert!(host.open(&mut nic).unwrap(), "carrier on: the link is up");
    (dir, host, nic)
}

fn mcc_cq(host: &Host) -> u16 {
    host.mcc_cq.as_ref().unwrap().id
}

#[test]
fn the_first_command_after_arming_raises_the_mcc_eqs_vector() {
    let (_d, mut host, mut nic) = up(2);
    // LINK_STATUS_QUERY completed on the armed MCC CQ: one entry on EQ 0, its vector.
    let (irqs, served) = host.interrupt(&mut nic);
    assert_eq!(irqs, [Irq::Msix(0)]);
    assert_eq!(served, [(0, vec![mcc_cq(&host)])]);
    // Re-armed with the entry popped: quiet until the next completion.
    assert!(host.irq.take().is_empty());
    host.mcc(&GetFwVersion).unwrap();
    assert_eq!(host.interrupt(&mut nic).0, [Irq::Msix(0)]);
}

#[test]
fn a_sent_frame_is_completed_on_its_rings_cq_and_vector() {
    let (_d, mut host, mut nic) = up(2);
    host.interrupt(&mut nic);
    host.send(&mut nic, 1, 1); // header + 1 fragment
    host.send(&mut nic, 1, 2); // header + 2 fragments + padding
    let (irqs, served) = host.interrupt(&mut nic);
    assert_eq!(irqs, [Irq::Msix(1)], "the TX CQ of ring 1 is on EQ 1");
    assert_eq!(served, [(1, vec![nic.txqs[1].cq.id])], "one event: the CQ disarmed after the first entry");
    assert_eq!(nic.txqs[1].completed, [1, 5], "each request completes at its last WRB");
    assert!(nic.txqs[0].completed.is_empty());
    host.send(&mut nic, 0, 1);
    assert_eq!(host.interrupt(&mut nic).0, [Irq::Msix(0)]);
    assert_eq!(nic.txqs[0].completed, [1]);
}

#[test]
fn link_down_and_up_reach_the_driver_as_events_with_an_interrupt() {
    let (_d, mut host, mut nic) = up(1);
    host.interrupt(&mut nic);
    host.dev.set_fault(FaultSpec::parse("link-down").unwrap()).unwrap();
    assert_eq!(host.interrupt(&mut nic).0, [Irq::Msix(0)]);
    let down = LinkStateEvent::decode(&mut Reader::new(&host.events[0])).unwrap();
    assert_eq!((down.physical_port, down.port_link_status), (0, LinkStateEvent::LOGICAL), "logical, physically down");
    assert!(!host.mcc(&LinkStatusQuery).unwrap().is_link_up());
    assert!(!host.dev.info().ports[0].link_up);
    host.interrupt(&mut nic);
    host.dev.clear_fault("link-down").unwrap();
    assert_eq!(host.interrupt(&mut nic).0, [Irq::Msix(0)]);
    let up = LinkStateEvent::decode(&mut Reader::new(&host.events[1])).unwrap();
    assert_eq!(up.port_link_status, LinkStateEvent::LOGICAL | LinkStateEvent::PHYSICAL_UP);
    assert!(host.mcc(&LinkStatusQuery).unwrap().is_link_up());
    assert_eq!(host.events.len(), 2, "one event per change");
}

#[test]
fn statistics_and_temperature_complete_asynchronously() {
    let (_d, mut host, mut nic) = up(1);
    host.interrupt(&mut nic);
    let stats = host.worker_stats();
    let temp = host.worker_temperature();
    assert_eq!(host.interrupt(&mut nic).0, [Irq::Msix(0)], "one interrupt: the CQ disarmed after the first");
    assert!(host.completed[&stats].is_success() && host.completed[&temp].is_success());
    assert_eq!(host.mcc_outstanding(), 0);
}

#[test]
fn intx_is_asserted_by_an_event_and_cleared_by_the_eq_doorbell() {
    let (_d, mut host, mut nic) = up(0);
    assert!(!nic.msix);
    let (irqs, served) = host.interrupt(&mut nic);
    assert_eq!(irqs, [Irq::Level(true)], "INTA# asserted by the LINK_STATUS_QUERY completion");
    assert_eq!(served, [(0, vec![mcc_cq(&host)])]);
    assert_eq!(host.irq.take(), [Irq::Level(false)], "CLR de-asserted it; the re-arm found nothing new");
    host.send(&mut nic, 0, 1);
    let (irqs, _) = host.interrupt(&mut nic);
    assert_eq!(irqs, [Irq::Level(true)]);
    assert_eq!(nic.txqs[0].completed, [1]);
}

#[test]
fn a_rearm_with_events_outstanding_fires_at_once() {
    let (_d, mut host, mut nic) = up(1);
    host.interrupt(&mut nic);
    let eq = host.eqs[0].id;
    host.eq_notify(eq, false, true, 0); // the ISR: disarm, clear
    host.mcc(&GetFwVersion).unwrap(); // an event lands while the driver polls
    host.mcc(&GetFwVersion).unwrap();
    assert!(host.irq.take().is_empty(), "the EQ is disarmed");
    host.eq_notify(eq, true, false, 0); // re-armed without popping the entry
    assert_eq!(host.irq.take(), [Irq::Msix(0)], "no lost wake-up");
}

#[test]
fn a_cq_rearmed_over_an_entry_it_has_not_popped_posts_its_event_at_once() {
    // ocrdma's MQ handler, on one CPU, reaps its CQ and wakes the command's waiter, which posts
    // the next command from another CPU before the handler rings the CQ doorbell with re-arm:
    // that command's completion lands on the disarmed CQ.
    let (_d, mut host, mut nic) = up(1);
    host.interrupt(&mut nic);
    let cq = mcc_cq(&host);
    host.cq_notify(cq, false, 0);
    let tag = host.mcc_post(&GetFwVersion);
    assert!(host.irq.take().is_empty(), "a disarmed CQ posts no event");
    host.cq_notify(cq, true, 0); // re-armed, that entry not popped
    let (irqs, served) = host.interrupt(&mut nic);
    assert_eq!(irqs, [Irq::Msix(0)], "no lost wake-up");
    assert_eq!(served, [(0, vec![cq])]);
    assert!(host.completed[&tag].is_success());
    // Popped and re-armed in one write (be2net's way): armed, nothing more to announce.
    assert!(host.irq.take().is_empty());
    host.mcc(&GetFwVersion).unwrap();
    assert_eq!(host.interrupt(&mut nic).0, [Irq::Msix(0)], "armed again: the next completion interrupts");
}

#[test]
fn no_interrupt_while_host_interrupts_are_off() {
    let (_d, mut host, mut nic) = up(1);
    host.interrupt(&mut nic);
    host.mbox(&SetInterruptEnable { enabled: false }).unwrap();
    host.mcc(&GetFwVersion).unwrap();
    assert!(host.irq.take().is_empty());
    assert!(host.dev.firmware().events().iter().any(|e| matches!(e, Event::InterruptSuppressed { .. })));
}

#[test]
fn a_slow_command_holds_its_completion_and_those_behind_it_in_order() {
    let (_d, mut host, mut nic) = up(1);
    host.interrupt(&mut nic);
    host.dev.set_fault(FaultSpec::parse("slow=1:35:100").unwrap()).unwrap();
    let slow = host.mcc_post(&GetFwVersion);
    let behind = host.mcc_post(&LinkStatusQuery);
    assert_eq!(host.process_mcc(), 0, "nothing completed yet");
    assert!(host.irq.take().is_empty());
    host.clock.advance(Duration::from_millis(99));
    host.dev.poll();
    assert_eq!(host.process_mcc(), 0);
    host.clock.advance(Duration::from_millis(1));
    assert!(host.dev.poll().is_none(), "nothing more is held");
    assert_eq!(host.irq.take(), [Irq::Msix(0)]);
    assert_eq!(host.process_mcc(), 2);
    assert!(host.completed[&slow].is_success() && host.completed[&behind].is_success());
    let held = Duration::from_millis(100);
    let delayed: Vec<Event> =
        host.dev.firmware().events().into_iter().filter(|e| matches!(e, Event::CompletionDelayed { .. })).collect();
    assert_eq!(delayed, [Event::CompletionDelayed { subsystem: 1, opcode: 35, held }], "only the slow one was held");
}

#[test]
fn close_and_remove_after_ifup_leave_the_function_empty() {
    let (_d, mut host, mut nic) = up(2);
    host.interrupt(&mut nic);
    host.send(&mut nic, 0, 1);
    host.interrupt(&mut nic);
    host.close(&mut nic).unwrap();
    host.remove(nic).unwrap();
    let mut again = host.probe(2).unwrap();
    assert!(host.open(&mut again).unwrap());
    let events = host.dev.firmware().events();
    assert!(!events.iter().any(|e| matches!(e, Event::DmaFault { .. })), "{events:?}");
    assert!(host.dev.queue_misses().is_empty(), "{:?}", host.dev.queue_misses());
}
