//! RDMA QUERY_CONFIG (RDMA subsystem 10, opcode 1): the RoCE engine's limits, which ocrdma reads
//! once at probe into its device attributes (`ocrdma_mbx_query_dev` and `ocrdma_get_attr` in
//! ocrdma_hw.c; the layout `ocrdma_mbx_query_config` and its masks in ocrdma_sli.h;
//! spec/be2net-driver.md §5.2 step 4).
//!
//! Most dwords pack two 16-bit limits; on the wire the low half comes first, so each is one
//! little-endian u16 after the other. Offsets are from the start of the command buffer: the
//! response header is bytes 0–15 (ocrdma's MQE header precedes it in the ring slot and is not
//! part of the command).

use super::support::{bit_flags, empty_body};
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// QUERY_CONFIG: embedded, version 0, 112 bytes (the 16-byte header and 24 response dwords);
/// the request body is reserved.
#[doc(alias = "OCRDMA_CMD_QUERY_CONFIG")]
#[doc(alias = "ocrdma_mbx_query_config")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RdmaQueryConfig;

empty_body!(RdmaQueryConfig);

impl Command for RdmaQueryConfig {
    const NAME: &'static str = "RDMA_QUERY_CONFIG";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 1;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 112;
    type Response = RdmaConfig;
}

bit_flags! {
    /// Bits 7:0 of `qp_srq_cq_ird_ord` @16, below the QP count.
    RdmaQpFlags(u8) {
        /// Completion queues detect overflow (`OCRDMA_MBX_QUERY_CFG_CQ_OVERFLOW_MASK`).
        #[doc(alias = "OCRDMA_MBX_QUERY_CFG_CQ_OVERFLOW_MASK")]
        CQ_OVERFLOW_DETECT = 0x4, "cq_overflow_detect";
        /// Shared receive queues are supported (`OCRDMA_MBX_QUERY_CFG_SRQ_SUPPORTED_MASK`).
        #[doc(alias = "OCRDMA_MBX_QUERY_CFG_SRQ_SUPPORTED_MASK")]
        SRQ_SUPPORTED = 0x8, "srq_supported";
    }
}

/// The QUERY_CONFIG response: every limit ocrdma turns into `ib_device_attr` (what
/// `ibv_devinfo -v` prints), in wire order.
#[doc(alias = "ocrdma_mbx_query_config")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RdmaConfig {
    /// `qp_srq_cq_ird_ord` @16 bits 7:0.
    pub qp_flags: RdmaQpFlags,
    /// `qp_srq_cq_ird_ord` @16 bits 31:8: queue pairs (a 24-bit count).
    pub max_qp: u32,
    /// `max_pd_ca_ack_delay` @20 bits 4:3: the L3 encapsulation ocrdma calls `udp_encap`
    /// (0: RoCE v1 only).
    pub l3_type: u8,
    /// @20 bits 15:8: the local CA ACK delay.
    pub ca_ack_delay: u8,
    /// @20 bits 31:16: protection domains.
    pub max_pd: u16,
    /// `max_recv_send_sge` @24 bits 15:0.
    pub max_send_sge: u16,
    /// @24 bits 31:16.
    pub max_recv_sge: u16,
    /// `max_ird_ord_per_qp` @28 bits 15:0: outstanding RDMA reads a QP initiates.
    pub max_ord_per_qp: u16,
    /// @28 bits 31:16: outstanding RDMA reads a QP answers.
    pub max_ird_per_qp: u16,
    /// `max_shared_ird_ord` @32 (ocrdma does not read it).
    pub max_shared_ird_ord: u32,
    /// `max_mr` @36: memory regions.
    pub max_mr: u32,
    /// `max_mr_size_hi` @40 and `max_mr_size_lo` @44: the largest region, in bytes.
    pub max_mr_size: u64,
    /// `max_num_mr_pbl` @48: page-list entries over all regions.
    pub max_num_mr_pbl: u32,
    /// `max_mw` @52: memory windows.
    pub max_mw: u32,
    /// `max_fmr` @56 (ocrdma reports 0 fast memory regions whatever this says).
    pub max_fmr: u32,
    /// `max_pages_per_frmr` @60.
    pub max_pages_per_frmr: u32,
    /// `max_mcast_group` @64.
    pub max_mcast_group: u32,
    /// `max_mcast_qp_attach` @68.
    pub max_mcast_qp_attach: u32,
    /// `max_total_mcast_qp_attach` @72.
    pub max_total_mcast_qp_attach: u32,
    /// `wqe_rqe_stride_max_dpp_cqs` @76 bits 15:0: DPP completion queues.
    pub max_dpp_cqs: u16,
    /// @76 bits 23:16: the receive entry size, in 8-byte strides (`OCRDMA_WQE_STRIDE`).
    pub rqe_strides: u8,
    /// @76 bits 31:24: the send entry size, in 8-byte strides.
    pub wqe_strides: u8,
    /// `max_srq_rpir_qps` @80 bits 15:0.
    pub max_rpir_qps: u16,
    /// @80 bits 31:16: shared receive queues.
    pub max_srq: u16,
    /// `max_dpp_pds_credits` @84 bits 15:0.
    pub max_dpp_credits: u16,
    /// @84 bits 31:16: protection domains with a direct packet push page; ocrdma reserves them
    /// with a DPP PD range when non-zero.
    pub max_dpp_pds: u16,
    /// `max_dpp_credits_pds_per_pd` @88 (bits 15:0: DPP QPs per PD).
    pub max_dpp_credits_pds_per_pd: u32,
    /// `max_wqes_rqes_per_q` @92 bits 15:0: receive entries per queue.
    pub max_rqes: u16,
    /// @92 bits 31:16: send entries per queue.
    pub max_wqes: u16,
    /// `max_cq_cqes_per_cq` @96 bits 15:0: entries per completion queue.
    pub max_cqes: u16,
    /// @96 bits 31:16: completion queues.
    pub max_cq: u16,
    /// `max_srq_rqe_sge` @100 bits 15:0.
    pub max_srq_sge: u16,
    /// @100 bits 31:16.
    pub max_srq_rqe: u16,
    /// `max_wr_rd_sge` @104 bits 15:0: scatter-gather entries of an RDMA read.
    pub max_rd_sge: u16,
    /// @104 bits 31:16 (by the field's name, those of an RDMA write; ocrdma does not read them).
    pub max_write_sge: u16,
    /// `ird_pgsz_num_pages` @108 (ocrdma does not read it).
    pub ird_pages: u32,
}

impl RdmaConfig {
    /// `OCRDMA_WQE_STRIDE`: the unit of [`RdmaConfig::wqe_strides`] and
    /// [`RdmaConfig::rqe_strides`], in bytes.
    #[doc(alias = "OCRDMA_WQE_STRIDE")]
    pub const STRIDE: usize = 8;
}

impl Wire for RdmaConfig {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("qp_srq_cq_ird_ord", (self.max_qp << 8) | u32::from(self.qp_flags.0))?;
        w.u8("l3_type", (self.l3_type & 0x3) << 3)?;
        w.u8("ca_ack_delay", self.ca_ack_delay)?;
        w.u16("max_pd", self.max_pd)?;
        w.u16("max_send_sge", self.max_send_sge)?;
        w.u16("max_recv_sge", self.max_recv_sge)?;
        w.u16("max_ord_per_qp", self.max_ord_per_qp)?;
        w.u16("max_ird_per_qp", self.max_ird_per_qp)?;
        w.u32("max_shared_ird_ord", self.max_shared_ird_ord)?;
        w.u32("max_mr", self.max_mr)?;
        w.u32("max_mr_size_hi", (self.max_mr_size >> 32) as u32)?;
        w.u32("max_mr_size_lo", self.max_mr_size as u32)?;
        w.u32("max_num_mr_pbl", self.max_num_mr_pbl)?;
        w.u32("max_mw", self.max_mw)?;
        w.u32("max_fmr", self.max_fmr)?;
        w.u32("max_pages_per_frmr", self.max_pages_per_frmr)?;
        w.u32("max_mcast_group", self.max_mcast_group)?;
        w.u32("max_mcast_qp_attach", self.max_mcast_qp_attach)?;
        w.u32("max_total_mcast_qp_attach", self.max_total_mcast_qp_attach)?;
        w.u16("max_dpp_cqs", self.max_dpp_cqs)?;
        w.u8("rqe_strides", self.rqe_strides)?;
        w.u8("wqe_strides", self.wqe_strides)?;
        w.u16("max_rpir_qps", self.max_rpir_qps)?;
        w.u16("max_srq", self.max_srq)?;
        w.u16("max_dpp_credits", self.max_dpp_credits)?;
        w.u16("max_dpp_pds", self.max_dpp_pds)?;
        w.u32("max_dpp_credits_pds_per_pd", self.max_dpp_credits_pds_per_pd)?;
        w.u16("max_rqes", self.max_rqes)?;
        w.u16("max_wqes", self.max_wqes)?;
        w.u16("max_cqes", self.max_cqes)?;
        w.u16("max_cq", self.max_cq)?;
        w.u16("max_srq_sge", self.max_srq_sge)?;
        w.u16("max_srq_rqe", self.max_srq_rqe)?;
        w.u16("max_rd_sge", self.max_rd_sge)?;
        w.u16("max_write_sge", self.max_write_sge)?;
        w.u32("ird_pgsz_num_pages", self.ird_pages)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let qp = r.u32("qp_srq_cq_ird_ord")?;
        let l3 = r.u8("l3_type")?;
        Ok(Self {
            qp_flags: RdmaQpFlags(qp as u8),
            max_qp: qp >> 8,
            l3_type: (l3 >> 3) & 0x3,
            ca_ack_delay: r.u8("ca_ack_delay")?,
            max_pd: r.u16("max_pd")?,
            max_send_sge: r.u16("max_send_sge")?,
            max_recv_sge: r.u16("max_recv_sge")?,
            max_ord_per_qp: r.u16("max_ord_per_qp")?,
            max_ird_per_qp: r.u16("max_ird_per_qp")?,
            max_shared_ird_ord: r.u32("max_shared_ird_ord")?,
            max_mr: r.u32("max_mr")?,
            max_mr_size: {
                let hi = r.u32("max_mr_size_hi")?;
                (u64::from(hi) << 32) | u64::from(r.u32("max_mr_size_lo")?)
            },
            max_num_mr_pbl: r.u32("max_num_mr_pbl")?,
            max_mw: r.u32("max_mw")?,
            max_fmr: r.u32("max_fmr")?,
            max_pages_per_frmr: r.u32("max_pages_per_frmr")?,
            max_mcast_group: r.u32("max_mcast_group")?,
            max_mcast_qp_attach: r.u32("max_mcast_qp_attach")?,
            max_total_mcast_qp_attach: r.u32("max_total_mcast_qp_attach")?,
            max_dpp_cqs: r.u16("max_dpp_cqs")?,
            rqe_strides: r.u8("rqe_strides")?,
            wqe_strides: r.u8("wqe_strides")?,
            max_rpir_qps: r.u16("max_rpir_qps")?,
            max_srq: r.u16("max_srq")?,
            max_dpp_credits: r.u16("max_dpp_credits")?,
            max_dpp_pds: r.u16("max_dpp_pds")?,
            max_dpp_credits_pds_per_pd: r.u32("max_dpp_credits_pds_per_pd")?,
            max_rqes: r.u16("max_rqes")?,
            max_wqes: r.u16("max_wqes")?,
            max_cqes: r.u16("max_cqes")?,
            max_cq: r.u16("max_cq")?,
            max_srq_sge: r.u16("max_srq_sge")?,
            max_srq_rqe: r.u16("max_srq_rqe")?,
            max_rd_sge: r.u16("max_rd_sge")?,
            max_write_sge: r.u16("max_write_sge")?,
            ird_pages: r.u32("ird_pgsz_num_pages")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};

    #[test]
    fn request_golden_bytes() {
        let buf = encode_request(&RdmaQueryConfig).unwrap();
        // opcode 1, subsystem 10 (0x0a), request_length 96 (0x60), version 0; body reserved.
        assert_eq!(hex::encode(&buf[..16]), "010a0000000000006000000000000000");
        assert_eq!(buf.len(), 112);
        assert!(buf[16..].iter().all(|&b| b == 0));
    }

    #[test]
    fn response_golden_bytes_follow_ocrdma_get_attr() {
        let buf = hex::decode(concat!(
            "010a0000000000006000000060000000", // header: response_length 96
            "0c000400",                         // @16 max_qp 0x400 (bits 31:8) | SRQ | CQ overflow
            "08100004",                         // @20 l3_type 1 (bit 3), ack delay 0x10, max_pd 0x400
            "03000200",                         // @24 send 3, recv 2
            "08001000",                         // @28 ord 8, ird 16
            "00000000",                         // @32
            "00400000",                         // @36 max_mr 0x4000
            "01000000",                         // @40 max_mr_size hi 1
            "00000080",                         // @44 lo 0x8000_0000
            "00000100",                         // @48 max_num_mr_pbl 0x10000
            "00000000",                         // @52 max_mw
            "00000000",                         // @56 max_fmr
            "00010000",                         // @60 max_pages_per_frmr 256
            "000000000000000000000000",         // @64..@75 multicast limits 0
            "00001020",                         // @76 dpp cqs 0, rqe 0x10 strides, wqe 0x20 strides
            "00000002",                         // @80 rpir 0, max_srq 0x200
            "00000000",                         // @84 dpp credits 0, dpp pds 0
            "00000000",                         // @88
            "00040008",                         // @92 rqes 0x400, wqes 0x800
            "ff0f0008",                         // @96 cqes 0xfff, max_cq 0x800
            "03000004",                         // @100 srq sge 3, srq rqe 0x400
            "03000000",                         // @104 rd sge 3
            "00000000",                         // @108
        ))
        .unwrap();
        assert_eq!(buf.len(), RdmaQueryConfig::LEN);
        let (_, c) = decode_response::<RdmaQueryConfig>(&buf).unwrap();
        assert_eq!(c.max_qp, 0x400);
        assert!(c.qp_flags.contains(RdmaQpFlags::SRQ_SUPPORTED | RdmaQpFlags::CQ_OVERFLOW_DETECT));
        assert_eq!((c.l3_type, c.ca_ack_delay, c.max_pd), (1, 0x10, 0x400));
        assert_eq!((c.max_send_sge, c.max_recv_sge, c.max_ord_per_qp, c.max_ird_per_qp), (3, 2, 8, 16));
        assert_eq!((c.max_mr, c.max_mr_size, c.max_num_mr_pbl), (0x4000, 0x1_8000_0000, 0x10000));
        assert_eq!(c.max_pages_per_frmr, 256);
        assert_eq!((c.rqe_strides, c.wqe_strides), (0x10, 0x20));
        assert_eq!(usize::from(c.wqe_strides) * RdmaConfig::STRIDE, 256, "ocrdma's wqe_size");
        assert_eq!((c.max_srq, c.max_dpp_pds), (0x200, 0));
        assert_eq!((c.max_rqes, c.max_wqes, c.max_cqes, c.max_cq), (0x400, 0x800, 0xfff, 0x800));
        assert_eq!((c.max_srq_sge, c.max_srq_rqe, c.max_rd_sge), (3, 0x400, 3));
        let mut out = vec![0u8; buf.len()];
        c.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &buf[16..], "round trip to the same bytes");
    }

    #[test]
    fn a_short_response_names_the_missing_field() {
        let mut buf = vec![0u8; RdmaQueryConfig::LEN];
        buf[8] = 88; // the last two dwords are missing
        let err = decode_response::<RdmaQueryConfig>(&buf).unwrap_err();
        assert_eq!((err.field, err.offset), ("max_rd_sge", 104));
    }
}
