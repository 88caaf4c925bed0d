//! The patched shared libraries under Debian's own programs, through `scripts/daedalus-run`:
//! the plain `ffmpeg` built with them (its scaler and filters at their defaults) on every
//! stream of the corpus against Debian's, and mpv and a GStreamer pipeline (gst-libav's
//! `avdec_vp9`) against the same program on Debian's libraries. Every family is forced onto
//! the GPU, and each run's stats line shows that daedalus decoded.

mod decoding;

use decoding::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `scripts/daedalus-run PROGRAM` with stats on and calibrations in the test's cache; with
/// `Some(path)` every family forced onto the GPU (VP9 on the frame path, or on the per-call
/// path where `path` says `calls`), with `None` daedalus's defaults.
fn through_daedalus_run(program: &str, path: Option<&str>) -> Command {
    let mut cmd = Command::new(root().join("scripts/daedalus-run"));
    cmd.arg(program)
        .env_remove("LD_PRELOAD")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("DAEDALUS_VALIDATION")
        .env_remove("DAEDALUS_PATH")
        .env_remove("DAEDALUS_TRIAL_FRAMES")
        .env("DAEDALUS", "gpu")
        .env("DAEDALUS_STATS", "1")
        .env("XDG_CACHE_HOME", test_cache());
    if let Some(path) = path {
        cmd.env("DAEDALUS_PATH", path);
    }
    cmd
}

/// The same program on Debian's libraries alone.
fn on_debians_libraries(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("LD_PRELOAD").env_remove("LD_LIBRARY_PATH");
    cmd
}

fn number(stderr: &str, key: &str) -> u64 {
    stat(stderr, key).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// What the stats line of a decode of `stream` must show: the GPU reconstructed VP9 frames
/// (FFmpeg's second pass does at high bit depths, from what daedalus's path parsed), or took
/// AV1's CDEF rows (a lossless stream has none).
fn daedalus_decoded(stream: &Stream, stderr: &str) -> Result<(), String> {
    let fail = |what: &str| Err(format!("{}: {what}: {stderr}", stream.name));
    let device = stat(stderr, "device").unwrap_or("none");
    if device == "none" || device.is_empty() {
        return fail("daedalus did not run on a device");
    }
    if stream.name.starts_with("av1-") {
        let rows = number(stderr, "cdef_rows") + number(stderr, "cdef_rows_empty");
        if rows == 0 && !stream.name.contains("lossless") {
            return fail("no CDEF row reached daedalus");
        }
    } else if stream.high_bit_depth {
        if number(stderr, "frames_ffmpeg") == 0 {
            return fail("no frame went through the frame path");
        }
    } else if number(stderr, "frames_gpu") == 0 || number(stderr, "frames_ffmpeg") != 0 {
        return fail("the GPU did not reconstruct every frame");
    }
    Ok(())
}

/// `build/ffmpeg/bin/ffmpeg -i STREAM -f framemd5 -` as a user types it, with no option that
/// keeps frames at their coded size, through daedalus-run: its frames and exit status equal
/// Debian's ffmpeg's on every stream of the corpus with daedalus's defaults, and on the resize
/// stream (whose frames the scaler brings to one size, as Debian's does) with the GPU forced
/// too. (The decode matrix checks every stream with the GPU forced in this same program; at a
/// constant size the scaler is not in the way.)
#[test]
fn plain_ffmpeg_equals_debians_on_every_stream() {
    let s = setup();
    let ffmpeg = s.ffmpeg.display().to_string();
    let mut jobs: Vec<(Stream, Option<&str>)> = s
        .streams
        .iter()
        .chain(&s.av1_streams)
        .map(|st| (st.clone(), None))
        .collect();
    jobs.push((stream_named("resize").clone(), Some("frame")));
    let count = jobs.len();
    let args = |stream: &Stream| -> Vec<String> {
        ["-nostdin", "-v", "error", "-i"]
            .iter()
            .map(|a| a.to_string())
            .chain([stream.path.display().to_string()])
            .chain(["-f", "framemd5", "-"].iter().map(|a| a.to_string()))
            .collect()
    };
    let failures = in_parallel(jobs, |(stream, forced)| {
        let what = format!(
            "{} ({})",
            stream.name,
            forced.map_or("defaults", |_| "GPU forced")
        );
        let mut debian = on_debians_libraries("/usr/bin/ffmpeg");
        debian.args(args(&stream));
        let theirs = run(debian);
        let mut cmd = through_daedalus_run(&ffmpeg, forced);
        cmd.args(args(&stream));
        let ours = run(cmd);
        if ours.status != theirs.status || ours.status != Some(0) {
            return Err(format!(
                "{what}: exit {:?}, Debian's {:?}: {}",
                ours.status, theirs.status, ours.stderr
            ));
        }
        let (a, b) = (frames(&ours.stdout), frames(&theirs.stdout));
        if a.is_empty() || a != b {
            return Err(format!(
                "{what}: {} frames differ from Debian's {}",
                a.len(),
                b.len()
            ));
        }
        if stat(&ours.stderr, "path").is_none() {
            return Err(format!("{what}: daedalus was not loaded: {}", ours.stderr));
        }
        match forced {
            Some(_) => daedalus_decoded(&stream, &ours.stderr),
            None => Ok(()),
        }
    });
    assert_all_decoded(&failures, count, "plain ffmpeg decodes");
}

/// mpv's encoding mode writing raw frames: `out` holds the decoded frames of `stream`.
fn mpv(mut cmd: Command, stream: &Path, out: &Path, decoder: &str) -> Output {
    cmd.args([
        "--no-config",
        "--really-quiet",
        "--of=rawvideo",
        "--ovc=rawvideo",
    ])
    .arg(format!("--vd={decoder}"))
    .arg(format!("--o={}", out.display()))
    .arg(stream);
    run(cmd)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("daedalus-drop-in-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Both runs exited 0 and wrote the same frames, `frame_bytes` each, at least one.
fn same_frames(
    what: &str,
    ours: &Output,
    theirs: &Output,
    files: (&Path, &Path),
    frame_bytes: usize,
) {
    assert_eq!(
        theirs.status,
        Some(0),
        "{what} on Debian's libraries: {}",
        theirs.stderr
    );
    assert_eq!(
        ours.status,
        Some(0),
        "{what} through daedalus: {}",
        ours.stderr
    );
    let (a, b) = (
        std::fs::read(files.0).unwrap(),
        std::fs::read(files.1).unwrap(),
    );
    assert!(
        !a.is_empty() && a.len() % frame_bytes == 0,
        "{what}: {} bytes are not whole frames of {frame_bytes}",
        a.len()
    );
    assert!(
        a == b,
        "{what}: {} frames through daedalus differ from the {} on Debian's libraries",
        a.len() / frame_bytes,
        b.len() / frame_bytes
    );
}

/// mpv decodes a VP9 stream (FFmpeg's decoder, on the frame path) and an AV1 stream (libdav1d,
/// CDEF on the GPU) through daedalus to the same raw frames as on Debian's libraries.
#[test]
fn mpv_decodes_through_daedalus_as_on_debians_libraries() {
    let dir = scratch("mpv");
    for (name, decoder, frame_bytes) in [
        ("natural-carphone", "vp9", 176 * 144 * 3 / 2),
        ("av1-aom-natural-bikes", "libdav1d", 640 * 272 * 3 / 2),
    ] {
        let stream = stream_named(name);
        let (a, b) = (
            dir.join(format!("{name}-ours.raw")),
            dir.join(format!("{name}-debian.raw")),
        );
        let ours = mpv(
            through_daedalus_run("mpv", Some("frame")),
            &stream.path,
            &a,
            decoder,
        );
        let theirs = mpv(on_debians_libraries("mpv"), &stream.path, &b, decoder);
        same_frames(
            &format!("mpv on {name}"),
            &ours,
            &theirs,
            (&a, &b),
            frame_bytes,
        );
        if let Err(e) = daedalus_decoded(stream, &ours.stderr) {
            panic!("mpv: {e}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A GStreamer pipeline through gst-libav's `avdec_vp9` decodes a VP9 stream (in WebM, remuxed
/// by Debian's ffmpeg) through daedalus, every family deferred on the per-call path, to the same
/// raw frames as on Debian's libraries.
#[test]
fn gstreamer_decodes_through_daedalus_as_on_debians_libraries() {
    let dir = scratch("gst");
    let stream = stream_named("natural-bikes");
    let webm = dir.join("natural-bikes.webm");
    let mut remux = on_debians_libraries("/usr/bin/ffmpeg");
    remux
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(&stream.path)
        .args(["-c", "copy", "-y"])
        .arg(&webm);
    assert_eq!(run(remux).status, Some(0), "remuxing to WebM");
    // Each run with a registry of the test's own (never the user's), written by its libraries.
    let pipeline = |mut cmd: Command, out: &Path, registry: &str| {
        cmd.arg("-q")
            .arg("filesrc")
            .arg(format!("location={}", webm.display()))
            .args(["!", "matroskademux", "!", "avdec_vp9", "!", "filesink"])
            .arg(format!("location={}", out.display()))
            .env("GST_REGISTRY_1_0", dir.join(registry));
        run(cmd)
    };
    let (a, b) = (dir.join("ours.yuv"), dir.join("debian.yuv"));
    let ours = pipeline(
        through_daedalus_run("gst-launch-1.0", Some("calls")),
        &a,
        "registry-daedalus.bin",
    );
    let theirs = pipeline(
        on_debians_libraries("gst-launch-1.0"),
        &b,
        "registry-debian.bin",
    );
    same_frames(
        "gst-launch-1.0 with avdec_vp9",
        &ours,
        &theirs,
        (&a, &b),
        640 * 272 * 3 / 2,
    );
    assert_eq!(stat(&ours.stderr, "path"), Some("calls"), "{}", ours.stderr);
    assert!(number(&ours.stderr, "calls") > 0, "{}", ours.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without the libraries scripts/setup builds, daedalus-run says what is missing and what to
/// run, and runs nothing.
#[test]
fn daedalus_run_says_what_is_missing_before_setup() {
    let dir = scratch("bare");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    let script = dir.join("scripts/daedalus-run");
    std::fs::copy(root().join("scripts/daedalus-run"), &script).unwrap();
    let marker = dir.join("ran");
    // Through bash, not exec'ed: a file just written can be held open for writing by a child
    // another test thread forked meanwhile, and exec'ing it then fails with ETXTBSY.
    let mut cmd = Command::new("bash");
    cmd.arg(&script).arg("touch").arg(&marker);
    let out = run(cmd);
    assert_eq!(out.status, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("libavcodec.so.59 is missing: run scripts/setup first"),
        "{}",
        out.stderr
    );
    assert!(!marker.exists(), "the program ran without daedalus");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The defined dynamic symbols of a shared library, with their versions.
fn exported(lib: &Path) -> Vec<String> {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(lib)
        .output()
        .expect("objdump (binutils)");
    assert!(out.status.success(), "objdump -T {}", lib.display());
    let mut symbols: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(" DF ") || l.contains(" DO "))
        .filter(|l| !l.contains("*UND*"))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 2).then(|| format!("{} {}", f[f.len() - 2], f[f.len() - 1]))
        })
        .collect();
    symbols.sort();
    symbols
}

/// Each patched library a program linked against Debian's loads in its place exports exactly
/// what Debian's does, under the same soname: no symbol a program needs is missing, none is
/// added.
#[test]
fn the_patched_libraries_export_what_debians_do() {
    let ours = root().join("build/ffmpeg/lib");
    let cache = Command::new("/sbin/ldconfig")
        .arg("-p")
        .output()
        .expect("ldconfig -p");
    let cache = String::from_utf8_lossy(&cache.stdout).into_owned();
    for soname in [
        "libavcodec.so.59",
        "libavformat.so.59",
        "libavfilter.so.8",
        "libavdevice.so.59",
        "libavutil.so.57",
        "libswscale.so.6",
        "libswresample.so.4",
        "libpostproc.so.56",
        "libdav1d.so.6",
    ] {
        let debian = cache
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{soname} ")))
            .and_then(|l| l.split(" => ").nth(1))
            .unwrap_or_else(|| panic!("Debian's {soname} is not installed"));
        let ours_soname = Command::new("objdump")
            .arg("-p")
            .arg(ours.join(soname))
            .output()
            .expect("objdump -p");
        assert!(
            String::from_utf8_lossy(&ours_soname.stdout)
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["SONAME", soname]),
            "build/ffmpeg/lib/{soname} does not carry the soname {soname}"
        );
        let (a, b) = (exported(&ours.join(soname)), exported(Path::new(debian)));
        assert!(!b.is_empty(), "{debian} exports nothing");
        let missing: Vec<&String> = b.iter().filter(|s| !a.contains(s)).collect();
        let added: Vec<&String> = a.iter().filter(|s| !b.contains(s)).collect();
        assert!(
            missing.is_empty() && added.is_empty(),
            "{soname}: missing {missing:?}, added {added:?}"
        );
    }
}
