//! One card, several functions: what the NIC functions of one emulated adapter share and what
//! each keeps for itself. The spec names the pieces (spec/protocol.md §2.4 POST, §2.5 the chip
//! soft reset in pcicfg 0x5C, §5.8 the profile descriptors with their `pf_num`, §5.2
//! `pci_function_number` and `phy_port`); how the real firmware divides them between functions
//! is not public, so the split below is **assumed**, by what can only be one per chip and what
//! be2net keeps per function.
//!
//! Shared by every function ([`crate::firmware::Firmware`]'s card part, one lock):
//!
//! - **the state file**: identity (model, serial, one MAC per port), NVRAM (the next-boot
//!   profile and every profile's saved configuration), the running state (active profile,
//!   firmware version, beacons per port) and the faults — one flash chip, one profile per
//!   adapter (design.md §6: "the next profile becomes active only at the next POST", which is
//!   the chip's);
//! - **the flash** and WRITE_FLASHROM's staging: one flash part, one firmware writing it;
//! - **POST**: the chip soft reset (pcicfg 0x5C bit 7) resets the chip, not the function that
//!   wrote it, so every function's semaphore (config 0x94) walks POST again, and every function
//!   loses what the firmware held for it (queues, interfaces, counters), as after a power
//!   cycle. be2net's error recovery expects exactly that: the function that resets the chip
//!   waits for POST, and every other function finds its queues gone and re-initialises
//!   (spec/be2net-driver.md §1, "Nothing else touches BAR0 unless recovery runs"). A function
//!   sees a POST another started at its next register access, or within the served device's
//!   clock tick (`oce_emulator_serve::clock`): the walk then starts for it, counted in its own
//!   reads; a power cycle also puts its configuration space back to power-on values.
//! - the faults, so `gone`, `power-lost` and `link-down` take every function (the cable fault
//!   is the card's "cable out", not a port's).
//!
//! Each function's own:
//!
//! - **PCI function number** `n` and **port** `n`: the OCe14102 has one NIC function per port
//!   (2 ports, [`super::PORT_COUNT`]); function `n` answers `pci_function_number` and
//!   `phy_port` `n` (GET_CNTL_ATTRIBUTES), `phys_port` `n` (QUERY_FIRMWARE_CONFIG), `pf_num`
//!   and `link_param` `n` in its GET_FUNC_CONFIG and GET_PROFILE_CONFIG descriptors (be2net
//!   takes its `pf_num` from the first NIC descriptor, spec/protocol.md §5.7), and its port's
//!   permanent MAC (GET_MAC_LIST). Every function runs the card's profile: the descriptors are
//!   the active profile's, renumbered for the function (real firmware may report every PF's
//!   descriptors in one answer; be2net matches on `pf_num` either way);
//! - **the registers**: configuration space, the mailbox doorbell, MSI-X and INTx, the POST
//!   walk as this function reads it; a function-level reset (FLR, DEVICE_RESET) is the
//!   function's alone (no POST);
//! - **what a driver created**: queues, interfaces, filters, RoCE objects, flow control,
//!   counters (GET_STATISTICS counts the function's port), the event log and the FAT log;
//! - **the port's cable**: its peer and link (a served function has its own wire).
//!
//! The header type's multi-function bit (config 0x0E bit 7, PCI Local Bus 3.0 §6.2.1) is set on
//! every function of a card opened with more than one function, as on multi-function hardware;
//! a card opened alone is single-function. QEMU's vfio-pci front end, which vfio-user-pci
//! shares, overrides that bit (hw/vfio/pci.c, `vfio_pci_config_setup`: "Restore or clear
//! multifunction, this is always controlled by QEMU"), from the device's `multifunction`
//! property: a guest sees what QEMU is told, not what the device says. Linux reads the bit per
//! function (`pdev->multifunction`), so every function needs `multifunction=on`: with it on
//! function 0 alone, function 1 reads as single-function.
//!
//! IOMMU groups are the guest kernel's to make, not the device's: the device has no ACS
//! capability, but Linux's quirk table (drivers/pci/quirks.c, `pci_dev_acs_enabled`: 10df:0720,
//! "Emulex Skyhawk-R", `pci_quirk_mf_endpoint_acs`) treats Skyhawk-R's functions as isolated,
//! so behind a PCIe root port each function gets a group of its own, as on a real card in a
//! server's slot; behind a bridge without ACS (QEMU's pcie-pci-bridge, or a switch without it)
//! they share the bridge's group. tests/whole-card-qemu/run.sh boots both.
//!
//! A chip soft reset another function started, under be2net: be2net finds out only when its
//! next command times out ("FW not responding"), takes the link down and keeps the port down;
//! its own recovery stays off, since the model answers SET_FEATURES with ILLEGAL_REQUEST
//! (queues.rs), and unbinding and binding the function gives the port back. Real firmware that
//! grants TPE recovery might let be2net recover by itself; that is not modelled.
