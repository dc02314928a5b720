//! Unreliable datagrams (UD, and the GSI QP, which is UD on QP1): one SEND_ONLY packet per
//! message, addressed by the sender's address vector and the DETH, accepted by Q_Key, written
//! behind 40 bytes of GRH into the receive buffers (`spec/datapath.md` §3.3, §4.3; Linux's
//! qib_ud.c: "a GRH is expected to precede the data even if not present on the wire", byte
//! count = payload + 40; ocrdma reports every UD receive with `IB_WC_GRH`).
//!
//! Stateless helpers: the caller owns the QP's state (its Q_Key, next PSN, receive ring) and
//! supplies memory through [`Env`]; nothing here reads a clock or keeps a queue. UD has no
//! acknowledgement, no retransmission and no RNR: a datagram nobody can take is dropped.

use crate::Error;
use crate::packet::{Bth, Deth, EthHeader, Grh, ImmDt, MASK_24, Opcode, Packet};
use crate::rc::sgl::{gather, scatter, total};
use crate::rc::{Env, RecvWr, Sge, Status};

/// The GSI QP's number on the wire: QP1 is the general services QP (IBTA vol 1; `spec/datapath.md`
/// §3.1).
pub const GSI_QPN: u32 = 1;
/// The Q_Key every GSI datagram carries and QP1 accepts: `IB_QP1_QKEY` (Linux
/// include/rdma/ib_mad.h), the Q_Key ib_mad gives QP1 and puts in every MAD it sends.
#[doc(alias = "IB_QP1_QKEY")]
pub const GSI_QKEY: u32 = 0x8001_0000;
/// Bytes the receiver reserves at the start of every UD receive buffer for the GRH (IBTA vol 1
/// §11.4.1.2); the completion's byte count includes them.
pub const GRH_SPACE: usize = Grh::LEN;
/// The high bit of a Q_Key: a send work request whose Q_Key has it set sends the QP's own
/// Q_Key instead (IBTA vol 1 §10.2.5, as Linux's qib_ud.c and ipath_ud.c cite it).
const CONTROLLED_QKEY: u32 = 1 << 31;

/// One datagram to send: where it goes (Ethernet header and GRH from the address vector), to
/// which QP, and what it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datagram<'a> {
    pub eth: EthHeader,
    /// The GRH; its payload length is computed when encoded.
    pub grh: Grh,
    pub pkey: u16,
    /// The sending QP (the DETH's source QP).
    pub src_qpn: u32,
    /// The destination QP (the BTH's).
    pub dest_qpn: u32,
    /// The Q_Key for the DETH (see [`send_qkey`]).
    pub qkey: u32,
    /// The PSN of this packet: UD requesters count packets, receivers ignore the number.
    pub psn: u32,
    /// SE: the receiver should raise a solicited event.
    pub solicited: bool,
    /// Immediate data: SEND_ONLY with immediate.
    pub imm: Option<u32>,
    pub payload: &'a [u8],
}

impl Datagram<'_> {
    /// The whole RoCE v1 frame: SEND_ONLY (0x64) or SEND_ONLY with immediate (0x65), DETH,
    /// payload, pad, ICRC (IBTA vol 1 Table 38).
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let opcode = if self.imm.is_some() { Opcode::UdSendOnlyImm } else { Opcode::UdSendOnly };
        Packet {
            eth: self.eth,
            grh: self.grh,
            bth: Bth {
                opcode,
                solicited: self.solicited,
                mig_req: false,
                pad: 0,
                tver: 0,
                pkey: self.pkey,
                fecn: false,
                becn: false,
                dest_qpn: self.dest_qpn & MASK_24,
                ack_req: false,
                psn: self.psn & MASK_24,
            },
            deth: Some(Deth { qkey: self.qkey, src_qpn: self.src_qpn & MASK_24 }),
            reth: None,
            aeth: None,
            imm: self.imm.map(ImmDt),
            ieth: None,
            payload: self.payload,
        }
        .to_vec()
    }
}

/// The Q_Key a send carries: the work request's, or the QP's own when the work request's has
/// the high (controlled) bit set.
pub fn send_qkey(wr_qkey: u32, qp_qkey: u32) -> u32 {
    if wr_qkey & CONTROLLED_QKEY != 0 { qp_qkey } else { wr_qkey }
}

/// The Q_Key a QP accepts: [`GSI_QKEY`] on QP1, its own otherwise (every QP but QP0 checks
/// it, IBTA vol 1 §9.6.1.4.1 as qib_ud.c cites it; RoCE has no QP0).
pub fn accepted_qkey(qpn: u32, qp_qkey: u32) -> u32 {
    if qpn == GSI_QPN { GSI_QKEY } else { qp_qkey }
}

/// Why a UD QP does not take a packet; the packet is dropped silently (the caller may count
/// it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not a UD opcode (an RC packet addressed to a UD QP).
    Opcode(u8),
    /// The DETH's Q_Key is not the one the QP accepts.
    QKey { expected: u32, found: u32 },
}

/// Checks that `pkt` is a UD SEND the QP `qpn` with Q_Key `qp_qkey` accepts.
pub fn check(qpn: u32, qp_qkey: u32, pkt: &Packet<'_>) -> Result<Deth, Refusal> {
    let deth = match pkt.deth {
        Some(d) if pkt.bth.opcode.is_ud() => d,
        _ => return Err(Refusal::Opcode(pkt.bth.opcode.value())),
    };
    let expected = accepted_qkey(qpn, qp_qkey);
    if deth.qkey != expected {
        return Err(Refusal::QKey { expected, found: deth.qkey });
    }
    Ok(deth)
}

/// What a delivered datagram completes its receive with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Bytes written: the GRH's 40 and the payload (0 on an error).
    pub byte_len: u32,
    /// The sending QP (DETH).
    pub src_qpn: u32,
    pub imm: Option<u32>,
    /// Success, LocLenErr (the buffers are shorter than GRH + payload: nothing is written), or
    /// LocProtErr (an lkey check failed).
    pub status: Status,
}

/// Gathers a send's payload from `sges` through the environment (LOCAL_READ on each lkey) into
/// a new buffer; an lkey check that fails is [`Status::LocProtErr`].
pub fn gather_payload<E: Env>(env: &mut E, pd: u32, sges: &[Sge]) -> Result<Vec<u8>, Status> {
    let len = usize::try_from(total(sges)).map_err(|_| Status::LocLenErr)?;
    let mut buf = vec![0u8; len];
    gather(env, pd, sges, 0, &mut buf).map_err(|_| Status::LocProtErr)?;
    Ok(buf)
}

/// Writes a UD SEND `pkt` (already [`check`]ed) into the receive `recv`: the GRH as it arrived
/// in the first 40 bytes, the payload after it (LOCAL_WRITE on each lkey, PD `pd`).
pub fn deliver<E: Env>(env: &mut E, pd: u32, recv: &RecvWr, pkt: &Packet<'_>) -> Received {
    let src_qpn = pkt.deth.map_or(0, |d| d.src_qpn);
    let imm = pkt.imm.map(|i| i.0);
    let fail = |status| Received { byte_len: 0, src_qpn, imm, status };
    let len = GRH_SPACE + pkt.payload.len();
    if total(&recv.sges) < len as u64 {
        return fail(Status::LocLenErr);
    }
    let mut grh = Vec::with_capacity(GRH_SPACE);
    pkt.grh.encode(&mut grh);
    let written = scatter(env, pd, &recv.sges, 0, &grh)
        .and_then(|()| scatter(env, pd, &recv.sges, GRH_SPACE as u64, pkt.payload));
    match written {
        Ok(()) => Received { byte_len: len as u32, src_qpn, imm, status: Status::Success },
        Err(_) => fail(Status::LocProtErr),
    }
}

#[cfg(test)]
mod tests;
