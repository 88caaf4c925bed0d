//! The default placement of VP9's call families (when `DAEDALUS_KERNELS` is unset): a short
//! calibration on the chosen device, run once per device, driver, CPU and library version and
//! cached under the user's cache directory; the decision is kept in [`crate::placement`].
//! (AV1's CDEF is placed by its provider, `crate::av1::decide_cdef`, and tried on the decode
//! itself.) Also the store of facts measured once per machine ([`cached_fact`]).
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
use crate::placement::{self, Decision};
use crate::stats::Reason;
use std::path::PathBuf;
use std::time::Instant;

/// Bumped whenever the workload or the rule changes, so that old cached results are ignored.
const CALIBRATION_VERSION: u32 = 1;

/// Fixes VP9's placement as `DAEDALUS_KERNELS` would, unless it is already decided (for
/// programs and tests that attach the provider themselves). Returns whether it took effect.
pub fn force(placement: Placement) -> bool {
    placement::fix_vp9(Decision::unmeasured(placement, "DAEDALUS_KERNELS", ""))
}

/// Decides VP9's placement once per process. Needs FFmpeg's table (`FFMPEG_DSP`), so the
/// provider calls it from `attach`.
pub fn decide() -> &'static Decision {
    placement::decide_vp9(|| decide_group(&Family::VP9, || unsafe { measure_vp9() }))
}

/// The decision for `families`: `DAEDALUS_KERNELS`, the CPU path, the cache, or `measure`
/// (host nanoseconds per call, GPU and CPU, per family).
fn decide_group(
    families: &[Family],
    measure: impl FnOnce() -> Result<Vec<(f64, f64)>, String>,
) -> Decision {
    let config = crate::config::get();
    let fixed = |by| Decision::unmeasured(config.kernels, by, "");
    let named: Vec<Family> = families
        .iter()
        .copied()
        .filter(|&f| config.kernels.names(f))
        .collect();
    if named.len() == families.len() {
        return fixed("DAEDALUS_KERNELS");
    }
    if config.mode != crate::config::Mode::Gpu {
        return fixed("cpu-path");
    }
    // The families `DAEDALUS_KERNELS` names go where it says; the others where they would
    // without it.
    let mut d = decide_unnamed(families, measure);
    if !named.is_empty() {
        for f in named {
            d.placement.set(f, config.kernels.of(f));
        }
        d.placement.forced = true;
        d.by = match d.by {
            "calibration" => "DAEDALUS_KERNELS+calibration",
            "cache" => "DAEDALUS_KERNELS+cache",
            "no-device" => "DAEDALUS_KERNELS+no-device",
            _ => "DAEDALUS_KERNELS+calibration-failed",
        };
    }
    d
}

/// A group's decision without `DAEDALUS_KERNELS`: the cache, no device, or `measure`.
fn decide_unnamed(
    families: &[Family],
    measure: impl FnOnce() -> Result<Vec<(f64, f64)>, String>,
) -> Decision {
    // A cached result needs no Vulkan at all (an instance alone costs tens of ms).
    let key = cache_key();
    if let Some(d) = read_cache(&key, families) {
        return d;
    }
    // Without a device (warned once where it was looked for) the decoder's own functions
    // run: faster than the reference the CPU path would run in their place.
    let on_cpu = |by| {
        let mut placement = Placement::ALL_GPU;
        for &f in families {
            placement.set(f, Place::Cpu);
        }
        Decision::unmeasured(placement, by, "")
    };
    let Some(gpu) = gpu::get() else {
        return on_cpu("no-device");
    };
    let started = Instant::now();
    match crate::stats::quietly(measure) {
        Ok(times) => {
            let mut placement = Placement::ALL_GPU;
            let mut parts = Vec::new();
            for (&f, (gpu_ns, cpu_ns)) in families.iter().zip(times) {
                let (gpu_ns, cpu_ns) = (gpu_ns.round(), cpu_ns.round());
                let place = if gpu_ns < cpu_ns {
                    Place::Gpu
                } else {
                    Place::Cpu
                };
                placement.set(f, place);
                parts.push(format!("{}:{gpu_ns:.0}/{cpu_ns:.0}", f.name()));
            }
            let d = Decision {
                placement,
                by: "calibration",
                measured: parts.join(","),
                device: gpu.info.name.clone(),
            };
            crate::info!(
                "calibrated in {:.0} ms (host ns per call, gpu/cpu: {}): {}",
                started.elapsed().as_secs_f64() * 1e3,
                d.measured,
                d.placement.describe_only(families)
            );
            write_cache(&key, families, &d);
            d
        }
        Err(e) => {
            crate::warn!(
                "calibration failed ({e}); the decoder's own functions run ({})",
                families
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            Decision {
                device: gpu.info.name.clone(),
                ..on_cpu("calibration-failed")
            }
        }
    }
}

/// What decides the device, its driver and the CPU baseline, read without Vulkan: the
/// library version, the CPU model, the program (path, size, modification time), `DAEDALUS_DEVICE`, the loader's driver variables, the
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
    // The program, whose decoder functions (FFmpeg's, dav1d's linked into it) are the CPU
    // side of the measurement: another build is measured again.
    if let Ok(exe) = std::env::current_exe() {
        let m = std::fs::metadata(&exe).ok();
        let mtime = m.as_ref().and_then(|m| m.modified().ok());
        facts.push(format!(
            "{} {:?} {mtime:?}",
            exe.display(),
            m.map(|m| m.len())
        ));
    }
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
        crate::gpu::cache::fnv1a(facts.join("\n").as_bytes())
    )
    .replace('\t', " ")
}

/// `placement.tsv` in daedalus's cache directory ([`crate::config::cache_dir`]).
fn cache_file() -> Option<PathBuf> {
    Some(crate::config::cache_dir()?.join("placement.tsv"))
}

/// Lines `key \t placement \t measured \t device`; a line that does not parse, or lacks a
/// family of the group, is ignored.
fn read_cache(key: &str, families: &[Family]) -> Option<Decision> {
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
        let (parsed, bad) = Placement::parse(&p.replace(':', "="));
        let complete = families.iter().all(|f| {
            p.split(',')
                .any(|item| item.split(':').next() == Some(f.name()))
        });
        let mut placement = Placement::ALL_GPU;
        for &f in families {
            placement.set(f, parsed.of(f));
        }
        (bad.is_empty() && complete).then(|| Decision {
            placement,
            by: "cache",
            measured: m.to_string(),
            device: device.to_string(),
        })
    })
}

/// Replaces this key's line; written to a temporary file and renamed, so that concurrent
/// processes never read half a file. Failure only costs a calibration next time.
fn write_cache(key: &str, families: &[Family], d: &Decision) {
    let Some(path) = cache_file() else { return };
    let fields = format!(
        "{}\t{}\t{}",
        d.placement.describe_only(families),
        d.measured,
        d.device.replace(['\t', '\n'], " ")
    );
    if let Err(e) = replace_line(&path, key, &fields) {
        crate::debug!("calibration not cached in {}: {e}", path.display());
    }
}

/// Replaces the line of `key` in the file at `path` with `key \t fields`, writing a temporary
/// file of this write alone and renaming it, so that readers never see half a file.
fn replace_line(path: &std::path::Path, key: &str, fields: &str) -> std::io::Result<()> {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    std::fs::create_dir_all(path.parent().expect("has a parent"))?;
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let mut text: String = old
        .lines()
        .filter(|l| l.split('\t').next() != Some(key))
        .map(|l| format!("{l}\n"))
        .collect();
    text.push_str(&format!("{key}\t{fields}\n"));
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// A fact about this key's device, cached in `devices.tsv` beside the placements (a line
/// `key name \t value`), so that a later run knows it without setting Vulkan up.
pub fn cached_fact(name: &str) -> Option<String> {
    cached_facts(&[name]).pop().flatten()
}

/// [`cached_fact`] of each of `names`, from one read of the file.
pub fn cached_facts(names: &[&str]) -> Vec<Option<String>> {
    let key = cache_key();
    let text = facts_file()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .unwrap_or_default();
    names
        .iter()
        .map(|name| {
            let wanted = format!("{key} {name}");
            text.lines()
                .find_map(|line| match line.split('\t').collect::<Vec<_>>()[..] {
                    [k, value] if k == wanted => Some(value.to_string()),
                    _ => None,
                })
        })
        .collect()
}

/// Caches `value` as this key's `name` (see [`cached_fact`]).
pub fn cache_fact(name: &str, value: &str) {
    let key = format!("{} {name}", cache_key());
    let Some(path) = facts_file() else { return };
    if let Err(e) = replace_line(&path, &key, value) {
        crate::debug!("{name} not cached in {}: {e}", path.display());
    }
}

/// `devices.tsv` in daedalus's cache directory.
fn facts_file() -> Option<PathBuf> {
    Some(crate::config::cache_dir()?.join("devices.tsv"))
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

    /// Smooth content with a little noise, so that loop filters filter; with two-byte
    /// pixels (native endian, as dav1d's) ten-bit values.
    fn fill(&self, seed: u32, pixel_bytes: usize) {
        let mut state = seed.wrapping_mul(2_654_435_761) | 1;
        for i in (0..FRAME_BYTES).step_by(pixel_bytes) {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let (x, y) = (i % STRIDE / pixel_bytes, i / STRIDE);
            let v = ((x / 5 + y / 3) % 200) as u16 + (state % 5) as u16 + 20;
            unsafe {
                match pixel_bytes {
                    1 => *self.base.add(i) = v as u8,
                    _ => (self.base.add(i) as *mut u16).write(v * 4 + (state % 4) as u16),
                }
            }
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

/// Host nanoseconds per call, (GPU, FFmpeg), per family in `Family::VP9` order: the best of
/// two timed runs each, after one untimed GPU run (first dispatches may compile).
unsafe fn measure_vp9() -> Result<Vec<(f64, f64)>, String> {
    let gpu = gpu::get().ok_or("no device")?;
    let (frame, reference) = (Scratch::new(gpu)?, Scratch::new(gpu)?);
    reference.fill(2, 1);
    let (itx_calls, coefs) = itx_workload();
    let workloads = [
        (itx_calls, coefs),
        (mc_workload(), Vec::new()),
        (lf_workload(), Vec::new()),
    ];
    let mut times = Vec::new();
    for (family, (calls, coefs)) in Family::VP9.iter().zip(&workloads) {
        times.push(best_of_both(*family, &frame, 1, |on_gpu| {
            run(calls, coefs, &frame, &reference, on_gpu)
        })?);
    }
    Ok(times)
}

/// The best host nanoseconds per call of `run` (on the GPU, then with the decoder's own
/// functions) over two timed rounds after an untimed GPU one, each starting from the same
/// pixels of `frame` and required to end with the same pixels.
fn best_of_both(
    family: Family,
    frame: &Scratch,
    pixel_bytes: usize,
    mut run: impl FnMut(bool) -> Result<f64, String>,
) -> Result<(f64, f64), String> {
    let mut best = (f64::MAX, f64::MAX);
    let mut results: [Vec<u8>; 2] = [Vec::new(), Vec::new()];
    for round in 0..3 {
        for (side, on_gpu) in [(0, true), (1, false)] {
            if round == 0 && !on_gpu {
                continue;
            }
            frame.fill(1, pixel_bytes);
            let ns = run(on_gpu)?;
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
            "the device's {} results differ from the decoder's",
            family.name()
        ));
    }
    Ok(best)
}
