//! The default placement of the decoder's call families (when `DAEDALUS_KERNELS` is unset):
//! a short calibration on the chosen device, run once per device, driver, CPU and library
//! version and cached under the user's cache directory.
//!
//! The calibration times, per family, a frame-like batch of that family's calls two ways on
//! two frames of the pool: recorded and executed on the GPU (recording, submission and wait:
//! the host time a decoding thread spends per call on the GPU path), and FFmpeg's own functions
//! (its SIMD where it has some). A family goes to the GPU where that costs the host less per
//! call. One measurement, on pool frames, on one thread: a result taken under load stays
//! until the key changes (delete the cache file to measure again). Both runs start from the same pixels and must end with the same pixels: a device
//! that computes something else is not used (loudly). Its calls are not counted in the stats
//! line, which reports what it measured (`calibration=`). Interactions between families (a family
//! on the CPU completing pending GPU work that it reads) are not measured.

use crate::batch::{self, Origin, FFMPEG_DSP, FFMPEG_ITX};
use crate::config::{Family, Place, Placement};
use crate::gpu::{self, memory::HostBuffer, Gpu};
use crate::kernels::itx::{Transform, Tx1d, TxSize};
use crate::kernels::lf::{LfDir, LfFunction};
use crate::kernels::mc::{McFilter, McFunction};
use crate::stats::Reason;
use once_cell::sync::OnceCell;
use std::path::PathBuf;
use std::time::Instant;

/// Bumped whenever the workload or the rule changes, so that old cached results are ignored.
const CALIBRATION_VERSION: u32 = 1;

/// The chosen placement and how it was chosen.
#[derive(Clone, Debug)]
pub struct Decision {
    pub placement: Placement,
    /// `DAEDALUS_KERNELS`, `calibration`, `cache`, `no-device`, `cpu-path` or
    /// `calibration-failed`.
    pub by: &'static str,
    /// Per family `family:gpu_ns/cpu_ns` host nanoseconds per call, rounded (empty if not
    /// measured); a family goes to the GPU only where its time is lower, ties stay on the CPU.
    pub measured: String,
    /// The device measured (empty if none was).
    pub device: String,
}

impl Decision {
    /// Whether the provider should take no part: the device was measured (or its result
    /// cached) and every family is faster on the CPU, where FFmpeg's table as it is costs
    /// nothing per call. A placement set with `DAEDALUS_KERNELS` is always followed.
    pub fn keeps_ffmpeg(&self) -> bool {
        !self.placement.forced
            && Family::ALL
                .iter()
                .all(|&f| self.placement.of(f) == Place::Cpu)
    }
}

static DECISION: OnceCell<Decision> = OnceCell::new();

/// The placement in force: decided at the provider's first `attach`, every family on the GPU
/// before that (the C ABI's calls are not placed).
pub fn placement() -> Placement {
    DECISION.get().map_or(Placement::ALL_GPU, |d| d.placement)
}

/// The decision, once made.
pub fn decision() -> Option<&'static Decision> {
    DECISION.get()
}

/// Fixes the placement as `DAEDALUS_KERNELS` would, unless it is already decided (for
/// programs and tests that attach the provider themselves). Returns whether it took effect.
pub fn force(placement: Placement) -> bool {
    DECISION
        .set(Decision {
            placement,
            by: "DAEDALUS_KERNELS",
            measured: String::new(),
            device: String::new(),
        })
        .is_ok()
}

/// Decides the placement once per process. Needs FFmpeg's table (`FFMPEG_DSP`), so the
/// provider calls it from `attach`.
pub fn decide() -> &'static Decision {
    DECISION.get_or_init(|| {
        let config = crate::config::get();
        let fixed = |by| Decision {
            placement: config.kernels,
            by,
            measured: String::new(),
            device: String::new(),
        };
        if config.kernels.forced {
            return fixed("DAEDALUS_KERNELS");
        }
        if config.mode != crate::config::Mode::Gpu {
            return fixed("cpu-path");
        }
        // A cached result needs no Vulkan at all (an instance alone costs tens of ms).
        let key = cache_key();
        if let Some(d) = read_cache(&key) {
            return d;
        }
        let Some(gpu) = gpu::get() else {
            return fixed("no-device");
        };
        let started = Instant::now();
        match crate::stats::quietly(|| unsafe { measure() }) {
            Ok(times) => {
                let mut d = Decision {
                    placement: Placement::ALL_GPU,
                    by: "calibration",
                    measured: String::new(),
                    device: gpu.info.name.clone(),
                };
                let mut places = [Place::Gpu; 3];
                let mut parts = Vec::new();
                for (f, (gpu_ns, cpu_ns)) in Family::ALL.iter().zip(times) {
                    let (gpu_ns, cpu_ns) = (gpu_ns.round(), cpu_ns.round());
                    places[*f as usize] = if gpu_ns < cpu_ns {
                        Place::Gpu
                    } else {
                        Place::Cpu
                    };
                    parts.push(format!("{}:{gpu_ns:.0}/{cpu_ns:.0}", f.name()));
                }
                d.placement = Placement::new(places, false);
                d.measured = parts.join(",");
                crate::info!(
                    "calibrated in {:.0} ms (host ns per call, gpu/cpu: {}): {}",
                    started.elapsed().as_secs_f64() * 1e3,
                    d.measured,
                    d.placement.describe()
                );
                write_cache(&key, &d);
                d
            }
            Err(e) => {
                crate::warn!("calibration failed ({e}); FFmpeg's own functions run");
                Decision {
                    placement: Placement::new([Place::Cpu; 3], false),
                    by: "calibration-failed",
                    measured: String::new(),
                    device: gpu.info.name.clone(),
                }
            }
        }
    })
}

/// What decides the device, its driver and the CPU baseline, read without Vulkan: the
/// library version, the CPU model, `DAEDALUS_DEVICE`, the loader's driver variables, the
/// driver manifests (path, size, modification time) and the GPUs the kernel lists. A driver
/// upgrade rewrites its manifest, so it is measured again.
fn cache_key() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let mut facts = vec![format!("device={:?}", crate::config::get().device)];
    let mut manifests: Vec<PathBuf> = Vec::new();
    let vars = ["VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES"];
    for var in vars {
        let value = std::env::var(var).unwrap_or_default();
        facts.push(format!("{var}={value}"));
        manifests.extend(
            value
                .split(':')
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
        );
    }
    let dirs = [
        "/etc/vulkan/icd.d",
        "/usr/share/vulkan/icd.d",
        "/usr/local/share/vulkan/icd.d",
    ];
    manifests.extend(dirs.iter().map(PathBuf::from));
    let mut files = Vec::new();
    for path in manifests {
        match std::fs::read_dir(&path) {
            Ok(entries) => files.extend(entries.flatten().map(|e| e.path())),
            Err(_) => files.push(path),
        }
    }
    files.sort();
    for file in files {
        if let Ok(m) = std::fs::metadata(&file) {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            facts.push(format!("{} {} {:?}", file.display(), m.len(), mtime));
        }
    }
    if let Ok(entries) = std::fs::read_dir("/sys/class/drm") {
        let mut gpus: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("renderD"))
            .map(|e| {
                let id = |f| {
                    std::fs::read_to_string(e.path().join("device").join(f)).unwrap_or_default()
                };
                format!("{}:{}", id("vendor").trim(), id("device").trim())
            })
            .collect();
        gpus.sort();
        facts.push(gpus.join(","));
    }
    format!(
        "v{CALIBRATION_VERSION} daedalus {} | {cpu} | {:016x}",
        env!("CARGO_PKG_VERSION"),
        fnv1a(facts.join("\n").as_bytes())
    )
    .replace('\t', " ")
}

/// A hash that stays the same across builds and Rust versions (64-bit FNV-1a).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `placement.tsv` in daedalus's cache directory ([`crate::config::cache_dir`]).
fn cache_file() -> Option<PathBuf> {
    Some(crate::config::cache_dir()?.join("placement.tsv"))
}

/// Lines `key \t placement \t measured \t device`; a line that does not parse is ignored.
fn read_cache(key: &str) -> Option<Decision> {
    let text = std::fs::read_to_string(cache_file()?).ok()?;
    text.lines().find_map(|line| {
        let mut fields = line.split('\t');
        let (k, p, m, device) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        if k != key {
            return None;
        }
        let (placement, bad) = Placement::parse(&p.replace(':', "="));
        let complete = Family::ALL.iter().all(|f| p.contains(f.name()));
        (bad.is_empty() && complete).then(|| Decision {
            placement: Placement::new(Family::ALL.map(|f| placement.of(f)), false),
            by: "cache",
            measured: m.to_string(),
            device: device.to_string(),
        })
    })
}

/// Replaces this key's line; written to a temporary file and renamed, so that concurrent
/// processes never read half a file. Failure only costs a calibration next time.
fn write_cache(key: &str, d: &Decision) {
    let Some(path) = cache_file() else { return };
    let result = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(path.parent().expect("has a parent"))?;
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let mut text: String = old
            .lines()
            .filter(|l| l.split('\t').next() != Some(key))
            .map(|l| format!("{l}\n"))
            .collect();
        text.push_str(&format!(
            "{key}\t{}\t{}\t{}\n",
            d.placement.describe(),
            d.measured,
            d.device.replace(['\t', '\n'], " ")
        ));
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path)
    })();
    if let Err(e) = result {
        crate::debug!("calibration not cached in {}: {e}", path.display());
    }
}

/// The scratch frames: `WIDTH` x `HEIGHT` pixels inside a `MARGIN` that motion compensation's
/// source windows may reach into.
const WIDTH: usize = 1024;
const HEIGHT: usize = 512;
const MARGIN: usize = 64;
const STRIDE: usize = WIDTH + 2 * MARGIN;
const FRAME_BYTES: usize = STRIDE * (HEIGHT + 2 * MARGIN);

/// A frame of the pool, registered while the calibration uses it.
struct Scratch {
    base: *mut u8,
}

impl Scratch {
    fn new(gpu: &'static Gpu) -> Result<Scratch, String> {
        let buffer = HostBuffer::for_frame(gpu, FRAME_BYTES as u64)?;
        let base = buffer.ptr;
        crate::regions::register_pool_frame(buffer)?;
        Ok(Scratch { base })
    }

    /// The pixel at (`x`, `y`) of the picture (inside the margin).
    fn at(&self, x: usize, y: usize) -> *mut u8 {
        unsafe { self.base.add((y + MARGIN) * STRIDE + x + MARGIN) }
    }

    /// Smooth content with a little noise, so that loop filters filter.
    fn fill(&self, seed: u32) {
        let mut state = seed.wrapping_mul(2_654_435_761) | 1;
        for i in 0..FRAME_BYTES {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let (x, y) = (i % STRIDE, i / STRIDE);
            let v = ((x / 5 + y / 3) % 200) as u8 + (state % 5) as u8 + 20;
            unsafe { *self.base.add(i) = v };
        }
    }

    fn pixels(&self) -> Vec<u8> {
        unsafe { std::slice::from_raw_parts(self.base, FRAME_BYTES) }.to_vec()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        batch::flush_for(Reason::Caller);
        crate::regions::unregister(self.base as usize);
    }
}

/// One call of a family's workload.
enum Call {
    Itx {
        tx: Transform,
        x: usize,
        y: usize,
        coefs: usize,
        eob: i32,
    },
    Mc {
        f: McFunction,
        x: usize,
        y: usize,
    },
    Lf {
        f: LfFunction,
        x: usize,
        y: usize,
    },
}

/// Coefficient blocks, 32-byte aligned as FFmpeg's SIMD reads them.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Aligned([i16; 16]);

/// Transforms tiling the picture: per 32x32 tile one 32x32, four 16x16, or 8x8s with a 4x4
/// in every other 8x8 cell; a few small coefficients in each block's low frequencies.
fn itx_workload() -> (Vec<Call>, Vec<Aligned>) {
    let dct = |size| Transform::new(size, Tx1d::Dct, Tx1d::Dct);
    let mut calls = Vec::new();
    let mut coefs: Vec<Aligned> = Vec::new();
    let mut add = |tx: Transform, x: usize, y: usize, calls: &mut Vec<Call>| {
        let n = 4usize << tx.size as usize;
        let k = [2, 3, 4, 5][tx.size as usize];
        let at = coefs.len() * 16;
        coefs.resize(coefs.len() + n * n / 16, Aligned([0; 16]));
        for r in 0..k {
            for c in 0..k {
                let v = ((r * 7 + c * 13 + x + y) % 41) as i16 - 20;
                let i = at + r * n + c;
                coefs[i / 16].0[i % 16] = v;
            }
        }
        let eob = (2 * k * k).min(n * n) as i32;
        calls.push(Call::Itx {
            tx,
            x,
            y,
            coefs: at,
            eob,
        });
    };
    for ty in (0..HEIGHT).step_by(32) {
        for tx in (0..WIDTH).step_by(32) {
            match (ty / 32 * (WIDTH / 32) + tx / 32) % 8 {
                0 => add(dct(TxSize::T32), tx, ty, &mut calls),
                1 | 2 => {
                    for (i, j) in [(0, 0), (16, 0), (0, 16), (16, 16)] {
                        add(dct(TxSize::T16), tx + i, ty + j, &mut calls)
                    }
                }
                _ => {
                    for j in (0..32).step_by(8) {
                        for i in (0..32).step_by(8) {
                            let size = if (i + j) % 16 == 0 {
                                TxSize::T4
                            } else {
                                TxSize::T8
                            };
                            add(dct(size), tx + i, ty + j, &mut calls)
                        }
                    }
                }
            }
        }
    }
    (calls, coefs)
}

/// Eight-tap motion compensation of every 8x8 cell (a 16x16 block in every fourth 16x16
/// area), a quarter of them averaging, from the reference frame a few pixels away.
fn mc_workload() -> Vec<Call> {
    let mut calls = Vec::new();
    for y in (0..HEIGHT).step_by(16) {
        for x in (0..WIDTH).step_by(16) {
            let k = y / 16 * (WIDTH / 16) + x / 16;
            let f = |width, avg| McFunction {
                width,
                filter: McFilter::Regular,
                avg,
                h: true,
                v: true,
            };
            if k % 4 == 0 {
                calls.push(Call::Mc {
                    f: f(16, false),
                    x,
                    y,
                });
            } else {
                for (i, j) in [(0, 0), (8, 0), (0, 8), (8, 8)] {
                    calls.push(Call::Mc {
                        f: f(8, (k + i) % 4 == 0),
                        x: x + i,
                        y: y + j,
                    });
                }
            }
        }
    }
    calls
}

/// Per row of 8x8 cells: the filters across its vertical edges, then across its horizontal
/// ones (as the decoder orders them), widths 4 and 8 alternating.
fn lf_workload() -> Vec<Call> {
    let mut calls = Vec::new();
    for y in (0..HEIGHT).step_by(8) {
        for dir in [LfDir::H, LfDir::V] {
            for x in (0..WIDTH).step_by(8) {
                if (dir == LfDir::H && x == 0) || (dir == LfDir::V && y == 0) {
                    continue;
                }
                let wd = if (x / 8 + y / 8) % 2 == 0 { 8 } else { 4 };
                calls.push(Call::Lf {
                    f: LfFunction::Lines8 { wd, dir },
                    x,
                    y,
                });
            }
        }
    }
    calls
}

const LF_E: i32 = 40;
const LF_I: i32 = 12;
const LF_H: i32 = 2;
const MC_MX: i32 = 5;
const MC_MY: i32 = 9;

/// Runs `calls` on `frame` (motion compensation reading `reference`), recorded for the GPU
/// (`gpu`) or with FFmpeg's functions; returns the host nanoseconds per call.
unsafe fn run(
    calls: &[Call],
    coefs: &[Aligned],
    frame: &Scratch,
    reference: &Scratch,
    gpu: bool,
) -> Result<f64, String> {
    let dsp = FFMPEG_DSP.get().ok_or("FFmpeg's table is not known")?;
    let itx = FFMPEG_ITX
        .get()
        .ok_or("FFmpeg's transforms are not known")?;
    // The transforms zero their coefficients: each run gets its own copy.
    let mut blocks = coefs.to_vec();
    let blocks = blocks.as_mut_ptr() as *mut i16;
    let stride = STRIDE as isize;
    let start = Instant::now();
    for call in calls {
        match *call {
            Call::Itx {
                tx,
                x,
                y,
                coefs,
                eob,
            } => {
                let (dst, block) = (frame.at(x, y), blocks.add(coefs));
                if gpu {
                    batch::record_itx(tx, dst, stride, block, eob, Origin::Api)
                } else {
                    itx[tx.index()](dst, stride, block, eob)
                }
            }
            Call::Mc { f, x, y } => {
                let (dst, src) = (frame.at(x, y), reference.at(x + 3, y + 2));
                let h = f.width as i32;
                if gpu {
                    batch::record_mc(f, dst, stride, src, stride, h, MC_MX, MC_MY, Origin::Api)
                } else {
                    let function = dsp.mc_fn(f).ok_or("a motion compensation is missing")?;
                    function(dst, stride, src, stride, h, MC_MX, MC_MY)
                }
            }
            Call::Lf { f, x, y } => {
                let dst = frame.at(x, y);
                if gpu {
                    batch::record_lf(f, dst, stride, LF_E, LF_I, LF_H, Origin::Api)
                } else {
                    let function = dsp.lf_fn(f).ok_or("a loop filter is missing")?;
                    function(dst, stride, LF_E, LF_I, LF_H)
                }
            }
        }
    }
    if gpu {
        batch::flush_for(Reason::Caller);
    }
    Ok(start.elapsed().as_nanos() as f64 / calls.len() as f64)
}

/// Host nanoseconds per call, (GPU, FFmpeg), per family in `Family::ALL` order: the best of
/// two timed runs each, after one untimed GPU run (first dispatches may compile).
unsafe fn measure() -> Result<[(f64, f64); 3], String> {
    let gpu = gpu::get().ok_or("no device")?;
    let (frame, reference) = (Scratch::new(gpu)?, Scratch::new(gpu)?);
    reference.fill(2);
    let (itx_calls, coefs) = itx_workload();
    let workloads = [
        (itx_calls, coefs),
        (mc_workload(), Vec::new()),
        (lf_workload(), Vec::new()),
    ];
    let mut times = [(0.0, 0.0); 3];
    for (family, (calls, coefs)) in workloads.iter().enumerate() {
        let mut best = (f64::MAX, f64::MAX);
        let mut results: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
        for round in 0..3 {
            for (side, on_gpu) in [(0, true), (1, false)] {
                if round == 0 && !on_gpu {
                    continue;
                }
                frame.fill(1);
                let ns = run(calls, coefs, &frame, &reference, on_gpu)?;
                if round > 0 {
                    let b = if on_gpu { &mut best.0 } else { &mut best.1 };
                    *b = b.min(ns);
                    results[side] = frame.pixels();
                }
            }
        }
        if gpu::get().is_none() {
            return Err("the device was lost".into());
        }
        if results[0] != results[1] {
            return Err(format!(
                "the device's {} results differ from FFmpeg's",
                Family::ALL[family].name()
            ));
        }
        times[family] = best;
    }
    Ok(times)
}
