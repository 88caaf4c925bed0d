//! Transform throughput and flush latency: daedalus on the GPU (pixels in place through
//! imported memory, and pixels copied) beside FFmpeg's C and SIMD functions on one pinned core,
//! on the same blocks in the same process. Every figure comes with the device name, the
//! submissions and dispatches per flush, and a checksum of the output that all paths must share.
//!
//! `cargo bench --bench itx` runs it (`-- --quick` for a shorter run, `-- --markdown FILE` to
//! write the tables). Under `cargo test` it only runs a small smoke check.

#[path = "../tests/common/mod.rs"]
mod common;
mod support;

use common::*;
use daedalus::ffi;
use daedalus::kernels::itx::{Transform, Tx1d, TxSize};
use daedalus::vp9dsp::ItxfmAddFn;
use std::time::Instant;
use support::*;

/// A batch: blocks of one transform in raster order over a frame-like plane (as a decoder
/// issues them), each with its own coefficient buffer.
struct Batch {
    tx: Transform,
    stride: usize,
    pixels: Vec<u8>,
    positions: Vec<usize>,
    coefs: Vec<i16>,
    eobs: Vec<i32>,
}

impl Batch {
    fn new(rng: &mut Rng, tx: Transform, blocks: usize) -> Batch {
        let n = tx.size.n();
        let per_row = 1920 / n;
        let rows = blocks.div_ceil(per_row);
        let stride = 1920 + 64;
        let mut pixels = vec![0u8; stride * rows * n];
        rng.bytes(&mut pixels);
        let pool: Vec<(Vec<i16>, i32)> = (0..64)
            .map(|_| {
                let c = realistic_block(rng, tx);
                let eob = plausible_eob(rng, tx, &c);
                (c, eob)
            })
            .collect();
        let mut coefs = Vec::with_capacity(blocks * n * n);
        let mut eobs = Vec::with_capacity(blocks);
        let positions = (0..blocks)
            .map(|i| {
                let (c, e) = &pool[rng.below(pool.len())];
                coefs.extend_from_slice(c);
                eobs.push(*e);
                (i / per_row) * n * stride + (i % per_row) * n
            })
            .collect();
        Batch {
            tx,
            stride,
            pixels,
            positions,
            coefs,
            eobs,
        }
    }
}

/// Working copies that each timed run starts from.
/// Aligned as FFmpeg's frames and coefficient buffers are.
struct Work {
    pixels: Aligned<u8>,
    coefs: Aligned<i16>,
}

impl Work {
    fn new(b: &Batch) -> Work {
        Work {
            pixels: Aligned::new(&b.pixels),
            coefs: Aligned::new(&b.coefs),
        }
    }
    fn reset(&mut self, b: &Batch) {
        self.pixels.as_mut_slice().copy_from_slice(&b.pixels);
        self.coefs.as_mut_slice().copy_from_slice(&b.coefs);
    }
}

#[derive(Clone, Copy)]
enum Path {
    GpuInPlace,
    GpuCopied,
    Cpu(ItxfmAddFn),
}

struct Measured {
    seconds: f64,
    /// For daedalus: median time of the recording calls, and GPU busy time per pass.
    record_seconds: f64,
    gpu_seconds: f64,
    /// Flush phases per pass: packing, submit + wait.
    phases: [f64; 2],
    checksum: u64,
    submissions: f64,
    dispatches: f64,
    bytes_per_block: f64,
}

/// Median time of one pass over the batch (record + flush for daedalus).
fn measure(b: &Batch, path: Path, work: &mut Work, min_time: f64) -> Measured {
    let n = b.tx.size.n();
    let gpu_fn = daedalus_itx(b.tx);
    let registered = matches!(path, Path::GpuInPlace);
    if registered {
        assert_eq!(
            ffi::daedalus_register_memory(
                work.pixels.as_mut_slice().as_mut_ptr().cast(),
                work.pixels.as_slice().len()
            ),
            0
        );
    }
    let mut times = Vec::new();
    let mut record_times = Vec::new();
    let mut total = 0.0;
    let before = stats();
    while (total < min_time || times.len() < 3) && times.len() < 200 {
        work.reset(b);
        let px = work.pixels.as_mut_slice().as_mut_ptr();
        let co = work.coefs.as_mut_slice().as_mut_ptr();
        let t0 = Instant::now();
        unsafe {
            match path {
                Path::Cpu(f) => {
                    for (i, &at) in b.positions.iter().enumerate() {
                        f(px.add(at), b.stride as isize, co.add(i * n * n), b.eobs[i]);
                    }
                }
                Path::GpuInPlace | Path::GpuCopied => {
                    for (i, &at) in b.positions.iter().enumerate() {
                        gpu_fn(px.add(at), b.stride as isize, co.add(i * n * n), b.eobs[i]);
                    }
                    record_times.push(t0.elapsed().as_secs_f64());
                    ffi::daedalus_flush();
                }
            }
        }
        let t = t0.elapsed().as_secs_f64();
        times.push(t);
        total += t;
    }
    let after = stats();
    let sum = checksum(work.pixels.as_slice());
    if registered {
        assert_eq!(
            ffi::daedalus_unregister_memory(work.pixels.as_mut_slice().as_mut_ptr().cast()),
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
        phases: [
            (after.pack_ns - before.pack_ns) as f64 / runs / 1e9,
            (after.wait_ns - before.wait_ns) as f64 / runs / 1e9,
        ],
        checksum: sum,
        submissions: (after.submissions - before.submissions) as f64 / runs,
        dispatches: (after.dispatches - before.dispatches) as f64 / runs,
        bytes_per_block: (after.bytes_to_device + after.bytes_from_device
            - before.bytes_to_device
            - before.bytes_from_device) as f64
            / runs
            / b.positions.len() as f64,
    }
}

/// Flush round trip in µs: (p50, p99).
fn round_trip(blocks: usize, registered: bool, iterations: usize) -> (f64, f64) {
    let tx = Transform::new(TxSize::T8, Tx1d::Dct, Tx1d::Dct);
    let mut rng = Rng::new(7);
    let b = Batch::new(&mut rng, tx, blocks.max(1));
    let mut work = Work::new(&b);
    if registered {
        assert_eq!(
            ffi::daedalus_register_memory(
                work.pixels.as_mut_slice().as_mut_ptr().cast(),
                work.pixels.as_slice().len()
            ),
            0
        );
    }
    let mut t = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        work.coefs.as_mut_slice().copy_from_slice(&b.coefs);
        let t0 = Instant::now();
        for i in 0..blocks {
            unsafe {
                ffi::daedalus_vp9_idct_idct_8x8_add(
                    work.pixels.as_mut_slice().as_mut_ptr().add(b.positions[i]),
                    b.stride as isize,
                    work.coefs.as_mut_slice().as_mut_ptr().add(i * 64),
                    64,
                )
            };
        }
        ffi::daedalus_flush();
        t.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    if registered {
        assert_eq!(
            ffi::daedalus_unregister_memory(work.pixels.as_mut_slice().as_mut_ptr().cast()),
            0
        );
    }
    t.sort_by(f64::total_cmp);
    (percentile(&t, 0.5), percentile(&t, 0.99))
}

fn main() {
    let mut run = Run::start("daedalus GPU path");
    let (c_table, simd_table, simd) = (run.c, run.simd, run.simd_name);
    let full = run.opts.full;
    let (sizes, min_time) = (run.opts.batch_sizes(), run.opts.min_time());

    let order = [TxSize::T8, TxSize::T4, TxSize::T16, TxSize::T32];
    let mut rng = Rng::new(1);
    let mut bytes_rows = Vec::new();
    for size in order {
        let tx = Transform::new(size, Tx1d::Dct, Tx1d::Dct);
        let n = size.n();
        run.line(format!(
            "#### {n}x{n} idct_idct: Mblock/s (median pass: record + flush for daedalus)"
        ));
        run.line(String::new());
        run.line(format!(
            "| blocks/flush | GPU in place | GPU copied | FFmpeg C | FFmpeg {simd} | in place / {simd} | in place / C | in place, µs: record, flush (pack + submit&wait), GPU busy | submissions, dispatches per flush |"
        ));
        run.line("|---:|---:|---:|---:|---:|---:|---:|---|---|".into());
        for &blocks in &sizes {
            if !full && n == 32 && blocks > 64 {
                continue;
            }
            let b = Batch::new(&mut rng, tx, blocks);
            let mut work = Work::new(&b);
            let c_fn = ffmpeg_itx(c_table, tx);
            let simd_fn = ffmpeg_itx(simd_table, tx);
            let inplace = measure(&b, Path::GpuInPlace, &mut work, min_time);
            let copied = measure(&b, Path::GpuCopied, &mut work, min_time);
            let c = measure(&b, Path::Cpu(c_fn), &mut work, min_time);
            let s = measure(&b, Path::Cpu(simd_fn), &mut work, min_time);
            assert!(
                inplace.checksum == c.checksum && copied.checksum == c.checksum && s.checksum == c.checksum,
                "{n}x{n} x{blocks}: outputs differ between paths: in place {:x}, copied {:x}, C {:x}, SIMD {:x}",
                inplace.checksum, copied.checksum, c.checksum, s.checksum
            );
            let mbps = |m: &Measured| blocks as f64 / m.seconds / 1e6;
            run.line(format!(
                "| {blocks} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0}, {:.0} ({:.0} + {:.0}), {:.0} | {:.0}, {:.0} (checksum {:016x}) |",
                mbps(&inplace),
                mbps(&copied),
                mbps(&c),
                mbps(&s),
                s.seconds / inplace.seconds,
                c.seconds / inplace.seconds,
                inplace.record_seconds * 1e6,
                (inplace.seconds - inplace.record_seconds) * 1e6,
                inplace.phases[0] * 1e6,
                inplace.phases[1] * 1e6,
                inplace.gpu_seconds * 1e6,
                inplace.submissions,
                inplace.dispatches,
                c.checksum
            ));
            if blocks == *sizes.last().unwrap() {
                bytes_rows.push(format!(
                    "| {n}x{n} | {:.0} | {:.0} |",
                    inplace.bytes_per_block, copied.bytes_per_block
                ));
            }
        }
        run.line(String::new());
    }

    run.line("#### Bytes moved between host and device per block (largest batch above)".into());
    run.line(String::new());
    run.line("| transform | in place (coefficients + job) | copied (+ pixels both ways) |".into());
    run.line("|---|---:|---:|".into());
    for r in bytes_rows {
        run.line(r);
    }
    run.line(String::new());

    let iterations = if full { 2000 } else { 50 };
    run.line(format!(
        "#### Flush round trip, 8x8 idct_idct ({iterations} flushes; µs)"
    ));
    run.line(String::new());
    run.line("| flush | p50 | p99 |".into());
    run.line("|---|---:|---:|".into());
    for (what, blocks, reg) in [
        ("empty (nothing recorded: no submission)", 0, false),
        ("1 block, in place", 1, true),
        ("1 block, copied", 1, false),
    ] {
        let (p50, p99) = round_trip(blocks, reg, iterations);
        run.line(format!("| {what} | {p50:.1} | {p99:.1} |"));
    }
    run.line(String::new());

    if full {
        // Every transform at one batch size.
        let blocks = 8160;
        run.line(format!(
            "#### Every transform, {blocks} blocks per flush: Mblock/s"
        ));
        run.line(String::new());
        run.line(format!(
            "| transform | GPU in place | FFmpeg C | FFmpeg {simd} | in place / {simd} |"
        ));
        run.line("|---|---:|---:|---:|---:|".into());
        for tx in Transform::ALL {
            let b = Batch::new(&mut rng, tx, blocks);
            let mut work = Work::new(&b);
            let inplace = measure(&b, Path::GpuInPlace, &mut work, min_time);
            let c = measure(&b, Path::Cpu(ffmpeg_itx(c_table, tx)), &mut work, min_time);
            let s = measure(
                &b,
                Path::Cpu(ffmpeg_itx(simd_table, tx)),
                &mut work,
                min_time,
            );
            assert!(
                inplace.checksum == c.checksum && s.checksum == c.checksum,
                "{}: outputs differ",
                tx.name()
            );
            let mbps = |m: &Measured| blocks as f64 / m.seconds / 1e6;
            run.line(format!(
                "| {} | {:.2} | {:.2} | {:.2} | {:.2} |",
                tx.name(),
                mbps(&inplace),
                mbps(&c),
                mbps(&s),
                s.seconds / inplace.seconds
            ));
        }
        run.line(String::new());
    }
    run.finish();
}
