//! RoCE v1 for the emulated OCe14000: the packets on the wire and the RC and UD transports.
//!
//! - [`packet`]: the Ethernet header (optionally 802.1Q) with ethertype 0x8915, the GRH, BTH and
//!   the extended transport headers (RETH, AETH, DETH, ImmDt, IETH) as big-endian wire types, the
//!   opcode table for RC and UD SEND, padding, and the variant ICRC of RoCE v1; a whole frame
//!   encodes to and decodes from bytes ([`packet::Packet`]).
//! - [`rc`]: one reliable-connected queue pair ([`rc::Qp`]) — requester, responder and completer —
//!   as a pure state machine on a lossless, in-order wire (`spec/datapath.md` §3.2). It owns no
//!   thread and reads no clock: the caller passes the time in, drives the timers through
//!   [`rc::Qp::poll`], and supplies memory, the wire and the completion queues through
//!   [`rc::Env`].
//! - [`ud`]: unreliable datagrams (UD, and GSI on QP1): the one-packet SEND, the Q_Key rules,
//!   and delivery behind 40 bytes of GRH into the receive buffers.
//!
//! The crate knows nothing of the emulated device: the device maps ocrdma's WQE, RQE and CQE
//! formats (`spec/datapath.md` §2.3) onto [`rc::SendWr`], [`rc::RecvWr`] and [`rc::Completion`].
#![forbid(unsafe_code)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod error;
pub mod packet;
pub mod rc;
pub mod ud;

pub use error::Error;
