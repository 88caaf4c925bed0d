//! A frame's begin and end (its buffers registered for the frame, what must complete by its
//! end, a failed batch reported to the decoder) and the memory of the decoder's frame pool.

use super::abi::DaedalusVp9Frame;
use super::context::per_call;
use super::frame;
use super::syncs::{Planes, INTRA_BLOCK, PLANES};
use crate::batch;
use crate::stats::{self, Reason, COUNTERS};
use std::cell::RefCell;
use std::ffi::{c_int, c_void};

/// The distinct buffers of a frame and, at `frame_begin`, of its references.
unsafe fn frame_buffers(frame: *const DaedalusVp9Frame) -> Vec<(usize, usize)> {
    let Some(f) = frame.as_ref() else {
        return Vec::new();
    };
    let own = f.buf_data.iter().zip(&f.buf_size);
    let refs = f
        .ref_buf_data
        .iter()
        .flatten()
        .zip(f.ref_buf_size.iter().flatten());
    let mut buffers: Vec<(usize, usize)> = Vec::new();
    for (&p, &len) in own.chain(refs) {
        let p = p as usize;
        if p != 0 && len > 0 && !buffers.contains(&(p, len)) {
            buffers.push((p, len));
        }
    }
    if f.buf_data.iter().all(|p| p.is_null()) {
        buffers.extend(written_planes(f));
    }
    buffers
}

/// The bytes the decoder writes in each plane: every row of whole 8x8 blocks. For a frame
/// whose buffers the application made and did not name (GStreamer's `avdec_*` hands FFmpeg
/// empty buffer references over its own memory).
fn written_planes(f: &DaedalusVp9Frame) -> Vec<(usize, usize)> {
    let bytes_per_pixel = if f.bpp > 8 { 2 } else { 1 };
    let (w, h) = (
        (f.width.max(0) as usize).next_multiple_of(8),
        (f.height.max(0) as usize).next_multiple_of(8),
    );
    (0..3)
        .filter_map(|p| {
            let (ss_h, ss_v) = match p {
                0 => (0, 0),
                _ => (f.ss_h.clamp(0, 1) as usize, f.ss_v.clamp(0, 1) as usize),
            };
            let (row_bytes, rows) = ((w >> ss_h) * bytes_per_pixel, h >> ss_v);
            let stride = usize::try_from(f.linesize[p]).ok()?;
            let start = f.data[p] as usize;
            (start != 0 && rows > 0 && stride >= row_bytes)
                .then(|| (start, (rows - 1) * stride + row_bytes))
        })
        .collect()
}

/// Whether the frame's three planes lie in its first buffer.
fn planes_in_one_buffer(f: &DaedalusVp9Frame) -> bool {
    let (start, len) = (f.buf_data[0] as usize, f.buf_size[0]);
    start != 0
        && f.data.iter().all(|&p| {
            let p = p as usize;
            p >= start && p - start < len
        })
}

thread_local! {
    /// What this thread registered at its frame's `frame_begin`, for its `frame_end` (a
    /// frame is decoded on one thread, and its references stay valid until its end).
    pub(super) static REGISTERED: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

fn unregister_frame() {
    let starts = REGISTERED.with(|r| std::mem::take(&mut *r.borrow_mut()));
    for p in starts {
        crate::regions::unregister(p);
    }
}

pub(super) unsafe extern "C" fn frame_begin(ctx: *mut c_void, frame: *const DaedalusVp9Frame) {
    crate::log::guard("frame_begin", (), || {
        if !per_call(ctx) {
            return;
        }
        stats::add(&COUNTERS.frames, 1);
        if frame.as_ref().is_some_and(planes_in_one_buffer) {
            stats::add(&COUNTERS.frames_in_one_buffer, 1);
        }
        // A frame whose end never came (it cannot happen with the patch): forget it first.
        batch::flush_for(Reason::FrameEnd);
        unregister_frame();
        let mut registered = Vec::new();
        for (p, len) in frame_buffers(frame) {
            match crate::regions::register(p, len) {
                Ok(()) => registered.push(p),
                // Its blocks then run at once with FFmpeg's functions (sources are copied):
                // slower, still exact.
                Err(e) => crate::debug!("frame buffer {p:#x}+{len} not registered: {e}"),
            }
        }
        REGISTERED.with(|r| *r.borrow_mut() = registered);
        DAMAGE_SEEN.with(|d| d.set(batch::damaged_batches()));
        let planes = frame.as_ref().map(|f| Planes {
            data: f.data,
            linesize: f.linesize,
            ss_v: f.ss_v.clamp(0, 1) as usize,
            bytes_per_pixel: if f.bpp > 8 { 2 } else { 1 },
        });
        PLANES.with(|p| p.set(planes));
        INTRA_BLOCK.with(|b| b.set(0));
    })
}

/// FFmpeg's `AVERROR_EXTERNAL` ("Generic error in an external library").
const AVERROR_EXTERNAL: c_int = -i32::from_le_bytes(*b"EXT ");

thread_local! {
    /// [`batch::damaged_batches`] at this thread's `frame_begin`: where it grew by the frame's
    /// end, a batch of this frame (or of one decoded meanwhile, which it may read) may have
    /// left pixels wrong.
    static DAMAGE_SEEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

pub(super) unsafe extern "C" fn frame_end(
    ctx: *mut c_void,
    frame: *const DaedalusVp9Frame,
) -> c_int {
    // A panic inside may have left pending work unknown: the frame fails.
    crate::log::guard("frame_end", AVERROR_EXTERNAL, || {
        if !per_call(ctx) {
            if let (Some(f), false) = (frame.as_ref(), ctx.is_null()) {
                frame::frame_end(ctx, f.data[0] as usize);
            }
            return 0;
        }
        PLANES.with(|p| p.set(None));
        INTRA_BLOCK.with(|b| b.set(0));
        batch::flush_for(Reason::FrameEnd);
        unregister_frame();
        if batch::damaged_batches() > DAMAGE_SEEN.with(|d| d.get()) {
            return AVERROR_EXTERNAL;
        }
        0
    })
}

/// Whether a provider attached that may put work on the GPU: VP9's frame path, or a decoder
/// on another path than its own ([`crate::paths::gpu_may_take_part`]). Only then are the
/// decoders' frames worth daedalus's memory (`frame_alloc`), whose first allocation sets the
/// device up: with CDEF left to dav1d that cost an AV1 decode on NVIDIA a sixth of its time.
fn frames_wanted() -> bool {
    frame::wants_frames() || crate::paths::gpu_may_take_part()
}

/// A buffer of the decoder's frame pool, registered until `frame_free`: device memory of ours
/// on the frame-pool path (see [`crate::regions::frames_from_pool`]), else, where the device
/// imports host memory, host memory of ours imported once for its whole life (or, where a
/// decoder deferred the device, [`crate::regions::defer_device`], when the GPU first needs it).
/// Null where none applies
/// or the allocation fails: the decoder then allocates the frame itself.
pub(super) unsafe extern "C" fn frame_alloc(size: usize, opaque: *mut *mut c_void) -> *mut u8 {
    crate::log::guard("frame_alloc", std::ptr::null_mut(), || {
        // Nothing attached for the GPU (CDEF on the CPU): the heap, no device set up.
        if !frames_wanted() {
            return std::ptr::null_mut();
        }
        if opaque.is_null() || size == 0 || crate::config::get().mode != crate::config::Mode::Gpu {
            return std::ptr::null_mut();
        }
        let later = crate::regions::frames_imported_later();
        // (Where frames are imported later, the device is not set up here.)
        let gpu = if later {
            None
        } else {
            let Some(gpu) = crate::gpu::get() else {
                return std::ptr::null_mut();
            };
            Some(gpu)
        };
        let pool = gpu.is_some() && crate::regions::frames_from_pool();
        let registered = if later {
            crate::regions::alloc_import_later(size)
        } else if let Some(gpu) = gpu.filter(|g| pool || g.info.host_import_alignment.is_some()) {
            // (Made ahead where frame threads allocate many: frame::frame_memory.)
            frame::frame_memory(gpu, size, pool).and_then(|memory| match memory {
                frame::FrameMemory::Pool(buffer) => {
                    let data = buffer.ptr;
                    crate::regions::register_pool_frame(buffer).map(|()| data)
                }
                frame::FrameMemory::Own(own) => {
                    let data = own.ptr();
                    crate::regions::register_own_import(own, size).map(|()| data)
                }
            })
        } else {
            return std::ptr::null_mut();
        };
        match registered {
            Ok(data) => {
                if pool {
                    stats::add(&COUNTERS.pool_buffers, 1);
                } else if !later {
                    stats::add(&COUNTERS.imports, 1);
                }
                stats::add(&COUNTERS.frame_buffers, 1);
                *opaque = data as *mut c_void;
                data
            }
            Err(e) => {
                crate::log::once(
                    crate::log::Level::Warn,
                    "pool-failed",
                    format_args!(
                        "frame pool: {e}; the decoder allocates such frames itself (imported where \
                         the device can, else copied)"
                    ),
                );
                std::ptr::null_mut()
            }
        }
    })
}

/// The decoder freed a buffer of the pool. Its memory lives on while a batch of another
/// thread still holds its region (the regions are reference counted). (Not imported yet is
/// asked first: the set-up thread may import it meanwhile, which moves it into the registry
/// under the lock that answers.)
pub(super) unsafe extern "C" fn frame_free(opaque: *mut c_void, _data: *mut u8) {
    crate::log::guard("frame_free", (), || {
        if !crate::regions::free_unimported(opaque as usize)
            && !crate::regions::unregister(opaque as usize)
        {
            crate::debug!("frame_free of an unknown pool buffer {opaque:?}");
        }
    })
}
