//! The device's half of FR_MR: reading the page list a fast registration names from the
//! region's PBL pages (`ocrdma_build_reg` writes the PBEs there, hi dword first, before it
//! posts the WQE; spec/datapath.md §2.3), then handing it to the MR table.

use oce_mailbox::commands::{PBE_LEN, Pbe};
use oce_mailbox::wire::{Reader, Wire};

use super::roce::Access;
use crate::datapath::roce::{FastRegistration, RegionRefusal};

impl Access<'_> {
    /// FR_MR `reg` for a QP of PD `pd`: the region's checks, then its `reg.pages` PBEs, read
    /// in order across its PBL pages; a PBL page that cannot be read (logged as a DMA fault)
    /// refuses the registration and leaves the region as it was.
    pub(super) fn fast_register_region(&mut self, pd: u16, reg: &FastRegistration) -> Result<(), RegionRefusal> {
        let region = self.resources.rdma.mrs.fast_register_target(pd, reg)?;
        let addrs = (0..u64::from(reg.pages)).map(|n| region.pbe_address(n)).collect::<Option<Vec<_>>>();
        let addrs = addrs.ok_or(RegionRefusal::Geometry)?;
        let mut pbes = Vec::with_capacity(addrs.len());
        for addr in addrs {
            let mut raw = [0u8; PBE_LEN];
            if !self.env().read(addr, &mut raw) {
                return Err(RegionRefusal::PageList);
            }
            let pbe = Pbe::decode(&mut Reader::new(&raw)).map_err(|_| RegionRefusal::PageList)?;
            pbes.push(pbe.0);
        }
        self.resources.rdma.mrs.fast_register(pd, reg, pbes)
    }
}
