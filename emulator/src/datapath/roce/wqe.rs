//! ocrdma's SQ WQEs and RQEs (spec/datapath.md §2.3, `ocrdma_sli.h` `struct ocrdma_hdr_wqe`,
//! `ocrdma_verbs.c` `ocrdma_post_send`/`ocrdma_build_rqe`) as the RC transport's work requests.
//! Anything the model cannot carry out, or cannot parse, is an error for the caller to complete
//! with an error CQE.

use oce_mailbox::entries::{
    Rqe, SGE_LEN, Sge, TYPE_LKEY, WQE_HEADER_LEN, WqeHeader, wqe_flag as flag, wqe_opcode as opcode,
};
use oce_mailbox::wire::{Reader, Wire};
use oce_roce::rc::{self, Data, Remote, SendOp, SendWr};

/// Why a WQE or RQE became no work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadEntry {
    /// The header's size is shorter than its layout or longer than the ring's entry.
    Size,
    /// An opcode ocrdma never posts on an RC SQ (FR_MR and LKEY_INV are [`super::local`]'s).
    Opcode(u8),
    /// Inline data longer than the entry holds.
    Inline,
}

/// The SGEs of `bytes[from..size]`, as many as fit whole.
pub(super) fn sges(bytes: &[u8], from: usize, size: usize) -> Result<Vec<rc::Sge>, BadEntry> {
    let mut r = Reader::new(bytes.get(from..size).ok_or(BadEntry::Size)?);
    (0..(size - from) / SGE_LEN)
        .map(|_| Sge::decode(&mut r).map(|s| rc::Sge { addr: s.addr, len: s.len, lkey: s.lrkey }))
        .collect::<Result<_, _>>()
        .map_err(|_| BadEntry::Size)
}

/// SQ entry `index` (its bytes `bytes`, a whole ring entry) as a send work request whose
/// `wr_id` is the index, which the SQ CQE carries back (`OCRDMA_CQE_WQEIDX`).
pub(crate) fn send_wr(bytes: &[u8], index: u32) -> Result<SendWr, BadEntry> {
    let hdr = WqeHeader::decode(&mut Reader::new(bytes)).map_err(|_| BadEntry::Size)?;
    let size = hdr.size_bytes();
    if size < WQE_HEADER_LEN || size > bytes.len() {
        return Err(BadEntry::Size);
    }
    let (op, data_at) = match hdr.opcode() {
        opcode::SEND if hdr.has(flag::INV) => (SendOp::SendInv(hdr.dword2), WQE_HEADER_LEN),
        opcode::SEND if hdr.has(flag::IMM) => (SendOp::SendImm(hdr.dword2), WQE_HEADER_LEN),
        opcode::SEND => (SendOp::Send, WQE_HEADER_LEN),
        op @ (opcode::WRITE | opcode::READ) => {
            // The remote SGE (raddr, rkey, len) at +16, the local data at +32.
            let at = WQE_HEADER_LEN + SGE_LEN;
            let raw = bytes.get(WQE_HEADER_LEN..at).filter(|_| size >= at).ok_or(BadEntry::Size)?;
            let remote = Sge::decode(&mut Reader::new(raw)).map_err(|_| BadEntry::Size)?;
            let remote = Remote { addr: remote.addr, rkey: remote.lrkey };
            match op {
                opcode::READ => (SendOp::Read(remote), at),
                _ if hdr.has(flag::IMM) => (SendOp::WriteImm(remote, hdr.dword2), at),
                _ => (SendOp::Write(remote), at),
            }
        }
        other => return Err(BadEntry::Opcode(other)),
    };
    let data = if hdr.wqe_type() == TYPE_LKEY {
        Data::Sges(sges(bytes, data_at, size)?)
    } else {
        // ocrdma_build_inline_sges: total_len bytes right after the header (and remote SGE).
        let end = data_at.checked_add(hdr.total_len as usize).ok_or(BadEntry::Inline)?;
        Data::Inline(bytes.get(data_at..end).filter(|_| end <= size).ok_or(BadEntry::Inline)?.to_vec())
    };
    Ok(SendWr {
        wr_id: u64::from(index),
        op,
        data,
        signaled: hdr.has(flag::SIG),
        solicited: hdr.has(flag::SOLICIT),
        fence: hdr.flags() & (flag::FENCE_L | flag::FENCE_R) != 0,
    })
}

/// An RQE as a receive work request; `wr_id` is its tag (`rsvd_tag`, dword 1), which the RQ
/// CQE's buffer tag carries back.
pub(crate) fn recv_wr(bytes: &[u8]) -> Result<rc::RecvWr, BadEntry> {
    let rqe = Rqe::decode(&mut Reader::new(bytes)).map_err(|_| BadEntry::Size)?;
    if rqe.header.size_bytes() < WQE_HEADER_LEN || rqe.header.size_bytes() > bytes.len() {
        return Err(BadEntry::Size);
    }
    let sges = rqe.sges.iter().map(|s| rc::Sge { addr: s.addr, len: s.len, lkey: s.lrkey }).collect();
    Ok(rc::RecvWr { wr_id: u64::from(rqe.header.dword1), sges })
}
