//! The work request block, its scatter-gather entry, the completion entry, and the bootstrap
//! mailbox layout that holds one of each (spec/protocol.md §3.1, §3.3, §3.4, §3.7).

use crate::status::CompletionStatus;
use crate::wire::{Reader, Wire, WireError, Writer};

/// Size of a WRB (`be_mcc_wrb`).
pub const WRB_LEN: usize = 256;
/// Offset of the payload inside a WRB.
pub const WRB_PAYLOAD_OFFSET: usize = 20;
/// Largest embedded command, header included (256 − 20).
pub const EMBEDDED_MAX: usize = WRB_LEN - WRB_PAYLOAD_OFFSET;
/// Size of a completion entry (`be_mcc_compl`).
pub const COMPLETION_LEN: usize = 16;
/// Offset of the completion inside the bootstrap mailbox.
pub const MAILBOX_COMPLETION_OFFSET: usize = WRB_LEN;
/// Size of the bootstrap mailbox (`be_mcc_mailbox`): one WRB and one completion.
pub const MAILBOX_LEN: usize = WRB_LEN + COMPLETION_LEN;
/// Required alignment of the mailbox's bus address: the doorbell drops address bits 3:0.
pub const MAILBOX_ALIGN: u64 = 16;
/// Size of a scatter-gather entry (`be_sge`).
pub const SGE_LEN: usize = 12;
/// Most SGEs that fit in a WRB payload (236 / 12).
pub const MAX_SGES: usize = EMBEDDED_MAX / SGE_LEN;

/// The "firmware init" signature written over a zeroed WRB (be_cmds.c `be_cmd_fw_init`).
#[doc(alias = "be_cmd_fw_init")]
pub const FW_INIT_SIGNATURE: [u8; 8] = [0xFF, 0x12, 0x34, 0xFF, 0xFF, 0x56, 0x78, 0xFF];
/// The "firmware clean" signature (be_cmds.c `be_cmd_fw_clean`).
#[doc(alias = "be_cmd_fw_clean")]
pub const FW_CLEAN_SIGNATURE: [u8; 8] = [0xFF, 0xAA, 0xBB, 0xFF, 0xFF, 0xCC, 0xDD, 0xFF];

/// One scatter-gather entry: the bus address and length of a DMA buffer.
#[doc(alias = "be_sge")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sge {
    /// Bus address of the buffer.
    pub address: u64,
    /// Length of the buffer in bytes.
    pub len: u32,
}

impl Wire for Sge {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("pa_lo", self.address as u32)?;
        w.u32("pa_hi", (self.address >> 32) as u32)?;
        w.u32("len", self.len)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let lo = r.u32("pa_lo")?;
        let hi = r.u32("pa_hi")?;
        let len = r.u32("len")?;
        Ok(Self { address: (u64::from(hi) << 32) | u64::from(lo), len })
    }
}

/// Where a WRB's command lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WrbPayload {
    /// The command (header and body) sits inside the WRB; at most [`EMBEDDED_MAX`] bytes, the
    /// rest of the payload area is zero.
    Embedded(Vec<u8>),
    /// The command sits in a separate DMA buffer described by SGEs (be2net always uses one).
    NonEmbedded(Vec<Sge>),
}

/// A work request block.
#[doc(alias = "be_mcc_wrb")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrb {
    /// Total command length in bytes, header included (@4).
    pub payload_length: u32,
    /// Opaque tags the firmware copies into the completion (@8, @12).
    pub tags: [u32; 2],
    /// The command or its SGEs.
    pub payload: WrbPayload,
}

impl Wrb {
    /// dword 0 bit 0: the payload is embedded (`MCC_WRB_EMBEDDED_MASK`).
    pub const EMBEDDED: u32 = 1 << 0;
    /// dword 0 bits 7:3: SGE count (`MCC_WRB_SGE_CNT_SHIFT` 3, `MCC_WRB_SGE_CNT_MASK` 0x1F).
    pub const SGE_COUNT_SHIFT: u32 = 3;
    /// Mask of the SGE count after shifting.
    pub const SGE_COUNT_MASK: u32 = 0x1F;

    /// The flags dword (dword 0).
    pub fn flags(&self) -> u32 {
        match &self.payload {
            WrbPayload::Embedded(_) => Self::EMBEDDED,
            WrbPayload::NonEmbedded(sges) => ((sges.len() as u32) & Self::SGE_COUNT_MASK) << Self::SGE_COUNT_SHIFT,
        }
    }
}

impl Wire for Wrb {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let start = w.position();
        w.u32("flags", self.flags())?;
        w.u32("payload_length", self.payload_length)?;
        w.u32("tag0", self.tags[0])?;
        w.u32("tag1", self.tags[1])?;
        w.u32("rsvd", 0)?;
        match &self.payload {
            WrbPayload::Embedded(cmd) => {
                if cmd.len() > EMBEDDED_MAX {
                    return Err(WireError {
                        field: "embedded payload",
                        offset: w.position(),
                        needed: cmd.len(),
                        available: EMBEDDED_MAX,
                    });
                }
                w.bytes("embedded payload", cmd)?;
            }
            WrbPayload::NonEmbedded(sges) => {
                if sges.len() > MAX_SGES {
                    return Err(WireError {
                        field: "sge list",
                        offset: w.position(),
                        needed: sges.len() * SGE_LEN,
                        available: EMBEDDED_MAX,
                    });
                }
                for sge in sges {
                    sge.encode(w)?;
                }
            }
        }
        let used = w.position() - start;
        w.zeros("payload padding", WRB_LEN - used)
    }

    /// Decodes a WRB; the firmware side's view. An embedded WRB keeps its whole 236-byte payload
    /// area (the header inside says how much of it is the command).
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let flags = r.u32("flags")?;
        let payload_length = r.u32("payload_length")?;
        let tags = [r.u32("tag0")?, r.u32("tag1")?];
        r.skip("rsvd", 4)?;
        let payload = if flags & Self::EMBEDDED != 0 {
            WrbPayload::Embedded(r.bytes("embedded payload", EMBEDDED_MAX)?.to_vec())
        } else {
            let count = ((flags >> Self::SGE_COUNT_SHIFT) & Self::SGE_COUNT_MASK) as usize;
            let start = r.position();
            let area = r.bytes("sge list", EMBEDDED_MAX)?;
            if count > MAX_SGES {
                return Err(WireError {
                    field: "sge count",
                    offset: start,
                    needed: count * SGE_LEN,
                    available: EMBEDDED_MAX,
                });
            }
            let mut sr = Reader::new(area);
            let sges = (0..count).map(|_| Sge::decode(&mut sr)).collect::<Result<Vec<_>, _>>()?;
            WrbPayload::NonEmbedded(sges)
        };
        Ok(Self { payload_length, tags, payload })
    }
}

/// A completion entry.
#[doc(alias = "be_mcc_compl")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// Base and additional status (@0).
    pub status: CompletionStatus,
    /// Tags copied from the WRB (@4, @8).
    pub tags: [u32; 2],
    /// Flags dword (@12).
    pub flags: u32,
}

impl Completion {
    /// Flags bit 31: the entry is valid (`CQE_FLAGS_VALID_MASK`).
    pub const VALID: u32 = 1 << 31;
    /// Flags bit 30: an asynchronous event (`CQE_FLAGS_ASYNC_MASK`).
    pub const ASYNC: u32 = 1 << 30;
    /// Flags bit 28: a command completion (`CQE_FLAGS_COMPLETED_MASK`).
    pub const COMPLETED: u32 = 1 << 28;
    /// Flags bit 27: consumed (`CQE_FLAGS_CONSUMED_MASK`).
    pub const CONSUMED: u32 = 1 << 27;

    /// True when the VALID bit is set.
    pub fn is_valid(&self) -> bool {
        self.flags & Self::VALID != 0
    }
}

impl Wire for Completion {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("status", self.status.raw())?;
        w.u32("tag0", self.tags[0])?;
        w.u32("tag1", self.tags[1])?;
        w.u32("flags", self.flags)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let status = CompletionStatus::from_raw(r.u32("status")?);
        let tags = [r.u32("tag0")?, r.u32("tag1")?];
        let flags = r.u32("flags")?;
        Ok(Self { status, tags, flags })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{AdditionalStatus, BaseStatus};

    #[test]
    fn sge_golden_bytes() {
        let sge = Sge { address: 0x0000_0012_3456_7890, len: 592 };
        let mut buf = [0u8; SGE_LEN];
        sge.encode(&mut Writer::new(&mut buf)).unwrap();
        assert_eq!(
            hex::encode(buf),
            "90785634" /* pa_lo */.to_owned() + "12000000" /* pa_hi */ + "50020000" /* len */
        );
        assert_eq!(Sge::decode(&mut Reader::new(&buf)).unwrap(), sge);
    }

    #[test]
    fn embedded_wrb_golden_bytes() {
        let cmd = hex::decode("23010000000000004000000000000000").unwrap();
        let wrb =
            Wrb { payload_length: 80, tags: [0xDEAD_BEEF, 0x0102_0304], payload: WrbPayload::Embedded(cmd.clone()) };
        let mut buf = [0xEEu8; WRB_LEN];
        wrb.encode(&mut Writer::new(&mut buf)).unwrap();
        // flags = 1 (embedded), payload_length 80, tags, reserved, then the command at @20.
        assert_eq!(hex::encode(&buf[..20]), "0100000050000000efbeadde0403020100000000");
        assert_eq!(&buf[20..36], &cmd[..]);
        assert!(buf[36..].iter().all(|&b| b == 0));
        let back = Wrb::decode(&mut Reader::new(&buf)).unwrap();
        let WrbPayload::Embedded(area) = &back.payload else { panic!("not embedded") };
        assert_eq!(area.len(), EMBEDDED_MAX);
        assert_eq!(&area[..16], &cmd[..]);
    }

    #[test]
    fn non_embedded_wrb_golden_bytes() {
        let sge = Sge { address: 0x1_0000_1000, len: 23252 };
        let wrb = Wrb { payload_length: 23252, tags: [0x1000, 1], payload: WrbPayload::NonEmbedded(vec![sge]) };
        let mut buf = [0u8; WRB_LEN];
        wrb.encode(&mut Writer::new(&mut buf)).unwrap();
        // flags = 1 << 3 (one SGE, not embedded); SGE at @20.
        assert_eq!(hex::encode(&buf[..32]), "08000000d45a00000010000001000000000000000010000001000000d45a0000");
        assert_eq!(Wrb::decode(&mut Reader::new(&buf)).unwrap(), wrb);
        assert_eq!(wrb.flags(), 0x8);
    }

    #[test]
    fn oversized_embedded_payload_is_an_error_not_a_panic() {
        let wrb = Wrb { payload_length: 300, tags: [0, 0], payload: WrbPayload::Embedded(vec![0; 237]) };
        let mut buf = [0u8; WRB_LEN];
        assert!(wrb.encode(&mut Writer::new(&mut buf)).is_err());
    }

    #[test]
    fn fw_init_signature_reads_as_the_documented_dwords() {
        // spec/protocol.md §3.7: as LE dwords 0xFF3412FF, 0xFF7856FF.
        let mut r = Reader::new(&FW_INIT_SIGNATURE);
        assert_eq!((r.u32("d0").unwrap(), r.u32("d1").unwrap()), (0xFF34_12FF, 0xFF78_56FF));
        let mut r = Reader::new(&FW_CLEAN_SIGNATURE);
        assert_eq!((r.u32("d0").unwrap(), r.u32("d1").unwrap()), (0xFFBB_AAFF, 0xFFDD_CCFF));
    }

    #[test]
    fn completion_golden_bytes() {
        let raw = hex::decode("03004d00efbeadde0403020100000080").unwrap();
        let c = Completion::decode(&mut Reader::new(&raw)).unwrap();
        assert_eq!(c.status.base, BaseStatus::IllegalField);
        assert_eq!(c.status.additional, AdditionalStatus::FlashImageCrcMismatch);
        assert_eq!(c.tags, [0xDEAD_BEEF, 0x0102_0304]);
        assert!(c.is_valid());
        let mut out = [0u8; COMPLETION_LEN];
        c.encode(&mut Writer::new(&mut out)).unwrap();
        assert_eq!(out.to_vec(), raw);
        assert_eq!(MAILBOX_LEN, 272);
        assert_eq!(MAILBOX_COMPLETION_OFFSET, 256);
    }
}
