//! AV1's constrained directional enhancement filter (CDEF) as dav1d 1.0.0 runs it
//! (`src/cdef_tmpl.c`): the CPU reference of its `fb[]` functions, 8 and 16 bits per pixel.
//!
//! A call filters one 8x8, 4x8 or 4x4 block in place from a padded window of its input: two
//! pixels around the block, taken from `top` (the two rows above, saved before the row above
//! was filtered), `left` (two columns per row, saved likewise), the block itself with two
//! columns to its right, and `bottom` (two rows below). Where `edges` says a side is missing
//! the window holds `i16::MIN`, which the arithmetic ignores: as a signed value it is never the
//! maximum, as an unsigned one never the minimum, and its difference to any pixel is too large
//! for the constraint to pass. Building the window ([`pad`]) and filtering it ([`filter`]) are
//! separate so that the window can be taken when dav1d makes the call and the filter run
//! later: the window is all the filter reads.

use super::job::{Job, JobHeader};
use super::Pixel;

/// Row stride of the padded window, and its size: (8 + 4) x (8 + 4) values.
pub const WINDOW_STRIDE: usize = 12;
pub const WINDOW_LEN: usize = WINDOW_STRIDE * WINDOW_STRIDE;
/// Index of the block's top-left pixel in the window.
pub const WINDOW_ORIGIN: usize = 2 * WINDOW_STRIDE + 2;

/// Width and height of the blocks of dav1d's `fb[0]`, `fb[1]` and `fb[2]`: 8x8 (luma and
/// 4:4:4 chroma), 4x8 (4:2:2 chroma), 4x4 (4:2:0 chroma).
pub const BLOCK_SIZES: [(usize, usize); 3] = [(8, 8), (4, 8), (4, 4)];

/// dav1d's `CdefEdgeFlags`: which neighbours of the block exist.
pub const HAVE_LEFT: u32 = 1;
pub const HAVE_RIGHT: u32 = 2;
pub const HAVE_TOP: u32 = 4;
pub const HAVE_BOTTOM: u32 = 8;

/// The window offsets of the two taps (first and second pass) of each direction, with the
/// table's two extra directions on either side so that `dir + 2` and `dir - 2` need no wrap:
/// entry `dir + 2` is direction `dir` (dav1d's `dav1d_cdef_directions`, for stride 12).
const DIRECTIONS: [[i32; 2]; 12] = {
    const S: i32 = WINDOW_STRIDE as i32;
    [
        [S, 2 * S],           // 6
        [S, 2 * S - 1],       // 7
        [-S + 1, -2 * S + 2], // 0
        [1, -S + 2],          // 1
        [1, 2],               // 2
        [1, S + 2],           // 3
        [S + 1, 2 * S + 2],   // 4
        [S, 2 * S + 1],       // 5
        [S, 2 * S],           // 6
        [S, 2 * S - 1],       // 7
        [-S + 1, -2 * S + 2], // 0
        [1, -S + 2],          // 1
    ]
};

/// One call's filter settings, as dav1d passes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strengths {
    pub primary: i32,
    pub secondary: i32,
    /// 0..=7.
    pub dir: i32,
    pub damping: i32,
    /// Bits per pixel minus 8 (0 for the 8 bpc functions; from `bitdepth_max` for 16 bpc).
    pub bitdepth_min_8: i32,
}

/// Builds the padded input window of a `w` x `h` block (`w`, `h` of 4 or 8), as dav1d's
/// `padding()` does. Strides are in pixels.
///
/// # Safety
/// As dav1d's function: `dst` rows `0..h` with two pixels on either side present where
/// `edges` has them, `left` `h` entries, `top` and `bottom` two rows from `-2` to `w + 2`
/// (where present), all valid for reads.
#[allow(clippy::too_many_arguments)]
pub unsafe fn pad<P: Pixel>(
    window: &mut [i16; WINDOW_LEN],
    dst: *const P,
    stride: isize,
    left: *const [P; 2],
    top: *const P,
    bottom: *const P,
    w: usize,
    h: usize,
    edges: u32,
) {
    debug_assert!(matches!((w, h), (4, 4) | (4, 8) | (8, 8)));
    window.fill(i16::MIN);
    let (w, h) = (w as isize, h as isize);
    let x_start = if edges & HAVE_LEFT != 0 { -2 } else { 0 };
    let x_end = if edges & HAVE_RIGHT != 0 { w + 2 } else { w };
    let at =
        |x: isize, y: isize| (WINDOW_ORIGIN as isize + y * WINDOW_STRIDE as isize + x) as usize;
    if edges & HAVE_TOP != 0 {
        for y in -2..0isize {
            let row = top.offset((y + 2) * stride);
            for x in x_start..x_end {
                window[at(x, y)] = (*row.offset(x)).value() as i16;
            }
        }
    }
    for y in 0..h {
        let row = dst.offset(y * stride);
        for x in x_start..x_end {
            let p = if x < 0 {
                (*left.offset(y))[(2 + x) as usize]
            } else {
                *row.offset(x)
            };
            window[at(x, y)] = p.value() as i16;
        }
    }
    if edges & HAVE_BOTTOM != 0 {
        for y in h..h + 2 {
            let row = bottom.offset((y - h) * stride);
            for x in x_start..x_end {
                window[at(x, y)] = (*row.offset(x)).value() as i16;
            }
        }
    }
}

fn constrain(diff: i32, threshold: i32, shift: i32) -> i32 {
    let adiff = diff.abs();
    // dav1d's damping keeps `shift` at 0 or more; a shift out of range does what x86 does.
    let v = adiff.min((threshold - adiff.wrapping_shr(shift as u32)).max(0));
    if diff < 0 {
        -v
    } else {
        v
    }
}

fn ulog2(v: i32) -> i32 {
    31 - (v as u32).leading_zeros() as i32
}

/// The filtered value of the pixel at window index `at`, as dav1d's `cdef_filter_block_c`.
pub fn filter_pixel(window: &[i16; WINDOW_LEN], at: usize, s: &Strengths) -> i32 {
    let tap = |offset: i32| window[(at as i32 + offset) as usize] as i32;
    let px = tap(0);
    let dir = s.dir as usize;
    let mut sum = 0;
    let (mut min, mut max) = (px, px);
    let mut take = |p: i32| {
        min = (p as u32).min(min as u32) as i32;
        max = max.max(p);
    };
    if s.primary != 0 {
        let mut pri_tap = 4 - ((s.primary >> s.bitdepth_min_8) & 1);
        let pri_shift = (s.damping - ulog2(s.primary)).max(0);
        for off in DIRECTIONS[dir + 2] {
            for p in [tap(off), tap(-off)] {
                sum += pri_tap * constrain(p - px, s.primary, pri_shift);
                take(p);
            }
            pri_tap = (pri_tap & 3) | 2;
        }
    }
    if s.secondary != 0 {
        let sec_shift = s.damping - ulog2(s.secondary);
        for (k, sec_tap) in [2, 1].into_iter().enumerate() {
            for off in [DIRECTIONS[dir + 4][k], DIRECTIONS[dir][k]] {
                for p in [tap(off), tap(-off)] {
                    sum += sec_tap * constrain(p - px, s.secondary, sec_shift);
                    take(p);
                }
            }
        }
    }
    let filtered = px + ((sum - (sum < 0) as i32 + 8) >> 4);
    if s.primary == 0 || s.secondary == 0 {
        filtered // only with both strengths does dav1d clamp to the taps' range
    } else if filtered < min {
        min
    } else if filtered > max {
        max
    } else {
        filtered
    }
}

/// Filters a `w` x `h` block from its padded window into `dst` (stride in pixels).
///
/// # Safety
/// `dst` rows `0..h`, `w` pixels each, valid for writes.
pub unsafe fn filter<P: Pixel>(
    window: &[i16; WINDOW_LEN],
    dst: *mut P,
    stride: isize,
    w: usize,
    h: usize,
    s: &Strengths,
) {
    for y in 0..h {
        let row = dst.offset(y as isize * stride);
        for x in 0..w {
            let v = filter_pixel(window, WINDOW_ORIGIN + y * WINDOW_STRIDE + x, s);
            *row.add(x) = P::from_value(v);
        }
    }
}

/// One call of dav1d's `fb[]` as the recorder keeps it: pointers as dav1d passed them (bytes;
/// strides in bytes), the block size index of `fb[]` (0: 8x8, 1: 4x8, 2: 4x4), and whether
/// pixels take two bytes (the 16 bpc functions).
#[derive(Clone, Copy, Debug)]
pub struct CdefCall {
    pub dst: *mut u8,
    pub stride: isize,
    pub left: *const u8,
    pub top: *const u8,
    pub bottom: *const u8,
    pub strengths: Strengths,
    pub size: usize,
    pub two_bytes: bool,
    pub edges: u32,
}

impl CdefCall {
    /// Width and height in pixels.
    pub fn dims(&self) -> (usize, usize) {
        BLOCK_SIZES[self.size.min(2)]
    }

    pub fn bytes_per_pixel(&self) -> usize {
        1 + self.two_bytes as usize
    }

    /// The areas (first byte, row stride, bytes per row, rows) its window reads when taken,
    /// as [`pad`] reads them: the block's rows with two pixels to the right (the two to the
    /// left come from `left`), the two rows of `top` and of `bottom` with two pixels either
    /// side, and the `left` pairs; each side only where `edges` has it. The first `count`
    /// entries of the array.
    pub fn read_areas(&self) -> ([(*const u8, isize, usize, usize); 4], usize) {
        let (w, h) = self.dims();
        let b = self.bytes_per_pixel();
        let left = if self.edges & HAVE_LEFT != 0 { 2 } else { 0 };
        let right = if self.edges & HAVE_RIGHT != 0 { 2 } else { 0 };
        let row = (left + w + right) * b;
        let back = |p: *const u8| p.wrapping_sub(left * b);
        let mut areas = [(self.dst as *const u8, self.stride, (w + right) * b, h); 4];
        let mut count = 1;
        for (present, area) in [
            (
                self.edges & HAVE_TOP != 0,
                (back(self.top), self.stride, row, 2),
            ),
            (
                self.edges & HAVE_BOTTOM != 0,
                (back(self.bottom), self.stride, row, 2),
            ),
            (left > 0, (self.left, (2 * b) as isize, 2 * b, h)),
        ] {
            if present {
                areas[count] = area;
                count += 1;
            }
        }
        (areas, count)
    }

    /// Takes the call's padded input window.
    ///
    /// # Safety
    /// As dav1d's function for its inputs.
    pub unsafe fn window(&self, window: &mut [i16; WINDOW_LEN]) {
        let (w, h) = self.dims();
        let b = self.bytes_per_pixel() as isize;
        if self.two_bytes {
            pad::<u16>(
                window,
                self.dst as *const u16,
                self.stride / b,
                self.left as *const [u16; 2],
                self.top as *const u16,
                self.bottom as *const u16,
                w,
                h,
                self.edges,
            )
        } else {
            pad::<u8>(
                window,
                self.dst,
                self.stride,
                self.left as *const [u8; 2],
                self.top,
                self.bottom,
                w,
                h,
                self.edges,
            )
        }
    }

    /// Runs the call at once with the reference.
    ///
    /// # Safety
    /// As dav1d's function.
    pub unsafe fn run_now(&self) {
        let mut window = [0i16; WINDOW_LEN];
        self.window(&mut window);
        let (w, h) = self.dims();
        filter_bytes(
            &window,
            self.dst,
            self.stride,
            w,
            h,
            &self.strengths,
            self.two_bytes,
        );
    }
}

/// [`filter`] on pixels of one or two bytes at `dst` (stride in bytes).
///
/// # Safety
/// As [`filter`].
pub unsafe fn filter_bytes(
    window: &[i16; WINDOW_LEN],
    dst: *mut u8,
    stride: isize,
    w: usize,
    h: usize,
    s: &Strengths,
    two_bytes: bool,
) {
    if two_bytes {
        filter::<u16>(window, dst as *mut u16, stride / 2, w, h, s)
    } else {
        filter::<u8>(window, dst, stride, w, h, s)
    }
}

/// A job's parameter word (`shaders/cdef.comp`): the strengths, the block size (0: 8x8, 1:
/// 4x8, 2: 4x4) and whether pixels take two bytes.
pub fn job_params(s: &Strengths, size: usize, two_bytes: bool) -> u32 {
    debug_assert!((0..=255).contains(&s.primary) && (0..=255).contains(&s.secondary));
    debug_assert!((0..8).contains(&s.dir) && (0..32).contains(&s.damping) && size < 3);
    debug_assert!((0..8).contains(&s.bitdepth_min_8));
    s.primary as u32
        | (s.secondary as u32) << 8
        | (s.dir as u32) << 16
        | (s.damping as u32) << 19
        | (size as u32) << 24
        | (s.bitdepth_min_8 as u32) << 26
        | (two_bytes as u32) << 29
}

/// What [`job_params`] packed: strengths, block width and height, two bytes per pixel.
pub fn from_job_params(p: u32) -> (Strengths, usize, usize, bool) {
    let s = Strengths {
        primary: (p & 0xff) as i32,
        secondary: (p >> 8 & 0xff) as i32,
        dir: (p >> 16 & 7) as i32,
        damping: (p >> 19 & 31) as i32,
        bitdepth_min_8: (p >> 26 & 7) as i32,
    };
    let (w, h) = BLOCK_SIZES[(p >> 24 & 3).min(2) as usize];
    (s, w, h, p >> 29 & 1 != 0)
}

/// A CDEF block's job (`shaders/cdef.comp`, a `uvec4`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct CdefJob {
    /// The block's top-left pixel.
    pub header: JobHeader,
    /// The window's first value in the coefficient buffer (the arena).
    pub window: u32,
    /// [`job_params`]: strengths, block size, pixel size.
    pub params: u32,
}

impl CdefJob {
    pub fn to_words(&self) -> Job {
        let mut words = self.header.job();
        words[2] = self.window;
        words[3] = self.params;
        words
    }

    pub fn from_words(words: &Job) -> CdefJob {
        CdefJob {
            header: JobHeader::of(words),
            window: words[2],
            params: words[3],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job's words give back its fields.
    #[test]
    fn a_cdef_job_round_trips_through_its_words() {
        let mut rng = crate::testing::Rng(11);
        for _ in 0..100 {
            let mut word = || rng.below(1 << 32) as u32;
            let job = CdefJob {
                header: JobHeader {
                    pixel: word(),
                    stride: word() as i32,
                },
                window: word(),
                params: word(),
            };
            let words = job.to_words();
            assert_eq!(CdefJob::from_words(&words), job);
            assert!(words[4..].iter().all(|&w| w == 0));
        }
    }

    #[test]
    fn job_params_round_trip() {
        for (size, &dims) in BLOCK_SIZES.iter().enumerate() {
            for (primary, secondary, damping, bitdepth_min_8) in [
                (0, 1, 2, 0),
                (15, 4, 6, 0),
                (60, 16, 8, 2),
                (240, 64, 10, 4),
            ] {
                for dir in 0..8 {
                    let s = Strengths {
                        primary,
                        secondary,
                        dir,
                        damping,
                        bitdepth_min_8,
                    };
                    for two_bytes in [false, true] {
                        let (t, w, h, two) = from_job_params(job_params(&s, size, two_bytes));
                        assert_eq!((t, two), (s, two_bytes));
                        assert_eq!((w, h), dims);
                    }
                }
            }
        }
    }
}
