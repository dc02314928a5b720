//! The firmware command trace of `oce-mailbox`: one event per command posted to the emulated
//! adapter, with its numbers, statuses, timing, arguments and result; an event for a command that
//! got no answer; and nothing recorded when nobody listens.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use oce_emulator::FaultSpec;
use oce_mailbox::commands::{DcbxParamType, GetDcbxConfig, GetFwVersion, QueryFirmwareConfig, WriteFlashrom};
use oce_mailbox::trace::{COMMAND_TARGET, MAX_FIELD_CHARS};
use oce_mailbox::{BaseStatus, MailboxError, RawCommand};
use oce_tests::{fresh_emulator, host};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

type Fields = BTreeMap<String, String>;

/// Records every command event's fields as text.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Fields>>>);

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() == COMMAND_TARGET {
            let mut fields = Fields::new();
            event.record(&mut Collect(&mut fields));
            self.0.lock().unwrap().push(fields);
        }
    }
}

fn traced<T>(run: impl FnOnce() -> T) -> (T, Vec<Fields>) {
    let capture = Capture::default();
    let subscriber = Registry::default().with(capture.clone());
    let out = tracing::subscriber::with_default(subscriber, run);
    let events = capture.0.lock().unwrap().clone();
    (out, events)
}

#[test]
fn one_event_per_command_with_numbers_status_timing_and_result() {
    let (_dir, emu) = fresh_emulator();
    let (version, events) = traced(|| {
        let mut mbox = host(&emu);
        mbox.execute(&GetFwVersion).unwrap()
    });
    // initialize() sends FUNCTION_RESET; then GET_FW_VERSION.
    let names: Vec<&str> = events.iter().map(|e| e["command"].as_str()).collect();
    assert_eq!(names, ["FUNCTION_RESET", "GET_FW_VERSION"]);
    let e = &events[1];
    assert_eq!((e["subsystem"].as_str(), e["subsystem_name"].as_str(), e["opcode"].as_str()), ("1", "COMMON", "35"));
    assert_eq!((e["version"].as_str(), e["embedded"].as_str()), ("0", "true"));
    assert_eq!((e["request_len"].as_str(), e["response_len"].as_str()), ("64", "64"));
    assert_eq!((e["base_status"].as_str(), e["additional_status"].as_str()), ("0", "0"));
    assert!(e["elapsed_us"].parse::<u64>().is_ok());
    assert!(e["result"].contains(&version.running), "{}", e["result"]);
    assert_eq!(e["arguments"], "GetFwVersion");
    assert!(!e.contains_key("error"));
}

#[test]
fn failed_commands_carry_their_status_and_error() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    emu.set_fault(FaultSpec::parse("status=0x10:1:3:0x4d").unwrap()).unwrap();
    let (err, events) = traced(|| mbox.execute(&GetDcbxConfig { param_type: DcbxParamType::Operational }));
    let e = &events[0];
    assert_eq!(
        (e["command"].as_str(), e["subsystem"].as_str(), e["subsystem_name"].as_str(), e["opcode"].as_str()),
        ("DCBX_GET_CONFIG", "16", "DCBX", "1")
    );
    assert_eq!(err.unwrap_err().status().map(|s| s.base), Some(BaseStatus::IllegalField));
    assert_eq!((e["base_status"].as_str(), e["additional_status"].as_str()), ("3", "77"));
    assert!(e["status"].contains("ILLEGAL_FIELD"), "{}", e["status"]);
    assert!(e["result"].contains("CommandFailed"), "{}", e["result"]);
}

#[test]
fn a_command_that_gets_no_answer_is_traced_with_its_error() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    emu.set_fault(FaultSpec::parse("gone").unwrap()).unwrap();
    let (err, events) = traced(|| mbox.execute(&QueryFirmwareConfig));
    assert!(matches!(err, Err(MailboxError::DeviceGone { .. })), "{err:?}");
    let e = &events[0];
    assert_eq!(e["command"], "QUERY_FIRMWARE_CONFIG");
    assert!(e["error"].contains("stopped answering"), "{}", e["error"]);
    assert!(!e.contains_key("base_status"));
}

#[test]
fn long_arguments_are_cut_and_raw_commands_are_traced_as_hex() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    let raw = RawCommand {
        subsystem: 1,
        opcode: 35,
        version: 0,
        domain: 0,
        embedded: true,
        len: 80,
        payload: vec![0xab; 4],
        timeout: std::time::Duration::from_secs(4),
    };
    let (_, events) = traced(|| {
        mbox.execute_raw(&raw).unwrap();
        let chunk = WriteFlashrom {
            op_code: oce_mailbox::commands::FlashromOp::Save,
            op_type: oce_mailbox::commands::FlashOpType::PxeBios,
            offset: 0,
            data: vec![0u8; WriteFlashrom::CHUNK].into(),
        };
        let _ = mbox.execute(&chunk);
    });
    assert_eq!(events[0]["command"], "raw command");
    assert_eq!(events[0]["arguments"], "abababab");
    assert!(events[0]["result"].starts_with("2301"), "{}", events[0]["result"]);
    let args = &events[1]["arguments"];
    assert!(args.ends_with("…(cut)") && args.len() < MAX_FIELD_CHARS + 16, "{} chars", args.len());
}

#[test]
fn nothing_is_recorded_without_a_listener() {
    let (_dir, emu) = fresh_emulator();
    let mut mbox = host(&emu);
    // No subscriber: the command runs and the trace is off (callsite disabled).
    mbox.execute(&GetFwVersion).unwrap();
    assert!(!tracing::enabled!(target: COMMAND_TARGET, tracing::Level::DEBUG));
}
