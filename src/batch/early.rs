//! Early completion: the pending calls a reader needs, and those they depend on, run on the CPU
//! at once and leave the batch ([`GpuBatch::complete_areas`]).

use super::buckets::{key_slot, split_key};
use super::call::{block_in, Area, Job, Op, SKIP_JOB};
use super::cpu::run_job_fast;
use super::gpu_batch::GpuBatch;
use crate::kernels::JobHeader;
use crate::regions::{self, Placement};
use crate::stats::{self, COUNTERS};

/// Most work (in [`call_cost`] units) a sync completes early on the CPU; beyond it, the whole
/// batch goes to the GPU instead.
pub(super) const EARLY_COST_LIMIT: usize = 4096;

/// A call of the pending batch as the early completion sees it: where its jobs are, what it
/// costs on the CPU, and the calls it must come after (`deps[deps_at..deps_end]`).
pub(super) struct PendingCall {
    pub(super) bucket: u32,
    pub(super) first_word: u32,
    pub(super) jobs: u32,
    cost: u32,
    deps_at: u32,
    deps_end: u32,
    /// It cannot complete early: its pixels travel through the staging buffer, or pending
    /// calls read them that its dependencies do not name (`Need::unknown_readers`).
    batch_only: bool,
    /// Run on the CPU, it would read bytes the batch in flight writes, or write bytes it
    /// touches ([`GpuBatch::cpu_read_waits`]): it may run there only once that batch is done.
    touches_in_flight: bool,
}

/// What may keep a pending call from running on the CPU early (see [`PendingCall`]).
#[derive(Clone, Copy)]
pub(super) struct EarlyLimits {
    pub(super) batch_only: bool,
    pub(super) touches_in_flight: bool,
}

/// Why calls cannot complete early on the CPU as asked.
#[derive(Debug, PartialEq)]
pub(super) enum Stop {
    /// The batch completes as a whole instead.
    Whole,
    /// They touch the pixels of the batch in flight: wait for it, then ask again.
    Settle,
}

/// A call's CPU work in units of about 64 pixels filtered or transformed.
pub(super) fn call_cost(op: &Op, jobs: usize) -> u32 {
    match *op {
        Op::Itx { tx, .. } => (tx.size.n() * tx.size.n()).div_ceil(64) as u32,
        Op::LfSb { plane, .. } => plane.bits,
        _ => jobs as u32,
    }
}

impl GpuBatch {
    /// Notes the call just placed (with serial `serial`): its jobs (`jobs` from word
    /// `first_word` of `bucket`) and what it depends on.
    pub(super) fn note_call(
        &mut self,
        serial: u32,
        bucket: u32,
        first_word: u32,
        jobs: u32,
        cost: u32,
        limits: EarlyLimits,
    ) {
        // Serials and calls are made together in `place` and `record`; were they ever out of
        // step, early completion must not trust the table (it completes the batch instead).
        if self.levels.pending_index(serial) != Some(self.calls.len()) {
            debug_assert!(false, "call table out of step with the levels");
            self.calls_in_step = false;
        }
        self.written_slots |= 1 << key_slot(self.keys[bucket as usize]);
        let all = &mut self.found.all;
        all.sort_unstable();
        all.dedup();
        let deps_at = self.deps.len() as u32;
        self.deps.extend_from_slice(all);
        self.calls.push(PendingCall {
            bucket,
            first_word,
            jobs,
            cost,
            deps_at,
            deps_end: self.deps.len() as u32,
            batch_only: limits.batch_only,
            touches_in_flight: limits.touches_in_flight,
        });
    }

    /// Whether pending call `i` left the batch (its jobs are skipped).
    fn taken_out(&self, i: usize) -> bool {
        let c = &self.calls[i];
        self.buckets[c.bucket as usize][c.first_word as usize] == SKIP_JOB
    }

    /// Whether every pending call completed early (nothing left for the GPU).
    pub(super) fn all_completed_early(&self) -> bool {
        self.completed_early == self.pending && self.staging_len == 0
    }

    /// Completes early, on the CPU, the pending calls `roots` and every pending call they
    /// depend on, in recorded order, and takes their jobs out of the batch. Does nothing where
    /// that is more than `limit` work or includes a copied block (`Stop::Whole`), or touches
    /// the pixels of the batch in flight (`Stop::Settle`).
    pub(super) fn complete_early(
        &mut self,
        roots: &mut Vec<u32>,
        limit: usize,
        arena: *const i16,
    ) -> Result<(), Stop> {
        let list = self.closure(roots, limit, None)?;
        self.run_early(&list, arena);
        Ok(())
    }

    /// The indices of the pending calls `roots` and every pending call they depend on, in
    /// recorded order; `Stop::Whole` where that is more than `limit` work or includes a call
    /// that cannot complete early, `Stop::Settle` where it includes a call that must wait for
    /// the batch in flight. With `ahead`, a call that ran ahead goes there instead and what
    /// it depends on is not followed: all of that ran ahead with it.
    pub(super) fn closure(
        &mut self,
        roots: &mut Vec<u32>,
        limit: usize,
        mut ahead: Option<&mut Vec<usize>>,
    ) -> Result<Vec<usize>, Stop> {
        if !self.calls_in_step {
            return Err(Stop::Whole);
        }
        self.visit = self.visit.wrapping_add(1);
        if self.visit == 0 {
            self.visited.fill(0);
            self.visit = 1;
        }
        self.visited.resize(self.calls.len(), 0);
        let mut list = Vec::new();
        let mut cost = 0usize;
        while let Some(serial) = roots.pop() {
            let Some(i) = self.levels.pending_index(serial) else {
                continue;
            };
            if self.visited[i] == self.visit {
                continue;
            }
            self.visited[i] = self.visit;
            if let Some(ahead) = ahead.as_deref_mut().filter(|_| self.ran_ahead(i)) {
                ahead.push(i);
                continue;
            }
            let c = &self.calls[i];
            cost += c.cost as usize;
            if c.batch_only || cost > limit {
                return Err(Stop::Whole);
            }
            if c.touches_in_flight && self.after_in_flight {
                return Err(Stop::Settle);
            }
            list.push(i);
            roots.extend_from_slice(&self.deps[c.deps_at as usize..c.deps_end as usize]);
        }
        list.sort_unstable();
        if let Some(ahead) = ahead {
            ahead.sort_unstable();
        }
        Ok(list)
    }

    fn ran_ahead(&self, i: usize) -> bool {
        self.ahead.get(i).is_some_and(|&a| a)
    }

    /// Runs pending call `i`'s jobs on the CPU where its pixels are.
    pub(super) fn run_call(&self, i: usize, arena: *const i16) {
        let c = &self.calls[i];
        let key = split_key(self.keys[c.bucket as usize]);
        let size = key.kernel.job_words();
        let base = self.slot_base(key.slot);
        let source = self.source_base(key.source, arena);
        let bucket = &self.buckets[c.bucket as usize];
        for k in 0..c.jobs as usize {
            let at = c.first_word as usize + k * size;
            let mut job = Job::default();
            job[..size].copy_from_slice(&bucket[at..at + size]);
            let header = JobHeader::of(&job);
            let dst = (base + header.pixel as usize) as *mut u8;
            let stride = header.stride as isize;
            unsafe { run_job_fast(key.kernel, dst, stride, &job, arena, source) };
        }
    }

    /// Takes pending call `i` out of the batch: its jobs are skipped, it is done.
    fn take_out(&mut self, i: usize) {
        self.note_settled(i);
        let c = &self.calls[i];
        let size = split_key(self.keys[c.bucket as usize]).kernel.job_words();
        let bucket = &mut self.buckets[c.bucket as usize];
        for k in 0..c.jobs as usize {
            let at = c.first_word as usize + k * size;
            JobHeader::set_pixel(&mut bucket[at..at + size], SKIP_JOB);
        }
        let serial = self.levels.serial_of(i);
        self.levels.set_done(serial);
    }

    /// Runs the calls `list` (a [`GpuBatch::closure`]) on the CPU and takes their jobs out of
    /// the batch.
    fn run_early(&mut self, list: &[usize], arena: *const i16) {
        if list.iter().any(|&i| self.ran_ahead(i)) {
            self.commit_ahead();
        }
        let mut ran = 0;
        for &i in list {
            if !self.ran_ahead(i) {
                self.run_call(i, arena);
                self.take_out(i);
                ran += 1;
            }
        }
        self.completed_early += ran;
        stats::add(&COUNTERS.completed_early, ran as u64);
        stats::add(&COUNTERS.cpu_calls, ran as u64);
    }

    /// Takes every call that ran ahead out of the batch (their pixels are final already),
    /// before calls among them complete early: left in, the GPU would run a chain again from
    /// its prediction that calls taken out had built on, or without a part taken out.
    fn commit_ahead(&mut self) {
        let list = std::mem::take(&mut self.ahead_list);
        // (A backup copy may have left already: `Recorder::split`.)
        let (taken, _) = self.take_out_list(&list);
        stats::add(&COUNTERS.cpu_calls, taken as u64);
        self.ahead_list = list;
        self.ahead_list.clear();
        self.ahead_readers.iter_mut().for_each(Vec::clear);
    }

    /// Takes the calls of `list` still in the batch out of it, as completed early (their
    /// pixels are final on the CPU, or dead); returns how many, and how many of those ran
    /// ahead.
    pub(super) fn take_out_list(&mut self, list: &[usize]) -> (usize, usize) {
        let (mut taken, mut ran) = (0, 0);
        for &i in list {
            if !self.taken_out(i) {
                self.take_out(i);
                taken += 1;
                ran += self.ran_ahead(i) as usize;
            }
        }
        self.completed_early += taken;
        stats::add(&COUNTERS.completed_early, taken as u64);
        (taken, ran)
    }

    /// Completes early every pending call that touches `areas` (and what those depend on), if
    /// that is at most `limit` work; else does nothing (see [`Stop`]).
    pub(super) fn complete_areas(
        &mut self,
        areas: &[Area],
        limit: usize,
        arena: *const i16,
    ) -> Result<(), Stop> {
        let mut roots = self.pending_on(areas, true).ok_or(Stop::Whole)?;
        self.complete_early(&mut roots, limit, arena)
    }

    /// The pending calls that touch `areas`; `None` where the cells cannot tell or (with
    /// `lf_passes`) a loop-filter plane placed by position meets them.
    pub(super) fn pending_on(&mut self, areas: &[Area], lf_passes: bool) -> Option<Vec<u32>> {
        if self.staging_len > 0 {
            return None;
        }
        let mut roots = Vec::new();
        for a in areas {
            let (lo, hi) = a.span();
            if hi < lo || (lf_passes && self.meets_lf_passes((lo, hi))) {
                return None;
            }
            match regions::place(&self.regions, lo, hi) {
                // No call in place there, and no copied one (`staging_len`).
                Placement::Outside => {}
                Placement::Straddles => return None,
                Placement::Inside(index) => {
                    let r = &self.regions[index];
                    if r.in_place.is_none() {
                        continue;
                    }
                    let block = block_in(r.id, r.start, r.end, a);
                    if !self.levels.pending_on(&block, &mut roots) {
                        return None;
                    }
                }
            }
        }
        Some(roots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::testing::{copy8, record, recorder, Itx4, Pixels};
    use crate::stats::Reason;

    const STRIDE: usize = Pixels::STRIDE;

    /// A transform at (8, 8), a copy of the 8x8 block there to (24, 40) and a transform at
    /// (40, 120), recorded; returns the reference's pixels after them.
    unsafe fn three_calls(r: &mut crate::batch::recorder::Recorder, px: &Pixels) -> Vec<u8> {
        let mut want = px.bytes();
        let mut a = Itx4::new(11);
        let mut c = Itx4::new(12);
        a.apply_reference(&mut want, 8, 8);
        for row in 0..8 {
            let (from, to) = ((8 + row) * STRIDE + 8, (24 + row) * STRIDE + 40);
            want.copy_within(from..from + 8, to);
        }
        c.apply_reference(&mut want, 40, 120);
        record(r, &a.op(), px, 8, 8);
        record(r, &copy8(px.at(8, 8)), px, 24, 40);
        record(r, &c.op(), px, 40, 120);
        want
    }

    /// A reader of the copy's pixels completes the copy and the transform it reads after, on
    /// the CPU, in recorded order; the unrelated transform stays for the GPU; the flush then
    /// gives the reference's pixels, nothing applied twice.
    #[test]
    fn a_reader_completes_what_it_needs_and_what_that_depends_on() {
        let mut r = recorder();
        let px = Pixels::new(1);
        let before = px.bytes();
        let want = unsafe { three_calls(&mut r, &px) };
        assert_eq!(r.gpu.as_ref().unwrap().pending, 3);
        r.complete(Reason::Immediate, &[px.area(24, 40, 8, 8)]);
        let g = r.gpu.as_ref().unwrap();
        assert_eq!(g.completed_early, 2);
        assert!(g.taken_out(0) && g.taken_out(1) && !g.taken_out(2));
        let now = px.bytes();
        for row in 0..64 {
            let line = row * STRIDE..(row + 1) * STRIDE;
            let untouched = (40..44).contains(&row);
            let expected = if untouched {
                &before[line.clone()]
            } else {
                &want[line.clone()]
            };
            assert_eq!(&now[line], expected, "row {row}");
        }
        r.flush(Reason::Caller);
        assert_eq!(px.bytes(), want);
    }

    /// The closure of the copy holds the transform it reads after, in recorded order, and
    /// stops (the batch completes whole) where that is more work than the limit allows.
    #[test]
    fn the_closure_follows_dependencies_within_its_limit() {
        let mut r = recorder();
        let px = Pixels::new(2);
        let want = unsafe { three_calls(&mut r, &px) };
        let g = r.gpu.as_mut().unwrap();
        let roots = g.pending_on(&[px.area(24, 40, 8, 8)], true).expect("known");
        assert_eq!(roots.len(), 1, "only the copy writes there");
        assert_eq!(
            g.closure(&mut roots.clone(), EARLY_COST_LIMIT, None),
            Ok(vec![0, 1])
        );
        assert_eq!(g.closure(&mut roots.clone(), 1, None), Err(Stop::Whole));
        r.flush(Reason::Caller);
        assert_eq!(px.bytes(), want);
    }
}
