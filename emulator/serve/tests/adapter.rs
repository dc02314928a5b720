//! The emulated OneConnect adapter through the server, as QEMU sees it: the regions and
//! interrupts it offers, a config space that makes a PCI Express endpoint with MSI-X, commands
//! through the bootstrap mailbox with DMA through the client's shared memory, a DMA address
//! outside every mapping, the host stack's `PciFunction` over the connection, and DEVICE_RESET.

mod common;

use std::sync::Arc;

use common::{memfd, serve_adapter};
use oce_emulator::assumptions::{MSIX_CAP_OFFSET, PROFILES};
use oce_emulator_serve::client::{Client, ServedFunction};
use oce_emulator_serve::{CONFIG_REGION, Outcome};
use oce_mailbox::command::{decode_response, encode_request};
use oce_mailbox::commands::{GetActiveProfile, GetFwVersion, SetActiveProfile};
use oce_mailbox::regs::MailboxDoorbell;
use oce_mailbox::status::{BaseStatus, CompletionStatus};
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::{
    COMPLETION_LEN, Completion, MAILBOX_COMPLETION_OFFSET, Sge, WRB_LEN, WRB_PAYLOAD_OFFSET, Wrb, WrbPayload,
};
use oce_mailbox::{BootstrapMailbox, SystemClock};
use oce_pci::{ConfigSpace, PciFunction};

/// Where the client shares its memory, and the mailbox in it.
const RAM: u64 = 0x8000_0000;
const RAM_LEN: u64 = 64 * 1024;
/// The doorbell BAR and the bootstrap mailbox doorbell in it (spec/protocol.md §2.2).
const DB_BAR: u32 = 4;
/// The command register and its Memory Space and Bus Master bits (PCI Local Bus 3.0 §6.2.2).
const COMMAND: u16 = 0x04;
const MEMORY: u32 = 1 << 1;
const MASTER: u32 = 1 << 2;
/// MSI-X Enable: Message Control bit 15, in the capability's first dword (§6.8.2.3).
const MSIX_ENABLE: u32 = 1 << 31;

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
    // PM (1), MSI-X (0x11), PCI Express (0x10), in the list.
    let caps = capabilities(&mut s.client);
    let ids: Vec<u8> = caps.iter().map(|c| c.0).collect();
    assert_eq!(ids, [0x01, 0x11, 0x10], "{caps:02x?}");
    let msix = caps[1].1;
    let control = read16(&mut s.client, u64::from(msix) + 2);
    assert_eq!(control & 0x7FF, 31, "table size N-1: 32 vectors");
    let table = s.client.read32(CONFIG_REGION, u64::from(msix) + 4).unwrap();
    assert_eq!((table & 7, table & !7), (0, 0x2000), "table in BAR0 at 0x2000");
    let express = read16(&mut s.client, u64::from(caps[2].1) + 2);
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
    log: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Function {
    fn new(dir: &std::path::Path) -> Self {
        let common::Served { client, server, log, .. } = serve_adapter(dir);
        let function = ServedFunction::over(client, "socketpair".into(), 1 << 20).unwrap();
        Self { function, server, log }
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
