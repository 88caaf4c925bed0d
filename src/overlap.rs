//! Exact detection of calls in one batch that touch the same pixel.
//!
//! FFmpeg's functions run one after the other; a batch runs its calls in parallel. That is
//! the same only while no two calls of the batch touch a common byte, so the batch keeps a
//! bitmap of the bytes it has claimed and ends where a call would touch a claimed byte (the
//! rest runs after, in order). Bytes inside a registered region are tracked in a bitmap per
//! region (no hashing); other bytes in a bitmap per 4 KiB page.

use std::collections::HashMap;

const PAGE_BITS: usize = 4096;
const PAGE_WORDS: usize = PAGE_BITS / 64;

/// Sets bits `bit .. bit + n` (n <= 32) of `words`; false if any was set already.
#[inline]
fn claim_bits(words: &mut [u64], bit: usize, n: usize) -> bool {
    let w = bit / 64;
    let mask = ((1u128 << n) - 1) << (bit % 64);
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

/// Claimed bytes of one region; `dirty` bounds the words to clear.
struct RegionBits {
    id: u64,
    words: Vec<u64>,
    dirty_lo: usize,
    dirty_hi: usize,
}

#[derive(Default)]
pub struct Occupancy {
    /// Few regions take part in one flush: a list, searched from the last one used.
    regions: Vec<RegionBits>,
    last_region: usize,
    pages: HashMap<usize, usize>,
    page_words: Vec<[u64; PAGE_WORDS + 1]>,
    pages_used: usize,
}

impl Occupancy {
    pub fn clear(&mut self) {
        for r in &mut self.regions {
            if r.dirty_lo < r.dirty_hi {
                r.words[r.dirty_lo..r.dirty_hi].fill(0);
            }
            r.dirty_lo = usize::MAX;
            r.dirty_hi = 0;
        }
        for p in &mut self.page_words[..self.pages_used] {
            p.fill(0);
        }
        self.pages.clear();
        self.pages_used = 0;
    }

    /// Forgets regions that are no longer registered.
    pub fn retain_regions(&mut self, live: impl Fn(u64) -> bool) {
        self.regions.retain(|r| live(r.id));
        self.last_region = 0;
    }

    fn region_bits(&mut self, region: u64, region_len: usize) -> &mut RegionBits {
        let hit = match self.regions.get(self.last_region) {
            Some(r) if r.id == region => Some(self.last_region),
            _ => self.regions.iter().position(|r| r.id == region),
        };
        let at = hit.unwrap_or_else(|| {
            self.regions.push(RegionBits {
                id: region,
                // One spare word: a claim may spill into the word after the last byte.
                words: vec![0; region_len / 64 + 2],
                dirty_lo: usize::MAX,
                dirty_hi: 0,
            });
            self.regions.len() - 1
        });
        self.last_region = at;
        &mut self.regions[at]
    }

    /// Claims an `n` x `n` block (n <= 32) of a region `region_len` bytes long, whose top-left
    /// byte is at `offset` from the region's start.
    pub fn claim_in_region(
        &mut self,
        region: u64,
        region_len: usize,
        offset: usize,
        stride: isize,
        n: usize,
    ) -> bool {
        let bits = self.region_bits(region, region_len);
        for row in 0..n {
            let at = (offset as isize + row as isize * stride) as usize;
            if !claim_bits(&mut bits.words, at, n) {
                return false;
            }
            bits.dirty_lo = bits.dirty_lo.min(at / 64);
            bits.dirty_hi = bits.dirty_hi.max(at / 64 + 2);
        }
        true
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

    /// Claims an `n` x `n` block at any address.
    pub fn claim_anywhere(&mut self, dst: usize, stride: isize, n: usize) -> bool {
        for row in 0..n {
            let mut at = (dst as isize + row as isize * stride) as usize;
            let mut left = n;
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
