//! The control socket's deadline contract: a request is applied only if the server can answer it
//! before the client's deadline; a request that waited past it (behind a held device, or behind
//! a connection that sends nothing) is answered "busy" and changes nothing; a stop request ends
//! the control thread whatever its connection does.

mod common;

use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::joined_within;
use oce_emulator_serve::control::{self, ControlError, ControlRequest, serve_control};
use oce_emulator_serve::{Adapter, Log};

struct Control {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    adapter: Adapter,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<std::io::Result<()>>,
}

/// A factory-fresh adapter whose control socket is served by a thread of its own.
fn control() -> Control {
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = Log::collect();
    let options = oce_emulator::CreateOptions { seed: 1, function: oce_emulator::FunctionType::Pf };
    let firmware = oce_emulator::firmware::Firmware::create_with(&dir.path().join("emu"), options).unwrap();
    let adapter = Adapter::new(firmware, &log);
    let path = dir.path().join("control");
    let listener = UnixListener::bind(&path).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let (device, stop) = (Arc::clone(&adapter.device), Arc::clone(&stop));
        std::thread::spawn(move || serve_control(&listener, &[&*device], &|| stop.load(Ordering::SeqCst), &log))
    };
    Control { _dir: dir, path, adapter, stop, thread }
}

impl Control {
    fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        joined_within(self.thread, "the control thread after a stop request").unwrap();
    }
}

fn faults(c: &Control) -> Vec<String> {
    control::request(&c.path, &ControlRequest::FaultList).unwrap().faults
}

#[test]
fn a_request_the_server_cannot_answer_in_time_is_not_applied_later() {
    let c = control();
    let held = c.adapter.device.lock().unwrap();
    // The guest's access holds the device past the client's deadline.
    let path = c.path.clone();
    let asked = std::thread::spawn(move || {
        control::request_within(&path, &ControlRequest::FaultSet(vec!["gone".into()]), Duration::from_millis(300))
    });
    let answer = joined_within(asked, "the control client");
    assert!(matches!(answer, Err(ControlError::Busy(_) | ControlError::TimedOut(_))), "{answer:?}");
    drop(held);
    // Requests are served one at a time: once this one is answered, the first was dealt with.
    assert_eq!(faults(&c), Vec::<String>::new(), "the late request was not applied");
    assert!(c.adapter.device.lock().unwrap().firmware().faults().describe().is_empty());
    // With the device free, the same request is applied and answered.
    let reply = control::request(&c.path, &ControlRequest::FaultSet(vec!["gone".into()])).unwrap();
    assert_eq!((reply.changed, reply.faults), (true, vec!["gone".to_owned()]));
    c.stop();
}

#[test]
fn a_request_queued_behind_a_silent_connection_past_its_deadline_is_not_applied() {
    let c = control();
    // A connection that sends nothing holds the control thread (up to its 5 s read deadline).
    let silent = UnixStream::connect(&c.path).unwrap();
    let answer =
        control::request_within(&c.path, &ControlRequest::FaultSet(vec!["gone".into()]), Duration::from_millis(300));
    assert!(matches!(answer, Err(ControlError::TimedOut(_))), "{answer:?}");
    drop(silent);
    // The late request is answered "busy" to nobody; a request with time to spare goes through.
    let set = control::request(&c.path, &ControlRequest::FaultSet(vec!["link-down".into()])).unwrap();
    assert_eq!(set.faults, vec!["link-down".to_owned()], "the request that timed out was not applied");
    c.stop();
}

#[test]
fn a_busy_answer_reaches_a_client_that_still_waits() {
    let c = control();
    let held = c.adapter.device.lock().unwrap();
    // A deadline the server sees as too close to apply by (within its answer reserve) while the
    // client still reads: the server says "busy" rather than staying silent.
    let answer =
        control::request_within(&c.path, &ControlRequest::FaultSet(vec!["gone".into()]), control::ANSWER_RESERVE);
    drop(held);
    match answer {
        Err(ControlError::Busy(why)) => assert!(why.contains("before the request's deadline"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(faults(&c), Vec::<String>::new());
    c.stop();
}

#[test]
fn a_stop_ends_the_control_thread_while_a_connection_trickles_its_request() {
    let c = control();
    // One byte every 100 ms and never a newline: each read gets something, none gets a line.
    let mut trickle = UnixStream::connect(&c.path).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            for _ in 0..300 {
                if done.load(Ordering::SeqCst) || std::io::Write::write_all(&mut trickle, b" ").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    // The control thread is reading the trickle once a request behind it cannot get through.
    let answer = control::request_within(&c.path, &ControlRequest::FaultList, Duration::from_millis(300));
    assert!(answer.is_err(), "{answer:?}");
    c.stop();
    done.store(true, Ordering::SeqCst);
    writer.join().unwrap();
}
