//! The frame path end to end (`DAEDALUS_PATH=frame`): the patched FFmpeg parses each VP9 frame
//! whole into daedalus's memory before reconstructing it, in every threading mode.
//!
//! Its CPU side (`DAEDALUS=cpu`): FFmpeg's own second pass reconstructs every frame from the
//! parsed data. That the whole corpus then equals Debian's ffmpeg, with 1 thread, frame threads
//! (which wait on each other's parsing rather than pixels) and slice threads (which parse their
//! tile columns apart), proves the cut between parsing and reconstruction; it is also what runs
//! wherever the GPU cannot reconstruct a frame.
//!
//! On the GPU (lavapipe here): every stream reconstructed from the parsed blocks equals
//! Debian's ffmpeg with the three threading modes (and linked, a stream of each kind); without a
//! device, with the frame path's kernels failing to build, and with a submission failing
//! mid-frame, the frames are FFmpeg's second pass's, after one message. (Damaged streams:
//! `tests/decode.rs`, which decodes each damaged file once without daedalus for every path.)
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
/// second pass), nothing else said. Returns the frames submitted beside others.
fn check(
    stream: &Stream,
    way: Way,
    (mode, env): Variant,
    threading: (&str, &[&str]),
    path: &str,
) -> Result<u64, String> {
    let what = format!(
        "{} / {way:?} / {mode} {env:?} / {}",
        stream.name, threading.0
    );
    let out = decode_as_debian(stream, way, mode, threading, env, &what)?;
    let count = |key| -> Result<u64, String> {
        stat(&out.stderr, key)
            .and_then(|v| v.parse::<f64>().ok())
            .map(|v| v as u64)
            .ok_or_else(|| format!("{what}: no {key}= in {}", out.stderr))
    };
    let ran = stat(&out.stderr, "path").unwrap_or("missing");
    if ran != path {
        return Err(format!("{what}: path={ran}, expected {path}"));
    }
    let (parsed, by_ffmpeg) = (count("frames_parsed")?, count("frames_ffmpeg")?);
    if count("frames_declined")? != 0 {
        return Err(format!(
            "{what}: frames declined with the frame path forced"
        ));
    }
    if parsed == 0 || count("blocks")? == 0 {
        return Err(format!("{what}: nothing parsed: {}", out.stderr));
    }
    // The CPU side reconstructs every frame with FFmpeg, the GPU every frame.
    let (by_gpu, fallbacks) = (count("frames_gpu")?, count("fallbacks")?);
    let expected = if path == "frame" {
        (parsed, 0)
    } else {
        (0, parsed)
    };
    if (by_gpu, by_ffmpeg) != expected || fallbacks != 0 {
        return Err(format!(
            "{what}: of {parsed} frames {by_gpu} reconstructed on the GPU, {by_ffmpeg} by FFmpeg \
             ({fallbacks} after the GPU failed)"
        ));
    }
    // (A submission carries several frames where they go together.)
    let frames_submitted =
        count("submissions")? + count("frames_together")? - count("submissions_together")?;
    if path == "frame" && (frames_submitted < by_gpu || count("gpu_busy_ms").is_err()) {
        return Err(format!(
            "{what}: frames not submitted to the GPU: {}",
            out.stderr
        ));
    }
    // Frames in device-local copies are copied back; in place (lavapipe's own way), nothing is.
    if path == "frame" {
        let copies = env
            .iter()
            .any(|(k, v)| *k == "DAEDALUS_TEST_MEMORY" && *v == "copies");
        let copied = count("copied_back_bytes_per_frame")?;
        if (copied > 0) != copies {
            return Err(format!("{what}: {copied} bytes a frame copied back"));
        }
        // and the copies count in the GPU's time, as stages of their own
        let stages = stat(&out.stderr, "gpu_ms_by_stage").unwrap_or("");
        let stage_ms = |name: &str| {
            stages
                .split(',')
                .find_map(|s| s.strip_prefix(name)?.strip_prefix(':')?.parse::<f64>().ok())
        };
        match (stage_ms("copy_in"), stage_ms("copy_out")) {
            (Some(i), Some(o)) if (copies && i > 0.0 && o > 0.0) || (!copies && i + o == 0.0) => {}
            _ => return Err(format!("{what}: copies timed as gpu_ms_by_stage={stages}")),
        }
    }
    let unexpected = messages(&out.stderr);
    if !unexpected.is_empty() {
        return Err(format!("{what}: unexpected messages: {unexpected:?}"));
    }
    count("frames_together")
}

/// The lines of a decode's stderr other than daedalus's stats line.
fn messages(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| !l.starts_with("daedalus: device="))
        .collect()
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
        check(
            &stream,
            Way::Preload,
            frame_path("cpu"),
            threading,
            "frame-cpu",
        )
        .map(|_| ())
    });
    assert_all_decoded(&failures, count, "decodes on the frame path's CPU side");
}

/// The streams the GPU reconstructs with every threading: one of each kind the corpus has
/// (tiny, odd and multi-superblock sizes, every subsampling, lossless, scaled references,
/// alt-ref and show-existing frames, keyframes only, extreme quantizer and sharpness, error
/// resilience, 10 and 12 bits in every subsampling). The larger ones (two tile layouts,
/// scaled references at 8 and 10 bits, natural content at 8, 10 and 12 bits) go through one
/// threading each, in turn ([`LARGE`]);
/// both lists together cover every code path of the frame path's kernels on lavapipe, where a
/// 720p frame takes a second.
const STREAMS: [&str; 21] = [
    "size-002x002",
    "size-017x017",
    "size-065x065",
    "size-066x066",
    "size-202x226",
    "cif",
    "lossless",
    "quantizer-01",
    "quantizer-63",
    "sharpness-7",
    "altref-2pass",
    "error-resilient",
    "keyframes-only",
    "show-existing",
    "profile1-422",
    "profile1-440",
    "profile2-10bit",
    "lossless-10bit",
    "profile3-10bit-422",
    "profile3-12bit-440",
    "profile3-12bit-444",
];

/// One threading each, in turn.
const LARGE: [&str; 9] = [
    "tiles-720p",
    "tiles-1080p",
    "profile1-444",
    "resize",
    "resize-10bit",
    "natural-carphone",
    "natural-bikes",
    "natural-bikes-10bit",
    "natural-carphone-12bit-444",
];

/// Streams the linked program decodes on the frame path too (the way daedalus is found is
/// the only difference).
const LINKED: [&str; 2] = ["size-065x065", "lossless"];

/// The GPU reconstructs every frame equal to Debian's ffmpeg, with every threading
/// (LD_PRELOADed; linked, two streams): in place in host memory (the Pi's way, lavapipe's own)
/// and on device-local copies (a discrete GPU's, `DAEDALUS_TEST_MEMORY=copies`, there with
/// every dispatch split at 3 workgroups, as at a device's limit), each stream one way or the
/// other by threading, so that each threading meets both. With frame threads, frames ready
/// together go to the GPU in one submission, their levels interleaved
/// (`src/vp9/frame/together.rs`): some do here.
#[test]
fn gpu_equals_debian_ffmpeg() {
    const MEMORY: [&[(&str, &str)]; 2] = [
        &[("DAEDALUS_PATH", "frame")],
        // (and dispatches split every 3 workgroups, as where the device's limit is reached)
        &[
            ("DAEDALUS_PATH", "frame"),
            ("DAEDALUS_TEST_MEMORY", "copies"),
            ("DAEDALUS_TEST_GROUPS_PER_DISPATCH", "3"),
        ],
    ];
    let mut jobs = Vec::new();
    for (i, name) in STREAMS.iter().chain(&LARGE).enumerate() {
        let stream = stream_named(name);
        for (t, threading) in THREADING.into_iter().enumerate() {
            if LARGE.contains(name) && t != i % THREADING.len() {
                continue;
            }
            jobs.push((stream, Way::Preload, threading, MEMORY[(i + t) % 2]));
        }
        if LINKED.contains(name) {
            jobs.push((stream, Way::Linked, THREADING[0], MEMORY[i % 2]));
        }
    }
    let count = jobs.len();
    let together = std::sync::atomic::AtomicU64::new(0);
    let failures = in_parallel(jobs, |(stream, way, threading, env)| {
        let n = check(stream, way, ("gpu", env), threading, "frame")?;
        together.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    });
    assert_all_decoded(&failures, count, "decodes reconstructed on the GPU");
    assert!(
        together.into_inner() > 0,
        "no frames went to the GPU together"
    );
}

/// Where `DAEDALUS_PATH` is unset, a trial on each size class's first frames decodes blocks of
/// them on the frame path and blocks the decoder's own way, and keeps the faster. Every frame
/// stays Debian's across such switches, both ways, with every threading, in host memory and on
/// device-local copies (a reference FFmpeg wrote uploaded, a buffer the GPU wrote reused by
/// FFmpeg): switching every 1 or 3 frames for a whole decode (`DAEDALUS_TEST_ALTERNATE`), and
/// in a trial of 2-frame blocks, which decides; at 8 bits and at 10. (A CPU device gets a
/// trial only when asked.)
/// Frames are held meanwhile with one context, but not with frame threads. (The frame that
/// begins the device's set-up waits for it, `DAEDALUS_TEST_SETUP=wait`: where an earlier
/// decode of the test process set the device up, the set-up is deferred, and lavapipe builds
/// the kernels for longer than FFmpeg takes to decode some of these streams.)
#[test]
fn switching_paths_between_frames_equals_debian_ffmpeg() {
    const STREAMS: [&str; 5] = [
        "resize",
        "show-existing",
        "altref-2pass",
        "profile1-444",
        "profile3-10bit-422",
    ];
    let mut jobs = Vec::new();
    for (i, name) in STREAMS.into_iter().enumerate() {
        for (t, threading) in THREADING.into_iter().enumerate() {
            let memory = ["", "copies"][(i + t) % 2];
            let every = ["1", "3"][(i + t / 2) % 2];
            jobs.push((name, threading, memory, ("DAEDALUS_TEST_ALTERNATE", every)));
        }
    }
    for (t, threading) in THREADING.into_iter().enumerate() {
        let memory = ["", "copies"][t % 2];
        jobs.push((
            "natural-bikes",
            threading,
            memory,
            ("DAEDALUS_TRIAL_FRAMES", "2"),
        ));
    }
    let count = jobs.len();
    let failures = in_parallel(jobs, |(name, threading, memory, switches)| {
        let stream = stream_named(name);
        let env = [
            ("DAEDALUS_PATH", ""),
            ("DAEDALUS_TEST_MEMORY", memory),
            ("DAEDALUS_TEST_SETUP", "wait"),
            switches,
        ];
        let what = format!("{} / {} / {env:?}", stream.name, threading.0);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)?;
        let count = |key| -> Result<u64, String> {
            stat(&out.stderr, key)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{what}: no {key}= in {}", out.stderr))
        };
        let (gpu, declined) = (count("frames_gpu")?, count("frames_declined")?);
        let (fallbacks, parsed) = (count("fallbacks")?, count("frames_parsed")?);
        let ffmpeg = count("frames_ffmpeg")? - declined;
        // Frame threads hold no frame while others may decode theirs FFmpeg's own way (which
        // would read it, and be read while their thread sets up); one context holds them.
        let held = count("frames_held")?;
        let alternating = switches.0 == "DAEDALUS_TEST_ALTERNATE";
        if alternating && (held == 0) != threading.0.contains("frame") {
            return Err(format!("{what}: {held} frames held: {}", out.stderr));
        }
        if gpu == 0 || declined == 0 || ffmpeg != 0 || fallbacks != 0 || parsed != gpu {
            return Err(format!(
                "{what}: {gpu} frames on the GPU, {declined} declined, {ffmpeg} of {parsed} \
                 parsed reconstructed by FFmpeg: {}",
                out.stderr
            ));
        }
        // A trial decides and says so; alternating decoders run none.
        let (trial, path) = (stat(&out.stderr, "trial"), stat(&out.stderr, "path"));
        let decided = match trial.and_then(|t| t.strip_prefix("sd:")) {
            Some(t) => t.starts_with("frame:") || t.starts_with("ffmpeg:"),
            None => trial == Some("-"),
        };
        let path_ok = match trial {
            Some("-") => path == Some("trial"),
            _ => path == trial.and_then(|t| t.split(':').nth(1)),
        };
        if switches.0 == "DAEDALUS_TRIAL_FRAMES" && trial == Some("-") || !decided || !path_ok {
            return Err(format!("{what}: trial={trial:?} path={path:?}"));
        }
        let said = messages(&out.stderr);
        if !said.is_empty() {
            return Err(format!("{what}: unexpected messages: {said:?}"));
        }
        Ok(())
    });
    assert_all_decoded(&failures, count, "decodes switching paths");
}

/// A trial's decision is kept (per device, program, size class and threading): a later decode
/// follows it without a trial. Where it is FFmpeg's own decode no device is set up at all;
/// where it is the frame path, a decoder context's first frame goes to FFmpeg (frame threads
/// show only once their contexts have attached), the device is set up from the second on a
/// thread of its own while FFmpeg decodes the frames that come meanwhile (that second; with
/// `DAEDALUS_TEST_SETUP=wait` it waits for the set-up, so that every later frame takes the GPU
/// however long lavapipe takes to build the kernels), and the frames allocated before are
/// imported then and a submitter made for each decoder context (`objects_ahead=8/8`, made and
/// taken); so does a trial on a device an earlier run set up. With frame threads, a
/// kept frame path doubles the decoder contexts (`frame_contexts=4->8`), a kept FFmpeg decode
/// does not. Each decode equals Debian's ffmpeg.
#[test]
fn a_later_decode_follows_the_cached_trial_decision() {
    let cache = test_cache().join("trial-decisions");
    let _ = std::fs::remove_dir_all(&cache);
    std::fs::create_dir_all(&cache).expect("a cache directory");
    let cache_str = cache.to_str().expect("a UTF-8 temporary directory");
    let mesa = shader_cache();
    let mesa_str = mesa.to_str().expect("a UTF-8 directory");
    let stream = stream_named("natural-bikes");
    let decode = |asked: bool, threading: (&str, &[&str]), what: &str| -> String {
        // (Mesa's compiled shaders stay where the other tests keep them: compiling them again
        // costs lavapipe half a minute.)
        let mut env = vec![
            ("DAEDALUS_PATH", ""),
            ("XDG_CACHE_HOME", cache_str),
            ("MESA_SHADER_CACHE_DIR", mesa_str),
            ("DAEDALUS_TEST_SETUP", "wait"),
        ];
        if asked {
            env.push(("DAEDALUS_TRIAL_FRAMES", "2"));
        }
        let what = format!("{what}, {}", threading.0);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)
            .unwrap_or_else(|e| panic!("{e}"));
        let said = messages(&out.stderr);
        assert!(said.is_empty(), "{what}: unexpected messages: {said:?}");
        out.stderr
    };
    let count = |stderr: &str, key| -> usize {
        stat(stderr, key)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key}= in {stderr}"))
    };
    let frames = reference(stream).len();

    let asked = decode(true, THREADING[0], "a trial asked for");
    let trial = stat(&asked, "trial").expect("trial=").to_string();
    assert!(
        trial.starts_with("sd:frame:") || trial.starts_with("sd:ffmpeg:"),
        "{trial}"
    );
    let facts = cache.join("daedalus/devices.tsv");
    let text = std::fs::read_to_string(&facts).expect("the decision cached");
    let line = text
        .lines()
        .find(|l| l.contains(" trial sd one-context\t"))
        .unwrap_or_else(|| panic!("no sd decision in {text}"));
    let picked = trial.split(':').nth(1).expect("class:pick:ratio");
    let value = line.split('\t').nth(1).expect("key, tab, value");
    assert!(
        value.starts_with(&format!("{picked} ")),
        "{line} for {trial}"
    );
    let key = line
        .split('\t')
        .next()
        .expect("key")
        .replace(" one-context", " {}");
    // A trial, on the device's first decode as on a later one, begins the set-up at the first
    // frame after the context's first that would take the GPU, which goes to FFmpeg. The
    // first decode has the builder process build its kernels (no cache held them): lavapipe
    // keeps nothing in pipeline caches, the builder says so, which is kept, so the next decode
    // starts none.
    assert_eq!(count(&asked, "frames_before_device"), 1, "{asked}");
    assert_eq!(
        stat(&asked, "kernel_builder"),
        Some("nothing-kept"),
        "{asked}"
    );
    let again = decode(true, THREADING[0], "a trial asked for again");
    assert_eq!(count(&again, "frames_before_device"), 1, "{again}");
    assert_eq!(stat(&again, "kernel_builder"), Some("-"), "{again}");
    assert!(
        stat(&again, "trial")
            .is_some_and(|t| t.starts_with("sd:frame:") || t.starts_with("sd:ffmpeg:")),
        "{again}"
    );

    // Each decision, for one context and for frame threads alike: 4 frame threads make 8
    // contexts where the frame path was kept for the stream's size, 4 where FFmpeg was.
    for (pick, threading, contexts) in [
        ("ffmpeg", THREADING[0], 1),
        ("ffmpeg", THREADING[1], 4),
        ("frame", THREADING[0], 1),
        ("frame", THREADING[1], 8),
    ] {
        let mut edited: String = text
            .lines()
            .filter(|l| !l.contains(" trial "))
            .collect::<Vec<_>>()
            .join("\n");
        for t in ["one-context", "frame-threads"] {
            edited += &format!("\n{}\t{pick} 0.900", key.replace("{}", t));
        }
        std::fs::write(&facts, edited + "\n").expect("cache rewritten");
        let what = format!("the cached decision {pick}");
        let out = decode(false, threading, &what);
        let what = format!("{what}, {}", threading.0);
        let line = out
            .lines()
            .find(|l| l.starts_with("daedalus: device="))
            .expect("stats line");
        assert_eq!(
            stat(&out, "trial"),
            Some(format!("sd:{pick}:0.90:cached").as_str()),
            "{what}: {line}"
        );
        assert_eq!(stat(&out, "path"), Some(pick), "{what}: {line}");
        let made = if contexts > 1 {
            format!("4->{contexts}")
        } else {
            "-".into()
        };
        assert_eq!(
            stat(&out, "frame_contexts"),
            Some(made.as_str()),
            "{what}: {line}"
        );
        let (gpu, declined) = (count(&out, "frames_gpu"), count(&out, "frames_declined"));
        let (parsed, ffmpeg) = (count(&out, "frames_parsed"), count(&out, "frames_ffmpeg"));
        // (The stream's hidden frames count among the decoded, not among the output.)
        assert!(parsed + declined >= frames, "{what}: {line}");
        if pick == "ffmpeg" {
            assert_eq!((gpu, parsed), (0, 0), "{what}: {line}");
            assert_eq!(stat(&out, "device"), Some("\"none\""), "{what}: {line}");
        } else {
            // Declined: the frame that began the device's set-up, and the first frame of each
            // decoder context, the decode's (one per frame thread) and that of the decoder
            // ffmpeg probes the stream with.
            let before_device = count(&out, "frames_before_device");
            assert_eq!((gpu, ffmpeg - declined), (parsed, 0), "{what}: {line}");
            assert_eq!(before_device, 1, "{what}: {line}");
            assert!(
                (contexts..=contexts + 1).contains(&(declined - before_device)),
                "{what}: {line}"
            );
            assert!(count(&out, "imports_late") > 0, "{what}: {line}");
            // The set-up made a submitter for each context before the switch, which the
            // contexts' first frames on the GPU took.
            let ahead = stat(&out, "objects_ahead").expect("objects_ahead=");
            let (made, taken) = ahead.split_once('/').expect("made/taken");
            assert_eq!(made, contexts.to_string(), "{what}: {line}");
            assert_eq!(taken, made, "{what}: {line}");
        }
    }
}

/// Decodes `stream` on the frame path with `env` added and checks the frames against Debian's
/// ffmpeg; returns the stderr lines other than the stats line, and the stats line.
fn decode_with(
    stream: &Stream,
    threading: (&str, &[&str]),
    env: &[(&str, &str)],
) -> (Vec<String>, String) {
    let mut all = vec![("DAEDALUS_PATH", "frame")];
    all.extend_from_slice(env);
    let what = format!("{} / {} / {env:?}", stream.name, threading.0);
    let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &all, &what)
        .unwrap_or_else(|e| panic!("{e}"));
    let (stats, said): (Vec<&str>, Vec<&str>) = out
        .stderr
        .lines()
        .partition(|l| l.starts_with("daedalus: device="));
    (said.iter().map(|l| l.to_string()).collect(), stats.concat())
}

/// Without a Vulkan device: one warning, and FFmpeg's second pass reconstructs every frame.
#[test]
fn without_a_device_ffmpeg_reconstructs_after_one_warning() {
    let missing = "/nonexistent/daedalus-test-icd.json";
    let env = [("VK_ICD_FILENAMES", missing), ("VK_DRIVER_FILES", missing)];
    for threading in THREADING {
        let (said, line) = decode_with(stream_named("cif"), threading, &env);
        assert_eq!(said.len(), 1, "{}: {said:?}", threading.0);
        assert!(
            said[0].starts_with("daedalus: warning: no usable Vulkan device"),
            "{said:?}"
        );
        assert_eq!(stat(&line, "path"), Some("frame-cpu"), "{line}");
        assert_eq!(stat(&line, "frames_gpu"), Some("0"), "{line}");
    }
}

/// The frame path's kernels failing to build (injected): one warning, FFmpeg's second pass
/// reconstructs every frame.
#[test]
fn kernels_that_fail_to_build_leave_frames_to_ffmpeg_after_one_warning() {
    let env = [("DAEDALUS_TEST_FAIL_KERNELS", "optional")];
    let (said, line) = decode_with(stream_named("cif"), THREADING[0], &env);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("daedalus: warning: shader vp9_"),
        "{said:?}"
    );
    assert_eq!(stat(&line, "path"), Some("frame-cpu"), "{line}");
    assert_eq!(stat(&line, "frames_gpu"), Some("0"), "{line}");
}

/// A submission that fails as a lost device would (the first frame's, a later one's, with
/// earlier frames still on the GPU), with one thread, frame threads and slice threads: one
/// error, that frame and every later one reconstructed by FFmpeg from the same parsed data.
#[test]
fn a_failed_submission_leaves_that_frame_and_later_ones_to_ffmpeg() {
    let stream = stream_named("cif");
    for (threading, at) in [
        (THREADING[0], "1"),
        (THREADING[0], "5"),
        (THREADING[0], "9"),
        (THREADING[1], "8"),
        (THREADING[2], "7"),
    ] {
        let (said, line) = decode_with(stream, threading, &[("DAEDALUS_TEST_FAIL_SUBMISSION", at)]);
        let what = format!("{} / submission {at}", threading.0);
        assert_eq!(said.len(), 1, "{what}: {said:?}");
        assert!(
            said[0].contains("GPU disabled after an error"),
            "{what}: {said:?}"
        );
        let count = |key| -> u64 { stat(&line, key).and_then(|v| v.parse().ok()).unwrap_or(0) };
        // (The frames that began on the GPU before the failure was known fail too, each to
        // FFmpeg: with frame threads those in flight, and with one context the next frame,
        // whose parse may begin while the held frame's submission still runs.)
        let fallbacks = count("fallbacks");
        let in_flight = if threading.0.contains("frame") {
            u64::MAX
        } else {
            2
        };
        assert!((1..=in_flight).contains(&fallbacks), "{what}: {line}");
        assert_eq!(
            count("frames_gpu") + count("frames_ffmpeg"),
            count("frames_parsed"),
            "{what}: {line}"
        );
        assert!(
            count("submissions") < at.parse::<u64>().unwrap(),
            "{what}: {line}"
        );
    }
}

/// A decoder context makes its GPU objects once its first frame is parsed, outside the span in
/// which FFmpeg keeps the next frame thread waiting. Where they cannot be made (an allocation
/// failing), FFmpeg's second pass reconstructs that frame from what was parsed, after one
/// warning, and the GPU goes on with the others: every frame equals Debian's ffmpeg.
#[test]
fn gpu_objects_that_cannot_be_made_leave_that_frame_to_ffmpeg() {
    let stream = stream_named("tiles-720p");
    for (threading, at) in [(THREADING[0], "2"), (THREADING[1], "3")] {
        let (said, line) = decode_with(stream, threading, &[("DAEDALUS_TEST_FAIL_OBJECTS", at)]);
        let what = format!("{} / objects {at}", threading.0);
        assert_eq!(said.len(), 1, "{what}: {said:?}");
        assert!(said[0].contains("could not be made"), "{what}: {said:?}");
        let count = |key| -> u64 { stat(&line, key).and_then(|v| v.parse().ok()).unwrap_or(0) };
        assert_eq!(count("fallbacks"), 1, "{what}: {line}");
        assert!(count("frames_gpu") > 1, "{what}: {line}");
        assert_eq!(
            count("frames_gpu") + count("frames_ffmpeg"),
            count("frames_parsed"),
            "{what}: {line}"
        );
    }
}

/// Damaged streams (`scripts/gen-streams`' `damaged-*`) in which some frames' transforms
/// overflow FFmpeg's 16-bit lanes, frames the frame path leaves to FFmpeg's second pass after
/// the GPU ran them, while other frame threads' frames are in flight. Each frame, and every
/// frame that reads it, equals Debian's ffmpeg at the same threading, every run (a frame-thread
/// decode three times: a race shows as a run that differs): with the frame path forced, in host
/// memory and on device-local copies, and where `DAEDALUS_PATH` is unset, the decoder switching
/// between the frame path and its own decode every three frames (a CPU device runs no trial
/// otherwise).
/// With frame threads frames do fall back, and the frames that read them on the GPU meanwhile
/// with them.
#[test]
fn damaged_frames_left_to_ffmpeg_equal_debian_ffmpeg_every_run() {
    const THREADINGS: [(&str, &[&str]); 4] = [
        ("1 thread", &["-threads", "1"]),
        (
            "2 frame threads",
            &["-threads", "2", "-thread_type", "frame"],
        ),
        (
            "4 frame threads",
            &["-threads", "4", "-thread_type", "frame"],
        ),
        (
            "4 slice threads",
            &["-threads", "4", "-thread_type", "slice"],
        ),
    ];
    let forced: [(&str, &str); 1] = [("DAEDALUS_PATH", "frame")];
    // (The set-up waited for: see `switching_paths_between_frames_equals_debian_ffmpeg`.)
    let switching = [
        ("DAEDALUS_PATH", ""),
        ("DAEDALUS_TEST_ALTERNATE", "3"),
        ("DAEDALUS_TEST_SETUP", "wait"),
    ];
    let mut jobs = Vec::new();
    for stream in &setup().damaged {
        for threading in THREADINGS {
            let runs = if threading.0.contains("frame") { 3 } else { 1 };
            // FFmpeg's own decode of these copies is the same every run, the premise of the test.
            let references: Vec<_> = (0..runs)
                .map(|_| debian_ffmpeg(&stream.path, threading.1))
                .collect();
            assert!(
                references.iter().all(|r| *r == references[0]) && !references[0].1.is_empty(),
                "{} / {}: Debian's ffmpeg differs between runs: not a copy this test can use",
                stream.name,
                threading.0
            );
            for run in 0..runs {
                let memory = ["", "copies"][run % 2];
                for env in [&forced[..], &switching[..]] {
                    let mut env = env.to_vec();
                    env.push(("DAEDALUS_TEST_MEMORY", memory));
                    jobs.push((stream, threading, env, references[0].clone()));
                }
            }
        }
    }
    let fell_back = std::sync::Mutex::new(Vec::new());
    let count = jobs.len();
    let failures = in_parallel(jobs, |(stream, threading, env, (status, reference))| {
        let what = format!("{} / {} / {env:?}", stream.name, threading.0);
        let out = ours(
            Way::Preload,
            "gpu",
            &stream.path,
            threading.1,
            "framemd5",
            &env,
        );
        if out.status != status {
            return Err(format!(
                "{what}: exit {:?}, Debian's {status:?}",
                out.status
            ));
        }
        let ours = frames(&out.stdout);
        if ours != reference {
            let at = ours.iter().zip(&reference).position(|(a, b)| a != b);
            return Err(format!(
                "{what}: differs from Debian's ffmpeg at frame {at:?} ({} vs {} frames): {}",
                ours.len(),
                reference.len(),
                out.stderr
            ));
        }
        let count = |key| stat(&out.stderr, key).and_then(|v| v.parse::<u64>().ok());
        let (Some(gpu), Some(fallbacks)) = (count("frames_gpu"), count("fallbacks")) else {
            return Err(format!("{what}: no stats line: {}", out.stderr));
        };
        if gpu == 0 {
            return Err(format!("{what}: no frame on the GPU: {}", out.stderr));
        }
        if env[0] == ("DAEDALUS_PATH", "frame") && threading.0.contains("frame") {
            fell_back
                .lock()
                .unwrap()
                .push((stream.name.clone(), fallbacks));
        }
        Ok(())
    });
    assert_all_decoded(&failures, count, "decodes of damaged streams");
    for stream in &setup().damaged {
        let fell = fell_back.lock().unwrap();
        let of_stream: Vec<u64> = fell
            .iter()
            .filter(|(name, _)| *name == stream.name)
            .map(|(_, n)| *n)
            .collect();
        assert!(
            !of_stream.is_empty() && of_stream.iter().all(|&n| n > 0),
            "{}: with frame threads no frame fell back ({of_stream:?}): the copy no longer \
             reaches the fallback",
            stream.name
        );
    }
}

/// A device lost (a failure injected at a submission, or into the wait after the GPU ran it)
/// while frames are in flight: the frames held while the decoder goes on (with one thread and
/// slice threads the one it holds while it parses the next; with frame threads each thread's,
/// until frame threading hands it out) then go to FFmpeg's second pass as they were parsed.
/// Those frames and every later one are FFmpeg's, and each decode equals Debian's ffmpeg, run
/// after run.
#[test]
fn a_device_lost_with_frames_in_flight_keeps_every_frame_exact() {
    let stream = stream_named("error-resilient");
    let mut jobs = Vec::new();
    for at in ["2", "5", "8"] {
        for step in ["submit", "wait"] {
            jobs.extend([(THREADING[1], at, step); 2]);
        }
    }
    jobs.extend([
        (THREADING[0], "3", "wait"),
        (THREADING[0], "6", "wait"),
        (THREADING[2], "4", "wait"),
    ]);
    let count = jobs.len();
    let failures = in_parallel(jobs, |(threading, at, step)| {
        let env = [
            ("DAEDALUS_PATH", "frame"),
            ("DAEDALUS_TEST_FAIL_SUBMISSION", at),
            ("DAEDALUS_TEST_FAIL_STEP", step),
        ];
        let what = format!("{} / {} / {env:?}", stream.name, threading.0);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)?;
        let said = messages(&out.stderr);
        let count = |key| stat(&out.stderr, key).and_then(|v| v.parse::<u64>().ok());
        if said.len() != 1 || !said[0].contains("GPU disabled after an error") {
            return Err(format!("{what}: expected one error: {said:?}"));
        }
        if count("fallbacks").is_none_or(|n| n == 0) {
            return Err(format!("{what}: no frame fell back: {}", out.stderr));
        }
        if count("frames_held").is_none_or(|n| n == 0) {
            return Err(format!("{what}: no frame was held: {}", out.stderr));
        }
        Ok(())
    });
    assert_all_decoded(&failures, count, "decodes with a lost device");
}

/// A frame thread whose frame is cut short (the stream's end cut off mid-frame) while the frames
/// before it are held: frame-serial's frames adapt their probabilities after their tiles, so
/// the frame's parse and its reconstruction of what was parsed run while the thread still sets
/// up, which the user's thread, finishing the held frames, waits for before it drains. The
/// decode ends as Debian's ffmpeg's, run after run.
#[test]
fn a_frame_cut_short_behind_held_frames_ends_as_debian_ffmpegs() {
    let stream = stream_named("frame-serial");
    let data = std::fs::read(&stream.path).unwrap();
    let dir = std::env::temp_dir().join(format!("daedalus-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let threading: &[&str] = &["-threads", "4", "-thread_type", "frame"];
    let mut jobs = Vec::new();
    for keep in [55, 90] {
        let path = dir.join(format!("frame-serial-{keep}.ivf"));
        std::fs::write(&path, &data[..data.len() * keep / 100]).unwrap();
        let theirs = debian_ffmpeg(&path, threading);
        jobs.extend([(path.clone(), theirs.clone()), (path, theirs)]);
    }
    let count = jobs.len();
    let failures = in_parallel(jobs, |(path, (status, reference))| {
        let env = [("DAEDALUS_PATH", "frame")];
        let out = ours(Way::Preload, "gpu", &path, threading, "framemd5", &env);
        let what = path.display();
        if (out.status, frames(&out.stdout)) != (status, reference) {
            return Err(format!("{what}: not Debian's: {}", out.stderr));
        }
        let held = stat(&out.stderr, "frames_held").and_then(|v| v.parse::<u64>().ok());
        if held.is_none_or(|n| n == 0) {
            return Err(format!("{what}: no frame held: {}", out.stderr));
        }
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert_all_decoded(&failures, count, "decodes cut short");
}

/// `data` (an IVF file) with its last frame's data cut to `keep` percent.
fn last_frame_cut(data: &[u8], keep: usize) -> Vec<u8> {
    let mut at = 32; // the file header
    let mut last = at;
    while at + 12 <= data.len() {
        last = at;
        at += 12 + u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    }
    let size = u32::from_le_bytes(data[last..last + 4].try_into().unwrap()) as usize;
    let kept = size * keep / 100;
    let mut out = data[..last].to_vec();
    out.extend_from_slice(&(kept as u32).to_le_bytes());
    out.extend_from_slice(&data[last + 4..last + 12 + kept]);
    out
}

/// With frame threads a frame's tile columns are parsed apart, on workers of its decoder
/// context. The last frame's data, cut short inside its last tile column, ends that column
/// early: the attempt is dropped and the frame parsed block by block, failing where FFmpeg's
/// own decode fails. (Nothing after it reads what the failed parse left, so the decode is
/// deterministic.) On the GPU and on the frame path's CPU side, run after run, the decode
/// ends as Debian's ffmpeg's.
#[test]
fn a_tile_column_cut_short_fails_its_frame_as_debian_ffmpeg() {
    let stream = stream_named("tiles-720p");
    let data = std::fs::read(&stream.path).unwrap();
    let dir = std::env::temp_dir().join(format!("daedalus-tile-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let threading: &[&str] = &["-threads", "4", "-thread_type", "frame"];
    let path = dir.join("tiles-720p-last-cut.ivf");
    std::fs::write(&path, last_frame_cut(&data, 90)).unwrap();
    let theirs = debian_ffmpeg(&path, threading);
    assert_eq!(
        theirs.1.len() + 1,
        reference(stream).len(),
        "the frame cut short fails in Debian's ffmpeg"
    );
    let mut jobs = Vec::new();
    for mode in ["gpu", "cpu", "gpu", "cpu"] {
        jobs.push((mode, theirs.clone()));
    }
    let count = jobs.len();
    let failures = in_parallel(jobs, |(mode, (status, reference))| {
        let env = [("DAEDALUS_PATH", "frame")];
        let out = ours(Way::Preload, mode, &path, threading, "framemd5", &env);
        let what = format!("{} / {mode}", path.display());
        if (out.status, frames(&out.stdout)) != (status, reference) {
            return Err(format!("{what}: not Debian's: {}", out.stderr));
        }
        let path = if mode == "gpu" { "frame" } else { "frame-cpu" };
        if stat(&out.stderr, "path") != Some(path) {
            return Err(format!("{what}: not path={path}: {}", out.stderr));
        }
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert_all_decoded(&failures, count, "decodes of a tile column cut short");
}

/// The parse time of the stats line counts every thread that parsed: with frame threads a
/// frame's tile columns are parsed on workers of its decoder context (frame path, CPU side),
/// whose time the decoder hands over. Without it the figure fell to under half the one-thread
/// one (the workers parse, the frame's own thread waits); with it, it is at least as large,
/// less the probe's frame, which both decodes parse on one thread.
#[test]
fn the_parse_time_counts_the_threads_that_parsed_tile_columns() {
    let stream = stream_named("tiles-720p");
    let parse_ms = |threading: &[&str]| -> f64 {
        let env = [("DAEDALUS_PATH", "frame")];
        let out = ours(Way::Preload, "cpu", &stream.path, threading, "null", &env);
        assert_eq!(out.status, Some(0), "{}", out.stderr);
        assert_eq!(
            stat(&out.stderr, "path"),
            Some("frame-cpu"),
            "{}",
            out.stderr
        );
        stat(&out.stderr, "parse_cpu_ms")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no parse_cpu_ms= in {}", out.stderr))
    };
    let one = parse_ms(&["-threads", "1"]);
    let apart = parse_ms(&["-threads", "4", "-thread_type", "frame"]);
    assert!(
        apart >= 0.8 * one,
        "parse_cpu_ms {apart} with 4 frame threads against {one} with one"
    );
}

/// ffmpeg with `-vf showinfo` on `stream`: its exit status, frames, and showinfo's line for
/// each frame (timestamps and packet position among it), without the filter's address.
fn shown(program: Option<&str>, stream: &Stream, options: &[&[&str]; 3]) -> Shown {
    let [threading, input, output] = options;
    let mut args: Vec<String> = ["-nostdin", "-hide_banner", "-v", "info", "-bitexact"]
        .iter()
        .chain(threading.iter())
        .chain(input.iter())
        .map(|s| s.to_string())
        .collect();
    if program.is_some() {
        args.extend(["-c:v".to_string(), "vp9".to_string()]);
    }
    args.extend(["-i".into(), stream.path.display().to_string()]);
    args.extend(["-autoscale", "0", "-vf", "showinfo"].map(String::from));
    args.extend(output.iter().map(|s| s.to_string()));
    args.extend(["-f", "framemd5", "-"].map(String::from));
    let out = match program {
        Some(debian) => {
            let mut cmd = std::process::Command::new(debian);
            cmd.args(&args);
            run(cmd)
        }
        None => ours_with_args(Way::Preload, "gpu", &args, &[("DAEDALUS_PATH", "frame")]),
    };
    let info = out
        .stderr
        .lines()
        .filter_map(|l| l.split_once("Parsed_showinfo_0 @ "))
        .map(|(_, rest)| rest.split_once("] ").map_or(rest, |(_, r)| r).to_string())
        .filter(|l| l.starts_with("n:"))
        .collect();
    (out.status, frames(&out.stdout), info, out.stderr)
}

/// Exit status, frames, showinfo's lines, stderr.
type Shown = (Option<i32>, Vec<String>, Vec<String>, String);

/// The frame path holds each frame while the decoder goes on: with one thread and slice threads
/// it parses the next and hands the frame out a call later; with frame threads the thread takes
/// its next packet, and frame threading finishes the frame before it hands it out (and on a
/// flush, in decode order). ffmpeg still gets the frames Debian's ffmpeg gets,
/// in order, each with its own packet's timestamps and position (`showinfo`), where it stops
/// early (`-frames:v`), seeks (`-ss`), loops (`-stream_loop`: drains, flushes and decodes
/// again in one process) and drains at the end, through invisible (alt-ref) and show-existing
/// frames. (Where ffmpeg stops early it drains the decoder, so its filters see the one frame
/// still held then, which it does not write, as with any decoder that hands frames out late.)
#[test]
fn held_frames_come_out_as_debian_ffmpeg_hands_them_out() {
    const CUTS: [(&[&str], &[&str]); 3] = [
        (&[], &["-frames:v", "7"]),
        (&["-ss", "0.4"], &[]),
        (&["-stream_loop", "1"], &[]),
    ];
    let mut jobs = Vec::new();
    for name in ["altref-2pass", "show-existing"] {
        for threading in THREADING {
            for (input, output) in CUTS {
                jobs.push((stream_named(name), threading, [threading.1, input, output]));
            }
        }
    }
    let count = jobs.len();
    let failures = in_parallel(jobs, |(stream, threading, options)| {
        let what = format!("{} / {} / {options:?}", stream.name, threading.0);
        let (status, frames, info, stderr) = shown(None, stream, &options);
        let theirs = shown(Some("/usr/bin/ffmpeg"), stream, &options);
        if theirs.0 != Some(0) || theirs.1.is_empty() || theirs.2.is_empty() {
            return Err(format!("{what}: Debian's ffmpeg: {}", theirs.3));
        }
        let stops_early = options[2].contains(&"-frames:v");
        let beyond = info.len().saturating_sub(theirs.2.len());
        if (status, &frames) != (theirs.0, &theirs.1)
            || !info.starts_with(&theirs.2)
            || beyond > usize::from(stops_early)
        {
            let at = info.iter().zip(&theirs.2).position(|(a, b)| a != b);
            return Err(format!(
                "{what}: exit {status:?}, {} frames ({} in Debian's); showinfo differs at \
                 {at:?}: {:?} vs {:?}",
                frames.len(),
                theirs.1.len(),
                at.and_then(|i| info.get(i)),
                at.and_then(|i| theirs.2.get(i)),
            ));
        }
        let held = stat(&stderr, "frames_held").and_then(|v| v.parse::<u64>().ok());
        if held.is_none_or(|n| n == 0) || stat(&stderr, "path") != Some("frame") {
            return Err(format!("{what}: no frame held on the GPU: {stderr}"));
        }
        Ok(())
    });
    assert_all_decoded(&failures, count, "decodes with held frames");
}

/// A caller that asks for low delay (`-flags low_delay`) gets each frame from the call that
/// decoded it: nothing is held, and the frames are Debian's ffmpeg's.
#[test]
fn low_delay_holds_no_frame() {
    let stream = stream_named("cif");
    let options: [&[&str]; 3] = [THREADING[0].1, &["-flags", "low_delay"], &[]];
    let (status, frames, info, stderr) = shown(None, stream, &options);
    let theirs = shown(Some("/usr/bin/ffmpeg"), stream, &options);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(
        !frames.is_empty() && frames == theirs.1 && info == theirs.2,
        "{stderr}"
    );
    assert_eq!(stat(&stderr, "path"), Some("frame"), "{stderr}");
    assert_eq!(stat(&stderr, "frames_held"), Some("0"), "{stderr}");
}

/// A panic in a frame's submission (a bug there), on the decoder context's submission thread
/// (one thread, frame threads) and on the decoder's own (low delay, where nothing is held):
/// said once, and the device is not used again: the frames that submission carried and every
/// later one are reconstructed by FFmpeg's second pass from what was parsed, every frame
/// Debian's ffmpeg's.
#[test]
fn a_panic_in_a_frames_submission_leaves_it_and_later_frames_to_ffmpeg() {
    let stream = stream_named("cif");
    let low_delay: (&str, &[&str]) = (
        "1 thread, low delay",
        &["-threads", "1", "-flags", "low_delay"],
    );
    let jobs = vec![(THREADING[0], "3"), (THREADING[1], "4"), (low_delay, "3")];
    let count = jobs.len();
    let failures = in_parallel(jobs, |(threading, at)| {
        let env = [
            ("DAEDALUS_PATH", "frame"),
            ("DAEDALUS_TEST_FAIL_SUBMISSION", at),
            ("DAEDALUS_TEST_FAIL_STEP", "panic"),
        ];
        let what = format!("{} / {} / {env:?}", stream.name, threading.0);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)?;
        let said: Vec<_> = messages(&out.stderr)
            .into_iter()
            .filter(|l| l.starts_with("daedalus"))
            .collect();
        if said.len() != 2
            || !said[0].contains("internal error in a frame's submission")
            || !said[1].contains("GPU disabled after an error")
        {
            return Err(format!(
                "{what}: expected the error and the GPU's end: {}",
                out.stderr
            ));
        }
        let n = |key| {
            stat(&out.stderr, key)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let (gpu, ffmpeg) = (n("frames_gpu"), n("frames_ffmpeg"));
        let before: u64 = at.parse::<u64>().unwrap() - 1;
        if n("fallbacks") == 0 || gpu + ffmpeg != n("frames_parsed") || gpu > before {
            return Err(format!(
                "{what}: that frame and later ones to FFmpeg: {}",
                out.stderr
            ));
        }
        let held = n("frames_held");
        if (held == 0) != threading.0.contains("low delay") {
            return Err(format!("{what}: frames held: {held}"));
        }
        Ok(())
    });
    assert_all_decoded(&failures, count, "decodes with a panic in a submission");
}
