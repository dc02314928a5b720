//! be2net's datapath over the [`Host`] transports (spec/datapath.md §1.1, §1.2; be_main.c of
//! Debian 6.1.192):
//!
//! - TX: `be_xmit` maps the frame's linear head and its page fragments, one WRB each, behind a
//!   header WRB carrying the offload bits (`wrb_fill_hdr`: `crc` always, `lso`/`lso6` and
//!   `lso_mss` for GSO, else `tcpcs`/`udpcs` for CHECKSUM_PARTIAL, `vlan` and the TCI);
//!   `be_xmit_flush` marks the batch's last header EVT | COMPL, pads an odd batch with a
//!   zero WRB counted in that header's `num_wrb`, and rings the doorbell once. `be_process_tx`
//!   frees, for each completion, every request from the ring tail up to the WRB it names, which
//!   must end a request;
//! - RX: `be_post_rx_frags` posts `rx_frag_size` (2048) slices of 4 KiB pages, one descriptor
//!   each, and rings the RQ doorbell at most 255 at a time; `be_process_rx` reads v1 completions,
//!   skips flush completions (no fragment), discards length 0 and another port's, takes exactly
//!   `numfrags` fragments from its tail (`BUG_ON` if that is not `ceil(pktsize / frag_size)` or
//!   more than were posted), zeroes the valid dword and refills below the watermark.

use std::collections::{BTreeMap, VecDeque};

use oce_mailbox::commands::{FlowControl, GetStatistics, HwStatsV2, IfFlags, RxFilter, SetFlowControl, VlanConfig};
use oce_mailbox::doorbells::{RqDoorbell, TxDoorbell};
use oce_mailbox::entries::{
    RX_COMPLETION_LEN, RX_DESCRIPTOR_LEN, RxCompletion, RxDescriptor, TX_WRB_LEN, TxCompletion, TxFragmentWrb,
    TxHeaderWrb, TxStatus,
};
use oce_mailbox::wire::{Reader, Wire, Writer};

use super::driver::Nic;
use super::{DB_BAR, Host, HostCq, HostRing};

/// be2net's `rx_frag_size` default: 2048 bytes (RX_CREATE `frag_size` 11).
pub const RX_FRAG_SIZE: usize = 2048;
/// `RX_Q_LEN`: descriptors per RX ring.
pub const RX_Q_LEN: u32 = 1024;
/// `MAX_RX_POST`: fragments a refill posts.
pub const MAX_RX_POST: u32 = 64;
/// `MAX_NUM_POST_ERX_DB`: fragments one RQ doorbell may announce.
pub const MAX_NUM_POST_ERX_DB: u32 = 255;
/// `BE_MAX_TX_FRAG_COUNT`: WRBs one request may use.
pub const BE_MAX_TX_FRAG_COUNT: usize = 30;
/// Size of a page fragment of a TX frame (the kernel's pages).
const PAGE: usize = 4096;

/// A TX ring of the host.
#[derive(Debug, Clone)]
pub struct Txq {
    pub id: u16,
    pub ring: HostRing,
    pub head: u32,
    pub cq: HostCq,
    pub db_offset: u32,
    /// Indices of the WRBs the device reported sent, in completion order.
    pub completed: Vec<u16>,
    /// The status of each completion, in order.
    pub statuses: Vec<TxStatus>,
    /// Requests posted and not yet freed: the index of each request's last WRB and the buffers
    /// it maps.
    pub pending: VecDeque<(u32, Vec<u64>)>,
}

/// An RX ring of the host.
#[derive(Debug, Clone)]
pub struct Rxq {
    pub id: u16,
    pub rss_id: u8,
    /// Index of its CQ in `Nic::rx_cqs`.
    pub cq: usize,
    /// The descriptor ring.
    pub ring: HostRing,
    /// Where the next descriptor is posted.
    pub head: u32,
    /// The fragments posted and not yet consumed, oldest first (`page_info_tbl` from the tail).
    pub posted: VecDeque<u64>,
    /// Each page with fragments still posted, and how many (be2net puts the page when its last
    /// fragment is consumed).
    pub pages: BTreeMap<u64, u32>,
}

/// A frame `be_process_rx` took from a ring.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxFrame {
    /// The RX ring.
    pub ring: u16,
    /// The bytes, gathered from the fragments.
    pub frame: Vec<u8>,
    /// The completion as parsed.
    pub completion: RxCompletion,
}

/// What `be_xmit` is asked to send: a frame and the offloads the stack wants.
#[derive(Debug, Clone, Default)]
pub struct TxRequest {
    /// The frame as the stack built it (no VLAN tag when `vlan` is given).
    pub frame: Vec<u8>,
    /// `skb_headlen`: bytes in the linear head (one WRB); the rest goes in page fragments of at
    /// most 4 KiB. 0 puts everything in fragments.
    pub head_len: usize,
    /// The TCI to insert (`skb_vlan_tag_present`).
    pub vlan: Option<u16>,
    /// CHECKSUM_PARTIAL for TCP (`tcpcs`).
    pub tcp_checksum: bool,
    /// CHECKSUM_PARTIAL for UDP (`udpcs`).
    pub udp_checksum: bool,
    /// GSO: segment at this MSS (`lso`, `lso6` for IPv6).
    pub lso: Option<(u16, bool)>,
}

impl Host {
    /// `be_xmit` of each request then one `be_xmit_flush`, on TX ring `txq`.
    pub fn xmit(&mut self, nic: &mut Nic, txq: usize, requests: &[TxRequest]) {
        let tx = &mut nic.txqs[txq];
        let mut pending_wrbs = 0u32;
        let mut last_header = None;
        for req in requests {
            let pieces = split(&req.frame, req.head_len);
            assert!(pieces.len() + 2 <= BE_MAX_TX_FRAG_COUNT, "be2net linearizes a frame this fragmented");
            let wrbs = 1 + pieces.len() as u32;
            let header_at = tx.head;
            let mut buffers = Vec::new();
            for (k, piece) in pieces.iter().enumerate() {
                let buf = self.mem.alloc(piece.len());
                self.mem.poke(buf, piece);
                buffers.push(buf);
                let wrb = TxFragmentWrb { address: buf, len: piece.len() as u16 };
                poke_wire(self, tx.ring.entry(header_at + 1 + k as u32), &wrb);
            }
            let mut header =
                TxHeaderWrb::new(wrbs as u8, req.frame.len() as u16, false, false).with_flags(TxHeaderWrb::CRC);
            if let Some((mss, ipv6)) = req.lso {
                header = header.with_lso(mss, ipv6);
            } else {
                if req.tcp_checksum {
                    header = header.with_flags(TxHeaderWrb::TCPCS);
                }
                if req.udp_checksum {
                    header = header.with_flags(TxHeaderWrb::UDPCS);
                }
            }
            if let Some(tci) = req.vlan {
                header = header.with_vlan(tci);
            }
            poke_wire(self, tx.ring.entry(header_at), &header);
            tx.head = (tx.head + wrbs) % tx.ring.entries;
            pending_wrbs += wrbs;
            tx.pending.push_back(((header_at + wrbs - 1) % tx.ring.entries, buffers));
            last_header = Some((header_at, header));
        }
        let Some((at, mut header)) = last_header else { return };
        header = header.with_flags(TxHeaderWrb::EVENT | TxHeaderWrb::COMPLETE);
        if pending_wrbs % 2 == 1 {
            // The dummy WRB, counted in the last header and the last request.
            poke_wire(self, tx.ring.entry(tx.head), &TxFragmentWrb::default());
            tx.head = (tx.head + 1) % tx.ring.entries;
            pending_wrbs += 1;
            header = header.with_num_wrb(header.num_wrb() + 1);
            if let Some(last) = tx.pending.back_mut() {
                last.0 = (last.0 + 1) % tx.ring.entries;
            }
        }
        poke_wire(self, tx.ring.entry(at), &header);
        let (id, off) = (tx.id, tx.db_offset);
        self.write32(DB_BAR, off.into(), TxDoorbell::new(id, pending_wrbs as u16).0);
    }

    /// Sends one frame of `frags` page fragments of 60 bytes each, no offload (the shape of the
    /// frames be2net sends after ifup: IPv6 DAD and router solicitations).
    pub fn send(&mut self, nic: &mut Nic, txq: usize, frags: u8) {
        let len = 60 * usize::from(frags);
        let mut frame = vec![0u8; len];
        frame[..6].copy_from_slice(&[0x33, 0x33, 0, 0, 0, 1]);
        frame[6..12].copy_from_slice(&nic.mac);
        frame[12..14].copy_from_slice(&0x88B5u16.to_be_bytes()); // local experimental EtherType
        let pieces: Vec<Vec<u8>> = frame.chunks(60).map(<[u8]>::to_vec).collect();
        let tx = &mut nic.txqs[txq];
        let wrbs = 1 + pieces.len() as u32;
        let header_at = tx.head;
        let mut buffers = Vec::new();
        for (k, piece) in pieces.iter().enumerate() {
            let buf = self.mem.alloc(piece.len());
            self.mem.poke(buf, piece);
            buffers.push(buf);
            poke_wire(self, tx.ring.entry(header_at + 1 + k as u32), &TxFragmentWrb { address: buf, len: 60 });
        }
        let padded = wrbs + wrbs % 2;
        if padded > wrbs {
            poke_wire(self, tx.ring.entry(header_at + wrbs), &TxFragmentWrb::default());
        }
        let header = TxHeaderWrb::new(padded as u8, len as u16, true, true).with_flags(TxHeaderWrb::CRC);
        poke_wire(self, tx.ring.entry(header_at), &header);
        tx.head = (tx.head + padded) % tx.ring.entries;
        tx.pending.push_back(((header_at + padded - 1) % tx.ring.entries, buffers));
        let (id, off) = (tx.id, tx.db_offset);
        self.write32(DB_BAR, off.into(), TxDoorbell::new(id, padded as u16).0);
    }

    /// `be_process_tx`: reaps TX completions, frees every request up to the WRB each names (which
    /// must end one), and re-arms the TX CQ.
    pub fn process_tx(&mut self, nic: &mut Nic, t: usize) -> u16 {
        let mut n = 0;
        loop {
            let tx = &mut nic.txqs[t];
            let at = tx.cq.ring.entry(tx.cq.tail);
            let raw = self.mem.peek(at, 16);
            if raw[12..16] == [0; 4] {
                break;
            }
            let c = TxCompletion::decode(&mut Reader::new(&raw)).unwrap();
            assert!(c.valid);
            assert_eq!(c.ring_id, tx.id, "the completion names its ring");
            loop {
                let (last, buffers) =
                    tx.pending.pop_front().expect("a completion for a WRB that ends no posted request");
                buffers.into_iter().for_each(|b| self.mem.free(b));
                if last == u32::from(c.wrb_index) {
                    break;
                }
            }
            self.mem.poke(at + 12, &[0; 4]);
            tx.cq.tail = (tx.cq.tail + 1) % tx.cq.ring.entries;
            tx.completed.push(c.wrb_index);
            tx.statuses.push(TxStatus::from_raw(c.status));
            n += 1;
        }
        let id = nic.txqs[t].cq.id;
        self.cq_notify(id, true, n);
        n
    }

    /// `be_post_rx_frags`: posts up to `count` fragments (never filling the ring: one slot
    /// stays empty) and announces them at most 255 per doorbell. Returns how many it posted.
    pub fn post_rx_frags(&mut self, rxq: &mut Rxq, count: u32) -> u32 {
        let room = (RX_Q_LEN - 1).saturating_sub(rxq.posted.len() as u32);
        let count = count.min(room);
        let mut page = None;
        for i in 0..count {
            // Two 2048-byte fragments per 4 KiB page.
            let base = match page {
                Some(p) if i % 2 == 1 => p,
                _ => {
                    let p = self.mem.alloc(PAGE);
                    page = Some(p);
                    p
                }
            };
            let frag = base + (i as u64 % 2) * RX_FRAG_SIZE as u64;
            *rxq.pages.entry(base).or_default() += 1;
            let at = rxq.ring.entry(rxq.head);
            let mut raw = [0u8; RX_DESCRIPTOR_LEN];
            RxDescriptor { address: frag }.encode(&mut Writer::new(&mut raw)).unwrap();
            self.mem.poke(at, &raw);
            rxq.head = (rxq.head + 1) % rxq.ring.entries;
            rxq.posted.push_back(frag);
        }
        let mut left = count;
        while left > 0 {
            let n = left.min(MAX_NUM_POST_ERX_DB);
            self.write32(DB_BAR, RqDoorbell::OFFSET.into(), RqDoorbell::new(rxq.id, n as u16).0);
            left -= n;
        }
        count
    }

    /// `be_process_rx` on RX ring `r`: takes every valid completion, checks it the way be2net
    /// does, gathers the frames into `nic.received`, re-arms the CQ and refills below the
    /// watermark (`RX_FRAGS_REFILL_WM`). Returns how many completions it took.
    pub fn process_rx(&mut self, nic: &mut Nic, r: usize) -> u16 {
        let mut n = 0;
        let cq_index = nic.rxqs[r].cq;
        loop {
            let cq = &mut nic.rx_cqs[cq_index];
            let at = cq.ring.entry(cq.tail);
            let raw = self.mem.peek(at, RX_COMPLETION_LEN);
            let c = RxCompletion::decode(&mut Reader::new(&raw)).unwrap();
            if !c.valid {
                break;
            }
            // be_rx_compl_get zeroes the valid dword.
            self.mem.poke(at + 8, &[0; 4]);
            cq.tail = (cq.tail + 1) % cq.ring.entries;
            n += 1;
            let rxq = &mut nic.rxqs[r];
            if c.num_frags == 0 {
                continue; // a flush completion
            }
            let frags = usize::from(c.num_frags);
            assert!(frags <= rxq.posted.len(), "BUG_ON(!page): the device used a fragment never posted");
            let taken: Vec<u64> = rxq.posted.drain(..frags).collect();
            let mut consumed: Vec<u64> = Vec::new();
            for frag in &taken {
                let page = frag & !(PAGE as u64 - 1);
                if let Some(refs) = rxq.pages.get_mut(&page) {
                    *refs -= 1;
                    if *refs == 0 {
                        rxq.pages.remove(&page);
                        consumed.push(page);
                    }
                }
            }
            let frame = if c.pkt_size == 0 || c.port != nic.port {
                // be_rx_compl_discard
                None
            } else {
                let size = usize::from(c.pkt_size);
                assert_eq!(frags, size.div_ceil(RX_FRAG_SIZE), "BUG_ON: numfrags must be ceil(pktsize / frag_size)");
                let mut frame = Vec::with_capacity(size);
                for (k, frag) in taken.iter().enumerate() {
                    let len = (size - k * RX_FRAG_SIZE).min(RX_FRAG_SIZE);
                    frame.extend(self.mem.peek(*frag, len));
                }
                Some(frame)
            };
            consumed.into_iter().for_each(|page| self.mem.free(page));
            if let Some(frame) = frame {
                nic.received.push(RxFrame { ring: rxq.id, frame, completion: c });
            }
        }
        let cq_id = nic.rx_cqs[cq_index].id;
        self.cq_notify(cq_id, true, n);
        let rxq = &mut nic.rxqs[r];
        if (rxq.posted.len() as u32) < RX_Q_LEN - MAX_RX_POST && nic.refill {
            let mut rxq = rxq.clone();
            self.post_rx_frags(&mut rxq, MAX_RX_POST);
            nic.rxqs[r] = rxq;
        }
        n
    }
}

impl Host {
    /// `be_set_all_promisc` / `be_clear_all_promisc`: NTWK_RX_FILTER with
    /// `BE_IF_FLAGS_ALL_PROMISCUOUS` (promiscuous, VLAN- and multicast-promiscuous) on or off.
    pub fn set_promiscuous(&mut self, nic: &Nic, on: bool) -> Result<(), super::HostError> {
        let all = IfFlags(IfFlags::PROMISCUOUS | IfFlags::VLAN_PROMISCUOUS | IfFlags::MCAST_PROMISCUOUS);
        let if_flags = if on { all } else { IfFlags(0) };
        self.mcc(&RxFilter { if_flags_mask: all, if_flags, if_id: nic.if_handle, ..RxFilter::default() })?;
        Ok(())
    }

    /// `be_vlan_add_vid` then `be_vid_config`: NTWK_VLAN_CONFIG with every VLAN added so far.
    pub fn add_vlan(&mut self, nic: &mut Nic, vid: u16) -> Result<(), super::HostError> {
        nic.vids.push(vid);
        let cfg = VlanConfig {
            interface_id: nic.if_handle as u8,
            promiscuous: false,
            untagged: true,
            vlans: nic.vids.clone(),
        };
        self.mcc(&cfg)?;
        Ok(())
    }

    /// `ethtool -A`: SET_FLOW_CONTROL (pause generation `tx`, pause honouring `rx`).
    pub fn set_flow_control(&mut self, tx: bool, rx: bool) -> Result<(), super::HostError> {
        self.mcc(&SetFlowControl(FlowControl { tx, rx }))?;
        Ok(())
    }

    /// The worker's GET_STATISTICS v2, synchronously: the counters `ethtool -S` shows.
    pub fn statistics(&mut self) -> Result<HwStatsV2, super::HostError> {
        self.mcc(&GetStatistics)
    }

    /// Posts up to `count` more receive fragments on every RX ring.
    pub fn post_rx(&mut self, nic: &mut Nic, count: u32) {
        for r in 0..nic.rxqs.len() {
            let mut rxq = nic.rxqs[r].clone();
            self.post_rx_frags(&mut rxq, count);
            nic.rxqs[r] = rxq;
        }
    }
}

/// `frame` as be2net maps it: the linear head, then page fragments of at most 4 KiB.
fn split(frame: &[u8], head_len: usize) -> Vec<&[u8]> {
    let head = head_len.min(frame.len());
    let mut pieces = Vec::new();
    if head > 0 {
        pieces.push(&frame[..head]);
    }
    pieces.extend(frame[head..].chunks(PAGE));
    pieces
}

/// Writes a wire type into host memory at `at`.
fn poke_wire<T: Wire>(host: &Host, at: u64, value: &T) {
    let mut raw = [0u8; TX_WRB_LEN];
    value.encode(&mut Writer::new(&mut raw)).unwrap();
    host.mem.poke(at, &raw);
}
