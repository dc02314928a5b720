//! A vfio-user client for tests and benchmarks: what QEMU's `vfio-user-pci` does, driven by
//! hand. It can share memory by file descriptor (a memfd, as QEMU does with `share=on`) or keep
//! it and answer the server's DMA_READ / DMA_WRITE itself, and it can send any bytes at all.
//! [`ServedFunction`] puts the host stack's `PciFunction` seam over it.

mod function;

pub use function::{ServedBar, ServedConfig, ServedDma, ServedFunction};

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use crate::link::{Incoming, Link, LinkError};
use crate::protocol::messages::{DMA_MAP_READ, DMA_MAP_WRITE, IRQ_SET_ACTION_TRIGGER, IRQ_SET_DATA_EVENTFD};
use crate::protocol::{
    DmaMap, DmaUnmap, FLAG_NO_REPLY, Reader, Reply, Request, SetIrqs, VersionCaps, decode_request, encode_error,
    encode_reply, encode_request,
};

/// What went wrong for the client.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket.
    #[error("{0}")]
    Link(#[from] LinkError),
    /// The server answered with an error reply.
    #[error("the server answered errno {0}")]
    Errno(u32),
    /// The server's reply does not parse.
    #[error("bad reply: {0}")]
    BadReply(String),
}

/// Memory the client keeps and lends by message.
#[derive(Debug)]
struct Lent {
    address: u64,
    bytes: Vec<u8>,
}

/// A test client.
#[derive(Debug)]
pub struct Client {
    link: Link,
    next_id: u16,
    lent: Vec<Lent>,
    dma_messages: u64,
    server_caps: Option<serde_json::Value>,
}

impl Client {
    /// Connects to a server's socket.
    pub fn connect(path: &Path) -> io::Result<Self> {
        Self::from_stream(UnixStream::connect(path)?)
    }

    /// Uses a connected socket (one end of a socketpair).
    pub fn from_stream(stream: UnixStream) -> io::Result<Self> {
        Ok(Self {
            link: Link::new(stream, Duration::from_secs(3600))?,
            next_id: 0,
            lent: Vec::new(),
            dma_messages: 0,
            server_caps: None,
        })
    }

    /// Sends raw bytes, well-formed or not.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), LinkError> {
        self.link.send(bytes)
    }

    /// Reads the next message from the server (after [`Client::send_raw`]).
    pub fn receive(&mut self) -> Result<Incoming, ClientError> {
        Ok(self.link.receive_any()?)
    }

    /// Sends a request with descriptors and returns the server's reply, answering the server's
    /// DMA messages meanwhile. An error reply is returned as [`ClientError::Errno`].
    pub fn request(&mut self, request: &Request<'_>, fds: &[BorrowedFd<'_>]) -> Result<Incoming, ClientError> {
        self.next_id = self.next_id.wrapping_add(1) & 0x7FFF;
        let id = self.next_id;
        let bytes = encode_request(id, request, 0);
        if fds.is_empty() { self.link.send(&bytes) } else { self.link.send_with_fds(&bytes, fds) }?;
        loop {
            let msg = self.link.receive_any()?;
            if msg.header.is_reply() && msg.header.id == id {
                return match msg.header.error() {
                    Some(errno) => Err(ClientError::Errno(errno)),
                    None => Ok(msg),
                };
            }
            if !msg.header.is_reply() {
                self.answer_dma(&msg)?;
            }
        }
    }

    /// Sends a request the server must not answer (a posted write).
    pub fn post(&mut self, request: &Request<'_>) -> Result<(), ClientError> {
        self.next_id = self.next_id.wrapping_add(1) & 0x7FFF;
        Ok(self.link.send(&encode_request(self.next_id, request, FLAG_NO_REPLY))?)
    }

    /// DMA messages the server sent so far.
    pub fn dma_messages(&self) -> u64 {
        self.dma_messages
    }

    fn answer_dma(&mut self, msg: &Incoming) -> Result<(), ClientError> {
        self.dma_messages += 1;
        let (id, command) = (msg.header.id, msg.header.command);
        let reply = match decode_request(&msg.header, &msg.payload) {
            Ok(Request::DmaRead { address, count }) => match self.lent_range(address, count as usize) {
                Some((i, off)) => {
                    let data = &self.lent[i].bytes[off..off + count as usize];
                    encode_reply(id, command, &Reply::DmaRead { address, data })
                }
                None => encode_error(id, command, 14), // EFAULT
            },
            Ok(Request::DmaWrite { address, data }) => match self.lent_range(address, data.len()) {
                Some((i, off)) => {
                    self.lent[i].bytes[off..off + data.len()].copy_from_slice(data);
                    encode_reply(id, command, &Reply::DmaWrite { address, count: data.len() as u64 })
                }
                None => encode_error(id, command, 14),
            },
            _ => encode_error(id, command, 22),
        };
        Ok(self.link.send(&reply)?)
    }

    fn lent_range(&self, address: u64, len: usize) -> Option<(usize, usize)> {
        self.lent.iter().enumerate().find_map(|(i, l)| {
            let off = usize::try_from(address.checked_sub(l.address)?).ok()?;
            (off.checked_add(len)? <= l.bytes.len()).then_some((i, off))
        })
    }

    /// VERSION 0.0 with this client's capabilities.
    pub fn negotiate(&mut self) -> Result<(u16, u16), ClientError> {
        self.negotiate_with(VersionCaps { max_msg_fds: Some(8), max_data_xfer_size: Some(1 << 20) })
    }

    /// VERSION 0.0 with `caps`; the server's capabilities are kept ([`Client::server_caps`]).
    pub fn negotiate_with(&mut self, caps: VersionCaps) -> Result<(u16, u16), ClientError> {
        let reply = self.request(&Request::Version { major: 0, minor: 0, caps }, &[])?;
        let bad = |e: &dyn std::fmt::Display| ClientError::BadReply(e.to_string());
        let mut r = Reader::new(&reply.payload);
        let major = r.u16("major").map_err(|e| bad(&e))?;
        let minor = r.u16("minor").map_err(|e| bad(&e))?;
        let json = r.bytes("capabilities", r.remaining()).map_err(|e| bad(&e))?;
        let json = json.split(|&b| b == 0).next().unwrap_or_default();
        self.server_caps = Some(serde_json::from_slice(json).map_err(|e| bad(&e))?);
        Ok((major, minor))
    }

    /// The `capabilities` object of the server's VERSION reply (after a negotiation).
    pub fn server_caps(&self) -> Option<&serde_json::Value> {
        self.server_caps.as_ref().map(|v| &v["capabilities"])
    }

    /// Shares `size` bytes of `file` at `offset` as DMA addresses `address..`.
    pub fn map_file(&mut self, address: u64, size: u64, file: &File, offset: u64) -> Result<(), ClientError> {
        let map = DmaMap { flags: DMA_MAP_READ | DMA_MAP_WRITE, offset, address, size };
        self.request(&Request::DmaMap(map), &[file.as_fd()]).map(drop)
    }

    /// Lends `bytes` as DMA addresses `address..` without a descriptor: the server must use
    /// DMA_READ / DMA_WRITE, which this client answers.
    pub fn map_messages(&mut self, address: u64, bytes: Vec<u8>) -> Result<(), ClientError> {
        let map = DmaMap { flags: DMA_MAP_READ | DMA_MAP_WRITE, offset: 0, address, size: bytes.len() as u64 };
        self.request(&Request::DmaMap(map), &[])?;
        self.lent.push(Lent { address, bytes });
        Ok(())
    }

    /// The lent memory at `address` (after the server wrote it).
    pub fn lent(&self, address: u64, len: usize) -> Option<&[u8]> {
        self.lent_range(address, len).map(|(i, off)| &self.lent[i].bytes[off..off + len])
    }

    /// Removes DMA mappings inside `address..address + size`.
    pub fn unmap(&mut self, address: u64, size: u64) -> Result<(), ClientError> {
        self.request(&Request::DmaUnmap(DmaUnmap { argsz: 24, flags: 0, address, size }), &[]).map(drop)
    }

    /// Wires interrupts `start..` of IRQ type `index` to eventfds.
    pub fn set_eventfds(&mut self, index: u32, start: u32, fds: &[BorrowedFd<'_>]) -> Result<(), ClientError> {
        let set = SetIrqs {
            flags: IRQ_SET_DATA_EVENTFD | IRQ_SET_ACTION_TRIGGER,
            index,
            start,
            count: fds.len() as u32,
            bools: &[],
        };
        self.request(&Request::SetIrqs(set), fds).map(drop)
    }

    /// The size of region `index` (DEVICE_GET_REGION_INFO); 0 for an absent one.
    pub fn region_size(&mut self, index: u32) -> Result<u64, ClientError> {
        let reply = self.request(&Request::RegionInfo { index }, &[])?;
        // argsz, flags, index, cap_offset, then the size (vfio-user.rst "Region info").
        Reader::at(&reply.payload, 16).u64("region_info.size").map_err(|e| ClientError::BadReply(e.to_string()))
    }

    /// Reads `len` bytes of region `region` at `offset`.
    pub fn read(&mut self, region: u32, offset: u64, len: usize) -> Result<Vec<u8>, ClientError> {
        let reply = self.request(&Request::RegionRead { offset, region, count: len as u32 }, &[])?;
        let data = reply.payload.get(16..16 + len).ok_or_else(|| ClientError::BadReply("short data".into()))?;
        Ok(data.to_vec())
    }

    /// Reads a 32-bit register.
    pub fn read32(&mut self, region: u32, offset: u64) -> Result<u32, ClientError> {
        let b = self.read(region, offset, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Writes `data` at `offset` of region `region`, waiting for the reply.
    pub fn write(&mut self, region: u32, offset: u64, data: &[u8]) -> Result<(), ClientError> {
        self.request(&Request::RegionWrite { offset, region, data }, &[]).map(drop)
    }

    /// Writes a 32-bit register.
    pub fn write32(&mut self, region: u32, offset: u64, value: u32) -> Result<(), ClientError> {
        self.write(region, offset, &value.to_le_bytes())
    }

    /// Asks the server to reset the device.
    pub fn reset(&mut self) -> Result<(), ClientError> {
        self.request(&Request::DeviceReset, &[]).map(drop)
    }
}
