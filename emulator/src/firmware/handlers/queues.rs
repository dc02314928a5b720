//! Queue commands: EQ_CREATE v2 (13), CQ_CREATE v2 (12), MCC_CREATE_EXT v1 (90), EQ / CQ /
//! MCC_DESTROY (55 / 54 / 53) and MODIFY_EQ_DELAY (41) (spec/be2net-driver.md §3.2,
//! spec/protocol.md §5.20). The contexts land in [`crate::firmware::queues`]; the device's ring
//! engines ([`crate::datapath`]) run them.

use oce_mailbox::command::Empty;
use oce_mailbox::commands::{
    CqCreate, CqDestroy, EqCreate, EqCreated, EqDestroy, MccCreateExt, MccDestroy, ModifyEqDelay, QueueCreated,
};
use oce_mailbox::doorbells::{CqDoorbell, EqDoorbell, MccDoorbell};
use oce_mailbox::status::{AdditionalStatus, BaseStatus, CompletionStatus};
use oce_mailbox::wrb::{COMPLETION_LEN, WRB_LEN};

use super::illegal_field;
use crate::assumptions::MAX_MCC_QUEUES;
use crate::firmware::queues::{CompletionQueue, EventQueue, MccQueue, Ring};
use crate::firmware::{Context, Firmware};

/// FAILED / INSUFFICIENT_RESOURCES: the function's limit for this kind of object is reached.
pub(super) fn exhausted() -> CompletionStatus {
    CompletionStatus::new(BaseStatus::Failed, AdditionalStatus::InsufficientResources)
}

/// True when `count` more objects would pass `limit`.
pub(super) fn at_limit(count: usize, limit: u16) -> bool {
    count >= usize::from(limit)
}

/// EQ_CREATE v2: a ring of 4- or 16-byte entries, unarmed, on the lowest free MSI-X index
/// ([`crate::assumptions`], "Queues"). At most the profile's `eq_count` EQs.
pub(crate) fn eq_create(fw: &mut Firmware, _: &Context, req: EqCreate) -> Result<EqCreated, CompletionStatus> {
    let ctx = req.context;
    if !ctx.valid {
        return Err(illegal_field());
    }
    let ring = Ring::new(req.pages, ctx.entries(), ctx.entry_len() as u32).ok_or_else(illegal_field)?;
    let limits = fw.active_nic();
    let q = &mut fw.resources.queues;
    if at_limit(q.eq_count(), limits.eq_count) {
        return Err(exhausted());
    }
    let msix_idx = q.free_msix_idx();
    let (armed, delay_multiplier) = (ctx.armed, ctx.delay_multiplier.into());
    let id = q
        .add_eq(EqDoorbell::MAX_ID.into(), |_, serial| EventQueue { ring, msix_idx, armed, delay_multiplier, serial })
        .ok_or_else(exhausted)?;
    Ok(EqCreated { eq_id: id, msix_idx })
}

/// CQ_CREATE v2: a ring of 16-byte entries in 4 KiB pages; an eventable CQ names a live EQ. At
/// most the profile's `cq_count` CQs.
pub(crate) fn cq_create(fw: &mut Firmware, _: &Context, req: CqCreate) -> Result<QueueCreated, CompletionStatus> {
    let ctx = req.context;
    if !ctx.valid || req.page_size != CqCreate::PAGE_SIZE_4K {
        return Err(illegal_field());
    }
    let ring = Ring::new(req.pages, ctx.entries(), COMPLETION_LEN as u32).ok_or_else(illegal_field)?;
    let limits = fw.active_nic();
    let q = &mut fw.resources.queues;
    if ctx.eventable && q.event_queue(ctx.eq_id).is_none() {
        return Err(illegal_field());
    }
    if at_limit(q.cq_count(), limits.cq_count) {
        return Err(exhausted());
    }
    let (eq, armed) = (ctx.eventable.then_some(ctx.eq_id), ctx.armed);
    let id = q
        .add_cq(CqDoorbell::MAX_ID.into(), |_, serial| CompletionQueue { ring, eq, armed, serial, user_pd: 0 })
        .ok_or_else(exhausted)?;
    Ok(QueueCreated { id })
}

/// MCC_CREATE_EXT v1: a ring of WRBs whose completions go to a live CQ, and asynchronous events
/// (those of the subscription bitmap) to the async CQ when the context names a live one.
pub(crate) fn mcc_create_ext(
    fw: &mut Firmware,
    _: &Context,
    req: MccCreateExt,
) -> Result<QueueCreated, CompletionStatus> {
    let ctx = req.context;
    if !ctx.valid {
        return Err(illegal_field());
    }
    let ring = Ring::new(req.pages, ctx.entries(), WRB_LEN as u32).ok_or_else(illegal_field)?;
    let q = &mut fw.resources.queues;
    let async_cq = ctx.async_cq_valid.then_some(ctx.async_cq_id);
    if q.cq(req.cq_id).is_none() || async_cq.is_some_and(|cq| q.cq(cq).is_none()) {
        return Err(illegal_field());
    }
    if at_limit(q.mcc_count(), MAX_MCC_QUEUES) {
        return Err(exhausted());
    }
    let (cq, async_events) = (req.cq_id, req.async_event_bitmap);
    let id = q
        .add_mcc(MccDoorbell::ID_MASK, |_, serial| MccQueue { ring, cq, async_cq, async_events, serial })
        .ok_or_else(exhausted)?;
    Ok(QueueCreated { id })
}

/// EQ_DESTROY: the EQ goes; CQs that named it raise no more events.
pub(crate) fn eq_destroy(fw: &mut Firmware, _: &Context, req: EqDestroy) -> Result<Empty, CompletionStatus> {
    fw.resources.queues.remove_eq(req.id).map(|_| Empty).ok_or_else(illegal_field)
}

/// CQ_DESTROY.
pub(crate) fn cq_destroy(fw: &mut Firmware, _: &Context, req: CqDestroy) -> Result<Empty, CompletionStatus> {
    fw.resources.queues.remove_cq(req.id).map(|_| Empty).ok_or_else(illegal_field)
}

/// MCC_DESTROY: WRBs posted and not yet run, and a held completion, are dropped.
pub(crate) fn mcc_destroy(fw: &mut Firmware, _: &Context, req: MccDestroy) -> Result<Empty, CompletionStatus> {
    fw.resources.queues.remove_mcc(req.id).map(|_| Empty).ok_or_else(illegal_field)
}

/// MODIFY_EQ_DELAY: stores each EQ's delay multiplier (the model raises interrupts without
/// delay). Every EQ named must exist; then all change, or none.
pub(crate) fn modify_eq_delay(fw: &mut Firmware, _: &Context, req: ModifyEqDelay) -> Result<Empty, CompletionStatus> {
    let q = &mut fw.resources.queues;
    let known = |id: u32| u16::try_from(id).ok().filter(|&id| q.event_queue(id).is_some());
    if req.entries.iter().any(|e| known(e.eq_id).is_none()) {
        return Err(illegal_field());
    }
    for e in &req.entries {
        if let Ok(id) = u16::try_from(e.eq_id) {
            q.set_eq_delay(id, e.delay_multiplier);
        }
    }
    Ok(Empty)
}
