//! The counter blocks of the GET_RDMA_STATS response (`ocrdma_rdma_stats_resp`, ocrdma_sli.h,
//! `__packed`), each a wire type of its own. Offsets in the docs are from the start of the
//! command buffer (the 16-byte header included), as in the spec; every field is a little-endian
//! dword, and a 64-bit counter is the header's `_lo` dword followed by its `_hi` dword, which is
//! one little-endian u64 on the wire.
//!
//! | offset | bytes | block (ocrdma_sli.h) |
//! |---|---|---|
//! | 16 | 136 | `act_rsrc_stats`: [`ResourceStats`] |
//! | 152 | 136 | `th_rsrc_stats`: [`ResourceStats`] |
//! | 288 | 32 | `db_err_stats`: [`DoorbellErrorStats`] |
//! | 320 | 96 | `wqe_stats`: [`WqeStats`] |
//! | 416 | 96 | `tx_stats`: [`TxStats`] |
//! | 512 | 32 | `tx_qp_err_stats`: [`TxQpErrorStats`] |
//! | 544 | 72 | `rx_stats`: [`RxStats`] |
//! | 616 | 32 | `rx_qp_err_stats`: [`RxQpErrorStats`] |
//! | 648 | 400 | `tx_dbg_stats`: `u32 data[100]` |
//! | 1048 | 800 | `rx_dbg_stats`: `u32 data[200]` |
//!
//! The blocks up to `wqe_stats` are in [`resources`], the TX and RX blocks in [`traffic`].

mod resources;
mod traffic;

pub use resources::{DoorbellErrorStats, ResourceStats, WqeStats};
pub use traffic::{RxQpErrorStats, RxStats, TxQpErrorStats, TxStats};
