//! The transport end to end over a socketpair: discovery, region access, DMA through shared
//! memory and through messages, interrupts, reset.

mod common;

use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

use common::{count, eventfd, memfd, negotiated};
use oce_emulator_serve::client::ClientError;
use oce_emulator_serve::protocol::{IrqInfo, Reader, Request};
use oce_emulator_serve::testing::{BAR0_LEN, TEST_ID, regs};
use oce_emulator_serve::{CONFIG_REGION, DmaSpace, Interrupt, Outcome};

const COMMAND: u64 = 4;
const MASTER: u32 = 1 << 2;
const INTX_DISABLE: u32 = 1 << 10;

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

#[test]
fn discovery_answers_the_layout() {
    let mut s = negotiated();
    let info = s.client.request(&Request::DeviceGetInfo, &[]).unwrap();
    assert_eq!((u32_at(&info.payload, 4), u32_at(&info.payload, 8), u32_at(&info.payload, 12)), (3, 9, 5));
    let region = |s: &mut common::Served, index| {
        let r = s.client.request(&Request::RegionInfo { index }, &[]).unwrap();
        let mut rd = Reader::new(&r.payload[16..]);
        (u32_at(&r.payload, 4), rd.u64("size").unwrap())
    };
    assert_eq!(region(&mut s, 0), (3, BAR0_LEN));
    assert_eq!(region(&mut s, 4), (0, 0));
    assert_eq!(region(&mut s, CONFIG_REGION), (3, 256));
    assert!(matches!(s.client.request(&Request::RegionInfo { index: 9 }, &[]), Err(ClientError::Errno(22))));
    let irq = |s: &mut common::Served, index| {
        let r = s.client.request(&Request::IrqInfo { index }, &[]).unwrap();
        IrqInfo { flags: u32_at(&r.payload, 4), index: u32_at(&r.payload, 8), count: u32_at(&r.payload, 12) }
    };
    assert_eq!(irq(&mut s, 0), IrqInfo { flags: 7, index: 0, count: 1 });
    assert_eq!(irq(&mut s, 2), IrqInfo { flags: 9, index: 2, count: 4 });
    assert_eq!(s.client.read32(CONFIG_REGION, 0).unwrap(), TEST_ID);
    assert_eq!(s.finish(), Outcome::Disconnected);
}

#[test]
fn register_access_posted_and_not() {
    let mut s = negotiated();
    s.client.write32(0, regs::ECHO, 0xDEAD_BEEF).unwrap();
    assert_eq!(s.client.read32(0, regs::ECHO).unwrap(), 0xDEAD_BEEF);
    s.client.post(&Request::RegionWrite { offset: regs::ECHO, region: 0, data: &7u32.to_le_bytes() }).unwrap();
    // The posted write got no reply: the next reply is the read's.
    assert_eq!(s.client.read32(0, regs::ECHO).unwrap(), 7);
    // Byte access to config space.
    s.client.write(CONFIG_REGION, COMMAND, &[0x06]).unwrap();
    assert_eq!(s.client.read(CONFIG_REGION, COMMAND, 2).unwrap(), vec![0x06, 0]);
    s.client.reset().unwrap();
    assert_eq!(s.client.read32(0, regs::ECHO).unwrap(), 0);
    assert_eq!(s.client.read32(CONFIG_REGION, COMMAND).unwrap() & 0xFFFF, 0);
    s.finish();
}

fn go(s: &mut common::Served, src: u64, dst: u64, n: u32) -> u32 {
    for (reg, addr) in [(regs::SRC, src), (regs::DST, dst)] {
        s.client.write32(0, reg, addr as u32).unwrap();
        s.client.write32(0, reg + 4, (addr >> 32) as u32).unwrap();
    }
    s.client.write32(0, regs::GO, n).unwrap();
    s.client.read32(0, regs::STATUS).unwrap()
}

#[test]
fn a_copy_longer_than_the_devices_buffer_is_whole_and_a_length_of_4_gib_is_a_fault() {
    let mut s = negotiated();
    s.client.write32(CONFIG_REGION, COMMAND, MASTER).unwrap();
    // 160 KiB each way: more than two of the test device's 64 KiB steps, and a part step.
    const LEN: usize = 160 * 1024;
    let ram = memfd(2 * LEN as u64);
    let iova = 0x2_0000_0000u64;
    s.client.map_file(iova, 2 * LEN as u64, &ram, 0).unwrap();
    let pattern: Vec<u8> = (0..LEN as u32).map(|i| (i * 13 + i / 251) as u8).collect();
    ram.write_all_at(&pattern, 0).unwrap();
    assert_eq!(go(&mut s, iova, iova + LEN as u64, LEN as u32), 0);
    let mut out = vec![0u8; LEN];
    ram.read_exact_at(&mut out, LEN as u64).unwrap();
    assert!(out.iter().zip(&pattern).all(|(o, p)| *o == !*p), "every byte complemented, in order");
    // A length the guest chose, past every mapping: a DMA fault where the mapping ends.
    assert_eq!(go(&mut s, iova, iova + LEN as u64, u32::MAX), 1);
    assert_eq!(go(&mut s, iova, iova + LEN as u64, 64), 0, "the session goes on");
    s.finish();
}

#[test]
fn dma_through_shared_memory_split_at_every_page_mapping() {
    let mut s = negotiated();
    s.client.write32(CONFIG_REGION, COMMAND, MASTER).unwrap();
    // Guest RAM as a memfd; behind a vIOMMU each IOVA page is its own mapping, at scattered
    // file offsets (recipes/vfio-user-qemu.md pitfall 6).
    let ram = memfd(64 * 1024);
    let iova = 0x1_0000_0000u64;
    for (page, file_page) in [(0u64, 7u64), (1, 2), (2, 9), (3, 4)] {
        s.client.map_file(iova + page * 4096, 4096, &ram, file_page * 4096).unwrap();
    }
    let pattern: Vec<u8> = (0..6000u32).map(|i| (i * 7 + 3) as u8).collect();
    // Bytes 0..4096 of the source live in file page 7, 4096.. in file page 2.
    ram.write_all_at(&pattern[..4096], 7 * 4096).unwrap();
    ram.write_all_at(&pattern[4096..], 2 * 4096).unwrap();
    // The device reads 6000 bytes across pages 0-1, writes their complement across pages 2-3 at an odd offset.
    assert_eq!(go(&mut s, iova, iova + 2 * 4096 + 100, 6000), 0);
    let mut out = vec![0u8; 6000];
    ram.read_exact_at(&mut out[..3996], 9 * 4096 + 100).unwrap();
    ram.read_exact_at(&mut out[3996..], 4 * 4096).unwrap();
    assert!(out.iter().zip(&pattern).all(|(o, p)| *o == !*p));
    assert_eq!(s.dma.region_count(), 4);
    // A map over a mapped page is refused (EEXIST); unmaps of ranges never mapped are fine.
    assert!(matches!(s.client.map_file(iova, 4096, &ram, 0), Err(ClientError::Errno(17))));
    s.client.unmap(0x5000_0000, 0x1000).unwrap();
    s.client.unmap(iova, 2 * 4096).unwrap();
    assert_eq!(s.dma.region_count(), 2);
    // QEMU's shutdown burst: a range whose end is past 2^64 covers everything above its start.
    s.client.unmap(0xfef0_0000, 0xffff_ffff_0110_0000).unwrap();
    assert_eq!(s.dma.region_count(), 0);
    s.finish();
}

#[test]
fn dma_through_messages_when_memory_comes_without_a_descriptor() {
    let mut s = negotiated();
    s.client.write32(CONFIG_REGION, COMMAND, MASTER).unwrap();
    let base = 0x2000_0000u64;
    let mut memory = vec![0u8; 8192];
    memory[..16].copy_from_slice(b"OCETOOL VFU DMA!");
    s.client.map_messages(base, memory).unwrap();
    assert_eq!(go(&mut s, base, base + 4096, 16), 0);
    let written = s.client.lent(base + 4096, 16).unwrap().to_vec();
    assert_eq!(written, b"OCETOOL VFU DMA!".iter().map(|b| !b).collect::<Vec<_>>());
    assert_eq!(s.client.dma_messages(), 2, "one DMA_READ, one DMA_WRITE");
    s.finish();
}

#[test]
fn another_thread_can_do_dma_and_interrupts_while_the_server_serves() {
    let mut s = negotiated();
    let base = 0x3000_0000u64;
    s.client.map_messages(base, b"from another thread".to_vec()).unwrap();
    let msix = eventfd();
    s.client.set_eventfds(2, 3, &[msix.as_fd()]).unwrap();
    let (dma, irqs) = (s.dma.clone(), s.irqs.clone());
    let injector = std::thread::spawn(move || {
        let mut buf = [0u8; 19];
        let r = dma.read(base, &mut buf);
        irqs.signal(3);
        r.map(|()| buf)
    });
    // The client keeps talking (and so answers the DMA_READ) until the injector is done.
    for _ in 0..10_000 {
        if injector.is_finished() {
            break;
        }
        s.client.read32(0, regs::ECHO).unwrap();
    }
    assert_eq!(&injector.join().unwrap().unwrap(), b"from another thread");
    assert_eq!(count(&msix), 1);
    s.finish();
}

#[test]
fn intx_is_level_triggered_automasked_and_gated_by_the_command_register() {
    let mut s = negotiated();
    let fd = eventfd();
    s.client.set_eventfds(0, 0, &[fd.as_fd()]).unwrap();
    s.client.write32(0, regs::INTX, 1).unwrap();
    assert_eq!(count(&fd), 1);
    // Automasked: asserting again sends nothing until the client unmasks.
    s.client.write32(0, regs::INTX, 1).unwrap();
    assert_eq!(count(&fd), 0);
    let unmask = |s: &mut common::Served| {
        let set = oce_emulator_serve::protocol::SetIrqs { flags: 0x11, index: 0, start: 0, count: 1, bools: &[] };
        s.client.request(&Request::SetIrqs(set), &[]).unwrap();
    };
    // UNMASK with the level still high signals again (the guest's EOI of a still-pending line).
    unmask(&mut s);
    assert_eq!(count(&fd), 1);
    s.client.write32(0, regs::INTX, 0).unwrap();
    unmask(&mut s);
    assert_eq!(count(&fd), 0);
    // INTx disable in the command register keeps the line quiet; clearing it lets it through.
    s.client.write32(CONFIG_REGION, COMMAND, INTX_DISABLE).unwrap();
    s.client.write32(0, regs::INTX, 1).unwrap();
    assert_eq!(count(&fd), 0);
    s.client.write32(CONFIG_REGION, COMMAND, 0).unwrap();
    assert_eq!(count(&fd), 1);
    assert_eq!(s.irqs.sent().0, 3);
    s.finish();
}

#[test]
fn msix_vectors_need_bus_mastering_and_a_vector_without_eventfd_stays_pending() {
    let mut s = negotiated();
    let (v0, v1) = (eventfd(), eventfd());
    s.client.set_eventfds(2, 0, &[v0.as_fd(), v1.as_fd()]).unwrap();
    s.client.write32(0, regs::MSIX, 1).unwrap();
    assert_eq!(count(&v1), 0, "bus mastering is off");
    s.client.write32(CONFIG_REGION, COMMAND, MASTER).unwrap();
    s.client.write32(0, regs::MSIX, 1).unwrap();
    assert_eq!((count(&v0), count(&v1)), (0, 1));
    s.client.write32(0, regs::MSIX, 2).unwrap();
    let v2 = eventfd();
    s.client.set_eventfds(2, 2, &[v2.as_fd()]).unwrap();
    assert_eq!(count(&v2), 1, "the pending vector is sent when its eventfd arrives");
    // Vectors beyond the table are refused.
    let v9 = eventfd();
    assert!(matches!(s.client.set_eventfds(2, 4, &[v9.as_fd()]), Err(ClientError::Errno(22))));
    s.finish();
}
