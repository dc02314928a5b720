//! Decoding the builder's option ROM, and every way a broken one is reported.

use super::*;
use crate::build::rom::option_rom;

fn rom() -> Vec<u8> {
    option_rom("11.1.172.23", 0x0B01).unwrap()
}

/// Offset of the EFI image in the builder's ROM (after the 1 KiB legacy image).
const EFI: usize = 1024;

#[test]
fn decodes_the_builders_rom() {
    let decoded = decode(&rom());
    assert_eq!(decoded.problems, []);
    assert_eq!(decoded.images.len(), 2);
    let legacy = &decoded.images[0];
    assert_eq!((legacy.offset, legacy.pcir.vendor_id, legacy.pcir.device_id), (0, 0x10DF, 0x0720));
    assert_eq!(legacy.pcir.code_type, CodeType::X86);
    assert_eq!(legacy.pcir.code_revision, 0x0B01);
    assert!(!legacy.pcir.is_last());
    assert_eq!(legacy.efi, None);
    let efi = &decoded.images[1];
    assert_eq!(efi.offset, EFI);
    assert_eq!(efi.pcir.code_type, CodeType::Efi);
    assert!(efi.pcir.is_last());
    let header = efi.efi.as_ref().unwrap();
    assert_eq!((header.subsystem, header.machine, header.compression), (11, 0x8664, 0));
    let pe = efi.pe.as_ref().unwrap();
    assert_eq!(pe.machine, 0x8664);
    assert_eq!(pe.machine_name, "X86_64");
    assert!(pe.pe32_plus);
    assert_eq!(pe.subsystem, Some(11));
    assert_eq!(pe.entry_point, Some(0x1000));
    assert_eq!(pe.sections, 1);
}

#[test]
fn missing_signature_and_pcir() {
    assert_eq!(decode(&[0u8; 64]).problems, [RomProblem::NoSignature { offset: 0 }]);
    assert!(matches!(decode(&[0x55]).problems[..], [RomProblem::Truncated(_)]));
    let mut bad = rom();
    bad[0x1C] = b'X';
    assert_eq!(decode(&bad).problems, [RomProblem::NoPcir { offset: 0, pcir_offset: 0x1C }]);
    let mut far = rom();
    far[0x18..0x1A].copy_from_slice(&0xFFF0u16.to_le_bytes());
    assert_eq!(decode(&far).problems, [RomProblem::NoPcir { offset: 0, pcir_offset: 0xFFF0 }]);
}

#[test]
fn chain_faults() {
    // The EFI image cut short: its length runs past the data.
    let cut = &rom()[..EFI + 800];
    let problems = decode(cut).problems;
    assert!(problems.contains(&RomProblem::ImagePastEnd { offset: EFI, len: 1536, available: 800 }), "{problems:?}");
    // No image marked last, and nothing after it.
    let mut unterminated = rom();
    unterminated[EFI + 0x1C + 0x15] = 0;
    assert_eq!(decode(&unterminated).problems, [RomProblem::NoLastImage]);
    // Zero length on the first image.
    let mut zero = rom();
    zero[0x1C + 0x10..0x1C + 0x12].fill(0);
    assert_eq!(decode(&zero).problems, [RomProblem::ZeroLength { offset: 0 }]);
}

#[test]
fn efi_faults() {
    let mut sig = rom();
    sig[EFI + 4] = 0;
    assert_eq!(decode(&sig).problems, [RomProblem::BadEfiSignature { offset: EFI, found: 0x0E00 }]);
    let mut compressed = rom();
    compressed[EFI + 0x0C] = 1;
    assert_eq!(decode(&compressed).problems, [RomProblem::Compressed { offset: EFI }]);
    let mut machine = rom();
    machine[EFI + 0x0A..EFI + 0x0C].copy_from_slice(&0xAA64u16.to_le_bytes());
    assert_eq!(decode(&machine).problems, [RomProblem::MachineMismatch { offset: EFI, efi: 0xAA64, pe: 0x8664 }]);
    let mut pe = rom();
    pe[EFI + 0x40] = b'X';
    let problems = decode(&pe).problems;
    assert!(matches!(&problems[..], [RomProblem::BadPe { offset, .. }] if *offset == EFI + 0x40), "{problems:?}");
    let mut far = rom();
    far[EFI + 0x16..EFI + 0x18].copy_from_slice(&0x7000u16.to_le_bytes());
    assert!(matches!(decode(&far).problems[..], [RomProblem::Truncated(_)]));
}

#[test]
fn garbage_never_panics() {
    let base = rom();
    for i in 0..base.len() {
        for v in [0x00, 0xFF, 0x80, 0x7F] {
            let mut b = base.clone();
            b[i] = v;
            let _ = decode(&b);
            let _ = decode(&b[..i]);
        }
    }
}
