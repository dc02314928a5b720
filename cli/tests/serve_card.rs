//! `ocetool emulator serve` with several `--socket`: the NIC functions of one card, each on its
//! own socket, over one card (one flash, one profile state, one POST), each with its own MAC and
//! port; and the wire arguments that do not pair up with the sockets, refused as a usage error
//! (exit 2) in one line before anything is bound.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use common::{command, emu_arg, ocetool, wait_until};
use oce_emulator_serve::client::ServedFunction;
use oce_mailbox::commands::{GetActiveProfile, GetMacList, GetProfileList, SetActiveProfile};
use oce_mailbox::regs::{Semaphore, SoftReset};
use oce_mailbox::{BootstrapMailbox, SystemClock};
use oce_pci::{ConfigSpace, PciFunction};

/// Header type, bit 7 of config byte 0x0E: multi-function device (PCI Local Bus 3.0 §6.2.1).
const MULTI_FUNCTION: u32 = 1 << 23;

fn initialised() -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let dev = emu_arg(&tmp.path().join("emu"));
    assert_eq!(ocetool(&["--device", &dev, "emulator", "init"]).code, 0);
    (tmp, dev)
}

fn mailbox(socket: &Path) -> BootstrapMailbox<ServedFunction> {
    let function = ServedFunction::connect(socket, 4 << 20).unwrap();
    let mut mbox = BootstrapMailbox::open(function, Arc::new(SystemClock)).unwrap();
    mbox.initialize().unwrap();
    mbox
}

fn semaphore(mbox: &BootstrapMailbox<ServedFunction>) -> u32 {
    mbox.function().config().read32(Semaphore::OFFSET).unwrap()
}

#[test]
fn two_sockets_serve_two_functions_of_one_card() {
    let (tmp, dev) = initialised();
    let sockets: Vec<PathBuf> = (0..2).map(|i| tmp.path().join(format!("f{i}.sock"))).collect();
    let errors = tmp.path().join("serve.err");
    let mut child = command()
        .args(["--device", &dev, "--json", "emulator", "serve", "--socket"])
        .arg(&sockets[0])
        .arg("--socket")
        .arg(&sockets[1])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&errors).unwrap())
        .spawn()
        .unwrap();
    let listening = || std::fs::read_to_string(&errors).unwrap_or_default().contains("serving function 1");
    wait_until("both functions to listen", || listening() || child.try_wait().unwrap().is_some());
    assert!(listening(), "{}", std::fs::read_to_string(&errors).unwrap());

    let mut f0 = mailbox(&sockets[0]);
    let mut f1 = mailbox(&sockets[1]);
    for f in [&f0, &f1] {
        let header = f.function().config().read32(0x0C).unwrap();
        assert_eq!(header & MULTI_FUNCTION, MULTI_FUNCTION, "one multi-function device");
    }
    let mac0 = f0.execute(&GetMacList::permanent()).unwrap().permanent_mac().unwrap();
    let mac1 = f1.execute(&GetMacList::permanent()).unwrap().permanent_mac().unwrap();
    assert_ne!(mac0, mac1, "each function answers its own port's MAC");

    // One NVRAM: the next-boot profile set through function 0 is what function 1 reads.
    let list = f0.execute(&GetProfileList::default()).unwrap();
    let roce = list.entries.iter().find(|e| e.description.starts_with("RoCE")).unwrap().id;
    f0.execute(&SetActiveProfile::new(roce)).unwrap();
    assert_eq!(f1.execute(&GetActiveProfile).unwrap().next, u16::from(roce));

    // One chip: a soft reset through function 0 walks function 1's POST too, and the reset made
    // the RoCE profile active for both.
    f0.function().config().write32(SoftReset::OFFSET as u16, SoftReset::SR).unwrap();
    let walk: Vec<u32> = (0..4).map(|_| semaphore(&f1) & Semaphore::STAGE_MASK).collect();
    assert_eq!(walk, [0x0000, 0x0001, 0x0002, 0xC000]);
    while !Semaphore(semaphore(&f0)).is_ready() {}
    f1.initialize().unwrap();
    assert_eq!(f1.execute(&GetActiveProfile).unwrap().active, u16::from(roce));

    drop((f0, f1));
    wait_until("the server to end", || child.try_wait().unwrap().is_some());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", std::fs::read_to_string(&errors).unwrap());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "disconnected");
    let functions = report["functions"].as_array().unwrap();
    assert_eq!(functions.len(), 2);
    assert_eq!((functions[0]["function"].as_u64(), functions[1]["function"].as_u64()), (Some(0), Some(1)));
    assert_eq!(functions[1]["socket"], sockets[1].to_str().unwrap());
}

/// `ocetool emulator serve ARGS` on a fresh adapter: exit code and stderr.
fn serve_refused(args: &[&str]) -> (i32, String) {
    let (_tmp, dev) = initialised();
    let mut all = vec!["--device", dev.as_str(), "emulator", "serve"];
    all.extend_from_slice(args);
    let r = ocetool(&all);
    (r.code, r.stderr)
}

#[test]
fn wire_arguments_that_do_not_pair_with_the_sockets_are_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (s0, s1, w0, w1, p0, p1, pcap) = (p("s0"), p("s1"), p("w0"), p("w1"), p("p0"), p("p1"), p("x.pcap"));
    let cases: [(Vec<&str>, &str); 5] = [
        (
            vec!["--socket", &s0, "--socket", &s1, "--wire", &w0, "--wire", &w1, "--wire-peer", &p0],
            "2 --wire but 1 --wire-peer",
        ),
        (
            vec!["--socket", &s0, "--wire", &w0, "--wire-peer", &p0, "--wire", &w1, "--wire-peer", &p1],
            "2 --wire for 1 --socket",
        ),
        (
            vec!["--socket", &s0, "--wire", &w0, "--wire-peer", &p0, "--wire-pcap", &pcap, "--wire-pcap", &p1],
            "2 --wire-pcap for 1 --wire",
        ),
        (vec!["--socket", &s0, "--socket", &s0], "given twice"),
        (vec!["--socket", &s0, "--socket", &s1, "--socket", &w0], "has no function 2"),
    ];
    for (args, says) in cases {
        let (code, stderr) = serve_refused(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(!Path::new(&s0).exists(), "nothing was bound");
    }
}

#[test]
fn the_hosts_query_names_the_mac_and_link_of_every_served_port() {
    let (tmp, dev) = initialised();
    // The MACs as the state file stores them: not an answer of the code under test.
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("emu/state.json")).unwrap()).unwrap();
    let macs = state["identity"]["macs"].clone();
    let ports = |sockets: usize| {
        let paths: Vec<PathBuf> = (0..sockets).map(|i| tmp.path().join(format!("q{sockets}-{i}.sock"))).collect();
        let errors = tmp.path().join(format!("q{sockets}.err"));
        let mut serve = command();
        serve.args(["--device", &dev, "emulator", "serve"]);
        for p in &paths {
            serve.arg("--socket").arg(p);
        }
        let mut child = serve.stderr(std::fs::File::create(&errors).unwrap()).spawn().unwrap();
        let last = format!("serving function {}", sockets - 1);
        let listening = || std::fs::read_to_string(&errors).unwrap_or_default().contains(&last);
        wait_until("the functions to listen", || listening() || child.try_wait().unwrap().is_some());
        let query = ocetool(&["--device", &dev, "--json", "query"]);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(query.code, 0, "{}", query.stderr);
        let doc = query.json();
        assert_eq!(doc["source"], "server", "{doc}");
        doc["ports"].as_array().unwrap().clone()
    };

    let both = ports(2);
    assert_eq!(both.len(), 2);
    for (i, port) in both.iter().enumerate() {
        assert_eq!(port["index"], i, "{port}");
        assert_eq!(port["mac"], macs[i], "port {i}'s MAC is the state file's: {port}");
        assert!(port["link_up"].is_boolean(), "a served port's link is known: {port}");
        assert_eq!(port["this_function"], i == 0, "the query answers for function 0: {port}");
    }
    // One function served: port 1 is another function's, named but not reported.
    let one = ports(1);
    assert_eq!(one[0]["mac"], macs[0], "{one:?}");
    assert!(one[1]["mac"].is_null() && one[1]["link_up"].is_null(), "{one:?}");
}
