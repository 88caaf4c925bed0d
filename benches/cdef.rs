//! AV1 CDEF throughput: daedalus on the GPU (`daedalus_av1_cdef_filter_*`, the frame filtered
//! in place through imported memory) beside dav1d 1.0.0's own C and x86 SIMD functions on one
//! pinned core, on the same blocks in the same process. Every figure comes with the device
//! name, the submissions and dispatches per flush, and a checksum of the output that all paths
//! must share.
//!
//! `cargo bench --bench cdef` runs it (`-- --quick` for a shorter run, `-- --markdown FILE` to
//! write the tables). Under `cargo test` it only runs a small smoke check.

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use common::*;
use daedalus::kernels::cdef::{BLOCK_SIZES, HAVE_BOTTOM, HAVE_LEFT, HAVE_RIGHT, HAVE_TOP};
use support::*;

/// A frame-like batch of one `fb[]` size: blocks side by side in raster order over a plane
/// 1920 pixels wide, each with its strengths, direction, damping and edges (every side but the
/// plane's border), and dav1d's `left`, `top` and `bottom` inputs in buffers of their own.
struct Batch {
    size: usize,
    bits: u32,
    /// Frame stride in pixels (a multiple of 32, as dav1d's are aligned).
    stride: usize,
    plane: Vec<u16>,
    /// Per block row: two rows above and two below, the plane's stride apart.
    tops: Vec<u16>,
    bottoms: Vec<u16>,
    /// Per block: `h` pairs.
    lefts: Vec<[u16; 2]>,
    blocks: Vec<Block>,
}

struct Block {
    x: usize,
    y: usize,
    params: [i32; 4],
    edges: i32,
}

impl Batch {
    fn new(rng: &mut Rng, size: usize, bits: u32, count: usize) -> Batch {
        let (w, h) = BLOCK_SIZES[size];
        let per_row = 1920 / w;
        let rows = count.div_ceil(per_row);
        let stride = 1920 + 32;
        let max = (1usize << bits) - 1;
        let b = bits as i32 - 8;
        // Smooth content with noise, as pictures are: most taps pass the constraint.
        let mut pixel = |i: usize| {
            let v = (i % stride) * 3 + (i / stride) * 5 + rng.below(24);
            ((v % 256) << b).min(max) as u16
        };
        let plane: Vec<u16> = (0..stride * rows * h).map(&mut pixel).collect();
        let tops: Vec<u16> = (0..stride * rows * 2).map(&mut pixel).collect();
        let bottoms: Vec<u16> = (0..stride * rows * 2).map(&mut pixel).collect();
        let lefts: Vec<[u16; 2]> = (0..count * h).map(|i| [pixel(i), pixel(i + 1)]).collect();
        let blocks = (0..count)
            .map(|i| {
                let (x, y) = ((i % per_row) * w, (i / per_row) * h);
                let mut edges = HAVE_TOP | HAVE_BOTTOM;
                if x > 0 {
                    edges |= HAVE_LEFT;
                }
                if x + w < 1920 {
                    edges |= HAVE_RIGHT;
                }
                let (primary, secondary) = loop {
                    let p = (rng.below(16) as i32) << b;
                    let s = [0, 1, 2, 4][rng.below(4)] << b;
                    if p + s > 0 {
                        break (p, s);
                    }
                };
                let params = [
                    primary,
                    secondary,
                    rng.below(8) as i32,
                    3 + rng.below(4) as i32 + b,
                ];
                Block {
                    x,
                    y,
                    params,
                    edges: edges as i32,
                }
            })
            .collect();
        Batch {
            size,
            bits,
            stride,
            plane,
            tops,
            bottoms,
            lefts,
            blocks,
        }
    }

    fn name(&self) -> String {
        let (w, h) = BLOCK_SIZES[self.size];
        format!("{w}x{h}, {} bits", self.bits)
    }
}

#[derive(Clone, Copy)]
enum Path<'a> {
    Gpu,
    Dav1d(&'a CdefDsp),
}

/// Runs the batch's calls on `plane` (pixels of one byte for 8 bits, two otherwise).
unsafe fn run_calls(
    b: &Batch,
    path: Path,
    plane: *mut u8,
    tops: *const u8,
    bottoms: *const u8,
    lefts: *const u8,
) {
    let (w, h) = BLOCK_SIZES[b.size];
    let wide = b.bits > 8;
    let px = 1 + wide as usize;
    let stride = (b.stride * px) as isize;
    let bitdepth_max = (1 << b.bits) - 1;
    let per_row = 1920 / w;
    let f = match path {
        Path::Gpu => CdefFn::of_daedalus(b.size, wide),
        Path::Dav1d(t) => CdefFn::of_dav1d(t, b.size, wide),
    };
    for (i, blk) in b.blocks.iter().enumerate() {
        let dst = plane.add((blk.y * b.stride + blk.x) * px);
        let line = (i / per_row) * 2 * b.stride + blk.x;
        let top = tops.add(line * px);
        let bottom = bottoms.add(line * px);
        let left = lefts.add(i * h * 2 * px);
        f.call(
            dst,
            stride,
            left,
            top,
            bottom,
            blk.params,
            blk.edges,
            bitdepth_max,
        );
    }
}

/// The batch's pixels as the functions take them: bytes for 8 bits, `u16`s otherwise.
fn as_pixels(b: &Batch, v: &[u16]) -> Vec<u8> {
    if b.bits > 8 {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    } else {
        v.iter().map(|&x| x as u8).collect()
    }
}

/// Median time of one pass over the batch (record + flush for daedalus).
fn measure(b: &Batch, path: Path, min_time: f64) -> Measured {
    let tops = Aligned::new(&as_pixels(b, &b.tops));
    let bottoms = Aligned::new(&as_pixels(b, &b.bottoms));
    let lefts: Vec<u16> = b.lefts.iter().flatten().copied().collect();
    let lefts = Aligned::new(&as_pixels(b, &lefts));
    let (t, bo, l) = (tops.as_slice(), bottoms.as_slice(), lefts.as_slice());
    let gpu = matches!(path, Path::Gpu);
    measure_passes(&as_pixels(b, &b.plane), gpu, min_time, |px| unsafe {
        run_calls(b, path, px, t.as_ptr(), bo.as_ptr(), l.as_ptr())
    })
}

fn main() {
    let mut run = Run::start("daedalus GPU path, pixels in place");
    let full = run.opts.full;
    let (sizes, min_time) = (run.opts.batch_sizes(), run.opts.min_time());
    let mut rng = Rng::new(5);
    let configs: &[(usize, u32)] = if full {
        &[(0, 8), (2, 8), (0, 10)]
    } else {
        &[(0, 8), (2, 10)]
    };
    for &(size, bits) in configs {
        let (c, simd) = dav1d_tables(bits > 8);
        let name = Batch::new(&mut rng, size, bits, 1).name();
        run.line(format!("#### CDEF {name}: Mblock/s (median pass)"));
        run.line(String::new());
        run.line("| blocks/flush | GPU | dav1d C | dav1d SIMD | GPU / SIMD | GPU / C | GPU µs: record, flush, busy | submissions, dispatches per flush |".into());
        run.line("|---:|---:|---:|---:|---:|---:|---|---|".into());
        for &count in &sizes {
            let b = Batch::new(&mut rng, size, bits, count);
            let g = measure(&b, Path::Gpu, min_time);
            let cm = measure(&b, Path::Dav1d(&c), min_time);
            let sm = measure(&b, Path::Dav1d(&simd), min_time);
            assert!(
                g.checksum == cm.checksum && sm.checksum == cm.checksum,
                "{name} x{count}: outputs differ: GPU {:x}, C {:x}, SIMD {:x}",
                g.checksum,
                cm.checksum,
                sm.checksum
            );
            let rate = |m: &Measured| count as f64 / m.seconds / 1e6;
            run.line(format!(
                "| {count} | {:.2} | {:.2} | {:.2} | {:.3} | {:.2} | {:.0}, {:.0}, {:.0} | {:.0}, {:.0} (checksum {:016x}) |",
                rate(&g),
                rate(&cm),
                rate(&sm),
                sm.seconds / g.seconds,
                cm.seconds / g.seconds,
                g.record_seconds * 1e6,
                (g.seconds - g.record_seconds) * 1e6,
                g.gpu_seconds * 1e6,
                g.submissions,
                g.dispatches,
                cm.checksum
            ));
        }
        run.line(String::new());
    }
    run.finish();
}
