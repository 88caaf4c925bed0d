//! [`Recorder`]: a thread's recorder, and how it records a call (its data captured, placed,
//! its jobs pushed) or runs it at once.

use super::call::{spans_meet, Area, Call, Captured, Op, Origin, MAY_REDO};
use super::counts::RecordedCounts;
use super::cpu::{move_and_zero, run_job_on_cpu, run_transient, RegionView};
use super::gpu_batch::{Copied, GpuBatch};
use super::placement::{Busy, Placed, Source, Target};
use super::submit::Failure;
use crate::gpu;
use crate::gpu::stream::{Buf, Stream};
use crate::kernels::itx::ItxJob;
use crate::kernels::itx::TxSize;
use crate::kernels::{cdef, lf_sb, JobHeader};
use crate::regions::Placement;
use crate::stats::{self, Reason, COUNTERS};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

/// Where recorded coefficients and source windows go: the stream's mapped upload buffer on
/// the GPU path, a vector on the CPU path.
pub(super) struct Arena {
    pub(super) ptr: *mut i16,
    /// In coefficients.
    capacity: usize,
    /// Coefficients used.
    pub(super) len: usize,
}

pub(super) struct Recorder {
    pub(super) arena: Arena,
    /// The coefficient storage of the CPU path.
    host_coefs: Vec<i16>,
    pub(super) backend_chosen: bool,
    /// The CPU path's pending jobs.
    pub(super) calls: Vec<Call>,
    pub(super) cpu_calls: usize,
    cpu_regions: RegionView,
    /// The bytes pending calls may write lie in `written.0 .. written.1` (both paths): a
    /// source window read at call time must not meet them.
    pub(super) written: (usize, usize),
    /// The GPU path; `None` on the CPU path.
    pub(super) gpu: Option<GpuBatch>,
    pub(super) counts: RecordedCounts,
    /// `record` is placing a call: only its own jobs (journaled) and coefficients
    /// (`moved_coefs`) changed the pending work, and `calls` held `cpu_mark` jobs before it.
    placing: bool,
    cpu_mark: usize,
    moved_coefs: Option<Moved>,
    /// Work executed during the current entry (a flush, a completion, a call run at once):
    /// a panic then leaves unknown what took effect.
    pub(super) effects: bool,
    /// A panic while recording left this thread's calls to run at once on the CPU.
    poisoned: bool,
}

/// Completes a submitted batch after a panic (its finish was under way or not begun). Returns
/// whether it completed exactly.
fn finish_after_panic(a: &mut GpuBatch) -> bool {
    let arena = a.stream.coefs.ptr as *const i16;
    let exact = match a.finish() {
        Ok(()) => true,
        Err(failure) => {
            let damaged = matches!(failure, Failure::Submitted { damaged: true, .. });
            a.recover(failure, arena);
            !damaged
        }
    };
    a.retire();
    exact
}

/// Where `capture` moved a transform's coefficients from the decoder's block.
#[derive(Clone, Copy)]
enum Moved {
    /// Into the arena, at this index.
    Arena(usize),
    /// A DC-only call's one value.
    Dc(i16),
}

impl Recorder {
    pub(super) fn new() -> Recorder {
        Recorder {
            arena: Arena {
                ptr: ptr::null_mut(),
                capacity: 0,
                len: 0,
            },
            host_coefs: Vec::new(),
            backend_chosen: false,
            calls: Vec::new(),
            cpu_calls: 0,
            cpu_regions: RegionView::default(),
            written: (usize::MAX, 0),
            gpu: None,
            counts: RecordedCounts::default(),
            placing: false,
            effects: false,
            cpu_mark: 0,
            moved_coefs: None,
            poisoned: false,
        }
    }

    pub(super) fn choose_backend(&mut self) {
        self.backend_chosen = true;
        if let Some(g) = gpu::get() {
            match Stream::new(g) {
                Ok(s) => self.gpu = Some(GpuBatch::new(s)),
                // This thread only (out of memory, say): the device may serve the others.
                Err(e) => crate::log::once(
                    crate::log::Level::Warn,
                    "stream",
                    format_args!("cannot set up a GPU stream for a thread ({e}); it runs on the CPU reference"),
                ),
            }
        }
        self.sync_arena();
    }

    /// Leaves the GPU path for good. The stream and the imports it used are leaked, not
    /// destroyed: after a failure the GPU may still be using them, and freeing memory in use
    /// is not allowed.
    pub(super) fn drop_gpu(&mut self) {
        if let Some(g) = self.gpu.take() {
            std::mem::forget(g);
        }
        self.sync_arena();
    }

    /// Points the arena at the current path's coefficient storage.
    pub(super) fn sync_arena(&mut self) {
        let (ptr, capacity) = match &mut self.gpu {
            Some(g) => (
                g.stream.coefs.ptr as *mut i16,
                g.stream.coefs.size as usize / 2,
            ),
            None => (self.host_coefs.as_mut_ptr(), self.host_coefs.len()),
        };
        self.arena.ptr = ptr;
        self.arena.capacity = capacity;
    }

    pub(super) fn pending(&self) -> usize {
        self.cpu_calls + self.gpu.as_ref().map_or(0, |g| g.pending)
    }

    /// Makes room for `count` more coefficients: on the GPU path by completing the pending
    /// batch and taking a larger buffer for next time; on the CPU path by growing the vector.
    fn ensure_room(&mut self, count: usize) {
        // A loop: completing the batch may lose the device, and then the CPU path needs room.
        while self.arena.len + count > self.arena.capacity {
            match &mut self.gpu {
                None => {
                    let size = (self.arena.len + count)
                        .max(2 * self.host_coefs.len())
                        .max(1 << 16);
                    self.host_coefs.resize(size, 0);
                }
                Some(g) => {
                    // Full: complete the pending batch, then take a larger buffer so that the
                    // next batch of this size fits.
                    if self.arena.len > 0 {
                        crate::debug!(
                            "coefficient buffer full ({} bytes): flushing early",
                            g.stream.coefs.size
                        );
                        self.flush(Reason::Full);
                    }
                    let Some(g) = &mut self.gpu else { continue };
                    let s = &mut g.stream;
                    let want = (s.coefs.size * 2)
                        .max(count as u64 * 2)
                        .min(s.max_buffer_bytes());
                    if want < count as u64 * 2 {
                        crate::warn!("a coefficient block exceeds the buffer limit; running on the CPU reference");
                        self.drop_gpu();
                    } else if let Err(e) = s.grow(Buf::Coefs, want) {
                        crate::warn!("cannot grow the coefficient buffer ({e}); running on the CPU reference");
                        self.drop_gpu();
                    }
                }
            }
            self.sync_arena();
        }
    }

    /// Takes `count` coefficients of arena (room was ensured).
    fn take(&mut self, count: usize) -> usize {
        self.ensure_room(count);
        let at = self.arena.len;
        self.arena.len += count;
        at
    }

    /// Copies what the call reads besides its pixels into the arena: a transform's
    /// coefficients (zeroing them as FFmpeg does; for a DC-only call the word is the DC value
    /// itself), a motion compensation's source window (the word is the arena byte of the
    /// source pixel under the block's top-left pixel). Returns that word.
    unsafe fn capture(&mut self, op: &Op) -> u32 {
        match *op {
            Op::Itx { tx, block, eob } => {
                if tx.is_dc_only_call(eob) {
                    let v = ptr::read_unaligned(block);
                    ptr::write_unaligned(block, 0);
                    self.moved_coefs = Some(Moved::Dc(v));
                    return v as i32 as u32;
                }
                let at = self.take(tx.coefs());
                let to = self.arena.ptr.add(at) as *mut u8;
                let from = block as *mut u8;
                match tx.size {
                    TxSize::T4 => move_and_zero::<32>(from, to),
                    TxSize::T8 => move_and_zero::<128>(from, to),
                    TxSize::T16 => move_and_zero::<512>(from, to),
                    TxSize::T32 => move_and_zero::<2048>(from, to),
                }
                self.moved_coefs = Some(Moved::Arena(at));
                at as u32
            }
            Op::Mc { f, .. } => {
                let win = op.source().expect("MC has a source");
                let at = self.take((win.w * win.h).div_ceil(2));
                let to = self.arena.ptr.add(at) as *mut u8;
                for row in 0..win.h {
                    ptr::copy_nonoverlapping(win.pixel(row, 0), to.add(row * win.w), win.w);
                }
                let w = f.window();
                (2 * at + w.above * win.w + w.left) as u32
            }
            Op::Lf { .. } => 0,
            Op::LfSb { plane } => {
                let at = self.take(lf_sb::RECORD_BYTES / 2);
                plane.write_record(self.arena.ptr.add(at) as *mut u8);
                at as u32
            }
            Op::Cdef { call } => {
                let at = self.take(cdef::WINDOW_LEN);
                call.window(&mut *(self.arena.ptr.add(at) as *mut [i16; cdef::WINDOW_LEN]));
                at as u32
            }
        }
    }

    fn note_written(&mut self, rect: &Area) {
        let (lo, hi) = rect.span();
        self.written = (self.written.0.min(lo), self.written.1.max(hi));
    }

    /// Records `op` for the thread's next flush: placed on the GPU path, kept on the CPU
    /// path, or run at once where only FFmpeg's order gives its result.
    pub(super) unsafe fn record(&mut self, op: &Op, dst: *mut u8, stride: isize, origin: Origin) {
        if self.poisoned {
            op.run_at_once(dst, stride, origin);
            stats::add(&COUNTERS.immediate, 1);
            return;
        }
        if !self.backend_chosen {
            self.choose_backend();
        }
        let rect = op.rect(dst, stride);
        if self.must_run_at_once(op, &rect, stride) {
            return self.run_now(*op, dst, stride, origin);
        }
        // First: completing a full batch here may lose the device, and decide the path.
        self.ensure_room(op.room());
        if self.gpu.is_none() {
            return self.record_on_cpu_path(op, dst, stride, origin, rect);
        }
        match self.place_on_gpu(op, &rect, origin) {
            Ok(placed) => self.push_placed(op, stride, origin, rect, placed),
            Err(Busy::Transient) => run_transient(op, dst, stride),
            // The flush lost the device: the call goes to the CPU path.
            Err(_) if self.gpu.is_none() => self.record(op, dst, stride, origin),
            Err(_) => self.run_now(*op, dst, stride, origin),
        }
    }

    /// Whether `op` must run at once: its kernel is missing on the device, or only FFmpeg's
    /// order gives its result. Pending calls that write what it reads complete first.
    unsafe fn must_run_at_once(&mut self, op: &Op, rect: &Area, stride: isize) -> bool {
        if self.gpu.is_some() && op.optional_kernel().is_some_and(|k| !device_has_kernel(k)) {
            // The decoders' hooks decline such calls (VP9's superblock hook, dav1d's CDEF
            // attach), so these come from the public API: at once, on the CPU.
            return true;
        }
        if stride.unsigned_abs() < rect.w {
            // Rows overlap: only FFmpeg's sequential order gives its result.
            return true;
        }
        let source_area = op.source();
        if let Some(src) = &source_area {
            let read = src.span();
            if read.1 < read.0 || spans_meet(read, rect.span()) {
                // Reads what it writes: only FFmpeg's order gives its result.
                return true;
            }
            if self.pending() > 0 && spans_meet(read, self.written) {
                // Its source may be written by pending calls: complete them first.
                self.flush(Reason::Overlap);
            }
        }
        if let Op::Cdef { call } = op {
            // Its window is taken now, on the CPU: pending calls that write what it reads
            // complete first (in dav1d's order there are none). The CPU path runs it at once.
            if self.gpu.is_none() {
                return true;
            }
            let (read, count) = call.read_areas();
            let areas = read.map(|(at, stride, w, h)| Area {
                at: at as *mut u8,
                stride,
                w,
                h,
            });
            self.complete(Reason::Overlap, &areas[..count]);
            if self.gpu.is_none() {
                return true; // the device failed
            }
        }
        false
    }

    /// The CPU path keeps the call's jobs for the flush (a call outside the registered
    /// memory of a decoder runs at once).
    unsafe fn record_on_cpu_path(
        &mut self,
        op: &Op,
        dst: *mut u8,
        stride: isize,
        origin: Origin,
        rect: Area,
    ) {
        if origin == Origin::Ffmpeg {
            let (lo, hi) = rect.span();
            match self.cpu_regions.place(lo, hi) {
                Placement::Inside(_) => {}
                Placement::Outside => return run_transient(op, dst, stride),
                Placement::Straddles => return self.run_now(*op, dst, stride, origin),
            }
        }
        self.cpu_mark = self.calls.len();
        self.moved_coefs = None;
        self.placing = true;
        let captured = Captured::of(op, self.capture(op));
        let calls = &mut self.calls;
        Self::for_each_job(op, captured, &rect, origin, |row, col, kernel, job| {
            calls.push(Call {
                dst: rect.pixel(row, col),
                stride,
                kernel: kernel.index() as u8,
                job,
                level: 0,
                source: 0,
            })
        });
        self.cpu_calls += 1;
        self.placing = false;
        self.note_written(&rect);
        self.counts.count(op);
    }

    /// Places `op` on the GPU path. A call that cannot join completes the pending batch first
    /// (which empties it and the arena, so the second try succeeds and the room ensured
    /// remains); `Err` where it cannot go to the GPU.
    unsafe fn place_on_gpu(
        &mut self,
        op: &Op,
        rect: &Area,
        origin: Origin,
    ) -> Result<Placed, Busy> {
        let mut why = Busy::Straddles;
        for _ in 0..2 {
            let g = self.gpu.as_mut().expect("GPU path");
            g.journal_start();
            self.moved_coefs = None;
            self.placing = true;
            let tried = g.place(op, rect, origin);
            self.placing = tried.is_ok();
            match tried {
                Ok(placed) => return Ok(placed),
                Err(Busy::Flush(reason)) => {
                    self.flush(reason);
                    why = Busy::Flush(reason);
                }
                Err(other) => return Err(other),
            }
            if self.gpu.is_none() {
                break; // the flush lost the device
            }
        }
        Err(why)
    }

    /// Pushes a placed call's jobs into the batch's buckets (and, for a copied block, its
    /// calls for the copy back).
    unsafe fn push_placed(
        &mut self,
        op: &Op,
        stride: isize,
        origin: Origin,
        rect: Area,
        placed: Placed,
    ) {
        let Placed {
            target,
            source,
            level,
            may_redo,
        } = placed;
        let (captured, source_slot) = match source {
            Source::Arena => (Captured::of(op, self.capture(op)), 0),
            Source::InPlace {
                slot,
                offset,
                stride,
            } => {
                self.counts.mc_source_in_place += 1;
                (
                    Captured {
                        word: offset,
                        stride,
                    },
                    slot,
                )
            }
        };
        let g = self.gpu.as_mut().expect("GPU path");
        match target {
            Target::InPlace {
                slot,
                pixel,
                stride,
            } if matches!(op, Op::Mc { .. }) => {
                let mut job = Self::mc_job(op, captured);
                job.header = JobHeader { pixel, stride };
                g.push_mc_tiles(level, slot, source_slot, &job, &rect);
                g.written_slots |= 1 << slot;
            }
            Target::InPlace {
                slot,
                pixel,
                stride,
            } => {
                Self::for_each_job(op, captured, &rect, origin, |row, col, kernel, mut job| {
                    let offset = row as i64 * stride as i64 + col as i64;
                    let pixel = pixel.wrapping_add(offset as u32);
                    JobHeader { pixel, stride }.write(&mut job);
                    if may_redo && matches!(op, Op::Itx { .. }) {
                        let mut itx = ItxJob::from_words(&job);
                        itx.flags |= MAY_REDO;
                        job = itx.to_words();
                        g.may_redo = true;
                    }
                    g.push(level, kernel, slot, source_slot, &job);
                });
                g.written_slots |= 1 << slot;
            }
            Target::Copied { staging } => {
                Self::for_each_job(op, captured, &rect, origin, |row, col, kernel, mut job| {
                    let header = JobHeader {
                        pixel: (staging + row * rect.w + col) as u32,
                        stride: rect.w as i32,
                    };
                    header.write(&mut job);
                    g.push(level, kernel, 0, source_slot, &job);
                    g.copied_calls.push(Call {
                        dst: rect.pixel(row, col),
                        stride,
                        kernel: kernel.index() as u8,
                        job,
                        level,
                        source: source_slot,
                    });
                });
                g.copied.push(Copied { rect, staging });
                // Source windows copied at call time must not meet these pixels.
                self.note_written(&rect);
            }
        }
        if crate::gpu::testing::take_panic(crate::gpu::testing::Panic::WhilePlacing) {
            panic!("a panic injected by a test while placing a call");
        }
        if let Some(g) = &mut self.gpu {
            g.pending += 1;
        }
        self.placing = false;
        self.counts.count(op);
    }

    /// What an entry point starts from: no call placed, nothing executed yet.
    pub(super) fn begin_entry(&mut self) {
        self.placing = false;
        self.effects = false;
        self.moved_coefs = None;
    }

    /// After a panic in an entry point (`call`: the call it was taking): this thread's calls
    /// run at once on the CPU from now on, and nothing is applied twice. Every batch leaves
    /// the recorder first, so that whatever happens here none runs again later.
    /// - The panic struck while a call was being placed, or before anything executed: that
    ///   call's jobs leave the batch (journaled), its coefficients go back to the decoder's
    ///   block, the batches complete (the pending one on the CPU reference), and the call runs
    ///   after them, in FFmpeg's order.
    /// - It struck while work executed (a flush, a completion): what took effect is unknown.
    ///   The GPU's work is waited for, the rest dropped and counted damaged, so the decoder
    ///   fails the frame rather than hand it out silently wrong; the call is not run (it may
    ///   have run).
    ///
    /// Returns whether it counted a damaged batch.
    pub(super) unsafe fn poison(&mut self, call: Option<(&Op, *mut u8, isize, Origin)>) -> bool {
        let placing = std::mem::take(&mut self.placing);
        let exact = placing || !std::mem::take(&mut self.effects);
        self.poisoned = true;
        crate::log::once(
            crate::log::Level::Error,
            "recorder-poisoned",
            format_args!("internal error while recording a call (a bug: please report it); this thread's calls run at once on the CPU from now on"),
        );
        // Never dropped: the GPU may still use them.
        let mut gpu = ManuallyDrop::new(self.gpu.take());
        let calls = std::mem::take(&mut self.calls);
        self.cpu_calls = 0;
        let arena = self.arena.ptr;
        let (cpu_mark, moved) = (self.cpu_mark, self.moved_coefs.take());
        self.sync_arena();
        self.arena.len = 0;
        self.written = (usize::MAX, 0);
        let completed = catch_unwind(AssertUnwindSafe(|| {
            let mut damaged = false;
            if placing {
                if let Some(g) = gpu.as_mut() {
                    g.take_out_journaled();
                }
                if let (Some((&Op::Itx { tx, block, .. }, ..)), Some(m)) = (call, moved) {
                    match m {
                        Moved::Dc(v) => ptr::write_unaligned(block, v),
                        Moved::Arena(at) => {
                            ptr::copy_nonoverlapping(arena.add(at), block, tx.coefs())
                        }
                    }
                }
            }
            let cpu_jobs = &calls[..if placing {
                cpu_mark.min(calls.len())
            } else {
                calls.len()
            }];
            if let Some(g) = gpu.as_mut() {
                if g.submitted.is_some() {
                    // Submitted, not finished: the GPU runs it whole.
                    damaged |= !finish_after_panic(g);
                } else if exact {
                    g.run_on_cpu(arena);
                    g.retire();
                } else if g.pending > 0 || g.unretired.is_some() {
                    let _ = g.stream.finish();
                    g.retire();
                    damaged = true;
                }
            } else if exact {
                for c in cpu_jobs {
                    run_job_on_cpu(
                        c.kernel(),
                        c.dst,
                        c.stride,
                        &c.job,
                        arena,
                        arena as *const u8,
                    );
                }
                stats::add(&COUNTERS.cpu_calls, cpu_jobs.len() as u64);
            } else {
                damaged |= !cpu_jobs.is_empty();
            }
            match call {
                Some((op, dst, stride, origin)) if exact => {
                    op.run_at_once(dst, stride, origin);
                    stats::add(&COUNTERS.immediate, 1);
                }
                // Whether it ran is unknown.
                Some(_) => damaged = true,
                None => {}
            }
            damaged
        }));
        let damaged = completed.unwrap_or(true);
        if damaged {
            stats::add(&COUNTERS.damaged_batches, 1);
        }
        damaged
    }

    /// Runs the transform of an intra block at once with FFmpeg's function on the GPU path:
    /// the decoder's next prediction reads its pixels right away, so deferring it would only
    /// complete the batch there. Pending calls on its pixels (normally none: the block's intra
    /// sync completed them) complete first. The CPU path takes the usual way.
    pub(super) unsafe fn run_intra_transform(&mut self, op: &Op, dst: *mut u8, stride: isize) {
        self.effects = true;
        if !self.backend_chosen {
            self.choose_backend();
        }
        if self.gpu.is_none() {
            return self.record(op, dst, stride, Origin::Ffmpeg);
        }
        self.complete(Reason::Immediate, &[op.rect(dst, stride)]);
        op.run_at_once(dst, stride, Origin::Ffmpeg);
        stats::add(&COUNTERS.intra_itx_at_once, 1);
    }

    /// Completes the pending batch, then runs this call on the CPU at once: FFmpeg's own
    /// function for its decoder's transforms, else the reference.
    unsafe fn run_now(&mut self, op: Op, dst: *mut u8, stride: isize, origin: Origin) {
        self.flush(Reason::Immediate);
        op.run_at_once(dst, stride, origin);
        stats::add(&COUNTERS.immediate, 1);
    }
}

/// Whether the device (set up already) can run kernel `k`, building it on the first question
/// (see `Pipelines::has`).
pub fn device_has_kernel(k: crate::kernels::Kernel) -> bool {
    crate::gpu::set_up().is_some_and(|g| g.pipelines.has(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::testing::{record, recorder, Itx4, Pixels};

    const STRIDE: usize = Pixels::STRIDE;

    /// A panic in an entry before anything executed: the pending call completes on the CPU,
    /// then the entry's own call, each once; from then on the thread's calls run at once.
    #[test]
    fn a_panic_before_anything_ran_completes_everything_once_then_runs_at_once() {
        let mut r = recorder();
        let px = Pixels::new(4);
        let mut want = px.bytes();
        let (mut a, mut b, mut c) = (Itx4::new(31), Itx4::new(32), Itx4::new(33));
        for (itx, row, col) in [(&a, 8, 8), (&b, 8, 8), (&c, 40, 120)] {
            itx.apply_reference(&mut want, row, col);
        }
        let stride = STRIDE as isize;
        unsafe { record(&mut r, &a.op(), &px, 8, 8) };
        r.begin_entry();
        let damaged = unsafe { r.poison(Some((&b.op(), px.at(8, 8), stride, Origin::Api))) };
        assert!(!damaged);
        assert_eq!(
            px.bytes()[8 * STRIDE..12 * STRIDE],
            want[8 * STRIDE..12 * STRIDE]
        );
        unsafe { record(&mut r, &c.op(), &px, 40, 120) };
        assert_eq!(r.pending(), 0, "run at once, not recorded");
        assert_eq!(px.bytes(), want);
    }

    /// A panic while work executed: what took effect is unknown, so nothing runs again (the
    /// pending call is dropped, the entry's call not run) and the batch counts as damaged,
    /// for the decoder to fail its frame.
    #[test]
    fn a_panic_while_work_ran_runs_nothing_again_and_reports_damage() {
        let mut r = recorder();
        let px = Pixels::new(5);
        let before = px.bytes();
        let (mut a, mut b) = (Itx4::new(41), Itx4::new(42));
        let stride = STRIDE as isize;
        unsafe { record(&mut r, &a.op(), &px, 8, 8) };
        r.begin_entry();
        r.effects = true;
        let damaged = unsafe { r.poison(Some((&b.op(), px.at(8, 8), stride, Origin::Api))) };
        assert!(damaged);
        assert_eq!(px.bytes(), before);
    }
}
