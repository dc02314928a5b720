//! The control channel of a running server: how a host command reaches an adapter that a server
//! holds. The server keeps the device's lock for its whole session, so `ocetool emulator fault
//! set` on the same state directory cannot open the adapter itself; it asks the server instead,
//! over a second Unix socket (mode 0600, beside the device's lock file), and the server applies
//! the change to the live device under the device's mutex, between two guest accesses.
//!
//! The protocol is one JSON line each way per connection:
//!
//! | request | effect |
//! |---|---|
//! | `{"op":"fault-set","specs":["gone","status=1:168:3"]}` | sets each fault (all parsed first: one bad spec sets none) |
//! | `{"op":"fault-clear","names":["status"]}` | clears faults by name |
//! | `{"op":"fault-clear-all"}` | clears every fault |
//! | `{"op":"fault-list"}` | changes nothing |
//! | `{"op":"status"}` | changes nothing: reports the adapter ([`ServerStatus`]) |
//!
//! The answer to a fault op is `{"ok":true,"changed":BOOL,"faults":[SPEC,...]}` (the faults set
//! afterwards); to `status`, `{"ok":true,"status":{"adapter":...,"pci":...,"link":...,"links":[...]}}`:
//! what `ocetool emulator show` reports, function 0's PCI IDs as configuration space shows them,
//! function 0's link with the cable's other end ([`oce_emulator::LinkState`]), and the link of
//! every function the server serves (function 0's first; each names its port). A refusal is
//! `{"ok":false,"error":"..."}` with nothing changed. Faults persist in the state directory
//! as when ocetool sets them directly. They go through the device, which acts on them at once:
//! `link-down` (set or cleared) reaches the guest's driver as a link-state event.
//!
//! # Deadlines: applied only if answered in time
//!
//! Every request carries `"deadline_ns"`: the `CLOCK_MONOTONIC` instant (nanoseconds, a clock
//! every process of the machine shares) by which the client must have its answer, after which it
//! has given up. The server applies a request only if it can do so [`ANSWER_RESERVE`] before
//! that deadline; otherwise — the request waited behind another connection, or the device is
//! held by a guest access that waits for its client — it changes nothing and answers
//! `{"ok":false,"busy":true,"error":"..."}` (which nobody may read any more). So a client that
//! timed out knows that nothing was applied, and a client that got "busy" may simply retry. A
//! request without a deadline gets [`IO_TIMEOUT`] from the moment the server accepted it. The
//! one window left is the reserve itself: an answer written in time that the machine then takes
//! longer than [`ANSWER_RESERVE`] to deliver.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use oce_emulator::device::{Device, DmaSpace, Interrupt};
use oce_emulator::{FaultSpec, Faults};
use serde_json::{Value, json};

use crate::log::Log;

/// How often the accept loop wakes up to check for a stop request.
const TICK: Duration = Duration::from_millis(200);
/// How long a client waits for its answer ([`request`]), and how long the server waits for a
/// request line.
pub const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long before the client's deadline the server stops applying requests: the time an answer
/// (one short line on a local socket the client is reading) may take to arrive (policy: two
/// orders of magnitude above that on an idle machine).
pub const ANSWER_RESERVE: Duration = Duration::from_millis(100);
/// The longest request line accepted.
const MAX_LINE: u64 = 64 * 1024;

/// A request to a running server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlRequest {
    /// Set faults (specs as `ocetool emulator fault set` takes them).
    FaultSet(Vec<String>),
    /// Clear faults by name.
    FaultClear(Vec<String>),
    /// Clear every fault.
    FaultClearAll,
    /// List the faults.
    FaultList,
    /// Report the adapter and its link.
    Status,
}

/// What a running server reports of its adapter (`{"op":"status"}`), as JSON: `adapter` is
/// [`oce_emulator::EmulatorInfo`], `pci` the IDs as configuration space shows them
/// (`vendor_id`, `device_id`, `subsystem_vendor_id`, `subsystem_id`, as `"0x10df"`), `link`
/// [`oce_emulator::LinkState`].
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus(pub Value);

/// The server's answer to a request that succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlReply {
    /// Whether the request changed the faults.
    pub changed: bool,
    /// The faults set afterwards, as specs.
    pub faults: Vec<String>,
}

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The socket could not be reached or broke.
    #[error("the server's control socket: {0}")]
    Io(#[from] io::Error),
    /// The server refused the request; nothing changed.
    #[error("{0}")]
    Refused(String),
    /// The server could not apply the request before the client's deadline; nothing changed.
    #[error("the server is busy: {0}; nothing was changed")]
    Busy(String),
    /// No answer came before the client's deadline; by the deadline contract (module docs),
    /// nothing was changed.
    #[error("the server did not answer within {0:?}; nothing was changed")]
    TimedOut(Duration),
    /// The answer does not parse.
    #[error("the server's control answer does not parse: {0}")]
    BadReply(String),
}

impl ControlRequest {
    fn encode(&self, deadline_ns: u128) -> Value {
        let mut v = match self {
            Self::FaultSet(specs) => json!({"op": "fault-set", "specs": specs}),
            Self::FaultClear(names) => json!({"op": "fault-clear", "names": names}),
            Self::FaultClearAll => json!({"op": "fault-clear-all"}),
            Self::FaultList => json!({"op": "fault-list"}),
            Self::Status => json!({"op": "status"}),
        };
        v["deadline_ns"] = json!(u64::try_from(deadline_ns).unwrap_or(u64::MAX));
        v
    }

    fn decode(v: &Value) -> Result<Self, String> {
        let strings = |key: &str| -> Result<Vec<String>, String> {
            v[key]
                .as_array()
                .ok_or_else(|| format!("`{key}` must be a list of strings"))?
                .iter()
                .map(|s| s.as_str().map(str::to_owned).ok_or_else(|| format!("`{key}` must be a list of strings")))
                .collect()
        };
        match v["op"].as_str() {
            Some("fault-set") => Ok(Self::FaultSet(strings("specs")?)),
            Some("fault-clear") => Ok(Self::FaultClear(strings("names")?)),
            Some("fault-clear-all") => Ok(Self::FaultClearAll),
            Some("fault-list") => Ok(Self::FaultList),
            Some("status") => Ok(Self::Status),
            Some(op) => Err(format!("unknown op {op:?}")),
            None => Err("no `op`".into()),
        }
    }
}

/// The `CLOCK_MONOTONIC` time in nanoseconds: the clock of the deadline contract (module docs).
pub fn monotonic_ns() -> u128 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u128::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u128::try_from(t.tv_nsec).unwrap_or(0)
}

/// Sends `request` to the server listening at `path` and returns its answer, within
/// [`IO_TIMEOUT`].
pub fn request(path: &Path, request: &ControlRequest) -> Result<ControlReply, ControlError> {
    request_within(path, request, IO_TIMEOUT)
}

/// Sends `request` and waits `timeout` at most for the answer: the server applies it only if it
/// can answer within that time (module docs).
pub fn request_within(path: &Path, request: &ControlRequest, timeout: Duration) -> Result<ControlReply, ControlError> {
    let v = exchange(path, request, timeout)?;
    let faults = v["faults"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .ok_or_else(|| ControlError::BadReply(v.to_string()))?;
    Ok(ControlReply { changed: v["changed"] == Value::Bool(true), faults })
}

/// Asks the server listening at `path` for its adapter's status, within [`IO_TIMEOUT`].
pub fn status(path: &Path) -> Result<ServerStatus, ControlError> {
    let mut v = exchange(path, &ControlRequest::Status, IO_TIMEOUT)?;
    match v["status"].take() {
        Value::Object(o) => Ok(ServerStatus(Value::Object(o))),
        _ => Err(ControlError::BadReply(v.to_string())),
    }
}

/// Sends `request` and returns the server's answer when it says `"ok": true`.
fn exchange(path: &Path, request: &ControlRequest, timeout: Duration) -> Result<Value, ControlError> {
    let deadline = monotonic_ns() + timeout.as_nanos();
    let stream = UnixStream::connect(path)?;
    let left = || {
        let ns = deadline.saturating_sub(monotonic_ns());
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX)).max(Duration::from_millis(1))
    };
    stream.set_write_timeout(Some(left()))?;
    let mut line = request.encode(deadline).to_string();
    line.push('\n');
    let timed_out = |e: io::Error| match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ControlError::TimedOut(timeout),
        _ => ControlError::Io(e),
    };
    (&stream).write_all(line.as_bytes()).map_err(timed_out)?;
    stream.set_read_timeout(Some(left()))?;
    let mut answer = String::new();
    BufReader::new(&stream).take(MAX_LINE).read_line(&mut answer).map_err(timed_out)?;
    let v: Value = serde_json::from_str(&answer).map_err(|e| ControlError::BadReply(e.to_string()))?;
    if v["ok"] != Value::Bool(true) {
        let why = v["error"].as_str().unwrap_or("the server refused the request without a reason").to_owned();
        return Err(if v["busy"] == Value::Bool(true) { ControlError::Busy(why) } else { ControlError::Refused(why) });
    }
    Ok(v)
}

/// Answers control requests on `listener` for the card's served functions (`functions[0]` is
/// function 0, through which faults, which are the card's, are set) until `stop()`; each
/// connection is one request and one answer. For a thread of its own beside the serving ones.
pub fn serve_control<D: DmaSpace, I: Interrupt>(
    listener: &UnixListener,
    functions: &[&Mutex<Device<D, I>>],
    stop: &dyn Fn() -> bool,
    log: &Log,
) -> io::Result<()> {
    let Some((device, others)) = functions.split_first() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "a control channel needs a served function"));
    };
    listener.set_nonblocking(true)?;
    while !stop() {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Err(e) = answer_one(&stream, device, others, stop, log) {
                    log.line(&format!("control: {e}"));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let mut fds = [rustix::event::PollFd::new(listener, rustix::event::PollFlags::IN)];
                let timeout = rustix::event::Timespec::try_from(TICK).ok();
                let _ = rustix::event::poll(&mut fds, timeout.as_ref());
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Why a request line could not be read.
enum LineError {
    Stopped,
    Io(io::Error),
}

/// Reads one request line within [`IO_TIMEOUT`], waking up every tick for `stop`.
fn read_line(stream: &UnixStream, stop: &dyn Fn() -> bool) -> Result<String, LineError> {
    stream.set_read_timeout(Some(TICK)).map_err(LineError::Io)?;
    let deadline = std::time::Instant::now() + IO_TIMEOUT;
    let mut line = Vec::new();
    let mut buf = [0u8; 4096];
    while !line.contains(&b'\n') && (line.len() as u64) < MAX_LINE {
        match (&*stream).read(&mut buf) {
            Ok(0) => break,
            Ok(n) => line.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
            Err(e) => return Err(LineError::Io(e)),
        }
        if stop() {
            return Err(LineError::Stopped);
        }
        if std::time::Instant::now() >= deadline {
            return Err(LineError::Io(io::Error::new(io::ErrorKind::TimedOut, "no request line within 5 s")));
        }
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
}

/// What became of one request.
enum Answer {
    Done(Value),
    Refused(String),
    Busy(String),
}

/// Locks the device for a request that must be applied by `apply_by` (monotonic ns): `None` when
/// the time runs out first (or a stop request comes).
fn lock_by<'a, D: DmaSpace, I: Interrupt>(
    device: &'a Mutex<Device<D, I>>,
    apply_by: u128,
    stop: &dyn Fn() -> bool,
) -> Option<std::sync::MutexGuard<'a, Device<D, I>>> {
    loop {
        match device.try_lock() {
            Ok(guard) => return Some(guard),
            Err(std::sync::TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => {}
        }
        if monotonic_ns() >= apply_by || stop() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn answer_one<D: DmaSpace, I: Interrupt>(
    stream: &UnixStream,
    device: &Mutex<Device<D, I>>,
    others: &[&Mutex<Device<D, I>>],
    stop: &dyn Fn() -> bool,
    log: &Log,
) -> io::Result<()> {
    let accepted = monotonic_ns();
    stream.set_nonblocking(false)?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let line = match read_line(stream, stop) {
        Ok(line) => line,
        Err(LineError::Stopped) => return Ok(()),
        Err(LineError::Io(e)) => return Err(e),
    };
    let answer = match serde_json::from_str::<Value>(&line).map_err(|e| e.to_string()).and_then(|v| {
        let deadline = v["deadline_ns"].as_u64().map_or(accepted + IO_TIMEOUT.as_nanos(), u128::from);
        ControlRequest::decode(&v).map(|r| (r, deadline))
    }) {
        Ok((request, deadline)) => {
            let apply_by = deadline.saturating_sub(ANSWER_RESERVE.as_nanos());
            let busy = || Answer::Busy("the served adapter could not be reached before the request's deadline".into());
            match lock_by(device, apply_by, stop) {
                // The lock may come just in time: check the clock again once it is held.
                Some(mut device) if monotonic_ns() < apply_by => match apply(&request, &mut device) {
                    Ok(mut reply) if request == ControlRequest::Status => {
                        // The other functions' links, each under its own lock in turn (never
                        // two at once: a serving thread holds one while it waits for nothing).
                        drop(device);
                        match other_links(others, apply_by, stop) {
                            Some(Ok(links)) => {
                                if let Some(all) = reply["status"]["links"].as_array_mut() {
                                    all.extend(links);
                                }
                                Answer::Done(reply)
                            }
                            Some(Err(why)) => Answer::Refused(why),
                            None => busy(),
                        }
                    }
                    Ok(reply) => Answer::Done(reply),
                    Err(why) => Answer::Refused(why),
                },
                _ => busy(),
            }
        }
        Err(why) => Answer::Refused(format!("bad control request: {why}")),
    };
    let reply = match answer {
        Answer::Done(mut body) => {
            if let Some(faults) = body.get("faults").and_then(Value::as_array) {
                let faults: Vec<&str> = faults.iter().filter_map(Value::as_str).collect();
                log.line(&format!("control: faults now [{}]", faults.join(", ")));
            }
            body["ok"] = json!(true);
            body
        }
        Answer::Refused(why) => {
            log.line(&format!("control: refused: {why}"));
            json!({"ok": false, "error": why})
        }
        Answer::Busy(why) => {
            log.line(&format!("control: busy, nothing applied: {why}"));
            json!({"ok": false, "busy": true, "error": why})
        }
    };
    let mut out = reply.to_string();
    out.push('\n');
    (&*stream).write_all(out.as_bytes())
}

/// Applies `request` to the device's faults (saved in the state directory), through the device so
/// that it acts on them at once (a `link-down` is announced to the guest's driver), or reports
/// the device's status; returns the answer's body.
fn apply<D: DmaSpace, I: Interrupt>(request: &ControlRequest, device: &mut Device<D, I>) -> Result<Value, String> {
    let describe = |f: &Faults| f.describe().iter().map(ToString::to_string).collect::<Vec<_>>();
    let before = describe(&device.firmware().faults());
    match request {
        ControlRequest::FaultSet(specs) => {
            // Parse all first, so a bad spec sets none of them.
            let parsed =
                specs.iter().map(|s| FaultSpec::parse(s).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?;
            for spec in parsed {
                device.set_fault(spec).map_err(|e| e.to_string())?;
            }
        }
        ControlRequest::FaultClear(names) => {
            for name in names {
                device.clear_fault(name).map_err(|e| e.to_string())?;
            }
        }
        ControlRequest::FaultClearAll => device.set_faults(Faults::default()).map_err(|e| e.to_string())?,
        ControlRequest::FaultList => {}
        ControlRequest::Status => return status_of(device).map(|status| json!({"status": status})),
    }
    let faults = describe(&device.firmware().faults());
    Ok(json!({"changed": faults != before, "faults": faults}))
}

/// The links of the card's other served functions, each read under its device's lock, by
/// `apply_by`: `None` when a lock does not come in time.
fn other_links<D: DmaSpace, I: Interrupt>(
    others: &[&Mutex<Device<D, I>>],
    apply_by: u128,
    stop: &dyn Fn() -> bool,
) -> Option<Result<Vec<Value>, String>> {
    let mut links = Vec::with_capacity(others.len());
    for other in others {
        let device = lock_by(other, apply_by, stop)?;
        if monotonic_ns() >= apply_by {
            return None;
        }
        match serde_json::to_value(device.link()) {
            Ok(link) => links.push(link),
            Err(e) => return Some(Err(format!("the adapter's link: {e}"))),
        }
    }
    Some(Ok(links))
}

/// The `status` body: the adapter, its PCI IDs as configuration space shows them (offsets 0x00
/// and 0x2C, PCI Local Bus 3.0 §6.1; read without side effects), and its link, also as the
/// first of `links` (to which [`other_links`] adds the other served functions').
fn status_of<D: DmaSpace, I: Interrupt>(device: &mut Device<D, I>) -> Result<Value, String> {
    let mut dword = |off: u16| {
        let mut b = [0u8; 4];
        device.read_config(off, &mut b);
        u32::from_le_bytes(b)
    };
    let (ids, subsystem) = (dword(0x00), dword(0x2C));
    let id = |v: u32| format!("{:#06x}", v & 0xFFFF);
    let to_json = |what: &str, v: Result<Value, serde_json::Error>| v.map_err(|e| format!("the adapter's {what}: {e}"));
    let adapter = to_json("description", serde_json::to_value(device.info()))?;
    let link = to_json("link", serde_json::to_value(device.link()))?;
    Ok(json!({
        "links": [link.clone()],
        "adapter": adapter,
        "pci": {
            "vendor_id": id(ids),
            "device_id": id(ids >> 16),
            "subsystem_vendor_id": id(subsystem),
            "subsystem_id": id(subsystem >> 16),
        },
        "link": link,
    }))
}
