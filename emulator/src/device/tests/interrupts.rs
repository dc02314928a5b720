//! Interrupt mechanics: MSI-X enable, function mask, vector masks, the PBA, delivery on unmask,
//! bus-master gating, INTx with Interrupt Disable and status bit 3, the transport-owned table,
//! and what a reset does to all of it.

use super::{EXPRESS, Irq, TestDevice, device, device_with, read32, write32};
use crate::assumptions::MSIX_CAP_OFFSET;
use crate::device::{Shape, TableOwner};
use crate::events::{Event, MsixBlock};
use crate::function::FunctionType;

const TABLE: u64 = 0x2000;
const PBA: u64 = 0x3000;
/// Message Control's high byte: MSI-X Enable (bit 7) and Function Mask (bit 6).
const ENABLE: u8 = 0x80;
const FUNCTION_MASK: u8 = 0x40;

fn message_control(dev: &mut TestDevice, high_byte: u8) {
    dev.write_config(MSIX_CAP_OFFSET + 3, &[high_byte]);
}

fn bus_master(dev: &mut TestDevice, on: bool) {
    dev.write_config(0x04, &[if on { 0x06 } else { 0x02 }]);
}

fn unmask(dev: &mut TestDevice, vector: u64) {
    write32(dev, 0, TABLE + vector * 16 + 12, 0);
}

fn status(dev: &mut TestDevice) -> u16 {
    let mut s = [0u8; 2];
    dev.read_config(0x06, &mut s);
    u16::from_le_bytes(s)
}

fn blocked(dev: &TestDevice) -> Vec<MsixBlock> {
    dev.firmware()
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::MsixBlocked { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

/// MSI-X enabled, bus mastering on, `vector` unmasked.
fn ready(dev: &mut TestDevice, vector: u64) {
    message_control(dev, ENABLE);
    bus_master(dev, true);
    unmask(dev, vector);
}

#[test]
fn msix_needs_enable_and_bus_master() {
    let (_d, mut dev) = device();
    unmask(&mut dev, 0);
    dev.raise_msix(0);
    message_control(&mut dev, ENABLE);
    dev.raise_msix(0);
    assert_eq!(blocked(&dev), [MsixBlock::Disabled, MsixBlock::BusMasterOff]);
    assert!(dev.interrupt().take().is_empty());
    assert_eq!(read32(&mut dev, 0, PBA), 0, "blocked vectors are not pending");
    bus_master(&mut dev, true);
    dev.raise_msix(0);
    assert_eq!(dev.interrupt().take(), [Irq::Msix(0)]);
}

#[test]
fn table_entries_take_byte_dword_and_qword_writes() {
    let (_d, mut dev) = device();
    dev.write_bar(0, TABLE + 16, &0x0000_0001_FEE0_1003u64.to_le_bytes());
    write32(&mut dev, 0, TABLE + 24, 0x4021);
    assert_eq!(read32(&mut dev, 0, TABLE + 16), 0xFEE0_1000, "address bits 1:0 read 0");
    assert_eq!((read32(&mut dev, 0, TABLE + 20), read32(&mut dev, 0, TABLE + 24)), (1, 0x4021));
    assert_eq!(read32(&mut dev, 0, TABLE + 28), 1, "masked out of reset");
    dev.write_bar(0, TABLE + 28, &[0]);
    assert_eq!(read32(&mut dev, 0, TABLE + 28), 0);
}

#[test]
fn a_masked_vector_is_pending_until_unmasked() {
    let (_d, mut dev) = device();
    ready(&mut dev, 0);
    dev.raise_msix(2);
    assert!(dev.interrupt().take().is_empty());
    assert_eq!(read32(&mut dev, 0, PBA), 1 << 2);
    write32(&mut dev, 0, PBA, 0);
    assert_eq!(read32(&mut dev, 0, PBA), 1 << 2, "the PBA is read-only");
    unmask(&mut dev, 2);
    assert_eq!(dev.interrupt().take(), [Irq::Msix(2)]);
    assert_eq!(read32(&mut dev, 0, PBA), 0);
}

#[test]
fn the_function_mask_holds_every_vector() {
    let (_d, mut dev) = device();
    ready(&mut dev, 1);
    message_control(&mut dev, ENABLE | FUNCTION_MASK);
    dev.raise_msix(1);
    dev.raise_msix(1);
    assert!(dev.interrupt().take().is_empty());
    assert_eq!(read32(&mut dev, 0, PBA), 1 << 1);
    message_control(&mut dev, ENABLE);
    assert_eq!(dev.interrupt().take(), [Irq::Msix(1)], "one message for what was pending");
}

#[test]
fn pending_vectors_wait_for_bus_mastering() {
    let (_d, mut dev) = device();
    message_control(&mut dev, ENABLE);
    bus_master(&mut dev, true);
    dev.raise_msix(3);
    bus_master(&mut dev, false);
    unmask(&mut dev, 3);
    assert!(dev.interrupt().take().is_empty());
    assert_eq!(read32(&mut dev, 0, PBA), 1 << 3);
    bus_master(&mut dev, true);
    assert_eq!(dev.interrupt().take(), [Irq::Msix(3)]);
}

#[test]
fn vectors_outside_the_table_or_without_msix_are_refused() {
    let (_d, mut dev) = device();
    ready(&mut dev, 0);
    dev.raise_msix(32);
    let (_d2, mut polled) = device_with(FunctionType::Pf, Shape::Polled);
    polled.raise_msix(0);
    assert_eq!(blocked(&dev), [MsixBlock::NoSuchVector]);
    assert_eq!(blocked(&polled), [MsixBlock::NotImplemented]);
    assert!(dev.interrupt().take().is_empty() && polled.interrupt().take().is_empty());
}

#[test]
fn intx_follows_the_level_interrupt_disable_and_msix_enable() {
    let (_d, mut dev) = device();
    dev.set_intx(true);
    assert_eq!(dev.interrupt().take(), [Irq::Level(true)]);
    assert_eq!(status(&mut dev) & (1 << 3), 1 << 3, "interrupt status");
    dev.write_config(0x05, &[0x04]);
    assert_eq!(dev.interrupt().take(), [Irq::Level(false)], "Interrupt Disable");
    assert_eq!(status(&mut dev) & (1 << 3), 1 << 3, "interrupt status shows the level regardless");
    assert!(!dev.intx_asserted());
    dev.write_config(0x05, &[0x00]);
    message_control(&mut dev, ENABLE);
    message_control(&mut dev, 0);
    assert_eq!(dev.interrupt().take(), [Irq::Level(true), Irq::Level(false), Irq::Level(true)]);
    dev.set_intx(true);
    assert!(dev.interrupt().take().is_empty(), "the line is driven only on a change");
    dev.set_intx(false);
    assert_eq!(dev.interrupt().take(), [Irq::Level(false)]);
    assert_eq!(status(&mut dev) & (1 << 3), 0);
}

#[test]
fn an_express_vf_drives_no_intx() {
    let (_d, mut dev) = device_with(FunctionType::Vf, EXPRESS);
    dev.set_intx(true);
    assert!(dev.interrupt().take().is_empty());
    assert!(!dev.intx_asserted());
}

#[test]
fn a_transport_owned_table_leaves_masking_to_the_transport() {
    let (_d, mut dev) = device_with(FunctionType::Pf, Shape::Express { msix_table: TableOwner::Transport });
    assert_eq!((read32(&mut dev, 0, TABLE + 12), read32(&mut dev, 0, PBA)), (u32::MAX, u32::MAX), "not decoded");
    dev.raise_msix(5);
    message_control(&mut dev, ENABLE | FUNCTION_MASK);
    bus_master(&mut dev, true);
    dev.raise_msix(5);
    assert_eq!(dev.interrupt().take(), [Irq::Msix(5)], "sent under the function mask: the transport masks");
    assert_eq!(blocked(&dev), [MsixBlock::Disabled]);
    bus_master(&mut dev, false);
    dev.raise_msix(5);
    assert!(dev.interrupt().take().is_empty(), "bus mastering still gates");
}

#[test]
fn a_reset_disables_msix_clears_pending_and_deasserts_intx() {
    let (_d, mut dev) = device();
    dev.set_intx(true);
    ready(&mut dev, 0);
    dev.raise_msix(4);
    assert_eq!(dev.interrupt().take(), [Irq::Level(true), Irq::Level(false)], "MSI-X enable took INTx off");
    message_control(&mut dev, 0);
    assert_eq!(dev.interrupt().take(), [Irq::Level(true)]);
    dev.reset();
    assert_eq!(dev.interrupt().take(), [Irq::Level(false)]);
    assert!(!dev.msix_enabled());
    assert_eq!((read32(&mut dev, 0, PBA), read32(&mut dev, 0, TABLE + 12)), (0, 1), "PBA clear, vector 0 masked");
    assert_eq!(status(&mut dev) & (1 << 3), 0);
}
