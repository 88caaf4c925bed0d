//! The device and the frame path's kernels, set up once per process (once per depth): at the
//! first frame that needs them, or where decoders choose ([`super::choice`]), on a thread of
//! its own while FFmpeg decodes the frames that come meanwhile; there, where no pipeline cache
//! holds the kernels, a process of their own compiles them ([`crate::gpu::builder`]).

use super::records::Layout;
use super::submit::Submitter;
use crate::gpu::builder::Built;
use crate::gpu::cache::Outcome;
use crate::kernels::Kernel;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Whether this process's device can reconstruct frames of each depth ([`depth`]), once
/// [`kernels_usable`] has told.
static KERNELS_USABLE: [once_cell::sync::OnceCell<bool>; 2] =
    [const { once_cell::sync::OnceCell::new() }; 2];

/// The index of a frame's depth in [`KERNELS_USABLE`]: 8 bits, or 10 and 12 (16-bit pixels).
fn depth(bytes_per_pixel: usize) -> usize {
    usize::from(bytes_per_pixel > 1)
}

/// Whether [`kernels_usable`] has told for frames of pixels of `bytes_per_pixel` bytes.
pub(super) fn kernels_known(bytes_per_pixel: usize) -> bool {
    KERNELS_USABLE[depth(bytes_per_pixel)].get().is_some()
}

/// Where decoders choose: whether the device and the frame path's kernels for frames of
/// `layout`'s depth are set up (or known unusable); where not, they are set up on a thread of
/// their own (once per depth, unless a decoder that closed stopped it), while FFmpeg decodes
/// the frames that come meanwhile. (On the NVIDIA H200 host the set-up took about 150 ms, a
/// sixth of a short 720p decode, which it would otherwise stall.)
pub(super) fn device_settled(layout: Layout) -> bool {
    static RUNNING: [AtomicBool; 2] = [const { AtomicBool::new(false) }; 2];
    let bytes_per_pixel = layout.geometry.bytes_per_pixel;
    let d = depth(bytes_per_pixel);
    if KERNELS_USABLE[d].get().is_some() {
        return true;
    }
    // (The handle is kept before a decoder closing meanwhile could look for it.)
    let mut setup = lock_setup();
    if RUNNING[d].swap(true, Relaxed) {
        return false;
    }
    STOP[d].store(false, Relaxed);
    // (lavapipe compiles the kernels with LLVM on this thread: a main thread's stack.)
    let spawned = std::thread::Builder::new()
        .name("daedalus-setup".into())
        .stack_size(crate::gpu::pipeline::DRIVER_STACK_BYTES)
        .spawn(move || {
            // (After a panic, no device: every frame of the depth is FFmpeg's.)
            let settled =
                crate::log::guard("device set-up", Some(false), || set_up_on_thread(layout));
            if let Some(usable) = settled {
                let _ = KERNELS_USABLE[d].set(usable);
            }
            RUNNING[d].store(false, Relaxed);
        });
    match spawned {
        Ok(thread) => setup.push(thread),
        // (No thread to spare: set up here, as the forced path does.)
        Err(_) => {
            RUNNING[d].store(false, Relaxed);
            drop(setup);
            return kernels_usable(bytes_per_pixel);
        }
    }
    drop(setup);
    if crate::config::get().testing.setup_wait {
        join_setup(false);
    }
    // (The frame that begins the set-up goes to FFmpeg, whatever the thread's pace.)
    false
}

/// Set (for each depth) by a decoder that closes while a set-up thread waits for the builder
/// process: the thread stops waiting (a later frame begins the set-up again).
static STOP: [AtomicBool; 2] = [const { AtomicBool::new(false) }; 2];

/// Set where decoders choose on a device no earlier run set up: where it turns out to be a
/// CPU device and no trial is asked for, FFmpeg decodes after all.
static DEVICE_UNKNOWN: AtomicBool = AtomicBool::new(false);

/// Notes that decoders choose on a device no earlier run set up ([`DEVICE_UNKNOWN`]).
pub(super) fn device_unknown() {
    DEVICE_UNKNOWN.store(true, Relaxed);
}

/// The set-up thread's work: the device (on its first decode, learning what it is: none, or a
/// CPU device where no trial is asked for, leave the frames to FFmpeg after all), the kernels,
/// and the GPU objects the decoder contexts' first frames on the GPU take ([`objects_ahead`]);
/// whether the kernels are usable, or `None` where a decoder that closed stopped the wait for
/// the builder process.
fn set_up_on_thread(layout: Layout) -> Option<bool> {
    let bytes_per_pixel = layout.geometry.bytes_per_pixel;
    let marks = &super::report::COUNTERS;
    crate::stats::mark_once(&marks.setup_began_us);
    let stop = &STOP[depth(bytes_per_pixel)];
    let usable = match device_for_frames(bytes_per_pixel, stop)? {
        Ok(gpu) => {
            let usable = kernels_for_frames(gpu, bytes_per_pixel, stop)?;
            if usable {
                objects_ahead(gpu, layout, stop);
            }
            usable
        }
        Err(why) => {
            crate::paths::vp9_declined_after_all(why);
            false
        }
    };
    crate::stats::mark_once(&marks.setup_ended_us);
    Some(usable)
}

/// The device, or why the frames stay FFmpeg's (`no-device`, `cpu-device`); `None` where a
/// decoder that closed stopped the wait for the builder process. On a device's first decode
/// the builder comes first, which sets a device up of its own (and where no trial is asked
/// for, ends at a CPU device): this process's device is set up only once it is done, so that
/// a decode that ends meanwhile sets none up (on the NVIDIA H100 the driver's end costs the
/// program's exit 30-50 ms).
fn device_for_frames(
    bytes_per_pixel: usize,
    stop: &AtomicBool,
) -> Option<Result<&'static crate::gpu::Gpu, &'static str>> {
    let untried = DEVICE_UNKNOWN.load(Relaxed) && !crate::config::get().trial_asked();
    let first = DEVICE_UNKNOWN.load(Relaxed) && cacheable();
    if first && matches!(crate::gpu::state(), crate::gpu::State::NotSetUp) {
        let wanted: Vec<Kernel> = FrameKernels::of(bytes_per_pixel).needed().collect();
        match crate::gpu::builder::build_apart(&wanted, untried, || stop.load(Relaxed)) {
            Built::Stopped => return None,
            Built::CpuDevice => {
                crate::decisions::keep("device-kind", "cpu");
                return Some(Err("cpu-device"));
            }
            _ => {}
        }
    }
    let Some(gpu) = crate::gpu::get() else {
        return Some(Err("no-device"));
    };
    crate::decisions::note_device();
    if untried && crate::decisions::on_cpu_device() {
        return Some(Err("cpu-device"));
    }
    Some(Ok(gpu))
}

/// Whether the frame path's kernels for pixels of `bytes_per_pixel` bytes are built, by the
/// builder process where no pipeline cache holds them; `None` where a decoder that closed
/// stopped the wait for it.
fn kernels_for_frames(
    gpu: &'static crate::gpu::Gpu,
    bytes_per_pixel: usize,
    stop: &AtomicBool,
) -> Option<bool> {
    let wanted: Vec<Kernel> = FrameKernels::of(bytes_per_pixel)
        .needed()
        .filter(|&k| !gpu.pipelines.built(k))
        .collect();
    if !wanted.is_empty() && gpu.pipelines.cache_unused() && cacheable() {
        build_in_builder(gpu, &wanted, stop)?;
    }
    let usable = kernels_built(gpu, bytes_per_pixel);
    if gpu.pipelines.report().0 == Outcome::Empty {
        crate::decisions::keep(NO_PIPELINE_CACHE, "yes");
    }
    Some(usable)
}

/// Whether the builder process can spare the decoder the compiling: there is a cache directory
/// for its pipelines, and no earlier run found that the driver keeps no compiled code in
/// pipeline caches (lavapipe).
fn cacheable() -> bool {
    crate::config::cache_dir().is_some() && crate::decisions::get(NO_PIPELINE_CACHE).is_none()
}

/// The GPU objects each decoder context's first frame on the GPU would otherwise make itself,
/// made one after another before the kernels are declared usable, until `stop` says to stop:
/// a submitter for each context, and the frames allocated so far imported, with their
/// device-local copies where the kernels work on copies. Made by 16 contexts at once as they
/// switch from FFmpeg's decode, they took 16 ms each on the NVIDIA H100, where one at a time
/// takes 4.
fn objects_ahead(gpu: &'static crate::gpu::Gpu, layout: Layout, stop: &AtomicBool) {
    let stopped = || stop.load(Relaxed);
    let copies = crate::config::get().testing.device_copies;
    for _ in 0..super::contexts::made().max(1) {
        if stopped() {
            return;
        }
        let start = std::time::Instant::now();
        let Ok(submitter) = Submitter::new(gpu, layout, copies) else {
            return;
        };
        super::report::note_object_made(start);
        crate::stats::add(&super::report::COUNTERS.objects_ahead, 1);
        submitter.keep_ahead();
    }
    let on_copies = Submitter::works_on_copies(gpu, layout, copies).unwrap_or(false);
    for region in crate::regions::import_all_later(stopped) {
        if on_copies && !stopped() {
            let _ = super::copies::of(gpu, &region);
        }
    }
}

/// Has the builder process compile `wanted` into the pipeline cache, and takes them in;
/// `None` where a decoder that closed stopped the wait (`stop`), where they would be compiled
/// here instead, which would hold the decoder's end for as long.
fn build_in_builder(gpu: &crate::gpu::Gpu, wanted: &[Kernel], stop: &AtomicBool) -> Option<()> {
    let stop = || stop.load(Relaxed);
    let built = crate::gpu::builder::build_apart(wanted, false, stop);
    if built == Built::Stopped {
        return None;
    }
    // (Whatever it ended with, what it built before is in the file.)
    let taken = gpu.pipelines.take_in_built_apart();
    if !matches!(built, Built::Done(_) | Built::Ended(_)) || !taken {
        if stop() {
            return None;
        }
        crate::debug!("kernels built here where the builder's are missing: {built:?}");
    }
    Some(())
}

/// Kept where the device's driver keeps no compiled code in pipeline caches.
const NO_PIPELINE_CACHE: &str = "no-pipeline-cache";

/// The set-up threads of [`device_settled`] while they may run.
fn lock_setup() -> std::sync::MutexGuard<'static, Vec<std::thread::JoinHandle<()>>> {
    static SETUP: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> =
        std::sync::Mutex::new(Vec::new());
    SETUP.lock().unwrap_or_else(|p| p.into_inner())
}

/// Waits for the set-up threads, where any runs: a decoder that closes while the device is
/// set up (a decode shorter than the set-up) must not leave a thread inside the driver as the
/// program exits. A thread that waits for the builder process stops (that process does not
/// hold the program's end).
pub(super) fn wait_for_setup() {
    join_setup(true);
}

/// Waits for the set-up threads begun so far; `stop`: where one waits for the builder process,
/// it stops waiting.
fn join_setup(stop: bool) {
    let threads = {
        let mut setup = lock_setup();
        if stop {
            STOP.iter().for_each(|s| s.store(true, Relaxed));
        }
        std::mem::take(&mut *setup)
    };
    for thread in threads {
        let _ = thread.join();
    }
}

/// Whether this process's device can reconstruct frames of pixels of `bytes_per_pixel` bytes:
/// the kernels of that depth built (once per depth; a stream of one depth builds no others).
pub(super) fn kernels_usable(bytes_per_pixel: usize) -> bool {
    *KERNELS_USABLE[depth(bytes_per_pixel)].get_or_init(|| {
        let marks = &super::report::COUNTERS;
        crate::stats::mark_once(&marks.setup_began_us);
        let usable = crate::gpu::get().is_some_and(|gpu| kernels_built(gpu, bytes_per_pixel));
        crate::stats::mark_once(&marks.setup_ended_us);
        usable
    })
}

/// Builds the frame path's kernels for pixels of `bytes_per_pixel` bytes, where they are not
/// yet; whether they all are. (One after another: the first that fails says so once, the
/// others are not tried.)
fn kernels_built(gpu: &crate::gpu::Gpu, bytes_per_pixel: usize) -> bool {
    FrameKernels::of(bytes_per_pixel)
        .needed()
        .all(|k| gpu.pipelines.has(k))
}

/// The frame path's kernels for pixels of one depth: inter prediction (`scaled` for the
/// frames that have a reference of another size), the residuals of each transform size, intra
/// blocks and the loop filter.
pub(super) struct FrameKernels {
    pub(super) prediction: Kernel,
    pub(super) scaled: Kernel,
    pub(super) residuals: [Kernel; 4],
    pub(super) intra: Kernel,
    pub(super) loop_filter: Kernel,
}

impl FrameKernels {
    /// For pixels of `bytes_per_pixel` bytes (1: 8 bits, 2: 10 and 12).
    pub(super) fn of(bytes_per_pixel: usize) -> FrameKernels {
        use Kernel as K;
        if bytes_per_pixel == 1 {
            FrameKernels {
                prediction: K::Vp9Inter,
                scaled: K::Vp9InterScaled,
                residuals: [0, 1, 2, 3].map(K::Vp9InterResidual),
                intra: K::Vp9Intra,
                loop_filter: K::Vp9Lf,
            }
        } else {
            FrameKernels {
                prediction: K::Vp9InterHigh,
                scaled: K::Vp9InterScaledHigh,
                residuals: [0, 1, 2, 3].map(K::Vp9InterResidualHigh),
                intra: K::Vp9IntraHigh,
                loop_filter: K::Vp9LfHigh,
            }
        }
    }

    /// Those every stream of the depth needs (the scaled prediction is built when a frame
    /// first needs it).
    pub(super) fn needed(&self) -> impl Iterator<Item = Kernel> + '_ {
        std::iter::once(self.prediction)
            .chain(self.residuals)
            .chain([self.intra, self.loop_filter])
    }
}
