//! The IBA headers of a RoCE v1 packet as big-endian wire types (IBTA vol 1 §8.3 GRH, §9.2 BTH,
//! §9.3 extended transport headers; the field offsets match `rxe_hdr.h`).

use byteorder::{BigEndian, ByteOrder};

use super::Opcode;
use crate::Error;

/// The `len` bytes at `off`, or [`Error::Short`] naming `header`.
pub(crate) fn take<'a>(buf: &'a [u8], off: usize, len: usize, header: &'static str) -> Result<&'a [u8], Error> {
    buf.get(off..off.saturating_add(len)).ok_or(Error::Short {
        header,
        offset: off,
        needed: len,
        available: buf.len().saturating_sub(off),
    })
}

/// 24-bit fields (QPN, PSN, MSN) keep their low 24 bits.
pub const MASK_24: u32 = 0x00FF_FFFF;

/// Global Route Header, 40 bytes: the IPv6-shaped header RoCE v1 puts after Ethernet.
#[doc(alias = "ib_grh")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grh {
    /// Traffic class (8 bits).
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Bytes from the BTH to the ICRC inclusive; [`super::Packet::encode`] computes it.
    pub payload_len: u16,
    /// Always 0x1B (IBA transport) for the packets this crate carries.
    pub next_header: u8,
    pub hop_limit: u8,
    pub sgid: [u8; 16],
    pub dgid: [u8; 16],
}

impl Grh {
    pub const LEN: usize = 40;
    /// IPVer of a GRH (IBTA vol 1 §8.3.1).
    pub const IP_VERSION: u8 = 6;
    /// NxtHdr for an IBA transport header (IBTA vol 1 §8.3.1).
    pub const NEXT_HEADER_IBA: u8 = 0x1B;

    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut b = [0u8; Self::LEN];
        let word0 =
            (u32::from(Self::IP_VERSION) << 28) | (u32::from(self.traffic_class) << 20) | (self.flow_label & 0xF_FFFF);
        BigEndian::write_u32(&mut b[0..4], word0);
        BigEndian::write_u16(&mut b[4..6], self.payload_len);
        b[6] = self.next_header;
        b[7] = self.hop_limit;
        b[8..24].copy_from_slice(&self.sgid);
        b[24..40].copy_from_slice(&self.dgid);
        out.extend_from_slice(&b);
    }

    /// Decodes the GRH; the IP version must be 6 and the next header 0x1B.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let b = take(buf, 0, Self::LEN, "GRH")?;
        let word0 = BigEndian::read_u32(&b[0..4]);
        let version = (word0 >> 28) as u8;
        if version != Self::IP_VERSION {
            return Err(Error::GrhVersion(version));
        }
        if b[6] != Self::NEXT_HEADER_IBA {
            return Err(Error::NextHeader(b[6]));
        }
        let mut sgid = [0u8; 16];
        let mut dgid = [0u8; 16];
        sgid.copy_from_slice(&b[8..24]);
        dgid.copy_from_slice(&b[24..40]);
        Ok(Grh {
            traffic_class: (word0 >> 20) as u8,
            flow_label: word0 & 0xF_FFFF,
            payload_len: BigEndian::read_u16(&b[4..6]),
            next_header: b[6],
            hop_limit: b[7],
            sgid,
            dgid,
        })
    }
}

/// Base Transport Header, 12 bytes.
#[doc(alias = "rxe_bth")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bth {
    pub opcode: Opcode,
    /// SE: the receiver should raise a solicited event.
    pub solicited: bool,
    /// M: migration state.
    pub mig_req: bool,
    /// PadCnt (0–3); [`super::Packet::encode`] computes it from the payload length.
    pub pad: u8,
    /// TVer: transport header version, 0.
    pub tver: u8,
    pub pkey: u16,
    /// F and B: congestion notification bits (byte 4, bits 7 and 6).
    pub fecn: bool,
    pub becn: bool,
    /// Destination QP (24 bits).
    pub dest_qpn: u32,
    /// A: the responder must acknowledge this packet.
    pub ack_req: bool,
    /// Packet sequence number (24 bits).
    pub psn: u32,
}

impl Bth {
    pub const LEN: usize = 12;
    /// The default partition key every RoCE QP of ocrdma uses (`spec/datapath.md` §3.1).
    pub const DEFAULT_PKEY: u16 = 0xFFFF;

    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut b = [0u8; Self::LEN];
        b[0] = self.opcode.value();
        b[1] =
            (u8::from(self.solicited) << 7) | (u8::from(self.mig_req) << 6) | ((self.pad & 3) << 4) | (self.tver & 0xF);
        BigEndian::write_u16(&mut b[2..4], self.pkey);
        BigEndian::write_u32(
            &mut b[4..8],
            (u32::from(self.fecn) << 31) | (u32::from(self.becn) << 30) | (self.dest_qpn & MASK_24),
        );
        BigEndian::write_u32(&mut b[8..12], (u32::from(self.ack_req) << 31) | (self.psn & MASK_24));
        out.extend_from_slice(&b);
    }

    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let b = take(buf, 0, Self::LEN, "BTH")?;
        let qpn_word = BigEndian::read_u32(&b[4..8]);
        let psn_word = BigEndian::read_u32(&b[8..12]);
        Ok(Bth {
            opcode: Opcode::try_from(b[0])?,
            solicited: b[1] & 0x80 != 0,
            mig_req: b[1] & 0x40 != 0,
            pad: (b[1] >> 4) & 3,
            tver: b[1] & 0xF,
            pkey: BigEndian::read_u16(&b[2..4]),
            fecn: qpn_word & (1 << 31) != 0,
            becn: qpn_word & (1 << 30) != 0,
            dest_qpn: qpn_word & MASK_24,
            ack_req: psn_word & (1 << 31) != 0,
            psn: psn_word & MASK_24,
        })
    }
}

/// RDMA Extended Transport Header, 16 bytes: the remote buffer of a WRITE or READ.
#[doc(alias = "rxe_reth")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reth {
    pub va: u64,
    pub rkey: u32,
    /// The length of the whole message, not of this packet.
    pub dma_len: u32,
}

impl Reth {
    pub const LEN: usize = 16;

    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut b = [0u8; Self::LEN];
        BigEndian::write_u64(&mut b[0..8], self.va);
        BigEndian::write_u32(&mut b[8..12], self.rkey);
        BigEndian::write_u32(&mut b[12..16], self.dma_len);
        out.extend_from_slice(&b);
    }

    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let b = take(buf, 0, Self::LEN, "RETH")?;
        Ok(Reth {
            va: BigEndian::read_u64(&b[0..8]),
            rkey: BigEndian::read_u32(&b[8..12]),
            dma_len: BigEndian::read_u32(&b[12..16]),
        })
    }
}

/// ACK Extended Transport Header, 4 bytes: a syndrome and the message sequence number.
#[doc(alias = "rxe_aeth")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aeth {
    pub syndrome: Syndrome,
    /// MSN (24 bits): how many messages the responder has completed.
    pub msn: u32,
}

/// The AETH syndrome byte (IBTA vol 1 §9.7.5.1, Table 42): bits 6:5 the kind, 4:0 its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syndrome {
    /// 0b00: ACK with an end-to-end credit count (0x1F: credits not used).
    Ack { credits: u8 },
    /// 0b01: receiver not ready, with the 5-bit RNR timer code (see [`rnr_timer`]).
    RnrNak { timer: u8 },
    /// 0b11: NAK with an error code.
    Nak(NakCode),
    /// 0b10 (reserved): kept as received.
    Reserved(u8),
}

/// NAK codes (IBTA vol 1 Table 43).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NakCode {
    PsnSequenceError,
    InvalidRequest,
    RemoteAccessError,
    RemoteOperationalError,
    InvalidRdRequest,
    /// A reserved code, kept as received.
    Unknown(u8),
}

impl NakCode {
    fn value(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Unknown(v) => v & 0x1F,
        }
    }
    fn from_value(v: u8) -> Self {
        match v {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            other => NakCode::Unknown(other),
        }
    }
}

impl Syndrome {
    /// "No end-to-end credits": the credit count RC responders send when they do not count
    /// (IBTA vol 1 §9.7.7.2.5; `spec/datapath.md` §3.2: credits 0x1F).
    pub const ACK_NO_CREDITS: Syndrome = Syndrome::Ack { credits: 0x1F };

    pub fn value(self) -> u8 {
        match self {
            Syndrome::Ack { credits } => credits & 0x1F,
            Syndrome::RnrNak { timer } => 0x20 | (timer & 0x1F),
            Syndrome::Nak(code) => 0x60 | code.value(),
            Syndrome::Reserved(v) => v,
        }
    }

    pub fn from_value(v: u8) -> Self {
        match (v >> 5) & 3 {
            0 if v & 0x80 == 0 => Syndrome::Ack { credits: v & 0x1F },
            1 if v & 0x80 == 0 => Syndrome::RnrNak { timer: v & 0x1F },
            3 if v & 0x80 == 0 => Syndrome::Nak(NakCode::from_value(v & 0x1F)),
            _ => Syndrome::Reserved(v),
        }
    }
}

impl Aeth {
    pub const LEN: usize = 4;

    pub fn encode(&self, out: &mut Vec<u8>) {
        let word = (u32::from(self.syndrome.value()) << 24) | (self.msn & MASK_24);
        out.extend_from_slice(&word.to_be_bytes());
    }

    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let word = BigEndian::read_u32(take(buf, 0, Self::LEN, "AETH")?);
        Ok(Aeth { syndrome: Syndrome::from_value((word >> 24) as u8), msn: word & MASK_24 })
    }
}

/// Datagram Extended Transport Header, 8 bytes: UD's Q_Key and source QP.
#[doc(alias = "rxe_deth")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deth {
    pub qkey: u32,
    /// Source QP (24 bits).
    pub src_qpn: u32,
}

impl Deth {
    pub const LEN: usize = 8;

    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut b = [0u8; Self::LEN];
        BigEndian::write_u32(&mut b[0..4], self.qkey);
        BigEndian::write_u32(&mut b[4..8], self.src_qpn & MASK_24);
        out.extend_from_slice(&b);
    }

    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let b = take(buf, 0, Self::LEN, "DETH")?;
        Ok(Deth { qkey: BigEndian::read_u32(&b[0..4]), src_qpn: BigEndian::read_u32(&b[4..8]) & MASK_24 })
    }
}

/// The RNR NAK timer codes (IBTA vol 1 §9.7.5.2.8, Table 45; `rnrnak_usec` in rxe_comp.c) as
/// the time the requester waits before retrying. Code 0 is the longest, 655.36 ms.
pub fn rnr_timer(code: u8) -> std::time::Duration {
    const MICROS: [u64; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840, 5_120, 7_680,
        10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840, 245_760, 327_680, 491_520,
    ];
    std::time::Duration::from_micros(MICROS[usize::from(code & 0x1F)])
}

/// Immediate Data Extended Transport Header, 4 bytes, carried as it arrives (big-endian on the
/// wire; the verbs layer hands it to the consumer unchanged).
#[doc(alias = "rxe_immdt")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImmDt(pub u32);

impl ImmDt {
    pub const LEN: usize = 4;
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_be_bytes());
    }
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        Ok(ImmDt(BigEndian::read_u32(take(buf, 0, Self::LEN, "ImmDt")?)))
    }
}

/// Invalidate Extended Transport Header, 4 bytes: the rkey SEND_WITH_INV asks the receiver to
/// invalidate.
#[doc(alias = "rxe_ieth")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ieth {
    pub rkey: u32,
}

impl Ieth {
    pub const LEN: usize = 4;
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.rkey.to_be_bytes());
    }
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        Ok(Ieth { rkey: BigEndian::read_u32(take(buf, 0, Self::LEN, "IETH")?) })
    }
}
