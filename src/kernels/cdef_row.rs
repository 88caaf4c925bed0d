//! AV1's CDEF a superblock row at a time, from a copy of the row's deblocked pixels: the CPU
//! reference of the GPU's row pass.
//!
//! dav1d 1.0.0 filters a row in place (`dav1d_cdef_brow`, cdef_apply_tmpl.c). It keeps copies of
//! what its own writes destroy and later blocks still read: the two lines above each 8-pixel
//! strip and the two columns left of each block. So every block reads deblocked pixels, never
//! filtered ones. Here the same comes from a copy of the row made before any write
//! ([`RowInput`]), with the two lines above and below it given apart (the halos, as the
//! decoder's line buffers hold them). A block's direction is found on the copy too
//! ([`find_dir`], dav1d's `cdef_find_dir_c`), so no block depends on another and all of a row's
//! blocks can run at once.
//!
//! A row is what `dav1d_filter_sbrow_cdef` filters for superblock row `sby`: the previous row's
//! last strip (deferred, because this row's deblocking still changed it), then its own strips
//! but its last. Which blocks it filters and how strongly comes from the frame header's
//! strengths, each 64x64 block's `cdef_idx` and each 8x8 block's "has coefficients" bit.

use super::cdef::{
    filter_pixel, Strengths, HAVE_BOTTOM, HAVE_LEFT, HAVE_RIGHT, HAVE_TOP, WINDOW_LEN,
    WINDOW_ORIGIN, WINDOW_STRIDE,
};
use super::Pixel;

/// dav1d's `Dav1dPixelLayout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    I400 = 0,
    I420 = 1,
    I422 = 2,
    I444 = 3,
}

impl Layout {
    pub fn from_dav1d(layout: i32) -> Option<Layout> {
        [Layout::I400, Layout::I420, Layout::I422, Layout::I444]
            .get(usize::try_from(layout).ok()?)
            .copied()
    }

    /// Chroma's horizontal and vertical subsampling shifts.
    pub fn subsampling(self) -> (usize, usize) {
        match self {
            Layout::I400 | Layout::I420 => (1, 1),
            Layout::I422 => (1, 0),
            Layout::I444 => (0, 0),
        }
    }

    pub fn planes(self) -> usize {
        if self == Layout::I400 {
            1
        } else {
            3
        }
    }
}

/// What a frame's rows share: the header's CDEF fields and the frame's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameParams {
    pub layout: Layout,
    /// 8, 10 or 12.
    pub bitdepth: u32,
    /// The header's damping (3 to 6), before the bit depth is added.
    pub damping: i32,
    /// The header's strength codes per `cdef_idx` (primary << 2 | secondary code), luma and
    /// chroma.
    pub y_strength: [u8; 8],
    pub uv_strength: [u8; 8],
    /// The frame's size in 4x4 blocks (dav1d's `bw`, `bh`).
    pub bw: usize,
    pub bh: usize,
}

impl FrameParams {
    /// 64x64 blocks across: a row of [`Row::cdef_idx`].
    pub fn sb64_cols(&self) -> usize {
        self.bw.div_ceil(16)
    }

    /// 128-pixel columns across: a strip of [`Row::noskip`].
    pub fn sb128_cols(&self) -> usize {
        self.bw.div_ceil(32)
    }

    /// A plane's width in pixels over whole 4x4 blocks: what rows and halos hold.
    pub fn plane_width(&self, plane: usize) -> usize {
        (self.bw * 4) >> self.shifts(plane).0
    }

    /// A plane's subsampling shifts (none for luma).
    pub fn shifts(&self, plane: usize) -> (usize, usize) {
        if plane == 0 {
            (0, 0)
        } else {
            self.layout.subsampling()
        }
    }

    fn bitdepth_min_8(&self) -> i32 {
        self.bitdepth as i32 - 8
    }
}

/// One superblock row's CDEF: the 8-pixel strips from `by_start` to `by_end` (4x4 block rows;
/// `by_start` even) and the masks they read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub by_start: usize,
    pub by_end: usize,
    /// `cdef_idx` of each 64x64 block the strips meet, -1 where it has none: row
    /// `(by >> 4) - (by_start >> 4)`, [`FrameParams::sb64_cols`] to a row.
    pub cdef_idx: Vec<i8>,
    /// Per strip, per 128 columns ([`FrameParams::sb128_cols`] to a strip): a bit per
    /// 4-pixel column, set where its 8x8 block has coefficients (dav1d's `noskip_mask`).
    pub noskip: Vec<u32>,
}

impl Row {
    /// The rows `dav1d_filter_sbrow_cdef` filters for superblock row `sby` of a frame with
    /// `sb_rows` rows of superblocks of `sb_size` 4x4 blocks (16 or 32), without masks.
    pub fn of_superblock_row(sby: usize, sb_rows: usize, sb_size: usize, bh: usize) -> Row {
        let start = sby * sb_size;
        let own = sb_size - if sby + 1 < sb_rows { 2 } else { 0 };
        Row {
            by_start: start.saturating_sub(2),
            by_end: (start + own).min(bh),
            cdef_idx: Vec::new(),
            noskip: Vec::new(),
        }
    }

    pub fn strips(&self) -> usize {
        self.by_end.saturating_sub(self.by_start).div_ceil(2)
    }

    /// Rows of 64x64 blocks the strips meet: the rows of [`Row::cdef_idx`].
    pub fn sb64_rows(&self) -> usize {
        match self.strips() {
            0 => 0,
            n => ((self.by_start + 2 * n - 1) >> 4) - (self.by_start >> 4) + 1,
        }
    }

    /// The rows of `plane` that the strips cover: `y_lo..y_hi`.
    pub fn plane_rows(&self, params: &FrameParams, plane: usize) -> (usize, usize) {
        let ss_ver = params.shifts(plane).1;
        (
            (self.by_start * 4) >> ss_ver,
            ((self.by_start + 2 * self.strips()) * 4) >> ss_ver,
        )
    }

    /// The strength codes (luma, chroma) of the 8x8 block at 4x4 position (`bx`, `by`) (both
    /// even) where CDEF filters it: its 64x64 block has a `cdef_idx` with a strength, and it
    /// has coefficients.
    pub fn block_levels(&self, params: &FrameParams, bx: usize, by: usize) -> Option<(u8, u8)> {
        let sb64_row = (by >> 4) - (self.by_start >> 4);
        let idx = *self
            .cdef_idx
            .get(sb64_row * params.sb64_cols() + (bx >> 4))?;
        let idx = usize::try_from(idx).ok()?;
        let levels = (*params.y_strength.get(idx)?, *params.uv_strength.get(idx)?);
        let strip = (by - self.by_start) / 2;
        let noskip = self.noskip.get(strip * params.sb128_cols() + (bx >> 5))?;
        (levels != (0, 0) && noskip & (3 << (bx & 30)) != 0).then_some(levels)
    }
}

/// What a row's blocks read: per plane, a copy of rows `y_lo - 2 .. y_hi + 2` made before
/// any of them is filtered, the first and last two being the halos (rows of other superblock
/// rows, deblocked and not filtered, as the decoder's line buffers hold them; zeros where the
/// frame has none).
pub struct RowInput<P> {
    planes: Vec<Vec<P>>,
    widths: Vec<usize>,
    y_lo: Vec<usize>,
}

impl<P: Pixel> RowInput<P> {
    /// Copies the row's rows from `planes` (strides in pixels), with the halos above and below:
    /// two rows of [`FrameParams::plane_width`] pixels per plane, where there are any.
    pub fn take(
        params: &FrameParams,
        row: &Row,
        planes: &[&[P]],
        strides: &[usize],
        top: Option<&[Vec<P>]>,
        bottom: Option<&[Vec<P>]>,
    ) -> RowInput<P> {
        let n = params.layout.planes();
        let mut input = RowInput {
            planes: Vec::with_capacity(n),
            widths: Vec::with_capacity(n),
            y_lo: Vec::with_capacity(n),
        };
        for p in 0..n {
            let width = params.plane_width(p);
            let (y_lo, y_hi) = row.plane_rows(params, p);
            let mut copy = vec![P::from_value(0); width * (y_hi - y_lo + 4)];
            let mut put = |r: usize, line: &[P]| {
                copy[r * width..(r + 1) * width].copy_from_slice(&line[..width]);
            };
            for (r, y) in (y_lo..y_hi).enumerate() {
                put(r + 2, &planes[p][y * strides[p]..]);
            }
            if let Some(top) = top {
                put(0, &top[p][..width]);
                put(1, &top[p][width..]);
            }
            if let Some(bottom) = bottom {
                let last = y_hi - y_lo + 2;
                put(last, &bottom[p][..width]);
                put(last + 1, &bottom[p][width..]);
            }
            input.planes.push(copy);
            input.widths.push(width);
            input.y_lo.push(y_lo);
        }
        input
    }

    /// The pixel at (`x`, `y`) of `plane` (frame coordinates, `y` from `y_lo - 2`).
    fn at(&self, plane: usize, x: usize, y: usize) -> i32 {
        let r = y + 2 - self.y_lo[plane];
        self.planes[plane][r * self.widths[plane] + x].value()
    }

    /// The padded window of the `w` x `h` block at (`x0`, `y0`) of `plane`, as dav1d's
    /// `padding()` builds it: `i16::MIN` on the sides `edges` lacks.
    fn window(
        &self,
        plane: usize,
        (x0, y0): (usize, usize),
        (w, h): (usize, usize),
        edges: u32,
    ) -> [i16; WINDOW_LEN] {
        let mut window = [i16::MIN; WINDOW_LEN];
        let has = |flag| edges & flag != 0;
        for r in 0..h + 4 {
            if (r < 2 && !has(HAVE_TOP)) || (r >= h + 2 && !has(HAVE_BOTTOM)) {
                continue;
            }
            for c in 0..w + 4 {
                if (c < 2 && !has(HAVE_LEFT)) || (c >= w + 2 && !has(HAVE_RIGHT)) {
                    continue;
                }
                let v = self.at(plane, x0 + c - 2, y0 + r - 2);
                window[r * WINDOW_STRIDE + c] = v as i16;
            }
        }
        window
    }
}

/// dav1d's `cdef_find_dir_c` on the 8x8 block `px(x, y)`: its direction (0 to 7) and the
/// variance that scales luma's primary strength.
pub fn find_dir(px: impl Fn(usize, usize) -> i32, bitdepth_min_8: i32) -> (i32, u32) {
    let mut hv = [[0i32; 8]; 2];
    let mut diag = [[0i32; 15]; 2];
    let mut alt = [[0i32; 11]; 4];
    for y in 0..8 {
        for x in 0..8 {
            let p = (px(x, y) >> bitdepth_min_8) - 128;
            diag[0][y + x] += p;
            alt[0][y + (x >> 1)] += p;
            hv[0][y] += p;
            alt[1][3 + y - (x >> 1)] += p;
            diag[1][7 + y - x] += p;
            alt[2][3 - (y >> 1) + x] += p;
            hv[1][x] += p;
            alt[3][(y >> 1) + x] += p;
        }
    }
    // (dav1d adds int products into unsigned costs: wrapping u32 arithmetic.)
    let sq = |v: i32| v.wrapping_mul(v) as u32;
    let mut cost = [0u32; 8];
    for (&h, &v) in hv[0].iter().zip(&hv[1]) {
        cost[2] = cost[2].wrapping_add(sq(h));
        cost[6] = cost[6].wrapping_add(sq(v));
    }
    cost[2] = cost[2].wrapping_mul(105);
    cost[6] = cost[6].wrapping_mul(105);
    const DIV: [u32; 7] = [840, 420, 280, 210, 168, 140, 120];
    for n in 0..7 {
        let d = DIV[n];
        cost[0] = cost[0].wrapping_add(
            sq(diag[0][n])
                .wrapping_add(sq(diag[0][14 - n]))
                .wrapping_mul(d),
        );
        cost[4] = cost[4].wrapping_add(
            sq(diag[1][n])
                .wrapping_add(sq(diag[1][14 - n]))
                .wrapping_mul(d),
        );
    }
    cost[0] = cost[0].wrapping_add(sq(diag[0][7]).wrapping_mul(105));
    cost[4] = cost[4].wrapping_add(sq(diag[1][7]).wrapping_mul(105));
    for n in 0..4 {
        let c = &mut cost[2 * n + 1];
        for m in 0..5 {
            *c = c.wrapping_add(sq(alt[n][3 + m]));
        }
        *c = c.wrapping_mul(105);
        for m in 0..3 {
            let d = DIV[2 * m + 1];
            *c = c.wrapping_add(
                sq(alt[n][m])
                    .wrapping_add(sq(alt[n][10 - m]))
                    .wrapping_mul(d),
            );
        }
    }
    let mut best = 0;
    for n in 1..8 {
        if cost[n] > cost[best] {
            best = n;
        }
    }
    (best as i32, cost[best].wrapping_sub(cost[best ^ 4]) >> 10)
}

/// dav1d's `adjust_strength`: luma's primary strength scaled by the block's variance.
pub fn adjust_strength(strength: i32, variance: u32) -> i32 {
    if variance == 0 {
        return 0;
    }
    let i = match variance >> 6 {
        0 => 0,
        v => (31 - v.leading_zeros() as i32).min(12),
    };
    (strength * (4 + i) + 8) >> 4
}

/// Chroma's direction from luma's: as is, or (4:2:2) through dav1d's table for its
/// non-square chroma.
const UV_DIRECTIONS_422: [i32; 8] = [7, 0, 2, 4, 5, 6, 6, 6];

/// A strength code's primary and secondary strengths at the frame's bit depth.
fn strengths_of(level: u8, bitdepth_min_8: i32) -> (i32, i32) {
    let secondary = (level & 3) as i32;
    (
        ((level >> 2) as i32) << bitdepth_min_8,
        (secondary + (secondary == 3) as i32) << bitdepth_min_8,
    )
}

/// Filters the row's blocks from `input` into `planes` (strides in pixels), as dav1d's two
/// `dav1d_cdef_brow` calls for the row do in place.
pub fn filter_row<P: Pixel>(
    params: &FrameParams,
    row: &Row,
    input: &RowInput<P>,
    planes: &mut [&mut [P]],
    strides: &[usize],
) {
    let bd8 = params.bitdepth_min_8();
    let damping = params.damping + bd8;
    for strip in 0..row.strips() {
        let by = row.by_start + 2 * strip;
        for bx in (0..params.bw).step_by(2) {
            let Some((y_level, uv_level)) = row.block_levels(params, bx, by) else {
                continue;
            };
            let (y_pri, y_sec) = strengths_of(y_level, bd8);
            let (uv_pri, uv_sec) = strengths_of(uv_level, bd8);
            let (dir, variance) = if y_pri != 0 || uv_pri != 0 {
                find_dir(|x, y| input.at(0, bx * 4 + x, by * 4 + y), bd8)
            } else {
                (0, 0)
            };
            let edges = [
                (bx > 0, HAVE_LEFT),
                (bx + 2 < params.bw, HAVE_RIGHT),
                (by > 0, HAVE_TOP),
                (by + 2 < params.bh, HAVE_BOTTOM),
            ]
            .iter()
            .fold(0, |e, &(has, flag)| if has { e | flag } else { e });
            let mut run = |plane: usize, primary: i32, secondary: i32, dir: i32, damping: i32| {
                let (ss_hor, ss_ver) = params.shifts(plane);
                let (x0, y0) = ((bx * 4) >> ss_hor, (by * 4) >> ss_ver);
                let (w, h) = (8 >> ss_hor, 8 >> ss_ver);
                let window = input.window(plane, (x0, y0), (w, h), edges);
                let s = Strengths {
                    primary,
                    secondary,
                    dir,
                    damping,
                    bitdepth_min_8: bd8,
                };
                for y in 0..h {
                    for x in 0..w {
                        let v = filter_pixel(&window, WINDOW_ORIGIN + y * WINDOW_STRIDE + x, &s);
                        planes[plane][(y0 + y) * strides[plane] + x0 + x] = P::from_value(v);
                    }
                }
            };
            if y_pri != 0 {
                let adjusted = adjust_strength(y_pri, variance);
                if adjusted != 0 || y_sec != 0 {
                    run(0, adjusted, y_sec, dir, damping);
                }
            } else if y_sec != 0 {
                run(0, 0, y_sec, 0, damping);
            }
            if uv_level != 0 && params.layout != Layout::I400 {
                let uv_dir = match (uv_pri, params.layout) {
                    (0, _) => 0,
                    (_, Layout::I422) => UV_DIRECTIONS_422[dir as usize],
                    _ => dir,
                };
                for plane in 1..3 {
                    run(plane, uv_pri, uv_sec, uv_dir, damping - 1);
                }
            }
        }
    }
}

/// Words of a GPU record's header (`shaders/cdef_row.glsl`, `R_*`).
pub const HEADER_WORDS: usize = 39;
/// Bytes one job of `shaders/cdef_row_copy.comp` copies.
pub const COPY_BYTES_PER_JOB: usize = 256;

/// Where a plane's pixels are in the buffer the GPU writes: the byte offset of its first
/// pixel and its stride in bytes.
#[derive(Clone, Copy, Debug)]
pub struct PlaneAt {
    pub offset: u32,
    pub stride: u32,
}

/// A row's record for the GPU (`shaders/cdef_row.glsl`), the size of the snapshot its kernels
/// fill and read (a buffer of its own), and the job counts of its two levels: the snapshot's
/// rows, then the blocks.
pub struct GpuRecord {
    pub words: Vec<u32>,
    pub snapshot_bytes: usize,
    pub copy_jobs: u32,
    pub block_jobs: u32,
}

impl Row {
    /// The record of the row, for pixels of `two_bytes` at `planes`, with the halos (two
    /// rows of [`FrameParams::plane_width`] pixels per plane, as bytes) where there are any.
    pub fn gpu_record(
        &self,
        params: &FrameParams,
        planes: &[PlaneAt],
        two_bytes: bool,
        top: Option<&[Vec<u8>]>,
        bottom: Option<&[Vec<u8>]>,
    ) -> GpuRecord {
        debug_assert!(params.bw % 2 == 0, "dav1d's bw counts whole 8x8 blocks");
        let n = params.layout.planes();
        let bpp = 1 + two_bytes as usize;
        let mut h = [0u32; HEADER_WORDS];
        let (ss_hor, ss_ver) = params.layout.subsampling();
        let pack = |codes: &[u8; 8]| {
            let w = |i: usize| u32::from_le_bytes(codes[i..i + 4].try_into().expect("4"));
            [w(0), w(4)]
        };
        h[..10].copy_from_slice(&[
            params.bw as u32,
            params.bh as u32,
            self.by_start as u32,
            self.strips() as u32,
            ss_hor as u32,
            ss_ver as u32,
            n as u32,
            params.bitdepth - 8,
            two_bytes as u32,
            (params.damping + params.bitdepth_min_8()) as u32,
        ]);
        h[10..12].copy_from_slice(&pack(&params.y_strength));
        h[12..14].copy_from_slice(&pack(&params.uv_strength));
        h[14] = params.sb64_cols() as u32;
        h[15] = params.sb128_cols() as u32;
        let mut bytes = vec![0u8; HEADER_WORDS * 4];
        h[16] = bytes.len() as u32;
        bytes.extend(self.cdef_idx.iter().map(|&i| i as u8));
        bytes.resize(bytes.len().next_multiple_of(4), 0);
        h[17] = (bytes.len() / 4) as u32;
        bytes.extend(self.noskip.iter().flat_map(|w| w.to_le_bytes()));
        let (mut copy_jobs, mut snapshot_bytes) = (0, 0);
        for p in 0..n {
            let width = params.plane_width(p);
            let (y_lo, y_hi) = self.plane_rows(params, p);
            let row_bytes = width * bpp;
            h[18 + 2 * p] = planes[p].offset;
            h[19 + 2 * p] = planes[p].stride;
            h[24 + p] = snapshot_bytes as u32;
            h[27 + p] = width as u32;
            h[30 + p] = y_lo as u32;
            h[33 + p] = (y_hi - y_lo) as u32;
            h[36 + p] = bytes.len() as u32;
            let rows = y_hi - y_lo + 4;
            copy_jobs += rows * row_bytes.div_ceil(COPY_BYTES_PER_JOB);
            snapshot_bytes += (rows * row_bytes).next_multiple_of(4);
            // The halos: two rows above, two below (zeros where the strips have none).
            for lines in [top, bottom] {
                match lines {
                    Some(lines) => bytes.extend_from_slice(&lines[p][..2 * row_bytes]),
                    None => bytes.resize(bytes.len() + 2 * row_bytes, 0),
                }
            }
            bytes.resize(bytes.len().next_multiple_of(4), 0);
        }
        for (i, w) in h.iter().enumerate() {
            bytes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        GpuRecord {
            words: bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
                .collect(),
            snapshot_bytes,
            copy_jobs: copy_jobs as u32,
            block_jobs: (params.bw / 2 * self.strips()) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_superblock_rows_tile_the_frame() {
        // 64x64 superblocks, 300 pixel rows: bh 75, 5 superblock rows.
        let rows: Vec<_> = (0..5)
            .map(|sby| Row::of_superblock_row(sby, 5, 16, 75))
            .collect();
        let spans: Vec<_> = rows.iter().map(|r| (r.by_start, r.by_end)).collect();
        assert_eq!(spans, [(0, 14), (14, 30), (30, 46), (46, 62), (62, 75)]);
        assert_eq!(rows[4].strips(), 7);
        assert_eq!(rows[1].sb64_rows(), 2);
        assert_eq!(rows[0].sb64_rows(), 1);
        // 128x128: the deferred strip, then 15 of its own.
        let r = Row::of_superblock_row(1, 3, 32, 96);
        assert_eq!(
            (r.by_start, r.by_end, r.strips(), r.sb64_rows()),
            (30, 62, 16, 3)
        );
    }

    #[test]
    fn adjusted_strength_follows_the_variance() {
        assert_eq!(adjust_strength(15, 0), 0);
        assert_eq!(adjust_strength(15, 63), (15 * 4 + 8) >> 4);
        assert_eq!(adjust_strength(15, 64), (15 * 4 + 8) >> 4);
        assert_eq!(adjust_strength(15, 128), (15 * 5 + 8) >> 4);
        assert_eq!(adjust_strength(15, u32::MAX), (15 * 16 + 8) >> 4);
    }

    #[test]
    fn flat_block_has_no_variance() {
        assert_eq!(find_dir(|_, _| 77, 0), (0, 0));
    }
}
