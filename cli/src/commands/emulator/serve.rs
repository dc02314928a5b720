//! `ocetool emulator serve`: the emulated adapter as a vfio-user device for a virtual machine
//! (`oce_emulator_serve`), in the foreground, holding the adapter's lock, with the control channel
//! through which `ocetool emulator fault ...` reaches it ([`super::fault`]) and, with `--wire`,
//! its port on a datagram cable.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use oce_emulator::firmware::Firmware;
use oce_emulator_serve::cable::{CableCounters, DgramCable, run_carrier};
use oce_emulator_serve::clock::run_clock;
use oce_emulator_serve::control;
use oce_emulator_serve::{Adapter, Log, Outcome, ServeSocket, Server, SocketError};
use oce_pci::signals::{self, Signal};
use serde::Serialize;

use super::state::{check_state_dir, control_path};
use crate::args::GlobalArgs;
use crate::error::{CliError, CliResult, ErrorCode, emulator_error, socket_error};
use crate::output::Report;

/// What `ocetool emulator serve` prints when the session is over.
#[derive(Debug, Serialize)]
pub struct ServeReport {
    action: &'static str,
    /// How the session ended: `disconnected` (every function's VM connection went) or `stopped`
    /// (SIGINT / SIGTERM).
    outcome: &'static str,
    /// The signal that stopped the server (`interrupt`, `terminate`), or null. It sets the exit
    /// code: 130 / 143 as for every command a signal stops (README "Exit codes").
    signal: Option<Signal>,
    /// Function 0's socket.
    socket: PathBuf,
    state_dir: PathBuf,
    /// Interrupts sent to the VM, all functions together.
    intx_sent: u64,
    msix_sent: u64,
    /// Function 0's cable (`--wire`), and what crossed it; null without one.
    wire: Option<WireReport>,
    /// Each function served: its number, socket, interrupts and cable.
    functions: Vec<FunctionReport>,
}

/// One served function in a [`ServeReport`].
#[derive(Debug, Serialize)]
pub struct FunctionReport {
    /// The PCI function number (= its port).
    function: u8,
    socket: PathBuf,
    /// How its session ended: `disconnected` or `stopped`.
    outcome: &'static str,
    intx_sent: u64,
    msix_sent: u64,
    wire: Option<WireReport>,
}

/// `--wire`, `--wire-peer`, `--wire-pcap` of one port.
#[derive(Debug, Clone)]
pub struct WireArgs {
    pub local: PathBuf,
    pub peer: PathBuf,
    pub pcap: Option<PathBuf>,
}

/// The cable in a [`ServeReport`].
#[derive(Debug, Clone, Serialize)]
pub struct WireReport {
    socket: PathBuf,
    peer: PathBuf,
    pcap: Option<PathBuf>,
    /// Frames sent to the peer's socket.
    frames_sent: u64,
    /// Datagrams received and offered to the adapter (it counts its own drops: `ethtool -S`).
    frames_received: u64,
    /// Datagrams longer than any frame, dropped.
    oversize_dropped: u64,
    /// Frames queued for a peer that went away, dropped as the link went down.
    link_down_dropped: u64,
}

/// Pairs the repeated wire arguments with the functions: the N-th `--wire`, `--wire-peer` and
/// `--wire-pcap` go to function N. Counts that do not pair up, or a path given twice, are a
/// usage error (exit 2) naming what to fix.
pub fn pair_wires(
    sockets: &[PathBuf],
    wires: &[PathBuf],
    peers: &[PathBuf],
    pcaps: &[PathBuf],
) -> CliResult<Vec<WireArgs>> {
    let usage = |message: String| Err(CliError::new(ErrorCode::BadArgument, message));
    if wires.len() != peers.len() {
        return usage(format!(
            "{} --wire but {} --wire-peer: give one --wire-peer per --wire, in the same order",
            wires.len(),
            peers.len()
        ));
    }
    if wires.len() > sockets.len() {
        return usage(format!(
            "{} --wire for {} --socket: the N-th --wire cables function N, so give at most one per --socket",
            wires.len(),
            sockets.len()
        ));
    }
    if pcaps.len() > wires.len() {
        return usage(format!(
            "{} --wire-pcap for {} --wire: the N-th --wire-pcap records the N-th --wire",
            pcaps.len(),
            wires.len()
        ));
    }
    let mut seen = std::collections::BTreeSet::new();
    for path in sockets.iter().chain(wires).chain(pcaps) {
        if !seen.insert(path) {
            return usage(format!("{} is given twice: every socket and file needs a path of its own", path.display()));
        }
    }
    Ok(wires
        .iter()
        .zip(peers)
        .enumerate()
        .map(|(i, (local, peer))| WireArgs { local: local.clone(), peer: peer.clone(), pcap: pcaps.get(i).cloned() })
        .collect())
}

/// The prefix of the server's own lines, and of the device's events (`-vv`).
const SERVE_PREFIX: &str = "ocetool: serve: ";
const EVENT_PREFIX: &str = "ocetool: emulator event: ";
/// The same, per function of a card served with several (a card has at most 4 ports, one
/// function each: GET_PORT_NAME's 4 characters, spec/protocol.md §5.10).
const SERVE_PREFIXES: [&str; 4] = [
    "ocetool: serve: function 0: ",
    "ocetool: serve: function 1: ",
    "ocetool: serve: function 2: ",
    "ocetool: serve: function 3: ",
];
const EVENT_PREFIXES: [&str; 4] = [
    "ocetool: emulator event: function 0: ",
    "ocetool: emulator event: function 1: ",
    "ocetool: emulator event: function 2: ",
    "ocetool: emulator event: function 3: ",
];

/// The prefix of function `number` from `prefixes` (the last one past the end).
fn function_prefix(prefixes: [&'static str; 4], number: u8) -> &'static str {
    prefixes[usize::from(number).min(prefixes.len() - 1)]
}

/// One function being served: its adapter pieces, its sockets and its cable.
struct Served {
    number: u8,
    socket: PathBuf,
    listening: ServeSocket,
    adapter: Adapter,
    cable: Option<DgramCable>,
    wire: Option<WireArgs>,
}

/// Serves the adapter in `dir`, function N on `sockets[N]` with its port on `wires[N]` (if
/// any), until every function's client goes or a signal arrives. The caller holds the adapter's
/// lock.
pub fn run(global: &GlobalArgs, dir: &Path, sockets: &[PathBuf], wires: &[WireArgs]) -> CliResult<ServeReport> {
    check_state_dir(dir)?;
    let first = Firmware::open_or_create(dir).map_err(|e| emulator_error(&e))?;
    let mut firmwares = Vec::with_capacity(sockets.len());
    for number in 1..sockets.len() {
        let number = u8::try_from(number).unwrap_or(u8::MAX);
        let function = first.other_function(number).map_err(|e| {
            CliError::from_error(ErrorCode::BadArgument, &format!("cannot serve {} sockets", sockets.len()), &e)
        })?;
        firmwares.push(function);
    }
    firmwares.insert(0, first);
    let log = Log::stderr(SERVE_PREFIX);
    let mut served = Vec::with_capacity(sockets.len());
    for ((number, firmware), socket) in (0u8..).zip(firmwares).zip(sockets) {
        let listening = ServeSocket::bind(socket).map_err(|e| bind_error(&e))?;
        let flog = if sockets.len() > 1 { Log::stderr(function_prefix(SERVE_PREFIXES, number)) } else { log.clone() };
        let adapter = Adapter::new(firmware, &flog);
        let wire = wires.get(usize::from(number)).cloned();
        let cable = match &wire {
            Some(w) => {
                let cable = DgramCable::bind(&w.local, &w.peer, w.pcap.as_deref()).map_err(|e| {
                    // A wire socket a live process holds is busy, as a vfio-user socket a live
                    // server owns is.
                    let code = match e.kind() {
                        std::io::ErrorKind::AddrInUse => ErrorCode::DeviceBusy,
                        _ => ErrorCode::ServeFailed,
                    };
                    CliError::from_error(code, &format!("cannot plug the port into {}", w.local.display()), &e)
                })?;
                adapter.device.lock().unwrap_or_else(std::sync::PoisonError::into_inner).attach_wire(cable.wire());
                Some(cable)
            }
            None => None,
        };
        served.push(Served { number, socket: socket.clone(), listening, adapter, cable, wire });
    }
    let control_socket = ServeSocket::bind(&control_path(dir)).map_err(|e| bind_error(&e))?;
    let servers: Vec<_> = served
        .iter()
        .map(|f| {
            let a = &f.adapter;
            let server = Server::new(a.device.clone(), a.dma.clone(), a.irqs.clone(), log.clone());
            if global.verbose >= 2 {
                let prefix = if served.len() > 1 { function_prefix(EVENT_PREFIXES, f.number) } else { EVENT_PREFIX };
                server.with_events(Log::stderr(prefix))
            } else {
                server
            }
        })
        .collect();
    if !global.quiet {
        for f in &served {
            eprintln!(
                "ocetool: serving function {} of the emulated adapter in {} on {}; attach QEMU with -device \
             '{{\"driver\":\"vfio-user-pci\",\"socket\":{{\"type\":\"unix\",\"path\":\"{}\"}}}}'{} \
             (see `ocetool emulator serve --help`); Ctrl-C stops",
                f.number,
                dir.display(),
                f.socket.display(),
                f.socket.display(),
                match (served.len(), f.number) {
                    (1, _) => "",
                    (_, 0) => " as slot function 0, \"multifunction\":true",
                    _ => " as the next function of the same slot, \"multifunction\":true too",
                }
            );
        }
    }
    let sessions_over = AtomicBool::new(false);
    let stop = || signals::pending().is_some();
    let over = || stop() || sessions_over.load(Ordering::SeqCst);
    let devices: Vec<_> = served.iter().map(|f| &*f.adapter.device).collect();
    let outcomes = std::thread::scope(|scope| {
        // Faults are the card's: the control channel reaches them through function 0, and every
        // other function acts on them at its next look (its clock polls it). Its status names
        // every served function's link.
        let control = scope.spawn(|| control::serve_control(control_socket.listener(), &devices, &over, &log));
        let mut sessions = Vec::new();
        for (f, server) in served.iter().zip(&servers) {
            // Completions held back by a slow fault are written on time even while the guest
            // only polls its memory; a POST another function started is followed within a tick.
            scope.spawn(|| run_clock(&f.adapter.device, &over));
            if let Some(cable) = &f.cable {
                let log = &log;
                scope.spawn(move || {
                    if let Err(e) = run_carrier(cable, &f.adapter.device, &over) {
                        log.line(&format!(
                            "the wire of function {} failed, its port carries nothing more: {e}",
                            f.number
                        ));
                    }
                });
            }
            let stop = &stop;
            sessions.push(scope.spawn(move || server.serve_one(f.listening.listener(), stop)));
        }
        let outcomes: Vec<_> = sessions
            .into_iter()
            .map(|s| s.join().unwrap_or_else(|_| Err(std::io::Error::other("the serving thread panicked"))))
            .collect();
        sessions_over.store(true, Ordering::SeqCst);
        if let Ok(Err(e)) = control.join() {
            log.line(&format!("the control socket failed: {e}"));
        }
        outcomes
    });
    let mut functions = Vec::with_capacity(served.len());
    for (f, outcome) in served.iter().zip(outcomes) {
        let outcome = outcome.map_err(|e| {
            CliError::new(ErrorCode::ServeFailed, format!("serving on {} failed: {e}", f.socket.display()))
        })?;
        let outcome = match outcome {
            Outcome::Disconnected => "disconnected",
            Outcome::Stopped => "stopped",
            Outcome::ClientError(why) => {
                return Err(CliError::new(
                    ErrorCode::ServeFailed,
                    format!(
                        "the VM broke the vfio-user protocol on {} ({why}); the connection was closed and the adapter's state is saved",
                        f.socket.display()
                    ),
                ));
            }
        };
        let (intx_sent, msix_sent) = f.adapter.irqs.sent();
        let wire = f.wire.as_ref().zip(f.cable.as_ref()).map(|(w, cable)| {
            let CableCounters { sent, received, oversize, link_down_dropped, .. } = cable.counters();
            WireReport {
                socket: w.local.clone(),
                peer: w.peer.clone(),
                pcap: w.pcap.clone(),
                frames_sent: sent,
                frames_received: received,
                oversize_dropped: oversize,
                link_down_dropped,
            }
        });
        functions.push(FunctionReport {
            function: f.number,
            socket: f.socket.clone(),
            outcome,
            intx_sent,
            msix_sent,
            wire,
        });
    }
    let outcome = if functions.iter().any(|f| f.outcome == "stopped") { "stopped" } else { "disconnected" };
    // A stop request ended the session as asked: not an error, but the exit code says which.
    let signal = if outcome == "stopped" { signals::pending() } else { None };
    signals::clear();
    Ok(ServeReport {
        action: "serve",
        outcome,
        signal,
        socket: sockets[0].clone(),
        state_dir: dir.to_path_buf(),
        intx_sent: functions.iter().map(|f| f.intx_sent).sum(),
        msix_sent: functions.iter().map(|f| f.msix_sent).sum(),
        wire: functions.first().and_then(|f| f.wire.clone()),
        functions,
    })
}

/// A socket that cannot be created; one that a live server owns is "busy" (exit 5), as the
/// adapter a live server holds is.
fn bind_error(e: &SocketError) -> CliError {
    match e {
        SocketError::InUse { .. } => {
            CliError::from_error(ErrorCode::DeviceBusy, "cannot serve the emulated adapter", e)
                .hint("its server goes on undisturbed; stop it, or choose another --socket")
        }
        _ => socket_error(e),
    }
}

impl Report for ServeReport {
    fn exit_code(&self) -> u8 {
        self.signal.map_or(0, |s| u8::try_from(s.exit_code()).unwrap_or(1))
    }

    fn text(&self) -> String {
        let how = match self.signal {
            Some(signal) => format!("stopped by {signal}"),
            None if self.outcome == "stopped" => "stopped by a signal".to_owned(),
            None => "the VM disconnected".to_owned(),
        };
        let wire_text = |w: &WireReport| {
            format!(
                "; on the wire {}: {} frames sent, {} received, {} oversize dropped, {} dropped as the link went down",
                w.socket.display(),
                w.frames_sent,
                w.frames_received,
                w.oversize_dropped,
                w.link_down_dropped
            )
        };
        if self.functions.len() <= 1 {
            let wire = self.wire.as_ref().map_or(String::new(), wire_text);
            return format!(
                "Served the emulated adapter in {} on {} until {how}; sent {} INTx and {} MSI-X interrupts{wire}\n",
                self.state_dir.display(),
                self.socket.display(),
                self.intx_sent,
                self.msix_sent
            );
        }
        let mut out = format!(
            "Served {} functions of the emulated adapter in {} until {how}\n",
            self.functions.len(),
            self.state_dir.display()
        );
        for f in &self.functions {
            out.push_str(&format!(
                "  function {} on {}: sent {} INTx and {} MSI-X interrupts{}\n",
                f.function,
                f.socket.display(),
                f.intx_sent,
                f.msix_sent,
                f.wire.as_ref().map_or(String::new(), wire_text)
            ));
        }
        out
    }
}
