//! A be2net-like host for the emulated device: the transports of Linux's be2net (Debian 6.1.192,
//! spec/be2net-driver.md §3, spec/datapath.md §1) written again in Rust over the device's seams,
//! so the device is tested against the driver's protocol between guest runs. A dev crate
//! (`publish = false`), shared by the emulator's tests and anything else that wants a driver.
//!
//! - here: host memory, rings, the bootstrap mailbox (`be_mbox_notify_wait`), the MCC queue
//!   (`be_mcc_notify_wait`, `be_process_mcc`), the EQ/CQ doorbells and an interrupt handler in
//!   the shape of `be_msix` / `be_intx` + `be_poll`;
//! - [`driver`]: the driver's sequences on top: probe (§2), ifup (§4.1), the flash walk (§4.4),
//!   ifdown and remove (§4.2, §4.6);
//! - [`rings`]: the datapath — TX as `be_xmit` / `be_xmit_flush` post it (header WRB with its
//!   offload bits, fragment WRBs, the padding WRB), RX as `be_post_rx_frags` posts fragments and
//!   `be_process_rx` reads v1 completions, TX and RX completion reaping;
//! - [`frames`]: Ethernet, IPv4, IPv6, ICMP, TCP and UDP frames built and checked with a
//!   checksum written here, independent of the emulator's;
//! - [`pair`]: two adapters, each with its host, on one in-process cable;
//! - [`ocrdma`]: the RoCE driver's probe and its own MQ transport (§5).
//!
//! Every check the real driver makes is an assertion or an error here: completions need VALID
//! (and COMPLETED on the MCC), tags must come back unchanged (be2net dereferences them), the
//! response header must echo the opcode, an RX completion must name exactly the fragments the
//! frame fills (be2net's `BUG_ON`s).
#![forbid(unsafe_code)]

pub mod driver;
pub mod frames;
pub mod memory;
pub mod ocrdma;
pub mod ocrdma_frwr;
pub mod ocrdma_verbs;
pub mod pair;
pub mod rings;

use std::collections::BTreeMap;
use std::sync::Arc;

use oce_emulator::device::{Device, Shape, TableOwner};
use oce_emulator::firmware::{CreateOptions, Firmware};
use oce_emulator::{FunctionType, Timing};
use oce_mailbox::command::{Command, decode_response, encode_request};
use oce_mailbox::commands::QUEUE_PAGE_LEN;
use oce_mailbox::doorbells::{CqDoorbell, EqDoorbell, MccDoorbell};
use oce_mailbox::entries::AsyncTrailer;
use oce_mailbox::header::{HEADER_LEN, RequestHeader, ResponseHeader, Subsystem};
use oce_mailbox::regs::MailboxDoorbell;
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::{
    COMPLETION_LEN, Completion, EMBEDDED_MAX, FW_CLEAN_SIGNATURE, FW_INIT_SIGNATURE, MAILBOX_LEN, Sge, WRB_LEN,
    WRB_PAYLOAD_OFFSET, Wrb, WrbPayload,
};
use oce_mailbox::{CompletionStatus, ManualClock};

pub use memory::{HostMemory, Irq, Lines};
pub use pair::{Pair, PairConfig, Side};
pub use rings::{RxFrame, TxRequest};

/// The device as the host sees it.
pub type Dev = Device<Arc<HostMemory>, Arc<Lines>>;

/// The doorbell BAR of a PF.
pub const DB_BAR: u8 = 4;
/// Where a kernel's direct map starts: tags are pointers into it (be2net `fill_wrb_tags`).
const KERNEL_POINTER_BASE: u64 = 0xFFFF_8880_0000_0000;

/// Why a command failed, as be2net would see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostError {
    /// The completion had a non-success status (be2net returns it as a positive value).
    Status(CompletionStatus),
    /// The mailbox completion lacked VALID: "invalid mailbox completion", -1.
    InvalidCompletion,
    /// RDY never came back, or no MCC completion arrived: "FW not responding".
    NotResponding,
}

/// A ring in host memory, page by page (each page a separate allocation, as the device must
/// follow the page list).
#[derive(Debug, Clone)]
pub struct HostRing {
    pub pages: Vec<u64>,
    pub entries: u32,
    pub entry_len: usize,
}

impl HostRing {
    /// The bus address of entry `i`.
    pub fn entry(&self, i: u32) -> u64 {
        let off = u64::from(i % self.entries) * self.entry_len as u64;
        self.pages[(off / QUEUE_PAGE_LEN) as usize] + off % QUEUE_PAGE_LEN
    }
}

/// A completion queue and the host's tail.
#[derive(Debug, Clone)]
pub struct HostCq {
    pub id: u16,
    pub ring: HostRing,
    pub tail: u32,
}

/// An event queue, its tail and MSI-X index.
#[derive(Debug, Clone)]
pub struct HostEq {
    pub id: u16,
    pub msix_idx: u16,
    pub ring: HostRing,
    pub tail: u32,
}

/// A command posted and not yet completed: where its response header is.
#[derive(Debug, Clone, Copy)]
struct Posted {
    response_at: u64,
    len: usize,
    opcode: u8,
    subsystem: u8,
}

/// The host: the device, its memory and interrupts, and the driver's state.
#[derive(Debug)]
pub struct Host {
    pub dev: Dev,
    pub mem: Arc<HostMemory>,
    pub irq: Arc<Lines>,
    pub clock: Arc<ManualClock>,
    /// The bootstrap mailbox (16-byte aligned, inside a larger allocation as be2net does).
    mbox: u64,
    next_tag: u64,
    /// The MCC ring, its id and head, and its CQ.
    pub mcc: Option<(u16, HostRing, u32)>,
    pub mcc_cq: Option<HostCq>,
    /// `rearm_cq` of be2net's MCC object: the MCC CQ is re-armed after each pass.
    pub mcc_rearm: bool,
    /// Commands posted on the MCC and not completed, by tag.
    outstanding: BTreeMap<u64, Posted>,
    /// Statuses of completed commands, by tag (from the completion entry).
    pub completed: BTreeMap<u64, CompletionStatus>,
    /// Asynchronous events seen on the MCC CQ, as their 16 bytes.
    pub events: Vec<[u8; COMPLETION_LEN]>,
    /// The EQs, in creation order.
    pub eqs: Vec<HostEq>,
}

impl Host {
    /// A factory-fresh PF (seed 7) in `dir`, in the PCI Express shape with a transport-kept
    /// MSI-X table (as QEMU keeps it), on a manual clock.
    pub fn new(dir: &std::path::Path) -> Self {
        Self::with_seed(dir, 7)
    }

    /// [`Host::new`] with the adapter's identity (serial, MACs) made from `seed`: two adapters
    /// on one cable need two.
    pub fn with_seed(dir: &std::path::Path, seed: u64) -> Self {
        let fw = Firmware::create_with(dir, CreateOptions { seed, function: FunctionType::Pf }).unwrap();
        Self::with_firmware(fw)
    }

    /// The host of a device built over `fw`.
    pub fn with_firmware(fw: Firmware) -> Self {
        let mem = Arc::new(HostMemory::default());
        let irq = Arc::new(Lines::default());
        let clock = Arc::new(ManualClock::new());
        let shape = Shape::Express { msix_table: TableOwner::Transport };
        let mut dev = Device::new(fw, Arc::clone(&mem), Arc::clone(&irq), shape);
        dev.set_clock(clock.clone());
        dev.set_timing(Timing::default());
        // be2net allocates sizeof(mailbox) + 16 and aligns up (be_drv_init).
        let raw = mem.alloc(MAILBOX_LEN + 16);
        let mbox = (raw + 8 + 15) & !15;
        Self {
            dev,
            mem,
            irq,
            clock,
            mbox,
            next_tag: 0x1000,
            mcc: None,
            mcc_cq: None,
            mcc_rearm: false,
            outstanding: BTreeMap::new(),
            completed: BTreeMap::new(),
            events: Vec::new(),
            eqs: Vec::new(),
        }
    }

    // --- registers ------------------------------------------------------------------------

    pub fn read32(&mut self, bar: u8, off: u64) -> u32 {
        let mut b = [0u8; 4];
        self.dev.read_bar(bar, off, &mut b);
        u32::from_le_bytes(b)
    }

    pub fn write32(&mut self, bar: u8, off: u64, v: u32) {
        self.dev.write_bar(bar, off, &v.to_le_bytes());
    }

    pub fn config32(&mut self, off: u16) -> u32 {
        let mut b = [0u8; 4];
        self.dev.read_config(off, &mut b);
        u32::from_le_bytes(b)
    }

    pub fn write_config32(&mut self, off: u16, v: u32) {
        self.dev.write_config(off, &v.to_le_bytes());
    }

    /// A ring of `entries` × `entry_len` bytes, each page allocated on its own.
    pub fn alloc_ring(&self, entries: u32, entry_len: usize) -> HostRing {
        let bytes = entries as usize * entry_len;
        let pages =
            (0..bytes.div_ceil(QUEUE_PAGE_LEN as usize)).map(|_| self.mem.alloc(QUEUE_PAGE_LEN as usize)).collect();
        HostRing { pages, entries, entry_len }
    }

    // --- the bootstrap mailbox ------------------------------------------------------------------

    /// Polls RDY like `be_mbox_db_ready_wait` (bounded; each read of 0 is a 1 ms sleep there).
    fn wait_rdy(&mut self) -> Result<(), HostError> {
        for _ in 0..64 {
            let v = self.read32(DB_BAR, MailboxDoorbell::OFFSET.into());
            if v == u32::MAX {
                return Err(HostError::NotResponding);
            }
            if MailboxDoorbell(v).is_ready() {
                return Ok(());
            }
        }
        Err(HostError::NotResponding)
    }

    /// Runs the WRB `raw` through the bootstrap mailbox (`be_mbox_notify_wait`): returns the
    /// completion, which must be VALID.
    fn mbox_wrb(&mut self, raw: &[u8; WRB_LEN]) -> Result<Completion, HostError> {
        self.mem.poke(self.mbox, raw);
        self.mem.poke(self.mbox + WRB_LEN as u64, &[0; COMPLETION_LEN]);
        let db = u64::from(MailboxDoorbell::OFFSET);
        self.wait_rdy()?;
        self.write32(DB_BAR, db, MailboxDoorbell::hi_for(self.mbox).0);
        self.wait_rdy()?;
        self.write32(DB_BAR, db, MailboxDoorbell::lo_for(self.mbox).0);
        self.wait_rdy()?;
        let at = self.mbox + WRB_LEN as u64;
        let compl = Completion::decode(&mut Reader::new(&self.mem.peek(at, COMPLETION_LEN))).unwrap();
        if !compl.is_valid() {
            return Err(HostError::InvalidCompletion);
        }
        self.mem.poke(at + 12, &[0; 4]); // be_mcc_compl_use
        Ok(compl)
    }

    /// The fw_init (`true`) or fw_clean signature WRB, tags 0.
    pub fn signature(&mut self, init: bool) -> Result<(), HostError> {
        let mut raw = [0u8; WRB_LEN];
        raw[..8].copy_from_slice(if init { &FW_INIT_SIGNATURE } else { &FW_CLEAN_SIGNATURE });
        let compl = self.mbox_wrb(&raw)?;
        assert_eq!(compl.tags, [0, 0]);
        Ok(())
    }

    /// Builds the WRB for `request` (a whole command buffer): embedded, or with one SGE to a
    /// fresh buffer; returns it and where the response will be.
    fn build_wrb(&mut self, request: &[u8], embedded: bool, slot: u64) -> ([u8; WRB_LEN], Posted, [u32; 2]) {
        let hdr = RequestHeader::decode(&mut Reader::new(request)).unwrap();
        let tag = KERNEL_POINTER_BASE + self.next_tag;
        self.next_tag += 0x100;
        let tags = [tag as u32, (tag >> 32) as u32];
        let (payload, response_at) = if embedded {
            assert!(request.len() <= EMBEDDED_MAX);
            (WrbPayload::Embedded(request.to_vec()), slot + WRB_PAYLOAD_OFFSET as u64)
        } else {
            let buf = self.mem.alloc(request.len());
            self.mem.poke(buf, request);
            (WrbPayload::NonEmbedded(vec![Sge { address: buf, len: request.len() as u32 }]), buf)
        };
        let wrb = Wrb { payload_length: request.len() as u32, tags, payload };
        let mut raw = [0u8; WRB_LEN];
        wrb.encode(&mut Writer::new(&mut raw)).unwrap();
        let posted = Posted {
            response_at,
            len: request.len().min(if embedded { EMBEDDED_MAX } else { usize::MAX }),
            opcode: hdr.opcode,
            subsystem: hdr.subsystem.raw(),
        };
        (raw, posted, tags)
    }

    /// The response of a completed command: its header must echo the command's opcode and
    /// subsystem (be2net finds asynchronous completions by them).
    fn response(&self, posted: &Posted) -> (ResponseHeader, Vec<u8>) {
        let buf = self.mem.peek(posted.response_at, posted.len);
        let hdr = ResponseHeader::decode(&mut Reader::new(&buf)).unwrap();
        assert_eq!((hdr.opcode, hdr.subsystem.raw()), (posted.opcode, posted.subsystem), "opcode echoed");
        (hdr, buf)
    }

    /// A command through the bootstrap mailbox; the status comes from the completion.
    pub fn mbox<C: Command>(&mut self, cmd: &C) -> Result<C::Response, HostError> {
        let request = encode_request(cmd).unwrap();
        let bytes = self.mbox_raw(&request, C::EMBEDDED)?;
        Ok(decode_response::<C>(&bytes).unwrap().1)
    }

    /// Any request bytes through the bootstrap mailbox; returns the response buffer.
    pub fn mbox_raw(&mut self, request: &[u8], embedded: bool) -> Result<Vec<u8>, HostError> {
        let (raw, posted, tags) = self.build_wrb(request, embedded, self.mbox);
        let compl = self.mbox_wrb(&raw)?;
        assert_eq!(compl.tags, tags, "tags come back unchanged");
        assert_ne!(compl.flags & Completion::COMPLETED, 0);
        let (hdr, buf) = self.response(&posted);
        if !compl.status.is_success() {
            return Err(HostError::Status(compl.status));
        }
        assert!(hdr.status().is_success());
        Ok(buf)
    }

    // --- the MCC queue -----------------------------------------------------------------------

    /// Posts `request` at the MCC head and rings the doorbell (`be_mcc_notify`); returns its tag.
    pub fn mcc_post_raw(&mut self, request: &[u8], embedded: bool) -> u64 {
        let (id, ring, head) = self.mcc.clone().expect("no MCC");
        let slot = ring.entry(head);
        let (raw, posted, tags) = self.build_wrb(request, embedded, slot);
        self.mem.poke(slot, &raw);
        self.mcc = Some((id, ring, head + 1));
        let tag = u64::from(tags[0]) | (u64::from(tags[1]) << 32);
        self.outstanding.insert(tag, posted);
        self.write32(DB_BAR, MccDoorbell::OFFSET.into(), MccDoorbell::new(id, 1).0);
        tag
    }

    /// Posts command `cmd` on the MCC; returns its tag.
    pub fn mcc_post<C: Command>(&mut self, cmd: &C) -> u64 {
        self.mcc_post_raw(&encode_request(cmd).unwrap(), C::EMBEDDED)
    }

    /// A synchronous MCC command (`be_mcc_notify_wait`): post, busy-poll the CQ until nothing
    /// is outstanding, then take the status from the response header.
    pub fn mcc<C: Command>(&mut self, cmd: &C) -> Result<C::Response, HostError> {
        let request = encode_request(cmd).unwrap();
        let bytes = self.mcc_raw(&request, C::EMBEDDED)?;
        Ok(decode_response::<C>(&bytes).unwrap().1)
    }

    /// Any request bytes through the MCC, synchronously; returns the response buffer.
    pub fn mcc_raw(&mut self, request: &[u8], embedded: bool) -> Result<Vec<u8>, HostError> {
        let tag = self.mcc_post_raw(request, embedded);
        let posted = self.outstanding[&tag];
        // The device completes inside the doorbell write: one pass finds it.
        self.process_mcc();
        if self.outstanding.contains_key(&tag) {
            return Err(HostError::NotResponding);
        }
        let (hdr, buf) = self.response(&posted);
        if !hdr.status().is_success() {
            return Err(HostError::Status(hdr.status()));
        }
        Ok(buf)
    }

    /// `be_process_mcc`: reaps every valid entry of the MCC CQ (events and completions), zeroes
    /// their flags, and rings the CQ doorbell with the count and the re-arm state. Returns how
    /// many entries it took.
    pub fn process_mcc(&mut self) -> u16 {
        let Some(mut cq) = self.mcc_cq.clone() else { return 0 };
        let mut n = 0;
        loop {
            let at = cq.ring.entry(cq.tail);
            let raw: [u8; COMPLETION_LEN] = self.mem.peek(at, COMPLETION_LEN).try_into().unwrap();
            let compl = Completion::decode(&mut Reader::new(&raw)).unwrap();
            if !compl.is_valid() {
                break;
            }
            if compl.flags & Completion::ASYNC != 0 {
                assert!(AsyncTrailer(compl.flags).is_async_event());
                self.events.push(raw);
            } else {
                assert_ne!(compl.flags & Completion::COMPLETED, 0, "a command completion has COMPLETED");
                let tag = u64::from(compl.tags[0]) | (u64::from(compl.tags[1]) << 32);
                let posted = self.outstanding.remove(&tag).expect("the completion's tags name a posted command");
                self.response(&posted);
                self.completed.insert(tag, compl.status);
            }
            self.mem.poke(at + 12, &[0; 4]);
            cq.tail = (cq.tail + 1) % cq.ring.entries;
            n += 1;
        }
        if n > 0 {
            self.write32(DB_BAR, 0x120, CqDoorbell::new(cq.id, self.mcc_rearm, n).0);
        }
        self.mcc_cq = Some(cq);
        n
    }

    /// How many MCC commands are posted and not completed.
    pub fn mcc_outstanding(&self) -> usize {
        self.outstanding.len()
    }

    // --- events and interrupts ---------------------------------------------------------------

    /// Arms or disarms CQ `id` with `popped` entries consumed (`be_cq_notify`).
    pub fn cq_notify(&mut self, id: u16, arm: bool, popped: u16) {
        self.write32(DB_BAR, 0x120, CqDoorbell::new(id, arm, popped).0);
    }

    /// `be_eq_notify`.
    pub fn eq_notify(&mut self, id: u16, arm: bool, clear: bool, popped: u16) {
        self.write32(DB_BAR, 0x120, EqDoorbell::new(id, arm, clear, popped, 0).0);
    }

    /// `events_get`: takes the EQ's valid entries (zeroing them); returns the CQ ids they name.
    pub fn events_get(&mut self, eq_index: usize) -> Vec<u16> {
        let mut eq = self.eqs[eq_index].clone();
        let mut cqs = Vec::new();
        loop {
            let at = eq.ring.entry(eq.tail);
            let evt = self.mem.peek32(at);
            if evt == 0 {
                break;
            }
            assert_eq!(evt & 0xFFFF, 1, "an EQ entry is (cq_id << 16) | 1");
            cqs.push((evt >> 16) as u16);
            self.mem.poke(at, &[0; 4]);
            eq.tail = (eq.tail + 1) % eq.ring.entries;
        }
        self.eqs[eq_index] = eq;
        cqs
    }

    /// The device clock's now.
    pub fn clock_now(&self) -> std::time::Instant {
        use oce_mailbox::Clock;
        self.clock.now()
    }
}

/// A request of `len` bytes with only a header: opcode, subsystem, version (a command the codec
/// has no type for).
pub fn raw_request(opcode: u8, subsystem: Subsystem, version: u8, len: usize) -> Vec<u8> {
    header_only(opcode, subsystem, version, len, 0, (len - HEADER_LEN) as u32)
}

/// A request buffer of `len` bytes holding only its header, with the timeout and the declared
/// request length as given (a driver may declare more than the buffer holds).
pub fn header_only(
    opcode: u8,
    subsystem: Subsystem,
    version: u8,
    len: usize,
    timeout_secs: u32,
    request_length: u32,
) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    let hdr = RequestHeader { opcode, subsystem, port_number: 0, domain: 0, timeout_secs, request_length, version };
    hdr.encode(&mut Writer::new(&mut buf)).unwrap();
    buf
}
