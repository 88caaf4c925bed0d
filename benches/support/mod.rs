//! Helpers shared by the benchmarks: FFmpeg's C and SIMD tables from the static SIMD build,
//! the CPU's name, pinning to one core, and the checksum that every path must share.
#![allow(dead_code)]

use daedalus::vp9dsp::Vp9DspContext;

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
