//! Gather from and scatter into a list of local buffers (SGEs) through the environment.

use super::{Access, Env, MemError, MemRef, Sge};

/// Total bytes the SGEs cover.
pub(crate) fn total(sges: &[Sge]) -> u64 {
    sges.iter().map(|s| u64::from(s.len)).sum()
}

/// Splits [offset, offset + len) of the list into (sge, offset within it, length) pieces.
fn pieces(sges: &[Sge], mut offset: u64, len: usize) -> impl Iterator<Item = (Sge, u64, usize)> + '_ {
    let mut left = len;
    sges.iter().filter_map(move |s| {
        let sl = u64::from(s.len);
        if left == 0 {
            return None;
        }
        if offset >= sl {
            offset -= sl;
            return None;
        }
        let n = usize::try_from(sl - offset).unwrap_or(usize::MAX).min(left);
        let piece = (*s, offset, n);
        offset = 0;
        left -= n;
        Some(piece)
    })
}

/// Reads `buf.len()` bytes starting `offset` bytes into the list. The caller checked the
/// list is long enough.
pub(crate) fn gather<E: Env>(env: &mut E, pd: u32, sges: &[Sge], offset: u64, buf: &mut [u8]) -> Result<(), MemError> {
    let mut at = 0;
    for (s, off, n) in pieces(sges, offset, buf.len()) {
        let mem = MemRef { key: s.lkey, pd, va: s.addr.wrapping_add(off), len: n, access: Access::LocalRead };
        env.read(mem, &mut buf[at..at + n])?;
        at += n;
    }
    Ok(())
}

/// Writes `data` starting `offset` bytes into the list, with LOCAL_WRITE access. The caller
/// checked the list is long enough.
pub(crate) fn scatter<E: Env>(env: &mut E, pd: u32, sges: &[Sge], offset: u64, data: &[u8]) -> Result<(), MemError> {
    let mut at = 0;
    for (s, off, n) in pieces(sges, offset, data.len()) {
        let mem = MemRef { key: s.lkey, pd, va: s.addr.wrapping_add(off), len: n, access: Access::LocalWrite };
        env.write(mem, &data[at..at + n])?;
        at += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_skip_the_offset_and_span_sges() {
        let s = |addr, len| Sge { addr, len, lkey: 1 };
        let list = [s(100, 4), s(200, 3), s(300, 10)];
        let got: Vec<_> = pieces(&list, 2, 6).map(|(s, o, n)| (s.addr, o, n)).collect();
        assert_eq!(got, vec![(100, 2, 2), (200, 0, 3), (300, 0, 1)]);
        let got: Vec<_> = pieces(&list, 7, 3).map(|(s, o, n)| (s.addr, o, n)).collect();
        assert_eq!(got, vec![(300, 0, 3)]);
        assert_eq!(total(&list), 17);
    }
}
