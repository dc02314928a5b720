//! Configuration space and BAR0, one test per register behaviour.

mod common;

use common::{fresh, pcicfg};
use oce_emulator::Faults;
use oce_mailbox::regs::{AsicId, IntCtrl, SliIntf, UeStatus};
use oce_pci::{ConfigSpace, PciError, PciFunction, RegisterIo};

#[test]
fn ids_class_and_subsystem() {
    let (_d, emu) = fresh();
    let cfg = emu.config();
    assert_eq!(cfg.read32(0x00).unwrap(), 0x0720_10DF, "10df:0720");
    assert_eq!(cfg.read32(0x08).unwrap() >> 8, 0x02_00_00, "class: network / Ethernet");
    assert_eq!(cfg.read32(0x2C).unwrap(), 0xE702_10DF, "subsystem 10df:e702");
}

#[test]
fn sli_intf_reads_the_inferred_pf_value_and_is_read_only() {
    let (_d, emu) = fresh();
    let cfg = emu.config();
    assert_eq!(cfg.read32(SliIntf::OFFSET).unwrap(), 0xC000_0F40);
    cfg.write32(SliIntf::OFFSET, 0).unwrap();
    let sli = SliIntf(cfg.read32(SliIntf::OFFSET).unwrap());
    assert!(sli.is_valid() && !sli.is_vf());
    assert_eq!((sli.if_type(), sli.family(), sli.sli_rev()), (0, 0xF, 4));
}

#[test]
fn asic_id_is_skyhawk_generation_and_read_only() {
    let (_d, emu) = fresh();
    let cfg = emu.config();
    cfg.write32(AsicId::OFFSET, 0xFFFF_FFFF).unwrap();
    let id = AsicId(cfg.read32(AsicId::OFFSET).unwrap());
    assert_eq!((id.generation(), id.revision()), (0x04, 0x10));
}

#[test]
fn command_register_write_mask() {
    let (_d, emu) = fresh();
    let cfg = emu.config();
    cfg.write32(0x04, 0xFFFF_FFFF).unwrap();
    // memory, bus master, parity, SERR, INTx disable; status bit 4 = capability list (read-only).
    assert_eq!(cfg.read32(0x04).unwrap(), 0x0010_0546);
    cfg.write32(0x04, 0).unwrap();
    assert_eq!(cfg.read32(0x04).unwrap(), 0x0010_0000);
}

#[test]
fn bar_registers_report_their_size_when_sized() {
    let (_d, emu) = fresh();
    let cfg = emu.config();
    // BAR0: 64-bit memory BAR of 4 KiB; BAR4: 64-bit memory BAR of 64 KiB.
    assert_eq!(cfg.read32(0x10).unwrap() & 0xF, 0b0100);
    cfg.write32(0x10, 0xFFFF_FFFF).unwrap();
    assert_eq!(cfg.read32(0x10).unwrap(), 0xFFFF_F004);
    cfg.write32(0x20, 0xFFFF_FFFF).unwrap();
    assert_eq!(cfg.read32(0x20).unwrap(), 0xFFFF_0004);
    cfg.write32(0x24, 0xFFFF_FFFF).unwrap();
    assert_eq!(cfg.read32(0x24).unwrap(), 0xFFFF_FFFF, "high half of a 64-bit BAR is all address");
    // BAR2 is not modelled.
    cfg.write32(0x18, 0xFFFF_FFFF).unwrap();
    assert_eq!(cfg.read32(0x18).unwrap(), 0);
}

#[test]
fn int_ctrl_hostintr_is_writable() {
    let (_d, emu) = fresh();
    let cfg = emu.config();
    assert_eq!(cfg.read32(IntCtrl::OFFSET).unwrap(), 0);
    cfg.write32(IntCtrl::OFFSET, 0xFFFF_FFFF).unwrap();
    assert_eq!(cfg.read32(IntCtrl::OFFSET).unwrap(), 1 << 29);
}

#[test]
fn power_management_capability_is_listed() {
    let (_d, emu) = fresh();
    let cfg = emu.config();
    assert_eq!(cfg.read32(0x34).unwrap() & 0xFF, 0x40);
    assert_eq!(cfg.read32(0x40).unwrap() & 0xFFFF, 0x6001, "PM capability, then VPD at 0x60");
    assert_eq!(cfg.read32(0x60).unwrap() & 0xFFFF, 0x0003, "VPD capability, end of list");
    cfg.write32(0x44, 0xFFFF_FFFF).unwrap();
    assert_eq!(cfg.read32(0x44).unwrap(), 0x0103, "power state and PME_En");
}

#[test]
fn unaligned_and_out_of_range_offsets_are_errors() {
    let (_d, emu) = fresh();
    let cfg = emu.config();
    for off in [0x02u16, 0x5A, 0x1000, 0xFFFF] {
        assert!(matches!(cfg.read32(off), Err(PciError::ConfigOffset { off: o }) if o == off), "read {off:#x}");
        assert!(matches!(cfg.write32(off, 0), Err(PciError::ConfigOffset { .. })), "write {off:#x}");
    }
    assert_eq!(cfg.read32(0xFFC).unwrap(), 0, "extended space exists and is empty");
}

#[test]
fn bar0_is_a_view_of_config_space() {
    let (_d, emu) = fresh();
    let bar0 = pcicfg(&emu);
    assert_eq!(bar0.read32(0x00), 0x0720_10DF);
    assert_eq!(bar0.read32(0x58), 0xC000_0F40);
    bar0.write32(0xFC, 1 << 29);
    assert_eq!(emu.config().read32(0xFC).unwrap(), 1 << 29);
    // Outside the 4 KiB BAR, or unaligned: all ones, writes dropped.
    assert_eq!(bar0.read32(0x1000), u32::MAX);
    assert_eq!(bar0.read32(0x5A), u32::MAX);
}

#[test]
fn ue_status_is_zero_and_masks_are_writable() {
    let (_d, emu) = fresh();
    let bar0 = pcicfg(&emu);
    assert_eq!(bar0.read32(UeStatus::LOW_OFFSET), 0);
    assert_eq!(bar0.read32(UeStatus::HIGH_OFFSET), 0);
    bar0.write32(UeStatus::LOW_OFFSET, 0xFFFF_FFFF);
    assert_eq!(bar0.read32(UeStatus::LOW_OFFSET), 0, "status is read-only");
    bar0.write32(UeStatus::LOW_MASK_OFFSET, 0x1234_5678);
    bar0.write32(UeStatus::HIGH_MASK_OFFSET, 0x8765_4321);
    assert_eq!(bar0.read32(UeStatus::LOW_MASK_OFFSET), 0x1234_5678);
    assert_eq!(bar0.read32(UeStatus::HIGH_MASK_OFFSET), 0x8765_4321);
}

#[test]
fn ue_status_shows_a_fault() {
    let (_d, emu) = fresh();
    emu.set_faults(Faults { ue_status: [0x4, 0x8000_0000], ..Faults::default() }).unwrap();
    let bar0 = pcicfg(&emu);
    assert_eq!(bar0.read32(UeStatus::LOW_OFFSET), 0x4);
    assert_eq!(bar0.read32(UeStatus::HIGH_OFFSET), 0x8000_0000);
}

#[test]
fn online_registers_are_read_only() {
    let (_d, emu) = fresh();
    let bar0 = pcicfg(&emu);
    let online = [bar0.read32(0xB0), bar0.read32(0xB4)];
    bar0.write32(0xB0, 0);
    bar0.write32(0xB4, 0);
    assert_eq!([bar0.read32(0xB0), bar0.read32(0xB4)], online);
    assert!(online.iter().all(|&v| v != 0 && v != u32::MAX));
}

#[test]
fn a_gone_device_reads_all_ones_everywhere() {
    let (_d, emu) = fresh();
    let bar0 = pcicfg(&emu);
    let db = common::db(&emu);
    emu.set_faults(Faults { gone: true, ..Faults::default() }).unwrap();
    for off in [0x00u16, 0x58, 0x94, 0x9C, 0xFC] {
        assert_eq!(emu.config().read32(off).unwrap(), u32::MAX, "config {off:#x}");
    }
    assert_eq!(bar0.read32(0xA0), u32::MAX);
    assert_eq!(db.read32(0x160), u32::MAX);
    emu.config().write32(0xFC, 1 << 29).unwrap();
    emu.set_faults(Faults::default()).unwrap();
    assert_eq!(emu.config().read32(0xFC).unwrap(), 0, "writes to a gone device are lost");
}

#[test]
fn bar_mapping_rules() {
    let (_d, emu) = fresh();
    for bar in [1u8, 2, 3, 5, 6] {
        assert!(matches!(emu.map_bar(bar, 4), Err(PciError::NoSuchBar { bar: b }) if b == bar));
    }
    assert!(matches!(emu.map_bar(0, 0x2000), Err(PciError::BarTooSmall { bar: 0, len: 0x1000, needed: 0x2000 })));
    assert!(emu.map_bar(4, 0x1_0000).is_ok());
    assert!(matches!(emu.map_bar(4, 0x1_0001), Err(PciError::BarTooSmall { bar: 4, .. })));
}

#[test]
fn the_vpd_capability_serves_the_documented_vpd() {
    let (_d, emu) = fresh();
    let cfg = emu.config();
    let bytes = oce_pci::vpd::read_capability(cfg).unwrap().expect("a VPD capability");
    let vpd = oce_pci::vpd::parse(&bytes).unwrap();
    assert_eq!(vpd.product_name.as_deref(), Some("Emulex OneConnect OCe14102 10Gb 2-port (emulated)"));
    assert_eq!(vpd.get("PN").as_deref(), Some("OCe14102"));
    assert_eq!(vpd.get("EC").as_deref(), Some("A"));
    assert!(vpd.get("SN").is_some_and(|sn| sn.starts_with("EMU")), "{vpd:?}");
    assert_eq!(vpd.get("V0").as_deref(), Some("emulated VPD"));
    // A read of one dword: F clear asks, F set answers; the Data register holds bytes 4..8.
    cfg.write32(0x60, 4 << 16).unwrap();
    assert_eq!(cfg.read32(0x60).unwrap() >> 16, 0x8004, "F set, address kept");
    assert_eq!(cfg.read32(0x64).unwrap().to_le_bytes(), bytes[4..8]);
    // Past the end: erased EEPROM.
    cfg.write32(0x60, 0x7FFC << 16).unwrap();
    assert_eq!(cfg.read32(0x64).unwrap(), u32::MAX);
}
