//! The bootstrap mailbox driver: one command at a time through a 272-byte mailbox in DMA memory
//! and the doorbell at DB BAR 0x160 (spec/protocol.md §3.1–§3.4, §3.7), plus the POST wait and the
//! chip soft reset (§2.4, §2.5, §7.4).

use std::sync::Arc;
use std::time::Duration;

use oce_pci::{ConfigSpace, DmaBuffer, PciFunction, RegisterIo};

use crate::clock::{Clock, poll, poll_until};
use crate::command::{Command, decode_response, encode_request};
use crate::commands::FunctionReset;
use crate::error::{MailboxError, MailboxStep};
use crate::header::{HEADER_LEN, RequestHeader, ResponseHeader, Subsystem};
use crate::regs::bars::{self, BarLayout};
use crate::regs::{MailboxDoorbell, PostStage, Semaphore, SliIntf, SoftReset, UeStatus};
use crate::status::CompletionStatus;
use crate::trace::{CommandMeta, CommandTrace, HexBytes};
use crate::wire::{Reader, Wire, Writer};
use crate::wrb::{
    COMPLETION_LEN, Completion, FW_CLEAN_SIGNATURE, FW_INIT_SIGNATURE, MAILBOX_ALIGN, MAILBOX_COMPLETION_OFFSET,
    MAILBOX_LEN, Sge, WRB_LEN, WRB_PAYLOAD_OFFSET, Wrb, WrbPayload,
};

/// How long each wait may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// RDY before each address write (be2net: about 4 s, spec §3.9).
    pub ready: Duration,
    /// POST reaching 0xC000 (be2net: 30 × 2 s = 60 s, spec §3.9).
    pub post: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { ready: Duration::from_secs(4), post: Duration::from_secs(60) }
    }
}

/// Longest pause between two POST polls: POST takes seconds on hardware, and a config read is
/// cheap, so a short cap keeps the wait responsive without busy-looping.
const POST_POLL_MAX_SLEEP: Duration = Duration::from_millis(50);

/// Tag 1 of every WRB ocetool posts ("OCET"); tag 0 is a sequence number. The firmware copies both
/// into the completion, which lets the driver reject a stale completion.
const TAG1: u32 = 0x4F43_4554;

/// A command given as raw numbers and bytes (`ocetool raw`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawCommand {
    /// Subsystem number.
    pub subsystem: u8,
    /// Opcode.
    pub opcode: u8,
    /// Command version.
    pub version: u8,
    /// Header domain byte.
    pub domain: u8,
    /// Embedded in the WRB, or in a separate DMA buffer.
    pub embedded: bool,
    /// Command buffer length, header included.
    pub len: usize,
    /// Body bytes placed after the request header.
    pub payload: Vec<u8>,
    /// How long the firmware may take.
    pub timeout: Duration,
}

/// What came back for a [`RawCommand`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawResponse {
    /// The completion status.
    pub status: CompletionStatus,
    /// The response header, decoded.
    pub header: ResponseHeader,
    /// The whole command buffer after completion, response header included.
    pub buffer: Vec<u8>,
}

/// The bootstrap mailbox of one PCI function.
#[derive(Debug)]
pub struct BootstrapMailbox<F: PciFunction> {
    func: F,
    db: F::Bar,
    pcicfg: F::Bar,
    /// Where the pcicfg shadow starts inside `pcicfg` (0 on a PF, 0x1000 on a VF).
    pcicfg_base: u32,
    /// True for a virtual function (SLI_INTF FT bit).
    is_vf: bool,
    mbox: F::Dma,
    /// Offset of the 16-byte-aligned mailbox inside `mbox`.
    mbox_off: usize,
    /// Bus address of the aligned mailbox.
    mbox_addr: u64,
    /// The buffer for non-embedded commands, grown on demand and reused.
    data: Option<F::Dma>,
    clock: Arc<dyn Clock>,
    timeouts: Timeouts,
    /// Asked between POST polls; `true` abandons the wait (no command is in flight then).
    stop: Option<fn() -> bool>,
    seq: u32,
}

impl<F: PciFunction> BootstrapMailbox<F> {
    /// Checks SLI_INTF, maps the doorbell and pcicfg BARs and allocates the mailbox.
    ///
    /// This touches no firmware state; call [`BootstrapMailbox::initialize`] next.
    pub fn open(func: F, clock: Arc<dyn Clock>) -> Result<Self, MailboxError> {
        let raw = func.config().read32(SliIntf::OFFSET)?;
        if raw == u32::MAX {
            return Err(MailboxError::ConfigGone);
        }
        let sli = SliIntf(raw);
        if !sli.is_valid() {
            return Err(MailboxError::BadSliIntf { raw });
        }
        let layout = BarLayout::for_function(sli.is_vf());
        let db = func.map_bar(layout.doorbell, bars::DOORBELL_MIN_LEN)?;
        let pcicfg = func.map_bar(layout.pcicfg, layout.pcicfg_min_len())?;
        // be2net allocates 16 spare bytes and rounds the bus address up (spec §3.1).
        let mbox = func.alloc_dma(MAILBOX_LEN + MAILBOX_ALIGN as usize)?;
        let mbox_addr = mbox.iova().next_multiple_of(MAILBOX_ALIGN);
        let mbox_off = (mbox_addr - mbox.iova()) as usize;
        Ok(Self {
            func,
            db,
            pcicfg,
            pcicfg_base: layout.pcicfg_base,
            is_vf: sli.is_vf(),
            mbox,
            mbox_off,
            mbox_addr,
            data: None,
            clock,
            timeouts: Timeouts::default(),
            stop: None,
            seq: 0,
        })
    }

    /// Replaces the default timeouts.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Lets a long POST wait end early when `stop` returns true (e.g. on Ctrl-C), with
    /// [`MailboxError::Stopped`]. Command handshakes are never abandoned half-way: a command in
    /// flight always runs to its completion or its timeout.
    pub fn with_stop_check(mut self, stop: fn() -> bool) -> Self {
        self.stop = Some(stop);
        self
    }

    /// The PCI function.
    pub fn function(&self) -> &F {
        &self.func
    }

    /// The clock polls run on.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// True when the function is a virtual function (SLI_INTF FT bit, spec §1.3).
    pub fn is_virtual_function(&self) -> bool {
        self.is_vf
    }

    /// The bus address of the mailbox.
    pub fn mailbox_address(&self) -> u64 {
        self.mbox_addr
    }

    /// What a freshly probed driver does before its first real command: wait for POST, send the
    /// fw_init signature, then FUNCTION_RESET (spec/protocol.md §7.1 steps 4–7, in the order the
    /// mailbox needs: the reset is itself a mailbox command).
    pub fn initialize(&mut self) -> Result<(), MailboxError> {
        tracing::info!("waiting for the adapter's POST");
        let sem = self.wait_post()?;
        tracing::info!(semaphore = sem.0, "POST complete; checking for unrecoverable errors");
        // be2net's error detection (spec §7.3): an unmasked UE bit means the adapter needs a
        // reset; talking to its firmware would only time out.
        self.check_ue()?;
        tracing::info!("sending fw_init and FUNCTION_RESET");
        self.fw_init()?;
        self.function_reset()
    }

    /// Reads the semaphore/POST register (config 0x94).
    pub fn read_semaphore(&self) -> Result<Semaphore, MailboxError> {
        let raw = self.func.config().read32(Semaphore::OFFSET)?;
        if raw == u32::MAX {
            return Err(MailboxError::ConfigGone);
        }
        Ok(Semaphore(raw))
    }

    /// Waits until POST reaches 0xC000 (ARMFW_RDY) with the error bit clear.
    pub fn wait_post(&self) -> Result<Semaphore, MailboxError> {
        let mut last = PostStage::PowerOn;
        let found = poll_until(&*self.clock, self.timeouts.post, POST_POLL_MAX_SLEEP, || {
            if self.stop.is_some_and(|stop| stop()) {
                return Err(MailboxError::Stopped { stage: last });
            }
            let sem = self.read_semaphore()?;
            last = sem.stage();
            if sem.is_error() {
                return Err(MailboxError::PostError { stage: sem.stage(), raw: sem.0 });
            }
            Ok(sem.is_ready().then_some(sem))
        })?;
        found.ok_or(MailboxError::PostTimeout { stage: last, waited: self.timeouts.post })
    }

    /// Reads the UE status and mask registers from the pcicfg BAR.
    pub fn read_ue(&self) -> UeStatus {
        UeStatus {
            low: self.pcicfg.read32(self.pcicfg_base + UeStatus::LOW_OFFSET),
            high: self.pcicfg.read32(self.pcicfg_base + UeStatus::HIGH_OFFSET),
            low_mask: self.pcicfg.read32(self.pcicfg_base + UeStatus::LOW_MASK_OFFSET),
            high_mask: self.pcicfg.read32(self.pcicfg_base + UeStatus::HIGH_MASK_OFFSET),
        }
    }

    /// Fails with [`MailboxError::UnrecoverableError`] when an unmasked UE bit is set.
    pub fn check_ue(&self) -> Result<(), MailboxError> {
        let ue = self.read_ue();
        if ue.low == u32::MAX && ue.high == u32::MAX {
            return Err(MailboxError::DeviceGone { step: MailboxStep::BeforeHigh });
        }
        if ue.has_error() { Err(MailboxError::UnrecoverableError { ue }) } else { Ok(()) }
    }

    /// Chip soft reset: read pcicfg 0x5C, set bit 7, write it back (be2net's TPE recovery,
    /// spec §7.4), then wait for POST and re-send fw_init.
    pub fn soft_reset(&mut self) -> Result<Semaphore, MailboxError> {
        let current = SoftReset(self.pcicfg.read32(self.pcicfg_base + SoftReset::OFFSET));
        if current.0 == u32::MAX {
            return Err(MailboxError::DeviceGone { step: MailboxStep::BeforeHigh });
        }
        tracing::info!("chip soft reset: pcicfg 0x5C bit 7; waiting for POST");
        self.pcicfg.write32(self.pcicfg_base + SoftReset::OFFSET, current.with_reset().0);
        let sem = self.wait_post()?;
        self.fw_init()?;
        Ok(sem)
    }

    /// Sends the firmware-init signature (spec §3.7).
    pub fn fw_init(&mut self) -> Result<(), MailboxError> {
        self.send_signature("fw_init", &FW_INIT_SIGNATURE)
    }

    /// Sends the firmware-clean signature, as a driver does when it lets go of the function.
    pub fn fw_clean(&mut self) -> Result<(), MailboxError> {
        self.send_signature("fw_clean", &FW_CLEAN_SIGNATURE)
    }

    /// FUNCTION_RESET (COMMON 61): clears queues and interfaces left by a previous driver.
    pub fn function_reset(&mut self) -> Result<(), MailboxError> {
        self.execute(&FunctionReset).map(|_| ())
    }

    /// Sends a typed command and decodes its response.
    pub fn execute<C: Command>(&mut self, cmd: &C) -> Result<C::Response, MailboxError> {
        let trace = CommandTrace::start(CommandMeta {
            name: C::NAME,
            subsystem: C::SUBSYSTEM,
            opcode: C::OPCODE,
            version: C::VERSION,
            embedded: C::EMBEDDED,
            request_len: C::LEN.saturating_sub(HEADER_LEN),
        });
        let (status, out) = match self.send::<C>(cmd) {
            Ok(answer) => answer,
            Err(e) => {
                if let Some(t) = trace {
                    t.failed(&e, cmd);
                }
                return Err(e);
            }
        };
        let decoded = Self::decode::<C>(status, &out);
        if let Some(t) = trace {
            let result = decoded.as_ref().map_or_else(|e| e as &dyn std::fmt::Debug, |r| r as &dyn std::fmt::Debug);
            t.completed(status, out.len().saturating_sub(HEADER_LEN), cmd, Some(result));
        }
        decoded
    }

    /// Encodes and posts `cmd`; returns the completion status and the response bytes.
    fn send<C: Command>(&mut self, cmd: &C) -> Result<(CompletionStatus, Vec<u8>), MailboxError> {
        let buf = encode_request(cmd).map_err(|source| MailboxError::Encode { command: C::NAME, source })?;
        self.transact(C::NAME, C::EMBEDDED, &buf, C::TIMEOUT, false)
    }

    /// Checks the status and the echoed header, then decodes the response of `C`.
    fn decode<C: Command>(status: CompletionStatus, out: &[u8]) -> Result<C::Response, MailboxError> {
        if !status.is_success() {
            return Err(MailboxError::CommandFailed {
                command: C::NAME,
                subsystem: C::SUBSYSTEM,
                opcode: C::OPCODE,
                status,
            });
        }
        let malformed = |source| MailboxError::Malformed { command: C::NAME, source };
        let (hdr, resp) = decode_response::<C>(out).map_err(malformed)?;
        if hdr.opcode != C::OPCODE || hdr.subsystem != C::SUBSYSTEM {
            return Err(MailboxError::ResponseMismatch {
                command: C::NAME,
                opcode: hdr.opcode,
                subsystem: hdr.subsystem.raw(),
            });
        }
        Ok(resp)
    }

    /// Sends a command given as raw numbers; returns the statuses and the whole command buffer
    /// whatever the status.
    pub fn execute_raw(&mut self, cmd: &RawCommand) -> Result<RawResponse, MailboxError> {
        const NAME: &str = "raw command";
        let trace = CommandTrace::start(CommandMeta {
            name: NAME,
            subsystem: Subsystem::from_raw(cmd.subsystem),
            opcode: cmd.opcode,
            version: cmd.version,
            embedded: cmd.embedded,
            request_len: cmd.len.saturating_sub(HEADER_LEN),
        });
        let payload = HexBytes(&cmd.payload);
        let answer = self.send_raw(NAME, cmd);
        if let Some(t) = trace {
            match &answer {
                Ok(r) => {
                    let len = r.header.response_length as usize;
                    t.completed(r.status, len, &payload, Some(&HexBytes(&r.buffer)));
                }
                Err(e) => t.failed(e, &payload),
            }
        }
        answer
    }

    fn send_raw(&mut self, name: &'static str, cmd: &RawCommand) -> Result<RawResponse, MailboxError> {
        let encode_err = |source| MailboxError::Encode { command: name, source };
        let mut buf = vec![0u8; cmd.len.max(HEADER_LEN)];
        let mut w = Writer::new(&mut buf);
        RequestHeader {
            opcode: cmd.opcode,
            subsystem: Subsystem::from_raw(cmd.subsystem),
            port_number: 0,
            domain: cmd.domain,
            timeout_secs: 0,
            request_length: (cmd.len.saturating_sub(HEADER_LEN)) as u32,
            version: cmd.version,
        }
        .encode(&mut w)
        .map_err(encode_err)?;
        w.bytes("payload", &cmd.payload).map_err(encode_err)?;
        let (status, buffer) = self.transact(name, cmd.embedded, &buf, cmd.timeout, true)?;
        let header = ResponseHeader::decode(&mut Reader::new(&buffer))
            .map_err(|source| MailboxError::Malformed { command: name, source })?;
        Ok(RawResponse { status, header, buffer })
    }

    /// Posts one command buffer and returns the completion status and the response bytes: the
    /// response header plus `response_length` bytes (bounded by the buffer), or the whole buffer
    /// when `whole` is set.
    fn transact(
        &mut self,
        name: &'static str,
        embedded: bool,
        cmd: &[u8],
        timeout: Duration,
        whole: bool,
    ) -> Result<(CompletionStatus, Vec<u8>), MailboxError> {
        let encode_err = |source| MailboxError::Encode { command: name, source };
        let tags = self.next_tags();
        let (payload, region) = if embedded {
            (WrbPayload::Embedded(cmd.to_vec()), None)
        } else {
            let data = self.data_buffer(cmd.len())?;
            data.write_at(0, cmd)?;
            (WrbPayload::NonEmbedded(vec![Sge { address: data.iova(), len: cmd.len() as u32 }]), Some(()))
        };
        let wrb = Wrb { payload_length: cmd.len() as u32, tags, payload };
        let mut raw = [0u8; WRB_LEN];
        wrb.encode(&mut Writer::new(&mut raw)).map_err(encode_err)?;
        let completion = self.post(name, &raw, tags, timeout)?;

        // Read the response back from where it was written: the WRB payload or the SGE buffer.
        let read = |dst: &mut [u8], off: usize| -> Result<(), MailboxError> {
            match region {
                None => self.mbox.read_at(self.mbox_off + WRB_PAYLOAD_OFFSET + off, dst)?,
                Some(()) => self.data.as_ref().map_or(Ok(()), |d| d.read_at(off, dst))?,
            }
            Ok(())
        };
        let len = if whole {
            cmd.len()
        } else {
            let mut hdr = [0u8; HEADER_LEN];
            read(&mut hdr, 0)?;
            let hdr = ResponseHeader::decode(&mut Reader::new(&hdr))
                .map_err(|source| MailboxError::Malformed { command: name, source })?;
            let claimed = hdr.response_length as usize;
            let capacity = cmd.len().saturating_sub(HEADER_LEN);
            if claimed > capacity && completion.status.is_success() {
                // A response cannot be longer than the buffer it was written into. (A failed
                // command's status is the better report, so its length is only clamped.)
                return Err(MailboxError::ResponseTooLong { command: name, claimed, capacity });
            }
            HEADER_LEN + claimed.min(capacity)
        };
        let mut out = vec![0u8; len];
        read(&mut out, 0)?;
        Ok((completion.status, out))
    }

    fn next_tags(&mut self) -> [u32; 2] {
        self.seq = self.seq.wrapping_add(1);
        [self.seq, TAG1]
    }

    /// The reusable non-embedded buffer, at least `len` bytes long.
    fn data_buffer(&mut self, len: usize) -> Result<&F::Dma, MailboxError> {
        if self.data.as_ref().is_none_or(|d| d.len() < len) {
            // Drop (and unmap) the old buffer before mapping a bigger one.
            self.data = None;
            self.data = Some(self.func.alloc_dma(len)?);
        }
        Ok(self.data.as_ref().expect("allocated above"))
    }

    fn send_signature(&mut self, which: &'static str, signature: &[u8; 8]) -> Result<(), MailboxError> {
        let mut raw = [0u8; WRB_LEN];
        raw[..signature.len()].copy_from_slice(signature);
        let completion = self.post(which, &raw, [0, 0], self.timeouts.ready)?;
        if completion.status.is_success() {
            Ok(())
        } else {
            Err(MailboxError::SignatureFailed { which, status: completion.status })
        }
    }

    /// Writes a WRB into the mailbox, rings the doorbell and returns the VALID completion, which
    /// it clears so the next command is recognised as new (spec §3.2 steps 1–6).
    fn post(
        &mut self,
        name: &'static str,
        wrb: &[u8; WRB_LEN],
        tags: [u32; 2],
        timeout: Duration,
    ) -> Result<Completion, MailboxError> {
        let compl_off = self.mbox_off + MAILBOX_COMPLETION_OFFSET;
        self.mbox.write_at(self.mbox_off, wrb)?;
        self.mbox.zero(compl_off, COMPLETION_LEN)?;

        self.wait_ready(MailboxStep::BeforeHigh, self.timeouts.ready)?;
        self.db.write32(MailboxDoorbell::OFFSET, MailboxDoorbell::hi_for(self.mbox_addr).0);
        self.wait_ready(MailboxStep::BeforeLow, self.timeouts.ready)?;
        // The low write is the "go": the firmware fetches and executes the WRB.
        self.db.write32(MailboxDoorbell::OFFSET, MailboxDoorbell::lo_for(self.mbox_addr).0);
        self.wait_ready(MailboxStep::Executing, timeout.max(self.timeouts.ready))?;

        let mut raw = [0u8; COMPLETION_LEN];
        self.mbox.read_at(compl_off, &mut raw)?;
        let completion = Completion::decode(&mut Reader::new(&raw))
            .map_err(|source| MailboxError::Malformed { command: name, source })?;
        if !completion.is_valid() {
            return Err(MailboxError::InvalidCompletion { command: name, flags: completion.flags });
        }
        // Clear the flags dword (offset 12 of the completion).
        self.mbox.zero(compl_off + 12, 4)?;
        if completion.tags != tags {
            return Err(MailboxError::TagMismatch { command: name, expected: tags, found: completion.tags });
        }
        Ok(completion)
    }

    fn wait_ready(&self, step: MailboxStep, timeout: Duration) -> Result<(), MailboxError> {
        let ready = poll(&*self.clock, timeout, || {
            let db = MailboxDoorbell(self.db.read32(MailboxDoorbell::OFFSET));
            if db.is_all_ones() {
                return Err(MailboxError::DeviceGone { step });
            }
            Ok(db.is_ready().then_some(()))
        })?;
        ready.ok_or(MailboxError::NotReady { step, waited: timeout })
    }
}
