//! The GET_RDMA_STATS blocks about the port's traffic, @416 through @647 of the response
//! (`ocrdma_rdma_stats_resp`, ocrdma_sli.h, `__packed`): what the port sent (`tx_stats`) and
//! received (`rx_stats`), the errors the send and receive sides of the QPs met
//! (`tx_qp_err_stats`, `rx_qp_err_stats`), and the PMA port counters ocrdma derives from them
//! (ocrdma_stats.c). Offsets as in [`super`]: from the start of the command buffer, header
//! included; every field a little-endian dword, a 64-bit counter its `_lo` dword then its `_hi`
//! dword.

use crate::wire::{Reader, Wire, WireError, Writer};

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
