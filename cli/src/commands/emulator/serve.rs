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
    /// How the session ended: `disconnected` (the VM went) or `stopped` (SIGINT / SIGTERM).
    outcome: &'static str,
    /// The signal that stopped the server (`interrupt`, `terminate`), or null. It sets the exit
    /// code: 130 / 143 as for every command a signal stops (README "Exit codes").
    signal: Option<Signal>,
    socket: PathBuf,
    state_dir: PathBuf,
    /// Interrupts sent to the VM.
    intx_sent: u64,
    msix_sent: u64,
    /// The cable the port was plugged into (`--wire`), and what crossed it; null without one.
    wire: Option<WireReport>,
}

/// `--wire`, `--wire-peer`, `--wire-pcap`.
#[derive(Debug, Clone)]
pub struct WireArgs {
    pub local: PathBuf,
    pub peer: PathBuf,
    pub pcap: Option<PathBuf>,
}

/// The cable in a [`ServeReport`].
#[derive(Debug, Serialize)]
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

/// Serves the adapter in `dir` on `socket` until the client goes or a signal arrives. The caller
/// holds the adapter's lock.
pub fn run(global: &GlobalArgs, dir: &Path, socket: &Path, wire: Option<&WireArgs>) -> CliResult<ServeReport> {
    check_state_dir(dir)?;
    let firmware = Firmware::open_or_create(dir).map_err(|e| emulator_error(&e))?;
    let listening = ServeSocket::bind(socket).map_err(|e| bind_error(&e))?;
    let control_socket = ServeSocket::bind(&control_path(dir)).map_err(|e| bind_error(&e))?;
    let log = Log::stderr("ocetool: serve: ");
    let adapter = Adapter::new(firmware, &log);
    let cable = match wire {
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
    let mut server = Server::new(adapter.device.clone(), adapter.dma.clone(), adapter.irqs.clone(), log.clone());
    if global.verbose >= 2 {
        server = server.with_events(Log::stderr("ocetool: emulator event: "));
    }
    if !global.quiet {
        eprintln!(
            "ocetool: serving the emulated adapter in {} on {}; attach QEMU with -device \
         '{{\"driver\":\"vfio-user-pci\",\"socket\":{{\"type\":\"unix\",\"path\":\"{}\"}}}}' \
         (see `ocetool emulator serve --help`); Ctrl-C stops",
            dir.display(),
            socket.display(),
            socket.display()
        );
    }
    let session_over = AtomicBool::new(false);
    let stop = || signals::pending().is_some();
    let over = || stop() || session_over.load(Ordering::SeqCst);
    let outcome = std::thread::scope(|scope| {
        let control = scope.spawn(|| control::serve_control(control_socket.listener(), &adapter.device, &over, &log));
        // Completions held back by a slow fault are written on time even while the guest only
        // polls its memory.
        scope.spawn(|| run_clock(&adapter.device, &over));
        if let Some(cable) = &cable {
            scope.spawn(|| {
                if let Err(e) = run_carrier(cable, &adapter.device, &over) {
                    log.line(&format!("the wire failed, the port carries nothing more: {e}"));
                }
            });
        }
        let outcome = server.serve_one(listening.listener(), &stop);
        session_over.store(true, Ordering::SeqCst);
        if let Ok(Err(e)) = control.join() {
            log.line(&format!("the control socket failed: {e}"));
        }
        outcome
    });
    let outcome = outcome
        .map_err(|e| CliError::new(ErrorCode::ServeFailed, format!("serving on {} failed: {e}", socket.display())))?;
    let (intx_sent, msix_sent) = adapter.irqs.sent();
    let outcome = match outcome {
        Outcome::Disconnected => "disconnected",
        Outcome::Stopped => "stopped",
        Outcome::ClientError(why) => {
            return Err(CliError::new(
                ErrorCode::ServeFailed,
                format!(
                    "the VM broke the vfio-user protocol ({why}); the connection was closed and the adapter's state is saved"
                ),
            ));
        }
    };
    // A stop request ended the session as asked: not an error, but the exit code says which.
    let signal = if outcome == "stopped" { signals::pending() } else { None };
    signals::clear();
    Ok(ServeReport {
        action: "serve",
        outcome,
        signal,
        socket: socket.to_path_buf(),
        state_dir: dir.to_path_buf(),
        intx_sent,
        msix_sent,
        wire: wire.zip(cable.as_ref()).map(|(w, cable)| {
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
        }),
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
        let wire = self.wire.as_ref().map_or(String::new(), |w| {
            format!(
                "; on the wire {}: {} frames sent, {} received, {} oversize dropped, {} dropped as the link went down",
                w.socket.display(),
                w.frames_sent,
                w.frames_received,
                w.oversize_dropped,
                w.link_down_dropped
            )
        });
        format!(
            "Served the emulated adapter in {} on {} until {how}; sent {} INTx and {} MSI-X interrupts{wire}\n",
            self.state_dir.display(),
            self.socket.display(),
            self.intx_sent,
            self.msix_sent
        )
    }
}
