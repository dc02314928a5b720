//! Every command's response (and request) decoder on arbitrary bytes: the first byte picks the
//! command, the rest is the command buffer as the device left it. A decoder may reject the bytes;
//! it must never panic, read out of bounds or allocate by an unchecked device-supplied length.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oce_mailbox::Command;
use oce_mailbox::command::{decode_request, decode_response};
use oce_mailbox::commands::*;
use oce_mailbox::entries::{EqEntry, LinkStateEvent, TxCompletion, TxHeaderWrb};
use oce_mailbox::wrb::{Completion, Wrb};
use oce_mailbox::{Reader, Wire};

fn both<C: Command>(buf: &[u8]) {
    let _ = decode_response::<C>(buf);
    let _ = decode_request::<C>(buf);
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, buf)) = data.split_first() else { return };
    match pick % 64 {
        0 => both::<GetFwVersion>(buf),
        1 => both::<GetCntlAttributes>(buf),
        2 => both::<QueryFirmwareConfig>(buf),
        3 => both::<GetFuncConfig>(buf),
        4 => both::<GetMacList>(buf),
        5 => both::<GetPortName>(buf),
        6 => both::<LinkStatusQuery>(buf),
        7 => both::<GetPhyDetails>(buf),
        8 => both::<GetFnPrivileges>(buf),
        9 => both::<GetActiveProfile>(buf),
        10 => both::<GetProfileList>(buf),
        11 => both::<GetProfileConfig>(buf),
        12 => both::<GetBeaconState>(buf),
        13 => both::<EnableDisableBeacon>(buf),
        14 => both::<SetActiveProfile>(buf),
        15 => both::<SetProfileConfig>(buf),
        16 => both::<ReadFlashrom>(buf),
        17 => both::<WriteFlashrom<'static>>(buf),
        18 => both::<FunctionReset>(buf),
        19 => both::<GetDcbxConfig>(buf),
        20 => both::<QueryFat>(buf),
        21 => both::<RetrieveFat>(buf),
        22 => both::<ReadTransceiverData>(buf),
        23 => {
            let _ = Wrb::decode(&mut Reader::new(buf));
        }
        24 => {
            let _ = Completion::decode(&mut Reader::new(buf));
        }
        26 => both::<EqCreate>(buf),
        27 => both::<CqCreate>(buf),
        28 => both::<MccCreateExt>(buf),
        29 => both::<MccDestroy>(buf),
        30 => both::<CqDestroy>(buf),
        31 => both::<EqDestroy>(buf),
        32 => both::<TxCreate>(buf),
        33 => both::<RxCreate>(buf),
        34 => both::<TxDestroy>(buf),
        35 => both::<RxDestroy>(buf),
        36 => both::<RssConfig>(buf),
        37 => both::<AcpiWolQuery>(buf),
        38 => both::<GetStatistics>(buf),
        39 => both::<IfCreate>(buf),
        40 => both::<IfDestroy>(buf),
        41 => both::<PmacAdd>(buf),
        42 => both::<PmacDel>(buf),
        43 => both::<RxFilter>(buf),
        44 => both::<VlanConfig>(buf),
        45 => both::<SetInterruptEnable>(buf),
        46 => both::<SetDriverFunctionCap>(buf),
        47 => both::<SetFlowControl>(buf),
        48 => both::<GetFlowControl>(buf),
        49 => both::<SetLogicalLinkConfig>(buf),
        50 => both::<GetCntlAdditionalAttributes>(buf),
        51 => both::<ModifyEqDelay>(buf),
        52 => {
            let _ = EqEntry::decode(&mut Reader::new(buf));
        }
        53 => {
            let _ = LinkStateEvent::decode(&mut Reader::new(buf));
        }
        54 => {
            let _ = TxHeaderWrb::decode(&mut Reader::new(buf));
        }
        55 => {
            let _ = TxCompletion::decode(&mut Reader::new(buf));
        }
        56 => both::<RdmaQueryConfig>(buf),
        57 => both::<AllocPd>(buf),
        58 => both::<DeallocPd>(buf),
        59 => both::<AllocPdRange>(buf),
        60 => both::<DeallocPdRange>(buf),
        61 => both::<CreateAhTable>(buf),
        62 => both::<DeleteAhTable>(buf),
        63 => both::<GetRdmaStats>(buf),
        _ => {
            let _ = oce_mailbox::header::ResponseHeader::decode(&mut Reader::new(buf));
        }
    }
});
