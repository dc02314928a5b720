//! Interrupt delivery: the rules between the device's interrupt sources (the event-queue engine
//! calls [`Device::raise_msix`] and [`Device::set_intx`]) and its [`Interrupt`] lines.
//!
//! - **MSI-X** (PCI Local Bus 3.0 §6.8): a vector goes out only while the capability's MSI-X
//!   Enable is set and the command register's Bus Master Enable is on; otherwise it is dropped
//!   and logged ([`Event::MsixBlocked`]). When the device owns the table, a vector masked by its
//!   Vector Control bit or by the capability's Function Mask sets its PBA bit instead, and goes
//!   out when the last mask clears (a write to the table or to Message Control), if MSI-X and
//!   bus mastering are still on. When the transport owns the table, the device sends every
//!   vector MSI-X and bus mastering allow, and the transport masks.
//! - **INTx** (§6.2.2, §6.2.3): the source sets a level; INTA# is driven while the level is
//!   high, Interrupt Disable is clear and MSI-X is disabled (a function with MSI-X enabled may
//!   not use INTx). Status bit 3 (Interrupt Status) shows the level whatever Interrupt Disable
//!   says. The line is driven only on a change.
//!
//! A device that is gone (faults `gone`, `power-lost`) raises nothing.

use super::capabilities::msix_cap;
use super::config::{COMMAND_BUS_MASTER, COMMAND_INTX_DISABLE, offsets};
use super::layout::TableOwner;
use super::{Device, DmaSpace, Interrupt};
use crate::assumptions::MSIX_CAP_OFFSET;
use crate::events::{Event, MsixBlock};

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// Raises MSI-X vector `vector` under the rules above.
    pub fn raise_msix(&mut self, vector: u16) {
        if self.gone() {
            return;
        }
        let blocked = match self.msix() {
            None => Some(MsixBlock::NotImplemented),
            Some(layout) if vector >= layout.vectors => Some(MsixBlock::NoSuchVector),
            Some(_) if !self.msix_enabled() => Some(MsixBlock::Disabled),
            Some(_) if !self.bus_master() => Some(MsixBlock::BusMasterOff),
            Some(_) => None,
        };
        if let Some(reason) = blocked {
            self.firmware.log(Event::MsixBlocked { vector, reason });
            return;
        }
        let owned = self.msix().is_some_and(|m| m.owner == TableOwner::Device);
        if owned && (self.msix_function_masked() || self.msix_table.is_masked(vector)) {
            self.msix_table.set_pending(vector);
        } else {
            self.interrupt.signal(vector);
        }
    }

    /// Sets the level of the function's INTx source; INTA# follows under the rules above.
    pub fn set_intx(&mut self, asserted: bool) {
        if self.gone() {
            return;
        }
        self.intx_level = asserted;
        self.update_intx();
    }

    /// True when INTA# is asserted now.
    pub fn intx_asserted(&self) -> bool {
        self.intx_out
    }

    /// True when the capability's MSI-X Enable bit is set (always false in the polled shape).
    pub fn msix_enabled(&self) -> bool {
        self.msix().is_some() && self.config.read(MSIX_CAP_OFFSET) & msix_cap::ENABLE != 0
    }

    fn msix_function_masked(&self) -> bool {
        self.config.read(MSIX_CAP_OFFSET) & msix_cap::FUNCTION_MASK != 0
    }

    fn bus_master(&self) -> bool {
        self.config.read(offsets::COMMAND) & COMMAND_BUS_MASTER != 0
    }

    /// Re-applies the rules after a write that may have changed them (the command register,
    /// Message Control, the table, a reset): drives INTA# if its state changed and sends the
    /// pending vectors nothing masks any more.
    pub(super) fn interrupts_changed(&mut self) {
        self.update_intx();
        let owned = self.msix().is_some_and(|m| m.owner == TableOwner::Device);
        if owned && self.msix_enabled() && self.bus_master() && !self.msix_function_masked() {
            for vector in self.msix_table.take_unmasked_pending() {
                self.interrupt.signal(vector);
            }
        }
    }

    /// Drives INTA# to what the level, Interrupt Disable and MSI-X Enable make it, if it changed.
    fn update_intx(&mut self) {
        let disabled = self.config.read(offsets::COMMAND) & COMMAND_INTX_DISABLE != 0;
        let out = self.intx_level && self.has_intx() && !disabled && !self.msix_enabled();
        if out != self.intx_out {
            self.intx_out = out;
            self.interrupt.set_level(out);
        }
    }
}
