//! The frame path end to end (`DAEDALUS_PATH=frame`): the patched FFmpeg parses each VP9 frame
//! whole into daedalus's memory before reconstructing it, in every threading mode.
//!
//! Its CPU side (`DAEDALUS=cpu`): FFmpeg's own second pass reconstructs every frame from the
//! parsed data. That the whole corpus then equals Debian's ffmpeg, with 1 thread, frame threads
//! (which wait on each other's parsing rather than pixels) and slice threads (which parse their
//! tile columns apart), proves the cut between parsing and reconstruction; it is also what runs
//! wherever the GPU cannot reconstruct a frame.
//!
//! Needs `scripts/setup` and `scripts/gen-streams`, as `tests/decode.rs`.

mod decoding;

use decoding::*;

/// The frame path's settings, with `DAEDALUS`'s mode.
fn frame_path(mode: &'static str) -> Variant<'static> {
    (mode, &[("DAEDALUS_PATH", "frame")])
}

/// Decodes `stream` on the frame path, checks its frames against Debian's ffmpeg and its stats
/// line against `path`: frames parsed whole (on the CPU side all reconstructed by FFmpeg's
/// second pass), nothing else said.
fn check(
    stream: &Stream,
    (mode, env): Variant,
    threading: (&str, &[&str]),
    path: &str,
) -> Result<(), String> {
    let what = format!("{} / {mode} {env:?} / {}", stream.name, threading.0);
    let out = decode_as_debian(stream, Way::Preload, mode, threading, env, &what)?;
    let count = |key| -> Result<u64, String> {
        stat(&out.stderr, key)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{what}: no {key}= in {}", out.stderr))
    };
    let ran = stat(&out.stderr, "path").unwrap_or("missing");
    if ran != path {
        return Err(format!("{what}: path={ran}, expected {path}"));
    }
    let (parsed, by_ffmpeg) = (count("frames_parsed")?, count("frames_ffmpeg")?);
    if parsed == 0 || count("blocks")? == 0 {
        return Err(format!("{what}: nothing parsed: {}", out.stderr));
    }
    if by_ffmpeg != parsed && mode == "cpu" {
        return Err(format!(
            "{what}: {by_ffmpeg} of {parsed} frames reconstructed by FFmpeg on the CPU side"
        ));
    }
    let unexpected: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| !l.starts_with("daedalus: device="))
        .collect();
    if !unexpected.is_empty() {
        return Err(format!("{what}: unexpected messages: {unexpected:?}"));
    }
    Ok(())
}

/// The cut between parsing and reconstruction: every VP9 stream of the corpus (every bit
/// depth and subsampling), parsed whole and reconstructed by FFmpeg's second pass, equals
/// Debian's ffmpeg with 1 thread, 4 frame threads and 4 slice threads.
#[test]
fn cpu_side_equals_debian_ffmpeg() {
    let s = setup();
    let mut jobs = Vec::new();
    for stream in &s.streams {
        for threading in THREADING {
            jobs.push((stream.clone(), threading));
        }
    }
    let count = jobs.len();
    let failures = in_parallel(jobs, |(stream, threading)| {
        check(&stream, frame_path("cpu"), threading, "frame-cpu")
    });
    assert_all_decoded(&failures, count, "decodes on the frame path's CPU side");
}
