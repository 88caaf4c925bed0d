//! The frame path's submissions, for every decoder of the process: a frame goes to the GPU at
//! once where fewer than [`IN_FLIGHT`] submissions are in flight, else it waits with the
//! frames that come meanwhile, and they go together in one submission as the oldest one
//! completes, their levels interleaved ([`super::together`]). One thread of the process waits
//! for the GPU and submits what waits, so a frame waiting to be submitted never waits for a
//! decoder's thread: frames of another decoder, or of a thread that is busy, never hold it up.
//!
//! A frame's owner ([`super::submit::Submitter`]) keeps what the submission binds (its data,
//! its descriptor set, the frame buffers) until [`wait`] has returned its result. A
//! submission that fails (a panic recording it included, said once) fails every frame it
//! carries, and the device is not used again.

use super::together::{place, stage_of, Work};
use crate::gpu::engine::{Copy, Engine, Options};
use crate::gpu::testing::Step;
use crate::gpu::{Gpu, GpuResult};
use crate::stats;
use ash::vk;
use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Submissions in flight at once: one the GPU runs and one behind it, so that the GPU never
/// waits for the host between them; what comes meanwhile waits to go together.
pub const IN_FLIGHT: usize = 2;

/// Frames submitted beside others, and the submissions that carried several.
pub static FRAMES_TOGETHER: AtomicU64 = AtomicU64::new(0);
pub static SUBMISSIONS_TOGETHER: AtomicU64 = AtomicU64::new(0);
/// Dispatch levels submitted (each after a barrier on the one before): the GPU's chain,
/// whatever the device.
pub static LEVELS: AtomicU64 = AtomicU64::new(0);

/// GPU-side bytes copied: to device-local memory (the data, references), and frames back.
pub static COPIED_TO_DEVICE: AtomicU64 = AtomicU64::new(0);
pub static COPIED_BACK: AtomicU64 = AtomicU64::new(0);

/// The stages of a frame whose GPU time the stats line gives apart (where the queue has
/// timestamps): the start of each stage and the end of the submission are stamped.
/// `copy_in` and `copy_out` are the copies to and from device-local memory (none where the
/// kernels work in place). A level of the wavefront counts to `loop_filter` where it has
/// loop-filter jobs (intra blocks beside them included), else to `intra`.
pub const STAGES: [&str; 6] = [
    "copy_in",
    "inter",
    "residuals",
    "intra",
    "loop_filter",
    "copy_out",
];
const COPY_IN: usize = 0;
const COPY_OUT: usize = 5;

/// GPU time per stage of [`STAGES`], in nanoseconds.
pub static STAGE_NS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];

/// A submission that takes longer than this is treated as a hung device. (Generous: a driver that
/// compiles the kernels at their first dispatch, as lavapipe does, takes seconds there.)
pub(super) const HANG_TIMEOUT: Duration = Duration::from_secs(120);

/// A frame's work and what its submission binds and copies.
pub struct Frame {
    pub work: Work,
    /// Its data's words (host memory), where its wavefront's jobs are written once placed.
    pub data: *mut u32,
    pub set: vk::DescriptorSet,
    /// `data[0]` of its pixels, which names it among the references of the frames after it,
    /// and its references'.
    pub data0: usize,
    pub references: [usize; 3],
    /// Copies before its kernels (its data to device-local memory, references uploaded) and
    /// after them (its pixels and status word back).
    pub before: Vec<Copy>,
    pub after: Vec<Copy>,
}

// The data is the frame's owner's, which keeps it, and writes nothing of it, until the
// frame's result is taken ([`wait`]).
unsafe impl Send for Frame {}

/// A frame's place in the queue, for [`wait`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u64);

struct Queue {
    engine: Option<Engine>,
    waiting: Vec<(Ticket, Frame)>,
    /// The frames of each submission in flight, oldest first.
    in_flight: VecDeque<Vec<Ticket>>,
    /// Results not yet taken.
    results: Vec<(Ticket, GpuResult<()>)>,
    next: u64,
    thread: bool,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    engine: None,
    waiting: Vec::new(),
    in_flight: VecDeque::new(),
    results: Vec::new(),
    next: 0,
    thread: false,
});
static CHANGED: Condvar = Condvar::new();

fn queue() -> MutexGuard<'static, Queue> {
    QUEUE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Hands a frame to the GPU: submitted at once where there is room, else with the frames
/// that come until there is.
pub fn submit(gpu: &'static Gpu, frame: Frame) -> GpuResult<Ticket> {
    let mut q = queue();
    if q.engine.is_none() {
        let options = Options {
            slots: IN_FLIGHT,
            stage_ns: &STAGE_NS,
            hang: HANG_TIMEOUT,
            retires: true,
        };
        q.engine = Some(Engine::new(gpu, options)?);
    }
    if !q.thread {
        std::thread::Builder::new()
            .name("daedalus-gpu-wait".into())
            .spawn(wait_for_the_gpu)
            .map_err(|e| format!("the GPU's waiting thread: {e}"))?;
        q.thread = true;
    }
    let ticket = Ticket(q.next);
    q.next += 1;
    q.waiting.push((ticket, frame));
    if q.in_flight.len() < IN_FLIGHT {
        submit_waiting(&mut q);
    }
    CHANGED.notify_all();
    Ok(ticket)
}

/// Waits until the GPU ran the frame of `ticket`; its submission's result.
pub fn wait(ticket: Ticket) -> GpuResult<()> {
    let mut q = queue();
    loop {
        if let Some(i) = q.results.iter().position(|(t, _)| *t == ticket) {
            return q.results.swap_remove(i).1;
        }
        q = CHANGED.wait(q).unwrap_or_else(|p| p.into_inner());
    }
}

/// The waiting thread: waits for the oldest submission, gives its frames their result and
/// submits the frames that wait.
fn wait_for_the_gpu() {
    loop {
        let (gpu, fence) = {
            let mut q = queue();
            loop {
                let engine = q.engine.as_ref();
                if let Some(f) = engine.and_then(|e| e.oldest_fence().map(|f| (e.gpu(), f))) {
                    break f;
                }
                q = CHANGED.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        // SAFETY: the fence of the engine's oldest submission in flight, which only this
        // thread waits for and retires.
        let waited = unsafe {
            gpu.device
                .wait_for_fences(&[fence], true, HANG_TIMEOUT.as_nanos() as u64)
        };
        let mut q = queue();
        let q = &mut *q;
        // (The wait above took the time: the engine's finds it done, or hung.)
        let completed = crate::log::guard("the frame path's wait", None, || {
            let engine = q.engine.as_mut().expect("an engine");
            Some(engine.wait_oldest(Duration::ZERO))
        });
        let mut result = completed.unwrap_or_else(|| Err("an internal error in its wait".into()));
        if waited == Err(vk::Result::TIMEOUT) {
            result = Err(format!("the GPU did not finish within {HANG_TIMEOUT:?}"));
        }
        if let Err(why) = &result {
            gpu.mark_lost(why);
        }
        for ticket in q.in_flight.pop_front().unwrap_or_default() {
            q.results.push((ticket, result.clone()));
        }
        if !q.waiting.is_empty() && q.in_flight.len() < IN_FLIGHT {
            submit_waiting(q);
        }
        CHANGED.notify_all();
    }
}

/// Records and submits every frame that waits, in one submission; each frame's result is
/// the error where that fails.
fn submit_waiting(q: &mut Queue) {
    let frames = std::mem::take(&mut q.waiting);
    let tickets: Vec<Ticket> = frames.iter().map(|(t, _)| *t).collect();
    let engine = q.engine.as_mut().expect("an engine");
    let gpu = engine.gpu();
    let submitted = crate::log::guard(
        "a frame's submission",
        Err("an internal error in its submission".into()),
        || record_and_submit(engine, &frames),
    );
    match submitted {
        Ok(()) => {
            if frames.len() > 1 {
                stats::add(&FRAMES_TOGETHER, frames.len() as u64);
                stats::add(&SUBMISSIONS_TOGETHER, 1);
            }
            q.in_flight.push_back(tickets);
        }
        Err(why) => {
            gpu.mark_lost(&why);
            for ticket in tickets {
                q.results.push((ticket, Err(why.clone())));
            }
        }
    }
}

fn record_and_submit(engine: &mut Engine, frames: &[(Ticket, Frame)]) -> GpuResult<()> {
    // A frame's references among the frames before it here.
    let refs: Vec<[Option<usize>; 3]> = frames
        .iter()
        .enumerate()
        .map(|(i, (_, f))| {
            f.references.map(|r| {
                (r != 0)
                    .then(|| frames[..i].iter().position(|(_, g)| g.data0 == r))
                    .flatten()
            })
        })
        .collect();
    let works: Vec<&Work> = frames.iter().map(|(_, f)| &f.work).collect();
    let placed = place(&works, &refs);
    for ((_, f), jobs) in frames.iter().zip(&placed.wave_jobs) {
        // SAFETY: the words the frame's work kept for these jobs, in its data, which nothing
        // reads or writes until it runs.
        unsafe {
            let at = f.data.add(f.work.wave_first as usize);
            std::ptr::copy_nonoverlapping(jobs.as_ptr(), at, jobs.len());
        }
    }
    let levels = placed.levels;
    stats::add(&LEVELS, levels.len() as u64);
    let mut rec = engine.record()?;
    rec.start_timing();
    let before = distinct(frames.iter().flat_map(|(_, f)| &f.before));
    if before.iter().any(|c| !c.regions.is_empty()) {
        rec.begin_stage(Some(COPY_IN));
    }
    let copied: u64 = before
        .iter()
        .map(|c| rec.copy(std::slice::from_ref(*c)))
        .sum();
    stats::add(&COPIED_TO_DEVICE, copied);
    if copied > 0 {
        rec.barrier();
    }
    for level in &levels {
        rec.level(level.first().and_then(|(_, d)| stage_of(d.kernel)));
        for &(f, d) in level {
            rec.bind(frames[f].1.set);
            rec.dispatch(d.kernel, d.first, d.count)?;
        }
    }
    let after = distinct(frames.iter().flat_map(|(_, f)| &f.after));
    if !after.is_empty() {
        rec.begin_stage(Some(COPY_OUT));
        rec.barrier();
        let back: u64 = after
            .iter()
            .map(|c| rec.copy(std::slice::from_ref(*c)))
            .sum();
        stats::add(&COPIED_BACK, back);
    }
    rec.end_timing();
    rec.submit_as(&[Step::Wait], frames.len() as u64)?;
    Ok(())
}

/// The copies, each once: two frames of a submission may upload the same reference, which
/// the copies would then write side by side.
fn distinct<'a>(copies: impl Iterator<Item = &'a Copy>) -> Vec<&'a Copy> {
    let key = |c: &Copy| {
        let regions = c
            .regions
            .iter()
            .map(|r| (r.src_offset, r.dst_offset, r.size));
        (c.from, c.to, regions.collect::<Vec<_>>())
    };
    let mut seen = Vec::new();
    let mut kept = Vec::new();
    for c in copies {
        let k = key(c);
        if !seen.contains(&k) {
            seen.push(k);
            kept.push(c);
        }
    }
    kept
}
