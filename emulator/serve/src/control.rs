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
//!
//! The answer is `{"ok":true,"changed":BOOL,"faults":[SPEC,...]}` (the faults set afterwards),
//! or `{"ok":false,"error":"..."}` with nothing changed. Faults persist in the state directory
//! as when ocetool sets them directly. They go through the device, which acts on them at once:
//! `link-down` (set or cleared) reaches the guest's driver as a link-state event.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use oce_emulator::device::{Device, DmaSpace, Interrupt};
use oce_emulator::{FaultSpec, Faults};
use serde_json::{Value, json};

use crate::log::Log;

/// How often the accept loop wakes up to check for a stop request.
const TICK: Duration = Duration::from_millis(200);
/// How long one connection may take to send its request or read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(5);
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
}

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
    /// The answer does not parse.
    #[error("the server's control answer does not parse: {0}")]
    BadReply(String),
}

impl ControlRequest {
    fn encode(&self) -> Value {
        match self {
            Self::FaultSet(specs) => json!({"op": "fault-set", "specs": specs}),
            Self::FaultClear(names) => json!({"op": "fault-clear", "names": names}),
            Self::FaultClearAll => json!({"op": "fault-clear-all"}),
            Self::FaultList => json!({"op": "fault-list"}),
        }
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
            Some(op) => Err(format!("unknown op {op:?}")),
            None => Err("no `op`".into()),
        }
    }
}

/// Sends `request` to the server listening at `path` and returns its answer.
pub fn request(path: &Path, request: &ControlRequest) -> Result<ControlReply, ControlError> {
    let stream = UnixStream::connect(path)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut line = request.encode().to_string();
    line.push('\n');
    (&stream).write_all(line.as_bytes())?;
    let mut answer = String::new();
    BufReader::new(&stream).take(MAX_LINE).read_line(&mut answer)?;
    let v: Value = serde_json::from_str(&answer).map_err(|e| ControlError::BadReply(e.to_string()))?;
    if v["ok"] != Value::Bool(true) {
        let why = v["error"].as_str().unwrap_or("the server refused the request without a reason");
        return Err(ControlError::Refused(why.to_owned()));
    }
    let faults = v["faults"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .ok_or_else(|| ControlError::BadReply(answer.trim().to_owned()))?;
    Ok(ControlReply { changed: v["changed"] == Value::Bool(true), faults })
}

/// Answers control requests on `listener` for `device` until `stop()`; each connection is one
/// request and one answer. For a thread of its own beside the serving one.
pub fn serve_control<D: DmaSpace, I: Interrupt>(
    listener: &UnixListener,
    device: &Mutex<Device<D, I>>,
    stop: &dyn Fn() -> bool,
    log: &Log,
) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    while !stop() {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Err(e) = answer_one(&stream, device, log) {
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

fn answer_one<D: DmaSpace, I: Interrupt>(
    stream: &UnixStream,
    device: &Mutex<Device<D, I>>,
    log: &Log,
) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut line = String::new();
    BufReader::new(stream).take(MAX_LINE).read_line(&mut line)?;
    let answer = match serde_json::from_str::<Value>(&line)
        .map_err(|e| e.to_string())
        .and_then(|v| ControlRequest::decode(&v))
    {
        Ok(request) => {
            let mut device = device.lock().unwrap_or_else(PoisonError::into_inner);
            apply(&request, &mut device)
        }
        Err(why) => Err(format!("bad control request: {why}")),
    };
    let reply = match answer {
        Ok(r) => {
            log.line(&format!("control: faults now [{}]", r.faults.join(", ")));
            json!({"ok": true, "changed": r.changed, "faults": r.faults})
        }
        Err(why) => {
            log.line(&format!("control: refused: {why}"));
            json!({"ok": false, "error": why})
        }
    };
    let mut out = reply.to_string();
    out.push('\n');
    (&*stream).write_all(out.as_bytes())
}

/// Applies `request` to the device's faults (saved in the state directory), through the device so
/// that it acts on them at once (a `link-down` is announced to the guest's driver).
fn apply<D: DmaSpace, I: Interrupt>(
    request: &ControlRequest,
    device: &mut Device<D, I>,
) -> Result<ControlReply, String> {
    let describe = |f: &Faults| f.describe().iter().map(ToString::to_string).collect::<Vec<_>>();
    let before = describe(device.firmware().faults());
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
    }
    let faults = describe(device.firmware().faults());
    Ok(ControlReply { changed: faults != before, faults })
}
