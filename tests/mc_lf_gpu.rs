//! Motion compensation and loop filters, checkasm style: every function through its export,
//! many calls per flush at random positions (overlapping ones too), against the CPU reference
//! and FFmpeg's own C functions run one after the other.
//! Run on lavapipe with DAEDALUS_VALIDATION=1 (scripts/test): any validation message fails.

mod common;

use common::*;
use daedalus::batch;
use daedalus::ffi::{self, LF_EXPORTS, MC_EXPORTS};
use daedalus::kernels::itx::Transform;
use daedalus::kernels::lf::{self, LfDir, LfFunction, LfHalf};
use daedalus::kernels::mc::{self, McFunction};
use daedalus::stats::Reason;
use daedalus::vp9dsp::{LoopFilterFn, McFn, Vp9DspContext};
use std::collections::HashSet;
use std::sync::Mutex;

/// The tests read process-wide counters: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn mc_export(f: McFunction) -> McFn {
    MC_EXPORTS.iter().find(|e| e.1 == f).expect("exported").2
}

fn lf_export(f: LfFunction) -> LoopFilterFn {
    LF_EXPORTS.iter().find(|e| e.1 == f).expect("exported").2
}

/// A call of one of the three families, on canvases.
#[derive(Clone)]
enum Call {
    Mc {
        f: McFunction,
        dst: (usize, usize, usize),
        src: (usize, usize, usize),
        h: i32,
        mx: i32,
        my: i32,
    },
    Lf {
        f: LfFunction,
        at: (usize, usize, usize),
        e: i32,
        i: i32,
        h: i32,
    },
    Itx(Placed),
}

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Ffmpeg,
    Reference,
    Daedalus,
}

/// Runs `calls` one after the other (FFmpeg, reference) or records them (daedalus).
fn run(dsp: &Vp9DspContext, canvases: &mut [Canvas], calls: &[Call], way: Way) {
    let ptr = |c: &mut [Canvas], (i, x, y): (usize, usize, usize)| {
        let stride = c[i].stride;
        (
            unsafe { c[i].pixels.as_mut_ptr().add(y * stride + x) },
            stride as isize,
        )
    };
    for call in calls {
        match call.clone() {
            Call::Mc {
                f,
                dst,
                src,
                h,
                mx,
                my,
            } => {
                let (d, ds) = ptr(canvases, dst);
                let (s, ss) = ptr(canvases, src);
                unsafe {
                    match way {
                        Way::Ffmpeg => ffmpeg_mc(dsp, f)(d, ds, s, ss, h, mx, my),
                        Way::Reference => mc::mc_now(f, d, ds, s, ss, h, mx, my),
                        Way::Daedalus => mc_export(f)(d, ds, s, ss, h, mx, my),
                    }
                }
            }
            Call::Lf { f, at, e, i, h } => {
                let (d, s) = ptr(canvases, at);
                unsafe {
                    match way {
                        Way::Ffmpeg => ffmpeg_lf(dsp, f)(d, s, e, i, h),
                        Way::Reference => lf::lf_now(f, d, s, e, i, h),
                        Way::Daedalus => lf_export(f)(d, s, e, i, h),
                    }
                }
            }
            Call::Itx(mut b) => {
                let blocks = std::slice::from_mut(&mut b);
                match way {
                    Way::Ffmpeg => apply_ffmpeg(dsp, canvases, blocks),
                    Way::Reference => apply_reference(canvases, blocks),
                    Way::Daedalus => record_daedalus(canvases, blocks),
                }
            }
        }
    }
}

/// A random motion compensation whose block and source window lie inside their canvases.
fn random_mc(rng: &mut Rng, canvases: &[Canvas], dsts: &[usize], srcs: &[usize]) -> Call {
    let all = McFunction::all();
    loop {
        let f = all[rng.below(all.len())];
        let h = match rng.below(4) {
            0 => f.width.min(64) as i32,
            1 => [1, 2, 3, 4, 5, 7][rng.below(6)],
            _ => rng.range(1, 64) as i32,
        };
        let (di, si) = (dsts[rng.below(dsts.len())], srcs[rng.below(srcs.len())]);
        let (d, s) = (&canvases[di], &canvases[si]);
        let w = f.width;
        if d.stride < w || d.height < h as usize || s.stride < w + 8 || s.height < h as usize + 8 {
            continue;
        }
        let aligned = rng.chance(50);
        let snap = |v: usize| if aligned { v / 4 * 4 } else { v };
        let dst = (
            di,
            snap(rng.below(d.stride - w + 1)),
            snap(rng.below(d.height - h as usize + 1)),
        );
        let src = (
            si,
            3 + rng.below(s.stride - w - 7 + 1),
            3 + rng.below(s.height - h as usize - 7 + 1),
        );
        // A source window that meets its own block is FFmpeg's undefined behaviour (memcpy
        // of overlapping rows): tested apart, with a function where it is defined.
        let meets = |a: usize, alen: usize, b: usize, blen: usize| a < b + blen && b < a + alen;
        if di == si
            && meets(dst.1, w, src.1 - 3, w + 7)
            && meets(dst.2, h as usize, src.2 - 3, h as usize + 7)
        {
            continue;
        }
        return Call::Mc {
            f,
            dst,
            src,
            h,
            mx: rng.range(0, 15) as i32,
            my: rng.range(0, 15) as i32,
        };
    }
}

/// Thresholds as a decoder derives them (or, rarely, any int), packed for mix2.
fn thresholds(rng: &mut Rng, f: LfFunction) -> (i32, i32, i32) {
    let one = |rng: &mut Rng| {
        let level = rng.range(0, 63) as i32;
        let limit = rng.range(1, 63) as i32;
        (2 * (level + 2) + limit, limit, rng.range(0, 3) as i32)
    };
    if rng.chance(5) {
        let wild = |rng: &mut Rng| rng.next_u64() as i32 >> rng.below(32);
        return (wild(rng), wild(rng), wild(rng));
    }
    let (e, i, h) = one(rng);
    match f {
        LfFunction::Mix2 { .. } => {
            let (e2, i2, h2) = one(rng);
            (e | e2 << 8, i | i2 << 8, h | h2 << 8)
        }
        _ => (e, i, h),
    }
}

/// Paints the 16 pixels across an edge so that the filter takes the wanted branch: flat over
/// 16, flat over 8, a normal edge, a strong (unfiltered) one, or noise.
fn paint_line(rng: &mut Rng, line: &mut [u8; 16]) {
    let p0 = rng.range(8, 247);
    let q0 = p0 + rng.range(-3, 3);
    let mode = rng.below(5);
    for (k, v) in line.iter_mut().enumerate() {
        let (base, d) = if k < 8 { (p0, 7 - k) } else { (q0, k - 8) };
        let value = match mode {
            0 => base + rng.range(-1, 1) * (d > 0) as i64,
            1 if d < 4 => base + rng.range(-1, 1) * (d > 0) as i64,
            1 => base + rng.range(-20, 20),
            2 => base + rng.range(-4, 4) * d as i64,
            3 => base + rng.range(-60, 60),
            _ => rng.range(0, 255),
        };
        *v = value.clamp(0, 255) as u8;
    }
}

/// [`paint_line`] at `bit_depth`: the 8-bit line scaled, each pixel a step of the depth's
/// flatness bound (`1 << (bit_depth - 8)`) or one past it away, or none.
fn paint_line_at_depth(rng: &mut Rng, bit_depth: u32) -> [i32; 16] {
    let mut painted = [0u8; 16];
    paint_line(rng, &mut painted);
    let (up, max) = (bit_depth - 8, (1 << bit_depth) - 1);
    painted.map(|v| {
        let fine = [0, 1 << up, (1 << up) + 1][rng.below(3)];
        (((v as i32) << up) + fine).min(max)
    })
}

/// A random loop-filter call inside its canvas, its lines painted first.
fn random_lf(rng: &mut Rng, canvases: &mut [Canvas], dsts: &[usize]) -> Call {
    let all = LfFunction::all();
    loop {
        let f = all[rng.below(all.len())];
        let ci = dsts[rng.below(dsts.len())];
        let c = &mut canvases[ci];
        let (lines, reach) = (f.lines(), 8);
        let (across, along) = match f.dir() {
            LfDir::H => (c.stride, c.height),
            LfDir::V => (c.height, c.stride),
        };
        if across < 2 * reach || along < lines {
            continue;
        }
        let edge = reach + rng.below(across - 2 * reach + 1);
        let start = rng.below(along - lines + 1);
        let (edge, start) = if rng.chance(50) {
            (edge / 4 * 4, start / 4 * 4)
        } else {
            (edge, start)
        };
        if edge < reach {
            continue;
        }
        let (x, y) = match f.dir() {
            LfDir::H => (edge, start),
            LfDir::V => (start, edge),
        };
        for n in 0..lines {
            let mut line = [0u8; 16];
            paint_line(rng, &mut line);
            for (k, &v) in line.iter().enumerate() {
                let (px, py) = match f.dir() {
                    LfDir::H => (x + k - 8, y + n),
                    LfDir::V => (x + n, y + k - 8),
                };
                if px < c.stride && py < c.height {
                    c.pixels[py * c.stride + px] = v;
                }
            }
        }
        let (e, i, h) = thresholds(rng, f);
        return Call::Lf {
            f,
            at: (ci, x, y),
            e,
            i,
            h,
        };
    }
}

/// Runs `calls` three ways (daedalus recording into registered canvases where `register`
/// says so) and compares every canvas; returns the stats of the daedalus run.
fn check_three_ways(
    canvases: &[Canvas],
    calls: &[Call],
    register: &[bool],
) -> (ffi::DaedalusStats, ffi::DaedalusStats) {
    let dsp = ffmpeg_c();
    let mut ff = clone_canvases(canvases);
    let mut reference = clone_canvases(canvases);
    let mut gpu = clone_canvases(canvases);
    run(&dsp, &mut ff, calls, Way::Ffmpeg);
    run(&dsp, &mut reference, calls, Way::Reference);
    for (c, &r) in gpu.iter_mut().zip(register) {
        if r {
            let rc = ffi::daedalus_register_memory(c.pixels.as_mut_ptr().cast(), c.pixels.len());
            assert_eq!(rc, 0, "registering a canvas");
        }
    }
    let before = stats();
    run(&dsp, &mut gpu, calls, Way::Daedalus);
    ffi::daedalus_flush();
    let after = stats();
    for (c, &r) in gpu.iter_mut().zip(register) {
        if r {
            assert_eq!(
                ffi::daedalus_unregister_memory(c.pixels.as_mut_ptr().cast()),
                0
            );
        }
    }
    if let Some(d) = first_difference(&reference, &ff) {
        panic!("reference vs FFmpeg: {d}");
    }
    if let Some(d) = first_difference(&gpu, &ff) {
        panic!("daedalus vs FFmpeg: {d}");
    }
    assert_validation_clean();
    (before, after)
}

fn canvases(rng: &mut Rng, count: usize) -> Vec<Canvas> {
    (0..count)
        .map(|_| {
            let (w, h) = (96 + rng.below(200), 80 + rng.below(120));
            Canvas::new(rng, w, h)
        })
        .collect()
}

#[test]
fn exports_are_ffmpegs_functions_by_name() {
    let names: HashSet<String> = MC_EXPORTS.iter().map(|e| e.0.to_string()).collect();
    let all: HashSet<String> = McFunction::all().iter().map(|f| f.name()).collect();
    assert_eq!(names, all);
    assert_eq!(MC_EXPORTS.len(), 130);
    for (name, f, _) in &MC_EXPORTS {
        assert_eq!(&f.name(), name);
    }
    let names: HashSet<String> = LF_EXPORTS.iter().map(|e| e.0.to_string()).collect();
    let all: HashSet<String> = LfFunction::all().iter().map(|f| f.name()).collect();
    assert_eq!(names, all);
    assert_eq!(LF_EXPORTS.len(), 16);
    for (name, f, _) in &LF_EXPORTS {
        assert_eq!(&f.name(), name);
    }
}

/// Pins VP9's path to the per-call path before the provider's first attach, which would
/// otherwise choose FFmpeg's own decode on a CPU device.
fn every_family_deferred() {
    use daedalus::paths::{self, Path};
    let taken = paths::took_vp9(Path::Calls, "a test");
    assert_eq!(taken.path, Path::Calls, "VP9's path was decided otherwise");
}

/// Registers the canvases' pixels, as a decoder's frame planes are.
fn register(canvases: &mut [Canvas]) {
    for c in canvases {
        let rc = ffi::daedalus_register_memory(c.pixels.as_mut_ptr().cast(), c.pixels.len());
        assert_eq!(rc, 0, "registering a canvas");
    }
}

/// Completes the pending work, then unregisters the canvases.
fn flush_and_unregister(canvases: &mut [Canvas]) {
    ffi::daedalus_flush();
    for c in canvases {
        assert_eq!(
            ffi::daedalus_unregister_memory(c.pixels.as_mut_ptr().cast()),
            0
        );
    }
}

/// Fails with `what` and the first differing pixel unless the canvases are equal.
fn assert_same(got: &[Canvas], expected: &[Canvas], what: &str) {
    if let Some(d) = first_difference(got, expected) {
        panic!("{what}: {d}");
    }
}

/// Defers every family and attaches the provider to `table` as the decoder does; returns
/// the provider's context.
fn attach_provider(table: &mut Vp9DspContext) -> *mut std::ffi::c_void {
    every_family_deferred();
    let ctx = unsafe { (daedalus::vp9::PROVIDER.attach)(table, 8) };
    assert!(!ctx.is_null(), "the provider declined an 8-bit decoder");
    ctx
}

/// The provider takes every entry of the decoder's table that it defers (FFmpeg repeats the
/// full-pel copy and average under all four filters) and wraps scaled MC: no FFmpeg function
/// is left that would write pixels past pending work. The intra predictors stay FFmpeg's.
#[test]
fn provider_takes_every_entry() {
    let ffmpeg = common::ffmpeg_c();
    let mut dsp = ffmpeg;
    let ctx = attach_provider(&mut dsp);
    let addr = |f: Option<usize>| f.expect("a filled entry");
    let pairs = |a: &[Option<usize>], b: &[Option<usize>]| {
        a.iter()
            .zip(b)
            .filter(|(x, y)| addr(**x) == addr(**y))
            .count()
    };
    let itx = |d: &daedalus::vp9dsp::Vp9DspContext| -> Vec<Option<usize>> {
        d.itxfm_add
            .iter()
            .flatten()
            .map(|f| f.map(|f| f as usize))
            .collect()
    };
    let mc = |d: &daedalus::vp9dsp::Vp9DspContext| -> Vec<Option<usize>> {
        d.mc.iter()
            .flatten()
            .flatten()
            .flatten()
            .flatten()
            .map(|f| f.map(|f| f as usize))
            .collect()
    };
    let smc = |d: &daedalus::vp9dsp::Vp9DspContext| -> Vec<Option<usize>> {
        d.smc
            .iter()
            .flatten()
            .flatten()
            .map(|f| f.map(|f| f as usize))
            .collect()
    };
    let lf = |d: &daedalus::vp9dsp::Vp9DspContext| -> Vec<Option<usize>> {
        let mut v: Vec<Option<usize>> = d
            .loop_filter_8
            .iter()
            .flatten()
            .map(|f| f.map(|f| f as usize))
            .collect();
        v.extend(d.loop_filter_16.iter().map(|f| f.map(|f| f as usize)));
        v.extend(
            d.loop_filter_mix2
                .iter()
                .flatten()
                .flatten()
                .map(|f| f.map(|f| f as usize)),
        );
        v
    };
    assert_eq!(mc(&dsp).len(), 160);
    assert_eq!(smc(&dsp).len(), 40);
    assert_eq!(lf(&dsp).len(), 16);
    assert_eq!(
        pairs(&itx(&dsp), &itx(&ffmpeg)),
        0,
        "a transform entry is FFmpeg's"
    );
    assert_eq!(pairs(&mc(&dsp), &mc(&ffmpeg)), 0, "an mc entry is FFmpeg's");
    assert_eq!(
        pairs(&smc(&dsp), &smc(&ffmpeg)),
        0,
        "an smc entry is FFmpeg's"
    );
    assert_eq!(
        pairs(&lf(&dsp), &lf(&ffmpeg)),
        0,
        "a loop-filter entry is FFmpeg's"
    );
    // Full-pel entries of the four filters are one recorder each, as FFmpeg's are one function.
    for n in 0..5 {
        for avg in 0..2 {
            let first = dsp.mc[n][0][avg][0][0].map(|f| f as usize);
            for filter in 1..4 {
                assert_eq!(dsp.mc[n][filter][avg][0][0].map(|f| f as usize), first);
            }
        }
    }
    for (mode, ours) in dsp
        .intra_pred
        .iter()
        .flatten()
        .zip(ffmpeg.intra_pred.iter().flatten())
    {
        assert_eq!(mode.map(|f| f as usize), ours.map(|f| f as usize));
    }
    unsafe { (daedalus::vp9::PROVIDER.detach)(ctx) };
}

/// Every MC function with every offset (15 too, which FFmpeg's checkasm never tests), many
/// heights, stride 72 with a 3-pixel margin as checkasm has it, and random strides.
#[test]
fn mc_reference_matches_ffmpeg_c_everywhere() {
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(41);
    for f in McFunction::all() {
        for case in 0..48 {
            let h = [1, 2, 4, 7, 8, 16, 32, 64][case % 8].min(64);
            let (mx, my) = ((case % 16) as i32, (15 - case % 16) as i32);
            let src_stride = if case % 3 == 0 {
                72
            } else {
                64 + 8 + rng.below(40)
            };
            let mut src = vec![0u8; src_stride * (h as usize + 8)];
            rng.bytes(&mut src);
            let dst_stride = if case % 2 == 0 {
                72
            } else {
                f.width + rng.below(30)
            };
            let mut a = vec![0u8; dst_stride * h as usize];
            rng.bytes(&mut a);
            let mut b = a.clone();
            let s = unsafe { src.as_ptr().add(3 * src_stride + 3) };
            unsafe {
                ffmpeg_mc(&dsp, f)(
                    a.as_mut_ptr(),
                    dst_stride as isize,
                    s,
                    src_stride as isize,
                    h,
                    mx,
                    my,
                );
                mc::mc_now(
                    f,
                    b.as_mut_ptr(),
                    dst_stride as isize,
                    s,
                    src_stride as isize,
                    h,
                    mx,
                    my,
                );
            }
            assert_eq!(a, b, "{} h {h} mx {mx} my {my}", f.name());
        }
    }
}

/// Every MC function at 10 and 12 bits against FFmpeg's C functions of those depths: every
/// offset, several heights, pixels over the depth's whole range (where the 8-tap filters clip).
#[test]
fn mc_reference_matches_ffmpeg_c_at_10_and_12_bits() {
    for bit_depth in [10u32, 12] {
        let dsp = ffmpeg_c_at(bit_depth as i32);
        let max = (1i64 << bit_depth) - 1;
        let mut rng = Rng::new(41 + bit_depth as u64);
        for f in McFunction::all() {
            for case in 0..24 {
                let h = [1, 2, 4, 7, 8, 16, 32, 64][case % 8];
                let (mx, my) = ((case % 16) as i32, (15 - case % 16) as i32);
                let src_stride = 64 + 8 + rng.below(40);
                let edge = case % 3 == 0;
                let src: Vec<u16> = (0..src_stride * (h + 8))
                    .map(|_| if edge { [0, max][rng.below(2)] } else { rng.range(0, max) } as u16)
                    .collect();
                let dst_stride = f.width + rng.below(30);
                let mut a: Vec<u16> = (0..dst_stride * h)
                    .map(|_| rng.range(0, max) as u16)
                    .collect();
                let mut b = a.clone();
                let s = unsafe { src.as_ptr().add(3 * src_stride + 3) };
                unsafe {
                    ffmpeg_mc(&dsp, f)(
                        a.as_mut_ptr() as *mut u8,
                        2 * dst_stride as isize,
                        s as *const u8,
                        2 * src_stride as isize,
                        h as i32,
                        mx,
                        my,
                    );
                    mc::mc_now_high(
                        f,
                        (b.as_mut_ptr(), dst_stride as isize),
                        (s, src_stride as isize),
                        h as i32,
                        (mx, my),
                        bit_depth,
                    );
                }
                assert_eq!(
                    a,
                    b,
                    "{} bits, {} h {h} mx {mx} my {my}",
                    bit_depth,
                    f.name()
                );
            }
        }
    }
}

/// Every loop filter on constructed lines (flat 16, flat 8, normal, strong, noise) and
/// decoder-like or wild thresholds.
#[test]
fn lf_reference_matches_ffmpeg_c_everywhere() {
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(42);
    for f in LfFunction::all() {
        for _ in 0..400 {
            let stride = 32 + rng.below(40);
            let mut a = vec![0u8; stride * 32];
            rng.bytes(&mut a);
            let (x, y) = match f.dir() {
                LfDir::H => (16, 8),
                LfDir::V => (8, 16),
            };
            for n in 0..f.lines() {
                let mut line = [0u8; 16];
                paint_line(&mut rng, &mut line);
                for (k, &v) in line.iter().enumerate() {
                    let (px, py) = match f.dir() {
                        LfDir::H => (x + k - 8, y + n),
                        LfDir::V => (x + n, y + k - 8),
                    };
                    a[py * stride + px] = v;
                }
            }
            let mut b = a.clone();
            let (e, i, h) = thresholds(&mut rng, f);
            unsafe {
                ffmpeg_lf(&dsp, f)(a.as_mut_ptr().add(y * stride + x), stride as isize, e, i, h);
                lf::lf_now(
                    f,
                    b.as_mut_ptr().add(y * stride + x),
                    stride as isize,
                    e,
                    i,
                    h,
                );
            }
            assert_eq!(a, b, "{} E {e} I {i} H {h}", f.name());
        }
    }
}

/// Every loop filter at 10 and 12 bits against FFmpeg's C functions of those depths: lines
/// painted as for 8 bits, scaled to the depth, with steps around the depth's flatness bound
/// (`1 << (bit_depth - 8)`), and thresholds as a decoder derives them.
#[test]
fn lf_reference_matches_ffmpeg_c_at_10_and_12_bits() {
    for bit_depth in [10u32, 12] {
        let dsp = ffmpeg_c_at(bit_depth as i32);
        let mut rng = Rng::new(42 + bit_depth as u64);
        for f in LfFunction::all() {
            for _ in 0..300 {
                let stride = 32 + rng.below(40);
                let max = (1i64 << bit_depth) - 1;
                let mut a: Vec<u16> = (0..stride * 32).map(|_| rng.range(0, max) as u16).collect();
                let (x, y) = match f.dir() {
                    LfDir::H => (16, 8),
                    LfDir::V => (8, 16),
                };
                for n in 0..f.lines() {
                    let line = paint_line_at_depth(&mut rng, bit_depth);
                    for (k, &v) in line.iter().enumerate() {
                        let (px, py) = match f.dir() {
                            LfDir::H => (x + k - 8, y + n),
                            LfDir::V => (x + n, y + k - 8),
                        };
                        a[py * stride + px] = v as u16;
                    }
                }
                let mut b = a.clone();
                let (e, i, h) = loop {
                    let t = thresholds(&mut rng, f);
                    if [t.0, t.1, t.2].iter().all(|v| (0..1 << 16).contains(v)) {
                        break t;
                    }
                };
                unsafe {
                    let at = y * stride + x;
                    ffmpeg_lf(&dsp, f)(
                        a.as_mut_ptr().add(at) as *mut u8,
                        2 * stride as isize,
                        e,
                        i,
                        h,
                    );
                    lf::lf_now_high(
                        f,
                        b.as_mut_ptr().add(at),
                        stride as isize,
                        (e, i, h),
                        bit_depth,
                    );
                }
                assert_eq!(a, b, "{} bits, {} E {e} I {i} H {h}", bit_depth, f.name());
            }
        }
    }
}

/// The loop filter's arithmetic on the GPU (`shaders/lf_filter.glsl`, run alone by
/// `shaders/lf_filter_check.comp`) at 8, 10 and 12 bits against the reference's, line by line:
/// every width, lines painted to reach each branch and scaled to the depth, with steps around
/// the flatness bound, and decoder-like thresholds.
#[test]
fn lf_arithmetic_on_the_gpu_at_every_depth_equals_the_reference() {
    use daedalus::vp9::frame::testing::{filter_lines, LfCase};
    let mut rng = Rng::new(43);
    let mut cases = Vec::new();
    for bit_depth in [8u32, 10, 12] {
        for wd in [4u32, 8, 16] {
            for _ in 0..400 {
                let line = paint_line_at_depth(&mut rng, bit_depth);
                let f = LfFunction::Lines8 {
                    wd: wd as u8,
                    dir: LfDir::H,
                };
                let (e, i, h) = thresholds(&mut rng, f);
                let clamp = |v: i32| v.clamp(-1, 4096);
                cases.push(LfCase {
                    wd,
                    bit_depth,
                    thresholds: (clamp(e), clamp(i), clamp(h)),
                    line,
                });
            }
        }
    }
    let gpu = filter_lines(&cases).unwrap_or_else(|e| panic!("the GPU did not run: {e}"));
    for (c, g) in cases.iter().zip(&gpu) {
        let mut want = c.line;
        let (e, i, h) = c.thresholds;
        let half = LfHalf {
            wd: c.wd as u8,
            e,
            i,
            h,
        };
        lf::one_line(&mut want, half, c.bit_depth);
        assert_eq!(
            &want, g,
            "{} bits, width {}, E {e} I {i} H {h}: {:?}",
            c.bit_depth, c.wd, c.line
        );
    }
    assert_validation_clean();
}

/// Thousands of MC calls of every function in one flush; destinations overlap at times (the
/// batch keeps FFmpeg's order), a tenth read sources that earlier calls of the batch write.
#[test]
fn mc_mixed_in_one_flush_is_bit_exact() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(43);
    for round in 0..3 {
        let canvases = canvases(&mut rng, 5);
        let calls: Vec<Call> = (0..1500)
            .map(|_| {
                if rng.chance(10) {
                    random_mc(&mut rng, &canvases, &[0, 1, 2], &[0, 1, 2])
                } else {
                    random_mc(&mut rng, &canvases, &[0, 1, 2], &[3, 4])
                }
            })
            .collect();
        let register = [round == 1, round == 2, false, false, round == 2];
        let (before, after) = check_three_ways(&canvases, &calls, &register);
        assert_eq!(
            after.deferred - before.deferred,
            calls.len() as u64 - (after.immediate - before.immediate)
        );
        assert!(after.gpu_calls > before.gpu_calls, "the GPU ran them");
    }
}

/// Thousands of loop-filter calls of every function in one flush, neighbouring edges sharing
/// pixels as a frame's do.
#[test]
fn lf_mixed_in_one_flush_is_bit_exact() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(44);
    for round in 0..3 {
        let mut canvases = canvases(&mut rng, 3);
        let calls: Vec<Call> = (0..1500)
            .map(|_| random_lf(&mut rng, &mut canvases, &[0, 1, 2]))
            .collect();
        let register = [round == 1, round == 2, false];
        let (before, after) = check_three_ways(&canvases, &calls, &register);
        assert!(after.gpu_calls > before.gpu_calls, "the GPU ran them");
    }
}

/// Transforms, motion compensation and loop filters interleaved on the same canvases: each
/// family's calls land after the earlier calls of the others on the same pixels.
#[test]
fn all_families_interleaved_keep_ffmpegs_order() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(45);
    for round in 0..3 {
        let mut canvases = canvases(&mut rng, 4);
        let sizes: Vec<Transform> = Transform::ALL.to_vec();
        let mut calls = Vec::new();
        for _ in 0..1200 {
            calls.push(match rng.below(3) {
                0 => random_mc(&mut rng, &canvases, &[0, 1, 2], &[1, 3]),
                1 => random_lf(&mut rng, &mut canvases, &[0, 1, 2]),
                _ => Call::Itx(place_blocks(&mut rng, &canvases[..3], 1, &sizes).remove(0)),
            });
        }
        let register = [round > 0, round == 2, false, false];
        check_three_ways(&canvases, &calls, &register);
    }
}

#[test]
fn mc_bad_input_is_documented_behaviour() {
    let _l = lock();
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(46);
    let f = McFunction {
        width: 16,
        filter: mc::McFilter::Sharp,
        avg: true,
        h: true,
        v: true,
    };
    let mut src = vec![0u8; 64 * 80];
    rng.bytes(&mut src);
    let s = unsafe { src.as_ptr().add(3 * 64 + 3) };
    // Heights outside 1..=64 are ignored: nothing is written.
    let mut dst = vec![7u8; 64 * 70];
    let before = stats();
    for h in [0, -1, 65, i32::MIN] {
        unsafe { mc_export(f)(dst.as_mut_ptr(), 64, s, 64, h, 3, 5) };
    }
    ffi::daedalus_flush();
    assert!(dst.iter().all(|&v| v == 7));
    assert_eq!(stats().rejected - before.rejected, 4);
    // Null pointers are ignored.
    unsafe { mc_export(f)(std::ptr::null_mut(), 64, s, 64, 8, 3, 5) };
    unsafe { mc_export(f)(dst.as_mut_ptr(), 64, std::ptr::null(), 64, 8, 3, 5) };
    ffi::daedalus_flush();
    assert!(dst.iter().all(|&v| v == 7));
    // Offsets are taken modulo 16.
    let mut a = dst.clone();
    unsafe { mc_export(f)(dst.as_mut_ptr(), 64, s, 64, 8, 16 + 3, -16 + 5) };
    ffi::daedalus_flush();
    unsafe { ffmpeg_mc(&dsp, f)(a.as_mut_ptr(), 64, s, 64, 8, 3, 5) };
    assert_eq!(a, dst);
    // A destination stride smaller than the block, and a source that meets the block: run
    // at once, in FFmpeg's order.
    let mut a = dst.clone();
    unsafe { mc_export(f)(dst.as_mut_ptr(), 5, s, 64, 8, 3, 5) };
    ffi::daedalus_flush();
    unsafe { ffmpeg_mc(&dsp, f)(a.as_mut_ptr(), 5, s, 64, 8, 3, 5) };
    assert_eq!(a, dst);
    let mut a = src.clone();
    let mut b = src.clone();
    unsafe {
        let (pa, pb) = (a.as_mut_ptr(), b.as_mut_ptr());
        mc_export(f)(pa.add(10 * 64 + 10), 64, pa.add(12 * 64 + 12), 64, 16, 7, 9);
        ffi::daedalus_flush();
        ffmpeg_mc(&dsp, f)(pb.add(10 * 64 + 10), 64, pb.add(12 * 64 + 12), 64, 16, 7, 9);
    }
    assert_eq!(a, b);
}

#[test]
fn lf_small_strides_end_as_ffmpeg_ends() {
    let _l = lock();
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(47);
    for f in LfFunction::all() {
        for stride in [1isize, 3, 7, -9] {
            let mut a = vec![0u8; 400];
            rng.bytes(&mut a);
            let mut b = a.clone();
            let (e, i, h) = thresholds(&mut rng, f);
            unsafe {
                lf_export(f)(a.as_mut_ptr().add(200), stride, e, i, h);
                ffi::daedalus_flush();
                ffmpeg_lf(&dsp, f)(b.as_mut_ptr().add(200), stride, e, i, h);
            }
            assert_eq!(a, b, "{} stride {stride}", f.name());
        }
    }
}

/// A decoder's intra sync completes the batch where it may touch what the block reads and
/// writes: at random points of an interleaved sequence, a reader's rectangle of a registered
/// canvas is completed (`batch::complete_for`) and must then hold FFmpeg's pixels of that
/// moment; the CPU then writes it (as intra prediction does), and the final flush must give
/// FFmpeg's result everywhere. A reader of pixels no pending call touches leaves the batch
/// pending.
#[test]
fn a_reader_completes_what_it_reads_as_ffmpeg_left_it() {
    let _l = lock();
    require_gpu();
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(61);
    let before = stats();
    for round in 0..3 {
        if round == 1 {
            let mut table = dsp;
            attach_provider(&mut table);
        }
        // Stretches of calls on canvas 0 (reading canvases 1 and 2), a reader after each;
        // all made first, since making loop-filter calls paints their lines.
        let mut base = canvases(&mut rng, 3);
        let sizes: Vec<Transform> = Transform::ALL.to_vec();
        let mut stretches = Vec::new();
        for _ in 0..40 {
            let mut calls = Vec::new();
            for _ in 0..30 {
                calls.push(match rng.below(3) {
                    0 => random_mc(&mut rng, &base, &[0], &[1, 2]),
                    1 => random_lf(&mut rng, &mut base, &[0]),
                    _ => Call::Itx(place_blocks(&mut rng, &base[..1], 1, &sizes).remove(0)),
                });
            }
            stretches.push(calls);
        }
        let mut ff = clone_canvases(&base);
        let mut gpu = clone_canvases(&base);
        register(&mut gpu[..2]);
        for calls in &stretches {
            run(&dsp, &mut ff, calls, Way::Ffmpeg);
            run(&dsp, &mut gpu, calls, Way::Daedalus);
            let (stride, height) = (base[0].stride, base[0].height);
            let (w, h) = (1 + rng.below(24), 1 + rng.below(24));
            let (x, y) = (rng.below(stride - w), rng.below(height - h));
            let at = y * stride + x;
            let area = batch::Area {
                at: unsafe { gpu[0].pixels.as_mut_ptr().add(at) },
                stride: stride as isize,
                w,
                h,
            };
            batch::complete_for(Reason::Intra, &[area]);
            for row in 0..h {
                let r = at + row * stride;
                assert_eq!(
                    gpu[0].pixels[r..r + w],
                    ff[0].pixels[r..r + w],
                    "row {row} of the reader's area after early completion"
                );
                // The reader writes its block on the CPU.
                let v = rng.below(256) as u8;
                gpu[0].pixels[r..r + w].fill(v);
                ff[0].pixels[r..r + w].fill(v);
            }
        }
        flush_and_unregister(&mut gpu[..2]);
        assert_same(&gpu, &ff, "daedalus vs FFmpeg after early completions");
    }
    assert_validation_clean();
    let after = stats();
    assert!(
        after.flushes_intra > before.flushes_intra,
        "no reader completed the batch"
    );
    assert!(
        after.flushes_intra < before.flushes_intra + 3 * 40,
        "every reader completed the batch"
    );
    assert!(after.gpu_calls > before.gpu_calls, "nothing ran on the GPU");
}

/// The decoder's superblock loop filter (the provider's `loopfilter_sb` hook), placed by its
/// cells as the public call is. Around a frame filtered in raster order, readers of filtered
/// rows (completions, then CPU writes), the public superblock call on filtered pixels and
/// superblocks out of raster order: every reader must see, and the frame end with, the pixels
/// of the same sequence run in order by the reference walk.
#[test]
fn decoder_superblocks_keep_the_order() {
    let _l = lock();
    require_gpu();
    let mut dsp = ffmpeg_c();
    let ctx = attach_provider(&mut dsp);
    let mut rng = Rng::new(77);
    let (sb_cols, sb_rows) = (8, 6);
    let mut planes = superblock_planes(&mut rng, sb_cols, sb_rows);
    let mut expected = clone_canvases(&planes);
    register(&mut planes);
    let filters: Vec<RandomFilter> = (0..sb_cols * sb_rows)
        .map(|_| RandomFilter::new(&mut rng))
        .collect();
    // Filters superblock `sb` of both frames: `expected` with the reference walk, `planes`
    // through the decoder's hook or, with `public`, through the public call (placed by cells).
    let filter =
        |planes: &mut [Canvas], expected: &mut [Canvas], sb: (usize, usize), public: bool| {
            let f = &filters[sb.0 * sb_cols + sb.1];
            f.filter_reference(expected, sb);
            let decoder = (!public).then_some(ctx);
            let taken = unsafe { f.filter_daedalus(planes, sb, decoder) };
            assert_eq!(taken, 0, "superblock {sb:?} was declined");
        };
    let before = stats();
    let mut readers = 0;
    for sb_row in 0..sb_rows {
        for sb_col in 0..sb_cols {
            filter(&mut planes, &mut expected, (sb_row, sb_col), false);
            match rng.below(4) {
                // A reader of filtered pixels: what it reads is final, then it writes them.
                0 => {
                    let p = rng.below(3);
                    let (w, h) = (1 + rng.below(16), 1 + rng.below(8));
                    let stride = planes[p].stride;
                    let top = (8 + ((sb_row * 64) >> (p > 0) as usize)).saturating_sub(4);
                    let (x, y) = (rng.below(stride - w), top + rng.below(8));
                    let at = y * stride + x;
                    let area = batch::Area {
                        at: unsafe { planes[p].pixels.as_mut_ptr().add(at) },
                        stride: stride as isize,
                        w,
                        h,
                    };
                    batch::complete_for(Reason::Intra, &[area]);
                    readers += 1;
                    for r in 0..h {
                        let o = at + r * planes[p].stride;
                        assert_eq!(
                            planes[p].pixels[o..o + w],
                            expected[p].pixels[o..o + w],
                            "a reader of plane {p} after superblock ({sb_row}, {sb_col})"
                        );
                        let v = rng.below(256) as u8;
                        planes[p].pixels[o..o + w].fill(v);
                        expected[p].pixels[o..o + w].fill(v);
                    }
                }
                // An earlier superblock again: out of raster order, through the hook or
                // placed by its cells.
                1 => {
                    let again = (rng.below(sb_row + 1), rng.below(sb_cols));
                    let again = if again.0 == sb_row {
                        (again.0, again.1.min(sb_col))
                    } else {
                        again
                    };
                    filter(&mut planes, &mut expected, again, rng.chance(50));
                }
                _ => {}
            }
        }
    }
    flush_and_unregister(&mut planes);
    assert_same(
        &planes,
        &expected,
        "differs from the reference walk in order",
    );
    assert_validation_clean();
    let after = stats();
    assert!(readers > 0, "no reader ran");
    assert!(
        after.deferred_lf_sb > before.deferred_lf_sb,
        "no plane was deferred"
    );
}
