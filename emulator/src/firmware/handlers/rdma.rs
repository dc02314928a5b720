//! The RDMA subsystem (10): QUERY_CONFIG (1), ALLOC_PD (2), DEALLOC_PD (3), CREATE_AH_TBL (4),
//! DELETE_AH_TBL (5), GET_RDMA_STATS (27), ALLOC_PD_RANGE (28) and DEALLOC_PD_RANGE (29), what
//! ocrdma sends to register a device, report its counters and open a user context
//! (spec/be2net-driver.md §5.2, §5.4). The objects
//! land in [`crate::firmware::rdma`]; the rules are in [`crate::assumptions`] ("RoCE engine").

use oce_mailbox::command::Empty;
use oce_mailbox::commands::{
    AH_TABLE_PAGES, AhTableCreated, AllocPd, AllocPdRange, CreateAhTable, DeallocPd, DeallocPdRange, DeleteAhTable,
    GetRdmaStats, PdGrant, PdRange, QUEUE_PAGE_LEN, RdmaConfig, RdmaQueryConfig, RdmaStats,
};
use oce_mailbox::status::CompletionStatus;

use super::illegal_field;
use super::queues::exhausted;
use crate::assumptions::ROCE_LIMITS;
use crate::datapath::roce::stats::RoceCounters;
use crate::firmware::rdma::AhTable;
use crate::firmware::{Context, Firmware};

/// QUERY_CONFIG: the RoCE engine's limits.
pub(crate) fn query_config(_: &mut Firmware, _: &Context, _: RdmaQueryConfig) -> Result<RdmaConfig, CompletionStatus> {
    Ok(ROCE_LIMITS)
}

/// GET_RDMA_STATS: what the RoCE path counted ([`crate::datapath::roce::stats`]); with
/// `reset_stats` the counters start again from zero once read (`ocrdma_rdma_stats_req`).
pub(crate) fn get_rdma_stats(fw: &mut Firmware, _: &Context, req: GetRdmaStats) -> Result<RdmaStats, CompletionStatus> {
    let stats = fw.roce_counters.report();
    if req.reset {
        fw.roce_counters = RoceCounters::default();
    }
    Ok(stats)
}

/// ALLOC_PD: the lowest free PD, never with a DPP page (the model has none; the DPP bit of the
/// answer stays clear, which tells the driver so).
pub(crate) fn alloc_pd(fw: &mut Firmware, _: &Context, _: AllocPd) -> Result<PdGrant, CompletionStatus> {
    let pd_id = fw.resources.rdma.alloc_one().ok_or_else(exhausted)?;
    Ok(PdGrant { pd_id, dpp_page: None })
}

/// DEALLOC_PD: a single PD in use.
pub(crate) fn dealloc_pd(fw: &mut Firmware, _: &Context, req: DeallocPd) -> Result<Empty, CompletionStatus> {
    let id = u16::try_from(req.pd_id).map_err(|_| illegal_field())?;
    fw.resources.rdma.free_one(id).then_some(Empty).ok_or_else(illegal_field)
}

/// ALLOC_PD_RANGE: `pd_count` consecutive PDs; DPP PDs are not to be had.
pub(crate) fn alloc_pd_range(fw: &mut Firmware, _: &Context, req: AllocPdRange) -> Result<PdRange, CompletionStatus> {
    let count = u16::try_from(req.pd_count).map_err(|_| exhausted())?;
    if req.dpp {
        return Err(exhausted());
    }
    let pd_id = fw.resources.rdma.alloc_range(count).ok_or_else(exhausted)?;
    Ok(PdRange { first: PdGrant { pd_id, dpp_page: None }, pd_count: count.into() })
}

/// DEALLOC_PD_RANGE: exactly a range handed out.
pub(crate) fn dealloc_pd_range(fw: &mut Firmware, _: &Context, req: DeallocPdRange) -> Result<Empty, CompletionStatus> {
    let (Ok(start), Ok(count)) = (u16::try_from(req.start_pd_id), u16::try_from(req.pd_count)) else {
        return Err(illegal_field());
    };
    fw.resources.rdma.free_range(start, count).then_some(Empty).ok_or_else(illegal_field)
}

/// CREATE_AH_TBL: 1–8 pages behind a page list, entries of a non-zero size; where the table
/// is, is kept for the UD sends that name its entries.
pub(crate) fn create_ah_table(
    fw: &mut Firmware,
    _: &Context,
    req: CreateAhTable,
) -> Result<AhTableCreated, CompletionStatus> {
    let pages_ok = (1..=AH_TABLE_PAGES).contains(&usize::from(req.pages));
    if !pages_ok || req.entry_len == 0 || req.page_list[0] == 0 {
        return Err(illegal_field());
    }
    let table = AhTable {
        page_list: req.page_list[0],
        pages: req.pages,
        page_len: QUEUE_PAGE_LEN << req.page_size_code,
        entry_len: req.entry_len,
    };
    let ahid = fw.resources.rdma.add_ah_table(table).ok_or_else(exhausted)?;
    Ok(AhTableCreated { ahid })
}

/// DELETE_AH_TBL.
pub(crate) fn delete_ah_table(fw: &mut Firmware, _: &Context, req: DeleteAhTable) -> Result<Empty, CompletionStatus> {
    let id = u16::try_from(req.ahid).map_err(|_| illegal_field())?;
    fw.resources.rdma.remove_ah_table(id).then_some(Empty).ok_or_else(illegal_field)
}
