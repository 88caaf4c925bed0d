//! Intra prediction on the frame path (`shaders/vp9_intra.comp`, `vp9_ipred.glsl`): FFmpeg
//! predicts each intra transform block from its left column, the row above and the top-left
//! pixel (the top-right of a 4x4 stays inside its block's width), after the one before it in
//! decode order. A workgroup per plane of a superblock orders the superblock's transform blocks
//! in levels (each above every block it reads) and reconstructs a level's blocks side by side,
//! the small ones N invocations each; superblocks go out on the intra wavefront
//! ([`super::wavefront`]), since a superblock reads only those left of it, above it and above
//! left of it, before any loop filter. Only superblocks with an intra block are in the jobs.
//! The CPU reference of the predictors is [`crate::kernels::ipred`].
//!
//! Job word: the superblock, its plane at bit 24.

use super::records::{BlockRecord, SbBlocks, BLOCK_INTRA};

/// The intra jobs of superblock (`row`, `col`): its three planes, where it holds an intra block
/// (none where it does not).
pub fn jobs(sb: &SbBlocks, records: &[BlockRecord], row: usize, col: usize) -> Vec<u32> {
    let index = row * sb.sb_cols + col;
    let (first, count) = sb.get(index);
    let blocks = records
        .get(first as usize..(first + count) as usize)
        .unwrap_or(&[]);
    if !blocks.iter().any(|b| b.flags & BLOCK_INTRA != 0) {
        return Vec::new();
    }
    super::wavefront::superblock_planes(index).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder's `sb_blocks` words for (first record, count) pairs.
    fn words(pairs: &[(u32, u32)]) -> Vec<u32> {
        pairs.iter().flat_map(|&(f, c)| [f, c]).collect()
    }

    fn block(flags: u8) -> BlockRecord {
        BlockRecord {
            flags,
            ..Default::default()
        }
    }

    #[test]
    fn superblocks_with_intra_blocks() {
        // 3 x 2 superblocks, a block each; intra at (col 0, row 0), (2, 0), (1, 1)
        let records = [BLOCK_INTRA, 0, BLOCK_INTRA, 0, BLOCK_INTRA, 0].map(block);
        let counts: Vec<(u32, u32)> = (0..6).map(|i| (i, 1)).collect();
        let w = words(&counts);
        let sb = SbBlocks::new(3, &w);
        let with_intra: Vec<(usize, usize)> = (0..2)
            .flat_map(|row| (0..3).map(move |col| (row, col)))
            .filter(|&(row, col)| !jobs(&sb, &records, row, col).is_empty())
            .collect();
        assert_eq!(with_intra, [(0, 0), (0, 2), (1, 1)]);
        let j = jobs(&sb, &records, 1, 1);
        assert_eq!(
            j.iter().map(|j| j & 0xffffff).collect::<Vec<_>>(),
            [4, 4, 4]
        );
        assert_eq!(j.iter().map(|j| j >> 24 & 3).collect::<Vec<_>>(), [0, 1, 2]);
    }
}
