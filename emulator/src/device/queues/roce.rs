//! The RoCE doorbells on the PD pages 1..=15 of the doorbell BAR — SQ at 0x1C0, RQ at 0x100,
//! CQ at 0x120 (spec/datapath.md §2.2; the rules in [`crate::assumptions`], "RoCE engine") —
//! the per-QP producer indices they advance, the [`RoceQueues`] the device lends a
//! [`RoceTransport`](crate::datapath::roce::RoceTransport), and the PBE read REGISTER_NSMR
//! leaves the device.

use oce_mailbox::commands::{CreateQpFlags, PBE_LEN, Pbe, QpState};
use oce_mailbox::doorbells::{EqCqDoorbell, RoceRqDoorbell, RoceSqDoorbell};
use oce_mailbox::entries::{AV_LEN, Av, Cqe};
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::COMPLETION_LEN;

use super::super::{Device, DmaSpace, Interrupt};
use crate::datapath::roce::stats::RoceCounters;
use crate::datapath::roce::{FastRegistration, MrView, QpView, RegionRefusal, RoceQueues, WorkQueue, not_modelled};
use crate::datapath::{Effects, Env, EventEngine};
use crate::events::{Event, QueueKind};
use crate::firmware::rdma::qp::QueuePair;
use crate::firmware::resources::Resources;

impl<D: DmaSpace, I: Interrupt> Device<D, I> {
    /// A doorbell on PD page `page` (1..=15) at `off` within the page.
    pub(super) fn pd_page_doorbell(&mut self, page: u16, off: u32, value: u32) {
        match off {
            RoceSqDoorbell::OFFSET => self.roce_ring_doorbell(page, WorkQueue::Sq, value),
            RoceRqDoorbell::OFFSET => self.roce_ring_doorbell(page, WorkQueue::Rq, value),
            EqCqDoorbell::OFFSET => match EqCqDoorbell::decode(value) {
                EqCqDoorbell::Cq(db)
                    if self.firmware.resources.queues.cq(db.id()).is_some_and(|c| c.user_pd == page) =>
                {
                    let mut out = Effects::default();
                    let mut env = Env { resources: &self.firmware.resources, dma: &self.dma, out: &mut out };
                    self.datapath.events.cq_doorbell(db, &mut env);
                    self.apply(out);
                }
                EqCqDoorbell::Cq(db) => self.queue_miss(QueueKind::Cq, db.id()),
                EqCqDoorbell::Eq(db) => self.queue_miss(QueueKind::Eq, db.id()),
            },
            _ => {}
        }
    }

    /// An SQ or RQ doorbell: the QP's producer index moves on by the count, and the transport
    /// (or, without one, the log for an SQ) hears of it. A doorbell naming no QP of this page's
    /// PD is a queue miss and changes nothing.
    fn roce_ring_doorbell(&mut self, page: u16, queue: WorkQueue, value: u32) {
        let (dbid, count) = match queue {
            WorkQueue::Sq => (RoceSqDoorbell(value).id(), u32::from(RoceSqDoorbell(value).count())),
            WorkQueue::Rq => (RoceRqDoorbell(value).id(), u32::from(RoceRqDoorbell(value).count())),
        };
        let qps = &mut self.firmware.resources.rdma.qps;
        let Some(qp) = qps.get_mut(dbid).filter(|qp| qp.pd_id == page) else {
            self.queue_miss(QueueKind::Qp, dbid);
            return;
        };
        match queue {
            WorkQueue::Sq => qp.sq_producer = (qp.sq_producer + count) % qp.sq.entries,
            WorkQueue::Rq => qp.rq_producer = (qp.rq_producer + count) % qp.rq.entries,
        }
        let view = view(qp);
        let mut out = Effects::default();
        match self.datapath.roce.take() {
            Some(mut transport) => {
                let mut access = Access {
                    resources: &mut self.firmware.resources,
                    counters: &mut self.firmware.roce_counters,
                    dma: &self.dma,
                    events: &mut self.datapath.events,
                    out: &mut out,
                };
                match queue {
                    WorkQueue::Sq => transport.sq_posted(dbid, &mut access),
                    WorkQueue::Rq => transport.rq_posted(dbid, &mut access),
                }
                self.datapath.roce = Some(transport);
            }
            None => {
                self.apply(std::mem::take(&mut out));
                let ran = self.with_roce(|engine, queues, port| match queue {
                    WorkQueue::Sq => engine.sq_posted(dbid, queues, port),
                    WorkQueue::Rq => engine.rq_posted(dbid, queues, port),
                });
                if !ran && queue == WorkQueue::Sq {
                    out.events.push(not_modelled(&view));
                }
            }
        }
        self.apply(out);
    }

    /// Reads the PBEs of memory region `key` from its PBL pages (REGISTER_NSMR's last command
    /// leaves this); a page that cannot be read leaves the region without pages.
    pub(super) fn read_mr_pbes(&mut self, key: u32) {
        let Some(region) = self.firmware.resources.rdma.mrs.get(key) else { return };
        let mut pbes = Vec::new();
        for n in 0..region.data_pages() {
            let mut raw = [0u8; PBE_LEN];
            let read = region.pbe_address(n).map(|addr| (addr, self.dma.read(addr, &mut raw)));
            match read {
                Some((_, Ok(()))) => pbes.extend(Pbe::decode(&mut Reader::new(&raw)).ok().map(|p| p.0)),
                Some((addr, Err(_))) => {
                    self.firmware.log(Event::DmaFault { iova: addr, len: PBE_LEN });
                    pbes.clear();
                    break;
                }
                None => break,
            }
        }
        self.firmware.resources.rdma.mrs.set_pbes(key, pbes);
    }
}

/// What a transport sees of `qp`.
pub(super) fn view(qp: &QueuePair) -> QpView {
    QpView {
        id: qp.id,
        qp_type: qp.qp_type,
        pd_id: qp.pd_id,
        state: qp.state,
        params: qp.params(),
        vlan: qp.vlan_enabled.then_some(qp.path.vlan),
        lkey0: qp.flags.has(CreateQpFlags::ZERO_LKEY),
        inbound_read: qp.flags.has(CreateQpFlags::INBOUND_READ),
        inbound_write: qp.flags.has(CreateQpFlags::INBOUND_WRITE),
        sq_producer: qp.sq_producer,
        rq_producer: qp.rq_producer,
        sq_entries: qp.sq.entries,
        rq_entries: qp.rq.entries,
    }
}

/// The device's half of the seam while a transport handles one doorbell.
pub(super) struct Access<'a> {
    pub(super) resources: &'a mut Resources,
    /// The function's RoCE counters: the WQEs read and the CQEs posted count there.
    pub(super) counters: &'a mut RoceCounters,
    pub(super) dma: &'a dyn DmaSpace,
    pub(super) events: &'a mut EventEngine,
    pub(super) out: &'a mut Effects,
}

impl Access<'_> {
    pub(super) fn env(&mut self) -> Env<'_> {
        Env { resources: self.resources, dma: self.dma, out: self.out }
    }

    fn read_entry(&mut self, qp: u16, queue: WorkQueue, index: u32) -> Option<Vec<u8>> {
        let qp = self.resources.rdma.qps.get(qp)?;
        let ring = if queue == WorkQueue::Sq { &qp.sq } else { &qp.rq };
        let (addr, mut buf) = (ring.entry(index), vec![0u8; ring.entry_len as usize]);
        self.env().read(addr, &mut buf).then_some(buf)
    }
}

impl RoceQueues for Access<'_> {
    fn qp(&self, id: u16) -> Option<QpView> {
        self.resources.rdma.qps.get(id).map(view)
    }

    fn read_wqe(&mut self, qp: u16, index: u32) -> Option<Vec<u8>> {
        let wqe = self.read_entry(qp, WorkQueue::Sq, index)?;
        if let Some(view) = self.qp(qp) {
            self.counters.wqe_read(&view, &wqe);
        }
        Some(wqe)
    }

    fn read_rqe(&mut self, qp: u16, index: u32) -> Option<Vec<u8>> {
        self.read_entry(qp, WorkQueue::Rq, index)
    }

    fn read_av(&mut self, index: u32) -> Option<Av> {
        let table = *self.resources.rdma.first_ah_table()?;
        if u64::from(index) >= table.entries() {
            return None;
        }
        let offset = u64::from(index) * u64::from(table.entry_len);
        let pbe_at = table.page_list + offset / table.page_len * PBE_LEN as u64;
        let mut raw = [0u8; PBE_LEN];
        if !self.env().read(pbe_at, &mut raw) {
            return None;
        }
        let page = Pbe::decode(&mut Reader::new(&raw)).ok()?.0;
        let mut entry = [0u8; AV_LEN];
        if !self.env().read(page + offset % table.page_len, &mut entry) {
            return None;
        }
        Av::decode(&mut Reader::new(&entry)).ok()
    }

    fn memory_region(&self, key: u32) -> Option<MrView<'_>> {
        let mr = self.resources.rdma.mrs.get(key).filter(|mr| mr.complete && mr.valid)?;
        Some(MrView {
            key: mr.key,
            pd_id: mr.pd_id,
            access: mr.access,
            va: mr.va,
            len: mr.total_len,
            first_byte_offset: mr.first_byte_offset,
            page_len: mr.pbe_size,
            fast_register: mr.fast_register,
            pages: &mr.pbes,
        })
    }

    fn dma_read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        self.env().read(addr, buf)
    }

    fn dma_write(&mut self, addr: u64, data: &[u8]) -> bool {
        self.env().write(addr, data)
    }

    fn fast_register(&mut self, pd: u16, reg: &FastRegistration) -> Result<(), RegionRefusal> {
        self.fast_register_region(pd, reg)
    }

    fn invalidate(&mut self, pd: u16, key: u32) -> Result<(), RegionRefusal> {
        self.resources.rdma.mrs.invalidate(pd, key)
    }

    fn post_cqe(&mut self, qp: u16, queue: WorkQueue, cqe: &Cqe, solicited: bool) -> bool {
        self.post(qp, queue, cqe, solicited, false)
    }

    fn post_flush_cqe(&mut self, qp: u16, queue: WorkQueue, cqe: &Cqe) -> bool {
        self.post(qp, queue, cqe, true, true)
    }
}

impl Access<'_> {
    /// Posts `cqe` for QP `qp` (see [`RoceQueues::post_cqe`]); `in_err` allows a QP in ERR, for
    /// the flush completions of its move there.
    fn post(&mut self, qp: u16, queue: WorkQueue, cqe: &Cqe, solicited: bool, in_err: bool) -> bool {
        let Some(qp) = self.resources.rdma.qps.get(qp).filter(|qp| in_err || qp.state != QpState::Err) else {
            return false;
        };
        let cq = if queue == WorkQueue::Sq { qp.sq_cq } else { qp.rq_cq };
        let mut entry = [0u8; COMPLETION_LEN];
        if cqe.encode(&mut Writer::new(&mut entry)).is_err() {
            return false;
        }
        let mut env = Env { resources: self.resources, dma: self.dma, out: self.out };
        self.events.post_marked(cq, &entry, solicited, &mut env);
        self.counters.completed(&view(qp), queue, cqe);
        true
    }
}
