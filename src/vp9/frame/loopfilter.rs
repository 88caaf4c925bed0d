//! The loop filter on the frame path (`shaders/vp9_lf.comp`, with the superblock loop filter
//! of the per-call path, `lf_sb_pass.glsl`): the levels and edge masks FFmpeg's `mask_edges`
//! builds, which the decoder builds while parsing. FFmpeg filters superblock by superblock in
//! raster order, each plane's columns pass then its rows pass. A superblock's columns pass
//! reaches 8 pixels into the one left of it; its rows pass reaches 8 lines into the one above,
//! where the columns pass of the superblock above right reached before. So a superblock's
//! passes must follow those of the superblock left of it, above it and above right of it: the
//! loop filter's wavefront, after every intra block, orders them on the lines column + 2 row
//! ([`super::wavefront`]), a workgroup per plane of each superblock running both its passes.
//! The CPU reference of the filters is [`crate::kernels::lf`].
//!
//! Job word: the superblock, its plane at bit 24 ([`super::wavefront::superblock_planes`]).

/// The loop-filter jobs of superblock `index` (raster order): its three planes.
pub fn jobs(index: usize) -> [u32; 3] {
    super::wavefront::superblock_planes(index)
}
