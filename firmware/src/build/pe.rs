//! A minimal PE32+ EFI boot-service driver, written field by field for the synthetic option ROM.
//!
//! Layout, from the Microsoft PE/COFF specification (§2 "Overview", §3 "File Headers", §4
//! "Section Table"): a 64-byte MS-DOS header whose `e_lfanew` (@0x3C) points at the `PE\0\0`
//! signature, the 20-byte COFF file header, the 240-byte PE32+ optional header (with 16 data
//! directories), one 40-byte section header, headers padded to the file alignment, then the one
//! `.text` section. The code is `xor eax, eax; ret`: the entry point returns EFI_SUCCESS.

use oce_mailbox::wire::{WireError, Writer};

/// `IMAGE_FILE_MACHINE_AMD64`.
pub const MACHINE_X64: u16 = 0x8664;
/// `IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER`.
pub const SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER: u16 = 11;

/// Where the PE signature starts (`e_lfanew`).
const PE_OFFSET: usize = 0x40;
/// File alignment: headers and the section's raw data are padded to it.
const FILE_ALIGNMENT: u32 = 0x200;
/// Section alignment in memory.
const SECTION_ALIGNMENT: u32 = 0x1000;
/// Size of the PE32+ optional header with 16 data directories.
const OPTIONAL_HEADER_LEN: u16 = 240;
/// `x86-64: xor eax, eax; ret` — returns 0 (EFI_SUCCESS).
const CODE: [u8; 3] = [0x31, 0xC0, 0xC3];

/// Total size of the image: headers (one file-alignment unit) and one section.
pub const IMAGE_LEN: usize = 2 * FILE_ALIGNMENT as usize;

/// Builds the PE32+ image.
pub fn efi_driver() -> Result<Vec<u8>, WireError> {
    let mut out = vec![0u8; IMAGE_LEN];
    let mut w = Writer::new(&mut out);
    // MS-DOS header: "MZ", then only e_lfanew matters.
    w.bytes("e_magic", b"MZ")?;
    w.seek("e_lfanew", 0x3C)?;
    w.u32("e_lfanew", PE_OFFSET as u32)?;
    // Signature and COFF file header.
    w.bytes("signature", b"PE\0\0")?;
    w.u16("Machine", MACHINE_X64)?;
    w.u16("NumberOfSections", 1)?;
    w.u32("TimeDateStamp", 0)?;
    w.u32("PointerToSymbolTable", 0)?;
    w.u32("NumberOfSymbols", 0)?;
    w.u16("SizeOfOptionalHeader", OPTIONAL_HEADER_LEN)?;
    // IMAGE_FILE_EXECUTABLE_IMAGE (0x0002) | IMAGE_FILE_LARGE_ADDRESS_AWARE (0x0020).
    w.u16("Characteristics", 0x0022)?;
    // PE32+ optional header.
    let optional_start = w.position();
    w.u16("Magic", 0x020B)?; // PE32+
    w.u8("MajorLinkerVersion", 0)?;
    w.u8("MinorLinkerVersion", 0)?;
    w.u32("SizeOfCode", FILE_ALIGNMENT)?;
    w.u32("SizeOfInitializedData", 0)?;
    w.u32("SizeOfUninitializedData", 0)?;
    w.u32("AddressOfEntryPoint", SECTION_ALIGNMENT)?;
    w.u32("BaseOfCode", SECTION_ALIGNMENT)?;
    w.u64("ImageBase", 0)?;
    w.u32("SectionAlignment", SECTION_ALIGNMENT)?;
    w.u32("FileAlignment", FILE_ALIGNMENT)?;
    w.zeros("OS/Image/Subsystem versions", 12)?;
    w.u32("Win32VersionValue", 0)?;
    w.u32("SizeOfImage", 2 * SECTION_ALIGNMENT)?;
    w.u32("SizeOfHeaders", FILE_ALIGNMENT)?;
    w.u32("CheckSum", 0)?;
    w.u16("Subsystem", SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER)?;
    w.u16("DllCharacteristics", 0)?;
    w.u64("SizeOfStackReserve", 0)?;
    w.u64("SizeOfStackCommit", 0)?;
    w.u64("SizeOfHeapReserve", 0)?;
    w.u64("SizeOfHeapCommit", 0)?;
    w.u32("LoaderFlags", 0)?;
    w.u32("NumberOfRvaAndSizes", 16)?;
    w.zeros("DataDirectories", 16 * 8)?;
    debug_assert_eq!(w.position() - optional_start, usize::from(OPTIONAL_HEADER_LEN));
    // Section table: one .text section.
    w.bytes("Name", b".text\0\0\0")?;
    w.u32("VirtualSize", CODE.len() as u32)?;
    w.u32("VirtualAddress", SECTION_ALIGNMENT)?;
    w.u32("SizeOfRawData", FILE_ALIGNMENT)?;
    w.u32("PointerToRawData", FILE_ALIGNMENT)?;
    w.u32("PointerToRelocations", 0)?;
    w.u32("PointerToLinenumbers", 0)?;
    w.u16("NumberOfRelocations", 0)?;
    w.u16("NumberOfLinenumbers", 0)?;
    // IMAGE_SCN_CNT_CODE (0x20) | IMAGE_SCN_MEM_EXECUTE (0x20000000) | IMAGE_SCN_MEM_READ (0x40000000).
    w.u32("Characteristics", 0x6000_0020)?;
    w.seek("text", FILE_ALIGNMENT as usize)?;
    w.bytes("text", &CODE)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goblin_parses_the_driver() {
        let bytes = efi_driver().unwrap();
        assert_eq!(bytes.len(), 1024);
        // Golden: DOS magic, e_lfanew, PE signature, machine, one section, optional header size.
        assert_eq!(&bytes[..2], b"MZ");
        assert_eq!(hex::encode(&bytes[0x3C..0x40]), "40000000");
        assert_eq!(hex::encode(&bytes[0x40..0x48]), "5045000064860100");
        assert_eq!(hex::encode(&bytes[0x54..0x5A]), "f00022000b02");
        let pe = goblin::pe::PE::parse(&bytes).unwrap();
        assert!(pe.is_64);
        assert_eq!(pe.header.coff_header.machine, goblin::pe::header::COFF_MACHINE_X86_64);
        let opt = pe.header.optional_header.unwrap();
        assert_eq!(opt.windows_fields.subsystem, goblin::pe::subsystem::IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER);
        assert_eq!(pe.entry, 0x1000);
        assert_eq!(pe.sections.len(), 1);
        assert_eq!(pe.sections[0].name().unwrap(), ".text");
    }
}
