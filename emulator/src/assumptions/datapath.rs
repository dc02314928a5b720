//! Assumptions about the Ethernet datapath: what the device does with the frames be2net posts
//! and the frames that arrive on the wire where spec/datapath.md and the Linux sources are
//! silent. Re-exported by [`crate::assumptions`], the one home of every assumption.
//!
//! # Behaviour choices
//!
//! - **TX requests** (`datapath::tx`): a request is consumed only when all its WRBs are posted
//!   (`num_wrb`, at least 1: a header with `num_wrb` 0 is taken as one WRB) and the wire is
//!   ready. Fragment WRBs of length 0 are padding. The request is completed — when its header
//!   has `complete` — with a status: HDR_PARSE_ERR (0x2) when the fragments do not add up to the
//!   header's `len`, the frame is shorter than an Ethernet header, or an offload the header asks
//!   for does not fit the frame (a TCP checksum without a TCP header, segmentation of a non-TCP
//!   frame, an MSS of 0, `ipcs` on a frame that is not IPv4); NDMA_ERR (0x3) when a fragment or
//!   fragment WRB cannot be read; 0 otherwise. A refused request puts nothing on the wire. Which
//!   status real firmware picks for each case is not public; be2net only counts them
//!   (`tx_hdr_parse_err`, `tx_dma_err`) and frees the WRBs either way. A header WRB the device
//!   cannot read drops every WRB then posted on the ring (no completion can name them).
//! - **TX offloads** (`datapath::frame::offload`): checksums are computed from scratch over the
//!   zeroed field, whatever the stack seeded; a UDP sum of 0 is sent as 0xFFFF. TSO cuts the TCP
//!   payload (to the end the IP length gives) into MSS-sized segments: IPv4 identification
//!   incremented per segment from the request's, IP lengths and header checksum per segment,
//!   sequence numbers advanced, FIN and PSH on the last segment only, CWR on the first only,
//!   TCP checksum per segment — what NICs do and the kernel's own GSO does. The VLAN tag goes
//!   in before segmentation, so every segment carries it. Frames shorter than 60 bytes are padded
//!   with zeros after the tag is inserted. `crc` and `forward` change nothing (the wire has no
//!   FCS); an OS-to-BMC copy (`mgmt`) is completed and never sent. The skip-HW-VLAN convention
//!   (`event` without `complete`, be_main.c `wrb_fill_hdr`) needs no special case: a frame whose
//!   tag the driver inserted itself arrives without the `vlan` bit.
//! - **Without a cable** (`datapath::tx`): frames leave into nothing, counted as sent; the link
//!   stays up (today's serve has no wire). While the logical link is down, requests are
//!   consumed and completed and their frames dropped (`link_down_drops`).
//! - **Link down on the cable** (`oce_emulator_serve::cable::carrier`,
//!   `Device::set_peer_present`): a port on a cable whose other end is absent (no live socket at
//!   the peer's address) has its physical link down, as a port whose cable leads nowhere has no
//!   link pulse; it comes up when the peer is there again, and the change is announced with the
//!   link-state event as the `link-down` fault's is. Whoever watches the peer decides how often
//!   (the served carrier: every 200 ms and on a failed send). The frames already queued toward a
//!   peer that went are dropped, as a MAC flushes its transmit FIFO on link loss (be2net turns
//!   its carrier off on the event, `be_link_status_update`, spec/be2net-driver.md); a transient
//!   absence shorter than a look keeps them queued, and they go when the peer takes them.
//! - **The peer's MAC** (`Firmware::peer`): the source address of the last frame the port
//!   received while its link was up (a group address there is ignored); `None` before the first
//!   such frame and again once the peer goes. No firmware command reports the station at the
//!   other end of a link (a real adapter would learn it from the peer's LLDP frames, which the
//!   OCe14000's DCBX agent receives but whose chassis ID no public command returns), so only
//!   the emulator's control channel shows it.
//! - **RX frames** (`datapath::rx`): a frame arrives without FCS. Frames shorter than 60 bytes
//!   are taken (QEMU's virtio-net sends unpadded frames on `-netdev dgram`); shorter than an
//!   Ethernet header is a runt, dropped. The outer 802.1Q tag (0x8100) is always stripped and
//!   reported (`vtp`, `vlan_tag`): be2net cannot turn VLAN RX offload off. A frame (tag
//!   included) longer than the ring's `max_frame_size`, or than `pktsize` can say, is dropped
//!   (`rx_frame_too_long`); one that needs more than 7 fragments (`numfrags`) is dropped
//!   (`rx_drops_too_many_frags`).
//! - **RX filter** (`datapath::rx::accepts`): a destination passes when the interface is
//!   promiscuous, or it is broadcast and BROADCAST is on, or multicast and MCAST_PROMISCUOUS is
//!   on or MULTICAST is on with the address in the list, or unicast and in the interface's MAC
//!   filters (PMAC_ADD). VLANs: an untagged frame needs UNTAGGED (be2net sets it in its basic
//!   filter flags); a tagged one needs its VID in the VLAN_CONFIG list, or VLAN promiscuity (the
//!   flag, or VLAN_CONFIG's); VID 0 (a priority tag) also passes with UNTAGGED. PROMISCUOUS
//!   alone does not open the VLAN filter (be2net turns VLAN_PROMISCUOUS on with it). A frame
//!   several interfaces accept is delivered to each. Frames no filter accepts are counted in
//!   `rx_address_filtered`; an accepted frame whose interface has no RX ring (the driver is
//!   down) is dropped.
//! - **RX ring choice** (`datapath::rss`): with RSS on (RSS_CONFIG `enable_rss` ≠ 0) the
//!   Toeplitz hash of the 4-tuple (TCP or UDP when enabled) or the address pair, under the
//!   configured key, indexes the indirection table by its low bits; the table's `rss_id` names
//!   the ring. Otherwise, and for frames that do not hash, the interface's default (non-RSS)
//!   ring, else its first ring; `rsshash` is then 0.
//! - **RX completions** (`datapath::rx`): `cast_enc` as be_hw.h encodes it (0 unicast, 1
//!   multicast, 2 broadcast); `fragndx` the ring index of the first fragment; `ipcksm` set when
//!   an IPv4 header checksum verifies, `l4_cksm` when a TCP or UDP checksum does (an IPv4 UDP
//!   sum of 0, "none", counts as good), neither for an IP fragment (`ipf`); `err` never set;
//!   `qnq`, `tunneled`, `rsshp` and `ip_opt` always 0. A frame with a bad checksum is delivered
//!   with the bit clear (the stack verifies it itself and drops it) and counted in
//!   `rx_{ip,tcp,udp}_checksum_errs`, as PASS_L3L4_ERRORS asks (be2net always sets it). A
//!   fragment the device cannot write consumes its descriptors and is completed with `pktsize`
//!   0, which be2net discards (`be_rx_compl_discard`).
//! - **No receive buffer** (`datapath::rx`, `datapath::wire`): when the ring has fewer
//!   fragments posted than the frame needs and flow control's TX pause is on (the default,
//!   be2net's `ethtool -A` default), the port pauses its peer: the frame stays with the carrier
//!   ([`crate::datapath::Receipt::Paused`]), which offers it again once the host posts buffers
//!   (the device calls [`crate::datapath::Wire::receive_ready`]); each time the port starts
//!   pausing counts one `tx_pauseframes`. With TX pause off the frame is dropped and counted in
//!   the ring's `rx_drops_no_fragments`. Whether the peer honours the pause (its RX pause
//!   setting) is not modelled: the cable's watermark always holds the sender back, which is
//!   what a PFC link does.
//! - **Counters** (`datapath::stats`): per ring and per port, from POST; a ring's counters start
//!   from zero when a ring is created under its id; GET_STATISTICS v2 reports them in the port's
//!   block (`port_num`) modulo 2^32. The other counters of `be_hw_stats_v2` (CRC, alignment,
//!   pause frames received, FIFO overflows) stay 0: the emulated wire has no such errors.

/// RX_CREATE's largest `frag_size` (log2 of the receive fragment's bytes): 2^16, past which no
/// fragment can hold more (`pktsize` has 14 bits). be2net asks for 11 (2048 bytes; its
/// `rx_frag_size` parameter allows 2048, 4096 and 8192). What real firmware refuses is not
/// public; larger values are ILLEGAL_FIELD.
pub const MAX_RX_FRAG_SIZE_LOG2: u8 = 16;
