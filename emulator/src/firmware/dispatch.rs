//! The command dispatcher: (subsystem, opcode, version) → handler, with the request decoded and
//! the response encoded by the command types of `oce_mailbox::commands` (the host and the
//! emulator share one codec; nothing is re-encoded by hand here).
//!
//! Subsystems COMMON and ETH are implemented, RDMA's resource and verb commands on a RoCE function, and
//! DCBX (0x10) GET_CONFIG. Unknown opcodes,
//! subsystems and unsupported versions answer ILLEGAL_REQUEST (2), as the real firmware does
//! (spec/protocol.md §3.5, §8 item 8). On a VF, the adapter-wide COMMON commands of
//! [`VF_REFUSED_OPCODES`] answer
//! UNAUTHORIZED_REQUEST (5).

use oce_mailbox::command::{Command, decode_request};
use oce_mailbox::commands::{
    AcpiWolQuery, AllocPd, AllocPdRange, CqCreate, CqCreateV3, CqDestroy, CreateAhTable, CreateQp, DeallocLkey,
    DeallocPd, DeallocPdRange, DeleteAhTable, DeleteQp, EnableDisableBeacon, EqCreate, EqDestroy, FatOperation,
    FatRequest, FunctionReset, GetActiveProfile, GetBeaconState, GetCntlAdditionalAttributes, GetCntlAttributes,
    GetDcbxConfig, GetFlowControl, GetFnPrivileges, GetFuncConfig, GetFwVersion, GetMacList, GetPhyDetails,
    GetPortName, GetProfileConfig, GetProfileList, GetRdmaStats, GetStatistics, IfCreate, IfDestroy, LinkStatusQuery,
    MccCreateExt, MccDestroy, ModifyEqDelay, ModifyQp, PmacAdd, PmacDel, QueryFat, QueryFirmwareConfig, QueryQp,
    RdmaQueryConfig, ReadFlashrom, ReadTransceiverData, RegisterNsmr, RegisterNsmrCont, RssConfig, RxCreate, RxDestroy,
    RxFilter, SetActiveProfile, SetDriverFunctionCap, SetFlowControl, SetInterruptEnable, SetLogicalLinkConfig,
    SetProfileConfig, TxCreate, TxDestroy, VlanConfig, WriteFlashrom,
};
use oce_mailbox::header::{HEADER_LEN, RequestHeader, Subsystem};
use oce_mailbox::status::{BaseStatus, CompletionStatus};
use oce_mailbox::wire::{Reader, Wire, Writer};

use super::handlers::{
    dcbx, device, eth, fat, flashrom, illegal_field, illegal_request, interface, port, profile, queues, rdma,
    rdma_objects, transceiver, unauthorized,
};
use super::{Context, Firmware, Owed};
use crate::assumptions::{STATUS_BAD_LENGTH, STATUS_NO_SUCH_DOMAIN, VF_REFUSED_OPCODES};

/// A handler's answer: the encoded response body and what the command owes the datapath, or a
/// failure status.
pub(crate) type Reply = Result<(Vec<u8>, Owed), CompletionStatus>;

/// Largest response body a handler may produce (GET_FUNC_CONFIG's buffer is 23 252 bytes).
const MAX_RESPONSE_BODY: usize = 64 << 10;

impl Firmware {
    /// Runs the command in `buf` (header already decoded as `hdr`).
    pub(crate) fn dispatch(&mut self, cx: &Context, hdr: &RequestHeader, buf: &[u8]) -> Reply {
        match hdr.subsystem {
            Subsystem::Common => self.dispatch_common(cx, hdr, buf),
            Subsystem::Eth => self.dispatch_eth(cx, hdr, buf),
            Subsystem::Rdma => self.dispatch_rdma(cx, hdr, buf),
            Subsystem::Dcbx if hdr.opcode == GetDcbxConfig::OPCODE => run(self, cx, hdr, buf, dcbx::get_dcbx_config),
            _ => Err(illegal_request()),
        }
    }

    /// Runs a COMMON command.
    fn dispatch_common(&mut self, cx: &Context, hdr: &RequestHeader, buf: &[u8]) -> Reply {
        if self.function().is_vf() && VF_REFUSED_OPCODES.contains(&hdr.opcode) {
            return Err(unauthorized());
        }
        match hdr.opcode {
            LinkStatusQuery::OPCODE => run(self, cx, hdr, buf, port::link_status_query),
            GetCntlAttributes::OPCODE => run(self, cx, hdr, buf, device::get_cntl_attributes),
            GetFwVersion::OPCODE => run(self, cx, hdr, buf, device::get_fw_version),
            QueryFirmwareConfig::OPCODE => run(self, cx, hdr, buf, device::query_firmware_config),
            FunctionReset::OPCODE => run_owing(self, cx, hdr, buf, device::function_reset),
            EnableDisableBeacon::OPCODE => run(self, cx, hdr, buf, port::enable_disable_beacon),
            GetBeaconState::OPCODE => run(self, cx, hdr, buf, port::get_beacon_state),
            GetPortName::OPCODE => run(self, cx, hdr, buf, port::get_port_name),
            GetPhyDetails::OPCODE => run(self, cx, hdr, buf, port::get_phy_details),
            GetMacList::OPCODE => run(self, cx, hdr, buf, port::get_mac_list),
            ReadTransceiverData::OPCODE => run(self, cx, hdr, buf, transceiver::read_transceiver_data),
            // QUERY and RETRIEVE share the opcode and the request layout; `fat_operation` picks.
            QueryFat::OPCODE => match FatRequest::decode(&mut Reader::at(buf, HEADER_LEN)).map(|r| r.operation) {
                Ok(FatOperation::Query) => run(self, cx, hdr, buf, fat::query_fat),
                Ok(FatOperation::Retrieve) => run(self, cx, hdr, buf, fat::retrieve_fat),
                Ok(FatOperation::Unknown(_)) => Err(illegal_field()),
                Err(_) => Err(STATUS_BAD_LENGTH.into()),
            },
            GetFuncConfig::OPCODE => run(self, cx, hdr, buf, profile::get_func_config),
            GetProfileConfig::OPCODE => run(self, cx, hdr, buf, profile::get_profile_config),
            SetProfileConfig::OPCODE => run(self, cx, hdr, buf, profile::set_profile_config),
            GetProfileList::OPCODE => run(self, cx, hdr, buf, profile::get_profile_list),
            GetActiveProfile::OPCODE => run(self, cx, hdr, buf, profile::get_active_profile),
            SetActiveProfile::OPCODE => run(self, cx, hdr, buf, profile::set_active_profile),
            GetFnPrivileges::OPCODE => run(self, cx, hdr, buf, device::get_fn_privileges),
            ReadFlashrom::OPCODE => run(self, cx, hdr, buf, flashrom::read_flashrom),
            WriteFlashrom::OPCODE => flashrom::write_flashrom(self, hdr, buf),
            SetInterruptEnable::OPCODE => run(self, cx, hdr, buf, device::set_interrupt_enable),
            SetDriverFunctionCap::OPCODE => run(self, cx, hdr, buf, device::set_driver_function_cap),
            GetCntlAdditionalAttributes::OPCODE => run(self, cx, hdr, buf, device::get_cntl_additional_attributes),
            SetFlowControl::OPCODE => run(self, cx, hdr, buf, port::set_flow_control),
            GetFlowControl::OPCODE => run(self, cx, hdr, buf, port::get_flow_control),
            SetLogicalLinkConfig::OPCODE => run_owing(self, cx, hdr, buf, port::set_logical_link_config),
            EqCreate::OPCODE => run(self, cx, hdr, buf, queues::eq_create),
            CqCreate::OPCODE if hdr.version == CqCreateV3::VERSION => {
                run(self, cx, hdr, buf, rdma_objects::cq_create_v3)
            }
            CqCreate::OPCODE => run(self, cx, hdr, buf, queues::cq_create),
            MccCreateExt::OPCODE => run(self, cx, hdr, buf, queues::mcc_create_ext),
            EqDestroy::OPCODE => run(self, cx, hdr, buf, queues::eq_destroy),
            CqDestroy::OPCODE => run(self, cx, hdr, buf, queues::cq_destroy),
            MccDestroy::OPCODE => run(self, cx, hdr, buf, queues::mcc_destroy),
            ModifyEqDelay::OPCODE => run(self, cx, hdr, buf, queues::modify_eq_delay),
            IfCreate::OPCODE => run(self, cx, hdr, buf, interface::if_create),
            IfDestroy::OPCODE => run(self, cx, hdr, buf, interface::if_destroy),
            PmacAdd::OPCODE => run(self, cx, hdr, buf, interface::pmac_add),
            PmacDel::OPCODE => run(self, cx, hdr, buf, interface::pmac_del),
            RxFilter::OPCODE => run(self, cx, hdr, buf, interface::rx_filter),
            VlanConfig::OPCODE => run(self, cx, hdr, buf, interface::vlan_config),
            _ => Err(illegal_request()),
        }
    }

    /// Runs an ETH command.
    fn dispatch_eth(&mut self, cx: &Context, hdr: &RequestHeader, buf: &[u8]) -> Reply {
        match hdr.opcode {
            RssConfig::OPCODE => run(self, cx, hdr, buf, eth::rss_config),
            GetStatistics::OPCODE => run(self, cx, hdr, buf, eth::get_statistics),
            TxCreate::OPCODE => run(self, cx, hdr, buf, eth::tx_create),
            RxCreate::OPCODE => run(self, cx, hdr, buf, eth::rx_create),
            TxDestroy::OPCODE => run(self, cx, hdr, buf, eth::tx_destroy),
            RxDestroy::OPCODE => run_owing(self, cx, hdr, buf, eth::rx_destroy),
            AcpiWolQuery::OPCODE => run(self, cx, hdr, buf, eth::acpi_wol_query),
            _ => Err(illegal_request()),
        }
    }

    /// Runs an RDMA command: only on a function whose running profile has RoCE; the verbs the
    /// model lacks (ALLOC_LKEY, SRQs, memory windows, multicast) are ILLEGAL_REQUEST.
    fn dispatch_rdma(&mut self, cx: &Context, hdr: &RequestHeader, buf: &[u8]) -> Reply {
        if !self.card().state.runtime.active.function_mode().is_rdma() {
            return Err(illegal_request());
        }
        match hdr.opcode {
            RdmaQueryConfig::OPCODE => run(self, cx, hdr, buf, rdma::query_config),
            AllocPd::OPCODE => run(self, cx, hdr, buf, rdma::alloc_pd),
            DeallocPd::OPCODE => run(self, cx, hdr, buf, rdma::dealloc_pd),
            CreateAhTable::OPCODE => run(self, cx, hdr, buf, rdma::create_ah_table),
            DeleteAhTable::OPCODE => run(self, cx, hdr, buf, rdma::delete_ah_table),
            GetRdmaStats::OPCODE => run(self, cx, hdr, buf, rdma::get_rdma_stats),
            AllocPdRange::OPCODE => run(self, cx, hdr, buf, rdma::alloc_pd_range),
            DeallocPdRange::OPCODE => run(self, cx, hdr, buf, rdma::dealloc_pd_range),
            RegisterNsmr::OPCODE => run_owing(self, cx, hdr, buf, rdma_objects::register_nsmr),
            RegisterNsmrCont::OPCODE => run_owing(self, cx, hdr, buf, rdma_objects::register_nsmr_cont),
            DeallocLkey::OPCODE => run(self, cx, hdr, buf, rdma_objects::dealloc_lkey),
            CreateQp::OPCODE => run(self, cx, hdr, buf, rdma_objects::create_qp),
            ModifyQp::OPCODE => run(self, cx, hdr, buf, rdma_objects::modify_qp),
            QueryQp::OPCODE => run(self, cx, hdr, buf, rdma_objects::query_qp),
            DeleteQp::OPCODE => run(self, cx, hdr, buf, rdma_objects::delete_qp),
            _ => Err(illegal_request()),
        }
    }
}

/// A handler for command `C`.
type Handler<C> = fn(&mut Firmware, &Context, C) -> Result<<C as Command>::Response, CompletionStatus>;
/// A handler for command `C` that leaves the datapath something to do.
type OwingHandler<C> = fn(&mut Firmware, &Context, C) -> Result<(<C as Command>::Response, Owed), CompletionStatus>;

/// Checks that `hdr` asks for the version of `C` the firmware implements, for this function.
pub(super) fn check_header<C: Command>(hdr: &RequestHeader) -> Result<(), CompletionStatus> {
    if hdr.version != C::VERSION {
        return Err(illegal_request());
    }
    if hdr.domain != 0 {
        return Err(STATUS_NO_SUCH_DOMAIN.into());
    }
    Ok(())
}

/// Checks the header, decodes `C`'s request, runs `handler`, encodes the response.
fn run<C: Command>(fw: &mut Firmware, cx: &Context, hdr: &RequestHeader, buf: &[u8], handler: Handler<C>) -> Reply {
    check_header::<C>(hdr)?;
    let (_, request) = decode_request::<C>(buf).map_err(|_| CompletionStatus::from(STATUS_BAD_LENGTH))?;
    let response = handler(fw, cx, request)?;
    Ok((encode_body(&mut fw.response_buf, &response, C::LEN)?, Owed::default()))
}

/// [`run`] for a handler that leaves the datapath something to do.
fn run_owing<C: Command>(
    fw: &mut Firmware,
    cx: &Context,
    hdr: &RequestHeader,
    buf: &[u8],
    handler: OwingHandler<C>,
) -> Reply {
    check_header::<C>(hdr)?;
    let (_, request) = decode_request::<C>(buf).map_err(|_| CompletionStatus::from(STATUS_BAD_LENGTH))?;
    let (response, owed) = handler(fw, cx, request)?;
    Ok((encode_body(&mut fw.response_buf, &response, C::LEN)?, owed))
}

/// Encodes a response body as it sits at byte 16 of the command buffer (decoders and encoders
/// use absolute offsets) and returns the body bytes.
///
/// The body is encoded into the first `C::LEN` bytes of `scratch` (the command's own length,
/// sized by the drivers for the response) and, only when it does not fit there, again into
/// [`MAX_RESPONSE_BODY`] bytes, so a response too long for the host's buffer still reports its
/// full length. `scratch` is all zeros between calls (grown with zeros, and every byte an
/// encoder wrote cleared again), so the gaps an encoder leaves read as zeros, as in a fresh
/// buffer, without every command allocating and zeroing one (23 KiB for GET_FUNC_CONFIG).
fn encode_body<T: Wire>(scratch: &mut Vec<u8>, value: &T, command_len: usize) -> Result<Vec<u8>, CompletionStatus> {
    let first = command_len.saturating_sub(HEADER_LEN).min(MAX_RESPONSE_BODY);
    for capacity in [first, MAX_RESPONSE_BODY] {
        let len = HEADER_LEN + capacity;
        if scratch.len() < len {
            scratch.resize(len, 0);
        }
        let mut w = Writer::at(&mut scratch[..len], HEADER_LEN);
        let encoded = value.encode(&mut w).is_ok();
        let (end, written_end) = (w.position(), w.written_end());
        let body = encoded.then(|| scratch[HEADER_LEN..end].to_vec());
        scratch[HEADER_LEN..written_end].fill(0);
        if let Some(body) = body {
            return Ok(body);
        }
    }
    Err(BaseStatus::Failed.into())
}

#[cfg(test)]
mod tests {
    use oce_mailbox::wire::{Reader, WireError};

    use super::*;

    /// A body of `len` bytes counting up from 1, after a gap the encoding leaves unwritten.
    struct Body {
        gap: usize,
        len: usize,
    }

    impl Wire for Body {
        fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
            w.seek("gap", HEADER_LEN + self.gap)?;
            (0..self.len).try_for_each(|i| w.u8("byte", (i % 251) as u8 + 1))
        }
        fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
            Ok(Self { gap: 0, len: r.remaining() })
        }
    }

    #[test]
    fn bodies_longer_than_the_command_buffer_keep_their_full_length() {
        let mut scratch = Vec::new();
        let fits = encode_body(&mut scratch, &Body { gap: 4, len: 8 }, HEADER_LEN + 12).unwrap();
        assert_eq!(fits, [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8], "a gap reads as zeros");
        let long = encode_body(&mut scratch, &Body { gap: 0, len: 1000 }, HEADER_LEN + 12).unwrap();
        assert_eq!(long.len(), 1000);
        assert_eq!(long[999], (999 % 251) as u8 + 1);
        let too_long = encode_body(&mut scratch, &Body { gap: 0, len: MAX_RESPONSE_BODY + 1 }, HEADER_LEN + 12);
        assert_eq!(too_long, Err(BaseStatus::Failed.into()));
    }

    /// A body that writes `len` bytes of 0xEE from `at`, then seeks back to `back` and ends there.
    struct Rewound {
        at: usize,
        len: usize,
        back: usize,
    }

    impl Wire for Rewound {
        fn encode(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
            w.seek("at", HEADER_LEN + self.at)?;
            w.bytes("fill", &vec![0xEE; self.len])?;
            w.seek("back", HEADER_LEN + self.back)
        }
        fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
            Ok(Self { at: 0, len: r.remaining(), back: 0 })
        }
    }

    #[test]
    fn a_reused_buffer_gives_the_bytes_of_a_fresh_one() {
        let mut scratch = Vec::new();
        // Bytes written past where the body ends (a seek back) and by a body that did not fit
        // are cleared before the next command: its gap reads as zeros.
        let short = encode_body(&mut scratch, &Rewound { at: 8, len: 8, back: 4 }, HEADER_LEN + 64).unwrap();
        assert_eq!(short, [0; 4]);
        assert!(encode_body(&mut scratch, &Body { gap: 0, len: MAX_RESPONSE_BODY + 1 }, HEADER_LEN + 64).is_err());
        assert!(scratch.iter().all(|&b| b == 0), "every byte written is cleared again");
        let next = encode_body(&mut scratch, &Body { gap: 20, len: 2 }, HEADER_LEN + 64).unwrap();
        let fresh = encode_body(&mut Vec::new(), &Body { gap: 20, len: 2 }, HEADER_LEN + 64).unwrap();
        assert_eq!(next, fresh);
        assert_eq!(next[..20], [0; 20]);
    }
}
