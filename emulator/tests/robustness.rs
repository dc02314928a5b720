//! The emulated firmware survives any bytes a host can put in the mailbox: random WRBs, random
//! command headers and bodies, random SGEs. It answers with a status (or a logged DMA fault) and
//! RDY comes back; it never panics.

mod common;

use std::sync::OnceLock;

use common::{db, mailbox, post_mailbox, rdy};
use oce_emulator::Emulator;
use oce_pci::{DmaBuffer, PciFunction};
use proptest::prelude::*;

/// One adapter for every case: random commands may change its state, which is fine.
fn adapter() -> &'static Emulator {
    static ADAPTER: OnceLock<(tempfile::TempDir, Emulator)> = OnceLock::new();
    &ADAPTER.get_or_init(common::fresh).1
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_mailboxes_never_panic(
        wrbs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 256), 1..8),
        opcodes in proptest::collection::vec(any::<u8>(), 8),
        body in proptest::collection::vec(any::<u8>(), 0..600),
        embedded in any::<bool>(),
        sge_len in 0u32..700,
    ) {
        let emu = adapter();
        let db = db(emu);
        let (mbox, addr, off) = mailbox(emu);
        let data = emu.alloc_dma(600).unwrap();
        data.write_at(0, &body).unwrap();
        for (i, mut wrb) in wrbs.into_iter().enumerate() {
            // Half the time, make it a well-formed WRB around a random command.
            if i % 2 == 0 {
                wrb[..4].copy_from_slice(&(if embedded { 1u32 } else { 1 << 3 }).to_le_bytes());
                if embedded {
                    wrb[20] = opcodes[i];
                    wrb[21] = 1;
                } else {
                    wrb[20..28].copy_from_slice(&data.iova().to_le_bytes());
                    wrb[28..32].copy_from_slice(&sge_len.to_le_bytes());
                    data.write_at(0, &[opcodes[i], 1]).unwrap();
                }
            }
            mbox.write_at(off, &wrb).unwrap();
            post_mailbox(&db, addr);
            prop_assert_eq!(rdy(&db), 1);
        }
    }
}
