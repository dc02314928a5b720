//! Every command's response (and request) decoder on arbitrary bytes: the first byte picks the
//! command, the rest is the command buffer as the device left it. A decoder may reject the bytes;
//! it must never panic, read out of bounds or allocate by an unchecked device-supplied length.
//! Whatever decodes must survive the round trip through its encoder (every type here has one):
//! decode, encode into a zeroed buffer, decode again, and get an equal value, so an encoder that
//! drops, moves or truncates a field the decoder reads fails here.
#![no_main]

use std::fmt::Debug;

use libfuzzer_sys::fuzz_target;
use oce_mailbox::Command;
use oce_mailbox::command::{decode_request, decode_response};
use oce_mailbox::commands::*;
use oce_mailbox::entries::{
    Av, Cqe, EqEntry, FastRegister, LinkStateEvent, Rqe, Sge, TxCompletion, TxHeaderWrb, UdHeader, WqeHeader,
};
use oce_mailbox::header::{HEADER_LEN, ResponseHeader};
use oce_mailbox::wrb::{Completion, Wrb};
use oce_mailbox::{Reader, Wire, Writer};

/// Room for any command the codec encodes: more than its largest buffer, WRITE_FLASHROM's 32 KiB
/// data area after its 32-byte header (be2net's chunk). An encoder may size its buffer by the
/// command (WRITE_FLASHROM always writes the whole data area) rather than by the bytes the
/// decoder read, so a short buffer that decodes may need this much to encode.
const MAX_COMMAND_LEN: usize = 64 * 1024;
const _: () = assert!(<WriteFlashrom<'static> as Command>::LEN <= MAX_COMMAND_LEN);

/// Decodes a `T` at `at` in `buf`; when it decodes, encodes it at `at` in a zeroed buffer of the
/// same length (or, when the encoder needs more room, of the largest command buffer) and decodes
/// that: the value must come back equal. An encoder may refuse a value its checks forbid (an
/// error, never a panic); what it encodes must decode to the same value.
fn round_trip<T: Wire + PartialEq + Debug>(buf: &[u8], at: usize) {
    let Ok(first) = T::decode(&mut Reader::at(buf, at)) else { return };
    let name = std::any::type_name::<T>();
    let mut out = vec![0u8; buf.len()];
    if first.encode(&mut Writer::at(&mut out, at)).is_err() {
        out = vec![0u8; buf.len().max(at + MAX_COMMAND_LEN)];
        if first.encode(&mut Writer::at(&mut out, at)).is_err() {
            // The encoder refuses the value (a host never sends a RETRIEVE past be2net's chunk,
            // a flash chunk past 32 KiB): nothing to compare.
            return;
        }
    }
    match T::decode(&mut Reader::at(&out, at)) {
        Ok(second) => assert_eq!(first, second, "{name}: decode, encode, decode changed the value"),
        Err(e) => panic!("{name}: its own encoding does not decode: {e:?}\n{first:?}"),
    }
}

/// The response decoder as the host calls it (limited to the declared `response_length`), and the
/// request decoder as the firmware does, each with the round trip of the body it decodes.
fn both<C: Command + PartialEq>(buf: &[u8])
where
    C::Response: PartialEq,
{
    if decode_response::<C>(buf).is_ok() {
        let declared = ResponseHeader::decode(&mut Reader::new(buf)).map_or(0, |h| h.response_length as usize);
        let end = HEADER_LEN.saturating_add(declared).min(buf.len());
        round_trip::<C::Response>(&buf[..end], HEADER_LEN);
    }
    if decode_request::<C>(buf).is_ok() {
        round_trip::<C>(buf, HEADER_LEN);
    }
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
            round_trip::<Wrb>(buf, 0);
        }
        24 => {
            round_trip::<Completion>(buf, 0);
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
            round_trip::<EqEntry>(buf, 0);
        }
        53 => {
            round_trip::<LinkStateEvent>(buf, 0);
        }
        54 => {
            round_trip::<TxHeaderWrb>(buf, 0);
        }
        55 => {
            round_trip::<TxCompletion>(buf, 0);
        }
        56 => both::<RdmaQueryConfig>(buf),
        57 => both::<AllocPd>(buf),
        58 => both::<DeallocPd>(buf),
        59 => both::<AllocPdRange>(buf),
        60 => both::<DeallocPdRange>(buf),
        61 => both::<CreateAhTable>(buf),
        62 => both::<DeleteAhTable>(buf),
        63 => both::<GetRdmaStats>(buf),
        64 => both::<CqCreateV3>(buf),
        65 => both::<RegisterNsmr>(buf),
        66 => both::<RegisterNsmrCont>(buf),
        67 => both::<DeallocLkey>(buf),
        68 => both::<CreateQp>(buf),
        69 => both::<ModifyQp>(buf),
        70 => both::<QueryQp>(buf),
        71 => both::<DeleteQp>(buf),
        72 => {
            round_trip::<WqeHeader>(buf, 0);
            round_trip::<Sge>(buf, 0);
            round_trip::<UdHeader>(buf, 0);
            round_trip::<FastRegister>(buf, 0);
            round_trip::<Pbe>(buf, 0);
        }
        73 => {
            round_trip::<Rqe>(buf, 0);
        }
        74 => {
            round_trip::<Cqe>(buf, 0);
            round_trip::<Av>(buf, 0);
        }
        _ => {
            round_trip::<ResponseHeader>(buf, 0);
        }
    }
});
