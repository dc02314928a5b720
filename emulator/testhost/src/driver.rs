//! be2net's sequences over the [`Host`] transports, in the order spec/be2net-driver.md gives
//! them: `probe` (§2), `open` (§4.1), `interrupt` (`be_msix`/`be_intx` + `be_poll`), `flash`
//! (§4.4), `close` (§4.2) and `remove` (§4.6); the rings' own work is in [`super::rings`].

use std::collections::VecDeque;

use oce_firmware::ufi::UfiImage;
use oce_firmware::walk::walk;
use oce_mailbox::commands::FunctionReset;
use oce_mailbox::commands::{
    AcpiWolQuery, CqContext, CqCreate, CqDestroy, DescriptorFlags, DescriptorVersion, EqContext, EqCreate, EqDestroy,
    FlashCrc, FlashOpType, FlashromOp, FlowControl, FuncConfig, FwVersion, GetActiveProfile,
    GetCntlAdditionalAttributes, GetCntlAttributes, GetFnPrivileges, GetFuncConfig, GetFwVersion, GetMacList,
    GetPhyDetails, GetPortName, GetProfileConfig, GetStatistics, IfCreate, IfDestroy, IfFlags, LinkStatusQuery,
    MccContext, MccCreateExt, MccDestroy, NicDescriptor, PcieDescriptor, PmacAdd, PmacDel, QueryFat,
    QueryFirmwareConfig, ReadFlashrom, ResourceDescriptor, RssConfig, RxCreate, RxDestroy, RxFilter,
    SetDriverFunctionCap, SetFlowControl, SetInterruptEnable, SetLogicalLinkConfig, SetProfileConfig, TxCreate,
    TxDestroy, WriteFlashrom,
};
use oce_mailbox::entries::{RX_DESCRIPTOR_LEN, RxCompletion, TX_WRB_LEN};
use oce_mailbox::header::Subsystem;
use oce_mailbox::regs::{Semaphore, SliIntf};
use oce_mailbox::status::BaseStatus;
use oce_mailbox::wire::{Reader, Wire};
use oce_mailbox::wrb::WRB_LEN;

use super::rings::{RX_FRAG_SIZE, RxFrame, Rxq, Txq};
use super::{Host, HostCq, HostEq, HostError, Irq, raw_request};

/// be2net's ring sizes (be.h): EQ 1024 × 4 B, TX 2048 × 16 B, TX/RX CQ 1024 × 16 B, MCC 128 ×
/// 256 B, MCC CQ 256 × 16 B, RX 1024 × 8 B.
const EQ_LEN: u32 = 1024;
const TX_LEN: u32 = 2048;
const CQ_LEN: u32 = 1024;
const MCC_LEN: u32 = 128;
const MCC_CQ_LEN: u32 = 256;
const RX_LEN: u32 = 1024;
/// SET_FEATURES (COMMON 191), which the codec has no type for: be2net's last setup step.
const SET_FEATURES: u8 = 191;
/// PCI capability id of MSI-X, and Message Control's enable bit in the capability dword.
const CAP_ID_MSIX: u32 = 0x11;
const MSIX_ENABLE: u32 = 1 << 31;

/// What probe learned and built.
#[derive(Debug, Clone)]
pub struct Nic {
    pub if_handle: u32,
    pub nic: NicDescriptor,
    pub function_mode: u32,
    pub port: u8,
    pub mac: [u8; 6],
    pub fw: FwVersion,
    pub native: bool,
    pub txqs: Vec<Txq>,
    pub rx_cqs: Vec<HostCq>,
    pub rxqs: Vec<Rxq>,
    pub pmac_id: Option<u32>,
    pub msix: bool,
    /// Frames `be_process_rx` took, oldest first.
    pub received: Vec<RxFrame>,
    /// Whether `be_process_rx` refills its ring (a test turns it off to starve a receiver).
    pub refill: bool,
    /// VLANs added (`be_vlan_add_vid`).
    pub vids: Vec<u16>,
    /// Receive fragments `open` posts per ring (be2net: `RX_Q_LEN - 1`).
    pub rx_initial_post: u32,
}

impl Host {
    /// The configuration-space offset of capability `id`, walking the list as the kernel does.
    fn find_capability(&mut self, id: u32) -> Option<u16> {
        let mut at = (self.config32(0x34) & 0xFC) as u16;
        while at != 0 {
            let header = self.config32(at);
            if header & 0xFF == id {
                return Some(at);
            }
            at = ((header >> 8) & 0xFC) as u16;
        }
        None
    }

    /// `pci_enable_msix_range`: MSI-X on (the transport keeps the table, as QEMU does).
    pub fn enable_msix(&mut self) {
        let at = self.find_capability(CAP_ID_MSIX).expect("an MSI-X capability");
        let v = self.config32(at);
        self.write_config32(at, v | MSIX_ENABLE);
    }

    /// be2net's probe (spec/be2net-driver.md §2), with `eqs` event queues on MSI-X (0: INTx).
    pub fn probe(&mut self, eqs: u16) -> Result<Nic, HostError> {
        // 1-4: enable, bus master, SLI_INTF, POST.
        let cmd = self.config32(0x04);
        self.write_config32(0x04, cmd | 0x6);
        assert_eq!(SliIntf(self.config32(SliIntf::OFFSET)).family(), 0xF);
        assert!(!SliIntf(self.config32(SliIntf::OFFSET)).is_vf());
        assert!(Semaphore(self.config32(Semaphore::OFFSET)).is_ready());
        // 5-9.
        self.mbox(&FunctionReset)?;
        self.signature(true)?;
        self.mbox(&SetInterruptEnable { enabled: true })?;
        let caps = self.mbox(&SetDriverFunctionCap { valid_cap_flags: 0x6, cap_flags: 0x4 })?;
        let native = caps.cap_flags & SetDriverFunctionCap::BE3_NATIVE_ERX_API != 0;
        // 10-11.
        self.mbox(&GetFuncConfig)?;
        let attrs = self.mbox(&GetCntlAttributes)?;
        let fw_cfg = self.mbox(&QueryFirmwareConfig)?;
        assert!(attrs.phy_port < 4 && fw_cfg.phys_port < 4, "port numbers index be2net's arrays");
        match self.mbox(&QueryFat) {
            Ok(_) | Err(HostError::Status(_)) => {} // ignored by be2net
            Err(e) => return Err(e),
        }
        let wol = self.mbox(&AcpiWolQuery::default())?;
        assert_eq!(wol.magic_mac, [0; 6]);
        self.mbox(&GetPortName)?;
        self.mbox(&GetActiveProfile)?;
        // 12-13.
        self.mbox(&GetProfileConfig::active())?;
        let func = self.mbox(&GetFuncConfig)?;
        let nic = nic_descriptor(&func);
        let cap_flags = IfFlags(nic.cap_flags & 0x0100_1BBC);
        // 14.
        let msix = eqs > 0;
        if msix {
            self.enable_msix();
        }
        let num_eqs = eqs.max(1);
        // 15.
        let rss = if num_eqs > 1 { cap_flags.0 & (IfFlags::RSS | IfFlags::DEFQ_RSS) } else { 0 };
        let created = self.mbox(&IfCreate {
            capability_flags: cap_flags,
            enable_flags: IfFlags(rss),
            pmac_invalid: true,
            ..IfCreate::default()
        })?;
        // 16a: EQs.
        for _ in 0..num_eqs {
            let ring = self.alloc_ring(EQ_LEN, 4);
            let eq = self.mbox(&EqCreate { context: EqContext::be2net(2), pages: ring.pages.clone() })?;
            self.eqs.push(HostEq { id: eq.eq_id, msix_idx: eq.msix_idx, ring, tail: 0 });
        }
        // 16b: TX CQ + TX ring per EQ.
        let mut txqs = Vec::new();
        for i in 0..num_eqs as usize {
            let cq = self.create_cq(CQ_LEN, self.eqs[i].id, false, 3)?;
            let ring = self.alloc_ring(TX_LEN, TX_WRB_LEN);
            let tx = self.mbox(&TxCreate {
                ulp_num: 1,
                tx_type: TxCreate::TYPE_STANDARD,
                if_id: created.interface_id as u16,
                queue_size: 12,
                cq_id: cq.id,
                pages: ring.pages.clone(),
            })?;
            txqs.push(Txq {
                id: tx.cid,
                ring,
                head: 0,
                cq,
                db_offset: tx.db_offset,
                completed: Vec::new(),
                statuses: Vec::new(),
                pending: VecDeque::new(),
            });
        }
        // 16c: RX CQs (RSS rings need at least 2 EQs; the interface has a default RSS queue).
        let num_rx = if num_eqs >= 2 { num_eqs } else { 1 };
        let mut rx_cqs = Vec::new();
        for i in 0..num_rx as usize {
            rx_cqs.push(self.create_cq(CQ_LEN, self.eqs[i % self.eqs.len()].id, false, 3)?);
        }
        // 16d: the MCC's CQ on EQ 0, then the MCC.
        let mcc_cq = self.create_cq(MCC_CQ_LEN, self.eqs[0].id, true, 0)?;
        let ring = self.alloc_ring(MCC_LEN, WRB_LEN);
        let mcc = self.mbox(&MccCreateExt {
            cq_id: mcc_cq.id,
            async_event_bitmap: MccCreateExt::BE2NET_ASYNC_EVENTS,
            context: MccContext::be2net(mcc_cq.id, MCC_LEN),
            pages: ring.pages.clone(),
        })?;
        self.mcc = Some((mcc.id, ring, 0));
        self.mcc_cq = Some(mcc_cq);
        // 17-23, over the MCC from now on.
        self.mcc(&GetFnPrivileges)?;
        let mac = self.mcc(&GetMacList::permanent())?.permanent_mac().expect("a MAC");
        let fw = self.mcc(&GetFwVersion)?;
        self.mcc(&SetFlowControl(FlowControl { tx: true, rx: true }))?;
        self.mcc(&SetLogicalLinkConfig { link_config: 0x101 })?;
        self.mcc(&GetPhyDetails)?;
        match self.mcc_raw(&raw_request(SET_FEATURES, Subsystem::Common, 0, 32), true) {
            Err(HostError::Status(s)) if s.base == BaseStatus::IllegalRequest => {}
            other => panic!("SET_FEATURES: {other:?}"),
        }
        Ok(Nic {
            if_handle: created.interface_id,
            nic,
            function_mode: fw_cfg.function_mode.0,
            port: attrs.phy_port,
            mac,
            fw,
            native,
            txqs,
            rx_cqs,
            rxqs: Vec::new(),
            pmac_id: None,
            msix,
            received: Vec::new(),
            refill: true,
            vids: Vec::new(),
            rx_initial_post: RX_LEN - 1,
        })
    }

    /// CQ_CREATE v2 for be2net.
    fn create_cq(&mut self, entries: u32, eq: u16, nodelay: bool, wm: u8) -> Result<HostCq, HostError> {
        let ring = self.alloc_ring(entries, 16);
        let count = (entries / 256).trailing_zeros() as u8;
        let context = CqContext::be2net(count, eq, nodelay, wm);
        let cq = self.mbox(&CqCreate { page_size: 1, context, pages: ring.pages.clone() })?;
        Ok(HostCq { id: cq.id, ring, tail: 0 })
    }

    /// The worker's periodic GET_CNTL_ADDITIONAL_ATTRIBUTES (asynchronous); returns its tag.
    pub fn worker_temperature(&mut self) -> u64 {
        self.mcc_post(&GetCntlAdditionalAttributes)
    }

    /// The worker's GET_STATISTICS v2 while up (asynchronous); returns its tag.
    pub fn worker_stats(&mut self) -> u64 {
        self.mcc_post(&GetStatistics)
    }

    /// `be_open` (spec/be2net-driver.md §4.1); returns whether the link is up.
    pub fn open(&mut self, nic: &mut Nic) -> Result<bool, HostError> {
        let rss = nic.rx_cqs.len() > 1;
        for (i, cq) in nic.rx_cqs.clone().into_iter().enumerate() {
            let ring = self.alloc_ring(RX_LEN, RX_DESCRIPTOR_LEN);
            let rx = self.mcc(&RxCreate {
                cq_id: cq.id,
                frag_size: RX_FRAG_SIZE.trailing_zeros() as u8,
                pages: ring.pages.clone(),
                interface_id: nic.if_handle,
                max_frame_size: 9018,
                rss_queue: u32::from(rss),
            })?;
            nic.rxqs.push(Rxq {
                id: rx.id,
                rss_id: rx.rss_id,
                cq: i,
                ring,
                head: 0,
                posted: VecDeque::new(),
                pages: Default::default(),
            });
        }
        if rss {
            let mut cpu_table = [0u8; 128];
            for (i, b) in cpu_table.iter_mut().enumerate() {
                *b = nic.rxqs[i % nic.rxqs.len()].rss_id;
            }
            let cfg = RssConfig {
                if_id: nic.if_handle,
                enable_rss: 0x3F,
                cpu_table_size_log2: 7,
                hash_key: [0x6D; 40],
                cpu_table,
                flush: 0,
            };
            self.mcc(&cfg)?;
        }
        // be_post_rx_frags(rxo, GFP_KERNEL, RX_Q_LEN - 1)
        for r in 0..nic.rxqs.len() {
            let mut rxq = nic.rxqs[r].clone();
            self.post_rx_frags(&mut rxq, nic.rx_initial_post);
            nic.rxqs[r] = rxq;
        }
        let basic = IfFlags(IfFlags::BROADCAST | IfFlags::UNTAGGED | IfFlags::PASS_L3L4_ERRORS);
        self.mcc(&RxFilter { if_flags_mask: basic, if_flags: basic, if_id: nic.if_handle, ..RxFilter::default() })?;
        nic.pmac_id = Some(self.mcc(&PmacAdd { if_id: nic.if_handle, mac: nic.mac })?.pmac_id);
        let mcast = IfFlags(IfFlags::MULTICAST);
        let list = vec![[0x33, 0x33, 0, 0, 0, 1], [0x01, 0x00, 0x5E, 0, 0, 1]];
        self.mcc(&RxFilter {
            if_flags_mask: mcast,
            if_flags: mcast,
            if_id: nic.if_handle,
            mcast: list,
            ..RxFilter::default()
        })?;
        // Arm: RX and TX CQs, the MCC CQ (be_async_mcc_enable), every EQ with CLR.
        for cq in nic.rx_cqs.iter().chain(nic.txqs.iter().map(|t| &t.cq)).map(|c| c.id).collect::<Vec<_>>() {
            self.cq_notify(cq, true, 0);
        }
        let mcc_cq = self.mcc_cq.as_ref().map(|c| c.id).expect("MCC CQ");
        self.cq_notify(mcc_cq, true, 0);
        self.mcc_rearm = true;
        for id in self.eqs.iter().map(|e| e.id).collect::<Vec<_>>() {
            self.eq_notify(id, true, true, 0);
        }
        let link = self.mcc(&LinkStatusQuery)?;
        Ok(link.is_link_up())
    }

    /// Handles the interrupts raised so far, as `be_msix` / `be_intx` then `be_poll` do: per
    /// EQ, CLR, take the events, reap the CQs they name (MCC, TX, RX), re-arm them, re-arm the EQ
    /// with the count. Returns the interrupts and the CQ ids of the events, per EQ index.
    pub fn interrupt(&mut self, nic: &mut Nic) -> (Vec<Irq>, Vec<(usize, Vec<u16>)>) {
        let irqs = self.irq.take();
        let mut served = Vec::new();
        for irq in &irqs {
            let index = match *irq {
                Irq::Msix(v) => self.eqs.iter().position(|e| e.msix_idx == v).expect("a vector of a live EQ"),
                Irq::Level(true) => 0,
                Irq::Level(false) => continue,
            };
            let id = self.eqs[index].id;
            self.eq_notify(id, false, true, 0);
            let cqs = self.events_get(index);
            for &cq in &cqs {
                if self.mcc_cq.as_ref().is_some_and(|c| c.id == cq) {
                    self.process_mcc();
                } else if let Some(t) = nic.txqs.iter().position(|t| t.cq.id == cq) {
                    self.process_tx(nic, t);
                } else if let Some(r) = nic.rxqs.iter().position(|r| nic.rx_cqs[r.cq].id == cq) {
                    self.process_rx(nic, r);
                }
            }
            self.eq_notify(id, true, false, cqs.len() as u16);
            served.push((index, cqs));
        }
        (irqs, served)
    }

    /// be2net's Skyhawk flash walk over the MCC (spec/be2net-driver.md §4.4): per section, the
    /// CRC query (synchronous); when it differs, WRITE_FLASHROM chunks of 32 KiB whose
    /// completions arrive through the interrupt path; then GET_FW_VERSION. Returns how many
    /// chunks were written.
    pub fn flash(&mut self, nic: &mut Nic, ufi: &[u8]) -> Result<usize, HostError> {
        let image = UfiImage::parse(ufi).expect("a valid image");
        let mut chunks = 0;
        for step in walk(&image) {
            if step.is_skipped() {
                continue;
            }
            let op_type = FlashOpType::OffsetSpecified;
            let crc = self.mcc(&ReadFlashrom::crc(op_type, step.crc_query_offset(true)))?;
            if step.queries_crc() && crc == FlashCrc(step.trailer()) {
                continue;
            }
            let data = step.section.data;
            let mut sent = 0;
            while sent < data.len() {
                let len = (data.len() - sent).min(WriteFlashrom::CHUNK);
                let last = sent + len == data.len();
                let cmd = WriteFlashrom {
                    op_code: if last { FlashromOp::Flash } else { FlashromOp::Save },
                    op_type,
                    offset: step.flash_offset() + sent as u32,
                    data: data[sent..sent + len].into(),
                };
                let tag = self.mcc_post(&cmd);
                // be2net sleeps on et_cmd_compl; the interrupt path (be_poll) signals it.
                let (irqs, _) = self.interrupt(nic);
                assert!(!irqs.is_empty(), "the flash completion raised an interrupt");
                let status = self.completed.remove(&tag).ok_or(HostError::NotResponding)?;
                if !status.is_success() {
                    return Err(HostError::Status(status));
                }
                sent += len;
                chunks += 1;
            }
        }
        nic.fw = self.mcc(&GetFwVersion)?;
        Ok(chunks)
    }

    /// `be_close` (spec/be2net-driver.md §4.2).
    pub fn close(&mut self, nic: &mut Nic) -> Result<(), HostError> {
        if let Some(pmac_id) = nic.pmac_id.take() {
            self.mcc(&PmacDel { if_id: nic.if_handle, pmac_id })?;
        }
        let mcast = IfFlags(IfFlags::MULTICAST);
        self.mcc(&RxFilter { if_flags_mask: mcast, if_id: nic.if_handle, ..RxFilter::default() })?;
        let mcc_cq = self.mcc_cq.as_ref().map(|c| c.id).expect("MCC CQ");
        self.cq_notify(mcc_cq, false, 0);
        self.mcc_rearm = false;
        for rxq in std::mem::take(&mut nic.rxqs) {
            self.mcc(&RxDestroy::new(rxq.id))?;
            // be_rx_cq_clean: completions still on the CQ are reaped, up to the flush completion
            // (no fragment), which must come; the fragments still posted are freed.
            let cq = &mut nic.rx_cqs[rxq.cq];
            let mut popped = 0;
            loop {
                let at = cq.ring.entry(cq.tail);
                let c = RxCompletion::decode(&mut Reader::new(&self.mem.peek(at, 16))).unwrap();
                assert!(c.valid, "did not receive flush compl");
                self.mem.poke(at + 8, &[0; 4]);
                cq.tail = (cq.tail + 1) % cq.ring.entries;
                popped += 1;
                if c.num_frags == 0 {
                    break;
                }
            }
            let cq_id = cq.id;
            self.cq_notify(cq_id, false, popped);
            rxq.pages.keys().for_each(|&p| self.mem.free(p));
        }
        if nic.rx_cqs.len() > 1 {
            self.mcc(&RssConfig {
                if_id: nic.if_handle,
                enable_rss: 0,
                cpu_table_size_log2: 7,
                hash_key: [0; 40],
                cpu_table: [0; 128],
                flush: 0,
            })?;
        }
        for index in 0..self.eqs.len() {
            let n = self.events_get(index).len() as u16;
            let id = self.eqs[index].id;
            self.eq_notify(id, false, true, n);
        }
        Ok(())
    }

    /// `be_remove` (spec/be2net-driver.md §4.6), after `close` if the interface was up.
    pub fn remove(&mut self, nic: Nic) -> Result<(), HostError> {
        self.mbox(&SetInterruptEnable { enabled: false })?;
        // be_clear: the SR-IOV pair (PCIe v1 + VF-template NIC v1, num_vfs 0), both over the MCC.
        self.mcc(&GetProfileConfig { query_modifiable: true, ..GetProfileConfig::active() })?;
        self.mcc(&unload_pair())?;
        self.mcc(&IfDestroy { interface_id: nic.if_handle })?;
        let (mcc_id, _, _) = self.mcc.take().expect("MCC");
        self.mbox(&MccDestroy::new(mcc_id))?;
        let mcc_cq = self.mcc_cq.take().expect("MCC CQ");
        self.mbox(&CqDestroy::new(mcc_cq.id))?;
        for cq in &nic.rx_cqs {
            self.mbox(&CqDestroy::new(cq.id))?;
        }
        for tx in &nic.txqs {
            self.mbox(&TxDestroy::new(tx.id))?;
            self.mbox(&CqDestroy::new(tx.cq.id))?;
        }
        for eq in std::mem::take(&mut self.eqs) {
            self.mbox(&EqDestroy::new(eq.id))?;
        }
        self.mbox(&FunctionReset)?;
        self.signature(false)
    }
}

/// The first NIC descriptor of GET_FUNC_CONFIG, whatever its `pf_num` (as be2net takes it).
fn nic_descriptor(func: &FuncConfig) -> NicDescriptor {
    func.descriptors
        .iter()
        .find_map(|d| match d {
            ResourceDescriptor::Nic(n) => Some(*n),
            _ => None,
        })
        .expect("a NIC descriptor")
}

/// be2net's SR-IOV teardown at unload: a PCIe v1 descriptor (num_vfs 0, SR-IOV off) and a
/// VF-template NIC v1 descriptor, both IMM | NOSV (spec/be2net-driver.md §4.6). `pf_num` is the
/// guest's devfn; function 0 of a device behind a root port.
fn unload_pair() -> SetProfileConfig {
    let flags = DescriptorFlags(DescriptorFlags::IMM | DescriptorFlags::NOSV);
    let pcie = PcieDescriptor {
        flags,
        pf_num: 0,
        sriov_state: 0,
        num_vfs: 0,
        ..PcieDescriptor::unchanged(DescriptorVersion::V1)
    };
    let vft = NicDescriptor {
        flags: DescriptorFlags(flags.0 | DescriptorFlags::VFT),
        ..NicDescriptor::unchanged(DescriptorVersion::V1)
    };
    SetProfileConfig {
        profile_id: 0,
        isap: false,
        descriptors: vec![ResourceDescriptor::Pcie(pcie), ResourceDescriptor::Nic(vft)],
    }
}
