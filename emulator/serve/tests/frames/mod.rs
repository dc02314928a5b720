//! Frames the cable tests send, built by `etherparse` (not by the emulator), so what crosses the
//! cable is checked against bytes the code under test did not make.

use etherparse::PacketBuilder;

/// An Ethernet II frame from `src` to `dst` carrying `data` in a UDP datagram from 10.0.0.1:7 to
/// 10.0.0.2:7, checksums filled.
pub fn udp_frame(src: [u8; 6], dst: [u8; 6], data: &[u8]) -> Vec<u8> {
    let mut frame = Vec::new();
    PacketBuilder::ethernet2(src, dst)
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(7, 7)
        .write(&mut frame, data)
        .unwrap();
    frame
}
