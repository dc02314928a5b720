//! The RoCE verbs' firmware commands: CQ_CREATE version 3 (COMMON 12), REGISTER_NSMR (13),
//! REGISTER_NSMR_CONT (15), DEALLOC_LKEY (12), CREATE_QP (6), MODIFY_QP (8), QUERY_QP (7) and
//! DELETE_QP (9) (ocrdma_hw.c `ocrdma_mbx_create_cq`, `ocrdma_reg_mr`, `ocrdma_mbx_*_qp`;
//! spec/datapath.md §2.1). The objects land in [`crate::firmware::rdma`]; the rules (ids, keys,
//! what is checked, which status a refusal gets) are in [`crate::assumptions`], "RoCE engine".

use oce_mailbox::command::Empty;
use oce_mailbox::commands::{
    CQ_V3_PAGE_SLOTS, CqCreateV3, CreateQp, CreateQpFlags, DeallocLkey, DeleteQp, ModifyQp, NsmrRegistered, QpCreated,
    QpModified, QpParams, QpType, QueryQp, QueueCreated, RdmaConfig, RegisterNsmr, RegisterNsmrCont,
};
use oce_mailbox::doorbells::CqDoorbell;
use oce_mailbox::entries::CQE_LEN;
use oce_mailbox::status::CompletionStatus;

use super::illegal_field;
use super::queues::{at_limit, exhausted};
use crate::assumptions::ROCE_LIMITS;
use crate::firmware::queues::{CompletionQueue, Ring};
use crate::firmware::rdma::mr::MrRefusal;
use crate::firmware::rdma::qp::{QpRefusal, QpRing};
use crate::firmware::{Context, Firmware, Owed};

/// CQ_CREATE v3: a ring of 16-byte CQEs in 4 KiB pages, on an EQ when eventable, for the kernel
/// (PD 0) or a user context's PD; unarmed until the host rings its doorbell.
pub(crate) fn cq_create_v3(fw: &mut Firmware, _: &Context, req: CqCreateV3) -> Result<QueueCreated, CompletionStatus> {
    let shape_ok =
        req.valid && req.page_size == 1 && req.cq_type == 0 && (1..=CQ_V3_PAGE_SLOTS).contains(&req.pages.len());
    if !shape_ok || (req.pd_id != 0 && !fw.resources.rdma.in_use(req.pd_id)) {
        return Err(illegal_field());
    }
    let ring = Ring::new(req.pages, req.cqe_count.into(), CQE_LEN as u32).ok_or_else(illegal_field)?;
    let eq = u16::try_from(req.eq_id).ok().filter(|_| req.eventable);
    let limits = fw.active_nic();
    let q = &mut fw.resources.queues;
    if req.eventable && eq.is_none_or(|eq| q.event_queue(eq).is_none()) {
        return Err(illegal_field());
    }
    if at_limit(q.cq_count(), limits.cq_count) {
        return Err(exhausted());
    }
    let user_pd = req.pd_id;
    let id = q
        .add_cq(CqDoorbell::MAX_ID.into(), |_, serial| CompletionQueue { ring, eq, armed: false, serial, user_pd })
        .ok_or_else(exhausted)?;
    Ok(QueueCreated { id })
}

fn mr_status(refusal: MrRefusal) -> CompletionStatus {
    match refusal {
        MrRefusal::Field => illegal_field(),
        MrRefusal::Full => exhausted(),
    }
}

fn qp_status(refusal: QpRefusal) -> CompletionStatus {
    match refusal {
        QpRefusal::Field => illegal_field(),
        QpRefusal::Full => exhausted(),
    }
}

/// REGISTER_NSMR: a region of a PD in use; when its PBL list is complete (and it is not a
/// fast-register MR) the device reads the PBEs before completing.
pub(crate) fn register_nsmr(
    fw: &mut Firmware,
    _: &Context,
    req: RegisterNsmr,
) -> Result<(NsmrRegistered, Owed), CompletionStatus> {
    if !fw.resources.rdma.in_use(req.pd_id) {
        return Err(illegal_field());
    }
    let lrkey = fw.resources.rdma.mrs.register(&req).map_err(mr_status)?;
    let owed = Owed { mr_pbes: (req.last && !req.fast_register).then_some(lrkey), ..Owed::default() };
    Ok((NsmrRegistered { lrkey, num_pbl: req.pbl.len() as u16 }, owed))
}

/// REGISTER_NSMR_CONT: more PBL pages for an open region, in order.
pub(crate) fn register_nsmr_cont(
    fw: &mut Firmware,
    _: &Context,
    req: RegisterNsmrCont,
) -> Result<(NsmrRegistered, Owed), CompletionStatus> {
    let region = fw.resources.rdma.mrs.extend(req.lrkey, req.pbl_offset, &req.pbl, req.last).map_err(mr_status)?;
    let read = region.complete && !region.fast_register;
    let rsp = NsmrRegistered { lrkey: region.key, num_pbl: region.pbl.len() as u16 };
    Ok((rsp, Owed { mr_pbes: read.then_some(req.lrkey), ..Owed::default() }))
}

/// DEALLOC_LKEY: an existing key, exactly.
pub(crate) fn dealloc_lkey(fw: &mut Firmware, _: &Context, req: DeallocLkey) -> Result<Empty, CompletionStatus> {
    fw.resources.rdma.mrs.remove(req.lkey).then_some(Empty).ok_or_else(illegal_field)
}

/// Bytes per entry the limits promise: 8-byte strides (`RdmaConfig::STRIDE`).
fn entry_len(strides: u8) -> u16 {
    u16::from(strides) * RdmaConfig::STRIDE as u16
}

/// CREATE_QP: a QP of a PD in use on existing CQs, with rings its pages hold.
pub(crate) fn create_qp(fw: &mut Firmware, _: &Context, req: CreateQp) -> Result<QpCreated, CompletionStatus> {
    let l = &ROCE_LIMITS;
    let rdma = &fw.resources.rdma;
    let q = &fw.resources.queues;
    let known = matches!(req.qp_type, QpType::Gsi | QpType::Rc | QpType::Ud);
    let cqs_ok = q.cq(req.sq_cq_id).is_some() && q.cq(req.rq_cq_id).is_some();
    let sizes_ok = req.wqe_size == entry_len(l.wqe_strides) && req.rqe_size == entry_len(l.rqe_strides);
    let depth_ok = (1u64 << req.log2_max_wqe.min(63)) <= u64::from(l.max_wqes)
        && (1u64 << req.log2_max_rqe.min(63)) <= u64::from(l.max_rqes);
    let sge_ok = u32::from(req.max_sge_send) <= l.max_send_sge.into()
        && u32::from(req.max_sge_write) <= l.max_write_sge.into()
        && u32::from(req.max_sge_recv) <= l.max_recv_sge.into();
    let ord_ok = u32::from(req.max_ord) <= l.max_ord_per_qp.into() && u32::from(req.max_ird) <= l.max_ird_per_qp.into();
    let no_srq = !req.flags.has(CreateQpFlags::USE_SRQ);
    if !(known && rdma.in_use(req.pd_id) && cqs_ok && sizes_ok && depth_ok && sge_ok && ord_ok && no_srq) {
        return Err(illegal_field());
    }
    let sq = QpRing::new(req.sq_pages.clone(), req.sq_page_len(), req.log2_max_wqe, req.wqe_size);
    let rq = QpRing::new(req.rq_pages.clone(), req.rq_page_len(), req.log2_max_rqe, req.rqe_size);
    let (Some(sq), Some(rq)) = (sq, rq) else { return Err(illegal_field()) };
    let qp_id = fw.resources.rdma.qps.create(&req, sq, rq).map_err(qp_status)?;
    Ok(QpCreated {
        qp_id,
        log2_max_wqe: req.log2_max_wqe,
        log2_max_rqe: req.log2_max_rqe,
        max_sge_send: req.max_sge_send,
        max_sge_write: req.max_sge_write,
        max_sge_recv: req.max_sge_recv,
        max_ord: req.max_ord,
        max_ird: req.max_ird,
        sq_dbid: qp_id,
        rq_dbid: qp_id,
        dpp_response: 0,
    })
}

/// MODIFY_QP: a legal transition and the parameters whose valid bits are set.
pub(crate) fn modify_qp(fw: &mut Firmware, _: &Context, req: ModifyQp) -> Result<QpModified, CompletionStatus> {
    let (ord, ird) = (ROCE_LIMITS.max_ord_per_qp, ROCE_LIMITS.max_ird_per_qp);
    let qp = fw.resources.rdma.qps.modify(&req, ord, ird).map_err(qp_status)?;
    let params = qp.params();
    let max_ord_ird = (u32::from(params.max_ord) << 16) | u32::from(params.max_ird);
    Ok(QpModified { max_wqe_rqe: params.max_wqe_rqe, max_ord_ird })
}

/// QUERY_QP: the parameter block of an existing QP.
pub(crate) fn query_qp(fw: &mut Firmware, _: &Context, req: QueryQp) -> Result<QpParams, CompletionStatus> {
    let id = u16::try_from(req.qp_id & 0xFF_FFFF).map_err(|_| illegal_field())?;
    fw.resources.rdma.qps.get(id).map(|qp| qp.params()).ok_or_else(illegal_field)
}

/// DELETE_QP: an existing QP; the device posts nothing more for it.
pub(crate) fn delete_qp(fw: &mut Firmware, _: &Context, req: DeleteQp) -> Result<Empty, CompletionStatus> {
    let id = u16::try_from(req.qp_id).map_err(|_| illegal_field())?;
    fw.resources.rdma.qps.remove(id).then_some(Empty).ok_or_else(illegal_field)
}
