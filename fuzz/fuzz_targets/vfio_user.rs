//! The vfio-user message decoder on arbitrary bytes, read as a stream of messages the way the
//! server reads its socket: a header, then as much payload as the header announces (or as is
//! left). Decoding may fail; it must never panic, read out of bounds, or allocate by a length
//! the client sent without checking it first.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oce_emulator_serve::protocol::messages::decode_dma_read_reply;
use oce_emulator_serve::protocol::{HEADER_LEN, Header, decode_request};

fuzz_target!(|data: &[u8]| {
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
});
