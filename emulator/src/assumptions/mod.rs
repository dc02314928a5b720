//! Every choice the emulator makes where the public sources are silent, in one place.
//!
//! `spec/protocol.md` §10 and `spec/ufi-firmware.md` §8 list what nobody public knows about the
//! OCe14000; `design.md` §6 decides what the emulator assumes instead. This module holds those
//! decisions, and nothing else holds a value that the spec does not back. **If you have a real
//! adapter, distrust every item here first**: each doc comment says what it stands in for, so a
//! difference between the emulator and your hardware can be traced to one line.
//!
//! Facts that the spec *does* state (register offsets, bit positions, command layouts, status
//! codes) live in `oce-mailbox` and are cited there; they are not repeated here. The queues,
//! their interrupts and the NIC driver's commands have their own page, [`queues`], the Ethernet
//! datapath (frames on TX and RX, filters, offloads, flow control) its own, [`datapath`], the
//! RoCE engine its own, [`rdma`], the PCI Vital Product Data its own, [`vpd`]; all are
//! re-exported here. What the functions of one card share and what each keeps is in [`card`].
//!
//! # Behaviour choices
//!
//! Besides the values below, these behaviours are assumed (each is implemented where named):
//!
//! - **Registers** ([`crate::device::config`], `device`): BAR0 is a view of configuration space
//!   (soft reset, UE and online registers exist in both); SR (0x5C bit 7) is self-clearing; a
//!   chip soft reset keeps configuration space (command register, BARs) and the MSI-X table, a
//!   power cycle resets both; write-only doorbells read 0. Configuration space takes accesses of
//!   any width and alignment, split per dword (a register with side effects, like the semaphore,
//!   acts once per access that touches it); past 4 KiB it reads all ones. A BAR takes 1-, 2-,
//!   4- and 8-byte accesses, naturally aligned; anything else, and any part of a BAR no register
//!   decodes, reads all ones and drops writes; a doorbell is rung only by a whole-dword write.
//!   The command register implements memory, bus master, parity, SERR and INTx-disable; no I/O
//!   space.
//! - **Shapes** (`device::layout`): the in-process front end shows the polled shape — power
//!   management at 0x40 the only capability, BAR0 only the pcicfg shadow — since its host polls
//!   the mailbox; the PCI Express shape a guest kernel needs adds MSI-X and PCI Express
//!   capabilities and grows BAR0 to hold the MSI-X table and PBA ([`EXPRESS_BAR0_LEN`],
//!   [`MSIX_CAP_OFFSET`], [`PCIE_CAP_OFFSET`], [`MSIX_VECTORS`], [`MSIX_TABLE_OFFSET`],
//!   [`MSIX_PBA_OFFSET`]). Which one real hardware resembles in BAR sizes and capability
//!   placement is not public; a PCI Express VF has no INTx pin.
//! - **Interrupts** (`device::interrupts`): MSI-X goes out only with MSI-X Enable and Bus Master
//!   Enable set; otherwise the vector is dropped (not made pending) and logged. With the table
//!   kept by the device, a masked vector (its Vector Control bit or Function Mask) sets its PBA
//!   bit and is sent when the last mask clears — while bus mastering is off it stays pending.
//!   With the table kept by the transport, the device sends every vector enable and bus
//!   mastering allow and leaves masking to the transport, whose table the device never sees.
//!   INTA# is driven while the source's level is high, Interrupt Disable is clear and MSI-X is
//!   disabled; status bit 3 shows the level whatever Interrupt Disable says. The event queues
//!   decide when to fire, gated by the adapter's host-interrupt enable ([`queues`]).
//! - **Function-level reset** (`device`): vfio-user's DEVICE_RESET and Initiate FLR (advertised
//!   in [`PCIE_DEVICE_CAPABILITIES`]) reset the function's registers: configuration space to
//!   power-on values, MSI-X disabled with every vector masked and the PBA clear, INTx
//!   de-asserted, the mailbox idle with its HI latch and any held completion dropped. The
//!   adapter's firmware keeps running: POST does not restart, and the profile, flash and a
//!   staged flash section stay (a function reset is not a chip reset). A gone device ignores it.
//! - **DMA** (`device::mailbox`): the device copies a command in from host memory, executes it
//!   and copies the response back (only the bytes the response covers); it fetches the whole
//!   272-byte mailbox and the whole SGE buffer. An address it cannot read or write fails the
//!   command with [`STATUS_DMA_FAULT`] and logs a DMA fault; a mailbox it cannot read gets no
//!   completion at all.
//! - **Doorbell** (`doorbell`): a LO write consumes the latched HI half
//!   ([`LO_CONSUMES_HI_LATCH`]). A LO write whose rebuilt address maps nowhere but lies 1–15
//!   bytes below a mapped range is reported as an unaligned mailbox and ignored (the device
//!   cannot see the host's real address; this is the signature of a host that skipped the
//!   16-byte rounding); any other unmapped address starts the command and faults on fetch.
//! - **POST** (`post`): the boot outcome is decided when POST starts; the semaphore walk only
//!   animates it, so a process that exits mid-walk leaves an adapter the next process finds at
//!   its final stage. A failed boot stops at [`POST_FAILED_STAGE_INDEX`] with bit 31; the backup
//!   boot shows bit 30 only at the final stage.
//! - **Functions** (`function`): a state directory models one function, the PF or a VF; a VF
//!   state directory is an adapter seen only through that VF. The VF's BAR registers sit in its
//!   own configuration space (as VFIO presents them; a real VF's live in the PF's SR-IOV
//!   capability); its chip soft reset (pcicfg shadow 0x5C) works like the PF's, since the model
//!   has no PF beside it to refuse it. [`VF_REFUSED_OPCODES`] answer UNAUTHORIZED_REQUEST.
//! - **Commands** (`handlers`): subsystems COMMON and ETH are implemented, the RDMA subsystem's
//!   resource commands on a RoCE function ([`rdma`]), and of the others only DCBX GET_CONFIG
//!   (subsystem 0x10, ocrdma's numbering); a command is accepted
//!   embedded or not, whatever be2net uses; a non-zero `domain` is refused (no VFs);
//!   FUNCTION_RESET clears what a driver created ([`queues`]); the beacon ignores its
//!   durations and goes off at POST; the emulated PF is function 0 on port 0 and reports only
//!   its own descriptors.
//! - **Profiles** ([`crate::firmware::profiles`]): SET_ACTIVE_PROFILE persists the next-boot profile at
//!   once and ignores `fd`; it becomes active at the next POST (chip reset or power cycle — real
//!   hardware may need a cold boot, spec §10). GET_PROFILE_CONFIG with ID 0 means the active
//!   profile (ACTIVE) or the next-boot profile (SAVED); its QUERY_MODIFIABLE answer marks the
//!   NIC counts and bandwidth as modifiable and nothing else. SET_PROFILE_CONFIG with ID 0
//!   targets the active profile; NOSV changes only the running configuration; without NOSV the
//!   change is saved, and applied now too when IMM is set and the profile runs; SR-IOV
//!   (`num_vfs` > 0) is refused.
//! - **Faults** (`faults`, set from tests or `ocetool emulator fault`): a POST fault shows at
//!   once on a running adapter (the walk sits at the faulty stage) and, cleared, the walk goes
//!   on to 0xC000; `rdy-hang` hangs the mailbox at the next doorbell write (the write is lost)
//!   and then persists as `rdy-never` until a reset (below); `rdy-after=N` replaces both
//!   read-counted busy periods; a forced status skips the handler (no state change,
//!   `response_length` 0); `truncate` keeps the real `actual_response_length` and leaves the
//!   buffer past the cut as it was;
//!   `response-length` changes only that header field; a `slow` command (and every chunk under
//!   `slow-flash`) runs when its read-counted busy period ends — state changes are saved then —
//!   but its completion entry is written, and RDY reads 1, only when the delay has passed on the
//!   emulator's clock. A chip reset or power cycle drops a held completion; clearing the fault
//!   does not. Faults match a command by subsystem and opcode, any version.
//! - **What a reset clears** (`faults`, `model`): a chip reset or a power cycle restarts the
//!   firmware, so it ends what only the running firmware held: a hung mailbox (`rdy-never`,
//!   `rdy-hang`) and the UE status (`ue`). be2net's own recovery from a Skyhawk UE is exactly a
//!   chip soft reset and a new POST (spec/protocol.md §7.4); a UE that no reset clears (a broken
//!   block) is not modelled, and on hardware `ocetool reset` then reports the UE again. A reset
//!   does not clear what lies beneath the firmware: a POST that stops or fails (`post-stuck`,
//!   `post-error`: the boot fails the same way each time), a device off the bus (`gone`; and
//!   `power-lost` only until a power cycle), the command and flash faults (the firmware's and
//!   the flash's behaviour), slow firmware (`rdy-after`), `no-offset-mode`, and `pfc-unsync`
//!   (the switch's PFC settings, which the adapter only negotiates with).
//! - **DCBX** (`handlers::dcbx`): one fixed configuration, the same on every port and in every
//!   profile ([`DCBX_TRAFFIC_CLASSES`] and the values after it): DCBX on and willing, PFC enabled
//!   and in sync on [`DCBX_ROCE_PRIORITY`], one application priority entry mapping the RoCE
//!   ethertype (0x8915) to that priority. The operational and administrative copies are equal
//!   (the switch agrees with what was configured); the peer copy is what such a switch sends: the
//!   same priorities, advertised, not willing. ETS, QCN and logical link are not modelled (state
//!   0, fields 0). The `pfc-unsync` fault takes SYNC out of the operational copy's PFC state only:
//!   what the adapter was configured with is unchanged, the switch disagrees. An unknown
//!   `param_type` is ILLEGAL_FIELD.
//! - **Transceiver** (`handlers::transceiver`): every port's cage holds the same kind of 10GBASE-SR
//!   SFP+ module ([`MODULE_VENDOR`] and the values after it); the serial number is the adapter's
//!   with the port number appended. Page A0 carries the SFF-8472 serial ID fields with both check
//!   codes; the module has no digital diagnostics (A0 byte 92 is 0), so page A2 reads as zeros. A
//!   port past the adapter's, or a page other than A0 / A2, is ILLEGAL_FIELD.
//! - **FAT log** (`firmware::fat`, MANAGE_FAT): the firmware's diagnostic log is rendered from the
//!   event log (the events of the process that holds the adapter: firmware RAM, like the staging)
//!   when MANAGE_FAT QUERY asks for its size, and RETRIEVE reads that rendering, so the size and
//!   the bytes agree however many commands run in between (RETRIEVE with no QUERY before renders
//!   one). Newest events win when the log would pass [`FAT_LOG_MAX_LEN`]. Reading does not clear
//!   the log. A RETRIEVE that starts past the end is ILLEGAL_FIELD; one that runs past the end
//!   gets the bytes up to it; one longer than its buffer gets INSUFFICIENT_BUFFER, as every
//!   command does. An unknown `fat_operation` is ILLEGAL_FIELD. POST (a chip reset, a power
//!   cycle) drops the rendering.
//! - **Flash** (`flash`): erased flash reads 0xFF; the factory image is `oce-firmware`'s small
//!   layout, every section carrying the factory version in `ver_data`; the CRC model is
//!   `oce_firmware::crc` (design.md §6). "The directory on flash" is the first cookie at a
//!   multiple of 32 bytes from flash address 0, as the drivers find one in a file. POST
//!   (`flash::Flash::boot_check`) boots when that directory parses and its 0xA0 section, else
//!   its 0xB0 section, passes the CRC model; nothing else is read: not the boot code (0xE2),
//!   not the directory's own 0xD2 trailer, not which version the sections carry. Real firmware
//!   may need more (a boot code it runs first, a directory at a fixed address); ocetool's flash
//!   planning therefore keeps the directory where it is and refuses to move it
//!   (`oce_firmware::flash`, "order").
//! - **Flash commands** (`handlers::flashrom`, `flash::staging`): READ_FLASHROM REPORT needs
//!   `data_buf_size` 4. In offset mode (op type 7) it returns the 4 bytes stored at `offset`, so
//!   a host can read the flash 4 bytes at a time. By op type, at the region's trailer position
//!   (`offset` = size − 4) it returns the CRC the firmware computes over the region's first
//!   `size − 4` bytes (the firmware knows the region from its directory, so it can check it),
//!   elsewhere the stored bytes. An intact section answers its trailer both ways, so the
//!   drivers' "already on flash" comparison (ufi-firmware.md §3.4) is unchanged; a damaged one
//!   answers a different CRC by op type, which is how `ocetool` checks the boot sections.
//!   Whether real firmware computes or returns stored bytes is unknown (§8). In op-type mode a
//!   component's region is the first directory entry in use whose op-type (explicit, or mapped
//!   from the type for an old image) matches; `offset` counts from the region's start. SAVE
//!   stages a chunk in RAM (at most 32 KiB; a section at most up to the end of flash, or of its
//!   region); FLASH stages the last chunk and commits. Chunks must be contiguous (offset mode:
//!   each starts where the staged bytes end; op-type mode: same op type, `offset` ignored);
//!   with nothing staged any chunk starts a section, so a single-chunk section is one FLASH.
//!   An out-of-order chunk, a chunk past flash or its region, an unknown region, an op code
//!   other than SAVE / FLASH, or a FLASH that leaves fewer than 4 bytes staged answers
//!   ILLEGAL_FIELD and drops the staging. At commit the CRC of the staged section's first
//!   `len − 4` bytes must match its trailer, else FAILED with additional 0x4D (which base status
//!   real firmware pairs with 0x4D is not public) and flash is untouched; otherwise the section
//!   is written to flash.bin (the page cache: it outlives any ocetool process; a host OS crash is
//!   not modelled, [`crate::FlashDurability`]) before the answer, in one write: a power loss
//!   (the fault below) comes between chunks, never inside a commit, so a commit is all or
//!   nothing (real flash being programmed may tear). The flash directory (type 0xD2, op type
//!   23) is a section like any other, so
//!   committing one changes the stored version at once; the running one changes at POST. A
//!   chip reset, a power cycle and a power loss drop the staging (firmware RAM).
//! - **Flash faults**: every WRITE_FLASHROM the firmware receives counts as a chunk for
//!   `flash-fail-at` / `power-loss-at`, whatever its outcome, counted from when the fault was set
//!   (the countdown is saved as it moves, so it spans processes). From the N-th chunk on, every
//!   chunk fails (FAILED, additional [`ADDL_FLASH_SAVE_FAILED`]) and drops the staging, until
//!   the fault is cleared. At power loss the chunk is not executed, nothing more is written (no
//!   response, no completion), the adapter reads all ones until the next power cycle.
//! - **Component versions** (`handlers::device`, GET_CNTL_ATTRIBUTES): where real firmware takes
//!   `redboot_version_string`, `bios_version_string` and `ncsi_version_string` (spec/protocol.md
//!   §5.2) from is not public. The emulator reports the `ver_data` of the boot code (0xE2), PXE
//!   option ROM (0x20) and NC-SI (0x10) entries of the directory now on flash (what a flash
//!   changes at once, like the stored firmware version), and an empty string for a section the
//!   directory does not hold, which ocetool shows as "not reported".

pub mod card;
mod datapath;
mod queues;
mod rdma;
mod vpd;

pub use datapath::*;
pub use queues::*;
pub use rdma::*;
pub use vpd::*;

use oce_mailbox::Command;
use oce_mailbox::commands::{
    DcbxFeatureState, GetActiveProfile, GetProfileConfig, GetProfileList, ReadFlashrom, SetActiveProfile,
    SetProfileConfig, WriteFlashrom,
};
use oce_mailbox::status::BaseStatus;

// ---------------------------------------------------------------------------------------------
// PCI identity (design.md §6; spec/protocol.md §1)
// ---------------------------------------------------------------------------------------------

/// Subsystem vendor ID. Emulex's vendor ID; that OCe14102 boards carry it as subsystem vendor is
/// an assumption (design.md §6).
pub const SUBSYSTEM_VENDOR_ID: u16 = 0x10DF;
/// Subsystem ID of an "OCe14102-class" board. **Assumed** (design.md §6): no public source lists
/// OCe14000 subsystem IDs.
pub const SUBSYSTEM_ID: u16 = 0xE702;
/// PCI revision ID (config 0x08 bits 7:0). **Assumed** equal to the ASIC revision byte.
pub const PCI_REVISION_ID: u8 = ASIC_REVISION;
/// SLI_INTF for a PF: valid 0b110, if_type 0, family 0xF, SLI rev 4, FT 0. **Inferred** by
/// spec/protocol.md §1.3 from ocrdma; no public source prints a real value.
pub const SLI_INTF_PF: u32 = 0xC000_0F40;
/// SLI_INTF for a VF: valid 0b110, if_type 1 (VF-style, per lpfc's sli4.h), family 0xF, SLI rev
/// 4, FT 1. **Inferred** by spec/protocol.md §1.3 like the PF value.
pub const SLI_INTF_VF: u32 = 0xC000_1F41;
/// ASIC revision byte (ASIC_ID bits 7:0, QUERY_FIRMWARE_CONFIG asic_revision). 0x10 ("B0") is
/// **assumed** (spec/protocol.md §10: real values unknown).
pub const ASIC_REVISION: u8 = 0x10;
/// ASIC_ID (config 0x9C): generation 0x04 (Skyhawk, a fact from ocrdma) in bits 15:8, the
/// assumed revision in bits 7:0.
pub const ASIC_ID: u32 = (0x04 << 8) | ASIC_REVISION as u32;
/// PCICFG_ONLINE0 / ONLINE1 (pcicfg 0xB0/0xB4): per-block "online" bits whose meaning no public
/// source gives (be2net only logs them). **Arbitrary**, chosen not to look like all ones.
pub const ONLINE: [u32; 2] = [0x7FFF_FFFF, 0x0000_FFFF];

// ---------------------------------------------------------------------------------------------
// BARs and DMA (spec/protocol.md §2.1: "BAR sizes are not stated anywhere")
// ---------------------------------------------------------------------------------------------

/// BAR0 (pcicfg) length in the polled shape ([`crate::device::Shape::Polled`]). **Assumed**:
/// BAR0 is modelled as a memory-mapped view of the 4 KiB configuration space, which is what
/// "offsets within the pcicfg mapping = config-space offsets" (spec §2.5) suggests.
pub const BAR0_LEN: u64 = 0x1000;
/// BAR0 length in the PCI Express shape ([`crate::device::Shape::Express`]), PF and VF alike:
/// the 4 KiB pcicfg shadow (a VF's doorbell page and shadow), then the MSI-X table and PBA.
/// **GUESS** (spec/be2net-driver.md §7): no public `lspci -vv` of an OCe14000 gives its BAR
/// sizes; be2net maps BAR0 whole and reads only offsets below 0x100 there, and BAR2 stays free
/// for ocrdma's DPP region.
pub const EXPRESS_BAR0_LEN: u64 = 0x4000;
/// BAR4 (doorbells) length. **Assumed** 64 KiB: the mailbox at 0x160 plus room for the 4 KiB
/// RoCE doorbell pages ocrdma uses (spec §2.2), of which the emulator models none.
pub const BAR4_LEN: u64 = 0x1_0000;
/// A VF's only BAR (BAR0) length. **Assumed** 8 KiB: the doorbell page (mailbox at 0x160) and,
/// at `SRIOV_VF_PCICFG_OFFSET` (0x1000, spec §2.1), the 4 KiB pcicfg shadow.
pub const VF_BAR0_LEN: u64 = 0x2000;
/// Addresses the emulated BIOS "assigned" to BAR0 and BAR4 (64-bit memory BARs; Skyhawk's use of
/// BAR0/2/4 suggests 64-bit BARs, an inference). Only what config space reads back; the emulator
/// never decodes them. BAR2 (RoCE DPP) is not modelled.
pub const BAR_ADDRESSES: [(u8, u64); 2] = [(0, 0x0000_00A0_0000_0000), (4, 0x0000_00A0_0001_0000)];

/// First IOVA handed out. Above 16 GiB (bits 34+ set) so the mailbox doorbell's HI half is
/// non-zero and a host that drops or mis-shifts it fails; bits 33:32 are also set so a host that
/// loses them in the LO half fails too. Not a hardware fact: a testing choice.
pub const IOVA_BASE: u64 = 0x0000_0037_0000_0000;
/// IOVA page size of the emulated IOMMU.
pub const IOVA_PAGE: u64 = 4096;
/// Every DMA buffer starts this many bytes after a page boundary, so a host that uses the start
/// of its buffer as the mailbox (instead of rounding up to 16 bytes, spec §3.1) fails.
pub const IOVA_SKEW: u64 = 8;
/// Unmapped bytes left after every buffer, so an overrun faults instead of reaching a neighbour.
pub const IOVA_GUARD: u64 = 4096;
/// Largest single DMA allocation the emulator grants (the biggest command buffer be2net uses is
/// 32 804 bytes; this leaves room for tests).
pub const MAX_DMA_ALLOC: usize = 16 << 20;
/// Largest non-embedded command buffer the emulated firmware will read through an SGE. Larger
/// SGE lengths answer [`STATUS_SGE_TOO_LONG`] without touching host memory.
pub const MAX_NON_EMBEDDED_LEN: usize = 1 << 20;

// ---------------------------------------------------------------------------------------------
// The PCI Express face: capabilities and MSI-X (spec/be2net-driver.md §1, §5.1, §7)
// ---------------------------------------------------------------------------------------------

/// Where the MSI-X capability sits in configuration space, right after power management (0x40,
/// whose PMCSR at 0x44 is be2net's `PCICFG_PM_CONTROL_OFFSET`, a fact). **GUESS**: any free
/// dword-aligned spot between the vendor registers (0x58–0x5F, 0x94–0xB7, 0xFC) would do.
pub const MSIX_CAP_OFFSET: u16 = 0x48;
/// Where the PCI Express capability (60 bytes, version 2) sits: the free range after
/// PCICFG_ONLINE1 (0xB4), ending before INT_CTRL (0xFC). **GUESS**, like [`MSIX_CAP_OFFSET`].
/// The capability list is PM (0x40) → MSI-X → PCI Express; there are no extended capabilities
/// (no AER: be2net's `pci_enable_pcie_error_reporting` failing is harmless, be2net-driver.md §1).
pub const PCIE_CAP_OFFSET: u16 = 0xB8;
/// MSI-X vectors (table entries). be2net and ocrdma together need at least 2 (ocrdma attaches
/// only with 2 or more granted); be2net's own `msix_entries[32]` is the most any case uses, so 32
/// covers every configuration (be2net-driver.md §5.1). The real table size is not public.
pub const MSIX_VECTORS: u16 = 32;
/// Offset of the MSI-X table in BAR0 (BIR 0). **GUESS** (be2net-driver.md §7): after the 4 KiB
/// pcicfg shadow and, on a VF, its shadow at 0x1000; 4 KiB aligned so a VMM can trap or map the
/// page on its own.
pub const MSIX_TABLE_OFFSET: u32 = 0x2000;
/// Offset of the MSI-X PBA in BAR0 (BIR 0), on its own 4 KiB page. **GUESS**, as the table.
pub const MSIX_PBA_OFFSET: u32 = 0x3000;
/// PCI Express Device Capabilities: Max_Payload_Size supported 512 bytes (010b, bits 2:0),
/// role-based error reporting (bit 15, required since PCIe 1.1) and Function-Level Reset (bit
/// 28). The payload size is a **GUESS**; FLR is advertised so a guest kernel (and vfio-pci) resets
/// the function the way vfio-user's DEVICE_RESET does ([`crate::device::Device::reset`]); whether
/// Skyhawk offers FLR is not public.
pub const PCIE_DEVICE_CAPABILITIES: u32 = 0b010 | (1 << 15) | (1 << 28);
/// PCI Express link: 8 GT/s (speed code 3) × 8 lanes, the "PCIe 3.0 x8" OneConnect OCe14000
/// boards are sold as; no spec file states it, so **GUESS**. Reported as capability and as the
/// negotiated link (the emulated link always trains at its best).
pub const PCIE_LINK_SPEED: u32 = 3;
/// See [`PCIE_LINK_SPEED`].
pub const PCIE_LINK_WIDTH: u32 = 8;

// ---------------------------------------------------------------------------------------------
// Timing, counted in register reads (never wall-clock time)
// ---------------------------------------------------------------------------------------------

/// Reads of the mailbox doorbell that return RDY = 0 after a HI write before RDY is 1 again.
/// Real firmware latency is unknown; one read is enough to catch a host that skips the poll.
pub const READY_DELAY_READS: u32 = 1;
/// Reads that return RDY = 0 after the LO write; the command executes on the read after them.
pub const EXEC_DELAY_READS: u32 = 2;
/// Reads of the semaphore (config 0x94) spent at each POST stage before the next one shows.
pub const POST_READS_PER_STAGE: u32 = 1;
/// The POST stages walked after power-on or a chip reset (design.md §6). The stage values are
/// facts (spec §2.4); that the firmware passes through exactly these, in this order, is assumed.
pub const POST_STAGES: [u16; 4] = [0x0000, 0x0001, 0x0002, 0xC000];
/// Index in [`POST_STAGES`] where a failed boot stops (with the error bit set): the firmware
/// image is assumed to be checked after "host ready".
pub const POST_FAILED_STAGE_INDEX: usize = 2;

/// Longest real-time delay a fault (`slow=…`, `slow-flash=…`) may ask for: one hour. A bound so
/// a typo cannot hang a host for days; not a hardware fact.
pub const MAX_FAULT_DELAY: std::time::Duration = std::time::Duration::from_secs(3600);

// ---------------------------------------------------------------------------------------------
// Doorbell strictness
// ---------------------------------------------------------------------------------------------

/// A LO write consumes the latched HI half, so every command needs its own HI write (as be2net
/// does). Whether real hardware keeps the latch is unknown; consuming it is the stricter choice.
pub const LO_CONSUMES_HI_LATCH: bool = true;

// ---------------------------------------------------------------------------------------------
// Status codes for malformed requests (the spec names the codes, not when firmware uses them)
// ---------------------------------------------------------------------------------------------

/// Base status for a non-embedded SGE longer than [`MAX_NON_EMBEDDED_LEN`]: ILLEGAL_FIELD (3).
pub const STATUS_SGE_TOO_LONG: BaseStatus = BaseStatus::IllegalField;
/// Base status for a WRB that is neither embedded nor carries exactly one SGE: ILLEGAL_FIELD (3).
pub const STATUS_BAD_SGE_COUNT: BaseStatus = BaseStatus::IllegalField;
/// Base status when the request header's `request_length` does not fit a non-embedded buffer, or
/// the body is too short for the command's fields: INVALID_LENGTH (116). Embedded requests may
/// declare more than the 220 body bytes a WRB holds (be2net does for MODIFY_EQ_DELAY, spec §8
/// item 7), so the emulator does not check their length against the WRB.
pub const STATUS_BAD_LENGTH: BaseStatus = BaseStatus::InvalidLength;
/// Base status when the header's `domain` names a VF: ILLEGAL_FIELD (3). The emulated PF has no
/// VFs (num_vfs 0, spec §8 item 6).
pub const STATUS_NO_SUCH_DOMAIN: BaseStatus = BaseStatus::IllegalField;
/// Additional status of a WRITE_FLASHROM chunk failed by the `flash-fail-at` fault (base FAILED):
/// 23, MGMT_FLASHROM_SAVE_FAILED from FreeBSD's management status list (spec/protocol.md §3.5,
/// ufi-firmware.md §3.6). FreeBSD's list shares its numbers with the base statuses; carrying 23
/// in the additional byte under base FAILED is the emulator's choice, so a host that knows only
/// Linux's base codes still sees a plain failure.
pub const ADDL_FLASH_SAVE_FAILED: u8 = 23;
/// Base status when the firmware cannot reach a command's buffer by DMA (the SGE buffer of a
/// non-embedded command is not mapped, or the response cannot be written back): FAILED (1), and
/// a [`crate::Event::DmaFault`] is logged. What real firmware does on an IOMMU fault is unknown.
pub const STATUS_DMA_FAULT: BaseStatus = BaseStatus::Failed;

// ---------------------------------------------------------------------------------------------
// The factory-fresh adapter (design.md §4, §6)
// ---------------------------------------------------------------------------------------------

/// Model string (GET_CNTL_ATTRIBUTES controller_model_number).
pub const MODEL: &str = "OCe14102";
/// Controller description. **Invented** wording.
pub const DESCRIPTION: &str = "Emulex OneConnect OCe14102 10Gb 2-port (emulated)";
/// Manufacturer name.
pub const MANUFACTURER: &str = "Emulex";
/// Physical ports on the board.
pub const PORT_COUNT: u8 = 2;
/// The OUI every emulated MAC starts with (Emulex's, 00:00:c9).
pub const MAC_OUI: [u8; 3] = [0x00, 0x00, 0xC9];
/// Serial number prefix; the rest is random per state directory. The real serial encoding is
/// unknown (spec §10); the emulator stores an ASCII string in the 32-byte field, NUL-padded.
pub const SERIAL_PREFIX: &str = "EMU";
/// The factory firmware version on flash and running. A version of the real 11.1 line (the file
/// name `oc14-11.1.172.23.ufi` is public, ufi-firmware.md §7); its contents are synthetic.
pub const FACTORY_FIRMWARE_VERSION: &str = "11.1.172.23";
/// Size of the flash file: the flash address space modelled (design.md §6).
pub const FLASH_LEN: u64 = 16 << 20;

/// Privilege mask of the PF (GET_FN_PRIVILEGES): every bit be2net names, spec §8 item 6.
pub const PF_PRIVILEGES: u32 = 0x7FF;
/// Privilege mask of a VF: DEFAULT (0x1) only, be2net's own default for a VF (spec §5.19). What
/// real firmware grants a VF depends on the PF's configuration, which is not public.
pub const VF_PRIVILEGES: u32 = 0x1;
/// COMMON opcodes a VF may not send: they change or describe the whole adapter. A VF sending
/// one gets UNAUTHORIZED_REQUEST (5), the status be2net logs as "VF is not privileged to issue
/// opcode" (spec §3.5). GET_ACTIVE_PROFILE is PF-only per spec §5.9 / §7.1 (be2net
/// sends it on PFs only); that GET_PROFILE_LIST and GET_PROFILE_CONFIG are PF-only too is
/// **assumed** (be2net sends GET_PROFILE_CONFIG from the PF's SR-IOV setup only, §7.1 step 12; a
/// VF learns its limits from GET_FUNC_CONFIG, which it keeps); the profile setters and the flash
/// commands change the adapter. Everything else a VF may send.
pub const VF_REFUSED_OPCODES: [u8; 7] = [
    SetActiveProfile::OPCODE,
    GetActiveProfile::OPCODE,
    GetProfileList::OPCODE,
    GetProfileConfig::OPCODE,
    SetProfileConfig::OPCODE,
    ReadFlashrom::OPCODE,
    WriteFlashrom::OPCODE,
];
/// GET_PORT_NAME answer: one character per port (spec §8 item 6 "0123").
pub const PORT_NAMES: [u8; 4] = *b"0123";
/// Link state of every port: up, 10 Gb/s (spec §8 item 6: speed code 4, link_speed 1000 × 10 Mb/s).
pub const LINK_SPEED_CODE: u8 = 4;
/// `link_speed` in units of 10 Mb/s.
pub const LINK_SPEED_10MBPS: u16 = 1000;
/// PHY interface type: SFP+ 10G (3). **Assumed** for an OCe14102 (SFP+ board).
pub const PHY_INTERFACE_TYPE: u16 = 3;
/// PHY vendor/type code. **Invented**: be2net stores it without interpreting it.
pub const PHY_TYPE: u16 = 0;
/// Speeds the PHY supports: 1G (0x4) | 10G (0x8).
pub const PHY_SPEEDS: u16 = 0x4 | 0x8;

// ---------------------------------------------------------------------------------------------
// Profiles (design.md §6: "IDs are ours, not Broadcom's"; spec/protocol.md §6.4, §10)
// ---------------------------------------------------------------------------------------------

/// One profile the emulated adapter offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileDefinition {
    /// Profile ID. **Invented**: real IDs are not public. Deliberately neither 0-based nor
    /// contiguous nor sorted like the list, so a tool that hard-codes IDs or list positions fails.
    pub id: u8,
    /// Description string (GET_PROFILE_LIST). The names follow vendor marketing (ecosystem.md
    /// §1.3); the exact strings real firmware returns are unknown.
    pub name: &'static str,
    /// PCIe descriptor `pf_type` of the NIC PF: MISSION_NIC (1) or MISSION_RDMA (8), the be2net
    /// values (spec §5.8). That RoCE profiles use MISSION_RDMA is design.md §6's assumption.
    pub pf_type: u8,
    /// EQs the NIC descriptor grants. RoCE profiles get more, since be2net gives half of them to
    /// RoCE (spec §5.7). **Invented** numbers.
    pub eq_count: u16,
}

/// The profile list, in list order.
pub const PROFILES: [ProfileDefinition; 5] = [
    ProfileDefinition { id: 0x11, name: "NIC", pf_type: 1, eq_count: 16 },
    ProfileDefinition { id: 0x14, name: "NIC+iSCSI", pf_type: 1, eq_count: 16 },
    ProfileDefinition { id: 0x15, name: "NIC+FCoE", pf_type: 1, eq_count: 16 },
    ProfileDefinition { id: 0x1A, name: "RoCE-1 (NIC+RoCE)", pf_type: 8, eq_count: 32 },
    ProfileDefinition { id: 0x1B, name: "RoCE-2 (NIC+RoCE)", pf_type: 8, eq_count: 32 },
];

/// PCI function number of the emulated PF (descriptors' `pf_num`, GET_CNTL_ATTRIBUTES): the
/// emulator models function 0 only.
pub const PF_NUM: u8 = 0;

/// The factory profile: NIC (design.md §4).
pub const FACTORY_PROFILE_ID: u8 = 0x11;

/// NIC resource limits every profile grants (GET_FUNC_CONFIG, GET_PROFILE_CONFIG NIC v1
/// descriptor). be2net needs at least one of each and `cap_flags` with the basic filters
/// (spec §5.7); these values are **invented** but generous.
pub mod nic_limits {
    /// Unicast MAC filters.
    pub const UNICAST_MAC_COUNT: u16 = 32;
    /// MCC queues.
    pub const MCC_COUNT: u16 = 1;
    /// VLAN filters.
    pub const VLAN_COUNT: u16 = 64;
    /// Multicast MAC filters.
    pub const MCAST_MAC_COUNT: u16 = 64;
    /// TX queues.
    pub const TXQ_COUNT: u16 = 16;
    /// RX queues (RSS queues + the default queue).
    pub const RQ_COUNT: u16 = 17;
    /// RSS queues.
    pub const RSSQ_COUNT: u16 = 16;
    /// Completion queues.
    pub const CQ_COUNT: u16 = 64;
    /// Interfaces.
    pub const IFACE_COUNT: u16 = 8;
    /// Interface capability flags: everything be2net asks for (spec §8 item 6).
    pub const CAP_FLAGS: u32 = 0x0100_1BBC;
    /// Maximum bandwidth, percent of link speed (the v1 descriptor's unit on Skyhawk, spec §5.8).
    pub const BW_MAX_PERCENT: u32 = 100;
    /// PORT descriptor mc_type: MC_NONE (1), no multi-channel (spec §8 item 6).
    pub const MC_TYPE_NONE: u8 = 1;
    /// PCIe descriptor pf_state: enabled.
    pub const PF_STATE_ENABLED: u8 = 1;
}

// ---------------------------------------------------------------------------------------------
// Fields of query responses that no public driver interprets
// ---------------------------------------------------------------------------------------------

/// GET_CNTL_ATTRIBUTES `hba_mtu` of each port (the rest of the 8 slots are 0). Every attribute
/// field that no public driver reads and whose meaning is not public (supported modes,
/// data-structure versions, GUID, timeouts, hba_status, interface_type, …) is **zero**; filled
/// are the strings, serial, port count/number, ASIC revision and generation, POST status, PCI
/// IDs and function number, these MTUs, and a unique identifier made from the first MAC.
pub const HBA_MTU: u32 = 1500;
/// QUERY_FIRMWARE_CONFIG `config_number`. FreeBSD's table of values is for older chips; what
/// Skyhawk reports is unknown (spec §5.3), so the emulator reports 0.
pub const CONFIG_NUMBER: u32 = 0;
/// QUERY_FIRMWARE_CONFIG `function_caps`: RSS (0x2), which be2net uses. **Assumed**.
pub const FUNCTION_CAPS: u32 = 0x2;
/// LINK_STATUS_QUERY `mac_duplex`: 1. be2net ignores the field; its encoding is not public.
pub const MAC_DUPLEX: u8 = 1;

// ---------------------------------------------------------------------------------------------
// DCBX (ocrdma's DCBX GET_CONFIG, spec/be2net-driver.md §5.2 step 10; contents never published)
// ---------------------------------------------------------------------------------------------

/// Traffic classes the adapter supports (summary bits 31:24). **Assumed** 8, one per priority.
pub const DCBX_TRAFFIC_CLASSES: u8 = 8;
/// The priority PFC protects and the application table maps RoCE to. **Assumed** 3, the priority
/// RoCE deployment guides commonly give lossless traffic; deliberately not ocrdma's default
/// service level (5), so a host that falls back to the default shows it.
pub const DCBX_ROCE_PRIORITY: u8 = 3;
/// The DCBX state byte (summary bits 7:0) when DCBX runs. ocrdma only tests it for zero; 1 is
/// **assumed**.
pub const DCBX_STATE_ON: u8 = 1;
/// PFC state of the operational and administrative copies: enabled, advertised, willing, in
/// sync. **Assumed**: an adapter left at defaults on a DCBX switch that runs PFC.
pub const DCBX_PFC_STATE: u32 =
    DcbxFeatureState::ENABLED | DcbxFeatureState::ADVERTISED | DcbxFeatureState::WILLING | DcbxFeatureState::SYNC;
/// Application priority table state of the same copies: enabled, willing, in sync. **Assumed**.
pub const DCBX_APP_STATE: u32 = DcbxFeatureState::ENABLED | DcbxFeatureState::WILLING | DcbxFeatureState::SYNC;
/// The peer copy's PFC and application state: enabled and advertised (a switch is not willing).
/// **Assumed**.
pub const DCBX_PEER_STATE: u32 = DcbxFeatureState::ENABLED | DcbxFeatureState::ADVERTISED;

// ---------------------------------------------------------------------------------------------
// The SFP+ module in every cage (SFF-8472 serial ID page; no real module is described)
// ---------------------------------------------------------------------------------------------

/// Vendor name (A0 bytes 20–35). **Invented**, and says so.
pub const MODULE_VENDOR: &str = "EMULATED";
/// Vendor OUI (A0 bytes 37–39): Emulex's, like the MACs. **Invented**.
pub const MODULE_OUI: [u8; 3] = MAC_OUI;
/// Vendor part number (A0 bytes 40–55). **Invented**.
pub const MODULE_PART_NUMBER: &str = "SFP-10G-SR-EMU";
/// Vendor revision (A0 bytes 56–59). **Invented**.
pub const MODULE_REVISION: &str = "A";
/// Date code (A0 bytes 84–91, YYMMDD and a lot code). **Invented**: 1 June 2015.
pub const MODULE_DATE_CODE: &str = "150601";
/// Laser wavelength in nm (A0 bytes 60–61): 850, what 10GBASE-SR uses.
pub const MODULE_WAVELENGTH_NM: u16 = 850;

// ---------------------------------------------------------------------------------------------
// The FAT log (MANAGE_FAT; the real log's format is not public)
// ---------------------------------------------------------------------------------------------

/// Largest FAT log the emulated firmware keeps: 128 KiB, more than two 60 KiB RETRIEVE pieces so
/// a host's piecewise read is exercised. **Assumed**; real logs are tens to hundreds of KiB.
pub const FAT_LOG_MAX_LEN: usize = 128 << 10;
