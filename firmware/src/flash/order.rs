//! The write order: the sections to write, ordered so that a copy of the firmware stays bootable
//! after every prefix of the walk — or the reason no order does.
//!
//! **Bootable** is the emulator's POST rule (design.md §6, `oce_emulator::assumptions`, "Flash"):
//! the directory parses and its 0xA0 or 0xB0 section passes its CRC. ocetool applies it
//! conservatively, at every step of the walk and while each section is being committed:
//!
//! - a section being committed counts as garbage over its whole region (real flash being
//!   programmed may tear; the emulator commits whole);
//! - an old boot section is good if it was good (or could not be checked: the adapter booted from
//!   this flash) and nothing written since touches it, or if the image's section of the same type
//!   was written at exactly its place;
//! - a boot section of the new directory is good only once the image's section is written (or
//!   was already on flash), never because older bytes happen to pass their CRC there;
//! - the directory stays at the address it has on flash: writing the new one over it is the
//!   switch from the old layout to the new, one commit. A directory that moves is refused, since
//!   a firmware that finds its directory at a fixed address, or the first cookie from address 0
//!   among bytes ocetool cannot see, might never switch. The switch itself is the one commit no
//!   order can protect against a torn write: the emulator commits it whole, real flash might not;
//! - nothing written before the switch may overwrite the old directory, or put a cookie before
//!   it (POST takes the first one).
//!
//! The order found is the directory order wherever that is safe (an update that keeps the layout
//! is written exactly as be2net writes it); otherwise a depth-first search over the sections
//! still to write, preferring directory order, finds one if any exists.

use std::collections::HashSet;

use serde::Serialize;

use super::onflash::{BOOT_TYPES, BootState, Bootable, OnFlash, OnFlashDirectory, Region};
use crate::dir::ImageType;

/// Whether the order keeps a bootable copy at every step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Safety {
    /// After every prefix of the walk, and while each section is committed (the directory's own
    /// commit taken as whole), the old or the new firmware boots.
    Safe,
    /// The flash does not boot now (the boot sections of the directory on flash fail their
    /// CRCs): there is nothing to keep, the update repairs it.
    NothingToKeep,
    /// No order keeps a bootable copy, or ocetool cannot tell; `fw update` refuses without
    /// `--force`.
    Unsafe {
        /// Why.
        reason: String,
    },
}

/// One section of the image as the order sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece {
    /// Its position in the plan.
    pub(crate) pos: usize,
    /// Where it goes.
    pub(crate) region: Region,
    /// It is to be written (else it is already on flash).
    pub(crate) write: bool,
    /// It holds a cookie at a 32-byte step below the directory on flash.
    pub(crate) preempts: bool,
}

impl Piece {
    fn image_type(&self) -> ImageType {
        self.region.section.image_type
    }
}

/// The pieces to write in order (plan positions), and how safe that order is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WriteOrder {
    pub(crate) order: Vec<usize>,
    pub(crate) safety: Safety,
}

/// Most states the search visits before it gives up (and calls the update unsafe): far more
/// than any directory of 32 entries with a handful of boot sections needs.
const SEARCH_LIMIT: usize = 1 << 16;

/// Orders `pieces` (the image's sections, in directory order, those already on flash included)
/// for the flash `on_flash`; `new_dir_address` is where the image's directory goes.
pub(crate) fn order(on_flash: &OnFlash, pieces: &[Piece], new_dir_address: Option<u32>) -> WriteOrder {
    let writes: Vec<Piece> = pieces.iter().copied().filter(|p| p.write).collect();
    let dir_order: Vec<usize> = writes.iter().map(|p| p.pos).collect();
    let unsafe_with = |reason: String| WriteOrder { order: dir_order.clone(), safety: Safety::Unsafe { reason } };
    let Some(old) = &on_flash.directory else {
        let why = on_flash.unreadable.clone().unwrap_or_else(|| "it could not be read".to_owned());
        return unsafe_with(format!("ocetool cannot read the adapter's flash directory ({why})"));
    };
    if old.bootable() == Bootable::No {
        return WriteOrder { order: repair_order(&writes), safety: Safety::NothingToKeep };
    }
    if writes.is_empty() {
        return WriteOrder { order: Vec::new(), safety: Safety::Safe };
    }
    let all: Vec<&Piece> = pieces.iter().collect();
    for (i, a) in all.iter().enumerate() {
        if let Some(b) = all[i + 1..].iter().find(|b| a.region.overlaps(&b.region)) {
            return unsafe_with(format!(
                "the image's sections {} and {} overlap, so the flash cannot hold both",
                a.region.section, b.region.section
            ));
        }
    }
    let dir = writes.iter().position(|p| p.image_type() == ImageType::UfiDir);
    if dir.is_some() && old.address != new_dir_address {
        let at = |a: Option<u32>| a.map_or_else(|| "an unknown address".to_owned(), |a| format!("{a:#x}"));
        return unsafe_with(format!(
            "the image moves the flash directory from {} to {}, and no commit switches the adapter from one to the \
             other",
            at(old.address),
            at(new_dir_address)
        ));
    }
    let model = Model { old, writes: &writes, present: pieces.iter().filter(|p| !p.write).copied().collect(), dir };
    let mut search = Search { model: &model, failed: HashSet::new(), visited: 0, path: Vec::new() };
    if search.from(0) {
        let order = search.path.iter().map(|&i| writes[i].pos).collect();
        return WriteOrder { order, safety: Safety::Safe };
    }
    unsafe_with(model.explain(search.visited >= SEARCH_LIMIT))
}

/// With nothing to keep: the boot sections first, then the directory, then the rest, so the
/// adapter boots again as early in the walk as it can.
fn repair_order(writes: &[Piece]) -> Vec<usize> {
    let rank = |p: &Piece| match p.image_type() {
        t if BOOT_TYPES.contains(&t) => 0,
        ImageType::UfiDir => 1,
        _ => 2,
    };
    let mut sorted: Vec<&Piece> = writes.iter().collect();
    sorted.sort_by_key(|p| rank(p));
    sorted.iter().map(|p| p.pos).collect()
}

/// The flash before the walk and the pieces of the image.
struct Model<'a> {
    old: &'a OnFlashDirectory,
    /// The pieces to write; states are bit sets over them.
    writes: &'a [Piece],
    /// The image's pieces already on flash.
    present: Vec<Piece>,
    /// The image's directory among `writes`.
    dir: Option<usize>,
}

impl Model<'_> {
    fn written(&self, done: u64) -> impl Iterator<Item = &Piece> + '_ {
        self.writes.iter().enumerate().filter(move |(i, _)| done & (1 << i) != 0).map(|(_, p)| p)
    }

    /// True when a copy boots with the pieces in `done` written and `torn` being written.
    fn boots(&self, done: u64, torn: Option<usize>) -> bool {
        let torn = torn.map(|i| self.writes[i].region);
        let hit = |r: &Region| torn.is_some_and(|t| t.overlaps(r));
        if self.dir.is_some_and(|d| done & (1 << d) != 0) {
            // The image's directory is in force: its boot sections count once written.
            return self
                .writes
                .iter()
                .enumerate()
                .filter(|(i, _)| done & (1 << i) != 0)
                .map(|(_, p)| p)
                .chain(&self.present)
                .any(|p| BOOT_TYPES.contains(&p.image_type()) && !hit(&p.region));
        }
        // The old directory must be intact and still the first cookie on flash.
        if self.written(done).any(|p| p.preempts) {
            return false;
        }
        if let Some(own) = self.old.own_region()
            && self.written(done).map(|p| p.region).chain(torn).any(|r| r.overlaps(&own))
        {
            return false;
        }
        self.old.boot.iter().any(|b| {
            if hit(&b.region) {
                return false;
            }
            let rewritten = self
                .written(done)
                .any(|p| p.image_type() == b.region.section.image_type && p.region.same_place(&b.region));
            rewritten || (b.state != BootState::Bad && !self.written(done).any(|p| p.region.overlaps(&b.region)))
        })
    }

    /// Why no order was found, naming what each boot section of the image overwrites.
    fn explain(&self, gave_up: bool) -> String {
        if gave_up {
            return "the search for a safe write order gave up after too many states".to_owned();
        }
        let own = self.old.own_region();
        let mut parts = Vec::new();
        for p in self.writes.iter().filter(|p| BOOT_TYPES.contains(&p.image_type())) {
            let mut hits: Vec<String> = self
                .old
                .boot
                .iter()
                .filter(|b| b.region.overlaps(&p.region))
                .map(|b| format!("the adapter's {}", b.region.section.image_type))
                .collect();
            if own.is_some_and(|o| o.overlaps(&p.region)) {
                hits.push("the adapter's flash directory".to_owned());
            }
            if !hits.is_empty() {
                parts.push(format!(
                    "the image's {} at {:#x}..{:#x} overwrites {}",
                    p.image_type(),
                    p.region.offset,
                    p.region.end(),
                    hits.join(" and ")
                ));
            }
        }
        let detail = if parts.is_empty() { String::new() } else { format!(" ({})", parts.join("; ")) };
        format!(
            "every order of the writes passes a moment where neither the adapter's directory nor the image's has a \
             boot section (0xa0/0xb0) that passes its CRC{detail}"
        )
    }
}

/// The depth-first search over bit sets of written pieces.
struct Search<'m, 'a> {
    model: &'m Model<'a>,
    /// States from which no safe completion exists.
    failed: HashSet<u64>,
    visited: usize,
    /// The order found so far (indices into `writes`).
    path: Vec<usize>,
}

impl Search<'_, '_> {
    fn from(&mut self, done: u64) -> bool {
        let n = self.model.writes.len();
        if done.count_ones() as usize == n {
            return true;
        }
        self.visited += 1;
        if self.visited >= SEARCH_LIMIT || self.failed.contains(&done) {
            return false;
        }
        for i in (0..n).filter(|i| done & (1 << i) == 0) {
            let next = done | (1 << i);
            let during =
                if Some(i) == self.model.dir { self.model.boots(done, None) } else { self.model.boots(done, Some(i)) };
            if during && self.model.boots(next, None) {
                self.path.push(i);
                if self.from(next) {
                    return true;
                }
                self.path.pop();
            }
        }
        self.failed.insert(done);
        false
    }
}
