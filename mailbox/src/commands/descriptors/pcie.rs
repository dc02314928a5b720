//! The PCIe function descriptor (0x50 v1 / 0x40 v0) with its `pf_type` mission, and the port
//! descriptor (0x55) with its multi-channel type (spec/protocol.md §5.8).

use super::{DescriptorFlags, DescriptorVersion, RESOURCE_DESC_SIZE_V1, encode_header, kind};
use crate::commands::support::{code_enum, fill_to, jump};
use crate::wire::{Reader, WireError, Writer};

/// `pf_type` of a PCIe descriptor: the function's mission (spec/protocol.md §5.8, §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PfType(pub u8);

impl PfType {
    /// A NIC function (be2net `MISSION_NIC`; O: NIC/TOE).
    pub const MISSION_NIC: Self = Self(1);
    /// iSCSI (O only).
    pub const ISCSI: Self = Self(2);
    /// FCoE (O only).
    pub const FCOE: Self = Self(4);
    /// A NIC function with RoCE (be2net `MISSION_RDMA`; O: NIC + TOE + RDMA).
    pub const MISSION_RDMA: Self = Self(8);
    /// Fibre Channel (O only).
    pub const FC: Self = Self(0x10);
    /// O's "default"; in a SET_PROFILE_CONFIG descriptor, "leave unchanged".
    pub const UNCHANGED: Self = Self(0xFF);

    /// True for the two missions be2net counts as NIC PFs (NIC and RDMA).
    pub fn is_nic(self) -> bool {
        self == Self::MISSION_NIC || self == Self::MISSION_RDMA
    }

    /// True for the RDMA (RoCE) mission.
    pub fn is_rdma(self) -> bool {
        self == Self::MISSION_RDMA
    }

    /// A short name, `None` for a value no source names.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::MISSION_NIC => "nic",
            Self::ISCSI => "iscsi",
            Self::FCOE => "fcoe",
            Self::MISSION_RDMA => "rdma",
            Self::FC => "fc",
            Self::UNCHANGED => "default",
            _ => return None,
        })
    }
}

/// PCIe function descriptor. v0 is the first 72 bytes of the 88-byte v1 layout.
#[doc(alias = "be_pcie_res_desc")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PcieDescriptor {
    /// v0 (0x40, 72 bytes) or v1 (0x50, 88 bytes).
    pub version: DescriptorVersion,
    /// Flags @3.
    pub flags: DescriptorFlags,
    /// u16 @4: reserved in be2net, `instance` in O.
    pub instance: u16,
    /// `pf_num` @6 (be2net matches it against its own; SET_PROFILE_CONFIG sends the devfn).
    pub pf_num: u8,
    /// `sriov_state` @12: 1 = SR-IOV enabled.
    pub sriov_state: u8,
    /// `pf_state` @13: non-zero = PF enabled.
    pub pf_state: u8,
    /// `pf_type` @14.
    pub pf_type: PfType,
    /// `num_vfs` u16 @16.
    pub num_vfs: u16,
    /// The dword @20: reserved in be2net; O puts `mission_roles` in bits 7:0, change flags
    /// pchg/schg/xchg in bits 27–29 and `xrom` in bits 31:30. Kept whole.
    pub roles: u32,
}

impl PcieDescriptor {
    /// The "leave unchanged" template (spec §5.8): `sriov_state`, `pf_state`, `pf_type` 0xFF,
    /// `num_vfs` 0xFFFF; everything else 0.
    #[doc(alias = "be_reset_pcie_desc")]
    pub fn unchanged(version: DescriptorVersion) -> Self {
        Self {
            version,
            sriov_state: 0xFF,
            pf_state: 0xFF,
            pf_type: PfType::UNCHANGED,
            num_vfs: 0xFFFF,
            ..Self::default()
        }
    }

    /// The type byte: 0x50 for v1, 0x40 for v0.
    pub fn kind(&self) -> u8 {
        match self.version {
            DescriptorVersion::V0 => kind::PCIE_V0,
            DescriptorVersion::V1 => kind::PCIE_V1,
        }
    }

    /// Writes the descriptor (header included): 72 or 88 bytes.
    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let start = w.position();
        encode_header(w, self.kind(), self.version.size(), self.flags)?;
        w.u16("instance", self.instance)?;
        w.u8("pf_num", self.pf_num)?;
        w.zeros("rsvd", 5)?;
        w.u8("sriov_state", self.sriov_state)?;
        w.u8("pf_state", self.pf_state)?;
        w.u8("pf_type", self.pf_type.0)?;
        w.zeros("rsvd", 1)?;
        w.u16("num_vfs", self.num_vfs)?;
        w.zeros("rsvd", 2)?;
        w.u32("mission_roles", self.roles)?;
        fill_to(w, "rsvd_tail", start + self.version.size())
    }

    pub(super) fn decode_body(r: &mut Reader<'_>, version: DescriptorVersion) -> Result<Self, WireError> {
        let start = r.position();
        jump(r, start + 3);
        let flags = DescriptorFlags(r.u8("descriptor_flags")?);
        let instance = r.u16("instance")?;
        let pf_num = r.u8("pf_num")?;
        jump(r, start + 12);
        let sriov_state = r.u8("sriov_state")?;
        let pf_state = r.u8("pf_state")?;
        let pf_type = PfType(r.u8("pf_type")?);
        jump(r, start + 16);
        let num_vfs = r.u16("num_vfs")?;
        jump(r, start + 20);
        let roles = r.u32("mission_roles")?;
        Ok(Self { version, flags, instance, pf_num, sriov_state, pf_state, pf_type, num_vfs, roles })
    }
}

code_enum! {
    /// `mc_type` of the port descriptor: the multi-channel mode (spec/protocol.md §5.8, be.h).
    McType(u8) {
        /// No multi-channel.
        #[doc(alias = "MC_NONE")]
        None = 1, "none";
        /// UMC.
        #[doc(alias = "UMC")]
        Umc = 2, "UMC";
        /// FLEX10.
        #[doc(alias = "FLEX10")]
        Flex10 = 3, "FLEX10";
        /// vNIC1.
        #[doc(alias = "vNIC1")]
        Vnic1 = 4, "vNIC1";
        /// nPAR.
        #[doc(alias = "nPAR")]
        Npar = 5, "nPAR";
        /// UFP.
        #[doc(alias = "UFP")]
        Ufp = 6, "UFP";
        /// vNIC2.
        #[doc(alias = "vNIC2")]
        Vnic2 = 7, "vNIC2";
    }
}

/// Port descriptor (type 0x55, 88 bytes).
#[doc(alias = "be_port_res_desc")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortDescriptor {
    /// Flags @3.
    pub flags: DescriptorFlags,
    /// `link_num` @4.
    pub link_num: u8,
    /// `mc_type` @5.
    pub mc_type: McType,
    /// `nv_flags` @8: bits 1:0 NV type, bit 2 SOCVID, bit 4 RCVID.
    pub nv_flags: u8,
    /// `nv_port` u16 @10: the VxLAN/GRE UDP port.
    pub nv_port: u16,
}

impl PortDescriptor {
    /// NV type "disabled" (bits 1:0 of `nv_flags`).
    pub const NV_TYPE_DISABLED: u8 = 1;
    /// NV type "VxLAN".
    pub const NV_TYPE_VXLAN: u8 = 3;
    /// Strip the outer VLAN.
    #[doc(alias = "SOCVID_SHIFT")]
    pub const SOCVID: u8 = 1 << 2;
    /// Report the VLAN.
    #[doc(alias = "RCVID_SHIFT")]
    pub const RCVID: u8 = 1 << 4;

    /// A port descriptor with no multi-channel and overlays disabled, as the emulator reports.
    pub fn new(link_num: u8) -> Self {
        Self {
            flags: DescriptorFlags(0),
            link_num,
            mc_type: McType::None,
            nv_flags: Self::NV_TYPE_DISABLED,
            nv_port: 0,
        }
    }

    /// Bits 1:0 of `nv_flags`.
    pub fn nv_type(&self) -> u8 {
        self.nv_flags & 0x3
    }

    /// Writes the descriptor (header included): 88 bytes.
    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let start = w.position();
        encode_header(w, kind::PORT_V1, RESOURCE_DESC_SIZE_V1, self.flags)?;
        w.u8("link_num", self.link_num)?;
        w.u8("mc_type", self.mc_type.raw())?;
        w.zeros("rsvd", 2)?;
        w.u8("nv_flags", self.nv_flags)?;
        w.zeros("rsvd", 1)?;
        w.u16("nv_port", self.nv_port)?;
        fill_to(w, "rsvd_tail", start + RESOURCE_DESC_SIZE_V1)
    }

    pub(super) fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start = r.position();
        jump(r, start + 3);
        let flags = DescriptorFlags(r.u8("descriptor_flags")?);
        let link_num = r.u8("link_num")?;
        let mc_type = McType::from_raw(r.u8("mc_type")?);
        jump(r, start + 8);
        let nv_flags = r.u8("nv_flags")?;
        jump(r, start + 10);
        let nv_port = r.u16("nv_port")?;
        Ok(Self { flags, link_num, mc_type, nv_flags, nv_port })
    }
}
