//! ETH subsystem commands: TX_CREATE v2 (7), RX_CREATE (8), TX_DESTROY (9), RX_DESTROY (10),
//! RSS_CONFIG v1 (1), ACPI_WOL_MAGIC_CONFIG v1 (12, the capability query) and GET_STATISTICS v2
//! (4) (spec/be2net-driver.md §3.2, §4; spec/protocol.md §5.0, §5.20).

use oce_mailbox::command::Empty;
use oce_mailbox::commands::QUEUE_PAGE_LEN;
use oce_mailbox::commands::{
    AcpiWolQuery, GetStatistics, HwStatsV2, IfFlags, RssConfig, RxCreate, RxCreated, RxDestroy, TxCreate, TxCreated,
    TxDestroy, WolCapabilities,
};
use oce_mailbox::doorbells::TxDoorbell;
use oce_mailbox::entries::{RX_DESCRIPTOR_LEN, TX_WRB_LEN};
use oce_mailbox::status::CompletionStatus;

use super::illegal_field;
use super::queues::{at_limit, exhausted};
use crate::assumptions::{MAX_RX_FRAG_SIZE_LOG2, MAX_RX_QUEUE_ID, TX_DOORBELL_OFFSET, WOL_CAPABILITIES};
use crate::firmware::queues::{Ring, RxQueue, TxQueue};
use crate::firmware::{Context, Firmware, Owed};

/// TX_CREATE v2: a ring of 16-byte WRBs sending for a live interface, its completions to a live
/// CQ; its doorbell is at [`TX_DOORBELL_OFFSET`]. At most the profile's `txq_count` rings.
pub(crate) fn tx_create(fw: &mut Firmware, _: &Context, req: TxCreate) -> Result<TxCreated, CompletionStatus> {
    let entries = req.entries();
    let ring = Ring::new(req.pages, entries, TX_WRB_LEN as u32).ok_or_else(illegal_field)?;
    let limits = fw.active_nic();
    let r = &mut fw.resources;
    let if_id = u32::from(req.if_id);
    if r.queues.cq(req.cq_id).is_none() || !r.interfaces.contains_key(&if_id) {
        return Err(illegal_field());
    }
    if at_limit(r.queues.txq_count(), limits.txq_count) {
        return Err(exhausted());
    }
    let cq = req.cq_id;
    let id =
        r.queues.add_txq(TxDoorbell::ID_MASK, |_, serial| TxQueue { ring, cq, if_id, serial }).ok_or_else(exhausted)?;
    fw.counters.tx_ring_created(id);
    Ok(TxCreated { cid: id, rid: 0, db_offset: TX_DOORBELL_OFFSET })
}

/// RX_CREATE: a receive ring of a live interface with its completions to a live CQ: its pages
/// hold 8-byte descriptors (be2net: 2 pages, 1024 descriptors), each naming a fragment of
/// 2^`frag_size` bytes (at most 2^[`MAX_RX_FRAG_SIZE_LOG2`]). Its `rss_id` is its id. Ids stay
/// below [`MAX_RX_QUEUE_ID`]; at most the profile's `rq_count` rings.
pub(crate) fn rx_create(fw: &mut Firmware, _: &Context, req: RxCreate) -> Result<RxCreated, CompletionStatus> {
    let limits = fw.active_nic();
    let r = &mut fw.resources;
    if req.pages.is_empty()
        || r.queues.cq(req.cq_id).is_none()
        || !r.interfaces.contains_key(&req.interface_id)
        || req.frag_size > MAX_RX_FRAG_SIZE_LOG2
    {
        return Err(illegal_field());
    }
    let entries = (req.pages.len() as u64 * QUEUE_PAGE_LEN / RX_DESCRIPTOR_LEN as u64) as u32;
    let ring = Ring::new(req.pages, entries, RX_DESCRIPTOR_LEN as u32).ok_or_else(illegal_field)?;
    if at_limit(r.queues.rxq_count(), limits.rq_count) {
        return Err(exhausted());
    }
    let (cq, if_id, rss, frag_size, max_frame_size) =
        (req.cq_id, req.interface_id, req.rss_queue != 0, 1u32 << req.frag_size, req.max_frame_size);
    // The RSS id is the ring id, and ids stay below 136: it fits a byte.
    let id = r
        .queues
        .add_rxq(MAX_RX_QUEUE_ID.into(), |id, serial| RxQueue {
            ring,
            cq,
            if_id,
            rss_id: id as u8,
            rss,
            frag_size,
            max_frame_size,
            serial,
        })
        .ok_or_else(exhausted)?;
    fw.counters.rx_ring_created(id);
    Ok(RxCreated { id, rss_id: id as u8 })
}

/// TX_DESTROY: WRBs posted and not yet sent are dropped with the ring.
pub(crate) fn tx_destroy(fw: &mut Firmware, _: &Context, req: TxDestroy) -> Result<Empty, CompletionStatus> {
    fw.resources.queues.remove_txq(req.id).map(|_| Empty).ok_or_else(illegal_field)
}

/// RX_DESTROY: the ring goes, and its CQ is owed a flush completion (no fragment), which the
/// device writes before the command completes (spec/be2net-driver.md §4.2: `be_rx_cq_clean`
/// waits for it). The buffers still posted are not returned: be2net frees them itself.
pub(crate) fn rx_destroy(fw: &mut Firmware, _: &Context, req: RxDestroy) -> Result<(Empty, Owed), CompletionStatus> {
    let rxq = fw.resources.queues.remove_rxq(req.id).ok_or_else(illegal_field)?;
    Ok((Empty, Owed { rx_flush: Some(rxq.cq), ..Owed::default() }))
}

/// RSS_CONFIG v1: the hash types and indirection table of a live interface; turning RSS on needs
/// the interface's RSS capability, and the table size is at most 128 (log2 ≤ 7).
pub(crate) fn rss_config(fw: &mut Firmware, _: &Context, req: RssConfig) -> Result<Empty, CompletionStatus> {
    let iface = fw.resources.interfaces.get_mut(&req.if_id).ok_or_else(illegal_field)?;
    if req.cpu_table_size_log2 > 7 || (req.enable_rss != 0 && !iface.capabilities.contains(IfFlags::RSS)) {
        return Err(illegal_field());
    }
    iface.rss_hash = req.enable_rss;
    iface.rss_key = req.hash_key;
    iface.rss_table = req.cpu_table[..1 << req.cpu_table_size_log2].to_vec();
    Ok(Empty)
}

/// ACPI_WOL_MAGIC_CONFIG v1, the capability query (`query_options` 2): [`WOL_CAPABILITIES`],
/// no magic MAC armed. Other query options are ILLEGAL_FIELD.
pub(crate) fn acpi_wol_query(
    _: &mut Firmware,
    _: &Context,
    req: AcpiWolQuery,
) -> Result<WolCapabilities, CompletionStatus> {
    if req.query_options != AcpiWolQuery::GET_WOL_CAPABILITY {
        return Err(illegal_field());
    }
    Ok(WolCapabilities { wol_settings: WOL_CAPABILITIES, magic_mac: [0; 6] })
}

/// GET_STATISTICS v2: the port's counters and each RX ring's drops, as the datapath counted
/// them ([`crate::datapath::Counters::hw_stats`]).
pub(crate) fn get_statistics(fw: &mut Firmware, _: &Context, _: GetStatistics) -> Result<HwStatsV2, CompletionStatus> {
    Ok(fw.counters.hw_stats(fw.port()))
}
