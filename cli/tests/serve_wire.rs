//! `ocetool emulator serve --wire`: the served adapter's port on an AF_UNIX datagram cable. A
//! socket of the test's own is the peer (as QEMU's `-netdev dgram` would be): what it sends
//! reaches the server, is recorded in the pcap, and is counted in the report; the options are
//! checked before anything starts, and the wire's socket goes with the server.

mod common;

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use common::{command, emu_arg, ocetool, wait_until};

struct Fixture {
    tmp: tempfile::TempDir,
    dev: String,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let dev = emu_arg(&tmp.path().join("emu"));
    assert_eq!(ocetool(&["--device", &dev, "emulator", "init"]).code, 0);
    Fixture { tmp, dev }
}

impl Fixture {
    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }
}

/// A running server, killed if the test fails before it ends.
struct Running {
    child: Option<Child>,
    errors: PathBuf,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn serve(f: &Fixture, extra: &[&Path]) -> Running {
    let errors = f.path("serve.err");
    let mut child = command()
        .args(["--device", &f.dev, "--json", "emulator", "serve", "--socket"])
        .arg(f.path("vfu.sock"))
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&errors).unwrap())
        .spawn()
        .unwrap();
    let listening = || std::fs::read_to_string(&errors).unwrap_or_default().contains("ocetool: serving");
    wait_until("the server to listen", || listening() || child.try_wait().unwrap().is_some());
    assert!(listening(), "the server exited at once: {}", std::fs::read_to_string(&errors).unwrap());
    Running { child: Some(child), errors }
}

fn stop(mut server: Running) -> (i32, serde_json::Value, String) {
    let pid = server.child.as_ref().unwrap().id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let child = server.child.as_mut().unwrap();
    wait_until("the server to end", || child.try_wait().unwrap().is_some());
    let out = server.child.take().unwrap().wait_with_output().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap_or(-1), json, std::fs::read_to_string(&server.errors).unwrap())
}

#[test]
fn a_port_on_a_wire_takes_datagrams_records_them_and_removes_its_socket() {
    let f = fixture();
    let (wire, peer, pcap) = (f.path("a.wire"), f.path("b.wire"), f.path("wire.pcap"));
    let flag = |s: &'static str| Path::new(s);
    let server = serve(&f, &[flag("--wire"), &wire, flag("--wire-peer"), &peer, flag("--wire-pcap"), &pcap]);
    let qemu = UnixDatagram::bind(&peer).unwrap();
    // A broadcast ARP request, padded to 60 bytes, and a datagram longer than any frame.
    let mut arp = vec![0xFF; 6];
    arp.extend_from_slice(&[0x52, 0x54, 0, 0x12, 0x34, 0x56, 0x08, 0x06]);
    arp.resize(60, 0x11);
    qemu.send_to(&arp, &wire).unwrap();
    qemu.send_to(&vec![0xEE; 10_000], &wire).unwrap();
    // The file header (24 bytes) and one record (16 + 60): the oversize one is not recorded.
    wait_until("the frame in the pcap", || std::fs::metadata(&pcap).map_or(0, |m| m.len()) >= 24 + 16 + 60);
    let (code, report, stderr) = stop(server);
    assert_eq!(code, 143, "{report} {stderr}");
    let w = &report["wire"];
    assert_eq!(
        (w["frames_received"].as_u64(), w["oversize_dropped"].as_u64(), w["frames_sent"].as_u64()),
        (Some(1), Some(1), Some(0)),
        "{report}"
    );
    assert_eq!(w["peer"].as_str(), peer.to_str());
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/emulator-serve.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
    let errors: Vec<String> =
        jsonschema::draft202012::new(&schema).unwrap().iter_errors(&report).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "the report with a wire fits schemas/emulator-serve.json: {errors:?}");
    let raw = std::fs::read(&pcap).unwrap();
    assert_eq!(raw.len(), 24 + 16 + 60);
    assert_eq!(&raw[..4], &[0xD4, 0xC3, 0xB2, 0xA1], "pcap's magic, little-endian");
    assert_eq!(&raw[40..], &arp[..]);
    assert!(!wire.exists(), "the wire's socket goes with the server");
}

#[test]
fn the_wire_options_are_checked_before_anything_starts() {
    let f = fixture();
    let (wire, peer) = (f.path("a.wire"), f.path("b.wire"));
    let (wire_s, peer_s, vfu) = (wire.to_str().unwrap(), peer.to_str().unwrap(), f.path("vfu.sock"));
    let vfu = vfu.to_str().unwrap();
    let base = ["--device", &f.dev, "emulator", "serve", "--socket", vfu];
    for extra in [&["--wire", wire_s][..], &["--wire-peer", peer_s], &["--wire-pcap", "x.pcap"]] {
        let run = ocetool(&[&base[..], extra].concat());
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
    }
    // A socket a live process is bound to is not taken from it.
    let live = UnixDatagram::bind(&wire).unwrap();
    let run = ocetool(&[&base[..], &["--wire", wire_s, "--wire-peer", peer_s]].concat());
    assert_eq!(run.code, 5, "busy, as a vfio-user socket a live server owns: {}", run.stderr);
    assert!(run.stderr.contains("a live process is bound to"), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "one line: {}", run.stderr);
    assert!(!Path::new(vfu).exists(), "nothing left listening");
    let probe = UnixDatagram::unbound().unwrap();
    probe.send_to(b"still there", &wire).unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(live.recv(&mut buf).unwrap(), 11, "the live socket still works");
}

fn query(f: &Fixture) -> serde_json::Value {
    let run = ocetool(&["--device", &f.dev, "--json", "query"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

#[test]
fn query_on_a_served_adapter_shows_the_link_speed_and_peer_mac_and_the_link_follows_the_peer() {
    let f = fixture();
    let (wire, peer) = (f.path("a.wire"), f.path("b.wire"));
    let flag = |s: &'static str| Path::new(s);
    let server = serve(&f, &[flag("--wire"), &wire, flag("--wire-peer"), &peer]);
    let own = |doc: &serde_json::Value| {
        doc["ports"].as_array().unwrap().iter().find(|p| p["this_function"] == true).cloned().unwrap()
    };
    // Nobody at the other end yet: no link.
    wait_until("the link down without a peer", || own(&query(&f))["link_up"] == false);
    let doc = query(&f);
    assert_eq!(doc["source"], "server", "{doc}");
    assert_eq!(
        (own(&doc)["speed_mbps"].clone(), own(&doc)["peer_mac"].clone()),
        (serde_json::Value::Null, serde_json::Value::Null)
    );

    // The peer comes (a socket of the test's own, as QEMU's -netdev dgram binds one).
    let qemu = UnixDatagram::bind(&peer).unwrap();
    wait_until("the link up once the peer is there", || own(&query(&f))["link_up"] == true);
    let peer_mac = [0x52, 0x54, 0x00, 0xab, 0xcd, 0xef];
    let mut frame = vec![0xFF; 6];
    frame.extend_from_slice(&peer_mac);
    frame.extend_from_slice(&[0x08, 0x06]);
    frame.resize(60, 0x11);
    qemu.send_to(&frame, &wire).unwrap();
    wait_until("the peer's MAC", || !own(&query(&f))["peer_mac"].is_null());
    let doc = query(&f);
    let port = own(&doc);
    assert_eq!((port["link_up"].as_bool(), port["speed_mbps"].as_u64()), (Some(true), Some(10_000)), "{doc}");
    assert_eq!(port["peer_mac"], "52:54:00:ab:cd:ef");
    assert!(port["mac"].as_str().is_some_and(|m| m.len() == 17), "{doc}");
    assert!(
        doc["model"].is_string() && doc["firmware"]["running"].is_string() && doc["description"].is_null(),
        "{doc}"
    );
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/query.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
    let errors: Vec<String> =
        jsonschema::draft202012::new(&schema).unwrap().iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "a served adapter's query fits schemas/query.json: {errors:?}");
    let text = ocetool(&["--device", &f.dev, "query"]);
    assert!(text.stdout.contains("link up, 10000 Mb/s  peer 52:54:00:ab:cd:ef"), "{}", text.stdout);
    let port = ocetool(&["--device", &f.dev, "--json", "port"]);
    assert_eq!(port.code, 0, "{}", port.stderr);
    let port = port.json();
    assert_eq!(
        port["link"],
        serde_json::json!({"up": true, "speed_mbps": 10_000, "mac_fault": 0, "peer_mac": "52:54:00:ab:cd:ef"})
    );
    assert!(port["phy"]["error"].as_str().is_some_and(|e| e.contains("emulator serve")), "{port}");
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/port.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(schema).unwrap()).unwrap();
    let errors: Vec<String> =
        jsonschema::draft202012::new(&schema).unwrap().iter_errors(&port).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "a served adapter's port fits schemas/port.json: {errors:?}");
    let text = ocetool(&["--device", &f.dev, "port"]);
    assert!(text.stdout.contains("Peer           52:54:00:ab:cd:ef"), "{}", text.stdout);

    // The peer goes (its socket closed, its file left behind as a killed process leaves it).
    drop(qemu);
    wait_until("the link down once the peer is gone", || own(&query(&f))["link_up"] == false);
    assert!(own(&query(&f))["peer_mac"].is_null(), "the peer took its MAC with it");
    let port = ocetool(&["--device", &f.dev, "--json", "port"]).json();
    assert_eq!((port["link"]["up"].as_bool(), &port["link"]["peer_mac"]), (Some(false), &serde_json::Value::Null));
    let (code, report, stderr) = stop(server);
    assert_eq!(code, 143, "{report} {stderr}");
}
