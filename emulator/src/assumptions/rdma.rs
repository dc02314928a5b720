//! Assumptions about the RoCE engine a RoCE driver (ocrdma) talks to: its limits and how it
//! hands out protection domains and address handle tables (spec/be2net-driver.md §5; no public
//! source gives an OCe14000's RDMA limits or firmware allocation rules). Re-exported by
//! [`crate::assumptions`], the one home of every assumption.
//!
//! # Behaviour choices
//!
//! - **When the RDMA subsystem answers** (`handlers::rdma`): only while the running profile has
//!   RoCE (`function_mode` with RDMA, 0x4); on a NIC function every RDMA command is
//!   ILLEGAL_REQUEST, as an opcode the firmware does not have. ocrdma never gets that far on a
//!   NIC function (it checks `function_mode` first).
//! - **What is modelled**: QUERY_CONFIG (the fixed limits of [`ROCE_LIMITS`]), GET_RDMA_STATS
//!   (every counter zero: no RDMA traffic flows; a reset request changes nothing), single PDs
//!   (ALLOC_PD / DEALLOC_PD), PD ranges (ALLOC_PD_RANGE / DEALLOC_PD_RANGE) and the address
//!   handle table (CREATE_AH_TBL / DELETE_AH_TBL). No RDMA data path: every other RDMA opcode
//!   (QPs, memory registration, SRQs, multicast) is ILLEGAL_REQUEST, completed like
//!   any command, so a verb the model lacks fails at once with a clear status and never leaves
//!   the driver waiting. CQ_CREATE version 3 (ocrdma's user completion queues) is likewise
//!   ILLEGAL_REQUEST; version 2 (the MCC's queue) is implemented.
//! - **Protection domains** (`firmware::rdma`): ids from [`FIRST_PD_ID`] up to [`RDMA_MAX_PD`]
//!   of them, shared by single PDs and ranges. A range is the lowest run of free ids long
//!   enough; one that does not fit is FAILED with INSUFFICIENT_RESOURCES, as is a PD past the
//!   last. No PD has a direct packet push page ([`ROCE_LIMITS`] reports none): ALLOC_PD asked for
//!   DPP answers a plain PD (DPP bit clear), which ocrdma accepts; ALLOC_PD_RANGE asked for DPP
//!   PDs is FAILED with INSUFFICIENT_RESOURCES. DEALLOC_PD must name a single PD in use and
//!   DEALLOC_PD_RANGE exactly a range handed out (start and count), else ILLEGAL_FIELD.
//! - **Address handle tables** (`firmware::rdma`): one per function ([`MAX_AH_TABLES`]), ids
//!   from 1; the request needs 1–8 pages, a non-zero entry size and a non-zero first page-list
//!   address (ILLEGAL_FIELD otherwise). The firmware never reads the table: no UD traffic is
//!   modelled. DELETE_AH_TBL of an unknown id is ILLEGAL_FIELD.
//! - **What resets clear**: PDs and tables are the function's, like its queues ([`super::queues`]):
//!   FUNCTION_RESET, a function-level reset, a chip reset and a power cycle drop them.
//! - **What the real ocrdma showed** (`tests/seed-workflow/run.sh`, Debian 6.1): with the
//!   commands above and the MCC engine's second queue it registers `ocrdma0`, `ibv_devinfo` opens
//!   it (alloc_ucontext takes a PD from the pre-allocated range: no command), and the port is
//!   ACTIVE once the netdev is up. The RDMA core's MAD agent then fails to open port 1: its CQ is
//!   a CQ_CREATE version 3, ILLEGAL_REQUEST here (and its QP1 would be CREATE_QP), three error
//!   lines in the kernel log. With a translating vIOMMU, `ibv_devinfo` is killed by the guest
//!   kernel ("Corrupted page table"): ocrdma hands user space `virt_to_phys()` of a DMA-API
//!   buffer, which the IOMMU layer allocated through a remapping; not the device's doing.

use oce_mailbox::commands::{RdmaConfig, RdmaQpFlags};

/// The first protection domain id. Page `pd_id` of the doorbell BAR is a user PD's doorbell
/// page (ocrdma `ocrdma_get_db_addr`); page 0 holds the function's own doorbells (mailbox, MCC,
/// EQ/CQ), so ids start at 1.
pub const FIRST_PD_ID: u16 = 1;

/// The RoCE doorbell page: be2net hands ocrdma `db_page_size` 4096 on Skyhawk
/// (`be_roce_map_pci_bars`, spec/be2net-driver.md §9).
const ROCE_DOORBELL_PAGE: u64 = 4096;

/// Protection domains per function. **Derived from the model**: one doorbell page per PD id
/// must fit in the 64 KiB doorbell BAR ([`super::BAR4_LEN`]) after page 0, so ids 1–15; a real
/// OCe14000 reports many more (how many is not public).
pub const RDMA_MAX_PD: u16 = (super::BAR4_LEN / ROCE_DOORBELL_PAGE) as u16 - FIRST_PD_ID;

/// Address handle tables per function: ocrdma creates one per device.
pub const MAX_AH_TABLES: usize = 1;

/// What RDMA QUERY_CONFIG reports. **Invented** (plausible for a 10 GbE RoCE v1 adapter, none
/// from a real OCe14000): RoCE v1 only (`l3_type` 0); no DPP PDs, CQs or credits (the model has
/// no DPP region); 256-byte send and 128-byte receive entries; fewer than 2048 CQs (ocrdma
/// `BUG()`s on an event for CQ id 2048 or more, spec/be2net-driver.md §5.3); the PD count is
/// [`RDMA_MAX_PD`].
pub const ROCE_LIMITS: RdmaConfig = RdmaConfig {
    qp_flags: RdmaQpFlags(RdmaQpFlags::SRQ_SUPPORTED),
    max_qp: 1024,
    l3_type: 0,
    ca_ack_delay: 16,
    max_pd: RDMA_MAX_PD,
    max_send_sge: 3,
    max_recv_sge: 3,
    max_ord_per_qp: 8,
    max_ird_per_qp: 8,
    max_shared_ird_ord: 0,
    max_mr: 16 * 1024,
    max_mr_size: 1 << 32,
    max_num_mr_pbl: 64 * 1024,
    max_mw: 0,
    max_fmr: 0,
    max_pages_per_frmr: 256,
    max_mcast_group: 0,
    max_mcast_qp_attach: 0,
    max_total_mcast_qp_attach: 0,
    max_dpp_cqs: 0,
    rqe_strides: (128 / RdmaConfig::STRIDE) as u8,
    wqe_strides: (256 / RdmaConfig::STRIDE) as u8,
    max_rpir_qps: 0,
    max_srq: 1024,
    max_dpp_credits: 0,
    max_dpp_pds: 0,
    max_dpp_credits_pds_per_pd: 0,
    max_rqes: 2048,
    max_wqes: 2048,
    max_cqes: 1024,
    max_cq: 1024,
    max_srq_sge: 3,
    max_srq_rqe: 1024,
    max_rd_sge: 3,
    max_write_sge: 3,
    ird_pages: 0,
};
