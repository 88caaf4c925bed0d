//! Exact detection of copied blocks in one batch that touch the same pixel.
//!
//! A block outside every imported region travels through the staging buffer: copied in before
//! the submission, back after it. Two such blocks that share a byte would each bring back
//! their own copy, so the batch keeps a bitmap of the bytes its copied blocks claim (per 4 KiB
//! page) and ends where a block would touch a claimed byte. Blocks in place are ordered by
//! `levels` instead.

use std::collections::HashMap;

const PAGE_BITS: usize = 4096;
const PAGE_WORDS: usize = PAGE_BITS / 64;

/// Sets bits `bit .. bit + n` (n <= 64) of `words`; false if any was set already.
#[inline]
fn claim_bits(words: &mut [u64], bit: usize, n: usize) -> bool {
    let w = bit / 64;
    let shift = bit % 64;
    if shift + n <= 64 && n < 64 {
        // The common case: the row's bits lie in one word.
        let mask = ((1u64 << n) - 1) << shift;
        let word = &mut words[w];
        let free = *word & mask == 0;
        *word |= mask;
        return free;
    }
    let mask = ((1u128 << n) - 1) << shift;
    let (lo, hi) = (mask as u64, (mask >> 64) as u64);
    if words[w] & lo != 0 || (hi != 0 && words[w + 1] & hi != 0) {
        return false;
    }
    words[w] |= lo;
    if hi != 0 {
        words[w + 1] |= hi;
    }
    true
}

#[derive(Default)]
pub struct Occupancy {
    pages: HashMap<usize, usize>,
    page_words: Vec<[u64; PAGE_WORDS + 1]>,
    pages_used: usize,
}

impl Occupancy {
    pub fn clear(&mut self) {
        for p in &mut self.page_words[..self.pages_used] {
            p.fill(0);
        }
        self.pages.clear();
        self.pages_used = 0;
    }

    fn page(&mut self, number: usize) -> usize {
        if let Some(&i) = self.pages.get(&number) {
            return i;
        }
        if self.pages_used == self.page_words.len() {
            self.page_words.push([0; PAGE_WORDS + 1]);
        }
        let i = self.pages_used;
        self.pages_used += 1;
        self.pages.insert(number, i);
        i
    }

    /// Claims a `w` x `h` block (w <= 64) at any address.
    pub fn claim_anywhere(&mut self, dst: usize, stride: isize, w: usize, h: usize) -> bool {
        for row in 0..h {
            let mut at = (dst as isize + row as isize * stride) as usize;
            let mut left = w;
            while left > 0 {
                let in_page = (PAGE_BITS - at % PAGE_BITS).min(left);
                let p = self.page(at / PAGE_BITS);
                if !claim_bits(&mut self.page_words[p], at % PAGE_BITS, in_page) {
                    return false;
                }
                at += in_page;
                left -= in_page;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{bytes_of, Rng};
    use std::collections::HashSet;

    const SHAPES: [(usize, usize); 6] = [(4, 4), (8, 8), (16, 16), (64, 64), (8, 4), (16, 64)];

    #[test]
    fn pages_are_exact() {
        let mut rng = Rng(7);
        let mut occ = Occupancy::default();
        let mut taken: HashSet<usize> = HashSet::new();
        for _ in 0..3000 {
            let (w, h) = SHAPES[rng.below(SHAPES.len())];
            let dst = 0x10_0000 + rng.below(200_000);
            let stride = [4093isize, 300, -300][rng.below(3)];
            let bytes = bytes_of(dst, stride, w, h);
            let overlaps = bytes.iter().any(|b| taken.contains(b));
            assert_eq!(occ.claim_anywhere(dst, stride, w, h), !overlaps);
            if overlaps {
                occ.clear();
                taken.clear();
                assert!(occ.claim_anywhere(dst, stride, w, h));
            }
            taken.extend(bytes);
        }
    }
}
