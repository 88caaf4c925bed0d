//! Job packing: the words of a call's jobs ([`Recorder::for_each_job`]), and the bucket of
//! their (level, kernel, pixel slot, source) that each goes into, one dispatch per bucket at
//! submission; the journal takes the jobs of a call out again after a panic.

use super::call::{job_flags, Area, Captured, Job, Op, Origin, SKIP_JOB};
use super::gpu_batch::GpuBatch;
use super::keys::{bucket_key, split_key, RECENT_BUCKETS};
use super::recorder::Recorder;
use crate::kernels::cdef::CdefJob;
use crate::kernels::itx::{ItxJob, ItxKernel};
use crate::kernels::lf::{LfDir, LfJob};
use crate::kernels::lf_sb::LfSbJob;
use crate::kernels::mc::McJob;
use crate::kernels::{cdef, mc, JobHeader, Kernel};
use std::ptr;

/// Calls `tile(row, col, tile_params)` for each 8x8 tile of a motion compensation's `w` x `h`
/// block (the last row and column of tiles may be smaller), row after row: one job each.
fn for_each_mc_tile(w: usize, h: usize, mut tile: impl FnMut(usize, usize, u32)) {
    let mut y = 0;
    while y < h {
        let mut x = 0;
        while x < w {
            tile(y, x, mc::tile_params((h - y).min(8), (w - x).min(8)));
            x += 8;
        }
        y += 8;
    }
}

impl GpuBatch {
    /// The bucket of the jobs of `kernel` at `level` on pixel slot `slot` and source
    /// `source`, made if new. Inlined, as [`GpuBatch::push`]: every job of every call asks.
    #[inline(always)]
    fn bucket_index(&mut self, level: u32, kernel: Kernel, slot: u8, source: u8) -> usize {
        let key = bucket_key(level, kernel.index() as u8, slot, source);
        // Direct-mapped by the key's high product bits (Fibonacci hashing).
        let line = (key.wrapping_mul(0x9E37_79B1) >> (32 - RECENT_BUCKETS.ilog2())) as usize;
        if self.recent_buckets[line].0 == key {
            return self.recent_buckets[line].1;
        }
        self.bucket_index_missed(key, line)
    }

    /// [`GpuBatch::bucket_index`] for a key not in its line of the recent buckets: kept out of
    /// line, so that the common case stays a few instructions where it is inlined.
    #[cold]
    #[inline(never)]
    fn bucket_index_missed(&mut self, key: u32, line: usize) -> usize {
        let index = match self.bucket_of.get(&key) {
            Some(&i) => i,
            None => {
                let i = self.keys.len();
                self.keys.push(key);
                if self.buckets.len() == i {
                    self.buckets.push(Vec::new());
                }
                self.bucket_of.insert(key, i);
                i
            }
        };
        self.recent_buckets[line] = (key, index);
        index
    }

    /// Appends the jobs of a motion compensation whose pixels are in place, one per tile
    /// ([`for_each_mc_tile`]), to their bucket at once: the words a job shares are computed
    /// once and each tile's are written straight into the bucket. `first` is the job of the
    /// block's top-left tile (its tile parameters left out). Returns the bucket, the first
    /// job's first word there and the number of jobs.
    pub(super) fn push_mc_tiles(
        &mut self,
        level: u32,
        slot: u8,
        source: u8,
        first: &McJob,
        rect: &Area,
    ) -> (u32, u32, u32) {
        const WORDS: usize = 12;
        debug_assert_eq!(Kernel::Mc.job_words(), WORDS);
        let index = self.bucket_index(level, Kernel::Mc, slot, source);
        let bucket = &mut self.buckets[index];
        let at = bucket.len();
        let tiles = rect.w.div_ceil(8) * rect.h.div_ceil(8);
        bucket.reserve(tiles * WORDS);
        let mut out = at;
        for_each_mc_tile(rect.w, rect.h, |row, col, tile| {
            let job = first.at_tile(row, col, tile).to_words();
            // SAFETY: `reserve` made room for every tile's words after `at`; the length
            // covers them once all are written.
            unsafe { ptr::write(bucket.as_mut_ptr().add(out) as *mut Job, job) };
            out += WORDS;
        });
        debug_assert_eq!(out, at + tiles * WORDS);
        // SAFETY: the words up to `out` were written above.
        unsafe { bucket.set_len(out) };
        self.pending_words += tiles * WORDS;
        self.journal.push((index as u32, at as u32, out as u32));
        (index as u32, at as u32, tiles as u32)
    }

    /// Appends a job to its bucket; returns the bucket and the job's first word there.
    /// Inlined where a call's jobs are made, so that the kernel's number folds there.
    #[inline(always)]
    pub(super) fn push(
        &mut self,
        level: u32,
        kernel: Kernel,
        slot: u8,
        source: u8,
        job: &Job,
    ) -> (u32, u32) {
        let index = self.bucket_index(level, kernel, slot, source);
        let words = kernel.job_words();
        debug_assert!(words <= job.len());
        let bucket = &mut self.buckets[index];
        let at = bucket.len();
        // The whole job array at once (a fixed-size copy, no call to memmove), of which the
        // bucket keeps `words`.
        bucket.reserve(job.len());
        // SAFETY: `reserve` made room for `job.len()` words after `at`, and the first `words`
        // of them are written before the length covers them.
        unsafe {
            ptr::copy_nonoverlapping(job.as_ptr(), bucket.as_mut_ptr().add(at), job.len());
            bucket.set_len(at + words);
        }
        let at = at as u32;
        self.pending_words += words;
        self.journal.push((index as u32, at, at + words as u32));
        (index as u32, at)
    }

    /// A call is about to be placed: nothing of it is in the batch yet.
    pub(super) fn journal_start(&mut self) {
        self.journal.clear();
        self.copied_mark = self.copied_calls.len();
    }

    /// Takes the jobs of the call being placed out of the batch again (after a panic while
    /// placing it): its pushed jobs are skipped, its copied calls forgotten.
    pub(super) fn take_out_journaled(&mut self) {
        for &(bucket, from, to) in &self.journal {
            let key = split_key(self.keys[bucket as usize]);
            let words = key.kernel.job_words();
            let jobs = &mut self.buckets[bucket as usize][from as usize..to as usize];
            for job in jobs.chunks_exact_mut(words) {
                JobHeader::set_pixel(job, SKIP_JOB);
            }
        }
        self.journal.clear();
        self.copied_calls.truncate(self.copied_mark);
    }
}

impl Recorder {
    /// What every job of a motion compensation shares, as its top-left tile's job has it:
    /// source and its stride, parameters (without the tile's), the packed filters; the
    /// header (pixel and stride) is left to the caller.
    pub(super) fn mc_job(op: &Op, captured: Captured) -> McJob {
        let Op::Mc { f, mx, my, .. } = *op else {
            unreachable!("a motion compensation");
        };
        McJob::new(f, mx, my, captured.word, captured.stride as i32)
    }

    /// Calls `job(row, col, kernel, words)` for each job of a call, at its position in the
    /// call's [`Area`]; the header (pixel and stride) is left to the caller.
    pub(super) fn for_each_job(
        op: &Op,
        captured: Captured,
        rect: &Area,
        origin: Origin,
        mut job: impl FnMut(usize, usize, Kernel, Job),
    ) {
        match *op {
            Op::Itx { tx, eob, .. } => {
                let kernel = Kernel::Itx(ItxKernel::for_call(tx, tx.is_dc_only_call(eob)));
                let words = ItxJob {
                    header: JobHeader::default(),
                    coef: captured.word,
                    flags: job_flags(origin, eob),
                };
                job(0, 0, kernel, words.to_words());
            }
            Op::Mc { .. } => {
                let first = Self::mc_job(op, captured);
                for_each_mc_tile(rect.w, rect.h, |y, x, tile| {
                    // Pixel and stride are the caller's: only the source moves to the tile.
                    let src = captured.word as i64 + y as i64 * captured.stride as i64 + x as i64;
                    let words = McJob {
                        src: src as u32,
                        params: first.params | tile,
                        ..first
                    };
                    job(y, x, Kernel::Mc, words.to_words());
                });
            }
            Op::Lf { f, e, i, h } => {
                let reach = f.reach();
                for (n, half) in f.halves(e, i, h).into_iter().enumerate() {
                    let (y, x) = match f.dir() {
                        LfDir::H => (8 * n, reach),
                        LfDir::V => (reach, 8 * n),
                    };
                    let words = LfJob {
                        header: JobHeader::default(),
                        params: half.params(f.dir()),
                    };
                    job(y, x, Kernel::Lf, words.to_words());
                }
            }
            Op::LfSb { plane } => {
                // One job at the superblock's first pixel, inside the call's area.
                let (row, col) = ((-plane.top) as usize, (-plane.left) as usize);
                let words = LfSbJob {
                    header: JobHeader::default(),
                    params: plane.params,
                    record: captured.word,
                };
                job(row, col, Kernel::LfSb, words.to_words());
            }
            Op::Cdef { call } => {
                let params = cdef::job_params(&call.strengths, call.size, call.two_bytes);
                let words = CdefJob {
                    header: JobHeader::default(),
                    window: captured.word,
                    params,
                };
                job(0, 0, Kernel::Cdef, words.to_words());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A motion compensation's tiles cover each pixel of its block once, none over 8x8 (their
    /// size in their parameters), row after row of tiles, as many as `push_mc_tiles` reserves.
    #[test]
    fn motion_compensation_tiles_cover_a_block_once() {
        for (w, h) in [
            (4, 4),
            (8, 8),
            (16, 4),
            (12, 20),
            (5, 1),
            (64, 1),
            (24, 9),
            (64, 64),
        ] {
            let mut hits = vec![0u32; w * h];
            let mut last = None;
            let mut tiles = 0;
            for_each_mc_tile(w, h, |row, col, params| {
                let (rows, cols) = (mc::tile_rows(params), mc::tile_cols(params));
                assert!(rows <= 8 && cols <= 8);
                assert!(last < Some((row, col)), "row after row");
                last = Some((row, col));
                tiles += 1;
                for r in row..row + rows {
                    for c in col..col + cols {
                        assert!(r < h && c < w, "{w}x{h}: ({r}, {c}) outside");
                        hits[r * w + c] += 1;
                    }
                }
            });
            assert!(hits.iter().all(|&n| n == 1), "{w}x{h}");
            assert_eq!(tiles, w.div_ceil(8) * h.div_ceil(8));
        }
    }
}
