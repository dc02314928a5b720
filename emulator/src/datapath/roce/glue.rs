//! The RC transport's environment on the device: memory through the MR table with the key
//! checks and translation of spec/datapath.md §3.2, completions as ocrdma's CQEs (§2.3), frames
//! collected for the port's wire.

use oce_mailbox::entries::{Cqe, cqe_status};
use oce_roce::rc::{self, Access, Completion, MemError, MemRef, Status};

use super::{RoceQueues, WorkQueue};

/// One QP's view of the device while the transport runs.
pub(super) struct Glue<'a> {
    pub(super) queues: &'a mut dyn RoceQueues,
    /// The QP's id (its CQEs' `qpn`).
    pub(super) qp: u16,
    /// lkey 0 names bus addresses on this QP (`ZERO_LKEYEN`, kernel QPs).
    pub(super) lkey0: bool,
    /// The packet being received had SE set: its receive completion is solicited.
    pub(super) solicited: bool,
    /// Frames to put on the wire, in order.
    pub(super) frames: &'a mut Vec<Vec<u8>>,
}

/// The CQE status code of a transport status (`enum OCRDMA_CQE_STATUS`).
fn status_code(status: Status) -> u8 {
    match status {
        Status::Success => cqe_status::SUCCESS,
        Status::LocLenErr => cqe_status::LOC_LEN_ERR,
        Status::LocProtErr => cqe_status::LOC_PROT_ERR,
        Status::RemAccessErr => cqe_status::REM_ACCESS_ERR,
        Status::RemInvReqErr => cqe_status::REM_INV_REQ_ERR,
        Status::RemOpErr => cqe_status::REM_OP_ERR,
        Status::RetryExcErr => cqe_status::RETRY_EXC_ERR,
        Status::RnrRetryExcErr => cqe_status::RNR_RETRY_EXC_ERR,
    }
}

impl Glue<'_> {
    /// The bus-address pieces `mem` covers, after the key checks: lkey 0 on an LKEY0 QP is the
    /// bus address itself; any other key must name a complete region with exactly that key, the
    /// QP's PD, [va, va + len) inside it and the access bit the use needs; the address is
    /// translated through the region's PBEs (offset = va − region va + fbo, page = offset /
    /// page size).
    fn resolve(&self, mem: MemRef) -> Result<Vec<(u64, usize)>, MemError> {
        let local = matches!(mem.access, Access::LocalRead | Access::LocalWrite);
        if mem.key == 0 && local && self.lkey0 {
            return Ok(vec![(mem.va, mem.len)]);
        }
        let mr = self.queues.memory_region(mem.key).ok_or(MemError::Key)?;
        if u32::from(mr.pd_id) != mem.pd {
            return Err(MemError::Pd);
        }
        let allowed = match mem.access {
            Access::LocalRead => true,
            Access::LocalWrite => mr.access.local_write,
            Access::RemoteRead => mr.access.remote_read,
            Access::RemoteWrite => mr.access.remote_write,
        };
        if !allowed {
            return Err(MemError::Access);
        }
        // A zero-based region is addressed by offset; any other by its virtual address.
        let base = if mr.access.zero_based { 0 } else { mr.va };
        let start = mem.va.checked_sub(base).ok_or(MemError::Range)?;
        let end = start.checked_add(mem.len as u64).ok_or(MemError::Range)?;
        if end > mr.len {
            return Err(MemError::Range);
        }
        if mem.len == 0 {
            return Ok(Vec::new());
        }
        if mr.page_len == 0 {
            return Err(MemError::Fault);
        }
        let mut pieces = Vec::new();
        let (mut offset, mut left) = (start + mr.first_byte_offset, mem.len as u64);
        while left > 0 {
            let page = *mr.pages.get((offset / mr.page_len) as usize).ok_or(MemError::Fault)?;
            let within = offset % mr.page_len;
            let n = left.min(mr.page_len - within);
            pieces.push((page + within, n as usize));
            offset += n;
            left -= n;
        }
        Ok(pieces)
    }
}

impl rc::Env for Glue<'_> {
    fn read(&mut self, mem: MemRef, buf: &mut [u8]) -> Result<(), MemError> {
        let mut at = 0;
        for (addr, n) in self.resolve(mem)? {
            let end = (at + n).min(buf.len());
            if !self.queues.dma_read(addr, &mut buf[at..end]) {
                return Err(MemError::Fault);
            }
            at = end;
        }
        Ok(())
    }

    fn write(&mut self, mem: MemRef, data: &[u8]) -> Result<(), MemError> {
        let mut at = 0;
        for (addr, n) in self.resolve(mem)? {
            let end = (at + n).min(data.len());
            if !self.queues.dma_write(addr, &data[at..end]) {
                return Err(MemError::Fault);
            }
            at = end;
        }
        Ok(())
    }

    /// A peer's SEND with invalidate: the same region rules as LKEY_INV (see
    /// [`RoceQueues::invalidate`]).
    fn invalidate(&mut self, rkey: u32, pd: u32) -> Result<(), MemError> {
        let pd = u16::try_from(pd).map_err(|_| MemError::Pd)?;
        self.queues.invalidate(pd, rkey).map_err(|_| MemError::Key)
    }

    fn transmit(&mut self, frame: &[u8]) {
        self.frames.push(frame.to_vec());
    }

    /// The SQ CQE carries the WQE index (the work request's id); the RQ CQE the immediate data
    /// or the invalidated rkey, the buffer tag, and the IMM / WRITE_IMM / INVALIDATE flags. An
    /// error is solicited (it ends a solicited-only arming), as is a receive whose last packet
    /// had SE set.
    fn complete(&mut self, _qpn: u32, completion: Completion) {
        let (queue, cqe, solicited) = match completion {
            Completion::Send { wr_id, byte_len, status, .. } => {
                let cqe = Cqe::sq(wr_id as u16, byte_len, self.qp, status_code(status));
                (WorkQueue::Sq, cqe, status != Status::Success)
            }
            Completion::Recv { wr_id, byte_len, imm, invalidate, write_imm, status } => {
                let mut flags = 0;
                if imm.is_some() {
                    flags |= Cqe::IMM;
                }
                if write_imm {
                    flags |= Cqe::WRITE_IMM;
                }
                if invalidate.is_some() {
                    flags |= Cqe::INVALIDATE;
                }
                let w0 = imm.or(invalidate).unwrap_or(0);
                let cqe = Cqe::rq(w0, byte_len, self.qp, wr_id as u16, status_code(status), flags);
                (WorkQueue::Rq, cqe, status != Status::Success || self.solicited)
            }
        };
        // Refused for a QP that is gone or in ERR: then nothing is posted, as §2.3 demands.
        self.queues.post_cqe(self.qp, queue, &cqe, solicited);
    }

    /// ocrdma's async QP events need the async MCC event path, which the model does not
    /// write: the requester side learns of the error from its NAK's error CQE.
    fn event(&mut self, _qpn: u32, _event: rc::QpEvent) {}
}
