//! Submission: the batch packed into the job buffer and submitted, finished (copies back,
//! transforms left to FFmpeg's function), and recovered on the CPU after a failure.

use super::call::{job_eob, Call, Job, MAY_REDO, SKIP_JOB};
use super::cpu::{run_ffmpeg, run_job_on_cpu};
use super::gpu_batch::{GpuBatch, Submitted};
use super::keys::split_key;
use crate::gpu::stream::{Buf, Dispatch};
use crate::gpu::{self, GpuResult};
use crate::kernels::itx::{ItxJob, ItxKernel, Transform};
use crate::kernels::{JobHeader, Kernel};
use crate::stats::{self, COUNTERS};
use std::ptr;
use std::time::Instant;

/// A failed step of a batch's submission, by how much of the batch took effect.
pub(super) enum Failure {
    /// Nothing reached the GPU: the whole batch may run on the CPU.
    NotRun(String),
    /// The batch was submitted: the GPU may have run any part of it, and the host completed
    /// on the CPU what it could still complete exactly ([`GpuBatch::finish`]). `damaged`:
    /// pixels may be left wrong (written in part in place, or a transform left undone).
    Submitted { why: String, damaged: bool },
}

/// A transform the GPU left to FFmpeg's function (its 16-bit lanes overflowed).
struct Redo {
    tx: Transform,
    dst: *mut u8,
    stride: isize,
    coefs: *const i16,
    eob: i32,
    /// Its pixels are a copied block's.
    copied: bool,
}

/// The dispatch of a job whose 16-bit lanes overflowed, by the job's index in the job buffer
/// (what the transform kernels report). A dispatch's `first` counts in its own job size (each
/// bucket starts at a multiple of it), so an index names one job only among dispatches of one
/// size: only the full transforms' (4-word jobs, and the only kernels that report) are
/// searched, whatever the others' sizes and order.
fn overflowed_dispatch(dispatches: &[Dispatch], index: u32) -> Option<usize> {
    dispatches.iter().position(|d| {
        matches!(d.kernel, Kernel::Itx(ItxKernel::Full(_)))
            && (d.first..d.first + d.count).contains(&index)
    })
}

impl GpuBatch {
    /// The buckets in use, in the order they run.
    fn run_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.keys.len()).collect();
        order.sort_unstable_by_key(|&i| self.keys[i]);
        order
    }

    /// Submits the pending batch and waits for it. `arena_len`: coefficients in the arena.
    pub(super) fn execute(&mut self, arena: *const i16, arena_len: usize) -> Result<(), Failure> {
        if let Err(why) = self.submit(arena, arena_len) {
            return Err(self.failed_submission(why, arena));
        }
        self.finish()
    }

    /// What a failed submission left: nothing ran, except where the device was lost in it
    /// ([`gpu::LOST_IN_SUBMISSION`]), when the GPU may have started any part of the batch.
    /// Then, as after a failed wait, copied blocks run on the CPU from their untouched pixels
    /// and a batch with jobs in place is damaged.
    pub(super) fn failed_submission(&mut self, why: String, arena: *const i16) -> Failure {
        if !why.starts_with(gpu::LOST_IN_SUBMISSION) {
            return Failure::NotRun(why);
        }
        let exact = self.run_copied_on_cpu(arena);
        let damaged = !exact || self.has_jobs_in_place();
        Failure::Submitted { why, damaged }
    }

    /// Submits the pending batch without waiting; [`GpuBatch::finish`] completes it.
    pub(super) fn submit(&mut self, arena: *const i16, arena_len: usize) -> GpuResult<()> {
        let packing = Instant::now();
        let order = self.run_order();
        let stream = &mut self.stream;
        // Each bucket starts at a multiple of its job size, so that `first` counts its jobs.
        let mut layout = Vec::with_capacity(order.len());
        let mut words = 0usize;
        for &b in &order {
            let size = split_key(self.keys[b]).kernel.job_words();
            words = words.next_multiple_of(size);
            layout.push(words);
            words += self.buckets[b].len();
        }
        let job_bytes = 4 * words;
        stream.grow(Buf::Jobs, job_bytes as u64)?;
        stream.grow(Buf::Staging, self.staging_len as u64)?;
        stream.grow(Buf::Overflow, 4 * (self.pending_words as u64 + 1))?;

        let jobs = stream.jobs.ptr as *mut u32;
        let mut dispatches = Vec::with_capacity(order.len());
        for (&b, &start) in order.iter().zip(&layout) {
            let bucket = &self.buckets[b];
            let key = split_key(self.keys[b]);
            let size = key.kernel.job_words();
            unsafe { ptr::copy_nonoverlapping(bucket.as_ptr(), jobs.add(start), bucket.len()) };
            dispatches.push(Dispatch {
                level: key.level,
                kernel: key.kernel,
                slot: key.slot,
                source: key.source,
                first: (start / size) as u32,
                count: (bucket.len() / size) as u32,
            });
        }
        let stage = stream.staging.ptr;
        for c in &self.copied {
            for row in 0..c.rect.h {
                unsafe {
                    ptr::copy_nonoverlapping(
                        c.rect.pixel(row, 0),
                        stage.add(c.staging + row * c.rect.w),
                        c.rect.w,
                    )
                };
            }
        }
        stream.jobs.flush(0..job_bytes as u64)?;
        stream.coefs.flush(0..arena_len as u64 * 2)?;
        stream.staging.flush(0..self.staging_len as u64)?;
        let mut pixels = vec![stream.staging.as_ref()];
        pixels.extend(
            self.slots
                .iter()
                .map(|r| r.in_place.as_ref().expect("slots are in place").as_ref()),
        );
        let serial = stream.submit(&dispatches, &pixels, job_bytes as u64, arena_len as u64 * 2)?;
        self.unretired = Some(serial);
        stats::add_time(&COUNTERS.pack_ns, packing);
        self.submitted = Some(Submitted {
            order,
            dispatches,
            arena,
            arena_len,
            job_bytes,
        });
        Ok(())
    }

    /// Waits for the submitted batch and does what is left for the host: copying copied
    /// blocks back, redoing transforms whose lanes overflowed. The batch stays to be cleared.
    ///
    /// A failure comes after the host did on the CPU what it could still do exactly: where
    /// the GPU's results cannot be read back, the calls on copied blocks run on the CPU from
    /// their pixels, which nothing has touched yet; what cannot be made exact is reported as
    /// damage ([`Failure::Submitted`]), never redone over pixels the GPU may have written.
    pub(super) fn finish(&mut self) -> Result<(), Failure> {
        let Some(Submitted {
            order,
            dispatches,
            arena,
            arena_len,
            job_bytes,
        }) = self.submitted.take()
        else {
            return Ok(());
        };
        if let Err(why) = self.stream.finish() {
            // The GPU may have written any part of the batch in place; copied blocks wait in
            // the staging buffer, their own pixels untouched.
            let exact = self.run_copied_on_cpu(arena);
            let damaged = !exact || self.has_jobs_in_place();
            return Err(Failure::Submitted { why, damaged });
        }

        let unpacking = Instant::now();
        // The GPU ran the whole batch. Read the list of transforms it left to the host first:
        // copied blocks are copied back only where it could be read, so that their pixels stay
        // untouched otherwise.
        let mut failed = None;
        let mut damaged = false;
        let redo = match self.overflowed_transforms(&order, &dispatches, arena) {
            Ok(redo) => redo,
            Err(why) => {
                // Transforms in place whose coefficients did not prove them safe may have been
                // left undone.
                damaged |= self.may_redo;
                failed = Some(why);
                Vec::new()
            }
        };
        let copied_back = failed.is_none()
            && match self.stream.read_staging(self.staging_len) {
                Ok(()) => true,
                Err(why) => {
                    failed = Some(why);
                    false
                }
            };
        if copied_back {
            let stage = self.stream.staging.ptr;
            for c in &self.copied {
                for row in 0..c.rect.h {
                    unsafe {
                        ptr::copy_nonoverlapping(
                            stage.add(c.staging + row * c.rect.w),
                            c.rect.pixel(row, 0),
                            c.rect.w,
                        )
                    };
                }
            }
        }
        // After the copies back, which left their pixels unchanged. No call of the batch comes
        // after them on their pixels (`Need::after_cpu_redo`).
        for r in redo.iter().filter(|r| copied_back || !r.copied) {
            let coefs = unsafe { std::slice::from_raw_parts(r.coefs, r.tx.coefs()) };
            unsafe { run_ffmpeg(r.tx, r.dst, r.stride, coefs, r.eob) };
        }
        if !copied_back {
            damaged |= !self.run_copied_on_cpu(arena);
        }
        stats::add_time(&COUNTERS.pack_ns, unpacking);
        let on_gpu = self.pending as u64;
        stats::add(&COUNTERS.gpu_calls, on_gpu);
        stats::max(&COUNTERS.max_calls_per_submission, on_gpu);
        stats::add(&COUNTERS.pixel_bytes_copied, 2 * self.staging_len as u64);
        stats::add(
            &COUNTERS.bytes_to_device,
            (job_bytes + self.staging_len + 2 * arena_len) as u64,
        );
        stats::add(&COUNTERS.bytes_from_device, self.staging_len as u64);
        match failed {
            None => Ok(()),
            Some(why) => Err(Failure::Submitted { why, damaged }),
        }
    }

    /// The transforms of FFmpeg's decoder whose 16-bit lanes overflowed in the submission:
    /// the GPU left their pixels for FFmpeg's own function.
    fn overflowed_transforms(
        &self,
        order: &[usize],
        dispatches: &[Dispatch],
        arena: *const i16,
    ) -> GpuResult<Vec<Redo>> {
        let mut redo = Vec::new();
        for index in self.stream.overflowed_jobs()? {
            let n = overflowed_dispatch(dispatches, index)
                .ok_or("an overflowed job outside the submission's transforms")?;
            let d = &dispatches[n];
            let size = d.kernel.job_words();
            let at = (index - d.first) as usize * size;
            let mut words = Job::default();
            words[..size].copy_from_slice(&self.buckets[order[n]][at..at + size]);
            let job = ItxJob::from_words(&words);
            let Kernel::Itx(ItxKernel::Full(tx)) = d.kernel else {
                return Err("a job other than a full transform reported a lane overflow".into());
            };
            let (dst, stride) = if d.slot == 0 {
                let c = self.copied_calls.iter().find(|c| {
                    c.kernel() == d.kernel && JobHeader::of(&c.job).pixel == job.header.pixel
                });
                let c = c.ok_or("an overflowed copied job without its block")?;
                (c.dst, c.stride)
            } else {
                let base = self.slot_base(d.slot);
                (
                    (base + job.header.pixel as usize) as *mut u8,
                    job.header.stride as isize,
                )
            };
            if d.slot != 0 && job.flags & MAY_REDO == 0 {
                // Calls after it on its pixels already ran: the bound of `itx` failed.
                crate::log::once(
                    crate::log::Level::Error,
                    "unproven-overflow",
                    format_args!("a transform whose coefficients proved no 16-bit overflow overflowed; the frame may differ from FFmpeg's (please report)"),
                );
            }
            redo.push(Redo {
                tx,
                dst,
                stride,
                coefs: unsafe { arena.add(job.coef as usize) },
                eob: job_eob(job.flags),
                copied: d.slot == 0,
            });
        }
        Ok(redo)
    }

    /// Whether jobs in place are pending (not taken out again).
    fn has_jobs_in_place(&self) -> bool {
        (0..self.keys.len()).any(|b| {
            let key = split_key(self.keys[b]);
            key.slot != 0
                && self.buckets[b]
                    .chunks_exact(key.kernel.job_words())
                    .any(|words| JobHeader::of(words).pixel != SKIP_JOB)
        })
    }

    /// Runs the calls on copied blocks with the CPU reference, in level order, from their
    /// own pixels (after a failure that left the staging buffer unread). Returns whether that
    /// is exact: not where a call reads a slot the batch writes in place, whose pixels the
    /// GPU may have moved past what the call was to read.
    fn run_copied_on_cpu(&self, arena: *const i16) -> bool {
        let mut calls: Vec<&Call> = self.copied_calls.iter().collect();
        calls.sort_by_key(|c| c.level); // stable: recorded order within a level
        let mut exact = true;
        for c in calls {
            exact &= c.source == 0 || self.written_slots & 1 << c.source == 0;
            let source = self.source_base(c.source as usize, arena);
            unsafe { run_job_on_cpu(c.kernel(), c.dst, c.stride, &c.job, arena, source) };
        }
        stats::add(&COUNTERS.cpu_calls, self.copied_calls.len() as u64);
        exact
    }

    /// After a failed step of the batch's submission: the device is not used again; a batch
    /// that never reached the GPU runs on the CPU reference, and one that may have left
    /// pixels wrong is reported, so that the decoder fails its frame
    /// ([`damaged_batches`](super::api::damaged_batches)). Nothing is applied twice.
    pub(super) fn recover(&mut self, failure: Failure, arena: *const i16) {
        let (why, damaged) = match failure {
            Failure::NotRun(why) => {
                self.run_on_cpu(arena);
                (why, false)
            }
            Failure::Submitted { why, damaged } => (why, damaged),
        };
        self.stream.gpu().mark_lost(&why);
        if damaged {
            stats::add(&COUNTERS.damaged_batches, 1);
            crate::log::once(
                crate::log::Level::Error,
                "damaged-batch",
                format_args!("the device failed while its work may have written pixels in place; those frames are reported as failed to the decoder"),
            );
        }
        self.retire();
    }

    /// Runs the pending batch with the CPU reference (after a GPU failure), level by level,
    /// which gives the sequential result.
    pub(super) fn run_on_cpu(&self, arena: *const i16) {
        let mut jobs: Vec<(u32, Kernel, *mut u8, isize, Job, *const u8)> = Vec::new();
        for b in self.run_order() {
            let key = split_key(self.keys[b]);
            if key.slot == 0 {
                continue; // copied blocks: below, from their own record
            }
            let base = self.slot_base(key.slot);
            let source = self.source_base(key.source, arena);
            for words in self.buckets[b].chunks_exact(key.kernel.job_words()) {
                let header = JobHeader::of(words);
                if header.pixel == SKIP_JOB {
                    continue; // taken out again
                }
                let mut job = Job::default();
                job[..words.len()].copy_from_slice(words);
                let dst = (base + header.pixel as usize) as *mut u8;
                let stride = header.stride as isize;
                jobs.push((key.level, key.kernel, dst, stride, job, source));
            }
        }
        for c in &self.copied_calls {
            let source = self.source_base(c.source as usize, arena);
            jobs.push((c.level, c.kernel(), c.dst, c.stride, c.job, source));
        }
        jobs.sort_by_key(|j| j.0); // stable: recorded order within a level
        for (_, kernel, dst, stride, job, source) in jobs {
            unsafe { run_job_on_cpu(kernel, dst, stride, &job, arena, source) };
        }
        stats::add(&COUNTERS.cpu_calls, self.pending as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dispatch(kernel: Kernel, first: u32, count: u32) -> Dispatch {
        Dispatch {
            level: 0,
            kernel,
            slot: 1,
            source: 0,
            first,
            count,
        }
    }

    /// A motion compensation bucket at words 480..540 (its jobs 40..45, counted in 12 words)
    /// and a full transform at word 168 (its job 42, in 4 words): index 42 is the transform's,
    /// whichever dispatch is listed first; a DC-only transform (which cannot overflow) is not
    /// searched.
    #[test]
    fn an_overflowed_index_names_a_full_transform_whatever_the_other_job_sizes() {
        let full = Kernel::Itx(ItxKernel::Full(Transform::ALL[0]));
        let dc_only = Kernel::Itx(ItxKernel::DcOnly(Transform::ALL[0].size));
        assert_eq!(Kernel::Mc.job_words(), 12);
        let dispatches = [
            dispatch(Kernel::Mc, 40, 5),
            dispatch(dc_only, 30, 20),
            dispatch(full, 42, 1),
        ];
        assert_eq!(overflowed_dispatch(&dispatches, 42), Some(2));
        assert_eq!(overflowed_dispatch(&dispatches, 41), None);
        assert_eq!(overflowed_dispatch(&dispatches[..2], 42), None);
    }
}
