//! How a recorder completes its work: the whole batch, for a reader of pixels pending calls
//! may touch, at a sync point of the decoder's order, or when the caller flushes.

use super::call::Area;
use super::cpu::run_job_on_cpu;
use super::recorder::Recorder;
use crate::stats::{self, Reason, COUNTERS};

impl Recorder {
    /// Completes what a reader of `areas` needs: the whole batch, where a pending call may
    /// touch them (on the CPU path, where anything is pending).
    pub(super) fn complete(&mut self, reason: Reason, areas: &[Area]) {
        self.effects = true;
        if self.pending() == 0 {
            return;
        }
        if let Some(g) = self.gpu.as_mut() {
            if g.pending > 0 && !g.may_touch(areas) {
                return;
            }
        }
        self.flush(reason);
    }

    pub(super) fn flush(&mut self, reason: Reason) {
        self.effects = true;
        self.counts.fold();
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
    use crate::batch::testing::{copy8, record, recorder, Itx4, Pixels};

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
        assert_eq!(px.bytes(), before);
        r.flush(Reason::Caller);
        assert_eq!((r.pending(), px.bytes()), (0, want.clone()));
        r.flush(Reason::Caller);
        assert_eq!(px.bytes(), want);
    }

    /// A reader of what a pending call writes, or of what it reads as its source, completes
    /// the whole batch: afterwards the pixels are the reference's.
    #[test]
    fn a_reader_of_pending_pixels_completes_the_batch() {
        for (reader, what) in [((24, 40), "its pixels"), ((8, 8), "its source")] {
            let mut r = recorder();
            let px = Pixels::new(6);
            let mut want = px.bytes();
            for row in 0..8 {
                let (from, to) = (
                    (8 + row) * Pixels::STRIDE + 8,
                    (24 + row) * Pixels::STRIDE + 40,
                );
                want.copy_within(from..from + 8, to);
            }
            unsafe { record(&mut r, &copy8(px.at(8, 8)), &px, 24, 40) };
            r.complete(Reason::Immediate, &[px.area(reader.0, reader.1, 4, 4)]);
            assert_eq!(r.pending(), 0, "a reader of {what}");
            assert_eq!(px.bytes(), want, "a reader of {what}");
        }
    }
}
