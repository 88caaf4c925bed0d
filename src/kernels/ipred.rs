//! VP9 intra prediction, 8-bit: the CPU reference.
//!
//! It reproduces FFmpeg 5.1 bit for bit:
//! - [`predict`]: the 15 predictors × 4 transform sizes of `vp9dsp_template.c`
//!   (`vert_NxN_c` … `dc_129_NxN_c`, installed by `ff_vp9dsp_intrapred_init` as
//!   `dsp->intra_pred[tx][mode]`);
//! - [`check_intra_mode`]: the mode conversion and edge construction of `check_intra_mode` in
//!   `vp9recon.c`, which `intra_recon` runs before each `intra_pred` call.
//!
//! # Conventions (the shader port follows them)
//! - Modes are FFmpeg's `enum IntraPredMode` (`vp9.h`): [`VERT_PRED`] = 0 … [`DC_129_PRED`] =
//!   14. A block's coded mode is one of the first 10; [`mode_conv`] maps it to the mode that
//!   is run, by which edges exist.
//! - Sizes are `size_log2` = FFmpeg's `enum TxfmMode` (0..=3 for 4x4..32x32), `n = 4 << size_log2`.
//! - `left` is FFmpeg's `l` buffer as is: REVERSED, `left[n - 1]` beside the block's top row
//!   and `left[0]` beside its bottom row, for every mode but [`HOR_UP_PRED`], whose left edge
//!   is in picture order (`left[0]` beside the top row; `check_intra_mode`'s `invert_left`).
//! - `top[i]` is FFmpeg's `top[i]` (above column `i`); FFmpeg's `top[-1]` is the separate
//!   `topleft`. The 4x4 [`DIAG_DOWN_LEFT_PRED`] and [`VERT_LEFT_PRED`] also read the top-right
//!   `top[4..8]`. FFmpeg's call is `intra_pred[size_log2][mode](dst, stride, left, t + 1)` with
//!   `t = [topleft, top[0], top[1], ...]`.
//! - Output is `n * n` pixels, row-major; the predictors write nothing else.
//!
//! # How the arithmetic is written
//! FFmpeg builds most directional predictors as a line of filtered edge values (`v`, `ve`,
//! `vo`) and copies windows of it into the rows. Here every pixel is a closed form of its
//! position, so that a GPU invocation can compute any pixel on its own: the edges are laid
//! out as one line `e` = `left[0..n]`, `topleft`, `top[0..]` (so `e[n + 1 + i] = top[i]`, and
//! for the reversed left edge `e` runs from the bottom-left corner up and then right), and each
//! mode reads a window of it. Every formula names the FFmpeg value it equals.
//!
//! # Bit depth
//! [`predict`] is 8-bit, [`predict_high`] 10- and 12-bit: all arithmetic is in `i32` (pixel
//! sums of a 32x32 DC fit easily), and only TM's clip to `(1 << bit_depth) - 1` and the values
//! of DC_127/128/129 depend on the depth (FFmpeg's 12-bit table reuses the 10-bit functions
//! but for those). The edges [`check_intra_mode`] builds are 8-bit.

/// `128 << (bit_depth - 8)`: DC_128's value; FFmpeg's missing edges are this ± 1.
fn mid(bit_depth: u32) -> i32 {
    128 << (bit_depth - 8)
}

pub const VERT_PRED: u8 = 0;
pub const HOR_PRED: u8 = 1;
pub const DC_PRED: u8 = 2;
pub const DIAG_DOWN_LEFT_PRED: u8 = 3;
pub const DIAG_DOWN_RIGHT_PRED: u8 = 4;
pub const VERT_RIGHT_PRED: u8 = 5;
pub const HOR_DOWN_PRED: u8 = 6;
pub const VERT_LEFT_PRED: u8 = 7;
pub const HOR_UP_PRED: u8 = 8;
pub const TM_VP8_PRED: u8 = 9;
pub const LEFT_DC_PRED: u8 = 10;
pub const TOP_DC_PRED: u8 = 11;
pub const DC_128_PRED: u8 = 12;
pub const DC_127_PRED: u8 = 13;
pub const DC_129_PRED: u8 = 14;
/// FFmpeg's `N_INTRA_PRED_MODES`.
pub const N_MODES: usize = 15;
/// Modes a block can code (before [`mode_conv`]): `VERT_PRED..=TM_VP8_PRED`.
pub const N_CODED_MODES: usize = 10;

/// FFmpeg's names of the modes, for messages.
pub const MODE_NAMES: [&str; N_MODES] = [
    "VERT_PRED",
    "HOR_PRED",
    "DC_PRED",
    "DIAG_DOWN_LEFT_PRED",
    "DIAG_DOWN_RIGHT_PRED",
    "VERT_RIGHT_PRED",
    "HOR_DOWN_PRED",
    "VERT_LEFT_PRED",
    "HOR_UP_PRED",
    "TM_VP8_PRED",
    "LEFT_DC_PRED",
    "TOP_DC_PRED",
    "DC_128_PRED",
    "DC_127_PRED",
    "DC_129_PRED",
];

/// Entries of `top` that [`predict`] reads for `mode` at `size_log2`: `n`, or 8 for the 4x4
/// predictors that use the top-right (the others read `top[0..n]` or nothing).
pub fn top_len(mode: u8, size_log2: usize) -> usize {
    if size_log2 == 0 && (mode == DIAG_DOWN_LEFT_PRED || mode == VERT_LEFT_PRED) {
        8
    } else {
        4 << size_log2
    }
}

/// `(a + b + 1) >> 1`
fn avg2(a: i32, b: i32) -> i32 {
    (a + b + 1) >> 1
}

/// `(a + 2b + c + 2) >> 2`; FFmpeg's `(a + b * 3 + 2) >> 2` at the end of an edge is
/// `avg3(a, b, b)`, written out below where FFmpeg writes it.
fn avg3(a: i32, b: i32, c: i32) -> i32 {
    (a + b * 2 + c + 2) >> 2
}

/// Longest edge line: `left[32]`, `topleft`, `top[32]`.
const EDGE_LINE: usize = 2 * 32 + 1;

/// Predicts an `n` x `n` block (`n = 4 << size_log2`) into `out[y * n + x]`, as FFmpeg's
/// `intra_pred[size_log2][mode]` would write `dst[x + y * stride]`.
///
/// - `mode`: any of the 15 (`< N_MODES`), as run (after [`mode_conv`]).
/// - `left`: at least `n` entries, reversed (`left[n - 1]` beside row 0) except for
///   [`HOR_UP_PRED`] (`left[0]` beside row 0). Read by HOR, DC, DDR, VR, HD, HU, TM, LEFT_DC.
/// - `top`: at least [`top_len`] entries; `top[i]` above column `i`, and for the 4x4 DDL/VL
///   `top[4..8]` is the top-right. Read by VERT, DC, DDL, DDR, VR, HD, VL, TM, TOP_DC.
/// - `topleft`: FFmpeg's `top[-1]`. Read by DDR, VR, HD, TM.
///
/// Panics on a mode or size out of range, or on slices shorter than the above.
pub fn predict(mode: u8, size_log2: usize, left: &[u8], top: &[u8], topleft: u8, out: &mut [u8]) {
    let wide = |v: &[u8]| v.iter().map(|&p| p as i32).collect::<Vec<_>>();
    let edges = (wide(left), wide(top), topleft as i32);
    predict_depth(mode, size_log2, edges, 8, |i, v| out[i] = v as u8);
}

/// [`predict`] at 10 or 12 bits: pixels of `bit_depth` bits in 16-bit words.
pub fn predict_high(
    mode: u8,
    size_log2: usize,
    (left, top, topleft): (&[u16], &[u16], u16),
    bit_depth: u32,
    out: &mut [u16],
) {
    let wide = |v: &[u16]| v.iter().map(|&p| p as i32).collect::<Vec<_>>();
    let edges = (wide(left), wide(top), topleft as i32);
    predict_depth(mode, size_log2, edges, bit_depth, |i, v| out[i] = v as u16);
}

/// [`predict`] at `bit_depth`: pixel `i` (`y * n + x`) goes to `put(i, value)`.
fn predict_depth(
    mode: u8,
    size_log2: usize,
    (left, top, topleft): (Vec<i32>, Vec<i32>, i32),
    bit_depth: u32,
    mut put: impl FnMut(usize, i32),
) {
    assert!((mode as usize) < N_MODES, "no intra mode {mode}");
    assert!(size_log2 < 4, "no transform size {size_log2}");
    let n = 4 << size_log2;
    let tn = top_len(mode, size_log2);
    assert!(left.len() >= n, "left needs {n} entries");
    assert!(top.len() >= tn, "top needs {tn} entries");

    // The edge line: e[0..n] = left as given, e[n] = topleft, e[n + 1 + i] = top[i].
    let mut e = [0i32; EDGE_LINE];
    e[..n].copy_from_slice(&left[..n]);
    e[n] = topleft;
    e[n + 1..n + 1 + tn].copy_from_slice(&top[..tn]);
    let dc = dc_value(mode, size_log2, &e, bit_depth);
    let max = (1 << bit_depth) - 1;
    for y in 0..n {
        for x in 0..n {
            put(y * n + x, pixel(mode, size_log2, x, y, &e, dc, max));
        }
    }
}

/// The single value of the DC modes (0 for the others): FFmpeg's rounded means.
fn dc_value(mode: u8, size_log2: usize, e: &[i32; EDGE_LINE], bit_depth: u32) -> i32 {
    let n = 4 << size_log2;
    let sum_left: i32 = e[..n].iter().sum();
    let sum_top: i32 = e[n + 1..2 * n + 1].iter().sum();
    let log2n = size_log2 as u32 + 2;
    match mode {
        DC_PRED => (sum_left + sum_top + n as i32) >> (log2n + 1),
        LEFT_DC_PRED => (sum_left + (n as i32 >> 1)) >> log2n,
        TOP_DC_PRED => (sum_top + (n as i32 >> 1)) >> log2n,
        DC_128_PRED => mid(bit_depth),
        DC_127_PRED => mid(bit_depth) - 1,
        DC_129_PRED => mid(bit_depth) + 1,
        _ => 0,
    }
}

/// Pixel (`x`, `y`) of the block; `e` is the edge line of [`predict`], `dc` from [`dc_value`],
/// `max` the largest pixel value.
fn pixel(
    mode: u8,
    size_log2: usize,
    x: usize,
    y: usize,
    e: &[i32; EDGE_LINE],
    dc: i32,
    max: i32,
) -> i32 {
    let n = 4 << size_log2;
    // left[i] (in the order given), topleft, top[i].
    let l = |i: usize| e[i];
    let tl = e[n];
    let t = |i: usize| e[n + 1 + i];
    match mode {
        VERT_PRED => t(x),
        // Reversed left: row y's neighbour is left[n - 1 - y].
        HOR_PRED => l(n - 1 - y),
        TM_VP8_PRED => (t(x) + l(n - 1 - y) - tl).clamp(0, max),
        DIAG_DOWN_LEFT_PRED => diag_down_left(n, x, y, e),
        DIAG_DOWN_RIGHT_PRED => {
            // v[k] of def_diag_downright (the same formula at 4x4), k = n - 1 - y + x:
            // v[k] = avg3(e[k], e[k + 1], e[k + 2]) along left (bottom up), topleft, top.
            let k = n - 1 - y + x;
            avg3(e[k], e[k + 1], e[k + 2])
        }
        VERT_RIGHT_PRED => vert_right(n, x, y, e),
        HOR_DOWN_PRED => hor_down(n, x, y, e),
        VERT_LEFT_PRED => vert_left(n, x, y, e),
        HOR_UP_PRED => hor_up(n, x, y, e),
        DC_PRED | LEFT_DC_PRED | TOP_DC_PRED | DC_128_PRED | DC_127_PRED | DC_129_PRED => dc,
        _ => unreachable!("mode checked by predict"),
    }
}

/// Diagonal down-left (`diag_downleft_*_c`). `e` as [`pixel`] reads it.
fn diag_down_left(n: usize, x: usize, y: usize, e: &[i32; EDGE_LINE]) -> i32 {
    let t = |i: usize| e[n + 1 + i];
    let d = x + y;
    if n == 4 {
        // diag_downleft_4x4_c: filters into the top-right; the last pixel is a7 itself.
        if d < 6 {
            avg3(t(d), t(d + 1), t(d + 2))
        } else {
            t(7)
        }
    } else if d < n - 2 {
        // v[d] of def_diag_downleft; pixels at d >= n - 1 are top[n - 1] (memset).
        avg3(t(d), t(d + 1), t(d + 2))
    } else if d == n - 2 {
        (t(n - 2) + t(n - 1) * 3 + 2) >> 2
    } else {
        t(n - 1)
    }
}

/// Vertical-right (`vert_right_*_c`). `e` as [`pixel`] reads it.
fn vert_right(n: usize, x: usize, y: usize, e: &[i32; EDGE_LINE]) -> i32 {
    // Row 2j (2j + 1) is ve (vo) of def_vert_right from index n/2 - 1 - j; m is the
    // offset from ve/vo[n/2 - 1], the values at the top-left corner.
    let m = x as isize - (y / 2) as isize;
    if m >= 0 {
        let m = m as usize;
        if y % 2 == 0 {
            // ve[n/2 - 1 + m]: avg2(top[m - 1], top[m]), top[-1] = topleft.
            avg2(e[n + m], e[n + m + 1])
        } else {
            // vo[n/2 - 1 + m]: avg3(top[m - 2], top[m - 1], top[m]), top[-2] = left[n - 1].
            avg3(e[n + m - 1], e[n + m], e[n + m + 1])
        }
    } else {
        // Down the left edge in steps of two: ve[n/2 - 1 - k] and vo[n/2 - 1 - k].
        let k = (-m) as usize;
        if y % 2 == 0 {
            avg3(e[n - 2 * k], e[n - 2 * k + 1], e[n - 2 * k + 2])
        } else {
            avg3(e[n - 2 * k - 1], e[n - 2 * k], e[n - 2 * k + 1])
        }
    }
}

/// Horizontal-down (`hor_down_*_c`). `e` as [`pixel`] reads it.
fn hor_down(n: usize, x: usize, y: usize, e: &[i32; EDGE_LINE]) -> i32 {
    // Row y is v of def_hor_down (the same formula at 4x4) from index 2n - 2 - 2y.
    let k = 2 * n - 2 - 2 * y + x;
    if k < 2 * n {
        // Pairs up the left edge into the top-left: v[2i] = avg2(e[i], e[i + 1]),
        // v[2i + 1] = avg3(e[i], e[i + 1], e[i + 2]).
        let i = k / 2;
        if k % 2 == 0 {
            avg2(e[i], e[i + 1])
        } else {
            avg3(e[i], e[i + 1], e[i + 2])
        }
    } else {
        // v[2n + i] = avg3(top[i - 1], top[i], top[i + 1]).
        let i = k - 2 * n;
        avg3(e[n + i], e[n + i + 1], e[n + i + 2])
    }
}

/// Vertical-left (`vert_left_*_c`). `e` as [`pixel`] reads it.
fn vert_left(n: usize, x: usize, y: usize, e: &[i32; EDGE_LINE]) -> i32 {
    let t = |i: usize| e[n + 1 + i];
    // Row 2j (2j + 1) is ve (vo) from index j; i = x + j.
    let i = x + y / 2;
    if n == 4 {
        // vert_left_4x4_c: filters into the top-right (reads up to top[6]).
        if y % 2 == 0 {
            avg2(t(i), t(i + 1))
        } else {
            avg3(t(i), t(i + 1), t(i + 2))
        }
    } else if i >= n - 1 {
        // def_vert_left's memset of top[n - 1].
        t(n - 1)
    } else if y % 2 == 0 {
        avg2(t(i), t(i + 1))
    } else if i < n - 2 {
        avg3(t(i), t(i + 1), t(i + 2))
    } else {
        (t(n - 2) + t(n - 1) * 3 + 2) >> 2
    }
}

/// Horizontal-up (`hor_up_*_c`). `e` as [`pixel`] reads it.
fn hor_up(n: usize, x: usize, y: usize, e: &[i32; EDGE_LINE]) -> i32 {
    let l = |i: usize| e[i];
    // Left in picture order. Row y is v of def_hor_up (the same at 4x4) from index 2y;
    // past v's end, left[n - 1] (memset).
    let k = 2 * y + x;
    let i = k / 2;
    if k >= 2 * n - 2 {
        l(n - 1)
    } else if k % 2 == 0 {
        avg2(l(i), l(i + 1))
    } else if i < n - 2 {
        avg3(l(i), l(i + 1), l(i + 2))
    } else {
        (l(n - 2) + l(n - 1) * 3 + 2) >> 2
    }
}

/// `mode_conv[mode][have_left][have_top]` of `check_intra_mode`: the mode run for a coded
/// `mode` (`< N_CODED_MODES`) by which edges exist. Modes needing a missing edge become a
/// constant DC or a simpler mode; DDR, VR and HD stay (their missing edges are 127/129).
pub fn mode_conv(mode: u8, have_left: bool, have_top: bool) -> u8 {
    // [mode][have_left][have_top]
    const CONV: [[[u8; 2]; 2]; N_CODED_MODES] = [
        [[DC_127_PRED, VERT_PRED], [DC_127_PRED, VERT_PRED]],
        [[DC_129_PRED, DC_129_PRED], [HOR_PRED, HOR_PRED]],
        [[DC_128_PRED, TOP_DC_PRED], [LEFT_DC_PRED, DC_PRED]],
        [
            [DC_127_PRED, DIAG_DOWN_LEFT_PRED],
            [DC_127_PRED, DIAG_DOWN_LEFT_PRED],
        ],
        [[DIAG_DOWN_RIGHT_PRED; 2]; 2],
        [[VERT_RIGHT_PRED; 2]; 2],
        [[HOR_DOWN_PRED; 2]; 2],
        [[DC_127_PRED, VERT_LEFT_PRED], [DC_127_PRED, VERT_LEFT_PRED]],
        [[DC_129_PRED, DC_129_PRED], [HOR_UP_PRED, HOR_UP_PRED]],
        [[DC_129_PRED, VERT_PRED], [HOR_PRED, TM_VP8_PRED]],
    ];
    assert!(
        (mode as usize) < N_CODED_MODES,
        "no coded intra mode {mode}"
    );
    CONV[mode as usize][have_left as usize][have_top as usize]
}

/// The edges a mode reads: `check_intra_mode`'s `edges[]` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct EdgeNeeds {
    pub left: bool,
    pub top: bool,
    pub topleft: bool,
    /// Only the 4x4 predictors use it.
    pub topright: bool,
    /// The left edge in picture order instead of reversed (HOR_UP).
    pub invert_left: bool,
}

/// [`EdgeNeeds`] of each of the 15 modes.
pub const EDGE_NEEDS: [EdgeNeeds; N_MODES] = {
    const fn needs(left: bool, top: bool, topleft: bool, topright: bool) -> EdgeNeeds {
        EdgeNeeds {
            left,
            top,
            topleft,
            topright,
            invert_left: false,
        }
    }
    [
        needs(false, true, false, false), // VERT
        needs(true, false, false, false), // HOR
        needs(true, true, false, false),  // DC
        needs(false, true, false, true),  // DIAG_DOWN_LEFT
        needs(true, true, true, false),   // DIAG_DOWN_RIGHT
        needs(true, true, true, false),   // VERT_RIGHT
        needs(true, true, true, false),   // HOR_DOWN
        needs(false, true, false, true),  // VERT_LEFT
        EdgeNeeds {
            invert_left: true,
            ..needs(true, false, false, false)
        }, // HOR_UP
        needs(true, true, true, false),   // TM_VP8
        needs(true, false, false, false), // LEFT_DC
        needs(false, true, false, false), // TOP_DC
        needs(false, false, false, false), // DC_128
        needs(false, false, false, false), // DC_127
        needs(false, false, false, false), // DC_129
    ]
};

/// What exists around a transform block, as `check_intra_mode` derives it. FFmpeg's names:
/// `row`, `col` (the 8x8 block), `x`, `y` (the transform block inside it, in 4-pixel units of
/// the plane), `w` (the block's width in those units), `ss_h`, `ss_v` (the plane's
/// subsampling), `s->cols`, `s->rows` (the frame in 8x8 blocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Availability {
    /// `col > td->tile_col_start || x > 0`
    pub have_left: bool,
    /// `row > 0 || y > 0`
    pub have_top: bool,
    /// `x < w - 1`: another transform column of the same block to the right (only the 4x4
    /// top-right depends on it).
    pub have_right: bool,
    /// The top edge's `n_px_have`, `(((s->cols - col) << !ss_h) - x) * 4`: pixels from the
    /// block's left column to the right end of the frame's 8x8-aligned width (at least 1;
    /// FFmpeg's is a multiple of 4, at least 4).
    pub top_px_have: usize,
    /// The left edge's `n_px_have`, `(((s->rows - row) << !ss_v) - y) * 4`: rows from the
    /// block's top row to the bottom of the frame's 8x8-aligned height (at least 1).
    pub left_px_have: usize,
}

/// The converted mode and the edges [`predict`] takes for it, exactly as FFmpeg fills `a`
/// (`top`, `top[-1]`) and `l` before `intra_pred[tx][mode](dst, stride, l, a)`.
///
/// Entries the mode does not read are 0 (FFmpeg leaves whatever its buffers held there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edges {
    /// The mode to run (one of the 15).
    pub mode: u8,
    /// `left[0..n]`: reversed, or in picture order for HOR_UP (see the module doc).
    pub left: [u8; 32],
    /// `top[0..n]`, and at 4x4 `top[4..8]` for the top-right.
    pub top: [u8; 32],
    /// FFmpeg's `top[-1]`.
    pub topleft: u8,
}

/// `check_intra_mode` of `vp9recon.c` without the frame: converts the coded `mode`
/// (`< N_CODED_MODES`) and builds the edges of a `4 << size_log2` block.
///
/// The neighbours come through accessors, called only for pixels FFmpeg reads:
/// - `top_pixel(i)`: the pixel above column `i` (`i < min(top_px_have, n)`, or `4 <= i < 8`
///   for a 4x4 top-right). FFmpeg reads the reconstructed row above, or at the top of a
///   superblock row (`!(row & 7) && !y`) its pre-loop-filter copy `s->intra_pred_data[p]`;
/// - `left_pixel(i)`: the pixel left of row `i`, counted from the top (`i < min(left_px_have,
///   n)`), from the reconstructed picture;
/// - `topleft_pixel()`: the pixel above-left of the block, from the same line as `top_pixel`.
///
/// What FFmpeg does, and so this:
/// - top: missing (`!have_top`) → all `127`; else the first `min(n, top_px_have)` pixels and
///   the last of them repeated to `n`;
/// - top-left (modes that need it): both top and left → the pixel; top only → `129`; no top →
///   `127`;
/// - 4x4 top-right (DDL, VL): `top[4..8]` from the picture when `have_top && have_right &&
///   top_px_have >= 8`, else `top[3]` repeated;
/// - left: missing → all `129`; else the first `min(n, left_px_have)` pixels, reversed into
///   `left[n - 1]` downwards (HOR_UP: into `left[0]` upwards), the last (lowest) repeated
///   into the rest.
///
/// FFmpeg sometimes skips the copy and passes a pointer into the picture as `top`: when the
/// row above exists, the top-left exists (or is unneeded) and lies on the same line, the 4x4
/// top-right is inside the block (or unneeded), and the needed pixels are within
/// `top_px_have`. The predictor then reads exactly the pixels this copies (`top[0..n]`,
/// `top[-1]`, `top[4..8]`), so the values are the same and there is one path here.
pub fn check_intra_mode(
    mode: u8,
    size_log2: usize,
    avail: Availability,
    mut top_pixel: impl FnMut(usize) -> u8,
    mut left_pixel: impl FnMut(usize) -> u8,
    mut topleft_pixel: impl FnMut() -> u8,
) -> Edges {
    assert!(size_log2 < 4, "no transform size {size_log2}");
    let n = 4 << size_log2;
    let mode = mode_conv(mode, avail.have_left, avail.have_top);
    let needs = EDGE_NEEDS[mode as usize];
    let mut edges = Edges {
        mode,
        left: [0; 32],
        top: [0; 32],
        topleft: 0,
    };

    if needs.top {
        let top = &mut edges.top;
        if avail.have_top {
            assert!(avail.top_px_have >= 1, "a block starts inside the frame");
            let have = avail.top_px_have.min(n);
            for (i, v) in top[..have].iter_mut().enumerate() {
                *v = top_pixel(i);
            }
            // Past the frame's right edge: the last pixel repeated.
            let last = top[have - 1];
            top[have..n].fill(last);
        } else {
            top[..n].fill((mid(8) - 1) as u8);
        }
        if needs.topleft {
            edges.topleft = match (avail.have_left, avail.have_top) {
                (true, true) => topleft_pixel(),
                (false, true) => (mid(8) + 1) as u8,
                (_, false) => (mid(8) - 1) as u8,
            };
        }
        if size_log2 == 0 && needs.topright {
            if avail.have_top && avail.have_right && avail.top_px_have >= 8 {
                for (v, i) in top[4..8].iter_mut().zip(4..) {
                    *v = top_pixel(i);
                }
            } else {
                let last = top[3];
                top[4..8].fill(last);
            }
        }
    }

    if needs.left {
        let left = &mut edges.left;
        if avail.have_left {
            assert!(avail.left_px_have >= 1, "a block starts inside the frame");
            let have = avail.left_px_have.min(n);
            if needs.invert_left {
                for (i, v) in left[..have].iter_mut().enumerate() {
                    *v = left_pixel(i);
                }
                let last = left[have - 1];
                left[have..n].fill(last);
            } else {
                for i in 0..have {
                    left[n - 1 - i] = left_pixel(i);
                }
                // The lowest available pixel sits at left[n - have]; below it, repeated.
                let last = left[n - have];
                left[..n - have].fill(last);
            }
        } else {
            left[..n].fill((mid(8) + 1) as u8);
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After conversion a mode reads only edges that exist, except DDR, VR and HD, which
    /// FFmpeg keeps and feeds with 127/129.
    #[test]
    fn converted_modes_need_only_existing_edges() {
        for mode in 0..N_CODED_MODES as u8 {
            for (have_left, have_top) in
                [(false, false), (false, true), (true, false), (true, true)]
            {
                let run = mode_conv(mode, have_left, have_top);
                if matches!(run, DIAG_DOWN_RIGHT_PRED | VERT_RIGHT_PRED | HOR_DOWN_PRED) {
                    assert_eq!(run, mode);
                    continue;
                }
                let needs = EDGE_NEEDS[run as usize];
                assert!(!needs.left || have_left, "{mode} -> {run}");
                assert!(!needs.top || have_top, "{mode} -> {run}");
                assert!(!needs.topleft || (have_left && have_top), "{mode} -> {run}");
            }
        }
    }

    #[test]
    fn top_len_covers_the_top_right() {
        assert_eq!(top_len(DIAG_DOWN_LEFT_PRED, 0), 8);
        assert_eq!(top_len(VERT_LEFT_PRED, 0), 8);
        assert_eq!(top_len(DIAG_DOWN_LEFT_PRED, 1), 8);
        assert_eq!(top_len(VERT_PRED, 0), 4);
        assert_eq!(top_len(VERT_LEFT_PRED, 3), 32);
    }
}
