//! The device: the registers of one emulated OCe14000 function (configuration space, the BARs,
//! the bootstrap mailbox doorbell, POST, timing) over its register-free [`Firmware`], reaching
//! its host through two seams it takes as type parameters ([`DmaSpace`], [`Interrupt`]).
//!
//! [`Device`] is a plain `&mut self` state machine in the vm-superio / vm-device shape: every
//! access a transport forwards (a vfio-user message, an in-process register read) is one method
//! call, and nothing in it blocks, sleeps or spawns. A transport that shares it between threads
//! puts it in a `Mutex` ([`crate::Emulator`] does).

mod access;
mod capabilities;
pub mod config;
mod doorbell;
mod interrupts;
mod layout;
mod mailbox;
mod msix;
mod post;
mod queues;
mod seams;
pub(crate) mod timing;

use std::sync::Arc;

use oce_mailbox::regs::{MailboxDoorbell, Semaphore, SoftReset, UeStatus};
use oce_mailbox::{Clock, SystemClock};

pub use layout::{MsixLayout, Shape, TableOwner};
pub use seams::{DmaFault, DmaSpace, Interrupt, NoInterrupt};

use crate::assumptions::{PCIE_CAP_OFFSET, VPD_CAP_OFFSET};
use crate::datapath::Datapath;
use crate::error::EmulatorError;
use crate::events::{Event, EventLog, QueueKind, QueueMiss};
use crate::faults::{FaultSpec, Faults};
use crate::firmware::{Context, Firmware};
use crate::function::FunctionType;
use crate::info::{EmulatorInfo, LinkState};
use access::{bar_access_ok, lanes};
use capabilities::{pcie_cap, vpd_cap};
use config::{CONFIG_LEN, ConfigRegisters, HEADER_TYPE_MULTI_FUNCTION, STATUS_INTERRUPT, offsets};
use doorbell::MailboxDoorbellState;
use layout::BarRegister;
use mailbox::PendingCompletion;
use msix::MsixTable;
use post::PostWalk;
use timing::Timing;

/// One emulated function as a PCI device: registers over firmware, with DMA space `D` and
/// interrupt lines `I` supplied by the transport. `Send` when `D` and `I` are.
#[derive(Debug)]
pub struct Device<D, I> {
    firmware: Firmware,
    dma: D,
    interrupt: I,
    shape: Shape,
    config: ConfigRegisters,
    /// The MSI-X table and PBA when the device keeps them (empty in the polled shape).
    msix_table: MsixTable,
    /// The level of the function's INTx source.
    intx_level: bool,
    /// INTA# as last driven on the interrupt lines.
    intx_out: bool,
    post: PostWalk,
    doorbell: MailboxDoorbellState,
    /// A completion the firmware holds back until its time has come.
    pending: Option<PendingCompletion>,
    timing: Timing,
    /// Real time, for the delays faults ask for (`slow=…`, `slow-flash=…`).
    clock: Arc<dyn Clock>,
    /// The buffer non-embedded commands are copied into (kept to spare an allocation per command).
    scratch: Vec<u8>,
    /// The ring engines ([`crate::datapath`]).
    datapath: Datapath,
    /// The function's logical link state as last announced to the MCC queues.
    announced_link: bool,
    /// Whether the event queues wanted INTx asserted when last looked at: the source level
    /// follows them only when that changes, so [`Device::set_intx`] stays usable on its own.
    eq_intx: bool,
    /// Queues named that the function does not have (kept apart from the firmware's events).
    queue_misses: EventLog<QueueMiss>,
}

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// The device of an adapter that is already running (POST over) with `firmware`, showing
    /// `shape` on the bus, reaching host memory through `dma` and raising interrupts on
    /// `interrupt`.
    pub fn new(firmware: Firmware, dma: D, interrupt: I, shape: Shape) -> Self {
        let timing = Timing::default();
        let firmware_link = firmware.logical_link_up();
        Self {
            post: PostWalk::finished(firmware.boot_outcome()),
            config: ConfigRegisters::power_on(firmware.function(), shape),
            msix_table: MsixTable::new(layout::msix(shape).map_or(0, |m| m.vectors)),
            intx_level: false,
            intx_out: false,
            firmware,
            dma,
            interrupt,
            shape,
            doorbell: MailboxDoorbellState::new(timing),
            pending: None,
            timing,
            clock: Arc::new(SystemClock),
            scratch: Vec::new(),
            datapath: Datapath::default(),
            announced_link: firmware_link,
            eq_intx: false,
            queue_misses: EventLog::default(),
        }
    }

    // --- what the device is made of ------------------------------------------------------------

    /// The firmware behind the registers.
    pub fn firmware(&self) -> &Firmware {
        &self.firmware
    }

    /// The firmware, to take events. Change faults through [`Device::set_fault`] and its
    /// siblings, so the device announces what a fault changes (the link).
    pub fn firmware_mut(&mut self) -> &mut Firmware {
        &mut self.firmware
    }

    /// The queues the host (or a completion due) named that the function does not have, oldest
    /// first: the doorbell logic drops such a write before the firmware runs, so these are not
    /// in the firmware's event log.
    pub fn queue_misses(&self) -> Vec<QueueMiss> {
        self.queue_misses.snapshot()
    }

    /// Plugs in the RoCE transport the RoCE doorbells announce posted QP work to
    /// ([`crate::datapath::roce`]); without one, posted SQ WQEs are logged as not modelled.
    pub fn set_roce_transport(&mut self, transport: Box<dyn crate::datapath::roce::RoceTransport>) {
        self.datapath.roce = Some(transport);
    }

    /// Returns and clears [`Device::queue_misses`].
    pub fn take_queue_misses(&mut self) -> Vec<QueueMiss> {
        self.queue_misses.take()
    }

    /// Records that queue `id` of `kind` was named and does not exist.
    fn queue_miss(&mut self, kind: QueueKind, id: u16) {
        self.queue_misses.push(QueueMiss { kind, id });
    }

    /// Sets one fault (replacing one of its kind), saves it, and applies it: a `link-down`
    /// posts the link-state event to the subscribed MCC queues.
    pub fn set_fault(&mut self, spec: FaultSpec) -> Result<(), EmulatorError> {
        let result = self.firmware.set_fault(spec);
        self.refresh();
        result
    }

    /// Replaces the fault set ([`Firmware::set_faults`]) and applies it.
    pub fn set_faults(&mut self, faults: Faults) -> Result<(), EmulatorError> {
        let result = self.firmware.set_faults(faults);
        self.refresh();
        result
    }

    /// Clears faults by name ([`Firmware::clear_fault`]) and applies it; returns whether any was
    /// set.
    pub fn clear_fault(&mut self, name: &str) -> Result<bool, EmulatorError> {
        let result = self.firmware.clear_fault(name);
        self.refresh();
        result
    }

    /// Whether the other end of the port's cable is there: a carrier that watches the peer
    /// says so. The physical link is up only with the peer present and no `link-down` fault; a
    /// change is announced to the subscribed MCC queues as the fault's is. A peer that goes
    /// takes its MAC with it ([`Firmware::peer`]).
    pub fn set_peer_present(&mut self, present: bool) {
        let peer = &mut self.firmware.peer;
        if peer.present == present {
            return;
        }
        peer.present = present;
        if !present {
            peer.mac = None;
        }
        self.refresh();
    }

    /// The DMA space the device reaches host memory through.
    pub fn dma(&self) -> &D {
        &self.dma
    }

    /// The interrupt lines.
    pub fn interrupt(&self) -> &I {
        &self.interrupt
    }

    /// PF or VF.
    pub fn function(&self) -> FunctionType {
        self.firmware.function()
    }

    /// The PCI face the device shows.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Size of configuration space in bytes (4 KiB, PCI Express configuration space, in every
    /// shape).
    pub fn config_len(&self) -> usize {
        CONFIG_LEN
    }

    /// Length of memory BAR `bar` (0–5), or `None` if the function does not implement it. Every
    /// BAR the device has is a 64-bit, non-prefetchable memory BAR.
    pub fn bar_len(&self, bar: u8) -> Option<u64> {
        layout::bar_len(self.function(), self.shape, bar)
    }

    /// Where the MSI-X table and PBA are and how many vectors there are; `None` in the polled
    /// shape, which has no MSI-X.
    pub fn msix(&self) -> Option<MsixLayout> {
        layout::msix(self.shape)
    }

    /// True when the function has an INTx pin (INTA#).
    pub fn has_intx(&self) -> bool {
        layout::has_intx(self.function(), self.shape)
    }

    /// Replaces the clock the firmware's real-time delays (`slow`, `slow-flash` faults) are
    /// measured on.
    pub fn set_clock(&mut self, clock: Arc<dyn Clock>) {
        self.clock = clock;
    }

    /// The busy periods, in register reads.
    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Changes the busy periods (for tests; not persisted).
    pub fn set_timing(&mut self, timing: Timing) {
        self.timing = timing;
    }

    /// The POST semaphore (config 0x94) as it reads now, without moving the walk.
    pub fn semaphore(&self) -> u32 {
        self.post.value(self.firmware.card().state.faults.post)
    }

    /// A snapshot of the adapter for display.
    pub fn info(&self) -> EmulatorInfo {
        EmulatorInfo::of(&self.firmware, self.semaphore())
    }

    /// The function's link and the cable's other end, as now.
    pub fn link(&self) -> LinkState {
        LinkState::of(&self.firmware)
    }

    /// What the firmware is told about the registers when it executes a command.
    fn context(&self) -> Context {
        Context { semaphore: self.semaphore() }
    }

    fn gone(&self) -> bool {
        self.firmware.gone()
    }

    // --- configuration space ------------------------------------------------------------------

    /// Reads `data.len()` bytes of configuration space at `off`: any width, any alignment. Past
    /// the end of configuration space, and everywhere on a device that is gone, all ones.
    pub fn read_config(&mut self, off: u16, data: &mut [u8]) {
        data.fill(0xFF);
        if self.gone() {
            return;
        }
        self.follow_card();
        for lane in lanes(off.into(), data.len()) {
            if let Some(o) = config_dword(lane.dword) {
                let value = self.config_dword_read(o);
                lane.put(value, data);
            }
        }
    }

    /// Writes `data` to configuration space at `off`: any width, any alignment; only the bytes
    /// written and, in them, only the writable bits change. Past the end, or on a device that is
    /// gone, the write is lost.
    pub fn write_config(&mut self, off: u16, data: &[u8]) {
        if self.gone() {
            return;
        }
        self.follow_card();
        for lane in lanes(off.into(), data.len()) {
            if let Some(o) = config_dword(lane.dword) {
                self.config_dword_write(o, lane.take(data), lane.mask());
            }
        }
    }

    /// One dword of configuration space (or of the pcicfg shadow), read with its side effects.
    fn config_dword_read(&mut self, off: u16) -> u32 {
        match off {
            offsets::COMMAND if self.intx_level => self.config.read(off) | STATUS_INTERRUPT,
            // Every function of a card with several says so in its header type.
            offsets::HEADER if self.firmware.card_functions() > 1 => self.config.read(off) | HEADER_TYPE_MULTI_FUNCTION,
            Semaphore::OFFSET => self.post.read(self.firmware.card().state.faults.post),
            o if u32::from(o) == UeStatus::LOW_OFFSET => self.firmware.card().state.faults.ue_status[0],
            o if u32::from(o) == UeStatus::HIGH_OFFSET => self.firmware.card().state.faults.ue_status[1],
            o => self.config.read(o),
        }
    }

    /// Writes the bytes `lanes` selects of `value` to the configuration dword at `off`.
    fn config_dword_write(&mut self, off: u16, value: u32, lanes: u32) {
        if u32::from(off) == SoftReset::OFFSET {
            // SR is self-clearing: the register reads 0 again once the reset has started.
            if value & lanes & SoftReset::SR != 0 {
                self.chip_reset();
            }
            return;
        }
        if matches!(self.shape, Shape::Express { .. })
            && off == PCIE_CAP_OFFSET + pcie_cap::DEVICE_CONTROL
            && value & lanes & pcie_cap::INITIATE_FLR != 0
        {
            // Initiate FLR reads 0; the rest of the write is overtaken by the reset.
            self.reset();
            return;
        }
        if off == VPD_CAP_OFFSET {
            self.config.write_masked(off, value, lanes);
            let reg = self.config.read(off);
            if reg & vpd_cap::FLAG_F == 0 {
                self.complete_vpd_read(reg);
            }
            return;
        }
        self.config.write_masked(off, value, lanes);
        self.interrupts_changed();
    }

    /// A VPD read asked for (F clear in `reg`): the Data register takes the 4 bytes at the
    /// address (0xFF past the end) and F sets, at once (`assumptions::vpd`).
    fn complete_vpd_read(&mut self, reg: u32) {
        let address = ((reg >> vpd_cap::ADDRESS_SHIFT) & vpd_cap::ADDRESS_MASK) as usize;
        let identity = self.firmware.card().state.identity.clone();
        let bytes = crate::assumptions::vpd_bytes(&identity.model, &identity.serial);
        let mut data = [0xFF; 4];
        for (i, b) in data.iter_mut().enumerate() {
            if let Some(&v) = bytes.get(address + i) {
                *b = v;
            }
        }
        self.config.set(VPD_CAP_OFFSET + vpd_cap::DATA, u32::from_le_bytes(data), 0);
        self.config.set(VPD_CAP_OFFSET, reg | vpd_cap::FLAG_F, vpd_cap::ADDRESS_WRITABLE);
    }

    // --- BARs ----------------------------------------------------------------------------------

    /// Reads `data.len()` bytes of memory BAR `bar` at `off`. An access of 1, 2, 4 or 8 bytes,
    /// naturally aligned and inside the BAR, reaches the registers; anything else, a part of the
    /// BAR no register decodes, and a device that is gone read all ones.
    pub fn read_bar(&mut self, bar: u8, off: u64, data: &mut [u8]) {
        data.fill(0xFF);
        if self.gone() || !self.bar_len(bar).is_some_and(|len| bar_access_ok(len, off, data.len())) {
            return;
        }
        self.poll();
        for lane in lanes(off, data.len()) {
            let value = self.bar_dword_read(bar, lane.dword);
            lane.put(value, data);
        }
    }

    /// Writes `data` to memory BAR `bar` at `off`, under the rules of [`Device::read_bar`];
    /// writes nothing decodes are dropped.
    pub fn write_bar(&mut self, bar: u8, off: u64, data: &[u8]) {
        if self.gone() || !self.bar_len(bar).is_some_and(|len| bar_access_ok(len, off, data.len())) {
            return;
        }
        self.poll();
        for lane in lanes(off, data.len()) {
            self.bar_dword_write(bar, lane.dword, lane.take(data), lane.mask());
        }
    }

    fn bar_dword_read(&mut self, bar: u8, dword: u64) -> u32 {
        match layout::decode(self.function(), self.shape, bar, dword) {
            None => u32::MAX,
            Some(BarRegister::Pcicfg(o)) => self.config_dword_read(o),
            Some(BarRegister::MsixTable(o)) => self.msix_table.read(o),
            Some(BarRegister::MsixPba(o)) => self.msix_table.read_pba(o),
            Some(BarRegister::Doorbell(MailboxDoorbell::OFFSET)) => self.doorbell_read(),
            // Write-only doorbells read as zero.
            Some(BarRegister::Doorbell(_)) => 0,
        }
    }

    fn bar_dword_write(&mut self, bar: u8, dword: u64, value: u32, lanes: u32) {
        match layout::decode(self.function(), self.shape, bar, dword) {
            Some(BarRegister::Pcicfg(o)) => self.config_dword_write(o, value, lanes),
            Some(BarRegister::MsixTable(o)) => {
                self.msix_table.write(o, value, lanes);
                self.interrupts_changed();
            }
            // A doorbell is rung by a whole dword; part of one carries no command.
            Some(BarRegister::Doorbell(MailboxDoorbell::OFFSET)) if lanes == u32::MAX => self.doorbell_write(value),
            // TX (0x60), RQ (0x100), EQ/CQ (0x120), MCCQ (0x140) (spec/protocol.md §2.2).
            Some(BarRegister::Doorbell(off)) if lanes == u32::MAX && self.post_ready() => {
                self.queue_doorbell(off, value)
            }
            // The PBA is read-only; nothing else is decoded.
            _ => {}
        }
    }

    // --- resets and POST -----------------------------------------------------------------------

    /// Function-level reset, as vfio-user's DEVICE_RESET and PCI Express's Initiate FLR mean
    /// it: configuration space back to its power-on values (MSI-X disabled, bus mastering off),
    /// the MSI-X table masked and the PBA clear, INTx de-asserted, the mailbox idle with nothing
    /// latched and a held completion dropped, and the function's queues, interfaces and settings
    /// gone. The adapter's firmware keeps running (no POST, the profile, flash and staging
    /// stay): a function reset is not a chip reset. A device that is gone ignores it.
    pub fn reset(&mut self) {
        if self.gone() {
            return;
        }
        self.follow_card();
        self.firmware.log(Event::FunctionReset);
        self.firmware.reset_function();
        self.registers_to_power_on();
        self.doorbell.reset();
        self.pending = None;
        self.datapath.reset();
        self.refresh();
    }

    /// Configuration space, the MSI-X table and the INTx source back to power-on values; INTA#
    /// de-asserted if it was driven.
    fn registers_to_power_on(&mut self) {
        self.config = ConfigRegisters::power_on(self.function(), self.shape);
        self.msix_table = MsixTable::new(self.msix().map_or(0, |m| m.vectors));
        self.intx_level = false;
        self.interrupts_changed();
    }

    /// Chip soft reset (pcicfg 0x5C bit 7): POST runs again; configuration space and the MSI-X
    /// table are kept. It resets the chip, so every other function of the card goes through
    /// the same POST ([`Device::follow_card`]).
    fn chip_reset(&mut self) {
        self.firmware.log(Event::ChipReset);
        self.boot(false);
        self.firmware.save_or_log();
    }

    /// Catches up with a POST another function of the card started (a chip reset through its
    /// pcicfg, a power cycle): this function's POST walk restarts, its mailbox goes idle, a held
    /// completion is lost, its queues and counters are gone, and after a power cycle its
    /// configuration space is back at power-on values too — what the function that started it
    /// went through. Every access checks first, so the function sees the reset at its next
    /// register read, as a driver polling its POST stage does ([`crate::assumptions::card`]).
    pub(crate) fn follow_card(&mut self) {
        let Some(cold) = self.firmware.missed_boot() else { return };
        self.firmware.log(Event::ChipReset);
        if cold {
            self.registers_to_power_on();
        }
        self.doorbell.reset();
        self.pending = None;
        let outcome = self.firmware.follow_boot();
        self.post = PostWalk::start(outcome, self.timing.post_reads_per_stage);
        self.datapath.reset();
        self.refresh();
    }

    /// Cold boot: power back, configuration space back to power-on values, then POST (the
    /// next-boot profile becomes active, the firmware on flash runs).
    pub fn power_cycle(&mut self) -> Result<(), EmulatorError> {
        self.firmware.log(Event::PowerCycle);
        self.firmware.card().state.faults.power_lost = false;
        self.registers_to_power_on();
        self.boot(true);
        self.firmware.save()
    }

    /// POST (`cold` after a power cycle): the firmware boots, the semaphore walk restarts, the
    /// mailbox is idle again and a held completion is lost. The caller saves.
    fn boot(&mut self, cold: bool) {
        self.doorbell.reset();
        self.pending = None;
        let outcome = self.firmware.boot(cold);
        self.post = PostWalk::start(outcome, self.timing.post_reads_per_stage);
        self.datapath.reset();
        self.refresh();
    }

    /// True when POST is over and the firmware accepts mailbox commands.
    fn post_ready(&self) -> bool {
        self.post.is_ready(self.firmware.card().state.faults.post)
    }
}

/// The configuration-space offset of the dword at `dword`, if it is inside configuration space.
fn config_dword(dword: u64) -> Option<u16> {
    u16::try_from(dword).ok().filter(|&o| usize::from(o) < CONFIG_LEN)
}

#[cfg(test)]
mod tests;
