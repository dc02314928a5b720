//! RoCE v1 frames: Ethernet (optionally 802.1Q) with ethertype 0x8915, GRH, BTH, the extended
//! headers the opcode calls for, payload, pad to 4 bytes, ICRC (`spec/datapath.md` §3.1).

mod headers;
pub mod icrc;
mod opcode;

use byteorder::{BigEndian, ByteOrder};

pub use headers::{Aeth, Bth, Deth, Grh, Ieth, ImmDt, MASK_24, NakCode, Reth, Syndrome, rnr_timer};
pub use opcode::{Opcode, Operation, Position};

use crate::Error;
use headers::take;

/// Ethertype of RoCE v1 (IBTA Annex A16 §A16.4.1).
pub const ETHERTYPE_ROCE: u16 = 0x8915;
/// Ethertype of an IEEE 802.1Q tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// Length of the ICRC trailer.
pub const ICRC_LEN: usize = 4;

/// An IEEE 802.1Q tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vlan {
    /// Priority code point (3 bits).
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN id (12 bits).
    pub vid: u16,
}

/// The Ethernet header in front of the GRH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthHeader {
    pub dst: [u8; 6],
    pub src: [u8; 6],
    pub vlan: Option<Vlan>,
}

impl EthHeader {
    /// Header length: 14 bytes, 18 with a VLAN tag.
    pub fn encoded_len(&self) -> usize {
        if self.vlan.is_some() { 18 } else { 14 }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.dst);
        out.extend_from_slice(&self.src);
        if let Some(v) = self.vlan {
            out.extend_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
            let tci = (u16::from(v.pcp & 7) << 13) | (u16::from(v.dei) << 12) | (v.vid & 0xFFF);
            out.extend_from_slice(&tci.to_be_bytes());
        }
        out.extend_from_slice(&ETHERTYPE_ROCE.to_be_bytes());
    }

    /// Decodes the header; the (inner) ethertype must be RoCE v1.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let b = take(buf, 0, 14, "Ethernet header")?;
        let mut dst = [0u8; 6];
        let mut src = [0u8; 6];
        dst.copy_from_slice(&b[0..6]);
        src.copy_from_slice(&b[6..12]);
        let mut ethertype = BigEndian::read_u16(&b[12..14]);
        let mut vlan = None;
        if ethertype == ETHERTYPE_VLAN {
            let t = take(buf, 14, 4, "802.1Q tag")?;
            let tci = BigEndian::read_u16(&t[0..2]);
            vlan = Some(Vlan { pcp: (tci >> 13) as u8, dei: tci & 0x1000 != 0, vid: tci & 0xFFF });
            ethertype = BigEndian::read_u16(&t[2..4]);
        }
        if ethertype != ETHERTYPE_ROCE {
            return Err(Error::EtherType(ethertype));
        }
        Ok(EthHeader { dst, src, vlan })
    }
}

/// One RoCE v1 packet; the payload borrows the frame it was decoded from (or the buffer it is
/// encoded from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<'a> {
    pub eth: EthHeader,
    pub grh: Grh,
    pub bth: Bth,
    pub deth: Option<Deth>,
    pub reth: Option<Reth>,
    pub aeth: Option<Aeth>,
    pub imm: Option<ImmDt>,
    pub ieth: Option<Ieth>,
    /// The payload without its pad.
    pub payload: &'a [u8],
}

/// Pad bytes that bring `len` to a multiple of 4 (BTH PadCnt, IBTA vol 1 §9.2.3).
pub fn pad_len(len: usize) -> u8 {
    ((4 - len % 4) % 4) as u8
}

impl Packet<'_> {
    /// Checks that each extended header is present exactly when the opcode carries it.
    fn check_headers(&self) -> Result<(), Error> {
        let op = self.bth.opcode;
        let rows = [
            ("DETH", op.has_deth(), self.deth.is_some()),
            ("RETH", op.has_reth(), self.reth.is_some()),
            ("AETH", op.has_aeth(), self.aeth.is_some()),
            ("ImmDt", op.has_imm(), self.imm.is_some()),
            ("IETH", op.has_ieth(), self.ieth.is_some()),
            ("payload", op.has_payload() || self.payload.is_empty(), true),
        ];
        for (header, wanted, present) in rows {
            if wanted != present {
                return Err(Error::HeaderMismatch { opcode: op.value(), header });
            }
        }
        Ok(())
    }

    /// Appends the whole frame to `out`. The GRH payload length and the BTH pad count are
    /// derived from the payload; the values in `grh` and `bth` for those two fields are ignored.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        self.check_headers()?;
        let pad = pad_len(self.payload.len());
        let transport = Bth::LEN + self.bth.opcode.ext_len() + self.payload.len() + usize::from(pad);
        let payload_len =
            u16::try_from(transport + ICRC_LEN).map_err(|_| Error::MessageTooLong((transport + ICRC_LEN) as u64))?;
        self.eth.encode(out);
        let start = out.len();
        Grh { payload_len, ..self.grh }.encode(out);
        Bth { pad, ..self.bth }.encode(out);
        if let Some(h) = self.deth {
            h.encode(out);
        }
        if let Some(h) = self.reth {
            h.encode(out);
        }
        if let Some(h) = self.aeth {
            h.encode(out);
        }
        if let Some(h) = self.imm {
            h.encode(out);
        }
        if let Some(h) = self.ieth {
            h.encode(out);
        }
        out.extend_from_slice(self.payload);
        out.extend(std::iter::repeat_n(0u8, usize::from(pad)));
        let crc = icrc::compute(&out[start..]);
        out.extend_from_slice(&crc.to_le_bytes());
        Ok(())
    }

    /// The frame as a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>, Error> {
        let mut v = Vec::with_capacity(128 + self.payload.len());
        self.encode(&mut v)?;
        Ok(v)
    }
}

impl<'a> Packet<'a> {
    /// Decodes a frame and checks its ICRC. Bytes after the GRH's payload length (Ethernet
    /// padding) are ignored.
    pub fn decode(frame: &'a [u8]) -> Result<Self, Error> {
        let eth = EthHeader::decode(frame)?;
        let start = eth.encoded_len();
        let grh = Grh::decode(&frame[start..])?;
        let after_grh = frame.len() - start - Grh::LEN;
        let total = usize::from(grh.payload_len);
        if total > after_grh || total < Bth::LEN + ICRC_LEN {
            return Err(Error::PayloadLength { grh: grh.payload_len, available: after_grh });
        }
        let packet = &frame[start..start + Grh::LEN + total];
        let bth = Bth::decode(&packet[Grh::LEN..])?;
        let op = bth.opcode;
        let mut off = Grh::LEN + Bth::LEN;
        let body_end = packet.len() - ICRC_LEN;
        let body = &packet[..body_end];
        let mut next = |len: usize, header: &'static str| {
            let b = take(body, off, len, header);
            off += len;
            b
        };
        let deth = if op.has_deth() { Some(Deth::decode(next(Deth::LEN, "DETH")?)?) } else { None };
        let reth = if op.has_reth() { Some(Reth::decode(next(Reth::LEN, "RETH")?)?) } else { None };
        let aeth = if op.has_aeth() { Some(Aeth::decode(next(Aeth::LEN, "AETH")?)?) } else { None };
        let imm = if op.has_imm() { Some(ImmDt::decode(next(ImmDt::LEN, "ImmDt")?)?) } else { None };
        let ieth = if op.has_ieth() { Some(Ieth::decode(next(Ieth::LEN, "IETH")?)?) } else { None };
        let rest = &body[off..];
        let pad = usize::from(bth.pad);
        if pad > rest.len() || (!op.has_payload() && !rest.is_empty()) {
            return Err(Error::Pad { pad: bth.pad, payload: rest.len() });
        }
        let found =
            u32::from_le_bytes([packet[body_end], packet[body_end + 1], packet[body_end + 2], packet[body_end + 3]]);
        let computed = icrc::compute(body);
        if found != computed {
            return Err(Error::Icrc { found, computed });
        }
        Ok(Packet { eth, grh, bth, deth, reth, aeth, imm, ieth, payload: &rest[..rest.len() - pad] })
    }
}

#[cfg(test)]
mod tests;
