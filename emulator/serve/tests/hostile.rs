//! A client that tries to stall or end the server: it cannot keep the server past a stop request
//! (a message cut off, replies it does not read, a DMA reply it withholds, an interrupt
//! descriptor that would block), exhaust its mappings, renegotiate mid-session, flood its log,
//! or fault it through memory it shrinks; a second server cannot take a live one's session.

mod common;

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use common::{joined_within, memfd, negotiated, serve, serve_raw, unsealed_memfd, wait_until};
use oce_emulator_serve::client::{Client, ClientError};
use oce_emulator_serve::protocol::messages::{DMA_MAP_READ, DMA_MAP_WRITE};
use oce_emulator_serve::protocol::{Command, DmaMap, HEADER_LEN, Request, VersionCaps, encode_request};
use oce_emulator_serve::testing::{TestDevice, regs};
use oce_emulator_serve::{CONFIG_REGION, GuestDma, IrqLines, Log, MAX_DMA_MAPS, Outcome, ServeSocket, Server};

/// errno values (`asm-generic/errno-base.h`, `errno.h`).
const EINVAL: u32 = 22;
const ENOSPC: u32 = 28;
const EALREADY: u32 = 114;

/// Bus Master Enable in the command register (PCI Local Bus spec).
const BUS_MASTER: u32 = 1 << 2;

fn go_at(client: &mut Client, src: u64, dst: u64, len: u32) -> u32 {
    client.write32(0, regs::SRC, src as u32).unwrap();
    client.write32(0, regs::SRC + 4, (src >> 32) as u32).unwrap();
    client.write32(0, regs::DST, dst as u32).unwrap();
    client.write32(0, regs::DST + 4, (dst >> 32) as u32).unwrap();
    client.write32(0, regs::GO, len).unwrap();
    client.read32(0, regs::STATUS).unwrap()
}

#[test]
fn dma_maps_past_the_advertised_cap_are_refused_and_the_session_goes_on() {
    let mut s = negotiated();
    let caps = s.client.server_caps().unwrap().clone();
    assert_eq!(caps["max_dma_maps"].as_u64(), Some(MAX_DMA_MAPS as u64), "{caps}");
    let page = memfd(4096);
    let map =
        |i: usize| DmaMap { flags: DMA_MAP_READ | DMA_MAP_WRITE, offset: 0, address: (i as u64) << 12, size: 4096 };
    // Half of them with a descriptor (each a mapping of the server), half by message.
    for i in 0..MAX_DMA_MAPS {
        let fds = if i % 2 == 0 { vec![page.as_fd()] } else { vec![] };
        s.client.request(&Request::DmaMap(map(i)), &fds).unwrap_or_else(|e| panic!("map {i}: {e}"));
    }
    assert_eq!(s.dma.region_count(), MAX_DMA_MAPS);
    for fds in [vec![page.as_fd()], vec![]] {
        let r = s.client.request(&Request::DmaMap(map(MAX_DMA_MAPS)), &fds);
        assert!(matches!(r, Err(ClientError::Errno(ENOSPC))), "{r:?}");
    }
    assert!(s.log_has("the most this server takes (max_dma_maps)"));
    // The session goes on: DMA through the mapped regions works, and an unmap makes room.
    s.client.write32(CONFIG_REGION, 4, BUS_MASTER).unwrap();
    assert_eq!(go_at(&mut s.client, 0, 2 << 12, 4096), 0);
    s.client.unmap(0, 4096).unwrap();
    s.client.request(&Request::DmaMap(map(MAX_DMA_MAPS)), &[page.as_fd()]).unwrap();
    let log = Arc::clone(&s.log);
    assert_eq!(s.finish(), Outcome::Disconnected);
    let peak =
        format!("the client had at most {MAX_DMA_MAPS} DMA regions mapped at once (max_dma_maps {MAX_DMA_MAPS})");
    assert!(log.lock().unwrap().contains(&peak), "the session's end says how close the client came");
}

#[test]
fn a_second_version_is_refused_and_changes_nothing() {
    let mut s = negotiated();
    let small = VersionCaps { max_msg_fds: Some(1), max_data_xfer_size: Some(4096) };
    assert!(matches!(s.client.negotiate_with(small), Err(ClientError::Errno(EALREADY))));
    assert!(s.log_has("the version is agreed once per session"));
    // The transfer size agreed first still holds: 8 KiB of memory lent by message moves in one
    // DMA_READ and one DMA_WRITE, not in 4 KiB pieces.
    s.client.map_messages(0x10000, vec![0x5A; 8192]).unwrap();
    s.client.map_messages(0x20000, vec![0; 8192]).unwrap();
    s.client.write32(CONFIG_REGION, 4, BUS_MASTER).unwrap();
    assert_eq!(go_at(&mut s.client, 0x10000, 0x20000, 8192), 0);
    assert_eq!(s.client.dma_messages(), 2);
    assert_eq!(s.client.lent(0x20000, 8192).unwrap(), &[0xA5; 8192][..]);
    s.finish();
}

#[test]
fn a_flood_of_refused_messages_costs_a_few_log_lines_and_a_count() {
    let mut s = negotiated();
    const SENT: u64 = 1000;
    for _ in 0..SENT {
        let r = s.client.request(&Request::RegionRead { offset: 0, region: 42, count: 4 }, &[]);
        assert!(matches!(r, Err(ClientError::Errno(EINVAL))));
    }
    let log = Arc::clone(&s.log);
    assert_eq!(s.finish(), Outcome::Disconnected);
    let lines = log.lock().unwrap().clone();
    let refused = lines.iter().filter(|l| l.starts_with("refused")).count() as u64;
    let suppressed: u64 = lines
        .iter()
        .filter_map(|l| l.strip_suffix(" more such lines suppressed (at most 10 every 1s)"))
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(refused + suppressed, SENT, "every refusal is logged or counted: {lines:?}");
    assert!(refused <= SENT / 10, "{refused} lines for {SENT} refused messages");
}

#[test]
fn a_memfd_the_client_shrinks_faults_the_dma_not_the_server() {
    let mut s = negotiated();
    s.client.write32(CONFIG_REGION, 4, BUS_MASTER).unwrap();
    // A memfd the client may shrink (no seal): the server copies through it.
    let ram = unsealed_memfd(3 * 4096);
    s.client.map_file(0x40000, 3 * 4096, &ram, 0).unwrap();
    assert_eq!(go_at(&mut s.client, 0x40000, 0x42000, 256), 0);
    assert!(s.log_has("the client's memory file is not sealed against shrinking"));
    // The client truncates it to one page; the device then reads the third.
    ram.set_len(4096).unwrap();
    assert_eq!(go_at(&mut s.client, 0x42000, 0x40000, 256), 1, "a DMA fault, not a SIGBUS");
    assert!(s.log_has("the client shrank the file it shared"), "{:?}", s.log.lock().unwrap());
    assert_eq!(go_at(&mut s.client, 0x40000, 0x40100, 256), 0, "what is left of the file still works");
    // QEMU's memfd is sealed against shrinking: the server maps it, and it cannot shrink.
    let sealed = memfd(2 * 4096);
    s.client.map_file(0x80000, 2 * 4096, &sealed, 0).unwrap();
    assert!(sealed.set_len(0).is_err());
    assert_eq!(go_at(&mut s.client, 0x80000, 0x81000, 4096), 0);
    assert_eq!(s.finish(), Outcome::Disconnected);
}

/// Stops the server with the client still connected, and returns how its session ended.
fn stopped(s: common::Served) -> Outcome {
    let common::Served { client, server, stop, .. } = s;
    stop.store(true, Ordering::SeqCst);
    let outcome = joined_within(server, "the server after a stop request");
    drop(client);
    outcome
}

#[test]
fn a_stop_ends_a_session_inside_a_message_cut_off() {
    // Inside the header.
    let mut s = negotiated();
    s.client.send_raw(&encode_request(1, &Request::DeviceGetInfo, 0)[..10]).unwrap();
    assert_eq!(stopped(s), Outcome::Stopped);
    // Inside the payload.
    let mut s = negotiated();
    let msg = encode_request(2, &Request::RegionWrite { offset: 0, region: 0, data: &[7; 64] }, 0);
    s.client.send_raw(&msg[..HEADER_LEN + 20]).unwrap();
    assert_eq!(stopped(s), Outcome::Stopped);
}

/// VERSION on a raw socket, its reply read and dropped; then `n` reads of a whole 4 KiB BAR,
/// whose replies nobody reads.
fn flood_of_unread_replies(sock: &mut std::os::unix::net::UnixStream, n: usize) {
    let caps = VersionCaps::default();
    sock.write_all(&encode_request(1, &Request::Version { major: 0, minor: 0, caps }, 0)).unwrap();
    let mut head = [0u8; HEADER_LEN];
    sock.read_exact(&mut head).unwrap();
    let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    sock.read_exact(&mut vec![0; size - HEADER_LEN]).unwrap();
    for id in 0..n {
        sock.write_all(&encode_request(id as u16 + 2, &Request::RegionRead { offset: 0, region: 0, count: 4096 }, 0))
            .unwrap();
    }
    // The replies fill the socket: the server is (or is about to be) blocked sending one.
    wait_until("the replies to fill the socket", || rustix::io::ioctl_fionread(&*sock).unwrap() >= 128 * 1024);
}

#[test]
fn a_stop_ends_a_session_whose_client_reads_no_replies() {
    let (mut sock, server, stop, _log) = serve_raw();
    flood_of_unread_replies(&mut sock, 200);
    stop.store(true, Ordering::SeqCst);
    assert_eq!(joined_within(server, "the server after a stop request"), Outcome::Stopped);
}

#[test]
fn a_client_that_reads_no_replies_for_5_s_is_disconnected() {
    let (mut sock, server, _stop, _log) = serve_raw();
    flood_of_unread_replies(&mut sock, 200);
    match joined_within(server, "the server with a client that reads nothing") {
        Outcome::ClientError(why) => assert!(why.contains("read nothing for 5s"), "{why}"),
        other => panic!("{other:?}"),
    }
}

/// A GO whose DMA goes by message, sent raw: the server's DMA_READ is read and not answered.
fn withheld_dma_reply(s: &mut common::Served) {
    s.client.map_messages(0x10000, vec![1; 4096]).unwrap();
    s.client.write32(CONFIG_REGION, 4, BUS_MASTER).unwrap();
    s.client.write32(0, regs::SRC, 0x10000).unwrap();
    s.client.write32(0, regs::DST, 0x10800).unwrap();
    let go = encode_request(77, &Request::RegionWrite { offset: regs::GO, region: 0, data: &64u32.to_le_bytes() }, 0);
    s.client.send_raw(&go).unwrap();
    let dma = s.client.receive().unwrap();
    assert_eq!(dma.header.command, Command::DmaRead);
}

#[test]
fn a_stop_ends_a_session_whose_client_withholds_a_dma_reply() {
    let mut s = negotiated();
    withheld_dma_reply(&mut s);
    let log = Arc::clone(&s.log);
    assert_eq!(stopped(s), Outcome::Stopped);
    // The stop, not the reply's 5 s deadline, ended the wait.
    let lines = log.lock().unwrap().clone();
    assert!(lines.iter().any(|l| l.starts_with("DMA_READ 0x10000+0x40: stopped")), "{lines:?}");
    assert!(!lines.iter().any(|l| l.contains("no reply")), "{lines:?}");
}

#[test]
fn a_withheld_dma_reply_fails_the_access_after_5_s_and_the_session_goes_on() {
    let mut s = negotiated();
    withheld_dma_reply(&mut s);
    // The GO is answered once the DMA_READ's deadline has passed; the device saw a fault.
    let common::Served { mut client, server, log, .. } = s;
    let answered = std::thread::spawn(move || {
        let reply = client.receive().unwrap();
        (client, reply)
    });
    let (mut client, reply) = joined_within(answered, "the reply to the GO whose DMA got no reply");
    assert_eq!((reply.header.id, reply.header.error()), (77, None));
    assert_eq!(client.read32(0, regs::STATUS).unwrap(), 1);
    let lines = log.lock().unwrap().clone();
    assert!(lines.iter().any(|l| l.contains("no reply from the client to message")), "{lines:?}");
    drop(client);
    assert_eq!(joined_within(server, "the server"), Outcome::Disconnected);
}

#[test]
fn interrupt_descriptors_that_are_not_eventfds_are_refused_and_a_full_eventfd_does_not_block() {
    let mut s = negotiated();
    let (_reader, pipe) = std::io::pipe().unwrap();
    for index in [0u32, 2] {
        let r = s.client.set_eventfds(index, 0, &[pipe.as_fd()]);
        assert!(matches!(r, Err(ClientError::Errno(EINVAL))), "IRQ type {index}: {r:?}");
    }
    assert!(s.log_has("the descriptor is not an eventfd (pipe:["), "{:?}", s.log.lock().unwrap());
    // A blocking eventfd whose counter the client filled: a write to it would wait for a read.
    let full = std::fs::File::from(rustix::event::eventfd(0, rustix::event::EventfdFlags::CLOEXEC).unwrap());
    (&full).write_all(&(u64::MAX - 1).to_ne_bytes()).unwrap();
    s.client.set_eventfds(2, 0, &[full.as_fd()]).unwrap();
    s.client.write32(CONFIG_REGION, 4, BUS_MASTER).unwrap();
    // The device sends vector 0: the write to the full eventfd fails instead of waiting.
    let common::Served { mut client, server, log, stop, .. } = s;
    let signalled = std::thread::spawn(move || {
        client.write32(0, regs::MSIX, 0).unwrap();
        client.write32(0, regs::ECHO, 5).unwrap();
        assert_eq!(client.read32(0, regs::ECHO).unwrap(), 5, "still serving");
        client
    });
    let client = joined_within(signalled, "a region write that makes the device signal a full eventfd");
    assert!(log.lock().unwrap().iter().any(|l| l == "MSI-X vector 0: the eventfd refused the write"));
    let flags = rustix::fs::fcntl_getfl(&full).unwrap();
    assert!(flags.contains(rustix::fs::OFlags::NONBLOCK), "the server made it non-blocking");
    stop.store(true, Ordering::SeqCst);
    assert_eq!(joined_within(server, "the server after a stop request"), Outcome::Stopped);
    drop(client);
}

#[test]
fn a_second_server_on_a_live_socket_is_refused_and_the_first_keeps_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.sock");
    let socket = ServeSocket::bind(&path).unwrap();
    let (log, _lines) = Log::collect();
    let dma = GuestDma::new(log.clone());
    let irqs = IrqLines::new(oce_emulator_serve::testing::VECTORS, log.clone());
    let device = Arc::new(Mutex::new(TestDevice::new(dma.clone(), irqs.clone())));
    let server = Server::new(device, dma, irqs, log);
    let first = std::thread::spawn(move || server.serve_one(socket.listener(), &|| false).unwrap());
    // While the first waits for its client, a second server probes the path.
    let second = ServeSocket::bind(&path);
    assert!(matches!(second, Err(oce_emulator_serve::SocketError::InUse { .. })), "{second:?}");
    // The first server's one session is still the client's to take.
    let session = std::thread::spawn(move || {
        let mut client = Client::connect(&path).unwrap();
        client.negotiate().unwrap();
        client.write32(0, regs::ECHO, 9).unwrap();
        client.read32(0, regs::ECHO).unwrap()
    });
    assert_eq!(joined_within(session, "the first server's client"), 9);
    assert_eq!(joined_within(first, "the first server"), Outcome::Disconnected);
}

#[test]
fn the_version_reply_advertises_what_the_server_enforces() {
    let mut s = serve();
    s.client.negotiate().unwrap();
    let caps = s.client.server_caps().unwrap();
    assert_eq!(caps["max_dma_maps"].as_u64(), Some(32768));
    assert_eq!(caps["max_msg_fds"].as_u64(), Some(16));
    assert_eq!(caps["max_data_xfer_size"].as_u64(), Some(1 << 20));
    s.finish();
}
