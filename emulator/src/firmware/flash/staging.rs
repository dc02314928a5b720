//! WRITE_FLASHROM staging: the section the host is sending chunk by chunk, held in the
//! firmware's RAM (the emulator process's memory, never on flash) until the FLASH chunk commits
//! it (ufi-firmware.md §3.2, §3.3; design.md §6).
//!
//! A section is addressed two ways (ufi-firmware.md §2.5, §2.8):
//!
//! - **offset mode** (op type 7): each chunk carries its flash address; the section runs from
//!   the first chunk's address to the end of the last chunk;
//! - **op-type mode**: each chunk names a component; the section is written at the start of
//!   that component's region in the directory now on flash, `offset` is ignored (be2net leaves
//!   it stale), and the section may not outgrow the region.
//!
//! Chunks must be contiguous: while a section is staged, every chunk must continue it (offset
//! mode: start where the staged bytes end; op-type mode: the same op type). Anything else is
//! refused and the staged section is dropped, so a host that restarts a section from its first
//! chunk is accepted. The buffer keeps its capacity between sections (no reallocation per chunk
//! or per section once it has grown).

use crate::assumptions::FLASH_LEN;

/// How a chunk addresses the flash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// Offset mode: the chunk's flash address.
    Offset(u64),
    /// Op-type mode: the component's op type.
    OpType(u32),
}

/// Why a chunk or a commit is refused (the firmware answers ILLEGAL_FIELD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The chunk does not continue the staged section.
    OutOfOrder,
    /// The section would reach past the end of the flash, or outgrow its op type's region.
    OutsideFlash,
    /// The op type has no region in the directory on flash (or there is no directory).
    NoRegion,
    /// A commit with nothing staged, or a section too short to hold its 4-byte CRC trailer.
    NothingToCommit,
}

/// Where the staged section goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Offset mode, from this flash address.
    Offset { start: u64 },
    /// Op-type mode: `op_type`'s region, `size` bytes at `start`.
    Region { op_type: u32, start: u64, size: u64 },
}

impl Target {
    fn start(self) -> u64 {
        match self {
            Self::Offset { start } | Self::Region { start, .. } => start,
        }
    }

    /// Most bytes the section may hold.
    fn capacity(self) -> u64 {
        let to_end = FLASH_LEN.saturating_sub(self.start());
        match self {
            Self::Offset { .. } => to_end,
            Self::Region { size, .. } => size.min(to_end),
        }
    }
}

/// The staged section.
#[derive(Debug, Default)]
pub(crate) struct Staging {
    target: Option<Target>,
    data: Vec<u8>,
}

impl Staging {
    /// Drops the staged section (keeping the buffer's capacity).
    pub(crate) fn clear(&mut self) {
        self.target = None;
        self.data.clear();
    }

    /// Appends `data`, addressed by `at`, to the staged section, or starts a section with it
    /// when none is staged (`region` gives an op type's region on flash). A refused chunk drops
    /// the staged section.
    pub(crate) fn stage(
        &mut self,
        at: Chunk,
        data: &[u8],
        region: impl FnOnce(u32) -> Option<(u64, u64)>,
    ) -> Result<(), Refusal> {
        let result = self.try_stage(at, data, region);
        if result.is_err() {
            self.clear();
        }
        result
    }

    fn try_stage(
        &mut self,
        at: Chunk,
        data: &[u8],
        region: impl FnOnce(u32) -> Option<(u64, u64)>,
    ) -> Result<(), Refusal> {
        let staged = self.data.len() as u64;
        let target = match (self.target, at) {
            (None, Chunk::Offset(start)) => Target::Offset { start },
            (None, Chunk::OpType(op_type)) => {
                let (start, size) = region(op_type).ok_or(Refusal::NoRegion)?;
                Target::Region { op_type, start, size }
            }
            (Some(t @ Target::Offset { start }), Chunk::Offset(offset)) if offset == start + staged => t,
            (Some(t @ Target::Region { op_type, .. }), Chunk::OpType(o)) if o == op_type => t,
            (Some(_), _) => return Err(Refusal::OutOfOrder),
        };
        if staged + data.len() as u64 > target.capacity() {
            return Err(Refusal::OutsideFlash);
        }
        self.target = Some(target);
        self.data.extend_from_slice(data);
        Ok(())
    }

    /// The section to commit: its flash address and bytes (at least the 4-byte trailer).
    pub(crate) fn section(&self) -> Result<(usize, &[u8]), Refusal> {
        let target = self.target.ok_or(Refusal::NothingToCommit)?;
        if self.data.len() < oce_firmware::crc::TRAILER_LEN {
            return Err(Refusal::NothingToCommit);
        }
        // capacity() kept start + len inside the flash, so the start fits a usize.
        let start = usize::try_from(target.start()).map_err(|_| Refusal::OutsideFlash)?;
        Ok((start, &self.data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_region(_: u32) -> Option<(u64, u64)> {
        None
    }

    #[test]
    fn offset_mode_chunks_must_be_contiguous() {
        let mut s = Staging::default();
        s.stage(Chunk::Offset(0x4_0000), &[1; 8], no_region).unwrap();
        s.stage(Chunk::Offset(0x4_0008), &[2; 8], no_region).unwrap();
        assert_eq!(s.section().unwrap(), (0x4_0000, &[1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2][..]));
        assert_eq!(s.stage(Chunk::Offset(0x4_0000), &[3; 8], no_region), Err(Refusal::OutOfOrder));
        assert!(s.data.is_empty() && s.target.is_none(), "a refused chunk drops the section");
        assert_eq!(s.section(), Err(Refusal::NothingToCommit));
        s.stage(Chunk::Offset(0x4_0000), &[3; 8], no_region).unwrap();
        assert_eq!(s.stage(Chunk::OpType(0), &[3; 8], no_region), Err(Refusal::OutOfOrder), "modes do not mix");
    }

    #[test]
    fn sections_stay_inside_the_flash() {
        let mut s = Staging::default();
        assert_eq!(s.stage(Chunk::Offset(FLASH_LEN - 4), &[0; 8], no_region), Err(Refusal::OutsideFlash));
        assert_eq!(s.stage(Chunk::Offset(u64::MAX), &[0; 1], no_region), Err(Refusal::OutsideFlash));
        s.stage(Chunk::Offset(FLASH_LEN - 8), &[0; 8], no_region).unwrap();
        assert_eq!(s.stage(Chunk::Offset(FLASH_LEN), &[0; 1], no_region), Err(Refusal::OutsideFlash));
    }

    #[test]
    fn op_type_mode_uses_the_region_and_ignores_offsets() {
        let mut s = Staging::default();
        assert_eq!(s.stage(Chunk::OpType(3), &[0; 4], no_region), Err(Refusal::NoRegion));
        s.stage(Chunk::OpType(3), &[5; 8], |op| (op == 3).then_some((0x14_0000, 12))).unwrap();
        s.stage(Chunk::OpType(3), &[6; 4], |_| panic!("the region is looked up once")).unwrap();
        assert_eq!(s.section().unwrap().0, 0x14_0000);
        assert_eq!(s.stage(Chunk::OpType(3), &[7; 1], no_region), Err(Refusal::OutsideFlash), "region full");
        assert_eq!(s.stage(Chunk::OpType(3), &[], |_| Some((0, 4))), Ok(()));
        assert_eq!(s.section(), Err(Refusal::NothingToCommit), "no room for a trailer yet");
    }

    #[test]
    fn the_buffer_is_reused() {
        let mut s = Staging::default();
        s.stage(Chunk::Offset(0), &[0; 32 * 1024], no_region).unwrap();
        let capacity = s.data.capacity();
        s.clear();
        s.stage(Chunk::Offset(0), &[0; 32 * 1024], no_region).unwrap();
        assert_eq!(s.data.capacity(), capacity);
    }
}
