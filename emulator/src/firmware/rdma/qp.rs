//! The queue-pair table CREATE_QP, MODIFY_QP, QUERY_QP and DELETE_QP keep: each QP's rings,
//! CQs, limits, state and path, and the producer indices its doorbells advance (the rules in
//! [`crate::assumptions`], "RoCE engine": ids, legal transitions, what MODIFY_QP checks).

use std::collections::BTreeMap;

use oce_mailbox::commands::{CreateQp, CreateQpFlags, ModifyQp, ModifyQpValid, QpParams, QpState, QpType};

use crate::assumptions::{GSI_QP_ID, MAX_QP_ID};

/// A QP ring in host memory: pages of one size (ocrdma: 4 KiB << code, up to 8 of them), entries
/// of one size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QpRing {
    pub(crate) pages: Vec<u64>,
    pub(crate) page_len: u64,
    pub(crate) entries: u32,
    pub(crate) entry_len: u32,
}

impl QpRing {
    /// A ring of `2^log2_entries` entries of `entry_len` bytes in `pages`; `None` when the
    /// pages cannot hold it or an entry would straddle a page.
    pub(crate) fn new(pages: Vec<u64>, page_len: u64, log2_entries: u16, entry_len: u16) -> Option<Self> {
        let entries = 1u32.checked_shl(log2_entries.into()).filter(|&n| n <= 1 << 16)?;
        let bytes = u64::from(entries) * u64::from(entry_len);
        let fits =
            entry_len > 0 && page_len.is_multiple_of(u64::from(entry_len)) && bytes <= pages.len() as u64 * page_len;
        fits.then_some(Self { pages, page_len, entries, entry_len: entry_len.into() })
    }

    /// The bus address of entry `index` (modulo the ring's size).
    pub(crate) fn entry(&self, index: u32) -> u64 {
        let off = u64::from(index % self.entries) * u64::from(self.entry_len);
        self.pages.get((off / self.page_len) as usize).copied().unwrap_or(0) + off % self.page_len
    }
}

/// One queue pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueuePair {
    pub(crate) id: u16,
    pub(crate) qp_type: QpType,
    pub(crate) pd_id: u16,
    pub(crate) sq: QpRing,
    pub(crate) rq: QpRing,
    pub(crate) sq_cq: u16,
    pub(crate) rq_cq: u16,
    pub(crate) flags: CreateQpFlags,
    pub(crate) max_sge_send: u16,
    pub(crate) max_sge_write: u16,
    pub(crate) max_sge_recv: u16,
    /// The IRD pages CREATE_QP gave (kept, never read: see the assumptions).
    pub(crate) ird_pages: [u64; 4],
    pub(crate) state: QpState,
    /// The path and transport parameters MODIFY_QP set (state, ids and sizes are filled in by
    /// [`QueuePair::params`]).
    pub(crate) path: QpParams,
    /// MODIFY_QP set the VLAN-enable bit: frames carry `path.vlan`.
    pub(crate) vlan_enabled: bool,
    /// Entries the host has announced on the SQ doorbell since the last →INIT, modulo 2^16.
    pub(crate) sq_producer: u32,
    /// Entries the host has announced on the RQ doorbell since the last →INIT.
    pub(crate) rq_producer: u32,
}

impl QueuePair {
    /// The parameter block QUERY_QP answers.
    pub(crate) fn params(&self) -> QpParams {
        let log2 = |n: u32| n.trailing_zeros();
        QpParams {
            id: self.id.into(),
            max_wqe_rqe: (log2(self.sq.entries) << 16) | log2(self.rq.entries),
            max_sge_send_write: (u32::from(self.max_sge_send) << 16) | u32::from(self.max_sge_write),
            state: self.state,
            flags: self.flags.0 & 0x1F,
            max_sge_recv: self.max_sge_recv,
            wq_rq_cqid: (u32::from(self.sq_cq) << 16) | u32::from(self.rq_cq),
            ..self.path
        }
    }
}

/// Why a QP command is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QpRefusal {
    /// ILLEGAL_FIELD.
    Field,
    /// INSUFFICIENT_RESOURCES.
    Full,
}

/// True when a QP may go from `from` to `to` (IBTA 1.3 §10.3.1, the transitions a driver asks
/// for; ocrdma checks them itself first, `ib_modify_qp_is_ok`).
pub(crate) fn transition_allowed(from: QpState, to: QpState) -> bool {
    use QpState::*;
    matches!(
        (from, to),
        (_, Reset | Err)
            | (Reset, Init)
            | (Init, Init | Rtr)
            | (Rtr, Rts)
            | (Rts, Rts | Sqd)
            | (Sqd, Rts | Sqd)
            | (Sqe, Rts)
    )
}

/// Every QP of the function, by id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct QpTable {
    qps: BTreeMap<u16, QueuePair>,
}

impl QpTable {
    /// Adds a QP from CREATE_QP (the caller checked PD and CQs); its id: [`GSI_QP_ID`] for the
    /// GSI QP, else the lowest free from 2.
    pub(crate) fn create(&mut self, req: &CreateQp, sq: QpRing, rq: QpRing) -> Result<u16, QpRefusal> {
        let id = match req.qp_type {
            QpType::Gsi => Some(GSI_QP_ID).filter(|id| !self.qps.contains_key(id)).ok_or(QpRefusal::Full)?,
            QpType::Rc | QpType::Ud => {
                (GSI_QP_ID + 1..=MAX_QP_ID).find(|id| !self.qps.contains_key(id)).ok_or(QpRefusal::Full)?
            }
            QpType::Unknown(_) => return Err(QpRefusal::Field),
        };
        let qp = QueuePair {
            id,
            qp_type: req.qp_type,
            pd_id: req.pd_id,
            sq,
            rq,
            sq_cq: req.sq_cq_id,
            rq_cq: req.rq_cq_id,
            flags: req.flags,
            max_sge_send: req.max_sge_send,
            max_sge_write: req.max_sge_write,
            max_sge_recv: req.max_sge_recv,
            ird_pages: req.ird_pages,
            state: QpState::Reset,
            path: QpParams { max_ord: req.max_ord, max_ird: req.max_ird, ..QpParams::default() },
            vlan_enabled: false,
            sq_producer: 0,
            rq_producer: 0,
        };
        self.qps.insert(id, qp);
        Ok(id)
    }

    /// Applies MODIFY_QP to the QP it names: the state when valid (a change to INIT or RESET
    /// resets the producer indices), then each parameter whose valid bit is set.
    pub(crate) fn modify(&mut self, req: &ModifyQp, max_ord: u16, max_ird: u16) -> Result<&QueuePair, QpRefusal> {
        let id = u16::try_from(req.params.id & 0xFFFF).map_err(|_| QpRefusal::Field)?;
        let qp = self.qps.get_mut(&id).ok_or(QpRefusal::Field)?;
        let (p, valid) = (&req.params, req.valid);
        if valid.has(ModifyQpValid::STATE) && !transition_allowed(qp.state, p.state) {
            return Err(QpRefusal::Field);
        }
        let mtu_ok =
            !valid.has(ModifyQpValid::PMTU) || (p.path_mtu.is_power_of_two() && (256..=4096).contains(&p.path_mtu));
        let ord_ok = !valid.has(ModifyQpValid::MAX_ORD) || p.max_ord <= max_ord;
        let ird_ok = !valid.has(ModifyQpValid::MAX_IRD) || p.max_ird <= max_ird;
        if !(mtu_ok && ord_ok && ird_ok) {
            return Err(QpRefusal::Field);
        }
        let path = &mut qp.path;
        let set = |bit: u32| valid.has(bit);
        if set(ModifyQpValid::DEST_QPN) {
            path.dest_qpn = p.dest_qpn;
        }
        if set(ModifyQpValid::SQ_PSN) {
            path.sq_psn = p.sq_psn;
        }
        if set(ModifyQpValid::RQ_PSN) {
            path.rq_psn = p.rq_psn;
        }
        if set(ModifyQpValid::PMTU) {
            path.path_mtu = p.path_mtu;
        }
        if set(ModifyQpValid::RETRY_COUNT) {
            path.retry_count = p.retry_count;
        }
        if set(ModifyQpValid::RNR_RETRY) {
            path.rnr_retry = p.rnr_retry;
        }
        if set(ModifyQpValid::RNR_TIMER) {
            path.rnr_nak_timer = p.rnr_nak_timer;
        }
        if set(ModifyQpValid::ACK_TIMEOUT) {
            path.ack_timeout = p.ack_timeout;
        }
        if set(ModifyQpValid::MAX_ORD) {
            path.max_ord = p.max_ord;
        }
        if set(ModifyQpValid::MAX_IRD) {
            path.max_ird = p.max_ird;
        }
        if set(ModifyQpValid::QKEY) {
            path.qkey = p.qkey;
        }
        if set(ModifyQpValid::PKEY) {
            path.pkey_index = p.pkey_index;
        }
        if set(ModifyQpValid::FLOW_LABEL) {
            // The address vector: ocrdma_set_av_params sets this bit with every AV.
            (path.flow_label, path.sl, path.hop_limit, path.traffic_class) =
                (p.flow_label, p.sl, p.hop_limit, p.traffic_class);
            (path.sgid, path.dgid, path.dmac) = (p.sgid, p.dgid, p.dmac);
        }
        qp.vlan_enabled = set(ModifyQpValid::VLAN_EN) || (qp.vlan_enabled && !set(ModifyQpValid::FLOW_LABEL));
        if set(ModifyQpValid::VLAN_EN) {
            path.vlan = p.vlan;
        }
        if set(ModifyQpValid::STATE) {
            // Only a change of state starts the rings again, as the driver's own indices do
            // (`ocrdma_qp_state_change` resets them when the state changes to INIT, and does
            // nothing for a state it is already in). rdma_cm moves every QP INIT→INIT before
            // RTR (`cma_modify_qp_rtr`), after the ULP posted its receives: those must stay.
            if p.state != qp.state && (p.state == QpState::Init || p.state == QpState::Reset) {
                (qp.sq_producer, qp.rq_producer) = (0, 0);
            }
            qp.state = p.state;
        }
        Ok(qp)
    }

    /// The QP with `id`.
    pub(crate) fn get(&self, id: u16) -> Option<&QueuePair> {
        self.qps.get(&id)
    }

    /// The QP with `id`, to change.
    pub(crate) fn get_mut(&mut self, id: u16) -> Option<&mut QueuePair> {
        self.qps.get_mut(&id)
    }

    /// Every QP's id, in order.
    pub(crate) fn ids(&self) -> Vec<u16> {
        self.qps.keys().copied().collect()
    }

    /// Removes QP `id`; false when there is none.
    pub(crate) fn remove(&mut self, id: u16) -> bool {
        self.qps.remove(&id).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use QpState::*;

    #[test]
    fn the_transitions_a_driver_walks_are_legal_and_skips_are_not() {
        for (from, to) in [(Reset, Init), (Init, Rtr), (Rtr, Rts), (Rts, Sqd), (Sqd, Rts), (Rts, Err), (Err, Reset)] {
            assert!(transition_allowed(from, to), "{from:?} → {to:?}");
        }
        for (from, to) in [(Reset, Rtr), (Reset, Rts), (Init, Rts), (Rtr, Init), (Err, Init), (Err, Rts)] {
            assert!(!transition_allowed(from, to), "{from:?} → {to:?}");
        }
    }

    /// A QP as CREATE_QP leaves it, in RESET, with 16-entry rings.
    fn table_with_qp(id: u16) -> QpTable {
        let ring = || QpRing::new(vec![0x10_0000], 4096, 4, 256).unwrap();
        let qp = QueuePair {
            id,
            qp_type: QpType::Rc,
            pd_id: 1,
            sq: ring(),
            rq: ring(),
            sq_cq: 1,
            rq_cq: 1,
            flags: CreateQpFlags::default(),
            max_sge_send: 1,
            max_sge_write: 1,
            max_sge_recv: 1,
            ird_pages: [0; 4],
            state: Reset,
            path: QpParams::default(),
            vlan_enabled: false,
            sq_producer: 0,
            rq_producer: 0,
        };
        QpTable { qps: BTreeMap::from([(id, qp)]) }
    }

    fn to(table: &mut QpTable, id: u16, state: QpState) {
        let mut req = ModifyQp { valid: ModifyQpValid(ModifyQpValid::STATE), ..ModifyQp::default() };
        (req.params.id, req.params.state) = (u32::from(id), state);
        table.modify(&req, 8, 8).unwrap();
    }

    #[test]
    fn receives_posted_in_init_survive_init_to_init_and_a_new_init_drops_them() {
        let mut t = table_with_qp(2);
        to(&mut t, 2, Init);
        // The ULP posts three receives (three RQ doorbells), then rdma_cm's INIT→INIT.
        t.qps.get_mut(&2).unwrap().rq_producer = 3;
        to(&mut t, 2, Init);
        assert_eq!(t.get(2).unwrap().rq_producer, 3, "INIT→INIT keeps the posted receives");
        to(&mut t, 2, Rtr);
        assert_eq!(t.get(2).unwrap().rq_producer, 3);
        // Back to RESET, then INIT: the driver starts its rings again, and so does the device.
        to(&mut t, 2, Reset);
        assert_eq!(t.get(2).unwrap().rq_producer, 0);
        t.qps.get_mut(&2).unwrap().rq_producer = 5;
        to(&mut t, 2, Init);
        assert_eq!(t.get(2).unwrap().rq_producer, 0);
    }

    #[test]
    fn rings_take_large_pages_and_refuse_what_does_not_fit() {
        // 128 WQEs of 256 bytes in one 32 KiB page.
        let ring = QpRing::new(vec![0x10_0000], 32 * 1024, 7, 256).unwrap();
        assert_eq!(ring.entry(127), 0x10_0000 + 127 * 256);
        assert_eq!(ring.entry(128), 0x10_0000, "wraps");
        let two = QpRing::new(vec![0x10_0000, 0x80_0000], 4096, 5, 256).unwrap();
        assert_eq!(two.entry(16), 0x80_0000, "the second page");
        assert!(QpRing::new(vec![0x10_0000], 4096, 5, 256).is_none(), "8 KiB in one 4 KiB page");
        assert!(QpRing::new(vec![0x10_0000], 4096, 40, 256).is_none());
        assert!(QpRing::new(vec![0x10_0000], 4096, 1, 0).is_none());
    }
}
