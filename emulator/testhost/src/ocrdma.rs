//! An ocrdma-like host on top of the be2net-like one: Linux's ocrdma (Debian 6.1.192,
//! spec/be2net-driver.md §5) written again in Rust, so the device is tested against the RoCE
//! driver's protocol between guest runs.
//!
//! - queue creation through be2net's MCC (`be_roce_mcc_cmd`), byte for byte as ocrdma builds
//!   its requests (EQ_CREATE v2, the 68-byte CQ_CREATE v2, the 104-byte MCC_CREATE_EXT v1),
//!   not through the codec's be2net-shaped types;
//! - ocrdma's own MQ transport (`ocrdma_post_mqe`, `ocrdma_wait_mqe_cmpl`, `ocrdma_mbx_cmd`):
//!   `tag_lo` is the ring index, the wait is interrupt-only (the MQ's CQ sits on a RoCE EQ, whose
//!   MSI-X vector must fire), the completion's tag must match, embedded responses are read back
//!   from the ring slot, and any non-zero CQE or header status is an error;
//! - `ocrdma_add` (§5.2) and `ocrdma_remove`'s hardware teardown.

use oce_mailbox::command::{Command, decode_response, encode_request};
use oce_mailbox::commands::{
    AllocPdRange, CqDestroy, CreateAhTable, DcbxConfig, DcbxParamType, DeallocPdRange, DeleteAhTable, EqDestroy,
    GetDcbxConfig, GetRdmaStats, MccDestroy, PdRange, RdmaConfig, RdmaQueryConfig,
};
use oce_mailbox::doorbells::MccDoorbell;
use oce_mailbox::header::{HEADER_LEN, ResponseHeader, Subsystem};
use oce_mailbox::status::CompletionStatus;
use oce_mailbox::wire::{Reader, Wire, Writer};
use oce_mailbox::wrb::{COMPLETION_LEN, Sge, WRB_LEN, WRB_PAYLOAD_OFFSET, Wrb, WrbPayload};

use super::{DB_BAR, Host, HostCq, HostEq, HostError, HostRing, Irq, header_only};

/// ocrdma's ring sizes (ocrdma_sli.h): EQ 4096 × 4 B, MQ 128 × 256 B, MQ CQ 256 × 16 B.
const EQ_LEN: u32 = 4096;
const MQ_LEN: u32 = 128;
const MQ_CQ_LEN: u32 = 256;
/// `sizeof(struct ocrdma_mqe)` less its header, and the command length ocrdma's
/// `ocrdma_init_mch(.., sizeof(*cmd))` then declares: 256 − 16.
const MQE_PAYLOAD: usize = WRB_LEN - WRB_PAYLOAD_OFFSET;
const FULL_MQE_CMD_LEN: u32 = 240;
/// `sizeof(struct ocrdma_get_ctrl_attribs_rsp)`: the non-embedded buffer of
/// GET_CNTL_ATTRIBUTES (spec/be2net-driver.md §5.2 step 8).
const CTRL_ATTRIBUTES_LEN: usize = 556;
/// MCQE flags (ocrdma_sli.h): VALID (31), async event (30), COMPLETED (28).
const MCQE_VALID: u32 = 1 << 31;
const MCQE_AE: u32 = 1 << 30;
const MCQE_COMPLETED: u32 = 1 << 28;

/// What ocrdma learned and built.
#[derive(Debug, Clone)]
pub struct Roce {
    /// Its EQs (created through be2net's MCC), in creation order.
    pub eqs: Vec<HostEq>,
    /// The MQ: id, ring, head.
    pub mq: (u16, HostRing, u32),
    /// The MQ's completion queue, on `eqs[0]`.
    pub mq_cq: HostCq,
    pub function_mode: u32,
    pub config: RdmaConfig,
    pub fw_ver: String,
    pub model: String,
    pub port: u8,
    pub phy: (u16, u16),
    pub ahid: u16,
    /// The AH table's first byte (its 8 pages are contiguous here).
    pub av_table: u64,
    pub pd_range: Option<PdRange>,
    /// The service level from DCBX (ocrdma's default 5 when DCBX gives none).
    pub service_level: u8,
    /// Vectors that fired while waiting for MQ completions.
    pub vectors: Vec<u16>,
    /// Async events seen on the MQ CQ.
    pub async_events: usize,
}

/// A request buffer as ocrdma's `ocrdma_init_mch` fills it: opcode, subsystem, timeout 20 s,
/// `cmd_len` (which may exceed what the buffer holds), version.
pub fn ocrdma_request(opcode: u8, subsystem: Subsystem, version: u8, len: usize, cmd_len: u32) -> Vec<u8> {
    header_only(opcode, subsystem, version, len, 20, cmd_len)
}

pub(crate) fn put32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn get32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap())
}

pub(crate) fn put_pages(buf: &mut [u8], at: usize, pages: &[u64]) {
    for (i, &p) in pages.iter().enumerate() {
        put32(buf, at + 8 * i, p as u32);
        put32(buf, at + 8 * i + 4, (p >> 32) as u32);
    }
}

impl Host {
    /// `ocrdma_add` with `eqs` RoCE EQs (be2net granted them, spec §5.1), after be2net's probe.
    pub fn ocrdma_add(&mut self, eqs: usize) -> Result<Roce, HostError> {
        // 1: EQ_CREATE v2 per EQ, through be2net's MCC; then arm + clear.
        let mut roce_eqs = Vec::new();
        for _ in 0..eqs {
            let ring = self.alloc_ring(EQ_LEN, 4);
            let mut req = ocrdma_request(13, Subsystem::Common, 2, 100, 84);
            put32(&mut req, 16, ring.pages.len() as u32);
            put32(&mut req, 20, 1 << 29); // valid
            put32(&mut req, 24, 4 << 26); // count 4: 4096 entries
            put_pages(&mut req, 36, &ring.pages);
            let rsp = self.mcc_raw(&req, true)?;
            let vector_eqid = get32(&rsp, 16);
            let eq = HostEq { id: vector_eqid as u16, msix_idx: (vector_eqid >> 16) as u16, ring, tail: 0 };
            self.eq_notify(eq.id, true, true, 0);
            roce_eqs.push(eq);
        }
        // 2: the MQ's CQ on RoCE EQ 0 (68-byte CQ_CREATE v2), then MCC_CREATE_EXT v1.
        let cq_ring = self.alloc_ring(MQ_CQ_LEN, COMPLETION_LEN);
        let mut req = ocrdma_request(12, Subsystem::Common, 2, 68, 52);
        put32(&mut req, 16, (1 << 16) | 1); // one 4 KiB page
        put32(&mut req, 20, 0xA000_4000); // VALID | EVENTABLE | NODELAY
        put32(&mut req, 24, u32::from(roce_eqs[0].id));
        put32(&mut req, 28, MQ_CQ_LEN);
        put_pages(&mut req, 36, &cq_ring.pages);
        let cq_id = get32(&self.mcc_raw(&req, true)?, 16) as u16;
        let mq_ring = self.alloc_ring(MQ_LEN, WRB_LEN);
        let mut req = ocrdma_request(90, Subsystem::Common, 1, 104, 88);
        put32(&mut req, 16, mq_ring.pages.len() as u32 | (u32::from(cq_id) << 16));
        put32(&mut req, 20, (1 << 5) | (1 << 20) | (1 << 1)); // GRP5, RDMA, link events
        put32(&mut req, 24, u32::from(cq_id) | (8 << 16)); // ring size code 8: 128 entries
        put32(&mut req, 28, 1 << 31); // valid
        put32(&mut req, 32, 1); // async CQ valid
        put_pages(&mut req, 40, &mq_ring.pages);
        let mq_id = get32(&self.mcc_raw(&req, true)?, 16) as u16;
        self.cq_notify(cq_id, true, 0);
        let mut roce = Roce {
            eqs: roce_eqs,
            mq: (mq_id, mq_ring, 0),
            mq_cq: HostCq { id: cq_id, ring: cq_ring, tail: 0 },
            function_mode: 0,
            config: RdmaConfig::default(),
            fw_ver: String::new(),
            model: String::new(),
            port: 0,
            phy: (0, 0),
            ahid: 0,
            av_table: 0,
            pd_range: None,
            service_level: 5,
            vectors: Vec::new(),
            async_events: 0,
        };
        // 3: QUERY_FIRMWARE_CONFIG, embedded, declared 240 bytes; RDMA must be on.
        let rsp =
            self.mq_embedded(&mut roce, &ocrdma_request(58, Subsystem::Common, 0, MQE_PAYLOAD, FULL_MQE_CMD_LEN))?;
        roce.function_mode = get32(&rsp, 28);
        assert_ne!(roce.function_mode & 0x4, 0, "ocrdma_check_fw_config: -EINVAL without RDMA");
        // 4: RDMA QUERY_CONFIG (ocrdma_init_emb_mqe: cmd_len = sizeof − 20 − 16).
        let req =
            ocrdma_request(1, Subsystem::Rdma, 0, RdmaQueryConfig::LEN, (RdmaQueryConfig::LEN - HEADER_LEN) as u32);
        let rsp = self.mq_embedded(&mut roce, &req)?;
        roce.config = decode_response::<RdmaQueryConfig>(&rsp).unwrap().1;
        // 5: GET_FW_VERSION.
        let rsp =
            self.mq_embedded(&mut roce, &ocrdma_request(35, Subsystem::Common, 0, MQE_PAYLOAD, FULL_MQE_CMD_LEN))?;
        roce.fw_ver = oce_mailbox::wire::decode_c_string(&rsp[16..48]);
        // 6: CREATE_AH_TBL: 8 pages of 4 KiB holding 512 AVs of sizeof(struct ocrdma_av) = 64
        // bytes; the pages' PBEs (hi dword first) in a page-list page, whose address goes first.
        let pbl = self.mem.alloc(4096);
        let table = self.mem.alloc(8 * 4096);
        for i in 0..8u64 {
            let page = table + i * 4096;
            let mut pbe = [0u8; 8];
            pbe[..4].copy_from_slice(&((page >> 32) as u32).to_le_bytes());
            pbe[4..].copy_from_slice(&(page as u32).to_le_bytes());
            self.mem.poke(pbl + i * 8, &pbe);
        }
        roce.av_table = table;
        let mut page_list = [0u64; 8];
        page_list[0] = pbl;
        let ah = CreateAhTable { pages: 8, page_size_code: 0, entry_len: 64, page_list };
        roce.ahid = self.mq_cmd(&mut roce, &ah)?.ahid;
        // 7: GET_PHY_DETAILS, embedded (be2net sends it non-embedded).
        let rsp =
            self.mq_embedded(&mut roce, &ocrdma_request(102, Subsystem::Common, 0, MQE_PAYLOAD, FULL_MQE_CMD_LEN))?;
        let ityp_ptyp = get32(&rsp, 16);
        roce.phy = (ityp_ptyp as u16, (ityp_ptyp >> 16) as u16);
        // 8: GET_CNTL_ATTRIBUTES in a 556-byte buffer; the header status is checked too.
        let req =
            ocrdma_request(32, Subsystem::Common, 0, CTRL_ATTRIBUTES_LEN, (CTRL_ATTRIBUTES_LEN - HEADER_LEN) as u32);
        let rsp = self.mq_non_embedded(&mut roce, &req)?;
        roce.port = ((get32(&rsp, 460) >> 24) & 0x3F) as u8;
        roce.model = oce_mailbox::wire::decode_c_string(&rsp[112..143]);
        // 9: the PD pool: DPP PDs first if any, then the rest; a failure only logs.
        if roce.config.max_dpp_pds != 0 {
            let dpp = AllocPdRange { dpp: true, pd_count: roce.config.max_dpp_pds.into() };
            let _ = self.mq_cmd(&mut roce, &dpp);
        }
        let count = u32::from(roce.config.max_pd - roce.config.max_dpp_pds);
        roce.pd_range = self.mq_cmd(&mut roce, &AllocPdRange { dpp: false, pd_count: count }).ok();
        // 10: DCBX, operational then administrative; the first enabled and synced wins.
        for param_type in [DcbxParamType::Operational, DcbxParamType::Admin] {
            if let Ok(cfg) = self.mq_cmd(&mut roce, &GetDcbxConfig { param_type })
                && let Some(sl) = service_level(&cfg)
            {
                roce.service_level = sl;
                break;
            }
        }
        // 11-12: registration queries the port (LINK_STATUS_QUERY v1), and the stats.
        let req = ocrdma_request(5, Subsystem::Common, 1, MQE_PAYLOAD, FULL_MQE_CMD_LEN);
        self.mq_embedded(&mut roce, &req)?;
        self.mq_cmd(&mut roce, &GetRdmaStats { reset: false })?;
        Ok(roce)
    }

    /// `ocrdma_mbx_get_link_speed`: the physical port speed code (byte 18) and the logical link
    /// (byte 24 bit 0).
    pub fn ocrdma_link(&mut self, roce: &mut Roce) -> Result<(u8, bool), HostError> {
        let req = ocrdma_request(5, Subsystem::Common, 1, MQE_PAYLOAD, FULL_MQE_CMD_LEN);
        let rsp = self.mq_embedded(roce, &req)?;
        Ok((rsp[18], rsp[24] & 1 == 1))
    }

    /// `ocrdma_remove`'s hardware part (`ocrdma_cleanup_hw`): the PD pool and the AH table on the
    /// MQ, then the MQ, its CQ and the EQs through be2net's MCC.
    pub fn ocrdma_remove(&mut self, mut roce: Roce) -> Result<(), HostError> {
        if let Some(range) = roce.pd_range {
            let cmd = DeallocPdRange { start_pd_id: range.first.pd_id.into(), pd_count: range.pd_count };
            self.mq_cmd(&mut roce, &cmd)?;
        }
        let table = DeleteAhTable { ahid: roce.ahid.into() };
        self.mq_cmd(&mut roce, &table)?;
        self.mcc(&MccDestroy::new(roce.mq.0))?;
        self.mcc(&CqDestroy::new(roce.mq_cq.id))?;
        for eq in roce.eqs {
            self.eq_notify(eq.id, false, true, 0);
            self.mcc(&EqDestroy::new(eq.id))?;
        }
        Ok(())
    }

    /// A codec command on the MQ (embedded or not, as the type says).
    pub fn mq_cmd<C: Command>(&mut self, roce: &mut Roce, cmd: &C) -> Result<C::Response, HostError> {
        let req = encode_request(cmd).unwrap();
        let rsp = if C::EMBEDDED { self.mq_embedded(roce, &req)? } else { self.mq_non_embedded(roce, &req)? };
        Ok(decode_response::<C>(&rsp).unwrap().1)
    }

    /// An embedded MQE; the response is read back from the ring slot.
    pub fn mq_embedded(&mut self, roce: &mut Roce, request: &[u8]) -> Result<Vec<u8>, HostError> {
        assert!(request.len() <= MQE_PAYLOAD);
        let slot = self.mq_post(roce, request.len() as u32, WrbPayload::Embedded(request.to_vec()));
        let status = self.mq_wait(roce)?;
        let rsp = self.mem.peek(slot + WRB_PAYLOAD_OFFSET as u64, request.len());
        check_status(status, &rsp)?;
        Ok(rsp)
    }

    /// A non-embedded MQE with one SGE to a buffer holding `request`.
    pub fn mq_non_embedded(&mut self, roce: &mut Roce, request: &[u8]) -> Result<Vec<u8>, HostError> {
        let buf = self.mem.alloc(request.len());
        self.mem.poke(buf, request);
        let sge = Sge { address: buf, len: request.len() as u32 };
        self.mq_post(roce, request.len() as u32, WrbPayload::NonEmbedded(vec![sge]));
        let status = self.mq_wait(roce)?;
        let rsp = self.mem.peek(buf, request.len());
        check_status(status, &rsp)?;
        Ok(rsp)
    }

    /// `ocrdma_post_mqe`: the MQE at the head, `tag_lo` = the head index, the MQ doorbell.
    /// Returns the slot.
    fn mq_post(&mut self, roce: &mut Roce, len: u32, payload: WrbPayload) -> u64 {
        let (id, ring, head) = roce.mq.clone();
        let slot = ring.entry(head);
        let wrb = Wrb { payload_length: len, tags: [head, 0], payload };
        let mut raw = [0u8; WRB_LEN];
        wrb.encode(&mut Writer::new(&mut raw)).unwrap();
        self.mem.poke(slot, &raw);
        roce.mq.2 = (head + 1) % ring.entries;
        self.write32(DB_BAR, MccDoorbell::OFFSET.into(), MccDoorbell::new(id, 1).0);
        slot
    }

    /// `ocrdma_wait_mqe_cmpl` woken by `ocrdma_irq_handler`: an MSI-X interrupt on the vector of
    /// a RoCE EQ must have come; its entries name the MQ's CQ, whose completion must carry the
    /// posted tag. Returns the CQE status.
    fn mq_wait(&mut self, roce: &mut Roce) -> Result<CompletionStatus, HostError> {
        let tag = (roce.mq.2 + roce.mq.1.entries - 1) % roce.mq.1.entries;
        let irqs = self.irq.take();
        let mut status = None;
        for irq in irqs {
            let Irq::Msix(vector) = irq else { panic!("ocrdma runs on MSI-X only: {irq:?}") };
            // Another vector is be2net's: not ocrdma's handler.
            let Some(index) = roce.eqs.iter().position(|e| e.msix_idx == vector) else { continue };
            roce.vectors.push(vector);
            for cq in self.roce_events(roce, index) {
                assert_eq!(cq, roce.mq_cq.id, "only the MQ's CQ lives on a RoCE EQ here");
                status = status.or(self.mq_cq_poll(roce, tag));
            }
            let id = roce.eqs[index].id;
            self.eq_notify(id, true, true, 0);
        }
        // No interrupt, or no completion with our tag: "mailbox timeout: fw not responding".
        status.ok_or(HostError::NotResponding)
    }

    /// The EQ's valid entries, each popped with its own doorbell as ocrdma does.
    fn roce_events(&mut self, roce: &mut Roce, index: usize) -> Vec<u16> {
        let mut cqs = Vec::new();
        loop {
            let eq = &mut roce.eqs[index];
            let at = eq.ring.entry(eq.tail);
            let evt = self.mem.peek32(at);
            if evt & 1 == 0 {
                break;
            }
            assert_eq!(evt & 0xFFFF, 1, "an ocrdma EQE is exactly (cq_id << 16) | 1");
            self.mem.poke(at, &[0; 4]);
            eq.tail = (eq.tail + 1) % eq.ring.entries;
            let id = eq.id;
            self.eq_notify(id, false, true, 1);
            cqs.push((evt >> 16) as u16);
        }
        cqs
    }

    /// `ocrdma_mq_cq_handler`: every valid MCQE; a command completion must carry `tag` and
    /// COMPLETED; re-arms with the count. Returns the status of the completion for `tag`.
    fn mq_cq_poll(&mut self, roce: &mut Roce, tag: u32) -> Option<CompletionStatus> {
        let mut found = None;
        let mut n = 0;
        loop {
            let cq = &mut roce.mq_cq;
            let at = cq.ring.entry(cq.tail);
            let raw = self.mem.peek(at, COMPLETION_LEN);
            let flags = get32(&raw, 12);
            if flags & MCQE_VALID == 0 {
                break;
            }
            if flags & MCQE_AE != 0 {
                roce.async_events += 1;
            } else {
                assert_ne!(flags & MCQE_COMPLETED, 0, "a command completion has COMPLETED");
                assert_eq!(get32(&raw, 4), tag, "cqe for invalid tag");
                assert_eq!(get32(&raw, 8), 0, "tag_hi is 0");
                found = Some(CompletionStatus::from_raw(get32(&raw, 0)));
            }
            self.mem.poke(at, &[0; COMPLETION_LEN]);
            cq.tail = (cq.tail + 1) % cq.ring.entries;
            n += 1;
        }
        let id = roce.mq_cq.id;
        self.cq_notify(id, true, n);
        found
    }
}

/// `ocrdma_mbx_cmd`'s checks: the CQE status, then the response header's status byte.
fn check_status(cqe: CompletionStatus, rsp: &[u8]) -> Result<(), HostError> {
    if !cqe.is_success() {
        return Err(HostError::Status(cqe));
    }
    let hdr = ResponseHeader::decode(&mut Reader::new(rsp)).unwrap();
    if !hdr.status().is_success() {
        return Err(HostError::Status(hdr.status()));
    }
    Ok(())
}

/// `ocrdma_parse_dcbxcfg_rsp`, reduced: with PFC enabled and in sync, the lowest priority the
/// RoCE application entry names.
fn service_level(cfg: &DcbxConfig) -> Option<u8> {
    if cfg.summary.state() == 0 || !cfg.pfc_state.is_enabled_and_synced() {
        return None;
    }
    let entry = cfg.app.iter().find(|a| a.valid != 0 && a.protocol == oce_mailbox::commands::ROCE_ETHERTYPE)?;
    entry.priorities.iter().position(|&p| p != 0).map(|p| p as u8)
}
