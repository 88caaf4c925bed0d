//! The whole-frame loop-filter test: FFmpeg's own `ff_vp9_loopfilter_sb`, called superblock by
//! superblock as the decoder calls it, with FFmpeg's C loop filters and with daedalus'
//! deferred ones, on the same frame, random filter levels and edge masks
//! (tests/lf_frame/lf_frame.c), in each chroma format VP9 has. Equal frames prove that the
//! levels of one batch keep FFmpeg's order (columns then rows, plane by plane, superblock by
//! superblock) on the GPU. The same frames through `daedalus_vp9_loopfilter_sb` (one call per
//! superblock) prove that its walk of the masks is FFmpeg's.
//!
//! Needs what `scripts/setup` builds: the C oracle (`build/oracle-c`, its `config.h`), the
//! FFmpeg source it was built from (`build/ffmpeg-src`) and `target/release/libdaedalus.so`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds the harness once (into the test's target directory).
fn harness() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = root();
        let oracle = std::env::var_os("DAEDALUS_ORACLE_C")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("build/oracle-c"));
        let source = root.join("build/ffmpeg-src");
        let lib = root.join("target/release");
        for p in [
            oracle.join("obj/config.h"),
            oracle.join("lib/libavcodec.a"),
            source.join("libavcodec/vp9dec.h"),
            lib.join("libdaedalus.so"),
        ] {
            assert!(p.exists(), "{} is missing: run scripts/setup", p.display());
        }
        let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lf_frame");
        let status = Command::new("cc")
            .args(["-O1", "-Wall", "-Werror", "-o"])
            .arg(&exe)
            .arg(root.join("tests/lf_frame/lf_frame.c"))
            .arg("-I")
            .arg(oracle.join("obj"))
            .arg("-I")
            .arg(&source)
            .arg("-I")
            .arg(root.join("include"))
            .arg(oracle.join("lib/libavcodec.a"))
            .arg(oracle.join("lib/libavutil.a"))
            .arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .args(["-ldaedalus", "-lm", "-lpthread"])
            .status()
            .expect("running cc");
        assert!(status.success(), "the loop-filter harness did not build");
        exe
    })
}

/// How the harness' daedalus side filters: FFmpeg's walk with daedalus' per-edge functions, or
/// `daedalus_vp9_loopfilter_sb`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Way {
    Edges,
    Superblocks,
    /// The provider's hook, placed by position as in a decode.
    Decoder,
}

/// The frame's memory: copied blocks, registered (rows start on a word, as FFmpeg's do), or
/// registered with rows that start off a word (odd strides and planes, or planes shifted by a
/// pixel).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Memory {
    Copied,
    Registered,
    RegisteredOffWord,
    RegisteredShifted,
}

/// Runs one frame; returns the harness' counters.
fn frame(
    (w, h, chroma): (u32, u32, &str),
    memory: Memory,
    flush: &str,
    seed: u64,
    way: Way,
) -> String {
    frame_with((w, h, chroma), memory, flush, seed, way, &[])
}

/// [`frame`] with settings `env` for the harness.
fn frame_with(
    (w, h, chroma): (u32, u32, &str),
    memory: Memory,
    flush: &str,
    seed: u64,
    way: Way,
    env: &[(&str, &str)],
) -> String {
    let registered = memory != Memory::Copied;
    // (cargo's LD_LIBRARY_PATH names target/debug, whose library may be an older build's: the
    // harness loads the release library it was linked with.)
    let out = Command::new(harness())
        .env_remove("LD_LIBRARY_PATH")
        .envs(env.iter().copied())
        .args([
            w.to_string(),
            h.to_string(),
            chroma.to_string(),
            (registered as u8).to_string(),
            flush.to_string(),
            seed.to_string(),
            match way {
                Way::Edges => "edges",
                Way::Superblocks => "sb",
                Way::Decoder => "decoder",
            }
            .to_string(),
        ])
        .args(match memory {
            Memory::RegisteredOffWord => Some("odd"),
            Memory::RegisteredShifted => Some("shifted"),
            _ => None,
        })
        .output()
        .expect("running the harness");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let what =
        format!("{w}x{h} chroma={chroma} memory={memory:?} flush={flush} way={way:?} {env:?}");
    println!("{what}: {}", text.trim());
    assert!(
        out.status.success(),
        "{what}: differs from FFmpeg's: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn counter(text: &str, key: &str) -> u64 {
    text.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {text}"))
}

#[test]
fn whole_frames_equal_ffmpegs_loopfilter_sb_sequence() {
    frames_equal_ffmpegs(Way::Edges);
}

#[test]
fn superblock_calls_equal_ffmpegs_loopfilter_sb() {
    frames_equal_ffmpegs(Way::Superblocks);
}

fn frames_equal_ffmpegs(way: Way) {
    let gpu = std::env::var("DAEDALUS").map_or(true, |m| m == "gpu");
    for (i, &(w, h, chroma)) in [
        (352, 288, "420"),
        (1280, 720, "420"),
        (200, 130, "444"),
        (64, 64, "420"),
        (328, 200, "422"),
        (200, 328, "440"),
    ]
    .iter()
    .enumerate()
    {
        for flush in ["frame", "row"] {
            let text = frame(
                (w, h, chroma),
                Memory::Registered,
                flush,
                i as u64 * 7 + 1,
                way,
            );
            // Not vacuous: the filters changed pixels, all ran deferred, in one submission per
            // flush point, ordered by levels rather than by completing batches early.
            assert!(counter(&text, "changed") > (w * h / 20) as u64, "{text}");
            let ran = counter(&text, "gpu_calls") + counter(&text, "cpu_calls");
            match way {
                Way::Edges => {
                    assert_eq!(counter(&text, "calls"), ran, "{text}");
                    assert_eq!(counter(&text, "deferred_lf_sb"), 0, "{text}");
                }
                Way::Superblocks | Way::Decoder => {
                    // Three planes a superblock (random masks leave none empty).
                    let superblocks = counter(&text, "calls");
                    assert_eq!(superblocks, (w.div_ceil(64) * h.div_ceil(64)) as u64);
                    assert_eq!(counter(&text, "deferred_lf_sb"), 3 * superblocks, "{text}");
                    assert_eq!(ran, 3 * superblocks, "{text}");
                    assert_eq!(counter(&text, "deferred_lf"), 0, "{text}");
                }
            }
            if gpu {
                assert_eq!(counter(&text, "cpu_calls"), 0, "{text}");
                assert_eq!(counter(&text, "flushes_overlap"), 0, "{text}");
                // (The three planes of a lone superblock, a job each, take one level.)
                let one_superblock = w <= 64 && h <= 64 && way == Way::Superblocks;
                assert!(counter(&text, "max_levels") > 1 || one_superblock, "{text}");
                assert_eq!(counter(&text, "validation_messages"), 0, "{text}");
                let flushes = if flush == "row" { h.div_ceil(64) } else { 1 };
                assert_eq!(
                    counter(&text, "submissions"),
                    flushes as u64 + counter(&text, "flushes_full"),
                    "{text}"
                );
            }
        }
    }
}

/// The decoder's superblock hook (the provider's), each plane placed by its cells, with random
/// masks: every plane on the GPU, FFmpeg's result, flushed where the frame or a row ends, and
/// where a plane meets pending pixels at another stride (a chroma plane's reach into luma rows
/// of the buffer).
#[test]
fn decoder_superblocks_equal_ffmpegs_loopfilter_sb() {
    let gpu = std::env::var("DAEDALUS").map_or(true, |m| m == "gpu");
    for (i, &(w, h, chroma)) in [
        (352, 288, "420"),
        (1280, 720, "420"),
        (200, 130, "444"),
        (328, 200, "422"),
        (200, 328, "440"),
    ]
    .iter()
    .enumerate()
    {
        for (flush, memory) in [
            ("frame", Memory::Registered),
            ("row", Memory::Registered),
            ("frame", Memory::RegisteredOffWord),
        ] {
            let env = [("DAEDALUS_PATH", "calls")];
            let seed = i as u64 * 11 + 5;
            let text = frame_with((w, h, chroma), memory, flush, seed, Way::Decoder, &env);
            assert!(counter(&text, "changed") > (w * h / 20) as u64, "{text}");
            if !gpu {
                continue;
            }
            // Every plane deferred (random masks leave none empty), on the GPU.
            let planes = 3 * (w.div_ceil(64) * h.div_ceil(64)) as u64;
            assert_eq!(counter(&text, "deferred_lf_sb"), planes, "{text}");
            assert_eq!(counter(&text, "gpu_calls"), planes, "{text}");
            assert_eq!(counter(&text, "cpu_calls"), 0, "{text}");
            assert_eq!(counter(&text, "validation_messages"), 0, "{text}");
            let flushes = if flush == "row" { h.div_ceil(64) } else { 1 };
            assert_eq!(
                counter(&text, "submissions"),
                flushes as u64 + counter(&text, "flushes_full") + counter(&text, "flushes_overlap"),
                "{text}"
            );
        }
    }
}

/// Rows that start off a word (odd strides and planes, or only planes shifted by a pixel): the
/// GPU reads and writes them a pixel at a time instead of a word at a time, still FFmpeg's
/// result.
#[test]
fn rows_off_a_word_equal_ffmpegs_loopfilter_sb() {
    for (w, h, chroma) in [(352, 288, "420"), (200, 130, "444"), (328, 200, "422")] {
        for memory in [Memory::RegisteredOffWord, Memory::RegisteredShifted] {
            for way in [Way::Edges, Way::Superblocks] {
                let text = frame((w, h, chroma), memory, "frame", 5, way);
                assert!(counter(&text, "changed") > (w * h / 20) as u64, "{text}");
            }
        }
    }
}

/// Blocks outside registered memory are copied: conflicts complete the batch instead of
/// taking levels, still FFmpeg's result.
#[test]
fn copied_frames_equal_ffmpegs_loopfilter_sb_sequence() {
    for way in [Way::Edges, Way::Superblocks] {
        let text = frame((352, 288, "420"), Memory::Copied, "frame", 99, way);
        assert!(counter(&text, "changed") > 5000, "{text}");
    }
}
