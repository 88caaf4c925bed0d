//! FFmpeg 5.1's `VP9DSPContext` (libavcodec/vp9dsp.h), which is internal to FFmpeg and so not
//! in any -sys crate. The layout must match byte for byte: it is checked by size here and
//! against FFmpeg's own `ff_vp9dsp_init` in the tests.

use std::os::raw::c_int;

pub type IntraPredFn =
    unsafe extern "C" fn(dst: *mut u8, stride: isize, left: *const u8, top: *const u8);
pub type ItxfmAddFn =
    unsafe extern "C" fn(dst: *mut u8, stride: isize, block: *mut i16, eob: c_int);
pub type LoopFilterFn =
    unsafe extern "C" fn(dst: *mut u8, stride: isize, mb_lim: c_int, lim: c_int, hev_thr: c_int);
pub type McFn = unsafe extern "C" fn(
    dst: *mut u8,
    dst_stride: isize,
    src: *const u8,
    src_stride: isize,
    h: c_int,
    mx: c_int,
    my: c_int,
);
pub type ScaledMcFn = unsafe extern "C" fn(
    dst: *mut u8,
    dst_stride: isize,
    src: *const u8,
    src_stride: isize,
    h: c_int,
    mx: c_int,
    my: c_int,
    dx: c_int,
    dy: c_int,
);

/// Transform sizes (4x4, 8x8, 16x16, 32x32) plus the lossless WHT row.
pub const N_TXFM_SIZES: usize = 4;
/// DCT_DCT, DCT_ADST, ADST_DCT, ADST_ADST.
pub const N_TXFM_TYPES: usize = 4;
pub const N_INTRA_PRED_MODES: usize = 15;
/// smooth, regular, sharp, bilinear.
pub const N_FILTERS: usize = 4;

/// `mc[width][filter]`: `[put/avg][mx != 0][my != 0]`.
pub type McByFilter = [[[Option<McFn>; 2]; 2]; 2];

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Vp9DspContext {
    pub intra_pred: [[Option<IntraPredFn>; N_INTRA_PRED_MODES]; N_TXFM_SIZES],
    /// `[tx size, 4 = lossless][tx type]`.
    pub itxfm_add: [[Option<ItxfmAddFn>; N_TXFM_TYPES]; N_TXFM_SIZES + 1],
    /// `[wd 4/8/16][0 = h (vertical edge), 1 = v]`.
    pub loop_filter_8: [[Option<LoopFilterFn>; 2]; 3],
    pub loop_filter_16: [Option<LoopFilterFn>; 2],
    pub loop_filter_mix2: [[[Option<LoopFilterFn>; 2]; 2]; 2],
    /// `[64 >> n width][filter][put/avg][mx != 0][my != 0]`.
    pub mc: [[McByFilter; N_FILTERS]; 5],
    pub smc: [[[Option<ScaledMcFn>; 2]; N_FILTERS]; 5],
}

const _: () = assert!(std::mem::size_of::<Vp9DspContext>() == 296 * std::mem::size_of::<usize>());

impl Vp9DspContext {
    pub const fn empty() -> Self {
        Vp9DspContext {
            intra_pred: [[None; N_INTRA_PRED_MODES]; N_TXFM_SIZES],
            itxfm_add: [[None; N_TXFM_TYPES]; N_TXFM_SIZES + 1],
            loop_filter_8: [[None; 2]; 3],
            loop_filter_16: [None; 2],
            loop_filter_mix2: [[[None; 2]; 2]; 2],
            mc: [[[[[None; 2]; 2]; 2]; N_FILTERS]; 5],
            smc: [[[None; 2]; N_FILTERS]; 5],
        }
    }
}

/// Where FFmpeg's table keeps a motion-compensation function: `[64 >> n][filter][avg][h][v]`.
fn mc_position(f: crate::kernels::mc::McFunction) -> [usize; 5] {
    let size = crate::kernels::mc::McFunction::WIDTHS
        .iter()
        .position(|&w| w == f.width)
        .expect("a width of the table");
    [
        size,
        f.filter as usize,
        f.avg as usize,
        f.h as usize,
        f.v as usize,
    ]
}

impl Vp9DspContext {
    /// The table entry of a motion-compensation function.
    pub fn mc_entry(&mut self, f: crate::kernels::mc::McFunction) -> &mut Option<McFn> {
        let [n, filter, avg, h, v] = mc_position(f);
        &mut self.mc[n][filter][avg][h][v]
    }

    pub fn mc_fn(&self, f: crate::kernels::mc::McFunction) -> Option<McFn> {
        let [n, filter, avg, h, v] = mc_position(f);
        self.mc[n][filter][avg][h][v]
    }

    /// The table entry of a loop-filter function.
    pub fn lf_entry(&mut self, f: crate::kernels::lf::LfFunction) -> &mut Option<LoopFilterFn> {
        match lf_position(f) {
            LfPosition::Lines8(size, dir) => &mut self.loop_filter_8[size][dir],
            LfPosition::Lines16(dir) => &mut self.loop_filter_16[dir],
            LfPosition::Mix2(a, b, dir) => &mut self.loop_filter_mix2[a][b][dir],
        }
    }

    pub fn lf_fn(&self, f: crate::kernels::lf::LfFunction) -> Option<LoopFilterFn> {
        match lf_position(f) {
            LfPosition::Lines8(size, dir) => self.loop_filter_8[size][dir],
            LfPosition::Lines16(dir) => self.loop_filter_16[dir],
            LfPosition::Mix2(a, b, dir) => self.loop_filter_mix2[a][b][dir],
        }
    }
}

/// Where a loop-filter function sits in FFmpeg's three tables.
enum LfPosition {
    Lines8(usize, usize),
    Lines16(usize),
    Mix2(usize, usize, usize),
}

fn lf_position(f: crate::kernels::lf::LfFunction) -> LfPosition {
    use crate::kernels::lf::LfFunction;
    match f {
        LfFunction::Lines8 { wd, dir } => {
            let size = [4, 8, 16]
                .iter()
                .position(|&w| w == wd)
                .expect("wd 4, 8 or 16");
            LfPosition::Lines8(size, dir as usize)
        }
        LfFunction::Lines16 { dir } => LfPosition::Lines16(dir as usize),
        LfFunction::Mix2 { wd1, wd2, dir } => {
            LfPosition::Mix2((wd1 == 8) as usize, (wd2 == 8) as usize, dir as usize)
        }
    }
}

/// FFmpeg's tx type index (`itxfm_add[size][type]`) for a pair of 1-D transforms, as
/// `vp9dsp_itxfm_init` fills the table: `[DCT_ADST]` holds `iadst_idct`, `[ADST_DCT]` holds
/// `idct_iadst`.
pub fn ffmpeg_tx_type(first_is_adst: bool, second_is_adst: bool) -> usize {
    match (first_is_adst, second_is_adst) {
        (false, false) => 0, // DCT_DCT
        (true, false) => 1,  // DCT_ADST
        (false, true) => 2,  // ADST_DCT
        (true, true) => 3,   // ADST_ADST
    }
}
