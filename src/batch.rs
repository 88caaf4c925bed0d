//! The per-thread recorder.
//!
//! A call copies its coefficients into the thread's arena (the stream's mapped upload buffer
//! on the GPU path), zeroes the caller's block as FFmpeg does, and appends one [`Call`].
//! [`flush`] executes everything the thread recorded and returns with the pixels in place.
//!
//! On the GPU path a flush is split into as few segments as correctness allows; each segment
//! is one command buffer and one submission. A segment ends where a call would touch a pixel
//! that an earlier call of the segment touches (see `overlap`), where a call lies partly in a
//! registered region, or when the pixel buffers one submission can address run out. Inside a
//! segment the calls are grouped by kernel and pixel buffer: one dispatch per group.
//!
//! How pixels reach the GPU: blocks inside a registered region of imported memory are read and
//! written in place; all other blocks are copied into the stream's staging buffer before the
//! submission and copied back after it.

use crate::gpu::stream::{Buf, Dispatch, Stream, MAX_SLOTS};
use crate::gpu::{self, GpuResult};
use crate::kernels::itx::{self, GpuJob, ItxKernel, Transform, TxSize};
use crate::overlap::Occupancy;
use crate::regions::{self, Placement, Region};
use crate::stats::{self, COUNTERS};
use std::cell::RefCell;
use std::ptr;
use std::sync::Arc;

#[derive(Clone, Copy, Debug)]
struct Call {
    dst: *mut u8,
    stride: isize,
    /// [`ItxKernel::index`].
    kernel: u8,
    /// Pixel buffer of the segment (0 = staging); set when the flush plans segments.
    slot: u8,
    /// First coefficient in the arena, or the DC value of a DC-only call.
    coef: u32,
    /// Byte offset of the top-left pixel in the slot's buffer; set when planning.
    pixel: u32,
}

const KERNELS: [ItxKernel; ItxKernel::COUNT] = {
    let mut all = [ItxKernel::DcOnly(TxSize::T4); ItxKernel::COUNT];
    let mut i = 0;
    while i < Transform::ALL.len() {
        all[i] = ItxKernel::Full(Transform::ALL[i]);
        i += 1;
    }
    all[i] = ItxKernel::DcOnly(TxSize::T4);
    all[i + 1] = ItxKernel::DcOnly(TxSize::T8);
    all[i + 2] = ItxKernel::DcOnly(TxSize::T16);
    all[i + 3] = ItxKernel::DcOnly(TxSize::T32);
    all
};

fn kernel_of(call: &Call) -> ItxKernel {
    KERNELS[call.kernel as usize]
}

/// First and one-past-last byte an `n` x `n` block touches.
fn span(dst: *mut u8, stride: isize, n: usize) -> (usize, usize) {
    let last_row = (n as isize - 1).wrapping_mul(stride);
    let first = (dst as usize).wrapping_add(last_row.min(0) as usize);
    let end = (dst as usize)
        .wrapping_add(last_row.max(0) as usize)
        .wrapping_add(n);
    (first, end)
}

struct Recorder {
    calls: Vec<Call>,
    /// The coefficient arena on the CPU path.
    host_coefs: Vec<i16>,
    /// Coefficients used in the arena.
    coef_len: usize,
    /// The GPU path's context; `None` on the CPU path.
    stream: Option<Stream>,
    backend_chosen: bool,
    occupancy: Occupancy,
    regions: Vec<Arc<Region>>,
    regions_version: u64,
}

thread_local! {
    static RECORDER: RefCell<Recorder> = RefCell::new(Recorder::new());
}

impl Recorder {
    fn new() -> Recorder {
        Recorder {
            calls: Vec::new(),
            host_coefs: Vec::new(),
            coef_len: 0,
            stream: None,
            backend_chosen: false,
            occupancy: Occupancy::default(),
            regions: Vec::new(),
            regions_version: 0,
        }
    }

    fn choose_backend(&mut self) {
        self.backend_chosen = true;
        if let Some(g) = gpu::get() {
            match Stream::new(g) {
                Ok(s) => self.stream = Some(s),
                Err(e) => g.mark_lost(&format!("creating a stream: {e}")),
            }
        }
    }

    fn arena(&mut self) -> *mut i16 {
        match &self.stream {
            Some(s) => s.coefs.ptr as *mut i16,
            None => self.host_coefs.as_mut_ptr(),
        }
    }

    /// Room for `count` more coefficients; returns where they go. May flush first.
    fn reserve(&mut self, count: usize) -> usize {
        let needed = self.coef_len + count;
        match &mut self.stream {
            None => {
                if self.host_coefs.len() < needed {
                    self.host_coefs
                        .resize(needed.max(2 * self.host_coefs.len()).max(1 << 16), 0);
                }
            }
            Some(s) if needed * 2 > s.coefs.size as usize => {
                // Full: run what is pending, then take a larger buffer for next time.
                crate::debug!(
                    "coefficient buffer full ({} bytes): flushing early",
                    s.coefs.size
                );
                self.flush();
                if let Some(s) = &mut self.stream {
                    let want = (s.coefs.size * 2)
                        .max(count as u64 * 2)
                        .min(s.max_buffer_bytes());
                    if let Err(e) = s.grow(Buf::Coefs, want) {
                        crate::warn!("cannot grow the coefficient buffer ({e}); running on the CPU reference");
                        self.stream = None;
                    }
                }
                return self.reserve(count);
            }
            Some(_) => {}
        }
        let at = self.coef_len;
        self.coef_len = needed;
        at
    }

    unsafe fn record_itx(
        &mut self,
        tx: Transform,
        dst: *mut u8,
        stride: isize,
        block: *mut i16,
        eob: i32,
    ) {
        if !self.backend_chosen {
            self.choose_backend();
        }
        let n = tx.size.n();
        if stride.unsigned_abs() < n {
            // Rows overlap: only FFmpeg's sequential order gives its result.
            self.flush();
            itx::itx_add_now(tx, dst, stride, block, eob);
            stats::add(&COUNTERS.immediate, 1);
            return;
        }
        let dc_only = tx.is_dc_only_call(eob);
        let coef = if dc_only {
            let v = ptr::read_unaligned(block);
            ptr::write_unaligned(block, 0);
            v as i32 as u32
        } else {
            let count = tx.coefs();
            let at = self.reserve(count);
            let arena = self.arena();
            ptr::copy_nonoverlapping(block as *const u8, arena.add(at) as *mut u8, count * 2);
            ptr::write_bytes(block as *mut u8, 0, count * 2);
            at as u32
        };
        self.calls.push(Call {
            dst,
            stride,
            kernel: ItxKernel::for_call(tx, dc_only).index() as u8,
            slot: 0,
            coef,
            pixel: 0,
        });
        stats::add(&COUNTERS.deferred, 1);
    }

    fn flush(&mut self) {
        if self.calls.is_empty() {
            return;
        }
        stats::add(&COUNTERS.flushes, 1);
        crate::debug!(
            "flush: {} calls, {} coefficients",
            self.calls.len(),
            self.coef_len
        );
        if self.stream.is_some() {
            self.flush_gpu();
        } else {
            self.run_on_cpu(0..self.calls.len());
        }
        self.calls.clear();
        self.coef_len = 0;
    }

    /// Executes calls with the CPU reference, in recorded order.
    fn run_on_cpu(&mut self, range: std::ops::Range<usize>) {
        let arena = self.arena();
        let mut res = [0i32; 32 * 32];
        for call in &self.calls[range.clone()] {
            let kernel = kernel_of(call);
            let n = kernel.size().n();
            let (tx, dc_only) = match kernel {
                ItxKernel::Full(t) => (t, false),
                ItxKernel::DcOnly(s) => (Transform::new(s, itx::Tx1d::Dct, itx::Tx1d::Dct), true),
            };
            unsafe {
                if dc_only {
                    itx::residual(tx, &[call.coef as i32 as i16], true, &mut res);
                } else {
                    let coefs = std::slice::from_raw_parts(arena.add(call.coef as usize), n * n);
                    itx::residual(tx, coefs, false, &mut res);
                }
                itx::add_residual(call.dst, call.stride, n, &res);
            }
        }
        stats::add(&COUNTERS.cpu_calls, range.len() as u64);
    }

    fn refresh_regions(&mut self) {
        let v = regions::version();
        if v != self.regions_version {
            self.regions = regions::snapshot();
            self.regions_version = v;
            let live: Vec<u64> = self.regions.iter().map(|r| r.id).collect();
            self.occupancy.retain_regions(|id| live.contains(&id));
        }
    }

    fn flush_gpu(&mut self) {
        self.refresh_regions();
        let mut i = 0;
        while i < self.calls.len() {
            let (end, slots, staging) = self.plan_segment(i);
            if end == i {
                // Partly inside a registered region: neither path is safe, the CPU is.
                self.run_on_cpu(i..i + 1);
                i += 1;
                continue;
            }
            if end < self.calls.len() {
                crate::debug!(
                    "flush split after {} of {} calls (overlap, straddling block, or limits)",
                    end,
                    self.calls.len()
                );
            }
            if let Err(e) = self.run_segment(i..end, &slots, staging) {
                let gpu = self.stream.as_ref().map(|s| s.gpu());
                if let Some(g) = gpu {
                    g.mark_lost(&e);
                }
                // Copied blocks are untouched; blocks of imported memory may hold partial GPU
                // results (documented): the device is unusable either way.
                self.run_on_cpu(i..self.calls.len());
                self.stream = None;
                return;
            }
            i = end;
        }
    }

    /// Places calls from `start` until one cannot join the segment. Returns the end, the
    /// regions of slots 1.., and the staging bytes used.
    fn plan_segment(&mut self, start: usize) -> (usize, Vec<Arc<Region>>, usize) {
        let stream = self.stream.as_ref().expect("GPU path");
        let max_bytes = stream.max_buffer_bytes() as usize;
        self.occupancy.clear();
        let mut slots: Vec<Arc<Region>> = Vec::new();
        let mut staging = 0usize;
        let mut last_region = usize::MAX;
        let mut i = start;
        while i < self.calls.len() {
            let c = self.calls[i];
            let n = kernel_of(&c).size().n();
            if (i - start + 1) * std::mem::size_of::<GpuJob>() > max_bytes {
                break;
            }
            let (lo, hi) = span(c.dst, c.stride, n);
            let place = if hi < lo {
                Placement::Straddles
            } else {
                // Consecutive calls are nearly always in the same region as the last one.
                match self.regions.get(last_region) {
                    Some(r) if r.start <= lo && hi <= r.end => Placement::Inside(r),
                    _ => regions::place(&self.regions, lo, hi),
                }
            };
            if let Placement::Inside(r) = place {
                last_region = self
                    .regions
                    .iter()
                    .position(|x| Arc::ptr_eq(x, r))
                    .unwrap_or(0);
            }
            match place {
                Placement::Straddles => break,
                Placement::Inside(r)
                    if r.imported.is_some() && c.stride.unsigned_abs() <= i32::MAX as usize =>
                {
                    let slot = match slots.iter().position(|s| Arc::ptr_eq(s, r)) {
                        Some(p) => p + 1,
                        None if slots.len() + 1 < MAX_SLOTS => {
                            slots.push(r.clone());
                            slots.len()
                        }
                        None => break,
                    };
                    let offset = c.dst as usize - r.start;
                    if !self
                        .occupancy
                        .claim_in_region(r.id, r.end - r.start, offset, c.stride, n)
                    {
                        break;
                    }
                    let base = r.imported.as_ref().unwrap().base;
                    self.calls[i].slot = slot as u8;
                    self.calls[i].pixel = (c.dst as usize - base) as u32;
                }
                _ => {
                    if staging + n * n > max_bytes
                        || !self.occupancy.claim_anywhere(c.dst as usize, c.stride, n)
                    {
                        break;
                    }
                    self.calls[i].slot = 0;
                    self.calls[i].pixel = staging as u32;
                    staging += n * n;
                }
            }
            i += 1;
        }
        (i, slots, staging)
    }

    fn run_segment(
        &mut self,
        range: std::ops::Range<usize>,
        slots: &[Arc<Region>],
        staging: usize,
    ) -> GpuResult<()> {
        let coef_bytes = self.coef_len as u64 * 2;
        let stream = self.stream.as_mut().expect("GPU path");
        let calls = &self.calls[range];

        // Group by (kernel, slot): counting sort into the job buffer.
        let mut counts = [0u32; ItxKernel::COUNT * MAX_SLOTS];
        for c in calls {
            counts[c.kernel as usize * MAX_SLOTS + c.slot as usize] += 1;
        }
        let mut starts = [0u32; ItxKernel::COUNT * MAX_SLOTS];
        let mut total = 0;
        for (s, &n) in starts.iter_mut().zip(&counts) {
            *s = total;
            total += n;
        }
        let job_bytes = calls.len() * std::mem::size_of::<GpuJob>();
        stream.grow(Buf::Jobs, job_bytes as u64)?;
        stream.grow(Buf::Staging, staging as u64)?;

        let jobs = stream.jobs.ptr as *mut GpuJob;
        let stage = stream.staging.ptr;
        let mut cursor = starts;
        let mut uploaded = job_bytes as u64 + staging as u64;
        for c in calls {
            let kernel = kernel_of(c);
            let n = kernel.size().n();
            let b = c.kernel as usize * MAX_SLOTS + c.slot as usize;
            let stride = if c.slot == 0 {
                for row in 0..n {
                    unsafe {
                        ptr::copy_nonoverlapping(
                            c.dst.offset(row as isize * c.stride),
                            stage.add(c.pixel as usize + row * n),
                            n,
                        )
                    };
                }
                n as i32
            } else {
                c.stride as i32
            };
            if let ItxKernel::Full(t) = kernel {
                uploaded += t.coefs() as u64 * 2;
            }
            unsafe {
                jobs.add(cursor[b] as usize).write(GpuJob {
                    pixel_offset: c.pixel,
                    stride,
                    coef: c.coef,
                    reserved: 0,
                })
            };
            cursor[b] += 1;
        }
        stream.jobs.flush(0..job_bytes as u64)?;
        stream.coefs.flush(0..coef_bytes)?;
        stream.staging.flush(0..staging as u64)?;

        let dispatches: Vec<Dispatch> = counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(b, &n)| Dispatch {
                kernel: b / MAX_SLOTS,
                slot: b % MAX_SLOTS,
                first: starts[b],
                count: n,
            })
            .collect();
        let mut pixels = vec![stream.staging.as_ref()];
        pixels.extend(slots.iter().map(|r| r.imported.as_ref().unwrap().as_ref()));
        stream.execute(&dispatches, &pixels)?;

        stream.staging.invalidate(0..staging as u64)?;
        for c in calls.iter().filter(|c| c.slot == 0) {
            let n = kernel_of(c).size().n();
            for row in 0..n {
                unsafe {
                    ptr::copy_nonoverlapping(
                        stage.add(c.pixel as usize + row * n),
                        c.dst.offset(row as isize * c.stride),
                        n,
                    )
                };
            }
        }
        stats::add(&COUNTERS.gpu_calls, calls.len() as u64);
        stats::add(&COUNTERS.bytes_to_device, uploaded);
        stats::add(&COUNTERS.bytes_from_device, staging as u64);
        Ok(())
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // A thread that ends with pending calls: complete them rather than lose them.
        if !self.calls.is_empty() {
            crate::debug!("thread exit: completing {} pending calls", self.calls.len());
            self.flush();
        }
    }
}

/// Records one transform call of the calling thread.
///
/// # Safety
/// As FFmpeg's function: `dst` rows and `block` (`n * n` coefficients) must stay valid until
/// the thread's next [`flush`], and the caller must not touch those pixels before it.
pub unsafe fn record_itx(tx: Transform, dst: *mut u8, stride: isize, block: *mut i16, eob: i32) {
    let recorded = RECORDER.try_with(|r| match r.try_borrow_mut() {
        Ok(mut r) => {
            r.record_itx(tx, dst, stride, block, eob);
            true
        }
        Err(_) => false,
    });
    if recorded != Ok(true) {
        // The thread is exiting (or re-entered): no recorder, so do it now.
        itx::itx_add_now(tx, dst, stride, block, eob);
        stats::add(&COUNTERS.immediate, 1);
    }
}

/// Executes every call the calling thread recorded; returns with the pixels in place.
pub fn flush() {
    let _ = RECORDER.try_with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.flush();
        }
    });
}

/// Whether this thread's recorder executes on the GPU (choosing the backend if not yet done).
pub fn thread_uses_gpu() -> bool {
    RECORDER
        .try_with(|r| {
            let mut r = r.borrow_mut();
            if !r.backend_chosen {
                r.choose_backend();
            }
            r.stream.is_some()
        })
        .unwrap_or(false)
}
