//! The stats line (`DAEDALUS_STATS=1`): every counter of the process as `key=value`, printed
//! at exit, and the placement decisions and paths that prove what ran.

use crate::batch;
use crate::stats::{self, COUNTERS};
use crate::vp9::{frame, DirectFamilies};

pub(crate) fn register_stats_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if crate::config::get().stats_at_exit {
        ONCE.call_once(|| unsafe {
            libc::atexit(print_stats);
        });
    }
}

/// One line of `key=value` counters (`DAEDALUS_STATS=1`), printed at exit.
pub fn stats_line() -> String {
    batch::fold_counts();
    let c = &COUNTERS;
    let r = |x: &std::sync::atomic::AtomicU64| stats::read(x);
    // gpu: the device ran the work; cpu: the CPU reference did (DAEDALUS=cpu, or no usable
    // device); unused: nothing was deferred, so no device was set up; off: DAEDALUS=off;
    // ffmpeg: the calibration kept every family on the CPU, so the providers took no part.
    // frame / frame-cpu: a decoder took the frame path, whose frames the GPU, or FFmpeg's
    // second pass, reconstructed.
    let declined = crate::placement::declined();
    let (device, path) = match (crate::config::get().mode, declined) {
        (crate::config::Mode::Off, _) => ("none".to_string(), "off"),
        _ if frame::taken() => match (frame::path(), crate::gpu::state()) {
            (path, crate::gpu::State::Usable(g)) if path != "frame-cpu" => {
                (g.info.name.clone(), path)
            }
            // (Choosing decoders that never needed the device: see `frame::decisions`.)
            (path, crate::gpu::State::NotSetUp) => ("none".to_string(), path),
            (path, _) => ("cpu".to_string(), path),
        },
        (_, _) if crate::config::get().path == crate::config::DecoderPath::Ffmpeg => {
            ("none".to_string(), "ffmpeg")
        }
        (crate::config::Mode::Gpu, Some(device)) => (device, "ffmpeg"),
        (crate::config::Mode::Cpu, _) => ("cpu".to_string(), "cpu"),
        (crate::config::Mode::Gpu, None) => match crate::gpu::state() {
            crate::gpu::State::Usable(g) => (g.info.name.clone(), "gpu"),
            crate::gpu::State::Unavailable => ("cpu".to_string(), "cpu"),
            crate::gpu::State::NotSetUp => ("none".to_string(), "unused"),
        },
    };
    // The placement and how it was chosen (see `placement`); undecided where no provider
    // attached (DAEDALUS=off, other bit depths).
    let (kernels, kernels_by, calibration) = crate::placement::describe().unwrap_or_else(|| {
        let kernels = crate::config::get().kernels.describe();
        (kernels, "undecided".to_string(), String::new())
    });
    let calibration = if calibration.is_empty() {
        "-"
    } else {
        calibration.as_str()
    };
    let on_gpu = path == "gpu" || path == "frame";
    let frame_memory = if !on_gpu {
        "none"
    } else if crate::regions::frames_from_pool() {
        "pool"
    } else {
        "import"
    };
    // How the device was set up, in how long; the pipelines built as the work needed them,
    // compiled (and cached) or loaded, and in how long (summed over the building threads).
    let (pipeline_cache, setup_ms, pipelines_built, pipelines_ms) = match crate::gpu::set_up() {
        Some(g) if on_gpu => {
            let (outcome, built, ms) = g.pipelines.report();
            (
                outcome.name(),
                format!("{:.1}", g.setup_ms),
                built.to_string(),
                format!("{ms:.1}"),
            )
        }
        _ => ("-", "-".to_string(), "-".to_string(), "-".to_string()),
    };
    // The families FFmpeg's functions ran for without entering the library.
    let direct = DirectFamilies::describe_attached();
    let submissions = r(&c.submissions);
    let mean = if submissions > 0 {
        r(&c.gpu_calls) as f64 / submissions as f64
    } else {
        0.0
    };
    format!(
        "daedalus: device=\"{device}\" path={path} kernels={kernels} kernels_by={kernels_by} calibration={calibration} direct={direct} deferred={} itx_deferred={} mc_deferred={} \
         lf_deferred={} lf_sb_deferred={} cdef_deferred={} mc_source_in_place={} immediate={} placed_on_cpu={} intra_itx_at_once={} inter_intra_itx_at_once={} gpu_calls={} cpu_calls={} ffmpeg_calls={} damaged_batches={} \
         itx_redo_possible={} early_completions={} completed_early={} intra_syncs_in_row={} run_ahead={} inter_deferred={} inter_completed_early={} inter_run_ahead={} submissions={submissions} dispatches={} barriers={} levels_max={} flushes={} \
         flush_intra={} flush_row={} flush_published={} flush_frame_end={} flush_overlap={} \
         flush_full={} flush_immediate={} flush_registry={} unattended_submissions={} \
         awaits_in_flight={} frame_splits={} in_flight_waits={} await_ms={:.3} wait_ms={:.3} wait_cpu_ms={:.3} calls_per_submission_mean={mean:.1} \
         calls_per_submission_max={} gpu_busy_ms={:.3} host_bytes_to_device={} \
         host_bytes_from_device={} device_job_copies={} frame_memory={frame_memory} frames={} frames_in_one_buffer={} pool_buffers={} frame_buffers={} imports={} \
         imports_late={} pixel_bytes_copied={} pipeline_cache={pipeline_cache} device_setup_ms={setup_ms} \
         pipelines_built={pipelines_built} pipelines_ms={pipelines_ms} {} {}",
        r(&c.deferred),
        r(&c.deferred_itx),
        r(&c.deferred_mc),
        r(&c.deferred_lf),
        r(&c.deferred_lf_sb),
        r(&c.deferred_cdef),
        r(&c.mc_source_in_place),
        r(&c.immediate),
        r(&c.placed_on_cpu),
        r(&c.intra_itx_at_once),
        r(&c.inter_intra_itx_at_once),
        r(&c.gpu_calls),
        r(&c.cpu_calls),
        r(&c.ffmpeg_calls),
        r(&c.damaged_batches),
        r(&c.itx_redo_possible),
        r(&c.early_completions),
        r(&c.completed_early),
        r(&c.intra_syncs_in_row),
        r(&c.run_ahead),
        r(&c.inter_deferred),
        r(&c.inter_completed_early),
        r(&c.inter_run_ahead),
        r(&c.dispatches),
        r(&c.barriers),
        r(&c.max_levels),
        r(&c.flushes),
        r(&c.flushes_intra),
        r(&c.flushes_row),
        r(&c.flushes_published),
        r(&c.flushes_frame_end),
        r(&c.flushes_overlap),
        r(&c.flushes_full),
        r(&c.flushes_immediate),
        r(&c.flushes_registry),
        r(&c.unattended_submissions),
        r(&c.awaits_in_flight),
        r(&c.frame_splits),
        r(&c.in_flight_waits),
        r(&c.await_ns) as f64 / 1e6,
        r(&c.wait_ns) as f64 / 1e6,
        r(&c.wait_cpu_ns) as f64 / 1e6,
        r(&c.max_calls_per_submission),
        r(&c.gpu_busy_ns) as f64 / 1e6,
        r(&c.bytes_to_device),
        r(&c.bytes_from_device),
        r(&c.device_job_copies),
        r(&c.frames),
        r(&c.frames_in_one_buffer),
        r(&c.pool_buffers),
        r(&c.frame_buffers),
        r(&c.imports),
        r(&c.imports_late),
        r(&c.pixel_bytes_copied),
        frame::describe(),
        crate::av1::cdef_apply::describe(),
    )
}

extern "C" fn print_stats() {
    let _ = std::panic::catch_unwind(|| eprintln!("{}", stats_line()));
}
