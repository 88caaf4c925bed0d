//! The loop filter on the frame path (`shaders/vp9_lf.comp`, walking the edge masks as the
//! per-call path does, `lf_sb_walk.glsl`): the levels and edge masks FFmpeg's `mask_edges`
//! builds, which the decoder builds while parsing. FFmpeg filters superblock by superblock in
//! raster order, each plane's columns pass then its rows pass. A superblock's columns pass
//! reaches 8 pixels into the one left of it; its rows pass reaches 8 lines into the one above,
//! and there, in the above one's last 8 columns and lines, also into what the columns pass of
//! the superblock above right did at its left edge. A workgroup per plane of each superblock
//! runs both passes, then that left edge of the superblock right of it, on its plane's last 8
//! lines, which that superblock's columns pass leaves out (the corner handoff: the edge's
//! lines come first in that pass and read nothing else of it). So a superblock's loop filter
//! follows only those left of it and above it (and the intra blocks whose pixels it reaches):
//! the wavefront orders them on the diagonals column + row ([`super::wavefront`]), where
//! without the handoff they waited for the superblock above right too (column + 2 row: at
//! 2160p 93 levels a frame instead of 126). A level costs the latency of its slowest
//! workgroup, so a workgroup reads all it needs at its start and writes it back at its end,
//! the pixels passing from pass to pass in shared memory. The CPU reference of the filters is
//! [`crate::kernels::lf`].
//!
//! Job word: the superblock, its plane at bit 24.

/// The loop-filter jobs of superblock `index` (raster order): its three planes.
pub fn jobs(index: usize) -> [u32; 3] {
    [0, 1, 2].map(|plane| index as u32 | plane << 24)
}
