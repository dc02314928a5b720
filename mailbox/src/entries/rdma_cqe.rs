//! What an RDMA adapter writes to and reads from host memory besides the rings' work entries:
//! the 16-byte CQE in its three shapes (SQ, RQ, UD/GSI) and the 64-byte address vector of the
//! AH table (ocrdma_sli.h `ocrdma_cqe`, `OCRDMA_CQE_*`, `ocrdma_av`, `ocrdma_eth_vlan`,
//! `ocrdma_grh`; read by ocrdma_verbs.c `ocrdma_poll_hwcq`, written by ocrdma_ah.c
//! `set_av_attr`; spec/datapath.md §2.3).

use crate::wire::{Reader, Wire, WireError, Writer};

/// Bytes of a CQE.
pub const CQE_LEN: usize = 16;
/// Bytes of an AV entry in the AH table (`sizeof(struct ocrdma_av)`, packed).
pub const AV_LEN: usize = 64;

/// CQE status codes, w3 bits 23:16 (`enum OCRDMA_CQE_STATUS`; UD CQEs carry the low 3 bits in
/// 26:24).
pub mod cqe_status {
    /// Success.
    pub const SUCCESS: u8 = 0;
    /// Local length error.
    pub const LOC_LEN_ERR: u8 = 1;
    /// Local QP operation error.
    pub const LOC_QP_OP_ERR: u8 = 2;
    /// Local protection error.
    pub const LOC_PROT_ERR: u8 = 4;
    /// Flushed (the driver writes these itself).
    pub const WR_FLUSH_ERR: u8 = 5;
    /// Local access error.
    pub const LOC_ACCESS_ERR: u8 = 8;
    /// Remote invalid request.
    pub const REM_INV_REQ_ERR: u8 = 9;
    /// Remote access error.
    pub const REM_ACCESS_ERR: u8 = 10;
    /// Remote operation error.
    pub const REM_OP_ERR: u8 = 11;
    /// Transport retries exceeded.
    pub const RETRY_EXC_ERR: u8 = 12;
    /// RNR retries exceeded.
    pub const RNR_RETRY_EXC_ERR: u8 = 13;
    /// General error.
    pub const GENERAL_ERR: u8 = 21;
}

/// A CQE as four dwords. w3 bit 31 is `valid` (Skyhawk: the device sets it, the host clears
/// it), bit 29 the queue type (0 SQ, 1 RQ).
#[doc(alias = "ocrdma_cqe")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cqe(pub [u32; 4]);

impl Cqe {
    /// w3 bit 31 (`OCRDMA_CQE_VALID`).
    pub const VALID: u32 = 1 << 31;
    /// w3 bit 30: the SEND invalidated `w0`'s rkey (`OCRDMA_CQE_INVALIDATE`).
    pub const INVALIDATE: u32 = 1 << 30;
    /// w3 bit 29: an RQ completion (`OCRDMA_CQE_QTYPE`).
    pub const QTYPE_RQ: u32 = 1 << 29;
    /// w3 bit 28: with immediate data in `w0` (`OCRDMA_CQE_IMM`).
    pub const IMM: u32 = 1 << 28;
    /// w3 bit 27: an RDMA WRITE with immediate (`OCRDMA_CQE_WRITE_IMM`).
    pub const WRITE_IMM: u32 = 1 << 27;

    /// A send completion: the WQE index @w0 15:0, bytes @w1, QP @w2 15:0, status @w3 23:16.
    pub fn sq(wqe_index: u16, bytes: u32, qpn: u16, status: u8) -> Self {
        Self([wqe_index.into(), bytes, qpn.into(), Self::VALID | (u32::from(status) << 16)])
    }

    /// A receive completion on an RC QP: immediate data or the invalidated rkey @w0, bytes
    /// @w1, QP 15:0 and buffer tag 31:16 @w2; `flags` is any of INVALIDATE, IMM, WRITE_IMM.
    pub fn rq(imm_or_rkey: u32, rxlen: u32, qpn: u16, buftag: u16, status: u8, flags: u32) -> Self {
        let w3 = Self::VALID | Self::QTYPE_RQ | (flags & (Self::INVALIDATE | Self::IMM | Self::WRITE_IMM));
        Self([imm_or_rkey, rxlen, (u32::from(buftag) << 16) | u32::from(qpn), w3 | (u32::from(status) << 16)])
    }

    /// A receive completion on a UD or GSI QP: length (GRH included) @w1 28:16 and P_Key
    /// index 15:0, QP @w2, status (3 bits) @w3 26:24 and the source QP @w3 23:0.
    pub fn ud(len: u16, pkey_index: u16, qpn: u16, status: u8, src_qp: u32) -> Self {
        let w1 = (u32::from(len & 0x1FFF) << 16) | u32::from(pkey_index);
        let w3 = Self::VALID | Self::QTYPE_RQ | (u32::from(status & 7) << 24) | (src_qp & 0xFF_FFFF);
        Self([0, w1, qpn.into(), w3])
    }

    /// The valid bit.
    pub fn is_valid(self) -> bool {
        self.0[3] & Self::VALID != 0
    }
    /// True for a send completion (queue type 0).
    pub fn is_sq(self) -> bool {
        self.0[3] & Self::QTYPE_RQ == 0
    }
    /// The status of an SQ or RC RQ completion (w3 23:16).
    pub fn status(self) -> u8 {
        (self.0[3] >> 16) as u8
    }
    /// The QP (w2 15:0); 0 means "discarded" to ocrdma.
    pub fn qpn(self) -> u16 {
        self.0[2] as u16
    }
    /// The send completion's WQE index.
    pub fn wqe_index(self) -> u16 {
        self.0[0] as u16
    }
}

impl Wire for Cqe {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        self.0.iter().try_for_each(|&word| w.u32("cqe", word))
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self([r.u32("cqe.w0")?, r.u32("cqe.w1")?, r.u32("cqe.w2")?, r.u32("cqe.flags_status_srcqpn")?]))
    }
}

/// The RoCE ethertype (`OCRDMA_ROCE_ETH_TYPE`).
pub const ROCE_ETHERTYPE: u16 = 0x8915;
/// The 802.1Q TPID.
const VLAN_TPID: u16 = 0x8100;

/// The GRH of an AV, big-endian on the wire (`ocrdma_grh`, 42 bytes with its trailing pad).
#[doc(alias = "ocrdma_grh")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AvGrh {
    /// `tclass_flow`: IP version 31:28 (6), traffic class 27:20, flow label 19:0.
    pub tclass_flow: u32,
    /// `pdid_hoplimit`: the payload-length field, which carries the PD (31:16) for the device
    /// to overwrite, next header 15:8 (0x1B), hop limit 7:0.
    pub pdid_hoplimit: u32,
    /// Source GID.
    pub sgid: [u8; 16],
    /// Destination GID.
    pub dgid: [u8; 16],
}

/// One AH-table entry as ocrdma writes it: an Ethernet header (with an 802.1Q tag when
/// `valid` bit 1 says so), the GRH straight after it (@14 untagged, @18 tagged), and the
/// little-endian `valid` dword @60 (bit 7 entry in use, bit 1 VLAN).
#[doc(alias = "ocrdma_av")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Av {
    /// Destination MAC.
    pub dmac: [u8; 6],
    /// Source MAC.
    pub smac: [u8; 6],
    /// The 802.1Q TCI when tagged.
    pub vlan_tag: Option<u16>,
    /// The GRH.
    pub grh: AvGrh,
    /// The `valid` dword.
    pub valid: u32,
}

impl Av {
    /// `valid` bit 7: the entry is in use (`OCRDMA_AV_VALID`).
    pub const VALID: u32 = 1 << 7;
    /// `valid` bit 1: tagged (`OCRDMA_AV_VLAN_VALID`).
    pub const VLAN_VALID: u32 = 1 << 1;

    /// The PD recorded in the GRH's payload-length field.
    pub fn pd_id(&self) -> u16 {
        (self.grh.pdid_hoplimit >> 16) as u16
    }
}

impl Wire for Av {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let start = w.position();
        w.bytes("dmac", &self.dmac)?;
        w.bytes("smac", &self.smac)?;
        match self.vlan_tag {
            Some(tci) => {
                w.bytes("eth_type", &VLAN_TPID.to_be_bytes())?;
                w.bytes("vlan_tag", &tci.to_be_bytes())?;
                w.bytes("roce_eth_type", &ROCE_ETHERTYPE.to_be_bytes())?;
            }
            None => w.bytes("eth_type", &ROCE_ETHERTYPE.to_be_bytes())?,
        }
        w.bytes("tclass_flow", &self.grh.tclass_flow.to_be_bytes())?;
        w.bytes("pdid_hoplimit", &self.grh.pdid_hoplimit.to_be_bytes())?;
        w.bytes("sgid", &self.grh.sgid)?;
        w.bytes("dgid", &self.grh.dgid)?;
        let pad = AV_LEN - 4 - (w.position() - start);
        w.zeros("rsvd", pad)?;
        w.u32("valid", self.valid)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start = r.position();
        r.bytes("av", AV_LEN)?;
        let mut inner = Reader::at(r.buffer(), start + AV_LEN - 4);
        let valid = inner.u32("valid")?;
        let mut inner = Reader::at(r.buffer(), start);
        let dmac = inner.array::<6>("dmac")?;
        let smac = inner.array::<6>("smac")?;
        inner.skip("eth_type", 2)?;
        let vlan_tag = if valid & Self::VLAN_VALID != 0 {
            let tci = u16::from_be_bytes(inner.array::<2>("vlan_tag")?);
            inner.skip("roce_eth_type", 2)?;
            Some(tci)
        } else {
            None
        };
        let tclass_flow = u32::from_be_bytes(inner.array::<4>("tclass_flow")?);
        let pdid_hoplimit = u32::from_be_bytes(inner.array::<4>("pdid_hoplimit")?);
        let sgid = inner.array::<16>("sgid")?;
        let dgid = inner.array::<16>("dgid")?;
        Ok(Self { dmac, smac, vlan_tag, grh: AvGrh { tclass_flow, pdid_hoplimit, sgid, dgid }, valid })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode<T: Wire>(value: &T, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        value.encode(&mut Writer::new(&mut buf)).unwrap();
        buf
    }

    #[test]
    fn cqe_shapes_golden_bytes() {
        // A successful signaled send: WQE 5, 4096 bytes, QP 2.
        let sq = Cqe::sq(5, 4096, 2, cqe_status::SUCCESS);
        assert_eq!(hex::encode(encode(&sq, 16)), concat!("05000000", "00100000", "02000000", "00000080"));
        assert!(sq.is_valid() && sq.is_sq());
        // A receive with immediate 0x11223344, 64 bytes, QP 2: valid | qtype | imm.
        let rq = Cqe::rq(0x1122_3344, 64, 2, 0, cqe_status::SUCCESS, Cqe::IMM);
        assert_eq!(hex::encode(encode(&rq, 16)), concat!("44332211", "40000000", "02000000", "000000b0"));
        // A GSI receive of 256 + 40 bytes from QP 1 on QP 1: w1 296 << 16; w3 valid | qtype | 1.
        let ud = Cqe::ud(296, 0, 1, 0, 1);
        assert_eq!(hex::encode(encode(&ud, 16)), concat!("00000000", "00002801", "01000000", "010000a0"));
        // A remote access error on QP 3's WQE 9: status 10 in w3 23:16.
        let err = Cqe::sq(9, 0, 3, cqe_status::REM_ACCESS_ERR);
        assert_eq!(hex::encode(encode(&err, 16)), concat!("09000000", "00000000", "03000000", "00000a80"));
        let back = Cqe::decode(&mut Reader::new(&encode(&err, 16))).unwrap();
        assert_eq!((back, back.status(), back.qpn(), back.wqe_index()), (err, 10, 3, 9));
        assert!(Cqe::decode(&mut Reader::new(&[0u8; 15])).is_err());
    }

    fn av(vlan_tag: Option<u16>) -> Av {
        let mut sgid = [0u8; 16];
        sgid[..2].copy_from_slice(&[0xfe, 0x80]);
        let mut dgid = sgid;
        dgid[15] = 2;
        Av {
            dmac: [2, 0, 0, 0, 0, 2],
            smac: [2, 0, 0, 0, 0, 1],
            vlan_tag,
            // IP version 6, traffic class 0, flow 0; PD 1, next header 0x1B, hop limit 1.
            grh: AvGrh { tclass_flow: 0x6000_0000, pdid_hoplimit: 0x0001_1b01, sgid, dgid },
            valid: Av::VALID | if vlan_tag.is_some() { Av::VLAN_VALID } else { 0 },
        }
    }

    #[test]
    fn av_untagged_golden_bytes() {
        let bytes = encode(&av(None), 64);
        let expected = concat!(
            "020000000002",                     // @0 dmac
            "020000000001",                     // @6 smac
            "8915",                             // @12 ethertype, big-endian
            "60000000",                         // @14 tclass_flow
            "00011b01",                         // @18 pdid_hoplimit
            "fe800000000000000000000000000000", // @22 sgid
            "fe800000000000000000000000000002", // @38 dgid
            "000000000000",                     // @54 pad to the valid dword
            "80000000",                         // @60 valid, little-endian
        );
        assert_eq!(hex::encode(&bytes), expected);
        assert_eq!(Av::decode(&mut Reader::new(&bytes)).unwrap(), av(None));
        assert_eq!(av(None).pd_id(), 1);
    }

    #[test]
    fn av_tagged_moves_the_grh_four_bytes_on() {
        let bytes = encode(&av(Some(0x6000)), 64);
        // 0x8100, TCI 0x6000 (PCP 3, VLAN 0), 0x8915, then the GRH @18; valid 0x82.
        assert_eq!(hex::encode(&bytes[12..22]), "81006000891560000000");
        assert_eq!(hex::encode(&bytes[60..]), "82000000");
        assert_eq!(Av::decode(&mut Reader::new(&bytes)).unwrap(), av(Some(0x6000)));
        assert!(Av::decode(&mut Reader::new(&bytes[..63])).is_err());
    }
}
