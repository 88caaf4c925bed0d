//! VP9 loop filters: the CPU reference at 8, 10 and 12 bits, and the GPU job encoding (8-bit).
//!
//! The reference reproduces FFmpeg 5.1's C `loop_filter` (`vp9dsp_template.c`): for each of 8
//! lines across an edge, the filter mask from `E`/`I`, then the 16-wide, 8-wide or 4-wide
//! filter by the flatness of the line, or the "hev" variant. Above 8 bits the thresholds and
//! the flatness bound scale by `1 << (bit_depth - 8)`, and the clips are the depth's. Each line reads and writes only
//! its own pixels, so the lines of a call (and the two halves of a 16-line call) are
//! independent: a GPU job is 8 lines, one invocation each (`shaders/lf.comp`).
//!
//! Order between calls is another matter: neighbouring edges share pixels, and FFmpeg's
//! result depends on running them in the decoder's order. The batch keeps that order by never
//! running two calls that touch a common pixel in one submission.

use super::job::{Job, JobHeader};
use super::Pixel;

/// Edge direction, FFmpeg's last index: `h` filters across a vertical edge (lines are rows),
/// `v` across a horizontal edge (lines are columns).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LfDir {
    H = 0,
    V = 1,
}

/// One function of FFmpeg's loop-filter tables.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LfFunction {
    /// `loop_filter_8[wd 4/8/16][dir]`: 8 lines.
    Lines8 { wd: u8, dir: LfDir },
    /// `loop_filter_16[dir]`: 16 lines of the 16-wide filter.
    Lines16 { dir: LfDir },
    /// `loop_filter_mix2[wd1 == 8][wd2 == 8][dir]`: 16 lines, the first 8 with `wd1` and the
    /// low byte of E/I/H, the next 8 with `wd2` and `>> 8` of them.
    Mix2 { wd1: u8, wd2: u8, dir: LfDir },
}

/// One job: 8 lines with one width and one set of thresholds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LfHalf {
    pub wd: u8,
    pub e: i32,
    pub i: i32,
    pub h: i32,
}

impl LfFunction {
    pub fn all() -> Vec<LfFunction> {
        let mut all = Vec::new();
        for dir in [LfDir::H, LfDir::V] {
            for wd in [4, 8, 16] {
                all.push(LfFunction::Lines8 { wd, dir });
            }
            all.push(LfFunction::Lines16 { dir });
            for (wd1, wd2) in [(4, 4), (4, 8), (8, 4), (8, 8)] {
                all.push(LfFunction::Mix2 { wd1, wd2, dir });
            }
        }
        all
    }

    pub fn dir(self) -> LfDir {
        match self {
            LfFunction::Lines8 { dir, .. }
            | LfFunction::Lines16 { dir }
            | LfFunction::Mix2 { dir, .. } => dir,
        }
    }

    /// FFmpeg 5.1's C function name without `_c`, e.g. `loop_filter_h_16_16`.
    pub fn name(self) -> String {
        let d = match self.dir() {
            LfDir::H => "h",
            LfDir::V => "v",
        };
        match self {
            LfFunction::Lines8 { wd, .. } => format!("loop_filter_{d}_{wd}_8"),
            LfFunction::Lines16 { .. } => format!("loop_filter_{d}_16_16"),
            LfFunction::Mix2 { wd1, wd2, .. } => format!("loop_filter_{d}_{wd1}{wd2}_16"),
        }
    }

    /// Lines along the edge.
    pub fn lines(self) -> usize {
        match self {
            LfFunction::Lines8 { .. } => 8,
            _ => 16,
        }
    }

    /// Pixels read on each side of the edge: 8 for the 16-wide filter, else 4.
    pub fn reach(self) -> usize {
        match self {
            LfFunction::Lines8 { wd: 16, .. } | LfFunction::Lines16 { .. } => 8,
            _ => 4,
        }
    }

    /// The call's 8-line halves with their width and thresholds, as FFmpeg splits them.
    pub fn halves(self, e: i32, i: i32, h: i32) -> Vec<LfHalf> {
        match self {
            LfFunction::Lines8 { wd, .. } => vec![LfHalf { wd, e, i, h }],
            LfFunction::Lines16 { .. } => vec![LfHalf { wd: 16, e, i, h }; 2],
            LfFunction::Mix2 { wd1, wd2, .. } => vec![
                LfHalf {
                    wd: wd1,
                    e: e & 0xff,
                    i: i & 0xff,
                    h: h & 0xff,
                },
                LfHalf {
                    wd: wd2,
                    e: e >> 8,
                    i: i >> 8,
                    h: h >> 8,
                },
            ],
        }
    }
}

impl LfHalf {
    /// The GPU job's parameter word. Every difference the filter compares is at most 637
    /// (`E`) or 255 (`I`, `H`), so clamping the thresholds to -1 ..= 638 and -1 ..= 256 keeps
    /// every comparison's result: 10 + 9 + 9 bits, then the width (2 bits) and direction.
    pub fn params(self, dir: LfDir) -> u32 {
        let e = (self.e.clamp(-1, 638) + 1) as u32;
        let i = (self.i.clamp(-1, 256) + 1) as u32;
        let h = (self.h.clamp(-1, 256) + 1) as u32;
        let wd = match self.wd {
            4 => 0,
            8 => 1,
            _ => 2,
        };
        e | i << 10 | h << 19 | wd << 28 | (dir as u32) << 30
    }

    pub fn from_params(p: u32) -> (LfHalf, LfDir) {
        let half = LfHalf {
            e: (p & 0x3ff) as i32 - 1,
            i: (p >> 10 & 0x1ff) as i32 - 1,
            h: (p >> 19 & 0x1ff) as i32 - 1,
            wd: [4, 8, 16, 16][(p >> 28 & 3) as usize],
        };
        let dir = if p >> 30 & 1 == 0 { LfDir::H } else { LfDir::V };
        (half, dir)
    }
}

/// A loop filter's job (`shaders/lf.comp`, a `uvec4`): 8 lines across one edge.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct LfJob {
    /// The first pixel after the edge on line 0.
    pub header: JobHeader,
    /// [`LfHalf::params`]: thresholds, width and direction.
    pub params: u32,
}

impl LfJob {
    /// The half's filter and the edge's direction.
    pub fn half(&self) -> (LfHalf, LfDir) {
        LfHalf::from_params(self.params)
    }

    pub fn to_words(&self) -> Job {
        let mut words = self.header.job();
        words[2] = self.params;
        words
    }

    pub fn from_words(words: &Job) -> LfJob {
        LfJob {
            header: JobHeader::of(words),
            params: words[2],
        }
    }
}

/// Filters one line of `bit_depth` bits: `px[k]` is the pixel at distance `k - 8` from the edge
/// (`px[8]` = q0).
fn filter_line(px: &mut [i32; 16], half: LfHalf, bit_depth: u32) {
    let up = bit_depth - 8;
    let (wd, e, i, h) = (half.wd, half.e << up, half.i << up, half.h << up);
    let [p7, p6, p5, p4, p3, p2, p1, p0, q0, q1, q2, q3, q4, q5, q6, q7] = *px;
    let fm = (p3 - p2).abs() <= i
        && (p2 - p1).abs() <= i
        && (p1 - p0).abs() <= i
        && (q1 - q0).abs() <= i
        && (q2 - q1).abs() <= i
        && (q3 - q2).abs() <= i
        && (p0 - q0).abs() * 2 + ((p1 - q1).abs() >> 1) <= e;
    if !fm {
        return;
    }
    let f = 1 << up;
    let flat = |a: &[i32], x: i32| a.iter().all(|&v| (v - x).abs() <= f);
    let flat8out = wd >= 16 && flat(&[p7, p6, p5, p4], p0) && flat(&[q4, q5, q6, q7], q0);
    let flat8in = wd >= 8 && flat(&[p3, p2, p1], p0) && flat(&[q1, q2, q3], q0);
    if wd >= 16 && flat8out && flat8in {
        // Output k (p6 ..= q6) averages the 15 taps centred on it, with the centre doubled and
        // the line extended by repeating p7 and q7.
        let old = *px;
        let at = |k: isize| old[k.clamp(0, 15) as usize];
        for k in 1..15isize {
            let mut sum = 8 + at(k);
            for d in -7..=7 {
                sum += at(k + d);
            }
            px[k as usize] = sum >> 4;
        }
    } else if wd >= 8 && flat8in {
        let old = *px;
        let at = |k: isize| old[k.clamp(4, 11) as usize];
        for k in 5..11isize {
            let mut sum = 4 + at(k);
            for d in -3..=3 {
                sum += at(k + d);
            }
            px[k as usize] = sum >> 3;
        }
    } else {
        let half_range = 1 << (bit_depth - 1);
        let clip7 = |x: i32| x.clamp(-half_range, half_range - 1);
        let pix = |x: i32| x.clamp(0, (1 << bit_depth) - 1);
        let hev = (p1 - p0).abs() > h || (q1 - q0).abs() > h;
        let base = if hev { clip7(p1 - q1) } else { 0 };
        let f = clip7(3 * (q0 - p0) + base);
        let f1 = (f + 4).min(half_range - 1) >> 3;
        let f2 = (f + 3).min(half_range - 1) >> 3;
        px[7] = pix(p0 + f2);
        px[8] = pix(q0 - f1);
        if !hev {
            let f = (f1 + 1) >> 1;
            px[6] = pix(p1 + f);
            px[9] = pix(q1 - f);
        }
    }
}

/// One line of `bit_depth` bits filtered: `px[k]` is the pixel at distance `k - 8` from the edge.
/// For the tests of the GPU's arithmetic.
#[doc(hidden)]
pub fn one_line(px: &mut [i32; 16], half: LfHalf, bit_depth: u32) {
    filter_line(px, half, bit_depth)
}

/// Filters 8 lines of one half at `dst` (the first pixel after the edge of line 0).
///
/// # Safety
/// The pixels `reach` before to `reach` after the edge on each of the 8 lines must be valid.
pub unsafe fn filter_half(dst: *mut u8, stride: isize, dir: LfDir, half: LfHalf) {
    filter_half_at(dst, stride, dir, half, 8)
}

/// [`filter_half`] on pixels of `bit_depth` bits (`stride` in pixels).
unsafe fn filter_half_at<P: Pixel>(
    dst: *mut P,
    stride: isize,
    dir: LfDir,
    half: LfHalf,
    bit_depth: u32,
) {
    let (along, across) = match dir {
        LfDir::H => (stride, 1),
        LfDir::V => (1, stride),
    };
    let reach: isize = if half.wd == 16 { 8 } else { 4 };
    for line in 0..8 {
        let edge = dst.offset(line * along);
        let mut px = [0i32; 16];
        for k in -reach..reach {
            px[(k + 8) as usize] = (*edge.offset(k * across)).value();
        }
        let before = px;
        filter_line(&mut px, half, bit_depth);
        for k in -reach..reach {
            let v = px[(k + 8) as usize];
            if v != before[(k + 8) as usize] {
                *edge.offset(k * across) = P::from_value(v);
            }
        }
    }
}

/// Runs one call at once on the CPU, as FFmpeg's C function does.
///
/// # Safety
/// `dst` is the first pixel after the edge; the pixels [`LfFunction::reach`] on each side of every
/// line must be valid.
pub unsafe fn lf_now(f: LfFunction, dst: *mut u8, stride: isize, e: i32, i: i32, h: i32) {
    lf_now_at(f, dst, stride, (e, i, h), 8)
}

/// [`lf_now`] at 10 or 12 bits: pixels of `bit_depth` bits in 16-bit words, `stride` in pixels.
///
/// # Safety
/// As for [`lf_now`].
pub unsafe fn lf_now_high(
    f: LfFunction,
    dst: *mut u16,
    stride: isize,
    thresholds: (i32, i32, i32),
    bit_depth: u32,
) {
    lf_now_at(f, dst, stride, thresholds, bit_depth)
}

unsafe fn lf_now_at<P: Pixel>(
    f: LfFunction,
    dst: *mut P,
    stride: isize,
    (e, i, h): (i32, i32, i32),
    bit_depth: u32,
) {
    let along = match f.dir() {
        LfDir::H => stride,
        LfDir::V => 1,
    };
    for (n, half) in f.halves(e, i, h).into_iter().enumerate() {
        filter_half_at(
            dst.offset(8 * n as isize * along),
            stride,
            f.dir(),
            half,
            bit_depth,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job's words give back its fields, and its parameters its half and direction.
    #[test]
    fn a_loop_filter_job_round_trips_through_its_words() {
        let mut rng = crate::testing::Rng(17);
        for _ in 0..100 {
            let mut word = || rng.below(1 << 32) as u32;
            let job = LfJob {
                header: JobHeader {
                    pixel: word(),
                    stride: word() as i32,
                },
                params: word(),
            };
            let words = job.to_words();
            assert_eq!(LfJob::from_words(&words), job);
            assert!(words[3..].iter().all(|&w| w == 0));
        }
        let half = LfHalf {
            e: 40,
            i: 10,
            h: 3,
            wd: 8,
        };
        let job = LfJob {
            header: JobHeader::default(),
            params: half.params(LfDir::V),
        };
        assert_eq!(job.half(), (half, LfDir::V));
    }
}
