//! The device and the frame path's kernels, set up once per process (once per depth): at the
//! first frame that needs them, or where decoders choose ([`super::choice`]), on a thread of
//! its own while FFmpeg decodes the frames that come meanwhile.

use crate::kernels::Kernel;

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

/// Where decoders choose: whether the device and the frame path's kernels for pixels of
/// `bytes_per_pixel` bytes are set up (or known unusable); where not, they are set up on a
/// thread of their own (once per depth), while FFmpeg decodes the frames that come meanwhile.
/// (On the NVIDIA H200 host the set-up took about 150 ms, a sixth of a short 720p decode,
/// which it would otherwise stall.)
pub(super) fn device_settled(bytes_per_pixel: usize) -> bool {
    static STARTED: [std::sync::Once; 2] = [const { std::sync::Once::new() }; 2];
    if KERNELS_USABLE[depth(bytes_per_pixel)].get().is_some() {
        return true;
    }
    let mut begun = false;
    STARTED[depth(bytes_per_pixel)].call_once(|| {
        // (The handle is kept before a decoder closing meanwhile could look for it.)
        let mut setup = lock_setup();
        // (lavapipe compiles the kernels with LLVM on this thread: a main thread's stack.)
        let spawned = std::thread::Builder::new()
            .name("daedalus-setup".into())
            .stack_size(crate::gpu::pipeline::DRIVER_STACK_BYTES)
            .spawn(move || {
                crate::log::guard("device set-up", false, || kernels_usable(bytes_per_pixel));
                // (After a panic, no device: every frame of the depth is FFmpeg's.)
                let _ = KERNELS_USABLE[depth(bytes_per_pixel)].set(false);
            });
        match spawned {
            Ok(thread) => {
                setup.push(thread);
                begun = true;
            }
            // (No thread to spare: set up here, as the forced path does.)
            Err(_) => _ = kernels_usable(bytes_per_pixel),
        }
    });
    if begun && crate::config::get().testing.setup_wait {
        wait_for_setup();
    }
    // (The frame that begins the set-up goes to FFmpeg, whatever the thread's pace.)
    !begun && KERNELS_USABLE[depth(bytes_per_pixel)].get().is_some()
}

/// The set-up threads of [`device_settled`] while they may run.
fn lock_setup() -> std::sync::MutexGuard<'static, Vec<std::thread::JoinHandle<()>>> {
    static SETUP: std::sync::Mutex<Vec<std::thread::JoinHandle<()>>> =
        std::sync::Mutex::new(Vec::new());
    SETUP.lock().unwrap_or_else(|p| p.into_inner())
}

/// Waits for the set-up threads, where any runs: a decoder that closes while the device is
/// set up (a decode shorter than the set-up) must not leave a thread inside the driver as the
/// program exits.
pub(super) fn wait_for_setup() {
    let threads = std::mem::take(&mut *lock_setup());
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
        // (Built one after another: the first that fails says so once, the others are not
        // tried.)
        let usable = crate::gpu::get().is_some_and(|gpu| {
            FrameKernels::of(bytes_per_pixel)
                .needed()
                .all(|k| gpu.pipelines.has(k))
        });
        crate::stats::mark_once(&marks.setup_ended_us);
        usable
    })
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
