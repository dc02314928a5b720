//! Untrusted bytes never panic a decoder: random command buffers with random `response_length`
//! values go through `decode_response` and `decode_request` of every command, and whatever
//! decodes is encoded again (which may fail, but must not panic).

use oce_mailbox::command::{Command, decode_request, decode_response};
use oce_mailbox::commands::*;
use oce_mailbox::wire::{Wire, Writer};
use proptest::prelude::*;

/// A buffer of up to `len + 64` random bytes whose `response_length` (@8) is either any u32 or
/// a plausible value around the buffer size.
fn command_buffer(len: usize) -> impl Strategy<Value = Vec<u8>> {
    (prop::collection::vec(any::<u8>(), 0..=len + 64), any::<u32>(), any::<bool>(), 0..=len + 16).prop_map(
        |(mut bytes, wild, plausible, near)| {
            if bytes.len() >= 12 {
                let rl = if plausible { near as u32 } else { wild };
                bytes[8..12].copy_from_slice(&rl.to_le_bytes());
            }
            bytes
        },
    )
}

/// A descriptor list that looks real enough to reach deep into the walk: a count, then
/// descriptors whose type and length bytes come from the interesting values.
fn descriptor_buffer(len: usize) -> impl Strategy<Value = Vec<u8>> {
    let kind = prop_oneof![Just(0x40u8), Just(0x41), Just(0x50), Just(0x51), Just(0x55), any::<u8>()];
    let length = prop_oneof![Just(0u8), Just(72), Just(88), Just(3), any::<u8>()];
    let desc = (kind, length, prop::collection::vec(any::<u8>(), 0..100), any::<bool>());
    (prop::collection::vec(desc, 0..8), any::<u32>(), 0..=len).prop_map(move |(descs, count, rl)| {
        let mut buf = vec![0u8; 20];
        buf[8..12].copy_from_slice(&(rl as u32).to_le_bytes());
        buf[16..20].copy_from_slice(&(count % 10).to_le_bytes());
        for (kind, length, mut body, consistent) in descs {
            if consistent {
                // Make the body fit the declared length (0 means 72) so the walk goes on.
                let len = if length == 0 { 72 } else { usize::from(length) };
                body.resize(len.saturating_sub(2), 0);
            }
            buf.push(kind);
            buf.push(length);
            buf.extend_from_slice(&body);
        }
        buf
    })
}

fn exercise<C: Command>(buf: &[u8]) {
    if let Ok((_, resp)) = decode_response::<C>(buf) {
        let mut out = vec![0u8; C::LEN + 64];
        let _ = resp.encode(&mut Writer::at(&mut out, 16));
    }
    if let Ok((_, req)) = decode_request::<C>(buf) {
        let mut out = vec![0u8; C::LEN + 64];
        let _ = req.encode(&mut Writer::at(&mut out, 16));
    }
}

macro_rules! fuzz_all {
    ($($name:ident: $cmd:ty;)*) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
            $(
                #[test]
                fn $name(buf in command_buffer(<$cmd as Command>::LEN)) {
                    exercise::<$cmd>(&buf);
                }
            )*
        }
    };
}

fuzz_all! {
    get_fw_version: GetFwVersion;
    function_reset: FunctionReset;
    get_cntl_attributes: GetCntlAttributes;
    query_firmware_config: QueryFirmwareConfig;
    get_func_config: GetFuncConfig;
    get_mac_list: GetMacList;
    get_port_name: GetPortName;
    link_status_query: LinkStatusQuery;
    get_phy_details: GetPhyDetails;
    get_fn_privileges: GetFnPrivileges;
    get_active_profile: GetActiveProfile;
    set_active_profile: SetActiveProfile;
    get_profile_list: GetProfileList;
    get_profile_config: GetProfileConfig;
    set_profile_config: SetProfileConfig;
    get_beacon_state: GetBeaconState;
    enable_disable_beacon: EnableDisableBeacon;
    read_flashrom: ReadFlashrom;
    write_flashrom: WriteFlashrom<'static>;
    get_dcbx_config: GetDcbxConfig;
    query_fat: QueryFat;
    retrieve_fat: RetrieveFat;
    read_transceiver_data: ReadTransceiverData;
    rdma_query_config: RdmaQueryConfig;
    alloc_pd: AllocPd;
    dealloc_pd: DeallocPd;
    alloc_pd_range: AllocPdRange;
    dealloc_pd_range: DeallocPdRange;
    create_ah_table: CreateAhTable;
    delete_ah_table: DeleteAhTable;
    get_rdma_stats: GetRdmaStats;
    cq_create_v3: CqCreateV3;
    register_nsmr: RegisterNsmr;
    register_nsmr_cont: RegisterNsmrCont;
    dealloc_lkey: DeallocLkey;
    create_qp: CreateQp;
    modify_qp: ModifyQp;
    query_qp: QueryQp;
    delete_qp: DeleteQp;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn descriptor_walks(buf in descriptor_buffer(2048)) {
        exercise::<GetFuncConfig>(&buf);
        exercise::<GetProfileConfig>(&buf);
        exercise::<SetProfileConfig>(&buf);
    }
}
