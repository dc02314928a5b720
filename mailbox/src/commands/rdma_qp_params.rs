//! The QP parameter block (`struct ocrdma_qp_params`, 88 bytes) and the two RDMA commands that
//! carry it: MODIFY_QP (8), which moves a QP between states and sets its path (destination QP,
//! PSNs, MTU, retry counts, ORD/IRD, GIDs, destination MAC, VLAN), and QUERY_QP (7), which reads
//! it back (ocrdma_sli.h `ocrdma_qp_params`, `ocrdma_modify_qp`, `ocrdma_query_qp`; filled by
//! ocrdma_hw.c `ocrdma_mbx_modify_qp`, `ocrdma_set_qp_params`, `ocrdma_set_av_params`;
//! spec/datapath.md §2.1).
//!
//! The GIDs travel as their 16 bytes in wire order: ocrdma runs them through
//! `ocrdma_cpu_to_le32`, which only swaps on big-endian hosts (ocrdma_hw.h).

use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

/// A QP state, bits 7:5 of the parameter block's `max_sge_recv_flags` (`enum ocrdma_qp_state`).
#[doc(alias = "ocrdma_qp_state")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QpState {
    /// 0: reset, where CREATE_QP leaves a QP.
    #[default]
    Reset,
    /// 1: initialised: receives may be posted.
    Init,
    /// 2: ready to receive.
    Rtr,
    /// 3: ready to send.
    Rts,
    /// 4: send queue error.
    Sqe,
    /// 5: send queue draining.
    SqDraining,
    /// 6: error.
    Err,
    /// 7: send queue drained.
    Sqd,
}

impl QpState {
    /// The 3-bit code.
    pub fn raw(self) -> u8 {
        self as u8
    }
    /// The state of the low 3 bits of `raw` (all eight codes are states).
    pub fn from_raw(raw: u8) -> Self {
        [Self::Reset, Self::Init, Self::Rtr, Self::Rts, Self::Sqe, Self::SqDraining, Self::Err, Self::Sqd]
            [usize::from(raw & 7)]
    }
}

/// Bytes of [`QpParams`] on the wire.
pub const QP_PARAMS_LEN: usize = 88;

/// The QP parameter block. Field positions (dword @offset within the block):
/// @0 `id` (QP 15:0); @4 `max_wqe_rqe`; @8 `max_sge_send_write`; @12 `max_sge_recv_flags`
/// (flags 4:0 and 9:8, state 7:5, recv SGEs 31:16); @16 `max_ord_ird` (IRD 15:0, ORD 31:16);
/// @20 `wq_rq_cqid`; @24 `hop_lmt_rq_psn` (RQ PSN 23:0, hop limit 31:24); @28 `tclass_sq_psn`
/// (SQ PSN 23:0, traffic class 31:24); @32 `ack_to_rnr_rtc_dest_qpn` (dest QPN 23:0, RNR retry
/// 26:24, ACK timeout 31:27); @36 `path_mtu_pkey_indx` (P_Key index 15:0, path MTU in bytes
/// 31:18); @40 `rnt_rc_sl_fl` (flow label 19:0, SL 23:20, retry count 26:24, RNR NAK timer
/// 31:27); @44 `sgid[16]`; @60 `dgid[16]`; @76 `dmac_b0_to_b3`; @80 `vlan_dmac_b4_to_b5`
/// (MAC bytes 4–5 in 15:0, VLAN 31:16); @84 `qkey`.
#[doc(alias = "ocrdma_qp_params")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpParams {
    /// `id`: the QP (ocrdma masks 15:0).
    pub id: u32,
    /// `max_wqe_rqe`, as sent (ocrdma's MODIFY_QP leaves it zero).
    pub max_wqe_rqe: u32,
    /// `max_sge_send_write`, as sent.
    pub max_sge_send_write: u32,
    /// The state.
    pub state: QpState,
    /// Flag bits 4:0 and 9:8 of `max_sge_recv_flags` (`OCRDMA_QP_PARAMS_FLAGS_*`).
    pub flags: u16,
    /// Receive SGEs.
    pub max_sge_recv: u16,
    /// Outstanding READs the QP may issue.
    pub max_ord: u16,
    /// Outstanding READs the QP may answer.
    pub max_ird: u16,
    /// `wq_rq_cqid`, as sent.
    pub wq_rq_cqid: u32,
    /// The PSN the responder expects next.
    pub rq_psn: u32,
    /// GRH hop limit.
    pub hop_limit: u8,
    /// The PSN the requester sends next.
    pub sq_psn: u32,
    /// GRH traffic class.
    pub traffic_class: u8,
    /// The peer QP.
    pub dest_qpn: u32,
    /// RNR retries (7 = forever).
    pub rnr_retry: u8,
    /// Local ACK timeout exponent.
    pub ack_timeout: u8,
    /// P_Key index.
    pub pkey_index: u16,
    /// Path MTU in bytes (256–4096).
    pub path_mtu: u16,
    /// GRH flow label.
    pub flow_label: u32,
    /// Service level.
    pub sl: u8,
    /// Transport retries.
    pub retry_count: u8,
    /// Minimum RNR NAK timer code.
    pub rnr_nak_timer: u8,
    /// Source GID.
    pub sgid: [u8; 16],
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Destination MAC.
    pub dmac: [u8; 6],
    /// VLAN id (tag the frames when the modify sets [`ModifyQpValid::VLAN_EN`]).
    pub vlan: u16,
    /// Q_Key (UD and GSI).
    pub qkey: u32,
}

/// Bits `hi..=lo` of `v`.
fn bits(v: u32, hi: u32, lo: u32) -> u32 {
    (v >> lo) & (u32::MAX >> (31 - (hi - lo)))
}

/// `value` placed at bits `hi..=lo`, excess bits dropped.
fn put(value: u32, hi: u32, lo: u32) -> u32 {
    (value & (u32::MAX >> (31 - (hi - lo)))) << lo
}

impl Wire for QpParams {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("id", self.id)?;
        w.u32("max_wqe_rqe", self.max_wqe_rqe)?;
        w.u32("max_sge_send_write", self.max_sge_send_write)?;
        let flags = u32::from(self.flags) & 0x31F;
        w.u32(
            "max_sge_recv_flags",
            flags | put(self.state.raw().into(), 7, 5) | put(self.max_sge_recv.into(), 31, 16),
        )?;
        w.u32("max_ord_ird", put(self.max_ord.into(), 31, 16) | u32::from(self.max_ird))?;
        w.u32("wq_rq_cqid", self.wq_rq_cqid)?;
        w.u32("hop_lmt_rq_psn", put(self.rq_psn, 23, 0) | put(self.hop_limit.into(), 31, 24))?;
        w.u32("tclass_sq_psn", put(self.sq_psn, 23, 0) | put(self.traffic_class.into(), 31, 24))?;
        let qpn = put(self.dest_qpn, 23, 0) | put(self.rnr_retry.into(), 26, 24) | put(self.ack_timeout.into(), 31, 27);
        w.u32("ack_to_rnr_rtc_dest_qpn", qpn)?;
        w.u32("path_mtu_pkey_indx", u32::from(self.pkey_index) | put(self.path_mtu.into(), 31, 18))?;
        let fl = put(self.flow_label, 19, 0)
            | put(self.sl.into(), 23, 20)
            | put(self.retry_count.into(), 26, 24)
            | put(self.rnr_nak_timer.into(), 31, 27);
        w.u32("rnt_rc_sl_fl", fl)?;
        w.bytes("sgid", &self.sgid)?;
        w.bytes("dgid", &self.dgid)?;
        w.bytes("dmac_b0_to_b3", &self.dmac[..4])?;
        w.bytes("dmac_b4_to_b5", &self.dmac[4..])?;
        w.u16("vlan", self.vlan)?;
        w.u32("qkey", self.qkey)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id = r.u32("id")?;
        let max_wqe_rqe = r.u32("max_wqe_rqe")?;
        let max_sge_send_write = r.u32("max_sge_send_write")?;
        let recv_flags = r.u32("max_sge_recv_flags")?;
        let ord_ird = r.u32("max_ord_ird")?;
        let wq_rq_cqid = r.u32("wq_rq_cqid")?;
        let hop_psn = r.u32("hop_lmt_rq_psn")?;
        let tclass_psn = r.u32("tclass_sq_psn")?;
        let qpn = r.u32("ack_to_rnr_rtc_dest_qpn")?;
        let mtu = r.u32("path_mtu_pkey_indx")?;
        let fl = r.u32("rnt_rc_sl_fl")?;
        let sgid = r.array::<16>("sgid")?;
        let dgid = r.array::<16>("dgid")?;
        let mut dmac = [0u8; 6];
        dmac[..4].copy_from_slice(&r.array::<4>("dmac_b0_to_b3")?);
        dmac[4..].copy_from_slice(&r.array::<2>("dmac_b4_to_b5")?);
        let vlan = r.u16("vlan")?;
        let qkey = r.u32("qkey")?;
        Ok(Self {
            id,
            max_wqe_rqe,
            max_sge_send_write,
            state: QpState::from_raw(bits(recv_flags, 7, 5) as u8),
            flags: (recv_flags & 0x31F) as u16,
            max_sge_recv: bits(recv_flags, 31, 16) as u16,
            max_ord: bits(ord_ird, 31, 16) as u16,
            max_ird: ord_ird as u16,
            wq_rq_cqid,
            rq_psn: bits(hop_psn, 23, 0),
            hop_limit: bits(hop_psn, 31, 24) as u8,
            sq_psn: bits(tclass_psn, 23, 0),
            traffic_class: bits(tclass_psn, 31, 24) as u8,
            dest_qpn: bits(qpn, 23, 0),
            rnr_retry: bits(qpn, 26, 24) as u8,
            ack_timeout: bits(qpn, 31, 27) as u8,
            pkey_index: mtu as u16,
            path_mtu: bits(mtu, 31, 18) as u16,
            flow_label: bits(fl, 19, 0),
            sl: bits(fl, 23, 20) as u8,
            retry_count: bits(fl, 26, 24) as u8,
            rnr_nak_timer: bits(fl, 31, 27) as u8,
            sgid,
            dgid,
            dmac,
            vlan,
            qkey,
        })
    }
}

/// MODIFY_QP's `flags`: which parameters the command sets (`OCRDMA_QP_PARA_*_VALID`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModifyQpValid(pub u32);

impl ModifyQpValid {
    /// Bit 0: the state.
    pub const STATE: u32 = 1 << 0;
    /// Bit 2: the P_Key index.
    pub const PKEY: u32 = 1 << 2;
    /// Bit 3: the Q_Key.
    pub const QKEY: u32 = 1 << 3;
    /// Bit 4: the path MTU.
    pub const PMTU: u32 = 1 << 4;
    /// Bit 5: the ACK timeout.
    pub const ACK_TIMEOUT: u32 = 1 << 5;
    /// Bit 6: the retry count.
    pub const RETRY_COUNT: u32 = 1 << 6;
    /// Bit 7: the RNR retry count.
    pub const RNR_RETRY: u32 = 1 << 7;
    /// Bit 8: the RQ PSN.
    pub const RQ_PSN: u32 = 1 << 8;
    /// Bit 9: the IRD.
    pub const MAX_IRD: u32 = 1 << 9;
    /// Bit 10: the ORD.
    pub const MAX_ORD: u32 = 1 << 10;
    /// Bit 11: the RNR NAK timer.
    pub const RNR_TIMER: u32 = 1 << 11;
    /// Bit 12: the SQ PSN.
    pub const SQ_PSN: u32 = 1 << 12;
    /// Bit 13: the destination QP.
    pub const DEST_QPN: u32 = 1 << 13;
    /// Bit 21: the address vector (flow label, GIDs, SL, hop limit, traffic class, DMAC);
    /// ocrdma sets it with every AV.
    pub const FLOW_LABEL: u32 = 1 << 21;
    /// Bit 26: the VLAN id is valid: tag the QP's frames.
    pub const VLAN_EN: u32 = 1 << 26;

    /// True when every bit of `mask` is set.
    pub fn has(self, mask: u32) -> bool {
        self.0 & mask == mask
    }
}

/// MODIFY_QP: the parameter block @16, `flags` @104 (what is valid), `rdma_flags` @108,
/// `num_outstanding_atomic_rd` @112; 116 bytes.
#[doc(alias = "OCRDMA_CMD_MODIFY_QP")]
#[doc(alias = "ocrdma_modify_qp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModifyQp {
    /// The parameters; `params.id` names the QP and `params.state` is the target state (or
    /// the current one, when [`ModifyQpValid::STATE`] is clear).
    pub params: QpParams,
    /// Which parameters are set.
    pub valid: ModifyQpValid,
    /// `rdma_flags` @108.
    pub rdma_flags: u32,
    /// `num_outstanding_atomic_rd` @112.
    pub num_outstanding_atomic_rd: u32,
}

impl Wire for ModifyQp {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        self.params.encode(w)?;
        w.u32("flags", self.valid.0)?;
        w.u32("rdma_flags", self.rdma_flags)?;
        w.u32("num_outstanding_atomic_rd", self.num_outstanding_atomic_rd)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let params = QpParams::decode(r)?;
        let valid = ModifyQpValid(r.u32("flags")?);
        let rdma_flags = r.u32("rdma_flags")?;
        Ok(Self { params, valid, rdma_flags, num_outstanding_atomic_rd: r.u32("num_outstanding_atomic_rd")? })
    }
}

/// The MODIFY_QP response: `max_wqe_rqe` @16 (RQ 15:0, SQ 31:16) and `max_ord_ird` @20 (IRD
/// 15:0, ORD 31:16). ocrdma reads neither.
#[doc(alias = "ocrdma_modify_qp_rsp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpModified {
    /// `max_wqe_rqe`.
    pub max_wqe_rqe: u32,
    /// `max_ord_ird`.
    pub max_ord_ird: u32,
}

impl Wire for QpModified {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("max_wqe_rqe", self.max_wqe_rqe)?;
        w.u32("max_ord_ird", self.max_ord_ird)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let max_wqe_rqe = r.u32("max_wqe_rqe")?;
        Ok(Self { max_wqe_rqe, max_ord_ird: r.u32("max_ord_ird")? })
    }
}

impl Command for ModifyQp {
    const NAME: &'static str = "RDMA_MODIFY_QP";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 8;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 116;
    type Response = QpModified;
}

/// QUERY_QP: `qp_id` @16 (ocrdma masks 23:0); the response is the parameter block @16; 104
/// bytes, the response's size.
#[doc(alias = "OCRDMA_CMD_QUERY_QP")]
#[doc(alias = "ocrdma_query_qp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryQp {
    /// The QP.
    pub qp_id: u32,
}

impl Wire for QueryQp {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("qp_id", self.qp_id)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { qp_id: r.u32("qp_id")? })
    }
}

impl Command for QueryQp {
    const NAME: &'static str = "RDMA_QUERY_QP";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 7;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 104;
    type Response = QpParams;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    /// What ocrdma_mbx_modify_qp sends for ibv_rc_pingpong's INIT→RTR: dest QPN 0x000123, RQ
    /// PSN 0xabcdef, MTU 1024, min RNR timer 12, IRD 1, an AV with GRH hop limit 1 and the
    /// link-local GIDs of 02:00:00:00:00:01 → 02:00:00:00:00:02, no VLAN.
    fn to_rtr() -> ModifyQp {
        let mut sgid = [0u8; 16];
        sgid[..2].copy_from_slice(&[0xfe, 0x80]);
        sgid[8..].copy_from_slice(&[0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x01]);
        let mut dgid = sgid;
        dgid[15] = 0x02;
        ModifyQp {
            params: QpParams {
                id: 2,
                state: QpState::Rtr,
                max_ord: 1,
                max_ird: 1,
                rq_psn: 0xab_cdef,
                hop_limit: 1,
                dest_qpn: 0x123,
                path_mtu: 1024,
                rnr_nak_timer: 12,
                sgid,
                dgid,
                dmac: [0x02, 0, 0, 0, 0, 0x02],
                ..QpParams::default()
            },
            valid: ModifyQpValid(
                ModifyQpValid::STATE
                    | ModifyQpValid::FLOW_LABEL
                    | ModifyQpValid::DEST_QPN
                    | ModifyQpValid::PMTU
                    | ModifyQpValid::RNR_TIMER
                    | ModifyQpValid::RQ_PSN
                    | ModifyQpValid::MAX_IRD,
            ),
            ..ModifyQp::default()
        }
    }

    #[test]
    fn modify_qp_golden_bytes() {
        let buf = encode_request(&to_rtr()).unwrap();
        assert_eq!(buf.len(), 116);
        let expected = concat!(
            "080a0000000000006400000000000000", // opcode 8, subsystem 10, request_length 100
            "02000000",                         // @16 id
            "00000000",                         // @20 max_wqe_rqe
            "00000000",                         // @24 max_sge_send_write
            "40000000",                         // @28 state RTR (2) << 5
            "01000100",                         // @32 ORD 1 << 16 | IRD 1
            "00000000",                         // @36 wq_rq_cqid
            "efcdab01",                         // @40 hop limit 1 << 24 | RQ PSN 0xabcdef
            "00000000",                         // @44 tclass, SQ PSN
            "23010000",                         // @48 dest QPN 0x123
            "00000010",                         // @52 MTU 1024 << 18
            "00000060",                         // @56 RNR NAK timer 12 << 27
            "fe80000000000000000000fffe000001", // @60 sgid
            "fe80000000000000000000fffe000002", // @76 dgid
            "02000000",                         // @92 dmac bytes 0-3
            "00020000",                         // @96 dmac bytes 4-5, VLAN 0
            "00000000",                         // @100 qkey
            "112b2000",                         // @104 valid: 0x0020_2b11
            "00000000",                         // @108 rdma_flags
            "00000000",                         // @112
        );
        assert_eq!(hex::encode(&buf), expected);
        let (_, back) = decode_request::<ModifyQp>(&buf).unwrap();
        assert_eq!(back, to_rtr());
    }

    #[test]
    fn query_qp_answers_the_parameter_block() {
        let buf = encode_request(&QueryQp { qp_id: 2 }).unwrap();
        // opcode 7, request_length 88 (0x58); @16 qp_id; zeros to 104 bytes.
        assert_eq!(hex::encode(&buf[..20]), concat!("070a0000000000005800000000000000", "02000000"));
        assert!(buf.len() == 104 && buf[20..].iter().all(|&b| b == 0));
        let mut rsp = hex::decode("070a0000000000005800000058000000").unwrap();
        rsp.extend_from_slice(&encode_request(&to_rtr()).unwrap()[16..104]);
        let (_, params) = decode_response::<QueryQp>(&rsp).unwrap();
        assert_eq!(params, to_rtr().params);
        assert!(decode_response::<QueryQp>(&rsp[..100]).is_err(), "a short block is an error");
    }

    #[test]
    fn every_state_code_round_trips_and_fields_mask() {
        for raw in 0..8u8 {
            assert_eq!(QpState::from_raw(raw).raw(), raw);
        }
        let p = QpParams { dest_qpn: 0xFFFF_FFFF, ..QpParams::default() };
        let mut buf = [0u8; QP_PARAMS_LEN];
        p.encode(&mut Writer::new(&mut buf)).unwrap();
        assert_eq!(QpParams::decode(&mut Reader::new(&buf)).unwrap().dest_qpn, 0xFF_FFFF, "24 bits");
    }
}
