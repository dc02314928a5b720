//! The few device operations a flash needs, as a trait: the real implementation sends commands
//! through a [`BootstrapMailbox`]; unit tests script a fake adapter to drive every branch of the
//! walk without an emulator.

use std::borrow::Cow;

use oce_mailbox::commands::{FlashOpType, FlashromOp, FwVersion, GetFwVersion, ReadFlashrom, WriteFlashrom};
use oce_mailbox::{BootstrapMailbox, MailboxError};
use oce_pci::PciFunction;

/// The UFI walk's device operations (ufi-firmware.md §3.2–§3.4).
pub(crate) trait FlashTarget {
    /// READ_FLASHROM REPORT: the 4 bytes the adapter reports for the region ending at
    /// `offset + 4`.
    fn read_crc(&mut self, op_type: FlashOpType, offset: u32) -> Result<[u8; 4], MailboxError>;

    /// WRITE_FLASHROM with one chunk of at most 32 KiB.
    fn write_chunk(
        &mut self,
        op: FlashromOp,
        op_type: FlashOpType,
        offset: u32,
        data: &[u8],
    ) -> Result<(), MailboxError>;

    /// GET_FW_VERSION.
    fn versions(&mut self) -> Result<FwVersion, MailboxError>;
}

impl<F: PciFunction> FlashTarget for BootstrapMailbox<F> {
    fn read_crc(&mut self, op_type: FlashOpType, offset: u32) -> Result<[u8; 4], MailboxError> {
        Ok(self.execute(&ReadFlashrom::crc(op_type, offset))?.0)
    }

    fn write_chunk(
        &mut self,
        op: FlashromOp,
        op_type: FlashOpType,
        offset: u32,
        data: &[u8],
    ) -> Result<(), MailboxError> {
        // The chunk stays borrowed from the image until the command buffer is built.
        self.execute(&WriteFlashrom { op_code: op, op_type, offset, data: Cow::Borrowed(data) }).map(|_| ())
    }

    fn versions(&mut self) -> Result<FwVersion, MailboxError> {
        self.execute(&GetFwVersion)
    }
}
