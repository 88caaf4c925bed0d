//! AV1's CDEF by superblock rows on the GPU. Where CDEF is placed on the GPU, the patched
//! dav1d hands over each superblock row that `dav1d_filter_sbrow_cdef` would filter
//! ([`cdef_row`]): the frame header's strengths, where its masks are, and the halo lines. The
//! row's record ([`crate::kernels::cdef_row::GpuRecord`]) goes out as one submission of two
//! levels, the copy of the row's rows into a snapshot in device memory
//! (`shaders/cdef_row_copy.comp`) and then its blocks (`shaders/cdef_row.comp`). No per-block
//! call, window or direction on the host.
//!
//! When the row is waited for: where dav1d reads it next. With its task threads, the same
//! task goes on to resize, loop restoration and progress, so the calling thread waits before
//! it returns. With one thread and a frame without resize or loop restoration, nothing reads
//! the row before the frame's decode ends, where dav1d calls [`cdef_rows_done`]: the row is
//! left on its way (`deferrable`) while dav1d decodes the rows below, which neither read nor
//! write its lines (the next row's deblocking stops at its own deferred strip, and its top
//! halo was kept before this row was submitted).
//!
//! Every row of a picture gets the same answer: dav1d filters the pictures whose planes are not
//! in one buffer the GPU reaches (memory of another allocator that could not be imported); a
//! row the GPU fails on is filtered by the CPU reference from the same inputs, logged once, and
//! the device is treated as lost from then on.

use super::cdef_choice::{self, Pick};
use crate::gpu::memory::{BufferRef, DeviceBuffer, HostBuffer};
use crate::gpu::once::{run_once, Runner};
use crate::gpu::GpuResult;
use crate::kernels::cdef_row::{FrameParams, GpuRecord, Layout, PlaneAt, Row, RowInput};
use crate::kernels::Kernel;
use crate::kernels::Pixel;
use crate::regions::Region;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::c_int;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// The patch's `DaedalusAv1CdefRow` (`ffmpeg-patches/dav1d-1.0`).
#[repr(C)]
pub struct CdefRowCall {
    pub data: [*mut u8; 3],
    /// Bytes: luma, chroma.
    pub stride: [isize; 2],
    pub layout: c_int,
    pub bpc: c_int,
    pub bw: c_int,
    pub bh: c_int,
    pub damping: c_int,
    pub y_strength: [u8; 8],
    pub uv_strength: [u8; 8],
    pub by_start: c_int,
    pub by_end: c_int,
    /// dav1d's `Av1Filter` per 128x128 block, `sb128w` to a row: `cdef_idx` (4 signed bytes)
    /// and `noskip_mask` (16 x 2 halfwords) at the offsets given.
    pub masks: *const u8,
    pub sb128w: c_int,
    pub mask_size: c_int,
    pub cdef_idx_offset: c_int,
    pub noskip_offset: c_int,
    /// Two rows each, at the plane's stride, or null.
    pub top: [*const u8; 3],
    pub bottom: [*const u8; 3],
    /// With one thread: where to keep the strips' last two rows (two strides' bytes per
    /// plane) for the next row's top, before filtering; else null.
    pub keep: [*mut u8; 3],
    /// Nonzero where nothing reads the row before the calling thread's `cdef_rows_done` (one
    /// thread, a frame without super-resolution or loop restoration): the row may still be
    /// on its way when this returns.
    pub deferrable: c_int,
}

/// Rows filtered here; of them those with no block to filter (nothing submitted), and those
/// the CPU reference filtered after the GPU failed.
pub static ROWS: AtomicU64 = AtomicU64::new(0);
pub static ROWS_EMPTY: AtomicU64 = AtomicU64::new(0);
pub static ROWS_ON_CPU: AtomicU64 = AtomicU64::new(0);
/// Rows submitted and waited for only at the caller's `cdef_rows_done` (or when too many
/// were on their way).
pub static ROWS_DEFERRED: AtomicU64 = AtomicU64::new(0);
/// Rows submitted to the GPU.
pub static ROW_SUBMISSIONS: AtomicU64 = AtomicU64::new(0);
/// The calling threads' time in `cdef_row` and `cdef_rows_done`, nanoseconds.
pub static HOST_NS: AtomicU64 = AtomicU64::new(0);

/// Rows the GPU filtered (with blocks to filter, and not redone on the CPU after a failure).
pub fn rows_on_gpu() -> u64 {
    let r = crate::stats::read;
    r(&ROWS).saturating_sub(r(&ROWS_EMPTY) + r(&ROWS_ON_CPU))
}

/// The full stats line's part: rows handed over, and the host's time for them.
pub fn describe() -> String {
    let r = crate::stats::read;
    format!(
        "cdef_rows_handed={} cdef_rows_empty={} cdef_rows_cpu={} cdef_rows_deferred={} cdef_row_submissions={} cdef_rows_host_ms={:.3}",
        r(&ROWS),
        r(&ROWS_EMPTY),
        r(&ROWS_ON_CPU),
        r(&ROWS_DEFERRED),
        r(&ROW_SUBMISSIONS),
        r(&HOST_NS) as f64 / 1e6,
    )
}

/// Whether the device has the row kernels, even if it was lost since (a lost device's rows
/// go to the CPU reference, every row of a picture alike). Where it is not set up yet (AV1
/// defers it, [`crate::av1::decide_cdef`]) it is set up and they are built here, on a thread
/// of their own: a dav1d task thread's stack (about 1 MiB) is no place for a driver's set-up
/// and shader compiler.
pub fn row_kernels() -> bool {
    let check = || {
        crate::gpu::get();
        crate::gpu::set_up().is_some_and(|g| {
            g.pipelines.has(Kernel::CdefRowCopy) && g.pipelines.has(Kernel::CdefRow)
        })
    };
    if !matches!(crate::gpu::state(), crate::gpu::State::NotSetUp) {
        return check();
    }
    std::thread::Builder::new()
        .name("daedalus-setup".into())
        .stack_size(crate::gpu::pipeline::DRIVER_STACK_BYTES)
        .spawn(check)
        .ok()
        .and_then(|t| t.join().ok())
        .unwrap_or(false)
}

/// Who filters a row: `None` where rows do not go to the GPU at all (AV1 on another path),
/// else the GPU where `DAEDALUS_PATH=frame` forced it, or the pick of the row's picture in its
/// kind's trial. Every row of a picture gets the same answer (a device lost later sends the
/// rows to the CPU reference).
fn who_filters(call: &CdefRowCall) -> Option<Pick> {
    let taken = crate::paths::av1().filter(|t| t.path == crate::paths::Path::Frame)?;
    Some(match taken.why {
        "trial" => cdef_choice::pick(
            cdef_choice::kind(call.deferrable != 0),
            call.data[0] as usize,
        ),
        _ => Pick::Gpu,
    })
}

/// Whether the largest row of such a frame (a 128x128 superblock row with the strip before
/// it: 17 strips) stays within the workgroups one dispatch may count everywhere (65535):
/// the same answer for every row of a picture.
fn dispatches_fit(params: &FrameParams) -> bool {
    const MAX: usize = 65535;
    let bpp = 1 + (params.bitdepth > 8) as usize;
    let copy: usize = (0..params.layout.planes())
        .map(|p| {
            let rows = ((17 * 8) >> params.shifts(p).1) + 4;
            rows * (params.plane_width(p) * bpp)
                .div_ceil(crate::kernels::cdef_row::COPY_BYTES_PER_JOB)
        })
        .sum();
    copy <= MAX && params.bw / 2 * 17 <= MAX
}

/// The frame's parameters and the row with its masks, as the record needs them.
///
/// # Safety
/// `call.masks` holds the frame's `Av1Filter`s at the offsets given.
unsafe fn row_of(call: &CdefRowCall) -> Option<(FrameParams, Row)> {
    let params = FrameParams {
        layout: Layout::from_dav1d(call.layout)?,
        bitdepth: u32::try_from(call.bpc)
            .ok()
            .filter(|b| matches!(b, 8 | 10 | 12))?,
        damping: call.damping,
        y_strength: call.y_strength,
        uv_strength: call.uv_strength,
        bw: usize::try_from(call.bw)
            .ok()
            .filter(|w| w % 2 == 0 && *w > 0)?,
        bh: usize::try_from(call.bh).ok().filter(|h| *h > 0)?,
    };
    let (by_start, by_end) = (
        usize::try_from(call.by_start).ok()?,
        usize::try_from(call.by_end).ok()?,
    );
    let sb128w = usize::try_from(call.sb128w).ok()?;
    if call.masks.is_null()
        || by_start % 2 != 0
        || by_end > params.bh
        || sb128w < params.sb128_cols()
    {
        return None;
    }
    if !dispatches_fit(&params) {
        return None;
    }
    let mut row = Row {
        by_start,
        by_end,
        cdef_idx: Vec::new(),
        noskip: Vec::new(),
    };
    let filter = |by: usize, bx: usize| {
        call.masks
            .add(((by >> 5) * sb128w + (bx >> 5)) * call.mask_size as usize)
    };
    let first64 = by_start >> 4;
    for r64 in first64..first64 + row.sb64_rows() {
        for c64 in 0..params.sb64_cols() {
            let f = filter(r64 << 4, c64 << 4);
            let at = call.cdef_idx_offset as usize + ((r64 & 1) << 1) + (c64 & 1);
            row.cdef_idx.push(*(f.add(at) as *const i8));
        }
    }
    for strip in 0..row.strips() {
        let by = by_start + 2 * strip;
        for c128 in 0..params.sb128_cols() {
            let mask = filter(by, c128 << 5).add(call.noskip_offset as usize) as *const u16;
            let pair = mask.add(((by & 30) >> 1) * 2);
            row.noskip
                .push(pair.read_unaligned() as u32 | (pair.add(1).read_unaligned() as u32) << 16);
        }
    }
    Some((params, row))
}

/// `cdef_row`: filters the row, or returns 0 for dav1d to.
///
/// # Safety
/// As the patch calls it: `call` and everything it points at valid for the call.
pub unsafe extern "C" fn cdef_row(call: *const CdefRowCall) -> c_int {
    let started = std::time::Instant::now();
    let taken = take_row(call);
    if taken != 0 {
        let ns = started.elapsed().as_nanos() as u64;
        crate::stats::add(&HOST_NS, ns);
        cdef_choice::add_to_last(ns);
    }
    taken
}

/// `cdef_row_filtered`: dav1d filtered the row the calling thread's `cdef_row` left to it.
pub extern "C" fn cdef_row_filtered() {
    crate::log::guard("cdef_row_filtered", (), cdef_choice::dav1d_filtered)
}

/// `cdef_rows_done`: the calling thread's deferred rows are in the frame when it returns.
///
/// # Safety
/// The pictures of the calling thread's deferred rows are still allocated.
pub unsafe extern "C" fn cdef_rows_done() {
    crate::log::guard("cdef_rows_done", (), || {
        if PENDING.with(|p| p.borrow().is_empty()) {
            return;
        }
        let started = std::time::Instant::now();
        while complete_oldest() {}
        let ns = started.elapsed().as_nanos() as u64;
        crate::stats::add(&HOST_NS, ns);
        cdef_choice::add_to_last(ns);
    })
}

/// [`cdef_row`] without the timing.
unsafe fn take_row(call: *const CdefRowCall) -> c_int {
    // Whether to take the row is decided before anything is written: a row left to dav1d
    // must find everything as dav1d left it. From there on even an internal error says taken,
    // so that dav1d never filters a row a second time.
    let taken = crate::log::guard("cdef_row", None, || {
        let call = call.as_ref()?;
        let kind = cdef_choice::kind(call.deferrable != 0);
        match who_filters(call)? {
            Pick::Dav1d => {
                cdef_choice::declined_now();
                return None;
            }
            // (A device deferred to the first row the GPU takes is set up here.)
            Pick::Gpu if !row_kernels() => {
                cdef_choice::untimed(kind, call.data[0] as usize);
                return None;
            }
            Pick::Gpu => {}
        }
        let taken = row_of(call).and_then(|(params, row)| {
            let (region, planes) = planes_in_one_buffer(call, &params)?;
            Some((call, params, row, region, planes))
        });
        if taken.is_none() {
            // dav1d filters it after all: the picture's time is not the GPU's.
            cdef_choice::untimed(kind, call.data[0] as usize);
        }
        taken
    });
    let Some((call, params, row, region, planes)) = taken else {
        return 0;
    };
    crate::log::guard("cdef_row", 1, || {
        filter(call, params, row, region, &planes);
        1
    })
}

/// Filters a row [`cdef_row`] takes: submits it, and waits for it unless it may be deferred.
///
/// # Safety
/// As [`cdef_row`].
unsafe fn filter(
    call: &CdefRowCall,
    params: FrameParams,
    row: Row,
    region: Arc<Region>,
    planes: &[PlaneAt],
) {
    let two_bytes = params.bitdepth > 8;
    let halo = |lines: &[*const u8; 3]| -> Option<Vec<Vec<u8>>> {
        (0..params.layout.planes())
            .map(|p| {
                let (ptr, stride) = (lines[p], call.stride[p.min(1)] as usize);
                let bytes = params.plane_width(p) << two_bytes as usize;
                (!ptr.is_null()).then(|| {
                    let mut two = std::slice::from_raw_parts(ptr, bytes).to_vec();
                    two.extend_from_slice(std::slice::from_raw_parts(ptr.add(stride), bytes));
                    two
                })
            })
            .collect()
    };
    let (top, bottom) = (halo(&call.top), halo(&call.bottom));
    for p in 0..params.layout.planes() {
        if !call.keep[p].is_null() {
            let stride = call.stride[p.min(1)] as usize;
            let last = row.plane_rows(&params, p).1 - 2;
            let from = call.data[p].add(last * stride);
            std::ptr::copy_nonoverlapping(from, call.keep[p], 2 * stride);
        }
    }
    crate::stats::add(&ROWS, 1);
    // A row with no block to filter (no strength, no coefficients: a lossless frame, say)
    // leaves its pixels as they are.
    let filtered = |strip: usize| {
        let by = row.by_start + 2 * strip;
        (0..params.bw)
            .step_by(2)
            .any(|bx| row.block_levels(&params, bx, by).is_some())
    };
    if !(0..row.strips()).any(filtered) {
        crate::stats::add(&ROWS_EMPTY, 1);
        return;
    }
    let record = row.gpu_record(
        &params,
        planes,
        two_bytes,
        top.as_deref(),
        bottom.as_deref(),
    );
    let inputs = RowInputs {
        data: call.data,
        stride: call.stride,
        params,
        row,
        top,
        bottom,
    };
    let started = match region.in_place.as_ref() {
        Some(frame) => start_on_gpu(&record, frame.as_ref()),
        None => Err("the picture is not in place".to_string()),
    };
    let buffers = match started {
        Ok(buffers) => buffers,
        Err(why) => return on_cpu(&inputs, &why),
    };
    let pending = Pending {
        buffers,
        inputs,
        _region: region,
    };
    if call.deferrable == 0 {
        return complete(pending);
    }
    crate::stats::add(&ROWS_DEFERRED, 1);
    let full = PENDING.with(|p| {
        let mut p = p.borrow_mut();
        p.push_back(pending);
        p.len() > MAX_PENDING
    });
    if full {
        complete_oldest();
    }
}

/// What filtering a row on the CPU needs, should the GPU fail it: the picture's planes, and
/// the row with its halos as they were handed over.
struct RowInputs {
    data: [*mut u8; 3],
    stride: [isize; 2],
    params: FrameParams,
    row: Row,
    top: Option<Vec<Vec<u8>>>,
    bottom: Option<Vec<Vec<u8>>>,
}

/// A row on its way: its buffers, its inputs, and the picture's region, kept alive for the
/// GPU's writes.
struct Pending {
    buffers: RowBuffers,
    inputs: RowInputs,
    _region: Arc<Region>,
}

/// Rows a thread may have on their way before it waits for the oldest (each holds a
/// snapshot's memory).
const MAX_PENDING: usize = 16;

thread_local! {
    /// The calling thread's deferred rows, oldest first.
    static PENDING: RefCell<VecDeque<Pending>> = const { RefCell::new(VecDeque::new()) };
}

/// Waits for the calling thread's oldest deferred row; false where it has none.
fn complete_oldest() -> bool {
    match PENDING.with(|p| p.borrow_mut().pop_front()) {
        Some(pending) => {
            // SAFETY: the row's planes stay valid until the caller's `cdef_rows_done`.
            unsafe { complete(pending) };
            true
        }
        None => false,
    }
}

/// Waits for a submitted row; where the GPU failed it the CPU reference filters it.
///
/// # Safety
/// The row's planes are valid.
unsafe fn complete(pending: Pending) {
    if let Err(why) = finish_on_gpu(pending.buffers) {
        on_cpu(&pending.inputs, &why);
    }
}

/// Filters a row the GPU could not with the CPU reference, from the same inputs.
///
/// # Safety
/// The row's planes are valid.
unsafe fn on_cpu(inputs: &RowInputs, why: &str) {
    crate::log::once(
        crate::log::Level::Warn,
        "cdef row on the cpu",
        format_args!("CDEF rows go to the CPU reference: {why}"),
    );
    crate::stats::add(&ROWS_ON_CPU, 1);
    // (Exact where the GPU wrote none of the row: a device lost while it ran may have
    // written some blocks already, which are then filtered again.)
    if inputs.params.bitdepth > 8 {
        filter_on_cpu::<u16>(inputs);
    } else {
        filter_on_cpu::<u8>(inputs);
    }
}

/// The buffer the GPU reaches the picture's planes through, and where they are in it; `None`
/// where they are not all in one.
unsafe fn planes_in_one_buffer(
    call: &CdefRowCall,
    params: &FrameParams,
) -> Option<(Arc<Region>, Vec<PlaneAt>)> {
    let first = call.data[0] as usize;
    // A picture allocated before the device was set up is imported now, for its whole life
    // (or just now by another thread).
    let region = crate::regions::containing(first).or_else(|| {
        crate::regions::import_later_frame(first);
        crate::regions::containing(first)
    })?;
    let base = region.in_place.as_ref()?.base();
    let mut planes = Vec::new();
    for p in 0..params.layout.planes() {
        let stride = call.stride[p.min(1)];
        let rows = (params.bh.div_ceil(2) * 8) >> params.shifts(p).1;
        let start = call.data[p] as usize;
        let end = start.checked_add(usize::try_from(stride).ok()?.checked_mul(rows)?)?;
        if start < region.start || end > region.end {
            return None;
        }
        planes.push(PlaneAt {
            offset: u32::try_from(start - base).ok()?,
            stride: u32::try_from(stride).ok()?,
        });
    }
    Some((region, planes))
}

/// Waits for a row [`start_on_gpu`] submitted; its buffers then serve the next row. (Where
/// the wait fails the device is treated as lost, and the buffers are neither reused nor
/// destroyed.)
pub fn finish_on_gpu(mut buffers: RowBuffers) -> GpuResult<()> {
    match buffers.runner.wait() {
        Ok(()) => {
            FREE.lock().unwrap_or_else(|p| p.into_inner()).push(buffers);
            Ok(())
        }
        Err(why) => {
            if let Some(gpu) = crate::gpu::get() {
                gpu.mark_lost(&format!("a CDEF row: {why}"));
            }
            std::mem::forget(buffers);
            Err(why)
        }
    }
}

/// What a row's submission needs: its runner, the record (host memory the GPU reads) and the
/// snapshot (device memory where there is some), kept for the next row.
pub struct RowBuffers {
    runner: Runner,
    record: HostBuffer,
    snapshot: DeviceBuffer,
}

/// Those free for the next row: one set per thread that filters rows at once.
static FREE: Mutex<Vec<RowBuffers>> = Mutex::new(Vec::new());

/// Submits a row's record over the frame; returns its buffers, for [`finish_on_gpu`].
pub fn start_on_gpu(record: &GpuRecord, frame: BufferRef) -> GpuResult<RowBuffers> {
    let gpu = crate::gpu::get().ok_or("no usable device")?;
    let taken = FREE.lock().unwrap_or_else(|p| p.into_inner()).pop();
    let mut b = match taken {
        Some(b) => b,
        None => RowBuffers {
            runner: Runner::new(gpu)?,
            record: HostBuffer::coherent_zeroed(gpu, 1 << 16)?,
            snapshot: DeviceBuffer::new(gpu, 1 << 20)?,
        },
    };
    // (Replaced while idle: the last run was waited for.)
    let record_bytes = (record.words.len() * 4) as u64;
    if b.record.size < record_bytes {
        b.record = HostBuffer::coherent_zeroed(gpu, record_bytes.next_power_of_two())?;
    }
    let snapshot_bytes = record.snapshot_bytes.max(4) as u64;
    if b.snapshot.size < snapshot_bytes {
        b.snapshot = DeviceBuffer::new(gpu, snapshot_bytes.next_power_of_two())?;
    }
    // SAFETY: the buffer holds the record, and no GPU work uses it now.
    unsafe {
        std::ptr::copy_nonoverlapping(
            record.words.as_ptr(),
            b.record.ptr as *mut u32,
            record.words.len(),
        )
    };
    let (r, s) = (b.record.as_ref(), b.snapshot.as_ref());
    let started = b.runner.start(
        &[
            (Kernel::CdefRowCopy, record.copy_jobs),
            (Kernel::CdefRow, record.block_jobs),
        ],
        [r, frame, s, r, r],
    );
    match started {
        Ok(()) => {
            crate::stats::add(&ROW_SUBMISSIONS, 1);
            Ok(b)
        }
        Err(why) => {
            // The device is treated as lost from here on (every later row goes to the CPU at
            // once); its objects are neither reused nor destroyed.
            gpu.mark_lost(&format!("a CDEF row: {why}"));
            std::mem::forget(b);
            Err(why)
        }
    }
}

/// Pixels of one or two bytes (little-endian) from bytes.
fn pixels_of<P: Pixel>(bytes: &[u8]) -> Vec<P> {
    let bpp = std::mem::size_of::<P>();
    bytes
        .chunks_exact(bpp)
        .map(|c| {
            P::from_value(if bpp == 2 {
                u16::from_le_bytes([c[0], c[1]]) as i32
            } else {
                c[0] as i32
            })
        })
        .collect()
}

/// The row filtered by the CPU reference, where the GPU failed: its rows copied out (other
/// threads may filter the rows around them meanwhile), filtered, and copied back.
///
/// # Safety
/// The row's planes are valid, and its rows this call's alone.
unsafe fn filter_on_cpu<P: Pixel>(inputs: &RowInputs) {
    let (call, params, row) = (inputs, &inputs.params, &inputs.row);
    let (top, bottom) = (inputs.top.as_deref(), inputs.bottom.as_deref());
    let n = params.layout.planes();
    let bpp = std::mem::size_of::<P>();
    let strides: Vec<usize> = (0..n)
        .map(|p| call.stride[p.min(1)] as usize / bpp)
        .collect();
    let mut planes: Vec<Vec<P>> = Vec::with_capacity(n);
    for p in 0..n {
        let (y_lo, y_hi) = row.plane_rows(params, p);
        let mut plane = vec![P::from_value(0); y_hi * strides[p]];
        let from = call.data[p] as *const P;
        plane[y_lo * strides[p]..].copy_from_slice(std::slice::from_raw_parts(
            from.add(y_lo * strides[p]),
            (y_hi - y_lo) * strides[p],
        ));
        planes.push(plane);
    }
    let top: Option<Vec<Vec<P>>> = top.map(|t| t.iter().map(|b| pixels_of(b)).collect());
    let bottom: Option<Vec<Vec<P>>> = bottom.map(|b| b.iter().map(|b| pixels_of(b)).collect());
    let input = {
        let views: Vec<&[P]> = planes.iter().map(|v| v.as_slice()).collect();
        RowInput::take(
            params,
            row,
            &views,
            &strides,
            top.as_deref(),
            bottom.as_deref(),
        )
    };
    let mut views: Vec<&mut [P]> = planes.iter_mut().map(|v| v.as_mut_slice()).collect();
    crate::kernels::cdef_row::filter_row(params, row, &input, &mut views, &strides);
    for (p, plane) in planes.iter().enumerate() {
        let (y_lo, y_hi) = row.plane_rows(params, p);
        let rows = &plane[y_lo * strides[p]..y_hi * strides[p]];
        std::ptr::copy_nonoverlapping(
            rows.as_ptr(),
            (call.data[p] as *mut P).add(y_lo * strides[p]),
            rows.len(),
        );
    }
}

/// Filters one row on the GPU, alone, and waits: for the tests of the kernels against the
/// CPU reference. `pixels` are the frame's bytes, its planes where the record says; returns
/// them filtered.
pub fn filter_row_once(record: &GpuRecord, pixels: &[u8]) -> GpuResult<Vec<u8>> {
    let gpu = crate::gpu::get().ok_or("no usable Vulkan device")?;
    let data = HostBuffer::coherent_zeroed(gpu, (record.words.len() * 4) as u64)?;
    let frame = HostBuffer::coherent_zeroed(gpu, pixels.len().max(4) as u64)?;
    let snapshot = DeviceBuffer::new(gpu, record.snapshot_bytes.max(4) as u64)?;
    // SAFETY: each buffer holds at least these bytes, and no GPU work uses them yet.
    unsafe {
        std::ptr::copy_nonoverlapping(
            record.words.as_ptr(),
            data.ptr as *mut u32,
            record.words.len(),
        );
        std::ptr::copy_nonoverlapping(pixels.as_ptr(), frame.ptr, pixels.len());
    }
    let d = data.as_ref();
    run_once(
        &[
            (Kernel::CdefRowCopy, record.copy_jobs),
            (Kernel::CdefRow, record.block_jobs),
        ],
        [d, frame.as_ref(), snapshot.as_ref(), d, d],
    )?;
    frame.invalidate(0..frame.size)?;
    // SAFETY: inside the buffer, which the GPU no longer writes.
    Ok(unsafe { std::slice::from_raw_parts(frame.ptr, pixels.len()).to_vec() })
}
