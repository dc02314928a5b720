//! The RX engine (spec/datapath.md §1.2): per RX ring, the receive fragments the host posted
//! and the next one to fill; and what happens to a frame that arrives.
//!
//! 1. A frame shorter than an Ethernet header is a runt. Its outer 802.1Q tag is stripped (the
//!    TCI goes into the completion: be2net always has VLAN RX offload on).
//! 2. Each interface whose filters accept it ([`accepts`]: unicast MAC list, multicast list or
//!    all-multicast, broadcast, promiscuous; VLAN list or VLAN-promiscuous, untagged) gets it on
//!    one of its rings: the RSS table's ring for the frame's hash when RSS is on, else its
//!    default ring.
//! 3. The frame fills `ceil(len / frag_size)` fragments (at most 7, what `numfrags` holds) in
//!    ring order — never more than are posted, never past a fragment's end — and one v1
//!    completion says so: length, VLAN, checksum verdicts, RSS hash, port, valid.
//! 4. Too few fragments posted: when the port generates pause (flow control TX, be2net's
//!    default) the frame is not taken ([`Receipt::Paused`]) and the engine remembers to wake
//!    the carrier when buffers come; otherwise it is dropped and counted in the ring's
//!    `rx_drops_no_fragments`.

use oce_mailbox::commands::IfFlags;
use oce_mailbox::doorbells::RqDoorbell;
use oce_mailbox::entries::{RX_COMPLETION_LEN, RX_DESCRIPTOR_LEN, RxCompletion, RxDescriptor};
use oce_mailbox::wire::{Reader, Wire as _, Writer};

use super::frame::classify::{self, Cast, Received};
use super::frame::{ETH_HEADER_LEN, VLAN_TAG_LEN};
use super::{Counters, DropReason, Env, EventEngine, PerQueue, Receipt, rss};
use crate::events::QueueKind;
use crate::firmware::queues::RxQueue;
use crate::firmware::resources::Interface;

/// The most fragments one completion names (`numfrags`, 3 bits).
const MAX_FRAGS: u32 = 7;
/// The largest frame one completion describes (`pktsize`, 14 bits).
const MAX_PKT_SIZE: usize = 0x3FFF;

/// The port a frame arrives on.
pub(crate) struct PortState<'a> {
    pub(crate) counters: &'a mut Counters,
    /// The physical port number the completion carries (`port`; be2net discards a completion
    /// for another port).
    pub(crate) port: u8,
    /// The port pauses its peer when it has no receive buffer (flow control TX).
    pub(crate) pause: bool,
    /// The logical link is up.
    pub(crate) link_up: bool,
}

/// One RX ring's indices.
#[derive(Debug, Clone, Default)]
struct RxRing {
    /// The next descriptor to fill.
    consumer: u32,
    /// Descriptors posted and not yet filled.
    posted: u32,
}

/// The RX rings' indices.
#[derive(Debug, Default)]
pub(crate) struct RxEngine {
    rings: PerQueue<RxRing>,
    /// A frame was paused for lack of buffers: the carrier is woken when the host posts some.
    paused: bool,
}

/// Where one copy of a frame goes.
#[derive(Debug, Clone, Copy)]
struct Target {
    ring: u16,
    rss_hash: u32,
}

impl RxEngine {
    /// The RQ doorbell: the host posted `count` receive fragments on RX ring `id` (never more
    /// than the ring holds). Returns true when a frame was paused and now may find room.
    pub(crate) fn doorbell(&mut self, db: RqDoorbell, env: &mut Env<'_>) -> bool {
        let id = db.id();
        let Some(ctx) = env.resources.queues.rxq(id) else {
            env.miss(QueueKind::Rx, id);
            return false;
        };
        let ring = self.rings.get_mut(id, ctx.serial, RxRing::default);
        ring.posted = ring.posted.saturating_add(db.count().into()).min(ctx.ring.entries);
        db.count() > 0 && std::mem::take(&mut self.paused)
    }

    /// Fragments posted on ring `id`.
    fn posted(&mut self, ctx: &RxQueue, id: u16) -> u32 {
        self.rings.get_mut(id, ctx.serial, RxRing::default).posted
    }

    /// True (once) when a frame was paused since the last look: a ring going away may have
    /// changed its fate, so the carrier should offer it again.
    pub(crate) fn take_paused(&mut self) -> bool {
        std::mem::take(&mut self.paused)
    }

    /// A frame arrives on the port.
    pub(crate) fn receive(
        &mut self,
        frame: &[u8],
        env: &mut Env<'_>,
        events: &mut EventEngine,
        port: &mut PortState<'_>,
    ) -> Receipt {
        if !port.link_up {
            port.counters.port.rx_link_down += 1;
            return Receipt::Dropped(DropReason::LinkDown);
        }
        if frame.len() < ETH_HEADER_LEN {
            port.counters.port.rx_runt += 1;
            return Receipt::Dropped(DropReason::Runt);
        }
        let received = classify::strip_vlan(frame);
        let mut dst = [0u8; 6];
        dst.copy_from_slice(&received.frame[..6]);
        let cast = Cast::of(&dst);
        let mut accepted = false;
        let mut targets = Vec::new();
        for (&if_id, iface) in &env.resources.interfaces {
            if accepts(iface, &dst, received.vlan) {
                accepted = true;
                targets.extend(pick_ring(env, if_id, iface, &received));
            }
        }
        if !accepted {
            port.counters.port.rx_address_filtered += 1;
            return Receipt::Dropped(DropReason::Filtered);
        }
        if targets.is_empty() {
            port.counters.port.rx_no_ring += 1;
            return Receipt::Dropped(DropReason::NoRing);
        }
        // Check every copy before writing any: a paused frame leaves no trace.
        let mut plans = Vec::with_capacity(targets.len());
        for t in targets {
            let Some(ctx) = env.resources.queues.rxq(t.ring) else { continue };
            let len = received.frame.len();
            let wire_len = len + received.vlan.map_or(0, |_| VLAN_TAG_LEN);
            if wire_len > usize::from(ctx.max_frame_size) || len > MAX_PKT_SIZE {
                port.counters.port.rx_too_long += 1;
                return Receipt::Dropped(DropReason::TooLong);
            }
            let frags = len.div_ceil(ctx.frag_size as usize) as u32;
            if frags > MAX_FRAGS {
                port.counters.port.rx_too_many_fragments += 1;
                return Receipt::Dropped(DropReason::TooManyFragments);
            }
            let room = self.posted(ctx, t.ring) >= frags;
            if !room && port.pause {
                if !std::mem::replace(&mut self.paused, true) {
                    port.counters.port.pauses_sent += 1;
                }
                return Receipt::Paused;
            }
            plans.push((t, frags, room));
        }
        let verdict = classify::verdict(&received.frame);
        let c = &mut port.counters.port;
        c.rx_ip_checksum_errors += u64::from(verdict.ip_checksum_bad);
        c.rx_tcp_checksum_errors += u64::from(verdict.tcp && verdict.l4_checksum_bad);
        c.rx_udp_checksum_errors += u64::from(verdict.udp && verdict.l4_checksum_bad);
        let template = RxCompletion {
            vlan_tag: received.vlan.unwrap_or(0),
            vtp: received.vlan.is_some(),
            tcp: verdict.tcp,
            udp: verdict.udp,
            ip_frag: verdict.ip_fragment,
            ip_checksum_ok: verdict.ip_checksum_ok,
            l4_checksum_ok: verdict.l4_checksum_ok,
            ipv6: verdict.ipv6,
            cast: match cast {
                Cast::Unicast => RxCompletion::CAST_UNICAST,
                Cast::Multicast => RxCompletion::CAST_MULTICAST,
                Cast::Broadcast => RxCompletion::CAST_BROADCAST,
            },
            port: port.port,
            valid: true,
            ..RxCompletion::default()
        };
        let mut receipt = Receipt::Dropped(DropReason::NoBuffer);
        for (t, frags, room) in plans {
            if !room {
                port.counters.rx(t.ring).drops_no_fragments += 1;
                continue;
            }
            let Some((first, written)) = self.fill(t.ring, &received.frame, frags, env) else { continue };
            let mut completion =
                RxCompletion { rss_hash: t.rss_hash, num_frags: frags as u8, frag_index: first as u16, ..template };
            let ring = port.counters.rx(t.ring);
            ring.fragments += u64::from(frags);
            if written {
                completion.pkt_size = received.frame.len() as u16;
                ring.frames += 1;
                ring.bytes += received.frame.len() as u64;
                receipt = Receipt::Delivered;
            } else {
                // A fragment could not be written: length 0, which be2net discards
                // (`be_rx_compl_discard`), giving the fragments back.
                port.counters.port.rx_dma_faults += 1;
                if receipt != Receipt::Delivered {
                    receipt = Receipt::Dropped(DropReason::DmaFault);
                }
            }
            let mut bytes = [0u8; RX_COMPLETION_LEN];
            let cq = env.resources.queues.rxq(t.ring).map(|q| q.cq);
            if let (Some(cq), Ok(())) = (cq, completion.encode(&mut Writer::new(&mut bytes))) {
                events.post_completion(cq, &bytes, env);
            }
        }
        if receipt == Receipt::Delivered {
            let c = &mut port.counters.port;
            match cast {
                Cast::Unicast => c.rx_unicast += 1,
                Cast::Multicast => c.rx_multicast += 1,
                Cast::Broadcast => c.rx_broadcast += 1,
            }
        }
        receipt
    }

    /// Writes `frame` into the next `frags` fragments of ring `id`, in order, each at most the
    /// ring's fragment size; returns the first fragment's index and whether every write landed.
    /// Every fragment is consumed either way, so the host's ring and the device's stay in step.
    fn fill(&mut self, id: u16, frame: &[u8], frags: u32, env: &mut Env<'_>) -> Option<(u32, bool)> {
        let ctx = env.resources.queues.rxq(id)?;
        let ring = self.rings.get_mut(id, ctx.serial, RxRing::default);
        let first = ring.consumer;
        let mut ok = true;
        for (k, chunk) in frame.chunks(ctx.frag_size as usize).enumerate().take(frags as usize) {
            let at = ctx.ring.entry(ctx.ring.advance(first, k as u32));
            let mut raw = [0u8; RX_DESCRIPTOR_LEN];
            ok &= env.read(at, &mut raw)
                && RxDescriptor::decode(&mut Reader::new(&raw)).is_ok_and(|d| env.write(d.address, chunk));
        }
        ring.consumer = ctx.ring.advance(first, frags);
        ring.posted -= frags;
        Some((first, ok))
    }
}

/// The ring of interface `if_id` that takes `received`: by RSS when the interface has it on and
/// the frame hashes, else its default (non-RSS) ring, else its first ring.
fn pick_ring(env: &Env<'_>, if_id: u32, iface: &Interface, received: &Received) -> Option<Target> {
    let rings: Vec<(u16, &RxQueue)> = env.resources.queues.rxqs().filter(|(_, r)| r.if_id == if_id).collect();
    let hash = (iface.rss_hash != 0 && !iface.rss_table.is_empty())
        .then(|| rss::hash(&iface.rss_key, iface.rss_hash, &received.frame))
        .flatten();
    if let Some(h) = hash {
        let rss_id = iface.rss_table[h as usize % iface.rss_table.len()];
        if let Some(&(ring, _)) = rings.iter().find(|(_, r)| r.rss && r.rss_id == rss_id) {
            return Some(Target { ring, rss_hash: h });
        }
    }
    let ring = rings.iter().find(|(_, r)| !r.rss).or(rings.first()).map(|&(id, _)| id)?;
    Some(Target { ring, rss_hash: hash.unwrap_or(0) })
}

/// True when `iface`'s filters accept a frame for `dst`, tagged `vlan` (a TCI; VID 0 is a
/// priority tag, filtered as untagged unless VID 0 is on the list).
pub(crate) fn accepts(iface: &Interface, dst: &[u8; 6], vlan: Option<u16>) -> bool {
    let flags = iface.flags;
    let mac = flags.contains(IfFlags::PROMISCUOUS)
        || match Cast::of(dst) {
            Cast::Broadcast => flags.contains(IfFlags::BROADCAST),
            Cast::Multicast => {
                flags.contains(IfFlags::MCAST_PROMISCUOUS)
                    || (flags.contains(IfFlags::MULTICAST) && iface.multicast.contains(dst))
            }
            Cast::Unicast => iface.pmacs.values().any(|m| m == dst),
        };
    let vid = vlan.map(|tci| tci & 0x0FFF);
    let vlan_ok = match vid {
        None => flags.contains(IfFlags::UNTAGGED),
        Some(v) => {
            flags.contains(IfFlags::VLAN_PROMISCUOUS)
                || iface.vlan_promiscuous
                || iface.vlans.contains(&v)
                || (v == 0 && flags.contains(IfFlags::UNTAGGED))
        }
    };
    mac && vlan_ok
}
