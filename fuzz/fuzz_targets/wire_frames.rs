//! The emulated adapter's receive path on arbitrary bytes off the wire: the input is cut into
//! frames (a 16-bit length before each) and each is offered to an adapter that a be2net-like
//! host brought up with two RSS rings, promiscuous, with VLANs 1–3 joined — the filters, the VLAN
//! strip, the checksum verdicts, the RSS hash, the fragment fill and the v1 completion all run.
//! The device must never panic, and every completion it writes must pass be2net's own checks
//! (the host asserts them: `numfrags` = ceil(`pktsize` / `frag_size`), never more fragments
//! than were posted, the valid bit, the port).
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use oce_emulator::datapath::Receipt;
use oce_testhost::{Pair, PairConfig};

/// The pair, brought up once per process. Its state directory is removed at once: the flash
/// stays mapped, and nothing on the receive path saves state.
fn pair() -> &'static Mutex<Pair> {
    static PAIR: OnceLock<Mutex<Pair>> = OnceLock::new();
    PAIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ocetool-fuzz-wire-{}", std::process::id()));
        let mut p = Pair::up(&dir, PairConfig { eqs: 2, ..PairConfig::default() });
        std::fs::remove_dir_all(&dir).expect("remove the scratch state directory");
        p.b.host.set_promiscuous(&p.b.nic, true).expect("promiscuous");
        for vid in 1..=3 {
            p.b.host.add_vlan(&mut p.b.nic, vid).expect("VLAN");
        }
        Mutex::new(p)
    })
}

fuzz_target!(|data: &[u8]| {
    let mut p = pair().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut rest = data;
    while rest.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
        let frame = &rest[2..(2 + len).min(rest.len())];
        rest = &rest[2 + frame.len()..];
        let receipt = p.b.host.dev.receive(frame);
        if receipt == Receipt::Paused {
            // Out of buffers: be2net's interrupt path reaps and refills, then the frame goes in.
            let b = &mut p.b;
            b.host.interrupt(&mut b.nic);
            let _ = b.host.dev.receive(frame);
        }
    }
    let b = &mut p.b;
    b.host.interrupt(&mut b.nic);
    b.nic.received.clear();
});
