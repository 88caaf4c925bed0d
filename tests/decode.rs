//! End to end, FATE style: every stream of the corpus (`scripts/gen-streams`) decoded by the
//! patched FFmpeg with daedalus gives, frame for frame (`-bitexact -f framemd5`), what Debian's
//! `/usr/bin/ffmpeg -c:v vp9` gives (AV1: `-c:v libdav1d`, the patched FFmpeg decoding through
//! the patched dav1d), and the VP9 corpus agrees with `vpxdec --md5`.
//!
//! Matrix: every stream x {1 thread, 4 frame threads, 4 slice threads} x {LD_PRELOAD, linked}
//! x {gpu with the device's frame memory, gpu on the frame pool, cpu}. Every run with daedalus prints its stats line (`DAEDALUS_STATS=1`), which must
//! name the expected path and show the transforms deferred for 8-bit streams: a run where the
//! library was not found cannot pass.
//!
//! Also: corrupted and truncated streams give the same frames, messages and exit status as the
//! same program without daedalus, within a time limit (with frame threads FFmpeg itself is not
//! deterministic on such input, so there only the exit status and the time limit are
//! compared); with no Vulkan device, one warning and the same frames.
//!
//! Needs `scripts/setup` (patched FFmpeg, release library) and `scripts/gen-streams`; fails
//! with instructions where something is missing or stale.

mod decoding;

use decoding::*;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// Calls each family deferred (transforms, motion compensation, loop filters by edge and by
/// superblock plane), and motion compensations that read their reference in place.
type Deferred = [u64; 5];

/// Checks one decode, with `env` added to its environment, against the reference and its
/// stats line against the expected path; returns what was deferred and `placed_on_cpu`.
fn check_with(
    stream: &Stream,
    way: Way,
    mode: &str,
    threading: (&str, &[&str]),
    env: &[(&str, &str)],
) -> Result<(Deferred, Placed), String> {
    let what = format!(
        "{} / {way:?} / {mode} / {} / {env:?}",
        stream.name, threading.0
    );
    let out = decode_as_debian(stream, way, mode, threading, env, &what)?;
    let path = stat(&out.stderr, "path").ok_or_else(|| {
        format!(
            "{what}: no stats line, daedalus did not run: {}",
            out.stderr
        )
    })?;
    // 10- and 12-bit streams keep FFmpeg's functions: nothing is deferred, no device set up.
    let expected = if stream.high_bit_depth && mode == "gpu" {
        "unused"
    } else {
        mode
    };
    if path != expected {
        return Err(format!("{what}: ran on path {path}, expected {expected}"));
    }
    let count = |key| -> u64 {
        stat(&out.stderr, key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let deferred = count("deferred") + count("placed_on_cpu");
    if stream.high_bit_depth != (deferred == 0) {
        return Err(format!(
            "{what}: {deferred} calls deferred (expected {})",
            if stream.high_bit_depth {
                "none"
            } else {
                "some"
            }
        ));
    }
    // (With families placed on the CPU, the rest may all complete early on the CPU too.)
    let placed = env
        .iter()
        .any(|(k, v)| *k == "DAEDALUS_KERNELS" && v.contains("cpu"));
    if mode == "gpu" && !stream.high_bit_depth && !placed && count("gpu_calls") == 0 {
        return Err(format!("{what}: no call ran on the GPU"));
    }
    // The superblock passes' order the decode asked for is the one the GPU used.
    let order = env.iter().find(|(k, _)| *k == "DAEDALUS_LF_ORDER");
    if let (Some((_, asked)), "gpu", false) = (order, path, stream.high_bit_depth) {
        let used = stat(&out.stderr, "lf_order").unwrap_or("missing");
        let no_pass = count("lf_sb_deferred") == 0 && used == "-";
        if used != *asked && !no_pass {
            return Err(format!("{what}: lf_order={used}, asked for {asked}"));
        }
    }
    if path == "gpu" && !stream.high_bit_depth {
        // The frames the GPU works on are in place, from the pool or imported, and no pixel
        // is copied between them and a staging buffer. Every frame buffer is daedalus's own
        // allocation, so that an import covers a buffer's whole life: none is imported again
        // for each frame that uses it.
        let memory = stat(&out.stderr, "frame_memory").unwrap_or("missing");
        let wanted = env
            .iter()
            .find(|(k, _)| *k == "DAEDALUS_FRAME_MEMORY")
            .map(|&(_, v)| v);
        let in_place = match memory {
            "pool" => {
                count("pool_buffers") > 0
                    && count("imports") == 0
                    && count("frame_buffers") == count("pool_buffers")
            }
            "import" => {
                count("imports") > 0
                    && count("pool_buffers") == 0
                    && count("frame_buffers") == count("imports")
            }
            _ => false,
        };
        if !in_place || wanted.is_some_and(|w| w != memory) {
            return Err(format!(
                "{what}: frame_memory={memory} (wanted {wanted:?}) with {} pool buffers, {} \
                 frame buffers and {} imports",
                count("pool_buffers"),
                count("frame_buffers"),
                count("imports")
            ));
        }
        // The patched frame pool gives each frame one buffer for its three planes, so that a
        // level of the loop filter is one dispatch rather than one per plane.
        if count("frames_in_one_buffer") != count("frames") || count("frames") == 0 {
            return Err(format!(
                "{what}: {} of {} frames have their planes in one buffer",
                count("frames_in_one_buffer"),
                count("frames")
            ));
        }
        // Job data copied into device-local memory where asked for, by every submission.
        let job_memory = env.iter().find(|(k, _)| *k == "DAEDALUS_JOB_MEMORY");
        let copies = count("device_job_copies");
        let copies_right = match job_memory.map(|&(_, v)| v) {
            Some("device") => copies > 0 && copies == count("submissions"),
            Some("host") => copies == 0,
            _ => true,
        };
        if !copies_right {
            return Err(format!(
                "{what}: {copies} device job copies for {} submissions",
                count("submissions")
            ));
        }
        if count("pixel_bytes_copied") != 0 {
            return Err(format!(
                "{what}: {} pixel bytes copied",
                count("pixel_bytes_copied")
            ));
        }
    }
    let unexpected: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| !l.starts_with("daedalus: device="))
        .collect();
    if !unexpected.is_empty() {
        return Err(format!("{what}: unexpected messages: {unexpected:?}"));
    }
    Ok((
        [
            count("itx_deferred"),
            count("mc_deferred"),
            count("lf_deferred"),
            count("lf_sb_deferred"),
            count("mc_source_in_place"),
        ],
        Placed {
            in_order: count("placed_on_cpu"),
            direct: stat(&out.stderr, "direct").unwrap_or("missing").to_string(),
        },
    ))
}

/// How a decode ran the families placed on the CPU: calls that went through daedalus, in
/// order after the pending calls on their pixels (`placed_on_cpu=`), and the families whose
/// FFmpeg functions its table kept (`direct=`).
struct Placed {
    in_order: u64,
    direct: String,
}

/// The streams a per-call setting that changes how the work reaches the device is checked on,
/// beside the whole corpus on the default (and with the CPU reference): one of each kind the
/// corpus has (tiny, odd and multi-superblock sizes, tiles, every subsampling, lossless, scaled
/// references, alt-ref and show-existing frames, keyframes only, extreme quantizer and
/// sharpness, natural content) and the high bit depths that keep FFmpeg's functions.
const VARIANT_STREAMS: [&str; 17] = [
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

/// Every stream of the corpus x every threading with `mode` and `env`, the two ways in turn
/// (each stream meets both over its threadings, and each threading both over the streams):
/// how the program finds the library does not change the decode, so the pair is covered once.
fn matrix(mode: &str, env: &[(&str, &str)]) {
    let ways = [Way::Preload, Way::Linked];
    matrix_of(setup().streams.iter().collect(), &ways, mode, env)
}

/// [`matrix`] on [`VARIANT_STREAMS`], preloaded only: how the program finds the library does
/// not change how the work reaches the device, and [`matrix`] runs the linked program on the
/// whole corpus.
fn variant_matrix(mode: &str, env: &[(&str, &str)]) {
    let streams: Vec<&Stream> = VARIANT_STREAMS.iter().map(|n| stream_named(n)).collect();
    matrix_of(streams, &[Way::Preload], mode, env)
}

fn matrix_of(streams: Vec<&Stream>, ways: &[Way], mode: &str, env: &[(&str, &str)]) {
    let mut jobs = Vec::new();
    for (i, stream) in streams.into_iter().enumerate() {
        for (t, threading) in THREADING.into_iter().enumerate() {
            jobs.push((stream.clone(), ways[(i + t) % ways.len()], threading));
        }
    }
    let count = jobs.len();
    let totals = Mutex::new([0u64; 5]);
    let failures = in_parallel(jobs, |(stream, way, threading)| {
        let (deferred, _) = check_with(&stream, way, mode, threading, env)?;
        let mut t = totals.lock().unwrap();
        for (t, d) in t.iter_mut().zip(deferred) {
            *t += d;
        }
        Ok(())
    });
    assert_all_decoded(&failures, count, "decodes");
    let [itx, mc, lf, lf_sb, in_place] = totals.into_inner().unwrap();
    println!(
        "{count} decodes on the {mode} path ({env:?}) equal Debian's ffmpeg; deferred: {itx} transforms, \
         {mc} motion compensations ({in_place} reading the reference in place), {lf} loop filters, \
         {lf_sb} superblock loop-filter planes"
    );
    // Every family took part, and on the GPU motion compensation read references in place.
    assert!(
        itx > 0 && mc > 0 && lf + lf_sb > 0,
        "a family was never deferred"
    );
    // On the GPU the decoder's superblocks go through the superblock hook: with
    // DAEDALUS_LF_CALLS=superblocks all of them, and by default with the split order; with the
    // rows order by default those of threads that do not publish rows (one thread, slice
    // threads). With `edges`, and without a device, it declines and FFmpeg's walk calls
    // the per-edge functions.
    let setting = |name: &str| env.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let split = matches!(setting("DAEDALUS_LF_ORDER"), None | Some("split"));
    match setting("DAEDALUS_LF_CALLS") {
        _ if mode != "gpu" => assert_eq!(lf_sb, 0, "the superblock hook took part"),
        None if split => {
            assert!(lf_sb > 0, "no superblock went through the superblock hook");
            assert_eq!(lf, 0, "superblocks filtered edge by edge");
        }
        Some("superblocks") => {
            assert!(lf_sb > 0, "no superblock went through the superblock hook");
            assert_eq!(lf, 0, "superblocks filtered edge by edge");
        }
        Some("edges") => assert_eq!(lf_sb, 0, "the superblock hook took part"),
        _ => {
            assert!(lf_sb > 0, "no superblock went through the superblock hook");
            assert!(
                lf > 0,
                "frame threads' superblocks were not filtered edge by edge"
            );
        }
    }
    assert!(
        mode != "gpu" || in_place > 0,
        "no reference was read in place"
    );
}

/// The device's own choice of frame memory (lavapipe imports the decoder's frames).
#[test]
fn gpu_path_equals_debian_ffmpeg() {
    matrix("gpu", &[]);
}

/// The portable path, as on a device without host-pointer import: the decoder's frames and
/// row backup in device memory of daedalus, nothing imported.
#[test]
fn gpu_path_on_the_frame_pool_equals_debian_ffmpeg() {
    variant_matrix("gpu", &[("DAEDALUS_FRAME_MEMORY", "pool")]);
}

/// Jobs and coefficients copied into device-local memory before each submission, as where
/// the host buffers are across a bus (lavapipe's are the device's own memory, so by default it
/// reads them in place).
#[test]
fn gpu_path_with_job_data_in_device_memory_equals_debian_ffmpeg() {
    variant_matrix("gpu", &[("DAEDALUS_JOB_MEMORY", "device")]);
}

/// The loop filter one call per edge, on every thread.
#[test]
fn gpu_path_with_loop_filter_by_edges_equals_debian_ffmpeg() {
    variant_matrix("gpu", &[("DAEDALUS_LF_CALLS", "edges")]);
}

/// The loop filter one call per superblock (`ff_vp9_loopfilter_sb`'s hook; by default, with
/// its passes split where the masks allow, the whole corpus checks it) on every thread, with
/// the planes of a superblock row per workgroup (`DAEDALUS_LF_ORDER=rows`).
#[test]
fn gpu_path_with_superblock_loop_filter_by_rows_equals_debian_ffmpeg() {
    variant_matrix(
        "gpu",
        &[
            ("DAEDALUS_LF_CALLS", "superblocks"),
            ("DAEDALUS_LF_ORDER", "rows"),
        ],
    );
}

/// A frame's work submitted in parts while one thread goes on decoding the rest: the first
/// part at half its superblock rows (`DAEDALUS_FRAME_SPLIT=50`), on imported frames and on the
/// frame pool; and, with only the loop filter deferred (motion compensation and transforms on
/// the CPU), a part at every row whose previous part has finished (`rows`), on both too and
/// by default (no setting: `auto`). Every decode equals Debian's ffmpeg, and frames did split
/// every way. With the loop filter alone deferred, intra syncs inside their superblock row
/// skip the pending work (it is all above them); with every family deferred none does.
#[test]
fn gpu_path_with_frames_split_equals_debian_ffmpeg() {
    let mut jobs = Vec::new();
    let streams = VARIANT_STREAMS.iter().map(|n| stream_named(n));
    for stream in streams.filter(|st| !st.high_bit_depth) {
        for (split, memory) in [
            ("50", "import"),
            ("50", "pool"),
            ("rows", "import"),
            ("rows", "pool"),
            ("default", "import"),
        ] {
            jobs.push((stream.clone(), split, memory));
        }
    }
    let count = jobs.len();
    let splits = Mutex::new([0u64; 3]);
    let intra_in_row = Mutex::new([0u64; 3]);
    let failures = in_parallel(jobs, |(stream, split, memory)| {
        let kernels = if split == "50" {
            "all=gpu"
        } else {
            "mc=cpu,itx=cpu,lf=gpu"
        };
        let mut env = vec![
            ("DAEDALUS_FRAME_MEMORY", memory),
            ("DAEDALUS_KERNELS", kernels),
        ];
        if split != "default" {
            env.push(("DAEDALUS_FRAME_SPLIT", split));
        }
        let what = format!("{} / split {split} / {memory}", stream.name);
        let threading: (&str, &[&str]) = ("1 thread", &["-threads", "1"]);
        let out = decode_as_debian(&stream, Way::Preload, "gpu", threading, &env, &what)?;
        let split_count: u64 = stat(&out.stderr, "frame_splits")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{what}: no frame_splits in {}", out.stderr))?;
        let in_row: u64 = stat(&out.stderr, "intra_syncs_in_row")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{what}: no intra_syncs_in_row in {}", out.stderr))?;
        let way = match split {
            "50" => 0,
            "rows" => 1,
            _ => 2,
        };
        splits.lock().unwrap()[way] += split_count;
        intra_in_row.lock().unwrap()[way] += in_row;
        Ok(())
    });
    assert_all_decoded(&failures, count, "decodes");
    let [at_half, by_rows, by_default] = splits.into_inner().unwrap();
    let in_row = intra_in_row.into_inner().unwrap();
    println!(
        "{count} decodes with frames split equal Debian's ffmpeg; {at_half} frames split at \
         half, {by_rows} parts submitted by rows, {by_default} by default; intra syncs \
         inside their superblock row left unchecked: {in_row:?}"
    );
    assert!(at_half > 0, "no frame split at half");
    assert!(by_rows > 0, "no part submitted by rows");
    assert!(by_default > 0, "no part submitted by rows by default");
    // Only where the loop filter alone is deferred may an intra sync skip the pending work.
    assert_eq!(
        in_row[0], 0,
        "an intra sync went unchecked with every family deferred"
    );
    assert!(
        in_row[1] > 0 && in_row[2] > 0,
        "no intra sync went unchecked with the loop filter alone deferred"
    );
}

/// By default (`auto`) a frame splits only where `rows` applies, without a word: every family
/// on the GPU at `-threads 1` leaves its frames whole, and so does the loop filter alone in
/// the rows order (`DAEDALUS_LF_ORDER=rows`, whose long chain did not pay for parts); `off`
/// leaves them whole with only the loop filter deferred.
#[test]
fn frames_stay_whole_where_rows_do_not_apply_or_split_is_off() {
    let stream = stream_named("natural-bikes");
    let threading: (&str, &[&str]) = ("1 thread", &["-threads", "1"]);
    let cases: [&[(&str, &str)]; 3] = [
        &[("DAEDALUS_KERNELS", "all=gpu")],
        &[
            ("DAEDALUS_KERNELS", "mc=cpu,itx=cpu,lf=gpu"),
            ("DAEDALUS_LF_ORDER", "rows"),
        ],
        &[
            ("DAEDALUS_KERNELS", "mc=cpu,itx=cpu,lf=gpu"),
            ("DAEDALUS_FRAME_SPLIT", "off"),
        ],
    ];
    for env in cases {
        let what = format!("{} / {env:?}", stream.name);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, env, &what)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            stat(&out.stderr, "frame_splits"),
            Some("0"),
            "{what}: {}",
            out.stderr
        );
        assert!(
            !out.stderr.contains("DAEDALUS_FRAME_SPLIT"),
            "{what}: {}",
            out.stderr
        );
    }
}

/// A split setting that cannot apply (`rows` with motion compensation on the GPU; any split
/// under frame threads, which submit every row they publish) says so once on stderr, and the
/// decode stays exact. `rows` then leaves the frames whole. (A frame thread learns that it
/// publishes rows at its first published row, so its very first rows may still split.)
#[test]
fn frame_split_that_cannot_apply_says_so_once() {
    let stream = stream_named("natural-bikes");
    // (split, threading, the reason the warning gives); motion compensation on the GPU.
    let cases = [
        ("rows", THREADING[0], "`rows` applies only"),
        ("50", THREADING[1], "frame threads"),
    ];
    for (split, threading, why) in cases {
        let env = [
            ("DAEDALUS_FRAME_SPLIT", split),
            ("DAEDALUS_KERNELS", "all=gpu"),
        ];
        let what = format!("{} / split {split} / {}", stream.name, threading.0);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)
            .unwrap_or_else(|e| panic!("{e}"));
        if split == "rows" {
            let splits = stat(&out.stderr, "frame_splits");
            assert_eq!(splits, Some("0"), "{what}: {}", out.stderr);
        }
        let said: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("DAEDALUS_FRAME_SPLIT is set but does not apply"))
            .collect();
        assert_eq!(
            said.len(),
            1,
            "{what}: one warning expected: {}",
            out.stderr
        );
        assert!(said[0].contains(why), "{what}: {}", said[0]);
    }
}

/// A submission that fails while parts of frames are in flight (the device lost): a frame's
/// first part or its rest at `-threads 1` (`DAEDALUS_FRAME_SPLIT=50`), a row's part (`rows`),
/// a published row under frame threads. One error says the GPU is off, the rest of the
/// decode runs on the CPU, and every frame still equals Debian's ffmpeg.
#[test]
fn failed_submission_with_parts_in_flight_keeps_decodes_exact() {
    let stream = stream_named("natural-bikes");
    // (split, kernels, threading, the submission that fails)
    let cases = [
        ("50", "all=gpu", THREADING[0], "7"),
        ("50", "all=gpu", THREADING[0], "8"),
        ("rows", "mc=cpu,itx=cpu,lf=gpu", THREADING[0], "9"),
        ("off", "all=gpu", THREADING[1], "9"),
    ];
    let failures = in_parallel(cases.to_vec(), |(split, kernels, threading, at)| {
        let env = [
            ("DAEDALUS_FRAME_SPLIT", split),
            ("DAEDALUS_KERNELS", kernels),
            ("DAEDALUS_TEST_FAIL_SUBMISSION", at),
        ];
        let what = format!(
            "{} / split {split} / {} / submission {at} fails",
            stream.name, threading.0
        );
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)?;
        let errors: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("daedalus: error:"))
            .collect();
        let disabled = errors.len() == 1 && errors[0].contains("GPU disabled after an error");
        if !disabled {
            return Err(format!("{what}: one error expected: {}", out.stderr));
        }
        let submissions: u64 = stat(&out.stderr, "submissions")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{what}: no submissions in {}", out.stderr))?;
        let cpu_calls: u64 = stat(&out.stderr, "cpu_calls")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{what}: no cpu_calls in {}", out.stderr))?;
        let failed_at: u64 = at.parse().unwrap();
        if submissions >= failed_at || cpu_calls == 0 {
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

#[test]
fn cpu_path_equals_debian_ffmpeg() {
    matrix("cpu", &[]);
}

/// `DAEDALUS_KERNELS` placing families on the CPU (FFmpeg's functions at once, after what they
/// touch completes) beside deferred ones keeps every decode exact, on a mixed part of the
/// corpus, with every threading.
#[test]
fn kernel_placement_keeps_decodes_exact() {
    let s = setup();
    let names = [
        "size-065x065",
        "keyframes-only",
        "altref-2pass",
        "tiles-720p",
        "quantizer-01",
        "natural-bikes",
        "profile1-444",
    ];
    let mut jobs = Vec::new();
    for stream in s
        .streams
        .iter()
        .filter(|s| names.contains(&s.name.as_str()))
    {
        // (Each family named: one left out would keep its calibrated place.)
        for placement in [
            "itx=cpu,mc=gpu,lf=gpu",
            "mc=cpu,itx=gpu,lf=gpu",
            "lf=cpu,itx=gpu,mc=gpu",
            "mc=cpu,itx=cpu,lf=gpu",
            "all=cpu",
        ] {
            for threading in THREADING {
                jobs.push((stream.clone(), placement, threading));
            }
        }
    }
    assert_eq!(
        jobs.len(),
        names.len() * 15,
        "streams of the selection are missing"
    );
    let failures = in_parallel(jobs, |(stream, placement, threading)| {
        let env = [("DAEDALUS_KERNELS", placement)];
        let (deferred, placed) = check_with(&stream, Way::Preload, "gpu", threading, &env)?;
        // Motion compensation on the CPU keeps FFmpeg's functions in the table, and so do
        // transforms when both are there; the loop filter always goes through daedalus.
        let direct = match placement {
            "mc=cpu,itx=gpu,lf=gpu" => "mc",
            "mc=cpu,itx=cpu,lf=gpu" | "all=cpu" => "mc,itx",
            _ => "-",
        };
        if placed.direct != direct {
            return Err(format!(
                "{} / {placement} / {}: the table kept {} (expected {direct})",
                stream.name, threading.0, placed.direct
            ));
        }
        // And those families never reached the library: nothing of theirs was deferred or
        // run in order there.
        let [itx_deferred, mc_deferred, ..] = deferred;
        let reached = match direct {
            "mc" => mc_deferred + placed.in_order,
            "mc,itx" if placement != "all=cpu" => mc_deferred + itx_deferred + placed.in_order,
            _ => 0,
        };
        if reached != 0 {
            return Err(format!(
                "{} / {placement} / {}: {reached} calls of families FFmpeg's table kept reached \
                 daedalus",
                stream.name, threading.0
            ));
        }
        let in_order_expected = matches!(
            placement,
            "itx=cpu,mc=gpu,lf=gpu" | "lf=cpu,itx=gpu,mc=gpu" | "all=cpu"
        );
        if in_order_expected && placed.in_order == 0 {
            return Err(format!(
                "{} / {placement} / {}: no call placed on the CPU",
                stream.name, threading.0
            ));
        }
        Ok(())
    });
    assert!(
        failures.is_empty(),
        "{}",
        failures.join(
            "
"
        )
    );
}

/// An empty cache directory of this test process for `name`'s calibrations, and the
/// placement file in it.
fn empty_cache(name: &str) -> (PathBuf, PathBuf) {
    let cache = std::env::temp_dir().join(format!("daedalus-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let file = cache.join("daedalus").join("placement.tsv");
    (cache, file)
}

/// Where `calibration=`'s times for `family` (`family:gpu_ns/cpu_ns`, both positive) place it:
/// `gpu` only where its time is lower.
fn measured_place(measured: &str, family: &str) -> &'static str {
    let (gpu_ns, cpu_ns) = measured
        .split(',')
        .find_map(|m| m.strip_prefix(&format!("{family}:")))
        .and_then(|m| m.split_once('/'))
        .unwrap_or_else(|| panic!("no {family} times in {measured}"));
    let (gpu_ns, cpu_ns): (f64, f64) = (gpu_ns.parse().unwrap(), cpu_ns.parse().unwrap());
    assert!(gpu_ns > 0.0 && cpu_ns > 0.0, "{measured}");
    if gpu_ns < cpu_ns {
        "gpu"
    } else {
        "cpu"
    }
}

/// Without `DAEDALUS_KERNELS` the placement comes from a calibration on the device, measured
/// by the first run and cached under `XDG_CACHE_HOME`; the stats line says which and what it
/// measured, decodes stay exact, a family placed on the GPU is deferred and, where every family
/// stays on the CPU, nothing is. A damaged cache line is measured again. A setting that names
/// one family places that one and leaves the others where the calibration put them.
#[test]
fn default_placement_is_calibrated_once_and_cached() {
    let stream = stream_named("natural-bikes");
    let (cache, file) = empty_cache("calibration");
    let cache_str = cache.to_str().unwrap();
    // `named`: a `DAEDALUS_KERNELS` item, `(family, place)`.
    let decode_with = |expected_by: &str, named: Option<(&str, &str)>| -> String {
        let setting = named.map_or(String::new(), |(f, p)| format!("{f}={p}"));
        let env = [
            ("DAEDALUS_KERNELS", setting.as_str()),
            ("XDG_CACHE_HOME", cache_str),
        ];
        let out = ours(
            Way::Preload,
            "gpu",
            &stream.path,
            &["-threads", "1"],
            "framemd5",
            &env,
        );
        assert_eq!(out.status, Some(0), "{}", out.stderr);
        assert_eq!(frames(&out.stdout), reference(stream), "frames differ");
        assert_eq!(
            stat(&out.stderr, "kernels_by"),
            Some(expected_by),
            "{}",
            out.stderr
        );
        let kernels = stat(&out.stderr, "kernels").expect("kernels=").to_string();
        let measured = stat(&out.stderr, "calibration").expect("calibration=");
        for family in ["itx", "mc", "lf"] {
            let place = match named {
                Some((f, p)) if f == family => p,
                _ => measured_place(measured, family),
            };
            assert!(
                kernels.contains(&format!("{family}:{place}")),
                "{kernels} vs {measured}"
            );
        }
        let deferred: u64 = stat(&out.stderr, "deferred").unwrap().parse().unwrap();
        assert_eq!(deferred > 0, kernels.contains("gpu"), "{}", out.stderr);
        kernels
    };
    let decode = |expected_by: &str| decode_with(expected_by, None);
    let first = decode("calibration");
    let text = std::fs::read_to_string(&file).expect("the calibration was cached");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert_eq!(decode("cache"), first, "the cached placement differs");
    // The loop filter placed where the calibration did not put it; the others as cached.
    let lf = if first.contains("lf:gpu") {
        "cpu"
    } else {
        "gpu"
    };
    decode_with("DAEDALUS_KERNELS+cache", Some(("lf", lf)));
    // A line of the same key that does not parse is ignored: measured again, and replaced.
    let key = text.split('\t').next().unwrap();
    std::fs::write(&file, format!("{key}\titx:fast\tx\tdevice\ngarbage\n")).unwrap();
    decode("calibration");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.starts_with(key)).count(),
        1,
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&cache);
}

/// Without `DAEDALUS_KERNELS`, CDEF's rows are tried on the decode itself, per kind of row
/// (left on their way with one thread, waited for with dav1d's task threads): the first
/// pictures go to the GPU, then pictures alternate between the GPU and dav1d until one side
/// is kept, and kept for later runs. The frames stay exact with pictures of both in one
/// decode, the stats line says what the trial found (`gpu` exactly where its time ratio is
/// below 1), and no call goes block by block. A later run follows the kept decisions; dav1d
/// kept for rows left on their way is kept for rows waited for too, so that a later run with
/// one thread then sets no device up; `DAEDALUS_TRIAL_FRAMES` asks for a new trial.
/// `DAEDALUS_KERNELS` fixes the placement instead: `cdef=cpu` leaves dav1d its own functions
/// and sets no device up (`path=ffmpeg`), `cdef=gpu` takes every row.
#[test]
fn cdef_rows_are_tried_on_the_decode_and_kept_unless_placed() {
    let stream = stream_named("av1-svt-natural-bikes");
    let (cache, _) = empty_cache("cdef-trial");
    let cache_str = cache.to_str().unwrap();
    let decode = |env: &[(&str, &str)], threading: (&str, &[&str])| -> String {
        let mut env = env.to_vec();
        if !env.iter().any(|(k, _)| *k == "XDG_CACHE_HOME") {
            env.push(("XDG_CACHE_HOME", cache_str));
        }
        let what = format!("{} / {env:?} / {}", stream.name, threading.0);
        let out = decode_as_debian(stream, Way::Preload, "gpu", threading, &env, &what)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            stat(&out.stderr, "cdef_deferred"),
            Some("0"),
            "{}",
            out.stderr
        );
        out.stderr
    };
    let count = |stderr: &str, key| -> u64 { stat(stderr, key).unwrap().parse().unwrap() };
    // Each kind's decision, as `cdef_trial=` shows it: (pick, ratio).
    let decided = |stderr: &str, kind: &str| -> Option<(String, f64)> {
        let trial = stat(stderr, "cdef_trial").expect("cdef_trial=");
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
    let tried = |threading, kind: &str, cache: &str| -> (String, f64) {
        let stderr = decode(
            &[("DAEDALUS_KERNELS", ""), ("XDG_CACHE_HOME", cache)],
            threading,
        );
        assert_eq!(stat(&stderr, "kernels_by"), Some("trial"), "{stderr}");
        assert_eq!(stat(&stderr, "kernels"), Some("cdef:gpu"), "{stderr}");
        // The warm-up's pictures at least went to the GPU.
        assert!(count(&stderr, "cdef_rows") > 0, "{stderr}");
        decided(&stderr, kind)
            .unwrap_or_else(|| panic!("{kind} undecided after 60 pictures: {stderr}"))
    };
    // Rows waited for (dav1d's task threads) get a trial of their own, in a cache of their own.
    let (waited_cache, _) = empty_cache("cdef-trial-waited");
    tried(threads, "waited", waited_cache.to_str().unwrap());
    let _ = std::fs::remove_dir_all(&waited_cache);
    // One thread tries the rows left on their way. A later run follows the kept decision;
    // where it is dav1d's, it is dav1d's for rows waited for too (they cost the GPU's side a
    // wait more), and the later run sets no device up.
    let deferred = tried(one_thread, "deferred", cache_str);
    let stderr = decode(&[("DAEDALUS_KERNELS", "")], one_thread);
    if deferred.0 == "dav1d" {
        assert_eq!(stat(&stderr, "kernels_by"), Some("cache"), "{stderr}");
        assert_eq!(stat(&stderr, "path"), Some("ffmpeg"), "{stderr}");
        assert_eq!(stat(&stderr, "device"), Some("\"none\""), "{stderr}");
        assert_eq!(count(&stderr, "cdef_rows"), 0, "{stderr}");
    } else {
        assert_eq!(stat(&stderr, "kernels_by"), Some("trial"), "{stderr}");
        // (The kept ratio is rounded again on the way: compare the picks.)
        assert_eq!(
            decided(&stderr, "deferred").map(|d| d.0),
            Some(deferred.0),
            "{stderr}"
        );
    }
    // A trial asked for runs again.
    let stderr = decode(
        &[("DAEDALUS_KERNELS", ""), ("DAEDALUS_TRIAL_FRAMES", "16")],
        one_thread,
    );
    assert_eq!(stat(&stderr, "kernels_by"), Some("trial"), "{stderr}");
    assert!(count(&stderr, "cdef_rows") > 0, "{stderr}");
    let stderr = decode(&[("DAEDALUS_KERNELS", "cdef=cpu")], one_thread);
    assert_eq!(
        stat(&stderr, "kernels_by"),
        Some("DAEDALUS_KERNELS"),
        "{stderr}"
    );
    assert_eq!(stat(&stderr, "path"), Some("ffmpeg"), "{stderr}");
    assert_eq!(count(&stderr, "cdef_rows"), 0, "{stderr}");
    // dav1d's pictures are daedalus's memory only where CDEF may go to the GPU.
    assert_eq!(
        count(&stderr, "frame_buffers") + count(&stderr, "imports"),
        0,
        "{stderr}"
    );
    let stderr = decode(&[("DAEDALUS_KERNELS", "cdef=gpu")], one_thread);
    let rows = count(&stderr, "cdef_rows");
    assert!(rows > 0 && count(&stderr, "cdef_rows_cpu") == 0, "{stderr}");
    assert_eq!(stat(&stderr, "cdef_trial"), Some("-"), "{stderr}");
    let _ = std::fs::remove_dir_all(&cache);
}

/// The corpus itself: Debian's ffmpeg agrees with libvpx's vpxdec, and the patched program
/// without a provider with Debian's ffmpeg.
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

/// Damaged VP9 streams behave as without daedalus, on the per-call path (every family on the
/// GPU) and on the frame path's CPU side (FFmpeg's second pass reconstructing what was parsed);
/// those of the CIF-sized streams also with the frame path reconstructed on the GPU (on
/// lavapipe the larger ones would take most of CI's time), in place or on device-local copies.
/// Each damaged file is decoded once without daedalus for all of them, with one threading.
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
        "resize",
        "lossless",
    ];
    // (Not resize: its 150 frames of 640x360 took lavapipe 90 s a decode, a third of the
    // test; its damaged copies still go through the other two variants.)
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
            // (The GPU's frames in place, or on device-local copies: every other file.)
            let memory = if i % 2 == 0 { "host" } else { "device" };
            // Each file through one threading, in turn: every stream meets all three over its
            // four files, and each kind of damage and of memory meets all three over the
            // streams.
            jobs.push((file, THREADING[(i + n) % THREADING.len()], on_gpu, memory));
        }
    }
    assert_eq!(jobs.len(), picked.len() * 4, "damaged streams are missing");
    let count = jobs.len();
    let failures = in_parallel(jobs, |(file, threading, frames_on_gpu, memory)| {
        // With frame threads, FFmpeg itself is not deterministic on damaged input: a frame
        // that fails part-way leaves rows of a reused buffer as they were, and which buffer
        // that is depends on thread timing (one damaged file gave 3 different outputs in
        // 40 runs of the same program without daedalus). There only exit status and completion compare.
        let frame: &[(&str, &str)] = &[("DAEDALUS_PATH", "frame")];
        let frame_gpu = [
            ("DAEDALUS_PATH", "frame"),
            ("DAEDALUS_FRAME_PATH_MEMORY", memory),
        ];
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

#[test]
fn no_vulkan_device_warns_once_and_decodes_the_same() {
    let stream = stream_named("cif");
    let missing = "/nonexistent/daedalus-test-icd.json";
    for way in [Way::Preload, Way::Linked] {
        let out = ours(
            way,
            "gpu",
            &stream.path,
            &["-threads", "4"],
            "framemd5",
            &[("VK_ICD_FILENAMES", missing), ("VK_DRIVER_FILES", missing)],
        );
        assert_eq!(out.status, Some(0), "{way:?}: {}", out.stderr);
        assert_eq!(
            frames(&out.stdout),
            reference(stream),
            "{way:?}: frames differ"
        );
        let warnings: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.starts_with("daedalus: warning:"))
            .collect();
        assert_eq!(
            warnings.len(),
            1,
            "{way:?}: one warning expected: {}",
            out.stderr
        );
        assert_eq!(
            stat(&out.stderr, "path"),
            Some("cpu"),
            "{way:?}: the CPU reference ran"
        );
    }
    // Without `DAEDALUS_KERNELS`: one warning, and FFmpeg's own functions.
    no_device_keeps_the_decoders_functions(stream);
}

/// Without a device and without `DAEDALUS_KERNELS`, the placement keeps the decoder's own
/// functions (`kernels_by=no-device`, `path=ffmpeg`) after one warning; the same frames.
fn no_device_keeps_the_decoders_functions(stream: &Stream) {
    let missing = "/nonexistent/daedalus-test-icd.json";
    let out = ours(
        Way::Preload,
        "gpu",
        &stream.path,
        &["-threads", "4"],
        "framemd5",
        &[
            ("VK_ICD_FILENAMES", missing),
            ("VK_DRIVER_FILES", missing),
            ("DAEDALUS_KERNELS", ""),
        ],
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(frames(&out.stdout), reference(stream), "frames differ");
    let warnings = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("daedalus: warning:"))
        .count();
    assert_eq!(warnings, 1, "one warning expected: {}", out.stderr);
    assert_eq!(
        stat(&out.stderr, "kernels_by"),
        Some("no-device"),
        "{}",
        out.stderr
    );
    assert_eq!(stat(&out.stderr, "path"), Some("ffmpeg"), "{}", out.stderr);
    assert_eq!(stat(&out.stderr, "deferred"), Some("0"), "{}", out.stderr);
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

/// Two VP9 decoders in one process (two inputs of one ffmpeg, each with its own frame or slice
/// threads): each output equals Debian's ffmpeg, all on the GPU path.
#[test]
fn several_decoders_in_one_process() {
    let s = setup();
    let pick = |name: &str| {
        s.streams
            .iter()
            .find(|st| st.name == name)
            .expect("a corpus stream")
            .clone()
    };
    let (a, b) = (pick("natural-bikes"), pick("tiles-720p"));
    let dir = std::env::temp_dir().join(format!("daedalus-two-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for threading in [THREADING[1], THREADING[2]] {
        let (out_a, out_b) = (dir.join("a.framemd5"), dir.join("b.framemd5"));
        let mut cmd = Command::new(&s.ffmpeg);
        cmd.args(["-nostdin", "-v", "error", "-bitexact"])
            .args(threading.1)
            .arg("-i")
            .arg(&a.path);
        cmd.args(threading.1).arg("-i").arg(&b.path);
        cmd.args(["-map", "0:v", "-autoscale", "0", "-f", "framemd5", "-y"])
            .arg(&out_a);
        cmd.args(["-map", "1:v", "-autoscale", "0", "-f", "framemd5", "-y"])
            .arg(&out_b);
        cmd.env("LD_PRELOAD", &s.lib)
            .env("DAEDALUS", "gpu")
            .env("DAEDALUS_KERNELS", "all=gpu")
            .env("DAEDALUS_STATS", "1");
        let out = run(cmd);
        assert_eq!(out.status, Some(0), "{}: {}", threading.0, out.stderr);
        assert_eq!(
            stat(&out.stderr, "path"),
            Some("gpu"),
            "{}: {}",
            threading.0,
            out.stderr
        );
        for (file, stream) in [(&out_a, &a), (&out_b, &b)] {
            let got = frames(&std::fs::read(file).unwrap());
            assert_eq!(
                got,
                reference(stream),
                "{} / {}: differs from Debian's ffmpeg",
                stream.name,
                threading.0
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

/// Checks one AV1 decode against Debian's `ffmpeg -c:v libdav1d` and its stats line: the
/// expected path, CDEF's superblock rows run on the GPU (GPU path) or its calls run at once
/// (CPU path), nothing rejected; without daedalus or with `DAEDALUS=off`, no message at all.
/// Returns the rows or calls taken, and the rows left on their way.
fn check_av1(
    stream: &Stream,
    way: Way,
    mode: &str,
    threading: (&str, &[&str]),
) -> Result<(u64, u64), String> {
    let what = format!("{} / {way:?} / {mode} / {}", stream.name, threading.0);
    // `gpu+pool`: the GPU path with the frame memory of a device without import.
    let (mode, env): (&str, &[(&str, &str)]) = match mode.strip_suffix("+pool") {
        Some(m) => (m, &[("DAEDALUS_FRAME_MEMORY", "pool")]),
        None => (mode, &[]),
    };
    let out = decode_as_debian(stream, way, mode, threading, env, &what)?;
    // Without the library, or with it declining (`off`): dav1d's own functions, no message.
    if matches!(way, Way::Without) || mode == "off" {
        return match out.stderr.is_empty() {
            true => Ok((0, 0)),
            false => Err(format!("{what}: unexpected messages: {}", out.stderr)),
        };
    }
    let path = stat(&out.stderr, "path").ok_or_else(|| {
        format!(
            "{what}: no stats line, daedalus did not run: {}",
            out.stderr
        )
    })?;
    if path != mode {
        return Err(format!("{what}: ran on path {path}, expected {mode}"));
    }
    let count = |key| -> u64 {
        stat(&out.stderr, key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    // The GPU path takes whole superblock rows, none of them left to the CPU reference and
    // no call deferred block by block; the CPU path runs the calls at once with the reference.
    let cdef = count("cdef_deferred");
    let (rows, rows_on_cpu) = (count("cdef_rows"), count("cdef_rows_cpu"));
    let (deferred, immediate) = (count("deferred"), count("immediate"));
    // (dav1d hands over a lossless frame's rows too, with no block to filter: no call, no
    // submission.)
    let lossless = stream.name.contains("lossless");
    let empty = count("cdef_rows_empty");
    // Rows are left on their way only by a decoder of one thread (dav1d's tasks read them
    // at once); with more, only those of the frame that ffmpeg's probe decodes with one.
    let rows_deferred = count("cdef_rows_deferred");
    let one_thread = threading.1 == ["-threads", "1"];
    // (Frames with loop restoration read the row at once: the restoration stream has both.)
    let waited = rows - empty - rows_deferred.min(rows - empty);
    let restoration = stream.name.contains("restoration");
    let right = match mode {
        "gpu" => {
            rows > 0
                && (!restoration || !one_thread || (rows_deferred > 0 && waited > 0))
                && (empty == rows) == lossless
                && rows_on_cpu == 0
                && deferred == 0
                && immediate == 0
                && rows_deferred <= rows - empty
                && (one_thread || rows_deferred == 0 || rows_deferred < rows - empty)
        }
        _ => rows == 0 && cdef == 0 && deferred == 0 && (immediate > 0) != lossless,
    };
    if !right || count("rejected") != 0 {
        return Err(format!(
            "{what}: {rows} CDEF rows ({empty} empty, {rows_on_cpu} on the CPU, \
             {rows_deferred} left on their way), {cdef} calls deferred of {deferred}, \
             {immediate} run at once, {} rejected",
            count("rejected")
        ));
    }
    // dav1d's pictures are daedalus's own buffers (FFmpeg's libdav1d.c allocator takes them
    // from `frame_alloc`): the frame pool's device memory, or host memory imported once for
    // its life. CDEF writes its rows in place and no pixel goes through staging.
    if mode == "gpu" {
        let memory = stat(&out.stderr, "frame_memory");
        let buffers = count("frame_buffers");
        let own = match memory {
            Some("pool") => count("pool_buffers") == buffers && count("imports") == 0,
            Some("import") => count("imports") == buffers && count("pool_buffers") == 0,
            _ => false,
        };
        let wanted = if env.is_empty() { memory } else { Some("pool") };
        if !own || buffers == 0 || memory != wanted {
            return Err(format!(
                "{what}: frame_memory={memory:?} with {buffers} frame buffers, {} pool buffers, \
                 {} imports",
                count("pool_buffers"),
                count("imports")
            ));
        }
        if count("pixel_bytes_copied") != 0 || count("flush_overlap") != 0 {
            return Err(format!(
                "{what}: {} pixel bytes copied, {} flushes for overlap",
                count("pixel_bytes_copied"),
                count("flush_overlap")
            ));
        }
    }
    let unexpected: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| !l.starts_with("daedalus: device="))
        .collect();
    if !unexpected.is_empty() {
        return Err(format!("{what}: unexpected messages: {unexpected:?}"));
    }
    Ok((rows + immediate, rows_deferred))
}

fn av1_matrix(modes: &[&str], ways: &[Way]) {
    let s = setup();
    let mut jobs = Vec::new();
    for stream in &s.av1_streams {
        for threading in AV1_THREADING {
            for &way in ways {
                for &mode in modes {
                    jobs.push((stream.clone(), way, mode, threading));
                }
            }
        }
    }
    let count = jobs.len();
    let cdef = Mutex::new((0u64, 0u64));
    let failures = in_parallel(jobs, |(stream, way, mode, threading)| {
        let (taken, deferred) = check_av1(&stream, way, mode, threading)?;
        let mut sums = cdef.lock().unwrap();
        sums.0 += taken;
        sums.1 += deferred;
        Ok(())
    });
    assert_all_decoded(&failures, count, "AV1 decodes");
    let (taken, deferred) = cdef.into_inner().unwrap();
    println!(
        "{count} AV1 decodes ({modes:?}, {ways:?}) equal Debian's libdav1d; {taken} CDEF rows \
         or calls taken, {deferred} rows left on their way"
    );
    // With one thread, the corpus has frames without loop restoration: their rows go out
    // without a wait each.
    if modes.iter().any(|m| m.starts_with("gpu")) && ways.iter().any(|w| !matches!(w, Way::Without))
    {
        assert!(deferred > 0, "no row was left on its way");
    }
}

/// Every AV1 stream x {1, 4 threads} x {LD_PRELOAD, linked}, CDEF on the GPU.
#[test]
fn av1_gpu_path_equals_debian_libdav1d() {
    av1_matrix(&["gpu"], &[Way::Preload, Way::Linked]);
}

/// CDEF's rows with more task threads than most machines have cores, and with dav1d holding
/// one frame at a time (`-flags low_delay`: its max_frame_delay of 1), on the streams whose
/// rows take dav1d's other halo paths: 128x128 superblocks, super-resolution, 10 bits 4:4:4,
/// natural content.
#[test]
fn av1_gpu_path_with_eight_threads_or_one_frame_of_delay_equals_debian_libdav1d() {
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
        check_av1(stream, Way::Preload, "gpu", threading).map(|_| ())
    });
    assert_all_decoded(
        &failures,
        count,
        "AV1 decodes with 8 threads or one frame of delay",
    );
}

/// As on a device without host-memory import (`DAEDALUS_FRAME_MEMORY=pool`): dav1d's
/// pictures in the frame pool's device memory, CDEF in place there.
#[test]
fn av1_gpu_path_on_the_frame_pool_equals_debian_libdav1d() {
    av1_matrix(&["gpu+pool"], &[Way::Preload]);
}

/// The same with CDEF recorded and run by the CPU reference.
#[test]
fn av1_cpu_path_equals_debian_libdav1d() {
    av1_matrix(&["cpu"], &[Way::Preload, Way::Linked]);
}

/// A CDEF row whose submission fails (the device lost, `DAEDALUS_TEST_FAIL_SUBMISSION`): one
/// error says the GPU is off, one warning that the rows go to the CPU reference, every later
/// row with blocks to filter is filtered there, and the frames still equal Debian's libdav1d, at 1 and 4 threads.
#[test]
fn av1_failed_row_submission_keeps_decodes_exact() {
    let stream = stream_named("av1-svt-natural-bikes");
    let failures = in_parallel(AV1_THREADING.to_vec(), |threading| {
        let env = [("DAEDALUS_TEST_FAIL_SUBMISSION", "20")];
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
        let count = |key| -> u64 {
            stat(&out.stderr, key)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        // The first 19 rows with blocks to filter ran on the GPU, every other one on the CPU.
        let with_blocks = count("cdef_rows") - count("cdef_rows_empty");
        if with_blocks < 40 || count("cdef_rows_cpu") != with_blocks - 19 {
            return Err(format!("{what}: rows on the CPU: {}", out.stderr));
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
    av1_matrix(&["gpu"], &[Way::Without]);
}

/// Damaged AV1 streams: the same exit status, frames and messages as the program without
/// daedalus (frames and messages with 1 thread, where dav1d is deterministic on them).
#[test]
fn av1_damaged_streams_behave_as_without_daedalus() {
    let s = setup();
    let dir = std::env::temp_dir().join(format!("daedalus-av1-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let picked = [
        "av1-aom-420-tiles",
        "av1-aom-yuv420p10le",
        "av1-svt-natural-bikes",
        "av1-rav1e-natural-carphone",
    ];
    let mut jobs = Vec::new();
    for stream in s
        .av1_streams
        .iter()
        .filter(|st| picked.contains(&st.name.as_str()))
    {
        for file in damaged_copies(stream, &dir) {
            for threading in AV1_THREADING {
                jobs.push((file.clone(), threading));
            }
        }
    }
    assert_eq!(
        jobs.len(),
        picked.len() * 8,
        "streams of the selection are missing"
    );
    // dav1d's own threads make damaged input nondeterministic too: 1 thread compares all.
    let failures = in_parallel(jobs, |(file, threading)| {
        compare_damaged(&file, threading, threading.1[1] == "1", &[("gpu", &[])])
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// No Vulkan device: one warning, CDEF on the CPU reference, the same frames.
#[test]
fn av1_without_a_vulkan_device_warns_once_and_decodes_the_same() {
    let stream = stream_named("av1-aom-420-tiles");
    let missing = "/nonexistent/daedalus-test-icd.json";
    let out = ours(
        Way::Preload,
        "gpu",
        &stream.path,
        &["-threads", "4"],
        "framemd5",
        &[("VK_ICD_FILENAMES", missing), ("VK_DRIVER_FILES", missing)],
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(frames(&out.stdout), reference(stream), "frames differ");
    let warnings = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("daedalus: warning:"))
        .count();
    assert_eq!(warnings, 1, "one warning expected: {}", out.stderr);
    assert_eq!(stat(&out.stderr, "path"), Some("cpu"), "{}", out.stderr);
    let immediate: u64 = stat(&out.stderr, "immediate").unwrap().parse().unwrap();
    assert!(immediate > 0, "CDEF was not taken: {}", out.stderr);
    no_device_keeps_the_decoders_functions(stream);
}
