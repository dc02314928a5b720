//! The serving loop: one client connection, one request at a time, each answered (unless the
//! client posted it) before the next is read.
//!
//! A message that cannot be decoded gets an error reply and the connection goes on; bytes that
//! cannot even be framed as a message (a size outside the limits, a connection that breaks inside
//! a message) end the connection cleanly with the reason. Nothing a client sends can panic the
//! server: every field is checked by [`crate::protocol`] before it is used.
//!
//! Nor can a client keep the server: a stop request is seen within a tick wherever the serving
//! thread waits (inside a message, a reply the client does not read, a DMA message it does not
//! answer: [`crate::link`]); its mappings are capped ([`GuestDma`]); a refused message costs a
//! log line only within the log's rate limit ([`Log::limited`]).

use std::fs::File;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::Duration;

use crate::backend::{Backend, Layout};
use crate::dma::GuestDma;
use crate::irq::{IrqLines, NUM_IRQS};
use crate::link::{Incoming, Link, LinkError, MAX_FDS};
use crate::log::Log;
use crate::protocol::messages::DMA_UNMAP_FLAG_ALL;
use crate::protocol::{MAX_DATA_XFER, RegionInfo, Reply, Request, decode_request, encode_error, encode_reply};

/// `VFIO_PCI_CONFIG_REGION_INDEX` (`<linux/vfio.h>`): regions 0-5 are the BARs, 6 the
/// expansion ROM, 7 config space, 8 VGA.
pub const CONFIG_REGION: u32 = 7;
/// `VFIO_PCI_NUM_REGIONS`.
pub const NUM_REGIONS: u32 = 9;
/// `VFIO_DEVICE_FLAGS_RESET` | `VFIO_DEVICE_FLAGS_PCI` (`<linux/vfio.h>`).
const DEVICE_FLAGS: u32 = 1 | 2;
/// `VFIO_REGION_INFO_FLAG_READ` | `_WRITE`: message-based access only (no `_MMAP`, which would
/// make QEMU turn off posted writes for the whole device: recipes/vfio-user-qemu.md pitfall 10).
const REGION_RW: u32 = 1 | 2;
/// The protocol version this server speaks (vfio-user.rst "Version": 0.0 is what QEMU proposes).
const VERSION: (u16, u16) = (0, 0);
/// How often a blocked wait wakes up to check for a stop request: a stop is acted on within
/// this (plus the watcher's own [`WATCH`]).
const TICK: Duration = Duration::from_millis(200);
/// How often the stop watcher of a session asks the caller's stop check.
const WATCH: Duration = Duration::from_millis(50);

/// errno values for error replies (`asm-generic/errno-base.h`, `errno.h`).
const EINVAL: i32 = 22;
const EOPNOTSUPP: i32 = 95;
/// errno for a second VERSION: the session's version is already agreed.
const EALREADY: i32 = 114;

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The client closed the connection.
    Disconnected,
    /// The stop check said stop (SIGINT / SIGTERM).
    Stopped,
    /// The client broke the protocol so that no more messages could be read; the connection was
    /// closed. The text says how.
    ClientError(String),
}

/// The server of one device.
#[derive(Debug)]
pub struct Server<B: Backend> {
    device: Arc<Mutex<B>>,
    dma: GuestDma,
    irqs: IrqLines,
    layout: Layout,
    log: Log,
    /// Where the device's own events go (none: they are dropped).
    events: Option<Log>,
}

impl<B: Backend> Server<B> {
    /// Serves `device`, whose DMA space and interrupt lines are `dma` and `irqs` (the device was
    /// built with clones of them).
    pub fn new(device: Arc<Mutex<B>>, dma: GuestDma, irqs: IrqLines, log: Log) -> Self {
        let layout = lock(&device).layout();
        Self { device, dma, irqs, layout, log, events: None }
    }

    /// Sends what the device records (commands it executed, resets, faults that fired) to
    /// `log`, one line per event, after each access.
    pub fn with_events(mut self, log: Log) -> Self {
        self.events = Some(log);
        self
    }

    /// Takes the device's events and logs them (or drops them).
    fn flush_events(&self, device: &mut B) {
        device.flush_events(self.events.as_ref());
    }

    /// Waits for one client on `listener` and serves it until it goes, or until `stop()`.
    pub fn serve_one(&self, listener: &UnixListener, stop: &(dyn Fn() -> bool + Sync)) -> std::io::Result<Outcome> {
        listener.set_nonblocking(true)?;
        let stream = loop {
            match listener.accept() {
                Ok((s, _)) => break s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if stop() {
                        return Ok(Outcome::Stopped);
                    }
                    let mut fds = [rustix::event::PollFd::new(listener, rustix::event::PollFlags::IN)];
                    let timeout = rustix::event::Timespec::try_from(TICK).ok();
                    let _ = rustix::event::poll(&mut fds, timeout.as_ref());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        stream.set_nonblocking(false)?;
        self.serve_stream(stream, stop)
    }

    /// Serves a connected client until it goes, or until `stop()`. A thread of the session
    /// watches `stop` and stops the connection's waits (module docs), so whatever the client
    /// does, a stop ends the session within a tick.
    pub fn serve_stream(&self, stream: UnixStream, stop: &(dyn Fn() -> bool + Sync)) -> std::io::Result<Outcome> {
        let link = Arc::new(Link::new(stream, TICK)?);
        self.dma.set_link(Some(Arc::clone(&link)));
        let over = AtomicBool::new(false);
        let outcome = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                while !over.load(Ordering::SeqCst) {
                    if stop() {
                        link.request_stop();
                        return;
                    }
                    std::thread::park_timeout(WATCH);
                }
            });
            let outcome = self.session(&link);
            over.store(true, Ordering::SeqCst);
            // Woken at once rather than at its next look, so the session ends without waiting;
            // joined rather than left to the scope, so the thread has wholly exited (its
            // thread-locals freed) when this returns.
            watcher.thread().unpark();
            let _ = watcher.join();
            outcome
        });
        link.close();
        self.dma.set_link(None);
        self.log.line(&format!(
            "the client had at most {} DMA regions mapped at once (max_dma_maps {})",
            self.dma.take_peak(),
            self.dma.max_maps()
        ));
        // The client's memory and eventfds mean nothing without it.
        self.dma.unmap(0, 0, true);
        self.irqs.disconnect();
        if let Outcome::ClientError(why) = &outcome {
            self.log.line(&format!("closed the connection: {why}"));
        }
        self.log.flush_suppressed();
        Ok(outcome)
    }

    fn session(&self, link: &Link) -> Outcome {
        let mut versioned = false;
        loop {
            let msg = match link.next_request() {
                Ok(m) => m,
                Err(LinkError::Closed) => return Outcome::Disconnected,
                Err(LinkError::Stopped) => return Outcome::Stopped,
                Err(e) => return Outcome::ClientError(e.to_string()),
            };
            let header = msg.header;
            let reply = self.handle(link, msg, &mut versioned);
            if header.no_reply() {
                if let Err(errno) = reply {
                    self.log.limited(&format!("posted {:?} (id {}) failed: errno {errno}", header.command, header.id));
                }
                continue;
            }
            let bytes = match reply {
                Ok(bytes) => bytes,
                Err(errno) => encode_error(header.id, header.command, errno),
            };
            match link.send(&bytes) {
                Ok(()) => {}
                Err(LinkError::Stopped) => return Outcome::Stopped,
                Err(LinkError::Broken(why)) => return Outcome::ClientError(why),
                Err(_) => return Outcome::Disconnected,
            }
        }
    }

    /// Serves one request: the encoded reply, or the errno of an error reply.
    fn handle(&self, link: &Link, msg: Incoming, versioned: &mut bool) -> Result<Vec<u8>, i32> {
        let Incoming { header, payload, fds } = msg;
        let (id, command) = (header.id, header.command);
        let refuse = |why: String| {
            self.log.limited(&format!("refused {command:?} (id {id}): {why}"));
            EINVAL
        };
        let request = decode_request(&header, &payload).map_err(|e| refuse(e.to_string()))?;
        let ok = |reply: Reply<'_>| Ok(encode_reply(id, command, &reply));
        if !fds.is_empty() && !matches!(request, Request::DmaMap(_) | Request::SetIrqs(_)) {
            return Err(refuse(format!("{} unexpected descriptor(s)", fds.len())));
        }
        if !*versioned && !matches!(request, Request::Version { .. }) {
            return Err(refuse("VERSION must come first".into()));
        }
        match request {
            Request::Version { .. } if *versioned => {
                self.log.limited(&format!("refused {command:?} (id {id}): the version is agreed once per session"));
                Err(EALREADY)
            }
            Request::Version { major, minor, caps } => {
                if major != VERSION.0 {
                    return Err(refuse(format!("protocol major version {major}; this server speaks {}", VERSION.0)));
                }
                if let Some(max) = caps.max_data_xfer_size {
                    link.set_max_transfer(usize::try_from(max).unwrap_or(MAX_DATA_XFER));
                }
                *versioned = true;
                let json = format!(
                    "{{\"capabilities\":{{\"max_msg_fds\":{MAX_FDS},\"max_data_xfer_size\":{MAX_DATA_XFER},\"max_dma_maps\":{}}}}}",
                    self.dma.max_maps()
                );
                ok(Reply::Version { major: VERSION.0, minor: minor.min(VERSION.1), caps: &json })
            }
            Request::DmaMap(map) => {
                if fds.len() > 1 {
                    return Err(refuse("more than one descriptor".into()));
                }
                let file = fds.into_iter().next().map(File::from);
                self.dma.map(&map, file.as_ref()).map_err(|r| {
                    self.log.limited(&r.reason);
                    r.errno
                })?;
                ok(Reply::Empty)
            }
            Request::DmaUnmap(unmap) => {
                self.dma.unmap(unmap.address, unmap.size, unmap.flags & DMA_UNMAP_FLAG_ALL != 0);
                ok(Reply::DmaUnmap(unmap))
            }
            Request::DeviceGetInfo => {
                ok(Reply::DeviceInfo { flags: DEVICE_FLAGS, num_regions: NUM_REGIONS, num_irqs: NUM_IRQS })
            }
            Request::RegionInfo { index } => {
                if index >= NUM_REGIONS {
                    return Err(refuse(format!("no region {index}")));
                }
                let size = self.region_size(index);
                ok(Reply::RegionInfo(RegionInfo { flags: if size > 0 { REGION_RW } else { 0 }, index, size }))
            }
            Request::IrqInfo { index } => match self.irqs.info(index) {
                Some(info) => ok(Reply::IrqInfo(info)),
                None => Err(refuse(format!("no interrupt type {index}"))),
            },
            Request::SetIrqs(set) => {
                self.irqs.set(&set, fds).map_err(|r| refuse(r.0))?;
                ok(Reply::Empty)
            }
            Request::RegionRead { offset, region, count } => {
                self.check_access(region, offset, count as usize).map_err(refuse)?;
                let mut data = vec![0u8; count as usize];
                {
                    let mut device = self.lock_device(link);
                    if region == CONFIG_REGION {
                        device.read_config(offset as u16, &mut data);
                    } else {
                        device.read_bar(region as u8, offset, &mut data);
                    }
                    self.flush_events(&mut device);
                }
                ok(Reply::RegionRead { offset, region, data: &data })
            }
            Request::RegionWrite { offset, region, data } => {
                self.check_access(region, offset, data.len()).map_err(refuse)?;
                {
                    let mut device = self.lock_device(link);
                    if region == CONFIG_REGION {
                        device.write_config(offset as u16, data);
                    } else {
                        device.write_bar(region as u8, offset, data);
                    }
                    self.flush_events(&mut device);
                }
                ok(Reply::RegionWrite { offset, region, count: data.len() as u32 })
            }
            Request::DeviceReset => {
                let mut device = self.lock_device(link);
                device.reset();
                self.flush_events(&mut device);
                ok(Reply::Empty)
            }
            Request::DmaRead { .. } | Request::DmaWrite { .. } => {
                Err(refuse("DMA_READ / DMA_WRITE go from the server to the client".into()))
            }
            Request::Unsupported(c) => {
                self.log.limited(&format!("unsupported command {c:?} (id {id})"));
                Err(EOPNOTSUPP)
            }
        }
    }

    fn region_size(&self, index: u32) -> u64 {
        match index {
            0..=5 => self.layout.bars[index as usize],
            CONFIG_REGION => self.layout.config_len,
            _ => 0,
        }
    }

    /// A region access must be inside a present region and at most one transfer long.
    fn check_access(&self, region: u32, offset: u64, count: usize) -> Result<(), String> {
        let size = if region < NUM_REGIONS { self.region_size(region) } else { 0 };
        let end = offset.checked_add(count as u64);
        if count == 0 || count > MAX_DATA_XFER || end.is_none_or(|e| e > size) {
            return Err(format!("{count} bytes at {offset:#x} of region {region} (size {size:#x})"));
        }
        Ok(())
    }

    /// The device's lock. While another thread holds it (and may wait for a DMA reply that only
    /// this thread can read), this thread keeps routing the socket's replies.
    fn lock_device(&self, link: &Link) -> MutexGuard<'_, B> {
        loop {
            match self.device.try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    if link.pump(Duration::from_millis(1)).is_err() {
                        // The connection is going; the next read will say so.
                        return lock(&self.device);
                    }
                }
            }
        }
    }
}

fn lock<B>(m: &Mutex<B>) -> MutexGuard<'_, B> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Disconnected => f.write_str("the client disconnected"),
            Self::Stopped => f.write_str("stopped by a signal"),
            Self::ClientError(why) => write!(f, "the client broke the protocol: {why}"),
        }
    }
}
