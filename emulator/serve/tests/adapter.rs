//! The emulated OneConnect adapter through the server, as QEMU sees it: the regions and
//! interrupts it offers, a config space that makes a PCI Express endpoint with MSI-X, commands
//! through the bootstrap mailbox with DMA through the client's shared memory, a DMA address
//! outside every mapping, the host stack's `PciFunction` over the connection, DEVICE_RESET, and
//! the command register gating the adapter's interrupts on their way to the client's eventfds.

mod common;

use std::os::fd::AsFd;
use std::sync::Arc;

use common::{count, eventfd, memfd, serve_adapter};
use oce_emulator::FaultSpec;
use oce_emulator::assumptions::{MSIX_CAP_OFFSET, PROFILES};
use oce_emulator_serve::client::{Client, ServedFunction};
use oce_emulator_serve::{CONFIG_REGION, Outcome};
use oce_mailbox::command::{decode_response, encode_request};
use oce_mailbox::commands::{
    CqContext, CqCreate, EqContext, EqCreate, GetActiveProfile, GetFwVersion, MccContext, MccCreateExt,
    SetActiveProfile, SetInterruptEnable,
};
use oce_mailbox::doorbells::{CqDoorbell, EqCqDoorbell, EqDoorbell};
use oce_mailbox::regs::MailboxDoorbell;
use oce_mailbox::status::{BaseStatus, CompletionStatus};
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::{
    COMPLETION_LEN, Completion, MAILBOX_COMPLETION_OFFSET, Sge, WRB_LEN, WRB_PAYLOAD_OFFSET, Wrb, WrbPayload,
};
use oce_mailbox::{BootstrapMailbox, SystemClock};
use oce_pci::{ConfigSpace, DmaBuffer, PciFunction, RegisterIo};

/// Where the client shares its memory, and the mailbox in it.
const RAM: u64 = 0x8000_0000;
const RAM_LEN: u64 = 64 * 1024;
/// The doorbell BAR and the bootstrap mailbox doorbell in it (spec/protocol.md §2.2).
const DB_BAR: u32 = 4;
/// The command register and its Memory Space, Bus Master and Interrupt Disable bits; Status bit
/// 3, Interrupt Status, in the same dword (PCI Local Bus 3.0 §6.2.2, §6.2.3).
const COMMAND: u16 = 0x04;
const MEMORY: u32 = 1 << 1;
const MASTER: u32 = 1 << 2;
const INTX_DISABLE: u32 = 1 << 10;
const INTERRUPT_STATUS: u32 = 1 << 19;
/// MSI-X Enable: Message Control bit 15, in the capability's first dword (§6.8.2.3).
const MSIX_ENABLE: u32 = 1 << 31;
/// `VFIO_PCI_INTX_IRQ_INDEX`, `VFIO_PCI_MSIX_IRQ_INDEX` (`<linux/vfio.h>`).
const INTX_IRQS: u32 = 0;
const MSIX_IRQS: u32 = 2;

fn read16(c: &mut Client, off: u64) -> u16 {
    let b = c.read(CONFIG_REGION, off, 2).unwrap();
    u16::from_le_bytes([b[0], b[1]])
}

/// The capability IDs in the config space's list, with their offsets (PCI Local Bus 3.0 §6.7).
fn capabilities(c: &mut Client) -> Vec<(u8, u8)> {
    let mut caps = Vec::new();
    let mut at = c.read(CONFIG_REGION, 0x34, 1).unwrap()[0];
    while at != 0 && caps.len() < 16 {
        let b = c.read(CONFIG_REGION, at.into(), 2).unwrap();
        caps.push((b[0], at));
        at = b[1];
    }
    caps
}

#[test]
fn the_served_adapter_is_a_pci_express_endpoint_with_msix() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = serve_adapter(&dir.path().join("emu"));
    s.client.negotiate().unwrap();
    // Region sizes: 4 KiB config space (QEMU then presents an Express function), BAR0 16 KiB,
    // BAR4 64 KiB, nothing else.
    let sizes: Vec<u64> = (0..9).map(|i| s.client.region_size(i).unwrap()).collect();
    assert_eq!(sizes, [0x4000, 0, 0, 0, 0x1_0000, 0, 0, 0x1000, 0]);
    assert_eq!(s.client.read32(CONFIG_REGION, 0).unwrap(), 0x0720_10DF);
    // PM (1), VPD (3), MSI-X (0x11), PCI Express (0x10), in the list.
    let caps = capabilities(&mut s.client);
    let ids: Vec<u8> = caps.iter().map(|c| c.0).collect();
    assert_eq!(ids, [0x01, 0x03, 0x11, 0x10], "{caps:02x?}");
    let msix = caps[2].1;
    let control = read16(&mut s.client, u64::from(msix) + 2);
    assert_eq!(control & 0x7FF, 31, "table size N-1: 32 vectors");
    let table = s.client.read32(CONFIG_REGION, u64::from(msix) + 4).unwrap();
    assert_eq!((table & 7, table & !7), (0, 0x2000), "table in BAR0 at 0x2000");
    let express = read16(&mut s.client, u64::from(caps[3].1) + 2);
    assert_eq!((express >> 4) & 0xF, 0, "device/port type: PCI Express endpoint");
    // QEMU keeps the table: the device decodes nothing there.
    assert_eq!(s.client.read32(0, 0x2000).unwrap(), u32::MAX);
    assert_eq!(s.finish(), Outcome::Disconnected);
}

/// Writes `wrb` as the mailbox at RAM + 0 and rings the doorbell; returns its completion.
fn run_mailbox(c: &mut Client, ram: &std::fs::File, wrb: &Wrb) -> Completion {
    use std::os::unix::fs::FileExt;
    let mut raw = [0u8; WRB_LEN + COMPLETION_LEN];
    wrb.encode(&mut Writer::new(&mut raw)).unwrap();
    ram.write_all_at(&raw, 0).unwrap();
    let db = u64::from(MailboxDoorbell::OFFSET);
    // HI, wait for RDY, LO, wait for RDY (spec/protocol.md §3.2).
    for half in [MailboxDoorbell::hi_for(RAM), MailboxDoorbell::lo_for(RAM)] {
        c.write32(DB_BAR, db, half.0).unwrap();
        let ready = (0..1000).any(|_| c.read32(DB_BAR, db).unwrap() & MailboxDoorbell::RDY != 0);
        assert!(ready, "RDY never came back");
    }
    let mut done = [0u8; COMPLETION_LEN];
    ram.read_exact_at(&mut done, MAILBOX_COMPLETION_OFFSET as u64).unwrap();
    Completion::decode(&mut Reader::new(&done)).unwrap()
}

#[test]
fn a_dma_address_outside_every_mapping_fails_the_command_with_a_status_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = serve_adapter(&dir.path().join("emu"));
    s.client.negotiate().unwrap();
    let ram = memfd(RAM_LEN);
    s.client.map_file(RAM, RAM_LEN, &ram, 0).unwrap();
    // A non-embedded command whose buffer lies past the end of the only mapping.
    let outside = RAM + RAM_LEN + 0x1000;
    let wrb = Wrb {
        payload_length: 64,
        tags: [5, 6],
        payload: WrbPayload::NonEmbedded(vec![Sge { address: outside, len: 64 }]),
    };
    let done = run_mailbox(&mut s.client, &ram, &wrb);
    assert!(done.is_valid(), "the failure is reported, not withheld");
    assert_eq!(done.status.base, BaseStatus::Failed, "{done:?}");
    assert_eq!(done.tags, [5, 6]);
    assert!(s.log_has(&format!("DMA read fault: 64 bytes at {outside:#x}")), "{:?}", s.log.lock().unwrap());
    assert!(s.log_has(&format!("DmaFault {{ iova: {outside}, len: 64 }}")), "the device's event is logged too");
    // The server goes on: an embedded command succeeds.
    let request = encode_request(&GetFwVersion).unwrap();
    let wrb = Wrb { payload_length: request.len() as u32, tags: [7, 8], payload: WrbPayload::Embedded(request) };
    let done = run_mailbox(&mut s.client, &ram, &wrb);
    assert_eq!((done.status, done.tags), (CompletionStatus::SUCCESS, [7, 8]));
    let mut area = vec![0u8; 236];
    std::os::unix::fs::FileExt::read_exact_at(&ram, &mut area, WRB_PAYLOAD_OFFSET as u64).unwrap();
    let (_, version) = decode_response::<GetFwVersion>(&area).unwrap();
    assert_eq!(version.running, oce_emulator::assumptions::FACTORY_FIRMWARE_VERSION);
    assert_eq!(s.finish(), Outcome::Disconnected);
}

#[test]
fn the_host_mailbox_driver_runs_over_the_connection() {
    let dir = tempfile::tempdir().unwrap();
    let s = serve_adapter(&dir.path().join("emu"));
    let common::Served { client, server, .. } = s;
    let function = ServedFunction::over(client, "socketpair".into(), 1 << 20).unwrap();
    let mut mbox = BootstrapMailbox::open(function, std::sync::Arc::new(SystemClock)).unwrap();
    mbox.initialize().unwrap();
    let version = mbox.execute(&GetFwVersion).unwrap();
    assert_eq!(version.on_flash, oce_emulator::assumptions::FACTORY_FIRMWARE_VERSION);
    drop(mbox);
    assert_eq!(server.join().unwrap(), Outcome::Disconnected);
}

/// The served adapter driven through the host stack's `PciFunction` over the connection.
struct Function {
    function: ServedFunction,
    server: std::thread::JoinHandle<Outcome>,
    /// The device, for what a host injects beside the connection (a link change).
    device: Arc<std::sync::Mutex<oce_emulator_serve::AdapterDevice>>,
    irqs: oce_emulator_serve::IrqLines,
    log: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Function {
    fn new(dir: &std::path::Path) -> Self {
        let common::Served { client, server, device, irqs, log, .. } = serve_adapter(dir);
        let function = ServedFunction::over(client, "socketpair".into(), 1 << 20).unwrap();
        Self { function, server, device, irqs, log }
    }

    fn log_has(&self, needle: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(needle))
    }

    /// Closes the connection and returns how the session ended.
    fn finish(self) -> Outcome {
        drop(self.function);
        self.server.join().expect("the server thread must not panic")
    }
}

fn open_mailbox(function: &ServedFunction) -> BootstrapMailbox<ServedFunction> {
    let mut mbox = BootstrapMailbox::open(function.clone(), Arc::new(SystemClock)).unwrap();
    mbox.initialize().unwrap();
    mbox
}

/// The whole 4 KiB of config space, dword by dword.
fn config_space(function: &ServedFunction) -> Vec<u32> {
    (0..0x1000u16).step_by(4).map(|off| function.config().read32(off).unwrap()).collect()
}

fn set_config_bits(function: &ServedFunction, off: u16, set: u32, clear: u32) {
    let v = function.config().read32(off).unwrap();
    function.config().write32(off, (v | set) & !clear).unwrap();
}

#[test]
fn device_reset_puts_config_space_back_to_power_on_and_keeps_the_firmware_state() {
    let dir = tempfile::tempdir().unwrap();
    let s = Function::new(&dir.path().join("emu"));
    let function = s.function.clone();
    let power_on = config_space(&function);
    // Firmware state a reset of the function must keep: the next-boot profile.
    let roce = PROFILES.iter().find(|p| p.name.starts_with("RoCE-2")).unwrap();
    let mut mbox = open_mailbox(&function);
    mbox.execute(&SetActiveProfile::new(roce.id)).unwrap();
    drop(mbox);
    // What a guest driver leaves on: bus mastering and MSI-X.
    set_config_bits(&function, COMMAND, MEMORY | MASTER, 0);
    set_config_bits(&function, MSIX_CAP_OFFSET, MSIX_ENABLE, 0);
    assert_eq!(function.config().read32(COMMAND).unwrap() & (MEMORY | MASTER), MEMORY | MASTER);
    assert_ne!(function.config().read32(MSIX_CAP_OFFSET).unwrap() & MSIX_ENABLE, 0);
    assert_ne!(config_space(&function), power_on);

    function.reset().unwrap();
    let after = config_space(&function);
    let changed: Vec<String> = (power_on.iter().zip(&after).enumerate())
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| format!("{:#05x}: {a:#010x} -> {b:#010x}", i * 4))
        .collect();
    assert!(changed.is_empty(), "config space after DEVICE_RESET differs from power-on: {changed:?}");
    // The firmware ran on (no chip reset, no POST) and kept the staged profile.
    let mut mbox = open_mailbox(&function);
    let profile = mbox.execute(&GetActiveProfile).unwrap();
    assert_eq!(profile.next, u16::from(roce.id), "{profile:?}");
    assert!(s.log_has("FunctionReset"), "{:?}", s.log.lock().unwrap());
    for boot in ["ChipReset", "PowerCycle", "Boot {"] {
        assert!(!s.log_has(boot), "a function reset is not a chip reset: {boot} in {:?}", s.log.lock().unwrap());
    }
    drop((mbox, function));
    assert_eq!(s.finish(), Outcome::Disconnected);
}

/// A function with one EQ (interrupting on MSI-X vector `msix_idx`, or INTx) that has an event
/// outstanding: re-arming it fires the interrupt at once, as often as the test likes
/// (spec/be2net-driver.md §3.5; `assumptions`, "queues").
struct OneEvent {
    function: ServedFunction,
    db: oce_emulator_serve::client::ServedBar,
    eq: u16,
    msix_idx: u16,
    _rings: Vec<oce_emulator_serve::client::ServedDma>,
}

impl OneEvent {
    fn new(s: &Function) -> Self {
        let function = s.function.clone();
        let mut mbox = open_mailbox(&function);
        mbox.execute(&SetInterruptEnable { enabled: true }).unwrap();
        let rings: Vec<_> = (0..3).map(|_| function.alloc_dma(4096).unwrap()).collect();
        let page = |i: usize| vec![rings[i].iova()];
        let eq = mbox.execute(&EqCreate { context: EqContext::be2net(0), pages: page(0) }).unwrap();
        let context = CqContext::be2net(0, eq.eq_id, true, 0);
        let cq = mbox.execute(&CqCreate { page_size: CqCreate::PAGE_SIZE_4K, context, pages: page(1) }).unwrap();
        mbox.execute(&MccCreateExt {
            cq_id: cq.id,
            async_event_bitmap: MccCreateExt::BE2NET_ASYNC_EVENTS,
            context: MccContext::be2net(cq.id, 16),
            pages: page(2),
        })
        .unwrap();
        let db = function.map_bar(DB_BAR as u8, 0x1000).unwrap();
        let me = Self { function, db, eq: eq.eq_id, msix_idx: eq.msix_idx, _rings: rings };
        // The CQ armed (be_cq_notify), then the cable pulled: the link-state event lands on the
        // CQ and puts one event on the EQ, which is not armed yet.
        me.doorbell(CqDoorbell::new(cq.id, true, 0).0);
        s.device.lock().unwrap().set_fault(FaultSpec::parse("link-down").unwrap()).unwrap();
        me
    }

    /// Writes the EQ/CQ doorbell (a posted write, as QEMU posts BAR writes), then reads config
    /// space, whose reply comes only after the server has handled the write.
    fn doorbell(&self, value: u32) {
        self.db.write32(EqCqDoorbell::OFFSET, value);
        self.function.config().read32(0).unwrap();
    }

    /// Re-arms the EQ with its event still outstanding: the interrupt fires if anything lets it.
    fn fire(&self) {
        self.doorbell(EqDoorbell::new(self.eq, true, false, 0, 0).0);
    }

    /// Clears the EQ's interrupt (INTx de-asserted), leaving it unarmed.
    fn clear(&self) {
        self.doorbell(EqDoorbell::new(self.eq, false, true, 0, 0).0);
    }

    fn command(&self, bits: u32) {
        set_config_bits(&self.function, COMMAND, bits, !bits & (MEMORY | MASTER | INTX_DISABLE));
    }
}

#[test]
fn the_command_register_gates_the_adapters_interrupts_over_the_transport() {
    let dir = tempfile::tempdir().unwrap();
    let s = Function::new(&dir.path().join("emu"));
    let function = s.function.clone();
    let q = OneEvent::new(&s);

    // MSI-X: sent with bus mastering on, dropped (and logged) with it off.
    let vector = eventfd();
    function.set_eventfds(MSIX_IRQS, q.msix_idx.into(), &[vector.as_fd()]).unwrap();
    set_config_bits(&function, MSIX_CAP_OFFSET, MSIX_ENABLE, 0);
    q.command(MEMORY | MASTER);
    q.fire();
    assert_eq!(count(&vector), 1, "the EQ's vector, with bus mastering on");
    q.command(MEMORY);
    q.fire();
    assert_eq!(count(&vector), 0, "no message without bus mastering");
    let blocked = format!("MsixBlocked {{ vector: {}, reason: BusMasterOff }}", q.msix_idx);
    assert!(s.log_has(&blocked), "{:?}", s.log.lock().unwrap());
    q.command(MEMORY | MASTER);
    q.fire();
    assert_eq!(count(&vector), 1, "bus mastering back on");

    // INTx (MSI-X off): Interrupt Disable holds the line down while the device asserts it;
    // clearing the bit lets the asserted line through.
    set_config_bits(&function, MSIX_CAP_OFFSET, 0, MSIX_ENABLE);
    let intx = eventfd();
    function.set_eventfds(INTX_IRQS, 0, &[intx.as_fd()]).unwrap();
    q.command(MEMORY | MASTER | INTX_DISABLE);
    q.fire();
    assert_eq!(count(&intx), 0, "INTx disabled");
    let status = function.config().read32(COMMAND).unwrap();
    assert_ne!(status & INTERRUPT_STATUS, 0, "Interrupt Status shows the level all the same: {status:#010x}");
    q.command(MEMORY | MASTER);
    assert_eq!(count(&intx), 1, "Interrupt Disable cleared: the asserted line is signalled");
    q.clear();
    assert_eq!(function.config().read32(COMMAND).unwrap() & INTERRUPT_STATUS, 0, "de-asserted");
    assert_eq!(s.irqs.sent(), (1, 2), "(INTx, MSI-X) sent to the client");
    drop((q, function));
    assert_eq!(s.finish(), Outcome::Disconnected);
}
