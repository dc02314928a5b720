//! One connection's socket: framed messages with the file descriptors that came with them, the
//! server's own requests to the client (DMA_READ / DMA_WRITE) and the routing of their replies.
//!
//! Only the serving thread reads the socket. A reply that arrives there goes to whichever thread
//! waits for it; a request that arrives while a thread waits for a reply is queued and served
//! afterwards, in order. So the serving thread can itself send DMA_READ in the middle of a
//! doorbell write and read on until the answer comes, and another thread (an event injector) can
//! do the same through the serving thread.
//!
//! Nothing here waits on the peer without a bound: every wait wakes up at least every tick to
//! look at the stop flag ([`Link::request_stop`]), in the middle of a message too; a send the
//! peer does not read within [`SEND_DEADLINE`] and a DMA message it does not answer within
//! [`REPLY_DEADLINE`] fail. So a client can neither keep the server past a stop request nor hold
//! a thread of it for long.

use std::collections::{HashMap, VecDeque};
use std::io::{self, IoSlice, IoSliceMut, Read};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer, SendFlags};

use crate::protocol::{DecodeError, HEADER_LEN, Header, MAX_DATA_XFER, Request, encode_request};

/// File descriptors accepted with one message (advertised as `max_msg_fds`).
pub const MAX_FDS: usize = 16;

/// How long the server waits for the client's reply to a DMA message: the client's own deadline
/// for the server's replies (QEMU's `x-msg-timeout`, 5 s), so a client that keeps the server
/// waiting longer has broken the protocol it holds the server to.
pub const REPLY_DEADLINE: Duration = Duration::from_secs(5);
/// How long one message may take to go out while the peer reads nothing (its socket buffer
/// full): the same 5 s, for the same reason.
pub const SEND_DEADLINE: Duration = Duration::from_secs(5);

/// A message as read from the socket.
#[derive(Debug)]
pub struct Incoming {
    /// Its header.
    pub header: Header,
    /// The bytes after the header.
    pub payload: Vec<u8>,
    /// Descriptors sent with it.
    pub fds: Vec<OwnedFd>,
}

/// Why no message could be read.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// The client closed the connection between messages.
    #[error("the client closed the connection")]
    Closed,
    /// The stop check asked the server to stop.
    #[error("stopped")]
    Stopped,
    /// The client sent bytes that cannot be framed as a message.
    #[error("malformed message: {0}")]
    Malformed(#[from] DecodeError),
    /// The connection broke inside a message, or more descriptors came than fit.
    #[error("{0}")]
    Broken(String),
    /// A socket call failed.
    #[error("socket: {0}")]
    Io(#[from] io::Error),
}

/// The socket of one connection, shared by the serving thread and any thread doing DMA.
#[derive(Debug)]
pub struct Link {
    reader: Mutex<UnixStream>,
    writer: Mutex<UnixStream>,
    pending: Mutex<HashMap<u16, Sender<Incoming>>>,
    backlog: Mutex<VecDeque<Incoming>>,
    next_id: AtomicU16,
    serving_thread: ThreadId,
    closed: AtomicBool,
    stop: AtomicBool,
    tick: Duration,
    max_transfer: AtomicUsize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Link {
    /// Wraps a connected socket; the calling thread becomes the serving thread. Reads wake up
    /// every `tick` to let the caller check for a stop request.
    pub fn new(stream: UnixStream, tick: Duration) -> io::Result<Self> {
        stream.set_read_timeout(Some(tick))?;
        let writer = stream.try_clone()?;
        Ok(Self {
            reader: Mutex::new(stream),
            writer: Mutex::new(writer),
            pending: Mutex::new(HashMap::new()),
            backlog: Mutex::new(VecDeque::new()),
            next_id: AtomicU16::new(0x8000),
            serving_thread: std::thread::current().id(),
            closed: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            tick,
            max_transfer: AtomicUsize::new(MAX_DATA_XFER),
        })
    }

    /// Asks every wait on this connection to give up at its next tick with
    /// [`LinkError::Stopped`] (a stop request seen by another thread: the serving thread may be
    /// inside a message, a send or a DMA exchange).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Limits the server's DMA messages to the client's `max_data_xfer_size` (never above this
    /// server's own).
    pub fn set_max_transfer(&self, bytes: usize) {
        self.max_transfer.store(bytes.clamp(1, MAX_DATA_XFER), Ordering::SeqCst);
    }

    /// The largest `count` of one DMA message.
    pub fn max_transfer(&self) -> usize {
        self.max_transfer.load(Ordering::SeqCst)
    }

    /// Sends one whole message, within [`SEND_DEADLINE`] and until a stop request.
    pub fn send(&self, bytes: &[u8]) -> Result<(), LinkError> {
        self.send_with_fds(bytes, &[])
    }

    /// Sends one message with descriptors (the test client's DMA_MAP and SET_IRQS), as
    /// [`Link::send`]. The descriptors go with the first byte.
    pub fn send_with_fds(&self, bytes: &[u8], fds: &[std::os::fd::BorrowedFd<'_>]) -> Result<(), LinkError> {
        let writer = lock(&self.writer);
        let deadline = Instant::now() + SEND_DEADLINE;
        let flags = SendFlags::NOSIGNAL | SendFlags::DONTWAIT;
        let mut sent = 0;
        while sent < bytes.len() {
            let result = if sent == 0 && !fds.is_empty() {
                let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
                let mut control = SendAncillaryBuffer::new(&mut space);
                if !control.push(rustix::net::SendAncillaryMessage::ScmRights(fds)) {
                    return Err(LinkError::Broken(format!("more than {MAX_FDS} descriptors in one message")));
                }
                rustix::net::sendmsg(&*writer, &[IoSlice::new(bytes)], &mut control, flags)
            } else {
                rustix::net::send(&*writer, &bytes[sent..], flags)
            };
            match result {
                Ok(n) => sent += n,
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {
                    if self.stopping() {
                        return Err(LinkError::Stopped);
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(LinkError::Broken(format!(
                            "the peer read nothing for {SEND_DEADLINE:?} ({sent} of {} bytes of a message went out)",
                            bytes.len()
                        )));
                    }
                    let mut pfd = [rustix::event::PollFd::new(&*writer, rustix::event::PollFlags::OUT)];
                    let wait = rustix::event::Timespec::try_from(self.tick.min(deadline - now)).ok();
                    let _ = rustix::event::poll(&mut pfd, wait.as_ref());
                }
                Err(e) => return Err(io::Error::from(e).into()),
            }
        }
        Ok(())
    }

    /// The next request to serve: a queued one first, else the next from the socket (replies
    /// that arrive meanwhile are routed to their waiters), until a stop request.
    pub fn next_request(&self) -> Result<Incoming, LinkError> {
        loop {
            if self.stopping() {
                return Err(LinkError::Stopped);
            }
            if let Some(queued) = lock(&self.backlog).pop_front() {
                return Ok(queued);
            }
            match self.receive()? {
                msg if msg.header.is_reply() => self.route(msg),
                msg => return Ok(msg),
            }
        }
    }

    /// Reads at most one message if one is waiting (within `wait`): a reply is routed, a request
    /// queued. For a serving thread that waits for something else (the device's lock).
    pub fn pump(&self, wait: Duration) -> Result<(), LinkError> {
        let readable = {
            let reader = lock(&self.reader);
            let mut fds = [rustix::event::PollFd::new(&*reader, rustix::event::PollFlags::IN)];
            let timeout = rustix::event::Timespec::try_from(wait).ok();
            rustix::event::poll(&mut fds, timeout.as_ref()).map_err(io::Error::from)? > 0
        };
        if readable {
            let msg = self.receive()?;
            if msg.header.is_reply() {
                self.route(msg);
            } else {
                lock(&self.backlog).push_back(msg);
            }
        }
        Ok(())
    }

    /// The next message of any kind, waiting as long as it takes (the test client's read).
    pub fn receive_any(&self) -> Result<Incoming, LinkError> {
        if let Some(queued) = lock(&self.backlog).pop_front() {
            return Ok(queued);
        }
        self.receive()
    }

    fn route(&self, reply: Incoming) {
        if let Some(waiter) = lock(&self.pending).remove(&reply.header.id) {
            let _ = waiter.send(reply);
        }
        // A reply nobody waits for (a waiter that timed out) is dropped.
    }

    /// Sends a request to the client and waits for its reply, [`REPLY_DEADLINE`] at most, and
    /// not past a stop request.
    pub fn call(&self, request: &Request<'_>) -> Result<Incoming, LinkError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(LinkError::Closed);
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) | 0x8000;
        let (tx, rx): (Sender<Incoming>, Receiver<Incoming>) = mpsc::channel();
        lock(&self.pending).insert(id, tx);
        let result = self.send(&encode_request(id, request, 0)).and_then(|()| self.wait_reply(&rx, id));
        if result.is_err() {
            lock(&self.pending).remove(&id);
        }
        result
    }

    /// Waits for the reply to message `id`, routed to `rx`: on the serving thread by reading the
    /// socket itself, on any other by waiting for the serving thread to route it.
    fn wait_reply(&self, rx: &Receiver<Incoming>, id: u16) -> Result<Incoming, LinkError> {
        let deadline = Instant::now() + REPLY_DEADLINE;
        let serving = std::thread::current().id() == self.serving_thread;
        loop {
            if let Ok(reply) = rx.try_recv() {
                return Ok(reply);
            }
            if self.stopping() {
                return Err(LinkError::Stopped);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(LinkError::Broken(format!(
                    "no reply from the client to message {id} within {REPLY_DEADLINE:?}"
                )));
            }
            let slice = self.tick.min(deadline - now);
            if serving {
                // Nobody else reads the socket: read on until the reply is routed here.
                self.pump(slice)?;
            } else {
                match rx.recv_timeout(slice) {
                    Ok(reply) => return Ok(reply),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return Err(LinkError::Closed),
                }
            }
        }
    }

    /// Marks the connection closed: later [`Link::call`]s fail at once.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        lock(&self.pending).clear();
    }

    /// Reads one message: the header with its descriptors, then the payload. A stop request is
    /// seen at every tick, inside a message too.
    fn receive(&self) -> Result<Incoming, LinkError> {
        let reader = lock(&self.reader);
        let mut head = [0u8; HEADER_LEN];
        let mut got = 0;
        let mut fds = Vec::new();
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
        while got < HEADER_LEN {
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let mut iov = [IoSliceMut::new(&mut head[got..])];
            match rustix::net::recvmsg(&*reader, &mut iov, &mut control, RecvFlags::CMSG_CLOEXEC) {
                Ok(r) if r.bytes == 0 => {
                    return Err(if got == 0 { LinkError::Closed } else { broken_inside("the header") });
                }
                Ok(r) => {
                    if r.flags.contains(rustix::net::ReturnFlags::CTRUNC) {
                        return Err(LinkError::Broken(format!("more than {MAX_FDS} descriptors with one message")));
                    }
                    for msg in control.drain() {
                        if let RecvAncillaryMessage::ScmRights(received) = msg {
                            fds.extend(received);
                        }
                    }
                    got += r.bytes;
                }
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {
                    if self.stopping() {
                        return Err(LinkError::Stopped);
                    }
                }
                Err(e) => return Err(io::Error::from(e).into()),
            }
        }
        let header = Header::decode(&head)?;
        let mut payload = vec![0u8; header.payload_len()?];
        let mut filled = 0;
        while filled < payload.len() {
            match (&*reader).read(&mut payload[filled..]) {
                Ok(0) => return Err(broken_inside("the payload")),
                Ok(n) => filled += n,
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {
                    if self.stopping() {
                        return Err(LinkError::Stopped);
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Incoming { header, payload, fds })
    }
}

fn broken_inside(part: &str) -> LinkError {
    LinkError::Broken(format!("the client closed the connection inside {part} of a message"))
}
