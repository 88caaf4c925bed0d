//! Process-wide counters: what ran where, how often the GPU was asked, and how many bytes
//! crossed between host and device memory. They prove which path a benchmark measured.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

#[derive(Default)]
pub struct Counters {
    /// Calls recorded for later execution, and by family: transforms, motion compensation,
    /// loop filters per edge and per superblock plane, AV1's CDEF.
    pub deferred: AtomicU64,
    pub deferred_itx: AtomicU64,
    pub deferred_mc: AtomicU64,
    pub deferred_lf: AtomicU64,
    pub deferred_lf_sb: AtomicU64,
    pub deferred_cdef: AtomicU64,
    /// Motion compensations that read their source in place on the GPU (the others copied
    /// their source window at call time).
    pub mc_source_in_place: AtomicU64,
    /// The most levels one submission ran (`levels`), and the barriers between levels.
    pub max_levels: AtomicU64,
    pub barriers: AtomicU64,
    /// Calls executed at once on the CPU (stride smaller than the block, or no recorder).
    pub immediate: AtomicU64,
    /// Transforms of intra blocks run at once with FFmpeg's function (the decoder's next
    /// prediction reads their pixels right away).
    pub intra_itx_at_once: AtomicU64,
    /// Calls ignored because a pointer was null.
    pub rejected: AtomicU64,
    /// Deferred calls that the GPU executed, and that the CPU reference executed (CPU mode,
    /// fallback, straddling calls).
    pub gpu_calls: AtomicU64,
    pub cpu_calls: AtomicU64,
    /// Submissions of the per-call path that failed where the GPU may have written part of
    /// their pixels in place (or left a transform undone that the host could not find): the
    /// decoder fails the frames decoded meanwhile.
    pub damaged_batches: AtomicU64,
    /// Calls of FFmpeg's decoder run by FFmpeg's own function because their 16-bit lanes
    /// overflowed (damaged streams).
    pub ffmpeg_calls: AtomicU64,
    /// Transforms of FFmpeg's decoder whose coefficients do not prove that no 16-bit lane
    /// overflows: nothing in their submission may come after them on their pixels.
    pub itx_redo_possible: AtomicU64,
    /// Flushes with work, and by reason: a call touched pending pixels; the arena, staging or
    /// pixel-buffer slots were full; a call had to run at once on the CPU; registrations changed
    /// under pending work; the decoder's sync points (an intra block's neighbours, a superblock
    /// row done or published to other frame threads, a frame's end).
    pub flushes: AtomicU64,
    pub flushes_overlap: AtomicU64,
    pub flushes_full: AtomicU64,
    pub flushes_immediate: AtomicU64,
    pub flushes_registry: AtomicU64,
    pub flushes_intra: AtomicU64,
    pub flushes_row: AtomicU64,
    pub flushes_published: AtomicU64,
    pub flushes_frame_end: AtomicU64,
    /// The most calls one submission carried.
    pub max_calls_per_submission: AtomicU64,
    /// Frames the per-call provider saw begin, and of those the ones whose three planes lie in
    /// one buffer (the patched frame pool's layout: a level of the loop filter is then one
    /// dispatch).
    pub frames: AtomicU64,
    pub frames_in_one_buffer: AtomicU64,
    /// The decoders' frame buffers daedalus allocated (in device memory: `pool_buffers`; in
    /// host memory imported for their life, or either); host ranges imported, and of those
    /// the frame buffers allocated before the device was set up and imported later.
    pub pool_buffers: AtomicU64,
    pub frame_buffers: AtomicU64,
    /// Of them, those made ahead for frame threads (`src/vp9/frame/ahead.rs`).
    pub frame_buffers_ahead: AtomicU64,
    pub imports: AtomicU64,
    pub imports_late: AtomicU64,
    /// Pixel bytes copied between the caller's memory and the staging buffer (both ways).
    pub pixel_bytes_copied: AtomicU64,
    /// Queue submissions and the dispatches they recorded.
    pub submissions: AtomicU64,
    pub dispatches: AtomicU64,
    /// Bytes the host wrote for the GPU (coefficients, jobs, pixels of copied blocks), and
    /// read back (pixels of copied blocks).
    pub bytes_to_device: AtomicU64,
    pub bytes_from_device: AtomicU64,
    /// Submissions that first copied their jobs and coefficients into device-local memory.
    pub device_job_copies: AtomicU64,
    /// GPU execution time measured with timestamps, in nanoseconds.
    pub gpu_busy_ns: AtomicU64,
    /// Host time in flushes: writing jobs and copying pixels; waiting for the GPU, and the
    /// waiting threads' CPU time then (what a driver that polls its fences costs the host).
    pub pack_ns: AtomicU64,
    pub wait_ns: AtomicU64,
    pub wait_cpu_ns: AtomicU64,
}

pub static COUNTERS: Counters = Counters {
    deferred: AtomicU64::new(0),
    deferred_itx: AtomicU64::new(0),
    deferred_mc: AtomicU64::new(0),
    deferred_lf: AtomicU64::new(0),
    deferred_lf_sb: AtomicU64::new(0),
    deferred_cdef: AtomicU64::new(0),
    mc_source_in_place: AtomicU64::new(0),
    max_levels: AtomicU64::new(0),
    barriers: AtomicU64::new(0),
    immediate: AtomicU64::new(0),
    intra_itx_at_once: AtomicU64::new(0),
    rejected: AtomicU64::new(0),
    gpu_calls: AtomicU64::new(0),
    cpu_calls: AtomicU64::new(0),
    damaged_batches: AtomicU64::new(0),
    ffmpeg_calls: AtomicU64::new(0),
    itx_redo_possible: AtomicU64::new(0),
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
    frame_buffers_ahead: AtomicU64::new(0),
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
};

impl Counters {
    /// Every counter with its name, in the order the full stats line gives them.
    pub fn each(&self) -> [(&'static str, &AtomicU64); 44] {
        [
            ("deferred", &self.deferred),
            ("deferred_itx", &self.deferred_itx),
            ("deferred_mc", &self.deferred_mc),
            ("deferred_lf", &self.deferred_lf),
            ("deferred_lf_sb", &self.deferred_lf_sb),
            ("deferred_cdef", &self.deferred_cdef),
            ("mc_source_in_place", &self.mc_source_in_place),
            ("max_levels", &self.max_levels),
            ("barriers", &self.barriers),
            ("immediate", &self.immediate),
            ("intra_itx_at_once", &self.intra_itx_at_once),
            ("rejected", &self.rejected),
            ("gpu_calls", &self.gpu_calls),
            ("cpu_calls", &self.cpu_calls),
            ("damaged_batches", &self.damaged_batches),
            ("ffmpeg_calls", &self.ffmpeg_calls),
            ("itx_redo_possible", &self.itx_redo_possible),
            ("flushes", &self.flushes),
            ("flushes_overlap", &self.flushes_overlap),
            ("flushes_full", &self.flushes_full),
            ("flushes_immediate", &self.flushes_immediate),
            ("flushes_registry", &self.flushes_registry),
            ("flushes_intra", &self.flushes_intra),
            ("flushes_row", &self.flushes_row),
            ("flushes_published", &self.flushes_published),
            ("flushes_frame_end", &self.flushes_frame_end),
            ("max_calls_per_submission", &self.max_calls_per_submission),
            ("frames", &self.frames),
            ("frames_in_one_buffer", &self.frames_in_one_buffer),
            ("pool_buffers", &self.pool_buffers),
            ("frame_buffers", &self.frame_buffers),
            ("frame_buffers_ahead", &self.frame_buffers_ahead),
            ("imports", &self.imports),
            ("imports_late", &self.imports_late),
            ("pixel_bytes_copied", &self.pixel_bytes_copied),
            ("submissions", &self.submissions),
            ("dispatches", &self.dispatches),
            ("bytes_to_device", &self.bytes_to_device),
            ("bytes_from_device", &self.bytes_from_device),
            ("device_job_copies", &self.device_job_copies),
            ("gpu_busy_ns", &self.gpu_busy_ns),
            ("pack_ns", &self.pack_ns),
            ("wait_ns", &self.wait_ns),
            ("wait_cpu_ns", &self.wait_cpu_ns),
        ]
    }
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

/// The CPU time of the process's live threads by name (`name:ms`, the most first; the first
/// thread as `main`): at exit, the decoding thread and the driver's own threads (which
/// finished threads' time is not among), to tell the driver's share of a decode's CPU.
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
        // (The process's first thread is named apart: the decoding thread of a one-thread
        // decode, whose driver threads may share its name.)
        let first = stat[..open].trim() == std::process::id().to_string();
        let name = if first {
            "main".to_string()
        } else {
            stat[open + 1..close].replace([' ', ',', ':'], "_")
        };
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

/// Whether a decoder attached in this process (with `DAEDALUS=off` none does): the stats line
/// is printed at exit only then (a process that loads the library and decodes nothing, such
/// as GStreamer's plugin scanner, says nothing).
static DECODER_ATTACHED: AtomicBool = AtomicBool::new(false);

/// When the first decoder attached: where a stats line's timeline counts from.
static ATTACHED_AT: once_cell::sync::OnceCell<std::time::Instant> =
    once_cell::sync::OnceCell::new();

pub fn note_decoder_attached() {
    DECODER_ATTACHED.store(true, Relaxed);
    ATTACHED_AT.get_or_init(std::time::Instant::now);
}

/// Microseconds since the first decoder attached (at least 1, 0 before one did).
pub fn since_attach_us() -> u64 {
    ATTACHED_AT
        .get()
        .map_or(0, |at| (at.elapsed().as_micros() as u64).max(1))
}

/// Marks `counter` with [`since_attach_us`] where it holds no mark yet.
pub fn mark_once(counter: &AtomicU64) {
    let _ = counter.compare_exchange(0, since_attach_us(), Relaxed, Relaxed);
}

pub fn decoder_attached() -> bool {
    DECODER_ATTACHED.load(Relaxed)
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
    counter.fetch_add(n, Relaxed);
}

pub fn max(counter: &AtomicU64, n: u64) {
    counter.fetch_max(n, Relaxed);
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
        Reason::Caller | Reason::ThreadExit => {}
    }
}
