//! RDMA GET_RDMA_STATS (RDMA subsystem 10, opcode 27): the RoCE engine's counters, which ocrdma
//! reads for the device's `hw_counters` and its debugfs files (`ocrdma_mbx_rdma_stats` in
//! ocrdma_hw.c; `ocrdma_rdma_stats_req` / `ocrdma_rdma_stats_resp` in ocrdma_sli.h).

use crate::command::Command;
use crate::header::{HEADER_LEN, Subsystem};
use crate::wire::{Reader, Wire, WireError, Writer};

/// GET_RDMA_STATS: non-embedded, version 0, one buffer the size of the response (1848 bytes);
/// `reset_stats` u8 @16 clears the counters after reading them.
#[doc(alias = "OCRDMA_CMD_GET_RDMA_STATS")]
#[doc(alias = "ocrdma_rdma_stats_req")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GetRdmaStats {
    /// Clear the counters once read.
    pub reset: bool,
}

impl Wire for GetRdmaStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u8("reset_stats", self.reset.into())?;
        w.zeros("rsvd", 3)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { reset: r.u8("reset_stats")? != 0 })
    }
}

impl Command for GetRdmaStats {
    const NAME: &'static str = "RDMA_GET_RDMA_STATS";
    const SUBSYSTEM: Subsystem = Subsystem::Rdma;
    const OPCODE: u8 = 27;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = HEADER_LEN + RdmaStats::LEN;
    type Response = RdmaStats;
}

/// The GET_RDMA_STATS response body, `ocrdma_rdma_stats_resp` after its header: resource counts
/// (active, then high-water marks, 136 bytes each) @16 and @152, doorbell errors @288, WQE
/// counts @320, TX @416, TX QP errors @512, RX @544, RX QP errors @616, and two debug areas
/// (400 bytes @648, 800 bytes @1048). Kept as raw bytes: no tool here interprets them, and the
/// emulator, which carries no RDMA traffic, reports them all zero.
#[doc(alias = "ocrdma_rdma_stats_resp")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RdmaStats(pub Vec<u8>);

impl RdmaStats {
    /// Size of the body: 1848 bytes of `ocrdma_rdma_stats_resp` (packed) less its header.
    pub const LEN: usize = 1832;

    /// Every counter zero.
    pub fn zeroed() -> Self {
        Self(vec![0; Self::LEN])
    }
}

impl Wire for RdmaStats {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.0.len() != Self::LEN {
            return Err(WireError {
                field: "ocrdma_rdma_stats_resp",
                offset: w.position(),
                needed: Self::LEN,
                available: self.0.len(),
            });
        }
        w.bytes("ocrdma_rdma_stats_resp", &self.0)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self(r.bytes("ocrdma_rdma_stats_resp", Self::LEN)?.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_response, encode_request};

    #[test]
    fn request_golden_bytes() {
        let buf = encode_request(&GetRdmaStats { reset: true }).unwrap();
        assert_eq!(buf.len(), 1848);
        // opcode 27 (0x1b), subsystem 10, request_length 1832 (0x728); @16 reset_stats 1.
        assert_eq!(hex::encode(&buf[..20]), "1b0a000000000000280700000000000001000000");
        assert!(buf[20..].iter().all(|&b| b == 0));
    }

    #[test]
    fn response_is_the_whole_body_or_a_named_error() {
        let mut buf = vec![0u8; 1848];
        buf[..16].copy_from_slice(&hex::decode("1b0a0000000000002807000028070000").unwrap());
        buf[1047] = 7;
        let (_, stats) = decode_response::<GetRdmaStats>(&buf).unwrap();
        assert_eq!(stats.0[1047 - 16], 7);
        let mut out = vec![0u8; 1848];
        stats.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(out[16..], buf[16..]);
        buf[8] = 0x20; // response_length 0x720: 8 bytes short
        let err = decode_response::<GetRdmaStats>(&buf).unwrap_err();
        assert_eq!((err.field, err.needed, err.available), ("ocrdma_rdma_stats_resp", 1832, 1824));
        assert!(RdmaStats(vec![0; 3]).encode(&mut Writer::at(&mut out, 16)).is_err());
    }
}
