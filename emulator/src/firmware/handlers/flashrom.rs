//! Flash commands: READ_FLASHROM (6) REPORT and WRITE_FLASHROM (7) SAVE / FLASH
//! (ufi-firmware.md §2.8, §3; design.md §6 "Flash", "CRC"). The staging rules are in
//! [`crate::firmware::flash::Staging`]; the statuses chosen where the spec is silent are in
//! [`crate::assumptions`].
//!
//! | request | answer |
//! |---|---|
//! | REPORT, op type 7 | the 4 bytes at flash address `offset` |
//! | REPORT, op type T, `offset` = region size − 4 | the CRC the firmware computes over the first `size − 4` bytes of T's region of the directory on flash |
//! | REPORT, op type T, other `offset` | the 4 bytes at `offset` inside T's region of the directory on flash |
//! | SAVE | the chunk is staged (nothing touches flash) |
//! | FLASH | the chunk is staged, the section's CRC trailer is checked, then the section is written to flash.bin (the page cache; synced only under `FlashDurability::Synced`) |
//! | CRC mismatch at FLASH | FAILED / 0x4D; flash untouched, staging dropped |
//! | out-of-order chunk, chunk outside flash or region, unknown op code or region, FLASH with nothing staged | ILLEGAL_FIELD; staging dropped |
//! | op type 7 with the `no-offset-mode` fault | ILLEGAL_FIELD |

use oce_firmware::crc;
use oce_mailbox::commands::{FlashCrc, FlashOpType, FlashromOp, ReadFlashrom, WriteFlashrom};
use oce_mailbox::header::{HEADER_LEN, RequestHeader};
use oce_mailbox::status::{AdditionalStatus, BaseStatus, CompletionStatus};
use oce_mailbox::wire::{Reader, Wire};

use super::illegal_field;
use crate::assumptions::{ADDL_FLASH_SAVE_FAILED, STATUS_BAD_LENGTH};
use crate::events::Event;
use crate::faults::FaultSpec;
use crate::firmware::Owed;
use crate::firmware::dispatch::{Reply, check_header};
use crate::firmware::flash::Chunk;
use crate::firmware::{Context, Firmware};

/// READ_FLASHROM REPORT: in offset mode the 4 bytes stored at the address (the trailer, when
/// the address is a section's last 4 bytes); by op type, at the region's trailer position, the
/// CRC the firmware computes over the region, else the stored bytes (`assumptions`, "Flash
/// commands"). An intact section answers its trailer either way.
pub(crate) fn read_flashrom(fw: &mut Firmware, _: &Context, req: ReadFlashrom) -> Result<FlashCrc, CompletionStatus> {
    if req.op_code != FlashromOp::Report || req.data_buf_size != crc::TRAILER_LEN as u32 {
        return Err(illegal_field());
    }
    let card = fw.card();
    let address = match req.op_type {
        FlashOpType::OffsetSpecified if card.state.faults.no_offset_mode => return Err(illegal_field()),
        FlashOpType::OffsetSpecified => u64::from(req.offset),
        op_type => {
            let (start, size) = card.flash.region(op_type.raw()).ok_or_else(illegal_field)?;
            let end = u64::from(req.offset) + crc::TRAILER_LEN as u64;
            if end > size {
                return Err(illegal_field());
            }
            if end == size {
                let region = usize::try_from(size).map_err(|_| illegal_field())?;
                let section = card.flash.read(start, region).ok_or_else(illegal_field)?;
                let check = crc::check_section(section).ok_or_else(illegal_field)?;
                return Ok(FlashCrc(check.computed.to_le_bytes()));
            }
            start + u64::from(req.offset)
        }
    };
    let bytes = card.flash.read(address, crc::TRAILER_LEN).ok_or_else(illegal_field)?;
    let mut trailer = [0u8; crc::TRAILER_LEN];
    trailer.copy_from_slice(bytes);
    Ok(FlashCrc(trailer))
}

/// WRITE_FLASHROM: one chunk of a section. The request is read in place — its parameter block
/// (`flashrom_params` @16, the layout READ_FLASHROM shares, ufi-firmware.md §3.2) through the
/// shared codec, the chunk as a slice of the host's buffer — so the chunk is copied once, into
/// the staging buffer. A refused chunk drops the staged section.
pub(crate) fn write_flashrom(fw: &mut Firmware, hdr: &RequestHeader, buf: &[u8]) -> Reply {
    check_header::<WriteFlashrom<'static>>(hdr)?;
    chunk_faults(fw)?;
    let result = write_chunk(fw, hdr, buf);
    if result.is_err() {
        fw.card().staging.clear();
    }
    result.map(|()| (Vec::new(), Owed::default()))
}

/// Stages the chunk in `buf`, and commits the section when it is the FLASH op.
fn write_chunk(fw: &mut Firmware, hdr: &RequestHeader, buf: &[u8]) -> Result<(), CompletionStatus> {
    let params = ReadFlashrom::decode(&mut Reader::at(buf, HEADER_LEN))
        .map_err(|_| CompletionStatus::from(STATUS_BAD_LENGTH))?;
    let len = params.data_buf_size as usize;
    if len > WriteFlashrom::CHUNK {
        return Err(illegal_field());
    }
    // The chunk must lie inside the request the header declares.
    let declared = HEADER_LEN.saturating_add(hdr.request_length as usize).min(buf.len());
    let end = WriteFlashrom::DATA_OFFSET + len;
    let data = buf
        .get(WriteFlashrom::DATA_OFFSET..end)
        .filter(|_| end <= declared)
        .ok_or(CompletionStatus::from(STATUS_BAD_LENGTH))?;
    let at = match params.op_type {
        FlashOpType::OffsetSpecified if fw.card().state.faults.no_offset_mode => return Err(illegal_field()),
        FlashOpType::OffsetSpecified => Chunk::Offset(u64::from(params.offset)),
        op_type => Chunk::OpType(op_type.raw()),
    };
    let commit = match params.op_code {
        FlashromOp::Save => false,
        FlashromOp::Flash => true,
        _ => return Err(illegal_field()),
    };
    {
        let mut card = fw.card();
        let card = &mut *card;
        let flash = &card.flash;
        card.staging.stage(at, data, |op_type| flash.region(op_type)).map_err(|_| illegal_field())?;
    }
    if commit { commit_section(fw) } else { Ok(()) }
}

/// The FLASH op: checks the staged section's CRC trailer (design.md §6), then writes it to
/// flash and flushes it before answering. The staging is dropped either way.
fn commit_section(fw: &mut Firmware) -> Result<(), CompletionStatus> {
    enum Outcome {
        Written { offset: usize, len: usize },
        Refused,
        CrcMismatch,
        WriteFailed(String),
    }
    let outcome = {
        let mut card = fw.card();
        let card = &mut *card;
        let outcome = match card.staging.section() {
            Err(_) => Outcome::Refused,
            Ok((start, section)) if crc::check_section(section).is_some_and(|c| c.is_ok()) => {
                match card.flash.write(start, section) {
                    Ok(()) => Outcome::Written { offset: start, len: section.len() },
                    Err(e) => Outcome::WriteFailed(e.to_string()),
                }
            }
            Ok(_) => Outcome::CrcMismatch,
        };
        card.staging.clear();
        outcome
    };
    match outcome {
        Outcome::Written { offset, len } => {
            fw.log(Event::FlashCommitted { offset: offset as u64, len: len as u64 });
            Ok(())
        }
        Outcome::Refused => Err(illegal_field()),
        Outcome::CrcMismatch => Err(failed(AdditionalStatus::FlashImageCrcMismatch)),
        Outcome::WriteFailed(message) => {
            fw.log(Event::StateSaveFailed { message });
            Err(failed(AdditionalStatus::None))
        }
    }
}

/// FAILED (1) with `additional`: how the emulated firmware reports every flash failure.
fn failed(additional: AdditionalStatus) -> CompletionStatus {
    CompletionStatus::new(BaseStatus::Failed, additional)
}

/// The chunk-counting flash faults, checked for every WRITE_FLASHROM the firmware receives:
/// `power-loss-at` (the adapter dies now, the chunk is lost) and `flash-fail-at` (the chunk fails
/// with MGMT_FLASHROM_SAVE_FAILED and stages nothing). Their countdowns are saved as they move.
fn chunk_faults(fw: &mut Firmware) -> Result<(), CompletionStatus> {
    let mut card = fw.card();
    let faults = &mut card.state.faults;
    if faults.power_loss_at.is_none() && faults.flash_fail_at.is_none() {
        return Ok(());
    }
    let mut fired = None;
    if let Some(n) = faults.power_loss_at {
        faults.power_loss_at = n.checked_sub(1).filter(|&left| left > 0);
        if n <= 1 {
            fired = Some(FaultSpec::PowerLossAt { chunk: n });
        }
    }
    if let Some(n) = faults.flash_fail_at
        && fired.is_none()
    {
        // It stays at 1: every chunk from the N-th on fails until the fault is cleared.
        faults.flash_fail_at = Some(n.saturating_sub(1).max(1));
        if n <= 1 {
            fired = Some(FaultSpec::FlashFailAt { chunk: n });
        }
    }
    drop(card);
    match fired {
        Some(fault @ FaultSpec::PowerLossAt { .. }) => {
            fw.log(Event::FaultTriggered { fault });
            fw.lose_power();
            Err(failed(AdditionalStatus::None))
        }
        Some(fault) => {
            fw.log(Event::FaultTriggered { fault });
            fw.card().staging.clear();
            fw.save_or_log();
            Err(failed(AdditionalStatus::from_raw(ADDL_FLASH_SAVE_FAILED)))
        }
        None => {
            fw.save_or_log();
            Ok(())
        }
    }
}
