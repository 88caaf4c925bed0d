//! The stats line at exit (`DAEDALUS_STATS`): with `1`, what ran, where and how long it took,
//! in a few fields; with `all`, every counter after them.
//!
//! `path=` names each decoder's path (`vp9:...,av1:...` where both decoded): `frame` (the GPU
//! reconstructed: VP9's frame path, AV1's CDEF rows), `frame-cpu` (VP9 parsed whole, FFmpeg's
//! second pass reconstructed every frame), `trial` (a trial that never decided), `calls` and
//! `calls-cpu` (the DSP calls through the C ABI, executed on the GPU or by the CPU
//! reference), `ffmpeg` (the decoder's own functions); `unused` where a decoder attached and
//! took no path. `why=` says why each took it. With `DAEDALUS=off` no decoder attaches, and
//! there is no line.

use crate::batch;
use crate::paths::{self, Path, Taken};
use crate::stats::{self, COUNTERS};
use crate::vp9::frame;

/// A decoder's `path=` word: what its path ran, from its counters.
fn path_word(taken: Taken, vp9: bool) -> &'static str {
    let r = |x: &std::sync::atomic::AtomicU64| stats::read(x);
    let calls_on_gpu = r(&COUNTERS.gpu_calls) > 0;
    let calls = r(&COUNTERS.deferred) + r(&COUNTERS.immediate);
    match taken.path {
        Path::Own => "ffmpeg",
        // (No call came through: the decoder's own functions ran, a lossless AV1 stream's.)
        Path::Calls if calls == 0 => "ffmpeg",
        Path::Calls if calls_on_gpu => "calls",
        Path::Calls => "calls-cpu",
        Path::Frame if vp9 => frame::path(),
        Path::Frame if crate::av1::cdef_apply::rows_on_gpu() > 0 => "frame",
        Path::Frame if taken.why == "trial" => "ffmpeg",
        Path::Frame => "frame-cpu",
    }
}

/// `path=` and `why=`: each decoder's, named where both decoded.
fn paths_and_reasons() -> (String, String) {
    let taken: Vec<(&str, Taken, &str)> = [("vp9", paths::vp9()), ("av1", paths::av1())]
        .into_iter()
        .filter_map(|(name, t)| t.map(|t| (name, t, path_word(t, name == "vp9"))))
        .collect();
    match taken.as_slice() {
        [] => ("unused".into(), "-".into()),
        [(_, t, word)] => (word.to_string(), t.why.to_string()),
        all => {
            let join = |f: &dyn Fn(&(&str, Taken, &str)) -> String| {
                all.iter().map(f).collect::<Vec<_>>().join(",")
            };
            (
                join(&|(name, _, word)| format!("{name}:{word}")),
                join(&|(name, t, _)| format!("{name}:{}", t.why)),
            )
        }
    }
}

/// The device set up, by name; `none` where none was (or it could not be).
fn device() -> String {
    match crate::gpu::state() {
        crate::gpu::State::Usable(g) => g.info.name.clone(),
        _ => "none".into(),
    }
}

/// The trials' results, VP9's and AV1's, or `-`.
fn trials() -> String {
    let all: Vec<String> = [frame::trial_results(), crate::av1::cdef_choice::describe()]
        .into_iter()
        .filter(|t| t != "-")
        .collect();
    if all.is_empty() {
        "-".into()
    } else {
        all.join(",")
    }
}

/// The line `DAEDALUS_STATS` asks for: what ran and how long it took, and with `all` every
/// counter after it.
pub fn stats_line() -> String {
    batch::fold_counts();
    let r = |x: &std::sync::atomic::AtomicU64| stats::read(x);
    let c = &COUNTERS;
    let (path, why) = paths_and_reasons();
    let f = frame::summary();
    let mut line = format!(
        "daedalus: device=\"{}\" path={path} why={why} frames_gpu={} frames_ffmpeg={} \
         fallbacks={} trial={} calls={} cdef_rows={} submissions={} gpu_busy_ms={:.3} \
         wait_ms={:.3} parse_cpu_ms={:.3} damaged_batches={}",
        device(),
        f.gpu,
        f.ffmpeg,
        f.fallbacks,
        trials(),
        r(&c.deferred),
        crate::av1::cdef_apply::rows_on_gpu(),
        r(&c.submissions),
        r(&c.gpu_busy_ns) as f64 / 1e6,
        r(&c.wait_ns) as f64 / 1e6,
        f.parse_cpu_ms,
        r(&c.damaged_batches),
    );
    if crate::config::get().stats == crate::config::Stats::All {
        for (name, counter) in c.each() {
            line.push_str(&format!(" {name}={}", r(counter)));
        }
        line.push_str(&format!(
            " {} {} {} {}",
            memory(),
            frame::describe(),
            crate::av1::cdef_apply::describe(),
            validation(),
        ));
    }
    line
}

/// Where the frames live for the GPU, and how its pipelines were built.
fn memory() -> String {
    let Some(g) = crate::gpu::set_up() else {
        return format!(
            "frame_memory=none pipeline_cache=- device_setup_ms=- pipelines_built=- \
             pipelines_ms=- kernel_builder={}",
            crate::gpu::builder::describe()
        );
    };
    let frame_memory = if crate::regions::frames_from_pool() {
        "pool"
    } else {
        "import"
    };
    let (outcome, built, ms) = g.pipelines.report();
    format!(
        "frame_memory={frame_memory} pipeline_cache={} device_setup_ms={:.1} \
         pipelines_built={built} pipelines_ms={ms:.1} kernel_builder={}",
        outcome.name(),
        g.setup_ms,
        crate::gpu::builder::describe()
    )
}

fn validation() -> String {
    format!("validation_messages={}", crate::gpu::validation_messages())
}

/// Registers the line's printing at exit when the library is loaded, so that no decoder names
/// this module, which reads theirs. The line comes where a decoder attached and
/// `DAEDALUS_STATS` asks for it (read with the other settings, at the first attach).
#[used]
#[link_section = ".init_array"]
static PRINT_AT_EXIT: extern "C" fn() = register_at_load;

extern "C" fn register_at_load() {
    // SAFETY: `print_stats` is a function of this library; glibc ties the registration to the
    // library, so it runs at exit or when the library is unloaded, whichever comes first.
    unsafe { libc::atexit(print_stats) };
}

extern "C" fn print_stats() {
    let _ = std::panic::catch_unwind(|| {
        if stats::decoder_attached() && crate::config::get().stats != crate::config::Stats::Off {
            eprintln!("{}", stats_line());
        }
    });
}
