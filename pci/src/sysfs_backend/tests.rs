//! Tests of the sysfs backend's pieces: config space and a BAR over fake sysfs files (plain files
//! map and read like the kernel's), and the DMA huge page on this host — its real physical
//! address when the host has a free huge page and shows physical addresses, else the documented
//! refusal.

use super::dma::{DmaArena, HugePage};
use super::*;
use crate::backend::SysfsBlocker;
use crate::fake_sysfs::FakeTree;
use crate::{DmaBuffer, RegisterIo, Roots};

fn nic() -> PciAddress {
    "0000:03:00.0".parse().unwrap()
}

/// A fake function with a 256-byte config space (command 0x0000, BAR0 a memory BAR, BAR1 an I/O
/// BAR) and an 8 KiB `resource0`.
fn tree_with_files() -> FakeTree {
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720);
    let dir = tree.roots().device_dir(nic());
    let mut config = vec![0u8; 256];
    config[0..4].copy_from_slice(&0x0720_10dfu32.to_le_bytes());
    config[0x06] = 0x10;
    config[0x14] = 0x01;
    std::fs::write(dir.join("config"), &config).unwrap();
    std::fs::write(dir.join("resource0"), vec![0u8; 8192]).unwrap();
    tree
}

#[test]
fn config_space_reads_and_writes_words_in_place() {
    let tree = tree_with_files();
    let path = tree.roots().device_dir(nic()).join("config");
    let config = SysfsConfig::open(nic(), &path).unwrap();
    assert_eq!(config.len(), 256);
    assert_eq!(config.read32(0).unwrap(), 0x0720_10df);
    config.write16(COMMAND_OFFSET, COMMAND_MEMORY | COMMAND_BUS_MASTER).unwrap();
    // The command word changed; the status word beside it (0x0010) was not written.
    assert_eq!(config.read32(COMMAND_OFFSET).unwrap(), 0x0010_0006);
    assert_eq!(&std::fs::read(&path).unwrap()[4..8], &[0x06, 0x00, 0x10, 0x00]);
    assert!(matches!(config.read32(2), Err(PciError::ConfigOffset { off: 2 })));
    assert!(matches!(config.read32(256), Err(PciError::ConfigOffset { off: 256 })));
    assert!(matches!(config.read16(255), Err(PciError::ConfigOffset { off: 255 })));
    // BAR0 is a memory BAR, BAR1 an I/O BAR, and there is no BAR6.
    assert!(crate::check_memory_bar(&config, 0).is_ok());
    assert!(matches!(crate::check_memory_bar(&config, 1), Err(PciError::NoSuchBar { bar: 1 })));
    assert!(matches!(crate::check_memory_bar(&config, 6), Err(PciError::NoSuchBar { bar: 6 })));
}

#[test]
fn a_bar_maps_its_resource_file() {
    let tree = tree_with_files();
    let bar = SysfsBar::map(tree.roots(), nic(), 0, 0x1000).unwrap();
    assert_eq!((bar.index(), bar.len()), (0, 8192));
    bar.write32(0x1ffc, 0x1234_5678);
    assert_eq!(bar.read32(0x1ffc), 0x1234_5678);
    assert_eq!(bar.read32(0x2000), u32::MAX, "outside the BAR reads as all ones");
    bar.write32(0x2000, 1);
    drop(bar);
    let file = std::fs::read(tree.roots().device_dir(nic()).join("resource0")).unwrap();
    assert_eq!(&file[0x1ffc..], &0x1234_5678u32.to_le_bytes());

    let err = SysfsBar::map(tree.roots(), nic(), 0, 0x4000).unwrap_err();
    assert!(matches!(err, PciError::BarTooSmall { bar: 0, len: 8192, needed: 0x4000 }), "{err}");
    assert!(matches!(SysfsBar::map(tree.roots(), nic(), 2, 4), Err(PciError::NoSuchBar { bar: 2 })));
}

#[test]
fn a_huge_page_with_its_physical_address_or_the_documented_refusal() {
    match HugePage::map(nic(), &Roots::default()) {
        Ok(page) => {
            // A huge page is physically aligned to its size.
            assert!(page.phys() != 0 && page.phys().is_multiple_of(page.len() as u64), "{:#x}", page.phys());
            let arena = DmaArena::new(page);
            let a = arena.alloc(272).unwrap();
            let b = arena.alloc(61_472).unwrap();
            assert_eq!(a.iova(), arena.base());
            assert_eq!(b.iova(), arena.base() + 4096);
            b.write_at(61_000, b"physically contiguous").unwrap();
            let mut out = [0u8; 21];
            b.read_at(61_000, &mut out).unwrap();
            assert_eq!(&out, b"physically contiguous");
            drop(b);
            // The range is handed out again, zeroed.
            let c = arena.alloc(61_472).unwrap();
            assert_eq!(c.iova(), arena.base() + 4096);
            c.read_at(61_000, &mut out).unwrap();
            assert_eq!(out, [0u8; 21]);
            assert!(matches!(arena.alloc(4 << 20), Err(PciError::DmaAlloc { .. })));
        }
        Err(PciError::SysfsBackend { blocker, .. }) => assert!(
            matches!(
                blocker,
                SysfsBlocker::NoFreeHugePage { .. } | SysfsBlocker::AddressesHidden | SysfsBlocker::NoHugePageSupport
            ),
            "{blocker}"
        ),
        Err(other) => panic!("neither a huge page nor a documented refusal: {other}"),
    }
}

#[test]
fn open_refuses_a_function_handed_to_vfio_and_a_host_that_is_not_ready() {
    let _s = crate::handoff::tests::serial();
    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720).group(7);
    let kernel = std::sync::Arc::new(crate::fake_sysfs::FakeKernel::new(&tree));
    let opts = crate::HandOffOptions { allow_unbind: false, timeout: std::time::Duration::ZERO };
    let vfio = HandOff::acquire(nic(), tree.roots(), &opts, kernel.clone()).unwrap();
    let err = SysfsFunction::open(&vfio).unwrap_err();
    assert_eq!(err.to_string(), "0000:03:00.0 was not handed over for the sysfs backend");
    drop(vfio);

    let tree = FakeTree::new();
    tree.device(nic(), 0x10df, 0x0720);
    tree.as_user();
    tree.huge_pages(1, 1);
    let kernel = std::sync::Arc::new(crate::fake_sysfs::FakeKernel::new(&tree));
    let plan = crate::handoff::Plan::new(nic(), tree.roots(), Target::Detached, false).unwrap();
    let held = HandOff::execute(plan, tree.roots(), std::time::Duration::ZERO, kernel).unwrap();
    let err = SysfsFunction::open(&held).unwrap_err();
    assert!(matches!(&err, PciError::SysfsBackend { address, blocker: SysfsBlocker::NotRoot } if *address == nic()));
    assert!(err.to_string().starts_with("the sysfs backend needs root"), "{err}");
}
