//! Resource descriptors: the variable-length records of GET_FUNC_CONFIG, GET_PROFILE_CONFIG and
//! SET_PROFILE_CONFIG, and the bounded walk over a list of them (spec/protocol.md §5.8).
//!
//! Every descriptor starts with type @0, length @1, a reserved byte and the flags byte @3.
//! Offsets inside a descriptor are relative to its first byte; error offsets are absolute in the
//! command buffer.

mod nic;
mod pcie;

pub use nic::NicDescriptor;
pub use pcie::{McType, PcieDescriptor, PfType, PortDescriptor};

use super::support::{bit_flags, jump};
use crate::wire::{Reader, Wire, WireError, Writer};

/// Descriptor type codes (spec/protocol.md §5.8, be_cmds.h, O sli4.h).
pub mod kind {
    /// PCIe descriptor, v0 (72 bytes).
    #[doc(alias = "PCIE_RESOURCE_DESC_TYPE_V0")]
    pub const PCIE_V0: u8 = 0x40;
    /// NIC descriptor, v0 (72 bytes).
    #[doc(alias = "NIC_RESOURCE_DESC_TYPE_V0")]
    pub const NIC_V0: u8 = 0x41;
    /// PCIe descriptor, v1 (88 bytes).
    #[doc(alias = "PCIE_RESOURCE_DESC_TYPE_V1")]
    pub const PCIE_V1: u8 = 0x50;
    /// NIC descriptor, v1 (88 bytes).
    #[doc(alias = "NIC_RESOURCE_DESC_TYPE_V1")]
    pub const NIC_V1: u8 = 0x51;
    /// iSCSI descriptor (O only; layout not public).
    pub const ISCSI: u8 = 0x52;
    /// FC / FCoE descriptor (O only; layout not public).
    pub const FCFCOE: u8 = 0x53;
    /// RDMA descriptor (O only; layout not public).
    pub const RDMA: u8 = 0x54;
    /// Port descriptor, v1 (88 bytes).
    #[doc(alias = "PORT_RESOURCE_DESC_TYPE_V1")]
    pub const PORT_V1: u8 = 0x55;
    /// ISAP descriptor (O only; layout not public).
    pub const ISAP: u8 = 0x56;
}

/// Which layout generation a PCIe or NIC descriptor uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DescriptorVersion {
    /// 72 bytes (types 0x40, 0x41; Lancer, older firmware).
    V0,
    /// 88 bytes (types 0x50, 0x51; Skyhawk).
    #[default]
    V1,
}

impl DescriptorVersion {
    /// Descriptor length in bytes for this version.
    pub fn size(self) -> usize {
        match self {
            Self::V0 => RESOURCE_DESC_SIZE_V0,
            Self::V1 => RESOURCE_DESC_SIZE_V1,
        }
    }
}

/// Length of a v0 descriptor, and what a length byte of 0 means (spec §5.8).
pub const RESOURCE_DESC_SIZE_V0: usize = 72;
/// Length of a v1 descriptor.
pub const RESOURCE_DESC_SIZE_V1: usize = 88;
/// The shortest descriptor ocetool accepts: the 4-byte common header (type, length, reserved,
/// flags). It also bounds a walk: a buffer of n bytes holds at most n / 4 descriptors.
pub const MIN_DESCRIPTOR_LEN: usize = 4;

bit_flags! {
    /// The flags byte @3 of every descriptor (spec/protocol.md §5.8).
    DescriptorFlags(u8) {
        /// `cap_flags` of this NIC descriptor is valid.
        #[doc(alias = "IF_CAPS_FLAGS_VALID_SHIFT")]
        IF_CAPS_VALID = 0x1, "if_caps_valid";
        /// This NIC descriptor is the template for the PF's VFs.
        #[doc(alias = "VFT_SHIFT")]
        VFT = 0x8, "vft";
        /// QoS values are in absolute units.
        #[doc(alias = "QUN_SHIFT")]
        QUN = 0x10, "qun";
        /// Apply immediately.
        #[doc(alias = "IMM_SHIFT")]
        IMM = 0x40, "imm";
        /// Do not save to flash.
        #[doc(alias = "NOSV_SHIFT")]
        NOSV = 0x80, "nosv";
    }
}

/// One resource descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceDescriptor {
    /// PCIe function descriptor (0x50 v1, 0x40 v0).
    Pcie(PcieDescriptor),
    /// NIC resource descriptor (0x51 v1, 0x41 v0).
    Nic(NicDescriptor),
    /// Port descriptor (0x55).
    Port(PortDescriptor),
    /// Any other type (RDMA 0x54, ISAP 0x56, …): kept as sent.
    Unknown {
        /// The type byte.
        kind: u8,
        /// The whole descriptor as on the wire, type and length bytes included. Encoding writes
        /// `kind` at byte 0 and the rest of these bytes unchanged.
        bytes: Vec<u8>,
    },
}

impl ResourceDescriptor {
    /// The type byte this descriptor encodes with.
    pub fn kind(&self) -> u8 {
        match self {
            Self::Pcie(d) => d.kind(),
            Self::Nic(d) => d.kind(),
            Self::Port(_) => kind::PORT_V1,
            Self::Unknown { kind, .. } => *kind,
        }
    }

    /// The number of bytes [`Wire::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        match self {
            Self::Pcie(d) => d.version.size(),
            Self::Nic(d) => d.version.size(),
            Self::Port(_) => RESOURCE_DESC_SIZE_V1,
            Self::Unknown { bytes, .. } => bytes.len(),
        }
    }
}

/// A descriptor's extent in the buffer: `[start, start + len)`, already checked to fit.
fn extent<'a>(r: &Reader<'a>, start: usize, len: usize) -> Reader<'a> {
    Reader::at(&r.buffer()[..start + len], start)
}

/// Checks that a known type's declared length holds its layout.
fn require(field: &'static str, start: usize, len: usize, needed: usize) -> Result<(), WireError> {
    if len < needed { Err(WireError { field, offset: start, needed, available: len }) } else { Ok(()) }
}

impl Wire for ResourceDescriptor {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        match self {
            Self::Pcie(d) => d.encode(w),
            Self::Nic(d) => d.encode(w),
            Self::Port(d) => d.encode(w),
            Self::Unknown { kind, bytes } => {
                if bytes.len() < MIN_DESCRIPTOR_LEN {
                    return Err(WireError {
                        field: "descriptor",
                        offset: w.position(),
                        needed: MIN_DESCRIPTOR_LEN,
                        available: bytes.len(),
                    });
                }
                w.u8("descriptor_type", *kind)?;
                w.bytes("descriptor", &bytes[1..])
            }
        }
    }

    /// Decodes one descriptor and leaves the reader after it (advanced by its declared length,
    /// 0 meaning 72). A known type whose length is shorter than its layout, a length below 4,
    /// or a descriptor running past the buffer are typed errors. Bytes beyond a known layout
    /// are skipped.
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start = r.position();
        let kind = r.u8("descriptor_type")?;
        let len = match r.u8("descriptor_length")? {
            0 => RESOURCE_DESC_SIZE_V0,
            n => usize::from(n),
        };
        if len < MIN_DESCRIPTOR_LEN {
            return Err(WireError {
                field: "descriptor_length",
                offset: start + 1,
                needed: MIN_DESCRIPTOR_LEN,
                available: len,
            });
        }
        jump(r, start);
        let bytes = r.bytes("descriptor", len)?;
        let mut body = extent(r, start, len);
        Ok(match kind {
            kind::PCIE_V0 | kind::PCIE_V1 => {
                let version = if kind == kind::PCIE_V0 { DescriptorVersion::V0 } else { DescriptorVersion::V1 };
                require("pcie_descriptor", start, len, version.size())?;
                Self::Pcie(PcieDescriptor::decode_body(&mut body, version)?)
            }
            kind::NIC_V0 | kind::NIC_V1 => {
                let version = if kind == kind::NIC_V0 { DescriptorVersion::V0 } else { DescriptorVersion::V1 };
                require("nic_descriptor", start, len, version.size())?;
                Self::Nic(NicDescriptor::decode_body(&mut body, version)?)
            }
            kind::PORT_V1 => {
                require("port_descriptor", start, len, RESOURCE_DESC_SIZE_V1)?;
                Self::Port(PortDescriptor::decode(&mut body)?)
            }
            other => Self::Unknown { kind: other, bytes: bytes.to_vec() },
        })
    }
}

/// Walks `count` descriptors from the reader's position (the driver's rule, spec §5.8).
///
/// The device's count is never trusted for the allocation: the capacity is bounded by the bytes
/// left divided by [`MIN_DESCRIPTOR_LEN`], and every descriptor consumes at least that many
/// bytes, so a count beyond what the buffer holds ends in a typed error, not a huge loop.
pub fn decode_descriptors(r: &mut Reader<'_>, count: usize) -> Result<Vec<ResourceDescriptor>, WireError> {
    let mut out = Vec::with_capacity(count.min(r.remaining() / MIN_DESCRIPTOR_LEN));
    for _ in 0..count {
        out.push(ResourceDescriptor::decode(r)?);
    }
    Ok(out)
}

/// Writes `descriptors` back to back from the writer's position.
pub fn encode_descriptors(w: &mut Writer<'_>, descriptors: &[ResourceDescriptor]) -> Result<(), WireError> {
    descriptors.iter().try_for_each(|d| d.encode(w))
}

/// Writes the common 4-byte header: type, length, reserved, flags.
fn encode_header(w: &mut Writer<'_>, kind: u8, len: usize, flags: DescriptorFlags) -> Result<(), WireError> {
    w.u8("descriptor_type", kind)?;
    w.u8("descriptor_length", len as u8)?;
    w.zeros("descriptor_rsvd", 1)?;
    w.u8("descriptor_flags", flags.0)
}

#[cfg(test)]
mod tests;
