//! The order of the calls inside one batch.
//!
//! FFmpeg runs its functions one after the other; a batch runs many at once. Each call in
//! place gets a level: one more than the level of every pending call whose pixels it must come
//! after (it reads what that call writes, or writes what that call reads or writes). The GPU
//! runs the levels in order with a barrier between them, and the calls of one level in
//! parallel, which gives FFmpeg's result in one submission: motion compensation (level 0)
//! before the transform that adds to its pixels (level 1), a superblock's loop-filter columns
//! before its rows, superblock after superblock as a wavefront.
//!
//! Levels are kept per 4x4-pixel cell of a registered region, for the region's stride (a
//! decoder's plane). A block that is not aligned to the cells takes every cell it touches,
//! which can only add levels. A call with another stride than the region's pending calls
//! cannot be placed: the batch is completed first.

/// Levels one batch may use; a call that would need more completes the batch first.
pub const MAX_LEVELS: u32 = 1024;

/// What a call does to a rectangle of pixels.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Access {
    /// Reads only (a motion compensation's source).
    Read,
    /// Reads and writes (every destination: transforms add, loop filters and averaging
    /// predictions read what they write).
    Write,
}

/// Where a call has to go.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Need {
    /// The lowest level the call may take.
    pub level: u32,
    /// It depends on a pending transform that may be redone on the CPU after the submission
    /// (FFmpeg's function, for a block whose 16-bit lanes overflow): it cannot be ordered after
    /// it inside the submission.
    pub after_cpu_redo: bool,
}

/// A `w` x `h` block at `offset` bytes into registered region `region` (`region_len` bytes
/// long), rows `stride` apart.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    pub region: u64,
    pub region_len: usize,
    pub offset: usize,
    pub stride: isize,
    pub w: usize,
    pub h: usize,
}

/// Cells `cx0..cx1` of rows `cy0..cy1`.
#[derive(Clone, Copy)]
struct Cells {
    cy0: usize,
    cy1: usize,
    cx0: usize,
    cx1: usize,
}

struct RegionLevels {
    id: u64,
    len: usize,
    /// The stride the cells are laid out for (0: none yet), and `ceil(2^64 / stride)`.
    stride: usize,
    stride_magic: u64,
    /// The layout may change only while the batch has not used it.
    used: bool,
    cols: usize,
    /// Per cell: the stamp of its last write, times two, plus one if that write may be redone
    /// on the CPU after the submission; and the stamp of its latest read or write.
    write: Vec<u32>,
    read: Vec<u32>,
}

impl RegionLevels {
    fn new(id: u64, len: usize) -> RegionLevels {
        RegionLevels {
            id,
            len,
            stride: 0,
            stride_magic: 0,
            used: false,
            cols: 0,
            write: Vec::new(),
            read: Vec::new(),
        }
    }

    fn choose_stride(&mut self, stride: usize) {
        self.stride = stride;
        self.stride_magic = (u64::MAX / stride as u64).wrapping_add(1);
        self.cols = stride.div_ceil(4) + 1;
        let rows = (self.len / stride + 1).div_ceil(4) + 1;
        self.write = vec![0; rows * self.cols];
        self.read = vec![0; rows * self.cols];
    }

    /// `offset / stride` without a division instruction: with `m = ceil(2^64 / d)`,
    /// `(n * m) >> 64 == n / d` for every `n < 2^32` (regions are smaller than 4 GiB), since
    /// the error `n * (m - 2^64/d) / 2^64` stays below `1/d`.
    #[inline]
    fn row_of(&self, offset: usize) -> usize {
        debug_assert!(offset < 1 << 32);
        if self.stride == 1 {
            return offset; // 2^64 does not fit the magic
        }
        ((offset as u128 * self.stride_magic as u128) >> 64) as usize
    }

    /// The cells a `w` x `h` block at `offset` touches; `None` if the region is laid out for
    /// another stride in this batch.
    fn cells(&mut self, offset: usize, stride: isize, w: usize, h: usize) -> Option<Cells> {
        // A negative stride covers the same bytes as the mirrored block with a positive one.
        let (offset, stride) = if stride < 0 {
            (
                (offset as isize + (h as isize - 1) * stride) as usize,
                stride.unsigned_abs(),
            )
        } else {
            (offset, stride as usize)
        };
        if stride == 0 || w == 0 || h == 0 {
            return None;
        }
        if self.stride != stride {
            if self.used {
                return None;
            }
            self.choose_stride(stride);
        }
        self.used = true;
        let y = self.row_of(offset);
        let x = offset - y * stride;
        let (cy0, cy1) = (y / 4, (y + h - 1) / 4 + 1);
        if x + w > stride {
            // Its rows wrap into the next row of the grid: whole cell rows (rare).
            return Some(Cells {
                cy0,
                cy1: cy1 + 1,
                cx0: 0,
                cx1: self.cols,
            });
        }
        Some(Cells {
            cy0,
            cy1,
            cx0: x / 4,
            cx1: (x + w - 1) / 4 + 1,
        })
    }
}

/// The levels of one batch's calls in place.
#[derive(Default)]
pub struct Levels {
    regions: Vec<RegionLevels>,
    last: usize,
    /// Stamps above `base` belong to this batch: stamp `base + 1 + level`.
    base: u32,
    /// The highest stamp given out.
    top: u32,
}

impl Levels {
    /// Starts a new batch: every earlier stamp is forgotten without touching the maps, until
    /// the stamps run out.
    pub fn clear(&mut self) {
        if self.top >= 1 << 30 {
            for r in &mut self.regions {
                r.write.fill(0);
                r.read.fill(0);
            }
            self.top = 0;
        }
        self.base = self.top;
        for r in &mut self.regions {
            r.used = false;
        }
    }

    /// Forgets regions that are no longer registered.
    pub fn retain_regions(&mut self, live: impl Fn(u64) -> bool) {
        self.regions.retain(|r| live(r.id));
        self.last = 0;
    }

    fn region(&mut self, id: u64, len: usize) -> &mut RegionLevels {
        let hit = match self.regions.get(self.last) {
            Some(r) if r.id == id => Some(self.last),
            _ => self.regions.iter().position(|r| r.id == id),
        };
        let at = hit.unwrap_or_else(|| {
            self.regions.push(RegionLevels::new(id, len));
            self.regions.len() - 1
        });
        self.last = at;
        &mut self.regions[at]
    }

    /// Where a call that does `access` to `b` may go; `None` when the region is laid out for
    /// another stride.
    pub fn need(&mut self, b: &Block, access: Access) -> Option<Need> {
        let base = self.base;
        let r = self.region(b.region, b.region_len);
        let c = r.cells(b.offset, b.stride, b.w, b.h)?;
        let mut after = 0u32; // highest stamp to come after
        let mut redo = false;
        for cy in c.cy0..c.cy1 {
            let row = cy * r.cols;
            for i in row + c.cx0..row + c.cx1 {
                let written = r.write[i];
                after = after.max(written >> 1);
                redo |= written & 1 != 0 && written >> 1 > base;
                if access == Access::Write {
                    after = after.max(r.read[i]);
                }
            }
        }
        Some(Need {
            level: after.saturating_sub(base),
            after_cpu_redo: redo,
        })
    }

    /// Records that a call at `level` does `access` to `b` (placed by [`Levels::need`]).
    /// `cpu_redo`: the call may be redone on the CPU after the submission.
    pub fn mark(&mut self, b: &Block, access: Access, level: u32, cpu_redo: bool) {
        let stamp = self.base + 1 + level;
        self.top = self.top.max(stamp);
        let r = self.region(b.region, b.region_len);
        let Some(c) = r.cells(b.offset, b.stride, b.w, b.h) else {
            debug_assert!(false, "marked a block that `need` refused");
            return;
        };
        for cy in c.cy0..c.cy1 {
            let row = cy * r.cols;
            for i in row + c.cx0..row + c.cx1 {
                r.read[i] = r.read[i].max(stamp);
                if access == Access::Write {
                    r.write[i] = stamp << 1 | cpu_redo as u32;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{bytes_of, Rng};
    use std::collections::HashMap;

    fn blk(
        region: u64,
        region_len: usize,
        offset: usize,
        stride: isize,
        w: usize,
        h: usize,
    ) -> Block {
        Block {
            region,
            region_len,
            offset,
            stride,
            w,
            h,
        }
    }

    const SHAPES: [(usize, usize); 10] = [
        (4, 4),
        (8, 8),
        (16, 16),
        (32, 32),
        (64, 64),
        (8, 4),
        (4, 8),
        (16, 8),
        (8, 16),
        (3, 5),
    ];

    /// Every pair of calls that touch a common byte (and not both only reading it) runs in
    /// FFmpeg's order: the later one gets a higher level. Byte by byte, brute force.
    #[test]
    fn levels_keep_every_dependency() {
        let mut rng = Rng(11);
        for round in 0..200 {
            let mut levels = Levels::default();
            let len = 30_000;
            let stride = [64isize, 100, 37, 128][round % 4];
            for batch in 0..3 {
                levels.clear();
                // byte -> (level of its last write, highest level reading or writing it)
                let mut bytes: HashMap<usize, (Option<u32>, u32)> = HashMap::new();
                for _ in 0..50 {
                    let (w, h) = SHAPES[rng.below(SHAPES.len())];
                    if w > stride as usize {
                        continue;
                    }
                    let s = if rng.below(10) == 0 { -stride } else { stride };
                    let max = len - (h - 1) * stride as usize - w;
                    let mut offset = rng.below(max);
                    if s < 0 {
                        offset += (h - 1) * stride as usize;
                    }
                    let access = if rng.below(3) == 0 {
                        Access::Read
                    } else {
                        Access::Write
                    };
                    let b = blk(1, len, offset, s, w, h);
                    let need = levels.need(&b, access).expect("one stride per region");
                    for b in bytes_of(offset, s, w, h) {
                        if let Some(&(write, touch)) = bytes.get(&b) {
                            if let Some(wl) = write {
                                assert!(need.level > wl, "round {round}/{batch}: read after write");
                            }
                            if access == Access::Write {
                                assert!(need.level > touch, "round {round}/{batch}: overwrite");
                            }
                        }
                    }
                    levels.mark(&b, access, need.level, false);
                    for b in bytes_of(offset, s, w, h) {
                        let e = bytes.entry(b).or_insert((None, 0));
                        e.1 = e.1.max(need.level);
                        if access == Access::Write {
                            e.0 = Some(need.level);
                        }
                    }
                }
            }
        }
    }

    /// Aligned blocks that do not overlap share level 0; MC then transform then loop filter
    /// on the same pixels take three levels; reads alone never raise a level.
    #[test]
    fn decoder_shapes_take_few_levels() {
        let mut l = Levels::default();
        let (len, stride) = (256 * 256, 256isize);
        let at = |l: &mut Levels, x: usize, y: usize, w, h, a| {
            let off = y * 256 + x;
            let b = blk(3, len, off, stride, w, h);
            let n = l.need(&b, a).unwrap();
            l.mark(&b, a, n.level, false);
            n.level
        };
        for by in 0..4 {
            for bx in 0..4 {
                assert_eq!(at(&mut l, bx * 16, by * 16, 16, 16, Access::Write), 0);
            }
        }
        assert_eq!(at(&mut l, 0, 0, 8, 8, Access::Write), 1); // transform on an MC block
        assert_eq!(at(&mut l, 4, 0, 8, 8, Access::Write), 2); // edge across both
        assert_eq!(at(&mut l, 100, 100, 64, 64, Access::Read), 0);
        assert_eq!(at(&mut l, 100, 100, 64, 64, Access::Read), 0);
        assert_eq!(at(&mut l, 120, 120, 8, 8, Access::Write), 1); // after the reads
        l.clear();
        assert_eq!(at(&mut l, 0, 0, 64, 64, Access::Write), 0, "a new batch");
    }

    #[test]
    fn another_stride_is_refused_until_the_next_batch() {
        let mut l = Levels::default();
        assert!(l.need(&blk(1, 4096, 0, 64, 8, 8), Access::Write).is_some());
        assert!(l.need(&blk(1, 4096, 0, 32, 8, 8), Access::Write).is_none());
        l.clear();
        assert!(l.need(&blk(1, 4096, 0, 32, 8, 8), Access::Write).is_some());
    }

    #[test]
    fn cpu_redo_is_reported_within_the_batch_only() {
        let mut l = Levels::default();
        let b = blk(1, 4096, 0, 64, 8, 8);
        let n = l.need(&b, Access::Write).unwrap();
        l.mark(&b, Access::Write, n.level, true);
        let read = |l: &mut Levels, offset| l.need(&blk(1, 4096, offset, 64, 8, 8), Access::Read);
        assert!(read(&mut l, 4).unwrap().after_cpu_redo);
        assert!(!read(&mut l, 8).unwrap().after_cpu_redo);
        l.clear();
        assert!(!read(&mut l, 4).unwrap().after_cpu_redo);
    }

    #[test]
    fn row_of_divides_exactly() {
        let mut rng = Rng(8);
        let mut r = RegionLevels::new(0, 1 << 31);
        for d in (1..300).chain([1920, 1984, 4096, 7680, 65535, 1 << 20, (1 << 31) - 1]) {
            r.stride = d;
            r.stride_magic = (u64::MAX / d as u64).wrapping_add(1);
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
                assert_eq!(r.row_of(n), n / d, "{n} / {d}");
            }
        }
    }
}
