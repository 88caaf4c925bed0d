//! How a recorder completes its work: for a reader (early, or the whole batch), and around the
//! batch in flight (publishing a row, splitting a frame, settling).

use super::call::Area;
use super::cpu::run_job_on_cpu;
use super::early::{Stop, EARLY_COST_LIMIT};
use super::gpu_batch::GpuBatch;
use super::recorder::Recorder;
use crate::gpu::stream::Stream;
use crate::stats::{self, Reason, COUNTERS};

impl Recorder {
    /// Waits for the batch in flight, if any: afterwards the thread may touch any pixel on
    /// the CPU. If the device failed, the batch in flight and the pending one run on the CPU
    /// reference, and the thread goes on there.
    pub(super) fn settle(&mut self) {
        let Some(a) = self.in_flight.as_mut() else {
            return;
        };
        self.effects = true;
        // Finished where it is: a panic inside leaves it in flight for `poison`, never
        // dropped under the GPU.
        let finished = a.finish();
        let mut a = self.in_flight.take().expect("in flight");
        if let Some(g) = &mut self.gpu {
            g.after_in_flight = false;
        }
        match finished {
            Ok(()) => {
                a.clear();
                self.spare = Some(a);
            }
            Err(failure) => {
                let arena = a.stream.coefs.ptr as *const i16;
                a.recover(failure, arena);
                std::mem::forget(a); // the GPU may still use its objects
                if let Some(g) = &mut self.gpu {
                    g.run_on_cpu(self.arena.ptr);
                }
                self.drop_gpu();
                self.arena.len = 0;
                self.written = (usize::MAX, 0);
            }
        }
    }

    /// Submits the pending batch for a row other frame threads may now read, and goes on
    /// without waiting for it where nothing is left for the host to do after it; else
    /// completes it. Returns the serial readers wait for
    /// ([`await_submission`](super::api::await_submission)), 0 when everything is complete.
    pub(super) fn publish(&mut self, reason: Reason) -> u64 {
        self.effects = true;
        self.counts.fold();
        if self.pending() == 0 {
            // Nothing new: readers wait for the batch in flight, if any.
            return self
                .in_flight
                .as_ref()
                .and_then(|a| a.unretired)
                .unwrap_or(0);
        }
        let unattended = matches!(&self.gpu, Some(g) if g.pending > 0 && g.runs_unattended());
        if !unattended {
            self.flush(reason);
            return 0;
        }
        // One batch in flight at a time: the previous row's is done by now, mostly.
        self.settle();
        let next = match self.spare.take() {
            Some(b) => Ok(b),
            None => match &self.gpu {
                Some(g) => Stream::new(g.stream.gpu()).map(GpuBatch::new),
                None => Err("no GPU path".into()),
            },
        };
        let Ok(next) = next else {
            self.flush(reason);
            return 0;
        };
        let Some(g) = self.gpu.as_mut() else {
            self.spare = Some(next);
            self.flush(reason);
            return 0;
        };
        if g.all_completed_early() {
            self.spare = Some(next);
            self.flush(reason);
            return 0;
        }
        stats::count_flush(reason);
        let arena = self.arena.ptr;
        match g.submit(arena, self.arena.len) {
            Ok(()) => {
                let serial = g.submitted.as_ref().map_or(0, |s| s.serial);
                self.in_flight = self.gpu.replace(next);
                if let Some(g) = &mut self.gpu {
                    g.after_in_flight = true;
                }
                self.arena.len = 0;
                self.written = (usize::MAX, 0);
                self.sync_arena();
                stats::add(&COUNTERS.unattended_submissions, 1);
                serial
            }
            Err(e) => {
                let failure = g.failed_submission(e, arena);
                g.recover(failure, arena);
                drop(next); // never submitted
                self.drop_gpu();
                self.arena.len = 0;
                self.written = (usize::MAX, 0);
                0
            }
        }
    }

    /// Submits the pending batch without waiting, as the first part of a frame this thread
    /// decodes whole, where the GPU can run it unattended: the CPU goes on decoding while the
    /// GPU runs it. `next_reads` (the backup lines the next row's intra blocks read) is made
    /// final on the CPU first, so that those reads need not wait for the part in flight.
    /// Returns whether the part went out.
    pub(super) fn split(&mut self, next_reads: &[Area]) -> bool {
        self.effects = true;
        if !self.settings.reads_ahead {
            return false;
        }
        // One part in flight at a time; one still running keeps this part growing.
        match &self.in_flight {
            Some(a) if !a.stream.is_done() => return false,
            Some(_) => self.settle(),
            None => {}
        }
        let arena = self.arena.ptr;
        let Some(g) = self
            .gpu
            .as_mut()
            .filter(|g| g.pending > 0 && g.runs_unattended())
        else {
            return false;
        };
        // No pending call may read them as a source: the copies leave the batch below.
        let read_as_source = next_reads
            .iter()
            .any(|a| g.slot_reads.iter().any(|r| r.meets(a.span())));
        if read_as_source {
            return false;
        }
        let (early, ahead) = (g.completed_early, g.run_ahead);
        let made_final = g.complete_reads(next_reads, 4 * EARLY_COST_LIMIT, arena);
        if self.inter_frame {
            self.counts.inter_completed_early += (g.completed_early - early) as u64;
            self.counts.inter_run_ahead += (g.run_ahead - ahead) as u64;
        }
        if made_final.is_err() {
            return false;
        }
        // The CPU now holds the last copy's lines. The GPU would write every row's copy
        // again, one after the other, while the next row's intra blocks read the lines: take
        // them all out (each row's copy covers the same bytes, and the last one is final), so
        // that the part in flight leaves the lines alone.
        let copies = std::mem::take(&mut g.backup_copies);
        let (taken, ran) = g.take_out_list(&copies);
        if self.inter_frame {
            self.counts.inter_completed_early += taken as u64;
        }
        // Those that did not run ahead are dead: the last copy overwrote them.
        stats::add(&COUNTERS.cpu_calls, ran as u64);
        // (Where nothing is left for the GPU, this clears the batch.)
        let went = self.publish(Reason::FrameSplit) != 0;
        if went {
            stats::add(&COUNTERS.frame_splits, 1);
        }
        went
    }

    /// Completes what a reader of `areas` needs: on the GPU path, the pending calls there
    /// and what they depend on, on the CPU when that is little work; else the whole batch.
    pub(super) fn complete(&mut self, reason: Reason, areas: &[Area]) {
        if self.complete_early_where_possible(reason, areas) {
            stats::add(&COUNTERS.early_completions, 1);
        }
    }

    /// Completes what a reader needs who reads `reads` (and does not write them) and reads
    /// and writes `writes`: the calls on `writes` early as a whole, then on the GPU path only
    /// the pixels of `reads` where that gives the same result
    /// ([`GpuBatch::complete_reads`]); else the whole batch.
    pub(super) fn complete_reads(&mut self, reason: Reason, reads: &[Area], writes: &[Area]) {
        self.effects = true;
        if !self.settings.reads_ahead {
            return self.complete(reason, &[reads, writes].concat());
        }
        // The reader reads and writes on the CPU right after.
        self.settle_for(reads, writes);
        for _ in 0..2 {
            if self.pending() == 0 {
                return;
            }
            let arena = self.arena.ptr;
            let Some(g) = self.gpu.as_mut().filter(|g| g.pending > 0) else {
                break;
            };
            let (early, ahead) = (g.completed_early, g.run_ahead);
            let outcome = g
                .complete_areas(writes, EARLY_COST_LIMIT, arena)
                .and_then(|()| g.complete_reads(reads, EARLY_COST_LIMIT, arena));
            if self.inter_frame {
                self.counts.inter_completed_early += (g.completed_early - early) as u64;
                self.counts.inter_run_ahead += (g.run_ahead - ahead) as u64;
            }
            match outcome {
                Ok(()) => {
                    stats::add(&COUNTERS.early_completions, 1);
                    return;
                }
                Err(Stop::Settle) => self.settle_for_calls(),
                Err(Stop::Whole) => break,
            }
        }
        self.flush(reason);
    }

    /// Waits for the batch in flight where the CPU is about to read `reads` or write
    /// `writes` and that batch touches them ([`GpuBatch::cpu_read_waits`]).
    pub(super) fn settle_for(&mut self, reads: &[Area], writes: &[Area]) {
        let waits = self.in_flight.as_ref().is_some_and(|a| {
            reads.iter().any(|r| a.cpu_read_waits(r)) || writes.iter().any(|w| a.cpu_write_waits(w))
        });
        if waits {
            stats::add(&COUNTERS.in_flight_waits, 1);
            self.settle();
        }
    }

    /// Waits for the batch in flight because pending calls to run on the CPU touch its
    /// pixels.
    fn settle_for_calls(&mut self) {
        stats::add(&COUNTERS.in_flight_waits, 1);
        self.settle();
    }

    /// [`Recorder::complete`] without counting the sync; `true` where the calls completed
    /// early (none may have been needed), `false` where the batch completed as a whole or
    /// nothing was pending.
    pub(super) fn complete_early_where_possible(&mut self, reason: Reason, areas: &[Area]) -> bool {
        self.effects = true;
        // The reader may write them.
        self.settle_for(&[], areas);
        for _ in 0..2 {
            if self.pending() == 0 {
                return false;
            }
            let arena = self.arena.ptr;
            let Some(g) = self.gpu.as_mut().filter(|g| g.pending > 0) else {
                break;
            };
            let before = g.completed_early;
            match g.complete_areas(areas, EARLY_COST_LIMIT, arena) {
                Ok(()) => {
                    if self.inter_frame {
                        self.counts.inter_completed_early += (g.completed_early - before) as u64;
                    }
                    return true;
                }
                Err(Stop::Settle) => self.settle_for_calls(),
                Err(Stop::Whole) => break,
            }
        }
        self.flush(reason);
        false
    }

    pub(super) fn flush(&mut self, reason: Reason) {
        self.effects = true;
        self.counts.fold();
        self.settle();
        if self.pending() == 0 {
            if let Some(g) = &mut self.gpu {
                g.clear(); // what a call that did not join left behind
            }
            return;
        }
        stats::count_flush(reason);
        crate::debug!(
            "flush ({reason:?}): {} calls, {} coefficients",
            self.pending(),
            self.arena.len
        );
        self.written = (usize::MAX, 0);
        let arena = self.arena.ptr;
        if let Some(g) = &mut self.gpu {
            if g.all_completed_early() {
                g.clear();
                self.arena.len = 0;
                return;
            }
            if let Err(failure) = g.execute(arena, self.arena.len) {
                g.recover(failure, arena);
                self.drop_gpu();
                self.arena.len = 0;
                self.sync_arena();
                return;
            }
            if crate::gpu::testing::take_panic(crate::gpu::testing::Panic::AfterExecution) {
                panic!("a panic injected by a test after a batch executed");
            }
            g.clear();
        } else {
            for c in &self.calls {
                unsafe {
                    run_job_on_cpu(
                        c.kernel(),
                        c.dst,
                        c.stride,
                        &c.job,
                        arena,
                        arena as *const u8,
                    )
                };
            }
            stats::add(&COUNTERS.cpu_calls, self.cpu_calls as u64);
            self.calls.clear();
            self.cpu_calls = 0;
        }
        self.arena.len = 0;
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // A batch still in flight (a published row) must not be freed under the GPU.
        self.settle();
        // A thread that ends with pending calls: complete them rather than lose them.
        if self.pending() > 0 {
            crate::debug!("thread exit: completing {} pending calls", self.pending());
            self.flush(Reason::ThreadExit);
        }
        self.counts.fold();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::testing::{record, recorder, Itx4, Pixels};

    /// A reader of pixels that no pending call touches needs nothing: the batch stays
    /// pending, nothing runs; a flush then empties it with the reference's pixels, and a
    /// second flush has nothing to do.
    #[test]
    fn a_reader_of_untouched_pixels_leaves_the_batch_pending() {
        let mut r = recorder();
        let px = Pixels::new(7);
        let before = px.bytes();
        let mut want = px.bytes();
        let mut a = Itx4::new(51);
        a.apply_reference(&mut want, 8, 8);
        unsafe { record(&mut r, &a.op(), &px, 8, 8) };
        r.complete(Reason::Immediate, &[px.area(40, 120, 8, 8)]);
        assert_eq!(r.pending(), 1);
        assert_eq!(r.gpu.as_ref().unwrap().completed_early, 0);
        assert_eq!(px.bytes(), before);
        r.flush(Reason::Caller);
        assert_eq!((r.pending(), px.bytes()), (0, want.clone()));
        r.flush(Reason::Caller);
        assert_eq!(px.bytes(), want);
    }
}
