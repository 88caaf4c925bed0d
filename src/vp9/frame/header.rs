//! The header of a frame's data on the GPU (`shaders/vp9_frame.glsl` reads it): the frame's
//! geometry, where its planes and each array of the parsed data are, its references, the
//! 8-tap filters, the loop filter's thresholds and where each tile column starts. Word indices
//! match the shader's `H_*` constants.

use super::records::{FrameParse, Layout, HEADER_WORDS};
use crate::kernels::mc::SUBPEL_FILTERS;

pub const COLS: usize = 0;
pub const ROWS: usize = 1;
pub const SB_COLS: usize = 2;
pub const SB_ROWS: usize = 3;
pub const SS_H: usize = 4;
pub const SS_V: usize = 5;
pub const LOSSLESS: usize = 6;
/// What the kernels found (`STATUS_*`), which the host reads after the frame's fences.
pub const STATUS: usize = 7;
/// Per plane: byte offset in the frame's buffer, stride.
pub const PLANE: usize = 8;
pub const RECORDS: usize = 14;
/// Per plane: where its intra residuals start in the residual area, in coefficients.
pub const RESIDUALS: usize = 15;
pub const EOBS: usize = 18;
pub const LOOPFILTER: usize = 21;
pub const SB_BLOCKS: usize = 22;
/// The frame's bit depth: 8, 10 or 12.
pub const BIT_DEPTH: usize = 23;
/// Where the residual area starts, in coefficients (16 bits at 8 bits, 32 above).
pub const RESIDUAL_AREA: usize = 24;
/// Where the packed coefficients start, in coefficients.
pub const COEF_STREAM: usize = 25;
/// (Word 26 is free: the kernels are handed their jobs as words of the frame's data.)
/// Where the scan orders are (`records::scan_words`), in words.
pub const SCANS: usize = 27;
/// Per reference, 16 words: per plane byte offset and stride, luma width and height, the Q14
/// scale and the step of each direction.
pub const REF: usize = 32;
pub const TAPS: usize = 80;
pub const LIMITS: usize = 176;
pub const TILE_START: usize = 208;
/// The header's size, which the data's layout gives it.
pub const WORDS: usize = HEADER_WORDS;
/// Superblock columns the header has room for (`TILE_START` up to `WORDS`).
pub const MAX_SB_COLS: usize = WORDS - TILE_START;

/// The scan orders' words ([`super::records::scan_words`]) from the first frame's decoder:
/// its table is the process's one.
pub fn scans(info: &FrameParse) -> Result<&'static [u32], String> {
    static SCANS: std::sync::OnceLock<Option<Vec<u32>>> = std::sync::OnceLock::new();
    // SAFETY: the decoder's `ff_vp9_scans` or null (the provider ABI).
    SCANS
        .get_or_init(|| unsafe { super::records::scan_words(info.scans) })
        .as_deref()
        .ok_or_else(|| "the decoder gives no scan orders".into())
}

/// A transform's 16-bit lanes overflowed: FFmpeg's SIMD and C may differ on the frame.
pub const STATUS_OVERFLOW: u32 = 1;

/// Where the frame's planes, and each reference's, are in the buffers the kernels bind:
/// (byte offset, stride) per plane.
pub type Planes = [(u32, u32); 3];

/// The header's words for a frame. `references[r]`: the reference's planes where it is bound.
pub fn words(
    info: &FrameParse,
    layout: &Layout,
    frame: Planes,
    references: [Option<Planes>; 3],
) -> [u32; WORDS] {
    let g = &layout.geometry;
    let mut w = [0u32; WORDS];
    w[COLS] = info.cols as u32;
    w[ROWS] = info.rows as u32;
    w[SB_COLS] = g.sb_cols as u32;
    w[SB_ROWS] = g.sb_rows as u32;
    w[SS_H] = g.ss_h as u32;
    w[SS_V] = g.ss_v as u32;
    w[LOSSLESS] = (info.lossless != 0) as u32;
    for (p, (offset, stride)) in frame.into_iter().enumerate() {
        w[PLANE + 2 * p] = offset;
        w[PLANE + 2 * p + 1] = stride;
    }
    w[RECORDS] = (layout.records / 4) as u32;
    w[BIT_DEPTH] = info.frame.bpp as u32;
    // (An index in coefficients: 16 bits at 8 bits, 32 at 10 and 12.)
    let coef_bytes = 2 * g.bytes_per_pixel;
    for p in 0..3 {
        w[RESIDUALS + p] = (layout.plane_residuals[p] / coef_bytes) as u32;
        w[EOBS + p] = layout.eobs[p] as u32;
    }
    w[RESIDUAL_AREA] = (layout.residuals / coef_bytes) as u32;
    w[COEF_STREAM] = (layout.coefs / coef_bytes) as u32;
    w[SCANS] = (layout.scans / 4) as u32;
    w[LOOPFILTER] = layout.loopfilter as u32;
    w[SB_BLOCKS] = (layout.sb_blocks / 4) as u32;
    for (r, planes) in references.iter().enumerate() {
        let (Some(planes), reference) = (planes, &info.reference[r]) else {
            continue;
        };
        let at = REF + 16 * r;
        for (p, &(offset, stride)) in planes.iter().enumerate() {
            w[at + 2 * p] = offset;
            w[at + 2 * p + 1] = stride;
        }
        w[at + 6] = reference.width as u32;
        w[at + 7] = reference.height as u32;
        for d in 0..2 {
            w[at + 8 + d] = reference.mvscale[d] as u32;
            w[at + 10 + d] = reference.mvstep[d] as u32;
        }
    }
    // The taps plus 32 (-32 ..= 223: the full-pel tap is 128) as bytes, four to a word:
    // [filter][phase][tap].
    for (f, phases) in SUBPEL_FILTERS.iter().enumerate() {
        for (phase, taps) in phases.iter().enumerate() {
            for (k, &t) in taps.iter().enumerate() {
                let byte = (f * 16 + phase) * 8 + k;
                w[TAPS + byte / 4] |= ((t + 32) as u32 & 0xff) << (8 * (byte % 4));
            }
        }
    }
    for (i, (&e, &l)) in info.mblim_lut.iter().zip(&info.lim_lut).enumerate() {
        w[LIMITS + i / 4] |= (e as u32) << (8 * (i % 4));
        w[LIMITS + 16 + i / 4] |= (l as u32) << (8 * (i % 4));
    }
    // FFmpeg's set_tile_offset: tile column `t` of 2^log2 starts at superblock column
    // t * sb_cols >> log2.
    let log2 = info.log2_tile_cols.clamp(0, 6) as usize;
    let tiles = 1usize << log2;
    for t in 0..tiles {
        let start = (t * g.sb_cols) >> log2;
        let end = ((t + 1) * g.sb_cols) >> log2;
        for c in start..end.min(g.sb_cols) {
            w[TILE_START + c] = (start * 8) as u32;
        }
    }
    w
}
