//! AV1 CDEF by superblock rows: a frame's rows on the GPU as the patched dav1d hands them over
//! (`daedalus::av1::cdef_apply`: the halos copied, the record built, the submission, and the
//! wait, at once per row or after the frame's last row), beside dav1d 1.0.0's own `dir` and
//! `fb` walked over the same blocks as `dav1d_cdef_brow` walks them (its C functions, and its
//! x86 SIMD), on one pinned core. Wall and host CPU time per superblock row; a synthetic frame
//! whose blocks are two in three coded and one 64x64 block in eight without CDEF.
//!
//! The walk reads the strip above as filtered where dav1d reads its line backups (the same
//! cost), so its output is not compared; the kernels' exactness is `tests/cdef_row_*.rs`'s.
//!
//! `cargo bench --bench cdef_row` runs it (`-- --markdown FILE` writes the table). Under
//! `cargo test` it only runs one small frame.

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use common::{CdefDsp, Fb8};
use daedalus::av1::cdef_apply::{finish_on_gpu, start_on_gpu};
use daedalus::gpu::memory::HostBuffer;
use daedalus::kernels::cdef::{HAVE_BOTTOM, HAVE_LEFT, HAVE_RIGHT, HAVE_TOP};
use daedalus::kernels::cdef_row::{adjust_strength, FrameParams, Layout, PlaneAt, Row};
use std::time::Instant;
use support::{dav1d_tables, Run};

type Dir = unsafe extern "C" fn(*const u8, isize, *mut u32) -> i32;
/// 64x64 superblocks, in 4x4 blocks.
const SB: usize = 16;

/// An 8-bit 4:2:0 frame between margins (dav1d's SIMD may read around a block where its edge
/// flags say there is nothing), its rows, and its pixels as they start.
struct Frame {
    params: FrameParams,
    rows: Vec<Row>,
    planes: Vec<PlaneAt>,
    start: Vec<u8>,
    buffer: HostBuffer,
}

impl Frame {
    fn new(width: usize, height: usize) -> Frame {
        let mut y_strength = [0u8; 8];
        let mut uv_strength = [0u8; 8];
        (y_strength[0], y_strength[1]) = ((6 << 2) | 1, (3 << 2) | 2);
        (uv_strength[0], uv_strength[1]) = ((4 << 2) | 1, 2 << 2);
        let params = FrameParams {
            layout: Layout::I420,
            bitdepth: 8,
            damping: 5,
            y_strength,
            uv_strength,
            bw: width / 4,
            bh: height.div_ceil(4),
        };
        // dav1d pads a picture's rows to a multiple of 128.
        let padded = height.div_ceil(128) * 128;
        let margin = 4 * width;
        let (mut planes, mut bytes) = (Vec::new(), margin);
        for p in 0..3 {
            let stride = params.plane_width(p);
            planes.push(PlaneAt {
                offset: bytes as u32,
                stride: stride as u32,
            });
            bytes += stride * (padded >> params.shifts(p).1);
        }
        bytes += margin;
        // Gradients with texture and hard edges, so that directions and variances vary.
        let mut seed = 0x2545_f491u32;
        let start: Vec<u8> = (0..bytes)
            .map(|i| {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let (x, y) = (i % width, i / width);
                let edge = if (x / 23 + y / 17) % 3 == 0 { 64 } else { 0 };
                ((x * 3 + y * 2 + edge) as u32 + (seed >> 28)) as u8
            })
            .collect();
        let gpu = daedalus::gpu::get().expect("a device");
        let buffer = HostBuffer::coherent_zeroed(gpu, bytes as u64).expect("frame memory");
        let sb_rows = params.bh.div_ceil(SB);
        let cols = params.sb64_cols();
        let cdef_idx: Vec<i8> = (0..params.bh.div_ceil(16) * cols)
            .map(|i| if i % 8 == 7 { -1 } else { (i % 2) as i8 })
            .collect();
        let coded = (0..16)
            .filter(|k| k % 3 != 2)
            .fold(0u32, |m, k| m | 3 << (2 * k));
        let rows = (0..sb_rows)
            .map(|sby| {
                let mut row = Row::of_superblock_row(sby, sb_rows, SB, params.bh);
                let first = (row.by_start >> 4) * cols;
                row.cdef_idx = cdef_idx[first..first + row.sb64_rows() * cols].to_vec();
                row.noskip = vec![coded; row.strips() * params.sb128_cols()];
                row
            })
            .collect();
        Frame {
            params,
            rows,
            planes,
            start,
            buffer,
        }
    }

    fn reset(&self) {
        // SAFETY: the buffer holds `start`'s bytes, and no GPU work uses it now.
        unsafe {
            std::ptr::copy_nonoverlapping(self.start.as_ptr(), self.buffer.ptr, self.start.len())
        };
    }

    fn at(&self, plane: usize, x: usize, y: usize) -> *mut u8 {
        let a = self.planes[plane];
        self.buffer
            .ptr
            .wrapping_add(a.offset as usize + y * a.stride as usize + x)
    }

    /// Two rows of `plane` from row `y` on, as the hook copies a halo.
    fn lines(&self, plane: usize, y: usize) -> Vec<u8> {
        let w = self.params.plane_width(plane);
        // SAFETY: rows inside the plane (its rows are padded below).
        let row = |y| unsafe { std::slice::from_raw_parts(self.at(plane, 0, y), w) };
        [row(y), row(y + 1)].concat()
    }

    /// The frame's rows on the GPU, each waited for or (`deferred`) all after the last.
    fn on_gpu(&self, deferred: bool) {
        let p = &self.params;
        let mut on_their_way = Vec::new();
        for row in &self.rows {
            let halo = |at: fn(&Row, &FrameParams, usize) -> usize| -> Vec<Vec<u8>> {
                (0..3).map(|pl| self.lines(pl, at(row, p, pl))).collect()
            };
            let top = (row.by_start > 0).then(|| halo(|r, p, pl| r.plane_rows(p, pl).0 - 2));
            let bottom = (row.by_end < p.bh).then(|| halo(|r, p, pl| r.plane_rows(p, pl).1));
            let record = row.gpu_record(p, &self.planes, false, top.as_deref(), bottom.as_deref());
            let buffers = start_on_gpu(&record, self.buffer.as_ref()).expect("submitted");
            match deferred {
                true => on_their_way.push(buffers),
                false => finish_on_gpu(buffers).expect("waited"),
            }
        }
        for buffers in on_their_way {
            finish_on_gpu(buffers).expect("waited");
        }
    }

    /// The frame's rows with dav1d's `dir` and `fb`, block by block as `dav1d_cdef_brow`.
    fn on_cpu(&self, dsp: &CdefDsp) {
        let p = &self.params;
        // SAFETY: dav1d's 8 bpc functions, with their arguments in order.
        let (dir, fb) = unsafe {
            (
                std::mem::transmute::<*const std::ffi::c_void, Dir>(dsp.dir),
                dsp.fb
                    .map(|f| std::mem::transmute::<*const std::ffi::c_void, Fb8>(f)),
            )
        };
        let mut left = [[[0u8; 2]; 8]; 3];
        for row in &self.rows {
            for strip in 0..row.strips() {
                let by = row.by_start + 2 * strip;
                for bx in (0..p.bw).step_by(2) {
                    let Some((y_lvl, uv_lvl)) = row.block_levels(p, bx, by) else {
                        continue;
                    };
                    let mut edges = 0;
                    for (present, flag) in [
                        (bx > 0, HAVE_LEFT),
                        (bx + 2 < p.bw, HAVE_RIGHT),
                        (by > 0, HAVE_TOP),
                        (by + 2 < p.bh, HAVE_BOTTOM),
                    ] {
                        edges |= if present { flag } else { 0 };
                    }
                    let split = |l: u8| ((l >> 2) as i32, (l & 3) as i32 + ((l & 3) == 3) as i32);
                    let ((y_pri, y_sec), (uv_pri, uv_sec)) = (split(y_lvl), split(uv_lvl));
                    for (plane, left) in left.iter_mut().enumerate() {
                        let (sx, sy) = p.shifts(plane);
                        let (x, y) = ((bx * 4) >> sx, (by * 4) >> sy);
                        for (r, pair) in left.iter_mut().enumerate().take(8 >> sy) {
                            // SAFETY: inside the frame or its margin.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    self.at(plane, x, y + r).wrapping_sub(2),
                                    pair.as_mut_ptr(),
                                    2,
                                )
                            };
                        }
                    }
                    let (x, y) = (bx * 4, by * 4);
                    let mut var = 0u32;
                    let d = match y_pri != 0 || uv_pri != 0 {
                        // SAFETY: an 8x8 block of the frame.
                        true => unsafe {
                            dir(self.at(0, x, y), self.planes[0].stride as isize, &mut var)
                        },
                        false => 0,
                    };
                    let luma = (adjust_strength(y_pri, var), y_sec, d, p.damping, 0);
                    let uv_dir = if uv_pri != 0 { d } else { 0 };
                    let chroma = (uv_pri, uv_sec, uv_dir, p.damping - 1, 2);
                    for (plane, (pri, sec, d, damping, size)) in
                        [luma, chroma, chroma].into_iter().enumerate()
                    {
                        if pri == 0 && sec == 0 {
                            continue;
                        }
                        let (sx, sy) = p.shifts(plane);
                        let stride = self.planes[plane].stride as usize;
                        let dst = self.at(plane, x >> sx, y >> sy);
                        let bottom = self.at(plane, x >> sx, (y >> sy) + (8 >> sy));
                        // SAFETY: dav1d's `fb` on a block of the frame, its rows around it
                        // inside the frame or its margin.
                        unsafe {
                            fb[size](
                                dst,
                                stride as isize,
                                left[plane].as_ptr(),
                                dst.wrapping_sub(2 * stride),
                                bottom,
                                pri,
                                sec,
                                d,
                                damping,
                                edges as i32,
                            )
                        };
                    }
                }
            }
        }
    }
}

/// Wall and host CPU microseconds of `f` on the frame: the median of `passes` runs, each from
/// the frame's first pixels.
fn time(frame: &Frame, passes: usize, mut f: impl FnMut()) -> (f64, f64) {
    let mut runs: Vec<(f64, f64)> = (0..passes)
        .map(|_| {
            frame.reset();
            let (wall, cpu) = (Instant::now(), daedalus::stats::thread_cpu_ns());
            f();
            let cpu = daedalus::stats::thread_cpu_ns() - cpu;
            (wall.elapsed().as_secs_f64() * 1e6, cpu as f64 / 1e3)
        })
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    runs[passes / 2]
}

/// A way of filtering the frame, by name.
type Way<'a> = (&'a str, Box<dyn Fn() + 'a>);

fn main() {
    let mut run = Run::start("daedalus AV1 CDEF rows, frame in host memory");
    let (c, simd) = dav1d_tables(false);
    let (sizes, passes): (&[(usize, usize)], usize) = match run.opts.full {
        true => (&[(1280, 720), (1920, 1080)], 15),
        false => (&[(320, 180)], 3),
    };
    run.line(
        "| frame | rows | way | wall µs per row | host CPU µs per row | wall / dav1d SIMD |".into(),
    );
    run.line("|---|---:|---|---:|---:|---:|".into());
    for &(w, h) in sizes {
        let frame = Frame::new(w, h);
        // Untimed: pipelines, buffers.
        frame.on_gpu(true);
        frame.on_gpu(false);
        let ways: [Way; 4] = [
            ("dav1d SIMD", Box::new(|| frame.on_cpu(&simd))),
            ("dav1d C", Box::new(|| frame.on_cpu(&c))),
            ("GPU, waited per row", Box::new(|| frame.on_gpu(false))),
            (
                "GPU, waited after the frame",
                Box::new(|| frame.on_gpu(true)),
            ),
        ];
        let rows = frame.rows.len() as f64;
        let mut simd_wall = 0.0;
        for (name, f) in &ways {
            let (wall, cpu) = time(&frame, passes, f);
            if *name == "dav1d SIMD" {
                simd_wall = wall;
            }
            run.line(format!(
                "| {w}x{h} | {rows} | {name} | {:.1} | {:.1} | {:.2} |",
                wall / rows,
                cpu / rows,
                wall / simd_wall
            ));
        }
    }
    let submitted = daedalus::stats::read(&daedalus::av1::cdef_apply::ROW_SUBMISSIONS);
    run.line(format!("\nRows submitted to the GPU: {submitted}."));
    run.finish();
}
