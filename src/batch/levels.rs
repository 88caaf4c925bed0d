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
//! Each call in place also gets a serial, and each cell remembers the serials of the pending
//! calls that last wrote and last read it: what a later call on it must come after, and what a
//! reader of the decoder asks about before it reads (`pending_on`: where a pending call may
//! touch its pixels, the batch completes first).
//!
//! A region that the batch has not written (a reference frame) keeps no cells for its reads:
//! a read there comes after nothing pending, and most of the cells a decoder's calls touch are
//! those of motion compensation's source windows. A line's read (a one-line copy out of the
//! frame being decoded) keeps its few cells anyway, so that its bytes do not join the region's
//! spans of unmarked reads, which merge across rows and planes.
//!
//! The cells (4x4 pixels each, eight bytes: the two serials, the levels kept per call) cover
//! a registered region, laid out for the stride of the calls there (a decoder's plane; a
//! region holding a whole picture gets one grid of cells for its luma stride and one for its
//! chroma stride). A block that is not aligned to the cells takes every cell it touches, which
//! can only add levels. A call at a stride whose cells cannot tell its conflicts (its bytes
//! meet those of pending calls at another stride, or the region has no grid left for it)
//! cannot be placed: the batch is completed first.

use crate::spans::Spans;

/// Levels one batch may use; a call that would need more completes the batch first.
pub const MAX_LEVELS: u32 = 1024;

/// A cell's reader word with this bit: another pending call read it too (since its last write).
const MANY_READERS: u32 = 1 << 31;

/// Whether a reader word says that several calls of this batch read the cell.
fn many_readers(l: &Levels, reader: u32) -> bool {
    reader & MANY_READERS != 0 && l.in_batch(reader & !MANY_READERS)
}

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

impl Block {
    /// The bytes from its lowest to its highest, as offsets in the region (`lo .. hi`).
    fn bytes(&self) -> (usize, usize) {
        let last_row = (self.h.max(1) - 1) as isize * self.stride;
        let first = (self.offset as isize).min(self.offset as isize + last_row);
        let first = first.max(0) as usize;
        (first, first + last_row.unsigned_abs() + self.w)
    }
}

/// No bytes: meets nothing.
const NO_BYTES: (usize, usize) = (usize::MAX, 0);

fn meets(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Cells `cx0..cx1` of rows `cy0..cy1`.
#[derive(Clone, Copy)]
struct Cells {
    cy0: usize,
    cy1: usize,
    cx0: usize,
    cx1: usize,
}

/// What one 4x4 cell remembers of this batch's calls: two serials, whose levels the batch
/// keeps per call. Eight bytes, so that a frame's cells take few cache lines: a batch's
/// first calls on a frame find them cold.
#[derive(Clone, Copy, Default)]
struct Cell {
    /// The serial of the call that wrote it last.
    writer: u32,
    /// The serial of the latest call that read or wrote it (see [`MANY_READERS`]): with the
    /// writer, the calls a later write there must come after.
    reader: u32,
}

/// What the batch keeps of each of its calls.
#[derive(Clone, Copy, Default)]
struct CallState {
    level: u32,
    /// It writes pixels that may be redone on the CPU after the submission.
    cpu_redo: bool,
}

/// A region's cells for one stride.
struct Grid {
    /// The stride the cells are laid out for, and `ceil(2^64 / stride)`.
    stride: usize,
    stride_magic: u64,
    /// The layout may change only while the batch has not used it.
    used: bool,
    /// The bytes (`lo .. hi`, offsets in the region) of this batch's calls on these cells:
    /// a call at another stride may use cells of its own only where it meets none of them.
    span: (usize, usize),
    cols: usize,
    /// One per cell, row by row (one memory access per cell).
    cells: Vec<Cell>,
}

impl Grid {
    /// A grid for `stride` over a region of `len` bytes, on the cells of a freed grid where
    /// `spare` has one: their stale stamps and serials are of earlier batches, which every
    /// lookup ignores, so they need no clearing (and fresh pages no faulting in).
    fn new(stride: usize, len: usize, spare: &mut Vec<Vec<Cell>>) -> Grid {
        let cols = stride.div_ceil(4) + 1;
        let rows = (len / stride + 1).div_ceil(4) + 1;
        let mut cells = spare.pop().unwrap_or_default();
        cells.resize(rows * cols, Cell::default());
        Grid {
            stride,
            stride_magic: (u64::MAX / stride as u64).wrapping_add(1),
            used: false,
            span: NO_BYTES,
            cols,
            cells,
        }
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

    /// The cells a `w` x `h` block at `offset` (rows `self.stride` apart) touches.
    fn cells(&self, offset: usize, w: usize, h: usize) -> Cells {
        let stride = self.stride;
        let y = self.row_of(offset);
        let x = offset - y * stride;
        let (cy0, cy1) = (y / 4, (y + h - 1) / 4 + 1);
        if x + w > stride {
            // Its rows wrap into the next row of the grid: whole cell rows (rare).
            return Cells {
                cy0,
                cy1: cy1 + 1,
                cx0: 0,
                cx1: self.cols,
            };
        }
        Cells {
            cy0,
            cy1,
            cx0: x / 4,
            cx1: (x + w - 1) / 4 + 1,
        }
    }
}

/// Strides one region may be laid out for in one batch: a picture's luma and chroma planes
/// in one buffer (dav1d's pictures from FFmpeg's allocator) need two.
const MAX_GRIDS: usize = 3;

struct RegionLevels {
    id: u64,
    len: usize,
    /// The region's cells, one grid per stride its calls use (at most [`MAX_GRIDS`]).
    grids: Vec<Grid>,
    /// This batch wrote the region (its cells hold the writes and every later read).
    written: bool,
    /// The bytes (offsets in the region, as a few spans: a region may hold a frame's three
    /// planes) that calls of this batch read before any wrote the region: such reads (a
    /// motion compensation's reference frame) keep no cells, since nothing pending writes
    /// there. A write that meets these bytes cannot tell which cells they read.
    unmarked: Spans,
    /// The highest stamp among those reads.
    unmarked_stamp: u32,
}

/// A block's bytes in its region with a positive stride: `(offset, stride)` of the mirrored
/// block for a negative one (it covers the same bytes); `None` for an empty block.
fn positive(offset: usize, stride: isize, w: usize, h: usize) -> Option<(usize, usize)> {
    let (offset, stride) = if stride < 0 {
        (
            (offset as isize + (h as isize - 1) * stride) as usize,
            stride.unsigned_abs(),
        )
    } else {
        (offset, stride as usize)
    };
    (stride != 0 && w != 0 && h != 0).then_some((offset, stride))
}

impl RegionLevels {
    fn new(id: u64, len: usize) -> RegionLevels {
        RegionLevels {
            id,
            len,
            grids: Vec::new(),
            written: false,
            unmarked: Spans::default(),
            unmarked_stamp: 0,
        }
    }

    /// Whether a block at `stride` over `bytes` meets the calls of this batch on the grids
    /// of other strides (their cells cannot tell what it conflicts with).
    fn meets_other_grids(&self, stride: usize, bytes: (usize, usize)) -> bool {
        self.grids
            .iter()
            .any(|g| g.used && g.stride != stride && meets(g.span, bytes))
    }

    /// The grid and cells of a `w` x `h` block at `offset`, claiming them for this batch
    /// (laying out a grid for its stride if needed); `None` where that cannot be: the block
    /// meets bytes of this batch's calls at another stride, or the region has no grid left.
    fn claim(
        &mut self,
        spare: &mut Vec<Vec<Cell>>,
        offset: usize,
        stride: isize,
        w: usize,
        h: usize,
    ) -> Option<(usize, Cells)> {
        let (offset, stride) = positive(offset, stride, w, h)?;
        let bytes = (offset, offset + (h - 1) * stride + w);
        if self.meets_other_grids(stride, bytes) {
            return None;
        }
        let g = match self.grids.iter().position(|g| g.stride == stride) {
            Some(g) => g,
            None => match self.grids.iter().position(|g| !g.used) {
                Some(g) => {
                    let new = Grid::new(stride, self.len, spare);
                    let old = std::mem::replace(&mut self.grids[g], new);
                    spare.push(old.cells);
                    g
                }
                None if self.grids.len() < MAX_GRIDS => {
                    self.grids.push(Grid::new(stride, self.len, spare));
                    self.grids.len() - 1
                }
                None => return None,
            },
        };
        let grid = &mut self.grids[g];
        grid.used = true;
        grid.span = (grid.span.0.min(bytes.0), grid.span.1.max(bytes.1));
        Some((g, grid.cells(offset, w, h)))
    }

    /// [`RegionLevels::claim`] without claiming: `Ok(None)` where no call of this batch is
    /// on the block's cells, `Err(())` where the cells cannot tell.
    fn look(
        &self,
        offset: usize,
        stride: isize,
        w: usize,
        h: usize,
    ) -> Result<Option<(usize, Cells)>, ()> {
        let Some((offset, stride)) = positive(offset, stride, w, h) else {
            // No bytes: nothing pending there. Rows at stride 0: no grid can tell.
            return if w == 0 || h == 0 { Ok(None) } else { Err(()) };
        };
        let bytes = (offset, offset + (h - 1) * stride + w);
        if self.meets_other_grids(stride, bytes) {
            return Err(());
        }
        Ok(self
            .grids
            .iter()
            .position(|g| g.used && g.stride == stride)
            .map(|g| (g, self.grids[g].cells(offset, w, h))))
    }
}

/// The levels of one batch's calls in place.
#[derive(Default)]
pub struct Levels {
    regions: Vec<RegionLevels>,
    /// Where a region was last found in `regions`, by a hash of its id: a motion
    /// compensation moves between its reference's plane and the frame's at every call.
    /// Checked before use, so an entry that went stale costs only a search.
    recent: [usize; RECENT_REGIONS],
    /// Stamps above `base` belong to this batch: stamp `base + 1 + level` (the reads kept
    /// without cells, [`RegionLevels::unmarked_stamp`]).
    base: u32,
    /// The highest stamp given out.
    top: u32,
    /// Serials above `serial_base` belong to this batch: call `serial - serial_base - 1`.
    serial_base: u32,
    /// Per call of this batch: its level, whether the CPU may redo it.
    calls: Vec<CallState>,
    /// Cells of freed grids, for the next grid laid out (at most [`MAX_SPARE`]).
    spare: Vec<Vec<Cell>>,
}

/// Regions whose place in `Levels::regions` is remembered (a power of two).
const RECENT_REGIONS: usize = 8;

/// Freed grids' cells kept for reuse.
const MAX_SPARE: usize = 4;

impl Levels {
    /// Starts a new batch: every earlier stamp is forgotten without touching the maps, until
    /// the stamps run out.
    pub fn clear(&mut self) {
        let serial_top = self.serial_base + self.calls.len() as u32;
        if self.top >= 1 << 30 || serial_top >= 1 << 30 {
            for g in self.regions.iter_mut().flat_map(|r| &mut r.grids) {
                g.cells.fill(Cell::default());
            }
            self.spare.clear(); // their stamps would be of the batches to come
            self.top = 0;
            self.serial_base = 0;
        } else {
            self.serial_base = serial_top;
        }
        self.calls.clear();
        self.base = self.top;
        for r in &mut self.regions {
            // The cells of a grid the ending batch did not use go: a thread keeps cells only
            // for the buffers it works on now, not for every buffer a decoder's pool holds.
            let mut i = 0;
            while i < r.grids.len() {
                if r.grids[i].used {
                    i += 1;
                } else {
                    let freed = r.grids.swap_remove(i);
                    if self.spare.len() < MAX_SPARE {
                        self.spare.push(freed.cells);
                    }
                }
            }
            for g in &mut r.grids {
                g.used = false;
                g.span = NO_BYTES;
            }
            r.written = false;
            r.unmarked.clear();
            r.unmarked_stamp = 0;
        }
    }

    /// Forgets regions that are no longer registered.
    pub fn retain_regions(&mut self, live: impl Fn(u64) -> bool) {
        self.regions.retain(|r| live(r.id));
    }

    fn recent_line(id: u64) -> usize {
        ((id as u32).wrapping_mul(0x9E37_79B1) >> (32 - RECENT_REGIONS.ilog2())) as usize
    }

    fn region_index(&mut self, id: u64, len: usize) -> usize {
        let line = Self::recent_line(id);
        let cached = self.recent[line];
        if self.regions.get(cached).is_some_and(|r| r.id == id) {
            return cached;
        }
        let at = match self.regions.iter().position(|r| r.id == id) {
            Some(at) => at,
            None => {
                self.regions.push(RegionLevels::new(id, len));
                self.regions.len() - 1
            }
        };
        self.recent[line] = at;
        at
    }

    /// A serial for the next call of this batch.
    pub fn new_serial(&mut self) -> u32 {
        self.calls.push(CallState::default());
        self.serial_base + self.calls.len() as u32
    }

    /// The index in this batch of a pending call's serial; `None` for a call of an earlier
    /// batch.
    #[inline]
    fn pending_index(&self, serial: u32) -> Option<usize> {
        let i = self.index(serial);
        (i < self.calls.len()).then_some(i)
    }

    /// The index in this batch of `serial`, out of range for a serial of an earlier batch.
    #[inline]
    fn index(&self, serial: u32) -> usize {
        serial.wrapping_sub(self.serial_base).wrapping_sub(1) as usize
    }

    /// Whether `serial` is a call of this batch.
    fn in_batch(&self, serial: u32) -> bool {
        self.index(serial) < self.calls.len()
    }

    /// Where a call that does `access` to `b` may go: after the last writer of each cell, and
    /// for a write also its reader. `None`
    /// (complete the batch first) when its bytes meet those of this batch's calls at another
    /// stride or the region has no grid left for its stride, or a write meets a cell that
    /// several pending calls only read (never in a decoder: motion compensation reads frames
    /// that no pending call writes).
    pub fn need(&mut self, b: &Block, access: Access) -> Option<Need> {
        let base = self.base;
        let at = self.region_index(b.region, b.region_len);
        let r = &mut self.regions[at];
        // Nothing of this batch wrote it: no level to come after, no call to depend on.
        if access == Access::Read && !r.written {
            return Some(Need::default());
        }
        let unknown_readers = access == Access::Write && r.unmarked.meets(b.bytes());
        let (g, c) = r.claim(&mut self.spare, b.offset, b.stride, b.w, b.h)?;
        let r = &self.regions[at];
        let grid = &r.grids[g];
        // The lowest level after every call found (one more than its level).
        let mut level = if unknown_readers {
            r.unmarked_stamp.saturating_sub(base)
        } else {
            0
        };
        let mut redo = false;
        // Neighbouring cells mostly name the same calls: a run of them is looked up once.
        let (mut last_writer, mut last_reader) = (0u32, 0u32);
        for cy in c.cy0..c.cy1 {
            let row = cy * grid.cols;
            for cell in &grid.cells[row + c.cx0..row + c.cx1] {
                let Cell { writer, reader } = *cell;
                if writer != last_writer {
                    last_writer = writer;
                    if let Some(call) = self.calls.get(self.index(writer)) {
                        level = level.max(call.level + 1);
                        redo |= call.cpu_redo;
                    }
                }
                if access == Access::Write && reader != last_reader {
                    last_reader = reader;
                    if many_readers(self, reader) {
                        return None; // which readers, only the whole batch knows
                    }
                    if let Some(call) = self.calls.get(self.index(reader)) {
                        level = level.max(call.level + 1);
                    }
                }
            }
        }
        Some(Need {
            level,
            after_cpu_redo: redo,
        })
    }

    /// Adds to `out` the pending calls that read or write the cells of `b`; `false` when the
    /// cells cannot tell (pending calls at another stride on its bytes, or pending calls read
    /// it without marking cells).
    pub fn pending_on(&mut self, b: &Block, out: &mut Vec<u32>) -> bool {
        let line = Self::recent_line(b.region);
        let cached = self.recent[line];
        let found = match self.regions.get(cached) {
            Some(r) if r.id == b.region => Some(cached),
            _ => self.regions.iter().position(|r| r.id == b.region),
        };
        let Some(at) = found else {
            return true; // nothing pending there
        };
        let r = &self.regions[at];
        if r.unmarked.meets(b.bytes()) {
            return false;
        }
        let (g, c) = match r.look(b.offset, b.stride, b.w, b.h) {
            Err(()) => return false,
            Ok(None) => return true,
            Ok(Some(found)) => found,
        };
        let grid = &r.grids[g];
        let mut last = 0u32;
        for cy in c.cy0..c.cy1 {
            let row = cy * grid.cols;
            for cell in &grid.cells[row + c.cx0..row + c.cx1] {
                if many_readers(self, cell.reader) {
                    return false;
                }
                for s in [cell.writer, cell.reader] {
                    if s != last && self.pending_index(s).is_some() {
                        out.push(s);
                        last = s;
                    }
                }
            }
        }
        true
    }

    /// Records that call `serial` at `level` does `access` to `b` (placed by
    /// [`Levels::need`]). `cpu_redo`: the call may be redone on the CPU after the submission.
    pub fn mark(&mut self, b: &Block, access: Access, level: u32, cpu_redo: bool, serial: u32) {
        let stamp = self.base + 1 + level;
        self.top = self.top.max(stamp);
        let at = self.region_index(b.region, b.region_len);
        let i = self.index(serial);
        if let Some(call) = self.calls.get_mut(i) {
            call.level = call.level.max(level);
            call.cpu_redo |= access == Access::Write && cpu_redo;
        }
        let (calls, serial_base) = (&self.calls, self.serial_base);
        let index = |t: u32| t.wrapping_sub(serial_base).wrapping_sub(1) as usize;
        let in_batch = |t: u32| index(t) < calls.len();
        let r = &mut self.regions[at];
        let cells = match access {
            // A line's read (the row backup's copies from the frame) takes its few cells: kept
            // without cells, its bytes would join spans that merge across rows and planes.
            Access::Read if !r.written && b.h > 1 => None,
            // `None` if the call's own write, marked first, laid the region out for another
            // stride after `need` found it unwritten.
            Access::Read => r.claim(&mut self.spare, b.offset, b.stride, b.w, b.h),
            Access::Write => {
                r.written = true;
                r.claim(&mut self.spare, b.offset, b.stride, b.w, b.h)
            }
        };
        let Some((g, c)) = cells else {
            if access == Access::Read {
                // A read kept without cells: later writes on its bytes come after it.
                r.unmarked.add(b.bytes());
                r.unmarked_stamp = r.unmarked_stamp.max(stamp);
            } else {
                debug_assert!(false, "marked a write that `need` refused");
            }
            return;
        };
        let grid = &mut r.grids[g];
        for cy in c.cy0..c.cy1 {
            let row = cy * grid.cols;
            for cell in &mut grid.cells[row + c.cx0..row + c.cx1] {
                let old = cell.reader;
                let t = old & !MANY_READERS;
                let another = access == Access::Read
                    && ((old & MANY_READERS != 0 && in_batch(t))
                        || (t != serial && t != cell.writer && in_batch(t)));
                cell.reader = serial | if another { MANY_READERS } else { 0 };
                if access == Access::Write {
                    cell.writer = serial;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{bytes_of, Rng};
    use std::collections::{HashMap, HashSet};

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

    /// Where `b` goes in the batch; where it cannot go, the batch completes (`levels` and
    /// the test's own record of it, `forget`, cleared) and it goes first in the next.
    fn need_or_new_batch(
        levels: &mut Levels,
        b: &Block,
        access: Access,
        forget: impl FnOnce(),
    ) -> Need {
        levels.need(b, access).unwrap_or_else(|| {
            levels.clear();
            forget();
            levels.need(b, access).expect("a new batch")
        })
    }

    const SHAPES: [(usize, usize); 12] = [
        (64, 1),
        (20, 1),
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
            // Odd rounds: a second "plane" at another stride in the upper half, as a picture's
            // chroma after its luma in one buffer; now and then a block anywhere.
            let planes = [
                [64isize, 100, 37, 128][round % 4],
                [32isize, 50, 29, 64][round % 4],
            ];
            for batch in 0..3 {
                levels.clear();
                // byte -> (level of its last write, highest level reading or writing it)
                let mut bytes: HashMap<usize, (Option<u32>, u32)> = HashMap::new();
                for _ in 0..50 {
                    let (w, h) = SHAPES[rng.below(SHAPES.len())];
                    let plane = if round % 2 == 1 { rng.below(2) } else { 0 };
                    let stride = planes[plane];
                    if w > stride as usize {
                        continue;
                    }
                    let (lo, hi) = match (round % 2, plane, rng.below(25)) {
                        (0, _, _) | (_, _, 0) => (0, len),
                        (_, 0, _) => (0, len / 2),
                        _ => (len / 2, len),
                    };
                    let s = if rng.below(10) == 0 { -stride } else { stride };
                    let max = hi - lo - (h - 1) * stride as usize - w;
                    let mut offset = lo + rng.below(max);
                    if s < 0 {
                        offset += (h - 1) * stride as usize;
                    }
                    let access = if rng.below(3) == 0 {
                        Access::Read
                    } else {
                        Access::Write
                    };
                    let b = blk(1, len, offset, s, w, h);
                    // (Written where several pending calls read, or on bytes of pending
                    // calls at the other stride: a new batch.)
                    let need = need_or_new_batch(&mut levels, &b, access, || bytes.clear());
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
                    let serial = levels.new_serial();
                    levels.mark(&b, access, need.level, false, serial);
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
            let serial = l.new_serial();
            l.mark(&b, a, n.level, false, serial);
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
        assert_eq!(at(&mut l, 180, 100, 64, 64, Access::Read), 0);
        assert_eq!(at(&mut l, 120, 120, 8, 8, Access::Write), 1); // after the read
        assert_eq!(at(&mut l, 200, 120, 8, 8, Access::Read), 0);
        // Two pending readers of a cell: a write there waits for the whole batch.
        let b = blk(3, len, 120 * 256 + 200, stride, 8, 8);
        assert!(l.need(&b, Access::Write).is_none());
        l.clear();
        assert_eq!(at(&mut l, 0, 0, 64, 64, Access::Write), 0, "a new batch");
    }

    /// Reads of a region the batch has not written (a reference frame) mark no cells and come
    /// after nothing. A write on the bytes they read comes after them, and a reader asking
    /// whether calls are pending there cannot be told. Elsewhere in the region a write is
    /// placed as usual, and reads after it keep cells.
    #[test]
    fn reads_of_an_unwritten_region_keep_no_cells() {
        let mut l = Levels::default();
        let reference = blk(7, 1 << 16, 4 * 256 + 8, 256, 64, 64);
        for _ in 0..2 {
            let n = l.need(&reference, Access::Read).unwrap();
            assert_eq!(n.level, 0);
            let serial = l.new_serial();
            l.mark(&reference, Access::Read, n.level, false, serial);
        }
        assert!(
            l.regions.iter().all(|r| r.grids.is_empty()),
            "no cells kept"
        );
        // The last byte read is row 67, column 71; a block mirrored (negative stride) ending
        // there meets it too.
        let last = blk(7, 1 << 16, 67 * 256 + 68, 256, 4, 4);
        let mirrored = blk(7, 1 << 16, 67 * 256 + 68, -256, 4, 4);
        for b in [last, mirrored] {
            let n = l.need(&b, Access::Write).unwrap();
            assert_eq!(n.level, 1);
            assert!(!l.pending_on(&b, &mut Vec::new()));
        }
        let below = blk(7, 1 << 16, 68 * 256, 256, 8, 8);
        assert!(l.pending_on(&below, &mut Vec::new()));
        let n = l.need(&below, Access::Write).unwrap();
        assert_eq!(n.level, 0);
        let serial = l.new_serial();
        l.mark(&below, Access::Write, n.level, false, serial);
        // Written: its reads keep cells again and come after the write.
        let over = blk(7, 1 << 16, 70 * 256 + 4, 256, 8, 8);
        let n = l.need(&over, Access::Read).unwrap();
        assert_eq!(n.level, 1);
        let mut pending = Vec::new();
        assert!(l.pending_on(&over, &mut pending));
        assert_eq!(pending, [serial]);
        l.clear();
        assert_eq!(
            l.need(&last, Access::Write).unwrap().level,
            0,
            "a new batch"
        );
    }

    /// A line's read of a region the batch has not written (the row backup's copies from the
    /// frame) keeps cells: a later write on it comes after it, and a reader may still ask
    /// which calls are pending there; the region's bytes elsewhere stay free.
    #[test]
    fn line_reads_of_an_unwritten_region_keep_cells() {
        let mut l = Levels::default();
        let line = blk(8, 1 << 16, 63 * 256, 256, 64, 1);
        let n = l.need(&line, Access::Read).unwrap();
        assert_eq!(n.level, 0);
        let reader = l.new_serial();
        l.mark(&line, Access::Read, n.level, false, reader);
        let on_it = blk(8, 1 << 16, 60 * 256 + 8, 256, 8, 8);
        let mut pending = Vec::new();
        assert!(l.pending_on(&on_it, &mut pending));
        assert_eq!(pending, [reader]);
        assert_eq!(l.need(&on_it, Access::Write).unwrap().level, 1);
        let below = blk(8, 1 << 16, 64 * 256, 256, 64, 64);
        assert_eq!(l.need(&below, Access::Write).unwrap().level, 0);
    }

    /// One call that reads a region the batch has not written and writes the same region at
    /// another stride: its write lays out cells for its stride first, so its read is marked on
    /// cells of its own stride. A later write there at the read's stride comes after it; one
    /// at the write's stride cannot be placed (its cells cannot tell).
    #[test]
    fn a_read_at_another_stride_than_the_same_calls_write_is_kept() {
        let mut l = Levels::default();
        let (read, write) = (
            blk(9, 1 << 16, 0, 64, 8, 8),
            blk(9, 1 << 16, 20_000, 32, 8, 8),
        );
        let r = l.need(&read, Access::Read).unwrap();
        let w = l.need(&write, Access::Write).unwrap();
        let serial = l.new_serial();
        let level = r.level.max(w.level);
        l.mark(&write, Access::Write, level, false, serial);
        l.mark(&read, Access::Read, level, false, serial);
        let other_stride = blk(9, 1 << 16, 0, 32, 8, 8);
        assert!(l.need(&other_stride, Access::Write).is_none());
        assert!(!l.pending_on(&other_stride, &mut Vec::new()));
        assert_eq!(l.need(&read, Access::Write).unwrap().level, 1);
    }

    #[test]
    fn another_stride_on_the_same_bytes_is_refused_until_the_next_batch() {
        let mut l = Levels::default();
        assert!(l.need(&blk(1, 4096, 0, 64, 8, 8), Access::Write).is_some());
        assert!(l.need(&blk(1, 4096, 0, 32, 8, 8), Access::Write).is_none());
        assert!(!l.pending_on(&blk(1, 4096, 0, 32, 8, 8), &mut Vec::new()));
        l.clear();
        assert!(l.need(&blk(1, 4096, 0, 32, 8, 8), Access::Write).is_some());
    }

    /// A picture in one buffer: luma at one stride, chroma at half of it after it. Each stride
    /// gets its grid; calls on either order among themselves, and a block at one stride that
    /// meets the other's bytes cannot be placed. A fourth stride finds no grid left.
    #[test]
    fn disjoint_planes_at_two_strides_keep_grids_of_their_own() {
        let mut l = Levels::default();
        let (len, luma, chroma) = (1 << 16, 256isize, 128isize);
        let chroma_at = 256 * 128;
        let place = |l: &mut Levels, b: Block| {
            let n = l.need(&b, Access::Write)?;
            let serial = l.new_serial();
            l.mark(&b, Access::Write, n.level, false, serial);
            Some(n.level)
        };
        let y = place(&mut l, blk(3, len, 8, luma, 8, 8)).unwrap();
        let u = place(&mut l, blk(3, len, chroma_at + 4, chroma, 4, 4)).unwrap();
        assert_eq!((y, u), (0, 0));
        let y2 = place(&mut l, blk(3, len, 12 + 4 * 256, luma, 8, 8)).unwrap();
        assert_eq!(y2, 1, "after the luma block it overlaps");
        let u2 = place(&mut l, blk(3, len, chroma_at + 6, chroma, 4, 4)).unwrap();
        assert_eq!(u2, 1, "after the chroma block it overlaps");
        assert_eq!(l.regions[0].grids.len(), 2);
        // Luma rows reaching into the chroma plane's bytes: the cells cannot tell.
        assert!(place(&mut l, blk(3, len, chroma_at - 2 * 256, luma, 8, 8)).is_none());
        let mut found = Vec::new();
        assert!(l.pending_on(&blk(3, len, chroma_at + 4, chroma, 2, 2), &mut found));
        assert_eq!(
            found,
            [4],
            "the last writer of its cell (it follows call 2)"
        );
        // A third stride elsewhere takes the last grid; a fourth finds none.
        assert!(place(&mut l, blk(3, len, 60_000, 64, 4, 4)).is_some());
        assert!(place(&mut l, blk(3, len, 62_000, 32, 4, 4)).is_none());
        l.clear();
        assert!(
            place(&mut l, blk(3, len, 62_000, 32, 4, 4)).is_some(),
            "a new batch"
        );
    }

    /// A batch frees the cells of the grids the batch before it left unused, so a thread
    /// keeps cells only for the buffers it works on; a grid made again starts clean, also
    /// after the stamps ran out.
    #[test]
    fn unused_grids_are_freed_and_come_back_clean() {
        let mut l = Levels::default();
        let len = 1 << 16;
        let write = |l: &mut Levels, region, offset, stride| {
            let b = blk(region, len, offset, stride, 8, 8);
            let n = l.need(&b, Access::Write).unwrap();
            let serial = l.new_serial();
            l.mark(&b, Access::Write, n.level, false, serial);
            n.level
        };
        write(&mut l, 1, 0, 256);
        write(&mut l, 1, 40_000, 128);
        write(&mut l, 2, 0, 256);
        l.clear();
        assert_eq!(l.regions[0].grids.len(), 2, "used by the batch that ended");
        write(&mut l, 2, 0, 256);
        l.clear();
        assert!(
            l.regions[0].grids.is_empty(),
            "unused by the batch that ended"
        );
        assert_eq!(l.regions[1].grids.len(), 1);
        assert_eq!(write(&mut l, 1, 0, 256), 0, "a new grid, nothing pending");
        assert_eq!(write(&mut l, 1, 0, 256), 1);
        l.top = 1 << 30; // the stamps run out: every cell is reset
        l.clear();
        assert_eq!(write(&mut l, 1, 0, 256), 0);
        assert_eq!(write(&mut l, 2, 0, 256), 0);
    }

    #[test]
    fn cpu_redo_is_reported_within_the_batch_only() {
        let mut l = Levels::default();
        let b = blk(1, 4096, 0, 64, 8, 8);
        let n = l.need(&b, Access::Write).unwrap();
        let serial = l.new_serial();
        l.mark(&b, Access::Write, n.level, true, serial);
        let read = |l: &mut Levels, offset| {
            let n = l.need(&blk(1, 4096, offset, 64, 8, 8), Access::Read);
            n.unwrap().after_cpu_redo
        };
        assert!(read(&mut l, 4));
        assert!(!read(&mut l, 8));
        l.clear();
        let serial = l.new_serial();
        l.mark(&b, Access::Write, 0, true, serial);
        l.clear();
        assert!(!read(&mut l, 4));
    }

    /// A reader's block that meets the bytes of a pending call (not both only reading) learns
    /// of it: `pending_on` names a call or cannot tell, which is what a reader completes the
    /// batch on. Byte by byte, brute force.
    #[test]
    fn a_reader_learns_of_every_pending_call_on_its_bytes() {
        let mut rng = Rng(23);
        let len = 40_000usize;
        for round in 0..30 {
            let mut levels = Levels::default();
            // Odd rounds: a second "plane" at another stride in the upper half.
            let strides = [160isize, [160, 96][round % 2]];
            // per call: its bytes
            let mut calls: Vec<Vec<usize>> = Vec::new();
            for _ in 0..120 {
                let (w, h) = SHAPES[rng.below(SHAPES.len())];
                let plane = rng.below(2);
                let stride = strides[plane];
                let lo = plane * len / 2;
                let offset = lo + rng.below(len / 2 - (h - 1) * stride as usize - w);
                let access = if rng.below(4) == 0 {
                    Access::Read
                } else {
                    Access::Write
                };
                let b = blk(5, len, offset, stride, w, h);
                let need = need_or_new_batch(&mut levels, &b, access, || calls.clear());
                let serial = levels.new_serial();
                levels.mark(&b, access, need.level, false, serial);
                calls.push(bytes_of(offset, stride, w, h));
                // A reader's block somewhere.
                let (w, h) = SHAPES[rng.below(SHAPES.len())];
                let plane = rng.below(2);
                let stride = strides[plane];
                let lo = plane * len / 2;
                let offset = lo + rng.below(len / 2 - (h - 1) * stride as usize - w);
                let query: HashSet<usize> = bytes_of(offset, stride, w, h).into_iter().collect();
                let mut found = Vec::new();
                if !levels.pending_on(&blk(5, len, offset, stride, w, h), &mut found) {
                    continue; // it cannot tell: the reader completes the batch
                }
                let met = calls.iter().any(|c| c.iter().any(|b| query.contains(b)));
                assert!(
                    !met || !found.is_empty(),
                    "round {round}: a pending call unseen"
                );
            }
        }
    }

    #[test]
    fn row_of_divides_exactly() {
        let mut rng = Rng(8);
        for d in (1..300).chain([1920, 1984, 4096, 7680, 65535, 1 << 20, (1 << 31) - 1]) {
            let r = Grid {
                stride: d,
                stride_magic: (u64::MAX / d as u64).wrapping_add(1),
                used: false,
                span: NO_BYTES,
                cols: 0,
                cells: Vec::new(),
            };
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
