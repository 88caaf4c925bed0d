//! Motion compensation and loop-filter throughput: daedalus on the GPU (pixels in place
//! through imported memory) beside FFmpeg's C and SIMD functions on one pinned core, on the
//! same calls in the same process. Every figure comes with the device name, the submissions
//! and dispatches per flush, and a checksum of the output that all paths must share.
//!
//! `cargo bench --bench mc_lf` runs it (`-- --quick` for a shorter run, `-- --markdown FILE`
//! to write the tables). Under `cargo test` it only runs a small smoke check.

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use common::*;
use daedalus::ffi::{LF_EXPORTS, MC_EXPORTS};
use daedalus::kernels::lf::{LfDir, LfFunction};
use daedalus::kernels::mc::{McFilter, McFunction};
use daedalus::vp9dsp::Vp9DspContext;
use support::*;

/// One kernel's calls over a frame-like plane, in raster order as a decoder issues them:
/// MC blocks side by side reading a reference plane at random motion vectors, or loop-filter
/// edges 16 pixels apart (so that no two touch a common pixel).
struct Batch {
    stride: usize,
    plane: Vec<u8>,
    reference: Vec<u8>,
    /// (destination offset, source offset or packed E/I/H, mx, my)
    calls: Vec<(usize, usize, i32, i32)>,
    h: i32,
}

impl Batch {
    fn mc(rng: &mut Rng, f: McFunction, count: usize) -> Batch {
        let (w, h) = (f.width, f.width.min(64));
        let per_row = (1920 / w).max(1);
        let rows = count.div_ceil(per_row);
        let stride = per_row * w + 64;
        let height = rows * h + 16;
        let mut plane = vec![0u8; stride * height];
        let mut reference = vec![0u8; stride * height];
        rng.bytes(&mut plane);
        // Smooth-ish content, as pictures are.
        for (i, v) in reference.iter_mut().enumerate() {
            *v = ((i % stride) as u32 * 3 + (i / stride) as u32 * 5 + rng.below(16) as u32) as u8;
        }
        let calls = (0..count)
            .map(|i| {
                let (bx, by) = ((i % per_row) * w, (i / per_row) * h + 8);
                let sx = (bx as i64 + rng.range(-4, 4)).clamp(3, (stride - w - 5) as i64) as usize;
                let sy = (by as i64 + rng.range(-4, 4)).clamp(3, (height - h - 5) as i64) as usize;
                (
                    by * stride + bx,
                    sy * stride + sx,
                    rng.range(1, 15) as i32,
                    rng.range(1, 15) as i32,
                )
            })
            .collect();
        Batch {
            stride,
            plane,
            reference,
            calls,
            h: h as i32,
        }
    }

    fn lf(rng: &mut Rng, f: LfFunction, count: usize) -> Batch {
        let per_row = 1920 / 16;
        let rows = count.div_ceil(per_row);
        let lines = f.lines();
        let stride = 1920 + 32;
        let height = match f.dir() {
            LfDir::H => rows * lines + 32,
            LfDir::V => rows * 16 + 32,
        };
        let mut plane = vec![0u8; stride * height];
        // Gentle gradients with noise: most lines pass the filter mask, as in pictures.
        for (i, v) in plane.iter_mut().enumerate() {
            *v = (((i % stride) / 3 + (i / stride) / 3) as u32 + rng.below(6) as u32) as u8;
        }
        let calls = (0..count)
            .map(|i| {
                let (cx, cy) = (i % per_row, i / per_row);
                let (x, y) = match f.dir() {
                    LfDir::H => (16 + cx * 16, 16 + cy * lines),
                    LfDir::V => (cx * 16, 16 + cy * 16),
                };
                let (e, il, h) = match f {
                    LfFunction::Mix2 { .. } => (40 | 36 << 8, 10 | 12 << 8, 2 | 1 << 8),
                    _ => (40, 10, 2),
                };
                (y * stride + x, (e as usize) | (il as usize) << 16, h, 0)
            })
            .collect();
        Batch {
            stride,
            plane,
            reference: Vec::new(),
            calls,
            h: 0,
        }
    }
}

#[derive(Clone, Copy)]
enum Kernel {
    Mc(McFunction),
    Lf(LfFunction),
}

#[derive(Clone, Copy)]
enum Path {
    Gpu,
    Cpu(&'static Vp9DspContext),
}

unsafe fn run_calls(b: &Batch, kernel: Kernel, path: Path, px: *mut u8) {
    let s = b.stride as isize;
    for &(dst, arg, p, q) in &b.calls {
        match (kernel, path) {
            (Kernel::Mc(f), Path::Cpu(t)) => {
                ffmpeg_mc(t, f)(px.add(dst), s, b.reference.as_ptr().add(arg), s, b.h, p, q)
            }
            (Kernel::Mc(f), Path::Gpu) => {
                let export = MC_EXPORTS.iter().find(|e| e.1 == f).unwrap().2;
                export(px.add(dst), s, b.reference.as_ptr().add(arg), s, b.h, p, q)
            }
            (Kernel::Lf(f), path) => {
                let (e, i) = ((arg & 0xffff) as i32, (arg >> 16) as i32);
                let fun = match path {
                    Path::Cpu(t) => ffmpeg_lf(t, f),
                    Path::Gpu => LF_EXPORTS.iter().find(|x| x.1 == f).unwrap().2,
                };
                fun(px.add(dst), s, e, i, p)
            }
        }
    }
}

/// Median time of one pass over the batch (record + flush for daedalus).
fn measure(b: &Batch, kernel: Kernel, path: Path, min_time: f64) -> Measured {
    let gpu = matches!(path, Path::Gpu);
    measure_passes(&b.plane, gpu, min_time, |px| unsafe {
        run_calls(b, kernel, path, px)
    })
}

fn name(k: Kernel) -> String {
    match k {
        Kernel::Mc(f) => f.name(),
        Kernel::Lf(f) => f.name(),
    }
}

fn main() {
    let mut run = Run::start("daedalus GPU path, pixels in place");
    let (c_table, simd_table, simd) = (run.c, run.simd, run.simd_name);
    let full = run.opts.full;
    let (sizes, min_time) = (run.opts.batch_sizes(), run.opts.min_time());
    let mut rng = Rng::new(3);
    let regular_8h = McFunction {
        width: 8,
        filter: McFilter::Regular,
        avg: false,
        h: true,
        v: false,
    };
    let lf8 = LfFunction::Lines8 {
        wd: 8,
        dir: LfDir::H,
    };
    let lf4 = LfFunction::Lines8 {
        wd: 4,
        dir: LfDir::H,
    };
    let row = |b: &Batch, k: Kernel, count: usize| -> String {
        let g = measure(b, k, Path::Gpu, min_time);
        let c = measure(b, k, Path::Cpu(c_table), min_time);
        let s = measure(b, k, Path::Cpu(simd_table), min_time);
        assert!(
            g.checksum == c.checksum && s.checksum == c.checksum,
            "{} x{count}: outputs differ: GPU {:x}, C {:x}, SIMD {:x}",
            name(k),
            g.checksum,
            c.checksum,
            s.checksum
        );
        let rate = |m: &Measured| count as f64 / m.seconds / 1e6;
        format!(
            "| {count} | {:.2} | {:.2} | {:.2} | {:.3} | {:.2} | {:.0}, {:.0}, {:.0} | {:.0}, {:.0} (checksum {:016x}) |",
            rate(&g),
            rate(&c),
            rate(&s),
            s.seconds / g.seconds,
            c.seconds / g.seconds,
            g.record_seconds * 1e6,
            (g.seconds - g.record_seconds) * 1e6,
            g.gpu_seconds * 1e6,
            g.submissions,
            g.dispatches,
            c.checksum
        )
    };
    let header = |unit: &str| {
        format!(
            "| calls/flush | GPU {unit} | FFmpeg C | FFmpeg {simd} | GPU / {simd} | GPU / C | GPU µs: record, flush, busy | submissions, dispatches per flush |"
        )
    };
    for k in [Kernel::Mc(regular_8h), Kernel::Lf(lf8), Kernel::Lf(lf4)] {
        let unit = if matches!(k, Kernel::Mc(_)) {
            "Mblock/s"
        } else {
            "Medge/s"
        };
        run.line(format!("#### {}: {unit} (median pass)", name(k)));
        run.line(String::new());
        run.line(header(unit));
        run.line("|---:|---:|---:|---:|---:|---:|---|---|".into());
        for &count in &sizes {
            let b = match k {
                Kernel::Mc(f) => Batch::mc(&mut rng, f, count),
                Kernel::Lf(f) => Batch::lf(&mut rng, f, count),
            };
            let r = row(&b, k, count);
            run.line(r);
        }
        run.line(String::new());
    }
    if full {
        let count = 8160;
        run.line(format!(
            "#### Every width and direction, {count} calls per flush (8-tap regular; loop filters)"
        ));
        run.line(String::new());
        run.line("| function | GPU M/s | FFmpeg C | FFmpeg SIMD | GPU / SIMD | GPU / C |".into());
        run.line("|---|---:|---:|---:|---:|---:|".into());
        let mut kernels = Vec::new();
        for width in [4, 8, 16, 32, 64] {
            for (h, v, avg) in [
                (true, false, false),
                (true, true, false),
                (true, true, true),
            ] {
                kernels.push(Kernel::Mc(McFunction {
                    width,
                    filter: McFilter::Regular,
                    avg,
                    h,
                    v,
                }));
            }
            kernels.push(Kernel::Mc(McFunction {
                width,
                filter: McFilter::Regular,
                avg: false,
                h: false,
                v: false,
            }));
        }
        kernels.extend(LfFunction::all().into_iter().map(Kernel::Lf));
        for k in kernels {
            let n = match k {
                Kernel::Mc(f) => count.min(8160 * 64 / (f.width * f.width)).max(1),
                Kernel::Lf(_) => count,
            };
            let b = match k {
                Kernel::Mc(f) => Batch::mc(&mut rng, f, n),
                Kernel::Lf(f) => Batch::lf(&mut rng, f, n),
            };
            let g = measure(&b, k, Path::Gpu, min_time);
            let c = measure(&b, k, Path::Cpu(c_table), min_time);
            let s = measure(&b, k, Path::Cpu(simd_table), min_time);
            assert!(
                g.checksum == c.checksum && s.checksum == c.checksum,
                "{}",
                name(k)
            );
            let rate = |m: &Measured| n as f64 / m.seconds / 1e6;
            run.line(format!(
                "| {} (x{n}) | {:.2} | {:.2} | {:.2} | {:.3} | {:.2} |",
                name(k),
                rate(&g),
                rate(&c),
                rate(&s),
                s.seconds / g.seconds,
                c.seconds / g.seconds
            ));
        }
        run.line(String::new());
    }
    run.finish();
}
