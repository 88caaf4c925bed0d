//! VP9's loop filter of a whole superblock, 8-bit: FFmpeg's `ff_vp9_loopfilter_sb` as one
//! call per plane instead of one call per edge.
//!
//! FFmpeg 5.1 (`vp9lpf.c`) filters a superblock plane by plane, each plane's columns pass
//! (vertical edges, filtered across rows) before its rows pass, walking the edge masks with
//! rules of its own: which of two neighbouring 8-line halves a 16-line function covers, which
//! thresholds the second half takes, which edges the walk never reaches. [`SbPass`] follows
//! that walk and writes down, for each 8-line segment of a pass, its edges in FFmpeg's order
//! with their width and thresholds. Each line is independent of the others, so filtering every
//! segment's edges in that order, line by line, is FFmpeg's result: the CPU ([`run_pass`])
//! does that with 8-line calls. The GPU (`shaders/lf_sb_pass.glsl`) is handed a plane's
//! masks as they are ([`SbPlane`]) and walks them itself, a step of the walk per invocation
//! (`shaders/lf_sb_walk.glsl`, shared with the frame path's loop filter; [`slot_table`] is
//! that walk in Rust), then filters one line per invocation.

use super::job::{Job, JobHeader};
use crate::kernels::lf::{filter_half, LfDir, LfHalf};

/// Edges one segment can hold: 8 block edges, each with an inner 4-pixel edge.
pub const EDGES: usize = 16;
/// 8-line segments of a pass (a luma superblock's 64 lines).
pub const SEGMENTS: usize = 8;
/// Words of a pass's table: one per edge slot.
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

/// The thresholds of level `l` as FFmpeg derives them from its tables: `E`, `I`, `H`.
fn thresholds(mblim_lut: &[u8; 64], lim_lut: &[u8; 64], l: u8) -> (u8, u8, u8) {
    let l = l & 63;
    (mblim_lut[l as usize], lim_lut[l as usize], l >> 4)
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
        let (e, i, h) = thresholds(self.filter.mblim_lut, self.filter.lim_lut, l);
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
}

/// Bytes of a plane's record in the job data: the levels (64), the columns pass's masks and
/// the rows pass's (32 each, `[row][width]`), then the `E` and `I` lookup tables (64 each).
pub const RECORD_BYTES: usize = 256;
const MASKS_AT: usize = 64;
const MBLIM_AT: usize = 128;
const LIM_AT: usize = 192;

/// Job parameter bits of a plane: its subsampling, and the frame edges at its left and top
/// (where FFmpeg filters no first edge).
const SS_H: u32 = 1;
const SS_V: u32 = 2;
const AT_LEFT: u32 = 4;
const AT_TOP: u32 = 8;
/// One plane of a superblock as the decoder's loop filter hands it over: both of its passes
/// in one call. What the GPU needs is copied as is ([`SbPlane::write_record`]), and the GPU
/// walks the masks itself (`shaders/lf_sb_walk.glsl`, mirrored by [`slot_table`]): recording
/// a plane costs a copy of 256 bytes rather than FFmpeg's walk.
#[derive(Clone, Copy)]
pub struct SbPlane<'a> {
    pub level: &'a [u8; 64],
    /// `[0]`: the columns pass's masks, `[1]`: the rows pass's; `[row][0: 16, 1: 8, 2: 4,
    /// 3: inner 4]`, bit = column.
    pub mask: &'a [[[u8; 4]; 8]; 2],
    pub mblim_lut: &'a [u8; 64],
    pub lim_lut: &'a [u8; 64],
    /// Subsampling and frame edges ([`SS_H`], [`SS_V`], [`AT_LEFT`], [`AT_TOP`]).
    pub params: u32,
    /// Pixels both passes may read and write, from the superblock's first: rows `top..bottom`,
    /// columns `left..right` (a bound of FFmpeg's walk, from the masks alone).
    pub top: i32,
    pub bottom: i32,
    pub left: i32,
    pub right: i32,
    /// Mask bits set: what the plane costs on the CPU, roughly in edges.
    pub bits: u32,
}

/// The highest bit set in `bits` (not 0).
fn top_bit(bits: u32) -> i32 {
    31 - bits.leading_zeros() as i32
}

/// The pixels across that edges at positions `bit * unit` reach: `wide` bits 8 either side,
/// `narrow` bits 4, `inner` bits 4 either side of `bit * unit + 4`; `None` for no bit.
fn reach(wide: u32, narrow: u32, inner: u32, unit: i32) -> Option<(i32, i32)> {
    let ends = |bits: u32, before: i32, after: i32| {
        (bits != 0).then(|| {
            let low = bits.trailing_zeros() as i32;
            (unit * low - before, unit * top_bit(bits) + after)
        })
    };
    [ends(wide, 8, 8), ends(narrow, 4, 4), ends(inner, 0, 8)]
        .into_iter()
        .flatten()
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
}

impl<'a> SbPlane<'a> {
    /// The plane of `filter` of plane type `kind` (0: luma, 1: chroma other than 4:4:4) at
    /// `row`, `col` (8x8 blocks) with subsampling `ss_h`, `ss_v`; `None` where neither pass
    /// has an edge to filter.
    pub fn new(
        filter: SbFilter<'a>,
        kind: usize,
        (row, col): (i32, i32),
        ss_h: usize,
        ss_v: usize,
    ) -> Option<SbPlane<'a>> {
        let mask = &filter.mask[kind];
        let mut plane = SbPlane {
            level: filter.level,
            mask,
            mblim_lut: filter.mblim_lut,
            lim_lut: filter.lim_lut,
            params: (ss_h as u32 * SS_H)
                | (ss_v as u32 * SS_V)
                | ((col == 0) as u32 * AT_LEFT)
                | ((row == 0) as u32 * AT_TOP),
            top: 0,
            bottom: 0,
            left: 0,
            right: 0,
            bits: 0,
        };
        plane.bits = mask
            .iter()
            .flatten()
            .map(|m| u32::from_ne_bytes(*m).count_ones())
            .sum();
        if plane.bits == 0 {
            return None;
        }
        plane.bound(col != 0, row != 0);
        // Either way empty: the masks name only edges that FFmpeg's walk leaves alone.
        if plane.top >= plane.bottom || plane.left >= plane.right {
            return None;
        }
        // The superblock's first pixel, where its job points, is inside.
        (plane.top, plane.left) = (plane.top.min(0), plane.left.min(0));
        Some(plane)
    }

    /// Bounds what the passes reach, as FFmpeg's walk could at most: a columns edge at mask
    /// column `b` filters the lines of the segments its mask rows map to, and reaches 8
    /// pixels either side (16 wide), 4 (8 or 4 wide), or 4 either side of `pos + 4` (inner);
    /// a rows edge likewise, mask rows and columns swapped. No block edge is filtered at the
    /// frame's left (columns) or top (rows).
    fn bound(&mut self, left_edges: bool, top_edges: bool) {
        let (ss_h, ss_v) = self.subsampling();
        let first = |edges: bool| if edges { 0xffu32 } else { 0xfe };
        // Rows `top..bottom` and columns `left..right`, empty so far.
        let (mut top, mut bottom, mut left, mut right) = (i32::MAX, i32::MIN, i32::MAX, i32::MIN);
        let widen = |lo: &mut i32, hi: &mut i32, (a, b): (i32, i32)| {
            (*lo, *hi) = ((*lo).min(a), (*hi).max(b));
        };
        // Columns pass: mask rows `y` (every other one where ss_v) are segments `y >> ss_v`;
        // bit `b` is pixel column `b * (8 >> ss_h)`.
        let (mut wide, mut narrow, mut inner) = (0u32, 0u32, 0u32);
        for (y, m) in self.mask[0].iter().enumerate().step_by(1 + ss_v) {
            if m.iter().any(|w| *w != 0) {
                widen(&mut top, &mut bottom, (0, 8 * ((y >> ss_v) as i32 + 1)));
            }
            wide |= m[0] as u32;
            narrow |= (m[1] | m[2]) as u32;
            inner |= if ss_h == 0 { m[3] as u32 } else { 0 };
        }
        let unit = 8 >> ss_h;
        if let Some(r) = reach(
            wide & first(left_edges),
            narrow & first(left_edges),
            inner,
            unit,
        ) {
            widen(&mut left, &mut right, r);
        }
        // Rows pass: mask row `y` is pixel row `y * (8 >> ss_v)`; bit `b` (even ones where
        // ss_h) is segment `b >> ss_h`.
        let used = if ss_h != 0 { 0x55 } else { 0xff };
        let (mut wide, mut narrow, mut inner) = (0u32, 0u32, 0u32);
        for (y, m) in self.mask[1].iter().enumerate() {
            let bits = (m[0] | m[1] | m[2] | m[3]) as u32 & used;
            if bits != 0 {
                widen(
                    &mut left,
                    &mut right,
                    (0, 8 * ((top_bit(bits) >> ss_h) + 1)),
                );
            }
            let row = 1 << y;
            wide |= if m[0] != 0 { row } else { 0 };
            narrow |= if m[1] | m[2] != 0 { row } else { 0 };
            inner |= if m[3] != 0 && ss_v == 0 { row } else { 0 };
        }
        if let Some(r) = reach(
            wide & first(top_edges),
            narrow & first(top_edges),
            inner,
            8 >> ss_v,
        ) {
            widen(&mut top, &mut bottom, r);
        }
        (self.top, self.bottom, self.left, self.right) = (top, bottom, left, right);
    }

    /// The plane's chroma subsampling, horizontal and vertical (0 or 1).
    fn subsampling(&self) -> (usize, usize) {
        (
            (self.params & SS_H) as usize,
            (self.params & SS_V) as usize >> 1,
        )
    }

    /// The table word of an edge at `pos`, `wd` wide, with the thresholds of level `l`.
    fn edge(&self, pos: usize, wd: u8, l: u8) -> u32 {
        let (e, i, h) = thresholds(self.mblim_lut, self.lim_lut, l);
        edge_word(pos, wd, e, i, h)
    }

    /// Copies what the GPU walks into `to` ([`RECORD_BYTES`]).
    ///
    /// # Safety
    /// `to` must be valid for [`RECORD_BYTES`] bytes of writes.
    pub unsafe fn write_record(&self, to: *mut u8) {
        use std::ptr::copy_nonoverlapping as copy;
        copy(self.level.as_ptr(), to, 64);
        copy(self.mask.as_ptr() as *const u8, to.add(MASKS_AT), 64);
        copy(self.mblim_lut.as_ptr(), to.add(MBLIM_AT), 64);
        copy(self.lim_lut.as_ptr(), to.add(LIM_AT), 64);
    }

    /// The passes of the plane by FFmpeg's walk: columns, then rows (`None` for one without
    /// an edge).
    pub fn passes(&self) -> [Option<SbPass>; 2] {
        let full = [*self.mask, *self.mask];
        let filter = SbFilter {
            level: self.level,
            mask: &full,
            mblim_lut: self.mblim_lut,
            lim_lut: self.lim_lut,
        };
        let (ss_h, ss_v) = self.subsampling();
        let col = (self.params & AT_LEFT == 0) as i32;
        let row = (self.params & AT_TOP == 0) as i32;
        [
            SbPass::columns(filter, &self.mask[0], col, ss_h, ss_v),
            SbPass::rows(filter, &self.mask[1], row, ss_h, ss_v),
        ]
    }

    /// Runs the passes on the superblock at `origin`, each edge with `filter` (see
    /// [`run_pass`]).
    ///
    /// # Safety
    /// As [`run_pass`].
    pub unsafe fn run(
        &self,
        origin: *mut u8,
        stride: isize,
        filter: impl Fn(*mut u8, isize, LfDir, LfHalf),
    ) {
        for pass in self.passes().iter().flatten() {
            run_pass(&pass.table, pass.dir, origin, stride, &filter);
        }
    }
}

/// A superblock plane's job (`shaders/lf_sb.comp`, a `uvec4`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct LfSbJob {
    /// The superblock's first pixel.
    pub header: JobHeader,
    /// [`SbPlane::params`]: subsampling, frame edges.
    pub params: u32,
    /// The plane's record ([`RECORD_BYTES`]) in the coefficient buffer (the arena), in
    /// coefficients.
    pub record: u32,
}

impl LfSbJob {
    pub fn to_words(&self) -> Job {
        let mut words = self.header.job();
        words[2] = self.params;
        words[3] = self.record;
        words
    }

    pub fn from_words(words: &Job) -> LfSbJob {
        LfSbJob {
            header: JobHeader::of(words),
            params: words[2],
            record: words[3],
        }
    }
}

/// A plane as its job left it: the record at `record` and the job's parameters.
///
/// # Safety
/// `record` must be valid for [`RECORD_BYTES`] bytes of reads; the plane borrows them.
pub unsafe fn plane_from_record<'a>(record: *const u8, params: u32) -> SbPlane<'a> {
    let at = |off: usize| &*(record.add(off) as *const [u8; 64]);
    SbPlane {
        level: at(0),
        mask: &*(record.add(MASKS_AT) as *const [[[u8; 4]; 8]; 2]),
        mblim_lut: at(MBLIM_AT),
        lim_lut: at(LIM_AT),
        params,
        top: 0,
        bottom: 0,
        left: 0,
        right: 0,
        bits: 0,
    }
}

/// One 8-line half of a block edge for the slot walk: marked, 16 wide, 8 wide, its level.
type SlotHalf = (bool, bool, bool, u8);

/// The word of half `which` (0 or 1) of a block edge at `pos`, by FFmpeg's rule (see
/// `Builder::block_edge`), or 0.
fn slot_block_edge(
    plane: &SbPlane,
    pos: usize,
    which: usize,
    first: SlotHalf,
    second: SlotHalf,
) -> u32 {
    if first.0 && first.1 {
        return if which == 0 || second.1 {
            plane.edge(pos, 16, first.3)
        } else {
            0
        };
    }
    let (marked, _, eight, level) = if which == 0 { first } else { second };
    if !marked {
        return 0;
    }
    plane.edge(pos, if eight { 8 } else { 4 }, level)
}

/// What the GPU computes from a plane's record, pass by pass (0: columns, 1: rows): for each
/// segment `seg` and step `j` along the pass's walk (a mask column for the columns pass, a
/// mask row for the rows pass), the block edge's word in slot `seg * 16 + 2 * j` and the inner
/// edge's in the next, 0 where there is none. Each slot is one invocation's work on the GPU;
/// within a segment the slots are in FFmpeg's order, so that filtering them in slot order,
/// skipping empty ones, is FFmpeg's walk ([`SbPass`]).
pub fn slot_table(plane: &SbPlane, pass: usize) -> [u32; TABLE_WORDS] {
    let mut table = [0u32; TABLE_WORDS];
    let (ss_h, ss_v) = plane.subsampling();
    let level = |l: usize| plane.level[l];
    for seg in 0..SEGMENTS {
        let which = seg & 1;
        for j in 0..8 {
            let slot = seg * EDGES + 2 * j;
            let m = &plane.mask[pass];
            if pass == 0 {
                let step = seg >> 1;
                if step >= 4 >> ss_v {
                    continue;
                }
                let y = step * (2 << ss_v);
                let (m1, m2) = (m[y], m[y + 1 + ss_v]);
                let x = 1u8 << j;
                let hm1 = m1[0] | m1[1] | m1[2];
                let hm2 = m2[1] | m2[2];
                if (hm1 | hm2 | m1[3] | m2[3]) as u32 & !((x as u32) - 1) == 0 {
                    continue;
                }
                let pos = j * (8 >> ss_h);
                let l = y * 8 + if ss_h != 0 { j & !1 } else { j };
                let below = 8 << ss_v;
                if plane.params & AT_LEFT == 0 || j > 0 {
                    let first = (hm1 & x != 0, m1[0] & x != 0, m1[1] & x != 0, level(l));
                    let second = (
                        hm2 & x != 0,
                        m2[0] & x != 0,
                        m2[1] & x != 0,
                        level(l + below),
                    );
                    table[slot] = slot_block_edge(plane, pos, which, first, second);
                }
                let inner = [m1[3] & x != 0, m2[3] & x != 0][which];
                if ss_h == 0 && inner {
                    table[slot + 1] = plane.edge(pos + 4, 4, level(l + which * below));
                }
            } else {
                let step = 2 << ss_h;
                let pair = seg >> 1;
                if pair >= 8 / step {
                    continue;
                }
                let row = m[j];
                let vm = (row[0] | row[1] | row[2]) as u32;
                let x = 1u32 << (pair * step);
                if vm & !(x - 1) == 0 {
                    continue;
                }
                let right = 1 + ss_h;
                let x2 = x << right;
                let pos = j * (8 >> ss_v);
                let lrow = if ss_v != 0 { (j & !1) * 8 } else { j * 8 };
                let l = lrow + pair * step;
                let bit = |b: u32, w: usize| row[w] as u32 & b != 0;
                if plane.params & AT_TOP == 0 || j > 0 {
                    let first = (vm & x != 0, bit(x, 0), bit(x, 1), level(l));
                    let second = (vm & x2 != 0, bit(x2, 0), bit(x2, 1), level(l + right));
                    table[slot] = slot_block_edge(plane, pos, which, first, second);
                }
                let inner = [bit(x, 3), bit(x2, 3)][which];
                if ss_v == 0 && inner {
                    table[slot + 1] = plane.edge(pos + 4, 4, level(l + which * right));
                }
            }
        }
    }
    table
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

    /// A job's words give back its fields.
    #[test]
    fn a_superblock_plane_job_round_trips_through_its_words() {
        let mut rng = crate::testing::Rng(13);
        for _ in 0..100 {
            let mut word = || rng.below(1 << 32) as u32;
            let job = LfSbJob {
                header: JobHeader {
                    pixel: word(),
                    stride: word() as i32,
                },
                params: word(),
                record: word(),
            };
            let words = job.to_words();
            assert_eq!(LfSbJob::from_words(&words), job);
            assert!(words[4..].iter().all(|&w| w == 0));
        }
    }

    #[test]
    fn edge_words_round_trip() {
        for (pos, wd) in [(0, 4), (63, 8), (36, 16)] {
            let w = edge_word(pos, wd, 193, 63, 3);
            let (p, half) = from_edge_word(w).expect("an edge");
            assert_eq!((p, half.wd, half.e, half.i, half.h), (pos, wd, 193, 63, 3));
        }
        assert!(from_edge_word(0).is_none());
    }

    /// A `VP9Filter`'s masks: `[plane type][pass][row][width]`.
    type Masks = [[[[u8; 4]; 8]; 2]; 2];

    /// A random filter as the decoder builds them (at most one of 16/8/4 per mask column,
    /// maybe an inner 4), denser or sparser by `density`.
    fn random_filter(seed: &mut u64, density: u64) -> ([u8; 64], Masks, [u8; 64]) {
        let mut next = |n: u64| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) % n
        };
        let mut level = [0u8; 64];
        let mut lut = [0u8; 64];
        for l in 0..64 {
            level[l] = next(64) as u8;
            lut[l] = next(256) as u8;
        }
        let mut mask = [[[[0u8; 4]; 8]; 2]; 2];
        for row in mask.iter_mut().flatten().flatten() {
            for col in 0..8 {
                let w = next(density) as usize;
                if w < 3 {
                    row[w] |= 1 << col;
                }
                if next(3) == 0 {
                    row[3] |= 1 << col;
                }
            }
        }
        (level, mask, lut)
    }

    /// The slot walk (the GPU's) lists FFmpeg's walk's edges segment by segment in order, and
    /// the plane's bound holds everything both passes reach.
    #[test]
    fn slot_walk_equals_ffmpegs_walk_and_stays_in_bounds() {
        let mut seed = 7u64;
        let (mut edges, mut empty) = (0, 0);
        for n in 0..4000 {
            let (level, mut mask, lut) = random_filter(&mut seed, [4, 8, 16, 40][n % 4]);
            if n % 7 == 0 {
                // Only the block edges of the superblock's first row and column.
                for m in mask.iter_mut().flatten().flatten() {
                    *m = [m[0] & 1, 0, 0, 0];
                }
            }
            let filter = SbFilter {
                level: &level,
                mask: &mask,
                mblim_lut: &lut,
                lim_lut: &level,
            };
            let (ss_h, ss_v) = [(0, 0), (1, 1), (1, 0), (0, 1)][n / 4 % 4];
            let kind = (n / 16 % 2) & ((ss_h | ss_v) != 0) as usize;
            let at = [(0, 0), (0, 8), (8, 0), (16, 24)][n / 32 % 4];
            let Some(plane) = SbPlane::new(filter, kind, at, ss_h, ss_v) else {
                let (row, col) = ((at.0 != 0) as i32, (at.1 != 0) as i32);
                assert!(SbPass::columns(filter, &mask[kind][0], col, ss_h, ss_v).is_none());
                assert!(SbPass::rows(filter, &mask[kind][1], row, ss_h, ss_v).is_none());
                empty += 1;
                continue;
            };
            for (pass, walked) in plane.passes().iter().enumerate() {
                let slots = slot_table(&plane, pass);
                for seg in 0..SEGMENTS {
                    let listed: Vec<u32> = slots[seg * EDGES..(seg + 1) * EDGES]
                        .iter()
                        .copied()
                        .filter(|w| *w != 0)
                        .collect();
                    let want: Vec<u32> = walked.as_ref().map_or(vec![], |p| {
                        p.table[seg * EDGES..(seg + 1) * EDGES]
                            .iter()
                            .copied()
                            .take_while(|w| *w != 0)
                            .collect()
                    });
                    assert_eq!(listed, want, "case {n}, pass {pass}, segment {seg}");
                    edges += want.len();
                }
                if let Some(p) = walked {
                    let (rows, cols) = match p.dir {
                        LfDir::H => ((0, p.lines as i32), (p.lo, p.hi)),
                        LfDir::V => ((p.lo, p.hi), (0, p.lines as i32)),
                    };
                    assert!(plane.top <= rows.0 && rows.1 <= plane.bottom, "case {n}");
                    assert!(plane.left <= cols.0 && cols.1 <= plane.right, "case {n}");
                }
            }
        }
        assert!(edges > 100_000, "the cases filter: {edges} edges");
        assert!(empty > 0, "some cases have nothing to filter");
    }

    /// A plane's record holds what the GPU walks, and a job's record gives the same passes.
    #[test]
    fn record_round_trips() {
        let mut seed = 3u64;
        let (level, mask, lut) = random_filter(&mut seed, 8);
        let filter = SbFilter {
            level: &level,
            mask: &mask,
            mblim_lut: &lut,
            lim_lut: &level,
        };
        let plane = SbPlane::new(filter, 1, (8, 0), 1, 1).expect("edges");
        let mut record = [0u8; RECORD_BYTES];
        unsafe { plane.write_record(record.as_mut_ptr()) };
        let back = unsafe { plane_from_record(record.as_ptr(), plane.params) };
        for pass in 0..2 {
            assert_eq!(slot_table(&plane, pass), slot_table(&back, pass));
        }
        assert_eq!(&record[64..128], unsafe {
            std::slice::from_raw_parts(mask[1].as_ptr() as *const u8, 64)
        });
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
