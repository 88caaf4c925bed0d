//! What the frame path did, for daedalus's stats line (`crate::report`): its counters, which
//! every stage adds to, and the fields they make.

use super::{batches, choice, contexts};
use crate::stats;
use std::sync::atomic::AtomicU64;

/// What the frame path did, for the stats line.
pub(super) struct Counters {
    /// Frames parsed whole; of those, the ones the GPU reconstructed, and the ones FFmpeg's
    /// second pass did (of which so many after the GPU could not: a failure or a transform's
    /// 16-bit lanes overflowing).
    pub(super) frames: AtomicU64,
    pub(super) frames_gpu: AtomicU64,
    pub(super) frames_ffmpeg: AtomicU64,
    pub(super) fallbacks: AtomicU64,
    /// Frames left to FFmpeg's own decode, not parsed whole (where decoders choose); of those,
    /// the ones that came while the device was being set up on its own thread.
    pub(super) frames_declined: AtomicU64,
    pub(super) frames_before_device: AtomicU64,
    /// Frames the decoder held while it parsed the next ([`super::HELD`]).
    pub(super) frames_held: AtomicU64,
    /// Blocks parsed, and those the GPU reconstructed.
    pub(super) blocks: AtomicU64,
    pub(super) gpu_blocks: AtomicU64,
    /// CPU time of the threads that parsed, from the frame's start to its reconstruction (its
    /// own thread, and where its tile columns were parsed apart its context's workers; not a
    /// slice-threaded decode's workers), and of that the host's work on the frames'
    /// submissions (reading the records, the job lists, recording and submitting).
    pub(super) parse_cpu_ns: AtomicU64,
    pub(super) submit_cpu_ns: AtomicU64,
    /// Time the decoders' threads waited for the submission threads to give a held frame back
    /// (the wait for the GPU after it counts to `wait_ms`).
    pub(super) submission_wait_ns: AtomicU64,
    /// The bytes the decoder wrote for the GPU (the header, records, coefficients, end-of-block
    /// positions, loop-filter data) of the frames it reconstructed.
    pub(super) data_bytes: AtomicU64,
    /// GPU objects made for frames (a context's submitters, frame buffers' device-local
    /// copies) and the time the threads that made them took.
    pub(super) objects_made: AtomicU64,
    pub(super) objects_ns: AtomicU64,
    /// Of those, the submitters the device's set-up made ahead for the decoder contexts.
    pub(super) objects_ahead: AtomicU64,
    /// When (since the first decoder attached, [`stats::mark_once`]) the frame path's kernels
    /// began and ended their set-up, and the GPU took its first frame.
    pub(super) setup_began_us: AtomicU64,
    pub(super) setup_ended_us: AtomicU64,
    pub(super) first_gpu_frame_us: AtomicU64,
    /// When the last frame began, and the last decoder context had detached.
    pub(super) last_frame_us: AtomicU64,
    pub(super) last_detached_us: AtomicU64,
}

pub(super) static COUNTERS: Counters = Counters {
    frames: AtomicU64::new(0),
    frames_gpu: AtomicU64::new(0),
    frames_ffmpeg: AtomicU64::new(0),
    fallbacks: AtomicU64::new(0),
    frames_declined: AtomicU64::new(0),
    frames_before_device: AtomicU64::new(0),
    frames_held: AtomicU64::new(0),
    blocks: AtomicU64::new(0),
    gpu_blocks: AtomicU64::new(0),
    parse_cpu_ns: AtomicU64::new(0),
    submit_cpu_ns: AtomicU64::new(0),
    submission_wait_ns: AtomicU64::new(0),
    data_bytes: AtomicU64::new(0),
    objects_made: AtomicU64::new(0),
    objects_ns: AtomicU64::new(0),
    objects_ahead: AtomicU64::new(0),
    setup_began_us: AtomicU64::new(0),
    setup_ended_us: AtomicU64::new(0),
    first_gpu_frame_us: AtomicU64::new(0),
    last_frame_us: AtomicU64::new(0),
    last_detached_us: AtomicU64::new(0),
};

/// Adds the making of one frame's GPU object, begun at `start`, to the stats line's count (the
/// objects made, not those that failed).
pub(super) fn note_object_made(start: std::time::Instant) {
    stats::add(&COUNTERS.objects_made, 1);
    stats::add_time(&COUNTERS.objects_ns, start);
}

/// What the frame path did, for the stats line's first fields: frames the GPU reconstructed,
/// frames FFmpeg did (its second pass, or its own decode where decoders choose), of those the
/// ones after the GPU could not, and the parsing threads' CPU time.
pub struct Summary {
    pub gpu: u64,
    pub ffmpeg: u64,
    pub fallbacks: u64,
    pub parse_cpu_ms: f64,
}

pub fn summary() -> Summary {
    let r = |x: &AtomicU64| stats::read(x);
    let c = &COUNTERS;
    Summary {
        gpu: r(&c.frames_gpu),
        ffmpeg: r(&c.frames_ffmpeg) + r(&c.frames_declined),
        fallbacks: r(&c.fallbacks),
        parse_cpu_ms: r(&c.parse_cpu_ns) as f64 / 1e6,
    }
}

/// The trials' results per size class (`class:pick:ratio`, `:cached` where an earlier run's
/// trial decided), or `-`.
pub fn trial_results() -> String {
    choice::describe()
}

/// A timeline mark in whole milliseconds, `-` where it was never made.
fn mark_ms(mark: &AtomicU64) -> String {
    match stats::read(mark) {
        0 => "-".into(),
        us => (us / 1000).to_string(),
    }
}

/// The frame path's part of the full stats line.
pub fn describe() -> String {
    let r = |x: &AtomicU64| stats::read(x);
    let c = &COUNTERS;
    let gpu_blocks = r(&c.gpu_blocks).max(1) as f64;
    format!(
        "frames_parsed={} frames_declined={} frames_before_device={} frames_held={} \
         frames_together={} submissions_together={} levels_per_frame={:.1} blocks={} \
         submit_cpu_ms={:.3} submit_ns_per_block={:.1} submission_wait_ms={:.3} \
         data_bytes_per_frame={:.0} \
         copied_to_device_bytes_per_frame={:.0} copied_back_bytes_per_frame={:.0} \
         gpu_ms_by_stage={} live_threads_cpu_ms={} frame_contexts={} objects_made={} \
         objects_ms={:.1} objects_ahead={}/{} timeline_ms=setup:{}-{},first_gpu_frame:{},last_frame:{},detached:{},exit:{}",
        r(&c.frames),
        r(&c.frames_declined),
        r(&c.frames_before_device),
        r(&c.frames_held),
        r(&batches::FRAMES_TOGETHER),
        r(&batches::SUBMISSIONS_TOGETHER),
        r(&batches::LEVELS) as f64 / r(&c.frames_gpu).max(1) as f64,
        r(&c.blocks),
        r(&c.submit_cpu_ns) as f64 / 1e6,
        r(&c.submit_cpu_ns) as f64 / gpu_blocks,
        r(&c.submission_wait_ns) as f64 / 1e6,
        r(&c.data_bytes) as f64 / r(&c.frames_gpu).max(1) as f64,
        r(&batches::COPIED_TO_DEVICE) as f64 / r(&c.frames_gpu).max(1) as f64,
        r(&batches::COPIED_BACK) as f64 / r(&c.frames_gpu).max(1) as f64,
        batches::STAGES
            .iter()
            .zip(&batches::STAGE_NS)
            .map(|(name, ns)| format!("{name}:{:.3}", stats::read(ns) as f64 / 1e6))
            .collect::<Vec<_>>()
            .join(","),
        stats::live_threads_cpu(),
        contexts::describe(),
        r(&c.objects_made),
        r(&c.objects_ns) as f64 / 1e6,
        r(&c.objects_ahead),
        r(&super::submit::TAKEN_AHEAD),
        mark_ms(&c.setup_began_us),
        mark_ms(&c.setup_ended_us),
        mark_ms(&c.first_gpu_frame_us),
        mark_ms(&c.last_frame_us),
        mark_ms(&c.last_detached_us),
        stats::since_attach_us() / 1000,
    )
}
