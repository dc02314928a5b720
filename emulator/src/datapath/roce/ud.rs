//! The device's UD engine: the GSI QP (QP1) and UD QPs from MODIFY_QP→RTR on. A UD SEND WQE
//! (`ocrdma_build_ud_hdr`: the UD header after the WQE header, then SGEs or inline data)
//! becomes one RoCE v1 frame addressed by the AV its `ahid` names in the AH table; a UD SEND
//! frame whose BTH names such a QP, with the Q_Key it accepts, takes the next RQE and is
//! completed as `ocrdma_update_ud_rcqe` reads it (spec/datapath.md §2.3, §3.1, §3.3; the
//! rules and guesses in [`crate::assumptions`], "UD and GSI").

use std::collections::BTreeMap;

use oce_mailbox::commands::{QpState, QpType};
use oce_mailbox::entries::{
    Av, Cqe, TYPE_LKEY, UdHeader, WQE_HEADER_LEN, WqeHeader, cqe_status, wqe_flag as flag, wqe_opcode as opcode,
};
use oce_mailbox::wire::{Reader, Wire};
use oce_roce::packet::{Bth, EthHeader, Grh, MASK_24, Packet, Vlan};
use oce_roce::rc::Status;
use oce_roce::ud::{self, Datagram, Refusal};

use super::engine::Port;
use super::glue::Glue;
use super::wqe;
use super::{QpView, RoceQueues, WorkQueue};
use crate::assumptions::{GSI_QP_ID, MAX_UD_PAYLOAD};

// The GSI QP's id is its wire QPN, so CQE `qpn`, DETH source QP and BTH destination agree.
const _: () = assert!(GSI_QP_ID as u32 == ud::GSI_QPN);

/// The UD header follows the WQE header; the data follows the UD header (`ocrdma_build_send`).
const UD_HEADER_LEN: usize = 16;
/// The `hdr_type`s of an AH on a RoCE v1 GID, `rdma_gid_attr_network_type` of it as
/// `ocrdma_create_ah` stores it (include/rdma/ib_verbs.h `enum rdma_network_type`):
/// `RDMA_NETWORK_IB` (0), which RoCE v1 was until Linux 5.10 gave it a value of its own, and
/// `RDMA_NETWORK_ROCE_V1` (1), which the 6.1 kernel's ocrdma writes for every kernel AH (ib_mad's
/// and rdma_cm's on QP1). `RDMA_NETWORK_IPV4` (2) and `_IPV6` (3) are RoCE v2, which the model
/// does not carry: it reports `l3_type` 0 (spec/datapath.md §3.1).
const HDR_TYPES_ROCE_V1: [u32; 2] = [0, 1];

/// What the engine keeps of one UD or GSI QP.
#[derive(Debug)]
struct UdQp {
    sq_consumer: u32,
    rq_consumer: u32,
    /// The PSN of the next datagram (from the SQ PSN MODIFY_QP set at →RTS).
    next_psn: u32,
    /// The firmware state last synchronised.
    seen: QpState,
    /// After an error CQE, or MODIFY→ERR, the QP posts nothing more: ocrdma moves it to ERR in
    /// software and makes the flush completions itself (spec/datapath.md §2.3).
    failed: bool,
}

/// Why a UD frame was not taken; the frame is dropped without a trace on the wire (UD has no
/// NAK and no RNR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UdDrop {
    /// The BTH names no UD or GSI QP at RTR or later.
    NoQp,
    /// The QP refused it (Q_Key, opcode).
    Refused(Refusal),
    /// The QP has no RQE posted.
    NoReceive,
    /// The payload is longer than a UD message can be ([`MAX_UD_PAYLOAD`]): a datagram no
    /// path MTU carries.
    TooLong,
    /// The QP completed an error and is silent.
    Silent,
}

/// The UD and GSI QPs the engine runs, by QP id.
#[derive(Debug, Default)]
pub(crate) struct UdEngine {
    qps: BTreeMap<u16, UdQp>,
}

fn is_ud(view: &QpView) -> bool {
    matches!(view.qp_type, QpType::Gsi | QpType::Ud)
}

/// A UD SEND as the WQE gives it.
struct UdSend {
    ud: UdHeader,
    imm: Option<u32>,
    signaled: bool,
    solicited: bool,
    data: oce_roce::rc::Data,
}

/// Parses SQ entry `bytes`: SEND (with immediate or not; a UD QP has no other opcode) with its
/// UD header @16 and SGEs or inline data @32.
fn parse_send(bytes: &[u8]) -> Option<UdSend> {
    let hdr = WqeHeader::decode(&mut Reader::new(bytes)).ok()?;
    let size = hdr.size_bytes();
    let data_at = WQE_HEADER_LEN + UD_HEADER_LEN;
    if size < data_at || size > bytes.len() || hdr.opcode() != opcode::SEND || hdr.has(flag::INV) {
        return None;
    }
    let ud = UdHeader::decode(&mut Reader::new(&bytes[WQE_HEADER_LEN..data_at])).ok()?;
    let data = if hdr.wqe_type() == TYPE_LKEY {
        oce_roce::rc::Data::Sges(wqe::sges(bytes, data_at, size).ok()?)
    } else {
        let end = data_at.checked_add(hdr.total_len as usize).filter(|&end| end <= size)?;
        oce_roce::rc::Data::Inline(bytes[data_at..end].to_vec())
    };
    let imm = hdr.has(flag::IMM).then_some(hdr.dword2);
    Some(UdSend { ud, imm, signaled: hdr.has(flag::SIG), solicited: hdr.has(flag::SOLICIT), data })
}

/// The AV's Ethernet header, as ocrdma's `set_av_attr` wrote it: DMAC, SMAC, and the 802.1Q
/// TCI when `valid` says tagged (IEEE 802.1Q: PCP 15:13, DEI 12, VID 11:0).
fn eth(av: &Av) -> EthHeader {
    let vlan = av.vlan_tag.map(|tci| Vlan { pcp: (tci >> 13) as u8, dei: tci & 0x1000 != 0, vid: tci & 0xFFF });
    EthHeader { dst: av.dmac, src: av.smac, vlan }
}

/// The AV's GRH: flow label `tclass_flow` 19:0, traffic class 27:20 (IP version 6 whatever
/// 31:28 hold), hop limit `pdid_hoplimit` 7:0, next header IBA; the PD in 31:16 is replaced
/// by the payload length.
fn grh(av: &Av) -> Grh {
    Grh {
        traffic_class: (av.grh.tclass_flow >> 20) as u8,
        flow_label: av.grh.tclass_flow & 0xF_FFFF,
        payload_len: 0,
        next_header: Grh::NEXT_HEADER_IBA,
        hop_limit: av.grh.pdid_hoplimit as u8,
        sgid: av.grh.sgid,
        dgid: av.grh.dgid,
    }
}

/// The CQE status of a transport status the UD paths produce.
fn status_code(status: Status) -> u8 {
    match status {
        Status::Success => cqe_status::SUCCESS,
        Status::LocLenErr => cqe_status::LOC_LEN_ERR,
        Status::LocProtErr => cqe_status::LOC_PROT_ERR,
        _ => cqe_status::LOC_QP_OP_ERR,
    }
}

/// A UD receive CQE: the byte count (GRH included) and P_Key index 0 @w1, QP @w2, status 26:24
/// and source QP @w3 (`ocrdma_update_ud_rcqe`); with immediate data @w0 and the IMM flag
/// (`ocrdma_poll_success_rcqe`).
fn recv_cqe(byte_len: u32, qp: u16, status: u8, src_qpn: u32, imm: Option<u32>) -> Cqe {
    let mut cqe = Cqe::ud(byte_len as u16, 0, qp, status, src_qpn);
    if let Some(imm) = imm {
        cqe.0[0] = imm;
        cqe.0[3] |= Cqe::IMM;
    }
    cqe
}

/// A datagram built from one WQE, ready for the wire or the loopback.
struct Sent {
    frame: Vec<u8>,
    dmac: [u8; 6],
    smac: [u8; 6],
    len: u32,
    signaled: bool,
}

/// Builds the frame of SQ entry `index` of QP `view`, or the CQE status it fails with.
fn build(queues: &mut dyn RoceQueues, view: &QpView, index: u32, psn: u32) -> Result<Sent, u8> {
    let bytes = queues.read_wqe(view.id, index).ok_or(cqe_status::LOC_QP_OP_ERR)?;
    let wr = parse_send(&bytes).ok_or(cqe_status::LOC_QP_OP_ERR)?;
    if !HDR_TYPES_ROCE_V1.contains(&wr.ud.hdr_type) {
        return Err(cqe_status::LOC_QP_OP_ERR);
    }
    let av = queues.read_av(wr.ud.ahid).filter(|av| av.valid & Av::VALID != 0).ok_or(cqe_status::LOC_QP_OP_ERR)?;
    let payload = match wr.data {
        oce_roce::rc::Data::Inline(bytes) => bytes,
        oce_roce::rc::Data::Sges(sges) => {
            let mut frames = Vec::new();
            let mut glue = Glue { queues, qp: view.id, lkey0: view.lkey0, solicited: false, frames: &mut frames };
            ud::gather_payload(&mut glue, u32::from(view.pd_id), &sges).map_err(status_code)?
        }
    };
    if payload.len() > MAX_UD_PAYLOAD {
        return Err(cqe_status::LOC_LEN_ERR);
    }
    let datagram = Datagram {
        eth: eth(&av),
        grh: grh(&av),
        pkey: Bth::DEFAULT_PKEY,
        src_qpn: u32::from(view.id),
        dest_qpn: wr.ud.dest_qpn,
        qkey: ud::send_qkey(wr.ud.qkey, view.params.qkey),
        psn,
        solicited: wr.solicited,
        imm: wr.imm,
        payload: &payload,
    };
    let frame = datagram.encode().map_err(|_| cqe_status::LOC_LEN_ERR)?;
    Ok(Sent { frame, dmac: av.dmac, smac: av.smac, len: payload.len() as u32, signaled: wr.signaled })
}

impl UdEngine {
    /// True while the engine runs no QP.
    pub(crate) fn is_idle(&self) -> bool {
        self.qps.is_empty()
    }

    /// True when QP `id` is a UD or GSI QP the engine runs.
    pub(crate) fn runs(&self, id: u16) -> bool {
        self.qps.contains_key(&id)
    }

    /// Brings the engine in line with the QP table after a command: UD and GSI QPs gone or back
    /// in RESET/INIT are dropped (their consumer indices restart with the producers), those at
    /// RTR or later are run, →RTS takes the SQ PSN, ERR silences.
    pub(crate) fn sync(&mut self, ids: &[u16], queues: &dyn RoceQueues) {
        self.qps.retain(|id, _| {
            queues.qp(*id).is_some_and(|v| is_ud(&v) && !matches!(v.state, QpState::Reset | QpState::Init))
        });
        for &id in ids {
            let Some(view) = queues.qp(id).filter(is_ud) else { continue };
            if matches!(view.state, QpState::Reset | QpState::Init) {
                continue;
            }
            let qp = self.qps.entry(id).or_insert(UdQp {
                sq_consumer: 0,
                rq_consumer: 0,
                next_psn: view.params.sq_psn & MASK_24,
                seen: view.state,
                failed: false,
            });
            if qp.seen == QpState::Rtr && view.state == QpState::Rts {
                qp.next_psn = view.params.sq_psn & MASK_24;
            }
            qp.failed |= matches!(view.state, QpState::Err | QpState::Sqe);
            qp.seen = view.state;
        }
    }

    /// QP `id`'s SQ has WQEs up to its producer index: each becomes a datagram on the wire (or,
    /// to this port's own MAC, looped back to this device), with a success CQE when signaled;
    /// one that fails completes with an error CQE, after which the QP is silent.
    pub(crate) fn sq_posted(&mut self, id: u16, queues: &mut dyn RoceQueues, port: &mut Port<'_>) -> bool {
        let Some(view) = queues.qp(id) else { return false };
        let Some(qp) = self.qps.get_mut(&id) else { return false };
        let mut looped = Vec::new();
        while !qp.failed && qp.sq_consumer != view.sq_producer && view.sq_entries > 0 {
            let index = qp.sq_consumer;
            qp.sq_consumer = (index + 1) % view.sq_entries;
            match build(queues, &view, index, qp.next_psn) {
                Ok(sent) => {
                    qp.next_psn = (qp.next_psn + 1) & MASK_24;
                    if sent.dmac == port.smac || sent.dmac == sent.smac {
                        looped.push(sent.frame);
                    } else {
                        port.frames.push(sent.frame);
                    }
                    if sent.signaled {
                        let cqe = Cqe::sq(index as u16, sent.len, id, cqe_status::SUCCESS);
                        queues.post_cqe(id, WorkQueue::Sq, &cqe, false);
                    }
                }
                Err(status) => {
                    queues.post_cqe(id, WorkQueue::Sq, &Cqe::sq(index as u16, 0, id, status), true);
                    qp.failed = true;
                }
            }
        }
        if qp.failed {
            qp.sq_consumer = view.sq_producer;
        }
        for frame in looped {
            if let Ok(pkt) = Packet::decode(&frame) {
                let _ = self.receive(&pkt, queues);
            }
        }
        true
    }

    /// QP `id`'s RQ has new RQEs: they wait in the ring for datagrams (a silent QP skips them).
    pub(crate) fn rq_posted(&mut self, id: u16, queues: &mut dyn RoceQueues) -> bool {
        let Some(view) = queues.qp(id) else { return false };
        let Some(qp) = self.qps.get_mut(&id) else { return false };
        if qp.failed {
            qp.rq_consumer = view.rq_producer;
        }
        true
    }

    /// A UD SEND packet off the wire (or looped back): to the UD or GSI QP its BTH names, if
    /// the Q_Key fits and an RQE is posted; its GRH and payload go into the RQE's buffers and
    /// a UD receive CQE completes it. A receive that fails (buffers too short, a bad lkey, an
    /// unparsable RQE) completes with an error CQE, after which the QP is silent.
    pub(crate) fn receive(&mut self, pkt: &Packet<'_>, queues: &mut dyn RoceQueues) -> Result<(), UdDrop> {
        let id = u16::try_from(pkt.bth.dest_qpn).map_err(|_| UdDrop::NoQp)?;
        let view = queues.qp(id).filter(is_ud).ok_or(UdDrop::NoQp)?;
        let qp = self.qps.get_mut(&id).ok_or(UdDrop::NoQp)?;
        if qp.failed || view.state == QpState::Err {
            return Err(UdDrop::Silent);
        }
        ud::check(u32::from(id), view.params.qkey, pkt).map_err(UdDrop::Refused)?;
        if pkt.payload.len() > MAX_UD_PAYLOAD {
            return Err(UdDrop::TooLong);
        }
        if qp.rq_consumer == view.rq_producer || view.rq_entries == 0 {
            return Err(UdDrop::NoReceive);
        }
        let index = qp.rq_consumer;
        qp.rq_consumer = (index + 1) % view.rq_entries;
        let src_qpn = pkt.deth.map_or(0, |d| d.src_qpn);
        let recv = queues.read_rqe(id, index).and_then(|b| wqe::recv_wr(&b).ok());
        let (cqe, ok) = match recv {
            None => (recv_cqe(0, id, cqe_status::LOC_QP_OP_ERR, src_qpn, None), false),
            Some(recv) => {
                let mut frames = Vec::new();
                let mut glue = Glue { queues, qp: id, lkey0: view.lkey0, solicited: false, frames: &mut frames };
                let got = ud::deliver(&mut glue, u32::from(view.pd_id), &recv, pkt);
                let cqe = recv_cqe(got.byte_len, id, status_code(got.status), got.src_qpn, got.imm);
                (cqe, got.status == Status::Success)
            }
        };
        if !ok {
            qp.failed = true;
            qp.rq_consumer = view.rq_producer;
        }
        queues.post_cqe(id, WorkQueue::Rq, &cqe, pkt.bth.solicited || !ok);
        Ok(())
    }
}
