//! Serves the transport's test device (`oce_emulator_serve::testing`) on a socket until the
//! client disconnects or SIGINT/SIGTERM: the device the shared guest tooling boots first
//! (`tests/qemu/smoke.sh`), and a quick way to try a vfio-user client by hand.
//!
//! Usage: `cargo run -p oce-emulator-serve --example test-device -- SOCKET`

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use oce_emulator_serve::testing::{TestDevice, VECTORS};
use oce_emulator_serve::{GuestDma, IrqLines, Log, ServeSocket, Server};

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: test-device SOCKET");
        return ExitCode::from(2);
    };
    if let Err(e) = oce_pci::signals::install() {
        eprintln!("test-device: {e}");
        return ExitCode::FAILURE;
    }
    let socket = match ServeSocket::bind(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("test-device: {e}");
            return ExitCode::FAILURE;
        }
    };
    let log = Log::stderr("test-device: ");
    let dma = GuestDma::new(log.clone());
    let irqs = IrqLines::new(VECTORS, log.clone());
    let device = Arc::new(Mutex::new(TestDevice::new(dma.clone(), irqs.clone())));
    let server = Server::new(device, dma, irqs.clone(), log);
    match server.serve_one(socket.listener(), &|| oce_pci::signals::pending().is_some()) {
        Ok(outcome) => {
            let (intx, msix) = irqs.sent();
            eprintln!("test-device: {outcome}; sent {intx} INTx and {msix} MSI-X interrupts");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("test-device: {e}");
            ExitCode::FAILURE
        }
    }
}
