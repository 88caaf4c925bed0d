//! The settings, read once per process from the environment: the one list of them (the
//! README's tables are held to it by `tests/docs.rs`).
//!
//! For users:
//!
//! | variable | values | effect |
//! |---|---|---|
//! | `DAEDALUS` | `gpu` (default), `cpu`, `off` | `off`: the decoders' own functions, daedalus takes no part; `cpu`: daedalus's paths with its CPU reference in the GPU's place (a check, not faster) |
//! | `DAEDALUS_PATH` | `frame`, `calls`, `ffmpeg` | which path the decoders take: `frame` the GPU reconstructs (VP9's frame path; AV1's CDEF by superblock rows); `calls` the decoders' DSP calls one by one through the C ABI; `ffmpeg` the decoders' own functions. Unset: the GPU where it measured faster on this device (a trial on the decode, kept for later runs), else the decoders' own functions, and the stats line says why |
//! | `DAEDALUS_DEVICE` | index or name substring | which Vulkan device; default discrete > integrated > virtual > CPU |
//! | `DAEDALUS_LOG` | `error`, `warn` (default), `info`, `debug` | messages on stderr, prefixed `daedalus:` |
//! | `DAEDALUS_STATS` | `1`, `all` | at exit, one line on stderr: what ran, where and how long it took (`1`), or every counter (`all`) |
//! | `DAEDALUS_TRIAL_FRAMES` | a number from 1 to 1000 | frames per block of the trials that choose the path (default 16); set, every decode tries again, a CPU device too |
//!
//! For tests and development:
//!
//! | variable | values | effect |
//! |---|---|---|
//! | `DAEDALUS_VALIDATION` | `1` | the Khronos validation layer, its findings counted |
//! | `DAEDALUS_TEST_MEMORY` | `pool`, `copies` (or both, comma-separated) | `pool`: the decoders' frames in daedalus's device memory, nothing imported (a device without host-memory import, as the Pi's); `copies`: the frame path on device-local copies (a discrete GPU's way) |
//! | `DAEDALUS_TEST_ALTERNATE` | a number N | where `DAEDALUS_PATH` is unset, VP9's decoders switch between the frame path and FFmpeg's own decode every N frames instead of a trial (on a CPU device too), each decoder context's first frame FFmpeg's |
//! | `DAEDALUS_TEST_FAIL_SUBMISSION` | a number N | the process's N-th queue submission fails as a lost device would (on the frame path, a submission of several frames counts as one a frame) |
//! | `DAEDALUS_TEST_SETUP` | `wait` | where decoders follow a kept decision for the frame path, the frame that begins the device's set-up on its own thread waits for it, so that every later frame can take the GPU whatever the machine's pace |
//! | `DAEDALUS_TEST_GROUPS_PER_DISPATCH` | a number N | a kernel's jobs go out in dispatches of at most N workgroups, as on a device whose `maxComputeWorkGroupCount` is N |
//! | `DAEDALUS_TEST_FAIL_STEP` | `submit` (default), `submit-lost`, `wait`, `unpack`, `overflow`, `panic` | the step of that submission that fails: the submission (`submit-lost`: with the device lost), the wait after the GPU ran it, reading back what it wrote (`unpack`, `overflow`: the per-call path's), or the code submitting it, which panics (`panic`) |
//! | `DAEDALUS_TEST_FAIL_KERNELS` | `optional` | the kernels one decoder or path alone uses fail to build when first wanted |
//! | `DAEDALUS_KERNEL_BUILDER` | set by daedalus | in the process daedalus starts to compile the kernels into the pipeline cache, where no cache holds them (`src/gpu/builder.rs`); not for users |
//! | `DAEDALUS_TEST_FAIL_OBJECTS` | a number N | the N-th GPU objects the frame path makes after a frame's parse (a decoder context's first frame's, say) fail as an allocation would |

use once_cell::sync::Lazy;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Gpu,
    Cpu,
    /// The decoders' providers take no part (the C ABI still works, on the CPU reference).
    Off,
}

/// Which path the decoders take (`DAEDALUS_PATH`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DecoderPath {
    /// Unset: the GPU where it measured faster here, else the decoders' own functions.
    Auto,
    /// The GPU reconstructs: VP9's frame path, AV1's CDEF rows.
    Frame,
    /// The decoders' DSP calls one by one through the C ABI.
    Calls,
    /// The decoders' own functions.
    Ffmpeg,
}

/// How much the stats line at exit says (`DAEDALUS_STATS`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stats {
    Off,
    /// What ran, where, and how long it took.
    Summary,
    /// Every counter.
    All,
}

/// The switches of tests and development.
#[derive(Debug)]
pub struct Testing {
    pub validation: bool,
    /// `DAEDALUS_TEST_MEMORY=pool`: frames from the pool, nothing imported.
    pub frame_pool: bool,
    /// `DAEDALUS_TEST_MEMORY=copies`: the frame path on device-local copies.
    pub device_copies: bool,
    /// `DAEDALUS_TEST_ALTERNATE`: choosing decoders switch paths every so many frames.
    pub alternate: Option<usize>,
    /// `DAEDALUS_TEST_GROUPS_PER_DISPATCH`: the most workgroups a dispatch takes.
    pub groups_per_dispatch: Option<u32>,
    /// `DAEDALUS_TEST_SETUP=wait`: the frame that begins the device's set-up waits for it.
    pub setup_wait: bool,
    /// `DAEDALUS_TEST_FAIL_OBJECTS`: which GPU objects made after a frame's parse fail.
    pub fail_objects: Option<u64>,
}

#[derive(Debug)]
pub struct Config {
    pub mode: Mode,
    pub path: DecoderPath,
    pub device: Option<String>,
    pub log_level: Level,
    pub stats: Stats,
    /// `DAEDALUS_TRIAL_FRAMES`: frames per block of the trials (`None`: by the decoder).
    pub trial_frames: Option<usize>,
    pub testing: Testing,
}

impl Config {
    /// Whether a trial (`DAEDALUS_TRIAL_FRAMES`) or switches (`DAEDALUS_TEST_ALTERNATE`) are
    /// asked for: kept decisions are not followed then.
    pub fn trial_asked(&self) -> bool {
        self.trial_frames.is_some() || self.testing.alternate.is_some()
    }
}

/// `DAEDALUS_LOG`'s levels, most severe first ([`crate::log`] filters by them).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Level {
    Error = 0,
    Warn = 1,
    Info = 2,
    Debug = 3,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        match s.trim().to_ascii_lowercase().as_str() {
            "error" | "quiet" => Some(Level::Error),
            "warn" | "warning" => Some(Level::Warn),
            "info" => Some(Level::Info),
            "debug" | "trace" => Some(Level::Debug),
            _ => None,
        }
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `name`'s value among `choices` (`(text, value)`); `default` where unset, and with a warning
/// where it is none of them.
fn choice<T: Copy>(name: &str, choices: &[(&str, T)], default: T) -> T {
    let Some(v) = var(name) else {
        return default;
    };
    match choices.iter().find(|(text, _)| *text == v) {
        Some(&(_, value)) => value,
        None => {
            let names: Vec<&str> = choices.iter().map(|(text, _)| *text).collect();
            eprintln!(
                "daedalus: warning: {name}={v:?} is not {}; using the default",
                names.join("/")
            );
            default
        }
    }
}

static CONFIG: Lazy<Config> = Lazy::new(|| {
    let log_level = match var("DAEDALUS_LOG") {
        None => Level::Warn,
        Some(v) => Level::parse(&v).unwrap_or_else(|| {
            eprintln!(
                "daedalus: warning: DAEDALUS_LOG={v:?} is not error/warn/info/debug; using warn"
            );
            Level::Warn
        }),
    };
    let mode = choice(
        "DAEDALUS",
        &[("gpu", Mode::Gpu), ("cpu", Mode::Cpu), ("off", Mode::Off)],
        Mode::Gpu,
    );
    let path = choice(
        "DAEDALUS_PATH",
        &[
            ("frame", DecoderPath::Frame),
            ("calls", DecoderPath::Calls),
            ("ffmpeg", DecoderPath::Ffmpeg),
        ],
        DecoderPath::Auto,
    );
    let stats = choice(
        "DAEDALUS_STATS",
        &[
            ("1", Stats::Summary),
            ("all", Stats::All),
            ("0", Stats::Off),
        ],
        Stats::Off,
    );
    let trial_frames = var("DAEDALUS_TRIAL_FRAMES").and_then(|v| match v.parse::<usize>() {
        Ok(n @ 1..=1000) => Some(n),
        _ => {
            eprintln!(
                "daedalus: warning: DAEDALUS_TRIAL_FRAMES={v:?} is not a number from 1 to 1000; using the default"
            );
            None
        }
    });
    let memory = var("DAEDALUS_TEST_MEMORY").unwrap_or_default();
    let memory: Vec<&str> = memory.split(',').map(str::trim).collect();
    Config {
        mode,
        path,
        device: var("DAEDALUS_DEVICE"),
        log_level,
        stats,
        trial_frames,
        testing: Testing {
            validation: var("DAEDALUS_VALIDATION").as_deref() == Some("1"),
            frame_pool: memory.contains(&"pool"),
            device_copies: memory.contains(&"copies"),
            alternate: var("DAEDALUS_TEST_ALTERNATE").and_then(|v| v.parse().ok()),
            groups_per_dispatch: var("DAEDALUS_TEST_GROUPS_PER_DISPATCH")
                .and_then(|v| v.parse().ok())
                .filter(|&n| n > 0),
            setup_wait: var("DAEDALUS_TEST_SETUP").as_deref() == Some("wait"),
            fail_objects: var("DAEDALUS_TEST_FAIL_OBJECTS").and_then(|v| v.parse().ok()),
        },
    }
});

pub fn get() -> &'static Config {
    &CONFIG
}

/// Where daedalus keeps what it measured or built once per machine:
/// `$XDG_CACHE_HOME/daedalus`, else `$HOME/.cache/daedalus`.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| std::path::PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("daedalus"))
}
