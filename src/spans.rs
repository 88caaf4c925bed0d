//! A few byte spans standing for the bytes a batch touches in one buffer, for the checks of
//! the CPU against a batch in flight.
//!
//! A decoder's frame is one buffer holding its three planes, so one span would cover the
//! planes between the rows a batch touches: the rows of the luma plane below a superblock
//! row's loop filter lie between its luma and chroma bytes. Keeping a few spans apart (one per
//! plane and more) keeps such a check from meeting bytes the batch never touches. A span set
//! never loses a byte: when more spans are needed than it keeps, the two nearest merge.

/// How many spans a set keeps apart: a frame's three planes and one more.
const KEPT: usize = 4;

/// A superset of the bytes added since the last clear, as at most [`KEPT`] spans
/// (`start..end`, apart and unordered).
#[derive(Clone, Copy, Debug)]
pub struct Spans {
    spans: [(usize, usize); KEPT],
    len: usize,
}

impl Default for Spans {
    fn default() -> Spans {
        Spans {
            spans: [(0, 0); KEPT],
            len: 0,
        }
    }
}

impl Spans {
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Adds the bytes `lo..hi` (nothing where `hi <= lo`).
    pub fn add(&mut self, (lo, hi): (usize, usize)) {
        if hi <= lo {
            return;
        }
        // Most calls fall inside a span already (a block of a row begun, a reference's
        // window): nothing to merge.
        if self.spans[..self.len]
            .iter()
            .any(|&(s, e)| s <= lo && hi <= e)
        {
            return;
        }
        let (mut lo, mut hi) = (lo, hi);
        // Spans it meets or touches become part of it.
        let mut i = 0;
        while i < self.len {
            let (s, e) = self.spans[i];
            if s <= hi && lo <= e {
                (lo, hi) = (lo.min(s), hi.max(e));
                self.len -= 1;
                self.spans[i] = self.spans[self.len];
            } else {
                i += 1;
            }
        }
        if self.len == KEPT {
            // Full: the new span joins the one nearest to it, or the two nearest kept
            // spans merge, whichever gap is smaller.
            let gap = |a: (usize, usize), b: (usize, usize)| {
                if a.1 <= b.0 {
                    b.0 - a.1
                } else {
                    a.0 - b.1
                }
            };
            let mut best = (usize::MAX, KEPT, 0);
            for i in 0..KEPT {
                best = best.min((gap(self.spans[i], (lo, hi)), KEPT, i));
                for j in i + 1..KEPT {
                    best = best.min((gap(self.spans[i], self.spans[j]), i, j));
                }
            }
            let (_, i, j) = best;
            if i == KEPT {
                let (s, e) = self.spans[j];
                (lo, hi) = (lo.min(s), hi.max(e));
                self.len -= 1;
                self.spans[j] = self.spans[self.len];
            } else {
                let (a, b) = (self.spans[i], self.spans[j]);
                self.spans[i] = (a.0.min(b.0), a.1.max(b.1));
                self.len -= 1;
                self.spans[j] = self.spans[self.len];
            }
        }
        self.spans[self.len] = (lo, hi);
        self.len += 1;
    }

    /// Whether the bytes `lo..hi` meet the set.
    pub fn meets(&self, (lo, hi): (usize, usize)) -> bool {
        self.spans[..self.len]
            .iter()
            .any(|&(s, e)| lo < e && s < hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte by byte: what was added, as a bit per byte of a small buffer.
    fn bytes_of(spans: &[(usize, usize)], size: usize) -> Vec<bool> {
        let mut b = vec![false; size];
        for &(lo, hi) in spans {
            b[lo.min(size)..hi.min(size)]
                .iter_mut()
                .for_each(|x| *x = true);
        }
        b
    }

    #[test]
    fn planes_apart_stay_apart() {
        let mut s = Spans::default();
        // A superblock row's bytes in three planes of one buffer.
        s.add((1000, 2000));
        s.add((5000, 5500));
        s.add((7000, 7500));
        assert!(!s.meets((2000, 5000)), "bytes between the planes' rows");
        assert!(!s.meets((5500, 7000)));
        assert!(s.meets((1999, 2001)));
        assert!(s.meets((7499, 9000)));
        s.clear();
        assert!(s.len == 0 && !s.meets((0, usize::MAX)));
    }

    #[test]
    fn never_loses_a_byte_and_never_meets_far_from_every_span() {
        // A small generator: deterministic, no dependency.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        const SIZE: usize = 4096;
        for _ in 0..2000 {
            let mut s = Spans::default();
            let mut added = Vec::new();
            for _ in 0..1 + next(12) {
                let lo = next(SIZE);
                let hi = lo + next(200);
                s.add((lo, hi));
                added.push((lo, hi));
                // Every added byte meets the set.
                for &(lo, hi) in &added {
                    for b in lo..hi {
                        assert!(s.meets((b, b + 1)), "byte {b} of {added:?} lost");
                    }
                }
                assert!(s.len <= KEPT);
            }
            // With at most KEPT spans added apart, no byte outside them meets the set.
            let mut parts = added.clone();
            parts.sort_unstable();
            let mut merged: Vec<(usize, usize)> = Vec::new();
            for (lo, hi) in parts.into_iter().filter(|p| p.1 > p.0) {
                match merged.last_mut() {
                    Some(m) if lo <= m.1 => m.1 = m.1.max(hi),
                    _ => merged.push((lo, hi)),
                }
            }
            if merged.len() <= KEPT {
                let inside = bytes_of(&merged, SIZE + 256);
                for (b, &inside) in inside.iter().enumerate() {
                    assert_eq!(s.meets((b, b + 1)), inside, "byte {b} of {added:?}");
                }
            }
        }
    }
}
