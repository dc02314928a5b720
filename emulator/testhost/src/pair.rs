//! Two emulated adapters, each driven by its own be2net-like host, cabled together in process
//! ([`oce_emulator::datapath::cable`]): what two guests on one wire are, in a form `cargo test`
//! runs in seconds. [`Pair::pump`] plays the carrier and the guests' interrupt handlers until
//! nothing moves any more; it locks nothing and touches one device at a time.

use std::path::Path;

use oce_emulator::datapath::{CablePort, cable};

use super::Host;
use super::driver::Nic;

/// One end: the host, what its driver built, and its end of the cable.
#[derive(Debug)]
pub struct Side {
    pub host: Host,
    pub nic: Nic,
    pub port: CablePort,
}

impl Side {
    /// The adapter's MAC (the port's permanent address, as be2net programs it).
    pub fn mac(&self) -> [u8; 6] {
        self.nic.mac
    }
}

/// Two adapters on one cable.
#[derive(Debug)]
pub struct Pair {
    pub a: Side,
    pub b: Side,
}

/// Rounds [`Pair::pump`] plays at most before it gives up on a pair that never settles.
const MAX_ROUNDS: usize = 100_000;

/// How a [`Pair`] is built.
#[derive(Debug, Clone, Copy)]
pub struct PairConfig {
    /// Event queues per adapter (on MSI-X); 1 gives one RX ring, 2 or more RSS rings.
    pub eqs: u16,
    /// Frames a cable lane holds before its sender is held back.
    pub high_watermark: usize,
    /// Receive fragments B posts at ifup (be2net: 1023).
    pub b_rx_buffers: u32,
}

impl Default for PairConfig {
    fn default() -> Self {
        Self { eqs: 1, high_watermark: 64, b_rx_buffers: super::rings::RX_Q_LEN - 1 }
    }
}

impl Pair {
    /// Two factory-fresh adapters in `dir/a` and `dir/b` (different identities: the MAC comes
    /// from the seed's high half), probed and
    /// brought up as `config` says, cabled together.
    pub fn up(dir: &Path, config: PairConfig) -> Self {
        let (end_a, end_b) = cable(config.high_watermark);
        let side = |name: &str, seed: u64, port: CablePort, rx_buffers: u32| {
            let mut host = Host::with_seed(&dir.join(name), seed);
            let mut nic = host.probe(config.eqs).expect("probe");
            nic.rx_initial_post = rx_buffers;
            assert!(host.open(&mut nic).expect("open"), "the link is up");
            host.dev.attach_wire(port.wire());
            host.interrupt(&mut nic);
            Side { host, nic, port }
        };
        let a = side("a", 0x0A00_0000_0000, end_a, PairConfig::default().b_rx_buffers);
        let b = side("b", 0x0B00_0000_0000, end_b, config.b_rx_buffers);
        assert_ne!(a.mac(), b.mac(), "two adapters, two MACs");
        Self { a, b }
    }

    /// Carries frames both ways and serves both hosts' interrupts until a round moves nothing
    /// (a frame, an interrupt, a queued frame); returns the frames carried.
    pub fn pump(&mut self) -> usize {
        let mut carried = 0;
        for _ in 0..MAX_ROUNDS {
            let before = (self.a.port.pending(), self.b.port.pending());
            let moved = self.a.port.deliver(&mut self.a.host.dev) + self.b.port.deliver(&mut self.b.host.dev);
            let irqs = self.a.host.interrupt(&mut self.a.nic).0.len() + self.b.host.interrupt(&mut self.b.nic).0.len();
            self.a.host.dev.poll();
            self.b.host.dev.poll();
            carried += moved;
            let after = (self.a.port.pending(), self.b.port.pending());
            if moved == 0 && irqs == 0 && before == after {
                return carried;
            }
        }
        panic!("the pair never settled");
    }
}
