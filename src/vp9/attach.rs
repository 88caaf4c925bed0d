//! Attaching to a decoder: the path it takes (`DAEDALUS_PATH`, else the frame path where a
//! trial may keep it, else FFmpeg's own decode); on the per-call path FFmpeg's filled DSP
//! table is kept as the CPU fallback and its 8-bit entries replaced with recording functions.

use super::context::{ctx, per_call};
use super::frame;
use super::syncs::INTRA_BLOCK;
use crate::batch::{self, Origin, FFMPEG_DSP, FFMPEG_ITX};
use crate::config::{DecoderPath, Mode};
use crate::kernels::itx::{self, Transform, Tx1d, TxSize};
use crate::kernels::mc::{McFilter, McFunction};
use crate::paths::{self, Path, Taken};
use crate::stats::{self, Reason, COUNTERS};
use crate::vp9dsp::{ffmpeg_tx_type, ItxfmAddFn, ScaledMcFn, Vp9DspContext, N_FILTERS};
use std::ffi::{c_int, c_void};

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

pub(super) unsafe extern "C" fn attach(dsp: *mut Vp9DspContext, bpp: c_int) -> *mut c_void {
    crate::log::guard("attach", std::ptr::null_mut(), || {
        let config = crate::config::get();
        if config.mode == Mode::Off {
            crate::log::once(
                crate::log::Level::Info,
                "off",
                format_args!("DAEDALUS=off: FFmpeg's own functions run"),
            );
            return std::ptr::null_mut();
        }
        crate::stats::note_decoder_attached();
        // The first decoder context decides the process's path; later ones follow it.
        let taken = paths::vp9().unwrap_or_else(|| decide(bpp));
        match (taken.path, taken.why) {
            (Path::Own, _) => std::ptr::null_mut(),
            (Path::Calls, _) => attach_calls(dsp, bpp),
            (Path::Frame, "trial") => frame::attach_choosing().unwrap_or(std::ptr::null_mut()),
            (Path::Frame, _) => frame::attach(),
        }
    })
}

/// VP9's path, at its first decoder context's attach: `DAEDALUS_PATH`, the per-call path on
/// the CPU reference with `DAEDALUS=cpu`, else the frame path where a trial (or an earlier
/// run's decision) may keep it, else FFmpeg's own decode, and why.
fn decide(bpp: c_int) -> Taken {
    let config = crate::config::get();
    let (path, why) = match (config.path, config.mode) {
        (DecoderPath::Ffmpeg, _) => (Path::Own, "DAEDALUS_PATH"),
        (DecoderPath::Frame, _) => (Path::Frame, "DAEDALUS_PATH"),
        // (The per-call path is 8-bit: other bit depths keep FFmpeg's functions there.)
        (DecoderPath::Calls, _) | (DecoderPath::Auto, Mode::Cpu) if bpp != 8 => {
            (Path::Own, "high-bit-depth")
        }
        (DecoderPath::Calls, _) => (Path::Calls, "DAEDALUS_PATH"),
        (DecoderPath::Auto, Mode::Cpu) => (Path::Calls, "DAEDALUS=cpu"),
        (DecoderPath::Auto, _) => match frame::choosing_declined() {
            None => (Path::Frame, "trial"),
            Some(why) => (Path::Own, why),
        },
    };
    let taken = paths::took_vp9(path, why);
    if taken.path == Path::Own {
        crate::log::once(
            crate::log::Level::Info,
            "vp9 own",
            format_args!("FFmpeg's own VP9 decode ({})", taken.why),
        );
    }
    taken
}

/// The per-call path: FFmpeg's filled table is kept as the CPU fallback, and its 8-bit entries
/// record instead (other bit depths keep FFmpeg's functions until their kernels exist).
unsafe fn attach_calls(dsp: *mut Vp9DspContext, bpp: c_int) -> *mut c_void {
    if dsp.is_null() || bpp != 8 {
        return std::ptr::null_mut();
    }
    let dsp = &mut *dsp;
    FFMPEG_ITX.get_or_init(|| {
        Transform::ALL.map(|tx| {
            let (row, column) = table_position(tx);
            // FFmpeg's own functions, its SIMD where it has some (benches/simd_agreement shows
            // they match its C wherever 16-bit lanes do not overflow).
            dsp.itxfm_add[row][column].unwrap_or(reference_iwht as ItxfmAddFn)
        })
    });
    // The table as FFmpeg filled it is what runs at once.
    FFMPEG_DSP.get_or_init(|| *dsp);
    for row in 0..5 {
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
    for &(f, recorder) in crate::ffi::PROVIDER_MC.iter() {
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
    for (n, by_filter) in dsp.smc.iter_mut().enumerate() {
        for (filter, by_avg) in by_filter.iter_mut().enumerate() {
            for (avg, entry) in by_avg.iter_mut().enumerate() {
                *entry = Some(SCALED_MC[(n * N_FILTERS + filter) * 2 + avg]);
            }
        }
    }
    ctx()
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
