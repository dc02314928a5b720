//! Two emulated adapters on a datagram cable (`oce_emulator_serve::cable`): real AF_UNIX
//! datagram sockets between them, each adapter driven by the be2net-like test host, and a
//! third socket standing in for QEMU's `-netdev dgram` or a sender of garbage. Frames are
//! built and checked by the `etherparse` crate, never by the emulator's code.

mod frames;

use std::os::unix::net::UnixDatagram;
use std::path::Path;

use etherparse::{PacketHeaders, TransportHeader};
use oce_emulator::datapath::Receipt;
use oce_emulator_serve::cable::{CableCounters, DgramCable, MAX_DATAGRAM, pcap};
use oce_testhost::driver::Nic;
use oce_testhost::{Host, TxRequest};

use frames::udp_frame;

struct End {
    host: Host,
    nic: Nic,
    cable: DgramCable,
}

fn end(dir: &Path, name: &str, peer: &str, seed: u64, pcap: Option<&Path>) -> End {
    let mut host = Host::with_seed(&dir.join(name), seed);
    let mut nic = host.probe(1).expect("probe");
    assert!(host.open(&mut nic).expect("open"), "the link is up");
    let cable = DgramCable::bind(&dir.join(format!("{name}.sock")), &dir.join(format!("{peer}.sock")), pcap).unwrap();
    host.dev.attach_wire(cable.wire());
    host.interrupt(&mut nic);
    End { host, nic, cable }
}

fn two(dir: &Path, pcap: Option<&Path>) -> (End, End) {
    (end(dir, "a", "b", 0x0A00_0000_0000, pcap), end(dir, "b", "a", 0x0B00_0000_0000, None))
}

/// Carries frames both ways and serves both hosts until nothing moves.
fn pump(a: &mut End, b: &mut End) {
    for _ in 0..100_000 {
        let mut moved = 0;
        for e in [&mut *a, &mut *b] {
            moved += e.cable.flush().unwrap();
            moved += e.cable.deliver(&mut e.host.dev).unwrap();
            moved += e.host.interrupt(&mut e.nic).0.len();
            e.host.dev.poll();
        }
        if moved == 0 && a.cable.queued() == 0 && b.cable.queued() == 0 {
            return;
        }
    }
    panic!("the cable never settled");
}

fn plain(frame: Vec<u8>) -> TxRequest {
    TxRequest { head_len: frame.len(), frame, ..TxRequest::default() }
}

#[test]
fn frames_cross_both_ways_over_datagram_sockets_and_the_pcap_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("wire.pcap");
    let (mut a, mut b) = two(dir.path(), Some(&capture));
    let to_b = udp_frame(a.nic.mac, b.nic.mac, b"from a");
    let to_a = udp_frame(b.nic.mac, a.nic.mac, &[0x33; 200]);
    a.host.xmit(&mut a.nic, 0, &[plain(to_b.clone())]);
    b.host.xmit(&mut b.nic, 0, &[plain(to_a.clone())]);
    pump(&mut a, &mut b);
    // to_b is 48 bytes: the device pads it to 60 on the wire.
    let mut padded = to_b.clone();
    padded.resize(60, 0);
    assert_eq!(b.nic.received.iter().map(|r| &r.frame).collect::<Vec<_>>(), [&padded]);
    assert_eq!(a.nic.received.iter().map(|r| &r.frame).collect::<Vec<_>>(), [&to_a]);
    let expected = CableCounters { sent: 1, received: 1, ..CableCounters::default() };
    assert_eq!((a.cable.counters(), b.cable.counters()), (expected, expected));

    // A's capture: pcap-savefile(5), read here by hand.
    let raw = std::fs::read(&capture).unwrap();
    let u32_at = |at: usize| u32::from_le_bytes(raw[at..at + 4].try_into().unwrap());
    assert_eq!((u32_at(0), &raw[4..8], u32_at(16), u32_at(20)), (0xA1B2_C3D4, &[2, 0, 4, 0][..], 65_535, 1));
    let mut records = Vec::new();
    let mut at = pcap::FILE_HEADER_LEN;
    while at < raw.len() {
        let (kept, len) = (u32_at(at + 8) as usize, u32_at(at + 12) as usize);
        assert_eq!(kept, len, "nothing is cut");
        records.push(raw[at + 16..at + 16 + kept].to_vec());
        at += 16 + kept;
    }
    assert_eq!(at, raw.len(), "the file ends at a record's end");
    records.sort();
    let mut both = vec![padded, to_a];
    both.sort();
    assert_eq!(records, both, "what A sent and what it received");
}

#[test]
fn a_qemu_dgram_peer_exchanges_raw_frames() {
    // QEMU's -netdev dgram: a bound socket that sends each frame as one datagram to ours.
    let dir = tempfile::tempdir().unwrap();
    let mut a = end(dir.path(), "a", "qemu", 0x0A00_0000_0000, None);
    let qemu = UnixDatagram::bind(dir.path().join("qemu.sock")).unwrap();
    let qemu_mac = [0x52, 0x54, 0, 0x12, 0x34, 0x56];
    let hello = udp_frame(qemu_mac, a.nic.mac, &[0x42; 1000]);
    qemu.send_to(&hello, dir.path().join("a.sock")).unwrap();
    assert_eq!(a.cable.deliver(&mut a.host.dev).unwrap(), 1);
    a.host.interrupt(&mut a.nic);
    assert_eq!(a.nic.received.last().map(|r| r.frame.clone()), Some(hello));

    let reply = udp_frame(a.nic.mac, qemu_mac, &[0x24; 1400]);
    a.host.xmit(&mut a.nic, 0, &[plain(reply.clone())]);
    assert_eq!(a.cable.flush().unwrap(), 1);
    let mut buf = vec![0u8; 65_536];
    let n = qemu.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], &reply[..], "one datagram, the raw frame, nothing around it");
    let parsed = PacketHeaders::from_ethernet_slice(&buf[..n]).unwrap();
    assert!(matches!(parsed.transport, Some(TransportHeader::Udp(_))));
}

#[test]
fn an_absent_peer_holds_frames_back_and_loses_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = end(dir.path(), "a", "b", 0x0A00_0000_0000, None);
    let b_mac = [2, 0, 0, 0, 0, 0x0B];
    let frames: Vec<Vec<u8>> = (0..100u8).map(|i| udp_frame(a.nic.mac, b_mac, &[i; 100])).collect();
    for f in &frames {
        a.host.xmit(&mut a.nic, 0, &[plain(f.clone())]);
        a.cable.flush().unwrap();
        a.host.interrupt(&mut a.nic);
        a.host.dev.poll();
    }
    assert_eq!(a.cable.counters().sent, 0);
    assert!(a.cable.counters().peer_absent > 0);
    assert!(a.cable.queued() <= 64, "the TX engine stopped at the watermark: {}", a.cable.queued());
    // The peer comes: everything arrives, in order.
    let peer = UnixDatagram::bind(dir.path().join("b.sock")).unwrap();
    peer.set_nonblocking(true).unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0u8; 65_536];
    for _ in 0..10_000 {
        a.cable.flush().unwrap();
        while let Ok(n) = peer.recv(&mut buf) {
            got.push(buf[..n].to_vec());
        }
        a.host.interrupt(&mut a.nic);
        a.host.dev.poll();
        if got.len() == frames.len() {
            break;
        }
    }
    assert_eq!(got, frames);
}

#[test]
fn garbage_datagrams_are_counted_and_dropped_and_the_cable_carries_on() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two(dir.path(), None);
    let rogue = UnixDatagram::unbound().unwrap();
    let b_sock = dir.path().join("b.sock");
    rogue.send_to(&vec![0xFF; MAX_DATAGRAM + 1], &b_sock).unwrap();
    rogue.send_to(&vec![0xFF; 60_000], &b_sock).unwrap();
    rogue.send_to(&[], &b_sock).unwrap();
    rogue.send_to(&[1, 2, 3, 4, 5], &b_sock).unwrap();
    assert_eq!(b.cable.deliver(&mut b.host.dev).unwrap(), 2, "the runts reach the device");
    assert_eq!(b.cable.counters().oversize, 2);
    assert_eq!(b.host.dev.counters().port.rx_runt, 2);
    assert_eq!(b.host.dev.receive(&[0; 3]), Receipt::Dropped(oce_emulator::datapath::DropReason::Runt));
    let frame = udp_frame(a.nic.mac, b.nic.mac, &[9; 500]);
    a.host.xmit(&mut a.nic, 0, &[plain(frame.clone())]);
    pump(&mut a, &mut b);
    assert_eq!(b.nic.received.last().map(|r| r.frame.clone()), Some(frame));
}

#[test]
fn a_live_socket_is_refused_a_stale_one_replaced_and_the_file_goes_with_the_cable() {
    let dir = tempfile::tempdir().unwrap();
    let (local, peer) = (dir.path().join("a.sock"), dir.path().join("b.sock"));
    let live = UnixDatagram::bind(&local).unwrap();
    let err = DgramCable::bind(&local, &peer, None).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse, "{err}");
    drop(live); // its file stays, with nobody bound: a killed server's
    assert!(local.exists());
    let cable = DgramCable::bind(&local, &peer, None).unwrap();
    let copy = cable.clone();
    drop(cable);
    assert!(local.exists(), "a clone still holds it");
    drop(copy);
    assert!(!local.exists(), "removed with the last clone");
}

#[test]
fn a_full_peer_queue_is_watched_until_the_peer_reads() {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    // The kernel's cap on a datagram socket's receive queue: what the watcher watches. Where it
    // is so high that this socket's send buffer fills first, the watcher is not what wakes
    // the carrier (its retry pace is), and there is nothing to test here.
    let qlen: usize = std::fs::read_to_string("/proc/sys/net/unix/max_dgram_qlen").unwrap().trim().parse().unwrap();
    if qlen > 64 {
        eprintln!("net.unix.max_dgram_qlen is {qlen}: the send buffer limits first; not tested");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let a = end(dir.path(), "a", "peer", 0x0A00_0000_0000, None);
    assert!(a.cable.room_watcher().is_none(), "nobody bound at the peer's address yet");
    let peer = UnixDatagram::bind(dir.path().join("peer.sock")).unwrap();
    let frame = udp_frame([2, 0, 0, 0, 0, 1], a.nic.mac, &[0x5A; 64]);
    let mut wire = a.cable.wire();
    for _ in 0..qlen + 20 {
        wire.send(&frame);
    }
    let sent = a.cable.flush().unwrap();
    assert!(sent <= qlen + 1 && a.cable.queued() > 0, "the peer's queue took {sent} of {}", qlen + 20);
    let writable = |timeout_ms: i64| {
        let watcher = a.cable.room_watcher().expect("the peer is bound");
        let mut fds = [PollFd::new(&watcher, PollFlags::OUT)];
        let timeout = Timespec { tv_sec: 0, tv_nsec: timeout_ms * 1_000_000 };
        poll(&mut fds, Some(&timeout)).unwrap();
        fds[0].revents().contains(PollFlags::OUT)
    };
    assert!(!writable(0), "no room while the peer reads nothing");
    let mut buf = [0u8; 2048];
    peer.recv(&mut buf).unwrap();
    assert!(writable(500), "room once the peer has read one");
    assert!(a.cable.flush().unwrap() >= 1, "and the next frame goes");
}
