//! The VP9 provider for FFmpeg 5.1 (see `ffmpeg-patches/ffmpeg-5.1`).
//!
//! The patched decoder looks `daedalus_vp9_provider` up with `dlsym(RTLD_DEFAULT, ...)`, so it
//! is found both when this library is LD_PRELOADed and when it is linked into the program.
//! After `ff_vp9dsp_init()` the decoder calls `attach`, which keeps FFmpeg's filled table as
//! the CPU fallback and replaces every 8-bit `itxfm_add`, `mc` and loop-filter entry with a
//! recording function; scaled motion compensation (`smc`) stays FFmpeg's, behind a wrapper
//! that completes the pending work first. The decoder then reports each frame it writes
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

pub mod frame;

use crate::batch::{self, Origin, FFMPEG_DSP, FFMPEG_ITX};
use crate::config::{FrameSplit, LfCalls};
use crate::kernels::itx::{self, Transform, Tx1d, TxSize};
use crate::kernels::mc::{McFilter, McFunction};
use crate::stats::{self, Reason, COUNTERS};
use crate::vp9dsp::{ffmpeg_tx_type, ItxfmAddFn, ScaledMcFn, Vp9DspContext, N_FILTERS};
use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Must equal the patch's `FF_VP9_PROVIDER_ABI`.
pub const ABI_VERSION: c_int = 10;

/// The frame the decoder writes (the patch's `FFVP9ProviderFrame`).
#[repr(C)]
pub struct DaedalusVp9Frame {
    pub data: [*mut u8; 3],
    pub linesize: [isize; 3],
    pub width: c_int,
    pub height: c_int,
    pub ss_h: c_int,
    pub ss_v: c_int,
    pub bpp: c_int,
    /// The buffers that hold the planes: every byte the decoder may write.
    pub buf_data: [*mut u8; 3],
    pub buf_size: [usize; 3],
    /// `frame_begin` only: the buffers of the three references motion compensation reads.
    pub ref_buf_data: [[*mut u8; 3]; 3],
    pub ref_buf_size: [[usize; 3]; 3],
}

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
    /// Superblock rows `[0, rows)` of every tile column are parsed.
    pub rows_parsed: unsafe extern "C" fn(ctx: *mut c_void, rows: c_int),
    /// Parsing ended (`error` 0, or the parse's error after `rows` complete rows): 0 once the
    /// provider reconstructed the frame, nonzero if the decoder must.
    pub reconstruct: unsafe extern "C" fn(ctx: *mut c_void, rows: c_int, error: c_int) -> c_int,
    /// The frame's parsed data is no longer read.
    pub parse_end: unsafe extern "C" fn(ctx: *mut c_void),
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
    rows_parsed: frame::rows_parsed,
    reconstruct: frame::reconstruct,
    parse_end: frame::parse_end,
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

/// A superblock's loop filter, one recorded call per plane instead of a call per edge
/// (`DAEDALUS_LF_CALLS`). Declined (FFmpeg then filters it with the table, whose
/// loop-filter entries record or run FFmpeg's own functions as placed) with `edges`, by default
/// on a thread that publishes its rows (frame threads: the threads that wait for a row wait for
/// its chain of superblock passes, which takes the GPU longer than the per-edge calls), and
/// where the filters run on the CPU: the family is placed there, this thread has no device, or
/// the device could not build the superblock kernel.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn loopfilter_sb(
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
) -> c_int {
    crate::ffi::guard("loopfilter_sb", 1, || {
        if !per_call(ctx) {
            return 1;
        }
        let on_cpu = crate::calibrate::placement().of(crate::config::Family::Lf)
            == crate::config::Place::Cpu;
        let wanted = match crate::config::get().lf_calls {
            LfCalls::Edges => false,
            LfCalls::Superblocks => true,
            // With the split order a row's planes no longer chain through the row, and frame
            // threads waiting for a row wait less than for its per-edge calls.
            LfCalls::Auto => batch::lf_passes_split() || !PUBLISHES_ROWS.with(|p| p.get()),
        };
        if !wanted
            || on_cpu
            || !batch::thread_uses_gpu()
            || !batch::device_has_kernel(crate::kernels::LF_SB_KERNEL)
        {
            return 1;
        }
        crate::ffi::lf_sb_entry(
            Origin::Ffmpeg,
            dst,
            [ls_y, ls_uv],
            [ss_h, ss_v],
            row,
            col,
            [level, mask, mblim_lut, lim_lut],
        )
    })
}

/// The patch's sync reasons.
const SYNC_ROW_DONE: c_int = 2;
const SYNC_ROW_PUBLISHED: c_int = 3;

/// The patch's `FFVP9IntraEdge` flags: the neighbours an intra prediction reads.
const INTRA_LEFT: c_int = 1;
const INTRA_TOP: c_int = 2;
const INTRA_TOPLEFT: c_int = 4;
const INTRA_TOPRIGHT: c_int = 8;

/// The planes of the frame this thread decodes: where a sync's rectangle lies.
#[derive(Clone, Copy)]
struct Planes {
    data: [*mut u8; 3],
    linesize: [isize; 3],
    ss_v: usize,
    bytes_per_pixel: usize,
    /// Superblock rows of the frame.
    sb_rows: usize,
}

impl Planes {
    /// `w` x `h` pixels of `plane` from (`x`, `y`), clipped to the plane's rows as FFmpeg's
    /// buffers hold them (row 0 on, `linesize` bytes each).
    fn area(&self, plane: usize, x: i64, y: i64, w: i64, h: i64) -> Option<batch::Area> {
        let bpp = self.bytes_per_pixel as i64;
        let stride = self.linesize[plane];
        let (x0, y0) = (x.max(0), y.max(0));
        let x1 = (x + w).min(stride as i64 / bpp);
        if stride <= 0 || x1 <= x0 || y + h <= y0 {
            return None;
        }
        let at = self.data[plane].wrapping_offset((y0 * stride as i64 + x0 * bpp) as isize);
        Some(batch::Area {
            at,
            stride,
            w: ((x1 - x0) * bpp) as usize,
            h: (y + h - y0) as usize,
        })
    }

    /// The address of pixel (`x`, `y`) of `plane` (0 outside the plane's first row and
    /// column: no block of the decoder starts there).
    fn pixel_address(&self, plane: usize, x: i64, y: i64) -> usize {
        if x < 0 || y < 0 {
            return 0;
        }
        let offset = y * self.linesize[plane] as i64 + x * self.bytes_per_pixel as i64;
        (self.data[plane] as usize).wrapping_add_signed(offset as isize)
    }

    /// What intra prediction of the `size` x `size` block at (`x`, `y`) of `plane` reads, and
    /// what it writes (the block itself). It reads the neighbours `edges` names (the decoder's
    /// `FFVP9IntraEdge`): its left column, the row above with the top-left and top-right
    /// pixels. At the top of a superblock row the row above comes from the decoder's backup of
    /// it instead: there, from `backup` where this provider made it (else the decoder copied
    /// it: nothing pends).
    fn intra(
        &self,
        backup: Option<Backup>,
        plane: usize,
        (x, y, size): (i64, i64, i64),
        edges: c_int,
    ) -> (IntraReads, Option<batch::Area>) {
        let block = self.area(plane, x, y, size, size);
        let mut areas = IntraReads::default();
        if edges & INTRA_LEFT != 0 {
            areas.extend(self.area(plane, x - 1, y, 1, size));
        }
        if edges & INTRA_TOP == 0 {
            return (areas, block);
        }
        let x0 = x - (edges & INTRA_TOPLEFT != 0) as i64;
        let x1 = x + size + if edges & INTRA_TOPRIGHT != 0 { 4 } else { 0 };
        if y % self.superblock_height(plane) != 0 {
            areas.extend(self.area(plane, x0, y - 1, x1 - x0, 1));
        } else if let Some(b) = backup {
            let bpp = self.bytes_per_pixel as i64;
            let first = (x0.max(0) * bpp) as usize;
            let end = ((x1 * bpp).max(0) as usize).min(b.len[plane]);
            if first < end {
                areas.extend(Some(batch::Area {
                    at: b.dst[plane].wrapping_add(first),
                    stride: b.stride as isize,
                    w: end - first,
                    h: 1,
                }));
            }
        }
        (areas, block)
    }

    /// The rows of a superblock row in `plane`: 64, or 32 in a chroma plane with vertical
    /// subsampling.
    fn superblock_height(&self, plane: usize) -> i64 {
        64 >> if plane == 0 { 0 } else { self.ss_v }
    }

    /// Whether intra prediction of a block starting on row `y` of `plane` reads and writes
    /// only rows of the block's own superblock row: all but the first row of a superblock
    /// row's blocks read the row above inside it, and the first reads the decoder's backup
    /// of the row above instead (`Planes::intra`).
    fn intra_stays_in_row(&self, plane: usize, y: i64, edges: c_int) -> bool {
        edges & INTRA_TOP == 0 || y % self.superblock_height(plane) != 0
    }
}

/// What an intra prediction reads: its left column and the row above, at most two areas,
/// kept on the stack since the decoder syncs before every predicted block.
#[derive(Clone, Copy)]
struct IntraReads {
    areas: [batch::Area; 2],
    len: usize,
}

impl Default for IntraReads {
    fn default() -> IntraReads {
        let none = batch::Area {
            at: std::ptr::null_mut(),
            stride: 0,
            w: 0,
            h: 0,
        };
        IntraReads {
            areas: [none; 2],
            len: 0,
        }
    }
}

impl IntraReads {
    fn extend(&mut self, area: Option<batch::Area>) {
        if let Some(a) = area {
            self.areas[self.len] = a;
            self.len += 1;
        }
    }
}

impl std::ops::Deref for IntraReads {
    type Target = [batch::Area];

    fn deref(&self) -> &[batch::Area] {
        &self.areas[..self.len]
    }
}

/// The decoder's backup lines for intra prediction (`intra_pred_data`), registered for the
/// frame: plane `p` is `len[p]` bytes at `dst[p]`, the planes `stride` bytes apart.
#[derive(Clone, Copy, PartialEq)]
struct Backup {
    dst: [*mut u8; 3],
    len: [usize; 3],
    stride: usize,
}

thread_local! {
    /// The frame of this thread's `frame_begin`, until its `frame_end`.
    static PLANES: std::cell::Cell<Option<Planes>> = const { std::cell::Cell::new(None) };
    /// Its backup lines, once this provider copies them.
    static BACKUP: std::cell::Cell<Option<Backup>> = const { std::cell::Cell::new(None) };
    /// The pixel address of the block this thread's last intra sync was for (0: none): the
    /// decoder adds that block's transform right after predicting it.
    static INTRA_BLOCK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Whether this thread published a row to other threads (frame threads do, each row).
    static PUBLISHES_ROWS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether the first part of this thread's frame went to the GPU (`split_frame`).
    static SPLIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The context of a decoder whose DSP calls the provider takes; it carries no state. (A
/// decoder on the frame path holds a [`frame::Decoder`] instead.)
static ATTACHED: u8 = 0;

fn ctx() -> *mut c_void {
    &ATTACHED as *const u8 as *mut c_void
}

/// Whether `ctx` is a decoder's whose DSP calls the provider takes (or none, from a caller that
/// drives the hooks itself): the per-call hooks leave a decoder on the frame path alone (its
/// table is FFmpeg's own).
fn per_call(ctx: *mut c_void) -> bool {
    ctx.is_null() || ctx == self::ctx()
}

/// Stands in for a table entry FFmpeg left empty (it fills them all).
unsafe extern "C" fn reference_iwht(dst: *mut u8, stride: isize, block: *mut i16, eob: c_int) {
    itx::itx_add_now(
        Transform::new(TxSize::T4, Tx1d::Wht, Tx1d::Wht),
        dst,
        stride,
        block,
        eob,
    );
}

/// Where FFmpeg's table keeps a transform: `itxfm_add[row][column]`.
fn table_position(tx: Transform) -> (usize, usize) {
    if tx.first == Tx1d::Wht {
        return (4, 0);
    }
    let column = ffmpeg_tx_type(tx.first == Tx1d::Adst, tx.second == Tx1d::Adst);
    (tx.size as usize, column)
}

/// The recording function installed for transform `I`.
unsafe extern "C" fn provider_itx<const I: usize>(
    dst: *mut u8,
    stride: isize,
    block: *mut i16,
    eob: c_int,
) {
    let tx = Transform::ALL[I];
    crate::ffi::guard("a VP9 transform", (), || {
        if INTRA_BLOCK.with(|b| b.replace(0)) == dst as usize {
            // The next prediction reads these pixels at once: deferring them would only
            // make that read complete them early.
            batch::run_intra_transform(tx, dst, stride, block, eob)
        } else {
            batch::record_itx(tx, dst, stride, block, eob, Origin::Ffmpeg)
        }
    })
}

const RECORDERS: [ItxfmAddFn; 14] = [
    provider_itx::<0>,
    provider_itx::<1>,
    provider_itx::<2>,
    provider_itx::<3>,
    provider_itx::<4>,
    provider_itx::<5>,
    provider_itx::<6>,
    provider_itx::<7>,
    provider_itx::<8>,
    provider_itx::<9>,
    provider_itx::<10>,
    provider_itx::<11>,
    provider_itx::<12>,
    provider_itx::<13>,
];

/// FFmpeg's scaled motion compensation `smc[n][filter][avg]` (`I = (n * 4 + filter) * 2 +
/// avg`), which stays on the CPU: it reads and writes pixels at once, so the pending work
/// completes first.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn provider_scaled_mc<const I: usize>(
    dst: *mut u8,
    dst_stride: isize,
    src: *const u8,
    src_stride: isize,
    h: c_int,
    mx: c_int,
    my: c_int,
    dx: c_int,
    dy: c_int,
) {
    crate::ffi::guard("a scaled motion compensation", (), || {
        batch::flush_for(Reason::Immediate);
        let (n, filter, avg) = (I / (2 * N_FILTERS), I / 2 % N_FILTERS, I % 2);
        if let Some(ffmpeg) = FFMPEG_DSP.get().and_then(|t| t.smc[n][filter][avg]) {
            ffmpeg(dst, dst_stride, src, src_stride, h, mx, my, dx, dy);
            stats::add(&COUNTERS.immediate, 1);
        }
    })
}

macro_rules! scaled_mc_table {
    ($($i:literal)*) => { [$(provider_scaled_mc::<$i> as ScaledMcFn),*] };
}

const SCALED_MC: [ScaledMcFn; 40] = scaled_mc_table!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19
    20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39
);

/// The VP9 families whose calls FFmpeg's table keeps its own functions for, so that they run
/// at once without entering the library at all. That is safe for a family placed on the CPU
/// only where no pending call can come before it on its pixels:
/// - motion compensation is the first to write a block's pixels (the averaging second
///   prediction reads only the first), and what is pending then lies elsewhere: the earlier
///   blocks' calls, and loop filters of the superblock rows above, which FFmpeg filters after a
///   whole row, and whose bottom edge reaches no row below. Its source, a reference frame,
///   is complete or awaited through `await_rows`; the one other source, the decoder's
///   scratch block it copies into the frame at the frame's edge (`tmp_y`), is never deferred
///   to (calls on memory not registered run at once);
/// - transforms add to the prediction's pixels: they stay FFmpeg's only where the predictions
///   are made on the CPU too (intra ones always are).
///
/// A loop filter reads and writes the pixels of earlier calls, so one placed on the CPU
/// always takes the library's way, after the pending calls on its pixels.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct DirectFamilies {
    pub mc: bool,
    pub itx: bool,
}

impl DirectFamilies {
    pub fn of(p: &crate::config::Placement) -> DirectFamilies {
        use crate::config::{Family, Place};
        let mc = p.of(Family::Mc) == Place::Cpu;
        DirectFamilies {
            mc,
            itx: mc && p.of(Family::Itx) == Place::Cpu,
        }
    }

    /// Remembers, for the stats line, that a decoder's table kept these families.
    fn note_attached(&self) {
        let bits = u8::from(self.mc) | (u8::from(self.itx) << 1);
        DIRECT_ATTACHED.fetch_or(bits, Ordering::Relaxed);
    }

    /// `mc,itx` as the stats line's `direct=` names the families some decoder's table kept
    /// (`-`: none).
    pub(crate) fn describe_attached() -> &'static str {
        match DIRECT_ATTACHED.load(Ordering::Relaxed) {
            0 => "-",
            1 => "mc",
            // Transforms stay FFmpeg's only with motion compensation.
            _ => "mc,itx",
        }
    }

    /// Whether every deferred call of a frame is a loop filter: its pending work never meets
    /// the rows below the last filtered one, which is what lets a thread submit it row by row.
    pub fn only_loop_filters_deferred(&self) -> bool {
        self.mc && self.itx
    }
}

/// Bits of the families a decoder's table kept (see [`DirectFamilies::note_attached`]).
static DIRECT_ATTACHED: AtomicU8 = AtomicU8::new(0);

unsafe extern "C" fn attach(dsp: *mut Vp9DspContext, bpp: c_int) -> *mut c_void {
    crate::ffi::guard("attach", std::ptr::null_mut(), || {
        if crate::config::get().mode == crate::config::Mode::Off {
            crate::log::once(
                crate::log::Level::Info,
                "off",
                format_args!("DAEDALUS=off: FFmpeg's own functions run"),
            );
            return std::ptr::null_mut();
        }
        crate::stats::line::register_stats_at_exit();
        match crate::config::get().path {
            crate::config::DecoderPath::Ffmpeg => {
                crate::log::once(
                    crate::log::Level::Info,
                    "path ffmpeg",
                    format_args!("DAEDALUS_PATH=ffmpeg: FFmpeg's own functions run"),
                );
                return std::ptr::null_mut();
            }
            crate::config::DecoderPath::Frame => return frame::attach(bpp),
            // (A placement set with `DAEDALUS_KERNELS` is for the per-call path.)
            crate::config::DecoderPath::Auto if !crate::config::get().kernels.forced => {
                if let Some(ctx) = frame::attach_choosing(bpp) {
                    return ctx;
                }
            }
            crate::config::DecoderPath::Calls | crate::config::DecoderPath::Auto => {}
        }
        if dsp.is_null() || bpp != 8 {
            // Other bit depths keep FFmpeg's functions until their kernels exist.
            return std::ptr::null_mut();
        }
        let dsp = &mut *dsp;
        FFMPEG_ITX.get_or_init(|| {
            Transform::ALL.map(|tx| {
                let (row, column) = table_position(tx);
                // FFmpeg's own functions, its SIMD where it has some (benches/simd_agreement
                // shows they match its C wherever 16-bit lanes do not overflow).
                dsp.itxfm_add[row][column].unwrap_or(reference_iwht as ItxfmAddFn)
            })
        });
        // The table as FFmpeg filled it is what runs at once.
        FFMPEG_DSP.get_or_init(|| *dsp);
        let decision = crate::calibrate::decide();
        if decision.keeps_ffmpeg() {
            crate::log::once(
                crate::log::Level::Info,
                "all-on-cpu",
                format_args!(
                    "every family is faster on the CPU here ({}: {}): FFmpeg's own functions run",
                    decision.by, decision.measured
                ),
            );
            return std::ptr::null_mut();
        }
        // Families FFmpeg's own functions run at once without entering the library.
        let direct = DirectFamilies::of(&crate::calibrate::placement());
        direct.note_attached();
        for row in (0..5).filter(|_| !direct.itx) {
            for column in 0..4 {
                let tx = match row {
                    4 => Transform::new(TxSize::T4, Tx1d::Wht, Tx1d::Wht),
                    3 => Transform::new(TxSize::T32, Tx1d::Dct, Tx1d::Dct),
                    _ => {
                        let adst = |on: bool| if on { Tx1d::Adst } else { Tx1d::Dct };
                        // [DCT_ADST] holds iadst_idct, [ADST_DCT] holds idct_iadst.
                        Transform::new(
                            TxSize::ALL[row],
                            adst(column & 1 != 0),
                            adst(column & 2 != 0),
                        )
                    }
                };
                dsp.itxfm_add[row][column] = Some(RECORDERS[tx.index()]);
            }
        }
        for &(f, recorder) in crate::ffi::PROVIDER_MC.iter().filter(|_| !direct.mc) {
            // The full-pel copy and average sit under every filter of the table.
            let filters = if f.h || f.v {
                vec![f.filter]
            } else {
                McFilter::ALL.to_vec()
            };
            for filter in filters {
                *dsp.mc_entry(McFunction { filter, ..f }) = Some(recorder);
            }
        }
        for &(f, recorder) in crate::ffi::PROVIDER_LF.iter() {
            *dsp.lf_entry(f) = Some(recorder);
        }
        for (n, by_filter) in dsp.smc.iter_mut().enumerate().filter(|_| !direct.mc) {
            for (filter, by_avg) in by_filter.iter_mut().enumerate() {
                for (avg, entry) in by_avg.iter_mut().enumerate() {
                    *entry = Some(SCALED_MC[(n * N_FILTERS + filter) * 2 + avg]);
                }
            }
        }
        ctx()
    })
}

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
    buffers
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
    static REGISTERED: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

fn unregister_frame() {
    let starts = REGISTERED.with(|r| std::mem::take(&mut *r.borrow_mut()));
    for p in starts {
        crate::regions::unregister(p);
    }
}

unsafe extern "C" fn frame_begin(ctx: *mut c_void, frame: *const DaedalusVp9Frame) {
    crate::ffi::guard("frame_begin", (), || {
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
        let inter = frame
            .as_ref()
            .is_some_and(|f| f.ref_buf_data.iter().flatten().any(|p| !p.is_null()));
        batch::note_frame(inter);
        let planes = frame.as_ref().map(|f| Planes {
            data: f.data,
            linesize: f.linesize,
            ss_v: f.ss_v.clamp(0, 1) as usize,
            bytes_per_pixel: if f.bpp > 8 { 2 } else { 1 },
            sb_rows: (f.height.max(0) as usize).div_ceil(64),
        });
        if let Some(p) = &planes {
            published::forget(p.data[0] as usize);
        }
        published::forget_known();
        PLANES.with(|p| p.set(planes));
        BACKUP.with(|b| b.set(None));
        INTRA_BLOCK.with(|b| b.set(0));
        SPLIT.with(|s| s.set(false));
    })
}

/// Completes what the decoder is about to read: a row done on a slice thread (read by the
/// loop-filter thread) completes all pending work. A row published to other frame threads is
/// submitted and left running: they wait for it in `await_rows`.
unsafe extern "C" fn sync(
    ctx: *mut c_void,
    reason: c_int,
    _plane: c_int,
    _x: c_int,
    y: c_int,
    _w: c_int,
    _h: c_int,
) {
    crate::ffi::guard("sync", (), || {
        if !per_call(ctx) {
            return;
        }
        let planes = PLANES.with(|p| p.get());
        if reason == SYNC_ROW_PUBLISHED {
            PUBLISHES_ROWS.with(|p| p.set(true));
        }
        match (reason, planes) {
            (SYNC_ROW_DONE, _) => batch::flush_for(Reason::RowDone),
            (SYNC_ROW_PUBLISHED, Some(p)) => {
                // Submitted, not waited for: readers wait in `await_rows`.
                let serial = batch::publish();
                published::add(p.data[0] as usize, y / 64, serial);
            }
            (SYNC_ROW_PUBLISHED, None) => batch::flush_for(Reason::RowPublished),
            _ => batch::flush_for(Reason::Caller),
        }
    })
}

/// Completes what an intra prediction is about to read and write (`Planes::intra`): only the
/// pending calls on those pixels and what they depend on (of what it only reads, where it
/// can, only those pixels: `batch::complete_reads_for`), where this thread began the frame
/// and so knows its planes; elsewhere (slice workers) all pending work. The block's
/// transform, which the decoder adds next, then runs at once (`provider_itx`). Where only
/// loop filters are deferred, a block inside its superblock row returns at once: their work
/// lies above it.
unsafe extern "C" fn intra_edges(
    ctx: *mut c_void,
    plane: c_int,
    x: c_int,
    y: c_int,
    size: c_int,
    edges: c_int,
) {
    if !per_call(ctx) {
        return;
    }
    crate::ffi::guard("intra_edges", (), || match PLANES.with(|p| p.get()) {
        Some(p) if (0..3).contains(&plane) => {
            let (plane, x, y) = (plane as usize, x as i64, y as i64);
            if p.intra_stays_in_row(plane, y, edges) && only_loop_filters_deferred() {
                // The pending loop filters are of the rows above (each filters its own
                // superblock row and the 8 lines above it), and the row backup was copied at
                // once (`backup_row`): nothing here meets them.
                stats::add(&COUNTERS.intra_syncs_in_row, 1);
            } else {
                let backup = BACKUP.with(|b| b.get());
                let (reads, block) = p.intra(backup, plane, (x, y, size as i64), edges);
                batch::complete_reads_for(Reason::Intra, &reads, block.as_slice());
            }
            INTRA_BLOCK.with(|b| b.set(p.pixel_address(plane, x, y)));
        }
        _ => {
            batch::flush_for(Reason::Intra);
            INTRA_BLOCK.with(|b| b.set(0));
        }
    })
}

/// The copy of a row's last lines for the next row's intra prediction, deferred like the
/// decoder's other calls: full-pel `mc` copies, one line high, from the frame (read in place)
/// into the backup buffer (registered for the frame). Ordered after the row's reconstruction
/// and before its loop filter by their cells; an intra block at the top of the next row
/// completes the copies of the columns it reads (`sync`). Declined (the decoder copies, after
/// a flush) on the CPU path, without the frame's planes, or for an unexpected layout.
unsafe extern "C" fn backup_row(
    ctx: *mut c_void,
    dst: *const *mut u8,
    src: *const *const u8,
    len: *const usize,
) -> c_int {
    if !per_call(ctx) {
        return 0;
    }
    let taken = crate::ffi::guard("backup_row", -1, || {
        let decline = || {
            batch::flush_for(Reason::RowDone);
            0
        };
        let planes = PLANES.with(|p| p.get());
        let (Some(planes), false) = (planes, dst.is_null() || src.is_null() || len.is_null())
        else {
            return decline();
        };
        let dst = *(dst as *const [*mut u8; 3]);
        let src = *(src as *const [*const u8; 3]);
        let len = *(len as *const [usize; 3]);
        let stride = (dst[1] as usize).wrapping_sub(dst[0] as usize);
        let layout = stride > 0
            && stride < 1 << 30
            && dst[2] as usize == dst[1] as usize + stride
            && len.iter().all(|&l| l > 0 && l <= stride && l % 4 == 0);
        if !layout || !batch::thread_uses_gpu() {
            return decline();
        }
        let backup = Backup { dst, len, stride };
        match BACKUP.with(|b| b.get()) {
            Some(b) if b == backup => {}
            Some(_) => return decline(),
            None => {
                let start = dst[0] as usize;
                let end = start + 2 * stride + len[2];
                // The patch gives the lines pool memory where the provider makes the pool.
                if !crate::regions::inside_one(start, end) {
                    if let Err(e) = crate::regions::register(start, end - start) {
                        crate::debug!("backup lines not registered: {e}");
                        return decline();
                    }
                    REGISTERED.with(|r| r.borrow_mut().push(start));
                }
                BACKUP.with(|b| b.set(Some(backup)));
            }
        }
        if DirectFamilies::of(&crate::calibrate::placement()).mc {
            // Motion compensation is FFmpeg's: the copies are no deferred calls either. The
            // lines are copied now, once what is pending on them has completed (normally
            // nothing: the loop filters pending lie above the row just decoded).
            let line = |at: *mut u8, stride: isize, w: usize| batch::Area {
                at,
                stride,
                w,
                h: 1,
            };
            let reads: [batch::Area; 3] =
                std::array::from_fn(|p| line(src[p] as *mut u8, planes.linesize[p], len[p]));
            let writes: [batch::Area; 3] =
                std::array::from_fn(|p| line(dst[p], stride as isize, len[p]));
            batch::complete_reads_for(Reason::RowDone, &reads, &writes);
            for p in 0..3 {
                std::ptr::copy_nonoverlapping(src[p], dst[p], len[p]);
            }
        } else {
            for p in 0..3 {
                let mut at = 0;
                while at < len[p] {
                    let width = [64, 32, 16, 8, 4]
                        .into_iter()
                        .find(|&w| w <= len[p] - at)
                        .expect("lengths are multiples of 4");
                    let copy = McFunction {
                        width,
                        filter: McFilter::Regular,
                        avg: false,
                        h: false,
                        v: false,
                    };
                    batch::record_backup_copy(
                        copy,
                        dst[p].add(at),
                        stride as isize,
                        src[p].add(at),
                        planes.linesize[p],
                    );
                    at += width;
                }
            }
        }
        split_frame(&planes, &backup, src[0]);
        1
    });
    if taken < 0 {
        // A panic inside: the decoder copies, after everything it reads completes.
        crate::ffi::guard("backup_row", (), || batch::flush_for(Reason::RowDone));
        return 0;
    }
    taken
}

/// Whether the placement in force defers nothing of the decoder's but loop filters (the row
/// backup is then copied at once): [`DirectFamilies::only_loop_filters_deferred`].
fn only_loop_filters_deferred() -> bool {
    DirectFamilies::of(&crate::calibrate::placement()).only_loop_filters_deferred()
}

/// Says once per process why `DAEDALUS_FRAME_SPLIT` does not apply: a setting that does
/// nothing should not pass unnoticed.
fn split_not_applied(why: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        crate::warn!("DAEDALUS_FRAME_SPLIT is set but does not apply: {why}");
    }
}

/// Submits the frame's work so far without waiting, on a thread that decodes the frame whole
/// (not one that publishes its rows to other frame threads: those submit every row), so that
/// the GPU runs it while the CPU decodes the rest and the frame's end waits only for what came
/// after. `backup_line` is the last line of the row just decoded. `DAEDALUS_FRAME_SPLIT`:
/// - a per cent: once a frame, when that share of its superblock rows is decoded;
/// - `rows`: at every row where the frame's only deferred calls are loop filters
///   ([`DirectFamilies::only_loop_filters_deferred`]) and the part submitted before has
///   finished (else the part grows by a row). Nothing of the rows below meets them, so a part
///   costs no work on the CPU; the frame's end waits for the last rows' filters alone;
/// - `auto` (the default): `rows` where it applies and the loop filter's passes are split by
///   their masks (`DAEDALUS_LF_ORDER=split`, the default), else nothing, without a warning.
fn split_frame(planes: &Planes, backup: &Backup, backup_line: *const u8) {
    let setting = crate::config::get().frame_split;
    if planes.linesize[0] <= 0 {
        return;
    }
    let publishes_rows = PUBLISHES_ROWS.with(|p| p.get());
    match setting {
        FrameSplit::Off => return,
        // `rows` where it pays, silently elsewhere.
        FrameSplit::Auto => {
            if publishes_rows || !batch::lf_passes_split() || !only_loop_filters_deferred() {
                return;
            }
        }
        _ if publishes_rows => {
            split_not_applied("frame threads submit each row they publish anyway");
            return;
        }
        FrameSplit::Rows => {
            if !only_loop_filters_deferred() {
                split_not_applied(
                    "`rows` applies only where the loop filter alone is deferred \
                     (DAEDALUS_KERNELS=mc=cpu,itx=cpu)",
                );
                return;
            }
        }
        FrameSplit::At(percent) => {
            if SPLIT.with(|s| s.get()) {
                return;
            }
            let y = (backup_line as usize).wrapping_sub(planes.data[0] as usize)
                / planes.linesize[0] as usize;
            let rows_done = y / 64 + 1;
            if rows_done * 100 < percent as usize * planes.sb_rows {
                return;
            }
            // One try a frame: where it cannot go out now (a transform the CPU may redo
            // after the submission, too much to make final), later rows would mostly fail
            // the same way.
            SPLIT.with(|s| s.set(true));
        }
    }
    // What the next row's intra blocks read first.
    let lines: Vec<batch::Area> = (0..3)
        .map(|p| batch::Area {
            at: backup.dst[p],
            stride: backup.stride as isize,
            w: backup.len[p],
            h: 1,
        })
        .collect();
    batch::split_frame(&lines);
}

/// FFmpeg's `AVERROR_EXTERNAL` ("Generic error in an external library").
const AVERROR_EXTERNAL: c_int = -i32::from_le_bytes(*b"EXT ");

thread_local! {
    /// [`batch::damaged_batches`] at this thread's `frame_begin`: where it grew by the frame's
    /// end, a batch of this frame (or of one decoded meanwhile, which it may read) may have
    /// left pixels wrong.
    static DAMAGE_SEEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

unsafe extern "C" fn frame_end(ctx: *mut c_void, frame: *const DaedalusVp9Frame) -> c_int {
    crate::ffi::guard("frame_end", 0, || {
        if !per_call(ctx) {
            if let (Some(f), false) = (frame.as_ref(), ctx.is_null()) {
                frame::frame_end(ctx, f.data[0] as usize);
            }
            return 0;
        }
        let planes = PLANES.with(|p| p.replace(None));
        BACKUP.with(|b| b.set(None));
        INTRA_BLOCK.with(|b| b.set(0));
        batch::flush_for(Reason::FrameEnd);
        // Everything of the frame is complete: readers need not look it up any more.
        if let Some(p) = planes {
            published::forget(p.data[0] as usize);
        }
        unregister_frame();
        if batch::damaged_batches() > DAMAGE_SEEN.with(|d| d.get()) {
            return AVERROR_EXTERNAL;
        }
        0
    })
}

/// Frame threads: waits for the submission that carried row `sb_row` of another thread's
/// frame (the first one published at or below it), if it is still in flight.
unsafe extern "C" fn await_rows(ctx: *mut c_void, frame_data: *const u8, sb_row: c_int) {
    crate::ffi::guard("await_rows", (), || {
        if !per_call(ctx) {
            return;
        }
        let frame = frame_data as usize;
        // Called before every motion compensation: rows this thread found complete before
        // cost no lock.
        if published::known_complete(frame, sb_row) {
            return;
        }
        if let Some(serial) = published::serial_for(frame, sb_row) {
            batch::await_submission(serial);
        }
        published::note_complete(frame, sb_row);
    })
}

mod published;

unsafe extern "C" fn detach(ctx: *mut c_void) {
    crate::ffi::guard("detach", (), || {
        if per_call(ctx) {
            batch::flush_for(Reason::Caller)
        } else if !ctx.is_null() {
            frame::detach(ctx)
        }
    })
}

/// A buffer of the decoder's frame pool, registered until `frame_free`: device memory of ours
/// on the frame-pool path (see [`crate::regions::frames_from_pool`]), else, where the device
/// imports host memory, host memory of ours imported once for its whole life (or, where
/// choosing decoders defer the device, when the GPU first needs it). Null where none applies
/// or the allocation fails: the decoder then allocates the frame itself.
unsafe extern "C" fn frame_alloc(size: usize, opaque: *mut *mut c_void) -> *mut u8 {
    crate::ffi::guard("frame_alloc", std::ptr::null_mut(), || {
        // Nothing attached for the GPU (CDEF on the CPU): the heap, no device set up.
        if !crate::calibrate::frames_wanted() {
            return std::ptr::null_mut();
        }
        if opaque.is_null() || size == 0 || crate::config::get().mode != crate::config::Mode::Gpu {
            return std::ptr::null_mut();
        }
        let later = frame::frames_imported_later();
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
        let registered = if let (true, Some(gpu)) = (pool, gpu) {
            crate::gpu::memory::HostBuffer::for_frame(gpu, size as u64).and_then(|buffer| {
                let data = buffer.ptr;
                crate::regions::register_pool_frame(buffer).map(|()| data)
            })
        } else if later {
            crate::regions::alloc_import_later(size)
        } else if let Some(gpu) = gpu.filter(|g| g.info.host_import_alignment.is_some()) {
            crate::gpu::memory::OwnImport::new(gpu, size).and_then(|own| {
                let data = own.ptr();
                crate::regions::register_own_import(own, size).map(|()| data)
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
/// thread still holds its region (the regions are reference counted).
unsafe extern "C" fn frame_free(opaque: *mut c_void, _data: *mut u8) {
    crate::ffi::guard("frame_free", (), || {
        if !crate::regions::unregister(opaque as usize)
            && !crate::regions::free_unimported(opaque as usize)
        {
            crate::debug!("frame_free of an unknown pool buffer {opaque:?}");
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Planes of a 4:2:0 frame at made-up addresses (never dereferenced), 8 bits.
    fn planes() -> Planes {
        Planes {
            data: [
                0x10_0000 as *mut u8,
                0x20_0000 as *mut u8,
                0x30_0000 as *mut u8,
            ],
            linesize: [1024, 512, 512],
            ss_v: 1,
            bytes_per_pixel: 1,
            sb_rows: 4,
        }
    }

    /// `(plane, x, y, w, h)` of each area, where it lies in a plane; `(9, offset, 0, w, h)`
    /// in the backup lines.
    fn rects(
        areas: &[batch::Area],
        backup: Option<Backup>,
    ) -> Vec<(usize, i64, i64, usize, usize)> {
        let p = planes();
        areas
            .iter()
            .map(|a| {
                let at = a.at as usize;
                if let Some(b) = backup.filter(|b| at >= b.dst[0] as usize) {
                    return (9, (at - b.dst[0] as usize) as i64, 0, a.w, a.h);
                }
                let plane = (0..3).rev().find(|&i| at >= p.data[i] as usize).unwrap();
                let offset = (at - p.data[plane] as usize) as i64;
                let stride = p.linesize[plane] as i64;
                assert_eq!(a.stride, p.linesize[plane]);
                (plane, offset % stride, offset / stride, a.w, a.h)
            })
            .collect()
    }

    /// The block an intra sync writes, then the areas it reads.
    fn intra_areas(
        p: &Planes,
        backup: Option<Backup>,
        plane: usize,
        xys: (i64, i64, i64),
        edges: c_int,
    ) -> Vec<batch::Area> {
        let (reads, block) = p.intra(backup, plane, xys, edges);
        block.into_iter().chain(reads.iter().copied()).collect()
    }

    #[test]
    fn intra_sync_covers_what_the_mode_reads() {
        let p = planes();
        let all = INTRA_LEFT | INTRA_TOP | INTRA_TOPLEFT | INTRA_TOPRIGHT;
        let at = |plane, xy: (i64, i64), size, edges| {
            rects(
                &intra_areas(&p, None, plane, (xy.0, xy.1, size), edges),
                None,
            )
        };
        // No neighbour read (DC_128 and the like): the block alone, which it writes.
        assert_eq!(at(0, (16, 8), 8, 0), [(0, 16, 8, 8, 8)]);
        // The left column, read only.
        assert_eq!(
            at(0, (16, 8), 8, INTRA_LEFT),
            [(0, 16, 8, 8, 8), (0, 15, 8, 1, 8)]
        );
        // The row above: just the block's width, then with its corners.
        assert_eq!(
            at(0, (16, 8), 8, INTRA_TOP),
            [(0, 16, 8, 8, 8), (0, 16, 7, 8, 1)]
        );
        assert_eq!(
            at(0, (16, 8), 4, all),
            [(0, 16, 8, 4, 4), (0, 15, 8, 1, 4), (0, 15, 7, 9, 1)]
        );
        // Clipped to the plane's first column and last byte of a row.
        assert_eq!(at(1, (0, 4), 4, all), [(1, 0, 4, 4, 4), (1, 0, 3, 8, 1)]);
        assert_eq!(
            at(1, (508, 4), 4, all),
            [(1, 508, 4, 4, 4), (1, 507, 4, 1, 4), (1, 507, 3, 5, 1)]
        );
        // At the top of a superblock row (64 luma rows, 32 chroma rows in 4:2:0) the row
        // above is the decoder's own copy when this provider did not make one.
        let left_top = INTRA_LEFT | INTRA_TOP | INTRA_TOPLEFT;
        assert_eq!(
            at(0, (16, 64), 8, left_top),
            [(0, 16, 64, 8, 8), (0, 15, 64, 1, 8)]
        );
        assert_eq!(at(2, (16, 32), 8, INTRA_TOP), [(2, 16, 32, 8, 8)]);
        assert_eq!(
            at(0, (16, 32), 8, INTRA_TOP),
            [(0, 16, 32, 8, 8), (0, 16, 31, 8, 1)]
        );
        // Else its columns of the backup lines.
        let backup = Backup {
            dst: [
                0x40_0000 as *mut u8,
                0x40_1000 as *mut u8,
                0x40_2000 as *mut u8,
            ],
            len: [1024, 512, 512],
            stride: 0x1000,
        };
        let areas = intra_areas(&p, Some(backup), 0, (16, 64, 4), all);
        assert_eq!(
            rects(&areas, Some(backup)),
            [(0, 16, 64, 4, 4), (0, 15, 64, 1, 4), (9, 15, 0, 9, 1)]
        );
        let (reads, _) = p.intra(Some(backup), 1, (8, 32, 8), INTRA_TOP);
        let areas = intra_areas(&p, Some(backup), 1, (8, 32, 8), INTRA_TOP);
        assert_eq!(
            rects(&areas, Some(backup)),
            [(1, 8, 32, 8, 8), (9, 0x1008, 0, 8, 1)]
        );
        assert!(reads.iter().all(|a| a.stride == 0x1000));
        // Whether a block reads and writes only its own superblock row: all but the first
        // row of a superblock row's blocks, and those when they read nothing above.
        assert!(p.intra_stays_in_row(0, 8, all));
        assert!(p.intra_stays_in_row(0, 64, INTRA_LEFT));
        assert!(!p.intra_stays_in_row(0, 64, INTRA_TOP));
        assert!(!p.intra_stays_in_row(0, 128, all));
        assert!(p.intra_stays_in_row(1, 16, all));
        assert!(!p.intra_stays_in_row(1, 32, all));
        assert!(p.intra_stays_in_row(1, 32, INTRA_LEFT | INTRA_TOPLEFT));
        // Two bytes a pixel: offsets and widths in bytes.
        let wide = Planes {
            bytes_per_pixel: 2,
            ..planes()
        };
        let areas = intra_areas(&wide, None, 0, (16, 8, 4), all);
        assert_eq!(
            rects(&areas, None),
            [(0, 32, 8, 8, 4), (0, 30, 8, 2, 4), (0, 30, 7, 18, 1)]
        );
    }
}
