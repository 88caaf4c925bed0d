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

/// A range of words that were written, to clear.
#[derive(Clone, Copy)]
struct Dirty {
    lo: usize,
    hi: usize,
}

impl Dirty {
    const CLEAN: Dirty = Dirty {
        lo: usize::MAX,
        hi: 0,
    };
    fn add(&mut self, lo: usize, hi: usize) {
        self.lo = self.lo.min(lo);
        self.hi = self.hi.max(hi);
    }
    fn zero(self, words: &mut [u64]) {
        let end = self.hi.min(words.len());
        if self.lo < end {
            words[self.lo..end].fill(0);
        }
    }
}

/// Claimed pixels of one region, at two resolutions. Blocks aligned to 4 pixels (as a
/// decoder's are, relative to the start of a registered plane) are tracked in 4x4-pixel
/// cells: an 8x8 block is two word operations. Other blocks are tracked byte by byte, and
/// mark the cells they touch as partly used, so that each kind sees the other.
struct RegionBits {
    id: u64,
    len: usize,
    /// The stride the cell maps are laid out for (0: none yet), and `ceil(2^64 / stride)`.
    cell_stride: usize,
    stride_magic: u64,
    /// Whether this batch claimed cells (the layout may change only while it has not).
    cells_used: bool,
    words_per_cell_row: usize,
    /// Cells covered by aligned blocks.
    full: Vec<u64>,
    /// Cells touched by unaligned blocks.
    partial: Vec<u64>,
    cells_dirty: Dirty,
    /// Bytes claimed by unaligned blocks.
    bytes: Vec<u64>,
    bytes_dirty: Dirty,
}

impl RegionBits {
    fn new(id: u64, len: usize) -> RegionBits {
        RegionBits {
            id,
            len,
            cell_stride: 0,
            stride_magic: 0,
            cells_used: false,
            words_per_cell_row: 0,
            full: Vec::new(),
            partial: Vec::new(),
            cells_dirty: Dirty::CLEAN,
            bytes: Vec::new(),
            bytes_dirty: Dirty::CLEAN,
        }
    }

    fn clear(&mut self) {
        self.cells_dirty.zero(&mut self.full);
        self.cells_dirty.zero(&mut self.partial);
        self.bytes_dirty.zero(&mut self.bytes);
        self.cells_dirty = Dirty::CLEAN;
        self.bytes_dirty = Dirty::CLEAN;
        self.cells_used = false;
    }

    /// Lays the cell maps out for `stride`.
    fn choose_stride(&mut self, stride: usize) {
        self.cell_stride = stride;
        self.stride_magic = (u64::MAX / stride as u64).wrapping_add(1);
        self.words_per_cell_row = stride.div_ceil(4).div_ceil(64) + 1;
        let cell_rows = (self.len / stride + 1).div_ceil(4) + 1;
        let words = cell_rows * self.words_per_cell_row;
        for map in [&mut self.full, &mut self.partial] {
            map.clear();
            map.resize(words, 0);
        }
        self.cells_dirty = Dirty::CLEAN;
    }

    /// `offset / cell_stride` without a division instruction (tens of cycles on server CPUs):
    /// with `m = ceil(2^64 / d)`, `(n * m) >> 64 == n / d` for every `n < 2^32` (regions are
    /// smaller than 2 GiB), since the error `n * (m - 2^64/d) / 2^64` stays below `1/d`.
    #[inline]
    fn row_of(&self, offset: usize) -> usize {
        debug_assert!(offset < 1 << 32);
        if self.cell_stride == 1 {
            return offset; // 2^64 does not fit the magic
        }
        ((offset as u128 * self.stride_magic as u128) >> 64) as usize
    }

    /// Bits `cx .. cx + count` of cell row `cy`: (first word, mask of it, mask of the next).
    fn cell_bits(&self, cy: usize, cx: usize, count: usize) -> (usize, u64, u64) {
        let w = cy * self.words_per_cell_row + cx / 64;
        let mask = ((1u128 << count) - 1) << (cx % 64);
        (w, mask as u64, (mask >> 64) as u64)
    }

    fn claim(&mut self, offset: usize, stride: isize, w: usize, h: usize) -> bool {
        // A negative stride covers the same bytes as the mirrored block with a positive one.
        let (offset, stride) = if stride < 0 {
            (
                (offset as isize + (h as isize - 1) * stride) as usize,
                stride.unsigned_abs(),
            )
        } else {
            (offset, stride as usize)
        };
        if stride == 0 {
            return self.claim_bytes(offset, 0, w, h);
        }
        if self.cell_stride != stride {
            if self.cells_used {
                // Another stride in the same batch: the cell maps cannot describe both.
                return false;
            }
            self.choose_stride(stride);
        }
        self.cells_used = true;
        let y = self.row_of(offset);
        let x = offset - y * stride;
        if x + w > stride {
            // Its rows wrap into the next row of the stride's grid: mark the whole cell rows
            // it touches as partly used (rare, so coarse is fine).
            for row in y / 4..=(y + h) / 4 {
                let at = row * self.words_per_cell_row;
                for word in &mut self.partial[at..at + self.words_per_cell_row] {
                    *word = !0;
                }
                self.cells_dirty.add(at, at + self.words_per_cell_row);
            }
            let free_of_aligned = (y / 4..=(y + h) / 4).all(|row| {
                let at = row * self.words_per_cell_row;
                self.full[at..at + self.words_per_cell_row]
                    .iter()
                    .all(|&v| v == 0)
            });
            return free_of_aligned && self.claim_bytes(offset, stride as isize, w, h);
        }
        let (cy, cx) = (y / 4, x / 4);
        if x % 4 == 0 && y % 4 == 0 && w % 4 == 0 && h % 4 == 0 {
            let count = w / 4;
            let mut free = true;
            for row in cy..cy + h / 4 {
                let (at, lo, hi) = self.cell_bits(row, cx, count);
                free &= (self.full[at] | self.partial[at]) & lo == 0;
                free &= hi == 0 || (self.full[at + 1] | self.partial[at + 1]) & hi == 0;
                self.full[at] |= lo;
                self.full[at + 1] |= hi;
            }
            let first = self.cell_bits(cy, cx, count).0;
            let last = self.cell_bits(cy + h / 4 - 1, cx, count).0;
            self.cells_dirty.add(first, last + 2);
            return free;
        }
        // Unaligned: the cells it touches must not be covered by aligned blocks, its bytes
        // must not be claimed by other unaligned blocks.
        let (cx_end, cy_end) = ((x + w - 1) / 4 + 1, (y + h - 1) / 4 + 1);
        let count = cx_end - cx;
        let mut free = true;
        for row in cy..cy_end {
            let (at, lo, hi) = self.cell_bits(row, cx, count);
            free &= self.full[at] & lo == 0 && (hi == 0 || self.full[at + 1] & hi == 0);
            self.partial[at] |= lo;
            self.partial[at + 1] |= hi;
        }
        let first = self.cell_bits(cy, cx, count).0;
        let last = self.cell_bits(cy_end - 1, cx, count).0;
        self.cells_dirty.add(first, last + 2);
        free && self.claim_bytes(offset, stride as isize, w, h)
    }

    fn claim_bytes(&mut self, offset: usize, stride: isize, w: usize, h: usize) -> bool {
        if self.bytes.is_empty() {
            // One spare word: a claim may spill into the word after the last byte.
            self.bytes = vec![0; self.len / 64 + 2];
        }
        let last = (offset as isize + (h as isize - 1) * stride) as usize;
        self.bytes_dirty
            .add(offset.min(last) / 64, offset.max(last) / 64 + 2);
        let mut free = true;
        for row in 0..h {
            let at = (offset as isize + row as isize * stride) as usize;
            free &= claim_bits(&mut self.bytes, at, w);
        }
        free
    }
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
            r.clear();
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
            self.regions.push(RegionBits::new(region, region_len));
            self.regions.len() - 1
        });
        self.last_region = at;
        &mut self.regions[at]
    }

    /// Claims a `w` x `h` block (w <= 64) of a region `region_len` bytes long, whose top-left
    /// byte is at `offset` from the region's start. On a conflict (or a second stride in the
    /// same batch) it returns false and leaves marks behind: the caller ends the segment and
    /// clears.
    pub fn claim_in_region(
        &mut self,
        region: u64,
        region_len: usize,
        offset: usize,
        stride: isize,
        w: usize,
        h: usize,
    ) -> bool {
        self.region_bits(region, region_len)
            .claim(offset, stride, w, h)
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
    use std::collections::HashSet;

    /// splitmix64
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
    }

    fn bytes_of(offset: usize, stride: isize, w: usize, h: usize) -> Vec<usize> {
        (0..h)
            .flat_map(|r| (0..w).map(move |c| (offset as isize + r as isize * stride) as usize + c))
            .collect()
    }

    /// Shapes the kernels claim: transforms, MC blocks, loop-filter edges.
    const SHAPES: [(usize, usize); 12] = [
        (4, 4),
        (8, 8),
        (16, 16),
        (32, 32),
        (64, 64),
        (8, 4),
        (4, 8),
        (64, 32),
        (16, 8),
        (8, 16),
        (16, 16),
        (16, 64),
    ];

    /// A claim that succeeds never overlaps an earlier one (sound), whatever the blocks.
    #[test]
    fn never_misses_an_overlap() {
        let mut rng = Rng(5);
        for round in 0..300 {
            let mut occ = Occupancy::default();
            let len = 40_000;
            let stride = [64isize, 100, 37, 128][round % 4];
            let mut taken: HashSet<usize> = HashSet::new();
            for _ in 0..60 {
                let (w, h) = SHAPES[rng.below(SHAPES.len())];
                if w > stride as usize {
                    continue; // rows that overlap each other are never claimed
                }
                let s = if rng.below(10) == 0 { -stride } else { stride };
                let max = len - (h - 1) * stride as usize - w;
                let mut offset = rng.below(max);
                if s < 0 {
                    offset += (h - 1) * stride as usize;
                }
                let bytes = bytes_of(offset, s, w, h);
                let overlaps = bytes.iter().any(|b| taken.contains(b));
                if occ.claim_in_region(1, len, offset, s, w, h) {
                    assert!(!overlaps, "round {round}: missed an overlap");
                    taken.extend(bytes);
                } else {
                    // The batch would end here: start a new one with this block.
                    occ.clear();
                    taken.clear();
                    assert!(
                        occ.claim_in_region(1, len, offset, s, w, h),
                        "a fresh batch takes any block"
                    );
                    taken.extend(bytes_of(offset, s, w, h));
                }
            }
        }
    }

    /// Blocks aligned to their 4-pixel grid, as a decoder issues them, conflict exactly when
    /// they overlap.
    #[test]
    fn aligned_blocks_are_exact() {
        let mut rng = Rng(6);
        let stride = 256usize;
        let len = stride * 256;
        for _ in 0..200 {
            let mut occ = Occupancy::default();
            let mut taken: HashSet<usize> = HashSet::new();
            for _ in 0..80 {
                let (w, h) = SHAPES[rng.below(SHAPES.len())];
                let (x, y) = (
                    rng.below((stride - w) / 4) * 4,
                    rng.below((256 - h) / 4) * 4,
                );
                let offset = y * stride + x;
                let bytes = bytes_of(offset, stride as isize, w, h);
                let overlaps = bytes.iter().any(|b| taken.contains(b));
                assert_eq!(
                    occ.claim_in_region(7, len, offset, stride as isize, w, h),
                    !overlaps
                );
                if overlaps {
                    occ.clear();
                    taken.clear();
                    assert!(occ.claim_in_region(7, len, offset, stride as isize, w, h));
                }
                taken.extend(bytes);
            }
        }
    }

    #[test]
    fn row_of_divides_exactly() {
        let mut rng = Rng(8);
        let mut bits = RegionBits::new(0, 1 << 31);
        for d in (1..300).chain([1920, 1984, 4096, 7680, 65535, 1 << 20, (1 << 31) - 1]) {
            bits.cell_stride = d;
            bits.stride_magic = (u64::MAX / d as u64).wrapping_add(1);
            let edges = [
                0,
                1,
                d - 1,
                d,
                d + 1,
                (1 << 32) - 1,
                ((1usize << 32) - 1) / d * d,
            ];
            let random = (0..200).map(|_| rng.below(1 << 32));
            for n in edges.into_iter().chain(random).filter(|&n| n < 1 << 32) {
                assert_eq!(bits.row_of(n), n / d, "{n} / {d}");
            }
        }
    }

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
