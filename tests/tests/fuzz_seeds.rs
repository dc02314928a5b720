//! The checked-in seed corpus of the cargo-fuzz targets (`fuzz/corpus/<target>/`), which `.ci/run`
//! fuzzes from: this test builds every seed from the project's own encoders and fails when a
//! checked-in file differs (a seed that no longer parses seeds nothing); `OCETOOL_BLESS=1`
//! rewrites them after an intended change.
//!
//! - `decoders`: for each decoder of `fuzz/fuzz_targets/decoders.rs`, its pick byte and a command
//!   buffer with a successful response header claiming the command's whole body, so the fuzzer
//!   starts inside each decoder instead of at the header check.
//! - `ufi`: a tiny valid image from the image builder (every section type of the default layout,
//!   a few bytes each) and the same image cut short, so the fuzzer starts inside the parser,
//!   the walk, the CRC check and the option-ROM decoder.

use std::path::{Path, PathBuf};

use oce_firmware::build::{ImageBuilder, Layout, SectionSpec};
use oce_firmware::dir::{FlashDirectory, ImageType};
use oce_mailbox::Command;
use oce_mailbox::commands::*;
use oce_mailbox::entries::{
    EQ_ENTRY_LEN, EqEntry, LinkStateEvent, TX_COMPLETION_LEN, TX_WRB_LEN, TxCompletion, TxHeaderWrb,
};
use oce_mailbox::header::{HEADER_LEN, ResponseHeader};
use oce_mailbox::wrb::{COMPLETION_LEN, Completion, WRB_LEN, Wrb, WrbPayload};
use oce_mailbox::{AdditionalStatus, BaseStatus, CompletionStatus, Wire, Writer};

fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target)
}

/// Longest seed buffer: the large non-embedded commands (GET_FUNC_CONFIG's 23252 bytes) are cut
/// here, so the corpus stays small and libFuzzer's input length stays short.
const MAX_SEED: usize = 4096;

/// A command buffer of `C` as a successful response leaves it: the header, then a zeroed body.
fn response<C: Command>() -> Vec<u8> {
    let len = C::LEN.min(MAX_SEED);
    let mut buf = vec![0u8; len];
    let header = ResponseHeader {
        opcode: C::OPCODE,
        subsystem: C::SUBSYSTEM,
        base_status: BaseStatus::Success,
        additional_status: AdditionalStatus::None,
        response_length: (len - HEADER_LEN) as u32,
        actual_response_length: (C::LEN - HEADER_LEN) as u32,
    };
    header.encode(&mut Writer::new(&mut buf)).unwrap();
    buf
}

fn encoded(value: &impl Wire, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    value.encode(&mut Writer::new(&mut buf)).unwrap();
    buf
}

/// The decoder seeds, in the order of the pick byte in `fuzz/fuzz_targets/decoders.rs`.
fn decoder_seeds() -> Vec<(String, Vec<u8>)> {
    let responses = [
        ("get_fw_version", response::<GetFwVersion>()),
        ("get_cntl_attributes", response::<GetCntlAttributes>()),
        ("query_firmware_config", response::<QueryFirmwareConfig>()),
        ("get_func_config", response::<GetFuncConfig>()),
        ("get_mac_list", response::<GetMacList>()),
        ("get_port_name", response::<GetPortName>()),
        ("link_status_query", response::<LinkStatusQuery>()),
        ("get_phy_details", response::<GetPhyDetails>()),
        ("get_fn_privileges", response::<GetFnPrivileges>()),
        ("get_active_profile", response::<GetActiveProfile>()),
        ("get_profile_list", response::<GetProfileList>()),
        ("get_profile_config", response::<GetProfileConfig>()),
        ("get_beacon_state", response::<GetBeaconState>()),
        ("enable_disable_beacon", response::<EnableDisableBeacon>()),
        ("set_active_profile", response::<SetActiveProfile>()),
        ("set_profile_config", response::<SetProfileConfig>()),
        ("read_flashrom", response::<ReadFlashrom>()),
        ("write_flashrom", response::<WriteFlashrom<'static>>()),
        ("function_reset", response::<FunctionReset>()),
        ("get_dcbx_config", response::<GetDcbxConfig>()),
        ("query_fat", response::<QueryFat>()),
        ("retrieve_fat", response::<RetrieveFat>()),
        ("read_transceiver_data", response::<ReadTransceiverData>()),
    ];
    let wrb =
        Wrb { payload_length: 80, tags: [1, 0x4F43_4554], payload: WrbPayload::Embedded(response::<GetFwVersion>()) };
    let completion = Completion {
        status: CompletionStatus::new(BaseStatus::Success, AdditionalStatus::None),
        tags: [1, 0x4F43_4554],
        flags: Completion::VALID | Completion::COMPLETED,
    };
    let header = response::<GetFwVersion>()[..HEADER_LEN].to_vec();
    let mut seeds: Vec<(String, Vec<u8>)> = responses.into_iter().map(|(n, b)| (n.to_owned(), b)).collect();
    seeds.push(("wrb".into(), encoded(&wrb, WRB_LEN)));
    seeds.push(("completion".into(), encoded(&completion, COMPLETION_LEN)));
    seeds.push(("response_header".into(), header));
    let queue_commands = [
        ("eq_create", response::<EqCreate>()),
        ("cq_create", response::<CqCreate>()),
        ("mcc_create_ext", response::<MccCreateExt>()),
        ("mcc_destroy", response::<MccDestroy>()),
        ("cq_destroy", response::<CqDestroy>()),
        ("eq_destroy", response::<EqDestroy>()),
        ("tx_create", response::<TxCreate>()),
        ("rx_create", response::<RxCreate>()),
        ("tx_destroy", response::<TxDestroy>()),
        ("rx_destroy", response::<RxDestroy>()),
        ("rss_config", response::<RssConfig>()),
        ("acpi_wol_query", response::<AcpiWolQuery>()),
        ("get_statistics", response::<GetStatistics>()),
        ("if_create", response::<IfCreate>()),
        ("if_destroy", response::<IfDestroy>()),
        ("pmac_add", response::<PmacAdd>()),
        ("pmac_del", response::<PmacDel>()),
        ("rx_filter", response::<RxFilter>()),
        ("vlan_config", response::<VlanConfig>()),
        ("set_interrupt_enable", response::<SetInterruptEnable>()),
        ("set_driver_function_cap", response::<SetDriverFunctionCap>()),
        ("set_flow_control", response::<SetFlowControl>()),
        ("get_flow_control", response::<GetFlowControl>()),
        ("set_logical_link_config", response::<SetLogicalLinkConfig>()),
        ("get_cntl_additional_attributes", response::<GetCntlAdditionalAttributes>()),
        ("modify_eq_delay", response::<ModifyEqDelay>()),
    ];
    seeds.extend(queue_commands.into_iter().map(|(n, b)| (n.to_owned(), b)));
    seeds.push(("eq_entry".into(), encoded(&EqEntry::for_cq(1), EQ_ENTRY_LEN)));
    seeds.push(("link_state_event".into(), encoded(&LinkStateEvent::logical(0, true, 1, 4), COMPLETION_LEN)));
    seeds.push(("tx_header_wrb".into(), encoded(&TxHeaderWrb::new(2, 60, true, true), TX_WRB_LEN)));
    let tx = TxCompletion { wrb_index: 1, status: 0, ring_id: 1, valid: true };
    seeds.push(("tx_completion".into(), encoded(&tx, TX_COMPLETION_LEN)));
    let rdma_commands = [
        ("rdma_query_config", response::<RdmaQueryConfig>()),
        ("alloc_pd", response::<AllocPd>()),
        ("dealloc_pd", response::<DeallocPd>()),
        ("alloc_pd_range", response::<AllocPdRange>()),
        ("dealloc_pd_range", response::<DeallocPdRange>()),
        ("create_ah_table", response::<CreateAhTable>()),
        ("delete_ah_table", response::<DeleteAhTable>()),
        ("get_rdma_stats", response::<GetRdmaStats>()),
    ];
    seeds.extend(rdma_commands.into_iter().map(|(n, b)| (n.to_owned(), b)));
    seeds
        .into_iter()
        .enumerate()
        .map(|(pick, (name, buf))| (format!("{pick:02}-{name}"), [&[pick as u8][..], &buf].concat()))
        .collect()
}

/// A valid image of every section type of the default layout, each as small as it can be.
fn tiny_image() -> Vec<u8> {
    // The PXE section holds the builder's option ROM (a PCI expansion ROM with an EFI image).
    let rom = 4096;
    let dir = FlashDirectory::LEN as u32 + 4;
    let sections = vec![
        SectionSpec::new(ImageType::FirmwareIscsi, 0x1000, 64),
        SectionSpec::new(ImageType::FirmwareBackupIscsi, 0x1040, 64),
        SectionSpec::new(ImageType::BootCode, 0x1080, 64),
        SectionSpec::new(ImageType::OptionRomPxe, 0x10C0, rom),
        SectionSpec::new(ImageType::Ncsi, (0x10C0 + rom).next_multiple_of(64), 64),
        SectionSpec::new(ImageType::UfiDir, 0, dir),
    ];
    ImageBuilder::new("11.2.0.9").layout(Layout { sections }).build().unwrap()
}

fn ufi_seeds() -> Vec<(String, Vec<u8>)> {
    let image = tiny_image();
    let cut = image[..image.len() / 2].to_vec();
    vec![("tiny.ufi".into(), image), ("tiny-cut.ufi".into(), cut)]
}

#[test]
fn the_seed_corpus_is_what_the_encoders_build() {
    let image = tiny_image();
    let parsed = oce_firmware::UfiImage::parse(&image).expect("the tiny image is a valid UFI");
    assert!(parsed.sections().all(|s| s.check_crc().is_ok()), "every section's CRC is right");
    assert!(image.len() < 16 * 1024, "the seed stays small: {} bytes", image.len());

    let bless = std::env::var_os("OCETOOL_BLESS").is_some();
    for (target, seeds) in [("decoders", decoder_seeds()), ("ufi", ufi_seeds())] {
        let dir = corpus(target);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
        }
        for (name, bytes) in seeds {
            let path = dir.join(&name);
            if bless {
                std::fs::write(&path, &bytes).unwrap();
            } else {
                let on_disk = std::fs::read(&path).unwrap_or_default();
                assert!(
                    on_disk == bytes,
                    "{} differs from what the encoders build; rerun with OCETOOL_BLESS=1",
                    path.display()
                );
            }
        }
    }
}
