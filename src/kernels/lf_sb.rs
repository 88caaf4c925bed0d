//! VP9's loop filter of a whole superblock, 8-bit: FFmpeg's `ff_vp9_loopfilter_sb` as one
//! call per plane and pass instead of one call per edge.
//!
//! FFmpeg 5.1 (`vp9lpf.c`) filters a superblock plane by plane, each plane's columns pass
//! (vertical edges, filtered across rows) before its rows pass, walking the edge masks with
//! rules of its own: which of two neighbouring 8-line halves a 16-line function covers, which
//! thresholds the second half takes, which edges the walk never reaches. [`SbPass::build`]
//! follows that walk once on the CPU and writes down, for each 8-line segment of the pass, its
//! edges in FFmpeg's order with their width and thresholds. Each line is independent of the
//! others, so filtering every segment's edges in that order, line by line, is FFmpeg's result:
//! the reference ([`run_pass`]) does that with 8-line calls, the GPU (`shaders/lf_sb.comp`)
//! with one invocation per line.

use crate::kernels::lf::{filter_half, LfDir, LfHalf};

/// Edges one segment can hold: 8 block edges, each with an inner 4-pixel edge.
pub const EDGES: usize = 16;
/// 8-line segments of a pass (a luma superblock's 64 lines).
pub const SEGMENTS: usize = 8;
/// Words of a pass's table in the job data: one per edge slot.
pub const TABLE_WORDS: usize = EDGES * SEGMENTS;

/// One plane's columns or rows pass of a superblock.
#[derive(Clone)]
pub struct SbPass {
    /// `H`: the columns pass (vertical edges, lines are rows); `V`: the rows pass.
    pub dir: LfDir,
    /// Per segment, its edges in FFmpeg's order ([`edge_word`]), ended by a zero word.
    pub table: [u32; TABLE_WORDS],
    /// Edges in the whole table.
    pub edges: usize,
    /// Lines from the superblock's first that the pass touches: `8 * (last segment + 1)`.
    pub lines: usize,
    /// Pixels across the lines that the pass reads and writes, from the superblock's first
    /// pixel: `lo ..hi` (`lo` is at most 0, negative where the superblock's first edge filters
    /// into its left or upper neighbour).
    pub lo: i32,
    pub hi: i32,
}

/// A table word: the edge's position across the lines (0..63), its width code (1: 4, 2: 8,
/// 3: 16; 0 ends the segment's list), and its thresholds `E`, `I`, `H` (bytes, as FFmpeg's
/// lookup tables hold them).
pub fn edge_word(pos: usize, wd: u8, e: u8, i: u8, h: u8) -> u32 {
    let code = match wd {
        4 => 1,
        8 => 2,
        _ => 3,
    };
    pos as u32 | code << 6 | (e as u32) << 8 | (i as u32) << 16 | (h as u32) << 24
}

/// The edge a table word names: its position and its filter.
pub fn from_edge_word(word: u32) -> Option<(usize, LfHalf)> {
    let wd = [0, 4, 8, 16][(word >> 6 & 3) as usize];
    let half = LfHalf {
        wd,
        e: (word >> 8 & 0xff) as i32,
        i: (word >> 16 & 0xff) as i32,
        h: (word >> 24) as i32,
    };
    (wd != 0).then_some(((word & 63) as usize, half))
}

/// What `ff_vp9_loopfilter_sb` is given: a `VP9Filter` and the frame's thresholds.
#[derive(Clone, Copy)]
pub struct SbFilter<'a> {
    /// `VP9Filter::level`: the filter level of each 8x8 block.
    pub level: &'a [u8; 64],
    /// `VP9Filter::mask[plane type][dir][row][0: 16, 1: 8, 2: 4, 3: inner 4]`, bit = column.
    pub mask: &'a [[[[u8; 4]; 8]; 2]; 2],
    pub mblim_lut: &'a [u8; 64],
    pub lim_lut: &'a [u8; 64],
}

impl SbFilter<'_> {
    /// The thresholds of level `l` as FFmpeg derives them: `E`, `I`, `H`.
    fn thresholds(&self, l: u8) -> (u8, u8, u8) {
        let l = l & 63;
        (self.mblim_lut[l as usize], self.lim_lut[l as usize], l >> 4)
    }
}

struct Builder<'a> {
    pass: SbPass,
    filter: SbFilter<'a>,
    used: [usize; SEGMENTS],
}

impl<'a> Builder<'a> {
    fn new(dir: LfDir, filter: SbFilter<'a>) -> Self {
        Builder {
            pass: SbPass {
                dir,
                table: [0; TABLE_WORDS],
                edges: 0,
                lines: 0,
                lo: 0,
                hi: 0,
            },
            filter,
            used: [0; SEGMENTS],
        }
    }

    /// Adds an edge at `pos` to segment `seg` with width `wd` and the thresholds of level `l`.
    fn push(&mut self, seg: usize, pos: usize, wd: u8, l: u8) {
        let (e, i, h) = self.filter.thresholds(l);
        let slot = self.used[seg];
        debug_assert!(slot < EDGES, "FFmpeg's walk visits each slot once");
        self.pass.table[seg * EDGES + slot] = edge_word(pos, wd, e, i, h);
        self.used[seg] += 1;
        self.pass.edges += 1;
        let reach = if wd == 16 { 8 } else { 4 };
        self.pass.lo = self.pass.lo.min(pos as i32 - reach);
        self.pass.hi = self.pass.hi.max(pos as i32 + reach);
        self.pass.lines = self.pass.lines.max(8 * (seg + 1));
    }

    /// A block edge at `pos` across the two 8-line halves `segs`, as both of FFmpeg's walks
    /// filter it: a 16-wide first half takes the 16-line function (the second half too, with
    /// the first's level, where it is 16 wide as well) and leaves a narrower second half alone;
    /// otherwise each marked half takes its own width and level.
    fn block_edge(&mut self, pos: usize, (seg1, seg2): (usize, usize), first: Half, second: Half) {
        if first.marked && first.wide {
            self.push(seg1, pos, 16, first.level);
            if second.wide {
                self.push(seg2, pos, 16, first.level);
            }
            return;
        }
        if first.marked {
            self.push(seg1, pos, first.narrow(), first.level);
        }
        if second.marked {
            self.push(seg2, pos, second.narrow(), second.level);
        }
    }

    /// The inner 4-pixel edge at `pos` of each half whose level is given.
    fn inner_edge(&mut self, pos: usize, (seg1, seg2): (usize, usize), levels: [Option<u8>; 2]) {
        if let Some(l) = levels[0] {
            self.push(seg1, pos, 4, l);
        }
        if let Some(l) = levels[1] {
            self.push(seg2, pos, 4, l);
        }
    }

    fn finish(self) -> Option<SbPass> {
        (self.pass.edges > 0).then_some(self.pass)
    }
}

/// One 8-line half at a block edge as FFmpeg's walk sees it: marked (in the masks it checks for
/// that half), 16 wide, 8 wide, and its level.
#[derive(Clone, Copy)]
struct Half {
    marked: bool,
    wide: bool,
    eight: bool,
    level: u8,
}

impl Half {
    fn narrow(self) -> u8 {
        if self.eight {
            8
        } else {
            4
        }
    }
}

/// Whether `bit` is set in a mask byte.
fn has(mask: u8, bit: u32) -> bool {
    mask as u32 & bit != 0
}

impl SbPass {
    /// The columns pass of one plane: FFmpeg's `filter_plane_cols`. `mask` is the plane
    /// type's `[row][width]` masks of vertical edges, `col` the superblock's column in 8x8
    /// blocks (its left edge is not filtered at the frame's left).
    pub fn columns(
        filter: SbFilter,
        mask: &[[u8; 4]; 8],
        col: i32,
        ss_h: usize,
        ss_v: usize,
    ) -> Option<SbPass> {
        let mut b = Builder::new(LfDir::H, filter);
        let level = filter.level;
        let below = 8 << ss_v; // level index of the second half's block
        for step in 0..(4 >> ss_v) {
            let y = step * (2 << ss_v);
            let (m1, m2) = (mask[y], mask[y + 1 + ss_v]);
            let segs = (2 * step, 2 * step + 1);
            let hm1 = (m1[0] | m1[1] | m1[2]) as u32;
            let hm13 = m1[3] as u32;
            let hm2 = (m2[1] | m2[2]) as u32;
            let hm23 = m2[3] as u32;
            let hm = hm1 | hm2 | hm13 | hm23;
            let mut l = y * 8;
            for bit in 0..8 {
                let x = 1u32 << bit;
                if hm & !(x - 1) == 0 {
                    break;
                }
                let pos = bit * (8 >> ss_h);
                if col != 0 || bit > 0 {
                    // The second half counts as marked by its 8- and 4-wide bits only.
                    let first = Half {
                        marked: hm1 & x != 0,
                        wide: has(m1[0], x),
                        eight: has(m1[1], x),
                        level: level[l],
                    };
                    let second = Half {
                        marked: hm2 & x != 0,
                        wide: has(m2[0], x),
                        eight: has(m2[1], x),
                        level: level[l + below],
                    };
                    b.block_edge(pos, segs, first, second);
                }
                if ss_h != 0 {
                    if x & 0xaa != 0 {
                        l += 2;
                    }
                } else {
                    let inner = [
                        (hm13 & x != 0).then_some(level[l]),
                        (hm23 & x != 0).then_some(level[l + below]),
                    ];
                    b.inner_edge(pos + 4, segs, inner);
                    l += 1;
                }
            }
        }
        b.finish()
    }

    /// The rows pass of one plane: FFmpeg's `filter_plane_rows`. `row` is the superblock's
    /// row in 8x8 blocks (its top edge is not filtered at the frame's top).
    pub fn rows(
        filter: SbFilter,
        mask: &[[u8; 4]; 8],
        row: i32,
        ss_h: usize,
        ss_v: usize,
    ) -> Option<SbPass> {
        let mut b = Builder::new(LfDir::V, filter);
        let level = filter.level;
        let step = 2 << ss_h; // mask bits per 16 pixels
        let right = 1 + ss_h; // the second half's bit and level, from the first's
        for (y, m) in mask.iter().enumerate() {
            let vm = (m[0] | m[1] | m[2]) as u32;
            let vm3 = m[3] as u32;
            let pos = y * (8 >> ss_v);
            let lrow = if ss_v != 0 { (y & !1) * 8 } else { y * 8 };
            for pair in 0..8 / step {
                let x = 1u32 << (pair * step);
                if vm & !(x - 1) == 0 {
                    break;
                }
                let x2 = x << right;
                let l = lrow + pair * step;
                let segs = (2 * pair, 2 * pair + 1);
                if row != 0 || y != 0 {
                    let half = |bit: u32, level: u8| Half {
                        marked: vm & bit != 0,
                        wide: has(m[0], bit),
                        eight: has(m[1], bit),
                        level,
                    };
                    b.block_edge(pos, segs, half(x, level[l]), half(x2, level[l + right]));
                }
                if ss_v == 0 {
                    let inner = [
                        (vm3 & x != 0).then_some(level[l]),
                        (vm3 & x2 != 0).then_some(level[l + right]),
                    ];
                    b.inner_edge(pos + 4, segs, inner);
                }
            }
        }
        b.finish()
    }

    /// The six passes of a superblock in FFmpeg's order (luma columns, luma rows, then each
    /// chroma plane's), with the plane each filters; `None` where a pass has no edge.
    pub fn superblock(
        filter: SbFilter,
        row: i32,
        col: i32,
        ss_h: usize,
        ss_v: usize,
    ) -> [(usize, Option<SbPass>); 6] {
        let luma = &filter.mask[0];
        let chroma = &filter.mask[(ss_h | ss_v != 0) as usize];
        let (cols_c, rows_c) = (
            SbPass::columns(filter, &chroma[0], col, ss_h, ss_v),
            SbPass::rows(filter, &chroma[1], row, ss_h, ss_v),
        );
        [
            (0, SbPass::columns(filter, &luma[0], col, 0, 0)),
            (0, SbPass::rows(filter, &luma[1], row, 0, 0)),
            (1, cols_c.clone()),
            (1, rows_c.clone()),
            (2, cols_c),
            (2, rows_c),
        ]
    }

    /// The pixels the pass reads and writes relative to the superblock's first pixel, as
    /// (first line, first pixel across, lines, pixels across) in the plane's own axes:
    /// (rows, columns) for the columns pass.
    pub fn extent(&self) -> (isize, isize, usize, usize) {
        (
            0,
            self.lo as isize,
            self.lines,
            (self.hi - self.lo) as usize,
        )
    }
}

/// Runs a pass's table on the superblock at `origin` (its first pixel), each edge 8 lines at a
/// time with `filter` (the reference's [`filter_half`], or FFmpeg's own 8-line functions).
///
/// # Safety
/// Every pixel the table's edges reach must be valid.
pub unsafe fn run_pass(
    table: &[u32],
    dir: LfDir,
    origin: *mut u8,
    stride: isize,
    filter: impl Fn(*mut u8, isize, LfDir, LfHalf),
) {
    let (along, across) = match dir {
        LfDir::H => (stride, 1),
        LfDir::V => (1, stride),
    };
    for seg in 0..SEGMENTS {
        for &word in &table[seg * EDGES..(seg + 1) * EDGES] {
            let Some((pos, half)) = from_edge_word(word) else {
                break;
            };
            let at = origin.offset(8 * seg as isize * along + pos as isize * across);
            filter(at, stride, dir, half);
        }
    }
}

/// The reference: [`run_pass`] with [`filter_half`].
///
/// # Safety
/// As [`run_pass`].
pub unsafe fn run_pass_now(table: &[u32], dir: LfDir, origin: *mut u8, stride: isize) {
    run_pass(table, dir, origin, stride, |at, s, d, half| unsafe {
        filter_half(at, s, d, half)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_words_round_trip() {
        for (pos, wd) in [(0, 4), (63, 8), (36, 16)] {
            let w = edge_word(pos, wd, 193, 63, 3);
            let (p, half) = from_edge_word(w).expect("an edge");
            assert_eq!((p, half.wd, half.e, half.i, half.h), (pos, wd, 193, 63, 3));
        }
        assert!(from_edge_word(0).is_none());
    }

    #[test]
    fn frame_edges_are_not_filtered() {
        let level = [20u8; 64];
        let mut mask = [[[[0u8; 4]; 8]; 2]; 2];
        mask[0][0][0][1] = 1; // an 8-wide edge at column 0, row 0
        mask[0][1][0][1] = 1;
        let lut = [10u8; 64];
        let f = SbFilter {
            level: &level,
            mask: &mask,
            mblim_lut: &lut,
            lim_lut: &lut,
        };
        assert!(SbPass::columns(f, &mask[0][0], 0, 0, 0).is_none());
        assert!(SbPass::rows(f, &mask[0][1], 0, 0, 0).is_none());
        let c = SbPass::columns(f, &mask[0][0], 8, 0, 0).expect("left edge inside the frame");
        assert_eq!((c.edges, c.lines, c.lo, c.hi), (1, 8, -4, 4));
    }
}
