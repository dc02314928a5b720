//! UD and the GSI QP on the device: two RoCE adapters on the in-process cable, each driven by
//! the ocrdma-like host as ib_mad drives QP1 (a kernel CQ, LKEY0, Q_Key 0x80010000) and as
//! libocrdma drives a UD QP for `ibv_ud_pingpong` (a user CQ, a region, Q_Key 0x11111111), with
//! AVs written into the AH table as ocrdma's `set_av_attr` writes them. The checks use what the
//! test knows (its GIDs, QPNs, lengths), not what the device reports elsewhere
//! (spec/datapath.md §2.3, §3.1, §3.3).

mod common;

use oce_testhost as be2net_host;

use be2net_host::ocrdma::Roce;
use be2net_host::ocrdma_verbs::{DB_CQ, DB_RQ, DB_SQ, HostQp};
use be2net_host::{Host, HostRing};
use common::roce::{
    Cabled, Recorder, V_PKEY, V_QKEY, V_SQ_PSN, V_STATE, VA, gid, pump, put, read_cqe, roce_on_cable, to_state,
};
use oce_emulator::datapath::{CablePort, DropReason, Receipt, cable};
use oce_mailbox::doorbells::{CqDoorbell, RoceRqDoorbell, RoceSqDoorbell};
use oce_mailbox::entries::{
    AV_LEN, Av, AvGrh, Cqe, Rqe, Sge, TYPE_LKEY, UdHeader, WqeHeader, cqe_status, wqe_flag, wqe_opcode,
};
use oce_mailbox::wire::{Wire, Writer};

/// ib_mad's QP1 Q_Key (`IB_QP1_QKEY`) and `ibv_ud_pingpong`'s (0x11111111).
const GSI_QKEY: u32 = 0x8001_0000;
const UD_QKEY: u32 = 0x1111_1111;
/// The UD QP's buffer: a region of 64 KiB at [`VA`].
const BUF_LEN: usize = 64 * 1024;
/// REGISTER_NSMR access: local write (bit 29).
const LOCAL_WRITE: u32 = 1 << 29;
/// CREATE_QP types (`OCRDMA_QPT_GSI`, `OCRDMA_QPT_UD`) and the LKEY0 flag of kernel QPs.
const QPT_GSI: u32 = 1;
const QPT_UD: u32 = 4;
const ZERO_LKEY: u32 = 1 << 1;
/// AH-table entries the test writes: to the peer, to this port itself, one never written.
const AH_PEER: u32 = 3;
const AH_SELF: u32 = 4;
const AH_UNUSED: u32 = 5;
/// An AV to the peer tagged as ocrdma tags it with PFC on: VLAN 0, PCP 3 (spec/datapath.md §4.4).
const AH_PEER_TAGGED: u32 = 6;

/// One QP as the host drives it: its rings, its CQ and the PD page its doorbells ring on.
struct Qp {
    qp: HostQp,
    /// The doorbell page of the QP (its PD) and of its CQ (0 for kernel CQs).
    page: u16,
    cq_page: u16,
    cq: u16,
    cq_ring: HostRing,
    cq_tail: u32,
    sq_head: u32,
    rq_head: u32,
    /// lkey of the buffers (0: bus addresses on an LKEY0 QP) and the buffer's base: its VA for
    /// a key, its bus address for lkey 0; `bus` is always the bus address.
    lkey: u32,
    base: u64,
    bus: u64,
}

/// One adapter with its GSI QP and a UD QP, both at RTS.
struct End {
    host: Host,
    roce: Roce,
    port: CablePort,
    mac: [u8; 6],
    gsi: Qp,
    ud: Qp,
}

/// RST→INIT (P_Key index 0, the Q_Key) → RTR → RTS (SQ PSN), as ib_mad and ibv_ud_pingpong do.
fn to_rts(host: &mut Host, roce: &mut Roce, id: u16, qkey: u32, sq_psn: u32) {
    let mut init = to_state(id, 1);
    put(&mut init, 84, qkey);
    host.ocrdma_modify_qp(roce, &init, V_STATE | V_PKEY | V_QKEY).unwrap();
    host.ocrdma_modify_qp(roce, &to_state(id, 2), V_STATE).unwrap();
    let mut rts = to_state(id, 3);
    put(&mut rts, 28, sq_psn);
    host.ocrdma_modify_qp(roce, &rts, V_STATE | V_SQ_PSN).unwrap();
}

/// A RoCE adapter probed by be2net and ocrdma, with QP1 (kernel PD, kernel CQ, LKEY0) and a
/// UD QP (user PD, user CQ, a registered region), both at RTS.
fn end(dir: &std::path::Path, seed: u64, port: CablePort) -> End {
    let (mut host, mut roce, mac) = roce_on_cable(dir, seed, &port);
    let kernel_pd = roce.pd_range.unwrap().first.pd_id;
    let (kcq, kcq_ring) = host.ocrdma_create_cq(&mut roce, 0).unwrap();
    let gsi = host.ocrdma_create_qp(&mut roce, QPT_GSI, kernel_pd, kcq, (128, 512), ZERO_LKEY).unwrap();
    assert_eq!(gsi.id, 1, "the GSI QP is QP1");
    to_rts(&mut host, &mut roce, gsi.id, GSI_QKEY, 0);
    let gsi_buf = host.mem.alloc(BUF_LEN);
    let gsi = Qp {
        qp: gsi,
        page: kernel_pd,
        cq_page: 0,
        cq: kcq,
        cq_ring: kcq_ring,
        cq_tail: 0,
        sq_head: 0,
        rq_head: 0,
        lkey: 0,
        base: gsi_buf,
        bus: gsi_buf,
    };
    let user_pd = kernel_pd + 1;
    let (ucq, ucq_ring) = host.ocrdma_create_cq(&mut roce, user_pd).unwrap();
    let buf = host.mem.alloc(BUF_LEN);
    let pages: Vec<u64> = (0..(BUF_LEN / 4096) as u64).map(|i| buf + i * 4096).collect();
    let (key, _) = host.ocrdma_reg_mr(&mut roce, user_pd, &pages, VA, BUF_LEN as u64, LOCAL_WRITE).unwrap();
    let ud = host.ocrdma_create_qp(&mut roce, QPT_UD, user_pd, ucq, (15, 63), 0).unwrap();
    to_rts(&mut host, &mut roce, ud.id, UD_QKEY, 0x00AB_CDEF);
    let ud = Qp {
        qp: ud,
        page: user_pd,
        cq_page: user_pd,
        cq: ucq,
        cq_ring: ucq_ring,
        cq_tail: 0,
        sq_head: 0,
        rq_head: 0,
        lkey: key,
        base: VA,
        bus: buf,
    };
    let mut end = End { host, roce, port, mac, gsi, ud };
    end.write_av(AH_SELF, mac);
    end
}

impl End {
    /// AH `index` to `dmac` as `set_av_attr` writes it for a RoCE v1 GID without VLAN: the
    /// port's MAC as source, the GRH (version 6, PD in the payload-length field, next header
    /// 0x1B, hop limit 1, the GIDs), `valid` = OCRDMA_AV_VALID.
    fn write_av(&mut self, index: u32, dmac: [u8; 6]) {
        self.write_av_tagged(index, dmac, None);
    }

    /// [`End::write_av`] with an 802.1Q TCI (`valid` then has OCRDMA_AV_VLAN_VALID too).
    fn write_av_tagged(&mut self, index: u32, dmac: [u8; 6], vlan_tag: Option<u16>) {
        let pd = self.ud.page;
        let av = Av {
            dmac,
            smac: self.mac,
            vlan_tag,
            grh: AvGrh {
                tclass_flow: 6 << 28,
                pdid_hoplimit: (u32::from(pd) << 16) | (0x1B << 8) | 1,
                sgid: gid(self.mac),
                dgid: gid(dmac),
            },
            valid: Av::VALID | if vlan_tag.is_some() { Av::VLAN_VALID } else { 0 },
        };
        let mut raw = [0u8; AV_LEN];
        av.encode(&mut Writer::new(&mut raw)).unwrap();
        self.host.mem.poke(self.roce.av_table + u64::from(index) * AV_LEN as u64, &raw);
    }
}

/// The QP `which` of `end`: 'g' the GSI QP, 'u' the UD QP.
fn qp(end: &mut End, which: char) -> (&mut Host, &mut Qp) {
    match which {
        'g' => (&mut end.host, &mut end.gsi),
        _ => (&mut end.host, &mut end.ud),
    }
}

/// A UD send as `ocrdma_post_send` builds it: header (SEND, flags, LKEY, size 48), the UD
/// header (dest QP, Q_Key, AH id, hdr_type 0), one SGE over `len` bytes at `offset`.
fn post_ud_send(end: &mut End, which: char, to: (u32, u32, u32), flags: u16, imm: u32, offset: u64, len: u32) -> u32 {
    post_ud_send_typed(end, which, (to.0, to.1, to.2, 0), flags, imm, offset, len)
}

/// [`post_ud_send`] with the UD header's `hdr_type` as the fourth of `to`.
fn post_ud_send_typed(
    end: &mut End,
    which: char,
    to: (u32, u32, u32, u32),
    flags: u16,
    imm: u32,
    offset: u64,
    len: u32,
) -> u32 {
    let (host, q) = qp(end, which);
    let (dest_qpn, qkey, ahid, hdr_type) = to;
    let mut wqe = [0u8; 48];
    let mut hdr = WqeHeader::new(wqe_opcode::SEND, flags, TYPE_LKEY, wqe.len());
    hdr.dword2 = imm;
    hdr.total_len = len;
    hdr.encode(&mut Writer::new(&mut wqe[..16])).unwrap();
    UdHeader { dest_qpn, qkey, ahid, hdr_type }.encode(&mut Writer::new(&mut wqe[16..32])).unwrap();
    Sge { addr: q.base + offset, lrkey: q.lkey, len }.encode(&mut Writer::new(&mut wqe[32..])).unwrap();
    let index = q.sq_head;
    host.mem.poke(q.qp.sq.0 + u64::from(index) * 256, &wqe);
    q.sq_head = (index + 1) % q.qp.sq_entries;
    host.pd_doorbell(q.page, DB_SQ, RoceSqDoorbell::new(q.qp.sq_dbid, 1).0);
    index
}

/// Posts one RQE over `len` bytes at `offset` (`ocrdma_post_recv`).
fn post_recv(end: &mut End, which: char, offset: u64, len: u32) {
    let (host, q) = qp(end, which);
    let rqe = Rqe::new(0, vec![Sge { addr: q.base + offset, lrkey: q.lkey, len }]);
    let mut raw = vec![0u8; 32];
    rqe.encode(&mut Writer::new(&mut raw)).unwrap();
    host.mem.poke(q.qp.rq.0 + u64::from(q.rq_head) * 128, &raw);
    q.rq_head = (q.rq_head + 1) % q.qp.rq_entries;
    host.pd_doorbell(q.page, DB_RQ, RoceRqDoorbell::new(q.qp.rq_dbid, 1).0);
}

/// The valid CQEs on the QP's CQ since the last call, cleared and popped as ocrdma does.
fn cqes(end: &mut End, which: char) -> Vec<Cqe> {
    let (host, q) = qp(end, which);
    let mut out = Vec::new();
    loop {
        let at = q.cq_ring.entry(q.cq_tail);
        let cqe = read_cqe(host, at);
        if !cqe.is_valid() {
            break;
        }
        host.mem.poke(at, &[0u8; 16]);
        q.cq_tail = (q.cq_tail + 1) % q.cq_ring.entries;
        out.push(cqe);
    }
    if !out.is_empty() {
        host.pd_doorbell(q.cq_page, DB_CQ, CqDoorbell::new(q.cq, false, out.len() as u16).0);
    }
    out
}

fn fill(end: &End, which: char, offset: u64, data: &[u8]) {
    let bus = if which == 'g' { end.gsi.bus } else { end.ud.bus };
    end.host.mem.poke(bus + offset, data);
}

fn read(end: &End, which: char, offset: u64, len: usize) -> Vec<u8> {
    let bus = if which == 'g' { end.gsi.bus } else { end.ud.bus };
    end.host.mem.peek(bus + offset, len)
}

/// Two adapters on a cable, each with an AV to the other at [`AH_PEER`].
fn pair() -> (tempfile::TempDir, End, End) {
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = cable(64);
    let mut a = end(&dir.path().join("a"), 0x0A00_0000_0000, pa);
    let mut b = end(&dir.path().join("b"), 0x0B00_0000_0000, pb);
    assert_ne!(a.mac, b.mac);
    let (ma, mb) = (a.mac, b.mac);
    a.write_av(AH_PEER, mb);
    b.write_av(AH_PEER, ma);
    (dir, a, b)
}

impl Cabled for End {
    fn cabled(&mut self) -> (&CablePort, &mut Host) {
        (&self.port, &mut self.host)
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(13).wrapping_add(seed)).collect()
}

/// The UD receive CQE's fields as `ocrdma_update_ud_rcqe` reads them: byte count (w1 28:16),
/// P_Key index (w1 15:0), QP (w2 15:0), status (w3 26:24), source QP (w3 23:0).
fn ud_fields(cqe: Cqe) -> (u32, u32, u16, u32, u32) {
    ((cqe.0[1] >> 16) & 0x1FFF, cqe.0[1] & 0xFFFF, cqe.qpn(), (cqe.0[3] >> 24) & 7, cqe.0[3] & 0xFF_FFFF)
}

#[test]
fn a_ud_send_lands_behind_its_grh_with_the_cqe_ocrdma_reads() {
    let (_d, mut a, mut b) = pair();
    let (qa, qb) = (u32::from(a.ud.qp.id), u32::from(b.ud.qp.id));
    post_recv(&mut b, 'u', 0x1000, 40 + 512);
    let data = pattern(100, 1);
    fill(&a, 'u', 0, &data);
    let idx = post_ud_send(&mut a, 'u', (qb, UD_QKEY, AH_PEER), wqe_flag::SIG, 0, 0, 100);
    assert_eq!(pump(&mut a, &mut b), 1, "one datagram, no ACK");
    // The GRH as it crossed the wire: version 6, payload length BTH 12 + DETH 8 + 100 + ICRC 4,
    // next header 0x1B, hop limit 1, A's GID then B's.
    let grh = read(&b, 'u', 0x1000, 40);
    assert_eq!(&grh[..4], &[0x60, 0, 0, 0]);
    assert_eq!(u16::from_be_bytes([grh[4], grh[5]]), 12 + 8 + 100 + 4);
    assert_eq!((grh[6], grh[7]), (0x1B, 1));
    assert_eq!((&grh[8..24], &grh[24..40]), (&gid(a.mac)[..], &gid(b.mac)[..]));
    assert_eq!(read(&b, 'u', 0x1000 + 40, 100), data);
    let rx = cqes(&mut b, 'u');
    assert_eq!(rx.len(), 1);
    assert!(rx[0].is_valid() && !rx[0].is_sq());
    assert_eq!(ud_fields(rx[0]), (140, 0, b.ud.qp.id, 0, qa));
    assert_eq!(rx[0].0[3] & Cqe::IMM, 0);
    let tx = cqes(&mut a, 'u');
    assert_eq!(tx.len(), 1);
    assert!(tx[0].is_sq());
    assert_eq!((tx[0].wqe_index(), tx[0].qpn(), tx[0].status()), (idx as u16, a.ud.qp.id, cqe_status::SUCCESS));

    // With immediate data, solicited, unsignaled: no send CQE; the receive carries the
    // immediate in w0 with the IMM flag.
    post_recv(&mut b, 'u', 0x2000, 40 + 512);
    post_ud_send(&mut a, 'u', (qb, UD_QKEY, AH_PEER), wqe_flag::IMM | wqe_flag::SOLICIT, 0xC0FF_EE00, 0, 64);
    pump(&mut a, &mut b);
    let rx = cqes(&mut b, 'u');
    assert_eq!(ud_fields(rx[0]), (104, 0, b.ud.qp.id, 0, qa));
    assert_eq!(rx[0].0[0], 0xC0FF_EE00);
    assert_ne!(rx[0].0[3] & Cqe::IMM, 0);
    assert!(cqes(&mut a, 'u').is_empty(), "unsignaled");
}

#[test]
fn gsi_qp1_to_qp1_carries_a_mad_with_the_well_known_q_key() {
    let (_d, mut a, mut b) = pair();
    // A's frames are caught and checked, then handed to B.
    let caught = Recorder::default();
    a.host.dev.attach_wire(Box::new(caught.clone()));
    post_recv(&mut b, 'g', 0, 40 + 256);
    let mad = pattern(256, 9);
    fill(&a, 'g', 0x100, &mad);
    post_ud_send(&mut a, 'g', (1, GSI_QKEY, AH_PEER), wqe_flag::SIG, 0, 0x100, 256);
    let frames = std::mem::take(&mut *caught.0.lock().unwrap());
    assert_eq!(frames.len(), 1);
    let f = &frames[0];
    assert_eq!((&f[..6], &f[6..12], &f[12..14]), (&b.mac[..], &a.mac[..], &[0x89, 0x15][..]));
    // BTH @54: UD SEND_ONLY, P_Key 0xFFFF, dest QP 1, PSN 0 (the SQ PSN ib_mad sets); DETH @66:
    // Q_Key 0x80010000, source QP 1.
    assert_eq!(&f[54..66], &[0x64, 0, 0xFF, 0xFF, 0, 0, 0, 1, 0, 0, 0, 0]);
    assert_eq!(&f[66..74], &[0x80, 0x01, 0, 0, 0, 0, 0, 1]);
    assert_eq!(&f[74..74 + 256], &mad[..]);
    assert_eq!(b.host.dev.receive(f), Receipt::Delivered);
    assert_eq!(read(&b, 'g', 40, 256), mad);
    let rx = cqes(&mut b, 'g');
    assert_eq!(ud_fields(rx[0]), (296, 0, 1, 0, 1));
    assert_eq!(cqes(&mut a, 'g')[0].status(), cqe_status::SUCCESS);

    // Through a tagged AV: 802.1Q with the AV's TCI, the rest four bytes on; B still takes it.
    let mb = b.mac;
    a.write_av_tagged(AH_PEER_TAGGED, mb, Some(3 << 13));
    post_recv(&mut b, 'g', 0x1000, 40 + 256);
    post_ud_send(&mut a, 'g', (1, GSI_QKEY, AH_PEER_TAGGED), wqe_flag::SIG, 0, 0x100, 256);
    let frames = std::mem::take(&mut *caught.0.lock().unwrap());
    let f = &frames[0];
    assert_eq!(&f[12..18], &[0x81, 0x00, 0x60, 0x00, 0x89, 0x15]);
    assert_eq!(&f[58..70], &[0x64, 0, 0xFF, 0xFF, 0, 0, 0, 1, 0, 0, 0, 1], "BTH @58: QP1's second datagram, PSN 1");
    assert_eq!(&f[70..74], &[0x80, 0x01, 0, 0], "DETH @70");
    assert_eq!(b.host.dev.receive(f), Receipt::Delivered);
    assert_eq!(read(&b, 'g', 0x1000 + 40, 256), mad);
    assert_eq!(cqes(&mut b, 'g').len(), 1);
}

#[test]
fn a_wrong_q_key_is_dropped_and_leaves_the_rqe_for_the_next_datagram() {
    let (_d, mut a, mut b) = pair();
    let qb = u32::from(b.ud.qp.id);
    post_recv(&mut b, 'u', 0, 1024);
    post_recv(&mut b, 'g', 0, 1024);
    fill(&a, 'u', 0, &pattern(32, 2));
    fill(&a, 'g', 0, &pattern(32, 3));
    // The UD QP's Q_Key is 0x11111111; QP1 takes 0x80010000 only.
    post_ud_send(&mut a, 'u', (qb, 0x2222_2222, AH_PEER), wqe_flag::SIG, 0, 0, 32);
    post_ud_send(&mut a, 'g', (1, 0x0001_0000, AH_PEER), wqe_flag::SIG, 0, 0, 32);
    assert_eq!(pump(&mut a, &mut b), 2);
    assert!(cqes(&mut b, 'u').is_empty() && cqes(&mut b, 'g').is_empty(), "dropped silently");
    assert_eq!(cqes(&mut a, 'u')[0].status(), cqe_status::SUCCESS, "UD is unreliable: the send succeeded");
    // A datagram with the right Q_Key takes the RQE the dropped one left.
    post_ud_send(&mut a, 'u', (qb, UD_QKEY, AH_PEER), wqe_flag::SIG, 0, 0, 32);
    pump(&mut a, &mut b);
    assert_eq!(read(&b, 'u', 40, 32), pattern(32, 2));
    assert_eq!(cqes(&mut b, 'u').len(), 1);
    // A datagram longer than any UD message (4096 bytes, the largest path MTU) is dropped
    // too, however large the buffer: built by hand, since the device would not send it.
    post_recv(&mut b, 'u', 0x4000, 8192);
    let big = vec![0x5A; 4097];
    let frame = oce_roce::ud::Datagram {
        eth: oce_roce::packet::EthHeader { dst: b.mac, src: a.mac, vlan: None },
        grh: oce_roce::packet::Grh {
            traffic_class: 0,
            flow_label: 0,
            payload_len: 0,
            next_header: oce_roce::packet::Grh::NEXT_HEADER_IBA,
            hop_limit: 1,
            sgid: gid(a.mac),
            dgid: gid(b.mac),
        },
        pkey: 0xFFFF,
        src_qpn: u32::from(a.ud.qp.id),
        dest_qpn: qb,
        qkey: UD_QKEY,
        psn: 0,
        solicited: false,
        imm: None,
        payload: &big,
    }
    .encode()
    .unwrap();
    assert_eq!(b.host.dev.receive(&frame), Receipt::Dropped(DropReason::NoRing));
    assert!(cqes(&mut b, 'u').is_empty());
    // A controlled Q_Key (high bit) sends the QP's own: QP1's 0x80010000.
    post_ud_send(&mut a, 'g', (1, 0x8000_0000, AH_PEER), wqe_flag::SIG, 0, 0, 32);
    pump(&mut a, &mut b);
    assert_eq!(cqes(&mut b, 'g').len(), 1);
}

#[test]
fn without_a_posted_rqe_a_datagram_is_dropped_not_retried() {
    let (_d, mut a, mut b) = pair();
    let qb = u32::from(b.ud.qp.id);
    let caught = Recorder::default();
    a.host.dev.attach_wire(Box::new(caught.clone()));
    fill(&a, 'u', 0, &pattern(16, 4));
    post_ud_send(&mut a, 'u', (qb, UD_QKEY, AH_PEER), wqe_flag::SIG, 0, 0, 16);
    let first = caught.0.lock().unwrap().remove(0);
    assert_eq!(b.host.dev.receive(&first), Receipt::Dropped(DropReason::NoRing));
    assert!(cqes(&mut b, 'u').is_empty());
    // No RNR: nothing comes back, nothing is resent; a later datagram takes a later RQE.
    post_recv(&mut b, 'u', 0x400, 128);
    fill(&a, 'u', 0, &pattern(16, 5));
    post_ud_send(&mut a, 'u', (qb, UD_QKEY, AH_PEER), wqe_flag::SIG, 0, 0, 16);
    let frames = std::mem::take(&mut *caught.0.lock().unwrap());
    assert_eq!(frames.len(), 1, "one new datagram, no retry of the first");
    assert_eq!(b.host.dev.receive(&frames[0]), Receipt::Delivered);
    assert_eq!(read(&b, 'u', 0x400 + 40, 16), pattern(16, 5));
    assert_eq!(cqes(&mut a, 'u').len(), 2, "both sends completed");
}

#[test]
fn the_kernels_roce_v1_hdr_type_is_sent_and_roce_v2_refused() {
    let (_d, mut a, mut b) = pair();
    // Linux 6.1's ocrdma_create_ah stores rdma_gid_attr_network_type(): RDMA_NETWORK_ROCE_V1 = 1
    // for a RoCE v1 GID (include/rdma/ib_verbs.h), so every MAD ib_mad or rdma_cm sends has it.
    post_recv(&mut b, 'g', 0, 40 + 256);
    let mad = pattern(256, 4);
    fill(&a, 'g', 0x100, &mad);
    post_ud_send_typed(&mut a, 'g', (1, GSI_QKEY, AH_PEER, 1), wqe_flag::SIG, 0, 0x100, 256);
    assert_eq!(pump(&mut a, &mut b), 1);
    assert_eq!(read(&b, 'g', 40, 256), mad);
    assert_eq!(cqes(&mut a, 'g')[0].status(), cqe_status::SUCCESS);
    // RDMA_NETWORK_IPV4 (2): RoCE v2, which an adapter reporting l3_type 0 does not send.
    let idx = post_ud_send_typed(&mut a, 'g', (1, GSI_QKEY, AH_PEER, 2), wqe_flag::SIG, 0, 0x100, 256);
    assert_eq!(pump(&mut a, &mut b), 0, "nothing on the wire");
    let tx = cqes(&mut a, 'g');
    assert_eq!((tx[0].wqe_index(), tx[0].status()), (idx as u16, cqe_status::LOC_QP_OP_ERR));
}

#[test]
fn a_bad_ah_index_completes_with_an_error_and_sends_nothing() {
    let (_d, mut a, mut b) = pair();
    let qb = u32::from(b.ud.qp.id);
    post_recv(&mut b, 'u', 0, 1024);
    // 512 AVs in 8 pages of 4 KiB: 512 is past the table.
    let idx = post_ud_send(&mut a, 'u', (qb, UD_QKEY, 512), wqe_flag::SIG, 0, 0, 16);
    assert_eq!(pump(&mut a, &mut b), 0, "nothing on the wire");
    let tx = cqes(&mut a, 'u');
    assert_eq!(tx.len(), 1);
    assert_eq!((tx[0].wqe_index(), tx[0].status()), (idx as u16, cqe_status::LOC_QP_OP_ERR));
    // Then the QP is silent (ocrdma moved it to ERR in software and flushes by itself).
    post_ud_send(&mut a, 'u', (qb, UD_QKEY, AH_PEER), wqe_flag::SIG, 0, 0, 16);
    assert_eq!(pump(&mut a, &mut b), 0);
    assert!(cqes(&mut a, 'u').is_empty() && cqes(&mut b, 'u').is_empty());
    // An entry ocrdma never wrote (valid bit clear) is as bad, here on QP1.
    post_ud_send(&mut a, 'g', (1, GSI_QKEY, AH_UNUSED), wqe_flag::SIG, 0, 0, 16);
    assert_eq!(pump(&mut a, &mut b), 0);
    assert_eq!(cqes(&mut a, 'g')[0].status(), cqe_status::LOC_QP_OP_ERR);
}

#[test]
fn a_receive_buffer_without_room_for_the_grh_completes_loc_len_err() {
    let (_d, mut a, mut b) = pair();
    let qb = u32::from(b.ud.qp.id);
    // 64 bytes of buffer for 64 bytes of payload: the 40 GRH bytes do not fit.
    post_recv(&mut b, 'u', 0, 64);
    post_ud_send(&mut a, 'u', (qb, UD_QKEY, AH_PEER), wqe_flag::SIG, 0, 0, 64);
    pump(&mut a, &mut b);
    let rx = cqes(&mut b, 'u');
    assert_eq!(rx.len(), 1);
    let (_, _, qpn, status, src) = ud_fields(rx[0]);
    assert_eq!((qpn, status, src), (b.ud.qp.id, u32::from(cqe_status::LOC_LEN_ERR), u32::from(a.ud.qp.id)));
    // Silent afterwards.
    post_recv(&mut b, 'u', 0x1000, 1024);
    post_ud_send(&mut a, 'u', (qb, UD_QKEY, AH_PEER), wqe_flag::SIG, 0, 0, 64);
    pump(&mut a, &mut b);
    assert!(cqes(&mut b, 'u').is_empty());
}

#[test]
fn a_datagram_to_the_ports_own_mac_loops_back_inside_the_adapter() {
    let (_d, mut a, mut b) = pair();
    let caught = Recorder::default();
    a.host.dev.attach_wire(Box::new(caught.clone()));
    // ib_mad on one host: QP1 to its own QP1 through an AV to its own MAC and GID.
    post_recv(&mut a, 'g', 0x800, 1024);
    let mad = pattern(256, 6);
    fill(&a, 'g', 0, &mad);
    post_ud_send(&mut a, 'g', (1, GSI_QKEY, AH_SELF), wqe_flag::SIG, 0, 0, 256);
    assert!(caught.0.lock().unwrap().is_empty(), "nothing on the wire");
    assert_eq!(read(&a, 'g', 0x800 + 40, 256), mad);
    assert_eq!(&read(&a, 'g', 0x800 + 8, 32)[..], &[gid(a.mac), gid(a.mac)].concat()[..]);
    let seen = cqes(&mut a, 'g');
    assert_eq!(seen.len(), 2, "the send and the receive, on QP1's one CQ");
    assert!(seen[0].is_sq() && seen[0].status() == cqe_status::SUCCESS);
    assert_eq!(ud_fields(seen[1]), (296, 0, 1, 0, 1));
    // And from QP1 to the UD QP of the same port.
    post_recv(&mut a, 'u', 0, 1024);
    let ud = u32::from(a.ud.qp.id);
    post_ud_send(&mut a, 'g', (ud, UD_QKEY, AH_SELF), 0, 0, 0, 8);
    assert_eq!(ud_fields(cqes(&mut a, 'u')[0]), (48, 0, a.ud.qp.id, 0, 1));
    assert!(caught.0.lock().unwrap().is_empty());
    assert_eq!(pump(&mut a, &mut b), 0);
}
