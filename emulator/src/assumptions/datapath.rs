//! Assumptions about the Ethernet datapath: what the device does with the frames be2net posts
//! and the frames that arrive on the wire, where spec/datapath.md and the Linux sources are
//! silent. Re-exported by [`crate::assumptions`], the one home of every assumption.

/// RX_CREATE's largest `frag_size` (log2 of the receive fragment's bytes): 2^16, past which no
/// fragment can hold more (`pktsize` has 14 bits). be2net asks for 11 (2048 bytes; its
/// `rx_frag_size` parameter allows 2048, 4096 and 8192). What real firmware refuses is not
/// public; larger values are ILLEGAL_FIELD.
pub const MAX_RX_FRAG_SIZE_LOG2: u8 = 16;
