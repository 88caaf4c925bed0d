//! The superblock-row CDEF reference (`src/kernels/cdef_row.rs`) against dav1d's own C
//! functions (the static, asm-disabled dav1d 1.0.0 that `scripts/setup` builds).
//!
//! - `find_dir` against dav1d's C `dir` on random, flat, extreme and striped blocks.
//! - Whole frames: dav1d's in-place walk, written out here as `dav1d_cdef_brow` does it with
//!   one thread (its line and column backups, its edge flags, its skip rules), calling dav1d's
//!   C `dir` and `fb`, against the reference filtering each superblock row from a copy of its
//!   deblocked rows. Rows in order with the halos kept from the row before (what a decoder
//!   with one thread hands over), and rows in a random order with the halos copied from the
//!   deblocked frame (what dav1d's line buffers hold with several threads). Every layout, 8,
//!   10 and 12 bits, 64x64 and 128x128 superblocks, sizes not a multiple of 64.

mod common;

use common::cdef_rows::{random_case, reference, Case, Frame};
use common::{dav1d_c, CdefDsp, CdefFn, Rng};
use daedalus::kernels::cdef::{HAVE_BOTTOM, HAVE_LEFT, HAVE_RIGHT, HAVE_TOP};
use daedalus::kernels::cdef_row::{self, Layout};
use daedalus::kernels::Pixel;

type Dir8 = unsafe extern "C" fn(*const u8, isize, *mut u32) -> i32;
type Dir16 = unsafe extern "C" fn(*const u16, isize, *mut u32, i32) -> i32;

/// dav1d's C `dir` on the 8x8 block at `block` (stride in pixels).
unsafe fn dav1d_dir<P: Pixel>(
    dsp: &CdefDsp,
    block: *const P,
    stride: usize,
    bits: u32,
) -> (i32, u32) {
    let mut var = 0u32;
    let bytes = std::mem::size_of::<P>();
    let dir = if bytes == 1 {
        let f = std::mem::transmute::<*const std::ffi::c_void, Dir8>(dsp.dir);
        f(block.cast(), stride as isize, &mut var)
    } else {
        let f = std::mem::transmute::<*const std::ffi::c_void, Dir16>(dsp.dir);
        f(
            block.cast(),
            (stride * 2) as isize,
            &mut var,
            (1 << bits) - 1,
        )
    };
    (dir, var)
}

fn dir_case<P: Pixel>(bits: u32, seed: u64) {
    let dsp = dav1d_c(bits > 8);
    let mut rng = Rng::new(seed);
    let max = (1i64 << bits) - 1;
    let mut dirs = [0usize; 8];
    for draw in 0..4000 {
        let block: Vec<P> = match draw % 5 {
            0 => vec![P::from_value(rng.range(0, max) as i32); 64],
            1 => (0..64)
                .map(|_| P::from_value(if rng.chance(50) { 0 } else { max as i32 }))
                .collect(),
            // Stripes along a random direction: every direction wins somewhere.
            2 | 3 => {
                let (a, b) = (rng.range(-3, 3), rng.range(-3, 3));
                let amp = rng.range(1, max / 2);
                (0..64)
                    .map(|i| {
                        let (x, y) = ((i % 8) as i64, (i / 8) as i64);
                        let v = max / 2
                            + if (a * x + b * y).rem_euclid(4) < 2 {
                                amp
                            } else {
                                -amp
                            };
                        P::from_value((v + rng.range(-2, 2)).clamp(0, max) as i32)
                    })
                    .collect()
            }
            _ => (0..64)
                .map(|_| P::from_value(rng.range(0, max) as i32))
                .collect(),
        };
        let theirs = unsafe { dav1d_dir(&dsp, block.as_ptr(), 8, bits) };
        let ours = cdef_row::find_dir(|x, y| block[y * 8 + x].value(), bits as i32 - 8);
        assert_eq!(theirs, ours, "{bits} bits, draw {draw}");
        dirs[ours.0 as usize] += 1;
    }
    assert!(
        dirs.iter().all(|&n| n > 0),
        "every direction found: {dirs:?}"
    );
}

#[test]
fn find_dir_equals_dav1d_c() {
    dir_case::<u8>(8, 11);
    dir_case::<u16>(10, 12);
    dir_case::<u16>(12, 13);
}

/// dav1d's `adjust_strength`, written out apart from the reference's.
fn adjust_strength(strength: i32, var: u32) -> i32 {
    if var == 0 {
        return 0;
    }
    let i = if var >> 6 != 0 {
        (var >> 6).ilog2().min(12) as i32
    } else {
        0
    };
    (strength * (4 + i) + 8) >> 4
}

/// dav1d's walk with one thread: `dav1d_filter_sbrow_cdef` for every superblock row, each
/// calling `dav1d_cdef_brow` for the previous row's last strip and its own strips but its last.
struct Walk<'a, P> {
    case: &'a Case<P>,
    dsp: CdefDsp,
    fb: [CdefFn; 3],
    frame: Frame<P>,
    /// The toggled pair of line buffers (`cdef_line`), two rows per plane at the frame's stride.
    lines: [Vec<Vec<P>>; 2],
    toggle: usize,
}

impl<'a, P: Pixel> Walk<'a, P> {
    fn run(case: &'a Case<P>) -> Frame<P> {
        let high = case.params.bitdepth > 8;
        let dsp = dav1d_c(high);
        let fb = [0, 1, 2].map(|i| CdefFn::of_dav1d(&dsp, i, high));
        let buffers = || {
            case.frame
                .strides
                .iter()
                .map(|&s| vec![P::from_value(0); 2 * s])
                .collect()
        };
        let mut walk = Walk {
            case,
            dsp,
            fb,
            frame: case.frame.clone(),
            lines: [buffers(), buffers()],
            toggle: 0,
        };
        let (bh, sb) = (case.params.bh, case.sb_size);
        let sb_rows = bh.div_ceil(sb);
        for sby in 0..sb_rows {
            let start = sby * sb;
            if sby > 0 {
                walk.brow(start - 2, start);
            }
            let own = sb - if sby + 1 < sb_rows { 2 } else { 0 };
            walk.brow(start, (start + own).min(bh));
        }
        walk.frame
    }

    fn shifts(&self, plane: usize) -> (usize, usize) {
        self.case.params.shifts(plane)
    }

    /// Index of pixel (`x`, `y`) of `plane`.
    fn at(&self, plane: usize, x: usize, y: usize) -> usize {
        y * self.frame.strides[plane] + x
    }

    /// dav1d's `backup2x8`: two columns ending at `x_off` (luma pixels) of the 8x8 block at
    /// (`bx`, `by`), per plane that `flag` names (1: luma, 2: chroma).
    fn backup_columns(
        &self,
        bak: &mut [[[P; 2]; 8]; 3],
        bx: usize,
        by: usize,
        x_off: usize,
        flag: u32,
    ) {
        let planes = self.case.params.layout.planes();
        for (plane, bak) in bak.iter_mut().enumerate().take(planes) {
            if flag & if plane == 0 { 1 } else { 2 } == 0 {
                continue;
            }
            let (ss_hor, ss_ver) = self.shifts(plane);
            let (x0, y0) = (
                ((bx * 4) >> ss_hor) + (x_off >> ss_hor) - 2,
                (by * 4) >> ss_ver,
            );
            for (y, pair) in bak.iter_mut().enumerate().take(8 >> ss_ver) {
                let at = self.at(plane, x0, y0 + y);
                pair.copy_from_slice(&self.frame.planes[plane][at..at + 2]);
            }
        }
    }

    /// dav1d's `backup2lines`: the strip's last two rows into the line buffer not in use.
    fn backup_lines(&mut self, by: usize) {
        for plane in 0..self.case.params.layout.planes() {
            let (_, ss_ver) = self.shifts(plane);
            let y = ((by * 4) >> ss_ver) + (8 >> ss_ver) - 2;
            let s = self.frame.strides[plane];
            let rows = self.frame.planes[plane][y * s..(y + 2) * s].to_vec();
            self.lines[1 - self.toggle][plane] = rows;
        }
    }

    fn brow(&mut self, by_start: usize, by_end: usize) {
        let p = self.case.params.clone();
        let bd8 = p.bitdepth as i32 - 8;
        let damping = p.damping + bd8;
        let mut edges = HAVE_BOTTOM | if by_start > 0 { HAVE_TOP } else { 0 };
        let mut bit = 0;
        let mut by = by_start;
        while by < by_end {
            if by + 2 >= p.bh {
                edges &= !HAVE_BOTTOM;
            }
            if edges & HAVE_BOTTOM != 0 {
                self.backup_lines(by);
            }
            let mut bak = [[[[P::from_value(0); 2]; 8]; 3]; 2];
            edges &= !HAVE_LEFT;
            edges |= HAVE_RIGHT;
            let (mut prev_flag, mut last_skip) = (0u32, true);
            for sbx in 0..p.sb64_cols() {
                let idx = self.case.masks.cdef_idx[(by >> 4) * p.sb64_cols() + sbx];
                let levels = usize::try_from(idx)
                    .ok()
                    .map(|i| (p.y_strength[i], p.uv_strength[i]));
                let Some((y_lvl, uv_lvl)) = levels.filter(|&l| l != (0, 0)) else {
                    last_skip = true;
                    edges |= HAVE_LEFT;
                    continue;
                };
                let noskip = self.case.masks.noskip[(by / 2) * p.sb128_cols() + (sbx >> 1)];
                let flag = (y_lvl != 0) as u32 | ((uv_lvl != 0) as u32) << 1;
                let split = |l: u8| {
                    let sec = (l & 3) as i32;
                    (((l >> 2) as i32) << bd8, (sec + (sec == 3) as i32) << bd8)
                };
                let ((y_pri, y_sec), (uv_pri, uv_sec)) = (split(y_lvl), split(uv_lvl));
                for bx in (sbx * 16..((sbx + 1) * 16).min(p.bw)).step_by(2) {
                    if bx + 2 >= p.bw {
                        edges &= !HAVE_RIGHT;
                    }
                    if noskip & (3 << (bx & 30)) == 0 {
                        last_skip = true;
                        edges |= HAVE_LEFT;
                        continue;
                    }
                    let do_left = if last_skip {
                        flag
                    } else {
                        (prev_flag ^ flag) & flag
                    };
                    prev_flag = flag;
                    if do_left != 0 && edges & HAVE_LEFT != 0 {
                        let mut b = bak[bit];
                        self.backup_columns(&mut b, bx, by, 0, do_left);
                        bak[bit] = b;
                    }
                    if edges & HAVE_RIGHT != 0 {
                        let mut b = bak[1 - bit];
                        self.backup_columns(&mut b, bx, by, 8, flag);
                        bak[1 - bit] = b;
                    }
                    let (dir, var) = if y_pri != 0 || uv_pri != 0 {
                        let at = self.at(0, bx * 4, by * 4);
                        unsafe {
                            dav1d_dir(
                                &self.dsp,
                                self.frame.planes[0].as_ptr().add(at),
                                self.frame.strides[0],
                                p.bitdepth,
                            )
                        }
                    } else {
                        (0, 0)
                    };
                    if y_pri != 0 {
                        let adjusted = adjust_strength(y_pri, var);
                        if adjusted != 0 || y_sec != 0 {
                            self.fb(
                                0,
                                bx,
                                by,
                                &bak[bit][0],
                                [adjusted, y_sec, dir, damping],
                                edges,
                            );
                        }
                    } else if y_sec != 0 {
                        self.fb(0, bx, by, &bak[bit][0], [0, y_sec, 0, damping], edges);
                    }
                    if uv_lvl != 0 {
                        let uv_dir = match (uv_pri, p.layout) {
                            (0, _) => 0,
                            (_, Layout::I422) => [7, 0, 2, 4, 5, 6, 6, 6][dir as usize],
                            _ => dir,
                        };
                        for (plane, left) in bak[bit].iter().enumerate().skip(1) {
                            self.fb(
                                plane,
                                bx,
                                by,
                                left,
                                [uv_pri, uv_sec, uv_dir, damping - 1],
                                edges,
                            );
                        }
                    }
                    bit ^= 1;
                    last_skip = false;
                    edges |= HAVE_LEFT;
                }
                edges |= HAVE_LEFT;
            }
            by += 2;
            edges |= HAVE_TOP;
            self.toggle ^= 1;
        }
    }

    /// dav1d's `fb[]` for `plane` of the 8x8 luma block at (`bx`, `by`): top from the line
    /// buffer in use, bottom from the frame.
    fn fb(
        &mut self,
        plane: usize,
        bx: usize,
        by: usize,
        left: &[[P; 2]; 8],
        s: [i32; 4],
        edges: u32,
    ) {
        let size = match (plane, self.case.params.layout) {
            (0, _) | (_, Layout::I444) => 0,
            (_, Layout::I422) => 1,
            _ => 2,
        };
        let (ss_hor, ss_ver) = self.shifts(plane);
        let (x0, y0) = ((bx * 4) >> ss_hor, (by * 4) >> ss_ver);
        let bytes = std::mem::size_of::<P>();
        let stride = self.frame.strides[plane];
        let dst_at = self.at(plane, x0, y0);
        let bottom_at = self.at(plane, x0, y0 + (8 >> ss_ver));
        let top = self.lines[self.toggle][plane].as_ptr().wrapping_add(x0);
        let base = self.frame.planes[plane].as_mut_ptr();
        unsafe {
            self.fb[size].call(
                base.add(dst_at).cast(),
                (stride * bytes) as isize,
                left.as_ptr().cast(),
                top.cast(),
                base.add(bottom_at).cast(),
                s,
                edges as i32,
                (1 << self.case.params.bitdepth) - 1,
            );
        }
    }
}

fn frames_case<P: Pixel + PartialEq + std::fmt::Debug>(bits: u32, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut changed = 0;
    let cases = 24;
    for n in 0..cases {
        let layout = [Layout::I400, Layout::I420, Layout::I422, Layout::I444][n % 4];
        let case = random_case::<P>(&mut rng, layout, bits);
        let theirs = Walk::run(&case);
        let sb_rows = case.params.bh.div_ceil(case.sb_size);
        let in_order: Vec<usize> = (0..sb_rows).collect();
        let what = format!(
            "{bits} bits, {layout:?}, {}x{} blocks, superblocks of {}, case {n}",
            case.params.bw, case.params.bh, case.sb_size
        );
        assert!(
            reference(&case, &in_order, None) == theirs,
            "rows in order: {what}"
        );
        let mut shuffled = in_order.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.below(i + 1));
        }
        assert!(
            reference(&case, &shuffled, Some(&case.frame)) == theirs,
            "rows {shuffled:?}: {what}"
        );
        changed += (theirs != case.frame) as usize;
    }
    // The comparison must be of filtered frames, not of untouched ones.
    assert!(
        changed > cases * 3 / 4,
        "{changed} of {cases} frames changed"
    );
}

#[test]
fn rows_equal_dav1d_in_place_walk_8bit() {
    frames_case::<u8>(8, 21);
}

#[test]
fn rows_equal_dav1d_in_place_walk_10bit() {
    frames_case::<u16>(10, 22);
}

#[test]
fn rows_equal_dav1d_in_place_walk_12bit() {
    frames_case::<u16>(12, 23);
}
