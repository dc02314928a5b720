//! The emulated adapter's TX path on arbitrary bytes: the WRB decoders on the raw bytes, then a
//! request built from them — the header WRB's dword 2 and 3 as given (every offload bit,
//! `num_wrb`, `lso_mss`, length, VLAN tag), as many fragment WRBs as `num_wrb` says, their
//! lengths and contents from the input, some of them at addresses nobody mapped — posted on a
//! TX ring of an adapter a be2net-like host brought up, cabled to a second one that receives
//! whatever goes on the wire. The device must never panic, must complete the request (when
//! asked) at its last WRB with a status, and every frame it sends must be one the receiving
//! side's checks accept.
//!
//! The harness keeps an LSO request's MSS at 64 bytes or more so one input cannot ask for 65 535
//! one-byte segments (which the device would send, slowly): a bound on the fuzzer's time, not
//! on the device.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use oce_mailbox::entries::{RxCompletion, TX_WRB_LEN, TxCompletion, TxFragmentWrb, TxHeaderWrb};
use oce_mailbox::wire::Writer;
use oce_mailbox::{Reader, Wire};
use oce_mailbox::doorbells::TxDoorbell;
use oce_testhost::{DB_BAR, Pair, PairConfig};

fn pair() -> &'static Mutex<Pair> {
    static PAIR: OnceLock<Mutex<Pair>> = OnceLock::new();
    PAIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ocetool-fuzz-tx-{}", std::process::id()));
        let mut p = Pair::up(&dir, PairConfig::default());
        std::fs::remove_dir_all(&dir).expect("remove the scratch state directory");
        p.b.host.set_promiscuous(&p.b.nic, true).expect("promiscuous");
        Mutex::new(p)
    })
}

/// A little reader over the fuzz input.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        let n = self.0.len().min(4);
        b[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        u32::from_le_bytes(b)
    }
    fn bytes(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }
}

fn wrb<T: Wire>(value: &T) -> [u8; TX_WRB_LEN] {
    let mut raw = [0u8; TX_WRB_LEN];
    value.encode(&mut Writer::new(&mut raw)).expect("a WRB fits");
    raw
}

fuzz_target!(|data: &[u8]| {
    // The decoders on the raw bytes.
    let _ = TxHeaderWrb::decode(&mut Reader::new(data));
    let _ = TxFragmentWrb::decode(&mut Reader::new(data));
    let _ = RxCompletion::decode(&mut Reader::new(data));

    let mut input = Input(data);
    let mut header = TxHeaderWrb { dw2: input.u32(), dw3: input.u32() };
    if header.lso() && header.lso_mss() < 64 {
        header = header.with_lso(header.lso_mss() | 64, header.lso6());
    }
    let wrbs = u32::from(header.num_wrb().max(1));
    let mut p = pair().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let a = &mut p.a;
    let mut buffers = Vec::new();
    let mut ring = Vec::new();
    for _ in 1..wrbs {
        let spec = input.u32();
        let len = (spec & 0x1FFF) as usize;
        let frag = if spec & 0x8000_0000 != 0 {
            // An address nobody mapped.
            TxFragmentWrb { address: 0xDEAD_0000_0000 | u64::from(spec), len: len as u16 }
        } else {
            let contents = input.bytes(len).to_vec();
            let buf = a.host.mem.alloc(contents.len().max(1));
            a.host.mem.poke(buf, &contents);
            buffers.push(buf);
            TxFragmentWrb { address: buf, len: contents.len() as u16 }
        };
        ring.push(wrb(&frag));
    }
    let tx = &mut a.nic.txqs[0];
    let first = tx.head;
    a.host.mem.poke(tx.ring.entry(first), &wrb(&header));
    for (k, w) in ring.iter().enumerate() {
        a.host.mem.poke(tx.ring.entry(first + 1 + k as u32), w);
    }
    tx.head = (first + wrbs) % tx.ring.entries;
    let (id, off, entries) = (tx.id, tx.db_offset, tx.ring.entries);
    a.host.write32(DB_BAR, off.into(), TxDoorbell::new(id, wrbs as u16).0);
    // Reap raw (the request is not be2net's own): a completion names the request's last WRB.
    let tx = &mut a.nic.txqs[0];
    let at = tx.cq.ring.entry(tx.cq.tail);
    let completion = TxCompletion::decode(&mut Reader::new(&a.host.mem.peek(at, 16))).expect("16 bytes");
    if header.complete() {
        assert!(completion.valid, "a request with `complete` is completed");
        assert_eq!(u32::from(completion.wrb_index), (first + wrbs - 1) % entries);
        a.host.mem.poke(at + 12, &[0; 4]);
        tx.cq.tail = (tx.cq.tail + 1) % tx.cq.ring.entries;
        let cq = tx.cq.id;
        a.host.cq_notify(cq, true, 1);
    } else {
        assert!(!completion.valid, "nothing completes a request without `complete`");
    }
    a.host.irq.take();
    buffers.into_iter().for_each(|b| a.host.mem.free(b));
    p.pump();
    p.b.nic.received.clear();
});
