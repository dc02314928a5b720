//! `ocetool emulator serve` as a process: its help says how to attach a VM, it holds the adapter
//! (every other ocetool on the state directory is busy, exit 5, but fault changes reach it
//! through its control socket, and a change it cannot take in time is "busy", exit 5, and not
//! made), its socket is mode 0600 and owned through a lock file (a second server on the path
//! exits 5 and leaves the live session alone), it ends when the client goes or on SIGINT /
//! SIGTERM (exit 130 / 143, with a client connected or not, whatever the client does), and
//! SIGKILL in the middle of a flash leaves a state directory that the next ocetool opens and the
//! next flash completes.
//!
//! The client is the host stack itself (mailbox driver, flash procedure) over a vfio-user
//! connection (`oce_emulator_serve::client::ServedFunction`), as a guest's ocetool reaches the
//! server through QEMU.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;

use common::{CHUNK_COUNTER, chunks_received, command, emu_arg, ocetool, wait_until};
use oce_emulator_serve::client::{Client, ServedFunction};
use oce_firmware::flash::{self, FlashReport, NoProgress, Policy};
use oce_firmware::{FlashError, ImageBuilder, UfiImage};
use oce_mailbox::commands::{GetFwVersion, SetActiveProfile};
use oce_mailbox::{BootstrapMailbox, SystemClock};

/// Newer than the emulator's factory firmware (11.1.172.23, `oce_emulator::assumptions`).
const NEW: &str = "11.1.172.24";

struct Fixture {
    _tmp: tempfile::TempDir,
    state: PathBuf,
    dev: String,
    socket: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("emu");
    let dev = emu_arg(&state);
    assert_eq!(ocetool(&["--device", &dev, "emulator", "init"]).code, 0);
    let socket = tmp.path().join("vfu.sock");
    Fixture { _tmp: tmp, state, dev, socket }
}

/// A running `ocetool emulator serve`, killed if a test fails before it ends (a server left
/// behind would wait for a client forever).
struct Running {
    child: Option<Child>,
    errors: PathBuf,
}

impl Running {
    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// SIGKILL, and reap.
    fn kill(&mut self) {
        if let Some(child) = self.child.as_mut() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts `ocetool emulator serve` and waits until it listens (its first line on stderr: a
/// socket left by a killed server may already be there).
fn serve(f: &Fixture) -> Running {
    let errors = f.socket.with_extension(format!("err{}", std::process::id()));
    let mut child = command()
        .args(["--device", &f.dev, "--json", "emulator", "serve", "--socket"])
        .arg(&f.socket)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&errors).unwrap())
        .spawn()
        .unwrap();
    let listening = || std::fs::read_to_string(&errors).unwrap_or_default().contains("ocetool: serving");
    wait_until("the server to listen", || listening() || child.try_wait().unwrap().is_some());
    let up = listening();
    let running = Running { child: Some(child), errors };
    assert!(up, "the server exited at once: {}", std::fs::read_to_string(&running.errors).unwrap());
    running
}

/// Waits for the server to end (20 s at most: a server that does not stop fails the test and is
/// killed): its exit code, its JSON report, its stderr.
fn finished(mut server: Running) -> (i32, serde_json::Value, String) {
    let child = server.child.as_mut().unwrap();
    wait_until("the server to end", || child.try_wait().unwrap().is_some());
    let out = server.child.take().unwrap().wait_with_output().unwrap();
    let stderr = std::fs::read_to_string(&server.errors).unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap_or(-1), json, stderr)
}

fn mailbox(socket: &Path) -> BootstrapMailbox<ServedFunction> {
    let function = ServedFunction::connect(socket, 4 << 20).unwrap();
    let mut mbox = BootstrapMailbox::open(function, Arc::new(SystemClock)).unwrap();
    mbox.initialize().unwrap();
    mbox
}

fn flash_new(mbox: &mut BootstrapMailbox<ServedFunction>) -> Result<FlashReport, FlashError> {
    let file = ImageBuilder::new(NEW).build().unwrap();
    let image = UfiImage::parse(&file)?;
    let plan = flash::plan(&image, &flash::read_adapter(mbox, &image)?, Policy::default())?;
    flash::flash_ufi(mbox, &image, &plan, &mut NoProgress)
}

fn json_of(dev: &str, args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["--device", dev, "--json", "--wait", "0.2"];
    all.extend_from_slice(args);
    let r = ocetool(&all);
    (r.code, serde_json::from_str(&r.stdout).unwrap_or(serde_json::Value::Null))
}

#[test]
fn a_server_holds_the_adapter_and_takes_fault_changes_through_its_control_socket() {
    let f = fixture();
    let server = serve(&f);
    assert_eq!(std::fs::metadata(&f.socket).unwrap().permissions().mode() & 0o777, 0o600);

    // Any ocetool on the same state directory, and a second server, get "device busy"; query
    // and port ask the server instead.
    let (code, busy) = json_of(&f.dev, &["profiles"]);
    assert_eq!((code, busy["error"]["kind"].as_str()), (5, Some("busy")), "{busy}");
    let (code, query) = json_of(&f.dev, &["query"]);
    assert_eq!((code, query["source"].as_str()), (0, Some("server")), "{query}");
    let (code, port) = json_of(&f.dev, &["port"]);
    assert_eq!(
        (code, port["link"]["up"].as_bool()),
        (0, Some(true)),
        "no cable: the link is up, as it always was: {port}"
    );
    assert!(busy["error"]["message"].as_str().unwrap().contains("device busy"));
    let other = f.socket.with_extension("2");
    let (code, _) = json_of(&f.dev, &["emulator", "serve", "--socket", other.to_str().unwrap()]);
    assert_eq!(code, 5);
    assert!(!other.exists(), "the refused server made no socket");

    // Faults go to the running server and into the state directory.
    let (code, set) = json_of(&f.dev, &["emulator", "fault", "set", "status=1:168:3"]);
    assert_eq!((code, set["changed"].as_bool()), (0, Some(true)), "{set}");
    assert_eq!(set["faults"], serde_json::json!(["status=1:168:3:0"]));
    let (code, bad) = json_of(&f.dev, &["emulator", "fault", "set", "no-such-fault"]);
    assert_eq!((code, bad["error"]["kind"].as_str()), (2, Some("usage")), "{bad}");
    let (_, listed) = json_of(&f.dev, &["emulator", "fault", "list"]);
    assert_eq!(listed["faults"], serde_json::json!(["status=1:168:3:0"]));
    let (code, cleared) = json_of(&f.dev, &["emulator", "fault", "clear", "--all"]);
    assert_eq!((code, cleared["changed"].as_bool(), cleared["faults"].clone()), (0, Some(true), serde_json::json!([])));

    // A client comes and goes: the server ends, exit 0, and removes its sockets.
    let mut mbox = mailbox(&f.socket);
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().on_flash, "11.1.172.23");
    drop(mbox);
    let (code, report, stderr) = finished(server);
    assert_eq!((code, report["outcome"].as_str()), (0, Some("disconnected")), "{report} {stderr}");
    assert!(!f.socket.exists());
    assert_eq!(json_of(&f.dev, &["query"]).0, 0, "the adapter is free again");
}

#[test]
fn serve_help_documents_the_socket_its_mode_and_how_qemu_attaches() {
    let r = ocetool(&["emulator", "serve", "--help"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Compared with runs of whitespace as one space: where clap or the text breaks a line is
    // not what is pinned.
    let help = r.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for phrase in [
        "Usage: ocetool emulator serve [OPTIONS] --socket <PATH>",
        "The Unix socket to listen on: created mode 0600 (only this user may attach)",
        "until the VM disconnects or SIGINT/SIGTERM",
        "QEMU connects to it as `vfio-user-pci`'s socket",
        "Attaching QEMU (10.1 or newer, with vfio-user-pci; the server must listen before QEMU starts)",
        "-object memory-backend-memfd,id=mem,size=1G,share=on",
        "-device intel-iommu,caching-mode=on",
        "any other ocetool on the same state directory gets \"device busy\" (exit 5)",
        "through a lock file beside it (PATH.lock): a second server on the same path says so and exits 5 without touching the live one's session",
        "SIGINT/SIGTERM stop it within a second whatever the VM does",
        "130 / 143 when SIGINT / SIGTERM stops the server",
        "5 when the adapter is busy, or a live server owns the socket",
    ] {
        assert!(help.contains(phrase), "serve --help lacks {phrase:?}:\n{}", r.stdout);
    }
    // The cap the help states is the one the server enforces.
    let cap = format!("at most {} DMA mappings are taken (max_dma_maps)", oce_emulator_serve::MAX_DMA_MAPS);
    assert!(help.contains(&cap), "serve --help lacks {cap:?}:\n{}", r.stdout);
    // The example attaches QEMU to the socket the example server listens on.
    // (The usage line's `--socket <PATH>` is not the example.)
    let socket = help
        .split("emulator serve --socket ")
        .skip(1)
        .find(|rest| !rest.starts_with('<'))
        .and_then(|rest| rest.split(' ').next());
    let socket = socket.unwrap_or_else(|| panic!("no example server in:\n{}", r.stdout));
    let device = format!(r#"-device '{{"driver":"vfio-user-pci","socket":{{"type":"unix","path":"{socket}"}}}}'"#);
    assert!(help.contains(&device), "no {device} in:\n{}", r.stdout);
}

/// Sends `signal` (`INT`, `TERM`) to the server.
fn signal(server: &Running, signal: &str) {
    let status = std::process::Command::new("kill").arg(format!("-{signal}")).arg(server.pid().to_string()).status();
    assert!(status.unwrap().success());
}

#[test]
fn sigterm_stops_a_waiting_server_with_exit_143() {
    let f = fixture();
    let server = serve(&f);
    signal(&server, "TERM");
    let (code, report, stderr) = finished(server);
    assert_eq!((code, report["outcome"].as_str()), (143, Some("stopped")), "{report} {stderr}");
    assert_eq!(report["signal"], "terminate", "{report}");
    assert!(!f.socket.exists() && !lock_file(&f.socket).exists(), "the socket and its lock removed");
}

#[test]
fn sigint_stops_a_waiting_server_with_exit_130() {
    let f = fixture();
    let server = serve(&f);
    assert!(serve_control_socket(&f).exists(), "the control socket is where this test looks");
    signal(&server, "INT");
    let (code, report, stderr) = finished(server);
    assert_eq!((code, report["outcome"].as_str()), (130, Some("stopped")), "{report} {stderr}");
    assert_eq!(report["signal"], "interrupt", "{report}");
    assert!(!f.socket.exists() && !serve_control_socket(&f).exists(), "both sockets removed");
    assert_eq!(json_of(&f.dev, &["query"]).0, 0, "the adapter is free again");
}

/// The lock file that says who owns `socket` (`oce_emulator_serve::socket`).
fn lock_file(socket: &Path) -> PathBuf {
    PathBuf::from(format!("{}.lock", socket.display()))
}

#[test]
fn sigterm_stops_a_server_whose_client_stalls_inside_a_message_with_exit_143() {
    let f = fixture();
    let server = serve(&f);
    let mut client = Client::connect(&f.socket).unwrap();
    client.negotiate().unwrap();
    // Ten bytes of a 16-byte header, and nothing more.
    client.send_raw(&[1, 0, 4, 0, 32, 0, 0, 0, 0, 0]).unwrap();
    signal(&server, "TERM");
    let (code, report, stderr) = finished(server);
    assert_eq!((code, report["outcome"].as_str()), (143, Some("stopped")), "{report} {stderr}");
    drop(client);
}

#[test]
fn a_second_serve_on_a_live_socket_exits_5_and_leaves_the_first_session_alone() {
    let f = fixture();
    let first = serve(&f);
    // Another adapter's server, on the socket the first one owns.
    let other = f.socket.with_file_name("other-emu");
    let other_dev = emu_arg(&other);
    assert_eq!(ocetool(&["--device", &other_dev, "emulator", "init"]).code, 0);
    let (code, refused) = json_of(&other_dev, &["emulator", "serve", "--socket", f.socket.to_str().unwrap()]);
    assert_eq!((code, refused["error"]["kind"].as_str()), (5, Some("busy")), "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("a live server owns it") && message.contains("undisturbed"), "{message}");
    // The first server's one session is still there for its VM.
    let mut mbox = mailbox(&f.socket);
    assert_eq!(mbox.execute(&GetFwVersion).unwrap().on_flash, "11.1.172.23");
    drop(mbox);
    let (code, report, stderr) = finished(first);
    assert_eq!((code, report["outcome"].as_str()), (0, Some("disconnected")), "{report} {stderr}");
}

#[test]
fn a_fault_change_the_server_cannot_take_in_time_exits_5_and_changes_nothing() {
    let f = fixture();
    // A control socket whose server takes the connection and says nothing (a server whose
    // adapter is held past the request's deadline answers "busy" or nothing at all).
    let control = std::os::unix::net::UnixListener::bind(serve_control_socket(&f)).unwrap();
    let silent = std::thread::spawn(move || {
        let (conn, _) = control.accept().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(&conn), &mut line).unwrap();
        // Held open until the client has given up.
        let _ = std::io::Read::read(&mut &conn, &mut [0u8; 1]);
        line
    });
    let (code, busy) = json_of(&f.dev, &["emulator", "fault", "set", "gone"]);
    assert_eq!((code, busy["error"]["kind"].as_str()), (5, Some("busy")), "{busy}");
    assert!(busy["error"]["message"].as_str().unwrap().contains("nothing was changed"), "{busy}");
    let request: serde_json::Value = serde_json::from_str(&silent.join().unwrap()).unwrap();
    assert!(request["deadline_ns"].as_u64().is_some(), "the request carries its deadline: {request}");
    std::fs::remove_file(serve_control_socket(&f)).unwrap();
    let (_, listed) = json_of(&f.dev, &["emulator", "fault", "list"]);
    assert_eq!(listed["faults"], serde_json::json!([]), "{listed}");
}

/// The server's control socket: beside the adapter's lock file, `.DIR.lock` next to the state
/// directory DIR.
fn serve_control_socket(f: &Fixture) -> PathBuf {
    let name = f.state.file_name().unwrap().to_string_lossy();
    f.state.with_file_name(format!(".{name}.control"))
}

#[test]
fn a_signal_stops_a_server_with_a_client_connected_and_keeps_what_the_client_changed() {
    // RoCE-2, a profile the factory adapter does not run (oce_emulator::assumptions::PROFILES).
    let roce = oce_emulator::assumptions::PROFILES.iter().find(|p| p.name.starts_with("RoCE-2")).unwrap();
    for sig in ["INT", "TERM"] {
        let f = fixture();
        let server = serve(&f);
        let mut mbox = mailbox(&f.socket);
        mbox.execute(&SetActiveProfile::new(roce.id)).unwrap();
        signal(&server, sig);
        let (code, report, stderr) = finished(server);
        let exit = if sig == "INT" { 130 } else { 143 };
        assert_eq!((code, report["outcome"].as_str()), (exit, Some("stopped")), "SIG{sig}: {report} {stderr}");
        assert!(!f.socket.exists(), "SIG{sig}: the socket is removed");
        // The client's connection went with the server: the adapter reads as gone.
        assert!(mbox.execute(&GetFwVersion).is_err(), "SIG{sig}: the connection is closed");
        drop(mbox);
        // What the client changed was saved, and the adapter is free again.
        let (code, query) = json_of(&f.dev, &["query"]);
        assert_eq!((code, query["profile"]["next"]["name"].as_str()), (0, Some(roce.name)), "SIG{sig}: {query}");
    }
}

#[test]
fn sigkill_in_the_middle_of_a_flash_leaves_a_state_directory_the_next_flash_completes() {
    let f = fixture();
    let mut server = serve(&f);
    // A chunk counter that never fires (common::CHUNK_COUNTER), set through the server.
    let counter = format!("flash-fail-at={CHUNK_COUNTER}");
    assert_eq!(json_of(&f.dev, &["emulator", "fault", "set", &counter]).0, 0);
    let socket = f.socket.clone();
    let flashing = std::thread::spawn(move || flash_new(&mut mailbox(&socket)));
    wait_until("a few WRITE_FLASHROM chunks to arrive", || chunks_received(&f.state) >= 4);
    server.kill();
    let interrupted = flashing.join().unwrap();
    assert!(interrupted.is_err(), "the flash cannot finish without its server: {interrupted:?}");

    // The state directory opens, and says what is on flash (the factory image or the new one:
    // never a half-written state file).
    let (code, query) = json_of(&f.dev, &["query"]);
    assert_eq!(code, 0, "{query}");
    assert!(["11.1.172.23", NEW].contains(&query["firmware"]["stored"].as_str().unwrap()), "{query}");
    // The dead server's control socket is stale: fault changes go to the state directory.
    assert_eq!(json_of(&f.dev, &["emulator", "fault", "clear", "--all"]).0, 0);

    // The rerun completes through a new server.
    let server = serve(&f);
    let mut mbox = mailbox(&f.socket);
    let report = flash_new(&mut mbox).unwrap();
    assert_eq!(report.stored, NEW);
    drop(mbox);
    assert_eq!(finished(server).0, 0);
    let (code, query) = json_of(&f.dev, &["query"]);
    assert_eq!((code, query["firmware"]["stored"].as_str()), (0, Some(NEW)), "{query}");
}

#[test]
fn a_flash_file_cut_short_under_a_running_server_is_reported_before_the_server_ends() {
    use std::os::unix::process::ExitStatusExt;
    let f = fixture();
    let mut server = serve(&f);
    let mut mbox = mailbox(&f.socket);
    // Another process truncates the adapter's flash under the server's mapping of it.
    std::fs::OpenOptions::new().write(true).open(f.state.join("flash.bin")).unwrap().set_len(0).unwrap();
    let read = flash_new(&mut mbox);
    assert!(read.is_err(), "the server cannot answer from a flash that is gone: {read:?}");
    drop(mbox);
    let child = server.child.as_mut().unwrap();
    wait_until("the server to end", || child.try_wait().unwrap().is_some());
    let status = server.child.take().unwrap().wait().unwrap();
    let stderr = std::fs::read_to_string(&server.errors).unwrap();
    // SIGBUS is signal 7 on Linux (signal(7)).
    assert_eq!(status.signal(), Some(7), "ended by SIGBUS: {stderr}");
    let report = stderr.lines().find(|l| l.starts_with("ocetool: fatal: bus error (SIGBUS) at 0x"));
    assert!(report.is_some_and(|l| l.contains("flash.bin")), "{stderr}");
}
