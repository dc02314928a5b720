//! The bootstrap mailbox through a foreign DMA space: commands run by copying in and out, and a
//! bus address the device cannot reach fails the command with a status and an event.

use oce_mailbox::command::{decode_response, encode_request};
use oce_mailbox::commands::GetFwVersion;
use oce_mailbox::regs::MailboxDoorbell;
use oce_mailbox::status::{BaseStatus, CompletionStatus};
use oce_mailbox::wrb::{MAILBOX_LEN, Sge, WRB_PAYLOAD_OFFSET, Wrb, WrbPayload};

use super::{completion, device, post_wrb, ring};
use crate::assumptions::STATUS_DMA_FAULT;
use crate::events::Event;

const MAILBOX: u64 = 0x10_0000;
const BUFFER: u64 = 0x20_0000;

fn non_embedded(len: u32) -> Wrb {
    Wrb {
        payload_length: len,
        tags: [0x11, 0x22],
        payload: WrbPayload::NonEmbedded(vec![Sge { address: BUFFER, len }]),
    }
}

#[test]
fn an_embedded_command_runs_through_the_dma_space() {
    let (_d, mut dev) = device();
    dev.dma().map(MAILBOX, 4096, true);
    let request = encode_request(&GetFwVersion).unwrap();
    let wrb = Wrb { payload_length: request.len() as u32, tags: [7, 8], payload: WrbPayload::Embedded(request) };
    post_wrb(dev.dma(), MAILBOX, &wrb);
    assert_eq!(ring(&mut dev, MAILBOX), MailboxDoorbell::RDY);
    let done = completion(dev.dma(), MAILBOX);
    assert!(done.is_valid() && done.status.is_success() && done.tags == [7, 8], "{done:?}");
    let area = dev.dma().peek(MAILBOX + WRB_PAYLOAD_OFFSET as u64, 236);
    let (_, version) = decode_response::<GetFwVersion>(&area).unwrap();
    assert_eq!(version.running, crate::assumptions::FACTORY_FIRMWARE_VERSION);
    assert!(dev.interrupt().take().is_empty(), "the bootstrap mailbox is polled: no interrupt");
}

#[test]
fn an_sge_that_maps_nowhere_fails_the_command_with_a_status_and_an_event() {
    let (_d, mut dev) = device();
    dev.dma().map(MAILBOX, 4096, true);
    post_wrb(dev.dma(), MAILBOX, &non_embedded(64));
    ring(&mut dev, MAILBOX);
    let done = completion(dev.dma(), MAILBOX);
    assert!(done.is_valid(), "the failure is reported, not withheld");
    assert_eq!(done.status, CompletionStatus::from(STATUS_DMA_FAULT));
    assert!(dev.firmware().events().contains(&Event::DmaFault { iova: BUFFER, len: 64 }));
}

#[test]
fn a_response_the_device_may_not_write_fails_the_command() {
    let (_d, mut dev) = device();
    dev.dma().map(MAILBOX, 4096, true);
    dev.dma().map(BUFFER, 4096, false);
    let request = encode_request(&GetFwVersion).unwrap();
    dev.dma().poke(BUFFER, &request);
    post_wrb(dev.dma(), MAILBOX, &non_embedded(request.len() as u32));
    ring(&mut dev, MAILBOX);
    assert_eq!(completion(dev.dma(), MAILBOX).status.base, BaseStatus::Failed);
    let events = dev.firmware().events();
    assert!(events.iter().any(|e| matches!(e, Event::Command { opcode: 35, status, .. } if status.is_success())));
    assert!(events.contains(&Event::DmaFault { iova: BUFFER, len: request.len() }));
    assert_eq!(dev.dma().peek(BUFFER, request.len()), request, "the host's buffer is untouched");
}

#[test]
fn an_unreachable_mailbox_writes_no_completion() {
    let (_d, mut dev) = device();
    dev.dma().map(MAILBOX + 4096, 4096, true);
    assert_eq!(ring(&mut dev, MAILBOX), MailboxDoorbell::RDY);
    assert!(dev.firmware().events().contains(&Event::DmaFault { iova: MAILBOX, len: MAILBOX_LEN }));
}

#[test]
fn a_mailbox_just_below_a_mapping_is_reported_as_unaligned_and_ignored() {
    let (_d, mut dev) = device();
    dev.dma().map(MAILBOX + 8, 4096, true);
    assert_eq!(ring(&mut dev, MAILBOX), MailboxDoorbell::RDY);
    let events = dev.firmware().events();
    assert!(events.contains(&Event::UnalignedMailbox { address: MAILBOX + 8 }), "{events:?}");
    assert!(!events.iter().any(|e| matches!(e, Event::DmaFault { .. })), "nothing was fetched");
}
