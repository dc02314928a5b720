//! Assumptions about the queues, their interrupts and the commands a NIC driver sends while it
//! sets up and runs (spec/be2net-driver.md §3, §7, §8.2 list what is not public). Re-exported
//! by [`crate::assumptions`], the one home of every assumption.
//!
//! # Behaviour choices
//!
//! - **Queue ids** (`firmware::resources`, `handlers::queues`, `handlers::eth`): one id space
//!   per kind (EQ, CQ, MCC, TX, RX) and per function, each counting from [`FIRST_QUEUE_ID`] and
//!   reusing the lowest free id; interfaces and MAC filters likewise. RX ids stay at most
//!   [`MAX_RX_QUEUE_ID`]. An EQ gets the lowest MSI-X index no live EQ uses, so a NIC driver's
//!   EQs get 0..n−1 and a RoCE driver's EQs the indices after them (be2net-driver.md §5.1 item
//!   6). How many of each a function may create is the running profile's NIC descriptor (what
//!   GET_FUNC_CONFIG reports), except MCC queues ([`MAX_MCC_QUEUES`]); one more is FAILED with
//!   additional status INSUFFICIENT_RESOURCES (TOO_MANY_INTERFACES for interfaces,
//!   INSUFFICIENT_VLANS for VLANs). A request naming a queue or interface that does not exist,
//!   a page list too short for the ring, or a context without its valid bit is ILLEGAL_FIELD.
//!   Destroying an EQ or CQ that others still name is allowed; they simply raise no more events.
//! - **What resets clear**: FUNCTION_RESET, a function-level reset (FLR, vfio-user
//!   DEVICE_RESET), a chip reset and a power cycle drop every queue, interface and MAC filter of
//!   the function, WRBs posted and not run, held completions, and the settings
//!   (SET_INTERRUPT_ENABLE, flow control, logical link) back to their defaults; INTx is
//!   de-asserted. The physical link (`link-down`) is not the function's.
//! - **The MCC engine** (`datapath::mcc`, `device::queues::mcc`): the MCC doorbell's count adds
//!   to the WRBs posted; they run in ring order, each through the same path as the bootstrap mailbox (embedded
//!   responses into the ring slot, non-embedded over the SGE buffer), inside the doorbell write,
//!   so a host that busy-polls its completion queue sees the answer before its next read. Each
//!   WRB gets one completion on the MCC's CQ: status, both tags copied unchanged, VALID |
//!   COMPLETED (a `no-valid` fault leaves VALID out, so the host never sees it; a `slow` or
//!   `slow-flash` fault holds it back, and the ring stops behind it until the delay has passed:
//!   [`crate::device::Device::poll`] writes it). A WRB the device cannot read gets no completion.
//! - **Events and interrupts** (`datapath::events`, be2net-driver.md §3.5, a derived model): EQs
//!   and CQs start unarmed (unless the create request sets `armed`); a CQ or EQ doorbell sets
//!   the armed state to its REARM bit. A completion written to an armed, eventable CQ disarms it
//!   and posts one entry `(cq_id << 16) | 1` to its EQ; an entry posted to an armed EQ disarms it
//!   and fires. An EQ doorbell subtracts `num_popped` from the entries outstanding, and REARM
//!   with entries still outstanding fires at once instead of arming (no lost wake-ups); a CQ
//!   doorbell likewise subtracts `num_popped` from the CQ's unpopped entries, and REARM with
//!   some left posts the CQ's event at once instead of arming (ocrdma's MQ handler re-arms after
//!   waking a waiter that may already have posted the next command, whose completion then lands
//!   on the disarmed CQ; the seed-workflow guest test lost it without this rule). Firing
//!   sends the EQ's MSI-X vector while MSI-X is enabled, otherwise asserts INTx until an EQ
//!   doorbell with CLR; either only while host interrupts are on (SET_INTERRUPT_ENABLE, or
//!   INT_CTRL's HOSTINTR bit at config 0xFC): whether HOSTINTR also gates MSI-X is not public.
//!   A fire while they are off is lost, as on a masked line. Ring overflow (a host that does not
//!   consume) is not modelled: entries are overwritten.
//! - **A doorbell naming no queue** (`datapath`) is dropped: nothing changes and no
//!   completion or event is written. On real hardware the doorbell logic, not the firmware,
//!   decodes the queue doorbells, so the firmware's event log (and the FAT log made from it)
//!   does not see it; the device records it apart, as a [`crate::QueueMiss`]
//!   ([`crate::device::Device::queue_misses`]), so a test can assert a driver never rings a
//!   queue it does not have. A completion due on a CQ destroyed under its queue is dropped and
//!   recorded the same way.
//! - **TX and RX** (`datapath::tx`, `datapath::rx`): what the Ethernet rings do with frames is
//!   on the datapath's own page ([`super::datapath`]). RX_DESTROY posts one flush completion
//!   (valid, no fragment) to the ring's CQ before the command completes; the posted buffers are
//!   not returned (be2net frees them itself). That the flush completion exists is what be2net's
//!   `be_rx_cq_clean` shows (it warns "did not receive flush compl" after 50 ms without one);
//!   its exact bits beyond `valid` and `numfrags` are not public.
//! - **Link** (`handlers::port`, `device::queues`): the physical link is up unless the
//!   `link-down` fault is set; the function's logical link follows it unless the driver
//!   disabled it (SET_LOGICAL_LINK_CONFIG without the enable bit). When the logical link
//!   changes, every MCC subscribed to link-state events (bitmap bit 1) with an async CQ gets one
//!   event: port, status `0x2 | up` (logical, physical), duplex and speed codes as
//!   LINK_STATUS_QUERY reports them (0 when down), type 0. No event is posted when an MCC is
//!   created (whether real firmware posts an initial one is not public).
//! - **What the real be2net showed** (`tests/be2net-qemu/run.sh`, Debian 6.1): it needs the RX
//!   flush completion above; it polls every MCC completion within the doorbell's round trip, so
//!   completing inside the doorbell write is enough; at unload its SET_PROFILE_CONFIG names
//!   the function by the guest's `devfn`, which the emulator accepts only as 0 (the PF is
//!   function 0, [`crate::assumptions::PF_NUM`]): the test puts the adapter behind a PCIe root
//!   port, where it is function 0 as a real card is. Everything else it sends is answered with
//!   success or, for SET_FEATURES, ILLEGAL_REQUEST, so it logs no error or warning (SET_FEATURES
//!   gives one info line, below).
//! - **Commands the model does not implement** answer ILLEGAL_REQUEST: SET_FEATURES, so be2net
//!   keeps its UE recovery off (be2net-driver.md §7) and logs the info line "Adapter does not
//!   support HW error recovery" at every probe (§2 step 23; the guest test's kernel log shows
//!   it), never an error or warning; and the RDMA verbs beyond those of [`super::rdma`], which
//!   ocrdma logs as errors (`ocrdma_mbx_cmd() cqe_status=0x2`, see there).
//! - **Interrupt moderation** (`handlers::queues`): EQ_CREATE's and MODIFY_EQ_DELAY's delay
//!   multipliers are kept per EQ but never applied, and the R2I delay code of an EQ doorbell
//!   (bits 31:30) is ignored: every interrupt is raised at once, as no coalescing is modelled.
//!   MODIFY_EQ_DELAY's `phase` is ignored; an entry naming an EQ that does not exist makes the
//!   command ILLEGAL_FIELD with no EQ changed (all or none: what firmware does with a partly
//!   valid list is not public). Skyhawk's be2net sends it only for `ethtool -C` (§3.7), ocrdma
//!   from its 1-second EQ-delay work when interrupt rates cross its thresholds (§5.2).
//! - **RX filtering** (`handlers::interface`): NTWK_RX_FILTER sets the interface flags
//!   `if_flags_mask` selects, ignoring bits outside the interface's capabilities, and with
//!   MULTICAST selected replaces the multicast list (more entries than the profile's
//!   `mcast_mac_count` is FAILED / INSUFFICIENT_RESOURCES). `global_flags` and
//!   `global_flags_mask` are decoded and not modelled: which global flags exist and what they
//!   do is not public. What the interface flags do to a frame is on [`super::datapath`]'s page.

use oce_mailbox::commands::{FlowControl, SetDriverFunctionCap};
use oce_mailbox::doorbells::TxDoorbell;

/// The first id of every queue kind, interface and MAC filter: be2net treats 0xFFFFFFFF as "no
/// interface" and keeps ids in small arrays, so small ids from 1 are the safe choice
/// (be2net-driver.md §7).
pub const FIRST_QUEUE_ID: u32 = 1;
/// The highest RX queue id: GET_STATISTICS v2 makes be2net index its 136-entry
/// `rx_drops_no_fragments` by RX queue id (be2net-driver.md §2, response-value constraints).
pub const MAX_RX_QUEUE_ID: u16 = 135;
/// MCC queues per function: be2net's and ocrdma's (be2net-driver.md §5.4). The NIC descriptor's
/// `mcc_count` is only read for SR-IOV distribution, so it does not limit them here.
pub const MAX_MCC_QUEUES: u16 = 2;
/// TX_CREATE v2's `db_offset`: be2net's pre-v2 TX doorbell offset, 0x60 (`DB_TXULP1_OFFSET`).
/// What real Skyhawk firmware answers is not public (be2net-driver.md §7).
pub const TX_DOORBELL_OFFSET: u32 = TxDoorbell::OFFSET;
/// ACPI_WOL_MAGIC_CONFIG's capability bits: none (not Wake-on-LAN capable). Which boards wake
/// on LAN is not public; without the capability be2net skips its WoL paths.
pub const WOL_CAPABILITIES: u8 = 0;
/// GET_CNTL_ADDITIONAL_ATTRIBUTES `on_die_temperature`, °C. **Invented**: a plausible idle value.
pub const DIE_TEMPERATURE: u8 = 45;
/// SET_DRIVER_FUNCTION_CAP: the capabilities granted when asked, the BE3-native RX interface
/// (be2net-driver.md §7: that Skyhawk supports it is a **GUESS**); software timestamps are not
/// offered.
pub const DRIVER_CAPABILITIES: u32 = SetDriverFunctionCap::BE3_NATIVE_ERX_API;
/// Flow control before any SET_FLOW_CONTROL: pause frames on in both directions, what be2net
/// asks for anyway (be2net-driver.md §2 step 3).
pub const DEFAULT_FLOW_CONTROL: FlowControl = FlowControl { tx: true, rx: true };
