//! One card, several functions: function 0 and function 1 of one emulated OCe14102, each a
//! device of its own over one shared card (`assumptions::card`), each driven by its own
//! be2net-like host. What the card holds (profiles, flash, POST) one function changes and the
//! other sees; what a function holds (queues, MAC, port) stays its own.

use oce_testhost as be2net_host;

use be2net_host::Host;
use oce_emulator::firmware::Firmware;
use oce_emulator::{CreateOptions, EmulatorError, FunctionType};
use oce_mailbox::commands::{
    GetActiveProfile, GetCntlAttributes, GetFuncConfig, GetProfileList, QueryFirmwareConfig, ResourceDescriptor,
    SetActiveProfile,
};
use oce_mailbox::regs::{Semaphore, SoftReset};

/// Header type, bit 7 of config byte 0x0E: multi-function device (PCI Local Bus 3.0 §6.2.1).
const MULTI_FUNCTION: u32 = 1 << 23;

/// Function 0 and function 1 of a factory-fresh card (seed 7), each on its own host.
fn card() -> (tempfile::TempDir, Host, Host) {
    let dir = tempfile::tempdir().unwrap();
    let options = CreateOptions { seed: 7, function: FunctionType::Pf };
    let f0 = Firmware::create_with(&dir.path().join("emu"), options).unwrap();
    let f1 = f0.other_function(1).unwrap();
    (dir, Host::with_firmware(f0), Host::with_firmware(f1))
}

fn semaphore(host: &mut Host) -> u32 {
    host.config32(Semaphore::OFFSET)
}

#[test]
fn each_function_has_its_own_number_port_and_factory_mac() {
    let (_d, mut h0, mut h1) = card();
    let (n0, n1) = (h0.probe(1).unwrap(), h1.probe(1).unwrap());
    let macs: Vec<[u8; 6]> = h0.dev.info().ports.iter().map(|p| p.mac.0).collect();
    assert_eq!((n0.port, n1.port), (0, 1));
    assert_eq!((n0.mac, n1.mac), (macs[0], macs[1]), "each function answers its own port's factory MAC");
    assert_ne!(n0.mac, n1.mac);
    for (host, number) in [(&mut h0, 0u8), (&mut h1, 1)] {
        let attrs = host.mbox(&GetCntlAttributes).unwrap();
        assert_eq!((attrs.pci_function_number, attrs.phy_port), (number, number));
        assert_eq!(host.mbox(&QueryFirmwareConfig).unwrap().phys_port, u32::from(number));
        let func = host.mbox(&GetFuncConfig).unwrap();
        let ResourceDescriptor::Nic(nic) = &func.descriptors[0] else { panic!("a NIC descriptor") };
        assert_eq!((nic.pf_num, nic.link_param), (number, number), "be2net takes pf_num from here");
    }
}

#[test]
fn a_profile_set_through_function_0_is_what_function_1_reads() {
    let (_d, mut h0, mut h1) = card();
    h0.probe(1).unwrap();
    h1.probe(1).unwrap();
    let list = h0.mbox(&GetProfileList::default()).unwrap();
    let roce = list.entries.iter().find(|e| e.description.starts_with("RoCE")).unwrap().id;
    h0.mbox(&SetActiveProfile::new(roce)).unwrap();
    let seen = h1.mbox(&GetActiveProfile).unwrap();
    assert_eq!(seen.next, u16::from(roce), "one NVRAM: function 1 sees the next-boot profile");
    assert_ne!(seen.active, u16::from(roce), "active only after the card's next POST");
}

#[test]
fn a_chip_reset_through_function_0_restarts_function_1() {
    let (_d, mut h0, mut h1) = card();
    h0.probe(1).unwrap();
    let mut n1 = h1.probe(1).unwrap();
    assert!(h1.open(&mut n1).unwrap());
    let list = h0.mbox(&GetProfileList::default()).unwrap();
    let roce = list.entries.iter().find(|e| e.description.starts_with("RoCE")).unwrap().id;
    h0.mbox(&SetActiveProfile::new(roce)).unwrap();
    assert!(Semaphore(semaphore(&mut h1)).is_ready());

    h0.write_config32(SoftReset::OFFSET as u16, SoftReset::SR);

    // Function 1 walks POST too, from its own next read on (as be2net's recovery polls it).
    let walk: Vec<u32> = (0..5).map(|_| semaphore(&mut h1)).collect();
    assert_eq!(walk, [0x0000, 0x0001, 0x0002, 0xC000, 0xC000]);
    assert!(h1.dev.firmware().events().contains(&oce_emulator::Event::ChipReset));
    // Its queues went with the reset: be2net re-initialises it, and the profile the reset made
    // active shows there (RDMA in function_mode).
    let again = h1.probe(1).unwrap();
    assert_eq!(again.function_mode & 0x4, 0x4, "the card's POST made the RoCE profile active");
    assert_eq!(h1.mbox(&GetActiveProfile).unwrap().active, u16::from(roce));
    // Function 0 walked its own POST from the reset it started.
    assert_eq!(semaphore(&mut h0), 0x0000);
}

#[test]
fn a_function_level_reset_of_one_function_leaves_the_other_running() {
    let (_d, mut h0, mut h1) = card();
    let mut n0 = h0.probe(1).unwrap();
    assert!(h0.open(&mut n0).unwrap());
    h1.probe(1).unwrap();
    h1.dev.reset();
    assert_eq!(semaphore(&mut h0), 0xC000, "no POST");
    assert!(!h0.dev.firmware().events().contains(&oce_emulator::Event::FunctionReset));
    assert!(h0.mbox(&GetActiveProfile).is_ok(), "function 0's mailbox goes on");
}

#[test]
fn both_functions_of_a_two_function_card_say_multi_function() {
    let (_d, mut h0, mut h1) = card();
    assert_eq!(h0.config32(0x0C) & MULTI_FUNCTION, MULTI_FUNCTION);
    assert_eq!(h1.config32(0x0C) & MULTI_FUNCTION, MULTI_FUNCTION);
    let dir = tempfile::tempdir().unwrap();
    let mut single = Host::new(&dir.path().join("emu"));
    assert_eq!(single.config32(0x0C) & MULTI_FUNCTION, 0, "a card opened alone is single-function");
}

#[test]
fn a_card_has_one_nic_function_per_port_and_a_vf_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let pf = Firmware::create_with(&dir.path().join("pf"), CreateOptions::default()).unwrap();
    assert!(matches!(pf.other_function(2), Err(EmulatorError::NoSuchFunction { number: 2, functions: 2 })));
    let options = CreateOptions { function: FunctionType::Vf, ..CreateOptions::default() };
    let vf = Firmware::create_with(&dir.path().join("vf"), options).unwrap();
    assert!(matches!(vf.other_function(1), Err(EmulatorError::NoSuchFunction { number: 1, functions: 1 })));
}
