//! A minimal host-side flasher for the flash tests: a section cut into 32 KiB chunks, SAVE for
//! all but the last, FLASH for the last (ufi-firmware.md §3.3), in offset or op-type mode.

use std::borrow::Cow;
use std::sync::Arc;

use oce_emulator::Emulator;
use oce_mailbox::commands::{FlashOpType, FlashromOp, WriteFlashrom};
use oce_mailbox::{BootstrapMailbox, MailboxError, ManualClock};

/// The factory firmware section (0xA0): flash address and size in the small layout.
pub const FIRMWARE: (u32, u32) = (0x4_0000, 0x8_0000);

/// How chunks address the flash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Op type 7, at the section's own offset.
    Offset,
    /// Op type 7, at another flash address.
    OffsetAt(u32),
    /// The component's op type; `offset` holds garbage.
    OpType,
}

/// An initialised host on `emu`, with a manual clock.
pub fn host(emu: &Emulator) -> BootstrapMailbox<Emulator> {
    let mut mbox = BootstrapMailbox::open(emu.clone(), Arc::new(ManualClock::new())).unwrap();
    mbox.initialize().unwrap();
    mbox
}

/// One WRITE_FLASHROM chunk.
pub fn chunk<'a>(op_code: FlashromOp, op_type: FlashOpType, offset: u32, data: Cow<'a, [u8]>) -> WriteFlashrom<'a> {
    WriteFlashrom { op_code, op_type, offset, data }
}

/// Sends `image[offset..offset + size]` as one section; returns how many chunks it took.
pub fn send_section(
    mbox: &mut BootstrapMailbox<Emulator>,
    image: &[u8],
    (offset, size): (u32, u32),
    op_type: FlashOpType,
    mode: Mode,
) -> Result<usize, MailboxError> {
    let section = &image[offset as usize..][..size as usize];
    let chunks: Vec<&[u8]> = section.chunks(WriteFlashrom::CHUNK).collect();
    for (i, data) in chunks.iter().enumerate() {
        let op_code = if i + 1 == chunks.len() { FlashromOp::Flash } else { FlashromOp::Save };
        let sent = (i * WriteFlashrom::CHUNK) as u32;
        let (ty, at) = match mode {
            Mode::Offset => (FlashOpType::OffsetSpecified, offset + sent),
            Mode::OffsetAt(base) => (FlashOpType::OffsetSpecified, base + sent),
            // The offset is stale in op-type mode (be2net leaves it); the firmware must ignore it.
            Mode::OpType => (op_type, 0xFFFF_FFF0),
        };
        mbox.execute(&chunk(op_code, ty, at, Cow::Borrowed(data)))?;
    }
    Ok(chunks.len())
}

/// `len` bytes of flash.bin at `offset`.
pub fn flash_bytes(emu: &Emulator, offset: u32, len: u32) -> Vec<u8> {
    let all = std::fs::read(emu.state_dir().join("flash.bin")).unwrap();
    all[offset as usize..][..len as usize].to_vec()
}
