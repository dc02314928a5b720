//! Configuration space through the byte-slice API: byte, word, dword and odd accesses, write
//! masks (capability registers included), the capability list, BAR sizing, FLR.

use oce_mailbox::regs::{MailboxDoorbell, Semaphore, SoftReset, UeStatus};

use super::{EXPRESS, TestDevice, device, device_with, read32, ring, write32};
use crate::assumptions::{MSIX_CAP_OFFSET, PCIE_CAP_OFFSET, VPD_CAP_OFFSET};
use crate::device::Shape;
use crate::events::Event;
use crate::function::FunctionType;

fn cfg(dev: &mut TestDevice, off: u16, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    dev.read_config(off, &mut data);
    data
}

fn cfg32(dev: &mut TestDevice, off: u16) -> u32 {
    u32::from_le_bytes(cfg(dev, off, 4).try_into().unwrap())
}

fn cfg16(dev: &mut TestDevice, off: u16) -> u16 {
    u16::from_le_bytes(cfg(dev, off, 2).try_into().unwrap())
}

#[test]
fn byte_word_and_dword_reads_see_the_same_bytes() {
    let (_d, mut dev) = device();
    assert_eq!(cfg32(&mut dev, 0x00), 0x0720_10DF);
    assert_eq!((cfg16(&mut dev, 0x00), cfg16(&mut dev, 0x02)), (0x10DF, 0x0720));
    assert_eq!(cfg(&mut dev, 0x00, 4), [0xDF, 0x10, 0x20, 0x07]);
    assert_eq!(cfg(&mut dev, 0x3D, 1), [0x01], "interrupt pin INTA");
    assert_eq!(cfg(&mut dev, 0x2C, 8), [0xDF, 0x10, 0x02, 0xE7, 0, 0, 0, 0], "a qword: subsystem, then the ROM BAR");
}

#[test]
fn unaligned_and_out_of_range_accesses_are_sane() {
    let (_d, mut dev) = device();
    assert_eq!(cfg(&mut dev, 0x01, 3), [0x10, 0x20, 0x07], "three bytes inside one dword");
    assert_eq!(cfg(&mut dev, 0x03, 2), [0x07, 0x00], "a word across two dwords");
    assert_eq!(cfg(&mut dev, 0xFFE, 4), [0, 0, 0xFF, 0xFF], "past the end reads all ones");
    assert_eq!(cfg(&mut dev, 0xFFFF, 2), [0xFF, 0xFF]);
    dev.write_config(0xFFE, &[0xAA; 4]);
    assert_eq!(cfg32(&mut dev, 0xFFC), 0, "nothing written, nothing past the end");
}

#[test]
fn a_byte_write_changes_only_its_byte_and_only_writable_bits() {
    let (_d, mut dev) = device();
    dev.write_config(0x04, &[0xFF]);
    assert_eq!(cfg32(&mut dev, 0x04), 0x0010_0046, "memory, bus master, parity of the low byte");
    dev.write_config(0x05, &[0xFF]);
    assert_eq!(cfg32(&mut dev, 0x04), 0x0010_0546, "SERR and INTx disable of the high byte");
    dev.write_config(0x06, &[0xFF, 0xFF]);
    assert_eq!(cfg32(&mut dev, 0x04), 0x0010_0546, "status bits are never set by software");
    dev.write_config(0x04, &[0x02, 0x00]);
    assert_eq!(cfg16(&mut dev, 0x04), 0x0002, "a word write");
    dev.write_config(0x3C, &[0x0B]);
    assert_eq!(cfg16(&mut dev, 0x3C), 0x010B, "interrupt line is writable, the pin is not");
}

#[test]
fn a_dword_side_effect_happens_once_per_access() {
    let (_d, mut dev) = device();
    dev.power_cycle().unwrap();
    assert_eq!(cfg(&mut dev, Semaphore::OFFSET + 1, 1), [0x00], "stage 0x0000");
    assert_eq!(cfg16(&mut dev, Semaphore::OFFSET), 0x0001, "one read, one step");
    assert_eq!(cfg(&mut dev, Semaphore::OFFSET, 8)[..2], [0x02, 0x00], "a wide read steps once too");
    assert_eq!(cfg32(&mut dev, Semaphore::OFFSET), 0xC000);
}

#[test]
fn the_express_capability_list_is_pm_vpd_msix_pcie() {
    let (_d, mut dev) = device();
    assert_ne!(cfg16(&mut dev, 0x06) & (1 << 4), 0, "capability list present");
    let mut found = Vec::new();
    let mut at = cfg(&mut dev, 0x34, 1)[0];
    while at != 0 {
        let [id, next] = cfg(&mut dev, at.into(), 2).try_into().unwrap();
        found.push((at, id));
        at = next;
    }
    let vpd = VPD_CAP_OFFSET as u8;
    assert_eq!(found, [(0x40, 0x01), (vpd, 0x03), (MSIX_CAP_OFFSET as u8, 0x11), (PCIE_CAP_OFFSET as u8, 0x10)]);
}

#[test]
fn the_polled_shape_lists_power_management_and_vpd_only() {
    let (_d, mut dev) = device_with(FunctionType::Pf, Shape::Polled);
    assert_eq!(cfg(&mut dev, 0x34, 1), [0x40]);
    assert_eq!(cfg16(&mut dev, 0x40), (VPD_CAP_OFFSET << 8) | 0x01, "PM, then VPD");
    assert_eq!(cfg16(&mut dev, VPD_CAP_OFFSET), 0x0003, "VPD, end of list");
    assert_eq!(dev.msix(), None);
}

#[test]
fn msix_capability_registers_and_their_write_mask() {
    let (_d, mut dev) = device();
    let cap = MSIX_CAP_OFFSET;
    assert_eq!(cfg16(&mut dev, cap + 2), 31, "table size 32, disabled, unmasked");
    assert_eq!(cfg32(&mut dev, cap + 4), 0x2000, "table at BAR0 + 0x2000");
    assert_eq!(cfg32(&mut dev, cap + 8), 0x3000, "PBA at BAR0 + 0x3000");
    dev.write_config(cap + 2, &0xFFFFu16.to_le_bytes());
    assert_eq!(cfg16(&mut dev, cap + 2), 0xC01F, "only enable and function mask are writable");
    dev.write_config(cap + 4, &[0xFF; 8]);
    assert_eq!((cfg32(&mut dev, cap + 4), cfg32(&mut dev, cap + 8)), (0x2000, 0x3000));
    dev.write_config(cap, &[0xFF, 0xFF]);
    assert_eq!(cfg16(&mut dev, cap), (u16::from(PCIE_CAP_OFFSET as u8) << 8) | 0x11, "ID and next are read-only");
}

#[test]
fn pci_express_capability_registers_and_their_write_masks() {
    let (_d, mut dev) = device();
    let cap = PCIE_CAP_OFFSET;
    assert_eq!(cfg16(&mut dev, cap + 2), 0x0002, "version 2, endpoint");
    assert_ne!(cfg32(&mut dev, cap + 4) & (1 << 28), 0, "FLR capable");
    assert_eq!(cfg16(&mut dev, cap + 8), 0x2810, "device control defaults");
    dev.write_config(cap + 8, &0x7FFFu16.to_le_bytes());
    assert_eq!(cfg16(&mut dev, cap + 8), 0x79FF);
    dev.write_config(cap + 0x10, &[0xFF; 4]);
    assert_eq!(cfg32(&mut dev, cap + 0x10), 0x1083_00CB, "link control writable, link status (Gen3 x8) not");
    assert_eq!(cfg32(&mut dev, cap + 0x2C), 0x0E, "2.5, 5 and 8 GT/s supported");
}

#[test]
fn express_bars_size_to_16_kib_and_64_kib() {
    let (_d, mut dev) = device();
    assert_eq!((dev.bar_len(0), dev.bar_len(2), dev.bar_len(4)), (Some(0x4000), None, Some(0x1_0000)));
    dev.write_config(0x10, &[0xFF; 4]);
    assert_eq!(cfg32(&mut dev, 0x10), 0xFFFF_C004, "BAR0: 64-bit memory, 16 KiB");
    dev.write_config(0x20, &[0xFF; 8]);
    assert_eq!((cfg32(&mut dev, 0x20), cfg32(&mut dev, 0x24)), (0xFFFF_0004, 0xFFFF_FFFF), "BAR4: 64 KiB");
    dev.write_config(0x18, &[0xFF; 4]);
    assert_eq!(cfg32(&mut dev, 0x18), 0, "no BAR2");
}

#[test]
fn an_express_vf_has_one_16_kib_bar_and_no_intx_pin() {
    let (_d, mut dev) = device_with(FunctionType::Vf, EXPRESS);
    assert_eq!((dev.bar_len(0), dev.bar_len(4)), (Some(0x4000), None));
    assert_eq!(cfg(&mut dev, 0x3D, 1), [0]);
    assert!(!dev.has_intx());
    assert_eq!(read32(&mut dev, 0, 0x1000 + u64::from(Semaphore::OFFSET)), 0xC000, "the shadow is where it was");
}

#[test]
fn a_gone_device_reads_all_ones_at_every_width() {
    let (_d, mut dev) = device();
    dev.firmware_mut().set_fault(crate::faults::FaultSpec::Gone).unwrap();
    assert_eq!(cfg(&mut dev, 0x00, 1), [0xFF]);
    assert_eq!(cfg16(&mut dev, 0x02), 0xFFFF);
    assert_eq!(read32(&mut dev, 0, 0x2000), u32::MAX);
    dev.reset();
    assert!(!dev.firmware().events().contains(&Event::FunctionReset), "a gone device ignores a reset");
}

#[test]
fn function_level_reset_restores_configuration_and_keeps_the_firmware_running() {
    let (_d, mut dev) = device();
    dev.write_config(0x04, &[0x06]);
    dev.write_config(0x10, &[0xFF; 4]);
    write32(&mut dev, 0, u64::from(UeStatus::LOW_MASK_OFFSET), 0xFFFF);
    dev.write_config(MSIX_CAP_OFFSET + 3, &[0x80]);
    // Initiate FLR (Device Control bit 15), by a word write as a kernel does it.
    dev.write_config(PCIE_CAP_OFFSET + 8, &0xA810u16.to_le_bytes());
    assert_eq!(cfg16(&mut dev, 0x04), 0, "command register cleared");
    assert_eq!(cfg32(&mut dev, 0x10), 0x0004, "BAR0 back to its power-on address");
    assert_eq!(read32(&mut dev, 0, u64::from(UeStatus::LOW_MASK_OFFSET)), 0);
    assert_eq!(cfg16(&mut dev, MSIX_CAP_OFFSET + 2), 31, "MSI-X disabled");
    assert_eq!(cfg16(&mut dev, PCIE_CAP_OFFSET + 8), 0x2810, "FLR reads 0");
    assert_eq!(cfg32(&mut dev, Semaphore::OFFSET), 0xC000, "no POST: the firmware kept running");
    let events = dev.firmware().events();
    assert!(events.contains(&Event::FunctionReset) && !events.iter().any(|e| matches!(e, Event::Boot { .. })));
}

#[test]
fn reset_drops_a_half_posted_mailbox() {
    let (_d, mut dev) = device();
    let db = u64::from(MailboxDoorbell::OFFSET);
    write32(&mut dev, 4, db, MailboxDoorbell::hi_for(0x10_0000).0);
    dev.reset();
    write32(&mut dev, 4, db, MailboxDoorbell::lo_for(0x10_0000).0);
    let lo = MailboxDoorbell::lo_for(0x10_0000).0;
    assert!(dev.firmware().events().contains(&Event::LoBeforeHi { value: lo }), "the HI latch is gone");
    assert_eq!(ring(&mut dev, 0x10_0000), MailboxDoorbell::RDY, "the mailbox works after the reset");
}

#[test]
fn a_chip_reset_keeps_configuration_space() {
    let (_d, mut dev) = device();
    dev.write_config(0x04, &[0x06]);
    dev.write_config(SoftReset::OFFSET as u16, &[SoftReset::SR as u8]);
    assert_eq!(cfg16(&mut dev, 0x04), 0x0006);
    assert_eq!(cfg32(&mut dev, Semaphore::OFFSET), 0x0000, "POST restarted");
}
