//! The crate's one error type: bad bytes off the wire and refused work requests.

/// What went wrong; each variant names the field or bound that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ends inside a header or before the ICRC.
    #[error("{header} needs {needed} bytes at offset {offset}, only {available} available")]
    Short { header: &'static str, offset: usize, needed: usize, available: usize },
    /// The Ethernet frame does not carry RoCE v1 (ethertype 0x8915).
    #[error("ethertype {0:#06x} is not RoCE v1 (0x8915)")]
    EtherType(u16),
    /// The GRH's IP version is not 6 (IBTA vol 1 §8.3.1).
    #[error("GRH IP version {0} is not 6")]
    GrhVersion(u8),
    /// The GRH's next header is not the IBA transport (0x1B, IBTA vol 1 §8.3.1).
    #[error("GRH next header {0:#04x} is not an IBA transport header (0x1b)")]
    NextHeader(u8),
    /// An opcode this crate does not carry (only RC and UD SEND are supported).
    #[error("BTH opcode {0:#04x} is not supported")]
    Opcode(u8),
    /// The GRH payload length disagrees with the bytes that follow it.
    #[error("GRH payload length {grh} does not fit the {available} bytes after the GRH")]
    PayloadLength { grh: u16, available: usize },
    /// The BTH pad count exceeds the payload, or a packet without payload carries pad bytes.
    #[error("pad count {pad} does not fit a payload of {payload} bytes")]
    Pad { pad: u8, payload: usize },
    /// The ICRC at the end of the packet is not the one computed over its bytes.
    #[error("ICRC {found:#010x} does not match the computed {computed:#010x}")]
    Icrc { found: u32, computed: u32 },
    /// A packet to encode whose extended headers do not match its opcode (IBTA vol 1 Table 38).
    #[error("opcode {opcode:#04x} and the {header} header: present exactly when the opcode carries it")]
    HeaderMismatch { opcode: u8, header: &'static str },
    /// The send queue or receive queue already holds its bound of work requests.
    #[error("the {queue} queue is full ({limit} work requests)")]
    QueueFull { queue: &'static str, limit: usize },
    /// The QP is in the error state: it takes no work and emits nothing.
    #[error("QP {qpn} is in the error state")]
    QpError { qpn: u32 },
    /// Inline data longer than the QP allows.
    #[error("inline data of {len} bytes exceeds the QP's {limit}")]
    InlineTooLong { len: usize, limit: usize },
    /// A READ with inline data: its data comes back into local buffers, so it needs SGEs.
    #[error("a READ needs local buffers (SGEs), not inline data")]
    InlineRead,
    /// A READ on a QP whose ORD (`max_rd_atomic`) is 0: it may not issue READs.
    #[error("QP {qpn} has ORD 0 and may not issue READs")]
    NoReadCredits { qpn: u32 },
    /// A QP number that is 0 or wider than 24 bits (`spec/datapath.md` §2.3: QP 0 means
    /// "discarded" to ocrdma).
    #[error("QP number {0:#x} is not in 1..=0xffffff")]
    Qpn(u32),
    /// A message longer than 2^31 bytes (IBTA vol 1 §9.4.1: DMA length).
    #[error("message of {0} bytes exceeds 2^31")]
    MessageTooLong(u64),
    /// A path MTU that is not 256, 512, 1024, 2048 or 4096 bytes.
    #[error("path MTU {0} is not one of 256, 512, 1024, 2048, 4096")]
    Mtu(usize),
}
