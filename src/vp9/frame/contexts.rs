//! How many decoder contexts FFmpeg makes for frame threads (`frame_thread_count`, asked once
//! a decoder opens, before any context attaches and so before a path is taken).
//!
//! On the frame path a thread's frame stays in flight on the GPU after its decode returns, and
//! FFmpeg gives the thread its next packet only once that frame is handed out, the oldest
//! first. With as many contexts as threads the CPUs idle while the GPU finishes: on four CPUs
//! a third of the time (traced on the NVIDIA H100 host, `docs/benchmarks-history.md`). Twice
//! the contexts keep them decoding meanwhile. Where the threads are as many as the CPUs (16
//! on that host) the GPU's chain is the limit, and more contexts only cost their set-up: so at
//! most 16, FFmpeg's own most for its automatic count.
//!
//! Where decoders choose per frame ([`super::choice`]), the contexts double only where a
//! trial kept the frame path for frames of the stream's size with frame threads: FFmpeg's own
//! decode also runs faster with more contexts than CPUs, so a trial's measure depends on the
//! count, and trials measure at the count asked for.

use super::{choice, decisions};
use crate::config::{DecoderPath, Mode};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The threads the user asked for (high half) and the contexts made (low half), of the last
/// decoder that opened with frame threads (0 before one did).
static ASKED_MADE: AtomicU64 = AtomicU64::new(0);

/// Contexts for `threads` frame threads on the frame path: twice as many, at most 16, never
/// fewer than asked for.
fn frame_path_contexts(threads: c_int) -> c_int {
    threads.max(threads.saturating_mul(2).min(16))
}

/// Whether a trial kept the frame path, with `threads` threads, for frames of `width` x
/// `height` of VP9 `profile` (2 and 3: more than 8 bits; unknown: 8).
fn frame_path_kept(threads: c_int, width: c_int, height: c_int, profile: c_int) -> bool {
    if width <= 0 || height <= 0 {
        return false;
    }
    let bpp = if profile >= 2 { 10 } else { 8 };
    let class = choice::class_of(width, height, bpp);
    let threading = decisions::threading(threads.max(1) as usize);
    decisions::cached()[class][threading].is_some_and(|d| d.pick == decisions::Pick::Frame)
}

/// `frame_thread_count`: the contexts FFmpeg makes where the user asks for `threads` (more
/// than one) frame threads, for a stream of `width` x `height` (0 where unknown) of `profile`.
pub(crate) unsafe extern "C" fn frame_thread_count(
    threads: c_int,
    width: c_int,
    height: c_int,
    profile: c_int,
) -> c_int {
    crate::log::guard("frame_thread_count", threads, || {
        let config = crate::config::get();
        let frame_path = config.mode == Mode::Gpu
            && match config.path {
                DecoderPath::Frame => true,
                // (Frames alternating for a test follow no decision.)
                DecoderPath::Auto => {
                    config.testing.alternate.is_none()
                        && frame_path_kept(threads, width, height, profile)
                }
                DecoderPath::Calls | DecoderPath::Ffmpeg => false,
            };
        let made = if frame_path && threads > 1 {
            frame_path_contexts(threads)
        } else {
            threads
        };
        ASKED_MADE.store((threads as u32 as u64) << 32 | made as u32 as u64, Relaxed);
        made
    })
}

/// The contexts made for the last decoder with frame threads (0 before one opened).
pub fn made() -> usize {
    ASKED_MADE.load(Relaxed) as u32 as usize
}

/// For the stats line: `asked->made` contexts of the last decoder with frame threads, or `-`.
pub fn describe() -> String {
    match ASKED_MADE.load(Relaxed) {
        0 => "-".into(),
        pair => format!("{}->{}", pair >> 32, pair as u32),
    }
}

#[cfg(test)]
mod tests {
    /// Twice the threads, at most 16, never fewer than asked for.
    #[test]
    fn contexts_double_up_to_sixteen() {
        let made: Vec<_> = [2, 3, 4, 5, 8, 9, 16, 24]
            .map(super::frame_path_contexts)
            .into();
        assert_eq!(made, [4, 6, 8, 10, 16, 16, 16, 24]);
    }
}
