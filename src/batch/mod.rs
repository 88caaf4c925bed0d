//! The per-thread recorder.
//!
//! A call copies what it reads besides its pixels into the thread's arena (the stream's mapped
//! upload buffer on the GPU path): a transform's coefficients (zeroing the caller's block as
//! FFmpeg does), a motion compensation's source window. It records its jobs; [`flush`]
//! executes everything the thread recorded and returns with the pixels in place.
//!
//! On the GPU path each call is placed as it is recorded, while its data is at hand: which
//! pixel buffer it addresses (an imported region in place, or the staging buffer for a copied
//! block), and which pixels it claims. Its job goes into the bucket of its (kernel, pixel
//! buffer), so that a flush only copies the buckets into the job buffer, records one dispatch
//! per bucket into one command buffer, and submits it once.
//!
//! The pending batch is kept free of conflicts, which is what makes running its calls in
//! parallel equal to FFmpeg running them one after the other. A call completes the pending
//! batch first (one extra submission) when it would touch a pixel that a pending call touches
//! (see `overlap`), when the pixel buffers one submission can address or the arena run out;
//! a call partly inside a registered region, or with a stride smaller than its block, runs at
//! once on the CPU after the pending batch.
//!
//! How pixels reach the GPU: blocks inside a registered region in place (imported, or a frame
//! of the pool) are read and written in place; all other blocks are copied into the stream's
//! staging buffer before the submission and copied back after it.
//!
//! A reader of the decoder (an intra prediction, a row it copies, a row another thread reads)
//! completes the whole batch where a pending call may touch what it reads or writes
//! ([`complete_for`]); the batch's calls never run on the CPU one by one.
//!
//! The parts, in the order a call meets them:
//!
//! - `call`: the call ([`Op`]), the pixels it touches ([`Area`]), who made it ([`Origin`]), and
//!   its jobs' words ([`Job`], [`SKIP_JOB`]);
//! - `api`: the thread's recorder and the public functions that reach it ([`record_itx`],
//!   [`flush`], ...);
//! - `recorder`: the recorder itself, and how a call is recorded or run at once;
//! - `cpu`: running on the CPU, FFmpeg's functions ([`FFMPEG_DSP`]) or the reference;
//! - `placement`: where a call's pixels and source are for the GPU, and at which level (with
//!   `recent`: the last regions calls were in; `levels`: the order of calls inside one batch;
//!   `overlap`: the pixels its copied blocks touch);
//! - `buckets`: job packing, a bucket per (level, kernel, pixel slot, source), with `keys`:
//!   a bucket's key and its hasher;
//! - `gpu_batch`: the pending batch of the GPU path, and what it holds of a submission in
//!   flight and of the region the last call was in;
//! - `complete`: flushes, and completions for a reader;
//! - `submit`: submission, finishing, the CPU rerun and recovery after a failure;
//! - `counts`: the counts of recorded calls.

mod api;
mod buckets;
mod call;
mod complete;
mod counts;
mod cpu;
mod gpu_batch;
mod keys;
mod levels;
mod overlap;
mod placement;
mod recent;
mod recorder;
mod submit;

pub use api::{
    complete_for, damaged_batches, flush, flush_for, fold_counts, record_cdef, record_itx,
    record_lf, record_lf_sb, record_mc, run_intra_transform, thread_uses_gpu,
};
pub use call::{Area, Job, Op, Origin, SKIP_JOB};
pub use cpu::{FFMPEG_DSP, FFMPEG_ITX};
pub use recorder::device_has_kernel;
#[cfg(test)]
mod testing;
