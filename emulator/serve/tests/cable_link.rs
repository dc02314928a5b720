//! The link of a port on a datagram cable follows the peer (`oce_emulator_serve::cable::carrier`):
//! two adapters, each driven by the be2net-like test host, on real AF_UNIX datagram sockets, each
//! end carried by its own [`Carrier`]. A peer that goes is a link-down event on the other end, a
//! peer that comes back a link-up event, and frames cross again. Frames are built by the
//! `etherparse` crate and events decoded by `oce-mailbox`, never by the emulator's code.

mod frames;

use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};

use oce_emulator::MacAddress;
use oce_emulator_serve::cable::{Carrier, DeviceSlot, DgramCable};
use oce_mailbox::Reader;
use oce_mailbox::Wire;
use oce_mailbox::commands::LinkStatusQuery;
use oce_mailbox::entries::LinkStateEvent;
use oce_testhost::driver::Nic;
use oce_testhost::{Dev, Host, TxRequest};

use frames::udp_frame;

/// The test host's device, lent to a carrier for one turn.
struct Slot<'a>(RefCell<&'a mut Host>);

impl DeviceSlot<std::sync::Arc<oce_testhost::HostMemory>, std::sync::Arc<oce_testhost::Lines>> for Slot<'_> {
    fn with<R>(&self, f: impl FnOnce(&mut Dev) -> R) -> R {
        f(&mut self.0.borrow_mut().dev)
    }
}

struct End {
    host: Host,
    nic: Nic,
    cable: DgramCable,
    carrier: Carrier,
}

/// An adapter with its state in `dir/state`, its port on the socket `dir/sock.sock` aimed at
/// `dir/peer.sock`.
fn end(dir: &Path, state: &str, sock: &str, peer: &str, seed: u64) -> End {
    let mut host = Host::with_seed(&dir.join(state), seed);
    let mut nic = host.probe(1).expect("probe");
    assert!(host.open(&mut nic).expect("open"), "the link is up before any cable");
    let cable = DgramCable::bind(&dir.join(format!("{sock}.sock")), &dir.join(format!("{peer}.sock")), None).unwrap();
    host.dev.attach_wire(cable.wire());
    host.interrupt(&mut nic);
    End { host, nic, cable, carrier: Carrier::new() }
}

impl End {
    /// One carrier turn, then the host serves its interrupts; returns whether anything moved.
    fn turn(&mut self) -> bool {
        let waiting = self.carrier.turn(&self.cable, &Slot(RefCell::new(&mut self.host))).unwrap();
        let (irqs, _) = self.host.interrupt(&mut self.nic);
        waiting || !irqs.is_empty()
    }

    fn link_up(&mut self) -> bool {
        self.host.mcc(&LinkStatusQuery).unwrap().is_link_up()
    }

    fn events(&self) -> Vec<LinkStateEvent> {
        self.host.events.iter().map(|e| LinkStateEvent::decode(&mut Reader::new(e)).unwrap()).collect()
    }
}

/// Turns both ends until nothing moves.
fn pump(ends: &mut [&mut End]) {
    for _ in 0..10_000 {
        let mut moved = false;
        for e in ends.iter_mut() {
            moved |= e.turn();
        }
        if !moved {
            return;
        }
    }
    panic!("the cable never settled");
}

/// Turns `e` until `done`, for at most 5 s (the carrier looks for its peer every 200 ms).
fn turn_until(e: &mut End, what: &str, done: impl Fn(&End) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done(e) {
        assert!(Instant::now() < deadline, "never: {what}");
        e.turn();
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn send(e: &mut End, frame: &[u8]) {
    let request = TxRequest { head_len: frame.len(), frame: frame.to_vec(), ..TxRequest::default() };
    e.host.xmit(&mut e.nic, 0, &[request]);
}

/// A exchanges one frame each way with `b`; both get what the other sent.
fn exchange(a: &mut End, b: &mut End, tag: u8) {
    let to_b = udp_frame(a.nic.mac, b.nic.mac, &[tag; 300]);
    let to_a = udp_frame(b.nic.mac, a.nic.mac, &[tag ^ 0xFF; 400]);
    send(a, &to_b);
    send(b, &to_a);
    pump(&mut [&mut *a, &mut *b]);
    assert_eq!(b.nic.received.last().map(|r| r.frame.clone()), Some(to_b), "a -> b");
    assert_eq!(a.nic.received.last().map(|r| r.frame.clone()), Some(to_a), "b -> a");
}

#[test]
fn a_peer_that_goes_is_link_down_and_one_that_comes_back_link_up_with_frames_crossing_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = end(dir.path(), "a", "a", "b", 0x0A00_0000_0000);
    let mut b = end(dir.path(), "b", "b", "a", 0x0B00_0000_0000);
    pump(&mut [&mut a, &mut b]);
    assert!(a.link_up() && b.link_up());
    assert!(a.events().is_empty() && b.events().is_empty(), "both peers there from the start: no change");
    exchange(&mut a, &mut b, 1);
    assert_eq!(a.host.dev.firmware().peer().mac, Some(MacAddress(b.nic.mac)));
    assert_eq!(b.host.dev.firmware().peer().mac, Some(MacAddress(a.nic.mac)));

    // B's server dies: its socket goes with its cable.
    drop(b);
    turn_until(&mut a, "a link-down event", |a| !a.events().is_empty());
    let down = a.events()[0];
    assert_eq!((down.physical_port, down.port_link_status), (0, LinkStateEvent::LOGICAL), "physically down");
    assert!(!a.link_up());
    assert!(!a.host.dev.info().ports[0].link_up);
    assert_eq!(a.host.dev.firmware().peer().mac, None, "the peer took its MAC with it");
    // What the guest sends while the link is down is dropped and counted, not kept for later.
    let lost = udp_frame(a.nic.mac, [2, 0, 0, 0, 0, 0x0B], b"sent into a dead link");
    send(&mut a, &lost);
    a.turn();
    assert_eq!(a.cable.queued(), 0);
    assert_eq!(a.host.dev.counters().tx_rings.values().map(|t| t.link_down_drops).sum::<u64>(), 1);

    // B comes back (a new server on the same socket path).
    let mut b = end(dir.path(), "b-again", "b", "a", 0x0B00_0000_0001);
    turn_until(&mut a, "a link-up event", |a| a.events().len() == 2);
    let up = a.events()[1];
    assert_eq!(up.port_link_status, LinkStateEvent::LOGICAL | LinkStateEvent::PHYSICAL_UP);
    assert!(a.link_up());
    pump(&mut [&mut a, &mut b]);
    assert!(b.events().is_empty(), "B found A there at once");
    exchange(&mut a, &mut b, 2);
    assert!(b.nic.received.iter().all(|r| r.frame != lost), "the frame sent while down never arrives");
    assert_eq!(a.host.dev.firmware().peer().mac, Some(MacAddress(b.nic.mac)));
}

#[test]
fn a_port_whose_peer_is_absent_from_the_start_is_down_until_it_comes() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = end(dir.path(), "a", "a", "b", 0x0A00_0000_0000);
    a.turn();
    assert!(!a.link_up(), "no peer: no link");
    assert_eq!(a.events().len(), 1, "the driver hears of it");
    let mut b = end(dir.path(), "b", "b", "a", 0x0B00_0000_0000);
    turn_until(&mut a, "link up", |a| a.events().len() == 2);
    assert!(a.link_up());
    exchange(&mut a, &mut b, 3);
}
