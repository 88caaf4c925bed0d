//! The AV1 provider for dav1d 1.0.0 (see `ffmpeg-patches/dav1d-1.0`).
//!
//! The patched `dav1d_cdef_dsp_init_{8,16}bpc` looks `daedalus_av1_provider` up with
//! `dlsym(RTLD_DEFAULT, ...)` (found whether this library is LD_PRELOADed or linked into the
//! program) and calls `attach_cdef` with its own `fb[0..2]`. Its path ([`decide_cdef`]): on
//! the frame path CDEF goes by superblock rows (`cdef_row`, [`cdef_apply`]; who takes a
//! picture's rows: every row with `DAEDALUS_PATH=frame`, else a trial on the decode,
//! [`cdef_choice`]) and dav1d keeps its own `fb` for the rows it filters. On the per-call path
//! it hands back the `daedalus_av1_cdef_filter_*` exports, the C ABI per block: each call
//! records its block (the input window is taken at call time, so dav1d's `left`, `top` and
//! `bottom` buffers may change at once after it), and after each superblock row's CDEF the
//! decoder calls `sync`, which completes the calling thread's pending calls: resize, loop
//! restoration, progress and output read those rows next.
//!
//! The pictures' memory comes from the FFmpeg patch's `libdav1d.c`, which takes its pool's
//! buffers from the VP9 provider's `frame_alloc`: on the GPU path, device memory of the frame
//! pool or host memory imported once, registered for the buffer's life, so CDEF writes its
//! blocks in place and the calls of a superblock row go out in one submission, with or
//! without host-memory import. dav1d also reports each picture's planes when it allocates and
//! releases the picture: planes in memory of another allocator are registered (imported) for
//! that time where the device imports host memory, else their blocks are copied through
//! staging (a call whose window meets pending copied blocks completes them first). A plane is
//! released only after the syncs of every row written in it.
pub mod cdef_apply;
pub mod cdef_choice;
mod lookup;

use crate::batch;
use crate::config::{DecoderPath, Mode};
use crate::paths::{self, Path, Taken};
use crate::stats::Reason;
use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::Mutex;

/// Must equal the `abi_version` the dav1d patch accepts (3: `fb` holds dav1d's functions on
/// entry; `cdef_row` takes whole superblock rows; 4: rows may be deferred until
/// `cdef_rows_done`, and `cdef_row_filtered` follows a row left to dav1d).
pub const ABI_VERSION: c_int = 4;

/// Any function pointer, as the patch's `void (*)(void)`: dav1d casts each back to its `cdef_fn`.
pub type AnyFn = unsafe extern "C" fn();

/// The hooks the patched dav1d calls (the patch's `DaedalusAv1Provider`).
#[repr(C)]
pub struct DaedalusAv1Provider {
    pub abi_version: c_int,
    /// For dav1d's pixel size in bytes (1: 8 bpc, 2: 16 bpc) and its own `fb[0..3]` (8x8,
    /// 4x8, 4x4): replaces them and returns 1, or returns 0 and dav1d keeps its own.
    pub attach_cdef: unsafe extern "C" fn(pixel_bytes: c_int, fb: *mut Option<AnyFn>) -> c_int,
    /// Completes the calling thread's pending calls.
    pub sync: unsafe extern "C" fn(),
    /// A picture's planes (`data[0..3]`; `stride[0]` luma, `stride[1]` chroma; `h` rows,
    /// padded to a multiple of 128 in memory; dav1d's `Dav1dPixelLayout`).
    pub picture_allocated:
        unsafe extern "C" fn(data: *const *mut u8, stride: *const isize, h: c_int, layout: c_int),
    /// The picture with these planes is about to be freed.
    pub picture_released: unsafe extern "C" fn(data: *const *mut u8),
    /// Filters a superblock row and returns 1, or returns 0 for dav1d to ([`cdef_apply`]).
    pub cdef_row: unsafe extern "C" fn(row: *const cdef_apply::CdefRowCall) -> c_int,
    /// The calling thread's deferred rows are in the frame when it returns: dav1d calls it
    /// when a one-thread frame's decode ends.
    pub cdef_rows_done: unsafe extern "C" fn(),
    /// dav1d filtered the row `cdef_row` returned 0 for, in the calling thread.
    pub cdef_row_filtered: unsafe extern "C" fn(),
}

pub static PROVIDER: DaedalusAv1Provider = DaedalusAv1Provider {
    abi_version: ABI_VERSION,
    attach_cdef,
    sync,
    picture_allocated,
    picture_released,
    cdef_row: cdef_apply::cdef_row,
    cdef_rows_done: cdef_apply::cdef_rows_done,
    cdef_row_filtered: cdef_apply::cdef_row_filtered,
};

/// An export as the untyped pointer the patch takes; dav1d casts it back to its `cdef_fn`,
/// whose signature the export has.
fn any_fn(f: *const ()) -> AnyFn {
    // SAFETY: `f` is a function; only the pointer's type changes.
    unsafe { std::mem::transmute::<*const (), AnyFn>(f) }
}

unsafe extern "C" fn attach_cdef(pixel_bytes: c_int, fb: *mut Option<AnyFn>) -> c_int {
    crate::log::guard("attach_cdef", 0, || {
        if crate::config::get().mode == crate::config::Mode::Off {
            crate::log::once(
                crate::log::Level::Info,
                "off",
                format_args!("DAEDALUS=off: dav1d's own CDEF runs"),
            );
            return 0;
        }
        if fb.is_null() {
            return 0;
        }
        use crate::ffi::*;
        let functions = match pixel_bytes {
            1 => [
                any_fn(daedalus_av1_cdef_filter_8x8_8bpc as *const ()),
                any_fn(daedalus_av1_cdef_filter_4x8_8bpc as *const ()),
                any_fn(daedalus_av1_cdef_filter_4x4_8bpc as *const ()),
            ],
            2 => [
                any_fn(daedalus_av1_cdef_filter_8x8_16bpc as *const ()),
                any_fn(daedalus_av1_cdef_filter_4x8_16bpc as *const ()),
                any_fn(daedalus_av1_cdef_filter_4x4_16bpc as *const ()),
            ],
            _ => return 0,
        };
        crate::stats::note_decoder_attached();
        match decide_cdef().path {
            Path::Own => 0,
            // dav1d keeps its functions for the rows the GPU does not take (`cdef_apply`).
            Path::Frame => {
                crate::debug!("dav1d's CDEF ({pixel_bytes}-byte pixels) by superblock rows");
                0
            }
            // (A device that could not build CDEF's kernel said so once: dav1d keeps its own.)
            Path::Calls
                if crate::gpu::get()
                    .is_some_and(|g| !g.pipelines.has(crate::kernels::Kernel::Cdef)) =>
            {
                0
            }
            Path::Calls => {
                for (i, f) in functions.into_iter().enumerate() {
                    fb.add(i).write(Some(f));
                }
                crate::debug!("dav1d's CDEF ({pixel_bytes}-byte pixels) taken over");
                1
            }
        }
    })
}

/// Decides AV1's path once per process, at dav1d's first attach ([`crate::paths`]):
/// `DAEDALUS_PATH`, the CPU reference's calls with `DAEDALUS=cpu`, else CDEF's rows on the GPU
/// with a trial per kind of row on the decode itself ([`cdef_choice`], or an earlier run's
/// decisions) where the GPU can take part: not where earlier runs kept dav1d for every kind of
/// row, without a device or its row kernels, or on a CPU device (whose work takes the
/// decoder's own cores) where no trial is asked for and none decided before. Where an earlier
/// run decided some kind, the device is set up only when a row first goes to the GPU (where
/// its pictures can be imported then): a device or row kernels missing then send the rows to
/// dav1d, after one warning.
pub fn decide_cdef() -> Taken {
    if let Some(taken) = paths::av1() {
        return taken;
    }
    let config = crate::config::get();
    let (path, why) = match (config.path, config.mode) {
        (DecoderPath::Ffmpeg, _) => (Path::Own, "DAEDALUS_PATH"),
        (DecoderPath::Calls, _) => (Path::Calls, "DAEDALUS_PATH"),
        (_, Mode::Cpu) => (Path::Calls, "DAEDALUS=cpu"),
        (DecoderPath::Auto, _) if cdef_choice::dav1d_kept() => (Path::Own, "kept"),
        // (A CPU device known from an earlier run is not set up at all.)
        (DecoderPath::Auto, _)
            if !config.trial_asked()
                && cdef_choice::cached().iter().all(Option::is_none)
                && crate::decisions::on_cpu_device() =>
        {
            (Path::Own, "cpu-device")
        }
        // An earlier run decided some kind of row: the device is set up when a row first goes
        // to the GPU, so that a decode whose rows all stay with dav1d (a kept kind, a trial's
        // first picture, FFmpeg's probe) sets none up; where its pictures can be imported then.
        (DecoderPath::Auto, _)
            if cdef_choice::cached().iter().any(Option::is_some)
                && crate::regions::defer_device() =>
        {
            (Path::Frame, "trial")
        }
        (path, _) => match crate::gpu::get() {
            None => (Path::Own, "no-device"),
            Some(_) if !cdef_apply::row_kernels() => (Path::Own, "no-kernels"),
            Some(_) if path == DecoderPath::Frame => (Path::Frame, "DAEDALUS_PATH"),
            Some(_) => {
                crate::decisions::note_device();
                (Path::Frame, "trial")
            }
        },
    };
    let taken = paths::took_av1(path, why);
    if taken.path == Path::Own {
        crate::log::once(
            crate::log::Level::Info,
            "cdef own",
            format_args!("dav1d's own CDEF ({})", taken.why),
        );
    }
    taken
}

unsafe extern "C" fn sync() {
    crate::log::guard("av1 sync", (), || batch::flush_for(Reason::RowDone))
}

/// dav1d's `Dav1dPixelLayout`: I400 (no chroma) and I420 (half-height chroma).
const LAYOUT_I400: c_int = 0;
const LAYOUT_I420: c_int = 1;

/// The byte ranges of a picture's planes, as dav1d's allocator rules lay them out.
unsafe fn planes(
    data: *const *mut u8,
    stride: *const isize,
    h: c_int,
    layout: c_int,
) -> Vec<(usize, usize)> {
    let padded_rows = (h.max(0) as usize).div_ceil(128) * 128;
    let chroma_rows = if layout == LAYOUT_I420 {
        padded_rows / 2
    } else {
        padded_rows
    };
    let planes = if layout == LAYOUT_I400 { 1 } else { 3 };
    (0..planes)
        .filter_map(|i| {
            let (ptr, stride) = (*data.add(i) as usize, *stride.add(i.min(1)));
            let rows = if i == 0 { padded_rows } else { chroma_rows };
            // dav1d's planes have positive strides; anything else stays unregistered.
            (ptr != 0 && stride > 0).then(|| (ptr, stride as usize * rows))
        })
        .collect()
}

/// Whether the GPU could work on registered planes in place: host memory is imported only
/// where CDEF runs on the GPU path, and the device can.
fn registers_planes() -> bool {
    // dav1d's own functions (or never attached): nothing to import. (A device deferred is
    // not set up for it: the rows of a picture in another's memory then go to dav1d; ours are
    // imported at their first row.)
    paths::av1().is_some_and(|t| t.path != Path::Own)
        && crate::config::get().mode == crate::config::Mode::Gpu
        && !crate::regions::frames_imported_later()
        && crate::gpu::get().is_some_and(|g| g.info.host_import_alignment.is_some())
        && !crate::regions::frames_from_pool()
}

/// The planes registered here, with their registration counts: only those are unregistered.
fn lock_registered() -> std::sync::MutexGuard<'static, HashMap<usize, usize>> {
    static REGISTERED: Lazy<Mutex<HashMap<usize, usize>>> = Lazy::new(Default::default);
    REGISTERED.lock().unwrap_or_else(|p| p.into_inner())
}

unsafe extern "C" fn picture_allocated(
    data: *const *mut u8,
    stride: *const isize,
    h: c_int,
    layout: c_int,
) {
    crate::log::guard("picture_allocated", (), || {
        if data.is_null() || stride.is_null() || !registers_planes() {
            return;
        }
        for (ptr, len) in planes(data, stride, h, layout) {
            // A buffer of ours (`frame_alloc`), registered and in place for its life; one
            // allocated before the device was set up is imported now (where that fails, the
            // picture's rows go to dav1d: its planes are not registered as another's memory).
            if crate::regions::inside_one(ptr, ptr + len) {
                continue;
            }
            if crate::regions::imports_later(ptr) {
                crate::regions::import_later_frame(ptr);
                continue;
            }
            match crate::regions::register(ptr, len) {
                Ok(()) => *lock_registered().entry(ptr).or_default() += 1,
                // Its blocks are then copied: slower, still exact.
                Err(e) => crate::debug!("picture plane {ptr:#x}+{len} not registered: {e}"),
            }
        }
    })
}

unsafe extern "C" fn picture_released(data: *const *mut u8) {
    crate::log::guard("picture_released", (), || {
        if data.is_null() {
            return;
        }
        cdef_choice::released(*data as usize);
        let mut registered = lock_registered();
        for i in 0..3 {
            let ptr = *data.add(i) as usize;
            if let Some(count) = registered.get_mut(&ptr) {
                crate::regions::unregister(ptr);
                *count -= 1;
                if *count == 0 {
                    registered.remove(&ptr);
                }
            }
        }
    })
}
