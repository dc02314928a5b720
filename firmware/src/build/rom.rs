//! The synthetic PCI expansion ROM of the PXE section: a legacy x86 image followed by an EFI image
//! holding a small PE32+ boot-service driver (formats in [`crate::optionrom::format`]).

use oce_mailbox::wire::{Wire, WireError, Writer};

use super::pe;
use crate::optionrom::format::{
    CodeType, EFI_HEADER_LEN, EFI_SIGNATURE, EfiRomHeader, IMAGE_UNIT, LAST_IMAGE, PCIR_POINTER_OFFSET, Pcir,
    ROM_SIGNATURE,
};

/// Emulex's PCI vendor ID (ufi-firmware.md §7).
pub const VENDOR_EMULEX: u16 = 0x10DF;
/// The Skyhawk PF device ID (ufi-firmware.md §7).
pub const DEVICE_SKYHAWK: u16 = 0x0720;
/// Class code of an Ethernet controller: prog-if 0, sub-class 0x00, base class 0x02 (network).
const CLASS_ETHERNET: [u8; 3] = [0x00, 0x00, 0x02];
/// Where each image's PCIR structure sits (DWORD aligned, after the 0x1A-byte headers).
const PCIR_OFFSET: usize = 0x1C;
/// Where the EFI image's PE file starts.
const EFI_IMAGE_OFFSET: usize = 0x40;
/// Size of the legacy image: two 512-byte units.
const LEGACY_LEN: usize = 2 * IMAGE_UNIT;

fn pcir(code_type: CodeType, units: u16, code_revision: u16, last: bool) -> Pcir {
    Pcir {
        vendor_id: VENDOR_EMULEX,
        device_id: DEVICE_SKYHAWK,
        device_list: 0,
        length: Pcir::LEN as u16,
        revision: 3,
        class_code: CLASS_ETHERNET,
        image_length: units,
        code_revision,
        code_type,
        indicator: if last { LAST_IMAGE } else { 0 },
        max_runtime_length: units,
        config_utility: 0,
        dmtf_clp: 0,
    }
}

/// The legacy image: ROM header (init size in units at byte 2, entry point `retf` at byte 3),
/// PCIR at 0x1C, a readable tag, and a final byte that makes the image's byte sum 0 mod 256
/// (PCI Firmware 3.0 §5.1: legacy images are checksummed).
fn legacy_image(version: &str, code_revision: u16) -> Result<Vec<u8>, WireError> {
    let mut out = vec![0u8; LEGACY_LEN];
    let mut w = Writer::new(&mut out);
    w.bytes("signature", &ROM_SIGNATURE)?;
    w.u8("init_size", (LEGACY_LEN / IMAGE_UNIT) as u8)?;
    w.u8("entry", 0xCB)?; // retf: initialisation returns at once
    w.seek("pcir_pointer", PCIR_POINTER_OFFSET)?;
    w.u16("pcir_pointer", PCIR_OFFSET as u16)?;
    w.seek("pcir", PCIR_OFFSET)?;
    pcir(CodeType::X86, (LEGACY_LEN / IMAGE_UNIT) as u16, code_revision, false).encode(&mut w)?;
    w.string("tag", &format!("ocetool synthetic PXE ROM {version}"), 64)?;
    let sum = out.iter().fold(0u8, |acc, &b| acc.wrapping_add(b));
    out[LEGACY_LEN - 1] = sum.wrapping_neg();
    Ok(out)
}

/// The EFI image: EFI ROM header, PCIR at 0x1C (last image), the PE file at 0x40.
fn efi_image(code_revision: u16) -> Result<Vec<u8>, WireError> {
    let driver = pe::efi_driver()?;
    let units = (EFI_IMAGE_OFFSET + driver.len()).div_ceil(IMAGE_UNIT);
    let mut out = vec![0u8; units * IMAGE_UNIT];
    let mut w = Writer::new(&mut out);
    EfiRomHeader {
        init_size: units as u16,
        efi_signature: EFI_SIGNATURE,
        subsystem: pe::SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER,
        machine: pe::MACHINE_X64,
        compression: 0,
        image_offset: EFI_IMAGE_OFFSET as u16,
        pcir_offset: PCIR_OFFSET as u16,
    }
    .encode(&mut w)?;
    debug_assert_eq!(w.position(), EFI_HEADER_LEN);
    w.seek("pcir", PCIR_OFFSET)?;
    pcir(CodeType::Efi, units as u16, code_revision, true).encode(&mut w)?;
    w.seek("pe", EFI_IMAGE_OFFSET)?;
    w.bytes("pe", &driver)?;
    Ok(out)
}

/// The whole ROM: legacy image, then the EFI image (the last). `code_revision` goes into both
/// PCIR structures.
pub fn option_rom(version: &str, code_revision: u16) -> Result<Vec<u8>, WireError> {
    let mut rom = legacy_image(version, code_revision)?;
    rom.extend_from_slice(&efi_image(code_revision)?);
    Ok(rom)
}

/// Length of [`option_rom`]'s output.
pub fn option_rom_len() -> usize {
    LEGACY_LEN + (EFI_IMAGE_OFFSET + pe::IMAGE_LEN).div_ceil(IMAGE_UNIT) * IMAGE_UNIT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rom_layout_golden_offsets() {
        let rom = option_rom("11.1.172.23", 0x0B01).unwrap();
        assert_eq!(rom.len(), option_rom_len());
        assert_eq!(rom.len(), 1024 + 1536);
        // Legacy image: 55 AA, 2 units, retf; PCIR pointer 0x001c; checksum 0.
        assert_eq!(hex::encode(&rom[..4]), "55aa02cb");
        assert_eq!(hex::encode(&rom[0x18..0x1A]), "1c00");
        assert_eq!(&rom[0x1C..0x20], b"PCIR");
        assert_eq!(hex::encode(&rom[0x20..0x24]), "df102007");
        assert_eq!(rom[0x1C + 0x14], 0, "code type x86");
        assert_eq!(rom[0x1C + 0x15], 0, "not last");
        assert_eq!(rom[..1024].iter().fold(0u8, |a, &b| a.wrapping_add(b)), 0);
        // EFI image at 1024: 55 AA, 3 units, 0x0EF1, subsystem 11, machine 0x8664.
        let efi = &rom[1024..];
        assert_eq!(hex::encode(&efi[..0x0E]), "55aa0300f10e00000b0064860000");
        assert_eq!(efi[0x1C + 0x14], 3, "code type EFI");
        assert_eq!(efi[0x1C + 0x15], 0x80, "last image");
        assert_eq!(&efi[0x40..0x42], b"MZ");
    }
}
