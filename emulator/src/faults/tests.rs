use super::*;

fn faults(specs: &[&str]) -> Faults {
    let mut f = Faults::default();
    for s in specs {
        f.set_str(s).unwrap();
    }
    f
}

const ALL: [&str; 18] = [
    "gone",
    "power-lost",
    "ue=0x4,0x80000000",
    "post-error=0x0001",
    "rdy-never",
    "rdy-hang",
    "rdy-after=50",
    "status=1:168:3:0",
    "response-length=1:35:500",
    "truncate=1:35:8",
    "no-valid=1:35",
    "slow=1:167:500",
    "status=1:167:1:0",
    "flash-fail-at=3",
    "power-loss-at=4",
    "slow-flash=5",
    "no-offset-mode",
    "pfc-unsync",
];

#[test]
fn describe_round_trips_every_fault() {
    let f = faults(&ALL);
    let described: Vec<String> = f.describe().iter().map(ToString::to_string).collect();
    assert_eq!(described, ALL, "describe lists the specs in a fixed order");
    let again = faults(&described.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again, f);
    assert!(Faults::default().describe().is_empty());
}

#[test]
fn setting_replaces_the_same_kind_only() {
    let mut f = faults(&["post-stuck=1", "status=1:168:3", "status=1:167:3", "slow=1:168:10"]);
    f.set_str("post-error").unwrap();
    assert_eq!(f.post, Some(PostFault::Error { stage: 2 }), "one POST fault at a time");
    f.set_str("status=1:168:5").unwrap();
    let on_168: Vec<CommandEffect> = f.command(1, 168).collect();
    assert_eq!(
        on_168,
        [CommandEffect::Slow { delay: Duration::from_millis(10) }, CommandEffect::Status { base: 5, additional: 0 }]
    );
    assert_eq!(f.command(1, 167).count(), 1);
    assert_eq!(f.command(2, 168).count(), 0, "the subsystem is part of the key");
}

#[test]
fn clear_by_name_and_by_command() {
    let mut f = faults(&["gone", "status=1:168:3", "status=1:167:3", "no-valid=1:168", "post-stuck=2"]);
    assert!(f.clear("status=1:168").unwrap());
    assert_eq!(f.command(1, 168).collect::<Vec<_>>(), [CommandEffect::NoValid]);
    assert!(!f.clear("status=1:168").unwrap(), "nothing left to clear");
    assert!(f.clear("status").unwrap());
    assert_eq!(f.commands.len(), 1);
    assert!(!f.clear("post-error").unwrap(), "the POST fault is a stuck one");
    assert!(f.clear("post-stuck").unwrap());
    assert!(f.clear("gone").unwrap());
    assert!(!f.clear("rdy-never").unwrap());
    f.clear_all();
    assert!(f.is_clear());
}

#[test]
fn clear_rejects_unknown_names() {
    let mut f = faults(&["gone"]);
    for (name, part) in [("bogus", "bogus"), ("gone=1:2", "gone"), ("status=1:x", "x"), ("status=1", "1")] {
        match f.clear(name) {
            Err(EmulatorError::FaultSpec { part: p, spec, .. }) => {
                assert_eq!((p.as_str(), spec.as_str()), (part, name));
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(f.gone, "a failed clear changes nothing");
}

#[test]
fn old_state_files_load() {
    let f: Faults = serde_json::from_str(r#"{"gone": true, "ue_status": [1, 2]}"#).unwrap();
    assert_eq!(f, Faults { gone: true, ue_status: [1, 2], ..Faults::default() });
    let f: Faults = serde_json::from_str("{}").unwrap();
    assert!(f.is_clear());
}

#[test]
fn json_round_trip() {
    let f = faults(&ALL);
    let text = serde_json::to_string(&f).unwrap();
    assert_eq!(serde_json::from_str::<Faults>(&text).unwrap(), f);
}
