//! A server that survives its client: malformed and truncated messages get an error reply or a
//! clean disconnect, never a panic; a DMA address outside every mapping fails the device's
//! command with a status and is logged, and the server goes on.

mod common;

use std::os::fd::AsFd;
use std::sync::atomic::Ordering;

use common::{eventfd, negotiated, serve};
use oce_emulator_serve::client::ClientError;
use oce_emulator_serve::protocol::{Command, HEADER_LEN, Header, Request, encode_request};
use oce_emulator_serve::testing::regs;
use oce_emulator_serve::{CONFIG_REGION, Outcome};

fn header(id: u16, command: u16, size: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&id.to_le_bytes());
    h.extend_from_slice(&command.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h.extend_from_slice(&[0; 8]);
    h
}

#[test]
fn a_message_cut_short_ends_the_session_cleanly() {
    let mut s = negotiated();
    let mut msg = encode_request(5, &Request::RegionWrite { offset: 0, region: 0, data: &[1; 8] }, 0);
    msg.truncate(HEADER_LEN + 6);
    s.client.send_raw(&msg).unwrap();
    match s.finish() {
        Outcome::ClientError(why) => assert!(why.contains("inside the payload"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_header_cut_short_or_a_size_out_of_bounds_ends_the_session() {
    let mut s = negotiated();
    s.client.send_raw(&header(1, 9, 32)[..10]).unwrap();
    assert!(matches!(s.finish(), Outcome::ClientError(_)));
    for size in [0u32, 15, u32::MAX] {
        let mut s = negotiated();
        s.client.send_raw(&header(1, 9, size)).unwrap();
        match s.finish() {
            Outcome::ClientError(why) => assert!(why.contains("message size"), "{why}"),
            other => panic!("size {size}: {other:?}"),
        }
    }
}

#[test]
fn bad_bodies_get_error_replies_and_the_session_goes_on() {
    let mut s = serve();
    // Anything before VERSION.
    assert!(matches!(s.client.read32(0, 0), Err(ClientError::Errno(22))));
    // A VERSION whose JSON is broken, and one of another major version.
    let mut bad_json = header(1, 1, 0);
    bad_json.extend_from_slice(&[0, 0, 0, 0]);
    bad_json.extend_from_slice(b"{\"capabilities\":\x00");
    let n = bad_json.len() as u32;
    bad_json[4..8].copy_from_slice(&n.to_le_bytes());
    s.client.send_raw(&bad_json).unwrap();
    assert_eq!(s.client.receive().unwrap().header.error(), Some(22));
    let caps = Default::default();
    assert!(matches!(
        s.client.request(&Request::Version { major: 1, minor: 0, caps }, &[]),
        Err(ClientError::Errno(22))
    ));
    s.client.negotiate().unwrap();
    // Outside a region, too long, an absent region, a zero-length read.
    for (region, offset, count) in [(0u32, 4094u64, 4u32), (0, 0, 2 << 20), (4, 0, 4), (42, 0, 4), (0, 0, 0)] {
        let r = s.client.request(&Request::RegionRead { offset, region, count }, &[]);
        assert!(matches!(r, Err(ClientError::Errno(22))), "{region} {offset} {count}: {r:?}");
    }
    // A write whose count claims more data than the message holds.
    let mut w = encode_request(9, &Request::RegionWrite { offset: 0, region: 0, data: &[0; 4] }, 0);
    w[HEADER_LEN + 12] = 200;
    s.client.send_raw(&w).unwrap();
    assert_eq!(s.client.receive().unwrap().header.error(), Some(22));
    // SET_IRQS with two action bits; an unknown command; a DMA_READ sent to the server.
    let set = oce_emulator_serve::protocol::SetIrqs { flags: 0x24 | 0x08, index: 0, start: 0, count: 1, bools: &[] };
    assert!(matches!(s.client.request(&Request::SetIrqs(set), &[]), Err(ClientError::Errno(22))));
    assert!(matches!(s.client.request(&Request::Unsupported(Command::Unknown(77)), &[]), Err(ClientError::Errno(95))));
    assert!(matches!(s.client.request(&Request::DmaRead { address: 0, count: 4 }, &[]), Err(ClientError::Errno(22))));
    // A descriptor with a message that takes none.
    let fd = eventfd();
    let r = s.client.request(&Request::RegionRead { offset: 0, region: 0, count: 4 }, &[fd.as_fd()]);
    assert!(matches!(r, Err(ClientError::Errno(22))));
    // Still serving.
    s.client.write32(0, regs::ECHO, 41).unwrap();
    assert_eq!(s.client.read32(0, regs::ECHO).unwrap(), 41);
    assert!(s.log_has("refused"));
    assert_eq!(s.finish(), Outcome::Disconnected);
}

#[test]
fn a_dma_address_outside_every_mapping_fails_the_command_and_is_logged() {
    let mut s = negotiated();
    s.client.write32(CONFIG_REGION, 4, 1 << 2).unwrap();
    let ram = common::memfd(8192);
    s.client.map_file(0x10000, 8192, &ram, 0).unwrap();
    // SRC inside, DST straddles the end of the only mapping.
    for (reg, addr) in [(regs::SRC, 0x10000u32), (regs::DST, 0x11F00)] {
        s.client.write32(0, reg, addr).unwrap();
    }
    s.client.write32(0, regs::GO, 512).unwrap();
    assert_eq!(s.client.read32(0, regs::STATUS).unwrap(), 1);
    assert!(s.log_has("DMA write fault: 512 bytes at 0x11f00"), "{:?}", s.log.lock().unwrap());
    // SRC nowhere.
    s.client.write32(0, regs::SRC, 0x9999_0000).unwrap();
    s.client.write32(0, regs::GO, 4).unwrap();
    assert_eq!(s.client.read32(0, regs::STATUS).unwrap(), 1);
    assert!(s.log_has("DMA read fault: 4 bytes at 0x99990000"));
    // The server goes on; a good command works.
    s.client.write32(0, regs::SRC, 0x10000).unwrap();
    s.client.write32(0, regs::DST, 0x11000).unwrap();
    s.client.write32(0, regs::GO, 64).unwrap();
    assert_eq!(s.client.read32(0, regs::STATUS).unwrap(), 0);
    s.finish();
}

#[test]
fn a_stop_request_ends_the_session() {
    let s = negotiated();
    s.stop.store(true, Ordering::SeqCst);
    let outcome = s.server.join().unwrap();
    assert_eq!(outcome, Outcome::Stopped);
}

/// A deterministic generator (xorshift64*), so a failure reproduces.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn random_messages_never_panic_the_server() {
    let mut rng = Rng(0x0CE0_7001);
    for round in 0..200 {
        let mut s = negotiated();
        let mut bytes = Vec::new();
        for _ in 0..(1 + rng.next() % 6) {
            // Mostly well-framed headers of real commands with random bodies, sometimes garbage.
            let body_len = (rng.next() % 64) as usize;
            let command = (rng.next() % 18) as u16;
            let size = if rng.next().is_multiple_of(8) { rng.next() as u32 } else { (HEADER_LEN + body_len) as u32 };
            let mut h = header(rng.next() as u16 & 0x7FFF, command, size);
            h[8] = if rng.next().is_multiple_of(4) { rng.next() as u8 } else { 0 };
            bytes.extend_from_slice(&h);
            bytes.extend((0..body_len).map(|_| rng.next() as u8));
        }
        s.client.send_raw(&bytes).unwrap();
        // Drain whatever the server answers, then hang up.
        let server = s.server;
        drop(s.client);
        let outcome = server.join();
        assert!(outcome.is_ok(), "round {round}: the server panicked");
        let _ = Header::decode(&bytes);
    }
}
