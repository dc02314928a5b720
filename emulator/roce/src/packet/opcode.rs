//! The BTH opcodes this crate carries (IBTA vol 1 §9.2, Table 38: RC and UD SEND) and which
//! extended headers each one brings.

use crate::Error;

/// A BTH opcode: the transport (bits 7:5; RC 0b000, UD 0b011) and the operation (bits 4:0).
#[doc(alias = "rxe_hdr_opcode")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    RcSendFirst = 0x00,
    RcSendMiddle = 0x01,
    RcSendLast = 0x02,
    RcSendLastImm = 0x03,
    RcSendOnly = 0x04,
    RcSendOnlyImm = 0x05,
    RcWriteFirst = 0x06,
    RcWriteMiddle = 0x07,
    RcWriteLast = 0x08,
    RcWriteLastImm = 0x09,
    RcWriteOnly = 0x0A,
    RcWriteOnlyImm = 0x0B,
    RcReadRequest = 0x0C,
    RcReadResponseFirst = 0x0D,
    RcReadResponseMiddle = 0x0E,
    RcReadResponseLast = 0x0F,
    RcReadResponseOnly = 0x10,
    RcAck = 0x11,
    RcSendLastInv = 0x16,
    RcSendOnlyInv = 0x17,
    UdSendOnly = 0x64,
    UdSendOnlyImm = 0x65,
}

/// Where a packet sits in its message (IBTA vol 1 §9.8.3: FIRST, MIDDLE, LAST or ONLY).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    First,
    Middle,
    Last,
    Only,
}

impl Position {
    /// True for FIRST and ONLY: the packet that starts a message.
    pub fn starts(self) -> bool {
        matches!(self, Position::First | Position::Only)
    }
    /// True for LAST and ONLY: the packet that ends a message.
    pub fn ends(self) -> bool {
        matches!(self, Position::Last | Position::Only)
    }
}

/// The kind of message an opcode belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Send,
    Write,
    ReadRequest,
    ReadResponse,
    Ack,
}

impl TryFrom<u8> for Opcode {
    type Error = Error;
    fn try_from(v: u8) -> Result<Self, Error> {
        use Opcode::*;
        Ok(match v {
            0x00 => RcSendFirst,
            0x01 => RcSendMiddle,
            0x02 => RcSendLast,
            0x03 => RcSendLastImm,
            0x04 => RcSendOnly,
            0x05 => RcSendOnlyImm,
            0x06 => RcWriteFirst,
            0x07 => RcWriteMiddle,
            0x08 => RcWriteLast,
            0x09 => RcWriteLastImm,
            0x0A => RcWriteOnly,
            0x0B => RcWriteOnlyImm,
            0x0C => RcReadRequest,
            0x0D => RcReadResponseFirst,
            0x0E => RcReadResponseMiddle,
            0x0F => RcReadResponseLast,
            0x10 => RcReadResponseOnly,
            0x11 => RcAck,
            0x16 => RcSendLastInv,
            0x17 => RcSendOnlyInv,
            0x64 => UdSendOnly,
            0x65 => UdSendOnlyImm,
            other => return Err(Error::Opcode(other)),
        })
    }
}

impl Opcode {
    /// The opcode's byte in the BTH.
    pub fn value(self) -> u8 {
        self as u8
    }

    /// The message kind.
    pub fn operation(self) -> Operation {
        use Opcode::*;
        match self {
            RcSendFirst | RcSendMiddle | RcSendLast | RcSendLastImm | RcSendOnly | RcSendOnlyImm | RcSendLastInv
            | RcSendOnlyInv | UdSendOnly | UdSendOnlyImm => Operation::Send,
            RcWriteFirst | RcWriteMiddle | RcWriteLast | RcWriteLastImm | RcWriteOnly | RcWriteOnlyImm => {
                Operation::Write
            }
            RcReadRequest => Operation::ReadRequest,
            RcReadResponseFirst | RcReadResponseMiddle | RcReadResponseLast | RcReadResponseOnly => {
                Operation::ReadResponse
            }
            RcAck => Operation::Ack,
        }
    }

    /// The packet's place in its message; a READ request and an ACK are ONLY.
    pub fn position(self) -> Position {
        use Opcode::*;
        match self {
            RcSendFirst | RcWriteFirst | RcReadResponseFirst => Position::First,
            RcSendMiddle | RcWriteMiddle | RcReadResponseMiddle => Position::Middle,
            RcSendLast | RcSendLastImm | RcSendLastInv | RcWriteLast | RcWriteLastImm | RcReadResponseLast => {
                Position::Last
            }
            _ => Position::Only,
        }
    }

    /// True for the UD opcodes (they carry a DETH).
    pub fn is_ud(self) -> bool {
        matches!(self, Opcode::UdSendOnly | Opcode::UdSendOnlyImm)
    }

    /// RETH: the first (or only) packet of a WRITE, and the READ request.
    pub fn has_reth(self) -> bool {
        use Opcode::*;
        matches!(self, RcWriteFirst | RcWriteOnly | RcWriteOnlyImm | RcReadRequest)
    }

    /// AETH: ACK and the READ responses that open or close a message.
    pub fn has_aeth(self) -> bool {
        use Opcode::*;
        matches!(self, RcAck | RcReadResponseFirst | RcReadResponseLast | RcReadResponseOnly)
    }

    /// DETH: UD only.
    pub fn has_deth(self) -> bool {
        self.is_ud()
    }

    /// ImmDt: the `_IMM` opcodes.
    pub fn has_imm(self) -> bool {
        use Opcode::*;
        matches!(self, RcSendLastImm | RcSendOnlyImm | RcWriteLastImm | RcWriteOnlyImm | UdSendOnlyImm)
    }

    /// IETH: SEND with invalidate.
    pub fn has_ieth(self) -> bool {
        matches!(self, Opcode::RcSendLastInv | Opcode::RcSendOnlyInv)
    }

    /// Whether the packet carries a payload (READ requests and ACKs do not).
    pub fn has_payload(self) -> bool {
        !matches!(self, Opcode::RcReadRequest | Opcode::RcAck)
    }

    /// Bytes of extended headers between the BTH and the payload (IBTA vol 1 §9.3).
    pub fn ext_len(self) -> usize {
        let mut n = 0;
        if self.has_deth() {
            n += super::Deth::LEN;
        }
        if self.has_reth() {
            n += super::Reth::LEN;
        }
        if self.has_aeth() {
            n += super::Aeth::LEN;
        }
        if self.has_imm() {
            n += 4;
        }
        if self.has_ieth() {
            n += 4;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_round_trips_and_the_rest_is_refused() {
        let mut known = 0;
        for v in 0..=255u8 {
            match Opcode::try_from(v) {
                Ok(op) => {
                    assert_eq!(op.value(), v);
                    known += 1;
                }
                Err(e) => assert_eq!(e, Error::Opcode(v)),
            }
        }
        assert_eq!(known, 22);
    }

    #[test]
    fn header_sets_follow_table_38() {
        // (opcode, extended header bytes, payload) from IBTA vol 1 Table 38.
        let rows = [
            (Opcode::RcSendFirst, 0, true),
            (Opcode::RcSendLastImm, 4, true),
            (Opcode::RcSendOnlyInv, 4, true),
            (Opcode::RcWriteFirst, 16, true),
            (Opcode::RcWriteMiddle, 0, true),
            (Opcode::RcWriteOnlyImm, 20, true),
            (Opcode::RcWriteLastImm, 4, true),
            (Opcode::RcReadRequest, 16, false),
            (Opcode::RcReadResponseFirst, 4, true),
            (Opcode::RcReadResponseMiddle, 0, true),
            (Opcode::RcAck, 4, false),
            (Opcode::UdSendOnly, 8, true),
            (Opcode::UdSendOnlyImm, 12, true),
        ];
        for (op, ext, payload) in rows {
            assert_eq!((op.ext_len(), op.has_payload()), (ext, payload), "{op:?}");
        }
    }
}
