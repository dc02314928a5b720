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
//!   (the RoCE counters below; the other blocks zero), single PDs (ALLOC_PD / DEALLOC_PD),
//!   PD ranges (ALLOC_PD_RANGE / DEALLOC_PD_RANGE), the address handle table (CREATE_AH_TBL /
//!   DELETE_AH_TBL), CQ_CREATE version 3, memory regions (REGISTER_NSMR, REGISTER_NSMR_CONT,
//!   DEALLOC_LKEY) and queue pairs (CREATE_QP, MODIFY_QP, QUERY_QP, DELETE_QP) with their
//!   doorbells on the PD pages, the RC transport with fast registration and invalidation (FR_MR
//!   and LKEY_INV WQEs, SEND with invalidate; "Fast registration" below), and UD/GSI datagrams
//!   (below). A send WQE posted on a QP the engines do not run yet (before MODIFY_QP→RTR) is
//!   logged as [`crate::events::Event::RoceNotModelled`], never completed. Not modelled:
//!   ALLOC_LKEY (DMA MRs: ocrdma never asks, spec/datapath.md §2.1), SRQs, memory windows,
//!   multicast: those opcodes are ILLEGAL_REQUEST, completed like any command, so a verb the
//!   model lacks fails at once with a clear status.
//! - **CQ_CREATE v3** (`handlers::rdma_cq`): 4 KiB pages only (`page_size` 1; ocrdma's CQs of
//!   `max_cqe` × 16 bytes use exactly that), `valid` set, 1..=4 pages holding `cqe_count` entries
//!   of 16 bytes, an existing EQ when eventable, and a `pd_id` of 0 (kernel) or a PD in use (a
//!   user CQ); otherwise ILLEGAL_FIELD. **GUESS**: a user CQ's doorbell rings on its PD's page
//!   only; a CQ doorbell on another page is a queue miss and changes nothing.
//! - **Memory regions** (`firmware::rdma::mr`): keys are `index << 8 | generation`, indices from
//!   [`FIRST_MR_INDEX`] (so no key is 0, the reserved DMA lkey) up to `max_mr`; the generation
//!   byte grows each time an index is reused, so a stale key names nothing. **GUESS**: the key
//!   byte a real adapter picks is not public. REGISTER_NSMR needs a PD in use, a non-zero page
//!   size (a fast-register region may have none: `ocrdma_alloc_mr` never sets it), PBL pages
//!   of at least one entry, room in the PBL pages for `ceil((fbo + len) /
//!   page)` entries (non-FR regions), and no more PBL addresses than `num_pbl` (all of them when
//!   `last`); REGISTER_NSMR_CONT must name an open key, continue at the next PBL index and, when
//!   `last`, complete the list; DEALLOC_LKEY must name an existing key exactly, or the key
//!   REGISTER_NSMR gave a fast-register region whose key byte FR_MR changed since
//!   (`ocrdma_dereg_mr` passes `hwmr.lkey`, the registration's). Any miss is
//!   ILLEGAL_FIELD; a full table INSUFFICIENT_RESOURCES. When a non-FR region completes, the
//!   device reads its PBEs from the PBL pages before the command completes; a PBL page it cannot
//!   read leaves the region without pages (logged as a DMA fault), so later accesses to it fail.
//!   An FR region's PBEs come with its FR_MR WQE; until then it is invalid and its key names
//!   nothing usable.
//! - **Queue pairs** (`firmware::rdma::qp`): **GUESS** the GSI QP is [`GSI_QP_ID`] (1, the wire
//!   QPN of QP1, so CQE `qpn`, DETH and the wire agree; one per function) and RC/UD QPs take
//!   the lowest free id from 2 to [`MAX_QP_ID`]; the SQ and RQ doorbell ids equal the QP id.
//!   CREATE_QP needs a PD in use, existing SQ and RQ CQs, type GSI, RC or UD, the entry sizes
//!   QUERY_CONFIG reports (256 / 128), at most `max_wqes` / `max_rqes` entries and rings their
//!   pages hold; an SRQ (none can exist) is ILLEGAL_FIELD. The grant echoes the request's sizes,
//!   SGE counts and ORD/IRD. The IRD pages are kept and never read (**GUESS**: how firmware uses
//!   them is not public; the model answers READs from the requester's memory directly).
//!   MODIFY_QP follows IBTA's transitions (RST→INIT→RTR→RTS, RTS↔SQD, SQE→RTS, any→RST/ERR; a
//!   state may repeat where IBTA allows); **GUESS**: an illegal one is ILLEGAL_FIELD, as is a
//!   path MTU other than 256–4096, or ORD/IRD above the limits. Only parameters whose valid bit is
//!   set change; the AV (GIDs, DMAC, flow label, SL, hop limit, traffic class) comes with the
//!   flow-label bit, the VLAN with its own. A change of state to INIT or RST resets the SQ/RQ
//!   producer indices, as ocrdma resets its own (`ocrdma_qp_state_change`, which leaves them
//!   for a state the QP is already in): rdma_cm's INIT→INIT before RTR (`cma_modify_qp_rtr`)
//!   keeps the receives posted in INIT. **GUESS** (flush): when MODIFY_QP moves an RC QP to
//!   ERR, the device completes every receive the QP still holds with WR_FLUSH_ERR (5), one RQ
//!   CQE each, and the CQ's event fires when armed; its send WQEs it leaves to ocrdma, which
//!   completes them in software when polled (`ocrdma_add_err_cqe`). ocrdma's poll takes flush
//!   CQEs from the adapter (`ocrdma_poll_err_rcqe`) and, where the driver already flushed an
//!   entry itself, drops the adapter's; a consumer asleep in `ibv_get_cq_event` (rping's
//!   completion thread after a disconnect) wakes only for one. After that the device posts
//!   nothing for the QP. QUERY_QP answers the block as set; DELETE_QP, QUERY_QP and MODIFY_QP of an
//!   unknown id are ILLEGAL_FIELD. No async QP events are raised.
//! - **Doorbells on PD pages** (`device::queues::roce`): on page `p` = 1..=15 of the doorbell
//!   BAR, 0x1C0 is the SQ doorbell (dbid 15:0, count 31:16), 0x100 the RQ doorbell (dbid, count
//!   31:24) and 0x120 the CQ doorbell; the SQ and RQ doorbells must name a QP of PD `p` and a
//!   CQ doorbell a CQ created with PD `p`, else it is a queue miss and changes nothing. Page 0
//!   keeps be2net's meaning (0x100 is the Ethernet RQ doorbell); kernel QPs and CQs ring there.
//! - **The RC transport** (`datapath::roce::engine`, `oce_roce::rc`): one transport QP per RC
//!   QP from MODIFY_QP→RTR (built from the attributes set so far; the requester's SQ PSN,
//!   timeout, retry counts and ORD taken at →RTS), silent from →ERR/SQE, dropped on DELETE_QP,
//!   →RST/INIT and every function reset. The engine follows the QP table after every command.
//!   Frames: source MAC the port's permanent MAC; 802.1Q tag when MODIFY_QP enabled the VLAN,
//!   with PCP = the QP's SL (ocrdma with PFC on asks VLAN 0, spec/datapath.md §4.4); P_Key
//!   0xFFFF; GRH from the QP's GIDs **as the mailbox carries them** (**GUESS**: ocrdma on a
//!   little-endian host leaves them in network order) with next header 0x1B; the ACK timeout
//!   4.096 µs × 2^code (IBTA), code 0 none. RoCE v1 frames (0x8915, bare or behind 0x8100) go
//!   to the QP the BTH names, never to the Ethernet RX rings; one naming no running QP, or with
//!   a bad ICRC, is dropped as `NoRing`. The SQ CQE's `wqeidx` is the WQE's ring index; the RQ
//!   CQE's buffer tag the RQE's `rsvd_tag`. An unparsable entry is an error CQE (LOC_QP_OP_ERR)
//!   then silence. **GUESS** (no public source): a responder error raises no async QP event
//!   (the requester's NAK CQE is what ocrdma sees); RoCE frames are sent and received whatever the logical link, as long as a
//!   cable is plugged in; a local error found after the WQE is taken completes it at once, even
//!   with earlier WQEs still outstanding.
//! - **Fast registration** (`datapath::roce::local`, `firmware::rdma::mr`,
//!   `device::queues::roce_frwr`), as ocrdma writes the WQEs (`ocrdma_build_reg`,
//!   `ocrdma_post_send`; spec/datapath.md §2.3, §3.3):
//!   - **FR_MR** names the region by its key's index (bits 31:8) and gives it the whole key
//!     (header dword 2: xprtrdma bumps the key byte each time, `ib_update_fast_reg_key`), the
//!     access of dword 1 (LOCAL_WR, REMOTE_RD, REMOTE_WR; nothing else), the VA and page size
//!     code of `ocrdma_ewqe_fr`, the length of `total_len`, and `num_sges` PBEs the device reads
//!     from the PBL pages REGISTER_NSMR gave (hi dword first, where `ocrdma_build_reg` put them
//!     before posting). Checks, each refusal LOC_QP_OP_ERR then silence: the region exists and
//!     its PBL is complete, it is a fast-register region, it is invalid (**derived**, IBTA: a
//!     valid region must be invalidated before it is registered again), its PD is the QP's,
//!     `num_sges` fits its PBL pages (`num_pbl × pbl_size / 8`: REGISTER_NSMR does not carry
//!     `max_num_sg`), the pages cover `fbo + length`, REMOTE_WR comes with LOCAL_WR (ocrdma's
//!     own rule for registered memory), the page size code is at most 16
//!     (`get_encoded_page_size`), and every PBL read succeeds. **GUESS** (statuses): the error
//!     status is LOC_QP_OP_ERR, as rdma_rxe completes a failed local operation (rxe_req.c
//!     `rxe_do_local_ops`); ocrdma passes any status through (`ocrdma_to_ibwc_err`) and
//!     xprtrdma disconnects on any. **GUESS** (first-byte offset): the device uses `fbo`
//!     modulo the page size. ocrdma computes `fbo = iova − pages[0]`, and xprtrdma puts the
//!     RPC's XID into the iova's upper 32 bits (frwr_ops.c `frwr_map`), so the 64-bit `fbo`
//!     carries the XID; a device that used it whole would fault on every NFS/RDMA access.
//!   - **LKEY_INV** names the key exactly; the region must be a fast-register one of the QP's
//!     PD (IBTA invalidates only fast-register regions and memory windows; rdma_rxe refuses
//!     other MR types, siw checks the PD), else LOC_QP_OP_ERR then silence. **Decision**:
//!     invalidating a region that is already invalid succeeds and leaves it invalid — the verbs
//!     allow an STag already invalid when invalidation is asked (siw_mem.c
//!     `siw_invalidate_stag`, which does the same; so does rdma_rxe). An invalid region's key
//!     then fails every access: LOC_PROT_ERR locally, a remote access NAK (REM_ACCESS_ERR at the
//!     peer) for a WRITE or READ. DEALLOC_LKEY still frees it.
//!   - **Order** (**derived**, stronger than IBTA needs): a local operation waits, with every
//!     WQE after it, until every earlier WQE of the SQ has completed (ACKed, or READ data
//!     landed); then it runs at once and its CQE (when signaled) follows theirs. So FR_MR is in
//!     effect before any later WQE starts, LKEY_INV never pulls a key from under an earlier
//!     WQE still using it, and SQ CQEs stay in ring order, which `ocrdma_poll_success_scqe`
//!     relies on. The cost is no pipelining across a local operation.
//!   - **SEND with invalidate** (`OCRDMA_FLAG_INV`, the rkey in dword 2) goes out with an IETH
//!     on its last packet (RC SEND LAST/ONLY with invalidate). **GUESS** (spec/datapath.md
//!     §3.3: ocrdma never sets REGISTER_NSMR's REMOTE_INV bit): the responder invalidates the
//!     named rkey by the LKEY_INV rules above, REMOTE_INV or not, before the receive
//!     completes; the RQ CQE then has the INVALIDATE bit (w3 bit 30) and the rkey in w0, which
//!     ocrdma reports as `IB_WC_WITH_INVALIDATE` and `ex.invalidate_rkey`. A key it may not
//!     invalidate fails the receive with REM_INV_REQ_ERR (as rdma_rxe, rxe_resp.c) and NAKs
//!     the request as invalid (REM_INV_REQ_ERR at the sender); both QPs go silent.
//! - **RoCE counters** (`datapath::roce::stats`, answered by GET_RDMA_STATS): per function, in
//!   firmware RAM: a POST zeroes them; **GUESS** a function reset does not (as the Ethernet
//!   counters); `reset_stats` zeroes them once the answer is taken. No public source says how
//!   the firmware counts; every rule here is a **GUESS** made to agree with what ocrdma sums
//!   (`ocrdma_sysfs_xmit_pkts`, `_xmit_data`, `_rcv_pkts`, `_rcv_data` in ocrdma_stats.c).
//!   *Sent*: each frame the built-in engine puts on the port, retransmissions included, is one
//!   packet of its BTH kind — SEND (RC, UD and GSI alike: GSI is counted with UD, as SENDs),
//!   WRITE, READ request, READ response or ACK (NAKs and RNR NAKs are ACKs) — so
//!   `port_xmit_packets` is every frame sent. *Bytes* run from the GRH's first to the ICRC's
//!   last (the frame less its Ethernet header and 802.1Q tag; the model has no FCS), RoCE v1's
//!   stand-in for IBA's LRH-to-ICRC data octets; an ACK's bytes count nowhere
//!   (`ocrdma_tx_stats` has no field for them). Frames of a plugged-in external transport are
//!   not seen. *Received*: every RoCE v1 frame the port takes is one `roce_frames` with its
//!   bytes, whether or not a QP takes it (the port counts before the QP lookup, so ocrdma's
//!   `port_rcv_packets`, which adds only the ICRC and length drops, counts every packet); one
//!   no QP takes is also a `qp1_drops` (BTH destination QP 1), `ud_drops` (a UD opcode) or
//!   `rc_drop_count_lookup_errors`. A bad ICRC is `roce_frame_icrc_drops`, a GRH payload length
//!   or pad count that does not fit the frame `roce_frame_payload_len_drops`; neither is a
//!   `roce_frames`. An RNR NAK a QP takes is `rnr_nak_receives`. *NAKs count on the side that
//!   sends them*, in its receive-side counters (its receive path found the error): RNR NAK
//!   `rq_rnr_naks`, PSN sequence error `nak_count_psn_sequence_errors`, invalid request (and
//!   invalid RD request) `nak_invalid_requst_errors`, remote access
//!   `nak_count_remote_access_errors`, remote operational `nak_remote_operation_errors`; the
//!   requester that receives one counts only the frame. *WQEs*, as the engine reads them: READ
//!   `read_wqes`, FR_MR `frmr_wqes`, LKEY_INV `invalidate_wqes`, and an RC SEND or WRITE whose
//!   `total_len` exceeds the path MTU (more than one packet) `large_send_rc_wqes` /
//!   `large_write_rc_wqes`. *QP errors*: an error CQE posted for an RC QP's SQ (LOC_LEN_ERR,
//!   LOC_PROT_ERR, LOC_QP_OP_ERR, RETRY_EXC_ERR, RNR_RETRY_EXC_ERR) or RQ (LOC_LEN_ERR,
//!   LOC_PROT_ERR, LOC_QP_OP_ERR) counts in `tx_qp_err_stats` or `rx_qp_err_stats`; remote
//!   errors (the peer's NAK, counted there), flushes and UD/GSI CQEs count nowhere. *Always
//!   zero*: the resource blocks (ocrdma overwrites their PD counts with its own), doorbell
//!   errors, `ack_timeouts`, `psn_error_*`, `rnr_nak_timeouts`, `roce_frame_rxmt_drops`,
//!   `srq_rnr_naks`, `mw_bind_wqes`, `dpp_wqe_drops` and the debug areas. ocrdma asks again at
//!   most once a second (`ocrdma_update_stats`): a guest reading sysfs twice within a second
//!   sees the first answer twice.
//! - **UD and GSI** (`datapath::roce::ud`, `oce_roce::ud`): the GSI QP (QP1) and UD QPs run
//!   from MODIFY_QP→RTR (built with the SQ PSN →RTS sets), are dropped on DELETE_QP, →RST/INIT
//!   and every function reset, and go silent after their first error CQE or →ERR/SQE (ocrdma
//!   moves a QP to ERR in software on any error CQE and flushes by itself). Wire QPN 1 is the
//!   GSI QP: its id is [`GSI_QP_ID`] (a compile-time check ties the two), so the DETH source
//!   QP, the BTH destination and the CQE `qpn` agree.
//!   - *Send.* A WQE must be a SEND (with immediate or not) whose size holds the UD header
//!     (`ocrdma_build_ud_hdr`: dest QPN, Q_Key, `ahid`, `hdr_type`) and whose `hdr_type` names
//!     RoCE v1: 0 or 1 (`rdma_network_type` IB or ROCE_V1, the value the 6.1 kernel writes for
//!     its own AHs; QUERY_CONFIG reports `l3_type` 0, so 2 and 3, RoCE v2, are LOC_QP_OP_ERR). `ahid` indexes the function's AH table; an
//!     index past it, an entry that cannot be read or one whose `valid` lacks bit 7
//!     (`OCRDMA_AV_VALID`) completes the WQE with LOC_QP_OP_ERR and sends nothing (**GUESS**:
//!     the status a real adapter gives a bad AH is not public). The frame is the AV's Ethernet
//!     header as ocrdma wrote it (DMAC, SMAC, the 802.1Q TCI when `valid` bit 1 says so; the
//!     WQE's AH_VLAN flag is not consulted, **GUESS**), a GRH from the AV (version 6, traffic
//!     class `tclass_flow` 27:20, flow label 19:0, hop limit, the GIDs as written, next header
//!     0x1B, the PD field replaced by the payload length; **GUESS**: ocrdma's `set_av_attr`
//!     shifts the traffic class by 24, IBTA's place is 20, and the model passes bits 27:20
//!     through, so only class 0 arrives as set), BTH UD SEND_ONLY (0x64, or 0x65 with
//!     immediate) with SE from SOLICIT, P_Key 0xFFFF, the WQE's dest QPN, AckReq clear and a
//!     PSN counting from the SQ PSN, and a DETH with the WQE's Q_Key (the QP's own when the
//!     WQE's has bit 31 set, IBTA's controlled Q_Keys) and the QP's id as source QP. The AV's
//!     PD is not checked against the QP's. A message longer than [`MAX_UD_PAYLOAD`] is
//!     LOC_LEN_ERR, a bad lkey LOC_PROT_ERR. A signaled success posts an SQ CQE (WQE index,
//!     byte count = payload).
//!   - *Loopback* (**decision**; no public source says how Skyhawk does it): a datagram whose
//!     DMAC is the port's MAC (or its AV's own source MAC) never goes on the wire: the adapter
//!     hands it to its own receive path, as rdma_cm and ib_mad need when a host addresses its
//!     own GID (a switch does not send a frame back out of the port it came in on). The send's
//!     CQE comes before the receive's.
//!   - *Receive.* A UD SEND frame goes to the UD or GSI QP its BTH names if the DETH Q_Key is
//!     the QP's (on QP1 only 0x80010000, `IB_QP1_QKEY`, whatever its context holds) and an RQE
//!     is posted, and its payload is at most [`MAX_UD_PAYLOAD`]; P_Key and DGID are not checked
//!     (**GUESS**: one partition; the MAC already chose the port). Otherwise it is dropped
//!     silently, reported as `Receipt::Dropped(NoRing)` like an RC frame for no QP and counted
//!     as one ("RoCE counters": `qp1_drops`, `ud_drops`): no RNR, no NAK, the RQE stays for the
//!     next datagram.
//!     The RQE's buffers get the GRH as received (40 bytes, payload length included) then the
//!     payload; the CQE is ocrdma's UD shape (`ocrdma_update_ud_rcqe`): byte count with the 40
//!     GRH bytes in w1 28:16, P_Key index 0 in w1 15:0, L3 type 0 in w1 31:29 (ocrdma reads it
//!     only with UDP encapsulation, which `l3_type` 0 rules out), the QP in w2, buffer tag 0
//!     (no SRQ), and valid, RQ, status in 26:24 and the source QP in 23:0 in w3; with
//!     immediate data, w0 and the IMM flag. Buffers shorter than 40 + payload complete
//!     LOC_LEN_ERR with nothing written (rdma_rxe does the same for UD without SRQ), a bad
//!     lkey LOC_PROT_ERR, an unparsable RQE LOC_QP_OP_ERR; then the QP is silent. BTH SE makes
//!     the receive CQE solicited.
//! - **Protection domains** (`firmware::rdma`): ids from [`FIRST_PD_ID`] up to [`RDMA_MAX_PD`]
//!   of them, shared by single PDs and ranges. A range is the lowest run of free ids long
//!   enough; one that does not fit is FAILED with INSUFFICIENT_RESOURCES, as is a PD past the
//!   last. No PD has a direct packet push page ([`ROCE_LIMITS`] reports none): ALLOC_PD asked for
//!   DPP answers a plain PD (DPP bit clear), which ocrdma accepts; ALLOC_PD_RANGE asked for DPP
//!   PDs is FAILED with INSUFFICIENT_RESOURCES. DEALLOC_PD must name a single PD in use and
//!   DEALLOC_PD_RANGE exactly a range handed out (start and count), else ILLEGAL_FIELD.
//! - **Address handle tables** (`firmware::rdma`): one per function ([`MAX_AH_TABLES`]), ids
//!   from 1; the request needs 1–8 pages, a non-zero entry size and a non-zero first page-list
//!   address (ILLEGAL_FIELD otherwise). The page list's address, page count and size and the
//!   entry size are kept, so an AV can be read when a UD send names it. DELETE_AH_TBL of an
//!   unknown id is ILLEGAL_FIELD.
//! - **What resets clear**: PDs, tables, regions and QPs are the function's, like its queues ([`super::queues`]):
//!   FUNCTION_RESET, a function-level reset, a chip reset and a power cycle drop them.
//! - **What the real ocrdma showed** (`tests/seed-workflow/run.sh`, Debian 6.1): with the
//!   commands above and the MCC engine's second queue it registers `ocrdma0`, `ibv_devinfo` opens
//!   it (alloc_ucontext takes a PD from the pre-allocated range: no command), and the port is
//!   ACTIVE once the netdev is up. Before CQ_CREATE v3 and CREATE_QP were modelled, the RDMA
//!   core's MAD agent failed to open port 1 (three error lines in the kernel log). With a translating vIOMMU, `ibv_devinfo` is killed by the guest
//!   kernel ("Corrupted page table"): ocrdma hands user space `virt_to_phys()` of a DMA-API
//!   buffer, which the IOMMU layer allocated through a remapping; not the device's doing.
//!   `tests/roce-qemu/run.sh --stack ocrdma` (6.1.0-57): `ibv_rc_pingpong`'s REGISTER_NSMR
//!   carries PD **0**: `ocrdma_alloc_pd` hands a user context's first PD the context's own PD
//!   (`goto pd_mapping`) and leaves the core's ib_pd zeroed, so every later verb on it names
//!   id 0 and a NULL `uctx`. The model refuses PD 0 (ILLEGAL_FIELD: "Couldn't register MR").
//!   Accepting it (tried, not kept) gets CREATE_QP through, and then the guest kernel oopses
//!   in `ocrdma_copy_qp_uresp` → `ocrdma_add_mmap` (NULL `pd->uctx`), whatever the device
//!   answers: user-space RC QPs cannot run on this kernel's ocrdma as shipped. The same ocrdma
//!   rebuilt with that shortcut never taken (`tests/roce-qemu/ocrdma-fix.sh`) runs
//!   `ibv_rc_pingpong` (default, inline, events, 64 KiB), `ib_write_bw`, `ib_read_bw` and a
//!   WRITE with a wrong rkey (IBV_WC_REM_ACCESS_ERR) against the model with no change to it:
//!   its user CQs ring on the context PD's page and its QPs on their own PD's page, as above.

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

/// The first memory-region index; keys are `index << 8 | generation`, so none is 0, the lkey
/// ocrdma's kernel QPs use for bus addresses (spec/datapath.md §2.1). **GUESS**.
pub const FIRST_MR_INDEX: u32 = 1;

/// The GSI QP's id: QP1, as on the wire (spec/datapath.md §3.1). **GUESS**: the id firmware
/// returns for it is not public; ocrdma only requires it to be non-zero.
pub const GSI_QP_ID: u16 = 1;

/// The longest UD (and GSI) message the model sends: 4096 bytes, IBTA's largest path MTU (a UD
/// message is one packet, IBTA vol 1 §9.8.4). **GUESS**: the real limit follows the port's
/// active MTU, which the model does not know (the netdev's MTU lives in the host); ocrdma
/// reports 1024 for a 1500-byte netdev and `ib_mad` sends 256-byte MADs, well below it. A longer
/// send completes with LOC_LEN_ERR.
pub const MAX_UD_PAYLOAD: usize = 4096;

/// The highest QP id: ids 2..=1024 for RC and UD QPs, 1023 of them, plus the GSI QP: the
/// `max_qp` of [`ROCE_LIMITS`]. **Invented**, like that limit.
pub const MAX_QP_ID: u16 = ROCE_LIMITS.max_qp as u16;

/// What RDMA QUERY_CONFIG reports. **Invented** (plausible for a 10 GbE RoCE v1 adapter, none
/// from a real OCe14000): RoCE v1 only (`l3_type` 0); no DPP PDs, CQs or credits (the model has
/// no DPP region); 256-byte send and 128-byte receive entries; fewer than 2048 CQs (ocrdma
/// `BUG()`s on an event for CQ id 2048 or more, spec/be2net-driver.md §5.3); the PD count is
/// [`RDMA_MAX_PD`]. `max_wqes` equals `max_cqes` (1024): ocrdma makes every CQ `max_cqe` long,
/// so a deeper SQ could not have its send CQ (xprtrdma and svcrdma fail at send-CQ creation
/// otherwise, spec/datapath.md §2.5).
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
    max_wqes: 1024,
    max_cqes: 1024,
    max_cq: 1024,
    max_srq_sge: 3,
    max_srq_rqe: 1024,
    max_rd_sge: 3,
    max_write_sge: 3,
    ird_pages: 0,
};
