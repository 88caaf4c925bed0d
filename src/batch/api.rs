//! The thread's recorder ([`RECORDER`]) and the public functions that reach it.

use super::call::{Area, Op, Origin};
use super::recorder::Recorder;
use crate::kernels::cdef::CdefCall;
use crate::kernels::itx::Transform;
use crate::kernels::lf::LfFunction;
use crate::kernels::lf_sb::{self, SbPlane};
use crate::kernels::mc::{self, McFunction};
use crate::stats::{self, Reason, COUNTERS};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static RECORDER: RefCell<Recorder> = RefCell::new(Recorder::new());
}

/// Runs `f` with the calling thread's recorder: `None` where the thread has none (it is
/// exiting, or this is a re-entry). A panic inside poisons the recorder
/// ([`Recorder::poison`], with `call`, the call the entry was taking) and gives `on_panic`.
fn with_recorder<T>(
    call: Option<(&Op, *mut u8, isize, Origin)>,
    on_panic: T,
    f: impl FnOnce(&mut Recorder) -> T,
) -> Option<T> {
    RECORDER
        .try_with(|r| {
            let mut r = r.try_borrow_mut().ok()?;
            r.begin_entry();
            match catch_unwind(AssertUnwindSafe(|| f(&mut r))) {
                Ok(v) => Some(v),
                Err(_) => {
                    // SAFETY: `call` is the entry's own call, valid as its caller promised.
                    unsafe { r.poison(call) };
                    Some(on_panic)
                }
            }
        })
        .ok()
        .flatten()
}

/// Records one call of the calling thread (or runs it at once when the thread has no
/// recorder any more).
///
/// # Safety
/// As FFmpeg's function for the call: its pixels and inputs must be valid, and the pixels
/// must stay valid and untouched until the thread's next [`flush`].
unsafe fn record_op(op: Op, dst: *mut u8, stride: isize, origin: Origin) {
    let recorded = with_recorder(Some((&op, dst, stride, origin)), (), |r| {
        r.record(&op, dst, stride, origin)
    });
    if recorded.is_none() {
        // The thread is exiting (or re-entered): no recorder, so do it now.
        op.run_at_once(dst, stride, origin);
        stats::add(&COUNTERS.immediate, 1);
    }
}

/// Records one transform call of the calling thread.
///
/// # Safety
/// As FFmpeg's function: `dst` rows and `block` (`n * n` coefficients) must be valid, and the
/// pixels must stay valid and untouched until the thread's next [`flush`].
pub unsafe fn record_itx(
    tx: Transform,
    dst: *mut u8,
    stride: isize,
    block: *mut i16,
    eob: i32,
    origin: Origin,
) {
    record_op(Op::Itx { tx, block, eob }, dst, stride, origin)
}

/// Runs the transform of an intra block of FFmpeg's decoder at once on the GPU path, after
/// the pending calls on its pixels complete (see `Recorder::run_intra_transform`); records it
/// on the CPU path.
///
/// # Safety
/// As [`record_itx`].
pub unsafe fn run_intra_transform(
    tx: Transform,
    dst: *mut u8,
    stride: isize,
    block: *mut i16,
    eob: i32,
) {
    let op = Op::Itx { tx, block, eob };
    let call = Some((&op, dst, stride, Origin::Ffmpeg));
    let ran = with_recorder(call, (), |r| r.run_intra_transform(&op, dst, stride));
    if ran.is_none() {
        Op::Itx { tx, block, eob }.run_at_once(dst, stride, Origin::Ffmpeg);
        stats::add(&COUNTERS.immediate, 1);
    }
}

/// Records one motion compensation of the calling thread. A source window inside an imported
/// registered region is read at the flush (ordered after pending writes there); any other is
/// copied during the call. A height outside `1..=64` does nothing (FFmpeg's functions overrun
/// for such).
///
/// # Safety
/// As FFmpeg's function: the block at `dst` and the source window around `src` must be valid,
/// and the block must stay valid and untouched until the thread's next [`flush`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn record_mc(
    f: McFunction,
    dst: *mut u8,
    dst_stride: isize,
    src: *const u8,
    src_stride: isize,
    h: i32,
    mx: i32,
    my: i32,
    origin: Origin,
) {
    if !(1..=mc::MAX_HEIGHT).contains(&h) {
        stats::add(&COUNTERS.rejected, 1);
        return;
    }
    let op = Op::Mc {
        f,
        src,
        src_stride,
        h,
        mx: mx & 15,
        my: my & 15,
    };
    record_op(op, dst, dst_stride, origin)
}

/// Records one loop-filter call of the calling thread.
///
/// # Safety
/// As FFmpeg's function: the pixels on both sides of the edge must be valid, and stay valid
/// and untouched until the thread's next [`flush`].
pub unsafe fn record_lf(
    f: LfFunction,
    dst: *mut u8,
    stride: isize,
    e: i32,
    i: i32,
    h: i32,
    origin: Origin,
) {
    record_op(Op::Lf { f, e, i, h }, dst, stride, origin)
}

/// Records the loop filter of one superblock of the calling thread, as FFmpeg's
/// `ff_vp9_loopfilter_sb` runs it: `dst[p]` is the superblock's first pixel in plane `p`,
/// `strides` the luma and chroma strides, `row` and `col` its position in 8x8 blocks.
///
/// # Safety
/// As FFmpeg's function: every pixel its edges reach must be valid and stay untouched until
/// the thread's next [`flush`], and so must the rectangle bounding the reach of every edge its
/// masks mark (the plane's bound, see [`SbPlane`]), which calls outside registered memory copy
/// back whole.
pub unsafe fn record_lf_sb(
    filter: lf_sb::SbFilter,
    dst: [*mut u8; 3],
    strides: [isize; 2],
    (row, col): (i32, i32),
    (ss_h, ss_v): (usize, usize),
    origin: Origin,
) {
    // Reading the masks has no side effects: should it fail, nothing is recorded and the
    // caller's own filters can still do the whole superblock. Once a plane is recorded the
    // superblock is taken, so a plane that fails does not stop the others (as a failing
    // per-edge call would not stop the next edge): FFmpeg must never filter recorded planes a
    // second time.
    let luma = SbPlane::new(filter, 0, (row, col), 0, 0);
    let chroma = SbPlane::new(filter, (ss_h | ss_v != 0) as usize, (row, col), ss_h, ss_v);
    for (p, plane) in [luma, chroma, chroma].iter().enumerate() {
        if let Some(plane) = plane {
            let stride = strides[(p > 0) as usize];
            crate::log::guard("a superblock loop-filter plane", (), || {
                record_op(Op::LfSb { plane }, dst[p], stride, origin)
            });
        }
    }
}

/// Records one CDEF call (dav1d's `fb[]`) of the calling thread: its input window is taken
/// now, its writes are deferred.
///
/// # Safety
/// As dav1d's function: the block and its neighbours that `edges` names must be valid, and
/// the block must stay valid and untouched until the thread's next [`flush`].
pub unsafe fn record_cdef(call: CdefCall, origin: Origin) {
    record_op(Op::Cdef { call }, call.dst, call.stride, origin)
}

/// Executes the calling thread's pending calls, counting the flush under `reason`.
pub fn flush_for(reason: Reason) {
    with_recorder(None, (), |r| r.flush(reason));
}

/// Completes the calling thread's pending calls where one may touch `areas` (all of them),
/// counting the flush under `reason`.
pub fn complete_for(reason: Reason, areas: &[Area]) {
    with_recorder(None, (), |r| r.complete(reason, areas));
}

/// Batches of any thread that may have left pixels wrong after the device failed: a
/// decoder fails the frames it decoded meanwhile.
pub fn damaged_batches() -> u64 {
    stats::read(&COUNTERS.damaged_batches)
}

/// Executes every call the calling thread recorded; returns with the pixels in place.
pub fn flush() {
    flush_for(Reason::Caller)
}

/// Adds the calling thread's counts of recorded calls to the shared counters (each thread's
/// flushes do so too).
pub fn fold_counts() {
    let _ = RECORDER.try_with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.counts.fold();
        }
    });
}

/// Whether this thread's recorder executes on the GPU (choosing the backend if not yet done).
pub fn thread_uses_gpu() -> bool {
    RECORDER
        .try_with(|r| {
            let mut r = r.borrow_mut();
            if !r.backend_chosen {
                r.choose_backend();
            }
            r.gpu.is_some()
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::testing::{Itx4, Pixels};

    const STRIDE: usize = Pixels::STRIDE;

    /// A call through the thread's recorder takes its coefficients (zeroing the caller's, as
    /// FFmpeg does) and leaves the pixels alone until the flush, which gives the reference's.
    /// A call made while the recorder is busy (a re-entry) runs at once instead.
    #[test]
    fn a_call_waits_for_the_flush_and_a_reentry_runs_at_once() {
        let px = Pixels::new(8);
        let before = px.bytes();
        let (mut a, mut b) = (Itx4::new(61), Itx4::new(62));
        let mut want = px.bytes();
        a.apply_reference(&mut want, 8, 8);
        let through_api = |itx: &mut Itx4, row, col| {
            let (block, stride) = (itx.coefs.as_mut_ptr(), STRIDE as isize);
            // SAFETY: the block lies in the registered pixels, its coefficients in `itx`.
            unsafe { record_itx(Itx4::TX, px.at(row, col), stride, block, 16, Origin::Api) }
        };
        through_api(&mut a, 8, 8);
        assert!(a.coefs.iter().all(|&c| c == 0));
        assert_eq!(px.bytes(), before);
        flush();
        assert_eq!(px.bytes(), want);
        b.apply_reference(&mut want, 40, 120);
        with_recorder(None, (), |_| through_api(&mut b, 40, 120));
        assert_eq!(px.bytes(), want);
    }
}
