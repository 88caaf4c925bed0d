//! Process-wide counters: what ran where, how often the GPU was asked, and how many bytes
//! crossed between host and device memory. They prove which path a benchmark measured.

pub mod line;

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

#[derive(Default)]
pub struct Counters {
    /// Calls recorded for later execution.
    pub deferred: AtomicU64,
    /// Deferred calls by family: transforms, motion compensation, loop filters.
    pub deferred_itx: AtomicU64,
    pub deferred_mc: AtomicU64,
    pub deferred_lf: AtomicU64,
    /// Deferred loop-filter calls of whole superblocks: a plane each (its columns and rows
    /// passes).
    pub deferred_lf_sb: AtomicU64,
    /// Of those, the planes a superblock row per workgroup ran (`DAEDALUS_LF_ORDER=rows`).
    pub lf_sb_by_rows: AtomicU64,
    /// Superblock planes placed by their masks (`DAEDALUS_LF_ORDER=split`), and of those the
    /// ones whose columns pass was split.
    pub lf_sb_by_masks: AtomicU64,
    pub lf_sb_split: AtomicU64,
    /// Deferred CDEF calls (AV1).
    pub deferred_cdef: AtomicU64,
    /// Motion compensations that read their source in place on the GPU (the others copied
    /// their source window at call time).
    pub mc_source_in_place: AtomicU64,
    /// Deferred calls of inter frames (on the thread that began the frame: slice workers'
    /// calls are not counted), and how many of them completed early on the CPU.
    pub inter_deferred: AtomicU64,
    pub inter_completed_early: AtomicU64,
    /// Of those, how many ran ahead on the CPU for a reader and stayed in their submission.
    pub inter_run_ahead: AtomicU64,
    /// The most levels one submission ran (`levels`), and the barriers between levels.
    pub max_levels: AtomicU64,
    pub barriers: AtomicU64,
    /// Calls executed at once on the CPU (stride smaller than the block, or no recorder).
    pub immediate: AtomicU64,
    /// Calls of the decoder run at once with FFmpeg's function because `DAEDALUS_KERNELS`
    /// places their family on the CPU.
    pub placed_on_cpu: AtomicU64,
    /// Transforms of intra blocks run at once with FFmpeg's function (the decoder's next
    /// prediction reads their pixels right away), and those of inter frames among them.
    pub intra_itx_at_once: AtomicU64,
    pub inter_intra_itx_at_once: AtomicU64,
    /// Calls ignored because a pointer was null.
    pub rejected: AtomicU64,
    /// Deferred calls that the GPU executed.
    pub gpu_calls: AtomicU64,
    /// Submissions of the per-call path that failed where the GPU may have written part of
    /// their pixels in place (or left a transform undone that the host could not find): the
    /// decoder fails the frames decoded meanwhile.
    pub damaged_batches: AtomicU64,
    /// Deferred calls that the CPU reference executed (CPU mode, fallback, straddling calls).
    pub cpu_calls: AtomicU64,
    /// Calls of FFmpeg's decoder run by FFmpeg's own function because their 16-bit lanes
    /// overflowed (damaged streams).
    pub ffmpeg_calls: AtomicU64,
    /// Transforms of FFmpeg's decoder whose coefficients do not prove that no 16-bit lane
    /// overflows: nothing in their submission may come after them on their pixels.
    pub itx_redo_possible: AtomicU64,
    /// Syncs that completed only what their reader needed, on the CPU, and the deferred calls
    /// they ran (also counted in `cpu_calls`).
    pub early_completions: AtomicU64,
    pub completed_early: AtomicU64,
    /// Intra syncs with nothing to check: only loop filters of the superblock rows above were
    /// deferred, and the block reads nothing outside its own row.
    pub intra_syncs_in_row: AtomicU64,
    /// Deferred calls that ran ahead on the CPU for a reader, staying in the batch for the
    /// GPU (not counted in `cpu_calls` unless they later complete early).
    pub run_ahead: AtomicU64,
    pub flushes: AtomicU64,
    /// Flushes a call forced before it could be recorded: it touched pending pixels; the
    /// arena, staging or pixel-buffer slots were full; it had to run at once on the CPU.
    pub flushes_overlap: AtomicU64,
    pub flushes_full: AtomicU64,
    pub flushes_immediate: AtomicU64,
    /// Flushes because registrations changed under pending work that they affect.
    pub flushes_registry: AtomicU64,
    /// Flushes at the decoder's sync points (FFmpeg provider): before an intra block reads
    /// its neighbours, after a superblock row, when a row is published to other frame
    /// threads, at the end of a frame.
    pub flushes_intra: AtomicU64,
    pub flushes_row: AtomicU64,
    pub flushes_published: AtomicU64,
    pub flushes_frame_end: AtomicU64,
    /// The most calls one submission carried.
    pub max_calls_per_submission: AtomicU64,
    /// Frames the provider saw begin; the decoder's frame buffers daedalus allocated (in
    /// device memory: `pool_buffers`; in host memory imported for their life, or either);
    /// host ranges imported (such a buffer once, any other frame buffer for each frame that
    /// decodes into it or reads it).
    pub frames: AtomicU64,
    /// Frames whose three planes lie in one buffer (the patched frame pool's layout: a level
    /// of the loop filter is then one dispatch, not one per plane).
    pub frames_in_one_buffer: AtomicU64,
    pub pool_buffers: AtomicU64,
    pub frame_buffers: AtomicU64,
    pub imports: AtomicU64,
    /// Of those, frame buffers allocated before the device was set up and imported later.
    pub imports_late: AtomicU64,
    /// Pixel bytes copied between the caller's memory and the staging buffer (both ways).
    pub pixel_bytes_copied: AtomicU64,
    pub submissions: AtomicU64,
    pub dispatches: AtomicU64,
    /// Bytes the host wrote for the GPU: coefficients, jobs, pixels of copied blocks.
    pub bytes_to_device: AtomicU64,
    /// Bytes the host read back: pixels of copied blocks.
    pub bytes_from_device: AtomicU64,
    /// Submissions that first copied their jobs and coefficients into device-local memory
    /// (`DAEDALUS_JOB_MEMORY`).
    pub device_job_copies: AtomicU64,
    /// GPU execution time measured with timestamps, in nanoseconds.
    pub gpu_busy_ns: AtomicU64,
    /// Host time in flushes: writing jobs and copying pixels; submitting and waiting
    /// (nanoseconds).
    pub pack_ns: AtomicU64,
    pub wait_ns: AtomicU64,
    /// The waiting threads' CPU time during those waits and the awaits below: what a driver
    /// that polls its fences costs the host (nanoseconds).
    pub wait_cpu_ns: AtomicU64,
    /// Published rows submitted without waiting (frame threads); reads of another thread's
    /// rows that found their submission still in flight, and the time spent waiting there.
    pub unattended_submissions: AtomicU64,
    pub awaits_in_flight: AtomicU64,
    pub await_ns: AtomicU64,
    /// Frames whose first part was submitted without waiting on the thread that decodes them
    /// whole (`DAEDALUS_FRAME_SPLIT`), and the times the CPU then had to wait for a part in
    /// flight because it was about to touch its pixels.
    pub frame_splits: AtomicU64,
    pub in_flight_waits: AtomicU64,
}

pub static COUNTERS: Counters = Counters {
    deferred: AtomicU64::new(0),
    deferred_itx: AtomicU64::new(0),
    deferred_mc: AtomicU64::new(0),
    deferred_lf: AtomicU64::new(0),
    deferred_lf_sb: AtomicU64::new(0),
    lf_sb_by_rows: AtomicU64::new(0),
    lf_sb_by_masks: AtomicU64::new(0),
    lf_sb_split: AtomicU64::new(0),
    deferred_cdef: AtomicU64::new(0),
    mc_source_in_place: AtomicU64::new(0),
    inter_deferred: AtomicU64::new(0),
    inter_completed_early: AtomicU64::new(0),
    inter_run_ahead: AtomicU64::new(0),
    max_levels: AtomicU64::new(0),
    barriers: AtomicU64::new(0),
    immediate: AtomicU64::new(0),
    placed_on_cpu: AtomicU64::new(0),
    intra_itx_at_once: AtomicU64::new(0),
    inter_intra_itx_at_once: AtomicU64::new(0),
    rejected: AtomicU64::new(0),
    gpu_calls: AtomicU64::new(0),
    damaged_batches: AtomicU64::new(0),
    cpu_calls: AtomicU64::new(0),
    ffmpeg_calls: AtomicU64::new(0),
    itx_redo_possible: AtomicU64::new(0),
    early_completions: AtomicU64::new(0),
    completed_early: AtomicU64::new(0),
    intra_syncs_in_row: AtomicU64::new(0),
    run_ahead: AtomicU64::new(0),
    flushes: AtomicU64::new(0),
    flushes_overlap: AtomicU64::new(0),
    flushes_full: AtomicU64::new(0),
    flushes_immediate: AtomicU64::new(0),
    flushes_registry: AtomicU64::new(0),
    flushes_intra: AtomicU64::new(0),
    flushes_row: AtomicU64::new(0),
    flushes_published: AtomicU64::new(0),
    flushes_frame_end: AtomicU64::new(0),
    max_calls_per_submission: AtomicU64::new(0),
    frames: AtomicU64::new(0),
    frames_in_one_buffer: AtomicU64::new(0),
    pool_buffers: AtomicU64::new(0),
    frame_buffers: AtomicU64::new(0),
    imports: AtomicU64::new(0),
    imports_late: AtomicU64::new(0),
    pixel_bytes_copied: AtomicU64::new(0),
    submissions: AtomicU64::new(0),
    dispatches: AtomicU64::new(0),
    bytes_to_device: AtomicU64::new(0),
    bytes_from_device: AtomicU64::new(0),
    device_job_copies: AtomicU64::new(0),
    gpu_busy_ns: AtomicU64::new(0),
    pack_ns: AtomicU64::new(0),
    wait_ns: AtomicU64::new(0),
    wait_cpu_ns: AtomicU64::new(0),
    unattended_submissions: AtomicU64::new(0),
    awaits_in_flight: AtomicU64::new(0),
    await_ns: AtomicU64::new(0),
    frame_splits: AtomicU64::new(0),
    in_flight_waits: AtomicU64::new(0),
};

thread_local! {
    /// Set while this thread runs the calibration, whose calls are not the program's.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` without counting what it does on this thread (counting again even if it panics).
pub fn quietly<T>(f: impl FnOnce() -> T) -> T {
    struct Loud;
    impl Drop for Loud {
        fn drop(&mut self) {
            QUIET.with(|q| q.set(false));
        }
    }
    QUIET.with(|q| q.set(true));
    let _loud = Loud;
    f()
}

fn counting() -> bool {
    !QUIET.with(|q| q.get())
}

/// The calling thread's CPU time so far, in nanoseconds (0 where the clock is missing).
pub fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
        return 0;
    }
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The CPU time of the process's live threads by name (`name:ms`, the most first): at exit,
/// the decoding thread and the driver's own threads (which finished threads' time is not
/// among), to tell the driver's share of a decode's CPU.
pub fn live_threads_cpu() -> String {
    let tick_ms = 1000.0 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut by_name: Vec<(String, f64)> = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return "-".into();
    };
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // "tid (name) state ...": utime and stime are the 12th and 13th fields after the name
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].replace([' ', ',', ':'], "_");
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let ticks: f64 = [11, 12]
            .iter()
            .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<f64>().ok()))
            .sum();
        match by_name.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 += ticks * tick_ms,
            None => by_name.push((name, ticks * tick_ms)),
        }
    }
    by_name.sort_by(|a, b| b.1.total_cmp(&a.1));
    by_name
        .iter()
        .take(6)
        .map(|(n, ms)| format!("{n}:{ms:.0}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Adds the calling thread's CPU time since `start` (from [`thread_cpu_ns`]) to `counter`.
pub fn add_cpu_time(counter: &AtomicU64, start: u64) {
    add(counter, thread_cpu_ns().saturating_sub(start));
}

/// Adds the time since `start` to `counter`.
pub fn add_time(counter: &AtomicU64, start: std::time::Instant) {
    add(counter, start.elapsed().as_nanos() as u64);
}

pub fn add(counter: &AtomicU64, n: u64) {
    if counting() {
        counter.fetch_add(n, Relaxed);
    }
}

pub fn max(counter: &AtomicU64, n: u64) {
    if counting() {
        counter.fetch_max(n, Relaxed);
    }
}

pub fn read(counter: &AtomicU64) -> u64 {
    counter.load(Relaxed)
}

/// Why a thread's pending work was executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// `daedalus_flush()`.
    Caller,
    /// A call touched pixels of pending calls.
    Overlap,
    /// Arena, staging buffer or pixel-buffer slots full.
    Full,
    /// A call that must run at once on the CPU (stride below its width, straddling block).
    Immediate,
    /// The thread ended with pending calls.
    ThreadExit,
    /// Registrations changed under pending work that they affect.
    Registry,
    /// Decoder sync points (the FFmpeg provider).
    Intra,
    RowDone,
    RowPublished,
    FrameEnd,
    /// The first part of a frame decoded whole, submitted without waiting.
    FrameSplit,
}

pub fn count_flush(reason: Reason) {
    add(&COUNTERS.flushes, 1);
    match reason {
        Reason::Overlap => add(&COUNTERS.flushes_overlap, 1),
        Reason::Full => add(&COUNTERS.flushes_full, 1),
        Reason::Immediate => add(&COUNTERS.flushes_immediate, 1),
        Reason::Registry => add(&COUNTERS.flushes_registry, 1),
        Reason::Intra => add(&COUNTERS.flushes_intra, 1),
        Reason::RowDone => add(&COUNTERS.flushes_row, 1),
        Reason::RowPublished => add(&COUNTERS.flushes_published, 1),
        Reason::FrameEnd => add(&COUNTERS.flushes_frame_end, 1),
        Reason::Caller | Reason::ThreadExit | Reason::FrameSplit => {}
    }
}
