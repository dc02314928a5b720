use super::*;

fn parse(s: &str) -> FaultSpec {
    FaultSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn cmd(subsystem: u8, opcode: u8, effect: CommandEffect) -> FaultSpec {
    FaultSpec::Command(CommandFault { subsystem, opcode, effect })
}

#[test]
fn every_example_of_the_syntax_table_parses() {
    let ms = Duration::from_millis;
    let cases = [
        ("post-stuck=0x0002", FaultSpec::Post(PostFault::Stuck { stage: 2 }), "post-stuck=0x0002"),
        ("post-error", FaultSpec::Post(PostFault::Error { stage: 2 }), "post-error=0x0002"),
        ("post-error=0x0001", FaultSpec::Post(PostFault::Error { stage: 1 }), "post-error=0x0001"),
        ("ue=0x1,0x0", FaultSpec::Ue { low: 1, high: 0 }, "ue=0x1,0x0"),
        ("ue=4", FaultSpec::Ue { low: 4, high: 0 }, "ue=0x4,0x0"),
        ("ue=0,0x80000000", FaultSpec::Ue { low: 0, high: 0x8000_0000 }, "ue=0x0,0x80000000"),
        ("rdy-never", FaultSpec::RdyNever, "rdy-never"),
        ("rdy-hang", FaultSpec::RdyHang, "rdy-hang"),
        ("rdy-after=50", FaultSpec::RdyAfter { reads: 50 }, "rdy-after=50"),
        ("gone", FaultSpec::Gone, "gone"),
        ("power-lost", FaultSpec::PowerLost, "power-lost"),
        ("status=1:168:3", cmd(1, 168, CommandEffect::Status { base: 3, additional: 0 }), "status=1:168:3:0"),
        ("status=1:7:1:0x4d", cmd(1, 7, CommandEffect::Status { base: 1, additional: 0x4D }), "status=1:7:1:77"),
        (
            "response-length=1:35:500",
            cmd(1, 35, CommandEffect::ResponseLength { len: 500 }),
            "response-length=1:35:500",
        ),
        ("truncate=1:35:8", cmd(1, 35, CommandEffect::Truncate { len: 8 }), "truncate=1:35:8"),
        ("no-valid=1:35", cmd(1, 35, CommandEffect::NoValid), "no-valid=1:35"),
        ("slow=1:167:500", cmd(1, 167, CommandEffect::Slow { delay: ms(500) }), "slow=1:167:500"),
        ("flash-fail-at=3", FaultSpec::FlashFailAt { chunk: 3 }, "flash-fail-at=3"),
        ("power-loss-at=3", FaultSpec::PowerLossAt { chunk: 3 }, "power-loss-at=3"),
        ("slow-flash=5", FaultSpec::SlowFlash { delay: ms(5) }, "slow-flash=5"),
        ("no-offset-mode", FaultSpec::NoOffsetMode, "no-offset-mode"),
        ("pfc-unsync", FaultSpec::PfcUnsync, "pfc-unsync"),
    ];
    for (text, spec, canonical) in cases {
        assert_eq!(parse(text), spec, "{text}");
        assert_eq!(spec.to_string(), canonical);
        assert_eq!(parse(canonical), spec, "the canonical form reads back");
        assert!(FAULT_NAMES.contains(&spec.name()));
    }
}

/// The error's message names the part that is wrong, on one line.
fn error(s: &str) -> (String, String) {
    match FaultSpec::parse(s) {
        Err(e @ EmulatorError::FaultSpec { .. }) => {
            let EmulatorError::FaultSpec { part, .. } = &e else { unreachable!() };
            let message = e.to_string();
            assert!(!message.contains('\n'), "{message}");
            assert!(message.contains(&format!("{part:?}")), "{message}");
            (part.clone(), message)
        }
        other => panic!("{s}: expected a spec error, got {other:?}"),
    }
}

#[test]
fn errors_name_the_bad_part() {
    assert_eq!(error("status=1:x:3").0, "x");
    assert!(error("status=1:x:3").1.contains("opcode"));
    assert_eq!(error("status=1:300:3").0, "300");
    assert!(error("status=1:300:3").1.contains("too large"));
    assert_eq!(error("status=1:168").0, "1:168");
    assert_eq!(error("status=1:168:3:0:9").0, "1:168:3:0:9");
    assert_eq!(error("status=1:168:256").0, "256");
    assert_eq!(error("frobnicate").0, "frobnicate");
    assert!(error("frobnicate").1.contains("known: post-stuck"));
    assert_eq!(error("gone=1").0, "1");
    assert_eq!(error("rdy-after").0, "rdy-after");
    assert_eq!(error("rdy-after=").0, "rdy-after");
    assert_eq!(error("post-stuck=0xC000").0, "0xC000");
    assert_eq!(error("post-stuck=0x10000").0, "0x10000");
    assert_eq!(error("flash-fail-at=0").0, "0");
    assert_eq!(error("slow-flash=99999999").0, "99999999");
    assert_eq!(error("ue=1,zz").0, "zz");
    assert_eq!(error("no-valid=1").0, "1");
    assert_eq!(error("").0, "");
}

#[test]
fn serialises_as_its_text() {
    let json = serde_json::to_string(&vec![FaultSpec::Gone, parse("slow=1:167:500")]).unwrap();
    assert_eq!(json, r#"["gone","slow=1:167:500"]"#);
}
