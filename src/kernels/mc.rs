//! VP9 motion compensation: the CPU reference at 8, 10 and 12 bits, and the GPU job encoding
//! (8-bit).
//!
//! The reference reproduces FFmpeg 5.1's C functions (`vp9dsp_template.c`, the `mc` table):
//! - 8-tap filters read `src[-3..+4]` around each pixel, sum in 32 bits, round `(+64) >> 7`
//!   and clip to the pixel's depth; the 2-D case filters rows `-3 .. h+4` horizontally into an
//!   intermediate of pixels, then filters that vertically;
//! - bilinear: `a + ((m * (b - a) + 8) >> 4)`, the 2-D case through an intermediate of pixels
//!   of `h + 1` rows;
//! - avg: `(dst + p + 1) >> 1`; the full-pel functions copy or average.
//!
//! A function of the table ignores the offsets it has no pass for (the h functions ignore
//! `my`), as FFmpeg's do.
//!
//! GPU jobs (`shaders/mc.comp`) cover a tile of up to 8x8 output pixels: a call is split into
//! tiles when it is recorded. A job carries its two filters' taps. The source is read from a window copied at call time (see
//! [`McFunction::window`]), so the caller may change its source right after the call as FFmpeg's
//! decoder does with its emulated-edge buffer.

use super::job::{Job, JobHeader};
use super::Pixel;

/// FFmpeg's `FilterMode` order (the `mc` table's second index).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum McFilter {
    Smooth = 0,
    Regular = 1,
    Sharp = 2,
    Bilinear = 3,
}

impl McFilter {
    pub const ALL: [McFilter; 4] = [
        McFilter::Smooth,
        McFilter::Regular,
        McFilter::Sharp,
        McFilter::Bilinear,
    ];

    fn name(self) -> &'static str {
        match self {
            McFilter::Smooth => "8tap_smooth",
            McFilter::Regular => "8tap_regular",
            McFilter::Sharp => "8tap_sharp",
            McFilter::Bilinear => "bilin",
        }
    }
}

/// VP9's 8-tap sub-pixel filters (the spec's tables, as FFmpeg's `ff_vp9_subpel_filters`),
/// by [`McFilter`] (smooth, regular, sharp) and 1/16-pel position.
pub const SUBPEL_FILTERS: [[[i32; 8]; 16]; 3] = [
    [
        [0, 0, 0, 128, 0, 0, 0, 0],
        [-3, -1, 32, 64, 38, 1, -3, 0],
        [-2, -2, 29, 63, 41, 2, -3, 0],
        [-2, -2, 26, 63, 43, 4, -4, 0],
        [-2, -3, 24, 62, 46, 5, -4, 0],
        [-2, -3, 21, 60, 49, 7, -4, 0],
        [-1, -4, 18, 59, 51, 9, -4, 0],
        [-1, -4, 16, 57, 53, 12, -4, -1],
        [-1, -4, 14, 55, 55, 14, -4, -1],
        [-1, -4, 12, 53, 57, 16, -4, -1],
        [0, -4, 9, 51, 59, 18, -4, -1],
        [0, -4, 7, 49, 60, 21, -3, -2],
        [0, -4, 5, 46, 62, 24, -3, -2],
        [0, -4, 4, 43, 63, 26, -2, -2],
        [0, -3, 2, 41, 63, 29, -2, -2],
        [0, -3, 1, 38, 64, 32, -1, -3],
    ],
    [
        [0, 0, 0, 128, 0, 0, 0, 0],
        [0, 1, -5, 126, 8, -3, 1, 0],
        [-1, 3, -10, 122, 18, -6, 2, 0],
        [-1, 4, -13, 118, 27, -9, 3, -1],
        [-1, 4, -16, 112, 37, -11, 4, -1],
        [-1, 5, -18, 105, 48, -14, 4, -1],
        [-1, 5, -19, 97, 58, -16, 5, -1],
        [-1, 6, -19, 88, 68, -18, 5, -1],
        [-1, 6, -19, 78, 78, -19, 6, -1],
        [-1, 5, -18, 68, 88, -19, 6, -1],
        [-1, 5, -16, 58, 97, -19, 5, -1],
        [-1, 4, -14, 48, 105, -18, 5, -1],
        [-1, 4, -11, 37, 112, -16, 4, -1],
        [-1, 3, -9, 27, 118, -13, 4, -1],
        [0, 2, -6, 18, 122, -10, 3, -1],
        [0, 1, -3, 8, 126, -5, 1, 0],
    ],
    [
        [0, 0, 0, 128, 0, 0, 0, 0],
        [-1, 3, -7, 127, 8, -3, 1, 0],
        [-2, 5, -13, 125, 17, -6, 3, -1],
        [-3, 7, -17, 121, 27, -10, 5, -2],
        [-4, 9, -20, 115, 37, -13, 6, -2],
        [-4, 10, -23, 108, 48, -16, 8, -3],
        [-4, 10, -24, 100, 59, -19, 9, -3],
        [-4, 11, -24, 90, 70, -21, 10, -4],
        [-4, 11, -23, 80, 80, -23, 11, -4],
        [-4, 10, -21, 70, 90, -24, 11, -4],
        [-3, 9, -19, 59, 100, -24, 10, -4],
        [-3, 8, -16, 48, 108, -23, 10, -4],
        [-2, 6, -13, 37, 115, -20, 9, -4],
        [-2, 5, -10, 27, 121, -17, 7, -3],
        [-1, 3, -6, 17, 125, -13, 5, -2],
        [0, 1, -3, 8, 127, -7, 3, -1],
    ],
];

/// The largest height a call may have (FFmpeg's 2-D functions keep `64 + 7` rows).
pub const MAX_HEIGHT: i32 = 64;

/// One function of FFmpeg's `mc` table: `mc[5 - log2(width / 4) ...][filter][avg][h][v]`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct McFunction {
    /// 4, 8, 16, 32 or 64.
    pub width: usize,
    /// Irrelevant for the full-pel functions (`!h && !v`).
    pub filter: McFilter,
    pub avg: bool,
    /// A horizontal pass (`mx` matters).
    pub h: bool,
    /// A vertical pass (`my` matters).
    pub v: bool,
}

/// Rows and columns a call reads around its `width` x `h` block.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Window {
    pub above: usize,
    pub below: usize,
    pub left: usize,
    pub right: usize,
}

impl Window {
    pub fn width(self, block_width: usize) -> usize {
        self.left + block_width + self.right
    }
    pub fn height(self, h: usize) -> usize {
        self.above + h + self.below
    }
}

impl McFunction {
    pub const WIDTHS: [usize; 5] = [64, 32, 16, 8, 4];

    /// Every distinct function: the full-pel ones once per width, not once per filter.
    pub fn all() -> Vec<McFunction> {
        let mut all = Vec::new();
        for width in McFunction::WIDTHS {
            for avg in [false, true] {
                all.push(McFunction {
                    width,
                    filter: McFilter::Regular,
                    avg,
                    h: false,
                    v: false,
                });
                for filter in McFilter::ALL {
                    for (h, v) in [(true, false), (false, true), (true, true)] {
                        all.push(McFunction {
                            width,
                            filter,
                            avg,
                            h,
                            v,
                        });
                    }
                }
            }
        }
        all
    }

    /// FFmpeg 5.1's C function name without `_c`, e.g. `put_8tap_regular_8h`, `avg_bilin_16hv`,
    /// `copy64`, `avg4`.
    pub fn name(self) -> String {
        let op = if self.avg { "avg" } else { "put" };
        let dir = match (self.h, self.v) {
            (false, false) => {
                return format!("{}{}", if self.avg { "avg" } else { "copy" }, self.width)
            }
            (true, false) => "h",
            (false, true) => "v",
            (true, true) => "hv",
        };
        format!("{op}_{}_{}{dir}", self.filter.name(), self.width)
    }

    fn reach(self) -> (usize, usize) {
        match self.filter {
            McFilter::Bilinear => (0, 1),
            _ => (3, 4),
        }
    }

    /// The source pixels a call reads, relative to its block.
    pub fn window(self) -> Window {
        let (before, after) = self.reach();
        let (h, v) = (self.h as usize, self.v as usize);
        Window {
            above: before * v,
            below: after * v,
            left: before * h,
            right: after * h,
        }
    }

    /// The GPU job's parameter word: mx, my, filter, avg, h, v (tile rows and columns are
    /// added per tile).
    pub fn params(self, mx: i32, my: i32) -> u32 {
        (mx as u32 & 15)
            | (my as u32 & 15) << 4
            | (self.filter as u32) << 8
            | (self.avg as u32) << 10
            | (self.h as u32) << 11
            | (self.v as u32) << 12
    }

    /// The function a parameter word describes (the width is that of the tile).
    pub fn from_params(p: u32) -> (McFunction, i32, i32) {
        let f = McFunction {
            width: tile_cols(p),
            filter: McFilter::ALL[(p >> 8 & 3) as usize],
            avg: p >> 10 & 1 != 0,
            h: p >> 11 & 1 != 0,
            v: p >> 12 & 1 != 0,
        };
        (f, (p & 15) as i32, (p >> 4 & 15) as i32)
    }
}

/// An 8-tap filter as a job carries it: each tap + 32 in a byte (taps lie in -24 ..= 128).
pub fn packed_taps(f: McFilter, m: i32) -> [u32; 2] {
    if f == McFilter::Bilinear {
        return [0, 0];
    }
    PACKED_TAPS[f as usize][(m & 15) as usize]
}

/// [`SUBPEL_FILTERS`] packed as jobs carry them, once at compile time (a call packs its two
/// filters from here instead of from the taps).
const PACKED_TAPS: [[[u32; 2]; 16]; 3] = {
    let mut out = [[[0u32; 2]; 16]; 3];
    let mut f = 0;
    while f < 3 {
        let mut m = 0;
        while m < 16 {
            let mut i = 0;
            while i < 8 {
                out[f][m][i / 4] |= ((SUBPEL_FILTERS[f][m][i] + 32) as u32) << (8 * (i % 4));
                i += 1;
            }
            m += 1;
        }
        f += 1;
    }
    out
};

/// Tile rows and columns (1..=8 each) in a parameter word.
pub fn tile_params(rows: usize, cols: usize) -> u32 {
    debug_assert!((1..=8).contains(&rows) && (1..=8).contains(&cols));
    ((rows - 1) as u32) << 13 | ((cols - 1) as u32) << 16
}

pub fn tile_rows(p: u32) -> usize {
    (p >> 13 & 7) as usize + 1
}

pub fn tile_cols(p: u32) -> usize {
    (p >> 16 & 7) as usize + 1
}

/// A motion compensation's job (`shaders/mc.comp`, three `uvec4`s): one tile of up to 8x8
/// output pixels, its source and its function.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct McJob {
    /// The tile's top-left pixel.
    pub header: JobHeader,
    /// The source pixel under the tile's top-left, as a byte offset into its buffer (the
    /// reference frame read in place, or the arena holding a window copied at call time).
    pub src: u32,
    pub src_stride: i32,
    /// [`McFunction::params`] with the tile's [`tile_params`].
    pub params: u32,
    /// The horizontal and vertical 8-tap filters ([`packed_taps`]).
    pub h_taps: [u32; 2],
    pub v_taps: [u32; 2],
}

impl McJob {
    /// A call's job before its tiles: the tile parameters and the header are left out.
    pub fn new(f: McFunction, mx: i32, my: i32, src: u32, src_stride: i32) -> McJob {
        McJob {
            header: JobHeader::default(),
            src,
            src_stride,
            params: f.params(mx, my),
            h_taps: packed_taps(f.filter, mx),
            v_taps: packed_taps(f.filter, my),
        }
    }

    /// The job of the tile `row` rows and `col` columns into the block of this job (its
    /// top-left tile), with tile parameters `tile`: pixel and source move by as much.
    pub fn at_tile(&self, row: usize, col: usize, tile: u32) -> McJob {
        let step = |stride: i32| (row as i64 * stride as i64 + col as i64) as u32;
        McJob {
            header: JobHeader {
                pixel: self.header.pixel.wrapping_add(step(self.header.stride)),
                stride: self.header.stride,
            },
            src: self.src.wrapping_add(step(self.src_stride)),
            params: self.params | tile,
            ..*self
        }
    }

    /// The function, `mx` and `my` (the width is the tile's).
    pub fn function(&self) -> (McFunction, i32, i32) {
        McFunction::from_params(self.params)
    }

    pub fn tile_rows(&self) -> usize {
        tile_rows(self.params)
    }

    pub fn tile_cols(&self) -> usize {
        tile_cols(self.params)
    }

    pub fn to_words(&self) -> Job {
        let mut words = self.header.job();
        words[2] = self.src;
        words[3] = self.src_stride as u32;
        words[4] = self.params;
        words[5..7].copy_from_slice(&self.h_taps);
        words[7..9].copy_from_slice(&self.v_taps);
        words
    }

    pub fn from_words(words: &Job) -> McJob {
        McJob {
            header: JobHeader::of(words),
            src: words[2],
            src_stride: words[3] as i32,
            params: words[4],
            h_taps: [words[5], words[6]],
            v_taps: [words[7], words[8]],
        }
    }
}

/// One 8-tap output: `taps` applied to `at(-3) ..= at(4)`, clipped to `0 ..= max`.
#[inline]
fn tap8(taps: &[i32; 8], max: i32, at: impl Fn(isize) -> i32) -> i32 {
    let mut sum = 64;
    for (k, t) in taps.iter().enumerate() {
        sum += t * at(k as isize - 3);
    }
    (sum >> 7).clamp(0, max)
}

#[inline]
fn bilin(a: i32, b: i32, m: i32) -> i32 {
    a + ((m * (b - a) + 8) >> 4)
}

/// Runs one call at once on the CPU, as FFmpeg's C function does. A height outside
/// `1..=MAX_HEIGHT` does nothing (FFmpeg's functions loop forever or overrun for such);
/// offsets are taken modulo 16.
///
/// # Safety
/// `dst` must be valid for `f.width` x `h` pixels at `dst_stride`, and `src` for the
/// [`McFunction::window`] around its `f.width` x `h` block at `src_stride`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn mc_now(
    f: McFunction,
    dst: *mut u8,
    dst_stride: isize,
    src: *const u8,
    src_stride: isize,
    h: i32,
    mx: i32,
    my: i32,
) {
    mc_now_at(f, (dst, dst_stride), (src, src_stride), h, (mx, my), 8)
}

/// [`mc_now`] at 10 or 12 bits: pixels of `bit_depth` bits in 16-bit words, strides in
/// pixels. (FFmpeg's functions at those depths are the 8-bit ones over wider pixels, the clips
/// the depth's.)
///
/// # Safety
/// As for [`mc_now`].
pub unsafe fn mc_now_high(
    f: McFunction,
    dst: (*mut u16, isize),
    src: (*const u16, isize),
    h: i32,
    (mx, my): (i32, i32),
    bit_depth: u32,
) {
    mc_now_at(f, dst, src, h, (mx, my), bit_depth)
}

unsafe fn mc_now_at<P: Pixel>(
    f: McFunction,
    (dst, dst_stride): (*mut P, isize),
    (src, src_stride): (*const P, isize),
    h: i32,
    (mx, my): (i32, i32),
    bit_depth: u32,
) {
    if !(1..=MAX_HEIGHT).contains(&h) {
        return;
    }
    let max = (1 << bit_depth) - 1;
    let (w, h) = (f.width, h as usize);
    let (mx, my) = (mx & 15, my & 15);
    let px = |row: isize, col: isize| (*src.offset(row * src_stride + col)).value();
    let put = |y: usize, x: usize, p: i32| {
        let d = dst.offset(y as isize * dst_stride).add(x);
        *d = P::from_value(if f.avg {
            ((*d).value() + p + 1) >> 1
        } else {
            p
        });
    };
    if !(f.h && f.v) {
        // One pass (or a copy): FFmpeg reads and writes pixel by pixel, row by row, which
        // matters only when the source overlaps the block.
        for y in 0..h {
            for x in 0..w {
                let (yi, xi) = (y as isize, x as isize);
                let p = match (f.h, f.v, f.filter) {
                    (false, false, _) => px(yi, xi),
                    (true, _, McFilter::Bilinear) => bilin(px(yi, xi), px(yi, xi + 1), mx),
                    (_, _, McFilter::Bilinear) => bilin(px(yi, xi), px(yi + 1, xi), my),
                    (true, _, filter) => {
                        tap8(&SUBPEL_FILTERS[filter as usize][mx as usize], max, |k| {
                            px(yi, xi + k)
                        })
                    }
                    (_, _, filter) => {
                        tap8(&SUBPEL_FILTERS[filter as usize][my as usize], max, |k| {
                            px(yi + k, xi)
                        })
                    }
                };
                put(y, x, p);
            }
        }
        return;
    }
    // Two passes: the whole intermediate (clipped pixels) first, then the vertical pass.
    if f.filter == McFilter::Bilinear {
        let mut mid = vec![0i32; w * (h + 1)];
        for y in 0..=h {
            for x in 0..w {
                let (yi, xi) = (y as isize, x as isize);
                mid[y * w + x] = bilin(px(yi, xi), px(yi, xi + 1), mx);
            }
        }
        for y in 0..h {
            for x in 0..w {
                put(y, x, bilin(mid[y * w + x], mid[(y + 1) * w + x], my));
            }
        }
        return;
    }
    let taps = &SUBPEL_FILTERS[f.filter as usize];
    let mut mid = vec![0i32; w * (h + 7)];
    for y in 0..h + 7 {
        for x in 0..w {
            let (yi, xi) = (y as isize - 3, x as isize);
            mid[y * w + x] = tap8(&taps[mx as usize], max, |k| px(yi, xi + k));
        }
    }
    for y in 0..h {
        for x in 0..w {
            let p = tap8(&taps[my as usize], max, |k| {
                mid[(y as isize + 3 + k) as usize * w + x]
            });
            put(y, x, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// A job's words give back its fields; a tile's job moves pixel and source by its
    /// position, each by its own stride, and adds the tile's parameters.
    #[test]
    fn a_motion_compensation_job_round_trips_through_its_words() {
        let mut rng = Rng(9);
        for _ in 0..100 {
            let mut word = || rng.below(1 << 32) as u32;
            let job = McJob {
                header: JobHeader {
                    pixel: word(),
                    stride: word() as i32,
                },
                src: word(),
                src_stride: word() as i32,
                params: word(),
                h_taps: [word(), word()],
                v_taps: [word(), word()],
            };
            let words = job.to_words();
            assert_eq!(McJob::from_words(&words), job);
            assert!(words[9..].iter().all(|&w| w == 0));
        }
        let f = McFunction::all()[7];
        let mut first = McJob::new(f, 3, 5, 1000, -64);
        first.header = JobHeader {
            pixel: 5000,
            stride: 128,
        };
        let tile = first.at_tile(8, 4, tile_params(8, 4));
        assert_eq!(tile.header.pixel, 5000 + 8 * 128 + 4);
        assert_eq!(tile.src, 1000 - 8 * 64 + 4);
        assert_eq!(tile.function(), (McFunction { width: 4, ..f }, 3, 5));
        assert_eq!((tile.tile_rows(), tile.tile_cols()), (8, 4));
    }
}
