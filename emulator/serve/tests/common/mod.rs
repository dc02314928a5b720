//! A served test device on one end of a socketpair, the test client on the other.
#![allow(dead_code)]

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use oce_emulator_serve::client::Client;
use oce_emulator_serve::testing::TestDevice;
use oce_emulator_serve::{Adapter, AdapterDevice, Backend, GuestDma, IrqLines, Log, Outcome, Server};

pub type Device = TestDevice<GuestDma, IrqLines>;

/// What a [`Log::collect`] log has said.
pub type Lines = Arc<Mutex<Vec<String>>>;

pub struct Served<B = Device> {
    pub client: Client,
    pub server: JoinHandle<Outcome>,
    pub dma: GuestDma,
    pub irqs: IrqLines,
    pub device: Arc<Mutex<B>>,
    pub log: Arc<Mutex<Vec<String>>>,
    pub stop: Arc<AtomicBool>,
}

impl<B> Served<B> {
    pub fn log_has(&self, needle: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(needle))
    }

    /// Closes the client and returns how the server's session ended.
    pub fn finish(self) -> Outcome {
        drop(self.client);
        self.server.join().expect("the server thread must not panic")
    }
}

pub fn serve() -> Served {
    let (log, lines) = Log::collect();
    let dma = GuestDma::new(log.clone());
    let irqs = IrqLines::new(oce_emulator_serve::testing::VECTORS, log.clone());
    let device = Arc::new(Mutex::new(TestDevice::new(dma.clone(), irqs.clone())));
    serve_device(device, dma, irqs, log, lines)
}

/// The emulated adapter, factory-fresh in `dir` (identity seed 1), served; its events go to the
/// log too.
pub fn serve_adapter(dir: &std::path::Path) -> Served<AdapterDevice> {
    let (log, lines) = Log::collect();
    let options = oce_emulator::CreateOptions { seed: 1, function: oce_emulator::FunctionType::Pf };
    let firmware = oce_emulator::firmware::Firmware::create_with(dir, options).unwrap();
    let adapter = Adapter::new(firmware, &log);
    serve_device(adapter.device, adapter.dma, adapter.irqs, log, lines)
}

/// The test device served on one end of a socketpair, the other end raw (for bytes no client
/// would send, or replies a client would read): the socket, the server's thread, its stop flag
/// and its log.
pub fn serve_raw() -> (UnixStream, JoinHandle<Outcome>, Arc<AtomicBool>, Lines) {
    let (log, lines) = Log::collect();
    let dma = GuestDma::new(log.clone());
    let irqs = IrqLines::new(oce_emulator_serve::testing::VECTORS, log.clone());
    let device = Arc::new(Mutex::new(TestDevice::new(dma.clone(), irqs.clone())));
    let (ours, theirs) = UnixStream::pair().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let server = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let server = Server::new(device, dma, irqs, log);
            server.serve_stream(theirs, &|| stop.load(Ordering::SeqCst)).unwrap()
        })
    };
    (ours, server, stop, lines)
}

fn serve_device<B: Backend + 'static>(
    device: Arc<Mutex<B>>,
    dma: GuestDma,
    irqs: IrqLines,
    log: Log,
    lines: Arc<Mutex<Vec<String>>>,
) -> Served<B> {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let server = {
        let (device, dma, irqs, stop) = (Arc::clone(&device), dma.clone(), irqs.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let server = Server::new(device, dma, irqs, log.clone()).with_events(log);
            server.serve_stream(theirs, &|| stop.load(Ordering::SeqCst)).unwrap()
        })
    };
    let client = Client::from_stream(ours).unwrap();
    Served { client, server, dma, irqs, device, log: lines, stop }
}

/// A served device after VERSION.
pub fn negotiated() -> Served {
    let mut s = serve();
    assert_eq!(s.client.negotiate().unwrap(), (0, 0));
    s
}

/// A memfd of `len` bytes, as QEMU's `memory-backend-memfd,share=on`: sealed against shrinking
/// and growing (QEMU's default `seal=on`).
pub fn memfd(len: u64) -> File {
    let f = unsealed_memfd(len);
    rustix::fs::fcntl_add_seals(&f, rustix::fs::SealFlags::SHRINK | rustix::fs::SealFlags::GROW).unwrap();
    f
}

/// A memfd of `len` bytes that its owner may still shrink (QEMU's `seal=off`, or any shared
/// file that is not a sealed memfd).
pub fn unsealed_memfd(len: u64) -> File {
    let flags = rustix::fs::MemfdFlags::CLOEXEC | rustix::fs::MemfdFlags::ALLOW_SEALING;
    let fd: OwnedFd = rustix::fs::memfd_create("guest-ram", flags).unwrap();
    let f = File::from(fd);
    f.set_len(len).unwrap();
    f
}

pub fn eventfd() -> File {
    File::from(
        rustix::event::eventfd(0, rustix::event::EventfdFlags::NONBLOCK | rustix::event::EventfdFlags::CLOEXEC)
            .unwrap(),
    )
}

/// The eventfd's count since the last call (0 if it was not signalled).
pub fn count(fd: &File) -> u64 {
    let mut b = [0u8; 8];
    match (&*fd).read(&mut b) {
        Ok(8) => u64::from_ne_bytes(b),
        _ => 0,
    }
}

/// Joins `handle`, failing the test if it is still running after a bound far above every
/// deadline of the server (the 200 ms tick, the 5 s DMA and send deadlines): what it detects is
/// a server that hangs, not a slow one.
pub fn joined_within<T>(handle: JoinHandle<T>, what: &str) -> T {
    let bound = std::time::Duration::from_secs(20);
    let start = std::time::Instant::now();
    while !handle.is_finished() {
        assert!(start.elapsed() < bound, "{what}: still running after {bound:?}: it hangs");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    handle.join().expect("the thread must not panic")
}

/// Waits until `cond` holds (20 s at most, as [`joined_within`]).
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "waited 20 s for {what}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
