//! The NIC resource descriptor (types 0x51 v1 / 0x41 v0): a function's queue, MAC, VLAN and
//! bandwidth limits (spec/protocol.md §5.8).

use super::{DescriptorFlags, DescriptorVersion, encode_header, kind};
use crate::commands::support::{fill_to, jump};
use crate::wire::{Reader, WireError, Writer};

/// NIC resource descriptor. v0 is the first 72 bytes of the 88-byte v1 layout.
#[doc(alias = "be_nic_res_desc")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NicDescriptor {
    /// v0 (0x41, 72 bytes) or v1 (0x51, 88 bytes).
    pub version: DescriptorVersion,
    /// Flags @3.
    pub flags: DescriptorFlags,
    /// `vf_num` @4 (0 = the PF itself).
    pub vf_num: u8,
    /// `pf_num` @6.
    pub pf_num: u8,
    /// `unicast_mac_count` u16 @8.
    pub unicast_mac_count: u16,
    /// `mcc_count` u16 @16.
    pub mcc_count: u16,
    /// `vlan_count` u16 @18.
    pub vlan_count: u16,
    /// `mcast_mac_count` u16 @20.
    pub mcast_mac_count: u16,
    /// `txq_count` u16 @22.
    pub txq_count: u16,
    /// `rq_count` u16 @24.
    pub rq_count: u16,
    /// `rssq_count` u16 @26.
    pub rssq_count: u16,
    /// `lro_count` u16 @28.
    pub lro_count: u16,
    /// `cq_count` u16 @30.
    pub cq_count: u16,
    /// `toe_conn_count` u16 @32.
    pub toe_conn_count: u16,
    /// `eq_count` u16 @34.
    pub eq_count: u16,
    /// `vlan_id` u16 @36 (reserved in T13).
    pub vlan_id: u16,
    /// `iface_count` u16 @38.
    pub iface_count: u16,
    /// `cap_flags` u32 @40: interface capability flags (spec §5.21).
    pub cap_flags: u32,
    /// `link_param` u8 @44 (be2net compares it with the port number).
    pub link_param: u8,
    /// `channel_id_param` u16 @46.
    pub channel_id_param: u16,
    /// `bw_min` u32 @48.
    pub bw_min: u32,
    /// `bw_max` u32 @52 (Skyhawk v1: percent of link speed; Lancer v0: units of 10 Mb/s).
    pub bw_max: u32,
    /// `acpi_params` u8 @56.
    pub acpi_params: u8,
    /// `wol_param` u8 @57.
    pub wol_param: u8,
    /// `tunnel_iface_count` u16 @60.
    pub tunnel_iface_count: u16,
    /// `direct_tenant_iface_count` u16 @62.
    pub direct_tenant_iface_count: u16,
}

impl NicDescriptor {
    /// A count field meaning "leave unchanged" in SET_PROFILE_CONFIG, or "modifiable" in a
    /// QUERY_MODIFIABLE answer (spec §5.8).
    pub const UNCHANGED_COUNT: u16 = 0xFFFF;

    /// The "leave everything unchanged" template SET_PROFILE_CONFIG descriptors start from
    /// (spec §5.8): every count 0xFFFF, `link_param` 0xFF, `channel_id_param` 0xF000,
    /// `acpi_params` 0xFF, `wol_param` 0x0F, `bw_min`/`bw_max` 0xFFFFFFFF. Flags, `vf_num`,
    /// `pf_num`, `vlan_id` and `cap_flags` are 0; the caller sets the fields it means to change.
    #[doc(alias = "be_reset_nic_desc")]
    pub fn unchanged(version: DescriptorVersion) -> Self {
        let c = Self::UNCHANGED_COUNT;
        Self {
            version,
            unicast_mac_count: c,
            mcc_count: c,
            vlan_count: c,
            mcast_mac_count: c,
            txq_count: c,
            rq_count: c,
            rssq_count: c,
            lro_count: c,
            cq_count: c,
            toe_conn_count: c,
            eq_count: c,
            iface_count: c,
            link_param: 0xFF,
            channel_id_param: 0xF000,
            bw_min: u32::MAX,
            bw_max: u32::MAX,
            acpi_params: 0xFF,
            wol_param: 0x0F,
            tunnel_iface_count: c,
            direct_tenant_iface_count: c,
            ..Self::default()
        }
    }

    /// The type byte: 0x51 for v1, 0x41 for v0.
    pub fn kind(&self) -> u8 {
        match self.version {
            DescriptorVersion::V0 => kind::NIC_V0,
            DescriptorVersion::V1 => kind::NIC_V1,
        }
    }

    /// True when this descriptor is the template for the PF's VFs (flag VFT).
    pub fn is_vf_template(&self) -> bool {
        self.flags.contains(DescriptorFlags::VFT)
    }

    /// The u16 counts in wire order from @16 to @38.
    fn counts(&self) -> [(&'static str, u16); 12] {
        [
            ("mcc_count", self.mcc_count),
            ("vlan_count", self.vlan_count),
            ("mcast_mac_count", self.mcast_mac_count),
            ("txq_count", self.txq_count),
            ("rq_count", self.rq_count),
            ("rssq_count", self.rssq_count),
            ("lro_count", self.lro_count),
            ("cq_count", self.cq_count),
            ("toe_conn_count", self.toe_conn_count),
            ("eq_count", self.eq_count),
            ("vlan_id", self.vlan_id),
            ("iface_count", self.iface_count),
        ]
    }

    /// Decodes the fields of a descriptor whose extent `r` covers (header already checked).
    pub(super) fn decode_body(r: &mut Reader<'_>, version: DescriptorVersion) -> Result<Self, WireError> {
        let start = r.position();
        jump(r, start + 3);
        let flags = DescriptorFlags(r.u8("descriptor_flags")?);
        let vf_num = r.u8("vf_num")?;
        jump(r, start + 6);
        let pf_num = r.u8("pf_num")?;
        jump(r, start + 8);
        let unicast_mac_count = r.u16("unicast_mac_count")?;
        jump(r, start + 16);
        let mut d = Self { version, flags, vf_num, pf_num, unicast_mac_count, ..Self::default() };
        d.mcc_count = r.u16("mcc_count")?;
        d.vlan_count = r.u16("vlan_count")?;
        d.mcast_mac_count = r.u16("mcast_mac_count")?;
        d.txq_count = r.u16("txq_count")?;
        d.rq_count = r.u16("rq_count")?;
        d.rssq_count = r.u16("rssq_count")?;
        d.lro_count = r.u16("lro_count")?;
        d.cq_count = r.u16("cq_count")?;
        d.toe_conn_count = r.u16("toe_conn_count")?;
        d.eq_count = r.u16("eq_count")?;
        d.vlan_id = r.u16("vlan_id")?;
        d.iface_count = r.u16("iface_count")?;
        d.cap_flags = r.u32("cap_flags")?;
        d.link_param = r.u8("link_param")?;
        jump(r, start + 46);
        d.channel_id_param = r.u16("channel_id_param")?;
        d.bw_min = r.u32("bw_min")?;
        d.bw_max = r.u32("bw_max")?;
        d.acpi_params = r.u8("acpi_params")?;
        d.wol_param = r.u8("wol_param")?;
        jump(r, start + 60);
        d.tunnel_iface_count = r.u16("tunnel_iface_count")?;
        d.direct_tenant_iface_count = r.u16("direct_tenant_iface_count")?;
        Ok(d)
    }
}

impl NicDescriptor {
    /// Writes the descriptor (header included) at the writer's position: 72 or 88 bytes.
    pub fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let start = w.position();
        encode_header(w, self.kind(), self.version.size(), self.flags)?;
        w.u8("vf_num", self.vf_num)?;
        w.zeros("rsvd", 1)?;
        w.u8("pf_num", self.pf_num)?;
        w.zeros("rsvd", 1)?;
        w.u16("unicast_mac_count", self.unicast_mac_count)?;
        w.zeros("rsvd", 6)?;
        self.counts().iter().try_for_each(|&(field, v)| w.u16(field, v))?;
        w.u32("cap_flags", self.cap_flags)?;
        w.u8("link_param", self.link_param)?;
        w.zeros("rsvd", 1)?;
        w.u16("channel_id_param", self.channel_id_param)?;
        w.u32("bw_min", self.bw_min)?;
        w.u32("bw_max", self.bw_max)?;
        w.u8("acpi_params", self.acpi_params)?;
        w.u8("wol_param", self.wol_param)?;
        w.zeros("rsvd", 2)?;
        w.u16("tunnel_iface_count", self.tunnel_iface_count)?;
        w.u16("direct_tenant_iface_count", self.direct_tenant_iface_count)?;
        fill_to(w, "rsvd_tail", start + self.version.size())
    }
}
