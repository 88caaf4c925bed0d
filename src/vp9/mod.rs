//! The VP9 provider for FFmpeg 5.1 (see `ffmpeg-patches/ffmpeg-5.1`).
//!
//! The patched decoder looks `daedalus_vp9_provider` up with `dlsym(RTLD_DEFAULT, ...)`, so it
//! is found both when this library is LD_PRELOADed and when it is linked into the program.
//! After `ff_vp9dsp_init()` the decoder calls `attach`, where the decoder context takes its
//! path (`attach.rs`): the frame path (`frame`), FFmpeg's own decode, or the per-call path,
//! which keeps FFmpeg's filled table as the CPU fallback and replaces every 8-bit
//! `itxfm_add`, `mc` and loop-filter entry with a recording function; scaled motion
//! compensation (`smc`) stays FFmpeg's, behind a wrapper that completes the pending work
//! first. On the per-call path the decoder then reports each frame it writes
//! (`frame_begin`/`frame_end`: the frame's buffers and those of its references are
//! registered for the frame, so the GPU works on the frame and reads the references in place)
//! and syncs wherever it reads or publishes pixels; each sync completes what that reader
//! needs of the calling thread's pending work (see `sync`).
//!
//! The transient-memory rule: a call whose pixels are not inside a frame being decoded (the
//! decoder's emulated-edge buffers) runs at once with FFmpeg's own function, because the
//! decoder copies those pixels out right after the call; a motion compensation whose source
//! is not inside a registered frame (an emulated-edge source) has its source window copied at
//! call time.
//!
//! The parts: the hooks' table here, the frame the decoder hands over in `abi`, whose
//! decoder context the per-call hooks take in `context`; `attach` (the DSP table taken over), `syncs`
//! (what a reader of pixels completes), `rows` (a row's backup, rows of other frame threads, a
//! superblock's loop filter), `per_frame` (a frame's begin and end, the frame pool's memory);
//! `frame` is the frame path.

pub mod frame;

mod abi;
mod attach;
mod context;
mod lookup;
mod per_frame;
mod rows;
mod syncs;

pub use abi::DaedalusVp9Frame;
use attach::{attach, detach};
use context::per_call;
use per_frame::{frame_alloc, frame_begin, frame_end, frame_free};
use rows::{await_rows, backup_row, loopfilter_sb};
use syncs::{intra_edges, sync};

use crate::vp9dsp::Vp9DspContext;
use std::ffi::{c_int, c_void};

/// Must equal the patch's `FF_VP9_PROVIDER_ABI`.
pub const ABI_VERSION: c_int = 15;

/// The hooks the patched decoder calls (the patch's `FFVP9Provider`).
#[repr(C)]
pub struct DaedalusVp9Provider {
    pub abi_version: c_int,
    pub dsp_size: usize,
    pub attach: unsafe extern "C" fn(dsp: *mut Vp9DspContext, bpp: c_int) -> *mut c_void,
    pub frame_begin: unsafe extern "C" fn(ctx: *mut c_void, frame: *const DaedalusVp9Frame),
    pub sync: unsafe extern "C" fn(
        ctx: *mut c_void,
        reason: c_int,
        plane: c_int,
        x: c_int,
        y: c_int,
        w: c_int,
        h: c_int,
    ),
    pub backup_row: unsafe extern "C" fn(
        ctx: *mut c_void,
        dst: *const *mut u8,
        src: *const *const u8,
        len: *const usize,
    ) -> c_int,
    /// Intra prediction of the `size` x `size` block at (`x`, `y`) of `plane` writes it and
    /// reads the neighbours `edges` names (`INTRA_*`).
    pub intra_edges: unsafe extern "C" fn(
        ctx: *mut c_void,
        plane: c_int,
        x: c_int,
        y: c_int,
        size: c_int,
        edges: c_int,
    ),
    /// 0, or a negative AVERROR code: the frame may be wrong, and the decoder fails it.
    pub frame_end: unsafe extern "C" fn(ctx: *mut c_void, frame: *const DaedalusVp9Frame) -> c_int,
    pub detach: unsafe extern "C" fn(ctx: *mut c_void),
    /// Memory for the decoder's frame pool while the provider is attached: `size` zeroed
    /// bytes, or null (the decoder allocates as usual); `*opaque` goes back to `frame_free`.
    pub frame_alloc: unsafe extern "C" fn(size: usize, opaque: *mut *mut c_void) -> *mut u8,
    pub frame_free: unsafe extern "C" fn(opaque: *mut c_void, data: *mut u8),
    /// Frame threads: the decoder is about to read superblock rows `0..=sb_row` of the
    /// frame whose `data[0]` is `frame_data`, which another thread published.
    pub await_rows: unsafe extern "C" fn(ctx: *mut c_void, frame_data: *const u8, sb_row: c_int),
    /// The loop filter of one superblock (`ff_vp9_loopfilter_sb`'s work); 0: taken, nonzero:
    /// the decoder filters it with its table.
    pub loopfilter_sb: unsafe extern "C" fn(
        ctx: *mut c_void,
        dst: *const *mut u8,
        ls_y: isize,
        ls_uv: isize,
        ss_h: c_int,
        ss_v: c_int,
        row: c_int,
        col: c_int,
        level: *const u8,
        mask: *const u8,
        mblim_lut: *const u8,
        lim_lut: *const u8,
    ) -> c_int,
    /// The frame path ([`frame`]): whether the provider takes the frame, parsed whole first
    /// into the buffers it names.
    pub parse_begin: unsafe extern "C" fn(
        ctx: *mut c_void,
        info: *const frame::records::FrameParse,
        bufs: *mut frame::records::ParseBuffers,
    ) -> c_int,
    /// Parsing ended (`error` 0, or the parse's error after `rows` complete rows): 0 once the
    /// provider reconstructed the frame, [`frame::HELD`] (only where `may_hold`) while the GPU
    /// still works on it, another nonzero value if the decoder must reconstruct it.
    pub reconstruct:
        unsafe extern "C" fn(ctx: *mut c_void, rows: c_int, error: c_int, may_hold: c_int) -> c_int,
    /// The frame's parsed data is no longer read.
    pub parse_end: unsafe extern "C" fn(ctx: *mut c_void),
    /// Waits for the oldest held frame: 0 once its pixels are final, nonzero if the decoder
    /// must reconstruct it from its parsed data (valid until `finished`).
    pub finish: unsafe extern "C" fn(ctx: *mut c_void) -> c_int,
    /// The oldest held frame is over: its parsed data is no longer read.
    pub finished: unsafe extern "C" fn(ctx: *mut c_void),
    /// Frame threads: the CPU time (ns) the decoder context's workers spent parsing the
    /// frame's tile columns apart.
    pub parse_workers_cpu: unsafe extern "C" fn(ctx: *mut c_void, ns: i64),
    /// Frame threads: how many decoder contexts to make where the user asks for `threads`
    /// (more than one), for a stream of `width` x `height` (0: unknown) of `profile`.
    pub frame_thread_count:
        unsafe extern "C" fn(threads: c_int, width: c_int, height: c_int, profile: c_int) -> c_int,
}

pub static PROVIDER: DaedalusVp9Provider = DaedalusVp9Provider {
    abi_version: ABI_VERSION,
    dsp_size: std::mem::size_of::<Vp9DspContext>(),
    attach,
    frame_begin,
    sync,
    backup_row,
    intra_edges,
    frame_end,
    detach,
    frame_alloc,
    frame_free,
    await_rows,
    loopfilter_sb,
    parse_begin,
    reconstruct: frame::reconstruct,
    parse_end: frame::parse_end,
    finish: frame::finish,
    finished: frame::finished,
    parse_workers_cpu: frame::parse_workers_cpu,
    frame_thread_count: frame::contexts::frame_thread_count,
};

/// The frame path's `parse_begin`: a decoder whose DSP calls the provider takes parses and
/// reconstructs block by block as before.
unsafe extern "C" fn parse_begin(
    ctx: *mut c_void,
    info: *const frame::records::FrameParse,
    bufs: *mut frame::records::ParseBuffers,
) -> c_int {
    if per_call(ctx) {
        return 0;
    }
    frame::parse_begin(ctx, info, bufs)
}
