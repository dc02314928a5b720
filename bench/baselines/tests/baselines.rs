//! The baselines do the work they stand for: `crc` prints the CRC-32 of every byte of the file,
//! `memcpy` copies all of them, `noop` does nothing and succeeds; bad arguments are errors.

use std::process::{Command, Output};

fn run(bin: &str, args: &[&std::ffi::OsStr]) -> Output {
    Command::new(bin).args(args).output().expect("run baseline")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

#[test]
fn crc_and_memcpy_cover_every_byte_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    // Not a multiple of any SIMD width, so a tail left out would change the CRC.
    let bytes: Vec<u8> = (0..100_003u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    std::fs::write(&path, &bytes).unwrap();

    let crc = run(env!("CARGO_BIN_EXE_crc"), &[path.as_os_str()]);
    assert!(crc.status.success());
    assert_eq!(stdout(&crc), format!("{:08x}", crc32fast::hash(&bytes)));
    // The standard check value of CRC-32/ISO-HDLC, so the line above is not only self-consistent.
    let check = dir.path().join("check.txt");
    std::fs::write(&check, b"123456789").unwrap();
    assert_eq!(stdout(&run(env!("CARGO_BIN_EXE_crc"), &[check.as_os_str()])), "cbf43926");

    let copy = run(env!("CARGO_BIN_EXE_memcpy"), &[path.as_os_str()]);
    assert!(copy.status.success());
    assert_eq!(stdout(&copy), format!("100003 bytes, last Some({})", bytes[bytes.len() - 1]));
}

#[test]
fn noop_succeeds_and_bad_arguments_fail() {
    assert!(run(env!("CARGO_BIN_EXE_noop"), &[]).status.success());
    for bin in [env!("CARGO_BIN_EXE_crc"), env!("CARGO_BIN_EXE_memcpy")] {
        assert_eq!(run(bin, &[]).status.code(), Some(2), "{bin} without FILE");
        let missing = std::ffi::OsStr::new("/nonexistent/ocetool-bench-file");
        let out = run(bin, &[missing]);
        assert_eq!(out.status.code(), Some(1), "{bin} on a missing file");
        assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/ocetool-bench-file"));
    }
}
