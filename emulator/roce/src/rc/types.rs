//! What the caller gives the transport and what it gets back: the QP's configuration, work
//! requests, completions and the environment trait.

use std::time::Duration;

use crate::packet::{EthHeader, Grh};

/// A QP's attributes, as MODIFY_QP gives them to the device by RTS (`spec/datapath.md` §2.1).
#[derive(Debug, Clone)]
pub struct QpConfig {
    /// This QP's number (24 bits; never 0: `spec/datapath.md` §2.3).
    pub qpn: u32,
    /// The peer QP's number: BTH destination QP of every packet this QP sends.
    pub dest_qpn: u32,
    /// The protection domain every memory access names.
    pub pd: u32,
    /// The Ethernet header of every frame (MACs, 802.1Q tag or none).
    pub eth: EthHeader,
    /// The GRH of every packet (GIDs, traffic class, flow label, hop limit); its payload length
    /// is computed per packet.
    pub grh: Grh,
    /// The partition key (ocrdma: 0xFFFF).
    pub pkey: u16,
    /// Path MTU in bytes: 256, 512, 1024, 2048 or 4096 (IBTA vol 1 §9.7.1).
    pub mtu: usize,
    /// The first PSN this QP sends (`sq_psn`).
    pub sq_psn: u32,
    /// The first PSN this QP expects (`rq_psn`).
    pub rq_psn: u32,
    /// Retransmissions after an ACK timeout or a sequence NAK before RETRY_EXC_ERR (0–7).
    pub retry_cnt: u8,
    /// Retries after an RNR NAK before RNR_RETRY_EXC_ERR (0–6), or 7: retry forever.
    pub rnr_retry: u8,
    /// The RNR timer code this QP's responder puts into its RNR NAKs (IBTA Table 45).
    pub min_rnr_timer: u8,
    /// Local ACK timeout; `None` disables the retransmit timer (IBTA: timeout 0 = infinite).
    pub ack_timeout: Option<Duration>,
    /// ORD: RDMA READs this QP may have outstanding as requester.
    pub max_rd_atomic: u8,
    /// Send work requests queued at most (posted and not yet completed).
    pub max_send_wr: usize,
    /// Receive work requests queued at most.
    pub max_recv_wr: usize,
    /// Inline data bytes a send work request may carry (ocrdma: 224, `spec/datapath.md` §2.3).
    pub max_inline: usize,
    /// Whether peers may WRITE into this QP's memory (IB_ACCESS_REMOTE_WRITE on the QP).
    pub remote_write: bool,
    /// Whether peers may READ this QP's memory (IB_ACCESS_REMOTE_READ on the QP).
    pub remote_read: bool,
}

/// The requester's attributes a driver sets at RTR→RTS ([`super::Qp::set_requester`]); the
/// fields mean what the [`QpConfig`] fields of the same names do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requester {
    pub sq_psn: u32,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub ack_timeout: Option<Duration>,
    pub max_rd_atomic: u8,
}

/// A local buffer: address, length and the lkey that covers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sge {
    pub addr: u64,
    pub len: u32,
    pub lkey: u32,
}

/// A remote buffer named by a WRITE or READ: its start and rkey (its length is the local one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remote {
    pub addr: u64,
    pub rkey: u32,
}

/// The data of a send work request: gathered from local buffers, or carried inline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Data {
    Sges(Vec<Sge>),
    Inline(Vec<u8>),
}

/// The operation of a send work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOp {
    Send,
    /// SEND with immediate data.
    SendImm(u32),
    /// SEND that asks the receiver to invalidate this rkey.
    SendInv(u32),
    Write(Remote),
    /// WRITE with immediate data: consumes a receive at the peer.
    WriteImm(Remote, u32),
    /// READ the remote buffer into the local SGEs (inline data is refused).
    Read(Remote),
}

/// A send work request; `wr_id` comes back in its completion (ocrdma: the WQE index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendWr {
    pub wr_id: u64,
    pub op: SendOp,
    pub data: Data,
    /// Post a completion on success (errors always complete).
    pub signaled: bool,
    /// Set SE on the message's last packet.
    pub solicited: bool,
    /// Wait until every earlier READ has completed before starting.
    pub fence: bool,
}

/// A receive work request: where an incoming SEND's data goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecvWr {
    pub wr_id: u64,
    pub sges: Vec<Sge>,
}

/// The kind of send work request a send completion reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendKind {
    Send,
    Write,
    Read,
}

/// Completion status, in the IB verbs' vocabulary (`ib_wc_status`); the caller maps it onto the
/// CQE's status code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Success,
    /// The incoming SEND is longer than the receive buffers.
    LocLenErr,
    /// A local key, PD, range or access check failed.
    LocProtErr,
    /// The responder refused the rkey, range or access (NAK remote access error).
    RemAccessErr,
    /// The responder found the request invalid (NAK invalid request).
    RemInvReqErr,
    /// The responder could not complete the request (NAK remote operational error).
    RemOpErr,
    /// No ACK after `retry_cnt` retransmissions.
    RetryExcErr,
    /// Still RNR after `rnr_retry` retries.
    RnrRetryExcErr,
}

/// One completion, for the caller to turn into a CQE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// A send work request finished (signaled successes and every error).
    Send { wr_id: u64, kind: SendKind, byte_len: u32, status: Status },
    /// A receive work request was consumed by a SEND or a WRITE with immediate.
    Recv {
        wr_id: u64,
        /// Bytes received (for WRITE with immediate: the WRITE's length).
        byte_len: u32,
        imm: Option<u32>,
        /// The rkey a SEND with invalidate named, already invalidated through
        /// [`Env::invalidate`].
        invalidate: Option<u32>,
        /// True when a WRITE with immediate consumed the receive.
        write_imm: bool,
        status: Status,
    },
}

/// What a memory access needs of the key (`spec/datapath.md` §3.2 key checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Gather for a SEND or WRITE: any valid lkey.
    LocalRead,
    /// Scatter of a received SEND or a READ response: LOCAL_WRITE on the lkey.
    LocalWrite,
    /// A peer's READ: REMOTE_READ on the rkey.
    RemoteRead,
    /// A peer's WRITE: REMOTE_WRITE on the rkey.
    RemoteWrite,
}

/// One contiguous access through a key; `len` is the buffer's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemRef {
    /// lkey for the local accesses, rkey for the remote ones.
    pub key: u32,
    /// The QP's protection domain.
    pub pd: u32,
    pub va: u64,
    pub len: usize,
    pub access: Access,
}

/// Why the environment refused a memory access; the transport maps any of them to the
/// protection error of its side (LOC_PROT_ERR locally, a remote access NAK for a peer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemError {
    /// No such key, or an invalidated one.
    Key,
    /// The key belongs to another PD.
    Pd,
    /// [va, va + len) is outside the region.
    Range,
    /// The region does not grant the access.
    Access,
    /// The translated address is not DMA-able.
    Fault,
}

/// Asynchronous QP events for the caller to report (ocrdma's async event codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpEvent {
    /// The responder refused a peer's access and moved the QP to error
    /// (IB_EVENT_QP_ACCESS_ERR).
    AccessError,
    /// The responder found a peer's request invalid and moved the QP to error
    /// (IB_EVENT_QP_REQ_ERR).
    RequestError,
}

/// The QP's transport state: ready, or error (then it emits nothing more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpState {
    Ready,
    Error,
}

/// The world around one QP, implemented by the caller (the emulated device, or a test).
///
/// The key checks of `spec/datapath.md` §3.2 (key, PD, range, access; lkey 0 only on QPs that
/// allow it) are the caller's: the device owns the MR table and the translation. The transport
/// never touches memory any other way.
pub trait Env {
    /// Copies `buf.len()` bytes from the memory `mem` names.
    fn read(&mut self, mem: MemRef, buf: &mut [u8]) -> Result<(), MemError>;
    /// Copies `data` into the memory `mem` names.
    fn write(&mut self, mem: MemRef, data: &[u8]) -> Result<(), MemError>;
    /// Invalidates `rkey` for a peer's SEND with invalidate, on a QP of protection domain `pd`:
    /// the responder invalidates the R_Key the IETH names before it completes the receive
    /// (IBTA vol 1, Send with Invalidate). Refused when the key names nothing this QP may
    /// invalidate.
    fn invalidate(&mut self, rkey: u32, pd: u32) -> Result<(), MemError>;
    /// Puts one whole Ethernet frame on the wire.
    fn transmit(&mut self, frame: &[u8]);
    /// Posts a completion for the QP `qpn`.
    fn complete(&mut self, qpn: u32, completion: Completion);
    /// Reports an asynchronous event for the QP `qpn`.
    fn event(&mut self, qpn: u32, event: QpEvent);
}
