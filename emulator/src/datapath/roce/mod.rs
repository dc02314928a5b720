//! The seam between the device and a RoCE transport (the RC/UD requester, responder and
//! completer, which lives outside this crate): the device tells a [`RoceTransport`] that a QP's
//! SQ or RQ has new entries, and lends it a [`RoceQueues`] through which it reads WQEs, RQEs,
//! AVs and memory regions, moves data in host memory and posts CQEs (spec/datapath.md §2.2–§3).
//!
//! With no transport plugged in ([`crate::device::Device::set_roce_transport`]), the device's
//! built-in engine ([`engine`]) runs the RC QPs, and its UD engine (`ud`) the GSI and UD QPs;
//! a posted SQ WQE on a QP it does not run (before RTR) is logged as
//! [`Event::RoceNotModelled`] and never completed: no fake completion.

pub(crate) mod engine;
mod glue;
mod local;
pub(crate) mod stats;
mod ud;
mod wqe;

pub use local::{FastRegistration, RegionRefusal};

use std::fmt;

use oce_mailbox::commands::{MrAccess, QpParams, QpState, QpType};
use oce_mailbox::entries::{Av, Cqe};

use crate::events::Event;

/// Which ring of a QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkQueue {
    /// The send queue.
    Sq,
    /// The receive queue.
    Rq,
}

/// What a transport sees of a QP: a copy, taken when asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpView {
    /// The QP number (and its doorbell id).
    pub id: u16,
    /// GSI, RC or UD.
    pub qp_type: QpType,
    /// Its PD.
    pub pd_id: u16,
    /// The state MODIFY_QP last set.
    pub state: QpState,
    /// The parameter block QUERY_QP would answer: destination QP, PSNs, MTU, retry counts,
    /// ORD/IRD, GIDs, DMAC, Q_Key.
    pub params: QpParams,
    /// The VLAN to tag frames with, when MODIFY_QP enabled one.
    pub vlan: Option<u16>,
    /// lkey 0 names bus addresses (kernel QPs, `ZERO_LKEYEN`).
    pub lkey0: bool,
    /// Inbound RDMA READ allowed.
    pub inbound_read: bool,
    /// Inbound RDMA WRITE allowed.
    pub inbound_write: bool,
    /// SQ entries posted since the last →INIT (the producer index, modulo the ring).
    pub sq_producer: u32,
    /// RQ entries posted since the last →INIT.
    pub rq_producer: u32,
    /// SQ ring entries.
    pub sq_entries: u32,
    /// RQ ring entries.
    pub rq_entries: u32,
}

/// What a transport sees of a memory region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MrView<'a> {
    /// The full key.
    pub key: u32,
    /// Its PD.
    pub pd_id: u16,
    /// Access rights.
    pub access: MrAccess,
    /// Virtual address of the first byte.
    pub va: u64,
    /// Length in bytes.
    pub len: u64,
    /// Offset of the first byte in the first page.
    pub first_byte_offset: u64,
    /// Bytes per page.
    pub page_len: u64,
    /// A fast-register region (its pages come with an FR_MR WQE).
    pub fast_register: bool,
    /// The pages' bus addresses (empty for an FR region not yet registered by WQE).
    pub pages: &'a [u64],
}

/// What the device lends a transport while it handles a doorbell: the QPs, the rings, host
/// memory and the CQs. Every read or write of host memory that faults is logged by the device
/// and answers `None` / `false`.
pub trait RoceQueues {
    /// QP `id`, if it exists.
    fn qp(&self, id: u16) -> Option<QpView>;
    /// The `entry_len` bytes of QP `qp`'s SQ entry `index` (modulo the ring).
    fn read_wqe(&mut self, qp: u16, index: u32) -> Option<Vec<u8>>;
    /// The bytes of QP `qp`'s RQ entry `index`.
    fn read_rqe(&mut self, qp: u16, index: u32) -> Option<Vec<u8>>;
    /// Entry `index` of the function's AH table.
    fn read_av(&mut self, index: u32) -> Option<Av>;
    /// The memory region with exactly `key`.
    fn memory_region(&self, key: u32) -> Option<MrView<'_>>;
    /// Reads host memory at bus address `addr`.
    fn dma_read(&mut self, addr: u64, buf: &mut [u8]) -> bool;
    /// Writes host memory at bus address `addr`.
    fn dma_write(&mut self, addr: u64, data: &[u8]) -> bool;
    /// FR_MR for a QP of PD `pd`: the fast-register region `reg.key`'s index names, invalid and
    /// of that PD, takes the key, access and geometry, and the `reg.pages` PBEs the device reads
    /// from its PBL pages; it is valid from then on.
    fn fast_register(&mut self, pd: u16, reg: &FastRegistration) -> Result<(), RegionRefusal>;
    /// LKEY_INV, or a peer's SEND with invalidate, for a QP of PD `pd`: the fast-register region
    /// with exactly `key` becomes invalid (it stays registered; FR_MR may make it valid again).
    fn invalidate(&mut self, pd: u16, key: u32) -> Result<(), RegionRefusal>;
    /// Posts `cqe` to the CQ of `queue` of QP `qp`; `solicited` (a solicited receive, or an
    /// error) also ends a solicited-only arming. Refused (false) when the QP is gone or in ERR:
    /// ocrdma `BUG()`s on a CQE for a destroyed QP and makes the flush completions itself.
    fn post_cqe(&mut self, qp: u16, queue: WorkQueue, cqe: &Cqe, solicited: bool) -> bool;
    /// Posts a flush completion (`WR_FLUSH_ERR`) for QP `qp`, which MODIFY_QP has just moved to
    /// ERR: allowed in ERR, refused when the QP is gone. It ends a solicited-only arming, as
    /// every error completion does.
    fn post_flush_cqe(&mut self, qp: u16, queue: WorkQueue, cqe: &Cqe) -> bool;
}

/// A RoCE transport: told when a QP's rings have new entries. Called with the device borrowed
/// (locked, in a server): it must not block.
pub trait RoceTransport: Send + fmt::Debug {
    /// QP `qp`'s SQ has new WQEs up to its producer index.
    fn sq_posted(&mut self, qp: u16, queues: &mut dyn RoceQueues);
    /// QP `qp`'s RQ has new RQEs up to its producer index.
    fn rq_posted(&mut self, qp: u16, queues: &mut dyn RoceQueues);
}

/// The event a posted SQ WQE leaves when no transport is plugged in.
pub(crate) fn not_modelled(qp: &QpView) -> Event {
    Event::RoceNotModelled { qp: qp.id, producer: qp.sq_producer }
}
