//! The message bodies: requests decoded from untrusted bytes, replies encoded, one function pair
//! per direction. Offsets are from the end of the header, as in vfio-user.rst, section by section.

use super::{Command, DecodeError, FLAG_ERROR, Header, Reader, TYPE_COMMAND, TYPE_REPLY, Writer};

/// `VFIO_DMA_UNMAP_FLAG_ALL` (`<linux/vfio.h>`): unmap every region, address and size are 0.
pub const DMA_UNMAP_FLAG_ALL: u32 = 1 << 1;
/// DMA_MAP flag bit 0: the region can be read (vfio-user.rst "VFIO_USER_DMA_MAP").
pub const DMA_MAP_READ: u32 = 1 << 0;
/// DMA_MAP flag bit 1: the region can be written.
pub const DMA_MAP_WRITE: u32 = 1 << 1;

/// SET_IRQS data type bits 0-2 (`VFIO_IRQ_SET_DATA_NONE`, `_BOOL`, `_EVENTFD`).
pub const IRQ_SET_DATA_NONE: u32 = 1 << 0;
/// See [`IRQ_SET_DATA_NONE`].
pub const IRQ_SET_DATA_BOOL: u32 = 1 << 1;
/// See [`IRQ_SET_DATA_NONE`].
pub const IRQ_SET_DATA_EVENTFD: u32 = 1 << 2;
/// SET_IRQS action bits 3-5 (`VFIO_IRQ_SET_ACTION_MASK`, `_UNMASK`, `_TRIGGER`).
pub const IRQ_SET_ACTION_MASK: u32 = 1 << 3;
/// See [`IRQ_SET_ACTION_MASK`].
pub const IRQ_SET_ACTION_UNMASK: u32 = 1 << 4;
/// See [`IRQ_SET_ACTION_MASK`].
pub const IRQ_SET_ACTION_TRIGGER: u32 = 1 << 5;
const IRQ_SET_DATA_BITS: u32 = 0x7;
const IRQ_SET_ACTION_BITS: u32 = 0x38;

/// What a client may ask in the VERSION message's JSON (vfio-user.rst "Version"); absent means
/// the spec's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VersionCaps {
    /// `max_msg_fds`: file descriptors the sender can receive in one message (default 1).
    pub max_msg_fds: Option<u64>,
    /// `max_data_xfer_size`: the largest `count` the sender accepts (default 1048576).
    pub max_data_xfer_size: Option<u64>,
}

/// `VFIO_USER_DMA_MAP` body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaMap {
    /// [`DMA_MAP_READ`] | [`DMA_MAP_WRITE`].
    pub flags: u32,
    /// Offset of the region in the file descriptor sent with the message.
    pub offset: u64,
    /// The DMA address of the region's first byte.
    pub address: u64,
    /// Length in bytes.
    pub size: u64,
}

/// `VFIO_USER_DMA_UNMAP` body (also its reply: the entry is echoed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaUnmap {
    /// The client's argsz.
    pub argsz: u32,
    /// [`DMA_UNMAP_FLAG_ALL`] or 0.
    pub flags: u32,
    /// First address.
    pub address: u64,
    /// Length in bytes.
    pub size: u64,
}

/// `struct vfio_region_info` as the GET_REGION_INFO reply carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionInfo {
    /// `VFIO_REGION_INFO_FLAG_READ` (1) | `_WRITE` (2); never `_MMAP`: every access is a message.
    pub flags: u32,
    /// The region index.
    pub index: u32,
    /// Size in bytes (0: absent).
    pub size: u64,
}

/// `struct vfio_irq_info` as the GET_IRQ_INFO reply carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IrqInfo {
    /// `VFIO_IRQ_INFO_EVENTFD` (1) | `_MASKABLE` (2) | `_AUTOMASKED` (4) | `_NORESIZE` (8).
    pub flags: u32,
    /// The IRQ index (`VFIO_PCI_INTX_IRQ_INDEX` = 0, ... `VFIO_PCI_MSIX_IRQ_INDEX` = 2).
    pub index: u32,
    /// Interrupts of this type.
    pub count: u32,
}

/// `VFIO_USER_DEVICE_SET_IRQS` body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetIrqs<'a> {
    /// Exactly one data bit and one action bit.
    pub flags: u32,
    /// The IRQ index.
    pub index: u32,
    /// First sub-index.
    pub start: u32,
    /// Number of sub-indexes.
    pub count: u32,
    /// One byte per sub-index with `VFIO_IRQ_SET_DATA_BOOL`, else empty.
    pub bools: &'a [u8],
}

impl SetIrqs<'_> {
    /// The data type bits.
    pub fn data(&self) -> u32 {
        self.flags & IRQ_SET_DATA_BITS
    }

    /// The action bits.
    pub fn action(&self) -> u32 {
        self.flags & IRQ_SET_ACTION_BITS
    }
}

/// A command message, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request<'a> {
    /// VERSION: the proposed version and capabilities.
    Version {
        /// Major version.
        major: u16,
        /// Minor version.
        minor: u16,
        /// Capabilities from the JSON.
        caps: VersionCaps,
    },
    /// DMA_MAP.
    DmaMap(DmaMap),
    /// DMA_UNMAP.
    DmaUnmap(DmaUnmap),
    /// DEVICE_GET_INFO.
    DeviceGetInfo,
    /// DEVICE_GET_REGION_INFO of a region index.
    RegionInfo {
        /// The index.
        index: u32,
    },
    /// DEVICE_GET_IRQ_INFO of an IRQ index.
    IrqInfo {
        /// The index.
        index: u32,
    },
    /// DEVICE_SET_IRQS.
    SetIrqs(SetIrqs<'a>),
    /// REGION_READ.
    RegionRead {
        /// Offset in the region.
        offset: u64,
        /// Region index.
        region: u32,
        /// Bytes to read.
        count: u32,
    },
    /// REGION_WRITE.
    RegionWrite {
        /// Offset in the region.
        offset: u64,
        /// Region index.
        region: u32,
        /// The bytes.
        data: &'a [u8],
    },
    /// DMA_READ (server to client).
    DmaRead {
        /// Client DMA address.
        address: u64,
        /// Bytes wanted.
        count: u64,
    },
    /// DMA_WRITE (server to client).
    DmaWrite {
        /// Client DMA address.
        address: u64,
        /// The bytes.
        data: &'a [u8],
    },
    /// DEVICE_RESET.
    DeviceReset,
    /// A command this implementation does not handle (answered with an error).
    Unsupported(Command),
}

fn bad(field: &'static str, value: u64) -> DecodeError {
    DecodeError::BadField { field, value }
}

/// Decodes the body of a command message whose header is `header`.
pub fn decode_request<'a>(header: &Header, payload: &'a [u8]) -> Result<Request<'a>, DecodeError> {
    if header.is_reply() || header.flags & 0xF != TYPE_COMMAND {
        return Err(bad("header.flags (type)", u64::from(header.flags)));
    }
    let mut r = Reader::new(payload);
    Ok(match header.command {
        Command::Version => {
            let major = r.u16("version.major")?;
            let minor = r.u16("version.minor")?;
            let caps = parse_caps(r.bytes("version.data", r.remaining())?)?;
            Request::Version { major, minor, caps }
        }
        Command::DmaMap => {
            let _argsz = r.u32("dma_map.argsz")?;
            let flags = r.u32("dma_map.flags")?;
            let map = DmaMap {
                flags,
                offset: r.u64("dma_map.offset")?,
                address: r.u64("dma_map.address")?,
                size: r.u64("dma_map.size")?,
            };
            if flags & !(DMA_MAP_READ | DMA_MAP_WRITE) != 0 {
                return Err(bad("dma_map.flags", u64::from(flags)));
            }
            if map.size == 0 || map.address.checked_add(map.size - 1).is_none() {
                return Err(bad("dma_map.size", map.size));
            }
            Request::DmaMap(map)
        }
        Command::DmaUnmap => {
            let unmap = DmaUnmap {
                argsz: r.u32("dma_unmap.argsz")?,
                flags: r.u32("dma_unmap.flags")?,
                address: r.u64("dma_unmap.address")?,
                size: r.u64("dma_unmap.size")?,
            };
            if unmap.flags & !DMA_UNMAP_FLAG_ALL != 0 {
                // Dirty-page bitmaps (bit 0) and vaddr updates (bit 2) are not offered.
                return Err(bad("dma_unmap.flags", u64::from(unmap.flags)));
            }
            Request::DmaUnmap(unmap)
        }
        Command::DeviceGetInfo => {
            let _argsz = r.u32("device_info.argsz")?;
            Request::DeviceGetInfo
        }
        Command::DeviceGetRegionInfo => {
            let _argsz = r.u32("region_info.argsz")?;
            let _flags = r.u32("region_info.flags")?;
            Request::RegionInfo { index: r.u32("region_info.index")? }
        }
        Command::DeviceGetIrqInfo => {
            let _argsz = r.u32("irq_info.argsz")?;
            let _flags = r.u32("irq_info.flags")?;
            Request::IrqInfo { index: r.u32("irq_info.index")? }
        }
        Command::DeviceSetIrqs => {
            let _argsz = r.u32("set_irqs.argsz")?;
            let flags = r.u32("set_irqs.flags")?;
            let index = r.u32("set_irqs.index")?;
            let start = r.u32("set_irqs.start")?;
            let count = r.u32("set_irqs.count")?;
            let one_bit = |v: u32| v.count_ones() == 1;
            if !one_bit(flags & IRQ_SET_DATA_BITS)
                || !one_bit(flags & IRQ_SET_ACTION_BITS)
                || flags & !(IRQ_SET_DATA_BITS | IRQ_SET_ACTION_BITS) != 0
            {
                return Err(bad("set_irqs.flags", u64::from(flags)));
            }
            if start.checked_add(count).is_none() {
                return Err(bad("set_irqs.count", u64::from(count)));
            }
            let bools = if flags & IRQ_SET_DATA_BOOL != 0 { r.bytes("set_irqs.data", count as usize)? } else { &[] };
            Request::SetIrqs(SetIrqs { flags, index, start, count, bools })
        }
        Command::RegionRead => Request::RegionRead {
            offset: r.u64("region_read.offset")?,
            region: r.u32("region_read.region")?,
            count: r.u32("region_read.count")?,
        },
        Command::RegionWrite => {
            let offset = r.u64("region_write.offset")?;
            let region = r.u32("region_write.region")?;
            let count = r.u32("region_write.count")?;
            Request::RegionWrite { offset, region, data: r.bytes("region_write.data", count as usize)? }
        }
        Command::DmaRead => Request::DmaRead { address: r.u64("dma_read.address")?, count: r.u64("dma_read.count")? },
        Command::DmaWrite => {
            let address = r.u64("dma_write.address")?;
            let count = r.u64("dma_write.count")?;
            let count = usize::try_from(count).map_err(|_| bad("dma_write.count", count))?;
            Request::DmaWrite { address, data: r.bytes("dma_write.data", count)? }
        }
        Command::DeviceReset => Request::DeviceReset,
        other => Request::Unsupported(other),
    })
}

/// Parses the VERSION message's optional JSON: NUL-terminated UTF-8, an object whose
/// `capabilities` object may hold `max_msg_fds` and `max_data_xfer_size`. Unknown keys are
/// ignored, as the spec lets capabilities grow.
fn parse_caps(data: &[u8]) -> Result<VersionCaps, DecodeError> {
    let text = match data.iter().position(|&b| b == 0) {
        Some(nul) => &data[..nul],
        None if data.is_empty() => return Ok(VersionCaps::default()),
        None => return Err(DecodeError::BadCapabilities { reason: "no terminating NUL".into() }),
    };
    if text.is_empty() {
        return Ok(VersionCaps::default());
    }
    let value: serde_json::Value =
        serde_json::from_slice(text).map_err(|e| DecodeError::BadCapabilities { reason: e.to_string() })?;
    let caps = value.get("capabilities");
    let number = |key: &str| caps.and_then(|c| c.get(key)).and_then(serde_json::Value::as_u64);
    Ok(VersionCaps { max_msg_fds: number("max_msg_fds"), max_data_xfer_size: number("max_data_xfer_size") })
}

/// A reply body, to be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply<'a> {
    /// No payload (DMA_MAP, SET_IRQS, DEVICE_RESET).
    Empty,
    /// VERSION: the accepted version and this server's capabilities JSON (without the NUL).
    Version {
        /// Major.
        major: u16,
        /// Minor.
        minor: u16,
        /// JSON text.
        caps: &'a str,
    },
    /// DMA_UNMAP: the entry, echoed.
    DmaUnmap(DmaUnmap),
    /// DEVICE_GET_INFO.
    DeviceInfo {
        /// `VFIO_DEVICE_FLAGS_RESET` (1) | `VFIO_DEVICE_FLAGS_PCI` (2).
        flags: u32,
        /// Number of regions.
        num_regions: u32,
        /// Number of IRQ types.
        num_irqs: u32,
    },
    /// DEVICE_GET_REGION_INFO.
    RegionInfo(RegionInfo),
    /// DEVICE_GET_IRQ_INFO.
    IrqInfo(IrqInfo),
    /// REGION_READ: the bytes read.
    RegionRead {
        /// Offset.
        offset: u64,
        /// Region.
        region: u32,
        /// Data.
        data: &'a [u8],
    },
    /// REGION_WRITE: what was written.
    RegionWrite {
        /// Offset.
        offset: u64,
        /// Region.
        region: u32,
        /// Bytes written.
        count: u32,
    },
    /// DMA_READ (client to server): the bytes.
    DmaRead {
        /// Address.
        address: u64,
        /// Data.
        data: &'a [u8],
    },
    /// DMA_WRITE (client to server): bytes written.
    DmaWrite {
        /// Address.
        address: u64,
        /// Count.
        count: u64,
    },
}

/// Length of `struct vfio_device_info`, `vfio_irq_info` (argsz fields of the replies).
const INFO16: u32 = 16;
/// Length of `struct vfio_region_info`.
const REGION_INFO_LEN: u32 = 32;
/// Length of the DMA_UNMAP entry.
const DMA_UNMAP_LEN: u32 = 24;

/// Encodes the reply to message `id` of `command`.
pub fn encode_reply(id: u16, command: Command, reply: &Reply<'_>) -> Vec<u8> {
    let mut w = Writer::new(id, command, TYPE_REPLY, 0);
    match reply {
        Reply::Empty => {}
        Reply::Version { major, minor, caps } => {
            w.u16(*major).u16(*minor).bytes(caps.as_bytes()).bytes(&[0]);
        }
        Reply::DmaUnmap(u) => {
            w.u32(DMA_UNMAP_LEN).u32(u.flags).u64(u.address).u64(u.size);
        }
        Reply::DeviceInfo { flags, num_regions, num_irqs } => {
            w.u32(INFO16).u32(*flags).u32(*num_regions).u32(*num_irqs);
        }
        Reply::RegionInfo(i) => {
            w.u32(REGION_INFO_LEN).u32(i.flags).u32(i.index).u32(0).u64(i.size).u64(0);
        }
        Reply::IrqInfo(i) => {
            w.u32(INFO16).u32(i.flags).u32(i.index).u32(i.count);
        }
        Reply::RegionRead { offset, region, data } => {
            w.u64(*offset).u32(*region).u32(data.len() as u32).bytes(data);
        }
        Reply::RegionWrite { offset, region, count } => {
            w.u64(*offset).u32(*region).u32(*count);
        }
        Reply::DmaRead { address, data } => {
            w.u64(*address).u64(data.len() as u64).bytes(data);
        }
        Reply::DmaWrite { address, count } => {
            w.u64(*address).u64(*count);
        }
    }
    w.finish()
}

/// Encodes an error reply: the header alone, with the error bit and `errno`.
pub fn encode_error(id: u16, command: Command, errno: i32) -> Vec<u8> {
    Writer::new(id, command, TYPE_REPLY | FLAG_ERROR, errno.unsigned_abs()).finish()
}

/// Encodes a command message (the client's side, and the server's DMA_READ / DMA_WRITE).
pub fn encode_request(id: u16, request: &Request<'_>, flags: u32) -> Vec<u8> {
    let command = match request {
        Request::Version { .. } => Command::Version,
        Request::DmaMap(_) => Command::DmaMap,
        Request::DmaUnmap(_) => Command::DmaUnmap,
        Request::DeviceGetInfo => Command::DeviceGetInfo,
        Request::RegionInfo { .. } => Command::DeviceGetRegionInfo,
        Request::IrqInfo { .. } => Command::DeviceGetIrqInfo,
        Request::SetIrqs(_) => Command::DeviceSetIrqs,
        Request::RegionRead { .. } => Command::RegionRead,
        Request::RegionWrite { .. } => Command::RegionWrite,
        Request::DmaRead { .. } => Command::DmaRead,
        Request::DmaWrite { .. } => Command::DmaWrite,
        Request::DeviceReset => Command::DeviceReset,
        Request::Unsupported(c) => *c,
    };
    let mut w = Writer::new(id, command, TYPE_COMMAND | flags, 0);
    match request {
        Request::Version { major, minor, caps } => {
            w.u16(*major).u16(*minor);
            let mut json = String::from("{\"capabilities\":{");
            let mut fields = Vec::new();
            if let Some(n) = caps.max_msg_fds {
                fields.push(format!("\"max_msg_fds\":{n}"));
            }
            if let Some(n) = caps.max_data_xfer_size {
                fields.push(format!("\"max_data_xfer_size\":{n}"));
            }
            json.push_str(&fields.join(","));
            json.push_str("}}");
            w.bytes(json.as_bytes()).bytes(&[0]);
        }
        Request::DmaMap(m) => {
            w.u32(32).u32(m.flags).u64(m.offset).u64(m.address).u64(m.size);
        }
        Request::DmaUnmap(u) => {
            w.u32(u.argsz).u32(u.flags).u64(u.address).u64(u.size);
        }
        Request::DeviceGetInfo => {
            w.u32(INFO16).u32(0).u32(0).u32(0);
        }
        Request::RegionInfo { index } => {
            w.u32(REGION_INFO_LEN).u32(0).u32(*index).u32(0).u64(0).u64(0);
        }
        Request::IrqInfo { index } => {
            w.u32(INFO16).u32(0).u32(*index).u32(0);
        }
        Request::SetIrqs(s) => {
            w.u32(20 + s.bools.len() as u32).u32(s.flags).u32(s.index).u32(s.start).u32(s.count).bytes(s.bools);
        }
        Request::RegionRead { offset, region, count } => {
            w.u64(*offset).u32(*region).u32(*count);
        }
        Request::RegionWrite { offset, region, data } => {
            w.u64(*offset).u32(*region).u32(data.len() as u32).bytes(data);
        }
        Request::DmaRead { address, count } => {
            w.u64(*address).u64(*count);
        }
        Request::DmaWrite { address, data } => {
            w.u64(*address).u64(data.len() as u64).bytes(data);
        }
        Request::DeviceReset | Request::Unsupported(_) => {}
    }
    w.finish()
}

/// Decodes the payload of a DMA_READ reply: the data, checked against what was asked.
pub fn decode_dma_read_reply(payload: &[u8], address: u64, count: usize) -> Result<&[u8], DecodeError> {
    let mut r = Reader::new(payload);
    let got_address = r.u64("dma_read_reply.address")?;
    let got_count = r.u64("dma_read_reply.count")?;
    if got_address != address {
        return Err(bad("dma_read_reply.address", got_address));
    }
    if got_count != count as u64 {
        return Err(bad("dma_read_reply.count", got_count));
    }
    Ok(r.bytes("dma_read_reply.data", count)?)
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
