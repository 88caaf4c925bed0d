//! The DSP exports: FFmpeg's VP9 inverse transforms, motion compensation and loop filters
//! (one call each, and `daedalus_vp9_loopfilter_sb` for a superblock), and dav1d's CDEF
//! blocks. Each records its call for the calling thread's next `daedalus_flush()`.

use crate::batch;
use crate::kernels::cdef;
use crate::kernels::itx::{Transform, Tx1d, TxSize};
use crate::kernels::lf::{LfDir, LfFunction};
use crate::kernels::mc::{McFilter, McFunction};
use crate::log::guard;
use crate::stats::{self, COUNTERS};
use crate::vp9dsp::{LoopFilterFn, McFn};
use std::ffi::c_int;

unsafe fn itx_entry(tx: Transform, dst: *mut u8, stride: isize, block: *mut i16, eob: c_int) {
    guard("a transform call", (), || {
        if dst.is_null() || block.is_null() {
            stats::add(&COUNTERS.rejected, 1);
            crate::log::once(
                crate::log::Level::Warn,
                "null-pointer",
                format_args!("a transform call with a null pointer was ignored"),
            );
            return;
        }
        batch::record_itx(tx, dst, stride, block, eob, batch::Origin::Api)
    })
}

fn reject_null(what: &str) {
    stats::add(&COUNTERS.rejected, 1);
    crate::log::once(
        crate::log::Level::Warn,
        "null-pointer",
        format_args!("a {what} call with a null pointer was ignored"),
    );
}

#[allow(clippy::too_many_arguments)]
unsafe fn mc_entry(
    f: McFunction,
    origin: batch::Origin,
    dst: *mut u8,
    dst_stride: isize,
    src: *const u8,
    src_stride: isize,
    h: c_int,
    mx: c_int,
    my: c_int,
) {
    guard("a motion-compensation call", (), || {
        if dst.is_null() || src.is_null() {
            return reject_null("motion-compensation");
        }
        batch::record_mc(f, dst, dst_stride, src, src_stride, h, mx, my, origin)
    })
}

unsafe fn lf_entry(
    f: LfFunction,
    origin: batch::Origin,
    dst: *mut u8,
    stride: isize,
    e: c_int,
    i: c_int,
    h: c_int,
) {
    guard("a loop-filter call", (), || {
        if dst.is_null() {
            return reject_null("loop-filter");
        }
        batch::record_lf(f, dst, stride, e, i, h, origin)
    })
}

/// A superblock's loop filter from its C arguments (`level`: 64 bytes; `mask`: 128 bytes,
/// `[plane type][dir][row][width]`; the lookup tables: 64 bytes each), checked, then recorded.
/// Returns 0 when recorded, -1 for a null pointer or a subsampling other than 0 or 1.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn lf_sb_entry(
    origin: batch::Origin,
    dst: *const *mut u8,
    strides: [isize; 2],
    ss: [c_int; 2],
    row: c_int,
    col: c_int,
    tables: [*const u8; 4],
) -> c_int {
    guard("a superblock loop-filter call", -1, || {
        if dst.is_null() || tables.iter().any(|t| t.is_null()) {
            reject_null("superblock loop-filter");
            return -1;
        }
        let planes = [*dst, *dst.add(1), *dst.add(2)];
        if planes.iter().any(|p| p.is_null()) {
            reject_null("superblock loop-filter");
            return -1;
        }
        let [ss_h, ss_v] = ss;
        if !(0..=1).contains(&ss_h) || !(0..=1).contains(&ss_v) {
            stats::add(&COUNTERS.rejected, 1);
            return -1;
        }
        let [level, mask, mblim_lut, lim_lut] = tables;
        let filter = crate::kernels::lf_sb::SbFilter {
            level: &*(level as *const [u8; 64]),
            mask: &*(mask as *const [[[[u8; 4]; 8]; 2]; 2]),
            mblim_lut: &*(mblim_lut as *const [u8; 64]),
            lim_lut: &*(lim_lut as *const [u8; 64]),
        };
        batch::record_lf_sb(
            filter,
            planes,
            strides,
            (row, col),
            (ss_h as usize, ss_v as usize),
            origin,
        );
        0
    })
}

/// FFmpeg's `ff_vp9_loopfilter_sb` for one superblock of an 8-bit frame, in one call instead
/// of one per edge: `dst[p]` is the superblock's top-left pixel in plane `p` (rows `ls_y` or
/// `ls_uv` bytes apart), `ss_h`/`ss_v` the chroma subsampling (0 or 1), `row` and `col` its
/// position in 8x8 blocks (edges at the frame's top and left are not filtered), `level` and
/// `mask` a `VP9Filter`'s `level[64]` and `mask[2][2][8][4]`, `mblim_lut` and `lim_lut` the
/// frame's 64-entry threshold tables. Returns 0 once recorded (the result is in the planes once
/// `daedalus_flush()` returns), -1 for a null pointer or another subsampling.
///
/// # Safety
/// As for FFmpeg's function: every pixel the superblock's edges reach must be valid and stay
/// untouched until the calling thread's next `daedalus_flush()`; the tables must hold their
/// sizes in bytes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn daedalus_vp9_loopfilter_sb(
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
    lf_sb_entry(
        batch::Origin::Api,
        dst,
        [ls_y, ls_uv],
        [ss_h, ss_v],
        row,
        col,
        [level, mask, mblim_lut, lim_lut],
    )
}

/// One CDEF call through the C ABI (strengths: primary, secondary, direction, damping):
/// checked, then recorded; a call outside what dav1d passes (both strengths 0, which its C
/// function asserts against; other ranges, bit depths than 10 and 12 for 16 bpc, misaligned
/// 16-bit pixels or strides) is counted as rejected and does nothing.
#[allow(clippy::too_many_arguments)]
unsafe fn cdef_entry(
    size: usize,
    two_bytes: bool,
    dst: *mut u8,
    stride: isize,
    left: *const u8,
    top: *const u8,
    bottom: *const u8,
    [primary, secondary, dir, damping]: [c_int; 4],
    edges: c_int,
    bitdepth_max: c_int,
) {
    guard("a CDEF call", (), || {
        let edges = edges as u32 & 15;
        let needs = |flag: u32, p: *const u8| edges & flag != 0 && p.is_null();
        if dst.is_null()
            || needs(cdef::HAVE_LEFT, left)
            || needs(cdef::HAVE_TOP, top)
            || needs(cdef::HAVE_BOTTOM, bottom)
        {
            return reject_null("CDEF");
        }
        // dav1d's 16 bpc functions serve 10 and 12 bits; their pixels are aligned `u16`s.
        let bits = match (two_bytes, bitdepth_max) {
            (false, _) => 8,
            (true, 1023) => 10,
            (true, 4095) => 12,
            _ => 0,
        };
        let aligned = |p: *const u8| !two_bytes || p as usize % 2 == 0;
        let valid = bits > 0
            && (0..=255).contains(&primary)
            && (0..=255).contains(&secondary)
            && primary + secondary > 0
            && (0..8).contains(&dir)
            && (0..32).contains(&damping)
            && aligned(dst)
            && aligned(left)
            && aligned(top)
            && aligned(bottom)
            && (!two_bytes || stride % 2 == 0);
        if !valid {
            stats::add(&COUNTERS.rejected, 1);
            return;
        }
        let call = cdef::CdefCall {
            dst,
            stride,
            left,
            top,
            bottom,
            strengths: cdef::Strengths {
                primary,
                secondary,
                dir,
                damping,
                bitdepth_min_8: bits - 8,
            },
            size,
            two_bytes,
            edges,
        };
        batch::record_cdef(call, batch::Origin::Api)
    })
}

/// dav1d 1.0.0's CDEF `fb[0]` (8x8: luma and 4:4:4 chroma), 8 bits per pixel: the result is in `dst`
/// once `daedalus_flush()` returns. Strides are in bytes.
///
/// # Safety
/// As for dav1d's function: the block at `dst` with two pixels to its right, `left` (one pair
/// per row), and two rows of `top` and `bottom` from two pixels left of the block to two right
/// of it must be valid where `edges` has those sides; the block must stay valid and untouched
/// until the calling thread's next `daedalus_flush()`.
#[no_mangle]
pub unsafe extern "C" fn daedalus_av1_cdef_filter_8x8_8bpc(
    dst: *mut u8,
    stride: isize,
    left: *const [u8; 2],
    top: *const u8,
    bottom: *const u8,
    pri_strength: c_int,
    sec_strength: c_int,
    dir: c_int,
    damping: c_int,
    edges: c_int,
) {
    let (l, t, b) = (left as *const u8, top, bottom);
    let s = [pri_strength, sec_strength, dir, damping];
    cdef_entry(0, false, dst, stride, l, t, b, s, edges, 255)
}

/// dav1d 1.0.0's CDEF `fb[0]` (8x8: luma and 4:4:4 chroma), 16 bits per pixel (`bitdepth_max`
/// 1023 or 4095; pixels at most `bitdepth_max`; pointers and stride even): as the 8-bit
/// function.
///
/// # Safety
/// As the 8-bit function, with two-byte pixels.
#[no_mangle]
pub unsafe extern "C" fn daedalus_av1_cdef_filter_8x8_16bpc(
    dst: *mut u16,
    stride: isize,
    left: *const [u16; 2],
    top: *const u16,
    bottom: *const u16,
    pri_strength: c_int,
    sec_strength: c_int,
    dir: c_int,
    damping: c_int,
    edges: c_int,
    bitdepth_max: c_int,
) {
    let (l, t, b) = (left as *const u8, top as *const u8, bottom as *const u8);
    let s = [pri_strength, sec_strength, dir, damping];
    cdef_entry(
        0,
        true,
        dst as *mut u8,
        stride,
        l,
        t,
        b,
        s,
        edges,
        bitdepth_max,
    )
}

/// dav1d 1.0.0's CDEF `fb[1]` (4x8: 4:2:2 chroma), 8 bits per pixel: the result is in `dst`
/// once `daedalus_flush()` returns. Strides are in bytes.
///
/// # Safety
/// As for dav1d's function: the block at `dst` with two pixels to its right, `left` (one pair
/// per row), and two rows of `top` and `bottom` from two pixels left of the block to two right
/// of it must be valid where `edges` has those sides; the block must stay valid and untouched
/// until the calling thread's next `daedalus_flush()`.
#[no_mangle]
pub unsafe extern "C" fn daedalus_av1_cdef_filter_4x8_8bpc(
    dst: *mut u8,
    stride: isize,
    left: *const [u8; 2],
    top: *const u8,
    bottom: *const u8,
    pri_strength: c_int,
    sec_strength: c_int,
    dir: c_int,
    damping: c_int,
    edges: c_int,
) {
    let (l, t, b) = (left as *const u8, top, bottom);
    let s = [pri_strength, sec_strength, dir, damping];
    cdef_entry(1, false, dst, stride, l, t, b, s, edges, 255)
}

/// dav1d 1.0.0's CDEF `fb[1]` (4x8: 4:2:2 chroma), 16 bits per pixel (`bitdepth_max`
/// 1023 or 4095; pixels at most `bitdepth_max`; pointers and stride even): as the 8-bit
/// function.
///
/// # Safety
/// As the 8-bit function, with two-byte pixels.
#[no_mangle]
pub unsafe extern "C" fn daedalus_av1_cdef_filter_4x8_16bpc(
    dst: *mut u16,
    stride: isize,
    left: *const [u16; 2],
    top: *const u16,
    bottom: *const u16,
    pri_strength: c_int,
    sec_strength: c_int,
    dir: c_int,
    damping: c_int,
    edges: c_int,
    bitdepth_max: c_int,
) {
    let (l, t, b) = (left as *const u8, top as *const u8, bottom as *const u8);
    let s = [pri_strength, sec_strength, dir, damping];
    cdef_entry(
        1,
        true,
        dst as *mut u8,
        stride,
        l,
        t,
        b,
        s,
        edges,
        bitdepth_max,
    )
}

/// dav1d 1.0.0's CDEF `fb[2]` (4x4: 4:2:0 chroma), 8 bits per pixel: the result is in `dst`
/// once `daedalus_flush()` returns. Strides are in bytes.
///
/// # Safety
/// As for dav1d's function: the block at `dst` with two pixels to its right, `left` (one pair
/// per row), and two rows of `top` and `bottom` from two pixels left of the block to two right
/// of it must be valid where `edges` has those sides; the block must stay valid and untouched
/// until the calling thread's next `daedalus_flush()`.
#[no_mangle]
pub unsafe extern "C" fn daedalus_av1_cdef_filter_4x4_8bpc(
    dst: *mut u8,
    stride: isize,
    left: *const [u8; 2],
    top: *const u8,
    bottom: *const u8,
    pri_strength: c_int,
    sec_strength: c_int,
    dir: c_int,
    damping: c_int,
    edges: c_int,
) {
    let (l, t, b) = (left as *const u8, top, bottom);
    let s = [pri_strength, sec_strength, dir, damping];
    cdef_entry(2, false, dst, stride, l, t, b, s, edges, 255)
}

/// dav1d 1.0.0's CDEF `fb[2]` (4x4: 4:2:0 chroma), 16 bits per pixel (`bitdepth_max`
/// 1023 or 4095; pixels at most `bitdepth_max`; pointers and stride even): as the 8-bit
/// function.
///
/// # Safety
/// As the 8-bit function, with two-byte pixels.
#[no_mangle]
pub unsafe extern "C" fn daedalus_av1_cdef_filter_4x4_16bpc(
    dst: *mut u16,
    stride: isize,
    left: *const [u16; 2],
    top: *const u16,
    bottom: *const u16,
    pri_strength: c_int,
    sec_strength: c_int,
    dir: c_int,
    damping: c_int,
    edges: c_int,
    bitdepth_max: c_int,
) {
    let (l, t, b) = (left as *const u8, top as *const u8, bottom as *const u8);
    let s = [pri_strength, sec_strength, dir, damping];
    cdef_entry(
        2,
        true,
        dst as *mut u8,
        stride,
        l,
        t,
        b,
        s,
        edges,
        bitdepth_max,
    )
}

/// Whether `export` is `daedalus_vp9_` followed by `name` (FFmpeg's name of the function): the
/// export macros check every line at compile time.
const fn exports_as(export: &str, name: &str) -> bool {
    const PREFIX: &[u8] = b"daedalus_vp9_";
    let (export, name) = (export.as_bytes(), name.as_bytes());
    if export.len() != PREFIX.len() + name.len() {
        return false;
    }
    let mut i = 0;
    while i < export.len() {
        let expected = if i < PREFIX.len() {
            PREFIX[i]
        } else {
            name[i - PREFIX.len()]
        };
        if export[i] != expected {
            return false;
        }
        i += 1;
    }
    true
}

/// Defines the inverse-transform exports from one line each: the exported symbol, FFmpeg's name
/// of the function (its C function's, less `_c`), and the [`Transform`] it runs (size, then
/// the 1-D transforms in FFmpeg's order). cbindgen cannot see them: build.rs reads the lines
/// of the one invocation and declares them for it (with the same documentation as here), one
/// export per line, nothing else but comments.
macro_rules! itx_exports {
    ($($export:ident: $name:literal, $size:ident, $first:ident, $second:ident;)*) => {$(
        const _: () = assert!(exports_as(stringify!($export), $name));

        #[doc = concat!(
            "FFmpeg's `", $name, "_c`: the result is in `dst` once `daedalus_flush()` returns."
        )]
        ///
        /// # Safety
        /// As for FFmpeg's function: the block's pixels at `dst` (rows `stride` bytes apart) and
        /// the coefficients at `block` must be valid; the pixels must stay valid and untouched
        /// until the calling thread's next `daedalus_flush()`.
        #[no_mangle]
        pub unsafe extern "C" fn $export(dst: *mut u8, stride: isize, block: *mut i16, eob: c_int) {
            let tx = Transform::new(TxSize::$size, Tx1d::$first, Tx1d::$second);
            itx_entry(tx, dst, stride, block, eob)
        }
    )*};
}

/// Defines the motion-compensation exports from one line each: the exported symbol, FFmpeg's
/// name of the function (its C function's, less `_c`), and the [`McFunction`] it runs (width,
/// filter, avg, h, v). For each line: the `#[no_mangle]` export, its twin for FFmpeg's decoder,
/// and their entries in [`MC_EXPORTS`] and [`PROVIDER_MC`]. build.rs reads the lines of the one
/// invocation for the header's prototypes: one export per line, nothing else but comments.
macro_rules! mc_exports {
    ($(
        $export:ident: $name:literal,
        $width:literal, $filter:ident, $avg:literal, $h:literal, $v:literal;
    )*) => {
        $(
            const _: () = assert!(exports_as(stringify!($export), $name));

            #[doc = concat!(
                "FFmpeg's `", $name, "_c`: the result is in `dst` once `daedalus_flush` returns."
            )]
            ///
            /// # Safety
            /// As for FFmpeg's function: the block at `dst` and the source window at `src` must be
            /// valid; the block, and a source in registered memory, must stay valid and untouched
            /// until the thread's next flush.
            #[no_mangle]
            pub unsafe extern "C" fn $export(
                dst: *mut u8,
                dst_stride: isize,
                src: *const u8,
                src_stride: isize,
                h: c_int,
                mx: c_int,
                my: c_int,
            ) {
                let f = mc_exports!(@function $width, $filter, $avg, $h, $v);
                mc_entry(f, batch::Origin::Api, dst, dst_stride, src, src_stride, h, mx, my)
            }
        )*

        /// Every MC export with the function it runs.
        pub static MC_EXPORTS: [(&str, McFunction, McFn); [$($name),*].len()] = [
            $(($name, mc_exports!(@function $width, $filter, $avg, $h, $v), $export),)*
        ];

        /// The provider's MC entries for FFmpeg's decoder.
        pub(crate) static PROVIDER_MC: [(McFunction, McFn); [$($name),*].len()] = [
            $({
                const F: McFunction = mc_exports!(@function $width, $filter, $avg, $h, $v);
                /// The provider's entry for FFmpeg's decoder.
                unsafe extern "C" fn provider(
                    dst: *mut u8,
                    dst_stride: isize,
                    src: *const u8,
                    src_stride: isize,
                    h: c_int,
                    mx: c_int,
                    my: c_int,
                ) {
                    mc_entry(F, batch::Origin::Ffmpeg, dst, dst_stride, src, src_stride, h, mx, my)
                }
                (F, provider)
            },)*
        ];
    };
    (@function $width:literal, $filter:ident, $avg:literal, $h:literal, $v:literal) => {
        McFunction { width: $width, filter: McFilter::$filter, avg: $avg, h: $h, v: $v }
    };
}

/// Defines the loop-filter exports as [`mc_exports`] defines MC's, with the [`LfFunction`] each
/// runs, into [`LF_EXPORTS`] and [`PROVIDER_LF`].
macro_rules! lf_exports {
    ($($export:ident: $name:literal, $variant:ident { $($field:tt)* };)*) => {
        $(
            const _: () = assert!(exports_as(stringify!($export), $name));

            #[doc = concat!(
                "FFmpeg's `", $name, "_c`: the result is in `dst` once `daedalus_flush` returns."
            )]
            ///
            /// # Safety
            /// As for FFmpeg's function: the pixels on both sides of the edge must be valid, and
            /// stay valid and untouched until the thread's next flush.
            #[no_mangle]
            pub unsafe extern "C" fn $export(
                dst: *mut u8,
                stride: isize,
                e: c_int,
                i: c_int,
                h: c_int,
            ) {
                let f = LfFunction::$variant { $($field)* };
                lf_entry(f, batch::Origin::Api, dst, stride, e, i, h)
            }
        )*

        /// Every loop-filter export with the function it runs.
        pub static LF_EXPORTS: [(&str, LfFunction, LoopFilterFn); [$($name),*].len()] = [
            $(($name, LfFunction::$variant { $($field)* }, $export),)*
        ];

        /// The provider's loop-filter entries for FFmpeg's decoder.
        pub(crate) static PROVIDER_LF: [(LfFunction, LoopFilterFn); [$($name),*].len()] = [
            $({
                const F: LfFunction = LfFunction::$variant { $($field)* };
                /// The provider's entry for FFmpeg's decoder.
                unsafe extern "C" fn provider(
                    dst: *mut u8,
                    stride: isize,
                    e: c_int,
                    i: c_int,
                    h: c_int,
                ) {
                    lf_entry(F, batch::Origin::Ffmpeg, dst, stride, e, i, h)
                }
                (F, provider)
            },)*
        ];
    };
}

// FFmpeg 5.1's VP9 8-bit inverse transforms (vp9dsp_template.c): the exported symbol, FFmpeg's
// name, the transform. build.rs declares them to cbindgen from these lines.
itx_exports! {
    daedalus_vp9_idct_idct_4x4_add: "idct_idct_4x4_add", T4, Dct, Dct;
    daedalus_vp9_iadst_idct_4x4_add: "iadst_idct_4x4_add", T4, Adst, Dct;
    daedalus_vp9_idct_iadst_4x4_add: "idct_iadst_4x4_add", T4, Dct, Adst;
    daedalus_vp9_iadst_iadst_4x4_add: "iadst_iadst_4x4_add", T4, Adst, Adst;
    daedalus_vp9_iwht_iwht_4x4_add: "iwht_iwht_4x4_add", T4, Wht, Wht;
    daedalus_vp9_idct_idct_8x8_add: "idct_idct_8x8_add", T8, Dct, Dct;
    daedalus_vp9_iadst_idct_8x8_add: "iadst_idct_8x8_add", T8, Adst, Dct;
    daedalus_vp9_idct_iadst_8x8_add: "idct_iadst_8x8_add", T8, Dct, Adst;
    daedalus_vp9_iadst_iadst_8x8_add: "iadst_iadst_8x8_add", T8, Adst, Adst;
    daedalus_vp9_idct_idct_16x16_add: "idct_idct_16x16_add", T16, Dct, Dct;
    daedalus_vp9_iadst_idct_16x16_add: "iadst_idct_16x16_add", T16, Adst, Dct;
    daedalus_vp9_idct_iadst_16x16_add: "idct_iadst_16x16_add", T16, Dct, Adst;
    daedalus_vp9_iadst_iadst_16x16_add: "iadst_iadst_16x16_add", T16, Adst, Adst;
    daedalus_vp9_idct_idct_32x32_add: "idct_idct_32x32_add", T32, Dct, Dct;
}

// FFmpeg 5.1's `mc` and loop-filter functions (vp9dsp_template.c), in its table order: the
// exported symbol, FFmpeg's name, the function (MC's as width, filter, avg, h, v). build.rs
// writes the header's prototypes from these lines.

mc_exports! {
    daedalus_vp9_copy64: "copy64", 64, Regular, false, false, false;
    daedalus_vp9_put_8tap_smooth_64h: "put_8tap_smooth_64h", 64, Smooth, false, true, false;
    daedalus_vp9_put_8tap_smooth_64v: "put_8tap_smooth_64v", 64, Smooth, false, false, true;
    daedalus_vp9_put_8tap_smooth_64hv: "put_8tap_smooth_64hv", 64, Smooth, false, true, true;
    daedalus_vp9_put_8tap_regular_64h: "put_8tap_regular_64h", 64, Regular, false, true, false;
    daedalus_vp9_put_8tap_regular_64v: "put_8tap_regular_64v", 64, Regular, false, false, true;
    daedalus_vp9_put_8tap_regular_64hv: "put_8tap_regular_64hv", 64, Regular, false, true, true;
    daedalus_vp9_put_8tap_sharp_64h: "put_8tap_sharp_64h", 64, Sharp, false, true, false;
    daedalus_vp9_put_8tap_sharp_64v: "put_8tap_sharp_64v", 64, Sharp, false, false, true;
    daedalus_vp9_put_8tap_sharp_64hv: "put_8tap_sharp_64hv", 64, Sharp, false, true, true;
    daedalus_vp9_put_bilin_64h: "put_bilin_64h", 64, Bilinear, false, true, false;
    daedalus_vp9_put_bilin_64v: "put_bilin_64v", 64, Bilinear, false, false, true;
    daedalus_vp9_put_bilin_64hv: "put_bilin_64hv", 64, Bilinear, false, true, true;
    daedalus_vp9_avg64: "avg64", 64, Regular, true, false, false;
    daedalus_vp9_avg_8tap_smooth_64h: "avg_8tap_smooth_64h", 64, Smooth, true, true, false;
    daedalus_vp9_avg_8tap_smooth_64v: "avg_8tap_smooth_64v", 64, Smooth, true, false, true;
    daedalus_vp9_avg_8tap_smooth_64hv: "avg_8tap_smooth_64hv", 64, Smooth, true, true, true;
    daedalus_vp9_avg_8tap_regular_64h: "avg_8tap_regular_64h", 64, Regular, true, true, false;
    daedalus_vp9_avg_8tap_regular_64v: "avg_8tap_regular_64v", 64, Regular, true, false, true;
    daedalus_vp9_avg_8tap_regular_64hv: "avg_8tap_regular_64hv", 64, Regular, true, true, true;
    daedalus_vp9_avg_8tap_sharp_64h: "avg_8tap_sharp_64h", 64, Sharp, true, true, false;
    daedalus_vp9_avg_8tap_sharp_64v: "avg_8tap_sharp_64v", 64, Sharp, true, false, true;
    daedalus_vp9_avg_8tap_sharp_64hv: "avg_8tap_sharp_64hv", 64, Sharp, true, true, true;
    daedalus_vp9_avg_bilin_64h: "avg_bilin_64h", 64, Bilinear, true, true, false;
    daedalus_vp9_avg_bilin_64v: "avg_bilin_64v", 64, Bilinear, true, false, true;
    daedalus_vp9_avg_bilin_64hv: "avg_bilin_64hv", 64, Bilinear, true, true, true;
    daedalus_vp9_copy32: "copy32", 32, Regular, false, false, false;
    daedalus_vp9_put_8tap_smooth_32h: "put_8tap_smooth_32h", 32, Smooth, false, true, false;
    daedalus_vp9_put_8tap_smooth_32v: "put_8tap_smooth_32v", 32, Smooth, false, false, true;
    daedalus_vp9_put_8tap_smooth_32hv: "put_8tap_smooth_32hv", 32, Smooth, false, true, true;
    daedalus_vp9_put_8tap_regular_32h: "put_8tap_regular_32h", 32, Regular, false, true, false;
    daedalus_vp9_put_8tap_regular_32v: "put_8tap_regular_32v", 32, Regular, false, false, true;
    daedalus_vp9_put_8tap_regular_32hv: "put_8tap_regular_32hv", 32, Regular, false, true, true;
    daedalus_vp9_put_8tap_sharp_32h: "put_8tap_sharp_32h", 32, Sharp, false, true, false;
    daedalus_vp9_put_8tap_sharp_32v: "put_8tap_sharp_32v", 32, Sharp, false, false, true;
    daedalus_vp9_put_8tap_sharp_32hv: "put_8tap_sharp_32hv", 32, Sharp, false, true, true;
    daedalus_vp9_put_bilin_32h: "put_bilin_32h", 32, Bilinear, false, true, false;
    daedalus_vp9_put_bilin_32v: "put_bilin_32v", 32, Bilinear, false, false, true;
    daedalus_vp9_put_bilin_32hv: "put_bilin_32hv", 32, Bilinear, false, true, true;
    daedalus_vp9_avg32: "avg32", 32, Regular, true, false, false;
    daedalus_vp9_avg_8tap_smooth_32h: "avg_8tap_smooth_32h", 32, Smooth, true, true, false;
    daedalus_vp9_avg_8tap_smooth_32v: "avg_8tap_smooth_32v", 32, Smooth, true, false, true;
    daedalus_vp9_avg_8tap_smooth_32hv: "avg_8tap_smooth_32hv", 32, Smooth, true, true, true;
    daedalus_vp9_avg_8tap_regular_32h: "avg_8tap_regular_32h", 32, Regular, true, true, false;
    daedalus_vp9_avg_8tap_regular_32v: "avg_8tap_regular_32v", 32, Regular, true, false, true;
    daedalus_vp9_avg_8tap_regular_32hv: "avg_8tap_regular_32hv", 32, Regular, true, true, true;
    daedalus_vp9_avg_8tap_sharp_32h: "avg_8tap_sharp_32h", 32, Sharp, true, true, false;
    daedalus_vp9_avg_8tap_sharp_32v: "avg_8tap_sharp_32v", 32, Sharp, true, false, true;
    daedalus_vp9_avg_8tap_sharp_32hv: "avg_8tap_sharp_32hv", 32, Sharp, true, true, true;
    daedalus_vp9_avg_bilin_32h: "avg_bilin_32h", 32, Bilinear, true, true, false;
    daedalus_vp9_avg_bilin_32v: "avg_bilin_32v", 32, Bilinear, true, false, true;
    daedalus_vp9_avg_bilin_32hv: "avg_bilin_32hv", 32, Bilinear, true, true, true;
    daedalus_vp9_copy16: "copy16", 16, Regular, false, false, false;
    daedalus_vp9_put_8tap_smooth_16h: "put_8tap_smooth_16h", 16, Smooth, false, true, false;
    daedalus_vp9_put_8tap_smooth_16v: "put_8tap_smooth_16v", 16, Smooth, false, false, true;
    daedalus_vp9_put_8tap_smooth_16hv: "put_8tap_smooth_16hv", 16, Smooth, false, true, true;
    daedalus_vp9_put_8tap_regular_16h: "put_8tap_regular_16h", 16, Regular, false, true, false;
    daedalus_vp9_put_8tap_regular_16v: "put_8tap_regular_16v", 16, Regular, false, false, true;
    daedalus_vp9_put_8tap_regular_16hv: "put_8tap_regular_16hv", 16, Regular, false, true, true;
    daedalus_vp9_put_8tap_sharp_16h: "put_8tap_sharp_16h", 16, Sharp, false, true, false;
    daedalus_vp9_put_8tap_sharp_16v: "put_8tap_sharp_16v", 16, Sharp, false, false, true;
    daedalus_vp9_put_8tap_sharp_16hv: "put_8tap_sharp_16hv", 16, Sharp, false, true, true;
    daedalus_vp9_put_bilin_16h: "put_bilin_16h", 16, Bilinear, false, true, false;
    daedalus_vp9_put_bilin_16v: "put_bilin_16v", 16, Bilinear, false, false, true;
    daedalus_vp9_put_bilin_16hv: "put_bilin_16hv", 16, Bilinear, false, true, true;
    daedalus_vp9_avg16: "avg16", 16, Regular, true, false, false;
    daedalus_vp9_avg_8tap_smooth_16h: "avg_8tap_smooth_16h", 16, Smooth, true, true, false;
    daedalus_vp9_avg_8tap_smooth_16v: "avg_8tap_smooth_16v", 16, Smooth, true, false, true;
    daedalus_vp9_avg_8tap_smooth_16hv: "avg_8tap_smooth_16hv", 16, Smooth, true, true, true;
    daedalus_vp9_avg_8tap_regular_16h: "avg_8tap_regular_16h", 16, Regular, true, true, false;
    daedalus_vp9_avg_8tap_regular_16v: "avg_8tap_regular_16v", 16, Regular, true, false, true;
    daedalus_vp9_avg_8tap_regular_16hv: "avg_8tap_regular_16hv", 16, Regular, true, true, true;
    daedalus_vp9_avg_8tap_sharp_16h: "avg_8tap_sharp_16h", 16, Sharp, true, true, false;
    daedalus_vp9_avg_8tap_sharp_16v: "avg_8tap_sharp_16v", 16, Sharp, true, false, true;
    daedalus_vp9_avg_8tap_sharp_16hv: "avg_8tap_sharp_16hv", 16, Sharp, true, true, true;
    daedalus_vp9_avg_bilin_16h: "avg_bilin_16h", 16, Bilinear, true, true, false;
    daedalus_vp9_avg_bilin_16v: "avg_bilin_16v", 16, Bilinear, true, false, true;
    daedalus_vp9_avg_bilin_16hv: "avg_bilin_16hv", 16, Bilinear, true, true, true;
    daedalus_vp9_copy8: "copy8", 8, Regular, false, false, false;
    daedalus_vp9_put_8tap_smooth_8h: "put_8tap_smooth_8h", 8, Smooth, false, true, false;
    daedalus_vp9_put_8tap_smooth_8v: "put_8tap_smooth_8v", 8, Smooth, false, false, true;
    daedalus_vp9_put_8tap_smooth_8hv: "put_8tap_smooth_8hv", 8, Smooth, false, true, true;
    daedalus_vp9_put_8tap_regular_8h: "put_8tap_regular_8h", 8, Regular, false, true, false;
    daedalus_vp9_put_8tap_regular_8v: "put_8tap_regular_8v", 8, Regular, false, false, true;
    daedalus_vp9_put_8tap_regular_8hv: "put_8tap_regular_8hv", 8, Regular, false, true, true;
    daedalus_vp9_put_8tap_sharp_8h: "put_8tap_sharp_8h", 8, Sharp, false, true, false;
    daedalus_vp9_put_8tap_sharp_8v: "put_8tap_sharp_8v", 8, Sharp, false, false, true;
    daedalus_vp9_put_8tap_sharp_8hv: "put_8tap_sharp_8hv", 8, Sharp, false, true, true;
    daedalus_vp9_put_bilin_8h: "put_bilin_8h", 8, Bilinear, false, true, false;
    daedalus_vp9_put_bilin_8v: "put_bilin_8v", 8, Bilinear, false, false, true;
    daedalus_vp9_put_bilin_8hv: "put_bilin_8hv", 8, Bilinear, false, true, true;
    daedalus_vp9_avg8: "avg8", 8, Regular, true, false, false;
    daedalus_vp9_avg_8tap_smooth_8h: "avg_8tap_smooth_8h", 8, Smooth, true, true, false;
    daedalus_vp9_avg_8tap_smooth_8v: "avg_8tap_smooth_8v", 8, Smooth, true, false, true;
    daedalus_vp9_avg_8tap_smooth_8hv: "avg_8tap_smooth_8hv", 8, Smooth, true, true, true;
    daedalus_vp9_avg_8tap_regular_8h: "avg_8tap_regular_8h", 8, Regular, true, true, false;
    daedalus_vp9_avg_8tap_regular_8v: "avg_8tap_regular_8v", 8, Regular, true, false, true;
    daedalus_vp9_avg_8tap_regular_8hv: "avg_8tap_regular_8hv", 8, Regular, true, true, true;
    daedalus_vp9_avg_8tap_sharp_8h: "avg_8tap_sharp_8h", 8, Sharp, true, true, false;
    daedalus_vp9_avg_8tap_sharp_8v: "avg_8tap_sharp_8v", 8, Sharp, true, false, true;
    daedalus_vp9_avg_8tap_sharp_8hv: "avg_8tap_sharp_8hv", 8, Sharp, true, true, true;
    daedalus_vp9_avg_bilin_8h: "avg_bilin_8h", 8, Bilinear, true, true, false;
    daedalus_vp9_avg_bilin_8v: "avg_bilin_8v", 8, Bilinear, true, false, true;
    daedalus_vp9_avg_bilin_8hv: "avg_bilin_8hv", 8, Bilinear, true, true, true;
    daedalus_vp9_copy4: "copy4", 4, Regular, false, false, false;
    daedalus_vp9_put_8tap_smooth_4h: "put_8tap_smooth_4h", 4, Smooth, false, true, false;
    daedalus_vp9_put_8tap_smooth_4v: "put_8tap_smooth_4v", 4, Smooth, false, false, true;
    daedalus_vp9_put_8tap_smooth_4hv: "put_8tap_smooth_4hv", 4, Smooth, false, true, true;
    daedalus_vp9_put_8tap_regular_4h: "put_8tap_regular_4h", 4, Regular, false, true, false;
    daedalus_vp9_put_8tap_regular_4v: "put_8tap_regular_4v", 4, Regular, false, false, true;
    daedalus_vp9_put_8tap_regular_4hv: "put_8tap_regular_4hv", 4, Regular, false, true, true;
    daedalus_vp9_put_8tap_sharp_4h: "put_8tap_sharp_4h", 4, Sharp, false, true, false;
    daedalus_vp9_put_8tap_sharp_4v: "put_8tap_sharp_4v", 4, Sharp, false, false, true;
    daedalus_vp9_put_8tap_sharp_4hv: "put_8tap_sharp_4hv", 4, Sharp, false, true, true;
    daedalus_vp9_put_bilin_4h: "put_bilin_4h", 4, Bilinear, false, true, false;
    daedalus_vp9_put_bilin_4v: "put_bilin_4v", 4, Bilinear, false, false, true;
    daedalus_vp9_put_bilin_4hv: "put_bilin_4hv", 4, Bilinear, false, true, true;
    daedalus_vp9_avg4: "avg4", 4, Regular, true, false, false;
    daedalus_vp9_avg_8tap_smooth_4h: "avg_8tap_smooth_4h", 4, Smooth, true, true, false;
    daedalus_vp9_avg_8tap_smooth_4v: "avg_8tap_smooth_4v", 4, Smooth, true, false, true;
    daedalus_vp9_avg_8tap_smooth_4hv: "avg_8tap_smooth_4hv", 4, Smooth, true, true, true;
    daedalus_vp9_avg_8tap_regular_4h: "avg_8tap_regular_4h", 4, Regular, true, true, false;
    daedalus_vp9_avg_8tap_regular_4v: "avg_8tap_regular_4v", 4, Regular, true, false, true;
    daedalus_vp9_avg_8tap_regular_4hv: "avg_8tap_regular_4hv", 4, Regular, true, true, true;
    daedalus_vp9_avg_8tap_sharp_4h: "avg_8tap_sharp_4h", 4, Sharp, true, true, false;
    daedalus_vp9_avg_8tap_sharp_4v: "avg_8tap_sharp_4v", 4, Sharp, true, false, true;
    daedalus_vp9_avg_8tap_sharp_4hv: "avg_8tap_sharp_4hv", 4, Sharp, true, true, true;
    daedalus_vp9_avg_bilin_4h: "avg_bilin_4h", 4, Bilinear, true, true, false;
    daedalus_vp9_avg_bilin_4v: "avg_bilin_4v", 4, Bilinear, true, false, true;
    daedalus_vp9_avg_bilin_4hv: "avg_bilin_4hv", 4, Bilinear, true, true, true;
}

lf_exports! {
    daedalus_vp9_loop_filter_h_4_8: "loop_filter_h_4_8", Lines8 { wd: 4, dir: LfDir::H };
    daedalus_vp9_loop_filter_h_8_8: "loop_filter_h_8_8", Lines8 { wd: 8, dir: LfDir::H };
    daedalus_vp9_loop_filter_h_16_8: "loop_filter_h_16_8", Lines8 { wd: 16, dir: LfDir::H };
    daedalus_vp9_loop_filter_h_16_16: "loop_filter_h_16_16", Lines16 { dir: LfDir::H };
    daedalus_vp9_loop_filter_h_44_16: "loop_filter_h_44_16", Mix2 { wd1: 4, wd2: 4, dir: LfDir::H };
    daedalus_vp9_loop_filter_h_48_16: "loop_filter_h_48_16", Mix2 { wd1: 4, wd2: 8, dir: LfDir::H };
    daedalus_vp9_loop_filter_h_84_16: "loop_filter_h_84_16", Mix2 { wd1: 8, wd2: 4, dir: LfDir::H };
    daedalus_vp9_loop_filter_h_88_16: "loop_filter_h_88_16", Mix2 { wd1: 8, wd2: 8, dir: LfDir::H };
    daedalus_vp9_loop_filter_v_4_8: "loop_filter_v_4_8", Lines8 { wd: 4, dir: LfDir::V };
    daedalus_vp9_loop_filter_v_8_8: "loop_filter_v_8_8", Lines8 { wd: 8, dir: LfDir::V };
    daedalus_vp9_loop_filter_v_16_8: "loop_filter_v_16_8", Lines8 { wd: 16, dir: LfDir::V };
    daedalus_vp9_loop_filter_v_16_16: "loop_filter_v_16_16", Lines16 { dir: LfDir::V };
    daedalus_vp9_loop_filter_v_44_16: "loop_filter_v_44_16", Mix2 { wd1: 4, wd2: 4, dir: LfDir::V };
    daedalus_vp9_loop_filter_v_48_16: "loop_filter_v_48_16", Mix2 { wd1: 4, wd2: 8, dir: LfDir::V };
    daedalus_vp9_loop_filter_v_84_16: "loop_filter_v_84_16", Mix2 { wd1: 8, wd2: 4, dir: LfDir::V };
    daedalus_vp9_loop_filter_v_88_16: "loop_filter_v_88_16", Mix2 { wd1: 8, wd2: 8, dir: LfDir::V };
}
