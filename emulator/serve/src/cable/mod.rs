//! A cable between two adapters in two processes: AF_UNIX datagrams, one raw Ethernet frame
//! (no FCS, no header of ours) each, the format of QEMU's `-netdev dgram` with `local.type=unix`
//! and `remote.type=unix` (QEMU's `net/dgram.c` sends a frame as one datagram), so either end
//! may be an emulated OCe14000 or a QEMU NIC.
//!
//! The cable keeps the rules of the in-process one (`oce_emulator::datapath::wire`,
//! spec/datapath.md §1.4): the device sends by queueing ([`DgramCable::wire`]); whoever carries
//! frames ([`DgramCable::flush`], [`DgramCable::deliver`]) touches one device at a time. It is
//! lossless in both directions:
//!
//! - a frame the peer's socket cannot take now (its receive queue is full, or nobody is bound at
//!   its address) stays queued here, and above the queue's watermark the device's TX engine
//!   leaves the next request's WRBs posted: the guest is held back, nothing is dropped;
//! - the kernel keeps an AF_UNIX datagram socket's receive queue to `net.unix.max_dgram_qlen`
//!   datagrams (10 by default), so a burst longer than that (a 12 KiB RDMA READ's responses at
//!   MTU 1024) finds the peer's queue full: the carrier then waits in poll for the peer to read
//!   ([`DgramCable::room_watcher`]) as well as for frames to arrive, and goes on at once rather
//!   than a retry later. It never blocks in a send: two ends that both wait to send would stop
//!   reading each other's frames;
//! - a frame the device pauses (no receive buffer, pause generation on) is held here and
//!   offered again before any later one.
//!
//! The link is up only while the peer is there: the carrier ([`carrier`]) looks for it, and a
//! peer that is absent, dies or comes back takes the port's link down and up again.
//!
//! A datagram larger than any frame a port takes ([`MAX_DATAGRAM`]) is counted and dropped
//! here; shorter garbage (runts, truncated headers) goes to the device, which counts and drops
//! it as a MAC would. `--wire-pcap` records every frame that crosses, both ways ([`pcap`]).

pub mod carrier;
pub mod pcap;

use std::collections::VecDeque;
use std::io::{self, ErrorKind};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use oce_emulator::datapath::{Receipt, Wire};
use oce_emulator::device::{Device, DmaSpace, Interrupt};

pub use carrier::{Carrier, DeviceSlot, run_carrier};
pub use pcap::Pcap;

/// The longest datagram taken as a frame: a 9000-byte MTU frame with its 14-byte header and two
/// 802.1Q tags (9026), rounded up to the 9216-byte jumbo limit common switches use. A longer
/// one cannot be a frame any ring takes (be2net's largest `max_frame_size` is 9018,
/// spec/datapath.md §2).
pub const MAX_DATAGRAM: usize = 9216;

/// Frames queued toward the peer before the device's TX engine is held back (the in-process
/// cable's default; a TSO send of 64 KiB at a 1448-byte MSS is 46 frames).
pub const HIGH_WATERMARK: usize = 64;

/// What the cable counted (the device counts the rest: runts, filtered, drops for lack of
/// buffers).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CableCounters {
    /// Frames sent to the peer's socket.
    pub sent: u64,
    /// Datagrams received and offered to the device.
    pub received: u64,
    /// Datagrams dropped for being longer than [`MAX_DATAGRAM`].
    pub oversize: u64,
    /// Times a send found the peer absent (no socket bound at its address, or it refused).
    pub peer_absent: u64,
    /// Frames queued toward a peer that then went away: the link went down under them and they
    /// were dropped, as a MAC flushes its transmit FIFO on link loss ([`carrier`]).
    pub link_down_dropped: u64,
}

#[derive(Debug)]
struct Shared {
    outbound: VecDeque<Vec<u8>>,
    /// A frame the device paused, offered again before any other.
    held: Option<Vec<u8>>,
    pcap: Option<Pcap>,
    counters: CableCounters,
}

/// This adapter's end of a datagram cable: a socket bound at `local` that sends to `remote`.
#[derive(Debug, Clone)]
pub struct DgramCable {
    socket: Arc<Bound>,
    remote: PathBuf,
    shared: Arc<Mutex<Shared>>,
    /// A socket pair: the device's wire writes a byte to the first when it queues a frame or
    /// posts receive buffers after a pause, so a carrier waiting in poll wakes on the second.
    waker: Arc<(UnixDatagram, UnixDatagram)>,
}

/// The bound socket; its file goes when the last clone of the cable does.
#[derive(Debug)]
struct Bound {
    socket: UnixDatagram,
    path: PathBuf,
}

impl Drop for Bound {
    fn drop(&mut self) {
        // Nothing to do if it is already gone.
        let _ = std::fs::remove_file(&self.path);
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // Plain queued data: a panic elsewhere leaves it consistent.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

impl DgramCable {
    /// Binds `local` and aims at `remote`, which need not exist yet. A socket at `local` that
    /// nobody is bound to (a killed server's) is replaced; one a live process is bound to is
    /// refused (`AddrInUse`), and so is any other file (by the bind). With `pcap`, every frame
    /// that crosses is recorded there.
    pub fn bind(local: &Path, remote: &Path, pcap: Option<&Path>) -> io::Result<Self> {
        if std::fs::symlink_metadata(local).is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type())) {
            // connect(2) on a datagram socket succeeds only toward a socket someone holds.
            if UnixDatagram::unbound()?.connect(local).is_ok() {
                return Err(io::Error::new(
                    ErrorKind::AddrInUse,
                    format!("a live process is bound to {}", local.display()),
                ));
            }
            std::fs::remove_file(local)?;
        }
        let socket = UnixDatagram::bind(local)?;
        socket.set_nonblocking(true)?;
        let pcap = pcap.map(Pcap::create).transpose()?;
        let shared = Shared { outbound: VecDeque::new(), held: None, pcap, counters: CableCounters::default() };
        let waker = UnixDatagram::pair()?;
        waker.0.set_nonblocking(true)?;
        waker.1.set_nonblocking(true)?;
        Ok(Self {
            socket: Arc::new(Bound { socket, path: local.to_path_buf() }),
            remote: remote.to_path_buf(),
            shared: Arc::new(Mutex::new(shared)),
            waker: Arc::new(waker),
        })
    }

    /// The wire to plug into this end's device (`Device::attach_wire`).
    pub fn wire(&self) -> Box<dyn Wire> {
        Box::new(DgramWire { shared: Arc::clone(&self.shared), waker: Arc::clone(&self.waker) })
    }

    /// Sends the queued frames, oldest first, until the peer's socket cannot take one now (its
    /// queue is full, or it is absent): that frame and the rest stay queued. Returns how many
    /// were sent. Never blocks.
    pub fn flush(&self) -> io::Result<usize> {
        let mut shared = lock(&self.shared);
        let mut sent = 0;
        while let Some(frame) = shared.outbound.front() {
            match self.socket.socket.send_to(frame, &self.remote) {
                Ok(_) => {
                    let frame = shared.outbound.pop_front().unwrap_or_default();
                    shared.counters.sent += 1;
                    sent += 1;
                    if let Some(pcap) = shared.pcap.as_mut() {
                        pcap.record(&frame)?;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::ConnectionRefused) => {
                    shared.counters.peer_absent += 1;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(sent)
    }

    /// Offers the datagrams that arrived to `device`, oldest first, until one is paused or
    /// none is waiting; returns how many the device took (delivered or dropped by it). Never
    /// blocks.
    pub fn deliver<D: DmaSpace, I: Interrupt>(&self, device: &mut Device<D, I>) -> io::Result<usize> {
        let mut taken = 0;
        let mut buf = vec![0u8; MAX_DATAGRAM + 1];
        loop {
            let held = lock(&self.shared).held.take();
            let frame = match held {
                Some(frame) => frame,
                None => match self.socket.socket.recv(&mut buf) {
                    Ok(n) if n > MAX_DATAGRAM => {
                        lock(&self.shared).counters.oversize += 1;
                        continue;
                    }
                    Ok(n) => {
                        let mut shared = lock(&self.shared);
                        shared.counters.received += 1;
                        if let Some(pcap) = shared.pcap.as_mut() {
                            pcap.record(&buf[..n])?;
                        }
                        buf[..n].to_vec()
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(taken),
                    Err(e) => return Err(e),
                },
            };
            if device.receive(&frame) == Receipt::Paused {
                lock(&self.shared).held = Some(frame);
                return Ok(taken);
            }
            taken += 1;
        }
    }

    /// A socket that is writable (poll's `POLLOUT`) once the peer's receive queue has room: an
    /// unbound datagram socket connected to the peer's address, for whose sake the kernel
    /// tracks that queue (`unix_dgram_poll` looks at the queue of a connected socket's peer,
    /// and wakes the poller when the peer reads). Made anew each time, so it always names the
    /// peer bound there now; `None` while nobody is. It sends nothing, and the sends still go
    /// from the bound socket, whose address the peer sees.
    pub fn room_watcher(&self) -> Option<UnixDatagram> {
        let watcher = UnixDatagram::unbound().ok()?;
        watcher.connect(&self.remote).ok()?;
        Some(watcher)
    }

    /// Whether the peer is there now: a socket someone is bound to at its address. It sends
    /// nothing (a datagram socket's connect(2) only checks that the address has a live socket),
    /// so the peer — a QEMU NIC among them — sees no frame from it.
    pub fn peer_present(&self) -> bool {
        UnixDatagram::unbound().and_then(|probe| probe.connect(&self.remote)).is_ok()
    }

    /// Drops the frames queued toward the peer (the link went down under them) and returns
    /// how many.
    pub fn drop_queued(&self) -> usize {
        let mut shared = lock(&self.shared);
        let dropped = shared.outbound.len();
        shared.outbound.clear();
        shared.counters.link_down_dropped += dropped as u64;
        dropped
    }

    /// Frames queued toward the peer, not yet sent.
    pub fn queued(&self) -> usize {
        lock(&self.shared).outbound.len()
    }

    /// What the cable counted so far.
    pub fn counters(&self) -> CableCounters {
        lock(&self.shared).counters
    }

    /// True while a frame the device paused waits to be offered again.
    pub fn holds_a_frame(&self) -> bool {
        lock(&self.shared).held.is_some()
    }

    /// The socket, for a carrier's poll (readable: frames to deliver).
    pub fn socket(&self) -> &UnixDatagram {
        &self.socket.socket
    }

    /// Readable when the device queued a frame or posted buffers since [`Self::drain_waker`].
    pub fn waker(&self) -> &UnixDatagram {
        &self.waker.1
    }

    /// Empties the waker.
    pub fn drain_waker(&self) {
        let mut buf = [0u8; 64];
        while self.waker.1.recv(&mut buf).is_ok() {}
    }
}

/// The device's side: queues frames for [`DgramCable::flush`].
#[derive(Debug)]
struct DgramWire {
    shared: Arc<Mutex<Shared>>,
    waker: Arc<(UnixDatagram, UnixDatagram)>,
}

impl DgramWire {
    fn wake(&self) {
        // A full waker already holds a wake-up: the error is nothing to act on.
        let _ = self.waker.0.send(&[1]);
    }
}

impl Wire for DgramWire {
    fn send(&mut self, frame: &[u8]) {
        lock(&self.shared).outbound.push_back(frame.to_vec());
        self.wake();
    }

    fn ready(&self) -> bool {
        lock(&self.shared).outbound.len() < HIGH_WATERMARK
    }

    fn receive_ready(&mut self) {
        self.wake();
    }
}
