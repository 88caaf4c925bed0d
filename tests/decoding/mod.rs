//! What the end-to-end decode tests share: the corpus, Debian's ffmpeg as the reference
//! (each stream decoded once per test program), the patched programs with and without
//! daedalus, the stats line, damaged copies of streams, and running decodes side by side.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

pub const TIME_LIMIT: Duration = Duration::from_secs(600);

pub struct Setup {
    pub ffmpeg: PathBuf,
    pub linked: PathBuf,
    pub lib: PathBuf,
    /// VP9 streams, and AV1 streams (names starting with `av1-`).
    pub streams: Vec<Stream>,
    pub av1_streams: Vec<Stream>,
    /// Damaged VP9 streams whose frames fall back to FFmpeg on the frame path.
    pub damaged: Vec<Stream>,
}

#[derive(Clone, Debug)]
pub struct Stream {
    pub name: String,
    pub path: PathBuf,
    pub high_bit_depth: bool,
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn newest_source(dir: &Path) -> SystemTime {
    let mut newest = SystemTime::UNIX_EPOCH;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let t = if path.is_dir() {
            newest_source(&path)
        } else {
            entry.metadata().unwrap().modified().unwrap()
        };
        newest = newest.max(t);
    }
    newest
}

/// Has lavapipe compile every kernel once, before decodes run side by side: it compiles a
/// kernel at its first dispatch (the frame path's take about a minute of CPU) and caches it on
/// disk, so that decodes started together on a cold cache would each compile them, slowed by
/// one another until a first submission outlasts the hang timeout. A failure here fails every
/// test loudly, as any decode of theirs would.
fn warm_shader_cache(s: &Setup) {
    let vp9 = s.streams.iter().find(|st| st.name == "cif");
    let av1 = s
        .av1_streams
        .iter()
        .find(|st| st.name == "av1-aom-420-tiles");
    let (Some(vp9), Some(av1)) = (vp9, av1) else {
        panic!("the corpus lacks cif or av1-aom-420-tiles: run scripts/gen-streams");
    };
    let frame_path: &[(&str, &str)] = &[("DAEDALUS_PATH", "frame")];
    let rows: &[(&str, &str)] = &[("DAEDALUS_PATH", "frame")];
    for (stream, env, path) in [
        (vp9, frame_path, "frame"),
        (vp9, &[][..], "calls"),
        (av1, rows, "frame"),
        (av1, &[][..], "calls"),
    ] {
        let mut cmd = Command::new(&s.ffmpeg);
        let mut args = decode_args(&stream.path, &["-threads", "1"], "framemd5");
        let at = args.iter().position(|a| a == "-f").unwrap();
        args.splice(at..at, ["-frames:v".to_string(), "3".to_string()]);
        cmd.args(args)
            .env_remove("LD_LIBRARY_PATH")
            .env_remove("DAEDALUS_VALIDATION")
            .env("LD_PRELOAD", &s.lib)
            .env("DAEDALUS", "gpu")
            .env("DAEDALUS_STATS", "all")
            .env("DAEDALUS_PATH", "calls")
            .env("XDG_CACHE_HOME", test_cache())
            .env("MESA_SHADER_CACHE_DIR", shader_cache())
            .envs(env.iter().copied());
        let out = run(cmd);
        let ran = out
            .stderr
            .lines()
            .any(|l| l.starts_with("daedalus: device=") && l.contains(&format!(" path={path} ")));
        assert!(
            out.status == Some(0) && ran,
            "warming the shader cache: {} on path {path} failed: exit {:?}: {}",
            stream.name,
            out.status,
            out.stderr
        );
    }
}

/// The corpus stream (VP9 or AV1) of that name.
pub fn stream_named(name: &str) -> &'static Stream {
    let s = setup();
    s.streams
        .iter()
        .chain(&s.av1_streams)
        .find(|st| st.name == name)
        .unwrap_or_else(|| panic!("the {name} stream is not in the corpus"))
}

/// The programs, the library and the corpus, checked, with lavapipe's kernels compiled. A
/// failure is kept: every later test of the program fails with its message at once instead of
/// trying again (a warm-up decode that hangs would otherwise cost each test its time limit).
pub fn setup() -> &'static Setup {
    static SETUP: OnceLock<Result<Setup, String>> = OnceLock::new();
    let made = SETUP.get_or_init(|| {
        std::panic::catch_unwind(make_setup).map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into())
        })
    });
    match made {
        Ok(s) => s,
        Err(e) => panic!("setting up the decode tests failed: {e}"),
    }
}

fn make_setup() -> Setup {
    let root = root();
    let ffmpeg = root.join("build/ffmpeg/bin/ffmpeg");
    let linked = root.join("build/ffmpeg-linked/bin/ffmpeg");
    let lib = root.join("target/release/libdaedalus.so");
    for p in [&ffmpeg, &linked, &lib] {
        assert!(p.exists(), "{} is missing: run scripts/setup", p.display());
    }
    let lib_time = std::fs::metadata(&lib).unwrap().modified().unwrap();
    let sources = newest_source(&root.join("src")).max(newest_source(&root.join("shaders")));
    assert!(
        lib_time >= sources,
        "target/release/libdaedalus.so is older than the sources: run scripts/setup (or cargo build --release)"
    );
    let manifest = root.join("build/streams/manifest.tsv");
    let text = std::fs::read_to_string(&manifest)
        .unwrap_or_else(|_| panic!("{} is missing: run scripts/gen-streams", manifest.display()));
    let used_for = |used: &str| -> Vec<Stream> {
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                (f.len() >= 4 && f[2] == used).then(|| Stream {
                    name: f[0].to_string(),
                    path: root.join("build/streams").join(f[1]),
                    high_bit_depth: f[0].contains("bit"),
                })
            })
            .collect()
    };
    let (av1_streams, streams): (Vec<Stream>, Vec<Stream>) = used_for("all")
        .into_iter()
        .partition(|s| s.name.starts_with("av1-"));
    let damaged = used_for("damaged");
    assert!(
        streams.len() > 30 && av1_streams.len() >= 12 && !damaged.is_empty(),
        "the corpus is incomplete: run scripts/gen-streams"
    );
    let setup = Setup {
        ffmpeg,
        linked,
        lib,
        streams,
        av1_streams,
        damaged,
    };
    warm_shader_cache(&setup);
    setup
}

pub struct Output {
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// Runs a command with a time limit; `None` status means it was killed.
pub fn run(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting a decoder");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut b).ok();
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut b).ok();
        b
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code();
        }
        if start.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned(),
    }
}

/// The frame lines of a framemd5 (the header names the encoder and may differ by build).
pub fn frames(framemd5: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(framemd5)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

pub fn decode_args(input: &Path, threading: &[&str], muxer: &str) -> Vec<String> {
    let mut a: Vec<String> = ["-nostdin", "-v", "error", "-bitexact"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(threading.iter().map(|s| s.to_string()));
    a.extend([
        "-i".into(),
        input.display().to_string(),
        "-autoscale".into(),
        "0".into(),
    ]);
    a.extend(["-f".into(), muxer.into(), "-".into()]);
    a
}

/// Debian's ffmpeg, once per stream.
pub fn reference(stream: &Stream) -> Vec<String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Vec<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(r) = cache.lock().unwrap().get(&stream.name) {
        return r.clone();
    }
    let mut cmd = Command::new("/usr/bin/ffmpeg");
    let mut args = decode_args(&stream.path, &["-threads", "1"], "framemd5");
    // Debian's ffmpeg also has libvpx and libaom; FFmpeg's own VP9 decoder and dav1d are the
    // references.
    let decoder = if stream.name.starts_with("av1-") {
        "libdav1d"
    } else {
        "vp9"
    };
    let at = args.iter().position(|a| a == "-i").unwrap();
    args.splice(at..at, ["-c:v".to_string(), decoder.to_string()]);
    cmd.args(&args);
    let out = run(cmd);
    assert_eq!(
        out.status,
        Some(0),
        "Debian's ffmpeg failed on {}: {}",
        stream.name,
        out.stderr
    );
    let f = frames(&out.stdout);
    assert!(
        !f.is_empty(),
        "Debian's ffmpeg decoded no frame of {}",
        stream.name
    );
    cache.lock().unwrap().insert(stream.name.clone(), f.clone());
    f
}

/// Debian's ffmpeg (FFmpeg's own VP9 decoder) on `input` with `threading`, uncached: its exit
/// status and frames.
pub fn debian_ffmpeg(input: &Path, threading: &[&str]) -> (Option<i32>, Vec<String>) {
    let mut args = decode_args(input, threading, "framemd5");
    let at = args.iter().position(|a| a == "-i").unwrap();
    args.splice(at..at, ["-c:v".to_string(), "vp9".to_string()]);
    let mut cmd = Command::new("/usr/bin/ffmpeg");
    cmd.args(&args);
    let out = run(cmd);
    (out.status, frames(&out.stdout))
}

#[derive(Clone, Copy, Debug)]
pub enum Way {
    Preload,
    Linked,
    /// The patched program alone: no provider.
    Without,
}

pub const THREADING: [(&str, &[&str]); 3] = [
    ("1 thread", &["-threads", "1"]),
    (
        "4 frame threads",
        &["-threads", "4", "-thread_type", "frame"],
    ),
    (
        "4 slice threads",
        &["-threads", "4", "-thread_type", "slice"],
    ),
];

pub fn ours(
    way: Way,
    mode: &str,
    input: &Path,
    threading: &[&str],
    muxer: &str,
    extra_env: &[(&str, &str)],
) -> Output {
    ours_with_args(way, mode, &decode_args(input, threading, muxer), extra_env)
}

/// [`ours`] with the program's arguments given whole.
pub fn ours_with_args(way: Way, mode: &str, args: &[String], extra_env: &[(&str, &str)]) -> Output {
    let s = setup();
    let mut cmd = Command::new(match way {
        Way::Linked => &s.linked,
        _ => &s.ffmpeg,
    });
    cmd.args(args);
    // Cargo's LD_LIBRARY_PATH (target/debug...) would override the linked program's runpath,
    // which names the release library the checks above vouch for.
    cmd.env_remove("LD_PRELOAD")
        .env_remove("LD_LIBRARY_PATH")
        .env("DAEDALUS", mode)
        .env("DAEDALUS_STATS", "all");
    cmd.env_remove("DAEDALUS_VALIDATION"); // the kernel tests cover validation; decoding is long
    cmd.env_remove("DAEDALUS_TEST_MEMORY");
    // The per-call path unless a test asks otherwise (`DAEDALUS_PATH` empty: the defaults);
    // what was measured kept out of the user's cache.
    cmd.env("DAEDALUS_PATH", "calls")
        .env("XDG_CACHE_HOME", test_cache())
        .env("MESA_SHADER_CACHE_DIR", shader_cache());
    if let Way::Preload = way {
        cmd.env("LD_PRELOAD", &s.lib);
    }
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    run(cmd)
}

/// Where lavapipe keeps the kernels it compiled, for every decode of the tests: the test
/// command's directory shared by its programs (`MESA_SHADER_CACHE_DIR`), else one beside this
/// process's cache. (Compiled code is found by its source, so sharing it changes no result.)
pub fn shader_cache() -> PathBuf {
    std::env::var_os("MESA_SHADER_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| test_cache().join("mesa_shader_cache"))
}

/// A cache directory of this test process for the calibration.
pub fn test_cache() -> PathBuf {
    std::env::temp_dir().join(format!("daedalus-cache-{}", std::process::id()))
}

/// The value of `key=` in the stats line.
pub fn stat<'a>(stderr: &'a str, key: &str) -> Option<&'a str> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("daedalus: device="))?;
    line.split(' ')
        .find_map(|kv| kv.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
}

/// Decodes `stream` with daedalus (`way`, `mode`, `env`) to framemd5 and checks that it exits
/// 0 with the frames of Debian's decoder (`reference`); returns the run's output.
pub fn decode_as_debian(
    stream: &Stream,
    way: Way,
    mode: &str,
    threading: (&str, &[&str]),
    env: &[(&str, &str)],
    what: &str,
) -> Result<Output, String> {
    let out = ours(way, mode, &stream.path, threading.1, "framemd5", env);
    if out.status != Some(0) {
        return Err(format!("{what}: exit {:?}: {}", out.status, out.stderr));
    }
    let (ours, theirs) = (frames(&out.stdout), reference(stream));
    if ours != theirs {
        let i = ours
            .iter()
            .zip(&theirs)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(theirs.len()));
        let decoder = if stream.name.starts_with("av1-") {
            "libdav1d"
        } else {
            "ffmpeg"
        };
        return Err(format!(
            "{what}: differs from Debian's {decoder} at frame {i} ({} vs {} frames)",
            ours.len(),
            theirs.len()
        ));
    }
    Ok(out)
}
/// Runs `jobs` on as many workers as the machine has cores; collects failures.
pub fn in_parallel<J: Send>(
    jobs: Vec<J>,
    work: impl Fn(J) -> Result<(), String> + Sync,
) -> Vec<String> {
    let queue = Mutex::new(jobs);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let Some(job) = queue.lock().unwrap().pop() else {
                    break;
                };
                if let Err(e) = work(job) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

/// Fails with every failure of `count` decodes (`what`), if any.
pub fn assert_all_decoded(failures: &[String], count: usize, what: &str) {
    assert!(
        failures.is_empty(),
        "{} of {count} {what} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
/// Deterministic damage: bytes flipped inside frames (two spreads of 8), and cuts (early and
/// late in the stream).
pub fn damaged_copies(stream: &Stream, dir: &Path) -> Vec<PathBuf> {
    let data = std::fs::read(&stream.path).unwrap();
    let mut out = Vec::new();
    for (i, fraction) in [(0, 5u64), (2, 2)]
        .iter()
        .map(|&(i, d)| (i, (i as u64 * 37 + 11) % 97 + d))
    {
        let mut d = data.clone();
        // Flip 8 bytes spread over the payload (past the 32-byte file header).
        for k in 0..8u64 {
            let at = 32 + ((fraction * 1_000_003 + k * 7919) % (d.len() as u64 - 32)) as usize;
            d[at] ^= 0x5a;
        }
        let p = dir.join(format!("{}-flip{i}.ivf", stream.name));
        std::fs::write(&p, d).unwrap();
        out.push(p);
    }
    for (i, keep) in [0.3, 0.9].iter().enumerate() {
        let p = dir.join(format!("{}-cut{i}.ivf", stream.name));
        std::fs::write(&p, &data[..(data.len() as f64 * keep) as usize]).unwrap();
        out.push(p);
    }
    out
}

/// Messages without the addresses FFmpeg prints (`[vp9 @ 0x55d...]`), which differ per run,
/// and with FFmpeg's "Last message repeated N times" expanded into the repeated lines: which
/// repeats its log coalesces depends on when frame threads report their errors.
pub fn messages(stderr: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in stderr
        .lines()
        .filter(|l| !l.starts_with("daedalus: device="))
    {
        let mut s = l.to_string();
        while let Some(at) = s.find("@ 0x") {
            let end = s[at + 4..]
                .find(|c: char| !c.is_ascii_hexdigit())
                .map_or(s.len(), |e| at + 4 + e);
            s.replace_range(at..end, "@ ADDR");
        }
        let repeated = s
            .trim()
            .strip_prefix("Last message repeated ")
            .and_then(|r| r.strip_suffix(" times"))
            .and_then(|n| n.parse::<usize>().ok());
        match (repeated, out.last().cloned()) {
            (Some(n), Some(previous)) => out.extend(std::iter::repeat_n(previous, n)),
            _ => out.push(s),
        }
    }
    out
}

/// A way of decoding with daedalus: `DAEDALUS`'s mode and more settings.
pub type Variant<'a> = (&'a str, &'a [(&'a str, &'a str)]);

/// One damaged file without daedalus and with it in each of `variants`: the same exit status
/// within the time limit, daedalus ran and reported nothing, and, where the decoder is
/// `deterministic` on damaged input, the same frames and messages.
pub fn compare_damaged(
    file: &Path,
    threading: (&str, &[&str]),
    deterministic: bool,
    variants: &[Variant],
) -> Result<(), String> {
    let name = file.file_name().unwrap().to_string_lossy();
    let without = ours(Way::Without, "gpu", file, threading.1, "framemd5", &[]);
    if without.status.is_none() {
        return Err(format!(
            "{name} / {}: did not finish within {TIME_LIMIT:?} without daedalus",
            threading.0
        ));
    }
    for (mode, env) in variants {
        let what = format!("{name} / {} / {mode} {env:?}", threading.0);
        let with = ours(Way::Preload, mode, file, threading.1, "framemd5", env);
        if with.status.is_none() {
            return Err(format!("{what}: did not finish within {TIME_LIMIT:?}"));
        }
        if with.status != without.status {
            return Err(format!(
                "{what}: exit {:?} with daedalus, {:?} without",
                with.status, without.status
            ));
        }
        if stat(&with.stderr, "path").is_none() {
            return Err(format!("{what}: daedalus did not run"));
        }
        if with
            .stderr
            .lines()
            .any(|l| l.starts_with("daedalus:") && !l.starts_with("daedalus: device="))
        {
            return Err(format!("{what}: daedalus reported: {}", with.stderr));
        }
        if !deterministic {
            continue;
        }
        if frames(&with.stdout) != frames(&without.stdout) {
            return Err(format!(
                "{what}: frames differ from the program without daedalus"
            ));
        }
        if messages(&with.stderr) != messages(&without.stderr) {
            return Err(format!(
                "{what}: messages differ:\nwith: {:?}\nwithout: {:?}",
                messages(&with.stderr),
                messages(&without.stderr)
            ));
        }
    }
    Ok(())
}
