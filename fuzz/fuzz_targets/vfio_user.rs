//! The vfio-user server on arbitrary bytes, two ways.
//!
//! 1. The message decoder, reading the bytes as a stream of messages the way the server reads its
//!    socket: a header, then as much payload as the header announces (or as is left). Decoding
//!    may fail; it must never panic, read out of bounds, or allocate by a length the client sent
//!    without checking it first.
//! 2. A whole session: the bytes are what a client sends to a served test device (the
//!    transport's own `TestDevice`) over a socketpair, then the client hangs up; the server's
//!    replies are read and dropped. The session keeps its state across messages (the VERSION
//!    agreed once, the DMA regions and their cap, the interrupt lines), so sequences no single
//!    decode sees — a second VERSION, a map past an unmap, a message cut off at the end — run
//!    through the real server. It must end (the hang-up ends it) and never panic.
#![no_main]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use oce_emulator_serve::protocol::messages::decode_dma_read_reply;
use oce_emulator_serve::protocol::{HEADER_LEN, Header, decode_request};
use oce_emulator_serve::testing::{TestDevice, VECTORS};
use oce_emulator_serve::{GuestDma, IrqLines, Log, Server};

fn decode_stream(data: &[u8]) {
    let mut rest = data;
    while rest.len() >= HEADER_LEN {
        let Ok(header) = Header::decode(rest) else { return };
        let Ok(len) = header.payload_len() else { return };
        let end = (HEADER_LEN + len).min(rest.len());
        let payload = &rest[HEADER_LEN..end];
        let _ = decode_request(&header, payload);
        let _ = decode_dma_read_reply(payload, u64::from(header.error), usize::from(header.id));
        rest = &rest[end..];
    }
}

fn serve_session(data: &[u8]) {
    let log = Log::to(|_| {});
    let dma = GuestDma::new(log.clone());
    let irqs = IrqLines::new(VECTORS, log.clone());
    let device = Arc::new(Mutex::new(TestDevice::new(dma.clone(), irqs.clone())));
    let server = Server::new(device, dma, irqs, log);
    let (mut ours, theirs) = UnixStream::pair().expect("socketpair");
    let session = std::thread::spawn(move || server.serve_stream(theirs, &|| false));
    let mut replies = ours.try_clone().expect("dup");
    let drain = std::thread::spawn(move || {
        let mut sink = [0u8; 4096];
        while matches!(replies.read(&mut sink), Ok(n) if n > 0) {}
    });
    let _ = ours.write_all(data);
    let _ = ours.shutdown(std::net::Shutdown::Write);
    let outcome = session.join().expect("the server must not panic");
    outcome.expect("the session's socket calls succeed");
    drop(ours);
    drain.join().expect("drain");
}

fuzz_target!(|data: &[u8]| {
    decode_stream(data);
    serve_session(data);
});
