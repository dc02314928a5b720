//! The GET_RDMA_STATS blocks about what the host set up and what its queues consumed, @16
//! through @415 of the response (`ocrdma_rdma_stats_resp`, ocrdma_sli.h, `__packed`): the
//! resources in use and their high-water marks (`act_rsrc_stats`, `th_rsrc_stats`), doorbell
//! errors (`db_err_stats`) and the WQEs the SQs consumed (`wqe_stats`). Offsets as in
//! [`super`]: from the start of the command buffer, header included; every field a
//! little-endian dword, a 64-bit counter its `_lo` dword then its `_hi` dword.

use crate::wire::{Reader, Wire, WireError, Writer};

/// Resources in use (`act_rsrc_stats` @16) or their high-water marks (`th_rsrc_stats` @152):
/// 27 dwords with reserved ones at +24 and +36, then `rsvd2[7]` (`struct ocrdma_rsrc_stats`,
/// 136 bytes). ocrdma prints them in debugfs `resource_stats` and overwrites the two PD counts
/// with its own when it preallocated PDs (`ocrdma_update_stats`).
#[doc(alias = "ocrdma_rsrc_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResourceStats {
    /// `dpp_pds` +0.
    pub dpp_pds: u32,
    /// `non_dpp_pds` +4.
    pub non_dpp_pds: u32,
    /// `rc_dpp_qps` +8.
    pub rc_dpp_qps: u32,
    /// `uc_dpp_qps` +12.
    pub uc_dpp_qps: u32,
    /// `ud_dpp_qps` +16.
    pub ud_dpp_qps: u32,
    /// `rc_non_dpp_qps` +20 (then `rsvd` +24).
    pub rc_non_dpp_qps: u32,
    /// `uc_non_dpp_qps` +28.
    pub uc_non_dpp_qps: u32,
    /// `ud_non_dpp_qps` +32 (then `rsvd1` +36).
    pub ud_non_dpp_qps: u32,
    /// `srqs` +40.
    pub srqs: u32,
    /// `rbqs` +44.
    pub rbqs: u32,
    /// Non-shared MRs by size, `r64K_nsmr` +48 through `r128G_to_higher_nsmr` +80: up to 64 KiB,
    /// 64 KiB–2 MiB, 2–44 MiB, 44 MiB–1 GiB, 1–4 GiB, 4–32 GiB, 32–64 GiB, 64–128 GiB, larger.
    pub nsmr_by_size: [u32; 9],
    /// `embedded_nsmr` +84.
    pub embedded_nsmr: u32,
    /// `frmr` +88: fast-register MRs.
    pub frmr: u32,
    /// `prefetch_qps` +92.
    pub prefetch_qps: u32,
    /// `ondemand_qps` +96.
    pub ondemand_qps: u32,
    /// `phy_mr` +100.
    pub phy_mr: u32,
    /// `mw` +104: memory windows (then `rsvd2[7]` +108).
    pub mw: u32,
}

impl ResourceStats {
    /// Bytes on the wire.
    pub const LEN: usize = 136;
}

impl Wire for ResourceStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("dpp_pds", self.dpp_pds)?;
        w.u32("non_dpp_pds", self.non_dpp_pds)?;
        w.u32("rc_dpp_qps", self.rc_dpp_qps)?;
        w.u32("uc_dpp_qps", self.uc_dpp_qps)?;
        w.u32("ud_dpp_qps", self.ud_dpp_qps)?;
        w.u32("rc_non_dpp_qps", self.rc_non_dpp_qps)?;
        w.zeros("rsvd", 4)?;
        w.u32("uc_non_dpp_qps", self.uc_non_dpp_qps)?;
        w.u32("ud_non_dpp_qps", self.ud_non_dpp_qps)?;
        w.zeros("rsvd1", 4)?;
        w.u32("srqs", self.srqs)?;
        w.u32("rbqs", self.rbqs)?;
        for &n in &self.nsmr_by_size {
            w.u32("nsmr", n)?;
        }
        w.u32("embedded_nsmr", self.embedded_nsmr)?;
        w.u32("frmr", self.frmr)?;
        w.u32("prefetch_qps", self.prefetch_qps)?;
        w.u32("ondemand_qps", self.ondemand_qps)?;
        w.u32("phy_mr", self.phy_mr)?;
        w.u32("mw", self.mw)?;
        w.zeros("rsvd2", 28)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let (dpp_pds, non_dpp_pds) = (r.u32("dpp_pds")?, r.u32("non_dpp_pds")?);
        let (rc_dpp_qps, uc_dpp_qps, ud_dpp_qps) = (r.u32("rc_dpp_qps")?, r.u32("uc_dpp_qps")?, r.u32("ud_dpp_qps")?);
        let rc_non_dpp_qps = r.u32("rc_non_dpp_qps")?;
        r.skip("rsvd", 4)?;
        let (uc_non_dpp_qps, ud_non_dpp_qps) = (r.u32("uc_non_dpp_qps")?, r.u32("ud_non_dpp_qps")?);
        r.skip("rsvd1", 4)?;
        let (srqs, rbqs) = (r.u32("srqs")?, r.u32("rbqs")?);
        let mut nsmr_by_size = [0u32; 9];
        for n in &mut nsmr_by_size {
            *n = r.u32("nsmr")?;
        }
        let stats = Self {
            dpp_pds,
            non_dpp_pds,
            rc_dpp_qps,
            uc_dpp_qps,
            ud_dpp_qps,
            rc_non_dpp_qps,
            uc_non_dpp_qps,
            ud_non_dpp_qps,
            srqs,
            rbqs,
            nsmr_by_size,
            embedded_nsmr: r.u32("embedded_nsmr")?,
            frmr: r.u32("frmr")?,
            prefetch_qps: r.u32("prefetch_qps")?,
            ondemand_qps: r.u32("ondemand_qps")?,
            phy_mr: r.u32("phy_mr")?,
            mw: r.u32("mw")?,
        };
        r.skip("rsvd2", 28)?;
        Ok(stats)
    }
}

/// Doorbell errors, @288 (`struct ocrdma_db_err_stats`, 32 bytes: four dwords, `rsvd[4]`).
#[doc(alias = "ocrdma_db_err_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DoorbellErrorStats {
    /// `sq_doorbell_errors` @288.
    pub sq_doorbell_errors: u32,
    /// `cq_doorbell_errors` @292.
    pub cq_doorbell_errors: u32,
    /// `rq_srq_doorbell_errors` @296.
    pub rq_srq_doorbell_errors: u32,
    /// `cq_overflow_errors` @300.
    pub cq_overflow_errors: u32,
}

impl DoorbellErrorStats {
    /// Bytes on the wire.
    pub const LEN: usize = 32;
}

impl Wire for DoorbellErrorStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("sq_doorbell_errors", self.sq_doorbell_errors)?;
        w.u32("cq_doorbell_errors", self.cq_doorbell_errors)?;
        w.u32("rq_srq_doorbell_errors", self.rq_srq_doorbell_errors)?;
        w.u32("cq_overflow_errors", self.cq_overflow_errors)?;
        w.zeros("rsvd", 16)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let stats = Self {
            sq_doorbell_errors: r.u32("sq_doorbell_errors")?,
            cq_doorbell_errors: r.u32("cq_doorbell_errors")?,
            rq_srq_doorbell_errors: r.u32("rq_srq_doorbell_errors")?,
            cq_overflow_errors: r.u32("cq_overflow_errors")?,
        };
        r.skip("rsvd", 16)?;
        Ok(stats)
    }
}

/// Work requests the SQs consumed, by kind, @320 (`struct ocrdma_wqe_stats`, 96 bytes), printed
/// in debugfs `wqe_stats`.
#[doc(alias = "ocrdma_wqe_stats")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WqeStats {
    /// `large_send_rc_wqes_lo`/`_hi` @320/@324.
    pub large_send_rc_wqes: u64,
    /// `large_write_rc_wqes_lo`/`_hi` @328/@332 (then `rsvd[4]` @336).
    pub large_write_rc_wqes: u64,
    /// `read_wqes_lo`/`_hi` @352/@356.
    pub read_wqes: u64,
    /// `frmr_wqes_lo`/`_hi` @360/@364: fast-register WQEs.
    pub frmr_wqes: u64,
    /// `mw_bind_wqes_lo`/`_hi` @368/@372.
    pub mw_bind_wqes: u64,
    /// `invalidate_wqes_lo`/`_hi` @376/@380 (then `rsvd1[2]` @384).
    pub invalidate_wqes: u64,
    /// `dpp_wqe_drops` @392 (then `rsvd2[5]` @396).
    pub dpp_wqe_drops: u32,
}

impl WqeStats {
    /// Bytes on the wire.
    pub const LEN: usize = 96;
}

impl Wire for WqeStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u64("large_send_rc_wqes", self.large_send_rc_wqes)?;
        w.u64("large_write_rc_wqes", self.large_write_rc_wqes)?;
        w.zeros("rsvd", 16)?;
        w.u64("read_wqes", self.read_wqes)?;
        w.u64("frmr_wqes", self.frmr_wqes)?;
        w.u64("mw_bind_wqes", self.mw_bind_wqes)?;
        w.u64("invalidate_wqes", self.invalidate_wqes)?;
        w.zeros("rsvd1", 8)?;
        w.u32("dpp_wqe_drops", self.dpp_wqe_drops)?;
        w.zeros("rsvd2", 20)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let large_send_rc_wqes = r.u64("large_send_rc_wqes")?;
        let large_write_rc_wqes = r.u64("large_write_rc_wqes")?;
        r.skip("rsvd", 16)?;
        let (read_wqes, frmr_wqes) = (r.u64("read_wqes")?, r.u64("frmr_wqes")?);
        let (mw_bind_wqes, invalidate_wqes) = (r.u64("mw_bind_wqes")?, r.u64("invalidate_wqes")?);
        r.skip("rsvd1", 8)?;
        let dpp_wqe_drops = r.u32("dpp_wqe_drops")?;
        r.skip("rsvd2", 20)?;
        Ok(Self {
            large_send_rc_wqes,
            large_write_rc_wqes,
            read_wqes,
            frmr_wqes,
            mw_bind_wqes,
            invalidate_wqes,
            dpp_wqe_drops,
        })
    }
}
