//! RoCE adapters for the in-process RoCE tests: one switched to the RoCE-2 profile and probed by
//! be2net and ocrdma through the ocrdma-like host, the MODIFY_QP parameter block as ocrdma fills
//! it (ocrdma_sli.h `ocrdma_qp_params`), and an RC end as libocrdma builds one for
//! `ibv_rc_pingpong` (a user CQ, a registered buffer, an RC QP to RTS), two of which make a
//! connected pair on the in-process cable (spec/datapath.md §2.3).

use std::sync::{Arc, Mutex};

use oce_testhost as be2net_host;

use be2net_host::ocrdma::Roce;
use be2net_host::ocrdma_verbs::{DB_CQ, DB_RQ, DB_SQ, HostQp};
use be2net_host::{Host, HostRing};
use oce_emulator::datapath::{CablePort, Wire as CableWire, cable};
use oce_mailbox::commands::{GetActiveProfile, GetProfileList, SetActiveProfile};
use oce_mailbox::doorbells::{CqDoorbell, RoceRqDoorbell, RoceSqDoorbell};
use oce_mailbox::entries::{Cqe, Rqe, Sge, WqeHeader};
use oce_mailbox::regs::Semaphore;
use oce_mailbox::wire::{Wire, Writer};

/// Bytes of each RC end's registered buffer, unless a test asks for another size.
pub const BUF_LEN: usize = 256 * 1024;
/// The buffer's user virtual address (libocrdma registers user memory by its VA).
pub const VA: u64 = 0x7f00_0000_0000;
/// REGISTER_NSMR access bits: remote write 27, remote read 28, local write 29.
pub const ACCESS_ALL: u32 = (1 << 27) | (1 << 28) | (1 << 29);
/// The PSNs each side of a [`pair`] starts from.
pub const PSN_A: u32 = 0x1234;
pub const PSN_B: u32 = 0xABCDE;

/// MODIFY_QP's valid bits (`OCRDMA_QP_PARA_*_VALID`, ocrdma_sli.h).
pub const V_STATE: u32 = 1;
pub const V_PKEY: u32 = 1 << 2;
pub const V_QKEY: u32 = 1 << 3;
pub const V_PMTU: u32 = 1 << 4;
pub const V_ACK_TO: u32 = 1 << 5;
pub const V_RETRY: u32 = 1 << 6;
pub const V_RNR_RETRY: u32 = 1 << 7;
pub const V_RQ_PSN: u32 = 1 << 8;
pub const V_IRD: u32 = 1 << 9;
pub const V_ORD: u32 = 1 << 10;
pub const V_RNR_TIMER: u32 = 1 << 11;
pub const V_SQ_PSN: u32 = 1 << 12;
pub const V_DEST_QPN: u32 = 1 << 13;
pub const V_AV: u32 = 1 << 21;

/// Writes `v` little-endian at byte `at` of a MODIFY_QP parameter block.
pub fn put(block: &mut [u8; 88], at: usize, v: u32) {
    block[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// A MODIFY_QP block moving QP `id` to state `state` (bits 7:5 of dword 3).
pub fn to_state(id: u16, state: u32) -> [u8; 88] {
    let mut b = [0u8; 88];
    put(&mut b, 0, id.into());
    put(&mut b, 12, state << 5);
    b
}

/// The link-local RoCE v1 GID of `mac` (fe80::EUI-64).
pub fn gid(mac: [u8; 6]) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[..2].copy_from_slice(&[0xfe, 0x80]);
    g[8..].copy_from_slice(&[mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]]);
    g
}

/// Makes the RoCE-2 profile active as OneCommand's set-profile and a power cycle do, and
/// checks that POST ended and the profile took.
pub fn switch_to_roce(host: &mut Host) {
    let list = host.mbox(&GetProfileList::default()).unwrap();
    let profile = list.entries.iter().find(|e| e.description.starts_with("RoCE-2")).unwrap().id;
    host.mbox(&SetActiveProfile::new(profile)).unwrap();
    host.dev.power_cycle().unwrap();
    let ready = (0..16).any(|_| Semaphore(host.config32(Semaphore::OFFSET)).is_ready());
    assert!(ready, "POST ends");
    assert_eq!(host.mbox(&GetActiveProfile).unwrap().active, u16::from(profile));
}

/// A RoCE adapter in `dir` with its identity from `seed`, probed by be2net (one EQ) and ocrdma
/// (one EQ), its port on `port`; returns the host, what ocrdma built and the port's MAC.
pub fn roce_on_cable(dir: &std::path::Path, seed: u64, port: &CablePort) -> (Host, Roce, [u8; 6]) {
    let mut host = Host::with_seed(dir, seed);
    switch_to_roce(&mut host);
    let mac = host.probe(1).unwrap().mac;
    let roce = host.ocrdma_add(1).unwrap();
    host.dev.attach_wire(port.wire());
    (host, roce, mac)
}

/// The CQE at bus address `at` of host memory, as ocrdma reads it (four little-endian dwords).
pub fn read_cqe(host: &Host, at: u64) -> Cqe {
    let raw = host.mem.peek(at, 16);
    Cqe(std::array::from_fn(|i| u32::from_le_bytes(raw[4 * i..4 * i + 4].try_into().unwrap())))
}

/// An SGE's 16 bytes: `len` bytes at `addr` under `key`.
pub fn sge_bytes(addr: u64, key: u32, len: u32) -> Vec<u8> {
    let mut raw = vec![0u8; 16];
    Sge { addr, lrkey: key, len }.encode(&mut Writer::new(&mut raw)).unwrap();
    raw
}

/// `len` bytes of a pattern that differs with `seed`, to fill a buffer with.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// A wire that keeps what the port sends.
#[derive(Debug, Clone, Default)]
pub struct Recorder(pub Arc<Mutex<Vec<Vec<u8>>>>);

impl CableWire for Recorder {
    fn send(&mut self, frame: &[u8]) {
        self.0.lock().unwrap().push(frame.to_vec());
    }
    fn ready(&self) -> bool {
        true
    }
}

/// An adapter on the in-process cable: what [`pump`] carries frames between.
pub trait Cabled {
    /// Its end of the cable and its host.
    fn cabled(&mut self) -> (&CablePort, &mut Host);
}

/// Carries frames both ways, and lets both devices do what waited for the wire or a timer,
/// until none moves; returns the frames carried.
pub fn pump(a: &mut impl Cabled, b: &mut impl Cabled) -> usize {
    let (port_a, host_a) = a.cabled();
    let (port_b, host_b) = b.cabled();
    let mut carried = 0;
    for _ in 0..100_000 {
        let moved = port_a.deliver(&mut host_a.dev) + port_b.deliver(&mut host_b.dev);
        host_a.dev.poll();
        host_b.dev.poll();
        carried += moved;
        if moved == 0 && port_a.pending() == 0 && port_b.pending() == 0 {
            return carried;
        }
    }
    panic!("the pair never settled");
}

/// One adapter and the RC QP libocrdma built on it.
pub struct End {
    pub host: Host,
    pub roce: Roce,
    pub port: CablePort,
    pub mac: [u8; 6],
    pub pd: u16,
    pub cq: u16,
    pub cq_ring: HostRing,
    pub cq_tail: u32,
    pub qp: HostQp,
    pub key: u32,
    pub buf: u64,
    pub sq_head: u32,
    pub rq_head: u32,
}

impl Cabled for End {
    fn cabled(&mut self) -> (&CablePort, &mut Host) {
        (&self.port, &mut self.host)
    }
}

/// [`end_with_buffer`] with a [`BUF_LEN`] buffer.
pub fn end(dir: &std::path::Path, seed: u64, port: CablePort) -> End {
    end_with_buffer(dir, seed, port, BUF_LEN)
}

/// A RoCE adapter probed by be2net and ocrdma, with a user CQ, a region over a `buf_len`-byte
/// buffer at [`VA`] and an RC QP.
pub fn end_with_buffer(dir: &std::path::Path, seed: u64, port: CablePort, buf_len: usize) -> End {
    let (mut host, mut roce, mac) = roce_on_cable(dir, seed, &port);
    let pd = roce.pd_range.unwrap().first.pd_id + 1;
    let (cq, cq_ring) = host.ocrdma_create_cq(&mut roce, pd).unwrap();
    let buf = host.mem.alloc(buf_len);
    let pages: Vec<u64> = (0..(buf_len / 4096) as u64).map(|i| buf + i * 4096).collect();
    let (key, _) = host.ocrdma_reg_mr(&mut roce, pd, &pages, VA, buf_len as u64, ACCESS_ALL).unwrap();
    let qp = host.ocrdma_create_qp(&mut roce, 2, pd, cq, (15, 63), (1 << 3) | (1 << 4)).unwrap();
    End { host, roce, port, mac, pd, cq, cq_ring, cq_tail: 0, qp, key, buf, sq_head: 0, rq_head: 0 }
}

/// [`pair_with_buffer`] with [`BUF_LEN`] buffers.
pub fn pair() -> (tempfile::TempDir, End, End) {
    pair_with_buffer(BUF_LEN)
}

/// Two adapters on one cable, their RC QPs connected to each other from [`PSN_A`] and
/// [`PSN_B`], each with a `buf_len`-byte buffer.
pub fn pair_with_buffer(buf_len: usize) -> (tempfile::TempDir, End, End) {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = cable(64);
    let mut a = end_with_buffer(&dir.path().join("a"), 0x0A00_0000_0000, pa, buf_len);
    let mut b = end_with_buffer(&dir.path().join("b"), 0x0B00_0000_0000, pb, buf_len);
    assert_ne!(a.mac, b.mac);
    let (qa, qb, ma, mb) = (a.qp.id, b.qp.id, a.mac, b.mac);
    a.connect(qb, mb, (PSN_A, PSN_B));
    b.connect(qa, ma, (PSN_B, PSN_A));
    (dir, a, b)
}

impl End {
    /// INIT → RTR (the peer's QP, MAC and GID, MTU 1024) → RTS, as ocrdma_mbx_modify_qp fills it.
    pub fn connect(&mut self, peer_qp: u16, peer_mac: [u8; 6], (sq_psn, rq_psn): (u32, u32)) {
        self.connect_with(peer_qp, peer_mac, (sq_psn, rq_psn), None, (0, 7));
    }

    /// [`End::connect`], with PFC's priority tag when `sl` is given: VLAN 0 enabled and the SL
    /// in the AV, as ocrdma_set_av_params does with `pfc_state` (spec/datapath.md §4.4); and
    /// the ACK timeout code and retry count.
    pub fn connect_with(
        &mut self,
        peer_qp: u16,
        peer_mac: [u8; 6],
        (sq_psn, rq_psn): (u32, u32),
        sl: Option<u8>,
        (timeout, retry): (u32, u32),
    ) {
        let id = self.qp.id;
        self.host.ocrdma_modify_qp(&mut self.roce, &to_state(id, 1), V_STATE | V_PKEY).unwrap();
        let mut rtr = to_state(id, 2);
        put(&mut rtr, 16, (1 << 16) | 1);
        put(&mut rtr, 24, (1 << 24) | rq_psn);
        put(&mut rtr, 32, peer_qp.into());
        put(&mut rtr, 36, 1024 << 18);
        put(&mut rtr, 40, 12 << 27);
        rtr[44..60].copy_from_slice(&gid(self.mac));
        rtr[60..76].copy_from_slice(&gid(peer_mac));
        rtr[76..82].copy_from_slice(&peer_mac);
        let mut rtr_valid = V_STATE | V_AV | V_DEST_QPN | V_PMTU | V_RNR_TIMER | V_RQ_PSN | V_IRD;
        if let Some(sl) = sl {
            put(&mut rtr, 40, (12 << 27) | (u32::from(sl) << 20));
            rtr_valid |= 1 << 26; // VLAN_EN, VLAN id 0 @82
        }
        self.host.ocrdma_modify_qp(&mut self.roce, &rtr, rtr_valid).unwrap();
        // By default timeout 0 (no retransmit timer: the tests run in no time), retry 7; RNR
        // retry 7, ORD 1.
        let mut rts = to_state(id, 3);
        put(&mut rts, 16, (1 << 16) | 1);
        put(&mut rts, 28, sq_psn);
        // `ackto_rnr_rtc_dest_qpn`: ACK timeout 31:27, RNR retry 26:24; `rnt_rc_sl_fl`: retry
        // count 26:24 (ocrdma_sli.h).
        put(&mut rts, 32, (timeout << 27) | (7 << 24));
        put(&mut rts, 40, retry << 24);
        let rts_valid = V_STATE | V_ACK_TO | V_RETRY | V_RNR_RETRY | V_SQ_PSN | V_ORD;
        self.host.ocrdma_modify_qp(&mut self.roce, &rts, rts_valid).unwrap();
    }

    /// Writes a whole WQE at the SQ's head and rings the SQ doorbell, as `ocrdma_post_send`
    /// does; returns the WQE's index.
    pub fn post_raw(&mut self, wqe: &[u8]) -> u32 {
        let index = self.sq_head;
        self.host.mem.poke(self.qp.sq.0 + u64::from(index) * 256, wqe);
        self.sq_head = (index + 1) % self.qp.sq_entries;
        self.host.pd_doorbell(self.pd, DB_SQ, RoceSqDoorbell::new(self.qp.sq_dbid, 1).0);
        index
    }

    /// Posts one SQ WQE (`ocrdma_post_send`): header, then `body` (remote SGE, SGEs or inline).
    pub fn post_send(&mut self, op: u8, flags: u16, wqe_type: u8, dword2: u32, total_len: u32, body: &[u8]) -> u32 {
        let mut wqe = vec![0u8; 16 + body.len()];
        let mut hdr = WqeHeader::new(op, flags, wqe_type, wqe.len());
        hdr.dword2 = dword2;
        hdr.total_len = total_len;
        hdr.encode(&mut Writer::new(&mut wqe[..16])).unwrap();
        wqe[16..].copy_from_slice(body);
        self.post_raw(&wqe)
    }

    /// A local SGE over `len` bytes at `offset` in the buffer.
    pub fn sge(&self, offset: u64, len: u32) -> Vec<u8> {
        sge_bytes(VA + offset, self.key, len)
    }

    /// Posts one RQE over `len` bytes at `offset` in the buffer (`ocrdma_post_recv`).
    pub fn post_recv(&mut self, offset: u64, len: u32) {
        let rqe = Rqe::new(0, vec![Sge { addr: VA + offset, lrkey: self.key, len }]);
        let mut raw = vec![0u8; 32];
        rqe.encode(&mut Writer::new(&mut raw)).unwrap();
        self.host.mem.poke(self.qp.rq.0 + u64::from(self.rq_head) * 128, &raw);
        self.rq_head = (self.rq_head + 1) % self.qp.rq_entries;
        self.host.pd_doorbell(self.pd, DB_RQ, RoceRqDoorbell::new(self.qp.rq_dbid, 1).0);
    }

    /// The valid CQEs since the last call, cleared as ocrdma clears them, and popped.
    pub fn cqes(&mut self) -> Vec<Cqe> {
        let mut out = Vec::new();
        loop {
            let at = self.cq_ring.entry(self.cq_tail);
            let cqe = read_cqe(&self.host, at);
            if !cqe.is_valid() {
                break;
            }
            self.host.mem.poke(at, &[0u8; 16]);
            self.cq_tail += 1;
            out.push(cqe);
        }
        if !out.is_empty() {
            self.host.pd_doorbell(self.pd, DB_CQ, CqDoorbell::new(self.cq, false, out.len() as u16).0);
        }
        out
    }

    /// Writes `data` at `offset` in the buffer.
    pub fn fill(&self, offset: u64, data: &[u8]) {
        self.host.mem.poke(self.buf + offset, data);
    }

    /// Reads `len` bytes at `offset` in the buffer.
    pub fn read(&self, offset: u64, len: usize) -> Vec<u8> {
        self.host.mem.peek(self.buf + offset, len)
    }
}
