//! MANAGE_FAT (COMMON 68): the firmware's diagnostic log ("FAT"), the data `ethtool -w` returns
//! on be2net (`be_cmd_get_fat_dump_len` and `be_cmd_get_fat_dump` in be_cmds.c; spec/protocol.md
//! §5.18).
//!
//! Both operations share one 36-byte request layout (`be_cmd_req_get_fat`): `fat_operation` u32
//! @16, `read_log_offset` @20, `read_log_length` @24, `data_buffer_size` @28, data @32. QUERY is
//! embedded and answers the log size; RETRIEVE is non-embedded and copies up to 60 KiB of the log
//! into the buffer @32.

use super::support::code_enum;
use crate::command::Command;
use crate::header::Subsystem;
use crate::wire::{Reader, Wire, WireError, Writer};

code_enum! {
    /// `fat_operation` of the request.
    FatOperation(u32) {
        /// Copy part of the log.
        #[doc(alias = "RETRIEVE_FAT")]
        Retrieve = 0, "retrieve";
        /// Report the log size.
        #[doc(alias = "QUERY_FAT")]
        Query = 1, "query";
    }
}

/// The request fields common to both operations, as the firmware decodes them.
#[doc(alias = "be_cmd_req_get_fat")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatRequest {
    /// `fat_operation` u32 @16.
    pub operation: FatOperation,
    /// `read_log_offset` u32 @20: where in the log to start.
    pub read_log_offset: u32,
    /// `read_log_length` u32 @24: how many bytes to copy.
    pub read_log_length: u32,
    /// `data_buffer_size` u32 @28: room in the buffer @32.
    pub data_buffer_size: u32,
}

impl Wire for FatRequest {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("fat_operation", self.operation.raw())?;
        w.u32("read_log_offset", self.read_log_offset)?;
        w.u32("read_log_length", self.read_log_length)?;
        w.u32("data_buffer_size", self.data_buffer_size)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self {
            operation: FatOperation::from_raw(r.u32("fat_operation")?),
            read_log_offset: r.u32("read_log_offset")?,
            read_log_length: r.u32("read_log_length")?,
            data_buffer_size: r.u32("data_buffer_size")?,
        })
    }
}

/// MANAGE_FAT QUERY: embedded, version 0, 36 bytes; answers `log_size`. be2net sends it at probe
/// on non-Lancer PFs and sizes `ethtool -w` from it.
#[doc(alias = "be_cmd_get_fat_dump_len")]
#[doc(alias = "OPCODE_COMMON_MANAGE_FAT")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryFat;

impl Wire for QueryFat {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        FatRequest { operation: FatOperation::Query, read_log_offset: 0, read_log_length: 0, data_buffer_size: 0 }
            .encode(w)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        FatRequest::decode(r).map(|_| Self)
    }
}

impl Command for QueryFat {
    const NAME: &'static str = "MANAGE_FAT";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 68;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = true;
    const LEN: usize = 36;
    type Response = FatLog;
}

/// MANAGE_FAT RETRIEVE: non-embedded, version 0; copies `length` bytes of the log from `offset`.
/// The buffer always has room for [`RetrieveFat::CHUNK`] bytes, as be2net allocates it.
#[doc(alias = "be_cmd_get_fat_dump")]
#[doc(alias = "OPCODE_COMMON_MANAGE_FAT")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RetrieveFat {
    /// `read_log_offset`: where in the log to start.
    pub offset: u32,
    /// `read_log_length` and `data_buffer_size`: bytes wanted, at most [`RetrieveFat::CHUNK`].
    pub length: u32,
}

impl RetrieveFat {
    /// Most bytes one RETRIEVE copies: be2net's `60*1024`.
    pub const CHUNK: u32 = 60 * 1024;
    /// be2net starts reading at `sizeof(u32)`: the log's first dword is not part of the dump, and
    /// the dump is `log_size - 4` bytes long.
    pub const LOG_START: u32 = 4;
    /// Where the data starts in the buffer.
    pub const DATA_OFFSET: usize = 32;
}

impl Wire for RetrieveFat {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if self.length > Self::CHUNK {
            return Err(WireError {
                field: "read_log_length",
                offset: 24,
                needed: self.length as usize,
                available: Self::CHUNK as usize,
            });
        }
        FatRequest {
            operation: FatOperation::Retrieve,
            read_log_offset: self.offset,
            read_log_length: self.length,
            data_buffer_size: self.length,
        }
        .encode(w)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let req = FatRequest::decode(r)?;
        Ok(Self { offset: req.read_log_offset, length: req.read_log_length })
    }
}

impl Command for RetrieveFat {
    const NAME: &'static str = "MANAGE_FAT";
    const SUBSYSTEM: Subsystem = Subsystem::Common;
    const OPCODE: u8 = 68;
    const VERSION: u8 = 0;
    const EMBEDDED: bool = false;
    const LEN: usize = Self::DATA_OFFSET + Self::CHUNK as usize;
    type Response = FatLog;
}

/// The MANAGE_FAT response (`be_cmd_resp_get_fat`).
#[doc(alias = "be_cmd_resp_get_fat")]
#[derive(Clone, PartialEq, Eq, Default)]
pub struct FatLog {
    /// `log_size` u32 @16: the whole log, its first dword included.
    pub log_size: u32,
    /// `read_log_length` u32 @20: bytes copied @32.
    pub read_log_length: u32,
    /// The bytes copied, from @32 (empty for QUERY).
    pub data: Vec<u8>,
}

impl FatLog {
    /// The dump length as be2net computes it: `log_size - 4`, 0 for an empty log.
    pub fn dump_len(&self) -> u32 {
        self.log_size.saturating_sub(RetrieveFat::LOG_START)
    }
}

impl std::fmt::Debug for FatLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The data can be 60 KiB: its length says enough in a trace.
        f.debug_struct("FatLog")
            .field("log_size", &self.log_size)
            .field("read_log_length", &self.read_log_length)
            .field("data_len", &self.data.len())
            .finish()
    }
}

impl Wire for FatLog {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32("log_size", self.log_size)?;
        w.u32("read_log_length", self.read_log_length)?;
        w.zeros("rsvd", 8)?;
        w.bytes("data_buffer", &self.data)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let log_size = r.u32("log_size")?;
        let read_log_length = r.u32("read_log_length")?;
        if read_log_length == 0 {
            return Ok(Self { log_size, read_log_length, data: Vec::new() });
        }
        r.skip("rsvd", 8)?;
        let data = r.bytes("data_buffer", read_log_length as usize)?.to_vec();
        Ok(Self { log_size, read_log_length, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{decode_request, decode_response, encode_request};

    #[test]
    fn query_golden_bytes() {
        let buf = encode_request(&QueryFat).unwrap();
        // opcode 68 (0x44), subsystem 1, request_length 20, version 0; fat_operation 1 @16.
        assert_eq!(
            hex::encode(&buf),
            concat!(
                "44010000", "00000000", "14000000", "00000000", "01000000", "00000000", "00000000", "00000000",
                "00000000"
            )
        );
        let req = FatRequest::decode(&mut Reader::at(&buf, 16)).unwrap();
        assert_eq!(req.operation, FatOperation::Query);
        // QUERY answers the size only.
        let rsp = hex::decode(concat!("44010000", "00000000", "14000000", "14000000", "04100000", "00000000")).unwrap();
        let (_, log) = decode_response::<QueryFat>(&rsp).unwrap();
        assert_eq!((log.log_size, log.dump_len(), log.data.len()), (0x1004, 0x1000, 0));
        assert_eq!(FatLog::default().dump_len(), 0);
    }

    #[test]
    fn retrieve_golden_bytes() {
        let buf = encode_request(&RetrieveFat { offset: 4, length: 0x100 }).unwrap();
        assert_eq!(buf.len(), 32 + 60 * 1024);
        // request_length 61456 (0xf010); fat_operation 0, read_log_offset 4, length 0x100, buffer 0x100.
        assert_eq!(
            hex::encode(&buf[..32]),
            concat!("44010000", "00000000", "10f00000", "00000000", "00000000", "04000000", "00010000", "00010000")
        );
        assert_eq!(decode_request::<RetrieveFat>(&buf).unwrap().1, RetrieveFat { offset: 4, length: 0x100 });
        let too_long = encode_request(&RetrieveFat { offset: 4, length: RetrieveFat::CHUNK + 1 }).unwrap_err();
        assert_eq!((too_long.field, too_long.offset), ("read_log_length", 24));

        let rsp = hex::decode(concat!(
            "44010000",
            "00000000",
            "14000000",
            "14000000", // response_length 20
            "08000000",
            "04000000",
            "0000000000000000", // log_size 8, read 4 bytes
            "deadbeef"
        ))
        .unwrap();
        let (_, log) = decode_response::<RetrieveFat>(&rsp).unwrap();
        assert_eq!(log.data, [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(format!("{log:?}"), "FatLog { log_size: 8, read_log_length: 4, data_len: 4 }");
        let mut out = vec![0xEEu8; rsp.len()];
        log.encode(&mut Writer::at(&mut out, 16)).unwrap();
        assert_eq!(&out[16..], &rsp[16..]);
    }

    #[test]
    fn retrieve_claiming_more_than_it_returned() {
        let rsp = hex::decode(concat!(
            "44010000",
            "00000000",
            "12000000",
            "12000000", // response_length 18: two data bytes
            "08000000",
            "04000000",
            "0000000000000000",
            "dead"
        ))
        .unwrap();
        let err = decode_response::<RetrieveFat>(&rsp).unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("data_buffer", 32, 4, 2));
    }
}
