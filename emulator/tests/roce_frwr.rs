//! Fast registration and invalidation (FRWR) on the RC transport, as xprtrdma and svcrdma use
//! them through ocrdma (spec/datapath.md §3.3): two RoCE adapters on the in-process cable (the
//! RC ends of `common::roce`), an FR_MR WQE registering scattered pages that a peer's RDMA
//! WRITE and READ then go through, LKEY_INV, SEND with invalidate (the IETH on the wire, the
//! rkey and the invalidate bit in the receive CQE), a local operation waiting behind earlier
//! WQEs, and the FR_MRs the device refuses (spec/datapath.md §2.3, §3.2: one error CQE, then
//! silence).

mod common;

use oce_testhost as be2net_host;

use be2net_host::Host;
use be2net_host::ocrdma_frwr::{FR_LOCAL_WR, FR_REMOTE_RD, FR_REMOTE_WR, FrMr, ocrdma_local_inv};
use common::roce::{End, Recorder, pair, pattern, pump, sge_bytes};
use oce_mailbox::entries::{Cqe, TYPE_LKEY, cqe_status, wqe_flag, wqe_opcode};

const SIG: u16 = wqe_flag::SIG;

/// The XID xprtrdma puts into the upper half of every FRWR iova (frwr_ops.c `frwr_map`).
const XID: u64 = 0x5EED;

impl End {
    /// `count` fresh 4 KiB pages, listed out of address order (the last one first), as a
    /// scatterlist's pages may be.
    fn scattered_pages(&mut self, count: usize) -> Vec<u64> {
        let mut pages: Vec<u64> = (0..count).map(|_| self.host.mem.alloc(4096)).collect();
        pages.rotate_right(1);
        pages
    }
}

/// What an FRWR registration looks like to the test: the pages, the iova and the first-byte
/// offset it chose.
struct Registered {
    mr: FrMr,
    key: u32,
    iova: u64,
    pages: Vec<u64>,
    fbo: u64,
}

impl Registered {
    /// The bus address of byte `offset` of the region, by the page list the test gave.
    fn addr(&self, offset: u64) -> u64 {
        let at = self.fbo + offset;
        self.pages[(at / 4096) as usize] + at % 4096
    }

    /// Reads `len` bytes from `offset` of the region, page by page.
    fn read(&self, host: &Host, offset: u64, len: usize) -> Vec<u8> {
        (0..len as u64).map(|i| host.mem.peek(self.addr(offset + i), 1)[0]).collect()
    }

    /// Writes `data` at `offset` of the region, page by page.
    fn fill(&self, host: &Host, offset: u64, data: &[u8]) {
        for (i, b) in data.iter().enumerate() {
            host.mem.poke(self.addr(offset + i as u64), &[*b]);
        }
    }
}

/// `end` allocates a fast-register MR of up to `max_pages` and registers `pages` scattered pages
/// through it by an FR_MR WQE (key byte bumped, as `ib_update_fast_reg_key`), with `access`; the
/// iova is the first page plus 0x80, with the XID above bit 32. Returns the registration and
/// the FR_MR's SQ index.
fn fast_register(end: &mut End, max_pages: u32, pages: usize, access: u32, signaled: bool) -> (Registered, u32) {
    let mr = end.host.ocrdma_alloc_mr(&mut end.roce, end.pd, max_pages).unwrap();
    let pages = end.scattered_pages(pages);
    let fbo = 0x80;
    let iova = (XID << 32) | ((pages[0] + fbo) & 0xFFFF_FFFF);
    let key = (mr.key & !0xFF) | ((mr.key + 1) & 0xFF);
    let len = (pages.len() as u64 * 4096 - fbo) as u32;
    let wqe = end.host.ocrdma_build_reg(&mr, key, (iova, len), &pages, access, signaled);
    let index = end.post_raw(&wqe);
    (Registered { mr, key, iova, pages, fbo }, index)
}

const FR_ALL: u32 = FR_LOCAL_WR | FR_REMOTE_RD | FR_REMOTE_WR;

#[test]
fn fr_mr_registers_scattered_pages_then_rdma_write_and_read_go_through_them() {
    let (_d, mut a, mut b) = pair();
    let (reg, index) = fast_register(&mut b, 256, 3, FR_ALL, true);
    assert_eq!(pump(&mut a, &mut b), 0, "a local operation puts nothing on the wire");
    let tx = b.cqes();
    assert_eq!(tx.len(), 1);
    assert_eq!((tx[0].is_sq(), tx[0].wqe_index(), tx[0].status()), (true, index as u16, cqe_status::SUCCESS));

    // A WRITEs 6000 bytes at iova + 100: they cross from the first listed page into the next.
    let data = pattern(6000, 21);
    a.fill(0, &data);
    let mut body = sge_bytes(reg.iova + 100, reg.key, 6000);
    body.extend(a.sge(0, 6000));
    a.post_send(wqe_opcode::WRITE, SIG, TYPE_LKEY, 0, 6000, &body);
    pump(&mut a, &mut b);
    assert_eq!(a.cqes()[0].status(), cqe_status::SUCCESS);
    assert_eq!(reg.read(&b.host, 100, 6000), data, "through the page list, at fbo 0x80");
    assert_eq!(b.host.mem.peek(reg.pages[0] + 0x80 + 100, 4), data[..4], "the first byte where the test put it");

    // A READs 9000 bytes from iova + 2000 (all three pages) into its buffer.
    let data = pattern(9000, 77);
    reg.fill(&b.host, 2000, &data);
    let mut body = sge_bytes(reg.iova + 2000, reg.key, 9000);
    body.extend(a.sge(0x2_0000, 9000));
    a.post_send(wqe_opcode::READ, SIG, TYPE_LKEY, 0, 9000, &body);
    pump(&mut a, &mut b);
    assert_eq!(a.cqes()[0].status(), cqe_status::SUCCESS);
    assert_eq!(a.read(0x2_0000, 9000), data);

    // The key REGISTER_NSMR gave (the old key byte) names nothing now.
    let mut body = sge_bytes(reg.iova, reg.mr.key, 16);
    body.extend(a.sge(0, 16));
    a.post_send(wqe_opcode::WRITE, SIG, TYPE_LKEY, 0, 16, &body);
    pump(&mut a, &mut b);
    assert_eq!(a.cqes()[0].status(), cqe_status::REM_ACCESS_ERR);
}

#[test]
fn lkey_inv_invalidates_the_region_and_a_peer_write_through_it_fails() {
    let (_d, mut a, mut b) = pair();
    let (reg, _) = fast_register(&mut b, 16, 2, FR_ALL, false);
    let index = b.post_raw(&ocrdma_local_inv(reg.key, true));
    assert_eq!(pump(&mut a, &mut b), 0);
    let tx = b.cqes();
    assert_eq!(tx.len(), 1, "only the signaled LKEY_INV completes");
    assert_eq!((tx[0].wqe_index(), tx[0].status()), (index as u16, cqe_status::SUCCESS));
    // Invalidating it again is no error (the region stays invalid).
    b.post_raw(&ocrdma_local_inv(reg.key, true));
    pump(&mut a, &mut b);
    assert_eq!(b.cqes()[0].status(), cqe_status::SUCCESS);

    let before = reg.read(&b.host, 0, 64);
    a.fill(0, &[0xA5; 64]);
    let mut body = sge_bytes(reg.iova, reg.key, 64);
    body.extend(a.sge(0, 64));
    a.post_send(wqe_opcode::WRITE, SIG, TYPE_LKEY, 0, 64, &body);
    pump(&mut a, &mut b);
    assert_eq!(a.cqes()[0].status(), cqe_status::REM_ACCESS_ERR);
    assert_eq!(reg.read(&b.host, 0, 64), before, "B's pages untouched");
}

#[test]
fn a_local_access_through_an_invalidated_lkey_is_loc_prot_err() {
    let (_d, mut a, mut b) = pair();
    let (reg, _) = fast_register(&mut a, 16, 1, FR_LOCAL_WR, false);
    a.post_raw(&ocrdma_local_inv(reg.key, false));
    b.post_recv(0, 64);
    let sge = sge_bytes(reg.iova, reg.key, 64);
    let index = a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    assert_eq!(pump(&mut a, &mut b), 0, "nothing sent");
    let tx = a.cqes();
    assert_eq!((tx.len(), tx[0].wqe_index(), tx[0].status()), (1, index as u16, cqe_status::LOC_PROT_ERR));
    assert!(b.cqes().is_empty());
}

#[test]
fn send_with_invalidate_carries_an_ieth_and_the_receiver_reports_and_invalidates_the_rkey() {
    let (_d, mut a, mut b) = pair();
    let (reg, _) = fast_register(&mut b, 16, 2, FR_ALL, false);
    pump(&mut a, &mut b);
    b.post_recv(0x1000, 256);
    // A's frames are caught to look at the IETH, then handed to B.
    let caught = Recorder::default();
    a.host.dev.attach_wire(Box::new(caught.clone()));
    let data = pattern(200, 9);
    a.fill(0, &data);
    let sge = a.sge(0, 200);
    let index = a.post_send(wqe_opcode::SEND, SIG | wqe_flag::INV, TYPE_LKEY, reg.key, 200, &sge);
    let frames = std::mem::take(&mut *caught.0.lock().unwrap());
    assert_eq!(frames.len(), 1);
    let pkt = oce_roce::packet::Packet::decode(&frames[0]).unwrap();
    assert_eq!(pkt.bth.opcode, oce_roce::packet::Opcode::RcSendOnlyInv);
    assert_eq!(pkt.ieth.map(|i| i.rkey), Some(reg.key), "the rkey on the wire");
    b.host.dev.receive(&frames[0]);
    a.port.deliver(&mut a.host.dev);

    assert_eq!(b.read(0x1000, 200), data);
    let rx = b.cqes();
    assert_eq!(rx.len(), 1);
    assert_eq!((rx[0].0[0], rx[0].0[1], rx[0].status()), (reg.key, 200, cqe_status::SUCCESS), "w0: the rkey");
    assert_ne!(rx[0].0[3] & Cqe::INVALIDATE, 0, "the invalidate bit ocrdma turns into IB_WC_WITH_INVALIDATE");
    assert_eq!(rx[0].0[3] & Cqe::IMM, 0);
    let tx = a.cqes();
    assert_eq!((tx[0].wqe_index(), tx[0].status()), (index as u16, cqe_status::SUCCESS));

    // The region is invalid at B now: A's WRITE through it is refused.
    a.host.dev.attach_wire(a.port.wire());
    let mut body = sge_bytes(reg.iova, reg.key, 16);
    body.extend(a.sge(0, 16));
    a.post_send(wqe_opcode::WRITE, SIG, TYPE_LKEY, 0, 16, &body);
    pump(&mut a, &mut b);
    assert_eq!(a.cqes()[0].status(), cqe_status::REM_ACCESS_ERR);
}

#[test]
fn send_with_invalidate_of_a_key_that_is_not_fast_register_fails_on_both_sides() {
    let (_d, mut a, mut b) = pair();
    b.post_recv(0, 64);
    let sge = a.sge(0, 64);
    // B's own registered buffer: a region REGISTER_NSMR gave pages to, not invalidatable.
    a.post_send(wqe_opcode::SEND, SIG | wqe_flag::INV, TYPE_LKEY, b.key, 64, &sge);
    pump(&mut a, &mut b);
    let rx = b.cqes();
    assert_eq!((rx.len(), rx[0].status()), (1, cqe_status::REM_INV_REQ_ERR));
    assert_eq!(rx[0].0[3] & Cqe::INVALIDATE, 0, "nothing was invalidated");
    let tx = a.cqes();
    assert_eq!((tx.len(), tx[0].status()), (1, cqe_status::REM_INV_REQ_ERR), "the responder's NAK");
    // Both QPs are silent from then on.
    b.post_recv(0, 64);
    a.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    assert_eq!(pump(&mut a, &mut b), 0);
    assert!(a.cqes().is_empty() && b.cqes().is_empty());
}

#[test]
fn a_local_operation_waits_for_earlier_wqes_and_completes_after_them() {
    let (_d, mut a, mut b) = pair();
    a.post_recv(0, 4096);
    let sge = b.sge(0, 4096);
    // Without frames moving, B's SEND stays unacknowledged: the FR_MR behind it waits.
    let send = b.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 4096, &sge);
    let (reg, fr) = fast_register(&mut b, 16, 1, FR_ALL, true);
    assert!(b.cqes().is_empty(), "the FR_MR did not overtake the SEND");
    pump(&mut a, &mut b);
    let tx = b.cqes();
    let order: Vec<_> = tx.iter().map(|c| (c.wqe_index(), c.status())).collect();
    assert_eq!(order, [(send as u16, cqe_status::SUCCESS), (fr as u16, cqe_status::SUCCESS)]);
    // And it did register: A writes through the key.
    let mut body = sge_bytes(reg.iova, reg.key, 8);
    body.extend(a.sge(0x3000, 8));
    a.fill(0x3000, b"frwr ok!");
    a.post_send(wqe_opcode::WRITE, SIG, TYPE_LKEY, 0, 8, &body);
    pump(&mut a, &mut b);
    assert_eq!(a.cqes()[0].status(), cqe_status::SUCCESS);
    assert_eq!(reg.read(&b.host, 0, 8), b"frwr ok!");
}

#[test]
fn refused_fr_mrs_complete_loc_qp_op_err_then_the_qp_is_silent() {
    // Registering twice without an invalidation in between.
    let (_d, mut a, mut b) = pair();
    let (reg, _) = fast_register(&mut b, 16, 1, FR_ALL, false);
    let again = b.host.ocrdma_build_reg(&reg.mr, reg.key + 1, (reg.iova, 64), &reg.pages, FR_ALL, false);
    let index = b.post_raw(&again);
    pump(&mut a, &mut b);
    let tx = b.cqes();
    assert_eq!((tx.len(), tx[0].wqe_index(), tx[0].status()), (1, index as u16, cqe_status::LOC_QP_OP_ERR));
    a.post_recv(0, 64);
    let sge = b.sge(0, 64);
    b.post_send(wqe_opcode::SEND, SIG, TYPE_LKEY, 0, 64, &sge);
    assert_eq!(pump(&mut a, &mut b), 0, "silent after the error CQE");
    assert!(b.cqes().is_empty() && a.cqes().is_empty());

    // An MR allocated for 16 pages has one 4 KiB PBL page: room for 512 PBEs, not 513.
    let (_d, mut a, mut b) = pair();
    let mr = b.host.ocrdma_alloc_mr(&mut b.roce, b.pd, 16).unwrap();
    let pages = b.scattered_pages(513);
    let wqe = b.host.ocrdma_build_reg(&mr, mr.key, (pages[0], 4096), &pages[..512], FR_ALL, true);
    b.post_raw(&wqe);
    pump(&mut a, &mut b);
    assert_eq!(b.cqes()[0].status(), cqe_status::SUCCESS, "512 PBEs fill the one PBL page");
    let mr = b.host.ocrdma_alloc_mr(&mut b.roce, b.pd, 16).unwrap();
    let mut wqe = b.host.ocrdma_build_reg(&mr, mr.key, (pages[0], 4096), &pages[..1], FR_ALL, true);
    wqe[36..40].copy_from_slice(&513u32.to_le_bytes()); // num_sges past the PBL
    b.post_raw(&wqe);
    pump(&mut a, &mut b);
    assert_eq!(b.cqes()[0].status(), cqe_status::LOC_QP_OP_ERR);

    // A region of another PD, and a key that names no region at all.
    for other in [true, false] {
        let (_d, mut a, mut b) = pair();
        let mr = if other {
            let pd = b.pd + 1;
            b.host.ocrdma_alloc_mr(&mut b.roce, pd, 16).unwrap()
        } else {
            FrMr { key: 0x00FF_FF01, pbls: b.host.ocrdma_alloc_mr(&mut b.roce, b.pd, 16).unwrap().pbls }
        };
        let pages = b.scattered_pages(1);
        let wqe = b.host.ocrdma_build_reg(&mr, mr.key, (pages[0], 4096), &pages, FR_ALL, true);
        b.post_raw(&wqe);
        pump(&mut a, &mut b);
        assert_eq!(b.cqes()[0].status(), cqe_status::LOC_QP_OP_ERR, "other PD: {other}");
    }

    // LKEY_INV of a region REGISTER_NSMR gave its pages: refused.
    let (_d, mut a, mut b) = pair();
    let key = b.key;
    b.post_raw(&ocrdma_local_inv(key, true));
    pump(&mut a, &mut b);
    assert_eq!(b.cqes()[0].status(), cqe_status::LOC_QP_OP_ERR);
}
