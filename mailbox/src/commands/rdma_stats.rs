//! RDMA GET_RDMA_STATS (RDMA subsystem 10, opcode 27): the RoCE engine's counters, which ocrdma
//! reads for its PMA port counters (sysfs `ports/1/counters/port_{xmit,rcv}_{packets,data}`,
//! answered by `ocrdma_process_mad` → `ocrdma_pma_counters`) and its debugfs files
//! (`ocrdma_mbx_rdma_stats` in ocrdma_hw.c, `ocrdma_update_stats` in ocrdma_stats.c;
//! `ocrdma_rdma_stats_req` / `ocrdma_rdma_stats_resp` in ocrdma_sli.h). The blocks of the
//! response are in [`super::rdma_stats_blocks`].

use crate::command::Command;
use crate::header::{HEADER_LEN, Subsystem};
use crate::wire::{Reader, Wire, WireError, Writer};

use super::rdma_stats_blocks::{
    DoorbellErrorStats, ResourceStats, RxQpErrorStats, RxStats, TxQpErrorStats, TxStats, WqeStats,
};

/// GET_RDMA_STATS: non-embedded, version 0, one buffer the size of the response (1848 bytes);
/// `reset_stats` u8 @16 clears the counters after reading them.
#[doc(alias = "OCRDMA_CMD_GET_RDMA_STATS")]
#[doc(alias = "ocrdma_rdma_stats_req")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetRdmaStats {
    /// Clear the counters once read.
    pub reset: bool,
}

impl Wire for GetRdmaStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("reset_stats", self.reset.into())?;
        w.zeros("rsvd", 3)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { reset: r.u8("reset_stats")? != 0 })
    }
}

impl Command for GetRdmaStats {
    const NAME: &'static str = "RDMA_GET_RDMA_STATS";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 27;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = HEADER_LEN + RdmaStats::LEN;
    type Response = RdmaStats;
}

/// The GET_RDMA_STATS response body, `ocrdma_rdma_stats_resp` after its header: its counter
/// blocks at the offsets of [`super::rdma_stats_blocks`]' table, then the two debug areas, whose
/// dwords ocrdma only prints (debugfs `tx_dbg_stats`, `rx_dbg_stats`).
#[doc(alias = "ocrdma_rdma_stats_resp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RdmaStats {
    /// `act_rsrc_stats` @16: resources in use.
    pub active: ResourceStats,
    /// `th_rsrc_stats` @152: their high-water marks.
    pub threshold: ResourceStats,
    /// `db_err_stats` @288.
    pub doorbell_errors: DoorbellErrorStats,
    /// `wqe_stats` @320.
    pub wqe: WqeStats,
    /// `tx_stats` @416.
    pub tx: TxStats,
    /// `tx_qp_err_stats` @512.
    pub tx_qp_errors: TxQpErrorStats,
    /// `rx_stats` @544.
    pub rx: RxStats,
    /// `rx_qp_err_stats` @616.
    pub rx_qp_errors: RxQpErrorStats,
    /// `tx_dbg_stats.data[100]` @648.
    pub tx_debug: [u32; 100],
    /// `rx_dbg_stats.data[200]` @1048.
    pub rx_debug: [u32; 200],
}

impl RdmaStats {
    /// Size of the body: 1848 bytes of `ocrdma_rdma_stats_resp` (packed) less its header.
    pub const LEN: usize = 1832;

    /// Every counter zero.
    pub fn zeroed() -> Self {
        Self {
            active: ResourceStats::default(),
            threshold: ResourceStats::default(),
            doorbell_errors: DoorbellErrorStats::default(),
            wqe: WqeStats::default(),
            tx: TxStats::default(),
            tx_qp_errors: TxQpErrorStats::default(),
            rx: RxStats::default(),
            rx_qp_errors: RxQpErrorStats::default(),
            tx_debug: [0; 100],
            rx_debug: [0; 200],
        }
    }
}

impl Default for RdmaStats {
    fn default() -> Self {
        Self::zeroed()
    }
}

impl Wire for RdmaStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        self.active.encode(w)?;
        self.threshold.encode(w)?;
        self.doorbell_errors.encode(w)?;
        self.wqe.encode(w)?;
        self.tx.encode(w)?;
        self.tx_qp_errors.encode(w)?;
        self.rx.encode(w)?;
        self.rx_qp_errors.encode(w)?;
        for &d in self.tx_debug.iter() {
            w.u32("tx_dbg_stats", d)?;
        }
        for &d in self.rx_debug.iter() {
            w.u32("rx_dbg_stats", d)?;
        }
        Ok(())
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let mut stats = Self {
            active: ResourceStats::decode(r)?,
            threshold: ResourceStats::decode(r)?,
            doorbell_errors: DoorbellErrorStats::decode(r)?,
            wqe: WqeStats::decode(r)?,
            tx: TxStats::decode(r)?,
            tx_qp_errors: TxQpErrorStats::decode(r)?,
            rx: RxStats::decode(r)?,
            rx_qp_errors: RxQpErrorStats::decode(r)?,
            ..Self::zeroed()
        };
        for d in stats.tx_debug.iter_mut() {
            *d = r.u32("tx_dbg_stats")?;
        }
        for d in stats.rx_debug.iter_mut() {
            *d = r.u32("rx_dbg_stats")?;
        }
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};

    #[test]
    fn request_golden_bytes() {
        let buf = encode_request(&GetRdmaStats { reset: true }).unwrap();
        assert_eq!(buf.len(), 1848);
        // opcode 27 (0x1b), subsystem 10, request_length 1832 (0x728); @16 reset_stats 1.
        assert_eq!(hex::encode(&buf[..20]), "1b0a000000000000280700000000000001000000");
        assert!(buf[20..].iter().all(|&b| b == 0));
    }

    /// Puts `v` in the little-endian dword at `at`.
    fn put(buf: &mut [u8], at: usize, v: u32) {
        buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// A response whose every counter holds its own value, each written at its offset as
    /// computed by hand from ocrdma_sli.h (`struct ocrdma_rdma_stats_resp` and its blocks,
    /// packed, after the 16-byte `ocrdma_mbx_hdr`); the high dword of a 64-bit counter is
    /// `0x100 + low`.
    fn golden() -> Vec<u8> {
        let mut buf = vec![0u8; 1848];
        buf[..16].copy_from_slice(&hex::decode("1b0a0000000000002807000028070000").unwrap());
        // act_rsrc_stats @16: dpp_pds .. rc_non_dpp_qps, rsvd @40, uc/ud_non_dpp_qps, rsvd1 @52,
        // srqs, rbqs, the nine NSMR sizes @64..@96, embedded_nsmr @100 .. mw @120.
        for (at, v) in [(16, 1), (20, 2), (24, 3), (28, 4), (32, 5), (36, 6), (44, 7), (48, 8), (56, 9), (60, 10)] {
            put(&mut buf, at, v);
        }
        for i in 0..9 {
            put(&mut buf, 64 + 4 * i, 11 + i as u32);
        }
        for (at, v) in [(100, 20), (104, 21), (108, 22), (112, 23), (116, 24), (120, 25)] {
            put(&mut buf, at, v);
        }
        // th_rsrc_stats @152: dpp_pds and mw (@152 + 104).
        put(&mut buf, 152, 31);
        put(&mut buf, 256, 32);
        // db_err_stats @288.
        for (at, v) in [(288, 41), (292, 42), (296, 43), (300, 44)] {
            put(&mut buf, at, v);
        }
        // wqe_stats @320: large_send, large_write, rsvd[4] @336, read, frmr, mw_bind,
        // invalidate, rsvd1[2] @384, dpp_wqe_drops @392.
        for (at, v) in [(320, 51), (328, 52), (352, 53), (360, 54), (368, 55), (376, 56)] {
            put(&mut buf, at, v);
            put(&mut buf, at + 4, 0x100 + v);
        }
        put(&mut buf, 392, 57);
        // tx_stats @416: five packet and four byte counts, ack_timeouts @488.
        for (i, at) in [416, 424, 432, 440, 448, 456, 464, 472, 480].into_iter().enumerate() {
            put(&mut buf, at, 61 + i as u32);
            put(&mut buf, at + 4, 0x100 + 61 + i as u32);
        }
        put(&mut buf, 488, 70);
        // tx_qp_err_stats @512.
        for (at, v) in [(512, 71), (516, 72), (520, 73), (524, 74), (528, 75)] {
            put(&mut buf, at, v);
        }
        // rx_stats @544: roce_frame_bytes, 13 dwords @552..@600, roce_frames @604.
        put(&mut buf, 544, 81);
        put(&mut buf, 548, 0x100 + 81);
        for i in 0..13 {
            put(&mut buf, 552 + 4 * i, 82 + i as u32);
        }
        put(&mut buf, 604, 95);
        put(&mut buf, 608, 0x100 + 95);
        // rx_qp_err_stats @616.
        for (at, v) in [(616, 101), (620, 102), (624, 103), (628, 104), (632, 105), (636, 106)] {
            put(&mut buf, at, v);
        }
        // tx_dbg_stats @648 (last dword @1044), rx_dbg_stats @1048 (last @1844).
        for (at, v) in [(648, 111), (1044, 112), (1048, 113), (1844, 114)] {
            put(&mut buf, at, v);
        }
        buf
    }

    fn pair(v: u64) -> u64 {
        ((0x100 + v) << 32) | v
    }

    #[test]
    fn response_fields_sit_at_the_offsets_of_ocrdma_sli_h() {
        let (_, stats) = decode_response::<GetRdmaStats>(&golden()).unwrap();
        let a = stats.active;
        assert_eq!(
            [a.dpp_pds, a.non_dpp_pds, a.rc_dpp_qps, a.uc_dpp_qps, a.ud_dpp_qps, a.rc_non_dpp_qps],
            [1, 2, 3, 4, 5, 6]
        );
        assert_eq!([a.uc_non_dpp_qps, a.ud_non_dpp_qps, a.srqs, a.rbqs], [7, 8, 9, 10]);
        assert_eq!(a.nsmr_by_size, [11, 12, 13, 14, 15, 16, 17, 18, 19]);
        assert_eq!([a.embedded_nsmr, a.frmr, a.prefetch_qps, a.ondemand_qps, a.phy_mr, a.mw], [20, 21, 22, 23, 24, 25]);
        assert_eq!((stats.threshold.dpp_pds, stats.threshold.mw, stats.threshold.srqs), (31, 32, 0));
        let d = stats.doorbell_errors;
        assert_eq!(
            [d.sq_doorbell_errors, d.cq_doorbell_errors, d.rq_srq_doorbell_errors, d.cq_overflow_errors],
            [41, 42, 43, 44]
        );
        let w = stats.wqe;
        assert_eq!(
            [w.large_send_rc_wqes, w.large_write_rc_wqes, w.read_wqes, w.frmr_wqes, w.mw_bind_wqes, w.invalidate_wqes],
            [pair(51), pair(52), pair(53), pair(54), pair(55), pair(56)]
        );
        assert_eq!(w.dpp_wqe_drops, 57);
        let t = stats.tx;
        assert_eq!(
            [
                t.send_packets,
                t.write_packets,
                t.read_packets,
                t.read_response_packets,
                t.ack_packets,
                t.send_bytes,
                t.write_bytes,
                t.read_request_bytes,
                t.read_response_bytes
            ],
            [pair(61), pair(62), pair(63), pair(64), pair(65), pair(66), pair(67), pair(68), pair(69)]
        );
        assert_eq!(t.ack_timeouts, 70);
        let e = stats.tx_qp_errors;
        assert_eq!(
            [
                e.local_length_errors,
                e.local_protection_errors,
                e.local_qp_operation_errors,
                e.retry_count_exceeded_errors,
                e.rnr_retry_count_exceeded_errors
            ],
            [71, 72, 73, 74, 75]
        );
        let r = stats.rx;
        assert_eq!((r.roce_frame_bytes, r.roce_frames), (pair(81), pair(95)));
        assert_eq!(
            [
                r.roce_frame_icrc_drops,
                r.roce_frame_payload_len_drops,
                r.ud_drops,
                r.qp1_drops,
                r.psn_error_request_packets,
                r.psn_error_response_packets,
                r.rnr_nak_timeouts,
                r.rnr_nak_receives,
                r.roce_frame_rxmt_drops,
                r.nak_count_psn_sequence_errors,
                r.rc_drop_count_lookup_errors,
                r.rq_rnr_naks,
                r.srq_rnr_naks
            ],
            [82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94]
        );
        let q = stats.rx_qp_errors;
        assert_eq!(
            [
                q.nak_invalid_request_errors,
                q.nak_remote_operation_errors,
                q.nak_remote_access_errors,
                q.local_length_errors,
                q.local_protection_errors,
                q.local_qp_operation_errors
            ],
            [101, 102, 103, 104, 105, 106]
        );
        assert_eq!(
            (stats.tx_debug[0], stats.tx_debug[99], stats.rx_debug[0], stats.rx_debug[199]),
            (111, 112, 113, 114)
        );
    }

    #[test]
    fn response_encodes_to_the_golden_bytes() {
        let buf = golden();
        let (_, stats) = decode_response::<GetRdmaStats>(&buf).unwrap();
        let mut out = vec![0u8; 1848];
        out[..16].copy_from_slice(&buf[..16]);
        stats.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(hex::encode(&out), hex::encode(&buf));
        let mut zero = vec![0u8; 1848];
        RdmaStats::zeroed().encode(&mut Writer::at(&mut zero, 16)).unwrap();
        assert!(zero.iter().all(|&b| b == 0));
    }

    #[test]
    fn what_ocrdma_reports_as_pma_counters() {
        let (_, stats) = decode_response::<GetRdmaStats>(&golden()).unwrap();
        // ocrdma_sysfs_xmit_pkts: send + write + read + read_rsp + ack packets.
        let xmit_pkts = pair(61) + pair(62) + pair(63) + pair(64) + pair(65);
        assert_eq!(stats.tx.pma_packets(), xmit_pkts);
        // ocrdma_sysfs_xmit_data: (send + write + read_req + read_rsp bytes) / 4.
        assert_eq!(stats.tx.pma_data(), (pair(66) + pair(67) + pair(68) + pair(69)) / 4);
        // ocrdma_sysfs_rcv_pkts: roce_frames + icrc drops + payload length drops.
        assert_eq!(stats.rx.pma_packets(), pair(95) + 82 + 83);
        assert_eq!(stats.rx.pma_data(), pair(81) / 4);
    }

    #[test]
    fn a_short_response_names_the_field_it_ends_in() {
        let mut buf = golden();
        buf[8] = 0x20; // response_length 0x720: 8 bytes short, inside rx_dbg_stats
        let err = decode_response::<GetRdmaStats>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset), ("rx_dbg_stats", 1840));
        buf[8..10].copy_from_slice(&[0x10, 0x02]); // 0x210: ends at 544, where rx_stats begins
        let err = decode_response::<GetRdmaStats>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset), ("roce_frame_bytes", 544));
    }
}
