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

use crate::wire::{Reader, Wire, WireError, Writer};

/// Resources in use (`act_rsrc_stats` @16) or their high-water marks (`th_rsrc_stats` @152):
/// 27 dwords with reserved ones at +24 and +36, then `rsvd2[7]` (`struct ocrdma_rsrc_stats`,
/// 136 bytes). ocrdma prints them in debugfs `resource_stats` and overwrites the two PD counts
/// with its own when it preallocated PDs (`ocrdma_update_stats`).
#[doc(alias = "ocrdma_rsrc_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResourceStats {
    /// `dpp_pds` +0.
    pub dpp_pds: u32,
    /// `non_dpp_pds` +4.
    pub non_dpp_pds: u32,
    /// `rc_dpp_qps` +8.
    pub rc_dpp_qps: u32,
    /// `uc_dpp_qps` +12.
    pub uc_dpp_qps: u32,
    /// `ud_dpp_qps` +16.
    pub ud_dpp_qps: u32,
    /// `rc_non_dpp_qps` +20 (then `rsvd` +24).
    pub rc_non_dpp_qps: u32,
    /// `uc_non_dpp_qps` +28.
    pub uc_non_dpp_qps: u32,
    /// `ud_non_dpp_qps` +32 (then `rsvd1` +36).
    pub ud_non_dpp_qps: u32,
    /// `srqs` +40.
    pub srqs: u32,
    /// `rbqs` +44.
    pub rbqs: u32,
    /// Non-shared MRs by size, `r64K_nsmr` +48 through `r128G_to_higher_nsmr` +80: up to 64 KiB,
    /// 64 KiB–2 MiB, 2–44 MiB, 44 MiB–1 GiB, 1–4 GiB, 4–32 GiB, 32–64 GiB, 64–128 GiB, larger.
    pub nsmr_by_size: [u32; 9],
    /// `embedded_nsmr` +84.
    pub embedded_nsmr: u32,
    /// `frmr` +88: fast-register MRs.
    pub frmr: u32,
    /// `prefetch_qps` +92.
    pub prefetch_qps: u32,
    /// `ondemand_qps` +96.
    pub ondemand_qps: u32,
    /// `phy_mr` +100.
    pub phy_mr: u32,
    /// `mw` +104: memory windows (then `rsvd2[7]` +108).
    pub mw: u32,
}

impl ResourceStats {
    /// Bytes on the wire.
    pub const LEN: usize = 136;
}

impl Wire for ResourceStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("dpp_pds", self.dpp_pds)?;
        w.u32("non_dpp_pds", self.non_dpp_pds)?;
        w.u32("rc_dpp_qps", self.rc_dpp_qps)?;
        w.u32("uc_dpp_qps", self.uc_dpp_qps)?;
        w.u32("ud_dpp_qps", self.ud_dpp_qps)?;
        w.u32("rc_non_dpp_qps", self.rc_non_dpp_qps)?;
        w.zeros("rsvd", 4)?;
        w.u32("uc_non_dpp_qps", self.uc_non_dpp_qps)?;
        w.u32("ud_non_dpp_qps", self.ud_non_dpp_qps)?;
        w.zeros("rsvd1", 4)?;
        w.u32("srqs", self.srqs)?;
        w.u32("rbqs", self.rbqs)?;
        for &n in &self.nsmr_by_size {
            w.u32("nsmr", n)?;
        }
        w.u32("embedded_nsmr", self.embedded_nsmr)?;
        w.u32("frmr", self.frmr)?;
        w.u32("prefetch_qps", self.prefetch_qps)?;
        w.u32("ondemand_qps", self.ondemand_qps)?;
        w.u32("phy_mr", self.phy_mr)?;
        w.u32("mw", self.mw)?;
        w.zeros("rsvd2", 28)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let (dpp_pds, non_dpp_pds) = (r.u32("dpp_pds")?, r.u32("non_dpp_pds")?);
        let (rc_dpp_qps, uc_dpp_qps, ud_dpp_qps) = (r.u32("rc_dpp_qps")?, r.u32("uc_dpp_qps")?, r.u32("ud_dpp_qps")?);
        let rc_non_dpp_qps = r.u32("rc_non_dpp_qps")?;
        r.skip("rsvd", 4)?;
        let (uc_non_dpp_qps, ud_non_dpp_qps) = (r.u32("uc_non_dpp_qps")?, r.u32("ud_non_dpp_qps")?);
        r.skip("rsvd1", 4)?;
        let (srqs, rbqs) = (r.u32("srqs")?, r.u32("rbqs")?);
        let mut nsmr_by_size = [0u32; 9];
        for n in &mut nsmr_by_size {
            *n = r.u32("nsmr")?;
        }
        let stats = Self {
            dpp_pds,
            non_dpp_pds,
            rc_dpp_qps,
            uc_dpp_qps,
            ud_dpp_qps,
            rc_non_dpp_qps,
            uc_non_dpp_qps,
            ud_non_dpp_qps,
            srqs,
            rbqs,
            nsmr_by_size,
            embedded_nsmr: r.u32("embedded_nsmr")?,
            frmr: r.u32("frmr")?,
            prefetch_qps: r.u32("prefetch_qps")?,
            ondemand_qps: r.u32("ondemand_qps")?,
            phy_mr: r.u32("phy_mr")?,
            mw: r.u32("mw")?,
        };
        r.skip("rsvd2", 28)?;
        Ok(stats)
    }
}

/// Doorbell errors, @288 (`struct ocrdma_db_err_stats`, 32 bytes: four dwords, `rsvd[4]`).
#[doc(alias = "ocrdma_db_err_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DoorbellErrorStats {
    /// `sq_doorbell_errors` @288.
    pub sq_doorbell_errors: u32,
    /// `cq_doorbell_errors` @292.
    pub cq_doorbell_errors: u32,
    /// `rq_srq_doorbell_errors` @296.
    pub rq_srq_doorbell_errors: u32,
    /// `cq_overflow_errors` @300.
    pub cq_overflow_errors: u32,
}

impl DoorbellErrorStats {
    /// Bytes on the wire.
    pub const LEN: usize = 32;
}

impl Wire for DoorbellErrorStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("sq_doorbell_errors", self.sq_doorbell_errors)?;
        w.u32("cq_doorbell_errors", self.cq_doorbell_errors)?;
        w.u32("rq_srq_doorbell_errors", self.rq_srq_doorbell_errors)?;
        w.u32("cq_overflow_errors", self.cq_overflow_errors)?;
        w.zeros("rsvd", 16)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let stats = Self {
            sq_doorbell_errors: r.u32("sq_doorbell_errors")?,
            cq_doorbell_errors: r.u32("cq_doorbell_errors")?,
            rq_srq_doorbell_errors: r.u32("rq_srq_doorbell_errors")?,
            cq_overflow_errors: r.u32("cq_overflow_errors")?,
        };
        r.skip("rsvd", 16)?;
        Ok(stats)
    }
}

/// Work requests the SQs consumed, by kind, @320 (`struct ocrdma_wqe_stats`, 96 bytes), printed
/// in debugfs `wqe_stats`.
#[doc(alias = "ocrdma_wqe_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WqeStats {
    /// `large_send_rc_wqes_lo`/`_hi` @320/@324.
    pub large_send_rc_wqes: u64,
    /// `large_write_rc_wqes_lo`/`_hi` @328/@332 (then `rsvd[4]` @336).
    pub large_write_rc_wqes: u64,
    /// `read_wqes_lo`/`_hi` @352/@356.
    pub read_wqes: u64,
    /// `frmr_wqes_lo`/`_hi` @360/@364: fast-register WQEs.
    pub frmr_wqes: u64,
    /// `mw_bind_wqes_lo`/`_hi` @368/@372.
    pub mw_bind_wqes: u64,
    /// `invalidate_wqes_lo`/`_hi` @376/@380 (then `rsvd1[2]` @384).
    pub invalidate_wqes: u64,
    /// `dpp_wqe_drops` @392 (then `rsvd2[5]` @396).
    pub dpp_wqe_drops: u32,
}

impl WqeStats {
    /// Bytes on the wire.
    pub const LEN: usize = 96;
}

impl Wire for WqeStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u64("large_send_rc_wqes", self.large_send_rc_wqes)?;
        w.u64("large_write_rc_wqes", self.large_write_rc_wqes)?;
        w.zeros("rsvd", 16)?;
        w.u64("read_wqes", self.read_wqes)?;
        w.u64("frmr_wqes", self.frmr_wqes)?;
        w.u64("mw_bind_wqes", self.mw_bind_wqes)?;
        w.u64("invalidate_wqes", self.invalidate_wqes)?;
        w.zeros("rsvd1", 8)?;
        w.u32("dpp_wqe_drops", self.dpp_wqe_drops)?;
        w.zeros("rsvd2", 20)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let large_send_rc_wqes = r.u64("large_send_rc_wqes")?;
        let large_write_rc_wqes = r.u64("large_write_rc_wqes")?;
        r.skip("rsvd", 16)?;
        let (read_wqes, frmr_wqes) = (r.u64("read_wqes")?, r.u64("frmr_wqes")?);
        let (mw_bind_wqes, invalidate_wqes) = (r.u64("mw_bind_wqes")?, r.u64("invalidate_wqes")?);
        r.skip("rsvd1", 8)?;
        let dpp_wqe_drops = r.u32("dpp_wqe_drops")?;
        r.skip("rsvd2", 20)?;
        Ok(Self {
            large_send_rc_wqes,
            large_write_rc_wqes,
            read_wqes,
            frmr_wqes,
            mw_bind_wqes,
            invalidate_wqes,
            dpp_wqe_drops,
        })
    }
}

/// What the port sent, @416 (`struct ocrdma_tx_stats`, 96 bytes). ocrdma's PMA
/// `port_xmit_packets` is the sum of the five packet counts, `port_xmit_data` the sum of the
/// four byte counts divided by 4 (`ocrdma_sysfs_xmit_pkts`, `ocrdma_sysfs_xmit_data` in
/// ocrdma_stats.c): [`TxStats::pma_packets`], [`TxStats::pma_data`].
#[doc(alias = "ocrdma_tx_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TxStats {
    /// `send_pkts_lo`/`_hi` @416/@420.
    pub send_packets: u64,
    /// `write_pkts_lo`/`_hi` @424/@428.
    pub write_packets: u64,
    /// `read_pkts_lo`/`_hi` @432/@436: READ requests.
    pub read_packets: u64,
    /// `read_rsp_pkts_lo`/`_hi` @440/@444.
    pub read_response_packets: u64,
    /// `ack_pkts_lo`/`_hi` @448/@452: ACKs and NAKs.
    pub ack_packets: u64,
    /// `send_bytes_lo`/`_hi` @456/@460.
    pub send_bytes: u64,
    /// `write_bytes_lo`/`_hi` @464/@468.
    pub write_bytes: u64,
    /// `read_req_bytes_lo`/`_hi` @472/@476.
    pub read_request_bytes: u64,
    /// `read_rsp_bytes_lo`/`_hi` @480/@484.
    pub read_response_bytes: u64,
    /// `ack_timeouts` @488 (then `rsvd[5]` @492).
    pub ack_timeouts: u32,
}

impl TxStats {
    /// Bytes on the wire.
    pub const LEN: usize = 96;

    /// What ocrdma reports as PMA `PortXmitPkts`: SEND + WRITE + READ request + READ response +
    /// ACK packets (`ocrdma_sysfs_xmit_pkts`).
    pub fn pma_packets(&self) -> u64 {
        [self.send_packets, self.write_packets, self.read_packets, self.read_response_packets, self.ack_packets]
            .iter()
            .fold(0u64, |sum, n| sum.wrapping_add(*n))
    }

    /// What ocrdma reports as PMA `PortXmitData`: the four byte counts summed, in 4-byte words
    /// (`ocrdma_sysfs_xmit_data`).
    pub fn pma_data(&self) -> u64 {
        [self.send_bytes, self.write_bytes, self.read_request_bytes, self.read_response_bytes]
            .iter()
            .fold(0u64, |sum, n| sum.wrapping_add(*n))
            / 4
    }
}

impl Wire for TxStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u64("send_pkts", self.send_packets)?;
        w.u64("write_pkts", self.write_packets)?;
        w.u64("read_pkts", self.read_packets)?;
        w.u64("read_rsp_pkts", self.read_response_packets)?;
        w.u64("ack_pkts", self.ack_packets)?;
        w.u64("send_bytes", self.send_bytes)?;
        w.u64("write_bytes", self.write_bytes)?;
        w.u64("read_req_bytes", self.read_request_bytes)?;
        w.u64("read_rsp_bytes", self.read_response_bytes)?;
        w.u32("ack_timeouts", self.ack_timeouts)?;
        w.zeros("rsvd", 20)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let stats = Self {
            send_packets: r.u64("send_pkts")?,
            write_packets: r.u64("write_pkts")?,
            read_packets: r.u64("read_pkts")?,
            read_response_packets: r.u64("read_rsp_pkts")?,
            ack_packets: r.u64("ack_pkts")?,
            send_bytes: r.u64("send_bytes")?,
            write_bytes: r.u64("write_bytes")?,
            read_request_bytes: r.u64("read_req_bytes")?,
            read_response_bytes: r.u64("read_rsp_bytes")?,
            ack_timeouts: r.u32("ack_timeouts")?,
        };
        r.skip("rsvd", 20)?;
        Ok(stats)
    }
}

/// Errors the send side of QPs met, @512 (`struct ocrdma_tx_qp_err_stats`, 32 bytes: five
/// dwords, `rsvd[3]`), printed in debugfs `tx_qp_err_stats`.
#[doc(alias = "ocrdma_tx_qp_err_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TxQpErrorStats {
    /// `local_length_errors` @512.
    pub local_length_errors: u32,
    /// `local_protection_errors` @516.
    pub local_protection_errors: u32,
    /// `local_qp_operation_errors` @520.
    pub local_qp_operation_errors: u32,
    /// `retry_count_exceeded_errors` @524.
    pub retry_count_exceeded_errors: u32,
    /// `rnr_retry_count_exceeded_errors` @528.
    pub rnr_retry_count_exceeded_errors: u32,
}

impl TxQpErrorStats {
    /// Bytes on the wire.
    pub const LEN: usize = 32;
}

impl Wire for TxQpErrorStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("local_length_errors", self.local_length_errors)?;
        w.u32("local_protection_errors", self.local_protection_errors)?;
        w.u32("local_qp_operation_errors", self.local_qp_operation_errors)?;
        w.u32("retry_count_exceeded_errors", self.retry_count_exceeded_errors)?;
        w.u32("rnr_retry_count_exceeded_errors", self.rnr_retry_count_exceeded_errors)?;
        w.zeros("rsvd", 12)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let stats = Self {
            local_length_errors: r.u32("local_length_errors")?,
            local_protection_errors: r.u32("local_protection_errors")?,
            local_qp_operation_errors: r.u32("local_qp_operation_errors")?,
            retry_count_exceeded_errors: r.u32("retry_count_exceeded_errors")?,
            rnr_retry_count_exceeded_errors: r.u32("rnr_retry_count_exceeded_errors")?,
        };
        r.skip("rsvd", 12)?;
        Ok(stats)
    }
}

/// What the port received, @544 (`struct ocrdma_rx_stats`, 72 bytes). ocrdma's PMA
/// `port_rcv_packets` is `roce_frames` + `roce_frame_icrc_drops` +
/// `roce_frame_payload_len_drops`, `port_rcv_data` is `roce_frame_bytes` / 4
/// (`ocrdma_sysfs_rcv_pkts`, `ocrdma_sysfs_rcv_data` in ocrdma_stats.c):
/// [`RxStats::pma_packets`], [`RxStats::pma_data`].
#[doc(alias = "ocrdma_rx_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RxStats {
    /// `roce_frame_bytes_lo`/`_hi` @544/@548.
    pub roce_frame_bytes: u64,
    /// `roce_frame_icrc_drops` @552.
    pub roce_frame_icrc_drops: u32,
    /// `roce_frame_payload_len_drops` @556.
    pub roce_frame_payload_len_drops: u32,
    /// `ud_drops` @560.
    pub ud_drops: u32,
    /// `qp1_drops` @564.
    pub qp1_drops: u32,
    /// `psn_error_request_packets` @568.
    pub psn_error_request_packets: u32,
    /// `psn_error_resp_packets` @572.
    pub psn_error_response_packets: u32,
    /// `rnr_nak_timeouts` @576.
    pub rnr_nak_timeouts: u32,
    /// `rnr_nak_receives` @580.
    pub rnr_nak_receives: u32,
    /// `roce_frame_rxmt_drops` @584.
    pub roce_frame_rxmt_drops: u32,
    /// `nak_count_psn_sequence_errors` @588.
    pub nak_count_psn_sequence_errors: u32,
    /// `rc_drop_count_lookup_errors` @592.
    pub rc_drop_count_lookup_errors: u32,
    /// `rq_rnr_naks` @596.
    pub rq_rnr_naks: u32,
    /// `srq_rnr_naks` @600.
    pub srq_rnr_naks: u32,
    /// `roce_frames_lo`/`_hi` @604/@608 (then `rsvd` @612).
    pub roce_frames: u64,
}

impl RxStats {
    /// Bytes on the wire.
    pub const LEN: usize = 72;

    /// What ocrdma reports as PMA `PortRcvPkts` (`ocrdma_sysfs_rcv_pkts`).
    pub fn pma_packets(&self) -> u64 {
        self.roce_frames
            .wrapping_add(self.roce_frame_icrc_drops.into())
            .wrapping_add(self.roce_frame_payload_len_drops.into())
    }

    /// What ocrdma reports as PMA `PortRcvData`, in 4-byte words (`ocrdma_sysfs_rcv_data`).
    pub fn pma_data(&self) -> u64 {
        self.roce_frame_bytes / 4
    }
}

impl Wire for RxStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u64("roce_frame_bytes", self.roce_frame_bytes)?;
        w.u32("roce_frame_icrc_drops", self.roce_frame_icrc_drops)?;
        w.u32("roce_frame_payload_len_drops", self.roce_frame_payload_len_drops)?;
        w.u32("ud_drops", self.ud_drops)?;
        w.u32("qp1_drops", self.qp1_drops)?;
        w.u32("psn_error_request_packets", self.psn_error_request_packets)?;
        w.u32("psn_error_resp_packets", self.psn_error_response_packets)?;
        w.u32("rnr_nak_timeouts", self.rnr_nak_timeouts)?;
        w.u32("rnr_nak_receives", self.rnr_nak_receives)?;
        w.u32("roce_frame_rxmt_drops", self.roce_frame_rxmt_drops)?;
        w.u32("nak_count_psn_sequence_errors", self.nak_count_psn_sequence_errors)?;
        w.u32("rc_drop_count_lookup_errors", self.rc_drop_count_lookup_errors)?;
        w.u32("rq_rnr_naks", self.rq_rnr_naks)?;
        w.u32("srq_rnr_naks", self.srq_rnr_naks)?;
        w.u64("roce_frames", self.roce_frames)?;
        w.zeros("rsvd", 4)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let stats = Self {
            roce_frame_bytes: r.u64("roce_frame_bytes")?,
            roce_frame_icrc_drops: r.u32("roce_frame_icrc_drops")?,
            roce_frame_payload_len_drops: r.u32("roce_frame_payload_len_drops")?,
            ud_drops: r.u32("ud_drops")?,
            qp1_drops: r.u32("qp1_drops")?,
            psn_error_request_packets: r.u32("psn_error_request_packets")?,
            psn_error_response_packets: r.u32("psn_error_resp_packets")?,
            rnr_nak_timeouts: r.u32("rnr_nak_timeouts")?,
            rnr_nak_receives: r.u32("rnr_nak_receives")?,
            roce_frame_rxmt_drops: r.u32("roce_frame_rxmt_drops")?,
            nak_count_psn_sequence_errors: r.u32("nak_count_psn_sequence_errors")?,
            rc_drop_count_lookup_errors: r.u32("rc_drop_count_lookup_errors")?,
            rq_rnr_naks: r.u32("rq_rnr_naks")?,
            srq_rnr_naks: r.u32("srq_rnr_naks")?,
            roce_frames: r.u64("roce_frames")?,
        };
        r.skip("rsvd", 4)?;
        Ok(stats)
    }
}

/// Errors the receive side of QPs met, @616 (`struct ocrdma_rx_qp_err_stats`, 32 bytes: six
/// dwords, `rsvd[2]`), printed in debugfs `rx_qp_err_stats`.
#[doc(alias = "ocrdma_rx_qp_err_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RxQpErrorStats {
    /// `nak_invalid_requst_errors` (sic) @616.
    pub nak_invalid_request_errors: u32,
    /// `nak_remote_operation_errors` @620.
    pub nak_remote_operation_errors: u32,
    /// `nak_count_remote_access_errors` @624.
    pub nak_remote_access_errors: u32,
    /// `local_length_errors` @628.
    pub local_length_errors: u32,
    /// `local_protection_errors` @632.
    pub local_protection_errors: u32,
    /// `local_qp_operation_errors` @636.
    pub local_qp_operation_errors: u32,
}

impl RxQpErrorStats {
    /// Bytes on the wire.
    pub const LEN: usize = 32;
}

impl Wire for RxQpErrorStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("nak_invalid_requst_errors", self.nak_invalid_request_errors)?;
        w.u32("nak_remote_operation_errors", self.nak_remote_operation_errors)?;
        w.u32("nak_count_remote_access_errors", self.nak_remote_access_errors)?;
        w.u32("local_length_errors", self.local_length_errors)?;
        w.u32("local_protection_errors", self.local_protection_errors)?;
        w.u32("local_qp_operation_errors", self.local_qp_operation_errors)?;
        w.zeros("rsvd", 8)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let stats = Self {
            nak_invalid_request_errors: r.u32("nak_invalid_requst_errors")?,
            nak_remote_operation_errors: r.u32("nak_remote_operation_errors")?,
            nak_remote_access_errors: r.u32("nak_count_remote_access_errors")?,
            local_length_errors: r.u32("local_length_errors")?,
            local_protection_errors: r.u32("local_protection_errors")?,
            local_qp_operation_errors: r.u32("local_qp_operation_errors")?,
        };
        r.skip("rsvd", 8)?;
        Ok(stats)
    }
}
