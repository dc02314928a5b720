//! The few device operations a flash needs, as a trait: the real implementation sends commands
//! through a [`BootstrapMailbox`]; unit tests script a fake adapter to drive every branch of the
//! walk without an emulator.

use std::borrow::Cow;

use oce_mailbox::commands::{
    FlashOpType, FlashromOp, FwVersion, GetFwVersion, ReadFlashrom, WriteFlashrom, WriteObject, WriteObjectResponse,
};
use oce_mailbox::{BootstrapMailbox, MailboxError};
use oce_pci::{DmaBuffer, PciFunction};

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

/// The Lancer object download's device operations (ufi-firmware.md §4.1–§4.3).
pub(crate) trait ObjectTarget {
    /// WRITE_OBJECT of `data` at `offset` of the firmware object.
    fn write_object(&mut self, offset: u32, data: &[u8]) -> Result<WriteObjectResponse, MailboxError>;

    /// The zero-length EOF write at `total` that commits the object.
    fn commit_object(&mut self, total: u32) -> Result<WriteObjectResponse, MailboxError>;
}

/// WRITE_OBJECT through a mailbox, with the data in a DMA buffer of its own: the embedded request
/// has no room for data (see `oce_mailbox::commands::object`). The buffer is allocated once,
/// through the mailbox's function, and reused for every chunk.
#[derive(Debug)]
pub(crate) struct MailboxObject<'m, F: PciFunction> {
    mbox: &'m mut BootstrapMailbox<F>,
    buf: F::Dma,
    name: &'static str,
}

impl<'m, F: PciFunction> MailboxObject<'m, F> {
    /// Allocates a `chunk`-byte data buffer for writes to the object `name`.
    pub(crate) fn new(
        mbox: &'m mut BootstrapMailbox<F>,
        name: &'static str,
        chunk: usize,
    ) -> Result<Self, MailboxError> {
        let buf = mbox.function().alloc_dma(chunk)?;
        Ok(Self { mbox, buf, name })
    }
}

impl<F: PciFunction> ObjectTarget for MailboxObject<'_, F> {
    fn write_object(&mut self, offset: u32, data: &[u8]) -> Result<WriteObjectResponse, MailboxError> {
        self.buf.write_at(0, data)?;
        let len = data.len() as u32;
        self.mbox.execute(&WriteObject::chunk(self.name, offset, len, self.buf.iova()))
    }

    fn commit_object(&mut self, total: u32) -> Result<WriteObjectResponse, MailboxError> {
        self.mbox.execute(&WriteObject::commit(self.name, total))
    }
}
