//! Every firmware command ocetool sends or the emulator answers, one type per command
//! (spec/protocol.md §5; the queue and interface commands a driver such as be2net sends,
//! spec/be2net-driver.md §2–§4; the RDMA subsystem's, which ocrdma sends, §5).
//!
//! Each request type implements [`Command`](crate::Command) and [`Wire`](crate::Wire) for its
//! body; each response type implements [`Wire`](crate::Wire). Both directions of both types are
//! implemented: the host encodes requests and decodes responses, the emulator decodes requests
//! and encodes responses. Byte offsets in the docs and tests are from the start of the command
//! buffer, header included, as in the spec; decoders start at byte 16 and jump to absolute
//! offsets where a layout has gaps, so a truncated response fails naming the missing field.

mod support;

mod attributes;
mod cq_v3;
mod dcbx;
pub mod descriptors;
mod eth;
mod eth_config;
mod eth_stats;
mod fat;
mod flashrom;
mod func_config;
mod function;
mod fw_config;
mod interface;
mod link;
mod mac_list;
mod port;
mod privileges;
mod profile_config;
mod profiles;
mod queue_context;
mod queues;
mod rdma;
mod rdma_config;
mod rdma_mr;
mod rdma_qp;
mod rdma_qp_params;
mod rdma_stats;
mod rdma_stats_blocks;
mod read_only;
mod transceiver;
mod version;

pub use attributes::{CntlAttributes, GetCntlAttributes};
pub use cq_v3::{CQ_V3_PAGE_SLOTS, CqCreateV3};
pub use dcbx::{
    APP_ENTRIES, AppPriority, AppSelector, DEFAULT_SERVICE_LEVEL, DcbxConfig, DcbxFeatureState, DcbxParamType,
    DcbxSummary, GetDcbxConfig, PRIORITIES, ROCE_ETHERTYPE,
};
pub use descriptors::{
    DescriptorFlags, DescriptorVersion, McType, NicDescriptor, PcieDescriptor, PfType, PortDescriptor,
    ResourceDescriptor,
};
pub use eth::{RxCreate, RxCreated, RxDestroy, TxCreate, TxCreated, TxDestroy};
pub use eth_config::{AcpiWolQuery, RssConfig, WolCapabilities};
pub use eth_stats::{GetStatistics, HwStatsV2, PortCounter, RxfCounter};
pub use fat::{FatLog, FatOperation, FatRequest, QueryFat, RetrieveFat};
pub use flashrom::{FlashCrc, FlashOpType, FlashromOp, ReadFlashrom, WriteFlashrom};
pub use func_config::{FuncConfig, GetFuncConfig, MAX_RESOURCE_DESC};
pub use function::{
    AdditionalAttributes, EqDelay, FlowControl, GetCntlAdditionalAttributes, GetFlowControl, ModifyEqDelay,
    SetDriverFunctionCap, SetFlowControl, SetInterruptEnable, SetLogicalLinkConfig,
};
pub use fw_config::{FirmwareConfig, FunctionCaps, FunctionMode, QueryFirmwareConfig, UlpResources};
pub use interface::{IfCreate, IfCreated, IfDestroy, IfFlags, PmacAdd, PmacAdded, PmacDel, RxFilter, VlanConfig};
pub use link::{GetPhyDetails, LinkStatus, LinkStatusQuery, MacSpeed, PhyDetails, PhyInterface, PhySpeeds};
pub use mac_list::{GetMacList, MacEntry, MacList};
pub use port::{BeaconState, EnableDisableBeacon, GetBeaconState, GetPortName, PortName};
pub use privileges::{FnPrivileges, GetFnPrivileges};
pub use profile_config::{GetProfileConfig, ProfileConfig, ProfileSelector, SetProfileConfig};
pub use profiles::{ActiveProfile, GetActiveProfile, GetProfileList, ProfileList, ProfileListEntry, SetActiveProfile};
pub use queue_context::{CqContext, EqContext, MccContext, QUEUE_PAGE_LEN};
pub use queues::{
    CqCreate, CqDestroy, EqCreate, EqCreated, EqDestroy, MccCreateExt, MccDestroy, QUEUE_PAGE_SLOTS, QueueCreated,
};
pub use rdma::{
    AH_TABLE_PAGES, AhTableCreated, AllocPd, AllocPdRange, CreateAhTable, DeallocPd, DeallocPdRange, DeleteAhTable,
    PD_DPP, PdGrant, PdRange,
};
pub use rdma_config::{RdmaConfig, RdmaQpFlags, RdmaQueryConfig};
pub use rdma_mr::{
    DeallocLkey, HPAGE_UNIT, MrAccess, NSMR_PBL_SLOTS, NsmrRegistered, PBE_LEN, Pbe, RegisterNsmr, RegisterNsmrCont,
};
pub use rdma_qp::{CreateQp, CreateQpFlags, DeleteQp, IRD_PAGE_SLOTS, QP_PAGE_SLOTS, QpCreated, QpType};
pub use rdma_qp_params::{ModifyQp, ModifyQpValid, QP_PARAMS_LEN, QpModified, QpParams, QpState, QueryQp};
pub use rdma_stats::{GetRdmaStats, RdmaStats};
pub use rdma_stats_blocks::{
    DoorbellErrorStats, ResourceStats, RxQpErrorStats, RxStats, TxQpErrorStats, TxStats, WqeStats,
};
pub use read_only::{READ_ONLY_QUERIES, read_only_query};
pub use support::format_mac;
pub use transceiver::{
    ModuleIdentifier, ModuleIdentity, PAGE_DATA_LEN, ReadTransceiverData, TransceiverData, TransceiverPage,
};
pub use version::{FunctionReset, FwVersion, GetFwVersion};
