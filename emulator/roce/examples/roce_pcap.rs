//! Writes a pcap of RoCE v1 frames, one per header combination this crate encodes, for
//! `tshark-check.sh` to dissect with Wireshark. The frames and their fields are listed in that
//! script, which checks them against Wireshark's reading and an independent ICRC.
//!
//! Usage: cargo run -p oce-roce --example roce_pcap -- OUT.pcap

use std::io::Write;

use oce_roce::packet::{Aeth, Bth, Deth, EthHeader, Grh, Ieth, ImmDt, NakCode, Opcode, Packet, Reth, Syndrome, Vlan};

fn gid(last: u8) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[0] = 0xFE;
    g[1] = 0x80;
    g[15] = last;
    g
}

fn packet(opcode: Opcode, dest_qpn: u32, psn: u32, payload: &'static [u8]) -> Packet<'static> {
    Packet {
        eth: EthHeader { dst: [2, 0, 0, 0, 0, 2], src: [2, 0, 0, 0, 0, 1], vlan: None },
        grh: Grh {
            traffic_class: 0,
            flow_label: 0,
            payload_len: 0,
            next_header: Grh::NEXT_HEADER_IBA,
            hop_limit: 64,
            sgid: gid(1),
            dgid: gid(2),
        },
        bth: Bth {
            opcode,
            solicited: false,
            mig_req: false,
            pad: 0,
            tver: 0,
            pkey: Bth::DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qpn,
            ack_req: opcode.position().ends(),
            psn,
        },
        deth: None,
        reth: None,
        aeth: None,
        imm: None,
        ieth: None,
        payload,
    }
}

fn frames() -> Vec<Packet<'static>> {
    use Opcode::*;
    let reth = Some(Reth { va: 0x0000_7F00_1234_5000, rkey: 0x0000_0A5A, dma_len: 3000 });
    let mut v = Vec::new();
    v.push(packet(RcSendFirst, 0x12, 0xFF_FFFE, &[0x11; 1024]));
    v.push(packet(RcSendMiddle, 0x12, 0xFF_FFFF, &[0x22; 1024]));
    let mut p = packet(RcSendLastImm, 0x12, 0, b"last!");
    p.imm = Some(ImmDt(0xCAFE_F00D));
    p.bth.solicited = true;
    v.push(p);
    let mut p = packet(RcWriteFirst, 0x12, 1, &[0x33; 1024]);
    p.reth = reth;
    v.push(p);
    let mut p = packet(RcWriteOnlyImm, 0x12, 2, b"abc");
    p.reth = reth;
    p.imm = Some(ImmDt(7));
    v.push(p);
    let mut p = packet(RcReadRequest, 0x12, 3, b"");
    p.reth = reth;
    v.push(p);
    let mut p = packet(RcReadResponseFirst, 0x34, 3, &[0x44; 1024]);
    p.aeth = Some(Aeth { syndrome: Syndrome::ACK_NO_CREDITS, msn: 5 });
    v.push(p);
    let mut p = packet(RcAck, 0x34, 2, b"");
    p.aeth = Some(Aeth { syndrome: Syndrome::RnrNak { timer: 14 }, msn: 4 });
    v.push(p);
    let mut p = packet(RcAck, 0x34, 2, b"");
    p.aeth = Some(Aeth { syndrome: Syndrome::Nak(NakCode::RemoteAccessError), msn: 4 });
    v.push(p);
    let mut p = packet(RcSendOnlyInv, 0x12, 4, b"inv");
    p.ieth = Some(Ieth { rkey: 0x0000_0B01 });
    p.eth.vlan = Some(Vlan { pcp: 3, dei: false, vid: 100 });
    p.grh.traffic_class = 0x60;
    p.grh.flow_label = 0xABCDE;
    v.push(p);
    let mut p = packet(UdSendOnly, 0x20, 0x42, &[0x55; 256]);
    p.deth = Some(Deth { qkey: 0x8001_0000, src_qpn: 0x21 });
    v.push(p);
    v
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).ok_or("usage: roce_pcap OUT.pcap")?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(&out)?);
    // pcap global header: magic, version 2.4, zone 0, sigfigs 0, snaplen, LINKTYPE_ETHERNET (1).
    f.write_all(&0xA1B2_C3D4u32.to_le_bytes())?;
    f.write_all(&2u16.to_le_bytes())?;
    f.write_all(&4u16.to_le_bytes())?;
    for word in [0u32, 0, 65535, 1] {
        f.write_all(&word.to_le_bytes())?;
    }
    for (i, p) in frames().iter().enumerate() {
        let bytes = p.to_vec()?;
        let len = u32::try_from(bytes.len())?;
        for word in [i as u32, 0, len, len] {
            f.write_all(&word.to_le_bytes())?;
        }
        f.write_all(&bytes)?;
    }
    f.flush()?;
    Ok(())
}
