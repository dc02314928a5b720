//! A register read through the vfio-user server from a host-side client, against the floor of
//! the same exchange without a server: a bare Unix-socket ping-pong of the same message sizes
//! (a 32-byte REGION_READ request, a 36-byte reply), in the same run. The register is the served
//! adapter's SLI_INTF in the BAR0 pcicfg shadow (the emulated OneConnect device, as QEMU attaches
//! it); the transport's small test device is read too, to show what the adapter's register model
//! adds. Both sides are threads of this process, as QEMU and the server are processes on one
//! machine. `bench/vfio-user.sh` runs it unpinned and pinned to one CPU; docs/performance.md has
//! the figures.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

use criterion::{Criterion, criterion_group, criterion_main};
use oce_emulator_serve::client::Client;
use oce_emulator_serve::testing::{TestDevice, VECTORS, regs};
use oce_emulator_serve::{Adapter, GuestDma, IrqLines, Log, Server};
use oce_mailbox::regs::SliIntf;

/// REGION_READ of 4 bytes: header + offset/region/count; its reply adds the 4 bytes.
const REQUEST: usize = 32;
const REPLY: usize = 36;

fn ping_pong(c: &mut Criterion) {
    let (mut client, mut server) = UnixStream::pair().unwrap();
    let echo = std::thread::spawn(move || {
        let (mut req, reply) = ([0u8; REQUEST], [0u8; REPLY]);
        while server.read_exact(&mut req).is_ok() {
            if server.write_all(&reply).is_err() {
                break;
            }
        }
    });
    let (req, mut reply) = ([0u8; REQUEST], [0u8; REPLY]);
    c.bench_function("unix_socket_ping_pong_32_36_bytes", |b| {
        b.iter(|| {
            client.write_all(&req).unwrap();
            client.read_exact(&mut reply).unwrap();
        });
    });
    drop(client);
    echo.join().unwrap();
}

fn adapter_read(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (ours, theirs) = UnixStream::pair().unwrap();
    let firmware = oce_emulator::firmware::Firmware::create_with(&dir.path().join("emu"), Default::default()).unwrap();
    let served = std::thread::spawn(move || {
        let log = Log::stderr("bench server: ");
        let adapter = Adapter::new(firmware, &log);
        Server::new(adapter.device, adapter.dma, adapter.irqs, log).serve_stream(theirs, &|| false).unwrap()
    });
    let mut client = Client::from_stream(ours).unwrap();
    client.negotiate().unwrap();
    let off = u64::from(SliIntf::OFFSET);
    let sli_intf = client.read32(0, off).unwrap();
    c.bench_function("region_read_4_bytes_adapter_sli_intf", |b| {
        b.iter(|| assert_eq!(client.read32(0, off).unwrap(), sli_intf));
    });
    drop(client);
    served.join().unwrap();
}

fn region_read(c: &mut Criterion) {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let served = std::thread::spawn(move || {
        let log = Log::stderr("bench server: ");
        let dma = GuestDma::new(log.clone());
        let irqs = IrqLines::new(VECTORS, log.clone());
        let device = Arc::new(Mutex::new(TestDevice::new(dma.clone(), irqs.clone())));
        Server::new(device, dma, irqs, log).serve_stream(theirs, &|| false).unwrap()
    });
    let mut client = Client::from_stream(ours).unwrap();
    client.negotiate().unwrap();
    client.write32(0, regs::ECHO, 0x1234_5678).unwrap();
    c.bench_function("region_read_4_bytes_test_device", |b| {
        b.iter(|| assert_eq!(client.read32(0, regs::ECHO).unwrap(), 0x1234_5678));
    });
    drop(client);
    served.join().unwrap();
}

criterion_group!(benches, ping_pong, adapter_read, region_read);
criterion_main!(benches);
