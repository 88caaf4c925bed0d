//! Running on the CPU: a call at once (FFmpeg's own functions for its decoder's calls, else the
//! reference), and a recorded job where its pixels are.

use super::call::{job_eob, Job, Op, Origin};
use crate::kernels::cdef::CdefJob;
use crate::kernels::itx::{self, ItxJob, ItxKernel, Transform, Tx1d};
use crate::kernels::lf::{self, LfDir, LfFunction, LfHalf, LfJob};
use crate::kernels::lf_sb::{self, LfSbJob, SbPlane};
use crate::kernels::mc::{self, McJob};
use crate::kernels::{cdef, Kernel};
use crate::regions::{self, Placement, Region};
use crate::stats::{self, COUNTERS};
use crate::vp9dsp::{ItxfmAddFn, Vp9DspContext};
use once_cell::sync::OnceCell;
use std::ptr;
use std::sync::Arc;

impl Op<'_> {
    /// Runs the call at once: FFmpeg's own function for its decoder's calls, else the
    /// reference.
    pub(super) unsafe fn run_at_once(&self, dst: *mut u8, stride: isize, origin: Origin) {
        match *self {
            Op::Itx { tx, block, eob } => run_itx_at_once(tx, dst, stride, block, eob, origin),
            Op::Mc {
                f,
                src,
                src_stride,
                h,
                mx,
                my,
            } => match (origin, FFMPEG_DSP.get().and_then(|t| t.mc_fn(f))) {
                // FFmpeg's SIMD steps over rows in fours (its decoder's heights); other
                // heights (this library's one-line row backups) take the reference.
                (Origin::Ffmpeg, Some(ffmpeg)) if h % 4 == 0 => {
                    ffmpeg(dst, stride, src, src_stride, h, mx, my)
                }
                _ => mc::mc_now(f, dst, stride, src, src_stride, h, mx, my),
            },
            Op::Lf { f, e, i, h } => match (origin, FFMPEG_DSP.get().and_then(|t| t.lf_fn(f))) {
                (Origin::Ffmpeg, Some(ffmpeg)) => ffmpeg(dst, stride, e, i, h),
                _ => lf::lf_now(f, dst, stride, e, i, h),
            },
            Op::LfSb { plane } => run_lf_sb(plane, dst, stride, origin),
            Op::Cdef { call } => call.run_now(),
        }
    }
}

/// Runs a superblock plane's passes: FFmpeg's own 8-line functions for its decoder's calls,
/// else the reference.
unsafe fn run_lf_sb(plane: &SbPlane, dst: *mut u8, stride: isize, origin: Origin) {
    match (origin, FFMPEG_DSP.get()) {
        (Origin::Ffmpeg, Some(dsp)) => plane.run(dst, stride, |at, s, d, half| {
            if !run_half_with_ffmpeg(dsp, at, s, d, half) {
                lf::filter_half(at, s, d, half)
            }
        }),
        _ => plane.run(dst, stride, |at, s, d, half| {
            lf::filter_half(at, s, d, half)
        }),
    }
}

/// Runs 8 lines of a loop filter with FFmpeg's own function where its result is exact: its SIMD
/// keeps the thresholds in bytes, exact as its C for the decoder's values, not for every value
/// the public API accepts. Returns whether it ran.
unsafe fn run_half_with_ffmpeg(
    dsp: &Vp9DspContext,
    dst: *mut u8,
    stride: isize,
    dir: LfDir,
    half: LfHalf,
) -> bool {
    let bytes = [half.e, half.i, half.h]
        .iter()
        .all(|t| (0..=254).contains(t));
    match dsp.lf_fn(LfFunction::Lines8 { wd: half.wd, dir }) {
        Some(ffmpeg) if bytes => {
            ffmpeg(dst, stride, half.e, half.i, half.h);
            true
        }
        _ => false,
    }
}

/// A superblock plane as its job left it: its record in the arena and its parameters.
unsafe fn lf_sb_plane<'a>(arena: *const i16, job: &Job) -> SbPlane<'a> {
    let job = LfSbJob::from_words(job);
    lf_sb::plane_from_record(arena.add(job.record as usize) as *const u8, job.params)
}

/// Runs a transform at once: FFmpeg's own function for its decoder's calls, else the reference.
unsafe fn run_itx_at_once(
    tx: Transform,
    dst: *mut u8,
    stride: isize,
    block: *mut i16,
    eob: i32,
    origin: Origin,
) {
    match (origin, FFMPEG_ITX.get()) {
        (Origin::Ffmpeg, Some(table)) => table[tx.index()](dst, stride, block, eob),
        _ => itx::itx_add_now(tx, dst, stride, block, eob),
    }
}

/// A call of FFmpeg's decoder on a transient buffer: at once, with FFmpeg's function.
pub(super) unsafe fn run_transient(op: &Op, dst: *mut u8, stride: isize) {
    op.run_at_once(dst, stride, Origin::Ffmpeg);
    stats::add(&COUNTERS.immediate, 1);
}

/// The registered regions as a thread last saw them, for the CPU path's transient rule.
#[derive(Default)]
pub(super) struct RegionView {
    regions: Vec<Arc<Region>>,
    version: u64,
}

impl RegionView {
    pub(super) fn place(&mut self, lo: usize, hi: usize) -> Placement {
        let version = regions::version();
        if version != self.version {
            self.regions = regions::snapshot();
            self.version = version;
        }
        if hi < lo {
            return Placement::Straddles;
        }
        regions::place(&self.regions, lo, hi)
    }
}

/// Runs one recorded transform on the CPU: the reference, or FFmpeg's own function for a call
/// of FFmpeg's decoder whose 16-bit lanes overflow. `coef` is the arena offset of its
/// coefficients, or for a DC-only kernel the DC value.
///
/// # Safety
/// The call's pixels must be valid; a full kernel's coefficients must be in `arena`.
unsafe fn run_itx_on_cpu(
    kernel: ItxKernel,
    dst: *mut u8,
    stride: isize,
    coef: u32,
    flags: u32,
    arena: *const i16,
) {
    let mut res = [0i32; 32 * 32];
    let n = kernel.size().n();
    let overflow = match kernel {
        ItxKernel::Full(tx) => {
            let coefs = std::slice::from_raw_parts(arena.add(coef as usize), n * n);
            let overflow = itx::residual(tx, coefs, false, &mut res);
            if overflow && flags & 1 != 0 {
                return run_ffmpeg(tx, dst, stride, coefs, job_eob(flags));
            }
            overflow
        }
        ItxKernel::DcOnly(size) => {
            let tx = Transform::new(size, Tx1d::Dct, Tx1d::Dct);
            itx::residual(tx, &[coef as i32 as i16], true, &mut res)
        }
    };
    debug_assert!(!overflow || flags & 1 == 0 || matches!(kernel, ItxKernel::Full(_)));
    itx::add_residual(dst, stride, n, &res);
}

/// Runs one recorded job on the CPU, on the pixels at `dst` (rows `stride` apart). A motion
/// compensation reads its source at `source` (the arena, or an imported frame) plus its offset.
///
/// # Safety
/// The job's pixels must be valid, and what it reads of the arena and source must be there.
pub(super) unsafe fn run_job_on_cpu(
    kernel: Kernel,
    dst: *mut u8,
    stride: isize,
    job: &Job,
    arena: *const i16,
    source: *const u8,
) {
    match kernel {
        Kernel::Mc => {
            let job = McJob::from_words(job);
            let (f, mx, my) = job.function();
            let src = source.wrapping_add(job.src as usize);
            let rows = job.tile_rows() as i32;
            mc::mc_now(f, dst, stride, src, job.src_stride as isize, rows, mx, my);
        }
        Kernel::Lf => {
            let (half, dir) = LfJob::from_words(job).half();
            lf::filter_half(dst, stride, dir, half);
        }
        Kernel::LfSb => {
            let plane = lf_sb_plane(arena, job);
            run_lf_sb(&plane, dst, stride, Origin::Api);
        }
        Kernel::Cdef => {
            let job = CdefJob::from_words(job);
            let (s, w, h, two_bytes) = cdef::from_job_params(job.params);
            let window = &*(arena.add(job.window as usize) as *const [i16; cdef::WINDOW_LEN]);
            cdef::filter_bytes(window, dst, stride, w, h, &s, two_bytes);
        }
        Kernel::Itx(k) => {
            let job = ItxJob::from_words(job);
            run_itx_on_cpu(k, dst, stride, job.coef, job.flags, arena)
        }
        Kernel::Vp9Inter
        | Kernel::Vp9InterScaled
        | Kernel::Vp9InterResidual(_)
        | Kernel::Vp9Intra
        | Kernel::Vp9Lf
        | Kernel::Vp9InterHigh
        | Kernel::Vp9InterScaledHigh
        | Kernel::Vp9InterResidualHigh(_)
        | Kernel::Vp9IntraHigh
        | Kernel::Vp9LfHigh
        | Kernel::Vp9IpredCheck
        | Kernel::Vp9ItxHighCheck
        | Kernel::LfFilterCheck
        | Kernel::CdefRowCopy
        | Kernel::CdefRow => unreachable!("{kernel:?} has no calls in the batch"),
    }
}

/// Copies a coefficient block (any alignment) and zeroes it, sizes known at compile time so
/// that both become a few vector moves. (Non-temporal stores into the upload buffer were
/// measured: 4 to 7 times slower on both machines of docs/benchmarks-history.md.)
#[inline(always)]
pub(super) unsafe fn move_and_zero<const BYTES: usize>(from: *mut u8, to: *mut u8) {
    ptr::copy_nonoverlapping(from as *const [u8; BYTES], to as *mut [u8; BYTES], 1);
    ptr::write_unaligned(from as *mut [u8; BYTES], [0u8; BYTES]);
}

/// FFmpeg's functions for each transform (by [`Transform::index`]), from the decoder's table.
pub static FFMPEG_ITX: OnceCell<[ItxfmAddFn; 14]> = OnceCell::new();

/// The decoder's whole table as FFmpeg filled it (its SIMD where it has some), for the calls
/// that run at once.
pub static FFMPEG_DSP: OnceCell<Vp9DspContext> = OnceCell::new();

/// Runs FFmpeg's own function for `tx` on a copy of `coefs` (aligned as FFmpeg's SIMD needs).
pub(super) unsafe fn run_ffmpeg(
    tx: Transform,
    dst: *mut u8,
    stride: isize,
    coefs: &[i16],
    eob: i32,
) {
    #[repr(C, align(64))]
    struct Block([i16; 32 * 32]);
    let mut block = Block([0; 32 * 32]);
    block.0[..coefs.len()].copy_from_slice(coefs);
    match FFMPEG_ITX.get() {
        Some(table) => table[tx.index()](dst, stride, block.0.as_mut_ptr(), eob),
        None => itx::itx_add_now(tx, dst, stride, block.0.as_mut_ptr(), eob),
    }
    stats::add(&COUNTERS.ffmpeg_calls, 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `move_and_zero` copies a block between buffers of any alignment and leaves zeros where
    /// it was, touching no byte around either.
    #[test]
    fn moving_coefficients_copies_them_and_zeroes_the_source() {
        fn check<const BYTES: usize>(from_at: usize, to_at: usize) {
            let value = |i: usize| (i % 251 + 1) as u8;
            let mut from = vec![0xaa_u8; BYTES + 8];
            let mut to = vec![0x55_u8; BYTES + 8];
            for i in 0..BYTES {
                from[from_at + i] = value(i);
            }
            unsafe {
                move_and_zero::<BYTES>(from.as_mut_ptr().add(from_at), to.as_mut_ptr().add(to_at))
            };
            for i in 0..BYTES {
                assert_eq!(to[to_at + i], value(i));
                assert_eq!(from[from_at + i], 0);
            }
            let (from_before, from_after) = (&from[..from_at], &from[from_at + BYTES..]);
            assert!(from_before.iter().chain(from_after).all(|&b| b == 0xaa));
            let (to_before, to_after) = (&to[..to_at], &to[to_at + BYTES..]);
            assert!(to_before.iter().chain(to_after).all(|&b| b == 0x55));
        }
        check::<32>(1, 3);
        check::<128>(0, 7);
        check::<512>(5, 0);
        check::<2048>(3, 1);
    }
}
