//! Attaching to a decoder: FFmpeg's filled DSP table is kept as the CPU fallback, and its
//! 8-bit entries are replaced with recording functions (or kept where a family runs at once).

use super::syncs::INTRA_BLOCK;
use super::{ctx, frame, per_call};
use crate::batch::{self, Origin, FFMPEG_DSP, FFMPEG_ITX};
use crate::kernels::itx::{self, Transform, Tx1d, TxSize};
use crate::kernels::mc::{McFilter, McFunction};
use crate::stats::{self, Reason, COUNTERS};
use crate::vp9dsp::{ffmpeg_tx_type, ItxfmAddFn, ScaledMcFn, Vp9DspContext, N_FILTERS};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU8, Ordering};

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
    crate::log::guard("a VP9 transform", (), || {
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
    crate::log::guard("a scaled motion compensation", (), || {
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
    pub(super) fn note_attached(&self) {
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

pub(super) unsafe extern "C" fn attach(dsp: *mut Vp9DspContext, bpp: c_int) -> *mut c_void {
    crate::log::guard("attach", std::ptr::null_mut(), || {
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
        let direct = DirectFamilies::of(&crate::placement::in_force());
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

pub(super) unsafe extern "C" fn detach(ctx: *mut c_void) {
    crate::log::guard("detach", (), || {
        if per_call(ctx) {
            batch::flush_for(Reason::Caller)
        } else if !ctx.is_null() {
            frame::detach(ctx)
        }
    })
}
