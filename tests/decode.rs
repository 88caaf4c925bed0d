//! End to end, FATE style: streams of the corpus (`scripts/gen-streams`) decoded by the
//! patched FFmpeg with daedalus give, frame for frame (`-bitexact -f framemd5`), what Debian's
//! `/usr/bin/ffmpeg -c:v vp9` gives (AV1: `-c:v libdav1d`, the patched FFmpeg decoding through
//! the patched dav1d), and the VP9 corpus agrees with `vpxdec --md5`.
//!
//! Here: the per-call path (`DAEDALUS_PATH=calls`: FFmpeg's DSP table through the library) on
//! the streams that reach each of its code paths, with 1 thread, 4 frame threads and 4 slice
//! threads, the program finding the library both ways; its CPU reference, the frame pool and
//! device-local copies; failures; the defaults where the GPU cannot win; damaged streams;
//! FFmpeg's own checks without a provider; AV1's CDEF on the GPU by rows and by calls. Every
//! run with daedalus prints its stats line (`DAEDALUS_STATS=all`), which must name the path
//! that ran: a run where the library was not found cannot pass. (The frame path:
//! `tests/frame_path.rs`.)
//!
//! Needs `scripts/setup` (patched FFmpeg, release library) and `scripts/gen-streams`; fails
//! with instructions where something is missing or stale.

mod decoding;

use decoding::*;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// A counter of the stats line, 0 where it is missing.
fn count(stderr: &str, key: &str) -> u64 {
    stat(stderr, key).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// The lines of stderr other than daedalus's stats line.
fn messages_of(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| !l.starts_with("daedalus: device="))
        .collect()
}

/// Calls deferred by family (transforms, motion compensation, loop filters by edge and by
/// superblock plane) and motion compensations that read their reference in place.
type Deferred = [u64; 5];

/// Checks one decode on the per-call path against Debian's ffmpeg, with `env` added: the stats
/// line names the path (`calls`, `calls-cpu` on the CPU reference; 10- and 12-bit streams
/// keep FFmpeg's functions), 8-bit streams deferred calls, and on the GPU the frames are in
/// place (the pool's or imported, each buffer once) with no pixel copied through staging.
fn check_calls(
    stream: &Stream,
    way: Way,
    mode: &str,
    threading: (&str, &[&str]),
    env: &[(&str, &str)],
) -> Result<Deferred, String> {
    let what = format!(
        "{} / {way:?} / {mode} / {} / {env:?}",
        stream.name, threading.0
    );
    let out = decode_as_debian(stream, way, mode, threading, env, &what)?;
    let e = &out.stderr;
    let path = stat(e, "path").ok_or_else(|| format!("{what}: no stats line: {e}"))?;
    let expected = match (stream.high_bit_depth, mode) {
        (true, _) => "ffmpeg",
        (false, "gpu") => "calls",
        (false, _) => "calls-cpu",
    };
    if path != expected {
        return Err(format!("{what}: path={path}, expected {expected}: {e}"));
    }
    if stream.high_bit_depth != (count(e, "deferred") == 0) {
        return Err(format!("{what}: {} calls deferred", count(e, "deferred")));
    }
    if path == "calls" {
        let memory = stat(e, "frame_memory").unwrap_or("missing");
        let pool = env
            .iter()
            .any(|(k, v)| *k == "DAEDALUS_TEST_MEMORY" && *v == "pool");
        let in_place = match memory {
            "pool" => {
                count(e, "pool_buffers") > 0
                    && count(e, "imports") == 0
                    && count(e, "frame_buffers") == count(e, "pool_buffers")
            }
            "import" => {
                count(e, "imports") > 0
                    && count(e, "pool_buffers") == 0
                    && count(e, "frame_buffers") == count(e, "imports")
            }
            _ => false,
        };
        // The patched frame pool gives each frame one buffer for its three planes, so that a
        // level of the loop filter is one dispatch rather than one per plane.
        let one_buffer =
            count(e, "frames") > 0 && count(e, "frames_in_one_buffer") == count(e, "frames");
        if !in_place
            || pool != (memory == "pool")
            || !one_buffer
            || count(e, "pixel_bytes_copied") != 0
        {
            return Err(format!("{what}: frames not in place as expected: {e}"));
        }
        let copies = env
            .iter()
            .any(|(k, v)| *k == "DAEDALUS_TEST_MEMORY" && *v == "copies");
        if copies && count(e, "device_job_copies") != count(e, "submissions") {
            return Err(format!(
                "{what}: job data not copied by every submission: {e}"
            ));
        }
        if count(e, "gpu_calls") == 0 {
            return Err(format!("{what}: no call ran on the GPU"));
        }
    }
    let unexpected = messages_of(e);
    if !unexpected.is_empty() {
        return Err(format!("{what}: unexpected messages: {unexpected:?}"));
    }
    Ok([
        count(e, "deferred_itx"),
        count(e, "deferred_mc"),
        count(e, "deferred_lf"),
        count(e, "deferred_lf_sb"),
        count(e, "mc_source_in_place"),
    ])
}

/// The streams the per-call path is checked on: one of each kind the corpus has (tiny, odd and
/// multi-superblock sizes, tiles of both kinds, every subsampling, lossless, scaled references,
/// alt-ref and show-existing frames, keyframes only, extreme quantizer and sharpness, natural
/// content) and a high bit depth, which keeps FFmpeg's functions.
const CALLS_STREAMS: [&str; 17] = [
    "size-002x002",
    "size-065x065",
    "size-202x226",
    "cif",
    "lossless",
    "quantizer-63",
    "sharpness-7",
    "tiles-1080p",
    "altref-2pass",
    "keyframes-only",
    "show-existing",
    "profile1-444",
    "profile1-422",
    "profile1-440",
    "profile2-10bit",
    "resize",
    "natural-bikes",
];

/// `streams` with each threading (all of them, or one each in turn), the ways to find the
/// library taken in turn, with `mode` and `env`; returns the totals deferred.
fn calls_matrix(
    streams: &[&str],
    all_threadings: bool,
    ways: &[Way],
    mode: &str,
    env: &[(&str, &str)],
) -> Deferred {
    let mut jobs = Vec::new();
    for (i, name) in streams.iter().enumerate() {
        for (t, threading) in THREADING.into_iter().enumerate() {
            if all_threadings || t == i % THREADING.len() {
                jobs.push((stream_named(name), ways[(i + t) % ways.len()], threading));
            }
        }
    }
    let count = jobs.len();
    let totals = Mutex::new([0u64; 5]);
    let failures = in_parallel(jobs, |(stream, way, threading)| {
        let deferred = check_calls(stream, way, mode, threading, env)?;
        let mut t = totals.lock().unwrap();
        for (t, d) in t.iter_mut().zip(deferred) {
            *t += d;
        }
        Ok(())
    });
    assert_all_decoded(&failures, count, "decodes");
    let totals = totals.into_inner().unwrap();
    println!("{count} decodes on the per-call path ({mode}, {env:?}) equal Debian's ffmpeg; deferred: {totals:?}");
    totals
}

/// The per-call path on the GPU with every threading, the program finding the library both
/// ways: every family deferred (the decoder's superblocks through the provider's hook), and
/// motion compensation reading its reference in place.
#[test]
fn calls_path_equals_debian_ffmpeg() {
    let [itx, mc, lf, lf_sb, in_place] = calls_matrix(
        &CALLS_STREAMS,
        true,
        &[Way::Preload, Way::Linked],
        "gpu",
        &[],
    );
    assert!(
        itx > 0 && mc > 0 && lf_sb > 0,
        "a family was never deferred"
    );
    assert_eq!(lf, 0, "superblocks filtered edge by edge");
    assert!(in_place > 0, "no reference was read in place");
}

/// The per-call path with the CPU reference in the GPU's place (`DAEDALUS=cpu`), each stream
/// with one threading in turn: the decoder's superblocks are filtered edge by edge there.
#[test]
fn calls_path_on_the_cpu_reference_equals_debian_ffmpeg() {
    let [itx, mc, lf, lf_sb, _] = calls_matrix(&CALLS_STREAMS, false, &[Way::Preload], "cpu", &[]);
    assert!(itx > 0 && mc > 0 && lf > 0, "a family was never deferred");
    assert_eq!(lf_sb, 0, "the superblock hook took part on the CPU");
}

/// As on a device without host-memory import (the Pi's): the decoder's frames and row backup
/// in daedalus's device memory, nothing imported; and as on a discrete GPU, the job data
/// copied into device-local memory by every submission.
#[test]
fn calls_path_on_the_frame_pool_or_device_copies_equals_debian_ffmpeg() {
    let streams = [
        "size-065x065",
        "cif",
        "altref-2pass",
        "profile1-440",
        "resize",
        "natural-bikes",
    ];
    calls_matrix(
        &streams,
        false,
        &[Way::Preload],
        "gpu",
        &[("DAEDALUS_TEST_MEMORY", "pool")],
    );
    calls_matrix(
        &streams,
        false,
        &[Way::Preload],
        "gpu",
        &[("DAEDALUS_TEST_MEMORY", "copies")],
    );
}

/// A submission that fails as a lost device would: one error says the GPU is off, the rest of
/// the decode runs on the CPU reference, and every frame still equals Debian's ffmpeg, with
/// each threading.
#[test]
fn a_failed_submission_keeps_decodes_exact() {
    let stream = stream_named("natural-bikes");
    let cases = [
        (THREADING[0], "7"),
        (THREADING[1], "9"),
        (THREADING[2], "40"),
    ];
    let failures = in_parallel(cases.to_vec(), |(threading, at)| {
        let env = [("DAEDALUS_TEST_FAIL_SUBMISSION", at)];
        let what = format!("{} / {} / submission {at} fails", stream.name, threading.0);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)?;
        let said = messages_of(&out.stderr);
        if said.len() != 1 || !said[0].contains("GPU disabled after an error") {
            return Err(format!("{what}: one error expected: {said:?}"));
        }
        let failed_at: u64 = at.parse().unwrap();
        if count(&out.stderr, "submissions") >= failed_at || count(&out.stderr, "cpu_calls") == 0 {
            return Err(format!(
                "{what}: the GPU went on after the failure, or the CPU took nothing over: {}",
                out.stderr
            ));
        }
        Ok(())
    });
    assert_all_decoded(&failures, cases.len(), "decodes with a failed submission");
}

/// Submissions of the per-call path that fail after the GPU ran them (`DAEDALUS_TEST_FAIL_STEP`):
/// where reading its results back fails, the host completes the batch exactly and every frame
/// equals Debian's ffmpeg (with frame threads too); where the device is lost with pixels
/// written in place, nothing is written twice and the decoder fails that frame through its own
/// error path (its message, exit status 0 as with damaged data): that frame is not output, and
/// since the injected loss came after the GPU wrote it whole and it stays a reference, every
/// other frame equals Debian's.
#[test]
fn failures_after_the_gpu_ran_are_exact_or_fail_the_frame() {
    let stream = stream_named("altref-2pass");
    let cases = [
        ("unpack", THREADING[0]),
        ("overflow", THREADING[1]),
        ("wait", THREADING[0]),
    ];
    let failures = in_parallel(cases.to_vec(), |(step, threading)| {
        let env = [
            ("DAEDALUS_TEST_FAIL_SUBMISSION", "12"),
            ("DAEDALUS_TEST_FAIL_STEP", step),
        ];
        let what = format!("{} / {} / {step} fails", stream.name, threading.0);
        if step != "wait" {
            let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)?;
            return match stat(&out.stderr, "damaged_batches") {
                Some("0") => Ok(()),
                _ => Err(format!("{what}: no batch may be damaged: {}", out.stderr)),
            };
        }
        let out = ours(
            Way::Preload,
            "gpu",
            &stream.path,
            threading.1,
            "framemd5",
            &env,
        );
        let (ours, theirs) = (frames(&out.stdout), reference(stream));
        let failed_frame = out
            .stderr
            .lines()
            .filter(|l| l.contains("The DSP provider failed to reconstruct the frame"))
            .count();
        let failed_at = ours
            .iter()
            .zip(&theirs)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len());
        let mut others = theirs.clone();
        if failed_at < others.len() {
            others.remove(failed_at);
        }
        if out.status != Some(0)
            || failed_frame != 1
            || stat(&out.stderr, "damaged_batches") != Some("1")
            || ours != others
        {
            return Err(format!(
                "{what}: expected frame {failed_at} alone failed ({} of {} frames): exit {:?}: {}",
                ours.len(),
                theirs.len(),
                out.status,
                out.stderr
            ));
        }
        Ok(())
    });
    assert_all_decoded(
        &failures,
        cases.len(),
        "decodes with a failure after the GPU ran",
    );
}

/// An empty cache directory of this test process for `name`.
fn empty_cache(name: &str) -> PathBuf {
    let cache = std::env::temp_dir().join(format!("daedalus-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    cache
}

/// With the defaults, where the GPU cannot win VP9 is FFmpeg's own decode, the stats line says
/// why, and the frames are Debian's: on a CPU device (lavapipe, whose work would take the
/// decoder's cores; the first run learns it from the builder process while FFmpeg decodes,
/// setting no device up itself, a later run knows it without setting the device up, at 8 bits
/// as at 10), and without a device (after one warning). The per-call path without a device runs on the CPU
/// reference, after one warning.
#[test]
fn the_defaults_leave_vp9_to_ffmpeg_where_the_gpu_cannot_win() {
    let cache = empty_cache("defaults");
    let cache_str = cache.to_str().unwrap();
    let missing = "/nonexistent/daedalus-test-icd.json";
    let no_device: &[(&str, &str)] = &[("VK_ICD_FILENAMES", missing), ("VK_DRIVER_FILES", missing)];
    // (stream, settings, expected path, why, device, warnings)
    type Case<'a> = (
        &'a str,
        &'a [(&'a str, &'a str)],
        &'a str,
        &'a str,
        &'a str,
        usize,
    );
    let cases: [Case; 5] = [
        ("cif", &[], "ffmpeg", "cpu-device", "none", 0),
        ("cif", &[], "ffmpeg", "cpu-device", "none", 0),
        ("profile2-10bit", &[], "ffmpeg", "cpu-device", "none", 0),
        ("cif", no_device, "ffmpeg", "no-device", "none", 1),
        ("cif", no_device, "calls-cpu", "DAEDALUS_PATH", "none", 1),
    ];
    for (i, (name, extra, path, why, device, warnings)) in cases.into_iter().enumerate() {
        let stream = stream_named(name);
        // (The set-up thread waited for: it learns the device before the decode ends.)
        let mut env = vec![
            ("XDG_CACHE_HOME", cache_str),
            ("DAEDALUS_TEST_SETUP", "wait"),
        ];
        if i < 4 {
            env.push(("DAEDALUS_PATH", ""));
        }
        env.extend_from_slice(extra);
        let what = format!("{name} / {env:?}");
        let out = decode_as_debian(stream, Way::Preload, "gpu", THREADING[1], &env, &what)
            .unwrap_or_else(|e| panic!("{e}"));
        let e = &out.stderr;
        assert_eq!(stat(e, "path"), Some(path), "{what}: {e}");
        assert_eq!(stat(e, "why"), Some(why), "{what}: {e}");
        assert!(
            stat(e, "device").is_some_and(|d| d.contains(device)),
            "{what}: device {device} expected: {e}"
        );
        let warned = e
            .lines()
            .filter(|l| l.starts_with("daedalus: warning:"))
            .count();
        assert_eq!(warned, warnings, "{what}: {e}");
        assert_eq!(messages_of(e).len(), warnings, "{what}: {e}");
        // A decode that knew at its start that FFmpeg decodes (the later runs on the CPU
        // device) takes none of daedalus's memory; a device's first decode allocates its frames
        // for the GPU before it learns the device (so does one that finds none).
        if i > 0 && why == "cpu-device" {
            assert_eq!(
                count(e, "deferred") + count(e, "frame_buffers"),
                0,
                "{what}: {e}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&cache);
}

/// The corpus itself: Debian's ffmpeg agrees with libvpx's vpxdec, and the patched program
/// without a provider with Debian's ffmpeg, with every threading.
#[test]
fn references_agree() {
    let s = setup();
    let failures = in_parallel(s.streams.clone(), |stream| {
        let mut vpx = Command::new("vpxdec");
        vpx.args(["--md5", "--rawvideo"]).arg(&stream.path);
        let v = run(vpx);
        let vpx_md5 = String::from_utf8_lossy(&v.stdout)
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string();
        let mut ff = Command::new("/usr/bin/ffmpeg");
        let mut args = decode_args(&stream.path, &["-threads", "1"], "md5");
        let at = args.iter().position(|a| a == "-i").unwrap();
        args.splice(at..at, ["-c:v".to_string(), "vp9".to_string()]);
        ff.args(args);
        let f = run(ff);
        let ff_md5 = String::from_utf8_lossy(&f.stdout)
            .trim()
            .trim_start_matches("MD5=")
            .to_string();
        if vpx_md5.len() != 32 || vpx_md5 != ff_md5 {
            return Err(format!(
                "{}: vpxdec {vpx_md5:?} vs Debian's ffmpeg {ff_md5:?}",
                stream.name
            ));
        }
        for threading in THREADING {
            let out = ours(
                Way::Without,
                "gpu",
                &stream.path,
                threading.1,
                "framemd5",
                &[],
            );
            if out.status != Some(0) || frames(&out.stdout) != reference(&stream) {
                return Err(format!(
                    "{} / {}: the patched program without daedalus differs",
                    stream.name, threading.0
                ));
            }
            if !out.stderr.is_empty() {
                return Err(format!(
                    "{}: unexpected messages without daedalus: {}",
                    stream.name, out.stderr
                ));
            }
        }
        Ok(())
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Damaged VP9 streams behave as without daedalus, on the per-call path and on the frame
/// path's CPU side (FFmpeg's second pass reconstructing what was parsed); those of the
/// CIF-sized streams also with the frame path on the GPU, in place or on device-local copies.
/// Each damaged file is decoded once without daedalus for all of them, with one threading,
/// each stream meeting all three over its four files. (Copies whose frames fall back under
/// frame threads, decoded run after run: `tests/frame_path.rs`.)
#[test]
fn damaged_streams_behave_as_without_daedalus() {
    let s = setup();
    let dir = std::env::temp_dir().join(format!("daedalus-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let picked = [
        "cif",
        "tiles-720p",
        "altref-2pass",
        "keyframes-only",
        "natural-bikes",
        "lossless",
    ];
    let small = ["cif", "altref-2pass", "keyframes-only", "lossless"];
    let mut jobs = Vec::new();
    for (n, stream) in s
        .streams
        .iter()
        .filter(|st| picked.contains(&st.name.as_str()))
        .enumerate()
    {
        let on_gpu = small.contains(&stream.name.as_str());
        for (i, file) in damaged_copies(stream, &dir).into_iter().enumerate() {
            let memory = if i % 2 == 0 { "" } else { "copies" };
            jobs.push((file, THREADING[(i + n) % THREADING.len()], on_gpu, memory));
        }
    }
    assert_eq!(jobs.len(), picked.len() * 4, "damaged streams are missing");
    let count = jobs.len();
    let failures = in_parallel(jobs, |(file, threading, frames_on_gpu, memory)| {
        // With frame threads, FFmpeg itself is not deterministic on damaged input: a frame
        // that fails part-way leaves rows of a reused buffer as they were, and which buffer
        // that is depends on thread timing. There only exit status and completion compare.
        let frame: &[(&str, &str)] = &[("DAEDALUS_PATH", "frame")];
        let frame_gpu = [("DAEDALUS_PATH", "frame"), ("DAEDALUS_TEST_MEMORY", memory)];
        let all = [("gpu", &[][..]), ("cpu", frame), ("gpu", &frame_gpu[..])];
        compare_damaged(
            &file,
            threading,
            !threading.0.contains("frame"),
            &all[..if frames_on_gpu { 3 } else { 2 }],
        )
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} of {count} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The patched FFmpeg without a provider passes FFmpeg's own checks that need no samples and
/// cover what the patches touch: its DSP functions against their C versions (fate-checkasm,
/// vp9dsp among them), the libraries' unit tests (fate-libavutil, fate-libavcodec) and
/// fate-source (license headers, the patches' new files included). (The rest of FATE, over
/// 1,700 tests in Debian's configuration, would take most of CI's time.)
#[test]
fn ffmpeg_fate_passes_without_daedalus() {
    setup();
    let obj = root().join("build/ffmpeg/obj");
    let jobs = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .to_string();
    let targets = [
        "fate-checkasm",
        "fate-libavutil",
        "fate-libavcodec",
        "fate-source",
    ];
    let out = Command::new("make")
        .args(["-k", "-j", &jobs])
        .args(targets)
        .current_dir(&obj)
        .env_remove("LD_PRELOAD")
        .env("DAEDALUS", "off")
        .output()
        .expect("running make fate");
    let log =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let tests: Vec<&str> = log.lines().filter(|l| l.starts_with("TEST")).collect();
    assert!(
        out.status.success(),
        "make fate failed:\n{}",
        &log[log.len().saturating_sub(3000)..]
    );
    for name in ["checkasm-vp9dsp", "source"] {
        assert!(
            tests
                .iter()
                .any(|t| t.split_whitespace().nth(1) == Some(name)),
            "fate-{name} did not run"
        );
    }
    assert!(tests.len() > 80, "only {} FATE tests ran", tests.len());
    println!("{} FATE tests passed", tests.len());
}

/// Two VP9 decoders in one process, driven by ffmpeg's one decoding thread (two inputs, each
/// with its own frame or slice threads): each output equals Debian's ffmpeg's with the same
/// threading. On the per-call path; and on the frame path with frame threads, where one
/// stream's damaged frames fall back to FFmpeg while both decoders hold frames on the GPU: a
/// frame of one decoder waits for no frame of the other, which only that decoder's calls
/// finish (a decode that hangs fails at its time limit).
#[test]
fn several_decoders_in_one_process() {
    let s = setup();
    let dir = std::env::temp_dir().join(format!("daedalus-two-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        ("calls", ["natural-bikes", "tiles-720p"], THREADING[1]),
        ("calls", ["natural-bikes", "tiles-720p"], THREADING[2]),
        ("frame", ["damaged-tiles-20", "natural-bikes"], THREADING[1]),
    ];
    for (path, names, threading) in cases {
        let streams = names.map(|name| {
            (s.damaged.iter().find(|d| d.name == name)).unwrap_or_else(|| stream_named(name))
        });
        let outputs = [dir.join("a.framemd5"), dir.join("b.framemd5")];
        let mut cmd = Command::new(&s.ffmpeg);
        cmd.args(["-nostdin", "-v", "error", "-bitexact"]);
        for stream in &streams {
            cmd.args(threading.1).arg("-i").arg(&stream.path);
        }
        for (i, out) in outputs.iter().enumerate() {
            cmd.args([
                "-map",
                &format!("{i}:v"),
                "-autoscale",
                "0",
                "-f",
                "framemd5",
                "-y",
            ])
            .arg(out);
        }
        cmd.env("LD_PRELOAD", &s.lib)
            .env("DAEDALUS", "gpu")
            .env("DAEDALUS_PATH", path)
            .env("DAEDALUS_STATS", "1");
        let what = format!("{path} / {} / {names:?}", threading.0);
        let out = run(cmd);
        assert_eq!(out.status, Some(0), "{what}: {}", out.stderr);
        assert_eq!(
            stat(&out.stderr, "path"),
            Some(path),
            "{what}: {}",
            out.stderr
        );
        if path == "frame" {
            assert!(
                count(&out.stderr, "fallbacks") > 0,
                "{what}: {}",
                out.stderr
            );
        }
        for (file, stream) in outputs.iter().zip(&streams) {
            let got = frames(&std::fs::read(file).unwrap());
            // (A damaged stream's frames depend on the threading.)
            let theirs = if stream.name.starts_with("damaged") {
                debian_ffmpeg(&stream.path, threading.1)
            } else {
                (Some(0), reference(stream))
            };
            assert_eq!(
                (Some(0), got),
                theirs,
                "{what}: {} differs from Debian's ffmpeg",
                stream.name
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// --- AV1: CDEF through the patched dav1d ----------------------------------------------------

/// dav1d's threading through FFmpeg's `-threads` (dav1d runs frame and tile tasks itself).
const AV1_THREADING: [(&str, &[&str]); 2] = [
    ("1 thread", &["-threads", "1"]),
    ("4 threads", &["-threads", "4"]),
];

/// AV1's paths as these tests name them: CDEF's rows on the GPU (`rows`, and on the frame pool
/// `rows+pool`), its calls block by block (`calls`: on the GPU, or with `DAEDALUS=cpu` on the
/// CPU reference, `calls-cpu`), dav1d's own (`off`: `DAEDALUS=off`).
fn av1_settings(path: &str) -> (&'static str, Vec<(&'static str, &'static str)>) {
    match path {
        "rows" => ("gpu", vec![("DAEDALUS_PATH", "frame")]),
        "rows+pool" => (
            "gpu",
            vec![("DAEDALUS_PATH", "frame"), ("DAEDALUS_TEST_MEMORY", "pool")],
        ),
        "calls" => ("gpu", vec![]),
        "calls-cpu" => ("cpu", vec![]),
        _ => ("off", vec![]),
    }
}

/// Checks one AV1 decode against Debian's `ffmpeg -c:v libdav1d` and its stats line: by rows,
/// every row with blocks to filter on the GPU and no call block by block; by calls, every call
/// deferred or run at once on the CPU reference, no row; nothing rejected; without daedalus
/// or with `DAEDALUS=off`, no message at all. Returns the rows or calls taken, and the rows
/// left on their way.
fn check_av1(
    stream: &Stream,
    way: Way,
    path: &str,
    threading: (&str, &[&str]),
) -> Result<(u64, u64), String> {
    let what = format!("{} / {way:?} / {path} / {}", stream.name, threading.0);
    let (mode, env) = av1_settings(path);
    let out = decode_as_debian(stream, way, mode, threading, &env, &what)?;
    if matches!(way, Way::Without) || mode == "off" {
        return match out.stderr.is_empty() {
            true => Ok((0, 0)),
            false => Err(format!("{what}: unexpected messages: {}", out.stderr)),
        };
    }
    let e = &out.stderr;
    let ran = stat(e, "path").ok_or_else(|| format!("{what}: no stats line: {e}"))?;
    let lossless = stream.name.contains("lossless");
    let expected = match path {
        _ if path.starts_with("rows") && lossless => "frame-cpu",
        _ if path.starts_with("rows") => "frame",
        _ if lossless => "ffmpeg",
        p => p,
    };
    if ran != expected {
        return Err(format!(
            "{what}: ran on path {ran}, expected {expected}: {e}"
        ));
    }
    let (handed, empty, on_cpu) = (
        count(e, "cdef_rows_handed"),
        count(e, "cdef_rows_empty"),
        count(e, "cdef_rows_cpu"),
    );
    let (deferred, immediate, rows_deferred) = (
        count(e, "deferred"),
        count(e, "immediate"),
        count(e, "cdef_rows_deferred"),
    );
    let one_thread = threading.1 == ["-threads", "1"];
    let right = if path.starts_with("rows") {
        // (dav1d hands over a lossless frame's rows too, with no block to filter.)
        handed > 0
            && (empty == handed) == lossless
            && on_cpu == 0
            && deferred + immediate == 0
            && count(e, "cdef_rows") == handed - empty
            && (one_thread || rows_deferred < handed - empty || rows_deferred == 0)
    } else {
        handed == 0 && (deferred + immediate > 0) != lossless
    };
    if !right || count(e, "rejected") != 0 {
        return Err(format!("{what}: rows or calls not as expected: {e}"));
    }
    // dav1d's pictures are daedalus's own buffers (FFmpeg's libdav1d.c allocator takes them
    // from `frame_alloc`): the frame pool's device memory, or host memory imported once for
    // its life. CDEF writes its rows in place and no pixel goes through staging.
    if mode == "gpu" {
        let memory = stat(e, "frame_memory");
        let buffers = count(e, "frame_buffers");
        let own = match memory {
            Some("pool") => count(e, "pool_buffers") == buffers && count(e, "imports") == 0,
            Some("import") => count(e, "imports") == buffers && count(e, "pool_buffers") == 0,
            _ => false,
        };
        let pool = path.ends_with("+pool");
        if !own
            || buffers == 0
            || pool != (memory == Some("pool"))
            || count(e, "pixel_bytes_copied") != 0
        {
            return Err(format!("{what}: pictures not in place as expected: {e}"));
        }
    }
    let unexpected = messages_of(e);
    if !unexpected.is_empty() {
        return Err(format!("{what}: unexpected messages: {unexpected:?}"));
    }
    Ok((count(e, "cdef_rows") + deferred + immediate, rows_deferred))
}

/// Every AV1 stream x {1, 4 threads}, the ways to find the library in turn, on `paths`.
fn av1_matrix(paths: &[&str], ways: &[Way]) -> u64 {
    let s = setup();
    let mut jobs = Vec::new();
    for (i, stream) in s.av1_streams.iter().enumerate() {
        for (t, threading) in AV1_THREADING.into_iter().enumerate() {
            for &path in paths {
                jobs.push((stream.clone(), ways[(i + t) % ways.len()], path, threading));
            }
        }
    }
    let count = jobs.len();
    let cdef = Mutex::new((0u64, 0u64));
    let failures = in_parallel(jobs, |(stream, way, path, threading)| {
        let (taken, deferred) = check_av1(&stream, way, path, threading)?;
        let mut sums = cdef.lock().unwrap();
        sums.0 += taken;
        sums.1 += deferred;
        Ok(())
    });
    assert_all_decoded(&failures, count, "AV1 decodes");
    let (taken, deferred) = cdef.into_inner().unwrap();
    println!("{count} AV1 decodes ({paths:?}, {ways:?}) equal Debian's libdav1d; {taken} CDEF rows or calls taken, {deferred} rows left on their way");
    deferred
}

/// Every AV1 stream x {1, 4 threads}, CDEF's rows on the GPU, the program finding the library
/// both ways: with one thread, rows of frames without loop restoration go out without a wait.
#[test]
fn av1_rows_equal_debian_libdav1d() {
    let deferred = av1_matrix(&["rows"], &[Way::Preload, Way::Linked]);
    assert!(deferred > 0, "no row was left on its way");
}

/// CDEF's rows with more task threads than most machines have cores, and with dav1d holding
/// one frame at a time (`-flags low_delay`: its max_frame_delay of 1), on the streams whose
/// rows take dav1d's other halo paths: 128x128 superblocks, super-resolution, 10 bits 4:4:4,
/// natural content.
#[test]
fn av1_rows_with_eight_threads_or_one_frame_of_delay_equal_debian_libdav1d() {
    let threadings: [(&str, &[&str]); 2] = [
        ("8 threads", &["-threads", "8"]),
        (
            "4 threads, 1 frame of delay",
            &["-threads", "4", "-flags", "low_delay"],
        ),
    ];
    let names = [
        "av1-aom-sb128",
        "av1-svt-superres",
        "av1-aom-yuv444p10le",
        "av1-svt-natural-bikes",
    ];
    let jobs: Vec<_> = names
        .iter()
        .flat_map(|&n| threadings.iter().map(move |&t| (stream_named(n), t)))
        .collect();
    let count = jobs.len();
    let failures = in_parallel(jobs, |(stream, threading)| {
        check_av1(stream, Way::Preload, "rows", threading).map(|_| ())
    });
    assert_all_decoded(
        &failures,
        count,
        "AV1 decodes with 8 threads or one frame of delay",
    );
}

/// As on a device without host-memory import: dav1d's pictures in the frame pool's device
/// memory, CDEF's rows in place there; and CDEF block by block through the C ABI, on the GPU
/// and on the CPU reference.
#[test]
fn av1_rows_on_the_frame_pool_and_calls_equal_debian_libdav1d() {
    av1_matrix(&["rows+pool", "calls", "calls-cpu"], &[Way::Preload]);
}

/// A CDEF row whose submission fails (the device lost, `DAEDALUS_TEST_FAIL_SUBMISSION`): one
/// error says the GPU is off, one warning that the rows go to the CPU reference, every later
/// row with blocks to filter is filtered there, and the frames still equal Debian's libdav1d,
/// at 1 and 4 threads.
#[test]
fn av1_failed_row_submission_keeps_decodes_exact() {
    let stream = stream_named("av1-svt-natural-bikes");
    let failures = in_parallel(AV1_THREADING.to_vec(), |threading| {
        let env = [
            ("DAEDALUS_PATH", "frame"),
            ("DAEDALUS_TEST_FAIL_SUBMISSION", "20"),
        ];
        let what = format!("{} / {} / submission 20 fails", stream.name, threading.0);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)?;
        let said = |prefix: &str| -> Vec<&str> {
            out.stderr
                .lines()
                .filter(|l| l.starts_with(prefix))
                .collect()
        };
        let (errors, warnings) = (said("daedalus: error:"), said("daedalus: warning:"));
        if errors.len() != 1
            || !errors[0].contains("GPU disabled after an error")
            || warnings.len() != 1
            || !warnings[0].contains("CDEF rows go to the CPU reference")
        {
            return Err(format!(
                "{what}: one error and one warning expected: {}",
                out.stderr
            ));
        }
        // The first 19 rows with blocks to filter ran on the GPU, every other one on the CPU.
        let e = &out.stderr;
        let with_blocks = count(e, "cdef_rows_handed") - count(e, "cdef_rows_empty");
        if with_blocks < 40 || count(e, "cdef_rows_cpu") != with_blocks - 19 {
            return Err(format!("{what}: rows on the CPU: {e}"));
        }
        Ok(())
    });
    assert_all_decoded(
        &failures,
        AV1_THREADING.len(),
        "AV1 decodes with a failed row",
    );
}

/// The patched dav1d without daedalus, and with `DAEDALUS=off`, decodes as Debian's.
#[test]
fn av1_without_daedalus_or_off_equals_debian_libdav1d() {
    av1_matrix(&["off"], &[Way::Preload]);
    av1_matrix(&["rows"], &[Way::Without]);
}

/// Damaged AV1 streams: the same exit status, frames and messages as the program without
/// daedalus (frames and messages with 1 thread, where dav1d is deterministic on them), by rows
/// and by calls.
#[test]
fn av1_damaged_streams_behave_as_without_daedalus() {
    let s = setup();
    let dir = std::env::temp_dir().join(format!("daedalus-av1-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let picked = [
        "av1-aom-420-tiles",
        "av1-aom-yuv420p10le",
        "av1-rav1e-natural-carphone",
    ];
    let mut jobs = Vec::new();
    for stream in s
        .av1_streams
        .iter()
        .filter(|st| picked.contains(&st.name.as_str()))
    {
        for (i, file) in damaged_copies(stream, &dir).into_iter().enumerate() {
            jobs.push((file, AV1_THREADING[i % 2]));
        }
    }
    assert_eq!(
        jobs.len(),
        picked.len() * 4,
        "streams of the selection are missing"
    );
    // dav1d's own threads make damaged input nondeterministic too: 1 thread compares all.
    let rows: &[(&str, &str)] = &[("DAEDALUS_PATH", "frame")];
    let failures = in_parallel(jobs, |(file, threading)| {
        compare_damaged(
            &file,
            threading,
            threading.1[1] == "1",
            &[("gpu", rows), ("gpu", &[])],
        )
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// No Vulkan device: AV1's CDEF asked for by calls runs on the CPU reference after one
/// warning; with the defaults it is dav1d's own (`why=no-device`). The same frames.
#[test]
fn av1_without_a_vulkan_device_warns_once_and_decodes_the_same() {
    let stream = stream_named("av1-aom-420-tiles");
    let missing = "/nonexistent/daedalus-test-icd.json";
    for (path, expected, why) in [
        ("calls", "calls-cpu", "DAEDALUS_PATH"),
        ("", "ffmpeg", "no-device"),
    ] {
        let env = [
            ("VK_ICD_FILENAMES", missing),
            ("VK_DRIVER_FILES", missing),
            ("DAEDALUS_PATH", path),
        ];
        let out = ours(
            Way::Preload,
            "gpu",
            &stream.path,
            &["-threads", "4"],
            "framemd5",
            &env,
        );
        assert_eq!(out.status, Some(0), "{}", out.stderr);
        assert_eq!(frames(&out.stdout), reference(stream), "frames differ");
        let warnings = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("daedalus: warning:"))
            .count();
        assert_eq!(warnings, 1, "one warning expected: {}", out.stderr);
        assert_eq!(stat(&out.stderr, "path"), Some(expected), "{}", out.stderr);
        assert_eq!(stat(&out.stderr, "why"), Some(why), "{}", out.stderr);
    }
}

/// Where `DAEDALUS_PATH` is unset, CDEF's rows are tried on the decode itself (on a CPU device
/// only when a trial is asked for: `DAEDALUS_TRIAL_FRAMES`), per kind of row (left on their
/// way with one thread, waited for with dav1d's task threads): after a first picture with
/// dav1d and two warming the GPU up, pictures alternate between the GPU and dav1d until one
/// side is kept, and kept for later runs. The frames stay exact with pictures of both in one
/// decode, the stats line says what the trial found (`gpu` exactly where its time ratio is
/// below 1), and no call goes block by block. A later run follows the kept decisions and sets
/// the device up only when a row goes to the GPU: with task threads and dav1d kept for their
/// rows, none is (FFmpeg's probe decodes a picture with one thread: it stays with dav1d); dav1d
/// kept for rows left on their way is kept for rows waited for too. Without a trial asked for,
/// a CPU device leaves CDEF to dav1d (`why=cpu-device`).
#[test]
fn cdef_rows_are_tried_on_the_decode_and_kept() {
    let stream = stream_named("av1-svt-natural-bikes");
    let cache = empty_cache("cdef-trial");
    let cache_str = cache.to_str().unwrap();
    let decode = |env: &[(&str, &str)], threading: (&str, &[&str])| -> String {
        let mut env = env.to_vec();
        env.push(("DAEDALUS_PATH", ""));
        if !env.iter().any(|(k, _)| *k == "XDG_CACHE_HOME") {
            env.push(("XDG_CACHE_HOME", cache_str));
        }
        let what = format!("{} / {env:?} / {}", stream.name, threading.0);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            stat(&out.stderr, "deferred_cdef"),
            Some("0"),
            "{}",
            out.stderr
        );
        out.stderr
    };
    // A kind's decision, as `trial=` shows it: (pick, ratio).
    let decided = |stderr: &str, kind: &str| -> Option<(String, f64)> {
        let trial = stat(stderr, "trial").expect("trial=");
        let found = trial
            .split(',')
            .find_map(|t| t.strip_prefix(kind)?.strip_prefix(':'))?;
        let (pick, ratio) = found.strip_suffix(')')?.split_once('(')?;
        let ratio: f64 = ratio.parse().ok()?;
        assert!(matches!(pick, "gpu" | "dav1d") && ratio > 0.0, "{trial}");
        // (The ratio as printed, to two places: 0.996 shows as 1.00.)
        assert!(
            (pick == "gpu" && ratio <= 1.0) || (pick == "dav1d" && ratio >= 1.0),
            "{trial}"
        );
        Some((pick.to_string(), ratio))
    };
    let (one_thread, threads) = (AV1_THREADING[0], AV1_THREADING[1]);
    // A kind's trial: its decision, and whether the device imports host memory.
    let tried = |threading, kind: &str, cache: &str| -> ((String, f64), bool) {
        let env = [("XDG_CACHE_HOME", cache), ("DAEDALUS_TRIAL_FRAMES", "8")];
        let stderr = decode(&env, threading);
        assert_eq!(stat(&stderr, "why"), Some("trial"), "{stderr}");
        // The warm-up's pictures at least went to the GPU.
        assert!(count(&stderr, "cdef_rows") > 0, "{stderr}");
        let decision = decided(&stderr, kind)
            .unwrap_or_else(|| panic!("{kind} undecided after 60 pictures: {stderr}"));
        (decision, stat(&stderr, "frame_memory") == Some("import"))
    };
    // Without a trial asked for, a CPU device leaves CDEF to dav1d.
    let stderr = decode(&[], one_thread);
    assert_eq!(stat(&stderr, "path"), Some("ffmpeg"), "{stderr}");
    assert_eq!(stat(&stderr, "why"), Some("cpu-device"), "{stderr}");
    // Rows waited for (dav1d's task threads) get a trial of their own, in a cache of their own.
    let waited_cache = empty_cache("cdef-trial-waited");
    let waited_str = waited_cache.to_str().unwrap();
    let (waited, imports) = tried(threads, "waited", waited_str);
    let stderr = decode(&[("XDG_CACHE_HOME", waited_str)], threads);
    assert_eq!(stat(&stderr, "why"), Some("trial"), "{stderr}");
    // (A device that does not import host memory is set up at once: frames are its memory.)
    if waited.0 == "dav1d" && imports {
        assert_eq!(stat(&stderr, "path"), Some("ffmpeg"), "{stderr}");
        assert_eq!(stat(&stderr, "device"), Some("\"none\""), "{stderr}");
        assert_eq!(count(&stderr, "cdef_rows"), 0, "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&waited_cache);
    // One thread tries the rows left on their way. A later run follows the kept decision;
    // where it is dav1d's, it is dav1d's for rows waited for too, and the later run sets no
    // device up.
    let (deferred, _) = tried(one_thread, "deferred", cache_str);
    let stderr = decode(&[], one_thread);
    if deferred.0 == "dav1d" {
        assert_eq!(stat(&stderr, "why"), Some("kept"), "{stderr}");
        assert_eq!(stat(&stderr, "path"), Some("ffmpeg"), "{stderr}");
        assert_eq!(stat(&stderr, "device"), Some("\"none\""), "{stderr}");
        assert_eq!(count(&stderr, "cdef_rows"), 0, "{stderr}");
    } else {
        assert_eq!(stat(&stderr, "why"), Some("trial"), "{stderr}");
        // (The kept ratio is rounded again on the way: compare the picks.)
        assert_eq!(
            decided(&stderr, "deferred").map(|d| d.0),
            Some(deferred.0),
            "{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&cache);
}
