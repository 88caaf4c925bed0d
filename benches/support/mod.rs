//! Helpers shared by the benchmarks: the options, FFmpeg's and dav1d's C and SIMD tables from
//! their static SIMD builds, pinning to one core, the report with its device line and totals,
//! and the checksum that every path must share.
#![allow(dead_code)]

use crate::common::{require_gpu, stats, CdefDsp};
use daedalus::ffi;
use daedalus::vp9dsp::Vp9DspContext;

/// `--bench` (set by `cargo bench`; without it, under `cargo test`, a small smoke run),
/// `--quick`, `--markdown FILE`.
pub struct Options {
    pub full: bool,
    pub quick: bool,
    pub markdown: Option<String>,
}

impl Options {
    pub fn from_args() -> Options {
        let args: Vec<String> = std::env::args().collect();
        Options {
            full: args.iter().any(|a| a == "--bench"),
            quick: args.iter().any(|a| a == "--quick"),
            markdown: args
                .iter()
                .position(|a| a == "--markdown")
                .and_then(|i| args.get(i + 1).cloned()),
        }
    }

    /// Calls per flush: the foundation issue's sizes (32640 = a 1080p plane of 8x8 blocks).
    pub fn batch_sizes(&self) -> Vec<usize> {
        if !self.full {
            vec![1, 64]
        } else if self.quick {
            vec![1, 64, 1024, 8160]
        } else {
            vec![1, 64, 1024, 8160, 32640]
        }
    }

    /// Least time each measurement runs for.
    pub fn min_time(&self) -> f64 {
        if self.full {
            0.25
        } else {
            0.0
        }
    }
}

/// A benchmark run: the GPU path checked, FFmpeg's tables, the host pinned to one core, and
/// the report (printed, and written to `--markdown` at the end).
pub struct Run {
    pub opts: Options,
    pub c: &'static Vp9DspContext,
    pub simd: &'static Vp9DspContext,
    pub simd_name: &'static str,
    out: String,
}

impl Run {
    /// `path` says what the GPU path is, for the device line.
    pub fn start(path: &str) -> Run {
        let opts = Options::from_args();
        require_gpu();
        let device = unsafe { std::ffi::CStr::from_ptr(ffi::daedalus_device_name()) }
            .to_string_lossy()
            .into_owned();
        let (c, simd, flags) = ffmpeg_tables();
        let core = pin_to_one_core();
        let mut run = Run {
            opts,
            c: Box::leak(Box::new(c)),
            simd: Box::leak(Box::new(simd)),
            simd_name: simd_name(flags),
            out: String::new(),
        };
        run.line(format!(
            "Device: **{device}** ({path}). CPU: {} ({}), host side and FFmpeg pinned to core {core}.",
            cpu_model(),
            run.simd_name
        ));
        run.line(String::new());
        run
    }

    pub fn line(&mut self, s: String) {
        println!("{s}");
        self.out.push_str(&s);
        self.out.push('\n');
    }

    /// The totals that prove which path ran, then the markdown file.
    pub fn finish(mut self) {
        let s = stats();
        self.line(format!(
            "Totals: {} calls on the GPU, {} on the CPU reference, {} submissions, {} dispatches.",
            s.gpu_calls, s.cpu_calls, s.submissions, s.dispatches
        ));
        if let Some(path) = &self.opts.markdown {
            std::fs::write(path, &self.out).expect("writing the markdown file");
        }
    }
}

#[cfg(daedalus_oracle_asm)]
extern "C" {
    fn ff_vp9dsp_init(dsp: *mut Vp9DspContext, bpp: i32, bitexact: i32);
    fn ff_vp9dsp_init_8(dsp: *mut Vp9DspContext);
    fn av_get_cpu_flags() -> i32;
}

/// FFmpeg's tables from the static SIMD build: (C only, with the x86 SIMD overrides, cpu flags).
pub fn ffmpeg_tables() -> (Vp9DspContext, Vp9DspContext, i32) {
    #[cfg(daedalus_oracle_asm)]
    unsafe {
        let (mut c, mut simd) = (Vp9DspContext::empty(), Vp9DspContext::empty());
        ff_vp9dsp_init_8(&mut c);
        ff_vp9dsp_init(&mut simd, 8, 0);
        (c, simd, av_get_cpu_flags())
    }
    #[cfg(not(daedalus_oracle_asm))]
    panic!("the FFmpeg SIMD build (build/oracle-asm) is missing: run scripts/setup, then rebuild");
}

/// The widest SIMD FFmpeg 5.1's VP9 transforms use on this CPU (they have no AVX-512 code).
pub fn simd_name(flags: i32) -> &'static str {
    if flags & 0x8000 != 0 {
        "AVX2"
    } else if flags & 0x4000 != 0 {
        "AVX"
    } else if flags & 0x80 != 0 {
        "SSSE3"
    } else {
        "SSE2"
    }
}

pub fn checksum(p: &[u8]) -> u64 {
    p.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

pub fn pin_to_one_core() -> i32 {
    unsafe {
        let cpu = libc::sched_getcpu().max(0);
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        cpu
    }
}

pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// One path's figures over a batch: the median pass, and for daedalus the median recording
/// time and per pass the GPU busy time, submissions and dispatches; the output's checksum.
pub struct Measured {
    pub seconds: f64,
    pub record_seconds: f64,
    pub gpu_seconds: f64,
    pub checksum: u64,
    pub submissions: f64,
    pub dispatches: f64,
}

/// Times passes over a batch whose pixels start as `input`: `pass` runs the calls on the
/// working copy (for daedalus, `gpu`: registered, then recorded and flushed). At least 3
/// passes and `min_time` seconds, at most 200.
pub fn measure_passes(
    input: &[u8],
    gpu: bool,
    min_time: f64,
    mut pass: impl FnMut(*mut u8),
) -> Measured {
    let mut work = crate::common::Aligned::new(input);
    if gpu {
        let s = work.as_mut_slice();
        assert_eq!(
            ffi::daedalus_register_memory(s.as_mut_ptr().cast(), s.len()),
            0
        );
    }
    let (mut times, mut record_times, mut total) = (Vec::new(), Vec::new(), 0.0);
    let before = stats();
    while (total < min_time || times.len() < 3) && times.len() < 200 {
        work.as_mut_slice().copy_from_slice(input);
        let px = work.as_mut_slice().as_mut_ptr();
        let t0 = std::time::Instant::now();
        pass(px);
        if gpu {
            record_times.push(t0.elapsed().as_secs_f64());
            ffi::daedalus_flush();
        }
        let t = t0.elapsed().as_secs_f64();
        times.push(t);
        total += t;
    }
    let after = stats();
    let sum = checksum(work.as_slice());
    if gpu {
        assert_eq!(
            ffi::daedalus_unregister_memory(work.as_mut_slice().as_mut_ptr().cast()),
            0
        );
    }
    times.sort_by(f64::total_cmp);
    record_times.sort_by(f64::total_cmp);
    let runs = times.len() as f64;
    Measured {
        seconds: times[times.len() / 2],
        record_seconds: record_times
            .get(record_times.len() / 2)
            .copied()
            .unwrap_or(0.0),
        gpu_seconds: (after.gpu_busy_ns - before.gpu_busy_ns) as f64 / runs / 1e9,
        checksum: sum,
        submissions: (after.submissions - before.submissions) as f64 / runs,
        dispatches: (after.dispatches - before.dispatches) as f64 / runs,
    }
}

#[cfg(daedalus_dav1d_oracle_asm)]
extern "C" {
    fn dav1d_init_cpu();
    fn dav1d_set_cpu_flags_mask(mask: u32);
    fn dav1d_cdef_dsp_init_8bpc(c: *mut CdefDsp);
    fn dav1d_cdef_dsp_init_16bpc(c: *mut CdefDsp);
}

/// dav1d's CDEF tables from the static build with asm: (C only, with its x86 SIMD).
pub fn dav1d_tables(high_bitdepth: bool) -> (CdefDsp, CdefDsp) {
    #[cfg(daedalus_dav1d_oracle_asm)]
    unsafe {
        let empty = || CdefDsp {
            dir: std::ptr::null(),
            fb: [std::ptr::null(); 3],
        };
        let init = |c: &mut CdefDsp| {
            if high_bitdepth {
                dav1d_cdef_dsp_init_16bpc(c)
            } else {
                dav1d_cdef_dsp_init_8bpc(c)
            }
        };
        dav1d_init_cpu();
        let (mut c, mut simd) = (empty(), empty());
        dav1d_set_cpu_flags_mask(0);
        init(&mut c);
        dav1d_set_cpu_flags_mask(!0);
        init(&mut simd);
        (c, simd)
    }
    #[cfg(not(daedalus_dav1d_oracle_asm))]
    {
        let _ = high_bitdepth;
        panic!("the dav1d SIMD build (build/dav1d-oracle-asm) is missing: run scripts/setup, then rebuild");
    }
}
