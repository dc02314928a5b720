//! Physical addresses of this process's memory, from `/proc/self/pagemap` (the kernel's
//! Documentation/admin-guide/mm/pagemap.rst): one little-endian 64-bit entry per 4 KiB virtual
//! page, at byte offset `vaddr / 4096 * 8`. ixy.rs and DPDK's uio path find their DMA addresses
//! the same way.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The base page size the pagemap counts in (x86-64).
pub(crate) const BASE_PAGE: u64 = 4096;
/// Bit 63: the page is present in RAM (pagemap.rst).
const PRESENT: u64 = 1 << 63;
/// Bit 62: the page is swapped out (pagemap.rst).
const SWAPPED: u64 = 1 << 62;
/// Bits 0–54: the page frame number, when present (pagemap.rst).
const PFN_MASK: u64 = (1 << 55) - 1;

/// Why no physical address could be had.
#[derive(Debug)]
pub(crate) enum PagemapError {
    /// The entries are present but their frame numbers read as 0: since Linux 4.2 the kernel
    /// zeroes them for a process without CAP_SYS_ADMIN (pagemap.rst).
    Hidden,
    /// A page is not in RAM (never touched, or swapped out).
    NotPresent {
        /// Its virtual address.
        vaddr: u64,
    },
    /// The pages are not one physically contiguous run.
    NotContiguous {
        /// Byte offset into the range where the run breaks.
        at: u64,
    },
    /// The pagemap could not be read.
    Io(io::Error),
}

/// The physical address of `vaddr`, checking that `vaddr .. vaddr + len` is one physically
/// contiguous, present run. `vaddr` must be page-aligned and `len` a non-zero multiple of the page.
pub(crate) fn physical_run(pagemap: &File, vaddr: u64, len: u64) -> Result<u64, PagemapError> {
    debug_assert!(vaddr.is_multiple_of(BASE_PAGE) && len.is_multiple_of(BASE_PAGE) && len > 0);
    let pages = usize::try_from(len / BASE_PAGE).map_err(|_| PagemapError::NotContiguous { at: 0 })?;
    let mut raw = vec![0u8; pages * 8];
    pagemap.read_exact_at(&mut raw, vaddr / BASE_PAGE * 8).map_err(PagemapError::Io)?;
    let mut first = None;
    for (i, entry) in raw.chunks_exact(8).enumerate() {
        let entry = u64::from_le_bytes(entry.try_into().map_err(|_| PagemapError::NotContiguous { at: 0 })?);
        let offset = i as u64 * BASE_PAGE;
        if entry & PRESENT == 0 || entry & SWAPPED != 0 {
            return Err(PagemapError::NotPresent { vaddr: vaddr + offset });
        }
        let pfn = entry & PFN_MASK;
        if pfn == 0 {
            return Err(PagemapError::Hidden);
        }
        let phys = pfn * BASE_PAGE;
        match first {
            None => first = Some(phys),
            Some(base) if phys != base + offset => return Err(PagemapError::NotContiguous { at: offset }),
            Some(_) => {}
        }
    }
    first.ok_or(PagemapError::NotContiguous { at: 0 })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A pagemap file whose entries for virtual pages 16.. are `entries`.
    fn pagemap(entries: &[u64]) -> File {
        let mut file = tempfile::tempfile().unwrap();
        let mut bytes = vec![0u8; 16 * 8];
        for e in entries {
            bytes.extend_from_slice(&e.to_le_bytes());
        }
        file.write_all(&bytes).unwrap();
        file
    }

    const VADDR: u64 = 16 * BASE_PAGE;

    #[test]
    fn a_contiguous_run_gives_its_first_address() {
        let f = pagemap(&[PRESENT | 0x1200, PRESENT | 0x1201, PRESENT | (1 << 56) | 0x1202]);
        assert_eq!(physical_run(&f, VADDR, 3 * BASE_PAGE).unwrap(), 0x120_0000);
        assert_eq!(physical_run(&f, VADDR + BASE_PAGE, BASE_PAGE).unwrap(), 0x120_1000);
    }

    #[test]
    fn hidden_absent_broken_and_short_runs_are_errors() {
        let f = pagemap(&[PRESENT, PRESENT]);
        assert!(matches!(physical_run(&f, VADDR, BASE_PAGE), Err(PagemapError::Hidden)));
        let f = pagemap(&[PRESENT | 7, 8]);
        assert!(
            matches!(physical_run(&f, VADDR, 2 * BASE_PAGE), Err(PagemapError::NotPresent { vaddr }) if vaddr == VADDR + BASE_PAGE)
        );
        let f = pagemap(&[PRESENT | SWAPPED | 7]);
        assert!(matches!(physical_run(&f, VADDR, BASE_PAGE), Err(PagemapError::NotPresent { .. })));
        let f = pagemap(&[PRESENT | 7, PRESENT | 9]);
        assert!(matches!(physical_run(&f, VADDR, 2 * BASE_PAGE), Err(PagemapError::NotContiguous { at: 4096 })));
        let f = pagemap(&[PRESENT | 7]);
        assert!(matches!(physical_run(&f, VADDR, 2 * BASE_PAGE), Err(PagemapError::Io(_))));
    }
}
