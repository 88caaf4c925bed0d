//! Settings from the environment, read once per process.
//!
//! | variable | values | effect |
//! |---|---|---|
//! | `DAEDALUS` | `gpu` (default), `cpu`, `off` | `cpu`: record and defer as usual, execute with the CPU reference; `off`: the FFmpeg provider takes no part |
//! | `DAEDALUS_DEVICE` | index or name substring | which Vulkan device; default discrete > integrated > virtual > CPU |
//! | `DAEDALUS_LOG` | `error`, `warn`, `info`, `debug` | stderr verbosity (default `warn`) |
//! | `DAEDALUS_VALIDATION` | `1` | enable the Khronos validation layer and count its messages |
//! | `DAEDALUS_TEST_FAIL_SUBMISSION` | a number N | tests only: the process's N-th queue submission fails as a lost device would (the fallback tests through FFmpeg) |
//! | `DAEDALUS_TEST_FAIL_STEP` | `submit` (default), `submit-lost`, `wait`, `unpack`, `overflow` | tests only: the step of that submission that fails: the submission itself (`submit-lost`: with the device lost, which may come after part of it started), the wait after the GPU ran it all (a lost device), or reading back what the GPU wrote (the per-call path's submissions; the frame path meets `submit`, `wait`) |
//! | `DAEDALUS_TEST_ALTERNATE` | a number N | tests only: where `DAEDALUS_PATH` is unset, every N frames switch between the frame path and FFmpeg's own decode for the whole decode, instead of a trial (on a CPU device too) |
//! | `DAEDALUS_STATS` | `1` | print one line of counters on stderr at exit |
//! | `DAEDALUS_SPIN_US` | microseconds | how long a flush polls its fence before sleeping in the driver (default 0: it sleeps at once); not after a wait of more than twice that and over 1 ms |
//! | `DAEDALUS_PATH` | `frame`, `calls`, `ffmpeg` | how the VP9 decoder uses daedalus: `frame` the frame path (the decoder parses each frame whole and daedalus reconstructs it; with `DAEDALUS=cpu` or without a device FFmpeg's second pass reconstructs it from the parsed data), `calls` its DSP calls recorded one by one (`DAEDALUS_KERNELS`), `ffmpeg` FFmpeg's own functions; default: per frame-size class and threading, the decision of a trial (the frame path where it took at most 0.75 of FFmpeg's time, 0.7 with frame threads), kept in the cache directory for later decodes (`src/vp9/frame/choice.rs`, `decisions.rs`); the per-call path as calibrated where `DAEDALUS_KERNELS` is set, with `DAEDALUS=cpu`, for 10 and 12 bits, without a device that reconstructs frames, and on a CPU device (lavapipe: its work takes the decoder's own cores) |
//! | `DAEDALUS_TRIAL_FRAMES` | a number 1 to 1000 | frames per block of that trial (5 blocks: the frame path to warm up, then FFmpeg, the frame path twice, FFmpeg; each timed after its first frames to end, one per frame thread, which are the switch); at least twice the decoder's frame threads; set, a CPU device gets a trial too; default: 16 |
//! | `DAEDALUS_FRAME_PARTS` | a number 1 to 64 | the frame path: how many parts (each a submission of superblock rows, submitted while the decoder parses the next) a frame's reconstruction goes out in; default: 1 on a CPU device (lavapipe: its work competes with the decoder for the same cores), else 2 |
//! | `DAEDALUS_FRAME_PATH_MEMORY` | `device`, `host` | the frame path: `device` the GPU works on device-local copies (each part's parsed data copied there at its start; the frames reconstructed there, each copied back to the decoder's buffer at its end, references uploaded once where FFmpeg reconstructed them); `host` in place, in the host memory the decoder writes and reads; default: `device` where that host memory is not device-local (a discrete GPU), else `host` |
//! | `DAEDALUS_KERNELS` | e.g. `mc=cpu,lf=gpu` | where each family of the decoders' calls runs (`itx`, `mc`, `lf` of VP9, `cdef` of AV1; `all`): `gpu` deferred to the device (AV1's CDEF: whole superblock rows on the device, `src/av1/cdef_apply.rs`), `cpu` FFmpeg's (dav1d's) own function (VP9: at once, after what it touches completes; motion compensation, and transforms placed with it, straight from FFmpeg's table); a family not named keeps its default: VP9's calibrated per device, CDEF's tried on the decode |
//! | `DAEDALUS_FRAME_MEMORY` | `pool`, `import` | where the decoder's frames live: `pool` device memory daedalus allocates (the portable path), `import` the decoder's own memory imported with VK_EXT_external_memory_host; default: import where the device can, else pool |
//! | `DAEDALUS_FRAME_SPLIT` | `auto` (default), `off`, `rows`, per cent | on a thread that decodes a VP9 frame whole (`-threads 1`), submit the frame's work so far without waiting, so that the GPU runs it while the CPU decodes the rest: `rows` at every superblock row where only loop filters are deferred (motion compensation and transforms placed on the CPU) and the part before has finished, a per cent once that share of the rows is decoded; `auto`, `rows` where it applies with the split order of the loop filter's passes, else nothing, without a warning; `off`: one submission at the frame's end. Where an explicit setting cannot apply (frame threads; `rows` with motion compensation or transforms on the GPU) one warning says so |
//! | `DAEDALUS_LF_ORDER` | `split` (default), `rows` | how the GPU orders the decoder's superblock loop-filter passes: `split`, a workgroup per pass, superblock diagonals side by side, a plane's columns pass split where its masks leave a gap and its rows pass's last 8 columns apart, each job placed after what it reads (`wavefront`, the same unsplit, is retired: it warns and takes `split`); `rows`, one workgroup per plane walks a superblock row's passes in the decoder's order (a level per superblock row: about a fifth of the dispatches, but each pass waits for the one before inside the workgroup; 6 times the GPU time on the H100, where frames are host memory over PCIe) |
//! | `DAEDALUS_LF_CALLS` | `edges`, `superblocks` | how the VP9 decoder's loop filter reaches a device: a call per edge, or one per superblock (`ff_vp9_loopfilter_sb`'s hook: 6 passes placed by position instead of about 50 calls placed by their pixels); default: superblocks on every thread; with the `rows` order, except on a decoding thread that publishes its rows to others (frame threads), which wait for them and on whom that order's longer chain on the GPU weighs (docs/benchmarks-history.md) |

use once_cell::sync::Lazy;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Gpu,
    Cpu,
    /// The FFmpeg provider takes no part (the C ABI still works, on the CPU reference).
    Off,
}

/// A family of the decoders' DSP calls.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    Itx,
    Mc,
    Lf,
    /// dav1d's CDEF filter (AV1).
    Cdef,
}

impl Family {
    pub const ALL: [Family; 4] = [Family::Itx, Family::Mc, Family::Lf, Family::Cdef];
    /// The families of FFmpeg's VP9 decoder, placed (and calibrated) together.
    pub const VP9: [Family; 3] = [Family::Itx, Family::Mc, Family::Lf];

    pub fn name(self) -> &'static str {
        match self {
            Family::Itx => "itx",
            Family::Mc => "mc",
            Family::Lf => "lf",
            Family::Cdef => "cdef",
        }
    }
}

/// Where a family of the decoder's calls runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Place {
    /// Recorded and deferred to the device (to the CPU reference on the CPU path).
    Gpu,
    /// FFmpeg's own function at once, after the pending calls on what it touches complete.
    Cpu,
}

/// Each family's place, whether `DAEDALUS_KERNELS` chose it, and which families it named.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    places: [Place; 4],
    pub forced: bool,
    /// Per family in `Family::ALL` order: named by `DAEDALUS_KERNELS` (or by `all`).
    named: [bool; 4],
}

impl Placement {
    pub const ALL_GPU: Placement = Placement {
        places: [Place::Gpu; 4],
        forced: false,
        named: [false; 4],
    };

    /// Places in `Family::ALL` order; `forced` names every family.
    pub fn new(places: [Place; 4], forced: bool) -> Placement {
        Placement {
            places,
            forced,
            named: [forced; 4],
        }
    }

    /// Whether `DAEDALUS_KERNELS` named any of `families`: a group it does not name is still
    /// calibrated (`mc=cpu` for VP9 leaves CDEF's placement to the calibration).
    pub fn names_any(&self, families: &[Family]) -> bool {
        families.iter().any(|&f| self.named[f as usize])
    }

    pub fn of(&self, f: Family) -> Place {
        self.places[f as usize]
    }

    /// Whether `DAEDALUS_KERNELS` named `f` (or `all`).
    pub fn names(&self, f: Family) -> bool {
        self.named[f as usize]
    }

    pub fn set(&mut self, f: Family, place: Place) {
        self.places[f as usize] = place;
    }

    /// `itx:gpu,mc:cpu,lf:gpu,cdef:gpu`, as the stats line shows it.
    pub fn describe(&self) -> String {
        self.describe_only(&Family::ALL)
    }

    /// [`Placement::describe`] of some families.
    pub fn describe_only(&self, families: &[Family]) -> String {
        families
            .iter()
            .map(|&f| {
                let place = match self.of(f) {
                    Place::Gpu => "gpu",
                    Place::Cpu => "cpu",
                };
                format!("{}:{place}", f.name())
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Reads `family=place` items separated by commas; a bad item is reported and skipped.
    pub fn parse(text: &str) -> (Placement, Vec<String>) {
        let mut placement = Placement {
            places: [Place::Gpu; 4],
            forced: true,
            named: [false; 4],
        };
        let mut bad = Vec::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (family, place) = item.split_once('=').unwrap_or((item, ""));
            let place = match place.trim() {
                "gpu" => Place::Gpu,
                "cpu" => Place::Cpu,
                _ => {
                    bad.push(item.to_string());
                    continue;
                }
            };
            match family.trim() {
                "all" => {
                    placement.places = [place; 4];
                    placement.named = [true; 4];
                }
                name => match Family::ALL.iter().find(|f| f.name() == name) {
                    Some(&f) => {
                        placement.places[f as usize] = place;
                        placement.named[f as usize] = true;
                    }
                    None => bad.push(item.to_string()),
                },
            }
        }
        (placement, bad)
    }
}

/// How the VP9 decoder uses daedalus (`DAEDALUS_PATH`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DecoderPath {
    /// Unset: the frame path or FFmpeg's own functions, as a trial on the decode's first
    /// frames finds faster (`vp9::frame::choice`); the per-call path as calibrated where
    /// `DAEDALUS_KERNELS` is set, on the CPU path, and where the GPU cannot reconstruct frames.
    Auto,
    /// The frame path: the decoder parses a frame whole and daedalus reconstructs it.
    Frame,
    /// The decoder's DSP calls, recorded one by one (`DAEDALUS_KERNELS`).
    Calls,
    /// FFmpeg's own functions: the provider takes no part.
    Ffmpeg,
}

/// Where the decoder's frames live, so that the GPU works on them in place.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FrameMemory {
    /// Import where the device can import host memory, else the pool.
    Auto,
    /// Device memory daedalus allocates and the decoder uses for its frames (the portable
    /// path: needs no extension, only host-visible coherent memory).
    Pool,
    /// The decoder's own memory, imported (VK_EXT_external_memory_host; copied without it).
    Import,
}

#[derive(Debug)]
pub struct Config {
    pub mode: Mode,
    pub device: Option<String>,
    pub log_level: Level,
    pub validation: bool,
    pub spin_us: u64,
    pub stats_at_exit: bool,
    pub kernels: Placement,
    /// `DAEDALUS_PATH`: how the VP9 decoder uses daedalus.
    pub path: DecoderPath,
    /// `DAEDALUS_TRIAL_FRAMES`: frames per block of the trial that chooses the VP9 decoder's
    /// path (`None`: by the decoder's threads).
    pub trial_frames: Option<usize>,
    /// `DAEDALUS_TEST_ALTERNATE`: tests only, decoders that choose switch paths every so many
    /// frames instead.
    pub test_alternate: Option<usize>,
    /// `DAEDALUS_FRAME_PARTS`: the frame path's parts per frame (`None`: by device).
    pub frame_parts: Option<usize>,
    pub frame_memory: FrameMemory,
    /// `DAEDALUS_LF_CALLS`: whether the decoder's superblock loop-filter hook takes part.
    pub lf_calls: LfCalls,
    /// `DAEDALUS_LF_ORDER`: how the decoder's superblock passes are ordered on the GPU.
    pub lf_order: LfOrder,
    /// `DAEDALUS_INTRA_SYNC`: whether an intra sync may run the calls it reads ahead on the
    /// CPU, leaving them in the batch.
    pub reads_ahead: bool,
    /// `DAEDALUS_FRAME_SPLIT`: when a thread that decodes a VP9 frame whole submits the
    /// frame's work so far without waiting.
    pub frame_split: FrameSplit,
    /// `DAEDALUS_JOB_MEMORY`: where the GPU reads a submission's jobs and coefficients.
    pub job_memory: JobMemory,
    /// `DAEDALUS_FRAME_PATH_MEMORY`: where the frame path's kernels find the parsed data and
    /// the frames (device-local copies, or the host memory the decoder uses).
    pub frame_path_memory: JobMemory,
}

impl Config {
    /// Whether a trial (`DAEDALUS_TRIAL_FRAMES`) or switches (`DAEDALUS_TEST_ALTERNATE`) are
    /// asked for: kept decisions are not followed then.
    pub fn trial_asked(&self) -> bool {
        self.trial_frames.is_some() || self.test_alternate.is_some()
    }
}

/// Where the GPU reads a submission's jobs and coefficients (`gpu::stream`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum JobMemory {
    /// Copied into device-local memory where the host buffers are not device-local.
    Auto,
    /// From the host buffers the CPU wrote.
    Host,
    /// Always copied into device-local memory first.
    Device,
}

/// When a thread that decodes a frame whole submits part of it (`vp9::split_frame`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FrameSplit {
    /// `Rows` where it applies, else one submission at the frame's end, without a warning.
    Auto,
    /// One submission at the frame's end.
    Off,
    /// At every superblock row where only loop filters are deferred, else never.
    Rows,
    /// Once, after this share of the superblock rows (per cent).
    At(u32),
}

/// How the GPU orders the VP9 decoder's superblock loop-filter passes (`batch`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LfOrder {
    /// One workgroup per plane walks a superblock row's passes in the decoder's order (a
    /// level per superblock row).
    Rows,
    /// A workgroup per pass, superblock diagonals side by side, a plane's passes split where
    /// its masks leave a gap and placed by what they read, so that a superblock row's chain
    /// breaks there (the default). (The plain wavefront, unsplit, lost to it on every device
    /// measured and is retired.)
    Split,
}

/// How the VP9 decoder's loop filter reaches a device.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LfCalls {
    /// Superblocks; with the wavefront or rows order, except on threads that publish rows to
    /// others.
    Auto,
    /// A call per edge.
    Edges,
    /// A call per superblock, on every thread.
    Superblocks,
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
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
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
    let mode = match var("DAEDALUS").as_deref().map(str::trim) {
        None | Some("gpu") => Mode::Gpu,
        Some("cpu") => Mode::Cpu,
        Some("off") => Mode::Off,
        Some(other) => {
            eprintln!("daedalus: warning: DAEDALUS={other:?} is not gpu/cpu/off; using gpu");
            Mode::Gpu
        }
    };
    // Polling costs the CPU all of a wait, and the waits left (a frame's last rows) are
    // mostly longer than a driver's wake-up: sleeping at once is the default.
    let spin_us = match var("DAEDALUS_SPIN_US") {
        None => 0,
        Some(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("daedalus: warning: DAEDALUS_SPIN_US={v:?} is not a number; using 0");
            0
        }),
    };
    let kernels = match var("DAEDALUS_KERNELS") {
        None => Placement::ALL_GPU,
        Some(v) => {
            let (placement, bad) = Placement::parse(&v);
            if !bad.is_empty() {
                eprintln!(
                    "daedalus: warning: DAEDALUS_KERNELS: ignoring {bad:?} (items are itx, mc, lf, cdef or all = gpu or cpu)"
                );
            }
            placement
        }
    };
    let path = match var("DAEDALUS_PATH").as_deref().map(str::trim) {
        None => DecoderPath::Auto,
        Some("frame") => DecoderPath::Frame,
        Some("calls") => DecoderPath::Calls,
        Some("ffmpeg") => DecoderPath::Ffmpeg,
        Some(other) => {
            eprintln!(
                "daedalus: warning: DAEDALUS_PATH={other:?} is not frame/calls/ffmpeg; using the default"
            );
            DecoderPath::Auto
        }
    };
    let trial_frames = var("DAEDALUS_TRIAL_FRAMES").and_then(|v| match v.trim().parse::<usize>() {
        Ok(n @ 1..=1000) => Some(n),
        _ => {
            eprintln!(
                "daedalus: warning: DAEDALUS_TRIAL_FRAMES={v:?} is not a number from 1 to 1000; choosing by threads"
            );
            None
        }
    });
    let test_alternate = var("DAEDALUS_TEST_ALTERNATE").and_then(|v| v.trim().parse().ok());
    let frame_parts = var("DAEDALUS_FRAME_PARTS").and_then(|v| match v.trim().parse::<usize>() {
        Ok(n @ 1..=64) => Some(n),
        _ => {
            eprintln!(
                "daedalus: warning: DAEDALUS_FRAME_PARTS={v:?} is not a number from 1 to 64; choosing by device"
            );
            None
        }
    });
    let frame_memory = match var("DAEDALUS_FRAME_MEMORY").as_deref().map(str::trim) {
        None => FrameMemory::Auto,
        Some("pool") => FrameMemory::Pool,
        Some("import") => FrameMemory::Import,
        Some(other) => {
            eprintln!(
                "daedalus: warning: DAEDALUS_FRAME_MEMORY={other:?} is not pool/import; choosing by device"
            );
            FrameMemory::Auto
        }
    };
    let lf_calls = match var("DAEDALUS_LF_CALLS").as_deref().map(str::trim) {
        None => LfCalls::Auto,
        Some("edges") => LfCalls::Edges,
        Some("superblocks") => LfCalls::Superblocks,
        Some(other) => {
            eprintln!(
                "daedalus: warning: DAEDALUS_LF_CALLS={other:?} is not edges/superblocks; using the default"
            );
            LfCalls::Auto
        }
    };
    let lf_order = match var("DAEDALUS_LF_ORDER").as_deref().map(str::trim) {
        None | Some("split") => LfOrder::Split,
        Some("rows") => LfOrder::Rows,
        Some("wavefront") => {
            eprintln!(
                "daedalus: warning: DAEDALUS_LF_ORDER=wavefront is retired (split, the default, \
                 was faster on every device measured); using split"
            );
            LfOrder::Split
        }
        Some(other) => {
            eprintln!(
                "daedalus: warning: DAEDALUS_LF_ORDER={other:?} is not split/rows; using split"
            );
            LfOrder::Split
        }
    };
    let reads_ahead = match var("DAEDALUS_INTRA_SYNC").as_deref().map(str::trim) {
        None | Some("ahead") => true,
        Some("whole") => false,
        Some(other) => {
            eprintln!(
                "daedalus: warning: DAEDALUS_INTRA_SYNC={other:?} is not ahead/whole; using ahead"
            );
            true
        }
    };
    let frame_split = match var("DAEDALUS_FRAME_SPLIT").as_deref().map(str::trim) {
        // By rows where only the loop filter is deferred, with its passes split by their
        // masks (the default order): a row's filters are then a few levels on the GPU, which
        // run while the CPU decodes the next row (docs/benchmarks-history.md); on the wavefront they
        // chained through the row and did not pay. A per cent stays off unless set: with motion
        // compensation deferred, making the next row's reads final costs the CPU more than
        // the shorter wait at the frame's end saves.
        None | Some("auto") => FrameSplit::Auto,
        Some("off") => FrameSplit::Off,
        Some("rows") => FrameSplit::Rows,
        Some(v) => match v.parse::<u32>() {
            Ok(p @ 1..=99) => FrameSplit::At(p),
            _ => {
                eprintln!(
                    "daedalus: warning: DAEDALUS_FRAME_SPLIT={v:?} is not auto, off, rows or a per cent from 1 to 99; using auto"
                );
                FrameSplit::Auto
            }
        },
    };
    let job_memory = match var("DAEDALUS_JOB_MEMORY").as_deref().map(str::trim) {
        None => JobMemory::Auto,
        Some("host") => JobMemory::Host,
        Some("device") => JobMemory::Device,
        Some(other) => {
            eprintln!(
                "daedalus: warning: DAEDALUS_JOB_MEMORY={other:?} is not host/device; choosing by device"
            );
            JobMemory::Auto
        }
    };
    let frame_path_memory = match var("DAEDALUS_FRAME_PATH_MEMORY").as_deref().map(str::trim) {
        None => JobMemory::Auto,
        Some("host") => JobMemory::Host,
        Some("device") => JobMemory::Device,
        Some(other) => {
            eprintln!(
                "daedalus: warning: DAEDALUS_FRAME_PATH_MEMORY={other:?} is not host/device; choosing by device"
            );
            JobMemory::Auto
        }
    };
    Config {
        job_memory,
        frame_path_memory,
        reads_ahead,
        frame_split,
        kernels,
        path,
        trial_frames,
        test_alternate,
        frame_parts,
        frame_memory,
        lf_calls,
        lf_order,
        mode,
        device: var("DAEDALUS_DEVICE"),
        log_level,
        validation: var("DAEDALUS_VALIDATION").as_deref() == Some("1"),
        stats_at_exit: var("DAEDALUS_STATS").as_deref() == Some("1"),
        spin_us,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_setting_parses_items_and_reports_bad_ones() {
        let (p, bad) = Placement::parse("mc=cpu, lf=gpu");
        assert_eq!(p.describe(), "itx:gpu,mc:cpu,lf:gpu,cdef:gpu");
        assert!(bad.is_empty());
        let (p, bad) = Placement::parse("all=cpu,itx=gpu,mc=fast,dct=cpu,lf");
        assert_eq!(p.describe(), "itx:gpu,mc:cpu,lf:cpu,cdef:cpu");
        assert_eq!(p.describe_only(&[Family::Cdef]), "cdef:cpu");
        assert!(p.names_any(&[Family::Cdef]));
        let (p, _) = Placement::parse("mc=cpu");
        assert!(p.names_any(&Family::VP9) && !p.names_any(&[Family::Cdef]));
        assert_eq!(bad, ["mc=fast", "dct=cpu", "lf"]);
    }
}
