//! What the RoCE path of one function counted, for GET_RDMA_STATS (`ocrdma_rdma_stats_resp`,
//! ocrdma_sli.h): the frames the engine sent and the port received, by kind and with their
//! bytes; the work requests the SQs consumed; the NAKs the responders sent; the error
//! completions of RC QPs. The rules, and what is guessed, are in [`crate::assumptions`]
//! ("RoCE counters").
//!
//! The counters live in firmware RAM (a POST starts them from zero) and are kept in the wire
//! blocks GET_RDMA_STATS answers with; 32-bit counters wrap, as a hardware register would.

use oce_mailbox::commands::{QpType, RdmaStats, RxQpErrorStats, RxStats, TxQpErrorStats, TxStats, WqeStats};
use oce_mailbox::entries::{Cqe, WqeHeader, cqe_status, wqe_opcode};
use oce_mailbox::wire::{Reader, Wire};
use oce_roce::Error as PacketError;
use oce_roce::packet::{ETHERTYPE_VLAN, NakCode, Opcode, Operation, Packet, Syndrome};

use super::{QpView, WorkQueue};

/// Ethernet header without and with an 802.1Q tag (IEEE 802.3 §3.1.1, IEEE 802.1Q §9).
const ETH_LEN: usize = 14;
const ETH_VLAN_LEN: usize = 18;
/// The BTH after the 40-byte GRH, and the AETH after the 12-byte BTH (IBTA vol 1 §8.3, §9.2,
/// §9.3.2: an ACK's AETH is its first extended header).
const GRH_LEN: usize = 40;
const BTH_LEN: usize = 12;
/// The QP number GSI traffic is addressed to (IBTA vol 1 §3.5.4: QP1).
const GSI_QPN: u32 = 1;

/// The counters of one function.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RoceCounters {
    /// `wqe_stats`.
    pub wqe: WqeStats,
    /// `tx_stats`.
    pub tx: TxStats,
    /// `tx_qp_err_stats`.
    pub tx_qp_errors: TxQpErrorStats,
    /// `rx_stats`.
    pub rx: RxStats,
    /// `rx_qp_err_stats`.
    pub rx_qp_errors: RxQpErrorStats,
}

/// What the counters need of a RoCE v1 frame, read without checking it: the bytes from the GRH
/// on, the BTH opcode, and an ACK's AETH syndrome.
struct Headers {
    /// Bytes from the GRH's first to the frame's last (the ICRC's last: the model's frames carry
    /// no FCS).
    packet_len: u64,
    opcode: Option<Opcode>,
    syndrome: Option<Syndrome>,
}

fn headers(frame: &[u8]) -> Option<Headers> {
    let tagged = frame.get(12..14)? == ETHERTYPE_VLAN.to_be_bytes();
    let grh = if tagged { ETH_VLAN_LEN } else { ETH_LEN };
    let bth = frame.get(grh + GRH_LEN..grh + GRH_LEN + BTH_LEN)?;
    let opcode = Opcode::try_from(bth[0]).ok();
    let syndrome = (opcode == Some(Opcode::RcAck))
        .then(|| frame.get(grh + GRH_LEN + BTH_LEN).map(|&s| Syndrome::from_value(s)))
        .flatten();
    Some(Headers { packet_len: (frame.len() - grh) as u64, opcode, syndrome })
}

fn bump(n: &mut u32) {
    *n = n.wrapping_add(1);
}

fn add(n: &mut u64, by: u64) {
    *n = n.wrapping_add(by);
}

impl RoceCounters {
    /// A frame the engine put on the port: a packet and its bytes for its kind (a UD or GSI
    /// SEND is a SEND; a NAK is an ACK packet); a NAK or RNR NAK also counts as the receive-side
    /// error its responder found.
    pub(crate) fn transmitted(&mut self, frame: &[u8]) {
        let Some(h) = headers(frame) else { return };
        let Some(opcode) = h.opcode else { return };
        let tx = &mut self.tx;
        let (packets, bytes) = match opcode.operation() {
            Operation::Send => (&mut tx.send_packets, Some(&mut tx.send_bytes)),
            Operation::Write => (&mut tx.write_packets, Some(&mut tx.write_bytes)),
            Operation::ReadRequest => (&mut tx.read_packets, Some(&mut tx.read_request_bytes)),
            Operation::ReadResponse => (&mut tx.read_response_packets, Some(&mut tx.read_response_bytes)),
            // `ocrdma_tx_stats` has no ACK bytes.
            Operation::Ack => (&mut tx.ack_packets, None),
        };
        add(packets, 1);
        if let Some(bytes) = bytes {
            add(bytes, h.packet_len);
        }
        let (rx, errors) = (&mut self.rx, &mut self.rx_qp_errors);
        match h.syndrome {
            Some(Syndrome::RnrNak { .. }) => bump(&mut rx.rq_rnr_naks),
            Some(Syndrome::Nak(NakCode::PsnSequenceError)) => bump(&mut rx.nak_count_psn_sequence_errors),
            Some(Syndrome::Nak(NakCode::InvalidRequest | NakCode::InvalidRdRequest)) => {
                bump(&mut errors.nak_invalid_request_errors)
            }
            Some(Syndrome::Nak(NakCode::RemoteAccessError)) => bump(&mut errors.nak_remote_access_errors),
            Some(Syndrome::Nak(NakCode::RemoteOperationalError)) => bump(&mut errors.nak_remote_operation_errors),
            _ => {}
        }
    }

    /// A RoCE frame the port received; `taken` when a QP took it. A frame with a bad ICRC, or
    /// whose lengths do not add up, is a drop of its own kind and no `roce_frames`; every other
    /// frame is one (its bytes counted), and one that no QP took is a drop for GSI, UD or RC by
    /// what it was addressed to.
    pub(crate) fn received(&mut self, frame: &[u8], taken: bool) {
        let rx = &mut self.rx;
        let h = headers(frame);
        if !taken {
            match Packet::decode(frame) {
                Err(PacketError::Icrc { .. }) => return bump(&mut rx.roce_frame_icrc_drops),
                Err(PacketError::Short { .. } | PacketError::PayloadLength { .. } | PacketError::Pad { .. }) => {
                    return bump(&mut rx.roce_frame_payload_len_drops);
                }
                Err(_) => {}
                Ok(p) if p.bth.dest_qpn == GSI_QPN => bump(&mut rx.qp1_drops),
                Ok(p) if p.bth.opcode.is_ud() => bump(&mut rx.ud_drops),
                Ok(_) => bump(&mut rx.rc_drop_count_lookup_errors),
            }
        }
        add(&mut rx.roce_frames, 1);
        let Some(h) = h else { return };
        add(&mut rx.roce_frame_bytes, h.packet_len);
        if taken && matches!(h.syndrome, Some(Syndrome::RnrNak { .. })) {
            bump(&mut rx.rnr_nak_receives);
        }
    }

    /// SQ entry `wqe` of `qp`, read to be carried out: a READ, a fast-register or a local
    /// invalidate counts as one of its kind; an RC SEND or WRITE longer than the path MTU (more
    /// than one packet) as a large one.
    pub(crate) fn wqe_read(&mut self, qp: &QpView, wqe: &[u8]) {
        let Ok(hdr) = WqeHeader::decode(&mut Reader::new(wqe)) else { return };
        let large = qp.qp_type == QpType::Rc && hdr.total_len > u32::from(qp.params.path_mtu);
        let w = &mut self.wqe;
        match hdr.opcode() {
            wqe_opcode::READ => add(&mut w.read_wqes, 1),
            wqe_opcode::FR_MR => add(&mut w.frmr_wqes, 1),
            wqe_opcode::LKEY_INV => add(&mut w.invalidate_wqes, 1),
            wqe_opcode::SEND if large => add(&mut w.large_send_rc_wqes, 1),
            wqe_opcode::WRITE if large => add(&mut w.large_write_rc_wqes, 1),
            _ => {}
        }
    }

    /// A CQE posted for `qp`'s `queue`: an error completion of an RC QP counts against the
    /// side it came from (flushes and remote errors, which the peer counted, do not).
    pub(crate) fn completed(&mut self, qp: &QpView, queue: WorkQueue, cqe: &Cqe) {
        if qp.qp_type != QpType::Rc {
            return;
        }
        let (tx, rx) = (&mut self.tx_qp_errors, &mut self.rx_qp_errors);
        let counter = match (queue, cqe.status()) {
            (WorkQueue::Sq, cqe_status::LOC_LEN_ERR) => &mut tx.local_length_errors,
            (WorkQueue::Sq, cqe_status::LOC_PROT_ERR) => &mut tx.local_protection_errors,
            (WorkQueue::Sq, cqe_status::LOC_QP_OP_ERR) => &mut tx.local_qp_operation_errors,
            (WorkQueue::Sq, cqe_status::RETRY_EXC_ERR) => &mut tx.retry_count_exceeded_errors,
            (WorkQueue::Sq, cqe_status::RNR_RETRY_EXC_ERR) => &mut tx.rnr_retry_count_exceeded_errors,
            (WorkQueue::Rq, cqe_status::LOC_LEN_ERR) => &mut rx.local_length_errors,
            (WorkQueue::Rq, cqe_status::LOC_PROT_ERR) => &mut rx.local_protection_errors,
            (WorkQueue::Rq, cqe_status::LOC_QP_OP_ERR) => &mut rx.local_qp_operation_errors,
            _ => return,
        };
        bump(counter);
    }

    /// The GET_RDMA_STATS response: these counters, the rest zero.
    pub(crate) fn report(&self) -> RdmaStats {
        RdmaStats {
            wqe: self.wqe,
            tx: self.tx,
            tx_qp_errors: self.tx_qp_errors,
            rx: self.rx,
            rx_qp_errors: self.rx_qp_errors,
            ..RdmaStats::zeroed()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame behind an 802.1Q tag (ethertype 0x8100 @12, RoCE 0x8915 @16), the GRH @18, the
    /// BTH @58 with `opcode`, then `rest`: only what the TX count reads, no valid ICRC.
    fn tagged(opcode: u8, rest: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 18 + 40 + 12];
        f[12..14].copy_from_slice(&[0x81, 0x00]);
        f[16..18].copy_from_slice(&[0x89, 0x15]);
        f[58] = opcode;
        f.extend_from_slice(rest);
        f
    }

    #[test]
    fn a_tagged_frame_counts_from_its_grh_and_a_nak_counts_on_its_sender() {
        let mut c = RoceCounters::default();
        // RDMA WRITE ONLY (0x0A): RETH 16 bytes, 100 bytes of payload, ICRC 4.
        let write = tagged(0x0A, &[0u8; 16 + 100 + 4]);
        c.transmitted(&write);
        assert_eq!((c.tx.write_packets, c.tx.write_bytes), (1, 40 + 12 + 16 + 100 + 4));
        // ACKs (0x11) with AETH syndromes 0x20 (RNR NAK), 0x60 (PSN sequence error NAK), 0x63
        // (remote operational error NAK), 0x1F (ACK): IBTA vol 1 Tables 42, 43.
        for syndrome in [0x20, 0x60, 0x63, 0x1F] {
            c.transmitted(&tagged(0x11, &[syndrome, 0, 0, 1, 0, 0, 0, 0]));
        }
        assert_eq!(c.tx.ack_packets, 4);
        assert_eq!(c.tx.pma_data(), (40 + 12 + 16 + 100 + 4) / 4, "no ACK bytes");
        assert_eq!((c.rx.rq_rnr_naks, c.rx.nak_count_psn_sequence_errors), (1, 1));
        assert_eq!(c.rx_qp_errors.nak_remote_operation_errors, 1);
        // A frame too short for a BTH, or with an opcode the transport lacks, counts nothing.
        c.transmitted(&write[..60]);
        c.transmitted(&tagged(0x14, &[0u8; 8]));
        assert_eq!(c.tx.pma_packets(), 5);
    }

    #[test]
    fn a_frame_too_short_for_its_grh_is_a_payload_length_drop() {
        let mut c = RoceCounters::default();
        c.received(&tagged(0x04, &[0u8; 4])[..30], false);
        assert_eq!((c.rx.roce_frame_payload_len_drops, c.rx.roce_frames, c.rx.roce_frame_bytes), (1, 0, 0));
        assert_eq!(c.rx.pma_packets(), 1);
    }

    #[test]
    fn an_rc_send_or_write_longer_than_the_path_mtu_is_large() {
        let mut view = QpView {
            id: 2,
            qp_type: QpType::Rc,
            pd_id: 1,
            state: oce_mailbox::commands::QpState::Rts,
            params: Default::default(),
            vlan: None,
            lkey0: false,
            inbound_read: true,
            inbound_write: true,
            sq_producer: 0,
            rq_producer: 0,
            sq_entries: 16,
            rq_entries: 16,
        };
        view.params.path_mtu = 1024;
        let wqe = |op: u8, len: u32| {
            let mut raw = vec![0u8; 32];
            let mut hdr = WqeHeader::new(op, 0, 1, 32);
            hdr.total_len = len;
            hdr.encode(&mut oce_mailbox::wire::Writer::new(&mut raw)).unwrap();
            raw
        };
        let mut c = RoceCounters::default();
        for (op, len) in [(wqe_opcode::SEND, 1024), (wqe_opcode::SEND, 1025), (wqe_opcode::WRITE, 4096)] {
            c.wqe_read(&view, &wqe(op, len));
        }
        c.wqe_read(&view, &wqe(wqe_opcode::READ, 1 << 20));
        c.wqe_read(&view, &wqe(wqe_opcode::FR_MR, 0));
        c.wqe_read(&view, &wqe(wqe_opcode::LKEY_INV, 0));
        view.qp_type = QpType::Ud;
        c.wqe_read(&view, &wqe(wqe_opcode::SEND, 4096));
        let w = c.wqe;
        assert_eq!((w.large_send_rc_wqes, w.large_write_rc_wqes, w.read_wqes), (1, 1, 1));
        assert_eq!((w.frmr_wqes, w.invalidate_wqes), (1, 1));
    }
}
